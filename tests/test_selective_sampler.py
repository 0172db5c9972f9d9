"""`cwrs.SelectiveSampler`: every decision against a slow reference loop written from the rules,
the limits (always asking is the plain learner, never asking learns nothing), "random"'s seeds and
importance weights, the stream API against `fit`, refused inputs and pickling."""

import math
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse

import cwrs

N_ROWS = 300


def stream(n_classes=2, sparse=False, seed=0, n_rows=N_ROWS, n_features=8):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features))
    if sparse:
        X[rng.random(X.shape) < 0.6] = 0.0
    W = rng.normal(size=(n_features, n_classes))
    scores = X @ W + 0.7 * rng.normal(size=(n_rows, n_classes))
    y = scores.argmax(axis=1) if n_classes > 2 else (scores[:, 0] > 0).astype(int)
    return (scipy.sparse.csr_matrix(X) if sparse else X), y


def reference(learner, strategy, X, y, threshold=0.5, kappa=0.4, b=1.0, seed=None,
              sample_weight=None):
    """The rules (at SelectiveSampler's defaults unless given), one row at a time, from a fresh
    model: the scores (`decision_function`) and
    variances xᵀΣx of the model trained on the asked prefix, the rule's inequality. Returns the
    asked mask and the model."""
    classes = np.unique(y)
    model = type(learner)(**learner.get_params())
    model.partial_fit(X[:1], classes[:1], classes=classes, sample_weight=[0.0])
    rng = np.random.default_rng(seed)
    asked = []
    for t in range(X.shape[0]):
        x = X[t : t + 1]
        score = model.decision_function(x)[0]
        native = model._fitted_model()
        variance = native.variance(model._check_X_for(x))[0] if learner._second_order else None
        if np.ndim(score) == 0:
            margin, margin_variance, bbq_variance = abs(score), variance, variance
        else:
            top = int(np.argmax(score))
            rest = score.copy()
            rest[top] = -np.inf
            second = int(np.argmax(rest))
            margin = score[top] - score[second]
            if variance is not None:
                margin_variance = variance[top] + variance[second]
                bbq_variance = (variance[top] + variance[second]) / 2
        if variance is None:
            confidence = abs(margin)
        elif margin_variance == 0.0:
            confidence = 0.0 if margin == 0.0 else math.inf
        else:
            confidence = abs(margin) / math.sqrt(margin_variance)
        weight = 1.0
        if strategy == "margin":
            ask = confidence < threshold
        elif strategy == "bbq":
            ask = bbq_variance / (1.0 + bbq_variance) > (t + 1) ** -kappa
        else:
            p = 1.0 if math.isinf(b) else b / (b + confidence)
            ask = rng.random() < p
            weight = 1.0 / p
        if sample_weight is not None:
            weight *= sample_weight[t]
        if ask:
            model.partial_fit(x, y[t : t + 1], sample_weight=[weight])
        asked.append(ask)
    return np.array(asked), model


def same_model(a, b):
    assert np.array_equal(a.coef_, b.coef_) and np.array_equal(a.intercept_, b.intercept_)
    if a._second_order:
        assert np.array_equal(a.covariance_, b.covariance_)
    assert a.n_updates_ == b.n_updates_


CASES = [
    ("margin", {"threshold": 1.0}),
    ("margin", {"threshold": 0.3}),
    ("bbq", {"kappa": 0.5}),
    ("bbq", {"kappa": 0.9}),
    ("random", {"b": 1.0, "random_state": 3}),
    ("random", {"b": 0.2, "random_state": 4}),
]


