"""The predictive probabilities of the second-order classifiers and AROW regression's learned
noise variance (docs/design.md §3.14): the estimates equal a slow reference written from the
math over the progressive scores, the probabilities use them, and both survive pickling, model
files and merges."""

from __future__ import annotations

import io
import math
import pickle

import numpy as np
import pytest
from scipy.special import ndtr

import cwrs

LABEL_PRIOR = (0.0, 1.0)  # ln s² = 0 (s² = 1), information 1
RESIDUAL_PRIOR = (1.0, 1.0)  # κ = 1, one row


def _phi(z):
    return math.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)


def reference_label_noise(margins, variances, weights=None):
    """ln s² and its information after Fisher-scoring steps on ln Φ(m/√(v + s²)), row by row."""
    theta, information = LABEL_PRIOR
    weights = np.ones(len(margins)) if weights is None else weights
    for m, v, h in zip(margins, variances, weights):
        s2 = math.exp(theta)
        z = m / math.sqrt(v + s2)
        share = s2 / (v + s2)
        a = abs(z)
        tail = 0.5 * math.erfc(a / math.sqrt(2.0))
        mills = _phi(z) / (1.0 - tail if z >= 0 else tail)
        gradient = -0.5 * z * share * mills
        fisher = _phi(a) ** 2 / (tail * (1.0 - tail)) * (0.5 * a * share) ** 2
        information += h * fisher
        theta = min(max(theta + max(min(h * gradient / information, 1.0), -1.0), -60.0), 60.0)
    return theta, information


