"""Extreme scales: models that stay finite, predictions that never turn NaN or silently pick
class 0, and probabilities that agree with `predict`."""

import io
import pickle

import numpy as np
import pytest

import cwrs
from cwrs._catalog import NO_KERNEL_FORM

# ALMA, the ROMMAs, AdaGrad and FTRL have no kernel form (tests/test_kernel.py checks the refusal).
KERNEL_RULES = [cls.__name__ for cls in cwrs.CLASSIFIERS if cls not in NO_KERNEL_FORM]


def assert_finite_and_persistent(model, X):
    scores = model.decision_function(X)
    assert np.isfinite(scores).all(), scores
    copy = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(copy.decision_function(X), scores)
    buffer = io.BytesIO()
    model.save(buffer)
    buffer.seek(0)
    np.testing.assert_array_equal(cwrs.load(buffer).decision_function(X), scores)


@pytest.mark.parametrize("rule", KERNEL_RULES)
def test_budgeted_max_score_kernel_models_stay_finite(rule):
    # Repeated rows at scale 10-1000 made a class's dual xᵀΣx round to <= 0 while
    # the rival's was large; the joint step then gave that class a negative or infinite
    # Sherman-Morrison factor and NaN scores (and a model that could not be loaded).
    for seed in range(6):
        rng = np.random.default_rng(seed)
        X = np.round(rng.normal(size=(20, 3)) * 2) * [10, 100, 1000][seed % 3]
        X = np.vstack([X, X[::-1]])
        y = rng.integers(0, 4, 40)
        for kernel, params in [("linear", {}), ("poly", {"degree": 2})]:
            model = getattr(cwrs, rule)(kernel=kernel, budget=5, n_iter=2, **params)
            assert_finite_and_persistent(model.fit(X, y), X)


def test_the_reported_poly_kernel_case():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 4)) * 1000
    y = rng.integers(0, 5, 40)
    model = cwrs.AROW(kernel="poly", degree=2, budget=5, n_iter=2).fit(X, y)
    assert_finite_and_persistent(model, X)
    np.testing.assert_array_equal(
        model.classes_[model.predict_proba(X).argmax(axis=1)], model.predict(X)
    )


SECOND_ORDER = [cls for cls in cwrs.CLASSIFIERS if cls._second_order]
SCALES = [1e-300, 1e-150, 1.0, 1e150, 1e300]


def predictions_or_overflow(model, X):
    """(predict, predict_proba) of X, or None where the scores overflow with both signs (then
    both refuse, naming the overflow: never NaN, never a silent class)."""
    try:
        predicted = model.predict(X)
    except ValueError as error:
        assert "overflows" in str(error)
        with pytest.raises(ValueError, match="overflows"):
            model.predict_proba(X)
        return None
    return predicted, model.predict_proba(X)


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("kernel", [None, "rbf", "poly"])
@pytest.mark.parametrize("cls", SECOND_ORDER, ids=lambda c: c.__name__)
def test_predict_proba_agrees_with_predict_at_every_scale(cls, kernel, n_classes):
    # Φ rounded tiny margins to 1/2 (SOP on 1e-150 data: argmax disagreed on
    # every row), overflowed margins gave NaN or uniform probabilities.
    if kernel and cls in NO_KERNEL_FORM:
        pytest.skip("no kernel form (docs/design.md §2.9)")
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 3))
    y = rng.integers(0, n_classes, 60)
    params = {"kernel": kernel, "budget": 20} if kernel else {}
    for fit_scale in [1e-150, 1.0]:
        model = cls(**params).fit(X * fit_scale, y)
        for scale in SCALES:
            result = predictions_or_overflow(model, X * scale)
            if result is None:
                continue
            predicted, proba = result
            assert not np.isnan(proba).any()
            np.testing.assert_array_equal(model.classes_[proba.argmax(axis=1)], predicted)


