"""Every model that learning produces can be kept: it saves, loads and pickles, and the copy
continues bit for bit like the model that was never saved; an input that would break that is
refused up front with a ValueError (docs/design.md §3.6, §10)."""

import copy
import io
import pickle

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import cwrs
from test_persist_attacks import array_of, native_path

SECOND_ORDER = ["AROW", "CW", "SCW1", "SCW2", "NAROW", "SOP", "IELLIP", "NHERD", "ExactCW"]


def kept(model):
    """The model through a .cwrs file and through a pickle (both must load)."""
    buffer = io.BytesIO()
    model.save(buffer)
    loaded = cwrs.load(io.BytesIO(buffer.getvalue()))
    return loaded, pickle.loads(pickle.dumps(model))


def outputs(model, X):
    if isinstance(model, cwrs.Regressor):
        return model.predict(X)
    return model.decision_function(X)


def binary_rows(rng, n, d):
    X = rng.normal(size=(n, d))
    return X, (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(int)


@pytest.mark.parametrize("scale", [1e9, 1e50, 1e154, 1e300])
@pytest.mark.parametrize("rule", SECOND_ORDER + ["AROWRegressor"])
def test_diagonal_process_noise_keeps_variances_savable_at_large_features(rule, scale):
    # One large column (a timestamp, an amount): the variance update cancelled to exactly 0.
    rng = np.random.default_rng(0)
    X, y = binary_rows(rng, 40, 3)
    X[:, 1] = scale * (1.0 + np.arange(40) / 40)
    if rule == "AROWRegressor":
        model = cwrs.AROWRegressor(covariance="diag", process_noise=1e-3)
        y = X[:, 0] * 2.0
    else:
        model = getattr(cwrs, rule)(covariance="diag", process_noise=1e-3)
    model.fit(X, y)
    assert np.all(np.asarray(model.covariance_) > 0)
    for copy in kept(model):
        np.testing.assert_array_equal(outputs(copy, X), outputs(model, X))


def test_sharded_fit_on_a_timestamp_stream_merges():
    rng = np.random.default_rng(1)
    X, y = binary_rows(rng, 200, 3)
    X[:, 2] = 1.7e9 + np.arange(200)
    model = cwrs.AROW(covariance="diag", process_noise=1e-3, n_jobs=2).fit(X, y)
    kept(model)


@pytest.mark.parametrize("covariance", ["diag", "full"])
def test_absurd_process_noise_is_refused_up_front(covariance):
    X, y = binary_rows(np.random.default_rng(2), 20, 3)
    for q in [1e308, 1e290]:
        model = cwrs.AROW(covariance=covariance, process_noise=q)
        with pytest.raises(ValueError, match="process_noise must be at most .*e288"):
            model.fit(X, y)
        assert not hasattr(model, "coef_")
    # The bound depends on a: a + q·2^64 must be finite.
    with pytest.raises(ValueError, match="process_noise must be at most"):
        cwrs.AROW(covariance=covariance, a=1e308, process_noise=5e288).fit(X, y)
    kept(cwrs.AROW(covariance=covariance, process_noise=5e288).fit(X, y))


@pytest.mark.parametrize("scale", [1e150, 1e154, 1e160, 1e300])
def test_adagrad_sums_stay_finite_at_large_features(scale):
    X, y = binary_rows(np.random.default_rng(3), 40, 3)
    model = cwrs.AdaGrad().fit(X * scale, y)
    for copy in kept(model):
        np.testing.assert_array_equal(outputs(copy, X), outputs(model, X))


@pytest.mark.parametrize("scale", [1e100, 1e154, 1e160, 1e300])
def test_regressor_auto_noise_statistics_stay_finite_at_large_features(scale):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(60, 3))
    y = X @ np.array([1.0, -2.0, 0.5])
    model = cwrs.AROWRegressor(process_noise="auto").fit(X * scale, y * scale)
    assert np.all(np.isfinite(model.__getstate__()["_model"][1]["drift_statistics"]))
    for copy in kept(model):
        np.testing.assert_array_equal(copy.predict(X), model.predict(X))