@pytest.mark.parametrize("strategy, params", CASES)
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("sparse", [False, True])
def test_every_decision_follows_the_rule(strategy, params, n_classes, sparse):
    X, y = stream(n_classes, sparse)
    learner = cwrs.AROW(multi_class="ovr") if n_classes > 2 else cwrs.AROW()
    sampler = cwrs.SelectiveSampler(learner, strategy, **params).fit(X, y)
    reference_params = {k: v for k, v in params.items() if k != "random_state"}
    asked, model = reference(learner, strategy, X, y, seed=params.get("random_state"),
                             **reference_params)
    assert np.array_equal(sampler.queried_, asked)
    assert 0 < sampler.n_queried_ == asked.sum() < N_ROWS
    assert sampler.n_seen_ == N_ROWS
    same_model(sampler.estimator_, model)


@pytest.mark.parametrize(
    "learner", [cwrs.SCW1(covariance="full"), cwrs.NAROW(multi_class="max-score"), cwrs.PA1()],
    ids=["SCW1-full", "NAROW-max-score", "PA1"],
)
def test_other_learners_follow_the_rule(learner):
    n_classes = 3 if isinstance(learner, cwrs.NAROW) else 2
    X, y = stream(n_classes)
    strategy = "random" if not learner._second_order else "margin"
    sampler = cwrs.SelectiveSampler(learner, strategy, random_state=0).fit(X, y)
    asked, model = reference(learner, strategy, X, y, seed=0)
    assert np.array_equal(sampler.queried_, asked)
    same_model(sampler.estimator_, model)


@pytest.mark.parametrize("strategy, params", [
    ("margin", {"threshold": np.inf}), ("random", {"b": np.inf, "random_state": 0}),
])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_always_asking_is_the_plain_learner(strategy, params, n_classes):
    X, y = stream(n_classes)
    sampler = cwrs.SelectiveSampler(cwrs.AROW(), strategy, **params).fit(X, y)
    assert sampler.queried_.all() and sampler.n_queried_ == N_ROWS
    plain = cwrs.AROW(shuffle=False).fit(X, y)
    same_model(sampler.estimator_, plain)
    assert np.array_equal(sampler.predict_proba(X), plain.predict_proba(X))


@pytest.mark.parametrize(
    "strategy, params", [("margin", {"threshold": 0.0}), ("bbq", {"kappa": 0.0})]
)
def test_never_asking_learns_nothing(strategy, params):
    """The model is the prior: fitted, with the classes, μ = 0 and Σ = a·I."""
    X, y = stream(3)
    sampler = cwrs.SelectiveSampler(cwrs.AROW(a=2.0), strategy, **params).fit(X, y)
    assert sampler.n_queried_ == 0 and not sampler.queried_.any()
    assert sampler.estimator_.n_updates_ == 0
    assert not sampler.estimator_.coef_.any()
    assert np.array_equal(sampler.classes_, [0, 1, 2]) and sampler.n_features_in_ == 8
    assert np.all(sampler.estimator_.covariance_ == 2.0)


def test_bbq_never_asks_the_first_row_and_margin_does():
    X, y = stream()
    assert not cwrs.SelectiveSampler(cwrs.AROW(), "bbq", kappa=1.0).fit(X, y).queried_[0]
    assert cwrs.SelectiveSampler(cwrs.AROW(), "margin", threshold=1e-9).fit(X, y).queried_[0]


def test_random_is_reproducible_with_a_seed_and_weights_are_one_over_p():
    X, y = stream()
    first = cwrs.SelectiveSampler(cwrs.AROW(), "random", b=0.5, random_state=7).fit(X, y)
    again = cwrs.SelectiveSampler(cwrs.AROW(), "random", b=0.5, random_state=7).fit(X, y)
    other = cwrs.SelectiveSampler(cwrs.AROW(), "random", b=0.5, random_state=8).fit(X, y)
    assert np.array_equal(first.queried_, again.queried_)
    same_model(first.estimator_, again.estimator_)
    assert not np.array_equal(first.queried_, other.queried_)
    # The same asked rows learned with weight 1 give another model: the weights are 1/p.
    plain = cwrs.AROW()
    classes = np.unique(y)
    plain.partial_fit(X[:1], y[:1], classes=classes, sample_weight=[0.0])
    for i in np.flatnonzero(first.queried_):
        plain.partial_fit(X[i : i + 1], y[i : i + 1])
    assert not np.array_equal(plain.coef_, first.estimator_.coef_)


