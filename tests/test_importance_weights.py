"""Importance weights (`sample_weight`, any finite real ≥ 0; docs/design.md §2.10).

A row of weight h > 0 takes its rule's weighted step, h = 0 skips it entirely. Checked here,
through the public API only:

1. every rule (binary, each covariance it has; the regressors; the learners of §2.9) against
   the independent references (tests/reference.py, tests/libol_reference.py) fed the same
   fractional weights, with zeros among them, to 1e-9 as tests/test_reference.py does;
2. the "invariant" rules: weight k is the row presented k times, and weight h then h′ is
   weight h + h′ once (AROW and RLS: recursive least squares; PA, PA-I, PA-II; CW, ExactCW);
   AROW regression with the full covariance is weighted ridge regression;
3. weight 0 leaves the model bit-identical, counters and every saved byte included, for every
   kind of model (binary, multiclass, regression, kernel, averaged, process noise);
4. bad weights (negative, NaN, ±inf, the wrong shape) raise ValueError naming the problem and
   leave the model unchanged;
5. an averaged model is the h-weighted average of the means;
6. max-score and one-vs-rest multiclass, the kernel (dual) form, the L1 threshold and process
   noise take the same weighted steps;
7. the references themselves against the math they transcribe;
8. class weights: h = sample_weight·class_weight[y], "balanced" as scikit-learn's formula in
   fit and by the running per-class counts in partial_fit.

Tolerances of part 2 (relative to max(1, max|state|)):
  * 1e-12 where the two sides are the same algebra rounded differently in a few places per
    row: weight k = k presentations for AROW/RLS (full: Sherman–Morrison on r/k against k
    downdates of r; each row's difference is a few ε and the rows that follow contract it),
    h then h′ = h + h′ for AROW, RLS, PA, PA-I and PA-II. For PA-II the two sides differ by
    evaluating ρ^h·ρ^h′ against ρ^(h+h′) (ρ = 1/(1 + 2Cn)) through expm1/log1p: the relative
    error of ρ^h is ≤ ~ε·(1 + h·ln(1 + 2Cn)) and enters α multiplied by ρ^h, so α's error is a
    few ε of ℓ/n (h·L·e^(−h·L) ≤ 1/e, beside the ε of the margin) — the order of PA-I's, hence
    the same 1e-12.
  * CW and ExactCW (full covariance): after a step the row lies on the constraint (m′ = φv′,
    m′ = φ√v′) only up to the rounding of m′ and v′, ~ε·(Σ|μ_j x_j| + φv′); the second
    presentation of "h then h′" then fires (or not) on that rounding gap, with α of the order
    gap/v′ and c of the order α·φ/√v′: a change of the state of a few ε of its scale times the
    conditioning |Σ′x|/(|x|·v′), which grows as Σ shrinks along the rows seen. 1e-10 leaves
    that factor 1e2 over the ~30 rows compared (measured on the references: ≤ 7e-16).
    (n_updates_ differs: the second presentation may count as an update.)
  * The diagonal forms apply the weighted (α, c) through the diagonal update; there weight k is
    not k presentations (a second diagonal step moves the mean along the new Σ′x, which is not
    parallel to Σx: 6-8% of the state on 4-feature rows) except on one-hot rows, where diag =
    full, and that is what they are checked on.
"""

from __future__ import annotations

import io
import math
import pickle

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, reject, settings
from hypothesis import strategies as st

import cwrs
from _cwtest_util import (
    CLASSES,
    RULE_FORM_IDS,
    RULE_FORMS,
    assert_close,
    assert_covariance_close,
    examples,
    hyper_params,
    make_estimator,
    prior_variance,
    streams,
)
from libol_reference import run as libol_run
from reference import REGRESSION_RULES, RefLearner, RefRegressor

RTOL = 1e-9
SETTINGS = settings(max_examples=examples(30), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def weights_for(n, seed, p_zero=0.15):
    """Importance weights for n rows: fractional, log-uniform over [0.05, 20], about one in
    seven an exact zero and one in seven a small integer."""
    rng = np.random.default_rng(seed)
    w = np.exp(rng.uniform(math.log(0.05), math.log(20.0), size=n))
    u = rng.random(n)
    w[u < p_zero] = 0.0
    ints = (u >= p_zero) & (u < 2 * p_zero)
    w[ints] = rng.integers(1, 5, size=int(ints.sum()))
    return w


def _learn_or_reject(ref, x, y, h, hint=None):
    try:
        return ref.learn(x, y, hint=hint, h=h)
    except (FloatingPointError, ArithmeticError) as e:
        note(f"reference overflow: {e}")
        reject()


# ------------------------------------------------------------------------------------------
# 1. Every rule against the references
# ------------------------------------------------------------------------------------------


def run_weighted_against_reference(rule, cov, params, a, X, y, w):
    """Row by row: the decision before each row, the counters and the state after it, as in
    tests/test_reference.py, with row t given weight w[t]."""
    n, d = X.shape
    est = make_estimator(rule, cov, params, a, fit_intercept=False)
    ref = RefLearner(rule, params, cov, d, a)
    ctx = f"[{rule}/{cov or 'identity'} params={params} a={a} n={n} d={d}]"
    fitted = False
    for t in range(n):
        if fitted:
            got = float(np.asarray(est.decision_function(X[t : t + 1]))[0])
            want = ref.decision(X[t])
            scale = max(1.0, math.fsum(np.abs(ref.mu * X[t]).tolist()))
            assert abs(got - want) <= RTOL * scale, f"{ctx} row {t}: decision {got!r} != {want!r}"
            nu0, nm0 = est.n_updates_, est.n_mistakes_
        else:
            nu0 = nm0 = 0
        est.partial_fit(X[t : t + 1], y[t : t + 1], classes=CLASSES, sample_weight=w[t : t + 1])
        fitted = True
        du, dm = est.n_updates_ - nu0, est.n_mistakes_ - nm0
        rec = _learn_or_reject(ref, X[t], y[t], w[t], hint=(dm == 1, du == 1))
        where = (f"{ctx} row {t}: x={X[t].tolist()} y={y[t]} h={w[t]!r} m={rec['m']!r} "
                 f"v={rec['v']!r} ref updated={rec['updated']} alpha={rec['alpha']!r} "
                 f"c={rec['c']!r}")
        assert (est.n_updates_, est.n_mistakes_) == (ref.n_updates, ref.n_mistakes), (
            f"{where}: cwrs (n_updates_, n_mistakes_)={(est.n_updates_, est.n_mistakes_)} "
            f"reference={(ref.n_updates, ref.n_mistakes)}")
        if rec["ill_conditioned"]:
            note(f"ill-conditioned row {t}: compared up to it")
            return est, ref
        assert_close(np.asarray(est.coef_)[0], ref.mu, RTOL, 1.0, "coef_", where)
        if cov is not None:
            assert_covariance_close(est.covariance_, ref.Sigma, cov, a, RTOL, "covariance_", where)
    return est, ref


@pytest.mark.parametrize(("rule", "cov"), RULE_FORMS, ids=RULE_FORM_IDS)
@SETTINGS
@given(data=st.data())
def test_weighted_rules_match_the_reference(rule, cov, data):
    X, y = data.draw(streams(), label="stream")
    params = data.draw(hyper_params(rule), label="params")
    a = data.draw(prior_variance(), label="a") if cov is not None else 1.0
    w = weights_for(len(y), data.draw(st.integers(0, 2**32 - 1), label="weight seed"))
    note(f"weights {w.tolist()}")
    run_weighted_against_reference(rule, cov, params, a, X, y, w)


@pytest.mark.parametrize(("rule", "cov"), RULE_FORMS, ids=RULE_FORM_IDS)
def test_weight_one_is_the_unweighted_learner(rule, cov):
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(30, 4)), rng.choice(CLASSES, size=30)
    plain = make_estimator(rule, cov).partial_fit(X, y, classes=CLASSES)
    ones = make_estimator(rule, cov).partial_fit(X, y, classes=CLASSES, sample_weight=np.ones(30))
    assert pickle.dumps(ones) == pickle.dumps(plain)


