"""`ContextualBandit.learn_logged`: the doubly robust method against a slow NumPy reference of
Bayesian linear regression, "ips" unchanged, what each learns from a logging policy's decisions,
and refused calls that change nothing."""

import pickle

import numpy as np
import pytest

import cwrs
from cwrs.bandit import ContextualBandit

D = 5
FORMS = ("full", "diag", "lowrank")


def softmax_log(n_rounds, seed, width=D, floor=0.2, bias=2.0, noise=0.3, n_actions=None):
    """A log of a biased logging policy: round t offers 2 to 6 actions (or `n_actions`), the
    logger plays action k with probability (1 − floor)·softmax(bias·x_k·s)_k + floor/K along a
    direction s unrelated to the reward, and the reward is x·θ plus Gaussian noise. Returns the
    rounds, chosen, rewards, probabilities and θ."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=width)
    skew = rng.normal(size=width)
    rounds, chosen, rewards, probabilities = [], [], [], []
    for t in range(n_rounds):
        k = n_actions or 2 + t % 5
        actions = rng.normal(size=(k, width))
        logits = bias * (actions @ skew)
        q = np.exp(logits - logits.max())
        q = (1 - floor) * q / q.sum() + floor / k
        index = int(rng.choice(k, p=q))
        rounds.append(actions)
        chosen.append(index)
        rewards.append(actions[index] @ theta + noise * rng.normal())
        probabilities.append(q[index])
    return rounds, np.array(chosen), np.array(rewards), np.array(probabilities), theta


def reference_dr(rounds, chosen, rewards, probabilities, fit_intercept, a=1.0, r=1.0):
    """Doubly robust learning written from the math for Bayesian linear regression with prior
    N(0, a·I) and noise variance r: precision A = I/a + Σ w x xᵀ/r and b = Σ w x y/r, learned
    row by row (w = 1), r̂ from the running posterior mean A⁻¹b before each round."""
    dim = rounds[0].shape[1] + fit_intercept
    A = np.eye(dim) / a
    b = np.zeros(dim)
    for actions, index, reward, p in zip(rounds, chosen, rewards, probabilities):
        X = np.hstack([actions, np.ones((len(actions), 1))]) if fit_intercept else actions
        predicted = X @ np.linalg.solve(A, b)
        targets = predicted.copy()
        targets[index] += (reward - predicted[index]) / p
        for x, y in zip(X, targets):
            A += np.outer(x, x) / r
            b += x * y / r
    return np.linalg.solve(A, b), np.linalg.inv(A)


def regret(bandit, theta, seed, n_rounds=2000, n_actions=5):
    """Mean regret per round of the bandit's greedy choices on new rounds."""
    rng = np.random.default_rng(seed)
    test = [rng.normal(size=(n_actions, theta.shape[0])) for _ in range(n_rounds)]
    indices, _ = bandit.choose_batch(test)
    return float(np.mean([(a @ theta).max() - a[i] @ theta for a, i in zip(test, indices)]))


def model_bytes(bandit):
    return pickle.dumps(bandit.estimator_._fitted_model().state())


# ----------------------------------------------------------------- doubly robust
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_dr_is_the_bayesian_linear_regression_reference(fit_intercept):
    log = softmax_log(150, seed=1)
    assert len({a.shape[0] for a in log[0]}) == 5 and np.ptp(log[3]) > 0.5  # K and p vary
    bandit = ContextualBandit(
        cwrs.AROWRegressor(covariance="full", r=1.0, a=1.0, fit_intercept=fit_intercept),
        "greedy",
    )
    bandit.learn_logged(*log[:4], method="dr")
    mean, covariance = reference_dr(*log[:4], fit_intercept=fit_intercept)
    model = bandit.estimator_._fitted_model()
    np.testing.assert_allclose(model.mean, mean, rtol=0, atol=1e-9)
    np.testing.assert_allclose(
        model.dense_covariance.reshape(mean.shape[0], -1), covariance, rtol=0, atol=1e-9
    )
    assert bandit.n_learned_ == 150  # one per logged round, not one per row


@pytest.mark.parametrize("form", FORMS)
def test_dr_learns_each_round_as_one_batch_of_model_targets(form):
    rounds, chosen, rewards, probabilities, _ = softmax_log(60, seed=2)
    bandit = ContextualBandit(cwrs.AROWRegressor(covariance=form))
    bandit.learn_logged(rounds[:20], chosen[:20], rewards[:20], probabilities[:20])  # "ips"
    plain = pickle.loads(pickle.dumps(bandit.estimator_))
    bandit.learn_logged(rounds[20:], chosen[20:], rewards[20:], probabilities[20:], method="dr")
    for actions, index, reward, p in zip(rounds[20:], chosen[20:], rewards[20:],
                                         probabilities[20:]):
        targets = plain.predict(actions)
        targets[index] += (reward - targets[index]) / p
        plain.partial_fit(actions, targets)
    assert model_bytes(bandit) == pickle.dumps(plain._fitted_model().state())
    assert bandit.n_learned_ == 60


def test_dr_recovers_a_linear_reward_model():
    for seed in range(3):
        rounds, chosen, rewards, probabilities, theta = softmax_log(3000, seed, floor=0.5)
        bandit = ContextualBandit(cwrs.AROWRegressor(covariance="full"), "greedy")
        bandit.learn_logged(rounds, chosen, rewards, probabilities, method="dr")
        assert np.linalg.norm(bandit.estimator_.coef_ - theta) < 0.1
        assert abs(bandit.estimator_.intercept_[0]) < 0.05
        assert regret(bandit, theta, seed=100 + seed) < 0.005