def test_sample_weight_multiplies_and_a_weightless_asked_row_is_not_learned():
    X, y = stream()
    weights = np.random.default_rng(1).uniform(0.0, 3.0, N_ROWS)
    weights[:50] = 0.0
    for strategy in ("margin", "random"):
        sampler = cwrs.SelectiveSampler(cwrs.AROW(), strategy, random_state=2).fit(
            X, y, sample_weight=weights
        )
        asked, model = reference(cwrs.AROW(), strategy, X, y, seed=2, sample_weight=weights)
        assert np.array_equal(sampler.queried_, asked) and sampler.queried_[:50].all()
        same_model(sampler.estimator_, model)


@pytest.mark.parametrize("strategy", ["margin", "bbq", "random"])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("sparse", [False, True])
def test_query_and_partial_fit_row_by_row_is_fit(strategy, n_classes, sparse):
    X, y = stream(n_classes, sparse)
    fitted = cwrs.SelectiveSampler(cwrs.AROW(), strategy, random_state=5).fit(X, y)
    online = cwrs.SelectiveSampler(cwrs.AROW(), strategy, random_state=5)
    classes = np.unique(y)
    asked = []
    for i in range(N_ROWS):
        row = X[i : i + 1]
        mask = online.query(row, classes=classes if i == 0 else None)
        labels = np.where(mask, y[i : i + 1], -99)  # the label of a row not asked is unknown
        online.partial_fit(row, labels, mask)
        asked.append(mask[0])
    assert np.array_equal(asked, fitted.queried_)
    assert online.n_queried_ == fitted.n_queried_ and online.n_seen_ == N_ROWS
    same_model(online.estimator_, fitted.estimator_)


def test_a_chunk_is_decided_by_one_model():
    X, y = stream()
    sampler = cwrs.SelectiveSampler(cwrs.AROW(), "bbq", kappa=0.8)
    mask = sampler.query(X[:100], classes=[0, 1])
    sampler.partial_fit(X[:100], y[:100], mask)
    model = cwrs.AROW().partial_fit(X[:1], y[:1], classes=[0, 1], sample_weight=[0.0])
    variances = model._fitted_model().variance(X[:100])
    assert np.array_equal(mask, variances / (1 + variances) > np.arange(1.0, 101.0) ** -0.8)
    model.partial_fit(X[:100][mask], y[:100][mask])
    same_model(sampler.estimator_, model)
    mask = sampler.query(X[100:200])
    variances = model._fitted_model().variance(X[100:200])
    assert np.array_equal(mask, variances / (1 + variances) > np.arange(101.0, 201.0) ** -0.8)


def test_without_a_model_query_asks_every_row_and_partial_fit_needs_classes():
    X, y = stream()
    sampler = cwrs.SelectiveSampler(cwrs.AROW())
    assert sampler.query(X[:5]).all() and "estimator_" not in vars(sampler)
    with pytest.raises(ValueError, match="classes must be passed"):
        sampler.partial_fit(X[:5], y[:5], np.ones(5, bool))
    sampler.partial_fit(X[:5], y[:5], np.ones(5, bool), classes=[0, 1])
    same_model(sampler.estimator_, cwrs.AROW().partial_fit(X[:5], y[:5], classes=[0, 1]))
    assert sampler.n_queried_ == 5 and sampler.n_seen_ == 5