def _stream(n, d=8, positives=0.5, seed=0, classes=2):
    """Rows whose labels follow a probit model with noise: P(y | x) is known."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if classes == 2:
        margin = X @ rng.normal(size=d) + rng.normal(size=n)
        return X, (margin > np.quantile(margin, 1 - positives)).astype(int)
    scores = X @ rng.normal(size=(d, classes)) + rng.normal(size=(n, classes))
    return X, scores.argmax(axis=1)


def _progressive(model, X, y, sample_weight=None):
    _, scores, variances = model.partial_fit(
        X, y, classes=np.unique(y), sample_weight=sample_weight, return_scores=True
    )
    return scores, variances


@pytest.mark.parametrize("cls", [cwrs.AROW, cwrs.SCW1, cwrs.NAROW, cwrs.CW])
@pytest.mark.parametrize("covariance", ["diag", "full"])
def test_the_binary_label_noise_is_the_reference_over_the_progressive_scores(cls, covariance):
    X, y = _stream(400, seed=1)
    weights = np.random.default_rng(2).uniform(0.2, 3.0, size=len(y))
    model = cls(covariance=covariance)
    scores, variances = _progressive(model, X, y, weights)
    signs = np.where(y == model.classes_[1], 1.0, -1.0)
    theta, _ = reference_label_noise(signs * scores, variances, weights)
    # The learning path's μ·x and xᵀΣx may differ from a prediction's in the last bits.
    assert model.noise_variance_ == pytest.approx(math.exp(theta), rel=1e-9)
    state = model._fitted_model().state()
    assert state["noise_estimate"][0] == pytest.approx(theta, abs=1e-9)


@pytest.mark.parametrize("strategy", ["max-score", "ovr"])
def test_the_multiclass_label_noise_reads_the_true_class_against_its_rival(strategy):
    X, y = _stream(300, classes=4, seed=3)
    model = cwrs.AROW(multi_class=strategy)
    scores, variances = _progressive(model, X, y)
    rows = np.arange(len(y))
    others = np.where(np.arange(4)[None, :] == y[:, None], -np.inf, scores)
    rival = others.argmax(axis=1)  # the first of the highest other classes
    margins = (scores[rows, y] - scores[rows, rival]) / math.sqrt(2.0)
    spreads = (variances[rows, y] + variances[rows, rival]) / 2.0
    theta, _ = reference_label_noise(margins, spreads)
    assert model.noise_variance_ == pytest.approx(math.exp(theta), rel=1e-9)


@pytest.mark.parametrize("params", [{}, {"covariance": "full"}, {"average": True}])
def test_predict_proba_adds_the_label_noise_to_the_margins_variance(params):
    X, y = _stream(300, seed=4)
    model = cwrs.AROW(**params, random_state=0).fit(X, y)
    native = model._fitted_model()
    margins = model.decision_function(X)
    variances = native.variance(model._check_X_for(X))
    expected = ndtr(margins / np.sqrt(variances + model.noise_variance_))
    np.testing.assert_allclose(model.predict_proba(X)[:, 1], expected, rtol=1e-12)
    np.testing.assert_allclose(
        model.predict_posterior_proba(X)[:, 1], ndtr(margins / np.sqrt(variances)), rtol=1e-12
    )
    assert np.array_equal(model.predict_proba(X).argmax(axis=1), model.predict(X))


def test_predict_proba_is_calibrated_where_the_posterior_saturates():
    # 2% positives, a probit margin: the true P(y | x) is Φ(w·x − b) with unit noise.
    X, y = _stream(12_000, d=10, positives=0.02, seed=5)
    train, test = slice(0, 10_000), slice(10_000, None)
    model = cwrs.AROW(random_state=0).fit(X[train], y[train])

    def log_loss(p):
        p = np.clip(p[:, 1], 1e-15, 1 - 1e-15)
        return float(-np.mean(np.where(y[test] == 1, np.log(p), np.log1p(-p))))

    predictive = log_loss(model.predict_proba(X[test]))
    posterior = log_loss(model.predict_posterior_proba(X[test]))
    base_rate = float(-np.mean(np.where(y[test] == 1, np.log(0.02), np.log(0.98))))
    assert predictive < 0.6 * base_rate < posterior, (predictive, base_rate, posterior)


def test_the_label_noise_survives_pickles_files_and_continues():
    X, y = _stream(200, seed=6)
    model = cwrs.SCW1(covariance="full", random_state=0).fit(X[:150], y[:150])
    buffer = io.BytesIO()
    model.save(buffer)
    buffer.seek(0)
    for copy in (pickle.loads(pickle.dumps(model)), cwrs.load(buffer)):
        assert copy.noise_variance_ == model.noise_variance_
        np.testing.assert_array_equal(copy.predict_proba(X), model.predict_proba(X))
        copy.partial_fit(X[150:], y[150:])
    model.partial_fit(X[150:], y[150:])
    assert copy.noise_variance_ == model.noise_variance_


def test_a_merge_adds_each_models_information_beyond_the_base():
    X, y = _stream(600, seed=7)
    base = cwrs.AROW().partial_fit(X[:200], y[:200], classes=[0, 1])
    shards = [pickle.loads(pickle.dumps(base)) for _ in range(2)]
    shards[0].partial_fit(X[200:400], y[200:400])
    shards[1].partial_fit(X[400:], y[400:])
    merged = cwrs.merge(shards, base=base)
    estimates = [m._fitted_model().state()["noise_estimate"] for m in (base, *shards)]
    (theta_b, info_b), *rest = estimates
    information = info_b + sum(info - info_b for _, info in rest)
    theta = (info_b * theta_b + sum(i * t - info_b * theta_b for t, i in rest)) / information
    assert merged._fitted_model().state()["noise_estimate"] == pytest.approx([theta, information])
    # Close to learning the shards' rows in turn.
    sequential = cwrs.AROW().partial_fit(X, y, classes=[0, 1])
    assert math.log(merged.noise_variance_ / sequential.noise_variance_) == pytest.approx(0, abs=0.2)


def test_first_order_learners_keep_no_label_noise():
    X, y = _stream(100, seed=8)
    model = cwrs.PA1(random_state=0).fit(X, y)
    assert "noise_estimate" not in model._fitted_model().state()
    assert model._fitted_model().noise_variance is None


# ------------------------------------------------------------------- AROW regression, r="auto"
def _regression(n=2_000, d=6, noise=3.0, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, X @ (2.0 * rng.normal(size=d)) + noise * rng.normal(size=n)


@pytest.mark.parametrize("covariance", ["diag", "full"])
def test_the_regressors_noise_variance_is_the_mean_of_the_scaled_innovations(covariance):
    X, y = _regression(500, seed=1)
    weights = np.random.default_rng(2).uniform(0.5, 2.0, size=len(y))
    model = cwrs.AROWRegressor(r=2.0, covariance=covariance)
    _, scores, variances = model.partial_fit(X, y, sample_weight=weights, return_scores=True)
    ratios = (y - scores) ** 2 / (variances + 2.0)
    kappa, total = RESIDUAL_PRIOR
    kappa = (kappa * total + np.sum(weights * ratios)) / (total + weights.sum())
    assert model.noise_variance_ == pytest.approx(2.0 * kappa, rel=1e-10)


def test_r_auto_learns_the_mean_of_r_one_and_scales_its_intervals():
    X, y = _regression(seed=3)
    auto = cwrs.AROWRegressor(r="auto", covariance="full", random_state=0).fit(X, y)
    one = cwrs.AROWRegressor(r=1.0, covariance="full", random_state=0).fit(X, y)
    np.testing.assert_array_equal(auto.coef_, one.coef_)
    mean, std = auto.predict(X[:50], return_std=True)
    _, std_one = one.predict(X[:50], return_std=True)
    np.testing.assert_allclose(std, np.sqrt(auto.noise_variance_) * std_one, rtol=1e-12)
    assert auto.noise_variance_ == one.noise_variance_


@pytest.mark.parametrize("noise", [0.3, 3.0])
def test_r_auto_intervals_cover_95_percent(noise):
    X, y = _regression(6_000, noise=noise, seed=4)
    model = cwrs.AROWRegressor(r="auto", random_state=0).fit(X[:4_000], y[:4_000])
    mean, std = model.predict(X[4_000:], return_std=True)
    coverage = np.mean(np.abs(y[4_000:] - mean) <= 1.96 * std)
    assert 0.93 <= coverage <= 0.97, coverage
    # The first rows' innovations, before the mean has converged, count too.
    assert model.noise_variance_ == pytest.approx(noise**2, rel=0.15)


def test_r_auto_survives_pickles_and_files_and_is_refused_elsewhere(tmp_path):
    X, y = _regression(300, seed=5)
    model = cwrs.AROWRegressor(r="auto", random_state=0).fit(X, y)
    path = tmp_path / "model.cwrs"
    model.save(path)
    for copy in (pickle.loads(pickle.dumps(model)), cwrs.load(path)):
        assert copy.get_params()["r"] == "auto"
        np.testing.assert_array_equal(
            copy.predict(X, return_std=True)[1], model.predict(X, return_std=True)[1]
        )
    with pytest.raises(ValueError, match='r must be a real number or "auto"'):
        cwrs.AROWRegressor(r="learned").fit(X, y)
    with pytest.raises(ValueError, match="r must be a real number"):
        cwrs.AROW(r="auto").fit(X, y > 0)

