"""Long-run numerical stability: 10⁶ rows per learner on streams that break naive
float64 arithmetic, then a check of the whole learned state.

Streams (5 features, plus the intercept coordinate): (i) ill-conditioned, features scaled from
1e-6 to 1e6; (ii) one row repeated 10⁶ times with random labels; (iii) exactly collinear
columns; (iv) values around 1e150, around 1e-150, and columns of both and of 1 mixed.

Learners: AROW, CW, ExactCW, SCW1, SCW2, NAROW, SOP and NHERD with covariance="full" and
"diag", and the AROW regressor. After the run every mean is finite; a diagonal covariance is
finite and > 0; a full covariance is finite, exactly symmetric and positive definite.

Positive definiteness is decided on the diagonally scaled matrix C = D^-½ Σ D^-½ (a congruence:
same inertia as Σ), whose eigenvalues are O(1): `np.linalg.eigvalsh` resolves them to ~1e-15,
while for Σ itself (diagonal from ~1e-308 to 1) its absolute error ~1e-16·‖Σ‖ would swamp the
small eigenvalues. The smallest eigenvalue of Σ is computed exactly (mpmath at 2500 bits) when
mpmath is installed, else bounded below by λ_min(C)·min Σ_jj; the smallest seen over the file is
printed at the end (``pytest -s``).
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest

import cwrs

N_ROWS = 1_000_000
N_FEATURES = 5
RULES = ["AROW", "CW", "ExactCW", "SCW1", "SCW2", "NAROW", "SOP", "NHERD"]
STREAMS = ["ill-conditioned", "repeated", "collinear", "huge", "tiny", "mixed"]

try:
    import mpmath
except ImportError:  # pragma: no cover - the bound below is used instead
    mpmath = None


@functools.lru_cache(maxsize=1)  # the tests run stream by stream
def stream(name):
    """(X, labels ±1, regression targets) of the named stream, 10⁶ rows."""
    rng = np.random.default_rng(STREAMS.index(name))
    n, d = N_ROWS, N_FEATURES
    noise = rng.random(n) < 0.5
    random_labels = np.where(noise, 1.0, -1.0)
    if name == "ill-conditioned":
        scales = np.logspace(-6, 6, d)
        X = rng.standard_normal((n, d)) * scales
        w = rng.standard_normal(d) / scales
        score = X @ w
        y = np.where(score + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
        t = score + 0.1 * rng.standard_normal(n)
    elif name == "repeated":
        X = np.broadcast_to(rng.standard_normal(d), (n, d))
        y = random_labels
        t = 2.0 * random_labels
    elif name == "collinear":
        Z = rng.standard_normal((n, 2))
        X = np.column_stack([Z[:, 0], 2 * Z[:, 0], Z[:, 1], Z[:, 0] - Z[:, 1], 3 * Z[:, 1]])
        y = np.where(Z[:, 0] + 0.2 * rng.standard_normal(n) > 0, 1.0, -1.0)
        t = Z[:, 0] - 2 * Z[:, 1] + 0.1 * rng.standard_normal(n)
    else:
        scales = {"huge": np.full(d, 1e150), "tiny": np.full(d, 1e-150),
                  "mixed": np.array([1e150, 1e-150, 1.0, 1e150, 1e-150])}[name]
        X = rng.standard_normal((n, d)) * scales
        y = random_labels
        t = rng.standard_normal(n) * scales.max()
    return np.ascontiguousarray(X), y, t


SMALLEST = {}  # "rule/covariance/stream" -> (λ_min(Σ), λ_min(C)) of the full covariances
UPDATES = {}  # "rule/covariance/stream" -> n_updates_


def smallest_eigenvalue(sigma, scaled_min):
    """λ_min(Σ): exact (mpmath) if available, else the lower bound λ_min(C)·min Σ_jj."""
    if mpmath is None:
        return scaled_min * float(np.diag(sigma).min())
    with mpmath.workprec(2500):
        matrix = mpmath.matrix([[mpmath.mpf(float(v)) for v in row] for row in sigma])
        return float(min(mpmath.eigsy(matrix, eigvals_only=True)))


def check_state(model, what):
    """The native model's mean and covariance (with the intercept coordinate)."""
    mean = np.asarray(model.mean, dtype=float)
    covariance = np.asarray(model.covariance, dtype=float)
    assert np.isfinite(mean).all(), f"{what}: mean {mean}"
    assert np.isfinite(covariance).all(), f"{what}: covariance {covariance}"
    if model.covariance_kind == "diag":
        assert (covariance > 0).all(), f"{what}: variances {covariance}"
        return
    d = mean.shape[0]
    sigma = covariance.reshape(d, d)
    assert np.array_equal(sigma, sigma.T), f"{what}: Σ is not exactly symmetric"
    diagonal = np.diag(sigma)
    assert (diagonal > 0).all(), f"{what}: diagonal {diagonal}"
    root = 1.0 / np.sqrt(diagonal)
    scaled = sigma * root[:, None] * root[None, :]
    scaled_min = float(np.linalg.eigvalsh(scaled).min())
    assert scaled_min > 0, f"{what}: scaled Σ has eigenvalue {scaled_min}"
    np.linalg.cholesky(scaled)  # raises if not positive definite
    smallest = smallest_eigenvalue(sigma, scaled_min)
    assert smallest > 0, f"{what}: λ_min(Σ) = {smallest}"
    SMALLEST[what] = (smallest, scaled_min)


