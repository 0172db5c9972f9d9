"""cwrs regressors: AROW regression = recursive least squares (closed form), PA/PA-I/PA-II
ε-insensitive regression (Crammer et al., JMLR 2006) and AROW-diag against a NumPy reference,
tracking a drifting target, and bad input.

Reference update (residual e = y − μ·x, v = xᵀΣx):
  AROW:  μ += e/(v + r)·Σx,  Σ⁻¹ += x xᵀ/r   (full: Sherman–Morrison; diag: Σ_j /= 1 + Σ_j x_j²/r)
  PA:    ℓ = max(0, |e| − ε);  τ = ℓ/‖x‖² (PA),  min(C, ℓ/‖x‖²) (PA-I),  ℓ/(‖x‖² + 1/(2C)) (PA-II);
         μ += sign(e)·τ·x
With covariance="full" AROW after any prefix is the ridge solution μ = (XᵀX + (r/a) I)⁻¹ Xᵀy
with covariance (XᵀX/r + I/a)⁻¹ (Bayesian linear regression, prior N(0, aI), noise variance r).
"""

from __future__ import annotations

import math
import os
import pickle
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import cwrs
from _cwtest_util import assert_states_identical, model_state
from reference import exact_inverse

RTOL = 1e-9
AMBIG = 1e-9  # width of the band (relative to the error scale) where a decision is ambiguous
N_EXAMPLES = int(os.environ.get("CWRS_TEST_EXAMPLES", "40"))
SETTINGS = settings(max_examples=N_EXAMPLES, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

REGRESSOR_FORMS = [("AROWRegressor", "diag"), ("AROWRegressor", "full"),
                   ("PARegressor", None), ("PA1Regressor", None), ("PA2Regressor", None)]
REGRESSOR_IDS = [f"{n}-{c or 'identity'}" for n, c in REGRESSOR_FORMS]


def make(name, cov=None, **kw):
    if cov is not None:
        kw["covariance"] = cov
    return getattr(cwrs, name)(**kw)


def max_rel_err(got, want):
    """max |got − want| / max|want| (scale-aware relative error)."""
    got, want = np.asarray(got, float), np.asarray(want, float)
    return float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-300))


# =============================================================================================
# 1. AROW regression (full) = ridge regression / recursive least squares
# =============================================================================================


def exact_ridge(X, y, r, a):
    """μ = (XᵀX + (r/a) I)⁻¹ Xᵀy and Σ = (XᵀX/r + I/a)⁻¹, solved exactly over the rationals
    (the float inputs are exact rationals), then rounded."""
    n, d = X.shape
    Xf = [[Fraction(float(v)) for v in row] for row in X]
    yf = [Fraction(float(v)) for v in y]
    rf, af = Fraction(float(r)), Fraction(float(a))
    G = [[sum(Xf[t][i] * Xf[t][j] for t in range(n)) for j in range(d)] for i in range(d)]
    b = [sum(Xf[t][i] * yf[t] for t in range(n)) for i in range(d)]
    P = [[G[i][j] / rf + (1 / af if i == j else 0) for j in range(d)] for i in range(d)]
    Sigma = exact_inverse(P)
    # μ = Σ Xᵀy / r  (= (XᵀX + (r/a) I)⁻¹ Xᵀy)
    mu = [sum(Sigma[i][j] * b[j] for j in range(d)) / rf for i in range(d)]
    return np.array([float(m) for m in mu]), np.array([[float(s) for s in row] for row in Sigma])


RIDGE_CASES = [(1.0, 1.0), (0.1, 10.0), (10.0, 0.1), (0.5, 2.0), (3.0, 3.0)]


