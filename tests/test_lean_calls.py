"""The lean call paths (`_cwrs.Model.decision_lean`, `proba_lean`, `predict_lean`,
`learn_lean` reading labels from their buffer) give what the checked paths give, fall back to
them for anything unusual, and keep the checks: overflow, subclass overrides, hyper-parameters
assigned directly."""

import numpy as np
import pytest

import cwrs

rng = np.random.default_rng(11)
X = rng.standard_normal((80, 7))
Y_BINARY = np.where(X[:, 0] - 0.5 * X[:, 2] > 0, 3, -2)
Y_MULTI = np.array([-1.0, 2.0, 7.0])[np.argmax(X[:, :3], axis=1)]


def _checked(rows):
    """The same rows, as the lean paths never take them (a list: the checked path)."""
    return rows.tolist()


@pytest.mark.parametrize("y", [Y_BINARY, Y_MULTI], ids=["binary", "multiclass"])
@pytest.mark.parametrize("covariance", ["diag", "full"])
def test_lean_predictions_are_fresh_arrays_equal_to_the_checked_ones(y, covariance):
    model = cwrs.AROW(covariance=covariance).fit(X, y)
    n_classes = len(np.unique(y))
    for rows in (X[:1], X[5:9], X[10:74]):
        for method in ("decision_function", "predict", "predict_proba"):
            lean, again = getattr(model, method)(rows), getattr(model, method)(rows)
            checked = getattr(model, method)(_checked(rows))
            np.testing.assert_array_equal(lean, checked)
            assert lean.dtype == checked.dtype and lean.shape == checked.shape
            assert lean.flags.writeable and lean.flags.c_contiguous
            lean[...] = 0  # a fresh array per call: writing to it changes nothing else
            np.testing.assert_array_equal(again, checked)
    assert model.decision_function(X[:1]).shape == ((1,) if n_classes == 2 else (1, n_classes))
    assert model.predict_proba(X[:1]).shape == (1, n_classes)
    assert model.predict(X[:1]).dtype == model.classes_.dtype


def test_lean_paths_fall_back_for_what_they_do_not_take():
    model = cwrs.AROW().fit(X, Y_BINARY)
    lean = model._lean
    rows = X[:3]
    unusual = [
        rows.astype(">f8"),  # another byte order
        np.asfortranarray(rows),
        X[:6:2],  # strided rows
        rows.astype(np.float32),
        rows.view(np.matrix),  # a subclass
        np.repeat(rows, 30, axis=0),  # more than a few rows
        rows[:, :5].copy(),  # another width
    ]
    for x in unusual:
        assert lean.decision(x) is None and lean.proba(x) is None
        assert lean.predict(x, lean.classes, lean.class_rows) is None
    for x in unusual[:-1]:
        np.testing.assert_array_equal(
            model.decision_function(x), model.decision_function(np.asarray(x, dtype=float).tolist())
        )
    with pytest.raises(ValueError, match="features"):
        model.predict(rows[:, :5].copy())
    bad = rows.copy()
    bad[1, 2] = np.nan
    for method in (model.decision_function, model.predict, model.predict_proba):
        with pytest.raises(ValueError, match="NaN or infinity"):
            method(bad)


def test_overflowing_scores_on_the_lean_path_raise_as_on_the_checked_one():
    model = cwrs.AROW(r=1e-4, shuffle=False).fit(X / 100, Y_BINARY)  # weights of |w| > 40
    w = model.coef_[0]
    j, k = np.argsort(-np.abs(w))[:2]  # the two largest weights
    assert abs(w[j]) > 1 and abs(w[k]) > 1
    row = np.zeros((1, X.shape[1]))
    row[0, j], row[0, k] = 1.7e308 * np.sign(w[j]), -1.7e308 * np.sign(w[k])  # inf − inf
    assert model._lean.decision(row) is None  # refused by the lean path ...
    with pytest.raises(ValueError, match="decision_function overflows on row 0"):
        model.decision_function(row)  # ... and reported by the checked one
    with pytest.raises(ValueError, match="decision_function overflows on row 0"):
        model.predict(row)
    with pytest.raises(ValueError, match="predict_proba overflows"):
        model.predict_proba(row)


def test_predict_goes_through_an_overridden_decision_function():
    class Flipped(cwrs.AROW):
        def decision_function(self, X):
            return -super().decision_function(X)

    model, plain = Flipped().fit(X, Y_BINARY), cwrs.AROW().fit(X, Y_BINARY)
    for rows in (X[:1], X[:4]):
        np.testing.assert_array_equal(model.predict(rows), np.where(plain.predict(rows) == 3, -2, 3))