def test_random_partial_fit_learns_with_the_weights_of_the_query_model():
    X, y = stream()
    sampler = cwrs.SelectiveSampler(cwrs.AROW(), "random", b=0.3, random_state=0)
    sampler.partial_fit(X[:20], y[:20], np.ones(20, bool), classes=[0, 1])
    model = cwrs.AROW().partial_fit(X[:20], y[:20], classes=[0, 1])
    mask = sampler.query(X[20:120])
    scores = model.decision_function(X[20:120])
    p = 0.3 / (0.3 + np.abs(scores) / np.sqrt(model._fitted_model().variance(X[20:120])))
    sampler.partial_fit(X[20:120], y[20:120], mask)
    model.partial_fit(X[20:120][mask], y[20:120][mask], sample_weight=1.0 / p[mask])
    same_model(sampler.estimator_, model)
    assert sampler.n_queried_ == 20 + mask.sum() and sampler.n_seen_ == 120


def state(sampler):
    """What a refused call must leave as it was."""
    estimator = sampler.estimator_
    rng = sampler.__dict__.get("_rng")
    return pickle.dumps((
        estimator.coef_, estimator.intercept_, estimator.covariance_, estimator.n_updates_,
        sampler.n_queried_, sampler.n_seen_, sampler.queried_,
        None if rng is None else rng.bit_generator.state,
    ))


def test_refused_inputs_leave_everything_unchanged():
    X, y = stream()
    sampler = cwrs.SelectiveSampler(cwrs.AROW(), "random", random_state=0).fit(X[:100], y[:100])
    sampler.query(X[100:110])
    before = state(sampler)
    mask = np.ones(10, bool)
    refused = [
        lambda: sampler.partial_fit(X[100:110, :5], y[100:110], mask),  # too few features
        lambda: sampler.partial_fit(X[100:110], np.full(10, 7), mask),  # an unknown label
        lambda: sampler.partial_fit(X[100:110], y[100:110], mask[:5]),  # a short mask
        lambda: sampler.partial_fit(X[100:110], y[100:110], mask.astype(int)),  # not bool
        lambda: sampler.partial_fit(np.full((10, 8), np.nan), y[100:110], mask),
        lambda: sampler.partial_fit(X[100:110], y[100:110], mask, sample_weight=-np.ones(10)),
        lambda: sampler.partial_fit(X[100:110], y[100:110], mask, classes=[0, 1, 2]),
        lambda: sampler.query(X[100:110, :5]),
        lambda: sampler.query(np.full((10, 8), np.inf)),
    ]
    for call in refused:
        with pytest.raises(ValueError):
            call()
        assert state(sampler) == before
    with pytest.raises(ValueError, match="strategy must be one of"):
        sampler.set_params(strategy="nope").query(X[100:110])
    assert state(sampler) == before
    sampler.set_params(strategy="random")
    estimator_before = sampler.estimator_
    for bad in [
        {"strategy": "margin", "threshold": -1.0}, {"strategy": "bbq", "kappa": 1.5},
        {"strategy": "random", "b": 0.0}, {"strategy": "margin", "threshold": float("nan")},
        {"strategy": "margin", "estimator": cwrs.PA1()}, {"estimator": cwrs.AROWRegressor()},
        {"estimator": cwrs.AROW(kernel="rbf")},
    ]:
        refused_sampler = cwrs.SelectiveSampler(cwrs.AROW(), "random").fit(X[:100], y[:100])
        kept = state(refused_sampler)
        refused_sampler.set_params(**bad)
        with pytest.raises(ValueError):
            refused_sampler.fit(X, y)
        assert state(refused_sampler) == kept
    assert sampler.estimator_ is estimator_before and state(sampler) == before


def test_first_order_margin_is_refused_with_a_reason():
    X, y = stream()
    with pytest.raises(ValueError, match="first order: use strategy='random'"):
        cwrs.SelectiveSampler(cwrs.PA1(), "margin").fit(X, y)
    sampler = cwrs.SelectiveSampler(cwrs.PA1(), "random", random_state=0).fit(X, y)
    assert not hasattr(sampler, "predict_proba")
    assert hasattr(cwrs.SelectiveSampler(cwrs.AROW()), "predict_proba")


