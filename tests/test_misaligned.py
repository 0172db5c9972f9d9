"""Misaligned arrays (a buffer read at an odd offset, as `np.frombuffer(buf, offset=1)` gives,
or buffers unpickled out of band) are copied, not refused: every entry point learns and
predicts from them exactly as from the aligned array."""

import numpy as np
import pytest
import scipy.sparse as sp

import cwrs


def misaligned(array):
    """A copy of `array` whose data starts one byte past an aligned address."""
    array = np.ascontiguousarray(array)
    buffer = bytearray(array.nbytes + 1)
    out = np.frombuffer(buffer, dtype=array.dtype, offset=1, count=array.size)
    out = out.reshape(array.shape)
    out[...] = array
    assert not out.flags.aligned and out.flags.c_contiguous
    return out


@pytest.fixture
def data():
    rng = np.random.RandomState(0)
    X = rng.randn(60, 5)
    y = np.where(X @ rng.randn(5) > 0, 1.0, -1.0)
    return X, y


def same_model(a, b):
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)


@pytest.mark.parametrize("make", [cwrs.AROW, cwrs.AROWRegressor])
def test_fit_partial_fit_and_predict_take_misaligned_dense_arrays(make, data):
    X, y = data
    reference = make(random_state=0).fit(X, y)
    same_model(make(random_state=0).fit(misaligned(X), misaligned(y)), reference)
    np.testing.assert_array_equal(reference.predict(misaligned(X)), reference.predict(X))
    extra = {"classes": [-1.0, 1.0]} if make is cwrs.AROW else {}
    incremental = make(random_state=0).partial_fit(X[:30], y[:30], **extra)
    incremental.partial_fit(misaligned(X[30:]), misaligned(y[30:]))
    same_model(incremental, make(random_state=0).partial_fit(X, y, **extra))


@pytest.mark.parametrize("make", [cwrs.AROW, cwrs.AROWRegressor])
def test_one_row_partial_fit_takes_a_misaligned_row(make, data):
    X, y = data
    reference = make(random_state=0).fit(X[:-1], y[:-1])
    model = make(random_state=0).fit(X[:-1], y[:-1])
    reference.partial_fit(X[-1:], y[-1:])
    model.partial_fit(misaligned(X[-1:]), y[-1:])
    same_model(model, reference)


def test_misaligned_sparse_arrays(data):
    X, y = data
    X[np.abs(X) < 0.7] = 0.0
    csr = sp.csr_matrix(X)
    odd = sp.csr_matrix(
        (misaligned(csr.data), misaligned(csr.indices), misaligned(csr.indptr)), shape=csr.shape
    )
    reference = cwrs.AROW(random_state=0).fit(csr, y)
    same_model(cwrs.AROW(random_state=0).fit(odd, y), reference)
    np.testing.assert_array_equal(
        reference.decision_function(odd), reference.decision_function(csr)
    )