def ridge_agreement(r, a, fit_intercept):
    """Learns a random stream with AROWRegressor(covariance="full") in chunks and returns the
    largest relative errors, over the prefixes, of coef_ (and intercept_) and covariance_ against
    the exact ridge solution, and of return_std against √(xᵀΣx + r) on fresh rows."""
    rng = np.random.default_rng(int(r * 100 + a * 10 + fit_intercept))
    n, d = 40, 4
    X = rng.normal(size=(n, d)) * rng.choice([0.3, 1.0, 3.0], size=d)
    X[rng.random((n, d)) < 0.2] = 0.0
    w = rng.normal(size=d)
    y = X @ w + 0.5 + 0.3 * rng.normal(size=n)
    Z = np.hstack([X, np.ones((n, 1))]) if fit_intercept else X
    est = cwrs.AROWRegressor(r=r, a=a, covariance="full", fit_intercept=fit_intercept)
    errors = {"coef": 0.0, "covariance": 0.0}
    done = 0
    for t in (1, 2, 5, 17, n):  # in chunks: the ridge solution holds after every prefix
        est.partial_fit(X[done:t], y[done:t])
        done = t
        mu, Sigma = exact_ridge(Z[:t], y[:t], r, a)
        coef = np.append(est.coef_, est.intercept_) if fit_intercept else est.coef_
        errors["coef"] = max(errors["coef"], max_rel_err(coef, mu))
        errors["covariance"] = max(errors["covariance"],
                                   max_rel_err(est.covariance_, Sigma[:d, :d]))
        if not fit_intercept:
            assert np.array_equal(est.intercept_, [0.0])
    # Rows that are all zero carry no information (and with no intercept change nothing).
    assert est.n_updates_ == (n if fit_intercept else int((np.abs(X).sum(axis=1) > 0).sum()))
    # Predictive mean and standard deviation √(xᵀΣx + r) on fresh rows.
    Xq = rng.normal(size=(7, d))
    Zq = np.hstack([Xq, np.ones((7, 1))]) if fit_intercept else Xq
    mean, std = est.predict(Xq, return_std=True)
    errors["std"] = max_rel_err(std, np.sqrt(np.einsum("ij,jk,ik->i", Zq, Sigma, Zq) + r))
    errors["mean"] = max_rel_err(mean, Zq @ mu)
    assert np.array_equal(est.predict(Xq), mean)
    # fit() = the same rows from scratch (in the same order: bit for bit).
    refit = cwrs.AROWRegressor(
        r=r, a=a, covariance="full", fit_intercept=fit_intercept, shuffle=False
    ).fit(X, y)
    assert_states_identical(model_state(refit), model_state(est), "fit")
    return errors


@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("r,a", RIDGE_CASES)
def test_arow_full_is_ridge_regression(r, a, fit_intercept):
    errors = ridge_agreement(r, a, fit_intercept)
    assert max(errors.values()) <= RTOL, errors


def test_rls_agreement_report():
    """The largest relative error against the exact ridge solution over all cases (printed)."""
    worst = {}
    for r, a in RIDGE_CASES:
        for fit_intercept in (False, True):
            for k, v in ridge_agreement(r, a, fit_intercept).items():
                worst[k] = max(worst.get(k, 0.0), v)
    print("\nAROW full vs exact ridge, max relative error: " +
          ", ".join(f"{k} {v:.3g}" for k, v in worst.items()))
    assert max(worst.values()) <= RTOL


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_arow_diag_return_std(fit_intercept):
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(30, 5)), rng.normal(size=30)
    r = 0.7
    est = cwrs.AROWRegressor(r=r, a=2.0, fit_intercept=fit_intercept).fit(X, y)
    Xq = rng.normal(size=(6, 5))
    mean, std = est.predict(Xq, return_std=True)
    var = (Xq**2) @ est.covariance_
    if fit_intercept:
        # the bias variance is not in covariance_: recover it from a row of zeros
        _, std0 = est.predict(np.zeros((1, 5)), return_std=True)
        var = var + (std0[0] ** 2 - r)
    np.testing.assert_allclose(std, np.sqrt(var + r), rtol=1e-12)
    np.testing.assert_allclose(mean, Xq @ est.coef_ + est.intercept_[0], rtol=1e-12, atol=1e-12)


# =============================================================================================
# 2. NumPy reference, round by round (PA, PA-I, PA-II; AROW diag and full)
# =============================================================================================


class RefRegressor:
    def __init__(self, name, cov, d, epsilon=0.1, C=1.0, r=1.0, a=1.0):
        self.name, self.cov, self.d = name, cov, d
        self.epsilon, self.C, self.r, self.a = epsilon, C, r, a
        self.mu = np.zeros(d)
        self.moved = np.zeros(d)
        self.S = a * np.eye(d) if cov == "full" else (np.full(d, a) if cov == "diag" else None)
        self.n_updates = 0
        self.n_ambiguous = 0

    def predict(self, x):
        return math.fsum((self.mu * x).tolist())

    def learn(self, x, y, hint=None):
        """One round; `hint` (did cwrs update?) is followed only when |e| is within rounding
        distance of ε."""
        x = np.asarray(x, float)
        if not np.any(x):
            return False
        e = y - self.predict(x)
        n2 = math.fsum((x * x).tolist())
        if self.name == "AROWRegressor":
            if self.cov == "full":
                sx = self.S @ x
            else:
                sx = self.S * x
            v = float(math.fsum((x * sx).tolist()))
            alpha = e / (v + self.r)
            delta = alpha * sx
            if self.cov == "full":
                self.S = self.S - np.outer(sx, sx) / (self.r + v)
            else:
                nz = x != 0
                self.S[nz] = self.S[nz] / (1.0 + self.S[nz] * x[nz] ** 2 / self.r)
        else:
            loss = abs(e) - self.epsilon
            e_err = AMBIG * (abs(y) + float((np.abs(self.mu) + self.moved) @ np.abs(x)))
            fires = loss > 0
            if abs(loss) <= e_err:
                self.n_ambiguous += 1
                if hint is not None:
                    fires = hint
            if not fires:
                return False
            loss = max(loss, 0.0)
            if self.name == "PARegressor":
                tau = loss / n2
            elif self.name == "PA1Regressor":
                tau = min(self.C, loss / n2)
            else:
                tau = loss / (n2 + 1.0 / (2.0 * self.C))
            delta = math.copysign(tau, e) * x
        self.mu = self.mu + delta
        self.moved = self.moved + np.abs(delta)
        self.n_updates += 1
        return True


