"""AROWRegressor(a="auto"): the prior variance of the feature weights learned online by
maximizing the evidence (docs/design.md §3.14). The learned a equals a slow NumPy reference of
the same checkpoints and fixed point; the model is the batch posterior under the final a; the
intervals cover; files, pickles and refusals."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import cwrs
from cwrs._persist import hyper_parameters_of

ITERATIONS, TOLERANCE, STEP_LIMIT = 4, 1e-10, 1e6


def _stream(n, d=6, scale=5.0, noise=0.1, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, X @ (scale * rng.normal(size=d)) + 1.0 + noise * rng.normal(size=n)


def _checkpoints(n_rows, d):
    checkpoint, out = d + 1, []
    while checkpoint <= n_rows:
        out.append(checkpoint)
        checkpoint *= 2
    return out


def _posterior(X, y, a, learned_noise):
    """The batch posterior of AROW regression with r = 1, prior a on the features and 1 on
    the bias: (μ, Σ, κ), κ the normal-inverse-gamma scale (1 + yᵀy − μᵀXᵀy)/(1 + n)."""
    Z = np.hstack([X, np.ones((len(X), 1))])
    prior = np.r_[np.full(X.shape[1], 1.0 / a), 1.0]
    sigma = np.linalg.inv(np.diag(prior) + Z.T @ Z)
    information = Z.T @ y
    mean = sigma @ information
    kappa = (1.0 + y @ y - mean @ information) / (1.0 + len(y)) if learned_noise else 1.0
    return mean, sigma, kappa


def reference_prior(X, y, learned_noise=True):
    """The learned a after each checkpoint: MacKay's fixed point a ← ‖μ‖²/(κ·γ), γ = Σ_j
    (1 − Σ_jj/a) over the features, a few iterations from the current a, with κ and the
    posterior recomputed in batch under each trial a."""
    d, a, out = X.shape[1], 1.0, []
    for n in _checkpoints(len(y), d):
        current, trial = a, a
        low, high = current / STEP_LIMIT, current * STEP_LIMIT
        for _ in range(ITERATIONS):
            mean, sigma, kappa = _posterior(X[:n], y[:n], trial, learned_noise)
            gamma = d - np.trace(sigma[:d, :d]) / trial
            nxt = min(max(mean[:d] @ mean[:d] / (kappa * gamma), low), high)
            converged = abs(nxt - trial) / trial < TOLERANCE
            trial = nxt
            if converged:
                break
        a = trial
        out.append(a)
    return out


@pytest.mark.parametrize("r", ["auto", 1.0])
def test_the_learned_prior_is_the_reference_at_every_checkpoint(r):
    X, y = _stream(200, noise=0.5, seed=1)
    expected = reference_prior(X, y, learned_noise=(r == "auto"))
    model = cwrs.AROWRegressor(r=r, a="auto", covariance="full")
    start = 0
    for checkpoint, a in zip(_checkpoints(len(y), X.shape[1]), expected):
        model.partial_fit(X[start:checkpoint], y[start:checkpoint])
        start = checkpoint
        assert model.prior_variance_ == pytest.approx(a, rel=1e-8)


def test_the_model_is_the_batch_posterior_under_the_final_prior():
    X, y = _stream(300, seed=2)
    model = cwrs.AROWRegressor(r="auto", a="auto", covariance="full").partial_fit(X, y)
    mean, sigma, kappa = _posterior(X, y, model.prior_variance_, True)
    np.testing.assert_allclose(model.coef_, mean[:-1], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model.intercept_, mean[-1], rtol=1e-9)
    np.testing.assert_allclose(model.covariance_, sigma[:-1, :-1], rtol=1e-9, atol=1e-15)
    assert model.noise_variance_ == pytest.approx(kappa, rel=1e-9)
    # Row by row, in batches of any size, the same model.
    rows = cwrs.AROWRegressor(r="auto", a="auto", covariance="full")
    for i in range(0, len(y), 37):
        rows.partial_fit(X[i:i + 37], y[i:i + 37])
    assert rows.prior_variance_ == model.prior_variance_
    np.testing.assert_array_equal(rows.coef_, model.coef_)


@pytest.mark.parametrize("noise", [0.1, 3.0])
def test_the_intervals_cover_95_percent_whatever_the_scale_of_the_weights(noise):
    X, y = _stream(6_000, d=20, noise=noise, seed=4)
    model = cwrs.AROWRegressor(r="auto", a="auto", covariance="full")
    model.fit(X[:3_000], y[:3_000])
    mean, std = model.predict(X[3_000:], return_std=True)
    coverage = np.mean(np.abs(y[3_000:] - mean) <= 1.96 * std)
    assert 0.93 <= coverage <= 0.97, coverage
    assert model.noise_variance_ == pytest.approx(noise**2, rel=0.15)
    # The weights' prior variance in absolute units, σ̂²·a, is about their scale 5² = 25.
    assert 5.0 < model.noise_variance_ * model.prior_variance_ < 125.0


@pytest.mark.parametrize("covariance", ["diag", "full"])
def test_a_learned_prior_survives_pickles_files_and_continues(tmp_path, covariance):
    X, y = _stream(300, seed=5)
    model = cwrs.AROWRegressor(r="auto", a="auto", covariance=covariance).fit(X[:200], y[:200])
    path = tmp_path / "model.cwrs"
    model.save(path)
    copies = [pickle.loads(pickle.dumps(model)), cwrs.load(path)]
    model.partial_fit(X[200:], y[200:])
    for copy in copies:
        assert copy.get_params()["a"] == "auto"
        copy.partial_fit(X[200:], y[200:])
        assert copy.prior_variance_ == model.prior_variance_
        np.testing.assert_array_equal(copy.predict(X, return_std=True)[1],
                                      model.predict(X, return_std=True)[1])
    # A file holding the model alone (as the Rust crate writes it) gets a="auto" back.
    params = hyper_parameters_of(cwrs.AROWRegressor, model._model.config)
    assert params["a"] == "auto" and params["r"] == "auto"


def test_a_fixed_a_is_its_own_prior_variance():
    X, y = _stream(100, seed=6)
    assert cwrs.AROWRegressor(a=3.0).fit(X, y).prior_variance_ == 3.0


@pytest.mark.parametrize("params, message", [
    ({"covariance": "lowrank"}, 'needs covariance="full" or "diag"'),
    ({"penalty": "l1"}, "cannot be combined with an L1 penalty"),
    ({"process_noise": 0.1}, "cannot be combined with process noise"),
    ({"average": True}, "cannot be combined with averaging"),
    ({"n_jobs": 2}, "learned prior"),
])
def test_refused_combinations_leave_the_estimator_unchanged(params, message):
    X, y = _stream(100, seed=7)
    model = cwrs.AROWRegressor(a=2.0).fit(X, y)
    coef = model.coef_.copy()
    model.set_params(a="auto", **params)
    with pytest.raises(ValueError, match=message):
        model.fit(X, y)
    np.testing.assert_array_equal(model.coef_, coef)
    assert model.prior_variance_ == 2.0


def test_only_the_regressor_takes_a_auto():
    X, y = _stream(50, seed=8)
    with pytest.raises(ValueError, match='a must be a real number or "auto"'):
        cwrs.AROWRegressor(a="learned").fit(X, y)
    with pytest.raises(ValueError, match="a must be a real number"):
        cwrs.AROW(a="auto").fit(X, y > 0)
    with pytest.raises(ValueError, match="a must be a real number"):
        cwrs.SCW1(a="auto").fit(X, y > 0)


def test_models_with_a_learned_prior_are_not_merged():
    X, y = _stream(100, seed=9)
    models = [cwrs.AROWRegressor(a="auto").fit(X[i::2], y[i::2]) for i in range(2)]
    coef = models[0].coef_.copy()
    with pytest.raises(ValueError, match=r'learned prior \(a="auto"\) cannot be merged'):
        cwrs.merge(models)
    np.testing.assert_array_equal(models[0].coef_, coef)


def test_the_river_adapter_learns_the_prior_while_features_arrive():
    pytest.importorskip("river")
    from cwrs.river import RiverRegressor

    rng = np.random.default_rng(10)
    model = RiverRegressor(cwrs.AROWRegressor(r="auto", a="auto", covariance="full"))
    weights = {"u": 3.0, "v": -2.0, "w": 5.0}
    for t in range(300):
        x = {k: rng.normal() for k in (["u", "v"] if t < 100 else weights)}
        model.learn_one(x, sum(weights[k] * x[k] for k in x) + 0.1 * rng.normal())
        if t == 99:
            learned = model.estimator_.prior_variance_
    estimator = model.estimator_
    # The third feature joins under the prior learned by then (a widened model's unseen
    # variance), and the model learns it.
    assert learned != 1.0
    assert model.predict_one({"u": 1.0, "v": 1.0, "w": 1.0}) == pytest.approx(6.0, abs=0.05)
    assert estimator.noise_variance_ == pytest.approx(0.01, rel=0.5)
