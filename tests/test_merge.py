"""`cwrs.merge` (docs/design.md §9) against a slow NumPy reference written from the math, the
exactness claims (recursive least squares, AROW on the rounds it updated on), refusals that
leave the inputs unchanged, and persistence of the merged model."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import cwrs
from _shared_data import shared_data


def _data(n_rows=120, n_features=5, seed=0, classes=2):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n_rows, n_features))
    w = rng.normal(size=n_features)
    scores = X @ w + 0.3 * rng.normal(size=n_rows)
    if classes == 2:
        return X, np.where(scores > 0, 1, -1)
    return X, np.digitize(scores, np.quantile(scores, [1 / 3, 2 / 3]))


def _shards(estimator, X, y, bounds, base=None, **fit_args):
    """Copies of `base` (or fresh estimators) each fitted on one contiguous shard."""
    shards = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        model = pickle.loads(pickle.dumps(base)) if base is not None else estimator.__class__(
            **estimator.get_params()
        )
        model.partial_fit(X[lo:hi], y[lo:hi], **fit_args)
        shards.append(model)
    return shards


def _moments(estimator):
    """Per class: (mean, covariance matrix) over every coordinate (features, then bias)."""
    native = estimator._model
    means = np.atleast_2d(native.mean)
    covariances = np.atleast_2d(native.covariance)
    dim = means.shape[1]
    out = []
    for mean, values in zip(means, covariances):
        if values.size == 0:
            sigma = np.eye(dim)
        elif values.size == dim:
            sigma = np.diag(values)
        else:
            sigma = values.reshape(dim, dim)
        out.append((mean, sigma))
    return out


def _reference(models, method, base_moments, diagonal, arow):
    """The merge of docs/design.md §9.2 from the models' moments, written from the math."""
    per_model = [_moments(m) for m in models]
    gains = np.array([m.n_updates_ for m in models], dtype=float) - base_moments[1]
    weights = gains / gains.sum() if gains.sum() > 0 else np.full(len(models), 1 / len(models))
    if method == "auto":
        method = "information" if arow else "average"
    result = []
    for c, (mu0, sigma0) in enumerate(base_moments[0]):
        moments = [pm[c] for pm in per_model]
        if method == "average":
            mean = sum(b * mu for b, (mu, _) in zip(weights, moments))
            sigma = sum(b * s for b, (_, s) in zip(weights, moments))
            result.append((mean, sigma))
            continue
        lam0 = np.linalg.inv(sigma0)
        if method == "information":
            lam = lam0 + sum(np.linalg.inv(s) - lam0 for _, s in moments)
            eta = lam0 @ mu0 + sum(np.linalg.inv(s) @ mu - lam0 @ mu0 for mu, s in moments)
        else:
            lam = sum(b * np.linalg.inv(s) for b, (_, s) in zip(weights, moments))
            eta = sum(b * np.linalg.inv(s) @ mu for b, (mu, s) in zip(weights, moments))
        sigma = np.linalg.inv(lam)
        if diagonal:
            sigma = np.diag(np.diag(sigma))
        result.append((sigma @ eta, sigma))
    return result


def _prior(estimator, dim, n_classes):
    a = getattr(estimator, "a", 1.0)
    return [(np.zeros(dim), a * np.eye(dim))] * n_classes, 0


