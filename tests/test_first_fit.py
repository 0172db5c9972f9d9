"""A fresh model's first batch (`fit`, a first `partial_fit`) keeps no copy of the model to undo
it: a refused or interrupted one builds the model again (src/first_fit.rs, docs/design.md
§3.5.1). Every refusal leaves the estimator as it was, with the error of validating first."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import cwrs

MAKERS = [
    lambda **kw: cwrs.AROW(covariance="diag", **kw),
    lambda **kw: cwrs.AROW(covariance="full", **kw),
    lambda **kw: cwrs.SCW1(multi_class="ovr", **kw),
    lambda **kw: cwrs.AROWRegressor(**kw),
]


def _data(n_rows, n_features=30, seed=0):
    rng = np.random.RandomState(seed)
    X = sp.random(n_rows, n_features, density=0.2, format="csr", random_state=rng)
    y = np.arange(n_rows) % 3
    return X, y


def _targets(est, y):
    return y.astype(float) if isinstance(est, cwrs.Regressor) else y


def _spoiled(X, row):
    """X with a NaN in row `row` (a row with stored entries)."""
    X = X.copy()
    X.data[X.indptr[row]] = np.nan
    return X


@pytest.mark.parametrize("make", MAKERS)
@pytest.mark.parametrize(
    "options",
    [{}, {"n_iter": 3}, {"n_iter": 2, "shuffle": True, "random_state": 0}, {"n_jobs": 2}],
)
def test_a_refused_refit_leaves_the_fitted_model_and_gives_the_validation_error(make, options):
    X, y = _data(60)
    est = make(**options).fit(X, _targets(make(), y))
    before = repr(est.__getstate__())
    last = max(i for i in range(60) if X.indptr[i + 1] > X.indptr[i])
    for bad in (_spoiled(X, 0), _spoiled(X, last)):
        with pytest.raises(ValueError, match="Input X contains NaN or infinity"):
            est.fit(bad, _targets(est, y))
        assert repr(est.__getstate__()) == before
    # A row of weight 0 is still validated.
    weights = np.ones(60)
    weights[last] = 0
    with pytest.raises(ValueError, match="Input X contains NaN or infinity"):
        est.fit(_spoiled(X, last), _targets(est, y), sample_weight=weights)
    assert repr(est.__getstate__()) == before


@pytest.mark.parametrize("make", MAKERS)
def test_a_refused_first_partial_fit_leaves_it_unfitted_and_the_next_learns_as_new(make):
    X, y = _data(60)
    est = make()
    classes = {} if isinstance(est, cwrs.Regressor) else {"classes": [0, 1, 2]}
    with pytest.raises(ValueError, match="Input X contains NaN or infinity"):
        est.partial_fit(_spoiled(X, 59), _targets(est, y), **classes)
    with pytest.raises(cwrs.NotFittedError):
        est.predict(X)
    est.partial_fit(X, _targets(est, y), **classes)
    new = make().partial_fit(X, _targets(est, y), **classes)
    assert repr(est.__getstate__()) == repr(new.__getstate__())


def test_a_batch_validated_ahead_refused_late_leaves_the_model():
    """Rows enough for a second core (where there is one) to validate ahead of the learner."""
    X, y = _data(9000)
    est = cwrs.AROW(shuffle=False).fit(X, y % 2)
    before = repr(est.__getstate__())
    with pytest.raises(ValueError, match="Input X contains NaN or infinity"):
        est.fit(_spoiled(X, 8999), y % 2)
    assert repr(est.__getstate__()) == before
    assert np.array_equal(est.coef_, cwrs.AROW(shuffle=False).fit(X, y % 2).coef_)


def test_a_fresh_batch_validated_chunk_by_chunk_learns_the_same_and_refuses_late_rows():
    """Wide rows (about 100 stored entries): a fresh model's batch is validated a chunk of
    ~650 rows at a time, each just before it is learned (fewer rows than a second core would
    validate ahead). The same bits as a model that validates first, and a bad row in the last
    chunk leaves the estimator as it was."""
    rng = np.random.RandomState(1)
    X = sp.random(3000, 2000, density=0.05, format="csr", random_state=rng)
    y = (X @ rng.standard_normal(2000) > 0).astype(int)
    est = cwrs.AROW(covariance="diag", shuffle=False).fit(X, y)
    # Row 0, then the model restored (not fresh: it validates a batch before learning it).
    validating = cwrs.AROW(covariance="diag").partial_fit(X[:1], y[:1], classes=[0, 1])
    validating = pickle.loads(pickle.dumps(validating)).partial_fit(X[1:], y[1:])
    assert np.array_equal(est.coef_, validating.coef_)
    before = repr(est.__getstate__())
    with pytest.raises(ValueError, match="Input X contains NaN or infinity"):
        est.fit(_spoiled(X, 2990), y)
    assert repr(est.__getstate__()) == before
