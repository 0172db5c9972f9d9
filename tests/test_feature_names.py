"""Feature names from pandas data frames, as scikit-learn handles them.

A frame whose column names are all strings sets `feature_names_in_` (an object array) in `fit`
and in the first `partial_fit`; other column names set none, and names mixing strings with other
types raise TypeError. Later calls (`predict`, `decision_function`, `predict_proba`, `score`,
a continuing `partial_fit`) refuse a frame with other names or another order with a ValueError
that names them, and warn when only one side has names. A refused call leaves the model as it
was. Pickle and .cwrs files keep the names.
"""

import io
import pickle
import warnings

import numpy as np
import pytest

import cwrs

pd = pytest.importorskip("pandas")

NAMES = ["age", "income", "score", "visits"]
ESTIMATORS = [
    cwrs.AROW(random_state=0),
    cwrs.PA1(random_state=0),
    cwrs.SCW1(covariance="full", random_state=0),
    cwrs.AROW(kernel="rbf", random_state=0),
    cwrs.CW(kernel_approximation="rff", n_components=20, random_state=0),
    cwrs.AROWRegressor(random_state=0),
    cwrs.PARegressor(random_state=0),
]


def data(regression=False, n=30):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, len(NAMES)))
    y = X @ rng.normal(size=len(NAMES))
    return pd.DataFrame(X, columns=NAMES), (y if regression else np.where(y > 0, 1, -1))


def fitted(estimator):
    frame, y = data(isinstance(estimator, cwrs.Regressor))
    return type(estimator)(**estimator.get_params()).fit(frame, y), frame, y


def prediction_methods(estimator, y):
    methods = {"predict": estimator.predict, "score": lambda X: estimator.score(X, y)}
    for name in ("decision_function", "predict_proba"):
        if hasattr(estimator, name):
            methods[name] = getattr(estimator, name)
    return methods


def snapshot(estimator):
    return pickle.dumps(estimator)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=repr)
def test_fit_on_a_frame_sets_feature_names_in(estimator):
    model, frame, y = fitted(estimator)
    assert isinstance(model.feature_names_in_, np.ndarray)
    assert model.feature_names_in_.dtype == object
    assert model.feature_names_in_.tolist() == NAMES
    # The same frame predicts without a warning and as the bare array does.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from_frame = model.predict(frame)
    with pytest.warns(UserWarning, match="X does not have valid feature names"):
        from_array = model.predict(frame.to_numpy())
    np.testing.assert_array_equal(from_frame, from_array)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=repr)
@pytest.mark.parametrize(
    "columns, message",
    [
        (NAMES[::-1], "Feature names must be in the same order as they were in fit"),
        (["age", "income", "score", "clicks"], "unseen at fit time:\n- clicks\n"),
        (NAMES[:3], "seen at fit time, yet now missing:\n- visits\n"),
    ],
    ids=["reordered", "renamed", "missing"],
)
def test_other_columns_are_refused(estimator, columns, message):
    model, frame, y = fitted(estimator)
    other = pd.DataFrame(frame.to_numpy()[:, : len(columns)], columns=columns)
    before = snapshot(model)
    for name, method in prediction_methods(model, y).items():
        with pytest.raises(ValueError, match=message):
            method(other)
    with pytest.raises(ValueError, match=message):
        model.partial_fit(other, y)
    assert snapshot(model) == before


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=repr)
def test_partial_fit_sets_then_checks_the_names(estimator):
    frame, y = data(isinstance(estimator, cwrs.Regressor))
    model = type(estimator)(**estimator.get_params())
    kwargs = {"classes": [-1, 1]} if isinstance(model, cwrs.Classifier) else {}
    model.partial_fit(frame, y, **kwargs)
    assert model.feature_names_in_.tolist() == NAMES
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.partial_fit(frame, y)
    # A bare row continues the model, with the warning (the one-row path included).
    with pytest.warns(UserWarning, match="X does not have valid feature names"):
        model.partial_fit(frame.to_numpy()[:1], y[:1])
    reordered = frame[NAMES[::-1]]
    before = snapshot(model)
    with pytest.raises(ValueError, match="same order"):
        model.partial_fit(reordered, y)
    assert snapshot(model) == before


def test_array_fit_warns_on_a_frame_and_refit_forgets_the_names():
    frame, y = data()
    model = cwrs.AROW(random_state=0).fit(frame.to_numpy(), y)
    assert not hasattr(model, "feature_names_in_")
    with pytest.warns(UserWarning, match="X has feature names, but AROW was fitted without"):
        model.predict(frame)
    model.fit(frame, y)
    assert model.feature_names_in_.tolist() == NAMES
    model.fit(frame.to_numpy(), y)  # as scikit-learn: fitting without names removes them
    assert not hasattr(model, "feature_names_in_")


def test_names_only_when_all_are_strings():
    _, y = data()
    X = data()[0].to_numpy()
    model = cwrs.AROW(random_state=0).fit(pd.DataFrame(X), y)  # integer column names
    assert not hasattr(model, "feature_names_in_")
    with pytest.raises(TypeError, match="only supported if all input features have string names"):
        cwrs.AROW().fit(pd.DataFrame(X, columns=["a", "b", 3, "d"]), y)


def test_pickle_and_cwrs_file_keep_the_names():
    model, frame, y = fitted(cwrs.SCW1(random_state=0))
    for copy in (pickle.loads(pickle.dumps(model)), roundtrip(model)):
        assert copy.feature_names_in_.tolist() == NAMES
        np.testing.assert_array_equal(copy.predict(frame), model.predict(frame))
        with pytest.raises(ValueError, match="same order"):
            copy.predict(frame[NAMES[::-1]])


def roundtrip(model):
    buffer = io.BytesIO()
    model.save(buffer)
    buffer.seek(0)
    return cwrs.load(buffer)


def test_a_model_with_bad_feature_names_cannot_be_saved():
    # Files with bad names are refused at load time (tests/test_persist_attacks.py, CRAFTED);
    # save refuses to write them in the first place.
    model, _, _ = fitted(cwrs.AROW(random_state=0))
    for bad in (np.array(NAMES[:3], dtype=object), np.array([1, 2, 3, 4], dtype=object)):
        model.feature_names_in_ = bad
        with pytest.raises(ValueError, match="cannot be saved.*feature_names_in_"):
            model.save(io.BytesIO())


def test_scikit_learn_pipeline_passes_the_names():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    frame, y = data()
    pipeline = make_pipeline(StandardScaler().set_output(transform="pandas"), cwrs.AROW())
    pipeline.fit(frame, y)
    assert pipeline[-1].feature_names_in_.tolist() == NAMES
