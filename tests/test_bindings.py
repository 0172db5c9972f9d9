"""The native module's one buffer reader (crates/cwrs-python/src/python/convert.rs): rows, targets, indices and
state arrays are read in place when they are C-contiguous, aligned and of the native type, and
anything else is refused (or, for a state's arrays, copied) as before; the lean paths wait for a
busy model instead of giving up."""

import threading
import time

import numpy as np
import pytest

import cwrs
from cwrs import _cwrs

rng = np.random.default_rng(3)
X = rng.standard_normal((40, 5))
Y = np.where(X[:, 0] - X[:, 3] > 0, 1.0, -1.0)


def _fitted():
    return cwrs.AROW(shuffle=False).fit(X, Y)._model


def _csr(rows, index_type):
    indptr = np.arange(0, rows.size + 1, rows.shape[1]).astype(index_type)
    indices = np.tile(np.arange(rows.shape[1]), rows.shape[0]).astype(index_type)
    return rows.ravel(), indices, indptr, rows.shape[1]


@pytest.mark.parametrize("index_type", [np.int32, np.int64])
def test_csr_arrays_learn_and_predict_as_the_dense_rows(index_type):
    dense, sparse = _fitted(), _fitted()
    dense.partial_fit(X[:7], Y[:7])
    sparse.partial_fit(_csr(X[:7], index_type), Y[:7])
    np.testing.assert_array_equal(sparse.mean, dense.mean)
    rows = _csr(X[7:12], index_type)
    np.testing.assert_array_equal(sparse.decision_function(rows), dense.decision_function(X[7:12]))


def test_rows_and_targets_of_another_type_or_layout_are_refused():
    model = _fitted()
    for rows in (X.astype(np.float32), np.asfortranarray(X), X[::2], X.tolist(), X[0]):
        with pytest.raises(TypeError, match="C-contiguous float64 matrix or the CSR arrays"):
            model.decision_function(rows)
    mixed = (X.ravel(), np.arange(X.size, dtype=np.int32), np.arange(41, dtype=np.int64), 5)
    with pytest.raises(TypeError, match="CSR arrays"):
        model.partial_fit(mixed, Y)
    with pytest.raises(TypeError, match="1-D int64 array"):
        model.partial_fit(X, Y.astype(np.float32))  # neither float64 targets nor int64 classes
    with pytest.raises(TypeError, match="1-D float64 array"):
        model.partial_fit(X, Y, np.ones(40, dtype=np.int64))  # weights are float64
    with pytest.raises(TypeError, match="1-D float64 array"):
        _cwrs.margin_probabilities(np.zeros(2, dtype=np.float32), np.ones(2))


def test_a_state_with_strided_or_misaligned_arrays_loads_as_its_copy():
    model = _fitted()
    state = model.state()
    strided = dict(state, mean=np.repeat(state["mean"], 2)[::2])
    raw = np.zeros(state["mean"].size * 8 + 1, dtype=np.uint8)
    misaligned = np.frombuffer(raw.data, dtype=np.float64, count=state["mean"].size, offset=1)
    misaligned[...] = state["mean"]  # an odd offset: readable only after a copy
    assert not misaligned.flags.aligned
    for changed in (strided, dict(state, mean=misaligned)):
        loaded = _cwrs.Model.from_state(changed)
        np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))
    bad = dict(state, mean=np.ones((2, 3)))
    with pytest.raises(cwrs.InvalidModelStateError, match="must be a 1-D float64"):
        _cwrs.Model.from_state(bad)
    with pytest.raises(cwrs.InvalidParameterError, match="must be a 1-D float64"):
        _cwrs.Model(dict(model.config, mean=np.ones((2, 3))))


def test_lean_calls_wait_for_a_busy_model_and_then_see_its_update():
    d = 300  # full covariance: a batch of rows, learned and predicted detached
    wide = rng.standard_normal((3000, d))
    labels = np.where(wide[:, 0] > 0, 1.0, -1.0)
    estimator = cwrs.AROW(covariance="full").partial_fit(wide[:1], labels[:1], classes=[-1.0, 1.0])
    model = estimator._model
    started = threading.Event()

    def long_update():
        started.set()
        model.partial_fit(wide, labels)

    worker = threading.Thread(target=long_update)
    worker.start()
    started.wait()
    time.sleep(0.02)  # the update holds the model
    seen = model.decision_lean(wide[:3])  # waits for it rather than giving None
    worker.join()
    np.testing.assert_array_equal(seen, model.decision_function(wide[:3]))
    assert model.learn_lean(wide[:2], labels[:2], estimator._lean.targets, lambda: None) is True
    assert model.n_updates > 1
