"""The one-row path of `partial_fit` (one float64 C-ordered row of a fitted primal model) gives
exactly what the general path gives, and rejects what the general path rejects."""

import numpy as np
import pytest

import cwrs
from cwrs._base import _one_row_target

rng = np.random.default_rng(7)
X = rng.standard_normal((60, 6))
Y_BINARY = np.where(X[:, 0] + 0.3 * X[:, 1] > 0, "yes", "no")
Y_MULTI = np.array([2, 5, 9])[np.argmax(X[:, :3], axis=1)]
Y_REGRESSION = X @ np.arange(6.0) + 0.1 * rng.standard_normal(60)

CLASSIFIERS = [
    lambda: cwrs.AROW(),
    lambda: cwrs.AROW(covariance="full"),
    lambda: cwrs.SCW1(penalty="l1", alpha=1e-3),
    lambda: cwrs.PA1(),
    lambda: cwrs.AROW(multi_class="ovr"),
]


def _state(estimator):
    model = estimator._model
    return model.state()


def _assert_equal(x, y):
    """Bit-for-bit equality of nested dicts, tuples and lists of arrays and plain values."""
    if isinstance(x, dict):
        assert x.keys() == y.keys()
        for key in x:
            _assert_equal(x[key], y[key])
    elif isinstance(x, np.ndarray):
        np.testing.assert_array_equal(x, y)
    elif isinstance(x, (tuple, list)):
        assert len(x) == len(y)
        for a, b in zip(x, y):
            _assert_equal(a, b)
    else:
        assert x == y


def _assert_same(a, b):
    _assert_equal(_state(a), _state(b))


@pytest.mark.parametrize("make", CLASSIFIERS)
@pytest.mark.parametrize("y", [Y_BINARY, Y_MULTI], ids=["binary", "multiclass"])
def test_one_row_path_equals_the_general_path(make, y):
    fast, general = make(), make()
    classes = np.unique(y)
    fast.partial_fit(X[:1], y[:1], classes=classes)
    general.partial_fit(X[:1], y[:1], classes=classes)
    assert _one_row_target(X[1:2], y[1:2], X.shape[1], fast._one_row[1]) is not None
    for i in range(1, len(X)):
        fast.partial_fit(X[i : i + 1], y[i : i + 1])
        # A Python list never takes the one-row path.
        general.partial_fit(X[i : i + 1].tolist(), list(y[i : i + 1]))
    _assert_same(fast, general)
    assert fast.n_updates_ > 0


@pytest.mark.parametrize("make", [lambda: cwrs.AROWRegressor(), lambda: cwrs.PA1Regressor()])
def test_one_row_regression_equals_the_general_path(make):
    fast, general = make(), make()
    for i in range(len(X)):
        fast.partial_fit(X[i : i + 1], Y_REGRESSION[i : i + 1])
        general.partial_fit(X[i : i + 1].tolist(), Y_REGRESSION[i : i + 1].tolist())
    _assert_same(fast, general)


@pytest.mark.parametrize(
    "row, label, error",
    [
        (np.full((1, 6), np.nan), "yes", "NaN"),
        (np.full((1, 6), np.inf), "yes", "NaN or infinity"),
        (X[:1], "maybe", "not in classes"),
        (np.zeros((1, 5)), "yes", "features"),
    ],
)
def test_one_row_path_rejects_bad_input_and_keeps_the_model(row, label, error):
    model = cwrs.AROW().partial_fit(X[:10], Y_BINARY[:10], classes=["no", "yes"])
    before = _state(model)
    with pytest.raises(ValueError, match=error):
        model.partial_fit(row, np.array([label]))
    _assert_equal(before, _state(model))


def test_one_row_path_rejects_a_non_finite_regression_target():
    model = cwrs.AROWRegressor().partial_fit(X[:10], Y_REGRESSION[:10])
    with pytest.raises(ValueError):
        model.partial_fit(X[:1], np.array([np.nan]))


def test_strided_and_non_native_rows_take_the_general_path():
    y = Y_BINARY
    reference = cwrs.AROW(shuffle=False).fit(X, y)
    model = cwrs.AROW().partial_fit(X[:1], y[:1], classes=["no", "yes"])
    wide = np.repeat(X, 2, axis=1)[:, ::2]  # same values, strided columns
    swapped = X.astype(">f8")  # big-endian float64
    for i in range(1, len(X)):
        source = wide if i % 2 else swapped
        model.partial_fit(source[i : i + 1], y[i : i + 1])
    np.testing.assert_array_equal(model.coef_, reference.coef_)


@pytest.mark.parametrize("n_components", [6, 9])
def test_random_features_never_take_the_one_row_path(n_components):
    # The one-row path feeds the row to the native model as is: with random Fourier features it
    # must not apply (it learned the raw row when n_components equalled n_features, and refused
    # valid rows otherwise).
    make = lambda: cwrs.AROW(  # noqa: E731
        kernel_approximation="rff", n_components=n_components, random_state=0
    )
    fast, general = make(), make()
    fast.partial_fit(X[:5], Y_BINARY[:5], classes=["no", "yes"])
    general.partial_fit(X[:5], Y_BINARY[:5], classes=["no", "yes"])
    for i in range(5, len(X)):
        fast.partial_fit(X[i : i + 1], Y_BINARY[i : i + 1])
        general.partial_fit(X[i : i + 1].tolist(), list(Y_BINARY[i : i + 1]))
    _assert_same(fast, general)


def test_set_params_turns_the_one_row_path_off_until_the_next_check():
    model = cwrs.AROW().partial_fit(X[:10], Y_BINARY[:10], classes=["no", "yes"])
    model.partial_fit(X[10:11], Y_BINARY[10:11])
    model.set_params(r=-1.0)
    with pytest.raises(ValueError, match="r must be a positive finite number"):
        model.partial_fit(X[11:12], Y_BINARY[11:12])
    model.set_params(r=1.0)
    reference = cwrs.AROW().partial_fit(X[:10], Y_BINARY[:10], classes=["no", "yes"])
    reference.partial_fit(X[10:11].tolist(), list(Y_BINARY[10:11]))
    for i in range(11, 20):
        model.partial_fit(X[i : i + 1], Y_BINARY[i : i + 1])
        reference.partial_fit(X[i : i + 1].tolist(), list(Y_BINARY[i : i + 1]))
    _assert_same(model, reference)
    assert "_one_row" in model.__dict__  # back on after the checked call
