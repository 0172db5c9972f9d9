"""Memory stays flat over long streams of one-row calls: no leak per call, in the native heap (the
process's resident size) or in Python objects (tracemalloc)."""

from __future__ import annotations

import gc
import os
import sys
import tracemalloc

import numpy as np
import pytest

import cwrs

pytestmark = pytest.mark.skipif(
    not os.path.exists("/proc/self/statm"), reason="reads the resident size from /proc"
)

CALLS = 1_000_000  # one-row partial_fit calls (about 2 µs each)
PREDICT_CALLS = 200_000  # one-row predictions (about 5 µs each)
RSS_BOUND = 1 << 20  # bytes: under one byte per partial_fit call
TRACED_CALLS = 20_000
TRACED_BOUND = 16 << 10  # bytes of Python objects still alive after TRACED_CALLS calls


def resident_bytes():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def fitted(name):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(20, 16))
    if name == "AROWRegressor":
        return cwrs.AROWRegressor().fit(X, X[:, 0]), X[:1], [0.5]
    labels = np.arange(20) % (3 if name == "multiclass" else 2)
    return cwrs.AROW().fit(X, labels), X[:1], [1]


def growth(call, n, warm_up=10_000):
    """Resident-size growth over `n` calls of `call`, after `warm_up` calls."""
    for _ in range(warm_up):
        call()
    gc.collect()
    before = resident_bytes()
    for _ in range(n):
        call()
    gc.collect()
    return resident_bytes() - before


def traced_growth(call, n=TRACED_CALLS):
    """Growth of the memory held by Python objects over `n` calls, after a warm-up."""
    tracemalloc.start()
    try:
        for _ in range(1000):
            call()
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(n):
            call()
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


@pytest.mark.skipif(sys.flags.dev_mode, reason="a million calls are slow in dev mode")
def test_a_million_one_row_partial_fits_keep_memory_flat():
    model, x, y = fitted("binary")
    learn = lambda: model.partial_fit(x, y)  # noqa: E731
    assert growth(learn, CALLS) < RSS_BOUND
    assert traced_growth(learn) < TRACED_BOUND
    assert model.n_features_in_ == 16


@pytest.mark.parametrize("name", ["multiclass", "AROWRegressor"])
def test_one_row_partial_fits_keep_memory_flat(name):
    model, x, y = fitted(name)
    learn = lambda: model.partial_fit(x, y)  # noqa: E731
    assert growth(learn, CALLS // 10) < RSS_BOUND
    assert traced_growth(learn) < TRACED_BOUND


@pytest.mark.parametrize("method", ["predict", "decision_function", "predict_proba"])
def test_one_row_predictions_keep_memory_flat(method):
    model, x, _ = fitted("binary")
    predict = lambda: getattr(model, method)(x)  # noqa: E731
    calls = PREDICT_CALLS if method == "predict" else PREDICT_CALLS // 10
    assert growth(predict, calls) < RSS_BOUND
    assert traced_growth(predict) < TRACED_BOUND
