"""The native model's whole-model operations as the river adapter and the Dask driver call them:
`Model.widened`, `as_one_vs_rest`, `with_prior_class`, and `delta_since` / `from_delta` (a
picklable dict that rebuilds the model bit for bit, from its base or from scratch)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import cwrs
from cwrs import _cwrs


def _same_state(got: dict, expected: dict) -> None:
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        if isinstance(value, np.ndarray):
            assert got[key].dtype == value.dtype and got[key].tobytes() == value.tobytes(), key
        else:
            assert repr(got[key]) == repr(value), key


def _sparse_rows(rng, n_rows, n_features, used):
    X = np.zeros((n_rows, n_features))
    X[:, :used] = rng.normal(size=(n_rows, used))
    return X


# (estimator, classes: None for a regressor, whether its delta is the touched coordinates:
# the diagonal form without process noise, whose every array holds one value per coordinate)
CASES = [
    (lambda: cwrs.AROW(), 2, True),
    (lambda: cwrs.AROW(), 3, True),
    (lambda: cwrs.AROW(average=True), 3, True),
    (lambda: cwrs.AROW(covariance="full"), 2, False),
    (lambda: cwrs.AROW(covariance="full"), 3, False),
    (lambda: cwrs.AROW(covariance="lowrank", rank=2), 3, False),
    (lambda: cwrs.AROW(process_noise=0.01), 2, False),
    (lambda: cwrs.PA1(), 3, False),  # the identity form: an empty covariance
    (lambda: cwrs.AROWRegressor(), None, True),
]


@pytest.mark.parametrize("make, n_classes, touched", CASES)
def test_a_delta_rebuilds_the_model_bit_for_bit_from_its_base_or_from_scratch(
    make, n_classes, touched
):
    rng = np.random.default_rng(3)
    estimator = make()
    X = _sparse_rows(rng, 40, 50, 3)
    if n_classes is None:
        y, fit_args = X[:, 0], {}
    else:
        y = np.arange(40) % n_classes
        fit_args = {"classes": np.unique(y)}
    estimator.partial_fit(X[:20], y[:20], **fit_args)
    fresh = _cwrs.Model(estimator._model.config)
    base = estimator._model.copy()
    estimator.partial_fit(X[20:], y[20:])
    end = estimator._model
    for start, from_ in [(base, base), (fresh, None)]:
        delta = pickle.loads(pickle.dumps(end.delta_since(start)))
        assert ("delta_touched" in delta) == touched
        _same_state(_cwrs.Model.from_delta(delta, from_).state(), end.state())


def test_the_operations_refuse_what_they_cannot_do_leaving_the_model_as_it_is():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(10, 4))
    binary = cwrs.AROW().partial_fit(X, np.arange(10) % 2, classes=[0, 1])._model
    before = binary.state()
    with pytest.raises(ValueError, match="widening only adds features"):
        binary.widened(3, 1.0)
    with pytest.raises(ValueError, match="only a one-vs-rest model grows by a class"):
        binary.with_prior_class(1.0)
    with pytest.raises(ValueError, match="unseen_variance must be a positive finite number"):
        binary.widened(8, float("nan"))
    _same_state(binary.state(), before)
    multiclass = cwrs.AROW().partial_fit(X, np.arange(10) % 3, classes=[0, 1, 2])._model
    with pytest.raises(ValueError, match="only a binary model becomes a one-vs-rest model"):
        multiclass.as_one_vs_rest()
    with pytest.raises(ValueError, match="only a one-vs-rest model grows by a class"):
        multiclass.with_prior_class(1.0)  # max-score
    with pytest.raises(ValueError, match="prior_variance must be a positive finite number"):
        binary.as_one_vs_rest().with_prior_class(0.0)
    # A width no memory holds: refused before anything is allocated, not an abort.
    with pytest.raises(MemoryError):
        binary.widened(2**45, 1.0)
    full = cwrs.AROW(covariance="full").partial_fit(X, np.arange(10) % 2, classes=[0, 1])._model
    with pytest.raises(MemoryError):
        full.widened(2**24, 1.0)
    with pytest.raises(ValueError, match="features \\(at most"):
        binary.widened(2**62, 1.0)
    _same_state(binary.state(), before)
    kernel = cwrs.AROW(kernel="rbf").partial_fit(X, np.arange(10) % 2, classes=[0, 1])._model
    with pytest.raises(ValueError, match="cannot widen a kernel model"):
        kernel.widened(8, 1.0)
    delta = binary.delta_since(binary)
    delta["delta_touched"] = np.array([999], dtype=np.uint64)
    delta["mean"] = np.array([1.0])
    with pytest.raises(cwrs.InvalidModelStateError, match="does not fit its base"):
        _cwrs.Model.from_delta(delta, binary)


def test_widening_and_a_new_class_give_new_models_with_the_prior():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 3))
    model = cwrs.AROW(a=0.5).partial_fit(X, np.arange(30) % 2, classes=[0, 1])._model
    wide = model.widened(5, 0.5)
    assert model.state()["n_features"] == 3 and wide.state()["n_features"] == 5
    rows = np.hstack([X, np.ones((30, 2))])
    extra = 0.5 * 2  # the two new features at variance a, value 1
    np.testing.assert_allclose(wide.variance(rows), model.variance(X) + extra, rtol=1e-12)
    np.testing.assert_allclose(wide.decision_function(rows), model.decision_function(X))
    ovr = model.as_one_vs_rest().with_prior_class(0.5)
    assert (ovr.kind, ovr.n_classes) == ("multiclass", 3)
    scores = ovr.decision_function(X)
    np.testing.assert_allclose(scores[:, 1], model.decision_function(X))
    np.testing.assert_allclose(scores[:, 0], -model.decision_function(X))
    np.testing.assert_array_equal(scores[:, 2], 0.0)