@pytest.mark.parametrize(
    "estimator, classes",
    [
        (cwrs.AROW(r=0.5, covariance="diag"), 2),
        (cwrs.AROW(r=0.5, covariance="full"), 2),
        (cwrs.SCW1(C=0.5, eta=0.8, covariance="full"), 2),
        (cwrs.AROW(r=1.0, covariance="diag"), 3),
        (cwrs.AROWRegressor(r=2.0, covariance="diag"), None),
        (cwrs.PA1(C=0.3), 2),
        (cwrs.Perceptron(), 3),
        (cwrs.AROW(r=0.5, covariance="diag", process_noise=1e-2), 2),
        (cwrs.AROW(r=0.5, covariance="full", process_noise=1e-2), 2),
    ],
    ids=["arow-diag", "arow-full", "scw1-full", "arow-multiclass", "regressor-diag", "pa1",
         "perceptron-multiclass", "arow-noise-diag", "arow-noise-full"],
)
@pytest.mark.parametrize("method", ["auto", "information", "precision", "average"])
@pytest.mark.parametrize("with_base", [False, True])
def test_merge_matches_the_numpy_reference(estimator, classes, method, with_base):
    X, y = _data(classes=classes or 2)
    if classes is None:
        y = X @ np.arange(1.0, 6.0) + 0.1
    first_order = not estimator._second_order
    if first_order and method in ("information", "precision"):
        pytest.skip("refused for first-order rules (test_refusals)")
    if estimator.get_params().get("process_noise") and method == "information":
        pytest.skip("refused with process noise (test_refusals)")
    fit_args = {"classes": np.unique(y)} if classes else {}
    base = None
    if with_base:
        base = estimator.__class__(**estimator.get_params()).partial_fit(X[:30], y[:30], **fit_args)
    bounds = [30 if with_base else 0, 60, 90, 120]
    models = _shards(estimator, X, y, bounds, base=base, **fit_args)
    merged = cwrs.merge(models, method=method, base=base)
    n_classes = 1 if classes in (None, 2) else classes
    start = (
        (_moments(base), base.n_updates_) if base is not None
        else _prior(estimator, X.shape[1] + 1, n_classes)
    )
    diagonal = getattr(estimator, "covariance", None) == "diag"
    # Process noise adds to Σ, not to Λ: "auto" sums evidence only for noiseless AROW.
    arow = type(estimator) in (cwrs.AROW, cwrs.AROWRegressor) and not merged.process_noise
    expected = _reference(models, method, start, diagonal, arow)
    for (mean, sigma), (want_mean, want_sigma) in zip(_moments(merged), expected):
        np.testing.assert_allclose(mean, want_mean, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(sigma, want_sigma, rtol=1e-9, atol=1e-12)
    assert merged.n_updates_ == start[1] + sum(m.n_updates_ - start[1] for m in models)
    assert type(merged) is type(estimator) and merged.get_params() == models[0].get_params()


def test_full_regressor_merge_is_the_sequential_fit_and_ridge():
    rng = np.random.RandomState(3)
    X = rng.normal(size=(200, 6))
    y = X @ rng.normal(size=6) + 0.5 + 0.2 * rng.normal(size=200)
    params = dict(r=0.7, a=2.0, covariance="full", shuffle=False)
    sequential = cwrs.AROWRegressor(**params).fit(X, y)
    shards = _shards(cwrs.AROWRegressor(**params), X, y, [0, 50, 100, 150, 200])
    merged = cwrs.merge(shards)
    # Ridge in closed form: Λ = I/a + X̃ᵀX̃/r, μ = Λ⁻¹X̃ᵀy/r with X̃ = [X, 1].
    Xt = np.column_stack([X, np.ones(len(X))])
    lam = np.eye(7) / 2.0 + Xt.T @ Xt / 0.7
    ridge = np.linalg.solve(lam, Xt.T @ y / 0.7)
    for model in (sequential, merged):
        weights = np.append(model.coef_, model.intercept_)
        np.testing.assert_allclose(weights, ridge, rtol=1e-9)
    np.testing.assert_allclose(merged._model.covariance, sequential._model.covariance, rtol=1e-9)
    np.testing.assert_allclose(merged.predict(X), sequential.predict(X), rtol=1e-9)


def test_full_arow_merge_is_the_replay_of_the_rounds_it_updated_on():
    X, y = _data(n_rows=160, seed=5)
    r, a = 0.8, 1.5
    bounds = [0, 40, 80, 120, 160]
    shards, updated = [], []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        model = cwrs.AROW(r=r, a=a, covariance="full")
        for i in range(lo, hi):
            before = model.n_updates_ if i > lo else 0
            model.partial_fit(X[i : i + 1], y[i : i + 1], classes=[-1, 1])
            if model.n_updates_ > before:
                updated.append(i)
        shards.append(model)
    merged = cwrs.merge(shards)
    # Each AROW update is Λ += xxᵀ/r, η += y·x/r: recursive least squares on the updated rounds
    # with targets ±1 replays it, as does the closed form.
    replay = cwrs.AROWRegressor(r=r, a=a, covariance="full", shuffle=False)
    replay.fit(X[updated], y[updated].astype(float))
    np.testing.assert_allclose(merged.coef_[0], replay.coef_, rtol=1e-9)
    np.testing.assert_allclose(merged.intercept_[0], replay.intercept_, rtol=1e-9)
    Xt = np.column_stack([X[updated], np.ones(len(updated))])
    lam = np.eye(6) / a + Xt.T @ Xt / r
    np.testing.assert_allclose(
        np.append(merged.coef_, merged.intercept_), np.linalg.solve(lam, Xt.T @ y[updated] / r),
        rtol=1e-9,
    )
    np.testing.assert_allclose(merged.covariance_, np.linalg.inv(lam)[:5, :5], rtol=1e-9)
    assert merged.n_updates_ == len(updated)


def _frozen(models):
    return [pickle.dumps(m) for m in models]


def test_refusals_leave_the_inputs_unchanged():
    X, y = _data()
    Xr = X @ np.ones(5)

    def fitted(estimator, target=y):
        args = {"classes": [-1, 1]} if isinstance(estimator, cwrs.Classifier) else {}
        return estimator.partial_fit(X, target, **args)

    arow = fitted(cwrs.AROW())
    cases = [
        ([], {}, "at least one model"),
        ([arow, fitted(cwrs.SCW1())], {}, "only models of one class"),
        ([arow, fitted(cwrs.AROW(r=2.0))], {}, "r=2.0"),
        ([arow, fitted(cwrs.AROW(covariance="full"))], {}, "covariance"),
        ([arow, fitted(cwrs.AROW(fit_intercept=False))], {}, "fit_intercept"),
        ([arow, cwrs.AROW().partial_fit(X[:, :4], y, classes=[-1, 1])], {}, "n_features_in_"),
        ([arow, cwrs.AROW().partial_fit(X, y, classes=[-1, 1, 2])], {}, "classes_"),
        ([arow, fitted(cwrs.AROWRegressor(), Xr)], {}, "only models of one class"),
        ([fitted(cwrs.PA1())], {"method": "information"}, "first-order"),
        ([fitted(cwrs.PA1())], {"method": "precision"}, "first-order"),
        ([fitted(cwrs.AROW(kernel="rbf"))], {}, "kernel"),
        ([arow_lowrank := fitted(cwrs.AROW(covariance="lowrank", rank=2)),
          fitted(cwrs.AROW(covariance="lowrank", rank=3))], {}, "rank"),
        ([arow_lowrank, arow], {}, "covariance"),
        ([fitted(cwrs.AdaGrad())], {}, "adagrad"),
        ([fitted(cwrs.FTRL())], {}, "ftrl"),
        ([fitted(cwrs.AROW(average=True))], {}, "averaged"),
        ([fitted(cwrs.AROW(process_noise="auto"))], {}, "auto"),
        ([fitted(cwrs.AROW(process_noise=0.01))], {"method": "information"}, "process noise"),
        ([arow], {"method": "sum"}, "method"),
        ([arow], {"base": fitted(cwrs.AROW(a=2.0))}, "a=2.0"),
        ([arow], {"weights": [1.0, 2.0]}, "weights"),
        ([arow, "AROW"], {}, "not a cwrs estimator"),
    ]
    for models, kwargs, needle in cases:
        before = _frozen(models + [v for v in kwargs.values() if isinstance(v, cwrs.Classifier)])
        with pytest.raises(cwrs.InvalidParameterError, match=needle):
            cwrs.merge(models, **kwargs)
        after = _frozen(models + [v for v in kwargs.values() if isinstance(v, cwrs.Classifier)])
        assert before == after
    with pytest.raises(cwrs.NotFittedError):
        cwrs.merge([cwrs.AROW()])


def test_merge_leaves_its_inputs_and_their_pending_terms_alone():
    X, y = _data()
    shards = _shards(cwrs.AROW(covariance="full"), X, y, [0, 60, 120], classes=[-1, 1])
    before = _frozen(shards)
    scores = [s.decision_function(X) for s in shards]
    cwrs.merge(shards)
    assert _frozen(shards) == before
    for s, score in zip(shards, scores):
        np.testing.assert_array_equal(s.decision_function(X), score)


def test_l1_models_merge_their_thresholded_means():
    X, y = _data(n_rows=200, n_features=20, seed=2)
    est = cwrs.AROW(penalty="l1", alpha=0.05)
    shards = _shards(est, X, y, [0, 100, 200], classes=[-1, 1])
    merged = cwrs.merge(shards, method="information")
    expected = _reference(shards, "information", _prior(est, 21, 1), True, False)[0][0]
    # The shards' moments are thresholded means: the merge of those, with nothing pending.
    np.testing.assert_allclose(np.append(merged.coef_, merged.intercept_), expected, rtol=1e-9)
    state = merged._model.state()
    assert np.all(state["l1_last"] == state["l1_total"])


@pytest.mark.parametrize("classes", [2, 3])
def test_the_merged_model_pickles_saves_and_keeps_learning(tmp_path, classes):
    X, y = _data(classes=classes)
    y = np.array(["a", "b", "c"])[y if classes == 3 else (y > 0).astype(int)]
    shards = _shards(cwrs.AROW(covariance="full"), X, y, [0, 60, 120], classes=np.unique(y))
    merged = cwrs.merge(shards)
    expected = merged.decision_function(X)
    for copy in (pickle.loads(pickle.dumps(merged)), _saved(merged, tmp_path)):
        np.testing.assert_array_equal(copy.decision_function(X), expected)
        np.testing.assert_array_equal(copy.classes_, shards[0].classes_)
    merged.partial_fit(X, y)
    assert merged.n_updates_ > 0


@pytest.mark.parametrize("classes", [2, 3])
@pytest.mark.parametrize("params", [
    {"covariance": "full"},
    {"covariance": "full", "process_noise": 0.01},
    {"covariance": "diag", "process_noise": 0.01},
    {"covariance": "diag", "penalty": "l1", "alpha": 0.01},
    {"covariance": "lowrank", "rank": 2},
], ids=["full", "full-noise", "diag-noise", "diag-l1", "lowrank"])
def test_the_merged_model_continues_as_its_saved_copies_bit_for_bit(tmp_path, classes, params):
    """The merged model is built directly, not from its state: its pickled and saved copies
    (rebuilt from the state) keep learning with exactly its bits."""
    X, y = _data(classes=classes)
    base = cwrs.AROW(**params).partial_fit(X[:30], y[:30], classes=np.unique(y))
    merged = cwrs.merge(_shards(None, X, y, [30, 70, 100], base=base), base=base)
    copies = [pickle.loads(pickle.dumps(merged)), _saved(merged, tmp_path)]
    for model in [merged, *copies]:
        model.partial_fit(X[100:], y[100:])
    expected = pickle.dumps(merged._model.state())
    for copy in copies:
        assert pickle.dumps(copy._model.state()) == expected
        np.testing.assert_array_equal(copy.decision_function(X), merged.decision_function(X))


def _saved(estimator, tmp_path):
    path = tmp_path / "merged.cwrs"
    estimator.save(path)
    return cwrs.load(path)


def test_weights_override_the_update_counts():
    X, y = _data()
    shards = _shards(cwrs.AROW(), X, y, [0, 40, 120], classes=[-1, 1])
    merged = cwrs.merge(shards, method="average", weights=[3.0, 1.0])
    expected = 0.75 * shards[0]._model.mean + 0.25 * shards[1]._model.mean
    np.testing.assert_allclose(merged._model.mean, expected, rtol=1e-12)


# ----------------------------------------------------------------------------- n_jobs
def test_n_jobs_fit_is_the_merge_of_its_shards():
    X, y = _data(n_rows=150, classes=3)
    fitted = cwrs.AROW(n_jobs=2, shuffle=False).fit(X, y)
    shards = _shards(cwrs.AROW(), X, y, [0, 75, 150], classes=[0, 1, 2])
    expected = cwrs.merge(shards)
    np.testing.assert_array_equal(fitted._model.mean, expected._model.mean)
    np.testing.assert_array_equal(fitted._model.covariance, expected._model.covariance)
    assert fitted.n_updates_ == expected.n_updates_


@pytest.mark.parametrize(
    "estimator",
    [cwrs.AROW(), cwrs.SCW1(covariance="full"), cwrs.PA1(), cwrs.AROWRegressor()],
    ids=["arow", "scw1-full", "pa1", "regressor"],
)
def test_n_jobs_fits_are_deterministic(estimator):
    X, y = _data(n_rows=3000, n_features=8, seed=7)
    if isinstance(estimator, cwrs.Regressor):
        y = X @ np.arange(8.0)
    estimator.set_params(n_jobs=3, n_iter=2, random_state=11)
    first = estimator.fit(X, y)._model.state()
    for _ in range(3):
        again = estimator.fit(X, y)._model.state()
        for key, value in first.items():
            np.testing.assert_array_equal(again[key], value)


def test_n_jobs_one_is_the_sequential_fit_and_the_full_regressor_is_exact():
    X, y = _data(n_rows=400, seed=9)
    one = cwrs.AROW(random_state=4, n_iter=2).fit(X, y)
    default = cwrs.AROW(random_state=4, n_iter=2, n_jobs=1).fit(X, y)
    assert pickle.dumps(one._model.state()) == pickle.dumps(default._model.state())
    target = X @ np.arange(1.0, 6.0) - 1.0 + 0.1 * np.sin(np.arange(400))
    params = dict(covariance="full", random_state=4, n_iter=3)
    sequential = cwrs.AROWRegressor(**params).fit(X, target)
    for n_jobs in (2, 4, -1):
        parallel = cwrs.AROWRegressor(n_jobs=n_jobs, **params).fit(X, target)
        np.testing.assert_allclose(parallel.coef_, sequential.coef_, rtol=1e-9)
        np.testing.assert_allclose(parallel.intercept_, sequential.intercept_, rtol=1e-9)


def test_n_jobs_keeps_accuracy_and_refuses_bad_values():
    X, y = _data(n_rows=4000, n_features=10, seed=12)
    Xtest, ytest = X[3000:], y[3000:]
    sequential = cwrs.AROW(random_state=0).fit(X[:3000], y[:3000]).score(Xtest, ytest)
    parallel = cwrs.AROW(random_state=0, n_jobs=4).fit(X[:3000], y[:3000]).score(Xtest, ytest)
    assert abs(parallel - sequential) < 0.02
    for bad in (0, 1.5, "2", True, None):
        with pytest.raises(cwrs.InvalidParameterError, match="n_jobs"):
            cwrs.AROW(n_jobs=bad).fit(X, y)
    with pytest.raises(cwrs.InvalidParameterError, match="kernel models cannot be merged"):
        cwrs.AROW(kernel="rbf", n_jobs=2).fit(X[:50], y[:50])
    unmergeable = (
        cwrs.AdaGrad(), cwrs.FTRL(),
        cwrs.AROW(average=True), cwrs.PA1(average=5), cwrs.AROW(process_noise="auto"),
    )
    for estimator in unmergeable:
        with pytest.raises(cwrs.InvalidParameterError, match="models that merge"):
            estimator.set_params(n_jobs=2).fit(X[:50], y[:50])


@pytest.mark.parametrize("make", [cwrs.OGD, cwrs.ROMMA, cwrs.IELLIP])
def test_merged_models_keep_the_rounds_their_rules_read(make):
    # OGD's step η/√t and IELLIP's decaying c_t read the round: a merge counts every shard's
    # rows beyond the base, as it counts their updates.
    X, y = _data()
    model = make(n_jobs=2, n_iter=2).fit(X, y)
    assert model._model.state()["n_rounds"] == 2 * X.shape[0]
    base = make().partial_fit(X[:40], y[:40], classes=[-1, 1])
    shards = [pickle.loads(pickle.dumps(base)).partial_fit(X[lo:hi], y[lo:hi])
              for lo, hi in [(40, 100), (100, X.shape[0])]]
    merged = cwrs.merge(shards, base=base)
    assert merged._model.state()["n_rounds"] == X.shape[0]


# ----------------------------------------------------------------------------- accuracy
def _sharded_fit(estimator, X, y, n_parts, epochs):
    """Epochs in stored order, each the merge of `n_parts` contiguous shards learned from the
    model of the epoch start (what cwrs.dask.fit and n_jobs do)."""
    bounds = np.linspace(0, X.shape[0], n_parts + 1).astype(int)
    model = None
    for _ in range(epochs):
        shards = [
            (pickle.loads(pickle.dumps(model)) if model is not None
             else estimator.__class__(**estimator.get_params())).partial_fit(
                X[lo:hi], y[lo:hi], classes=[-1, 1])
            for lo, hi in zip(bounds[:-1], bounds[1:])
        ]
        model = cwrs.merge(shards, base=model)
    return model


def test_sharded_training_on_a1a_stays_within_a_point_of_sequential():
    X, y = cwrs.load_svmlight(shared_data("a1a.libsvm"), n_features=123, zero_based=False)
    Xt, yt = cwrs.load_svmlight(shared_data("a1a.t.libsvm"), n_features=123, zero_based=False)
    for estimator in (cwrs.AROW(), cwrs.SCW1(), cwrs.PA1()):
        for epochs in (1, 2, 3):
            sequential = estimator.__class__(shuffle=False, n_iter=epochs).fit(X, y)
            error = 1 - sequential.score(Xt, yt)
            for n_parts in (2, 4):
                sharded = 1 - _sharded_fit(estimator, X, y, n_parts, epochs).score(Xt, yt)
                assert abs(sharded - error) <= 0.01, (estimator, epochs, n_parts)


@pytest.mark.parametrize("covariance", ["diag", "full"])
def test_n_jobs_with_process_noise_averages_the_shards(covariance):
    """The summed precision increments of noisy shards can be indefinite (three shards, three
    passes failed with "merged precision is not positive definite"): "auto" averages them."""
    X, y = _data(n_rows=300, seed=3)
    model = cwrs.AROW(process_noise=0.05, covariance=covariance, n_jobs=3, n_iter=3)
    model.fit(X, y)
    assert np.all(np.isfinite(model.coef_))
    shards = _shards(model, X, y, [0, 100, 200, 300], classes=np.unique(y))
    assert cwrs.merge(shards).get_params() == model.get_params()
    np.testing.assert_array_equal(
        cwrs.merge(shards).coef_, cwrs.merge(shards, method="average").coef_
    )