REGRESSOR_FORMS = [("AROWRegressor", "diag"), ("AROWRegressor", "full"),
                   ("PARegressor", None), ("PA1Regressor", None), ("PA2Regressor", None)]
REGRESSOR_IDS = [f"{n}-{c or 'identity'}" for n, c in REGRESSOR_FORMS]
_log10 = st.floats(min_value=-1.0, max_value=1.0).map(lambda e: float(10.0**e))


def _regressor(name, cov, params, a=1.0):
    kw = dict(params, fit_intercept=False)
    if cov is not None:
        kw.update(covariance=cov, a=a)
    return getattr(cwrs, name)(**kw)


@pytest.mark.parametrize(("name", "cov"), REGRESSOR_FORMS, ids=REGRESSOR_IDS)
@SETTINGS
@given(data=st.data())
def test_weighted_regressors_match_the_reference(name, cov, data):
    X, _ = data.draw(streams(), label="stream")
    n, d = X.shape
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    rng = np.random.default_rng(seed)
    y = X @ rng.normal(size=d) + data.draw(st.sampled_from([0.0, 0.1, 1.0])) * rng.normal(size=n)
    if name == "AROWRegressor":
        params = {"r": data.draw(_log10, label="r")}
    else:
        params = {"epsilon": data.draw(st.sampled_from([0.0, 0.01, 0.1, 0.5]), label="epsilon")}
        if name != "PARegressor":
            params["C"] = data.draw(_log10, label="C")
    a = data.draw(prior_variance(), label="a") if cov is not None else 1.0
    w = weights_for(n, seed + 1)
    note(f"weights {w.tolist()}")
    est = _regressor(name, cov, params, a)
    ref = RefRegressor(name, params, cov, d, a)
    for t in range(n):
        x = X[t]
        what = f"[{name}/{cov} {params} a={a}] row {t} (x={x.tolist()}, y={y[t]!r}, h={w[t]!r})"
        scale = max(1.0, float((np.abs(ref.mu) + ref.moved) @ np.abs(x)))
        if t:
            got = est.predict(x[None, :])[0]
            assert abs(got - ref.predict(x)) <= RTOL * scale, (
                f"{what}: prediction {got!r} vs {ref.predict(x)!r}")
        before = est.n_updates_ if t else 0
        est.partial_fit(x[None, :], y[t : t + 1], sample_weight=w[t : t + 1])
        ref.learn(x, float(y[t]), h=w[t], hint=est.n_updates_ > before)
        assert est.n_updates_ == ref.n_updates, (
            f"{what}: n_updates_ {est.n_updates_} vs {ref.n_updates}")
        assert_close(est.coef_, ref.mu, RTOL, 1.0, "coef_", what)
        if cov is not None:
            assert_covariance_close(est.covariance_, ref.Sigma, cov, a, RTOL, "covariance_", what)


# The learners of docs/design.md §2.9 (their parameters; the reference takes them too).
CATALOG = [
    ("ALMA", {}),
    ("ROMMA", {}),
    ("AggressiveROMMA", {}),
    ("OGD", {}),
    ("OGD", {"eta": 0.3, "loss": "logistic"}),
    ("OGD", {"loss": "squared_hinge"}),
    ("IELLIP", {"covariance": "full"}),
    ("IELLIP", {"covariance": "diag"}),
    ("AdaGrad", {}),
    ("FTRL", {}),
    ("FTRL", {"loss": "hinge", "l1": 0.1}),
]
CATALOG_IDS = [f"{name}-{params}" for name, params in CATALOG]


@pytest.mark.parametrize(("name", "params"), CATALOG, ids=CATALOG_IDS)
@settings(max_examples=examples(20), deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 40), d=st.integers(3, 5))
def test_weighted_catalog_learners_match_the_reference(name, params, seed, n, d):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X @ rng.normal(size=d) + 0.5 * rng.normal(size=n) > 0, 1, -1)
    w = weights_for(n, seed)
    ref_w, _, updates = libol_run(name, X, y, zero_rows_learn=False, sample_weight=w, **params)
    model = getattr(cwrs, name)(fit_intercept=False, shuffle=False, **params)
    model.partial_fit(X, y, classes=CLASSES, sample_weight=w)
    assert model.n_updates_ == updates, f"{name}: n_updates_ {model.n_updates_} vs {updates}"
    # ROMMA's 1/D amplifies rounding when x is nearly along μ (docs/design.md §2.9): 1e-8 as
    # tests/test_catalog.py; the others agree to the last bits.
    assert_close(np.asarray(model.coef_).ravel(), ref_w, 1e-8, 1.0, f"{name} coef_",
                 f"weights {w.tolist()}")


# ------------------------------------------------------------------------------------------
# 2. Invariant rules: weight k = k presentations, h then h′ = h + h′
# ------------------------------------------------------------------------------------------


def _state(est):
    parts = [np.atleast_2d(est.coef_).ravel()]
    if hasattr(est, "covariance_"):
        parts.append(np.asarray(est.covariance_).ravel())
    return parts


def assert_same_state(got, want, rtol, what):
    for g, w_, name in zip(_state(got), _state(want), ("coef_", "covariance_")):
        scale = max(1.0, float(np.abs(w_).max()))
        err = float(np.abs(g - w_).max()) / scale
        assert err <= rtol, f"{what}: {name} differs by {err:.3g} (relative, > {rtol})"


def _classifier(rule, cov, **kw):
    return make_estimator(rule, cov, kw.pop("params", {}), kw.pop("a", 1.0), **kw)