@st.composite
def reg_streams(draw, max_n=40, max_d=6):
    """(X, y): gaussian rows with exact zeros, all-zero rows and repeated rows (same or new
    target); targets a noisy linear function (or pure noise)."""
    n = draw(st.integers(1, max_n))
    d = draw(st.integers(1, max_d))
    seed = draw(st.integers(0, 2**32 - 1))
    p_zero = draw(st.sampled_from([0.0, 0.2, 0.5]))
    p_zero_row = draw(st.sampled_from([0.0, 0.1, 0.3]))
    p_repeat = draw(st.sampled_from([0.0, 0.2, 0.5]))
    scale = draw(st.sampled_from([1.0, 1.0, 0.1, 10.0]))
    noise = draw(st.sampled_from([0.0, 0.1, 1.0]))
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * scale
    X[rng.random((n, d)) < p_zero] = 0.0
    X[rng.random(n) < p_zero_row] = 0.0
    w = rng.normal(size=d)
    y = X @ w + noise * rng.normal(size=n)
    for t in range(1, n):
        if rng.random() < p_repeat:
            src = int(rng.integers(0, t))
            X[t] = X[src]
            y[t] = y[src] if rng.random() < 0.5 else X[t] @ w + noise * rng.normal()
    return X, y


_log10 = st.floats(min_value=-1.0, max_value=1.0).map(lambda e: float(10.0**e))


@pytest.mark.parametrize("name,cov", REGRESSOR_FORMS, ids=REGRESSOR_IDS)
def test_matches_reference(name, cov):
    @SETTINGS
    @given(data=reg_streams(), C=_log10, r=_log10, a=_log10,
           epsilon=st.sampled_from([0.0, 0.01, 0.1, 0.5]))
    def check(data, C, r, a, epsilon):
        X, y = data
        n, d = X.shape
        if name == "AROWRegressor":
            kw, ref = dict(r=r, a=a), RefRegressor(name, cov, d, r=r, a=a)
        elif name == "PARegressor":
            kw, ref = dict(epsilon=epsilon), RefRegressor(name, cov, d, epsilon=epsilon)
        else:
            kw, ref = dict(epsilon=epsilon, C=C), RefRegressor(name, cov, d, epsilon=epsilon, C=C)
        note(f"{kw}")
        est = make(name, cov, fit_intercept=False, **kw)
        est.partial_fit(X[:1], y[:1], sample_weight=[0])  # the model, with nothing learned
        for t in range(n):
            x = X[t]
            what = f"round {t} (x={x.tolist()}, y={y[t]!r})"
            scale = max(1.0, float((np.abs(ref.mu) + ref.moved) @ np.abs(x)))
            got = est.predict(x[None, :])[0]
            assert abs(got - ref.predict(x)) <= RTOL * scale, f"{what}: prediction {got} vs " \
                f"{ref.predict(x)}"
            before = est.n_updates_
            est.partial_fit(x[None, :], y[t : t + 1])
            ref.learn(x, float(y[t]), hint=est.n_updates_ > before)
            assert est.n_updates_ == ref.n_updates, f"{what}: n_updates_"
            mu_scale = max(1.0, float(np.abs(ref.mu).max()))
            np.testing.assert_allclose(est.coef_, ref.mu, rtol=RTOL, atol=RTOL * mu_scale,
                                       err_msg=f"{what}: coef_")
            if cov == "full":
                np.testing.assert_allclose(est.covariance_, ref.S, rtol=RTOL, atol=RTOL * a,
                                           err_msg=f"{what}: covariance_")
            elif cov == "diag":
                np.testing.assert_allclose(est.covariance_, ref.S, rtol=RTOL, atol=1e-300,
                                           err_msg=f"{what}: covariance_")
        assert np.array_equal(est.intercept_, [0.0])

    check()