@pytest.mark.parametrize("value", [1e155, 1e160, 1e200, 1e300, -1e300])
@pytest.mark.parametrize("rule", ["AROW", "AROWRegressor"])
def test_crafted_lowrank_sketch_is_refused_or_keeps_learning_finite(rule, value):
    # One sketch value so large that the Gram matrix I + BSBᵀ overflows: the factor was NaN
    # and the next update turned the whole mean into NaN.
    rng = np.random.default_rng(5)
    X = rng.normal(size=(60, 4))
    y = X[:, 0] if rule == "AROWRegressor" else (X[:, 0] > 0).astype(int)
    make = getattr(cwrs, rule)
    model = make(covariance="lowrank", rank=2, shuffle=False).fit(X[:5], y[:5])
    state = model.__getstate__()
    native = state["_model"][1]
    dim = X.shape[1] + 1
    for position in range(dim, len(native["covariance_values"])):
        values = native["covariance_values"].copy()
        values[position] = value
        crafted = make(covariance="lowrank", rank=2)
        try:
            crafted.__setstate__(
                dict(state, _model=(state["_model"][0], dict(native, covariance_values=values)))
            )
        except cwrs.InvalidModelStateError:
            continue
        for i in range(len(X)):
            crafted.partial_fit(X[i : i + 1], y[i : i + 1])
            assert np.all(np.isfinite(crafted.coef_)), (position, i)


def _pending_model(kind, process_noise, average):
    if kind == "regressor":
        return cwrs.AROWRegressor(covariance="full", process_noise=process_noise,
                                  average=average, shuffle=False)
    multi_class = "ovr" if kind == "ovr" else "max-score"
    return cwrs.AROW(covariance="full", process_noise=process_noise, average=average,
                     multi_class=multi_class, shuffle=False)


