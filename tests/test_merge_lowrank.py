"""Merging low-rank models (docs/design.md §9.7): `cwrs.merge` and `n_jobs` for
covariance="lowrank". A slow NumPy reference of the information merge written from the math
(dense precisions, Frequent Directions by a dense eigen-decomposition), the invariants (the
full form's merge while the stacked sketches fit in 2k rows; never more precision than the
stacked data, within the Frequent Directions bound; the diagonal of the exact merge), merge =
sequential for the AROW regressor, n_jobs, refusals and unchanged inputs."""

import pickle

import numpy as np
import pytest

import cwrs

METHODS = ("information", "precision", "average")


def correlated(n, d, seed, factors=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, factors)) @ rng.normal(size=(factors, d)) + 0.1 * rng.normal(size=(n, d))
    return X, X @ rng.normal(size=d), np.where(X @ rng.normal(size=d) > 0, 1, -1)


def copy(model):
    return pickle.loads(pickle.dumps(model))


def shards_of(base, X, y, bounds):
    return [copy(base).partial_fit(X[lo:hi], y[lo:hi]) for lo, hi in bounds]


def factors(model):
    """(S, B) of a binary or regression model over its coordinates, the bias last."""
    state = model._model.state()
    values = state["covariance_values"].reshape(-1, len(state["mean"]))
    return values[0], values[1:]


