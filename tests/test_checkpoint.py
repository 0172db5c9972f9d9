"""Every model that learning produces can be kept: it saves, loads and pickles, and the copy
continues bit for bit like the model that was never saved; an input that would break that is
refused up front with a ValueError (docs/design.md §3.6, §10)."""

import io
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cwrs

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
