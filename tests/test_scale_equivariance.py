"""A positive scale of the features changes nothing but the units: features ×s with the prior
a/s² is the same model (μ/s, Σ/s²), and Φ(μ·x/√(xᵀΣx)) does not depend on the scale of a row.
With s a power of two every product scales exactly, so the decision values agree to the bit
wherever float64 represents both models (docs/guide/guarantees.md, "Numerical safeguards":
features up to ~1e±150 with the variances above 2.2e-308)."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cwrs

SECOND_ORDER = ["AROW", "CW", "ExactCW", "SCW1", "SCW2", "SOP", "NAROW", "NHERD"]


def _stream(seed, n=300, d=6, classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    score = X @ rng.normal(size=d) + 0.5 * rng.normal(size=n)
    if classes == 2:
        return X, np.where(score > 0, 1, -1)
    return X, np.digitize(score, np.quantile(score, np.linspace(0, 1, classes + 1)[1:-1]))


def _fit(name, X, y, a, **params):
    model = getattr(cwrs, name)(a=a, fit_intercept=False, shuffle=False, **params)
    return model.fit(X, y)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    name=st.sampled_from(SECOND_ORDER),
    exponent=st.sampled_from([-500, -498, -300, 300, 498, 500]),
)
def test_full_covariance_is_exactly_scale_equivariant(seed, name, exponent):
    # Rows at 2^±500 (~1e±150) with a = 2^∓1000: the learned variances are ~1e-303 or
    # ~1e+300, and every step must be that of the model at scale 1, a = 1, bit for bit.
    X, y = _stream(seed)
    s = 2.0**exponent
    at_one = _fit(name, X, y, 1.0, covariance="full")
    scaled = _fit(name, X * s, y, 1.0 / (s * s), covariance="full")
    np.testing.assert_array_equal(scaled.decision_function(X * s), at_one.decision_function(X))
    np.testing.assert_array_equal(scaled.coef_ * s, at_one.coef_)
    assert (scaled.n_updates_, scaled.n_mistakes_) == (at_one.n_updates_, at_one.n_mistakes_)


@pytest.mark.parametrize("name", ["AROW", "CW", "SOP"])
@pytest.mark.parametrize("s", [1e150, 1e-150])
def test_full_covariance_learns_at_1e150_as_at_scale_one(name, s):
    # Not a power of two: the rounding differs, the model must not.
    X, y = _stream(7, n=600, d=10)
    at_one = _fit(name, X, y, 1.0, covariance="full")
    scaled = _fit(name, X * s, y, 1.0 / (s * s), covariance="full")
    agree = np.mean(scaled.predict(X * s) == at_one.predict(X))
    assert agree >= 0.99
    assert np.mean(scaled.predict(X * s) == y) >= np.mean(at_one.predict(X) == y) - 0.01
    np.testing.assert_allclose(scaled.coef_ * s, at_one.coef_, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_a_model_at_the_variance_floor_saves_loads_and_continues(name, tmp_path):
    # Rows at 2^498 with a = 2^-996: learned variances ~1e-302, and with AROW's r = 1e-9 they
    # reach the floor, 2.2e-308; the state must still save, load and continue bit for bit.
    X, y = _stream(4)
    s = 2.0**498
    params = {"r": 1e-9} if name == "AROW" else {}
    model = _fit(name, X[:200] * s, y[:200], 2.0**-996, covariance="full", **params)
    assert np.diag(model.covariance_).min() < (1e-307 if params else 1e-300)
    model.save(tmp_path / "m.cwrs")
    copies = [pickle.loads(pickle.dumps(model)), cwrs.load(tmp_path / "m.cwrs")]
    for m in [model, *copies]:
        m.partial_fit(X[200:] * s, y[200:])
    assert np.isfinite(model.decision_function(X * s)).all()
    for copy in copies:
        np.testing.assert_array_equal(copy.decision_function(X * s), model.decision_function(X * s))


FORMS = [
    {"covariance": "full"},
    {"covariance": "diag"},
    {"covariance": "lowrank", "rank": 3},
    {"covariance": "full", "average": True},
]


def _confident_rows(model, X):
    # Rows whose probability is informative (neither rounded to 0 or 1 nor 1/2).
    p = model.predict_posterior_proba(X)[:, 1]
    return X[(p > 0.6) & (p < 0.999) | (p < 0.4) & (p > 0.001)][:10]


@pytest.mark.parametrize("params", FORMS, ids=str)
@pytest.mark.parametrize("exponent", [530, 1000, -565, -1000])
def test_posterior_proba_does_not_depend_on_the_scale_of_a_row(params, exponent):
    # 2^530 ~ 1e160 overflows xᵀΣx, 2^-565 ~ 1e-170 underflows it; 2^±1000 push μ·x and the
    # row itself to float64's edges.
    X, y = _stream(11)
    model = _fit("AROW", X, y, 1.0, **params)
    rows = _confident_rows(model, X)
    assert len(rows) >= 3
    s = 2.0**exponent
    np.testing.assert_array_equal(model.predict_posterior_proba(rows * s), model.predict_posterior_proba(rows))


@pytest.mark.parametrize("s", [1e160, 1e-170])
def test_posterior_proba_of_a_rescaled_row_stays_confident(s):
    # Not a power of two: equal to rounding.
    X, y = _stream(11)
    model = _fit("AROW", X, y, 1.0, covariance="full")
    rows = _confident_rows(model, X)
    np.testing.assert_allclose(model.predict_posterior_proba(rows * s), model.predict_posterior_proba(rows), rtol=1e-12)


@pytest.mark.parametrize("strategy", ["max-score", "ovr"])
@pytest.mark.parametrize("params", FORMS[:3], ids=str)
@pytest.mark.parametrize("exponent", [530, -565])
def test_multiclass_posterior_proba_does_not_depend_on_the_scale_of_a_row(params, strategy, exponent):
    X, y = _stream(5, classes=3)
    model = _fit("AROW", X, y, 1.0, multi_class=strategy, **params)
    rows = X[:20]
    s = 2.0**exponent
    np.testing.assert_array_equal(model.predict_posterior_proba(rows * s), model.predict_posterior_proba(rows))


@pytest.mark.parametrize("params", FORMS, ids=str)
def test_predict_proba_goes_from_one_half_to_the_posterior_as_a_row_grows(params):
    # The label noise s² is in margin units: beside an overflowed xᵀΣx it is nothing (the
    # posterior form, at the row's unit scale), beside an underflowed one everything (Φ(μ·x/s),
    # 1/2 on the score's side).
    X, y = _stream(11)
    model = _fit("AROW", X, y, 1.0, **params)
    rows = _confident_rows(model, X)
    posterior = model.predict_posterior_proba(rows)
    np.testing.assert_array_equal(model.predict_proba(rows * 2.0**530), posterior)
    tiny = model.predict_proba(rows * 2.0**-565)[:, 1]
    sides = np.where(posterior[:, 1] > 0.5, np.nextafter(0.5, 1.0), np.nextafter(0.5, 0.0))
    np.testing.assert_array_equal(tiny, sides)


def test_predict_proba_scales_the_bias_feature_with_the_row():
    # With an intercept the row and its bias feature 1 scale together: at 1e160 the bias is
    # negligible, so P is Φ of the features' own ratio, not the bias's answer.
    X, y = _stream(11)
    model = cwrs.AROW(covariance="full").fit(X, y)
    d = X.shape[1]
    coef, sigma = model.coef_.ravel(), model.covariance_[:d, :d]
    rows = X[:10]
    z = rows @ coef / np.sqrt(np.einsum("ij,jk,ik->i", rows, sigma, rows))
    expected = np.array([0.5 * math.erfc(-t / math.sqrt(2)) for t in z])
    np.testing.assert_allclose(
        model.predict_posterior_proba(rows * 1e160)[:, 1], expected, rtol=1e-9
    )