def precision(model):
    S, B = factors(model)
    return np.diag(1 / S) + B.T @ B


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("kind", ["regressor", "binary", "ovr", "max-score"])
def test_equals_the_full_forms_merge_while_the_stacked_sketches_fit(method, kind):
    """Base and shards' updates together at most 2k: nothing is dropped, so every method gives
    the full form's merge (mean and Σ, to 1e-9)."""
    X, target, labels = correlated(40, 6, seed=1)
    rank = 6 if kind in ("ovr", "max-score") else 4
    bounds = [(2, 5), (5, 8)]
    if kind == "regressor":
        make = lambda **kw: cwrs.AROWRegressor(shuffle=False, **kw)  # noqa: E731
        y, fit = target, {}
    else:
        strategy = {} if kind == "binary" else {"multi_class": kind}
        make = lambda **kw: cwrs.AROW(shuffle=False, **strategy, **kw)  # noqa: E731
        y = labels if kind == "binary" else np.digitize(target, np.quantile(target, [0.33, 0.66]))
        fit = {"classes": np.unique(y)}
    merged = {}
    for form in ("full", "lowrank"):
        params = {"rank": rank} if form == "lowrank" else {}
        base = make(covariance=form, **params).partial_fit(X[:2], y[:2], **fit)
        shards = shards_of(base, X, y, bounds)
        merged[form] = cwrs.merge(shards, base=base, method=method)
    full, low = merged["full"], merged["lowrank"]
    assert low.n_updates_ == full.n_updates_ and 0 < low.n_updates_
    np.testing.assert_allclose(low.coef_, full.coef_, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(low.intercept_, full.intercept_, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(low.covariance_matrix(), full.covariance_matrix(), atol=1e-9)


def test_information_merge_equals_sequential_for_the_arow_regressor_while_it_fits():
    X, target, _ = correlated(20, 7, seed=2)
    make = lambda: cwrs.AROWRegressor(covariance="lowrank", rank=4, shuffle=False)  # noqa: E731
    base = make().fit(X[:2], target[:2])
    merged = cwrs.merge(shards_of(base, X, target, [(2, 4), (4, 6), (6, 8)]), base=base)
    sequential = make().fit(X[:8], target[:8])
    np.testing.assert_allclose(merged.coef_, sequential.coef_, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(merged.covariance_matrix(), sequential.covariance_matrix(), atol=1e-10)


def reference_information_merge(base, shards, a, rank):
    """The information merge from the math, dense: D = D₀ + Σₖ(Dₖ − D₀), G = B₀ᵀB₀ +
    Σₖ(BₖᵀBₖ − B₀ᵀB₀), η = η₀ + Σₖ(Λₖμₖ − Λ₀μ₀); Frequent Directions on G in the metric S =
    1/D (keep the 2k largest positive eigenvalues of S^½GS^½, less the (2k+1)-th if positive),
    what is dropped from each coordinate added to D (at least D₀); μ = Λ⁻¹η."""

    def parts(model):
        S, B = factors(model)
        return 1 / S, B.T @ B, model._model.state()["mean"]

    if base is None:
        dim = len(shards[0]._model.state()["mean"])
        D0, G0, mu0 = np.full(dim, 1 / a), np.zeros((dim, dim)), np.zeros(dim)
    else:
        D0, G0, mu0 = parts(base)
    D, G = D0.copy(), G0.copy()
    eta = (np.diag(D0) + G0) @ mu0
    for model in shards:
        Dk, Gk, muk = parts(model)
        D, G = D + Dk - D0, G + Gk - G0
        eta += (np.diag(Dk) + Gk) @ muk - (np.diag(D0) + G0) @ mu0
    root = np.sqrt(1 / D)
    values, vectors = np.linalg.eigh(root[:, None] * G * root[None, :])
    values, vectors = values[::-1], vectors[:, ::-1]
    positive = int((values > 1e-12 * values[0]).sum())
    delta = values[2 * rank] if positive > 2 * rank else 0.0
    kept = min(positive, 2 * rank)
    shrunk = (vectors[:, :kept] * np.maximum(values[:kept] - delta, 0)) @ vectors[:, :kept].T
    sketch = shrunk / root[:, None] / root[None, :]
    D = np.maximum(D + np.diag(G) - np.diag(sketch), D0)
    Lambda = np.diag(D) + sketch
    return Lambda, np.linalg.solve(Lambda, eta)


@pytest.mark.parametrize("seed", [3, 4])
@pytest.mark.parametrize("from_prior", [True, False])
def test_information_merge_beyond_the_sketch_matches_the_numpy_reference(seed, from_prior):
    """Shards that shrank their sketches many times, from the prior or a learned base."""
    X, target, _ = correlated(300, 9, seed=seed, factors=5)
    a, rank = 1.0, 2
    make = lambda: cwrs.AROWRegressor(covariance="lowrank", rank=rank, shuffle=False)  # noqa: E731
    if from_prior:
        base = None
        shards = [make().fit(X[lo:hi], target[lo:hi]) for lo, hi in [(0, 140), (140, 300)]]
    else:
        base = make().fit(X[:30], target[:30])
        shards = shards_of(base, X, target, [(30, 160), (160, 300)])
    merged = cwrs.merge(shards, base=base)
    Lambda, mu = reference_information_merge(base, shards, a, rank)
    scale = np.abs(Lambda).max()
    np.testing.assert_allclose(precision(merged), Lambda, atol=1e-9 * scale)
    np.testing.assert_allclose(merged._model.state()["mean"], mu, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("seed", [5, 6, 7])
def test_merged_sketch_never_over_counts_and_stays_within_the_bound(seed):
    """Regressor shards from the prior: their rows x/√r are the stacked data A. The merged
    sketch counts no more than AᵀA (BᵀB ⪯ AᵀA: each sketch and the merge only drop), its error
    in the merged metric is within Frequent Directions' bound (each shrink takes δ from at
    least k + 1 directions, of the mass a·‖A‖²_F the rows brought in the prior's metric, so
    Σδ ≤ a·‖A‖²_F/(k + 1)), and Λ's diagonal is exactly the stacked data's, 1/a + Σ x_j²/r."""
    X, target, _ = correlated(240, 10, seed=seed, factors=6)
    a, r, rank = 0.7, 0.5, 3
    make = lambda: cwrs.AROWRegressor(covariance="lowrank", rank=rank, a=a, r=r, shuffle=False)  # noqa: E731
    shards = [make().fit(X[lo:hi], target[lo:hi]) for lo, hi in [(0, 70), (70, 150), (150, 240)]]
    merged = cwrs.merge(shards)
    S, B = factors(merged)
    A = np.hstack([X, np.ones((len(X), 1))]) / np.sqrt(r)
    stacked = A.T @ A
    scale = np.abs(stacked).max()
    assert np.linalg.eigvalsh(stacked - B.T @ B).min() >= -1e-9 * scale
    root = np.sqrt(S)
    error = np.linalg.norm(root[:, None] * (stacked - B.T @ B) * root[None, :], 2)
    assert 0 < error <= a * (A**2).sum() / (rank + 1)
    np.testing.assert_allclose(1 / S + (B**2).sum(0), 1 / a + np.diag(stacked), rtol=1e-9)


def test_n_jobs_two_works_and_depends_only_on_data_seed_and_jobs():
    X, target, labels = correlated(400, 12, seed=8)
    classes = np.digitize(target, np.quantile(target, [0.33, 0.66]))
    for make, y in [
        (lambda **kw: cwrs.AROW(covariance="lowrank", rank=3, n_iter=2, **kw), labels),
        (lambda **kw: cwrs.SCW1(covariance="lowrank", rank=3, **kw), classes),
        (lambda **kw: cwrs.AROWRegressor(covariance="lowrank", rank=3, n_iter=2, **kw), target),
    ]:
        one = make(n_jobs=2, random_state=3).fit(X, y)
        again = make(n_jobs=2, random_state=3).fit(X, y)
        np.testing.assert_array_equal(one._model.state()["covariance_values"],
                                      again._model.state()["covariance_values"])
        assert np.array_equal(one.coef_, again.coef_)
        other = make(n_jobs=2, random_state=4).fit(X, y)
        assert not np.array_equal(one.coef_, other.coef_)
        sequential = make(n_jobs=1, random_state=3).fit(X, y)
        assert sequential.n_updates_ > 0 and one.n_updates_ > 0
        assert one.score(X, y) > 0.5 * sequential.score(X, y)


def test_refusals_name_what_differs_and_leave_the_inputs_unchanged():
    X, target, labels = correlated(60, 5, seed=9)
    low = cwrs.AROW(covariance="lowrank", rank=2).fit(X, labels)
    cases = [
        ([low, cwrs.AROW(covariance="lowrank", rank=3).fit(X, labels)], {}, "rank"),
        ([low, cwrs.AROW(covariance="full").fit(X, labels)], {}, "covariance"),
        ([low], {"base": cwrs.AROW(covariance="lowrank", rank=3).fit(X, labels)}, "rank"),
    ]
    for models, kwargs, needle in cases:
        before = [pickle.dumps(m._model.state()) for m in models]
        with pytest.raises(cwrs.InvalidParameterError, match=needle):
            cwrs.merge(models, **kwargs)
        assert before == [pickle.dumps(m._model.state()) for m in models]
    with pytest.raises(cwrs.InvalidParameterError, match="process"):
        cwrs.AROW(covariance="lowrank", process_noise=0.1).fit(X, labels)


@pytest.mark.parametrize("method", METHODS)
def test_merging_leaves_the_inputs_unchanged(method):
    X, target, labels = correlated(120, 6, seed=10)
    base = cwrs.CW(covariance="lowrank", rank=2, shuffle=False).fit(X[:20], labels[:20])
    shards = shards_of(base, X, labels, [(20, 70), (70, 120)])
    before = [pickle.dumps(m._model.state()) for m in [base, *shards]]
    merged = cwrs.merge(shards, base=base, method=method)
    assert before == [pickle.dumps(m._model.state()) for m in [base, *shards]]
    assert merged.covariance_.shape == (5, 6)
    assert np.all(np.linalg.eigvalsh(merged.covariance_matrix()) > 0)


def test_dask_fit_merges_low_rank_partitions_as_cwrs_merge_does():
    pytest.importorskip("distributed")
    import dask.array as da
    from distributed import Client, LocalCluster

    import cwrs.dask

    X, _, labels = correlated(600, 8, seed=11)
    make = lambda: cwrs.AROW(covariance="lowrank", rank=2)  # noqa: E731
    with LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        model = cwrs.dask.fit(make(), da.from_array(X, chunks=(200, 8)),
                              da.from_array(labels, chunks=200), client=client, n_iter=1)
    shards = [make().partial_fit(X[lo:lo + 200], labels[lo:lo + 200], classes=[-1, 1])
              for lo in (0, 200, 400)]
    expected = cwrs.merge(shards)
    np.testing.assert_array_equal(model.coef_, expected.coef_)
    np.testing.assert_array_equal(model.covariance_, expected.covariance_)