@pytest.mark.parametrize("k", [2, 3, 5])
@pytest.mark.parametrize("cov", ["full", "diag"])
@pytest.mark.parametrize("kind", ["AROW", "AROWRegressor"])
@settings(max_examples=examples(15), deadline=None)
@given(seed=st.integers(0, 2**32 - 1), r=_log10)
def test_weight_k_is_k_presentations(kind, cov, k, seed, r):
    """AROW (its hinge active) and AROW regression are recursive least squares with noise
    variance r, where weight k is noise variance r/k: k copies of the row. In the diagonal form
    that holds on one-hot rows (diag = full there)."""
    rng = np.random.default_rng(seed)
    if cov == "full":
        X = rng.normal(size=(12, 4))
    else:
        X = np.zeros((12, 4))
        X[np.arange(12), rng.integers(0, 4, size=12)] = rng.normal(size=12) * 2
    w = rng.integers(0, k + 1, size=12).astype(float)
    w[rng.random(12) < 0.5] = k
    if kind == "AROW":
        # after an AROW step 1 − m′ = (1 − m)·r/(v + r) > 0: once the hinge is active it stays
        # active for every further presentation, so any labels keep AROW recursive least squares
        y = rng.choice(CLASSES, size=12)
        once = _classifier("AROW", cov, params={"r": r}).partial_fit(X, y, classes=CLASSES,
                                                                      sample_weight=w)
        rep = _classifier("AROW", cov, params={"r": r}).partial_fit(
            np.repeat(X, w.astype(int), axis=0), np.repeat(y, w.astype(int)), classes=CLASSES)
    else:
        y = X @ rng.normal(size=4) + 0.1 * rng.normal(size=12)
        once = cwrs.AROWRegressor(r=r, covariance=cov, fit_intercept=False).partial_fit(
            X, y, sample_weight=w)
        rep = cwrs.AROWRegressor(r=r, covariance=cov, fit_intercept=False).partial_fit(
            np.repeat(X, w.astype(int), axis=0), np.repeat(y, w.astype(int)))
    assert_same_state(once, rep, 1e-12, f"{kind}/{cov} weight {k} vs {k} presentations")