@pytest.mark.parametrize("budget", [None, 4])
@pytest.mark.parametrize("kernel", ["rbf", "poly", "linear"])
@pytest.mark.parametrize("rule", ["AROW", "CW", "SCW1", "NAROW", "SOP"])
def test_kernel_models_with_a_huge_prior_stay_savable(rule, kernel, budget):
    """Σ's dual coefficients grow like a²·c along directions the support rows repeat: with
    a = 1e300 and rows (nearly) repeated they overflowed, and the model could not be saved."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 2)) * 1e-300  # every RBF kernel value 1: the rows repeat
    X = np.vstack([X, rng.normal(size=(12, 2))])
    y = np.tile([0, 1, 1], 8)
    model = getattr(cwrs, rule)(a=1e300, kernel=kernel, budget=budget, fit_intercept=False)
    model.partial_fit(X[:16], y[:16], classes=[0, 1])
    for copy_ in kept(model):
        model_rest, copy_rest = pickle.loads(pickle.dumps(model)), copy_
        model_rest.partial_fit(X[16:], y[16:])
        copy_rest.partial_fit(X[16:], y[16:])
        np.testing.assert_array_equal(outputs(model_rest, X), outputs(copy_rest, X))
        kept(model_rest)


@pytest.mark.parametrize("d", [40, 64])
@pytest.mark.parametrize("kind", ["binary", "regressor", "max-score", "ovr"])
@pytest.mark.parametrize("process_noise", [0.0, 0.01])
@pytest.mark.parametrize("average", [False, True])
def test_full_covariance_with_pending_terms_is_kept_without_changing_the_model(
    d, kind, process_noise, average
):
    # From 32 coordinates on, Σ keeps rank-one terms pending before a fold: taking a state
    # (save, pickle, deepcopy) must neither fold them into the model nor lose them in the copy.
    rng = np.random.default_rng(d)
    X = rng.normal(size=(90, d))
    if kind == "regressor":
        y = X[:, 0] - X[:, 1] + 0.3 * rng.normal(size=90)
    elif kind == "binary":
        y = (X[:, 0] + 0.3 * rng.normal(size=90) > 0).astype(int)
    else:
        y = (X[:, 0] > 0).astype(int) + (X[:, 1] + 0.3 * rng.normal(size=90) > 0.1)
    split = 37  # not a multiple of the fold block: terms are pending when the state is taken
    first = {} if kind == "regressor" else {"classes": np.unique(y)}
    original = _pending_model(kind, process_noise, average)
    twin = _pending_model(kind, process_noise, average)  # learns the same rows, never saved
    for model in (original, twin):
        model.partial_fit(X[:split], y[:split], **first)
    assert "pending_terms" in original.__getstate__()["_model"][1]
    buffer = io.BytesIO()
    original.save(buffer)
    copies = [
        cwrs.load(io.BytesIO(buffer.getvalue())),
        pickle.loads(pickle.dumps(original)),
        copy.deepcopy(original),
    ]
    for model in (original, twin, *copies):
        model.partial_fit(X[split:], y[split:])
    for model in (original, *copies):
        for got, want in [
            (outputs(model, X), outputs(twin, X)),
            (model.coef_, twin.coef_),
            (model.covariance_, twin.covariance_),
        ]:
            assert np.asarray(got).tobytes() == np.asarray(want).tobytes()


def test_pending_terms_that_do_not_give_the_covariance_are_refused():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(37, 40))
    model = cwrs.AROW(covariance="full", shuffle=False).fit(X, X[:, 0] > 0)
    state = model.__getstate__()
    native = state["_model"][1]
    terms = native["pending_terms"].copy()
    terms[np.argmax(np.abs(terms))] *= 1 + 2**-52
    crafted = dict(state, _model=(state["_model"][0], dict(native, pending_terms=terms)))
    with pytest.raises(cwrs.InvalidModelStateError, match="pending_terms"):
        cwrs.AROW().__setstate__(crafted)


SKETCH_VALUES = [1e100, 1e150, 1e154, 1e155, 1e200, 1e300, 1.7e308, 1e-150, 1e-300, 5e-324]


@st.composite
def lowrank_crafts(draw):
    """(rule, kind, rank, seed, rows, features, scale, edits): a low-rank learner fitted on
    `rows` random rows of that scale, then a few of its state's values (variances S or
    sketch entries, at positions taken modulo their count) set to huge or tiny finite values
    (`value`) or their signs flipped (`None`)."""
    kind = draw(st.sampled_from(["binary", "multiclass", "regressor"]))
    rule = "AROWRegressor" if kind == "regressor" else draw(
        st.sampled_from(["AROW", "CW", "SCW1", "SCW2"])
    )
    value = st.sampled_from([v * sign for v in SKETCH_VALUES for sign in (1, -1)])
    edits = st.lists(st.tuples(st.integers(0, 10**6), st.none() | value), min_size=1, max_size=3)
    return (
        rule, kind, draw(st.integers(1, 3)), draw(st.integers(0, 2**32 - 1)),
        draw(st.integers(1, 12)), draw(st.integers(1, 4)),
        draw(st.sampled_from([1.0, 1e50, 1e150])), draw(edits),
    )


def crafted_lowrank(rule, kind, rank, seed, rows, features, scale, edits):
    """The fitted learner of `lowrank_crafts` and its crafted covariance values."""
    X = np.random.default_rng(seed).normal(size=(rows, features)) * scale
    if kind == "regressor":
        y, first = X[:, 0], {}
    else:
        n_classes = 3 if kind == "multiclass" else 2
        y, first = np.arange(rows) % n_classes, {"classes": list(range(n_classes))}
    model = getattr(cwrs, rule)(covariance="lowrank", rank=rank, shuffle=False)
    model.partial_fit(X, y, **first)
    values = model._model.state()["covariance_values"].copy()
    for position, value in edits:
        position %= len(values)
        values[position] = -values[position] if value is None else value
    return model, values


@st.composite
def extreme_rows(draw):
    """(X, targets, labels): rows 4 features wide (a test takes the first ones it needs) with
    values from EXTREMES, a regression target and a class label (of 3) for each."""
    X, targets = batches(draw, 4, "regressor")
    return X, targets, np.array([draw(st.integers(0, 2)) for _ in targets])


@settings(max_examples=200, deadline=None)
@given(craft=lowrank_crafts(), extreme=extreme_rows())
# A variance far above the others (Σx can hold a NaN, which must not reach the mean) ...
@example(craft=("AROWRegressor", "regressor", 2, 0, 3, 1, 1.0, [(0, 1e300)]),
         extreme=(np.zeros((1, 4)), np.zeros(1), np.zeros(1, dtype=int)))
# ... and a sketch whose shrink meets an eigen-problem near overflow.
@example(craft=("AROW", "binary", 2, 1, 3, 1, 1.0, [(0, 1e150)]),
         extreme=(np.zeros((1, 4)), np.zeros(1), np.zeros(1, dtype=int)))
def test_crafted_lowrank_state_is_refused_or_keeps_learning_finite(craft, extreme):
    # A state that loads must keep learning finite, on ordinary and extreme rows alike;
    # a file holding it loads exactly when the state does.
    model, values = crafted_lowrank(*craft)
    kind = craft[1]
    buffer = io.BytesIO()
    model.save(buffer)
    original = buffer.getvalue()
    _, replaced = array_of(original, native_path(original, "covariance_values"))
    state = dict(model._model.state(), covariance_values=values)
    try:
        native = cwrs._cwrs.Model.from_state(state)
    except cwrs.InvalidModelStateError:
        with pytest.raises(ValueError, match="invalid model state: a lowrank covariance"):
            cwrs.load(io.BytesIO(replaced(values)))
        return
    loaded = cwrs.load(io.BytesIO(replaced(values)))
    assert loaded._model.state()["covariance_values"].tobytes() == values.tobytes()
    assert native.state()["covariance_values"].tobytes() == values.tobytes()
    d = model.n_features_in_
    ordinary = np.random.default_rng(0).normal(size=(8, d))
    X, targets, labels = extreme
    rows = np.vstack([ordinary, X[:, :d]])
    if kind == "regressor":
        y = np.concatenate([ordinary[:, 0], targets])
    else:
        y = np.concatenate([np.arange(8) % 2, labels if kind == "multiclass" else labels % 2])
    for i in range(len(rows)):
        loaded.partial_fit(rows[i : i + 1], y[i : i + 1])
        state = loaded._model.state()
        for name in ("mean", "means", "covariance_values"):
            if name in state:
                assert np.all(np.isfinite(state[name])), (name, i)
        assert np.all(np.isfinite(loaded.coef_)), i
    kept(loaded)


# ------------------------------------------------------------------ the property over learners
EXTREMES = [0.0, 0.0, 1e-300, -1e-300, 1e-150, 1.0, -1.0, 1.7e9, -1e9, 1e50, 1e150, -1e154,
            1e200, 1e300, -1e300]
CLASSIFIER_RULES = [
    "AROW", "CW", "ExactCW", "SCW1", "SCW2", "NAROW", "SOP", "NHERD", "IELLIP", "Perceptron",
    "PA", "PA1", "PA2", "ALMA", "ROMMA", "AggressiveROMMA", "OGD", "AdaGrad", "FTRL",
]
REGRESSOR_RULES = ["AROWRegressor", "PARegressor", "PA1Regressor", "PA2Regressor"]
NOISE = [0.0, 0.0, "auto", 1e-6, 0.01, 1.0, 1e100, 5e288, 9.7e288]


@st.composite
def learners(draw):
    """(rule, constructor keywords, kind): any rule, form and parameters in the documented
    ranges; combinations the learner refuses are refused up front with a ValueError."""
    kind = draw(st.sampled_from(["binary", "multiclass", "regressor"]))
    rule = draw(st.sampled_from(REGRESSOR_RULES if kind == "regressor" else CLASSIFIER_RULES))
    params = {}
    names = cwrs_params(rule)
    if "covariance" in names:
        params["covariance"] = draw(st.sampled_from(["diag", "full", "lowrank"]))
        if params["covariance"] == "lowrank":
            params["rank"] = draw(st.integers(1, 3))
    if "a" in names:
        params["a"] = draw(st.sampled_from([1e-100, 1e-3, 1.0, 1e3, 1e100, 1e300]))
    if "process_noise" in names:
        params["process_noise"] = draw(st.sampled_from(NOISE))
    for name in ("r", "C"):
        if name in names:
            params[name] = draw(st.sampled_from([1e-3, 1.0, 1e3]))
    if "kernel" in names and draw(st.integers(0, 5)) == 0:
        params.update(kernel="rbf", budget=4)
    if "average" in names and draw(st.booleans()):
        params["average"] = True
    if "fit_intercept" in names:
        params["fit_intercept"] = draw(st.booleans())
    return rule, params, kind


def cwrs_params(rule):
    return getattr(cwrs, rule)().get_params()


def batches(draw, d, kind):
    """Up to 8 rows: three columns drawn, any further ones random normals (wide rows stay
    fast to draw)."""
    n = draw(st.integers(1, 8))
    value = st.one_of(st.sampled_from(EXTREMES), st.floats(-10, 10))
    drawn = np.array([[draw(value) for _ in range(min(d, 3))] for _ in range(n)])
    rest = np.random.default_rng(draw(st.integers(0, 2**32))).normal(size=(n, max(d - 3, 0)))
    X = np.hstack([drawn, rest])
    if kind == "regressor":
        target = st.one_of(st.sampled_from([0.0, 1.0, -1e150, 1e9]), st.floats(-10, 10))
        y = np.array([draw(target) for _ in range(n)])
    else:
        y = np.array([draw(st.integers(0, 2 if kind == "multiclass" else 1)) for _ in range(n)])
    return X, y


def result(call):
    """What a call gave: its values' bits, or the class of the ValueError it raised."""
    try:
        return np.asarray(call()).tobytes()
    except ValueError as error:
        return type(error).__name__