def test_overflowing_scores_are_signed_infinities_or_a_clear_error():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    poly = cwrs.AROW(kernel="poly", degree=3).fit(X, y)
    with pytest.raises(ValueError, match="decision_function overflows on row 0"):
        poly.predict(X[:3] * 1e200)
    with pytest.raises(ValueError, match="predict_proba overflows"):
        poly.predict_proba(X[:3] * 1e200)
    # Far from every support row, the RBF kernel is 0: only the bias term is left.
    rbf = cwrs.AROW(kernel="rbf").fit(X, y)
    far = rbf.decision_function(X[:3] * 1e200)
    np.testing.assert_allclose(far, np.full(3, rbf.dual_coef_.sum()), rtol=1e-12)
    primal = cwrs.AROW(shuffle=False).fit(X, y)  # a model whose |w_0| > 1
    huge = np.array([[1.7e308, 0.0, 0.0], [-1.7e308, 0.0, 0.0]])
    sign = np.sign(primal.coef_[0, 0])
    np.testing.assert_array_equal(primal.decision_function(huge), [sign * np.inf, -sign * np.inf])
    np.testing.assert_array_equal(
        primal.predict_proba(huge)[:, 1], [float(sign > 0), float(sign < 0)]
    )
    rff = cwrs.AROW(kernel_approximation="rff", random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="random Fourier features of row 0 overflow"):
        rff.predict(huge)


def test_tiny_margins_keep_the_side_of_one_half():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3)) * 1e-150
    y = (X[:, 0] > 0).astype(int)
    model = cwrs.SOP().fit(X, y)
    scores, positive = model.decision_function(X), model.predict_proba(X)[:, 1]
    assert ((positive > 0.5) == (scores > 0)).all()
    assert ((positive < 0.5) == (scores < 0)).all()


def test_return_std_uses_the_fitted_noise_variance():
    # predict(return_std=True) read `r` as it was after fitting, unvalidated.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    y = X @ [1.0, -2.0]
    model = cwrs.AROWRegressor(r=0.5).fit(X, y)
    mean, std = model.predict(X, return_std=True)
    for r in (-5.0, "big", 100.0):
        model.set_params(r=r)
        again = model.predict(X, return_std=True)
        np.testing.assert_array_equal(again[0], mean)
        np.testing.assert_array_equal(again[1], std)


def test_coef_reads_the_fitted_kernel_form_not_changed_parameters():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    model = cwrs.AROW(kernel="linear").fit(X, y)
    coef, intercept = model.coef_, model.intercept_
    model.set_params(kernel="rbf", fit_intercept=False)
    np.testing.assert_array_equal(model.coef_, coef)
    np.testing.assert_array_equal(model.intercept_, intercept)
    rff = cwrs.AROW(kernel_approximation="rff", n_components=20, random_state=0).fit(X, y)
    rff.set_params(n_components=5)
    assert rff.coef_.shape == (1, 20)


def test_dual_coef_has_scikit_learns_shape():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    model = cwrs.AROW(kernel="rbf").fit(X, (X[:, 0] > 0).astype(int))
    assert model.dual_coef_.shape == (1, model.n_support_)
    np.testing.assert_allclose(
        model.decision_function(X[:5]),
        (model.dual_coef_ @ (np.exp(-np.square(X[:5, None] - model.support_vectors_).sum(2) / 3)
                             + 1).T)[0],
        rtol=1e-12,
    )


DEGREE_RANGE = r"degree must be a positive integer at most 2\*\*31 - 1"


@pytest.mark.parametrize(
    "params, message",
    [
        ({"budget": 10}, "budget=10 has no effect with no kernel"),
        ({"degree": 2}, "degree=2 has no effect with no kernel: it is used by kernel='poly'"),
        ({"kernel": "rbf", "degree": 2}, "degree=2 has no effect with kernel='rbf'"),
        ({"kernel": "linear", "gamma": 0.5}, "gamma=0.5 has no effect with kernel='linear'"),
        ({"kernel": "rbf", "coef0": 0.0}, "coef0=0.0 has no effect with kernel='rbf'"),
        ({"kernel_approximation": "rff", "budget": 5}, 'budget=5 has no effect with kernel_app'),
        ({"kernel": "poly", "degree": 2**40}, DEGREE_RANGE),
        ({"kernel": "poly", "degree": 2**31}, DEGREE_RANGE),
        ({"kernel": "rbf", "budget": 2**70}, "budget=1180591620717411303424 is too large"),
    ],
)
def test_parameters_without_effect_or_out_of_range_are_refused(params, message):
    # A budget without a kernel was silently ignored; degree=2**40 and
    # budget=2**70 raised OverflowError internals.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3))
    y = (X[:, 0] > 0).astype(int)
    for classes in (2, 3):
        with pytest.raises(ValueError, match=message):
            cwrs.AROW(**params).fit(X, np.arange(20) % classes if classes == 3 else y)
    # Their defaults, and the kernels that use them, are fine.
    cwrs.AROW(kernel="poly", degree=2, coef0=0.0, gamma=0.5, budget=5).fit(X, y)
    cwrs.AROW(kernel_approximation="rff", gamma=0.5, n_components=10).fit(X, y)