@pytest.mark.parametrize("fit_intercept", [False, True])
@settings(max_examples=examples(15), deadline=None)
@given(seed=st.integers(0, 2**32 - 1), r=_log10, a=_log10)
def test_weighted_rls_full_is_weighted_ridge(fit_intercept, seed, r, a):
    """AROW regression with the full covariance after weighted rows is weighted ridge
    regression: mu = (X'HX + (r/a) I)^-1 X'Hy and Sigma = (X'HX/r + I/a)^-1, H = diag(h)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(15, 3))
    y = X @ rng.normal(size=3) + 0.2 * rng.normal(size=15)
    h = weights_for(15, seed)
    est = cwrs.AROWRegressor(r=r, a=a, covariance="full", fit_intercept=fit_intercept)
    est.partial_fit(X, y, sample_weight=h)
    Z = np.column_stack([X, np.ones(15)]) if fit_intercept else X
    P = Z.T @ (h[:, None] * Z) / r + np.eye(Z.shape[1]) / a
    mu = np.linalg.solve(P, Z.T @ (h * y) / r)
    got = np.r_[est.coef_, est.intercept_] if fit_intercept else np.asarray(est.coef_)
    # the normal equations' condition number is at most ~1e3 here: 1e-9 leaves room for both
    assert_close(got, mu, 1e-9, 1.0, "coef_ vs weighted ridge")
    d = X.shape[1]  # covariance_ is over the features (the bias's entries are not reported)
    assert_close(np.asarray(est.covariance_), np.linalg.inv(P)[:d, :d], 1e-9, a, "covariance_")


SPLIT_TOL = {"AROW": 1e-12, "AROWRegressor": 1e-12, "PA": 1e-12, "PA1": 1e-12, "PA2": 1e-12,
             "PARegressor": 1e-12, "PA1Regressor": 1e-12, "PA2Regressor": 1e-12,
             "CW": 1e-10, "ExactCW": 1e-10}
SPLIT_CASES = [("AROW", "full"), ("AROW", "diag-one-hot"), ("PA", None), ("PA1", None),
               ("PA2", None), ("CW", "full"), ("ExactCW", "full"),
               ("AROWRegressor", "full"), ("AROWRegressor", "diag-one-hot"),
               ("PARegressor", None), ("PA1Regressor", None), ("PA2Regressor", None)]


@pytest.mark.parametrize(("rule", "cov"), SPLIT_CASES, ids=[f"{r}-{c}" for r, c in SPLIT_CASES])
@settings(max_examples=examples(25), deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 30), C=_log10)
def test_weight_h_then_h2_is_weight_h_plus_h2(rule, cov, seed, n, C):
    rng = np.random.default_rng(seed)
    d = 4
    if cov == "diag-one-hot":
        cov = "diag"
        X = np.zeros((n, d))
        X[np.arange(n), rng.integers(0, d, size=n)] = rng.normal(size=n) * 2
    else:
        X = rng.normal(size=(n, d))
    h1 = np.exp(rng.uniform(-3, 2, size=n))
    h2 = np.exp(rng.uniform(-3, 2, size=n))
    Xs = np.repeat(X, 2, axis=0)
    ws = np.column_stack([h1, h2]).ravel()
    if rule in REGRESSION_RULES:
        y = X @ rng.normal(size=d) + 0.3 * rng.normal(size=n)
        params = {"r": C} if rule == "AROWRegressor" else {"C": C} if rule != "PARegressor" else {}
        split = _regressor(rule, cov, params).partial_fit(Xs, np.repeat(y, 2), sample_weight=ws)
        once = _regressor(rule, cov, params).partial_fit(X, y, sample_weight=h1 + h2)
    else:
        y = rng.choice(CLASSES, size=n)
        params = {"C": C} if rule in ("PA1", "PA2") else {"r": C} if rule == "AROW" else {}
        split = _classifier(rule, cov, params=params).partial_fit(
            Xs, np.repeat(y, 2), classes=CLASSES, sample_weight=ws)
        once = _classifier(rule, cov, params=params).partial_fit(
            X, y, classes=CLASSES, sample_weight=h1 + h2)
    assert_same_state(split, once, SPLIT_TOL[rule],
                      f"{rule}/{cov} {params}: h then h' vs h + h' (h={h1.tolist()}, "
                      f"h'={h2.tolist()})")


# ------------------------------------------------------------------------------------------
# 3. Weight 0 is a no-op
# ------------------------------------------------------------------------------------------


def _binary(n=40, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, np.where(X @ rng.normal(size=d) > 0, 1, -1)


def _multiclass(n=40, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, np.argmax(X @ rng.normal(size=(d, 3)), axis=1)


def _regression(n=40, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, X @ rng.normal(size=d) + 0.1 * rng.normal(size=n)


# (factory, data): one model of every kind
ZERO_CASES = {
    "binary-AROW-diag": (lambda: cwrs.AROW(), _binary),
    "binary-SCW1-full": (lambda: cwrs.SCW1(covariance="full"), _binary),
    "binary-PA1": (lambda: cwrs.PA1(), _binary),
    "binary-OGD": (lambda: cwrs.OGD(), _binary),
    "binary-IELLIP": (lambda: cwrs.IELLIP(), _binary),
    "binary-ALMA": (lambda: cwrs.ALMA(), _binary),
    "binary-AdaGrad": (lambda: cwrs.AdaGrad(), _binary),
    "binary-FTRL": (lambda: cwrs.FTRL(), _binary),
    "binary-lowrank": (lambda: cwrs.AROW(covariance="lowrank", rank=2), _binary),
    "binary-l1": (lambda: cwrs.AROW(penalty="l1", alpha=0.01), _binary),
    "multiclass-max-score": (lambda: cwrs.AROW(covariance="full"), _multiclass),
    "multiclass-ovr": (lambda: cwrs.PA2(multi_class="ovr"), _multiclass),
    "regression-AROW": (lambda: cwrs.AROWRegressor(covariance="full"), _regression),
    "regression-PA1": (lambda: cwrs.PA1Regressor(), _regression),
    "kernel": (lambda: cwrs.AROW(kernel="rbf", gamma=0.5), _binary),
    "kernel-multiclass": (lambda: cwrs.SCW2(kernel="poly", degree=2), _multiclass),
    "averaged": (lambda: cwrs.AROW(average=True), _binary),
    "averaged-from-row-10": (lambda: cwrs.PA1(average=10), _binary),
    "averaged-regression": (lambda: cwrs.AROWRegressor(average=True), _regression),
    "process-noise": (lambda: cwrs.AROW(covariance="full", process_noise=0.01), _binary),
    "process-noise-auto": (lambda: cwrs.AROW(process_noise="auto"), _binary),
    "process-noise-regression": (lambda: cwrs.AROWRegressor(process_noise=0.05), _regression),
}


def _partial_fit(est, X, y, **kw):
    if isinstance(est, cwrs.Classifier):
        kw.setdefault("classes", np.unique(y))
    return est.partial_fit(X, y, **kw)


def _saved(est):
    buffer = io.BytesIO()
    est.save(buffer)
    return buffer.getvalue()


@pytest.mark.parametrize("case", sorted(ZERO_CASES))
def test_zero_weight_rows_are_skipped_entirely(case):
    """Rows of weight 0 in a call change nothing: the model equals, byte for byte (pickle and
    .cwrs file: means, covariances, counters, the averaging's row count, the process noise's
    statistics), the model of the same call without those rows; a call of only zero weights
    leaves the model as it was."""
    factory, data = ZERO_CASES[case]
    X, y = data()
    w = weights_for(len(y), 11)
    w[:3] = [1.0, 0.0, 2.5]
    assert (w == 0).any() and (w > 0).any()
    keep = w > 0
    classes = {"classes": np.unique(y)} if isinstance(factory(), cwrs.Classifier) else {}
    with_zeros = factory().partial_fit(X, y, sample_weight=w, **classes)
    without = factory().partial_fit(X[keep], y[keep], sample_weight=w[keep], **classes)
    assert pickle.dumps(with_zeros) == pickle.dumps(without), f"{case}: pickles differ"
    assert _saved(with_zeros) == _saved(without), f"{case}: .cwrs files differ"
    before = pickle.dumps(with_zeros)
    _partial_fit(with_zeros, X[:7], y[:7], sample_weight=np.zeros(7))
    assert pickle.dumps(with_zeros) == before, f"{case}: an all-zero-weight call changed the model"


@pytest.mark.parametrize("rule", ["AROW", "OGD", "IELLIP"])
def test_zero_weight_rows_do_not_count_as_rounds(rule):
    """OGD's η_t and IELLIP's c_t follow the rows of positive weight (t counts them), as do
    the counters: a zero-weight row between two rows is no round."""
    X, y = _binary(n=20)
    w = np.ones(20)
    w[::3] = 0.0
    skipped = getattr(cwrs, rule)().partial_fit(X, y, classes=CLASSES, sample_weight=w)
    dropped = getattr(cwrs, rule)().partial_fit(X[w > 0], y[w > 0], classes=CLASSES)
    assert pickle.dumps(skipped) == pickle.dumps(dropped)


# ------------------------------------------------------------------------------------------
# 4. Bad weights
# ------------------------------------------------------------------------------------------

# (id, weights for n rows, words of which the message must hold one)
BAD_WEIGHTS = [
    ("negative", lambda n: np.r_[np.ones(n - 1), -0.5], ("negative", ">= 0", "≥ 0")),
    ("nan", lambda n: np.r_[np.ones(n - 1), np.nan], ("nan", "finite")),
    ("inf", lambda n: np.r_[np.inf, np.ones(n - 1)], ("inf", "finite")),
    ("-inf", lambda n: np.r_[np.ones(n - 1), -np.inf], ("inf", "finite")),
    # Beyond the bound that keeps a model's totals of weights finite (saved and loaded).
    ("huge", lambda n: np.r_[np.ones(n - 1), 2.0**65], ("2**64",)),
    ("too-short", lambda n: np.ones(n - 1), ("shape",)),
    ("too-long", lambda n: np.ones(n + 1), ("shape",)),
    ("2-d", lambda n: np.ones((n, 1)), ("shape",)),
]


@pytest.mark.parametrize("kind", ["binary", "multiclass", "regression", "kernel"])
@pytest.mark.parametrize(("bad", "make_w", "words"), BAD_WEIGHTS, ids=[b[0] for b in BAD_WEIGHTS])
def test_bad_weights_raise_and_leave_the_model_unchanged(kind, bad, make_w, words):
    if kind == "regression":
        est, (X, y) = cwrs.AROWRegressor(), _regression()
    elif kind == "multiclass":
        est, (X, y) = cwrs.AROW(covariance="full"), _multiclass()
    elif kind == "kernel":
        est, (X, y) = cwrs.PA1(kernel="rbf"), _binary()
    else:
        est, (X, y) = cwrs.AROW(), _binary()
    _partial_fit(est, X[:20], y[:20], sample_weight=weights_for(20, 2))
    before = pickle.dumps(est)
    with pytest.raises(ValueError, match="sample_weight") as info:
        _partial_fit(est, X[20:], y[20:], sample_weight=make_w(20))
    message = str(info.value).lower()
    assert any(word in message for word in words), (
        f"{bad}: the message does not name the problem ({' or '.join(words)}): {info.value}")
    assert pickle.dumps(est) == before, f"{kind}: a refused call changed the model"
    # fit refuses them too, and keeps the model it had
    with pytest.raises(ValueError, match="sample_weight"):
        est.fit(X[20:], y[20:], sample_weight=make_w(20))
    assert pickle.dumps(est) == before, f"{kind}: a refused fit changed the model"


def test_fractional_weights_are_accepted_where_integers_were_required():
    X, y = _binary()
    est = cwrs.AROW().fit(X, y, sample_weight=np.linspace(0.0, 3.0, len(y)))
    assert est.n_updates_ > 0


# ------------------------------------------------------------------------------------------
# 5. Averaging
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("rule", "cov", "start"),
                         [("AROW", "diag", 1), ("AROW", "full", 5), ("PA2", None, 1),
                          ("SCW2", "full", 3), ("Perceptron", None, 8)])
@settings(max_examples=examples(15), deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_average_is_the_weighted_average_of_the_means(rule, cov, start, seed):
    """w̄ = Σ_t h_t·w_t / Σ_t h_t over the rows of positive weight from row `start` on (rows
    numbered among those of positive weight), w_t the reference's mean after row t."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(25, 4))
    y = rng.choice(CLASSES, size=25)
    w = weights_for(25, seed)
    ref = RefLearner(rule, {}, cov, 4, 1.0)
    means, hs = [], []
    for t in range(25):
        rec = ref.learn(X[t], y[t], h=w[t])
        if rec["ill_conditioned"]:
            reject()
        if w[t] > 0:
            means.append(ref.mu.copy())
            hs.append(w[t])
    if len(means) < start:
        want = means[-1] if means else np.zeros(4)
    else:
        want = np.average(np.array(means[start - 1 :]), axis=0, weights=hs[start - 1 :])
    est = make_estimator(rule, cov, {}, 1.0, average=start)
    est.partial_fit(X, y, classes=CLASSES, sample_weight=w)
    scale = max(1.0, float(np.abs(np.array(means)).max()) if means else 1.0)
    assert_close(np.asarray(est.coef_)[0], want, RTOL, scale, "averaged coef_",
                 f"weights {w.tolist()}")