def test_pickle_round_trip_continues_the_stream():
    X, y = stream(3)
    sampler = cwrs.SelectiveSampler(cwrs.AROW(), "random", random_state=1).fit(X[:150], y[:150])
    copy = pickle.loads(pickle.dumps(sampler))
    assert state(copy) == state(sampler) and repr(copy) == repr(sampler)
    assert np.array_equal(copy.predict_proba(X), sampler.predict_proba(X))
    for fitted in (sampler, copy):
        mask = fitted.query(X[150:])
        fitted.partial_fit(X[150:], y[150:], mask)
    assert state(copy) == state(sampler)


def test_the_estimator_is_never_modified_and_delegation():
    X, y = stream()
    learner = cwrs.AROW(r=0.5)
    before = pickle.dumps(learner)
    sampler = cwrs.SelectiveSampler(learner).fit(X, y)
    assert pickle.dumps(learner) == before and sampler.estimator_ is not learner
    estimator = sampler.estimator_
    assert np.array_equal(sampler.predict(X), estimator.predict(X))
    assert np.array_equal(sampler.decision_function(X), estimator.decision_function(X))
    assert sampler.score(X, y) == estimator.score(X, y)
    assert sampler.get_params()["estimator__r"] == 0.5
    sampler.set_params(estimator__r=2.0, threshold=0.5)
    assert learner.r == 2.0 and sampler.threshold == 0.5


def test_not_fitted():
    with pytest.raises(cwrs.NotFittedError):
        cwrs.SelectiveSampler(cwrs.AROW()).predict(np.zeros((1, 3)))


def test_feature_names_of_a_data_frame():
    pandas = pytest.importorskip("pandas")
    X, y = stream()
    frame = pandas.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    sampler = cwrs.SelectiveSampler(cwrs.AROW()).fit(frame, y)
    assert list(sampler.feature_names_in_) == list(frame.columns)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        predicted = sampler.predict(frame)
    assert np.array_equal(predicted, sampler.estimator_.predict(X))
    with pytest.raises(ValueError):
        sampler.predict(frame[frame.columns[::-1]])


@pytest.mark.parametrize("strategy", ["margin", "bbq", "random"])
@pytest.mark.parametrize("sparse", [False, True])
def test_partial_fit_with_every_label_continues_fit(strategy, sparse):
    X, y = stream(3, sparse)
    fitted = cwrs.SelectiveSampler(cwrs.AROW(), strategy, random_state=5).fit(X, y)
    chunked = cwrs.SelectiveSampler(cwrs.AROW(), strategy, random_state=5)
    for start, stop in [(0, 1), (1, 90), (90, 91), (91, N_ROWS)]:
        chunked.partial_fit(X[start:stop], y[start:stop], classes=[0, 1, 2])
        assert np.array_equal(chunked.queried_, fitted.queried_[start:stop])
    assert chunked.n_queried_ == fitted.n_queried_ and chunked.n_seen_ == N_ROWS
    same_model(chunked.estimator_, fitted.estimator_)
    before = state(chunked)
    labels = y[:50].copy()
    labels[40] = 9  # an unknown label late in the call: refused before any row is learned
    with pytest.raises(ValueError, match="not in classes"):
        chunked.partial_fit(X[:50], labels)
    assert state(chunked) == before


def test_all_zero_sample_weight_is_refused():
    X, y = stream()
    with pytest.raises(ValueError, match="all zero"):
        cwrs.SelectiveSampler(cwrs.AROW()).fit(X, y, sample_weight=np.zeros(N_ROWS))


def test_rows_of_zero_variance():
    """All-zero rows without an intercept: score 0 and variance 0, taken as |m|/√v = 0."""
    X, y = stream()
    X[::7] = 0.0
    learner = cwrs.AROW(fit_intercept=False)
    for strategy in ("margin", "random"):
        sampler = cwrs.SelectiveSampler(learner, strategy, random_state=0).fit(X, y)
        asked, model = reference(learner, strategy, X, y, seed=0)
        assert np.array_equal(sampler.queried_, asked) and asked[::7].all()
        same_model(sampler.estimator_, model)
