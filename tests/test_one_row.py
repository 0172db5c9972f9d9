"""The one-row path of `partial_fit` (one float64 C-ordered row of a fitted primal model) gives
exactly what the general path gives, and rejects what the general path rejects."""

import numpy as np
import pytest

import cwrs

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


def _started_pair(make, y):
    """Two estimators of `make()` after the same first row of the labels `y`."""
    classes = np.unique(y)
    return tuple(make().partial_fit(X[:1], y[:1], classes=classes) for _ in range(2))


@pytest.mark.parametrize("make", CLASSIFIERS)
@pytest.mark.parametrize("y", [Y_BINARY, Y_MULTI], ids=["binary", "multiclass"])
def test_one_row_path_equals_the_general_path(make, y):
    fast, general = _started_pair(make, y)
    probe = make().partial_fit(X[:1], y[:1], classes=np.unique(y))
    assert probe._model.learn_lean(X[1:2], y[1:2], probe._lean.targets, None)  # lean path applies
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
    assert "_lean" in model.__dict__  # back on after the checked call


# ----------------------------------------------------------------------------- a few rows
@pytest.mark.parametrize("make", CLASSIFIERS)
@pytest.mark.parametrize("y", [Y_BINARY, Y_MULTI], ids=["binary", "multiclass"])
def test_few_rows_path_equals_the_general_path(make, y):
    fast, general = _started_pair(make, y)
    start = 1
    for size in (2, 3, 7, 1, 5, 2, 11):  # batches of a few rows, as a stream sends them
        rows, labels = X[start : start + size], y[start : start + size]
        fast.partial_fit(rows, list(labels) if size % 2 else labels)
        general.partial_fit(rows.tolist(), list(labels))
        start += size
    _assert_same(fast, general)


@pytest.mark.parametrize("make", [lambda: cwrs.AROWRegressor(), lambda: cwrs.PA1Regressor()])
def test_few_rows_regression_equals_the_general_path(make):
    fast, general = make(), make()
    fast.partial_fit(X[:1], Y_REGRESSION[:1])
    general.partial_fit(X[:1], Y_REGRESSION[:1])
    for start in range(1, len(X) - 3, 3):
        rows, targets = X[start : start + 3], Y_REGRESSION[start : start + 3]
        fast.partial_fit(rows, targets)
        general.partial_fit(rows.tolist(), targets.tolist())
    _assert_same(fast, general)


def test_learn_lean_takes_only_what_it_can_learn_as_the_checked_path_would():
    model = cwrs.AROW().partial_fit(X[:10], Y_BINARY[:10], classes=["no", "yes"])
    native, targets = model._model, model._lean.targets
    before = _state(model)
    refused = [
        (X[:3].tolist(), Y_BINARY[:3]),  # not an array
        (np.asfortranarray(X[:3]), Y_BINARY[:3]),  # not C-contiguous
        (X[:3, :5].copy(), Y_BINARY[:3]),  # another width
        (X[:3].astype(np.float32), Y_BINARY[:3]),  # another type
        (np.repeat(X[:1], 65, axis=0), np.repeat(Y_BINARY[:1], 65)),  # more than a few rows
        (X[:3], Y_BINARY[:2]),  # a label missing
        (X[:3], Y_BINARY[:3, None]),  # labels as a column
        (X[:3], np.array(["no", "maybe", "yes"])),  # an unknown label
        (X[:2], [["no"], ["yes"]]),  # unhashable labels
    ]
    for rows, labels in refused:
        assert native.learn_lean(rows, labels, targets, model._check_params_if_changed) is False
    _assert_equal(before, _state(model))
    regressor = cwrs.AROWRegressor().partial_fit(X[:10], Y_REGRESSION[:10])
    check = regressor._check_params_if_changed
    for targets in ([1.0, np.nan], [1.0, np.inf], [True, 1.0], ["1", 2.0]):
        assert regressor._model.learn_lean(X[:2], targets, None, check) is False
    assert regressor._model.learn_lean(X[:2], [1, 2.5], None, check) is True


def test_few_rows_path_refuses_a_bad_row_and_keeps_the_model():
    model = cwrs.AROW().partial_fit(X[:10], Y_BINARY[:10], classes=["no", "yes"])
    before = _state(model)
    rows = X[10:13].copy()
    rows[2, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        model.partial_fit(rows, Y_BINARY[10:13])
    _assert_equal(before, _state(model))  # all or nothing: the first two rows are not learned


@pytest.mark.parametrize("make", CLASSIFIERS)
@pytest.mark.parametrize("y", [Y_BINARY, Y_MULTI], ids=["binary", "multiclass"])
def test_lean_predictions_equal_the_checked_ones(make, y):
    model = make().fit(X, y)
    assert "_lean" in model.__dict__
    for rows in (X[:1], X[3:5], X):
        checked = np.asfortranarray(rows) if rows.shape[0] > 1 else rows.tolist()
        for method in ("decision_function", "predict"):
            lean, general = getattr(model, method)(rows), getattr(model, method)(checked)
            np.testing.assert_array_equal(lean, general)
        if hasattr(model, "predict_proba"):
            np.testing.assert_array_equal(model.predict_proba(rows), model.predict_proba(checked))
    with pytest.raises(ValueError, match="features"):
        model.decision_function(X[:2, :5].copy())