# ------------------------------------------------------------------------------------------
# 6. Multiclass, kernel and L1 take the same weighted steps
# ------------------------------------------------------------------------------------------


def _ref_max_score(rule, cov, X, labels, w, K, params=None):
    """Max-score multiclass (docs/design.md §4.1) from the weighted rules of tests/reference.py:
    s the first highest-scoring wrong class, the rule's weighted step on m = μ_y·x − μ_s·x,
    V = v_y + v_s, ‖x‖² seen as 2‖x‖²; μ_y += αΣ_y x, μ_s −= αΣ_s x, each of Σ_y, Σ_s gains
    c·xxᵀ. Rows of weight 0 are skipped. Returns (μ, Σ, n_updates, n_mistakes)."""
    from reference import rule_update

    d = X.shape[1]
    a = 1.0
    mu = np.zeros((K, d))
    S = (np.array([a * np.eye(d)] * K) if cov == "full"
         else np.full((K, d), a) if cov == "diag" else None)
    n_updates = n_mistakes = 0

    def sx(k, x):
        return S[k] @ x if cov == "full" else S[k] * x if cov == "diag" else x

    for x, y, h in zip(X, labels, w):
        if h == 0:
            continue
        f = mu @ x
        rivals = [k for k in range(K) if k != y]
        s = max(rivals, key=lambda k: (f[k], -k))
        m = f[y] - f[s]
        n_mistakes += m <= 0
        v = {k: float(x @ sx(k, x)) for k in (y, s)}
        step = rule_update(rule, m, v[y] + v[s], 2 * float(x @ x), h, **(params or {}))
        if step is None:
            continue
        alpha, c = step
        sxy, sxs = sx(y, x), sx(s, x)
        mu[y] = mu[y] + alpha * sxy
        mu[s] = mu[s] - alpha * sxs
        if cov == "full":
            for k, sk in ((y, sxy), (s, sxs)):
                S[k] = S[k] - c / (1 + c * v[k]) * np.outer(sk, sk)
        elif cov == "diag":
            for k in (y, s):
                S[k] = S[k] / (1 + c * S[k] * x * x)
        n_updates += 1
    return mu, S, n_updates, n_mistakes


MAX_SCORE_CASES = [("AROW", "full"), ("AROW", "diag"), ("SCW1", "diag"), ("NHERD", "full"),
                   ("PA2", None), ("PA1", None), ("Perceptron", None)]


@pytest.mark.parametrize(("rule", "cov"), MAX_SCORE_CASES,
                         ids=[f"{r}-{c}" for r, c in MAX_SCORE_CASES])
@pytest.mark.parametrize("seed", range(4))
def test_weighted_max_score_multiclass_matches_the_reference(rule, cov, seed):
    rng = np.random.default_rng(seed)
    K, d, n = 4, 5, 40
    X = rng.normal(size=(n, d))
    labels = np.argmax(X @ rng.normal(size=(d, K)) + 0.5 * rng.normal(size=(n, K)), axis=1)
    w = weights_for(n, seed)
    mu, S, n_updates, n_mistakes = _ref_max_score(rule, cov, X, labels, w, K)
    est = make_estimator(rule, cov, {}, 1.0, multi_class="max-score")
    est.partial_fit(X, labels, classes=np.arange(K), sample_weight=w)
    assert (est.n_updates_, est.n_mistakes_) == (n_updates, n_mistakes)
    assert_close(est.coef_, mu, RTOL, 1.0, "max-score coef_")
    if cov is not None:
        assert_covariance_close(est.covariance_, S, cov, 1.0, RTOL, "max-score covariance_")


@pytest.mark.parametrize(("rule", "cov"), [("AROW", "full"), ("SCW2", "diag"), ("PA2", None),
                                           ("OGD", None)])
def test_weighted_one_vs_rest_is_weighted_binary_per_class(rule, cov):
    """One-vs-rest class k learns "k or not" with the row's weight: the binary learner on
    labels ±1 with the same weights."""
    rng = np.random.default_rng(7)
    K, n = 3, 40
    X = rng.normal(size=(n, 4))
    labels = rng.integers(0, K, size=n)
    w = weights_for(n, 7)
    kw = {"covariance": cov} if cov else {}
    ovr = getattr(cwrs, rule)(multi_class="ovr", fit_intercept=False, **kw)
    ovr.partial_fit(X, labels, classes=np.arange(K), sample_weight=w)
    for k in range(K):
        binary = getattr(cwrs, rule)(fit_intercept=False, **kw)
        binary.partial_fit(X, np.where(labels == k, 1, -1), classes=CLASSES, sample_weight=w)
        assert_close(np.asarray(ovr.coef_)[k], np.asarray(binary.coef_)[0], 1e-12, 1.0,
                     f"ovr class {k} coef_")
        if cov:
            assert_close(np.asarray(ovr.covariance_)[k], np.asarray(binary.covariance_),
                         1e-12, 1.0, f"ovr class {k} covariance_")