def observed(model, X):
    if isinstance(model, cwrs.Regressor):
        return result(lambda: model.predict(X))
    scores = result(lambda: model.decision_function(X))
    if not hasattr(model, "predict_proba"):  # first-order rules without a variance
        return scores
    return scores, result(lambda: model.predict_proba(X))


@settings(max_examples=300, deadline=None)
@given(learner=learners(), data=st.data())
def test_every_fitted_model_saves_loads_pickles_and_continues_bit_for_bit(learner, data):
    rule, params, kind = learner
    d = data.draw(st.integers(1, 3))
    if params.get("covariance") == "full" and data.draw(st.booleans()):
        d = data.draw(st.sampled_from([32, 40]))  # Σ keeps rank-one terms pending from 32 on
    X1, y1 = batches(data.draw, d, kind)
    X2, y2 = batches(data.draw, d, kind)
    classes = [] if kind == "regressor" else list(range(3 if kind == "multiclass" else 2))
    first = {"classes": classes} if classes else {}

    model = getattr(cwrs, rule)(**params)
    try:
        model.partial_fit(X1, y1, **first)
    except ValueError:
        # Refused up front: nothing was learned.
        assert not hasattr(model, "n_features_in_")
        return
    twin = getattr(cwrs, rule)(**params)  # learns the same rows, never saved
    twin.partial_fit(X1, y1, **first)
    copies = kept(model)
    everything = np.vstack([X1, X2])
    runs = [
        (result(lambda m=m: m.partial_fit(X2, y2).n_features_in_), observed(m, everything))
        for m in (twin, model, *copies)
    ]
    assert all(run == runs[0] for run in runs[1:])
    for copy in kept(model):  # still savable after learning more
        assert observed(copy, X2) == observed(model, X2)