@pytest.mark.parametrize("name,cov", REGRESSOR_FORMS, ids=REGRESSOR_IDS)
def test_batch_rows_csr_pickle(name, cov):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(50, 5))
    X[rng.random(X.shape) < 0.3] = 0.0
    X[7] = 0.0
    X[20] = X[3]
    y = X @ rng.normal(size=5) + 0.2 * rng.normal(size=50)
    batch = make(name, cov).partial_fit(X, y)
    rows = make(name, cov)
    for t in range(50):
        rows.partial_fit(X[t : t + 1], y[t : t + 1])
    assert_states_identical(model_state(rows), model_state(batch), "rows")
    assert_states_identical(model_state(make(name, cov, shuffle=False).fit(X, y)), model_state(batch), "fit")
    sparse = make(name, cov).partial_fit(sp.csr_matrix(X), y)
    assert_states_identical(model_state(sparse), model_state(batch), "CSR")
    assert np.array_equal(batch.predict(sp.csr_matrix(X)), batch.predict(X))
    clone = pickle.loads(pickle.dumps(batch))
    assert_states_identical(model_state(clone), model_state(batch), "pickle")
    clone.partial_fit(X[::-1], y[::-1])
    batch.partial_fit(X[::-1], y[::-1])
    assert_states_identical(model_state(clone), model_state(batch), "pickle, continued")
    # score is R²
    from sklearn.metrics import r2_score

    assert batch.score(X, y) == pytest.approx(r2_score(y, batch.predict(X)), rel=1e-12)


# =============================================================================================
# 3. A drifting target
# =============================================================================================

T, HALF, D, NOISE = 4000, 2000, 5, 0.1
WINDOW = 50


def progressive_squared_errors(est, X, y):
    """(prediction before learning − y)², row by row."""
    est.partial_fit(X[:1], y[:1], sample_weight=[0])
    err = np.empty(len(y))
    for t in range(len(y)):
        err[t] = (est.predict(X[t : t + 1])[0] - y[t]) ** 2
        est.partial_fit(X[t : t + 1], y[t : t + 1])
    return err


def drift_streams(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, D))
    w1, w2 = rng.normal(size=D), rng.normal(size=D)
    abrupt = np.where(np.arange(T)[:, None] < HALF, w1, w2)
    # Slow rotation: from the drift point on, w turns by π (in a random plane through w1)
    # over the rest of the stream, 0.09° per row.
    u = w1 / np.linalg.norm(w1)
    v = rng.normal(size=D)
    v -= (v @ u) * u
    v /= np.linalg.norm(v)
    angle = np.clip((np.arange(T) - HALF) / (T - HALF), 0, 1) * np.pi
    rotating = np.linalg.norm(w1) * (np.cos(angle)[:, None] * u + np.sin(angle)[:, None] * v)
    return {
        "abrupt": (X, (X * abrupt).sum(axis=1) + NOISE * rng.normal(size=T)),
        "rotating": (X, (X * rotating).sum(axis=1) + NOISE * rng.normal(size=T)),
    }


DRIFT_LEARNERS = {
    "PA": lambda: cwrs.PARegressor(),
    "PA1": lambda: cwrs.PA1Regressor(),
    "PA2": lambda: cwrs.PA2Regressor(),
    "AROW-diag": lambda: cwrs.AROWRegressor(),
    "AROW-full": lambda: cwrs.AROWRegressor(covariance="full"),
}