@pytest.mark.parametrize("rule", ["AROW", "SCW1", "NHERD", "SOP", "PA2", "Perceptron", "OGD",
                                  "IELLIP"])
@pytest.mark.parametrize("multi_class", [None, "max-score", "ovr"])
def test_weighted_linear_kernel_is_the_weighted_primal_learner(rule, multi_class):
    """The dual form takes the same weighted steps: with the linear kernel it is the primal
    full-covariance (first order: identity) learner, fed the same weights."""
    rng = np.random.default_rng(5)
    n = 40
    X = rng.normal(size=(n, 4))
    if multi_class is None:
        y, classes, kw = np.where(X @ rng.normal(size=4) > 0, 1, -1), CLASSES, {}
    else:
        y, classes = np.argmax(X @ rng.normal(size=(4, 3)), axis=1), np.arange(3)
        kw = {"multi_class": multi_class}
    cls = getattr(cwrs, rule)
    full = {"covariance": "full"} if "covariance" in cls().get_params() else {}
    w = weights_for(n, 5)
    primal = cls(**full, **kw).partial_fit(X, y, classes=classes, sample_weight=w)
    dual = cls(kernel="linear", **kw).partial_fit(X, y, classes=classes, sample_weight=w)
    assert (dual.n_updates_, dual.n_mistakes_) == (primal.n_updates_, primal.n_mistakes_)
    scale = max(1.0, float(np.abs(primal.decision_function(X)).max()))
    np.testing.assert_allclose(dual.decision_function(X), primal.decision_function(X),
                               rtol=1e-9, atol=1e-9 * scale)


def test_weighted_l1_uses_the_weighted_step_rate():
    """penalty="l1" thresholds a weighted row with the weighted step's rate: AROW's
    1/(2(v + r/h)), NHERD's 1/(2(v + 1/(hC))), α_h for the other rules (docs/design.md §5.1 with
    the weighted step), against the eager reference of tests/test_sparse_l1.py fed the weights."""
    rng = np.random.default_rng(9)
    n, d, lam = 50, 8, 0.05
    X = rng.normal(size=(n, d))
    X[rng.random((n, d)) < 0.5] = 0.0
    y = np.where(X @ rng.normal(size=d) > 0, 1, -1)
    w = weights_for(n, 9)
    for rule in ("AROW", "NHERD", "SCW1", "CW"):
        ref = RefLearner(rule, {}, "diag", d, 1.0)
        for t in range(n):
            rec = ref.learn(X[t], y[t], h=w[t])
            if not rec["updated"]:
                continue
            v, h = rec["v"], w[t]
            eta = (1.0 / (2.0 * (v + 1.0 / h)) if rule in ("AROW", "NHERD")  # r = C = 1
                   else rec["alpha"])
            tau = eta * lam * ref.Sigma
            ref.mu = np.sign(ref.mu) * np.maximum(0.0, np.abs(ref.mu) - tau)
        est = make_estimator(rule, "diag", {}, 1.0, penalty="l1", alpha=lam)
        est.partial_fit(X, y, classes=CLASSES, sample_weight=w)
        assert est.n_updates_ == ref.n_updates, rule
        assert_close(np.asarray(est.coef_)[0], ref.mu, 1e-9, 1.0, f"{rule} L1 coef_")
        assert_close(est.covariance_, ref.Sigma, 1e-9, 1.0, f"{rule} L1 covariance_")


# ------------------------------------------------------------------------------------------
# 7. The references checked against the math they transcribe
# ------------------------------------------------------------------------------------------


@given(m=st.floats(-5, 0.99), n=st.floats(0.01, 10), C=_log10,
       h=st.floats(0.01, 20), h2=st.floats(0.01, 20))
@settings(max_examples=examples(200), deadline=None)
def test_reference_invariant_rules_compose(m, n, C, h, h2):
    """The invariant steps of the reference: PA-I and PA-II's step of h then of h′ (at the
    margin the first step leaves) is the step of h + h′; PA's lands on m′ = 1; AROW's leaves
    1 − m′ = (1 − m)·r/(v + r/h) > 0 and its precision gains add, h/r + h′/r."""
    from reference import rule_update

    for rule, p in (("PA1", {"C": C}), ("PA2", {"C": C})):
        a1, _ = rule_update(rule, m, n, n, h, **p)
        m1 = m + a1 * n
        a2 = (rule_update(rule, m1, n, n, h2, **p) or (0.0, 0.0))[0]
        a12, _ = rule_update(rule, m, n, n, h + h2, **p)
        assert math.isclose(a1 + a2, a12, rel_tol=1e-12, abs_tol=1e-13 * (1 - m) / n), (
            rule, a1, a2, a12)
    alpha, _ = rule_update("PA", m, n, n, h)
    assert math.isclose(m + alpha * n, 1.0, rel_tol=1e-12, abs_tol=1e-12)
    v, r = n, C
    a1, c1 = rule_update("AROW", m, v, n, h, r=r)
    m1 = m + a1 * v
    assert 1 - m1 > 0
    # (1 − m1 cancels: its rounding is absolute, a few ε)
    assert math.isclose(1 - m1, (1 - m) * (r / h) / (v + r / h), rel_tol=1e-12, abs_tol=1e-15)
    v1 = v / (1 + c1 * v)
    a2, c2 = rule_update("AROW", m1, v1, n, h2, r=r)
    a12, c12 = rule_update("AROW", m, v, n, h + h2, r=r)
    assert math.isclose(c1 + c2, c12, rel_tol=1e-14)
    # the mean moves along Σx then Σ′x = Σx/(1 + c1 v): total α1 + α2/(1 + c1 v) along Σx
    assert math.isclose(a1 + a2 / (1 + c1 * v), a12, rel_tol=1e-12)


@given(m=st.floats(-5, 0.0), v=st.floats(0.01, 10), h=st.floats(0.01, 20))
@settings(max_examples=examples(100), deadline=None)
def test_reference_sop_weight_counts_the_row_h_times(m, v, h):
    """SOP's weighted step is its θ-form with the row counted h times: A′ = A + h·xxᵀ,
    θ′ = θ + h·y·x, μ′ = A′⁻¹θ′ = μ + y·Σx·(1 − m)/(1/h + v), checked in one dimension
    (x = 1, Σ = v, μ = y·m, so θ = μ/v)."""
    from reference import rule_update

    alpha, c = rule_update("SOP", m, v, v, h)
    assert c == h
    mu_new = (m / v + h) / (1 / v + h)  # y = +1
    assert math.isclose(m + alpha * v, mu_new, rel_tol=1e-12, abs_tol=1e-12)


