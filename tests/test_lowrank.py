"""covariance="lowrank" (docs/design.md §3.3, "Low-rank covariance"): a slow NumPy reference of
the Frequent Directions sketch with Σ by direct inversion, the invariants of the low-rank form (equal to
the full form until the sketch fills; never less variance than the full model on the same
increments; memory O(kd)), and the plumbing (batch = row by row, sparse = dense, state)."""

import io
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import cwrs
from cwrs import IneffectiveParameterWarning
from reference import rule_update

SECOND_ORDER = ("SOP", "CW", "ExactCW", "AROW", "NAROW", "SCW1", "SCW2", "NHERD")


def correlated(n, d, seed, factors=3):
    """Rows x = Lz + 0.1·noise (a few latent factors: correlated features) and labels of a
    random hyperplane."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, factors)) @ rng.normal(size=(factors, d)) + 0.1 * rng.normal(size=(n, d))
    y = np.where(X @ rng.normal(size=d) > 0, 1, -1)
    return X, y


class SketchReference:
    """Binary learner with precision D + BᵀB, D diagonal (I/a at first) and B a Frequent
    Directions sketch of the rows √c_t·x_t in the metric of D: at most 2k rows; a full sketch's
    BD^(-1/2) is shrunk by an SVD to its k leading directions, less the (k+1)-th squared
    singular value, and the precision each coordinate loses joins D. Written from the math: Σ
    is the direct inverse of the precision, not Woodbury. Records the increments (c_t, x_t)."""

    def __init__(self, rule, params, d, a, rank):
        self.rule, self.params, self.a, self.k = rule, params, a, rank
        self.mu, self.D, self.B, self.increments = np.zeros(d), np.full(d, 1 / a), np.zeros((0, d)), []

    def precision(self):
        return np.diag(self.D) + self.B.T @ self.B

    def sigma(self):
        return np.linalg.inv(self.precision())

    def learn(self, x, y):
        sigma = self.sigma()
        m, v = y * (self.mu @ x), x @ sigma @ x
        coefficients = rule_update(self.rule, m, v, x @ x, **self.params)
        if coefficients is None:
            return
        alpha, c = coefficients
        self.mu = self.mu + alpha * y * (sigma @ x)
        if c > 0:
            if len(self.B) == 2 * self.k:
                root = np.sqrt(self.D)
                _, s, vt = np.linalg.svd(self.B / root, full_matrices=False)
                r, s = min(self.k, len(vt)), np.pad(s, (0, 2 * self.k))  # d < 2k: zeros
                kept = np.sqrt(np.maximum(s[:r] ** 2 - s[self.k] ** 2, 0.0))
                shrunk = (kept[:, None] * vt[:r])[kept > 0] * root
                self.D = self.D + (self.B**2).sum(0) - (shrunk**2).sum(0)
                self.B = shrunk
            self.B = np.vstack([self.B, np.sqrt(c) * x])
            self.increments.append((c, x))

    def increment(self):
        """Σ_t c_t x_t x_tᵀ: the precision the full model adds on the same rounds."""
        return sum((c * np.outer(x, x) for c, x in self.increments), np.zeros((len(self.mu),) * 2))


def lowrank(rule="AROW", rank=3, **params):
    return getattr(cwrs, rule)(covariance="lowrank", rank=rank, shuffle=False, **params)


@pytest.mark.parametrize("rule, params", [("AROW", {"r": 0.5}), ("CW", {"eta": 0.8})])
@pytest.mark.parametrize("rank", [1, 3])
def test_native_model_matches_the_numpy_reference(rule, params, rank):
    X, y = correlated(60, 7, seed=rank)
    a = 0.8
    model = lowrank(rule, rank, a=a, fit_intercept=False, **params).fit(X, y)
    ref = SketchReference(rule, params, 7, a, rank)
    for x, label in zip(X, y):
        ref.learn(x, label)
    assert len(ref.increments) > 4 * rank  # several shrinks
    np.testing.assert_allclose(model.coef_[0], ref.mu, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(model.covariance_matrix(), ref.sigma(), rtol=1e-8, atol=1e-10)
    # Σ = (diag(1/S) + BᵀB)⁻¹ with the factors covariance_ gives (S, then 2k rows of B).
    factors = model.covariance_
    assert factors.shape == (1 + 2 * rank, 7)
    S, B = factors[0], factors[1:]
    np.testing.assert_allclose(np.linalg.inv(np.diag(1 / S) + B.T @ B), ref.sigma(), rtol=1e-8)


@settings(max_examples=25, deadline=None)
@given(
    st.integers(1, 6),
    st.integers(2, 9),
    st.sampled_from(SECOND_ORDER),
    st.integers(0, 2**31),
    st.booleans(),
)
def test_the_sketch_never_over_counts_and_the_diagonal_is_exact(rank, d, rule, seed, wide):
    """On the increments c_t·x_t x_tᵀ of the run: BᵀB ⪯ Σ_t c_t x_t x_tᵀ (Frequent Directions
    only drops precision), and D + BᵀB has exactly the full model's diagonal 1/a + Σ_t c_t x_tj²
    (what the sketch drops moves to D)."""
    X, y = correlated(8 * rank + 10, d, seed)
    X = X * (10.0 if wide else 1.0)
    ref = SketchReference(rule, {}, d, 1.0, rank)
    model = lowrank(rule, rank, fit_intercept=False).fit(X, y)
    for x, label in zip(X, y):
        ref.learn(x, label)
    added = ref.increment()
    scale = np.abs(added).max() + 1.0
    factors = model.covariance_
    S, B = factors[0], factors[1:]
    np.testing.assert_allclose(model.covariance_matrix(), ref.sigma(), rtol=1e-6, atol=1e-9)
    assert np.linalg.eigvalsh(added - B.T @ B).min() >= -1e-9 * scale
    np.testing.assert_allclose(1.0 / S + (B**2).sum(0), 1.0 + np.diag(added), rtol=1e-9)


def _same_model(lhs, rhs, tol):
    np.testing.assert_allclose(lhs.coef_, rhs.coef_, rtol=tol, atol=tol)
    np.testing.assert_allclose(lhs.intercept_, rhs.intercept_, rtol=tol, atol=tol)
    np.testing.assert_allclose(lhs.covariance_matrix(), rhs.covariance_matrix(), rtol=tol, atol=tol)


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 5), st.integers(2, 8), st.sampled_from(SECOND_ORDER), st.integers(0, 2**31))
def test_equals_the_full_form_while_the_updates_fit_the_sketch(rank, d, rule, seed):
    """Until 2k updates nothing is dropped: every second-order rule, mean and Σ to 1e-9."""
    X, y = correlated(2 * rank, d, seed)
    full = getattr(cwrs, rule)(covariance="full").partial_fit(X, y, classes=[-1, 1])
    _same_model(lowrank(rule, rank).partial_fit(X, y, classes=[-1, 1]), full, 1e-9)


@pytest.mark.parametrize("seed", [1, 2, 4, 5])  # streams on which IELLIP updates 2–3 times
def test_iellip_rescaling_equals_the_full_form_while_the_updates_fit_the_sketch(seed):
    """IELLIP also rescales Σ by 1/(1 − c_t) on an update (docs/design.md §2.9): the low-rank
    form scales S by r and B by 1/√r, which is r·Σ exactly."""
    X, y = correlated(8, 5, seed)
    full = cwrs.IELLIP(covariance="full").partial_fit(X, y, classes=[-1, 1])
    assert full.n_updates_ > 1
    _same_model(lowrank("IELLIP", 4).partial_fit(X, y, classes=[-1, 1]), full, 1e-9)


@pytest.mark.parametrize("multi_class", ["max-score", "ovr"])
def test_multiclass_equals_the_full_form_until_the_sketch_fills(multi_class):
    rng = np.random.default_rng(4)
    X, y = rng.normal(size=(8, 5)), rng.integers(0, 3, 8)
    full = cwrs.AROW(covariance="full", multi_class=multi_class, shuffle=False).fit(X, y)
    model = lowrank("AROW", 4, multi_class=multi_class).fit(X, y)
    assert model.covariance_.shape == (3, 9, 5)
    _same_model(model, full, 1e-9)


def test_regressor_equals_the_full_form_until_the_sketch_fills_then_stays_close():
    X, _ = correlated(200, 12, seed=3)
    target = X @ np.random.default_rng(3).normal(size=12)
    exact = cwrs.AROWRegressor(covariance="full", shuffle=False).fit(X[:10], target[:10])
    model = cwrs.AROWRegressor(covariance="lowrank", rank=5, shuffle=False).fit(X[:10], target[:10])
    np.testing.assert_allclose(model.coef_, exact.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model.covariance_matrix(), exact.covariance_matrix(), atol=1e-9)
    # Three latent factors: a rank-5 sketch keeps the stream's correlations.
    model.partial_fit(X[10:], target[10:])
    diag = cwrs.AROWRegressor(shuffle=False).fit(X, target)
    test, _ = correlated(100, 12, seed=3)
    truth = test @ np.random.default_rng(3).normal(size=12)
    assert np.mean((model.predict(test) - truth) ** 2) < np.mean((diag.predict(test) - truth) ** 2)


def test_batch_equals_row_by_row_and_sparse_equals_dense():
    X, y = correlated(50, 6, seed=5)
    batch = lowrank("AROW", 2).fit(X, y)
    rows = lowrank("AROW", 2)
    for i in range(len(X)):
        rows.partial_fit(X[i : i + 1], y[i : i + 1], classes=[-1, 1])
    np.testing.assert_array_equal(batch.coef_, rows.coef_)
    np.testing.assert_array_equal(batch.covariance_, rows.covariance_)
    X[np.abs(X) < 0.5] = 0.0
    dense, sparse = lowrank("AROW", 2).fit(X, y), lowrank("AROW", 2).fit(sp.csr_matrix(X), y)
    _same_model(dense, sparse, 1e-10)


def test_pickle_and_cwrs_files_round_trip_and_learn_on_identically():
    X, y = correlated(80, 6, seed=6)
    model = lowrank("AROW", 3).fit(X[:40], y[:40])
    buffer = io.BytesIO()
    model.save(buffer)
    for copy in (pickle.loads(pickle.dumps(model)), cwrs.load(io.BytesIO(buffer.getvalue()))):
        np.testing.assert_array_equal(copy.decision_function(X), model.decision_function(X))
        np.testing.assert_array_equal(copy.covariance_, model.covariance_)
        copy.partial_fit(X[40:], y[40:])
        twin = pickle.loads(pickle.dumps(model)).partial_fit(X[40:], y[40:])
        np.testing.assert_array_equal(copy.coef_, twin.coef_)
        np.testing.assert_array_equal(copy.covariance_, twin.covariance_)


@pytest.mark.parametrize("d", [50, 400])
def test_memory_is_linear_in_the_dimension(d):
    """The state holds S and 2k rows of d values: O(kd), where full holds d²."""
    X, y = correlated(30, d, seed=7)
    model = lowrank("AROW", 4).fit(X, y)
    state = model._fitted_model().covariance
    assert state.shape == ((1 + 2 * 4) * (d + 1),)
    assert len(pickle.dumps(model)) < 8 * (2 * 4 + 4) * (d + 1) + 4000


def test_rank_is_validated_and_warned_about_elsewhere():
    X, y = correlated(10, 3, seed=8)
    for bad in (0, -1, 2.5, "3", True, 5000):
        with pytest.raises(cwrs.InvalidParameterError, match="rank"):
            lowrank("AROW", bad).fit(X, y)
    with pytest.warns(IneffectiveParameterWarning, match="rank"):
        cwrs.AROW(rank=3).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lowrank("AROW", 3).fit(X, y)
    with pytest.raises(cwrs.InvalidParameterError, match="diagonal"):
        lowrank("AROW", 3, penalty="l1").fit(X, y)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("estimator", ["multiclass", "regressor"])
def test_covariance_matrix_inverts_the_stored_precision(fit_intercept, estimator):
    """The core forms Σ (Woodbury, through the sketch's factor): NumPy's inverse of
    diag(1/S) + BᵀB over features and bias, per class, with the bias left out."""
    X, _ = correlated(40, 5, seed=11)
    rank, d = 2, 5
    if estimator == "multiclass":
        y = np.argmax(X[:, :3], axis=1)
        model = lowrank("AROW", rank, fit_intercept=fit_intercept).fit(X, y)
    else:
        model = cwrs.AROWRegressor(covariance="lowrank", rank=rank, fit_intercept=fit_intercept)
        model.fit(X, X @ np.arange(1.0, d + 1))
    dim = d + int(fit_intercept)
    stored = model._fitted_model().covariance.reshape(-1, 1 + 2 * rank, dim)
    expected = np.stack(
        [np.linalg.inv(np.diag(1 / f[0]) + f[1:].T @ f[1:])[:d, :d] for f in stored]
    )
    dense = model.covariance_matrix()
    assert dense.shape == ((3, d, d) if estimator == "multiclass" else (d, d))
    np.testing.assert_allclose(dense.reshape(-1, d, d), expected, rtol=1e-9, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    exponent=st.sampled_from([66, 166, 332, 498]),
    rank=st.sampled_from([1, 2, 3, 5, 10]),
    task=st.sampled_from(["binary", "multiclass", "regressor"]),
)
def test_features_far_above_the_prior_keep_the_state_finite_and_scale_equivariant(
    seed, exponent, rank, task
):
    # Rows at 2^e (1e20 to 1e150) with a = 1: AROW's increments xxᵀ/r would make the sketch's
    # Gram matrix BSBᵀ ~s², far past 1/ε, and from rank 3 its 2k rows over d = 4 columns make
    # it rank-deficient. The model must stay finite, savable, and be the model of the rows at
    # scale 1 with a = s² (the same numbers, to the bit for a power of two s).
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(150, 4))
    score = X @ np.array([1.0, -0.5, 0.25, 0.0])
    s = 2.0**exponent
    if task == "regressor":
        estimator, y, y_scaled = cwrs.AROWRegressor, score, score * s
    else:
        estimator = cwrs.AROW
        y = (score > 0).astype(int) if task == "binary" else np.digitize(score, [-0.5, 0.5])
        y_scaled = y

    def fit(rows, targets, a):
        model = estimator(covariance="lowrank", rank=rank, a=a, fit_intercept=False, shuffle=False)
        return model.fit(rows, targets)

    scaled, at_one = fit(X * s, y_scaled, 1.0), fit(X, y, s * s)
    state = scaled._model.state()
    mean = state["means" if task == "multiclass" else "mean"]
    assert np.isfinite(mean).all() and np.isfinite(state["covariance_values"]).all()
    restored = pickle.loads(pickle.dumps(scaled))
    if task == "regressor":
        np.testing.assert_allclose(scaled.predict(X * s) / s, at_one.predict(X), rtol=1e-9)
        np.testing.assert_array_equal(restored.predict(X * s), scaled.predict(X * s))
        assert np.sqrt(np.mean((at_one.predict(X) - y) ** 2)) < 0.1
    else:
        decision = scaled.decision_function(X * s)
        np.testing.assert_allclose(decision, at_one.decision_function(X), rtol=1e-9)
        np.testing.assert_array_equal(restored.decision_function(X * s), decision)
