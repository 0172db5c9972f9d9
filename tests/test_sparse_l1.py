"""Sparse (L1) training of the diagonal learners (docs/design.md §5) against a slow, eager NumPy
reference.

The semantics (the eager form, which the lazy Rust implementation must equal): on every round where
the rule fires, after the usual mean/variance update of docs/design.md §2, every weight j (every feature;
the bias only with ``penalize_intercept=True``) is soft-thresholded,

    w_j <- sign(w_j) * max(0, |w_j| - tau_j),
    tau_j = eta_t * lambda * Sigma_jj   penalty="l1"  (Sigma_jj after this round's update)
    tau_j = eta_t * lambda              penalty="l1-uniform"  (classic truncated gradient)

with the step scale eta_t of the rule: AROW 1/(2(v + r)) (= beta_t/2, the note's derivation), NHERD
1/(2(v + 1/C)), AROW regression 1/(2(v + r)), every other rule the round's alpha_t; v = x'Sigma x
before the update (max-score multiclass: V = v_y + v_s, applied to the two updated classes; ovr:
each updated class with its own v). Rounds without an update apply no threshold.  The margin of a
round uses the weights thresholded through the previous round; predictions and coef_ always see
fully thresholded weights.

The reference applies the threshold to *every* weight on *every* update round (O(d) per round), so
it shares nothing with the lazy O(nnz) bookkeeping under test.  The rules' (alpha, c) come from
tests/reference.py (docs/design.md §2 formulas, correctly rounded), whose ambiguity handling we keep: a
round whose firing decision lies within rounding distance of a rule's threshold follows cwrs's
decision (with L1 such a round is a discontinuity: firing thresholds every weight), and the
comparison stops at an ill-conditioned round (see reference.py).

Tolerance: 1e-12 relative, with atol = 1e-12 * max(1, scale), where scale = max_j (|mu_j| +
moved_j) and moved_j is everything that has moved weight j (mean steps and thresholds,
|delta mu_j| + tau_j, summed over rounds): the lazy form computes a pending threshold as
lambda*Sigma_jj*(H - H_j) from running sums H, whose rounding error is on that scale (a weight the
eager form zeroes exactly may be left at ~1e-17).  Decision values use
sum_j (|mu_j| + moved_j)|x_j|.  Variances are compared elementwise-relative (they evolve
multiplicatively).  The band within which a firing/mistake/rival decision counts as ambiguous
(and follows cwrs) is 1e-9 relative, as in reference.py.
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, note, reject, settings
from hypothesis import strategies as st

import cwrs
from _cwtest_util import examples, hyper_params, prior_variance
from _shared_data import shared_data
from reference import SECOND_ORDER, RefLearner

RTOL = 1e-12
DIAG_ATOL = 1e-300
CLASSES = np.array([-1, 1])
PENALTIES = ("l1", "l1-uniform")

SETTINGS = settings(max_examples=examples(40), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def _note(msg):
    try:
        note(msg)
    except Exception:  # outside a hypothesis test
        pass


def soft_threshold(w, tau):
    """sign(w) * max(0, |w| - tau), elementwise."""
    return np.sign(w) * np.maximum(0.0, np.abs(w) - tau)


# =============================================================================================
# The eager references
# =============================================================================================


class EagerL1Binary:
    """A binary diagonal learner with the eager L1 step: tests/reference.py's RefLearner over the
    augmented row (x, 1) when fitting an intercept, followed on every update round by the
    soft-threshold of every (penalised) weight."""

    def __init__(self, rule, params, d, a, fit_intercept, penalty, lam, penalize_intercept):
        self.rule, self.params = rule, dict(params)
        self.d, self.fit_intercept = d, bool(fit_intercept)
        self.penalty, self.lam = penalty, float(lam)
        self.core = RefLearner(rule, params, "diag", d + int(fit_intercept), a)
        self.mask = np.ones(d + int(fit_intercept), dtype=bool)
        if fit_intercept and not penalize_intercept:
            self.mask[-1] = False
        self.n_thresholds = 0  # update rounds (each thresholds every penalised weight)
        self.n_zeroed = 0  # weights the thresholds set to exactly zero from non-zero

    # the state, as cwrs exposes it
    @property
    def coef(self):
        return self.core.mu[: self.d]

    @property
    def intercept(self):
        return self.core.mu[self.d] if self.fit_intercept else 0.0

    @property
    def variances(self):
        return self.core.Sigma[: self.d]

    @property
    def moved(self):
        return self.core._moved

    def augment(self, x):
        x = np.asarray(x, dtype=float)
        return np.append(x, 1.0) if self.fit_intercept else x

    def decision(self, x):
        return self.core.decision(self.augment(x))

    def decision_scale(self, x):
        xa = np.abs(self.augment(x))
        return max(1.0, math.fsum(((np.abs(self.core.mu) + self.core._moved) * xa).tolist()))

    def coef_scale(self):
        return max(1.0, float((np.abs(self.core.mu) + self.core._moved).max()))

    def step_scale(self, rec):
        """eta_t of this update round."""
        v = rec["v"]
        p = self.params
        if self.rule == "AROW":
            return 1.0 / (2.0 * (v + p.get("r", 1.0)))
        if self.rule == "NHERD":
            return 1.0 / (2.0 * (v + 1.0 / p.get("C", 1.0)))
        return rec["alpha"]

    def learn(self, x, y, hint=None):
        rec = self.core.learn(self.augment(x), y, hint=hint)
        if rec["updated"]:
            eta = self.step_scale(rec)
            rec["eta"] = eta
            S = self.core.Sigma
            tau = eta * self.lam * (S if self.penalty == "l1" else np.ones_like(S))
            tau = np.where(self.mask, tau, 0.0)
            before = self.core.mu
            after = np.where(self.mask, soft_threshold(before, tau), before)
            self.n_zeroed += int(np.count_nonzero((after == 0) & (before != 0)))
            self.core.mu = after
            self.core._moved = self.core._moved + tau
            self.n_thresholds += 1
        return rec


class EagerL1Regressor:
    """AROW regression (recursive least squares, diagonal precision) with the eager L1 step:
    every non-zero row updates, alpha = e/(v + r), c = 1/r, eta = 1/(2(v + r))."""

    def __init__(self, d, r, a, fit_intercept, penalty, lam, penalize_intercept):
        D = d + int(fit_intercept)
        self.d, self.r, self.fit_intercept = d, float(r), bool(fit_intercept)
        self.penalty, self.lam = penalty, float(lam)
        self.mu, self.S, self.moved = np.zeros(D), np.full(D, float(a)), np.zeros(D)
        self.mask = np.ones(D, dtype=bool)
        if fit_intercept and not penalize_intercept:
            self.mask[-1] = False
        self.n_updates = 0

    def augment(self, x):
        x = np.asarray(x, dtype=float)
        return np.append(x, 1.0) if self.fit_intercept else x

    def predict(self, x):
        return math.fsum((self.mu * self.augment(x)).tolist())

    def learn(self, x, y):
        xa = self.augment(x)
        if not np.any(xa):
            return False
        e = y - self.predict(x)
        nz = xa != 0
        sx = self.S * xa
        v = math.fsum((sx * xa).tolist())
        alpha = e / (v + self.r)
        step = alpha * sx
        self.mu = self.mu + step
        self.S = self.S.copy()
        self.S[nz] = 1.0 / (1.0 / self.S[nz] + xa[nz] ** 2 / self.r)
        eta = 1.0 / (2.0 * (v + self.r))
        tau = eta * self.lam * (self.S if self.penalty == "l1" else np.ones_like(self.S))
        tau = np.where(self.mask, tau, 0.0)
        self.mu = np.where(self.mask, soft_threshold(self.mu, tau), self.mu)
        self.moved = self.moved + np.abs(step) + tau
        self.n_updates += 1
        return True


class Ambiguous(Exception):
    pass


class EagerL1MulticlassAROW:
    """Multiclass AROW (diag) with the eager L1 step, docs/design.md §4.

    max-score: s = the highest-scoring wrong class (the first on ties), m = s_y - s_s,
    V = v_y + v_s; fires when m < 1: alpha = (1 - m)/(V + r), c = 1/r; mu_y += alpha Sigma_y x,
    mu_s -= alpha Sigma_s x, then both classes are thresholded with eta = 1/(2(V + r)), each with
    its own Sigma.  ovr: class k learns the binary problem "k or not"; each class that updates is
    thresholded with its own eta_k = 1/(2(v_k + r)).
    """

    BAND = 1e-9  # relative ambiguity band for the decisions (rival, mistake, firing)

    def __init__(self, strategy, r, a, K, d, fit_intercept, penalty, lam, penalize_intercept):
        D = d + int(fit_intercept)
        self.strategy, self.r, self.K, self.d = strategy, float(r), K, d
        self.fit_intercept, self.penalty, self.lam = bool(fit_intercept), penalty, float(lam)
        self.mu, self.S, self.moved = np.zeros((K, D)), np.full((K, D), float(a)), np.zeros((K, D))
        self.mask = np.ones(D, dtype=bool)
        if fit_intercept and not penalize_intercept:
            self.mask[-1] = False
        self.n_updates = self.n_mistakes = self.n_ambiguous = 0

    def augment(self, x):
        x = np.asarray(x, dtype=float)
        return np.append(x, 1.0) if self.fit_intercept else x

    def scores(self, x):
        xa = self.augment(x)
        return np.array([math.fsum((self.mu[k] * xa).tolist()) for k in range(self.K)])

    def score_err(self, x):
        xa = np.abs(self.augment(x))
        return self.BAND * max(1.0, float(((np.abs(self.mu) + self.moved) @ xa).max()))

    def decision_scale(self, x):
        xa = np.abs(self.augment(x))
        return max(1.0, float(((np.abs(self.mu) + self.moved) @ xa).max()))

    def coef_scale(self):
        return max(1.0, float((np.abs(self.mu) + self.moved).max()))

    def _apply(self, k, xa, signed_alpha, eta):
        nz = xa != 0
        step = signed_alpha * self.S[k] * xa
        self.mu[k] = self.mu[k] + step
        self.S[k, nz] = 1.0 / (1.0 / self.S[k, nz] + xa[nz] ** 2 / self.r)
        tau = eta * self.lam * (self.S[k] if self.penalty == "l1" else np.ones_like(self.S[k]))
        tau = np.where(self.mask, tau, 0.0)
        self.mu[k] = np.where(self.mask, soft_threshold(self.mu[k], tau), self.mu[k])
        self.moved[k] = self.moved[k] + np.abs(step) + tau

    def _decide(self, value, limit, err, hint):
        """value < limit, or the hint when within err of the limit."""
        if abs(value - limit) <= err:
            self.n_ambiguous += 1
            return bool(hint)
        return value < limit

    def learn(self, x, label, cw_scores, hint_mistake, hint_updated, hint_changed):
        xa = self.augment(x)
        s = self.scores(x)
        err = self.score_err(x)
        others = [k for k in range(self.K) if k != label]
        # the rival: highest other score, first on ties; near-ties (exact ties included: a
        # weight the eager form zeroes exactly may be left at ~1e-17 by the lazy sums) follow
        # cwrs's own scores, with its rule (the first of the highest)
        best = max(s[k] for k in others)
        near = [k for k in others if best - s[k] <= err]
        if len(near) > 1:
            self.n_ambiguous += 1
            cw = np.asarray(cw_scores)
            rival = max(near, key=lambda k: (cw[k], -k))
        else:
            rival = next(k for k in others if s[k] == best)
        m = s[label] - s[rival]
        if abs(m) <= err:
            self.n_ambiguous += 1
            mistake = bool(hint_mistake)
        else:
            mistake = m <= 0
        self.n_mistakes += int(mistake)
        if not np.any(xa):
            return False
        changed = False
        if self.strategy == "max-score":
            vy = math.fsum((self.S[label] * xa * xa).tolist())
            vs = math.fsum((self.S[rival] * xa * xa).tolist())
            V = vy + vs
            if self._decide(m, 1.0, err, hint_updated):
                alpha = max(0.0, 1.0 - m) / (V + self.r)
                eta = 1.0 / (2.0 * (V + self.r))
                self._apply(label, xa, alpha, eta)
                self._apply(rival, xa, -alpha, eta)
                changed = True
        else:
            for k in range(self.K):
                yk = 1.0 if k == label else -1.0
                vk = math.fsum((self.S[k] * xa * xa).tolist())
                if self._decide(yk * s[k], 1.0, err, k in hint_changed):
                    alpha = max(0.0, 1.0 - yk * s[k]) / (vk + self.r)
                    self._apply(k, xa, yk * alpha, 1.0 / (2.0 * (vk + self.r)))
                    changed = True
        self.n_updates += int(changed)
        return changed


# =============================================================================================
# Streams
# =============================================================================================

_log10 = st.floats(min_value=-1.0, max_value=1.0).map(lambda e: float(10.0**e))
# alpha (the lambda) in [1e-4, 1], log-uniform, with extra weight on [1e-2, 1] where weights are
# zeroed and revived often (what exercises the lazy catch-up)
_alphas = st.one_of(st.floats(min_value=-4.0, max_value=0.0),
                    st.floats(min_value=-2.0, max_value=0.0)).map(lambda e: float(10.0**e))


def _rows(rng, n, d, density, kind, scale, p_zero_row, p_repeat):
    mask = rng.random((n, d)) < density
    if kind == "gauss":
        values = rng.normal(size=(n, d))
    elif kind == "binary":
        values = np.ones((n, d))
    else:  # term frequencies
        values = rng.integers(1, 4, size=(n, d)).astype(float)
    X = np.where(mask, values * scale, 0.0)
    X[rng.random(n) < p_zero_row] = 0.0
    repeats = [(t, int(rng.integers(0, t))) for t in range(1, n) if rng.random() < p_repeat]
    for t, s in repeats:
        X[t] = X[s]
    return X, repeats


def _draw_rows(draw, max_n, max_d):
    """(rng, X, repeats): the sparse rows both stream strategies share (see `_rows`)."""
    n = draw(st.integers(1, max_n))
    d = draw(st.integers(1, max_d))
    density = draw(st.floats(min_value=0.05, max_value=0.5))
    kind = draw(st.sampled_from(["gauss", "binary", "tf"]))
    scale = draw(st.sampled_from([1.0, 1.0, 0.3, 3.0]))
    p_zero_row = draw(st.sampled_from([0.0, 0.1, 0.25]))
    p_repeat = draw(st.sampled_from([0.0, 0.2, 0.4]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    X, repeats = _rows(rng, n, d, density, kind, scale, p_zero_row, p_repeat)
    return rng, X, repeats


@st.composite
def sparse_streams(draw, max_n=60, max_d=30):
    """(X, y): sparse rows (density 0.05-0.5; gaussian, binary or term-frequency values), some
    all-zero and some repeated rows (same or flipped label); labels the sign of a sparse true
    weight vector with some label noise."""
    flip = draw(st.sampled_from([0.0, 0.1, 0.5]))
    rng, X, repeats = _draw_rows(draw, max_n, max_d)
    n, d = X.shape
    w = rng.normal(size=d) * (rng.random(d) < 0.4)
    f = X @ w
    y = np.where(f > 0, 1, np.where(f < 0, -1, rng.choice(CLASSES, size=n)))
    y = np.where(rng.random(n) < flip, -y, y)
    for t, s in repeats:
        y[t] = y[s] if rng.random() < 0.5 else -y[s]
    return X, y.astype(int)


@st.composite
def sparse_regression_streams(draw, max_n=60, max_d=30):
    noise = draw(st.sampled_from([0.0, 0.1, 1.0]))
    offset = draw(st.sampled_from([0.0, 0.0, 2.0]))
    rng, X, repeats = _draw_rows(draw, max_n, max_d)
    n, d = X.shape
    w = rng.normal(size=d) * (rng.random(d) < 0.4)
    y = X @ w + offset + noise * rng.normal(size=n)
    for t, s in repeats:
        if rng.random() < 0.5:
            y[t] = y[s]
    return X, y


@st.composite
def multiclass_streams(draw, max_n=40, max_d=12, K=3):
    n = draw(st.integers(1, max_n))
    d = draw(st.integers(1, max_d))
    density = draw(st.floats(min_value=0.05, max_value=0.5))
    kind = draw(st.sampled_from(["gauss", "binary", "tf"]))
    p_zero_row = draw(st.sampled_from([0.0, 0.1, 0.25]))
    p_repeat = draw(st.sampled_from([0.0, 0.2, 0.4]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    X, repeats = _rows(rng, n, d, density, kind, 1.0, p_zero_row, p_repeat)
    W = rng.normal(size=(K, d)) * (rng.random((K, d)) < 0.5)
    y = np.argmax(X @ W.T + 0.3 * rng.normal(size=(n, K)), axis=1)
    for t, s in repeats:
        y[t] = y[s] if rng.random() < 0.5 else rng.integers(0, K)
    return X, y, K


# =============================================================================================
# Helpers
# =============================================================================================


def make_classifier(rule, params=None, a=1.0, fit_intercept=False, penalty="l1", alpha=1e-4,
                    penalize_intercept=False, **extra):
    kw = dict(params or {})
    # shuffle=False: fit in the stored order, as the references and the pinned runs learn.
    kw.update(covariance="diag", a=a, fit_intercept=fit_intercept, penalty=penalty, alpha=alpha,
              penalize_intercept=penalize_intercept, shuffle=False)
    kw.update(extra)
    return getattr(cwrs, rule)(**kw)


def assert_close(got, ref, scale, what):
    got = np.asarray(got, dtype=float)
    ref = np.asarray(ref, dtype=float)
    assert got.shape == ref.shape, f"{what}: shape {got.shape} != {ref.shape}"
    np.testing.assert_allclose(got, ref, rtol=RTOL, atol=RTOL * max(1.0, scale), err_msg=what)


def assert_variances_close(got, ref, what):
    got = np.asarray(got, dtype=float)
    ref = np.asarray(ref, dtype=float)
    assert got.shape == ref.shape, f"{what}: shape {got.shape} != {ref.shape}"
    np.testing.assert_allclose(got, ref, rtol=RTOL, atol=DIAG_ATOL, err_msg=what)


def state(est):
    s = {
        "coef_": np.array(est.coef_, copy=True),
        "intercept_": np.array(est.intercept_, copy=True),
        "covariance_": np.array(est.covariance_, copy=True),
        "n_updates_": int(est.n_updates_),
    }
    if hasattr(est, "n_mistakes_"):
        s["n_mistakes_"] = int(est.n_mistakes_)
    return s


def assert_identical(s1, s2, what=""):
    assert s1.keys() == s2.keys()
    for k in s1:
        a, b = s1[k], s2[k]
        if isinstance(a, np.ndarray):
            assert a.shape == b.shape, f"{what}: {k} shape {a.shape} vs {b.shape}"
            assert np.array_equal(a, b), (
                f"{what}: {k} differs, max |diff| {np.abs(a - b).max()}\n{a}\n{b}")
        else:
            assert a == b, f"{what}: {k} {a} != {b}"


def check_sparse_export(est):
    """sparsity_ is the fraction of exact zeros of coef_; sparse_coef_ is coef_ as CSR."""
    coef = np.atleast_2d(np.asarray(est.coef_))
    assert est.sparsity_ == pytest.approx(float(np.mean(coef == 0)), abs=0), (
        f"sparsity_ {est.sparsity_} vs fraction of zeros {np.mean(coef == 0)}")
    sc = est.sparse_coef_
    assert sp.issparse(sc) and sc.format == "csr", f"sparse_coef_ is {type(sc)}"
    assert sc.shape == coef.shape, f"sparse_coef_ shape {sc.shape} vs coef_ {coef.shape}"
    assert np.array_equal(sc.toarray(), coef), "sparse_coef_ != coef_"
    assert sc.nnz == np.count_nonzero(coef), (
        f"sparse_coef_ stores {sc.nnz} entries for {np.count_nonzero(coef)} non-zeros")


# =============================================================================================
# 1. Binary classifiers = the eager reference, round by round (dense and CSR input)
# =============================================================================================

BINARY_RULES = ("AROW", "SCW1", "CW", "NHERD")
STATS = {"streams": 0, "rounds": 0, "thresholds": 0, "zeroed": 0, "ambiguous": 0, "stopped": 0}


def run_binary(rule, params, a, fit_intercept, penalty, lam, penalize_intercept, X, y):
    n, d = X.shape
    Xs = sp.csr_matrix(X)
    ests = {
        "dense": make_classifier(rule, params, a, fit_intercept, penalty, lam, penalize_intercept),
        "csr": make_classifier(rule, params, a, fit_intercept, penalty, lam, penalize_intercept),
    }
    inputs = {"dense": X, "csr": Xs}
    for kind, est in ests.items():  # the model, with nothing learned (weight 0 skips the row)
        est.partial_fit(inputs[kind][:1], y[:1], classes=CLASSES, sample_weight=[0])
    ref = EagerL1Binary(rule, params, d, a, fit_intercept, penalty, lam, penalize_intercept)
    ctx = (f"[{rule} params={params} a={a} fit_intercept={fit_intercept} penalty={penalty} "
           f"alpha={lam} penalize_intercept={penalize_intercept} n={n} d={d}]")
    _note(ctx)
    counters = {k: (0, 0) for k in ests}
    for t in range(n):
        want = ref.decision(X[t])
        scale = ref.decision_scale(X[t])
        for kind, est in ests.items():
            got = est.decision_function(inputs[kind][t : t + 1])
            assert np.shape(got) == (1,)
            assert abs(got[0] - want) <= RTOL * scale, (
                f"{ctx} round {t} ({kind}): decision {got[0]!r} != reference {want!r} "
                f"(diff {got[0] - want:.3g}, atol {RTOL * scale:.3g})")
        for kind, est in ests.items():
            est.partial_fit(inputs[kind][t : t + 1], y[t : t + 1])
        nu, nm = ests["dense"].n_updates_, ests["dense"].n_mistakes_
        du, dm = nu - counters["dense"][0], nm - counters["dense"][1]
        assert du in (0, 1) and dm in (0, 1)
        try:
            rec = ref.learn(X[t], y[t], hint=(dm == 1, du == 1))
        except (FloatingPointError, ArithmeticError) as e:
            _note(f"reference overflow: {e}")
            reject()
        where = (f"{ctx} round {t}: x={X[t].tolist()} y={y[t]} m={rec['m']!r} v={rec['v']!r} "
                 f"updated={rec['updated']} alpha={rec['alpha']!r} eta={rec.get('eta')!r}")
        for kind, est in ests.items():
            got_counters = (est.n_updates_, est.n_mistakes_)
            assert got_counters == (ref.core.n_updates, ref.core.n_mistakes), (
                f"{where} ({kind}): (n_updates_, n_mistakes_) {got_counters} != reference "
                f"{(ref.core.n_updates, ref.core.n_mistakes)}")
            counters[kind] = got_counters
        if rec["ill_conditioned"]:
            _note(f"ill-conditioned round {t}: compared up to it")
            STATS["stopped"] += 1
            break
        cscale = ref.coef_scale()
        for kind, est in ests.items():
            assert_close(np.asarray(est.coef_)[0], ref.coef, cscale, f"{where} ({kind}) coef_")
            assert_close(np.asarray(est.intercept_), [ref.intercept], cscale,
                         f"{where} ({kind}) intercept_")
            assert_variances_close(est.covariance_, ref.variances, f"{where} ({kind}) covariance_")
        STATS["rounds"] += 1
    STATS["streams"] += 1
    STATS["thresholds"] += ref.n_thresholds
    STATS["zeroed"] += ref.n_zeroed
    STATS["ambiguous"] += ref.core.n_ambiguous
    if ref.core.ill_conditioned_at is None:
        # the end: the whole stream scored by the final model, and the fitted attributes
        for kind, est in ests.items():
            scale = max(ref.decision_scale(X[t]) for t in range(n))
            want = np.array([ref.decision(X[t]) for t in range(n)])
            assert_close(est.decision_function(inputs[kind]), want, scale,
                         f"{ctx} ({kind}) final decision_function")
            assert np.asarray(est.coef_).shape == (1, d)
            assert np.asarray(est.covariance_).shape == (d,)
            check_sparse_export(est)
    return ests, ref


@pytest.mark.parametrize("fit_intercept", [False, True], ids=["no-intercept", "intercept"])
@pytest.mark.parametrize("rule", BINARY_RULES)
@SETTINGS
@given(data=st.data())
def test_binary_matches_eager_reference(rule, fit_intercept, data):
    X, y = data.draw(sparse_streams(), label="stream")
    params = data.draw(hyper_params(rule), label="params")
    a = data.draw(prior_variance(), label="a")
    penalty = data.draw(st.sampled_from(PENALTIES), label="penalty")
    lam = data.draw(_alphas, label="alpha")
    penalize_intercept = fit_intercept and data.draw(st.booleans(), label="penalize_intercept")
    run_binary(rule, params, a, fit_intercept, penalty, lam, penalize_intercept, X, y)


def test_reference_run_exercised_the_threshold():
    """The hypothesis runs above are only meaningful if the thresholds actually zeroed weights
    (and did not stop at once); checked on the statistics they gathered."""
    if STATS["streams"] == 0:
        pytest.skip("run together with test_binary_matches_eager_reference")
    assert STATS["thresholds"] > 10 * STATS["streams"] // 4, STATS
    assert STATS["zeroed"] > STATS["streams"], STATS
    assert STATS["stopped"] <= STATS["streams"] // 4, STATS


@pytest.mark.parametrize("penalty", PENALTIES)
@pytest.mark.parametrize("rule", BINARY_RULES)
def test_binary_fixed_stream_with_heavy_penalty(rule, penalty):
    """A deterministic stream long enough for weights to be zeroed, revived and zeroed again
    (lazy catch-up across many rounds), with and without a penalised bias."""
    rng = np.random.default_rng(7)
    n, d = 200, 30
    X, _ = _rows(rng, n, d, 0.15, "tf", 1.0, 0.05, 0.1)
    w = rng.normal(size=d) * (rng.random(d) < 0.3)
    y = np.where(X @ w + 0.2 * rng.normal(size=n) >= 0, 1, -1)
    lam = {"l1": 0.5, "l1-uniform": 0.01}[penalty]  # both zero weights time and again
    for fit_intercept, penalize_intercept in [(False, False), (True, False), (True, True)]:
        ests, ref = run_binary(rule, {}, 1.0, fit_intercept, penalty, lam, penalize_intercept,
                               X, y)
        assert ref.n_zeroed > 0
        assert ref.core.ill_conditioned_at is None


# =============================================================================================
# 2. AROW regression = the eager reference
# =============================================================================================


def run_regressor(r, a, fit_intercept, penalty, lam, penalize_intercept, X, y):
    n, d = X.shape
    Xs = sp.csr_matrix(X)
    inputs = {"dense": X, "csr": Xs}
    ests = {k: cwrs.AROWRegressor(r=r, a=a, covariance="diag", fit_intercept=fit_intercept,
                                  penalty=penalty, alpha=lam,
                                  penalize_intercept=penalize_intercept) for k in inputs}
    for kind, est in ests.items():
        est.partial_fit(inputs[kind][:1], y[:1], sample_weight=[0])
    ref = EagerL1Regressor(d, r, a, fit_intercept, penalty, lam, penalize_intercept)
    ctx = (f"[AROWRegressor r={r} a={a} fit_intercept={fit_intercept} penalty={penalty} "
           f"alpha={lam} penalize_intercept={penalize_intercept} n={n} d={d}]")
    _note(ctx)
    for t in range(n):
        xa = np.abs(ref.augment(X[t]))
        scale = max(1.0, math.fsum(((np.abs(ref.mu) + ref.moved) * xa).tolist()))
        want = ref.predict(X[t])
        for kind, est in ests.items():
            got = est.predict(inputs[kind][t : t + 1])[0]
            assert abs(got - want) <= RTOL * scale, (
                f"{ctx} round {t} ({kind}): prediction {got!r} != reference {want!r}")
            est.partial_fit(inputs[kind][t : t + 1], y[t : t + 1])
        ref.learn(X[t], float(y[t]))
        where = f"{ctx} round {t}: x={X[t].tolist()} y={y[t]!r}"
        cscale = float((np.abs(ref.mu) + ref.moved).max())
        for kind, est in ests.items():
            assert est.n_updates_ == ref.n_updates, f"{where} ({kind}) n_updates_"
            assert_close(est.coef_, ref.mu[:d], cscale, f"{where} ({kind}) coef_")
            assert_close(est.intercept_, [ref.mu[d] if fit_intercept else 0.0], cscale,
                         f"{where} ({kind}) intercept_")
            assert_variances_close(est.covariance_, ref.S[:d], f"{where} ({kind}) covariance_")
    for kind, est in ests.items():
        check_sparse_export(est)
    return ests, ref


@pytest.mark.parametrize("fit_intercept", [False, True], ids=["no-intercept", "intercept"])
@SETTINGS
@given(data=st.data())
def test_arow_regressor_matches_eager_reference(fit_intercept, data):
    X, y = data.draw(sparse_regression_streams(), label="stream")
    r = data.draw(_log10, label="r")
    a = data.draw(prior_variance(), label="a")
    penalty = data.draw(st.sampled_from(PENALTIES), label="penalty")
    lam = data.draw(_alphas, label="alpha")
    penalize_intercept = fit_intercept and data.draw(st.booleans(), label="penalize_intercept")
    run_regressor(r, a, fit_intercept, penalty, lam, penalize_intercept, X, y)


# =============================================================================================
# 3. Multiclass AROW (diag), max-score and ovr = the eager reference
# =============================================================================================


def run_multiclass(strategy, r, a, fit_intercept, penalty, lam, penalize_intercept, X, y, K):
    n, d = X.shape
    classes = np.arange(K)
    est = cwrs.AROW(r=r, a=a, covariance="diag", multi_class=strategy,
                    fit_intercept=fit_intercept, penalty=penalty, alpha=lam,
                    penalize_intercept=penalize_intercept)
    est.partial_fit(X[:1], y[:1], classes=classes, sample_weight=[0])
    ref = EagerL1MulticlassAROW(strategy, r, a, K, d, fit_intercept, penalty, lam,
                                penalize_intercept)
    ctx = (f"[AROW {strategy} r={r} a={a} fit_intercept={fit_intercept} penalty={penalty} "
           f"alpha={lam} penalize_intercept={penalize_intercept} K={K} n={n} d={d}]")
    _note(ctx)
    prev = state(est)
    for t in range(n):
        x = X[t]
        dec = est.decision_function(x[None, :])[0]
        assert_close(dec, ref.scores(x), ref.decision_scale(x),
                     f"{ctx} round {t}: decision_function before learning")
        est.partial_fit(x[None, :], y[t : t + 1])
        cur = state(est)
        changed = {k for k in range(K)
                   if not (np.array_equal(cur["coef_"][k], prev["coef_"][k])
                           and np.array_equal(cur["covariance_"][k], prev["covariance_"][k])
                           and cur["intercept_"][k] == prev["intercept_"][k])}
        ref.learn(x, int(y[t]), dec, cur["n_mistakes_"] > prev["n_mistakes_"],
                  cur["n_updates_"] > prev["n_updates_"], changed)
        where = f"{ctx} round {t} (y={y[t]}, x={x.tolist()})"
        assert cur["n_mistakes_"] == ref.n_mistakes, f"{where}: n_mistakes_"
        assert cur["n_updates_"] == ref.n_updates, f"{where}: n_updates_"
        scale = ref.coef_scale()
        assert_close(cur["coef_"], ref.mu[:, :d], scale, f"{where}: coef_")
        want_b = ref.mu[:, d] if fit_intercept else np.zeros(K)
        assert_close(cur["intercept_"], want_b, scale, f"{where}: intercept_")
        assert_variances_close(cur["covariance_"], ref.S[:, :d], f"{where}: covariance_")
        prev = cur
    check_sparse_export(est)
    Xs = sp.csr_matrix(X)
    want = np.array([ref.scores(X[t]) for t in range(n)])
    scale = max(ref.decision_scale(X[t]) for t in range(n))
    assert_close(est.decision_function(Xs), want, scale, f"{ctx} final decision_function (CSR)")
    return est, ref


@pytest.mark.parametrize("strategy", ["max-score", "ovr"])
@settings(max_examples=examples(15), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_multiclass_arow_matches_eager_reference(strategy, data):
    X, y, K = data.draw(multiclass_streams(), label="stream")
    r = data.draw(_log10, label="r")
    a = data.draw(prior_variance(), label="a")
    penalty = data.draw(st.sampled_from(PENALTIES), label="penalty")
    lam = data.draw(_alphas, label="alpha")
    fit_intercept = data.draw(st.booleans(), label="fit_intercept")
    penalize_intercept = fit_intercept and data.draw(st.booleans(), label="penalize_intercept")
    run_multiclass(strategy, r, a, fit_intercept, penalty, lam, penalize_intercept, X, y, K)


@pytest.mark.parametrize("strategy", ["max-score", "ovr"])
def test_multiclass_csr_stream_matches_reference(strategy):
    """Learning from CSR rows (the lazy path) in chunks, on a longer stream."""
    rng = np.random.default_rng(3)
    K, n, d = 3, 150, 25
    X, _ = _rows(rng, n, d, 0.15, "binary", 1.0, 0.05, 0.1)
    W = rng.normal(size=(K, d)) * (rng.random((K, d)) < 0.4)
    y = np.argmax(X @ W.T + 0.3 * rng.normal(size=(n, K)), axis=1)
    for penalty in PENALTIES:
        est_rows, ref = run_multiclass(strategy, 1.0, 1.0, True, penalty, 0.05, True, X, y, K)
        est = cwrs.AROW(covariance="diag", multi_class=strategy, penalty=penalty, alpha=0.05,
                        penalize_intercept=True)
        Xs = sp.csr_matrix(X)
        for lo in range(0, n, 37):
            est.partial_fit(Xs[lo : lo + 37], y[lo : lo + 37], classes=np.arange(K))
        assert_close(est.coef_, ref.mu[:, :d], ref.coef_scale(), f"{strategy}/{penalty} coef_")
        assert_close(est.intercept_, ref.mu[:, d], ref.coef_scale(), "intercept_")
        assert_variances_close(est.covariance_, ref.S[:, :d], "covariance_")
        assert est.n_mistakes_ == ref.n_mistakes and est.n_updates_ == ref.n_updates
        assert np.count_nonzero(ref.mu[:, :d] == 0) > 0


# =============================================================================================
# 4. alpha = 0 is the unpenalised learner, bit for bit
# =============================================================================================


def _random_stream(seed=11, n=120, d=20):
    rng = np.random.default_rng(seed)
    X, _ = _rows(rng, n, d, 0.3, "gauss", 1.0, 0.05, 0.1)
    w = rng.normal(size=d)
    y = np.where(X @ w + 0.3 * rng.normal(size=n) >= 0, 1, -1)
    return X, y


@pytest.mark.parametrize("penalty", PENALTIES)
@pytest.mark.parametrize("rule", SECOND_ORDER)
def test_alpha_zero_is_identical_to_no_penalty(rule, penalty):
    X, y = _random_stream()
    Xs = sp.csr_matrix(X)
    for fit_intercept in (False, True):
        base = getattr(cwrs, rule)(covariance="diag", fit_intercept=fit_intercept, shuffle=False)
        pen = make_classifier(rule, {}, 1.0, fit_intercept, penalty, 0.0, fit_intercept)
        for data in (X, Xs):
            s0 = state(base.fit(data, y))
            s1 = state(pen.fit(data, y))
            assert_identical(s0, s1, f"{rule} {penalty} fit_intercept={fit_intercept}")
            assert np.array_equal(base.decision_function(data), pen.decision_function(data))
        # multiclass (3 classes), both strategies
        y3 = np.digitize(X @ np.linspace(-1, 1, X.shape[1]), [-0.5, 0.5])
        for strategy in ("max-score", "ovr"):
            b = getattr(cwrs, rule)(covariance="diag", multi_class=strategy,
                                    fit_intercept=fit_intercept, shuffle=False).fit(Xs, y3)
            p = make_classifier(rule, {}, 1.0, fit_intercept, penalty, 0.0, fit_intercept,
                                multi_class=strategy).fit(Xs, y3)
            assert_identical(state(b), state(p), f"{rule} {strategy} {penalty}")


@pytest.mark.parametrize("penalty", PENALTIES)
def test_alpha_zero_regressor_is_identical_to_no_penalty(penalty):
    X, _ = _random_stream()
    y = X @ np.linspace(-1, 1, X.shape[1]) + 0.5
    for fit_intercept in (False, True):
        base = cwrs.AROWRegressor(fit_intercept=fit_intercept, shuffle=False).fit(X, y)
        pen = cwrs.AROWRegressor(fit_intercept=fit_intercept, penalty=penalty, alpha=0.0,
                                 penalize_intercept=fit_intercept,
                                 shuffle=False).fit(sp.csr_matrix(X), y)
        assert_identical(state(base), state(pen), f"regressor {penalty}")
        assert np.array_equal(base.predict(X), pen.predict(X))


# =============================================================================================
# 5. Sparsity grows with alpha on a1a and w1a
# =============================================================================================


def _dataset(name):
    return np.load(shared_data(f"{name}.X.npy")), np.load(shared_data(f"{name}.y.npy"))


ALPHA_GRID = (0.0, 1e-3, 1e-2, 1e-1, 1.0)


@pytest.mark.parametrize("penalty", PENALTIES)
@pytest.mark.parametrize("rule", ["AROW", "SCW1"])
@pytest.mark.parametrize("name", ["a1a", "w1a"])
def test_sparsity_grows_with_alpha(name, rule, penalty):
    X, y = _dataset(name)
    Xs = sp.csr_matrix(X)
    base = getattr(cwrs, rule)(covariance="diag", shuffle=False).fit(Xs, y)
    unpenalised = float(np.mean(np.asarray(base.coef_) == 0))
    sparsity, errors = [], []
    for lam in ALPHA_GRID:
        est = make_classifier(rule, {}, 1.0, True, penalty, lam, False).fit(Xs, y)
        check_sparse_export(est)
        dense = make_classifier(rule, {}, 1.0, True, penalty, lam, False).fit(X, y)
        assert_close(dense.coef_, est.coef_, float(np.abs(est.coef_).max()),
                     f"{name} {rule} {penalty} alpha={lam}: dense vs CSR coef_")
        sparsity.append(est.sparsity_)
        errors.append(est.n_mistakes_ / X.shape[0])
    msg = f"{name} {rule} {penalty}: alpha {ALPHA_GRID} -> sparsity {sparsity}, error {errors}"
    # alpha = 0: the zeros of the unpenalised model (features never seen or never updated)
    assert sparsity[0] == unpenalised, msg
    assert all(s2 >= s1 for s1, s2 in zip(sparsity, sparsity[1:])), msg
    assert sparsity[-1] >= sparsity[0] + 0.3 * (1.0 - sparsity[0]), msg
    assert sparsity[2] > sparsity[0], msg


# =============================================================================================
# 6. The intercept
# =============================================================================================


@pytest.mark.parametrize("penalty", PENALTIES)
@pytest.mark.parametrize("rule", BINARY_RULES)
def test_penalize_intercept(rule, penalty):
    """penalize_intercept=False: the bias is never thresholded (it equals the reference's
    unthresholded bias); True: it is thresholded like every weight."""
    rng = np.random.default_rng(5)
    n, d = 60, 8
    X, _ = _rows(rng, n, d, 0.2, "binary", 1.0, 0.3, 0.0)
    y = np.where(rng.random(n) < 0.8, 1, -1)  # imbalanced: a clearly positive bias
    lam = {"l1": 0.5, "l1-uniform": 0.01}[penalty]
    intercepts, refs = {}, {}
    for pen_b in (False, True):
        # run_binary compares intercept_ with the reference's bias every round
        ests, refs[pen_b] = run_binary(rule, {}, 1.0, True, penalty, lam, pen_b, X, y)
        intercepts[pen_b] = float(np.asarray(ests["dense"].intercept_)[0])
    # the two settings really differ (so matching each reference tells them apart)
    assert abs(refs[False].intercept - refs[True].intercept) > 1e-6, refs
    assert abs(intercepts[False] - intercepts[True]) > 1e-6, intercepts


def test_penalize_intercept_worked_example():
    """AROW (r = a = 1) on one all-zero row with label +1 and an intercept, alpha = 1:
    m = 0, v = 1, alpha_t = 1/2, Sigma_b -> 1/2, eta = 1/(2(1 + 1)) = 1/4; the bias is 1/2
    unpenalised, 1/2 - (1/4)(1)(1/2) = 3/8 with "l1", 1/2 - 1/4 = 1/4 with "l1-uniform"."""
    X, y = np.zeros((1, 3)), np.array([1])
    for penalty, want in [("l1", 0.375), ("l1-uniform", 0.25)]:
        for pen_b, expect in [(False, 0.5), (True, want)]:
            est = cwrs.AROW(covariance="diag", penalty=penalty, alpha=1.0,
                            penalize_intercept=pen_b)
            est.partial_fit(X, y, classes=CLASSES)
            assert est.intercept_[0] == expect, (penalty, pen_b, est.intercept_)
            assert np.array_equal(est.coef_, np.zeros((1, 3)))
            assert est.covariance_.tolist() == [1.0, 1.0, 1.0]


def test_worked_example_coordinate_dependent():
    """Two rows by hand (AROW, r = a = 1, no intercept, alpha = 0.2, "l1"):
    row 1: x = (1, 0), y = +1: m = 0, v = 1, alpha_1 = 1/2, mu = (1/2, 0), Sigma = (1/2, 1),
           eta = 1/4, tau = (0.025, 0.05): mu = (0.475, 0).
    row 2: x = (1, 1), y = -1: m = -0.475, v = 3/2, alpha_2 = 1.475/2.5 = 0.59,
           mu = (0.475 - 0.59/2, -0.59) = (0.18, -0.59), Sigma = (1/3, 1/2),
           eta = 1/(2*2.5) = 0.2, tau = (0.04/3, 0.02): mu = (0.18 - 0.04/3, -0.57)."""
    est = cwrs.AROW(covariance="diag", fit_intercept=False, penalty="l1", alpha=0.2)
    est.partial_fit(np.array([[1.0, 0.0]]), [1], classes=CLASSES)
    np.testing.assert_allclose(est.coef_[0], [0.475, 0.0], rtol=1e-14, atol=0)
    est.partial_fit(np.array([[1.0, 1.0]]), [-1])
    np.testing.assert_allclose(est.coef_[0], [0.18 - 0.04 / 3, -0.57], rtol=1e-14, atol=0)
    np.testing.assert_allclose(est.covariance_, [1 / 3, 1 / 2], rtol=1e-15)
    # a third row that does not update (m >= 1) applies no threshold
    before = est.coef_.copy()
    est.partial_fit(np.array([[0.0, -10.0]]), [1])
    assert est.n_updates_ == 2
    assert np.array_equal(est.coef_, before)


# =============================================================================================
# 7. Batch = row by row, pickle mid-stream (the lazy state must travel)
# =============================================================================================


@pytest.mark.parametrize("penalty", PENALTIES)
@pytest.mark.parametrize("rule", BINARY_RULES)
def test_batch_rows_pickle_identical(rule, penalty):
    X, y = _random_stream(seed=21, n=150, d=25)
    Xs = sp.csr_matrix(X)

    lam = {"l1": 0.5, "l1-uniform": 0.03}[penalty]

    def fresh():
        return make_classifier(rule, {}, 1.0, True, penalty, lam, False)

    batch = fresh().fit(Xs, y)
    rows = fresh()
    for t in range(X.shape[0]):
        rows.partial_fit(Xs[t], y[t : t + 1], classes=CLASSES)
        if t % 17 == 0:
            rows.coef_, rows.decision_function(Xs[:3])  # reading must not perturb the state
    assert_identical(state(batch), state(rows), f"{rule} {penalty}: batch vs rows")
    half = fresh().partial_fit(Xs[:75], y[:75], classes=CLASSES)
    clone = pickle.loads(pickle.dumps(half))
    assert_identical(state(half), state(clone), "pickle round trip")
    half.partial_fit(Xs[75:], y[75:])
    clone.partial_fit(Xs[75:], y[75:])
    assert_identical(state(half), state(clone), f"{rule} {penalty}: continued after pickle")
    assert_identical(state(half), state(batch), f"{rule} {penalty}: two chunks vs one")
    assert np.array_equal(half.decision_function(Xs), clone.decision_function(Xs))
    assert half.sparsity_ > 0


# =============================================================================================
# 8. Parameter validation
# =============================================================================================

X_SMALL = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, -1.0]])
Y_SMALL = np.array([1, -1, 1, -1])


@pytest.mark.parametrize("make", [
    lambda: cwrs.AROW(covariance="full", penalty="l1", alpha=0.01),
    lambda: cwrs.SCW1(covariance="full", penalty="l1-uniform"),
    lambda: cwrs.AROWRegressor(covariance="full", penalty="l1"),
    lambda: cwrs.AROW(kernel="rbf", penalty="l1"),
    lambda: cwrs.AROW(kernel="linear", penalty="l1-uniform"),
    lambda: cwrs.AROW(penalty="l2"),
    lambda: cwrs.AROW(penalty="L1"),
    lambda: cwrs.AROW(penalty="l1", alpha=-1e-3),
    lambda: cwrs.AROW(penalty="l1-uniform", alpha=-1.0),
    lambda: cwrs.AROW(penalty="l1", alpha=float("nan")),
    lambda: cwrs.AROW(penalty="l1", alpha=float("inf")),
    lambda: cwrs.AROWRegressor(penalty="l1", alpha=-1.0),
    lambda: cwrs.AROWRegressor(penalty="lasso"),
], ids=["full", "full-uniform", "regressor-full", "rbf-kernel", "linear-kernel", "l2", "L1", "negative-alpha", "negative-alpha-uniform",
        "nan-alpha", "inf-alpha", "regressor-negative-alpha", "regressor-unknown"])
def test_bad_combinations_raise_value_error(make):
    with pytest.raises(ValueError):
        est = make()
        if type(est).__name__.endswith("Regressor"):
            est.fit(X_SMALL, Y_SMALL.astype(float))
        else:
            est.fit(X_SMALL, Y_SMALL)


@pytest.mark.parametrize("cls", [cwrs.Perceptron, cwrs.PA, cwrs.PA1, cwrs.PARegressor])
def test_first_order_learners_have_no_penalty(cls):
    # Σ = I fixed: the coordinate-dependent threshold has nothing to depend on, so these
    # learners do not take the parameters at all.
    assert "penalty" not in cls().get_params()
    with pytest.raises(TypeError):
        cls(penalty="l1")


def test_bad_combination_leaves_no_model():
    est = cwrs.AROW(covariance="full", penalty="l1")
    with pytest.raises(ValueError):
        est.partial_fit(X_SMALL, Y_SMALL, classes=CLASSES)
    assert not est.__sklearn_is_fitted__()


def test_params_round_trip():
    est = cwrs.AROW(covariance="diag", penalty="l1", alpha=0.5, penalize_intercept=True)
    p = est.get_params()
    assert (p["penalty"], p["alpha"], p["penalize_intercept"]) == ("l1", 0.5, True)
    default = cwrs.SCW1().get_params()
    assert (default["penalty"], default["alpha"], default["penalize_intercept"]) == (
        None, 1e-4, False)
    # no penalty is fine with every covariance and a kernel
    cwrs.AROW(covariance="full").fit(X_SMALL, Y_SMALL)
    cwrs.Perceptron().fit(X_SMALL, Y_SMALL)