@pytest.fixture(scope="module")
def drift_results():
    out = {}
    for seed in (0, 1, 2):
        for kind, (X, y) in drift_streams(seed).items():
            for name, factory in DRIFT_LEARNERS.items():
                e = progressive_squared_errors(factory(), X, y)
                pre = e[HALF - 500 : HALF].mean()
                moving = np.convolve(e[HALF:], np.ones(WINDOW) / WINDOW, mode="valid")
                recovered = np.flatnonzero(moving <= 2 * pre)
                out[seed, kind, name] = {
                    "pre": pre,
                    "post_0_100": e[HALF : HALF + 100].mean(),
                    "post_100_500": e[HALF + 100 : HALF + 500].mean(),
                    "last_500": e[-500:].mean(),
                    "recovery": int(recovered[0]) if recovered.size else None,
                }
    print(f"\ndrift: mean squared progressive error (noise variance {NOISE**2}); recovery = rows"
          f" after the drift until the {WINDOW}-row moving average is <= 2x the pre-drift level")
    for (seed, kind, name), r in out.items():
        print(f"  seed {seed} {kind:8s} {name:9s} pre {r['pre']:.4f}  0-100 {r['post_0_100']:.4f}"
              f"  100-500 {r['post_100_500']:.4f}  last 500 {r['last_500']:.4f}"
              + (f"  recovery {r['recovery']}" if kind == "abrupt" else ""))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pa_tracks_an_abrupt_change(drift_results, seed):
    for name in ("PA", "PA1", "PA2"):
        r = drift_results[seed, "abrupt", name]
        assert r["pre"] < 0.05  # near the noise floor before the drift (ε-tube: ~ε²)
        assert r["recovery"] is not None and r["recovery"] <= 150, (name, r)
        assert r["post_100_500"] < 2 * r["pre"], (name, r)
    # AROW never forgets: hundreds of rows after the change it is still far off, and far worse
    # than PA.
    for name in ("AROW-diag", "AROW-full"):
        r, pa = drift_results[seed, "abrupt", name], drift_results[seed, "abrupt", "PA"]
        assert r["pre"] < 0.05
        assert r["recovery"] is None or r["recovery"] > 1000, (name, r)
        assert r["post_100_500"] > 20 * pa["post_100_500"], (name, r, pa)
        assert r["last_500"] > 10 * pa["last_500"], (name, r, pa)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pa_tracks_a_rotating_target(drift_results, seed):
    for name in ("PA", "PA1", "PA2"):
        r = drift_results[seed, "rotating", name]
        assert r["last_500"] < 2 * r["pre"], (name, r)
    for name in ("AROW-diag", "AROW-full"):
        r, pa = drift_results[seed, "rotating", name], drift_results[seed, "rotating", "PA"]
        assert r["last_500"] > 20 * pa["last_500"], (name, r, pa)


# =============================================================================================
# 4. Bad input raises ValueError and leaves the model unchanged
# =============================================================================================


@pytest.mark.parametrize("name,cov", REGRESSOR_FORMS, ids=REGRESSOR_IDS)
def test_bad_input_raises_and_leaves_the_model_unchanged(name, cov):
    rng = np.random.default_rng(9)
    X, y = rng.normal(size=(20, 4)), rng.normal(size=20)
    est = make(name, cov, random_state=0).fit(X, y)
    before = model_state(est)
    pred_before = est.predict(X)
    y_nan = y.copy()
    y_nan[13] = np.nan  # after valid rows: a half-applied batch would show
    y_inf = y.copy()
    y_inf[5] = np.inf
    X_nan = X.copy()
    X_nan[11, 2] = np.nan
    cases = {
        "NaN target": (X, y_nan),
        "inf target": (X, y_inf),
        "NaN in X": (X_nan, y),
        "too few features": (X[:, :3], y),
        "too many features": (np.hstack([X, X[:, :1]]), y),
        "too few features (CSR)": (sp.csr_matrix(X[:, :3]), y),
        "wrong number of targets": (X, y[:-1]),
        "2-D target": (X, np.column_stack([y, y])),
    }
    for what, (Xb, yb) in cases.items():
        with pytest.raises(ValueError):
            est.partial_fit(Xb, yb)
        assert_states_identical(model_state(est), before, f"partial_fit with {what}")
        if "features" in what:
            continue  # fit() starts afresh: another number of features is not an error there
        with pytest.raises(ValueError):
            est.fit(Xb, yb)
        assert_states_identical(model_state(est), before, f"fit with {what}")
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:, :3])
    assert np.array_equal(est.predict(X), pred_before)
    # After all that the model still learns as if nothing happened.
    fresh = make(name, cov, random_state=0).fit(X, y)
    est.partial_fit(X, y)
    fresh.partial_fit(X, y)
    assert_states_identical(model_state(est), model_state(fresh), "after the rejected calls")


@pytest.mark.parametrize("name,param,value", [
    ("AROWRegressor", "r", 0.0), ("AROWRegressor", "r", -1.0), ("AROWRegressor", "a", 0.0),
    ("PARegressor", "epsilon", -0.1), ("PA1Regressor", "C", 0.0), ("PA2Regressor", "C", -1.0),
    ("PA1Regressor", "epsilon", np.nan),
])
def test_bad_hyper_parameters_raise(name, param, value):
    X, y = np.ones((3, 2)), np.ones(3)
    with pytest.raises(ValueError):
        getattr(cwrs, name)(**{param: value}).fit(X, y)
