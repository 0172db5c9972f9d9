"""A fresh model's first batch (`fit`, a first `partial_fit`) keeps no copy of the model to undo
it: a refused or interrupted one builds the model again (crates/cwrs/src/model/first_fit/mod.rs, docs/design.md
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


def _non_canonical(X):
    """X (CSR) with each row's entries reversed and its first entry split in two (a repeated
    index): the same matrix, not in canonical form."""
    data, indices, indptr = [], [], [0]
    for i in range(X.shape[0]):
        lo, hi = X.indptr[i], X.indptr[i + 1]
        row_data, row_indices = list(X.data[lo:hi][::-1]), list(X.indices[lo:hi][::-1])
        if row_data:
            row_data[-1] /= 2
            row_data.append(row_data[-1])
            row_indices.append(row_indices[-1])
        data += row_data
        indices += row_indices
        indptr.append(len(data))
    return sp.csr_matrix((np.array(data), np.array(indices), np.array(indptr)), shape=X.shape)


@pytest.mark.parametrize(
    "make",
    MAKERS
    + [
        lambda **kw: cwrs.AROW(kernel="rbf", **kw),
        lambda **kw: cwrs.AROW(kernel_approximation="rff", n_components=20, **kw),
    ],
)
@pytest.mark.parametrize(
    "options",
    [
        {"shuffle": False},
        {"n_iter": 2, "shuffle": True},
        {"n_jobs": 2, "shuffle": False},
        {"n_jobs": 2, "n_iter": 2, "shuffle": True},
    ],
)
@pytest.mark.filterwarnings("ignore:random_state")
def test_fit_of_a_non_canonical_csr_learns_its_canonical_form_and_draws_the_same_orders(
    make, options
):
    """`fit` leaves SciPy's format scan to the core's index check and retries on the canonical
    form when the core refuses: the same model, the same draws from a RandomState, and a bad
    value still refused with the estimator as it was."""
    if "n_jobs" in options and "kernel" in make().get_params():
        if make().kernel is not None:
            pytest.skip("a kernel learner cannot be sharded")
    X, y = _data(200)
    messy = _non_canonical(X)
    assert not messy.has_canonical_format
    messy = sp.csr_matrix((messy.data, messy.indices, messy.indptr), shape=messy.shape)
    states = [np.random.RandomState(3), np.random.RandomState(3)]
    learned = [
        make(random_state=state, **options).fit(matrix, _targets(make(), y))
        for state, matrix in zip(states, [X, messy])
    ]
    models = [repr(est.__getstate__()["_model"]) for est in learned]
    assert models[0] == models[1]
    assert np.array_equal(learned[0].predict(X), learned[1].predict(X))
    assert states[0].randint(1 << 30) == states[1].randint(1 << 30)
    before = repr(learned[1].__getstate__())
    bad = _non_canonical(_spoiled(X, 150))
    bad = sp.csr_matrix((bad.data, bad.indices, bad.indptr), shape=bad.shape)
    with pytest.raises(ValueError, match="Input X contains NaN or infinity"):
        learned[1].fit(bad, _targets(make(), y))
    assert repr(learned[1].__getstate__()) == before
