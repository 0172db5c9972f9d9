"""Multiclass full covariance on the blocked path (docs/design.md §4.4): from d = 32 on
a class computes Σ₀x for the rows it is expected to prepare (every row for one-vs-rest; its
label's rows and those where it is the rival under the window's starting means for max-score)
in one pass over Σ₀. A row's product is the same bits alone or within a block, so a batch
must give exactly the state of the same rows learned one call at a time (which never plan
ahead), whatever the guesses, repeats or input format; and the row-by-row path is the
reference-checked one (tests/test_multiclass.py), checked here again at a width that blocks."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import cwrs
from test_multiclass import run_against_reference


def stream(n, d, K, seed):
    """Class-dependent rows (so the rival guess matters), some all-zero, some repeated."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, size=n)
    X = rng.normal(size=(K, d))[y] + rng.normal(size=(n, d))
    X[rng.random((n, d)) < 0.2] = 0.0
    X[rng.random(n) < 0.05] = 0.0
    for t in range(1, n, 7):
        X[t] = X[t - 1]
    return X, y


def state(model):
    return pickle.dumps(model._model.state())


@pytest.mark.parametrize("strategy", ["max-score", "ovr"])
@pytest.mark.parametrize("rule, d", [("AROW", 40), ("SCW1", 70), ("CW", 33)])
def test_a_batch_is_bit_identical_to_its_rows_one_call_at_a_time(strategy, rule, d):
    K = 5
    X, y = stream(150, d, K, seed=d)
    make = lambda: getattr(cwrs, rule)(covariance="full", multi_class=strategy)  # noqa: E731
    classes = np.arange(K)
    rows = make()
    for t in range(len(y)):
        rows.partial_fit(X[t : t + 1], y[t : t + 1], classes=classes)
    assert rows.n_updates_ > 40
    for batch in (X, sp.csr_matrix(X)):
        model = make().partial_fit(batch, y, classes=classes)
        assert state(model) == state(rows)
    # A weighted batch is its rows learned one at a time with their weights.
    weights = np.random.default_rng(1).integers(0, 3, size=len(y)) * 0.75
    model = make().partial_fit(X, y, classes=classes, sample_weight=weights)
    one = make()
    for t in range(len(y)):
        one.partial_fit(X[t : t + 1], y[t : t + 1], classes=classes, sample_weight=weights[t : t + 1])
    assert state(model) == state(one)


@pytest.mark.parametrize("strategy", ["max-score", "ovr"])
def test_matches_the_reference_at_a_blocking_width(strategy):
    X, y = stream(40, 36, 4, seed=5)

    @settings(max_examples=1, deadline=None)
    @given(st.just(None))
    def check(_):  # the reference's helper reports through hypothesis
        run_against_reference("AROW", "full", strategy, {}, 1.0, X, y, 4)

    check()
    batch = cwrs.AROW(covariance="full", multi_class=strategy).partial_fit(X, y, classes=np.arange(4))
    rows = cwrs.AROW(covariance="full", multi_class=strategy)
    for t in range(len(y)):
        rows.partial_fit(X[t : t + 1], y[t : t + 1], classes=np.arange(4))
    assert state(batch) == state(rows)