@pytest.mark.parametrize(
    "labels",
    [
        lambda y: y.astype(np.int64),
        lambda y: y.astype(np.float64),
        lambda y: np.repeat(y.astype(np.int64), 2)[::2],  # strided
        lambda y: y.astype(np.int32),  # through tolist
        lambda y: list(y),
    ],
)
def test_labels_read_from_their_buffer_learn_as_the_checked_path(labels):
    classes = np.unique(Y_BINARY)
    fast = cwrs.AROW().partial_fit(X[:1], Y_BINARY[:1], classes=classes)
    checked = cwrs.AROW().partial_fit(X[:1], Y_BINARY[:1], classes=classes)
    for start, size in ((1, 1), (2, 3), (5, 2), (7, 1)):
        rows, y = X[start : start + size], Y_BINARY[start : start + size]
        fast.partial_fit(rows, labels(y))
        checked.partial_fit(rows.tolist(), y.tolist())
    np.testing.assert_array_equal(fast._model.mean, checked._model.mean)
    np.testing.assert_array_equal(fast._model.covariance, checked._model.covariance)
    native, targets = fast._model, fast._lean.targets
    for refused in (np.array([3.0, np.nan]), np.array([3, 4]), np.array([[3], [-2]])):
        assert native.learn_lean(X[:2], refused, targets, fast._check_params_if_changed) is False


def test_a_regressor_takes_float_targets_from_their_buffer():
    y = X @ np.arange(7.0)
    fast, checked = cwrs.AROWRegressor(), cwrs.AROWRegressor()
    for start in range(0, 12, 3):
        fast.partial_fit(X[start : start + 3], y[start : start + 3])
        checked.partial_fit(X[start : start + 3].tolist(), y[start : start + 3].tolist())
    np.testing.assert_array_equal(fast._model.mean, checked._model.mean)
    np.testing.assert_array_equal(fast.predict(X[:2]), checked.predict(X[:2].tolist()))
    check = fast._check_params_if_changed
    assert fast._model.learn_lean(X[:2], np.array([1.0, np.inf]), None, check) is False
    assert fast._model.learn_lean(X[:2], np.array([True, False]), None, check) is False


def test_hyper_parameters_are_checked_once_per_assignment(monkeypatch):
    model = cwrs.AROW().partial_fit(X[:4], Y_BINARY[:4], classes=[-2, 3])
    calls = []
    check = type(model)._check_params
    monkeypatch.setattr(type(model), "_check_params", lambda self: calls.append(1) or check(self))
    for start in range(4, 12, 2):
        model.partial_fit(X[start : start + 2], Y_BINARY[start : start + 2])
    assert calls == []  # validated at the first call, nothing assigned since
    model.r = -1.0  # assigned directly, not through set_params: the next batch refuses it
    with pytest.raises(ValueError, match="r must be a positive finite number"):
        model.partial_fit(X[12:14], Y_BINARY[12:14])
    model.r = 2.0
    model.partial_fit(X[12:14], Y_BINARY[12:14])
    model.partial_fit(X[14:16], Y_BINARY[14:16])
    assert len(calls) == 2  # once per assignment


@pytest.mark.parametrize("labels", [[0, 1], ["ham", "spam"], [-1.0, 2.0, 7.0]])
def test_classes_repeated_on_every_call_learn_as_without_them(labels):
    """A stream passes the same `classes=` on every call: listed in order (a list, tuple or
    array) it is recognised without NumPy's sorting, and every other form is still checked."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(60, 4))
    y = np.asarray(labels, dtype=object)[rng.integers(0, len(labels), 60)].tolist()
    with_classes, without = cwrs.AROW(), cwrs.AROW()
    with_classes.partial_fit(X[:10], y[:10], classes=labels)
    without.partial_fit(X[:10], y[:10], classes=labels)
    forms = [list(labels), tuple(labels), np.array(labels), list(reversed(labels)), labels * 2]
    for i in range(10, 60):
        with_classes.partial_fit(X[i : i + 1], y[i : i + 1], classes=forms[i % len(forms)])
        without.partial_fit(X[i : i + 1], y[i : i + 1])
    np.testing.assert_array_equal(with_classes.decision_function(X), without.decision_function(X))
    for other in (labels[:-1], list(labels) + [labels[-1] * 3]):
        with pytest.raises(ValueError, match="is not the same as on the first call"):
            with_classes.partial_fit(X[:1], y[:1], classes=other)