def test_dr_from_a_decent_model_is_as_good_as_ips_on_a_biased_log():
    """From a reward model learned on the first rounds, DR's greedy policy on the rest of a
    log with logging probabilities down to 0.04 is as good as IPS's (mean regret within 25%;
    strictly better is not robust: they are equal to a few percent, either way by seed), and
    better than learning the IPS estimate of the reward of every action (r/p for the action
    played, 0 for the others), whose variance the reward model of DR removes. Seeds 0-3."""
    results = {"ips": [], "dr": [], "ips targets": []}
    for seed in range(4):
        rounds, chosen, rewards, probabilities, theta = softmax_log(
            2500, seed, n_actions=5, noise=0.5
        )
        warm = ContextualBandit(cwrs.AROWRegressor(covariance="full"), "greedy")
        warm.learn_logged(rounds[:500], chosen[:500], rewards[:500], probabilities[:500])
        for method in results:
            bandit = pickle.loads(pickle.dumps(warm))
            rest = rounds[500:], chosen[500:], rewards[500:], probabilities[500:]
            if method == "ips targets":
                for actions, index, reward, p in zip(*rest):
                    targets = np.zeros(actions.shape[0])
                    targets[index] = reward / p
                    bandit.estimator_.partial_fit(actions, targets)
            else:
                bandit.learn_logged(*rest, method=method)
            results[method].append(regret(bandit, theta, seed=100 + seed))
    mean = {method: np.mean(values) for method, values in results.items()}
    assert mean["dr"] <= 1.25 * mean["ips"] + 1e-4
    assert mean["dr"] < 0.5 * mean["ips targets"]


# ----------------------------------------------------------------- "ips"
@pytest.mark.parametrize("form", FORMS)
def test_ips_is_the_default_and_one_weighted_call(form):
    rounds, chosen, rewards, probabilities, _ = softmax_log(80, seed=3)
    default = ContextualBandit(cwrs.AROWRegressor(covariance=form))
    default.learn_logged(rounds, chosen, rewards, probabilities)
    explicit = ContextualBandit(cwrs.AROWRegressor(covariance=form))
    explicit.learn_logged(rounds, chosen, rewards, probabilities, method="ips")
    plain = cwrs.AROWRegressor(covariance=form)
    plain.partial_fit(np.zeros((1, D)), [0.0], sample_weight=[0.0])
    picked = np.stack([actions[i] for actions, i in zip(rounds, chosen)])
    plain.partial_fit(picked, rewards, sample_weight=1.0 / probabilities)
    assert model_bytes(default) == model_bytes(explicit)
    assert model_bytes(default) == pickle.dumps(plain._fitted_model().state())
    assert default.n_learned_ == explicit.n_learned_ == 80


# ----------------------------------------------------------------- refused calls
def test_refused_calls_change_nothing():
    rounds, chosen, rewards, probabilities, _ = softmax_log(30, seed=4)
    bandit = ContextualBandit(cwrs.AROWRegressor(covariance="full"), random_state=0)
    bandit.learn_logged(rounds[:10], chosen[:10], rewards[:10], probabilities[:10])
    before = (model_bytes(bandit), bandit.n_learned_, bandit.n_rounds_)
    good = (rounds[10:], chosen[10:], rewards[10:], probabilities[10:])
    nan_reward = rewards[10:].copy()
    nan_reward[-1] = np.nan
    zero_p = probabilities[10:].copy()
    zero_p[-1] = 0.0
    out_of_range = chosen[10:].copy()
    out_of_range[-1] = 9
    for method in ("ips", "dr"):
        for args in [
            (good[0], good[1], nan_reward, good[3]),
            (good[0], good[1], good[2], zero_p),
            (good[0], out_of_range, good[2], good[3]),
            (good[0][:-1] + [np.ones((3, D + 1))], good[1], good[2], good[3]),
            (good[0], good[1][:-1], good[2], good[3]),
        ]:
            with pytest.raises(ValueError):
                bandit.learn_logged(*args, method=method)
            assert (model_bytes(bandit), bandit.n_learned_, bandit.n_rounds_) == before
    for method in ("DR", "direct", None):
        with pytest.raises(cwrs.InvalidParameterError, match="method must be one of"):
            bandit.learn_logged(*good, method=method)
        assert (model_bytes(bandit), bandit.n_learned_, bandit.n_rounds_) == before


def test_a_classifier_refuses_dr_and_learns_ips():
    rng = np.random.default_rng(5)
    rounds = [rng.normal(size=(3, D)) for _ in range(20)]
    chosen = rng.integers(3, size=20)
    rewards = rng.integers(2, size=20).astype(float)
    probabilities = np.full(20, 1 / 3)
    fresh = ContextualBandit(cwrs.AROW())
    with pytest.raises(cwrs.InvalidParameterError, match="not 0 or 1"):
        fresh.learn_logged(rounds, chosen, rewards, probabilities, method="dr")
    assert "estimator_" not in fresh.__dict__  # a refused first call builds no model
    bandit = ContextualBandit(cwrs.AROW())
    bandit.learn_logged(rounds[:10], chosen[:10], rewards[:10], probabilities[:10])
    before = (model_bytes(bandit), bandit.n_learned_)
    with pytest.raises(ValueError, match="needs a regressor"):
        bandit.learn_logged(rounds[10:], chosen[10:], rewards[10:], probabilities[10:],
                            method="dr")
    assert (model_bytes(bandit), bandit.n_learned_) == before


def test_an_empty_log_learns_nothing():
    bandit = ContextualBandit(cwrs.AROWRegressor())
    assert bandit.learn_logged([], [], [], [], method="dr") is bandit
    assert "estimator_" not in bandit.__dict__