def test_reference_weight_one_is_the_table_and_zero_skips():
    from reference import ALL_RULES, regression_update, rule_update

    rng = np.random.default_rng(0)
    for _ in range(200):
        m, v = float(rng.normal()), float(np.exp(rng.normal()))
        n2 = v * float(np.exp(rng.normal()))
        for rule in ALL_RULES:
            assert rule_update(rule, m, v, n2, 1.0) == rule_update(rule, m, v, n2)
            assert rule_update(rule, m, v, n2, 0.0) is None
        for rule in REGRESSION_RULES:
            assert regression_update(rule, m, v, n2, 0.0) is None
        # PA-II at h = 1 through expm1/log1p agrees with the table's form to rounding
        a = rule_update("PA2", m, v, n2, 1.0 + 1e-15)
        b = rule_update("PA2", m, v, n2)
        assert (a is None) == (b is None) and (a is None or math.isclose(a[0], b[0], rel_tol=1e-13))
    for bad in (-1.0, math.nan, math.inf):
        with pytest.raises(ValueError):
            rule_update("AROW", 0.0, 1.0, 1.0, bad)


@pytest.mark.parametrize("cov", ["full", "diag"])
@pytest.mark.parametrize("kind", ["AROW", "AROWRegressor"])
def test_process_noise_is_added_once_per_row_of_positive_weight(kind, cov):
    """The prediction step Σ ← Σ + q·I runs once before every row of positive weight, whatever
    its weight (it models the time between rows), and not at all for a row of weight 0; the
    row's step is then its weighted step (the diagonal form with process noise keeps the
    marginal variances, Σ_j ← Σ_j − c·(Σ_j x_j)²/(1 + c·v), docs/design.md §10.3)."""
    from reference import regression_update, rule_update

    q = 0.05
    rng = np.random.default_rng(4)
    n, d = 30, 4
    X = rng.normal(size=(n, d))
    w = weights_for(n, 4)
    if kind == "AROW":
        y = rng.choice(CLASSES, size=n)
        est = make_estimator("AROW", cov, {}, 1.0, process_noise=q)
        est.partial_fit(X, y, classes=CLASSES, sample_weight=w)
    else:
        y = X @ rng.normal(size=d) + 0.3 * rng.normal(size=n)
        est = _regressor("AROWRegressor", cov, {"process_noise": q})
        est.partial_fit(X, y, sample_weight=w)
    mu = np.zeros(d)
    S = np.eye(d) if cov == "full" else np.ones(d)
    for x, target, h in zip(X, y, w):
        if h == 0:
            continue
        S = S + (q * np.eye(d) if cov == "full" else q)
        sx = S @ x if cov == "full" else S * x
        v = float(x @ sx)
        if kind == "AROW":
            step = rule_update("AROW", target * float(mu @ x), v, float(x @ x), h)
            if step is None:
                continue
            alpha, c = step[0] * target, step[1]
        else:
            e = target - float(mu @ x)
            alpha, c = regression_update("AROWRegressor", e, v, float(x @ x), h)
        mu = mu + alpha * sx
        S = S - c / (1 + c * v) * (np.outer(sx, sx) if cov == "full" else sx * sx)
    assert_close(np.asarray(est.coef_).ravel(), mu, RTOL, 1.0, f"{kind}/{cov} coef_")
    assert_covariance_close(est.covariance_, S, cov, 1.0, RTOL, f"{kind}/{cov} covariance_")


@pytest.mark.parametrize("rule", ["AROW", "SCW2", "OGD"])
def test_weighted_fit_is_weighted_passes_of_partial_fit(rule):
    """fit(X, y, sample_weight=w) with shuffle=False makes its n_iter passes with the weights
    following their rows: a fresh partial_fit per pass, bit for bit."""
    X, y = _binary()
    w = weights_for(len(y), 8)
    fitted = getattr(cwrs, rule)(shuffle=False, n_iter=2).fit(X, y, sample_weight=w)
    passes = getattr(cwrs, rule)()
    for _ in range(2):
        passes.partial_fit(X, y, classes=CLASSES, sample_weight=w)
    for name in ("coef_", "intercept_", "n_updates_", "n_mistakes_"):
        assert np.array_equal(getattr(fitted, name), getattr(passes, name)), name
    with pytest.raises(ValueError, match="sample_weight"):
        getattr(cwrs, rule)().fit(X, y, sample_weight=np.zeros(len(y)))


@pytest.mark.parametrize("average", [True, 5])
@pytest.mark.parametrize("how", ["pickle", "cwrs"])
def test_weighted_average_survives_a_round_trip(average, how):
    """The average's total weight is part of the state: a model saved and loaded between two
    weighted calls continues the average exactly."""
    X, y = _binary(n=40)
    w = weights_for(40, 12)
    whole = cwrs.AROW(average=average).partial_fit(X, y, classes=CLASSES, sample_weight=w)
    first = cwrs.AROW(average=average).partial_fit(X[:20], y[:20], classes=CLASSES,
                                                   sample_weight=w[:20])
    if how == "pickle":
        copy = pickle.loads(pickle.dumps(first))
    else:
        copy = cwrs.load(io.BytesIO(_saved(first)))
    copy.partial_fit(X[20:], y[20:], sample_weight=w[20:])
    # every entry of the native state, exactly (the pickles' bytes differ by their memo even
    # without weights: a loaded estimator's objects are shared differently)
    want, got = whole.__getstate__()["_model"][1], copy.__getstate__()["_model"][1]
    assert sorted(want) == sorted(got)
    for key, value in want.items():
        if isinstance(value, np.ndarray):
            assert np.array_equal(got[key], value), key
        else:
            assert got[key] == value, key


# ------------------------------------------------------------------------------------------
# 8. Class weights: h = sample_weight[i]·class_weight[y_i]
# ------------------------------------------------------------------------------------------


def _imbalanced(K=3, seed=0, counts=(30, 10, 5)):
    rng = np.random.default_rng(seed)
    labels = np.concatenate([np.full(c, k) for k, c in enumerate(counts[:K])])
    rng.shuffle(labels)
    X = rng.normal(size=(len(labels), 4)) + labels[:, None]
    return X, labels


def _fitted_state(est):
    return [np.asarray(est.coef_), np.asarray(est.intercept_), est.n_updates_, est.n_mistakes_]


def _assert_same_fitted_state(a, b, what):
    for x, y_ in zip(_fitted_state(a), _fitted_state(b)):
        assert np.array_equal(x, y_), f"{what}: {x} != {y_}"