def test_memory_error_names_the_part_and_the_alternative():
    import scipy.sparse as sp

    X = sp.csr_matrix(([1.0], ([0], [3])), shape=(1, 2**20))
    with pytest.raises(MemoryError) as error:
        cwrs.AROW(covariance="full").partial_fit(X, [0], classes=[0, 1])
    text = str(error.value)
    assert text.startswith(
        'not enough memory: a full 1048577×1048577 covariance matrix (covariance="full") needs '
        "8796."
    ), text
    assert text.endswith('GB; covariance="diag" needs memory linear in the number of features')


def bad_kernel(output):
    def kernel(A, B):
        return output(A, B)

    kernel.__name__ = "my_kernel"
    return kernel


@pytest.mark.parametrize(
    "output, message",
    [
        (lambda A, B: None, "returned None"),
        (lambda A, B: np.zeros((0, 0)), r"returned shape \(0, 0\)"),
        (lambda A, B: __import__("scipy.sparse").sparse.csr_matrix(A @ B.T), "sparse matrix"),
        (lambda A, B: -(A @ B.T) - 1.0, r"k\(x, x\) = .* < 0 for row 0"),
        (lambda A, B: "text", "not an array of numbers|returned shape"),
        (lambda A, B: np.full((len(A), len(B)), np.nan), "NaN or infinity"),
    ],
)
def test_callable_kernel_output_errors_name_the_kernel(output, message):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(10, 2))
    y = (X[:, 0] > 0).astype(int)
    model = cwrs.AROW(kernel=bad_kernel(output))
    with pytest.raises(ValueError, match=f"kernel my_kernel.*{message}|{message}"):
        model.fit(X, y)
    with pytest.raises(ValueError, match="my_kernel"):
        model.fit(X, y)


@pytest.mark.parametrize("covariance", ["diag", "full"])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_a_regression_step_on_tiny_features_keeps_the_mean_finite(covariance, fit_intercept):
    # step·Σ_j was formed before ·x_j, overflowing although step·(Σx)_j is finite.
    X, y = [[1e-10], [-1e-10]], [3e299, -8e299]
    model = cwrs.AROWRegressor(a=1e9, covariance=covariance, fit_intercept=fit_intercept)
    model.fit(X, y)
    assert np.isfinite(model.coef_).all() and np.isfinite(model.intercept_).all()
    assert model.n_updates_ == 2
    assert np.isfinite(model.predict(X)).all()



@pytest.mark.parametrize("covariance", ["diag", "full", "lowrank"])
@pytest.mark.parametrize("one_row", [False, True])
def test_a_skipped_overflowing_mean_step_is_no_update(covariance, one_row):
    # Σ = 1e300 over x = 1e-150: v = 1, but α·Σx overflows for a residual of 1e200. The gate
    # skips that round (docs/design.md §3.6): it leaves the model as it was and is not counted.
    model = cwrs.AROWRegressor(a=1e300, covariance=covariance, fit_intercept=False)
    X, y = np.array([[1e-150], [1e-150]]), np.array([1e200, 1.0])
    if one_row:
        model.partial_fit(X[:1], y[:1])
        assert model.n_updates_ == 0 and model.coef_.tolist() == [0.0]
        model.partial_fit(X[1:], y[1:])
    else:
        model.partial_fit(X, y)
    assert model.n_updates_ == 1
    assert np.isfinite(model.coef_).all() and model.coef_[0] > 0


@pytest.mark.parametrize("one_row", [False, True])
def test_adagrad_reports_a_skipped_overflowing_step(one_row):
    # η near f64::MAX: each step moves a weight by up to η, so the fourth row's step on w₀
    # (0.91η + 0.37η) would overflow; the gate skips that round and it is not an update.
    eta = 1.79e308
    X = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [1.0, 11.0]])
    y = np.array([-1, 1, 1, 1])
    model = cwrs.AdaGrad(eta=eta, fit_intercept=False, shuffle=False)
    model.partial_fit(X[:3], y[:3], classes=[-1, 1])
    assert model.n_updates_ == 3
    before = model.coef_.copy()
    assert before[0, 0] > 0.9 * eta
    if one_row:
        model.partial_fit(X[3:], y[3:])
    else:
        model = cwrs.AdaGrad(eta=eta, fit_intercept=False, shuffle=False)
        model.partial_fit(X, y, classes=[-1, 1])
    assert model.n_updates_ == 3
    assert model.coef_.tolist() == before.tolist()
