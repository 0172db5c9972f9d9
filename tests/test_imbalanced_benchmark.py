"""What benchmarks/imbalanced.py states about its streams and weights, checked on its own
functions: the peers, whose "balanced" counts rows (scikit-learn's SGD) or who have none
(partial_fit, Vowpal Wabbit), get as sample_weight exactly the class weights cwrs's
class_weight="balanced" applies, with the sample weights counted per class (in `fit`, and in
one-row `partial_fit` calls with running counts), so that the comparison gives every learner the
same weights; a subsampled class weighted 1/rate gets the class weight of the full stream; and
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


@SETTINGS
@given(data=imbalanced_rows(zero_weights=False), weighted=st.booleans())
def test_fit_weights_are_scikit_learns_balanced(bench, data, weighted):
    from sklearn.utils.class_weight import compute_class_weight

    _, y, weight = data
    sample_weight = weight if weighted else None
    per_class = dict(zip([-1, 1], compute_class_weight(
        "balanced", classes=np.array([-1, 1]), y=y, sample_weight=sample_weight)))
    np.testing.assert_allclose(bench.fit_balanced_weights(y, sample_weight),
                               [per_class[label] for label in y], rtol=1e-14)


def test_running_weights_count_each_rows_sample_weight_before_it_is_weighted(bench):
    # After rows -1, -1, +1 the counts are 2 and 1 of N = 3: the +1 row weighs 3/(2·1).
    y = np.array([-1, -1, 1, -1])
    np.testing.assert_allclose(bench.running_balanced_weights(y),
                               [1 / 2, 2 / 4, 3 / 2, 4 / 6], rtol=1e-15)
    # Sample weights are counted, not rows: after 2, 0.5 and 1 the counts are 2.5 and 1 of
    # N = 3.5; a row of weight 0 adds nothing.
    np.testing.assert_allclose(
        bench.running_balanced_weights(y, np.array([2.0, 0.5, 1.0, 0.0])),
        [2 / 4, 2.5 / 5, 3.5 / 2, 3.5 / 5], rtol=1e-15)
    # A class counted 0 so far (its rows all weigh 0): class weight 0, not a division by 0.
    np.testing.assert_array_equal(
        bench.running_balanced_weights(np.array([1, -1]), np.array([0.0, 1.0])), [0.0, 0.5])


def test_subsampled_class_keeps_its_full_stream_class_weight(bench):
    # 1,000 negatives and 10 positives; a tenth of the negatives kept, weighted 10.
    y = np.array([1] * 10 + [-1] * 1000)
    kept = np.array([1] * 10 + [-1] * 100)
    weight = np.where(kept > 0, 1.0, 1 / bench.SUBSAMPLE_RATE)
    full, subsampled = bench.fit_balanced_weights(y), bench.fit_balanced_weights(kept, weight)
    for label in (-1, 1):
        assert subsampled[kept == label][0] == pytest.approx(full[y == label][0], rel=1e-12)


@SETTINGS
@given(data=imbalanced_rows(zero_weights=False))
def test_sklearn_balanced_is_its_class_weights_as_sample_weight(bench, data):
    # The sklearn peers get cwrs's class weights as sample_weight; without sample weights that
    # is scikit-learn's own class_weight="balanced", to the bit.
    from sklearn.linear_model import SGDClassifier

    X, y, _ = data
    params = dict(max_iter=3, tol=None, shuffle=True, random_state=0)
    own = SGDClassifier(class_weight="balanced", **params).fit(X, y)
    given_weights = SGDClassifier(**params).fit(X, y, sample_weight=bench.fit_balanced_weights(y))
    np.testing.assert_array_equal(own.coef_, given_weights.coef_)
    np.testing.assert_array_equal(own.intercept_, given_weights.intercept_)


@pytest.mark.parametrize(("cls", "params"), LEARNERS, ids=LEARNER_IDS)
@SETTINGS
@given(data=imbalanced_rows(zero_weights=False))
def test_balanced_fit_learns_what_the_peers_weights_teach(bench, cls, params, data):
    X, y, weight = data
    # The benchmark's shuffled passes: each pass counts its rows again, which scales every
    # count and N alike (up to rounding, hence assert_same_model's tolerance).
    passes = dict(n_iter=3, shuffle=True, random_state=0, **params)
    balanced = cls(class_weight="balanced", **passes).fit(X, y, sample_weight=weight)
    weighted = cls(**passes).fit(
        X, y, sample_weight=bench.combined(bench.fit_balanced_weights(y, weight), weight))
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
