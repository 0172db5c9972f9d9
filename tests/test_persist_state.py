"""The native model's named state (docs/model-format.md): every kind round-trips through its dict
exactly (directly, by pickle and by a .cwrs file), the full covariance is stored folded, and a
malformed dict is refused with `InvalidModelStateError` naming the entry."""

import io
import pickle

import numpy as np
import pytest

import cwrs
from cwrs import _cwrs

rng = np.random.RandomState(3)
X = rng.randn(40, 5)
Y2 = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, 1, 0)
Y3 = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.3).astype(int)
TARGETS = X @ np.array([1.0, -2.0, 0.5, 0.0, 3.0])


def rbf(A, B):
    """A callable kernel (module level, so that it pickles)."""
    A, B = np.asarray(A), np.asarray(B)
    return np.exp(-0.5 * ((A[:, None, :] - B[None, :, :]) ** 2).sum(axis=2))


KINDS = {
    "binary-diag": (lambda: cwrs.AROW(), Y2, "binary"),
    "binary-full": (lambda: cwrs.AROW(covariance="full"), Y2, "binary"),
    "binary-identity": (lambda: cwrs.PA1(), Y2, "binary"),
    "binary-l1": (lambda: cwrs.AROW(penalty="l1", alpha=0.01), Y2, "binary"),
    "multiclass-max-score": (lambda: cwrs.SCW1(covariance="full"), Y3, "multiclass"),
    "multiclass-ovr-l1": (
        lambda: cwrs.AROW(multi_class="ovr", penalty="l1", alpha=0.01), Y3, "multiclass",
    ),
    "regressor-full": (lambda: cwrs.AROWRegressor(covariance="full"), TARGETS, "regressor"),
    "regressor-pa": (lambda: cwrs.PA2Regressor(), TARGETS, "regressor"),
    "kernel-budget": (lambda: cwrs.AROW(kernel="rbf", budget=7), Y2, "kernel"),
    "multiclass-kernel": (lambda: cwrs.AROW(kernel="poly", degree=2), Y3, "multiclass_kernel"),
    "rff": (
        lambda: cwrs.AROW(kernel_approximation="rff", n_components=16, random_state=0),
        Y2, "binary",
    ),
}


def predictions(estimator):
    if isinstance(estimator, cwrs.Regressor):
        return estimator.predict(X)
    return np.concatenate([estimator.decision_function(X).ravel(), estimator.predict(X)])


def fitted(kind):
    make, y, _ = KINDS[kind]
    return make().partial_fit(X[:20], y[:20], **({} if y is TARGETS else {"classes": np.unique(y)}))


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_kind_round_trips_through_its_named_state(kind):
    estimator = fitted(kind)
    state = estimator._model.state()
    assert state["version"] == 1 and state["kind"] == KINDS[kind][2]
    copy = _cwrs.Model.from_state(state)
    assert copy.kind == state["kind"]
    np.testing.assert_equal(copy.state(), state)
    through_pickle = pickle.loads(pickle.dumps(estimator))
    buffer = io.BytesIO()
    estimator.save(buffer)
    through_file = cwrs.load(io.BytesIO(buffer.getvalue()))
    for restored in (through_pickle, through_file):
        np.testing.assert_array_equal(predictions(restored), predictions(estimator))
    # They go on learning alike.
    y = KINDS[kind][1]
    for model in (estimator, through_pickle, through_file):
        model.partial_fit(X[20:], y[20:])
    for restored in (through_pickle, through_file):
        np.testing.assert_array_equal(predictions(restored), predictions(estimator))


def test_a_callable_kernel_model_round_trips_by_pickle():
    estimator = cwrs.AROW(kernel=rbf).partial_fit(X[:15], Y2[:15], classes=[0, 1])
    restored = pickle.loads(pickle.dumps(estimator))
    np.testing.assert_array_equal(restored.decision_function(X), estimator.decision_function(X))
    estimator.partial_fit(X[15:], Y2[15:])
    restored.partial_fit(X[15:], Y2[15:])
    np.testing.assert_array_equal(restored.decision_function(X), estimator.decision_function(X))


@pytest.mark.parametrize("make", [cwrs.AROW, cwrs.AROWRegressor])
def test_the_full_covariance_is_stored_folded(make):
    estimator = make(covariance="full").partial_fit(X[:3], Y2[:3], **(
        {"classes": [0, 1]} if make is cwrs.AROW else {}
    ))  # fewer rows than a block: rank-one terms are pending
    model = estimator._model
    state = model.state()
    dim = X.shape[1] + 1
    assert state["covariance_values"].shape == (dim * dim,)
    np.testing.assert_array_equal(state["covariance_values"], model.covariance)
    restored = _cwrs.Model.from_state(state)
    for method in ("decision_function", "variance"):
        np.testing.assert_array_equal(getattr(restored, method)(X), getattr(model, method)(X))


def malformed(state):
    """(id, state, entry named in the error)."""
    missing = dict(state)
    del missing["mean"]
    return [
        ("missing", missing, "mean"),
        ("wrong dtype", dict(state, mean=state["mean"].astype(np.float32)), "mean"),
        ("wrong length", dict(state, l1_last=state["l1_last"][:-1]), "l1_last"),
        ("wrong type", dict(state, n_updates="7"), "n_updates"),
        ("unknown version", dict(state, version=2), "version 2"),
        ("no version", {k: v for k, v in state.items() if k != "version"}, "version"),
    ]


@pytest.mark.parametrize("case", range(6))
def test_a_malformed_state_names_the_entry_and_builds_nothing(case):
    model = fitted("binary-l1")._model
    before = model.state()
    name, state, entry = malformed(before)[case]
    with pytest.raises(cwrs.InvalidModelStateError, match=f"invalid model state: .*{entry}"):
        _cwrs.Model.from_state(state)
    np.testing.assert_equal(model.state(), before)  # the source model is as it was


def test_the_error_classes_are_value_errors_exported_from_cwrs():
    assert issubclass(cwrs.InvalidParameterError, ValueError)
    assert issubclass(cwrs.InvalidModelStateError, ValueError)
    assert cwrs.InvalidParameterError is _cwrs.InvalidParameterError
    config = fitted("binary-diag")._model.config
    with pytest.raises(cwrs.InvalidParameterError, match="unknown rule"):
        _cwrs.Model(dict(config, rule="nope"))
    with pytest.raises(cwrs.InvalidParameterError, match="covariance"):
        _cwrs.Model(dict(config, covariance=3))
    with pytest.raises(cwrs.InvalidParameterError):
        cwrs.AROW(r=-1.0).fit(X, Y2)
