"""What benchmarks/imbalanced.py states about its streams and weights, checked on its own
functions: the peers, which have no "balanced" in partial_fit, get as sample_weight exactly the
class weights cwrs's class_weight="balanced" applies (in `fit`, and in one-row `partial_fit`
calls with running counts), so that the comparison gives every learner the same weights; and
the subsampled stream keeps every positive with weight 1 and weights the kept negatives 10."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cwrs
from _cwtest_util import examples

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "imbalanced.py"
SETTINGS = settings(max_examples=examples(20), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])
# The benchmark's cwrs learners (diagonal covariance, and AROW's full form).
LEARNERS = [(cwrs.AROW, {}), (cwrs.SCW1, {}), (cwrs.SCW2, {}), (cwrs.NHERD, {}), (cwrs.CW, {}),
            (cwrs.AROW, {"covariance": "full"})]
LEARNER_IDS = ["AROW", "SCW1", "SCW2", "NHERD", "CW", "AROW-full"]


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("imbalanced", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@st.composite
def imbalanced_rows(draw, zero_weights):
    """A few rows, both classes present with few positives, and positive sample weights (some
    zero if `zero_weights`, never all the rows of a class in `fit`'s case)."""
    seed = draw(st.integers(0, 2**32 - 1))
    n_rows = draw(st.integers(4, 30))
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n_rows) < draw(st.floats(0.05, 0.4)), 1, -1)
    y[rng.choice(n_rows, 2, replace=False)] = [1, -1]
    X = rng.normal(size=(n_rows, 4))
    weight = rng.uniform(0.1, 3.0, n_rows)
    if zero_weights:
        weight[rng.random(n_rows) < 0.2] = 0.0
    return X, y, weight


def assert_same_model(a, b):
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(a.intercept_, b.intercept_, rtol=1e-12, atol=1e-12)


def test_fit_weights_are_scikit_learns_balanced(bench):
    from sklearn.utils.class_weight import compute_class_weight

    y = np.array([1, -1, -1, -1, 1, -1, -1, -1, -1, -1, -1])
    per_class = dict(zip([-1, 1], compute_class_weight("balanced", classes=np.array([-1, 1]), y=y)))
    np.testing.assert_allclose(bench.fit_balanced_weights(y), [per_class[label] for label in y],
                               rtol=1e-15)


def test_running_weights_count_each_row_before_it_is_weighted(bench):
    # After rows -1, -1, +1 the counts are 2 and 1 of N = 3: the +1 row weighs 3/(2·1).
    y = np.array([-1, -1, 1, -1])
    np.testing.assert_allclose(bench.running_balanced_weights(y),
                               [1 / 2, 2 / 4, 3 / 2, 4 / 6], rtol=1e-15)
    # A row of weight 0 is not counted (it is skipped, as cwrs skips it).
    np.testing.assert_allclose(bench.running_balanced_weights(y, np.array([1.0, 0.0, 1.0, 1.0]))
                               [[0, 2, 3]], [1 / 2, 2 / 2, 3 / 4], rtol=1e-15)


@pytest.mark.parametrize(("cls", "params"), LEARNERS, ids=LEARNER_IDS)
@SETTINGS
@given(data=imbalanced_rows(zero_weights=False))
def test_balanced_fit_learns_what_the_peers_weights_teach(bench, cls, params, data):
    X, y, weight = data
    balanced = cls(class_weight="balanced", shuffle=False, **params).fit(X, y, sample_weight=weight)
    weighted = cls(shuffle=False, **params).fit(
        X, y, sample_weight=weight * bench.fit_balanced_weights(y))
    assert_same_model(balanced, weighted)


@pytest.mark.parametrize(("cls", "params"), LEARNERS, ids=LEARNER_IDS)
@SETTINGS
@given(data=imbalanced_rows(zero_weights=True))
def test_balanced_one_row_calls_learn_what_the_peers_running_weights_teach(
    bench, cls, params, data
):
    X, y, weight = data
    running = bench.combined(bench.running_balanced_weights(y, weight), weight)
    balanced = cls(class_weight="balanced", **params)
    weighted = cls(**params)
    for i in range(len(y)):
        rows = slice(i, i + 1)
        balanced.partial_fit(X[rows], y[rows], classes=[-1, 1], sample_weight=weight[rows])
        weighted.partial_fit(X[rows], y[rows], classes=[-1, 1], sample_weight=running[rows])
    assert_same_model(balanced, weighted)


def test_subsampled_stream_keeps_the_positives_and_weights_the_negatives(bench):
    X, y, _ = bench.synthetic(seed=3, n_rows=20_000)
    assert np.mean(y > 0) == pytest.approx(bench.POSITIVE_RATE, abs=1e-4)
    Xs, ys, weight = bench.subsample(X, y, seed=3)
    assert (ys > 0).sum() == (y > 0).sum()
    np.testing.assert_array_equal(weight, np.where(ys > 0, 1.0, 1 / bench.SUBSAMPLE_RATE))
    # The kept rows in stream order, about a tenth of the negatives.
    kept = [np.flatnonzero((X == row).all(axis=1))[0] for row in Xs[:50]]
    assert kept == sorted(kept)
    assert (ys < 0).sum() == pytest.approx(bench.SUBSAMPLE_RATE * (y < 0).sum(), rel=0.1)