@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("rule", ["AROW", "PA1", "OGD"])
def test_balanced_class_weight_in_fit_is_scikit_learns(rule, K):
    """fit with class_weight="balanced" weighs class k by n_samples/(n_classes·count_k) over y
    (scikit-learn's compute_class_weight): the model of those sample weights."""
    from sklearn.utils.class_weight import compute_class_weight

    X, labels = _imbalanced(K)
    classes = np.unique(labels)
    cw = compute_class_weight("balanced", classes=classes, y=labels)
    balanced = getattr(cwrs, rule)(class_weight="balanced", shuffle=False).fit(X, labels)
    explicit = getattr(cwrs, rule)(shuffle=False).fit(X, labels, sample_weight=cw[labels])
    _assert_same_fitted_state(balanced, explicit, f"{rule} K={K} balanced")


@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("rule", ["AROW", "SCW1"])
def test_balanced_fit_with_sample_weight_is_scikit_learns_weighted_rule(rule, n_jobs):
    """With sample weights, "balanced" counts them (scikit-learn's compute_class_weight with
    sample_weight): the model of sample_weight times those class weights, on one thread or in
    shards, and each further pass counts its rows again (the same weights)."""
    from sklearn.utils.class_weight import compute_class_weight

    X, labels = _imbalanced(3)
    s = weights_for(len(labels), 11)
    classes = np.unique(labels)
    cw = compute_class_weight("balanced", classes=classes, y=labels, sample_weight=s)
    make = lambda **p: getattr(cwrs, rule)(shuffle=False, n_iter=2, n_jobs=n_jobs, **p)  # noqa: E731
    balanced = make(class_weight="balanced").fit(X, labels, sample_weight=s)
    explicit = make().fit(X, labels, sample_weight=s * cw[labels])
    np.testing.assert_allclose(balanced.coef_, explicit.coef_, rtol=1e-12, atol=1e-15)
    counted = [s[labels == k].sum() for k in classes]
    np.testing.assert_allclose(balanced.class_counts_, 2 * np.array(counted), rtol=1e-12)


def test_dict_class_weight_multiplies_the_sample_weight():
    X, labels = _imbalanced(3)
    s = weights_for(len(labels), 3)
    cw = {0: 0.5, 1: 2.0, 2: 3.5}
    weighted = cwrs.AROW(class_weight=cw).partial_fit(X, labels, classes=[0, 1, 2], sample_weight=s)
    explicit = cwrs.AROW().partial_fit(X, labels, classes=[0, 1, 2],
                                       sample_weight=s * np.array([cw[k] for k in labels]))
    _assert_same_fitted_state(weighted, explicit, "dict class_weight")


def test_balanced_partial_fit_uses_the_running_counts():
    """Each call first adds its rows' sample weights to the per-class counts kept in the model
    (row by row), then learns every row of the call with w_k = N/(K·count_k), N the total."""
    X, labels = _imbalanced(3)
    s = weights_for(len(labels), 5)
    calls = np.array_split(np.arange(len(labels)), 3)
    balanced = cwrs.AROW(class_weight="balanced")
    explicit = cwrs.AROW()
    counts = [0.0, 0.0, 0.0]
    for rows in calls:
        for i in rows:
            counts[labels[i]] += float(s[i])
        total = counts[0] + counts[1] + counts[2]
        w_k = np.array([total / (3 * c) if c > 0 else 1.0 for c in counts])
        balanced.partial_fit(X[rows], labels[rows], classes=[0, 1, 2], sample_weight=s[rows])
        explicit.partial_fit(X[rows], labels[rows], classes=[0, 1, 2],
                             sample_weight=s[rows] * w_k[labels[rows]])
        _assert_same_fitted_state(balanced, explicit, "balanced partial_fit")


def test_balanced_class_weight_with_string_labels():
    X, labels = _imbalanced(2)
    names = np.array(["spam", "ham"])[labels]
    counts = {name: int((names == name).sum()) for name in ("ham", "spam")}
    w = np.array([len(names) / (2 * counts[name]) for name in names])
    balanced = cwrs.AROW(class_weight="balanced", shuffle=False).fit(X, names)
    explicit = cwrs.AROW(shuffle=False).fit(X, names, sample_weight=w)
    _assert_same_fitted_state(balanced, explicit, "balanced with string labels")


@pytest.mark.parametrize("bad", [{0: -1.0}, {1: math.nan}, {2: math.inf}, {7: 1.0}, "balancd",
                                 [1.0, 2.0, 3.0]], ids=str)
def test_bad_class_weight_raises_and_leaves_the_model_unchanged(bad):
    X, labels = _imbalanced(3)
    est = cwrs.AROW().partial_fit(X[:20], labels[:20], classes=[0, 1, 2])
    before = pickle.dumps(est)
    est.set_params(class_weight=bad)
    with pytest.raises(ValueError, match="class_weight"):
        est.partial_fit(X[20:], labels[20:])
    est.set_params(class_weight=None)
    assert pickle.dumps(est) == before


@pytest.mark.parametrize("how", ["pickle", "cwrs"])
def test_balanced_running_counts_survive_a_round_trip(how):
    X, labels = _imbalanced(3)
    s = weights_for(len(labels), 6)
    whole = cwrs.AROW(class_weight="balanced")
    first = cwrs.AROW(class_weight="balanced")
    for est, rows in ((whole, slice(0, 25)), (whole, slice(25, None)), (first, slice(0, 25))):
        est.partial_fit(X[rows], labels[rows], classes=[0, 1, 2], sample_weight=s[rows])
    copy = (pickle.loads(pickle.dumps(first)) if how == "pickle"
            else cwrs.load(io.BytesIO(_saved(first))))
    copy.partial_fit(X[25:], labels[25:], sample_weight=s[25:])
    _assert_same_fitted_state(copy, whole, f"balanced after a {how} round trip")


@pytest.mark.parametrize("class_weight", ["balanced", {1: 4.0}])
def test_a_class_weight_that_takes_a_row_past_the_largest_weight_is_refused(class_weight):
    """sample_weight up to 2**64 is accepted, but a row's weight is its sample_weight times its
    class's: past 2**64 the call is refused, naming the row, and the model is unchanged."""
    X, labels = _imbalanced(2)
    est = cwrs.AROW(class_weight=class_weight).partial_fit(X[:20], labels[:20], classes=[0, 1])
    before = pickle.dumps(est)
    # Class 0 twice and class 1 once at 2**64: "balanced" weighs class 1 by about 3/2.
    rows = np.r_[np.flatnonzero(labels == 0)[:2], np.flatnonzero(labels == 1)[:1]]
    with pytest.raises(ValueError, match=r"row 2's weight, its sample_weight .* past 2\*\*64"):
        est.partial_fit(X[rows], labels[rows], sample_weight=[2.0**64] * 3)
    assert pickle.dumps(est) == before