@pytest.fixture(scope="module", autouse=True)
def report():
    yield
    if not SMALLEST:
        return
    how = "exact, mpmath" if mpmath is not None else "lower bound λ_min(C)·min Σ_jj"
    print(f"\nsmallest eigenvalue of a full Σ after {N_ROWS} rows ({how}; and of the "
          "diagonally scaled Σ), and updates per run:")
    for name in STREAMS:
        runs = {k: v for k, v in SMALLEST.items() if k.endswith("/" + name)}
        if runs:
            what, (smallest, _) = min(runs.items(), key=lambda item: item[1][0])
            scaled = min(v[1] for v in runs.values())
            updates = [v for k, v in UPDATES.items() if k.endswith("/" + name)]
            print(f"  {name:16s} λ_min(Σ) {smallest:.3e} ({what.split('/')[0]}), "
                  f"λ_min(C) {scaled:.3e}, updates {min(updates)}..{max(updates)}")
    what, (smallest, _) = min(SMALLEST.items(), key=lambda item: item[1][0])
    scaled_what, (_, scaled) = min(SMALLEST.items(), key=lambda item: item[1][1])
    print(f"  overall: λ_min(Σ) {smallest:.3e} ({what}), λ_min(C) {scaled:.3e} ({scaled_what}), "
          f"{sum(UPDATES.values())} updates in {len(UPDATES)} runs")


@pytest.mark.parametrize("covariance", ["full", "diag"])
@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("name", STREAMS)
def test_classifier_long_run(name, rule, covariance):
    X, y, _ = stream(name)
    est = getattr(cwrs, rule)(covariance=covariance)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow or invalid-value warning on the way
        est.partial_fit(X, y, classes=[-1.0, 1.0])
        assert np.isfinite(est.coef_).all() and np.isfinite(est.intercept_).all()
        assert np.isfinite(est.covariance_).all()
        assert np.isfinite(est.decision_function(X[:1000])).all()
    assert est.n_updates_ > 0
    UPDATES[f"{rule}/{covariance}/{name}"] = est.n_updates_
    check_state(est._model, f"{rule}/{covariance}/{name}")


@pytest.mark.parametrize("covariance", ["full", "diag"])
@pytest.mark.parametrize("name", STREAMS)
def test_arow_regressor_long_run(name, covariance):
    X, _, t = stream(name)
    est = cwrs.AROWRegressor(covariance=covariance)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est.partial_fit(X, t)
        assert np.isfinite(est.coef_).all() and np.isfinite(est.intercept_).all()
        assert np.isfinite(est.predict(X[:1000])).all()
    assert est.n_updates_ == N_ROWS
    UPDATES[f"AROWRegressor/{covariance}/{name}"] = est.n_updates_
    check_state(est._model, f"AROWRegressor/{covariance}/{name}")


@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly"])
@pytest.mark.parametrize("name", ["huge", "tiny", "mixed"])
def test_kernel_learners_stay_finite(name, kernel):
    """The dual form at extreme scales: state and predictions finite (rbf kernel values
    underflow to 0 at huge distances; poly ones overflow at 1e150, so those rows are not
    learned, by the gate on non-finite moments)."""
    X, y, _ = stream(name)
    X, y = X[:300], y[:300]
    for rule in ["AROW", "CW", "ExactCW", "SCW1", "SCW2", "NAROW", "SOP", "NHERD", "PA1"]:
        for budget in (None, 40):
            est = getattr(cwrs, rule)(kernel=kernel, budget=budget)
            est.partial_fit(X, y, classes=[-1.0, 1.0])
            assert np.isfinite(est.dual_coef_).all(), (rule, budget)
            if kernel != "poly" or name == "tiny":
                assert np.isfinite(est.decision_function(X)).all(), (rule, budget)
