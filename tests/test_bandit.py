"""`cwrs.bandit`: the UCB scores and Thompson draws against slow NumPy references, the full form
against LinUCB's ridge solution, ε-greedy's exact probabilities, learning logged decisions with
inverse-propensity weights, refused inputs that change nothing, pickling, and the offline
evaluation (`simulate`, `replay`)."""

import math
import pickle

import numpy as np
import pytest

import cwrs
from cwrs import _cwrs
from cwrs.bandit import ContextualBandit, action_rows, replay, simulate

D = 5
FORMS = ("full", "diag", "lowrank")


def rounds(n_rounds, n_actions=6, seed=0, width=D):
    """Rounds of random actions (the count varies per round) and a linear reward."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=width)
    out = []
    for t in range(n_rounds):
        actions = rng.normal(size=(n_actions + t % 3, width))
        out.append((actions, actions @ theta + 0.3 * rng.normal(size=actions.shape[0])))
    return out


def play(bandit, data):
    """Plays and learns every round; returns the (index, probability) of each."""
    decisions = []
    for actions, rewards in data:
        index, probability = bandit.choose(actions)
        bandit.update(actions, index, rewards[index])
        decisions.append((index, probability))
    return decisions


def state(bandit):
    """Everything a refused call must leave as it was."""
    model = bandit.estimator_._fitted_model()
    return (
        pickle.dumps(model.state()), bandit._generator.tolist(), bandit.n_rounds_,
        bandit.n_learned_,
    )


def assert_same_state(first, second):
    assert first[0] == second[0]
    assert first[1:] == second[1:]


# ----------------------------------------------------------------- UCB and greedy
@pytest.mark.parametrize("form", FORMS)
def test_ucb_scores_are_the_reference_mean_plus_alpha_root_variance(form):
    bandit = ContextualBandit(
        cwrs.AROWRegressor(covariance=form, fit_intercept=False, a=2.0), "ucb", alpha=0.7
    )
    play(bandit, rounds(40))
    estimator = bandit.estimator_
    sigma = estimator.covariance_matrix()
    for actions in np.random.default_rng(9).normal(size=(30, 12, D)):
        reference = actions @ estimator.coef_ + 0.7 * np.sqrt(
            np.einsum("ij,jk,ik->i", actions, sigma, actions)
        )
        assert bandit.choose(actions) == (int(np.argmax(reference)), 1.0)


def test_ucb_with_intercept_includes_the_bias_coordinate():
    bandit = ContextualBandit(cwrs.AROWRegressor(covariance="full"), "ucb", alpha=1.3)
    play(bandit, rounds(30, seed=1))
    model = bandit.estimator_._fitted_model()
    sigma = model.dense_covariance.reshape(D + 1, D + 1)
    for actions in np.random.default_rng(3).normal(size=(30, 7, D)):
        full = np.hstack([actions, np.ones((7, 1))])
        reference = full @ model.mean + 1.3 * np.sqrt(
            np.einsum("ij,jk,ik->i", full, sigma, full)
        )
        assert bandit.choose(actions) == (int(np.argmax(reference)), 1.0)
    assert bandit.estimator_.intercept_[0] != 0.0


def test_greedy_plays_the_highest_mean_and_ties_go_to_the_first():
    bandit = ContextualBandit(cwrs.AROWRegressor(), "greedy")
    actions = np.random.default_rng(0).normal(size=(4, D))
    assert bandit.choose(actions) == (0, 1.0)  # the prior: every score is 0
    play(bandit, rounds(20))
    assert bandit.choose(actions)[0] == int(np.argmax(bandit.estimator_.predict(actions)))
    assert bandit.choose(np.vstack([actions[2], actions[2]])) == (0, 1.0)


def test_the_full_form_is_linucb_ridge_solution():
    a, r = 2.0, 0.5
    bandit = ContextualBandit(
        cwrs.AROWRegressor(covariance="full", fit_intercept=False, a=a, r=r), "ucb"
    )
    data = rounds(60, seed=4)
    A = np.eye(D) / a
    b = np.zeros(D)
    for actions, rewards in data:
        index, _ = bandit.choose(actions)
        bandit.update(actions, index, rewards[index])
        x = actions[index]
        A += np.outer(x, x) / r
        b += x * rewards[index] / r
    np.testing.assert_allclose(bandit.estimator_.coef_, np.linalg.solve(A, b), rtol=0, atol=1e-9)
    np.testing.assert_allclose(
        bandit.estimator_.covariance_matrix(), np.linalg.inv(A), rtol=0, atol=1e-9
    )


# ----------------------------------------------------------------- the generator
MASK = 2**64 - 1


class Xoshiro:
    """xoshiro256++ and the bandit's normals (Marsaglia's polar method), written from their
    definitions."""

    def __init__(self, words):
        self.s = [int(w) for w in words]

    def next(self):
        s = self.s
        rotl = lambda x, k: ((x << k) | (x >> (64 - k))) & MASK
        result = (rotl((s[0] + s[3]) & MASK, 23) + s[0]) & MASK
        t = (s[1] << 17) & MASK
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result

    def uniform(self):
        return (self.next() >> 11) * 2.0**-53

    def below(self, n):
        return (self.next() * n) >> 64

    def normals(self, n):
        out = []
        while len(out) < n:
            u, v = 2.0 * self.uniform() - 1.0, 2.0 * self.uniform() - 1.0
            s = u * u + v * v
            if 0.0 < s < 1.0:
                factor = math.sqrt(-2.0 * math.log(s) / s)
                out += [u * factor, v * factor]
        return np.array(out[:n])


def test_the_generator_is_xoshiro256pp_with_polar_normals():
    state = _cwrs.generator_state(42)
    reference = Xoshiro(state)
    z = _cwrs.standard_normals(state, 1001)
    np.testing.assert_allclose(z, reference.normals(1001), rtol=1e-14, atol=1e-15)
    assert state.tolist() == _cwrs.generator_state(42).tolist()  # a copy drew them
    bandit = ContextualBandit(cwrs.AROWRegressor(), random_state=42)
    bandit.choose(np.ones((1, D)))
    assert bandit._generator.tolist() == state.tolist()


@pytest.mark.parametrize("seed", [None, 7, 2**70, np.random.default_rng(1)])
def test_every_random_state_gives_a_valid_generator(seed):
    bandit = ContextualBandit(cwrs.AROWRegressor(), random_state=seed)
    bandit.choose(np.eye(3, D))
    assert bandit._generator.dtype == np.uint64 and bandit._generator.any()


# ----------------------------------------------------------------- Thompson sampling
def reference_best(model, rows, z, alpha):
    """The best action of each Thompson draw (rows of z: standard normals), written from the
    formulas: with K ≤ D the K scores are N(X̃μ, α²X̃ΣX̃ᵀ), drawn as X̃μ + αLz with L the
    Cholesky factor; with more, w = U⁻¹(Uμ + αL_Uz) for the basis rows U (the bias alone,
    then each feature with the bias) and L_U the factor of UΣUᵀ."""
    fit_intercept = bool(model.config["fit_intercept"])
    full = np.hstack([rows, np.ones((rows.shape[0], 1))]) if fit_intercept else rows
    n_actions, dim = full.shape
    mean = np.array(model.mean)
    sigma = np.array(model.dense_covariance).reshape(dim, dim)
    if n_actions <= dim:
        L = np.linalg.cholesky(full @ sigma @ full.T)
        scores = (full @ mean)[:, None] + alpha * L @ z[:, :n_actions].T
    else:
        if fit_intercept:
            U = np.vstack([np.eye(dim)[-1], np.eye(dim)[:-1] + np.eye(dim)[-1]])
        else:
            U = np.eye(dim)
        L = np.linalg.cholesky(U @ sigma @ U.T)
        s = (U @ mean)[:, None] + alpha * L @ z[:, :dim].T
        scores = full @ np.linalg.solve(U, s)
    return np.argmax(scores, axis=0)


@pytest.mark.parametrize("width", [D, 2])  # more coordinates than actions, and fewer
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("form", FORMS)
def test_a_seeded_thompson_draw_is_the_reference_draw(form, fit_intercept, width):
    alpha, n_draws, seed = 0.8, 5, 11
    bandit = ContextualBandit(
        cwrs.AROWRegressor(covariance=form, fit_intercept=fit_intercept,
                           **({"rank": 1} if form == "lowrank" else {})),
        alpha=alpha, n_probability_draws=n_draws, random_state=seed,
    )
    bandit.choose(np.eye(1, width))  # builds the prior model; one action draws nothing
    for actions, rewards in rounds(25, seed=2, width=width):
        model = bandit.estimator_._fitted_model()
        dim = width + fit_intercept
        k = actions.shape[0] if actions.shape[0] <= dim else dim
        z = _cwrs.standard_normals(bandit._generator, (1 + n_draws) * k).reshape(-1, k)
        best = reference_best(model, actions, z, alpha)
        expected = (int(best[0]), float(np.mean(best == best[0])))
        assert bandit.choose(actions) == expected
        bandit.update(actions, index := expected[0], rewards[index])


def test_duplicate_actions_are_drawn_from_a_singular_covariance():
    bandit = ContextualBandit(cwrs.AROWRegressor(covariance="full"), n_probability_draws=200,
                              random_state=0)
    row = np.random.default_rng(0).normal(size=D)  # under the prior: either side may win
    # Two equal actions have equal scores in every draw (to rounding): together they are
    # played as often as the one action is against the third.
    twice = [bandit.choose(np.vstack([row, row, -row]))[0] for _ in range(2000)]
    once = [bandit.choose(np.vstack([row, -row]))[0] for _ in range(2000)]
    share = np.mean(np.array(once) == 0)
    assert 0.1 < share < 0.9
    assert abs(np.mean(np.array(twice) <= 1) - share) < 0.05


def test_one_action_is_played_with_probability_one_and_draws_nothing():
    bandit = ContextualBandit(cwrs.AROWRegressor(), random_state=0)
    play(bandit, rounds(3))
    before = bandit._generator.tolist()
    assert bandit.choose(np.ones((1, D))) == (0, 1.0)
    assert bandit._generator.tolist() == before


def test_thompson_probability_estimate_is_close_to_the_frequency():
    bandit = ContextualBandit(cwrs.AROWRegressor(covariance="diag"), n_probability_draws=400,
                              random_state=3)
    play(bandit, rounds(5, seed=7))
    actions = np.random.default_rng(0).normal(size=(3, D))
    picks = [bandit.choose(actions) for _ in range(400)]
    frequency = np.mean([index == 0 for index, _ in picks])
    estimates = [p for index, p in picks if index == 0]
    assert abs(np.mean(estimates) - frequency) < 0.08


@pytest.mark.parametrize("policy", ["thompson", "ucb", "greedy", "epsilon"])
def test_choose_batch_is_choose_on_each_round(policy):
    data = rounds(12, seed=8)
    first = ContextualBandit(cwrs.AROWRegressor(), policy, epsilon=0.5, random_state=4)
    second = pickle.loads(pickle.dumps(first))
    play(first, data)
    play(second, data)
    batch = [actions for actions, _ in rounds(9, seed=10)]
    indices, probabilities = first.choose_batch(batch)
    one_by_one = [second.choose(actions) for actions in batch]
    assert indices.tolist() == [index for index, _ in one_by_one]
    assert probabilities.tolist() == [p for _, p in one_by_one]
    assert first.n_rounds_ == second.n_rounds_


# ----------------------------------------------------------------- ε-greedy
def test_epsilon_greedy_probabilities_are_exact():
    epsilon, seed = 0.3, 7
    bandit = ContextualBandit(cwrs.AROWRegressor(), "epsilon", epsilon=epsilon, random_state=seed)
    rng = Xoshiro(_cwrs.generator_state(seed))
    data = rounds(60, seed=3)
    for actions, rewards in data:
        n_actions = actions.shape[0]
        greedy = (
            int(np.argmax(bandit.estimator_.predict(actions)))
            if "estimator_" in bandit.__dict__ else 0
        )
        index = rng.below(n_actions) if rng.uniform() < epsilon else greedy
        expected = epsilon / n_actions + (1 - epsilon) * (index == greedy)
        assert bandit.choose(actions) == (index, expected)
        bandit.update(actions, index, rewards[index])


# ----------------------------------------------------------------- logged decisions
@pytest.mark.parametrize("form", FORMS)
def test_learn_logged_with_uniform_logging_is_updates_weighted_by_k(form):
    rng = np.random.default_rng(0)
    data = rounds(40, seed=11)
    chosen = np.array([rng.integers(actions.shape[0]) for actions, _ in data])
    rewards = np.array([r[i] for (_, r), i in zip(data, chosen)])
    k = np.array([actions.shape[0] for actions, _ in data], dtype=float)
    bandit = ContextualBandit(cwrs.AROWRegressor(covariance=form))
    bandit.learn_logged([actions for actions, _ in data], chosen, rewards, 1.0 / k)
    plain = cwrs.AROWRegressor(covariance=form)
    plain.partial_fit(np.zeros((1, D)), [0.0], sample_weight=[0.0])
    rows = np.stack([actions[i] for (actions, _), i in zip(data, chosen)])
    plain.partial_fit(rows, rewards, sample_weight=k)
    np.testing.assert_allclose(bandit.estimator_.coef_, plain.coef_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(bandit.estimator_.covariance_, plain.covariance_, atol=1e-12)
    assert bandit.n_learned_ == 40

    one_at_a_time = ContextualBandit(cwrs.AROWRegressor(covariance=form))
    for (actions, _), i, reward, p in zip(data, chosen, rewards, 1.0 / k):
        one_at_a_time.update(actions, int(i), reward, probability=p)
    np.testing.assert_allclose(one_at_a_time.estimator_.coef_, plain.coef_, atol=1e-12)


def test_an_update_without_probability_has_weight_one():
    data = rounds(10, seed=12)
    bandit = ContextualBandit(cwrs.AROWRegressor())
    plain = cwrs.AROWRegressor()
    for actions, rewards in data:
        bandit.update(actions, 1, rewards[1])
        plain.partial_fit(actions[1:2], rewards[1:2])
    np.testing.assert_allclose(bandit.estimator_.coef_, plain.coef_, atol=1e-12)


# ----------------------------------------------------------------- refused inputs
@pytest.mark.parametrize("estimator", [cwrs.AROWRegressor(covariance="diag", r="auto"),
                                       cwrs.AROWRegressor(covariance="lowrank", rank=2),
                                       cwrs.AROW(covariance="full")])
def test_an_update_in_the_core_is_the_estimators_partial_fit(estimator):
    core = ContextualBandit(estimator, "greedy")
    through_estimator = ContextualBandit(estimator, "greedy")
    rng = np.random.default_rng(5)
    for _ in range(30):
        actions = rng.normal(size=(4, D))
        index, _ = core.choose(actions)
        reward = float(rng.random() < 0.5)
        core.update(actions, index, reward)
        through_estimator.choose(actions)
        through_estimator.update(actions, index, reward, probability=1.0)  # weight 1
    for name in ("coef_", "intercept_", "covariance_"):
        np.testing.assert_array_equal(getattr(core.estimator_, name),
                                      getattr(through_estimator.estimator_, name))


def test_refused_inputs_raise_and_change_nothing():
    bandit = ContextualBandit(cwrs.AROWRegressor(), random_state=0)
    play(bandit, rounds(5))
    actions = np.ones((3, D))
    before = state(bandit)
    bad_calls = [
        lambda: bandit.choose(np.zeros((0, D))),
        lambda: bandit.choose(np.ones((3, D + 1))),
        lambda: bandit.choose(np.full((3, D), np.nan)),
        lambda: bandit.choose(np.ones(D)),
        lambda: bandit.choose_batch([actions, np.ones((2, D + 1))]),
        lambda: bandit.update(actions, 0, np.nan),
        lambda: bandit.update(actions, 0, np.inf),
        lambda: bandit.update(actions, 3, 1.0),
        lambda: bandit.update(actions, 0, 1.0, probability=0.0),
        lambda: bandit.update(actions, 0, 1.0, probability=1.5),
        lambda: bandit.update(actions, 0, 1.0, probability=np.nan),
        lambda: bandit.update(np.zeros((0, D)), 0, 1.0),
        lambda: bandit.update(np.ones((3, D + 2)), 0, 1.0),
        lambda: bandit.learn_logged([actions, actions], [0, 1], [1.0, np.nan], [0.5, 0.5]),
        lambda: bandit.learn_logged([actions, actions], [0, 1], [1.0, 0.0], [0.5, 0.0]),
        lambda: bandit.learn_logged([actions, actions], [0, 1], [1.0, 0.0], [0.5, 1.01]),
        lambda: bandit.learn_logged([actions, actions], [0, 5], [1.0, 0.0], [0.5, 0.5]),
        lambda: bandit.learn_logged([actions, np.zeros((0, D))], [0, 0], [1, 0], [1, 1]),
        lambda: bandit.learn_logged([actions], [0, 1], [1.0], [0.5]),
    ]
    for call in bad_calls:
        with pytest.raises(ValueError):
            call()
        assert_same_state(state(bandit), before)


@pytest.mark.parametrize("draws, error", [(2**62, MemoryError), (2**64 - 1, ValueError)])
def test_too_many_probability_draws_are_refused_and_change_nothing(draws, error):
    bandit = ContextualBandit(cwrs.AROWRegressor(), random_state=0)
    play(bandit, rounds(3))
    before = state(bandit)
    bandit.n_probability_draws = draws
    with pytest.raises(error, match="draws"):
        bandit.choose(np.eye(3, D))
    assert state(bandit) == before


def test_a_refused_first_call_builds_no_model():
    bandit = ContextualBandit(cwrs.AROWRegressor())
    with pytest.raises(ValueError):
        bandit.update(np.ones((2, D)), 0, np.nan)
    with pytest.raises(ValueError):
        bandit.choose(np.zeros((0, D)))
    assert "estimator_" not in bandit.__dict__


def test_parameters_are_checked():
    actions = np.ones((2, D))
    for bad in [
        ContextualBandit(cwrs.PARegressor(), "thompson"),
        ContextualBandit(cwrs.PARegressor(), "ucb"),
        ContextualBandit(cwrs.AROWRegressor(), "softmax"),
        ContextualBandit(cwrs.AROWRegressor(), alpha=-1.0),
        ContextualBandit(cwrs.AROWRegressor(), "epsilon", epsilon=1.5),
        ContextualBandit(cwrs.AROWRegressor(), n_probability_draws=-1),
        ContextualBandit(object()),
    ]:
        with pytest.raises(cwrs.InvalidParameterError):
            bad.choose(actions)
    assert ContextualBandit(cwrs.PARegressor(), "epsilon").choose(actions)[1] > 0


# ----------------------------------------------------------------- classifiers
def test_a_classifier_learns_zero_one_rewards():
    rng = np.random.default_rng(0)
    theta = rng.normal(size=D)
    bandit = ContextualBandit(cwrs.AROW(), "ucb", alpha=0.5, random_state=0)
    for _ in range(200):
        actions = rng.normal(size=(4, D))
        index, _ = bandit.choose(actions)
        bandit.update(actions, index, int(actions[index] @ theta > 0))
    assert list(bandit.estimator_.classes_) == [0, 1]
    assert np.corrcoef(bandit.estimator_.coef_.ravel(), theta)[0, 1] > 0.9
    with pytest.raises(ValueError):
        bandit.update(actions, 0, 0.5)
    thompson = ContextualBandit(cwrs.AROW(covariance="full"), random_state=1)
    play(thompson, [(a, (r > 0).astype(float)) for a, r in rounds(20)])
    assert thompson.n_learned_ == 20


# ----------------------------------------------------------------- pickling
@pytest.mark.parametrize("policy", ["thompson", "epsilon"])
def test_pickling_round_trips_the_model_and_the_generator(policy):
    bandit = ContextualBandit(cwrs.AROWRegressor(covariance="full"), policy, epsilon=0.5,
                              random_state=5)
    play(bandit, rounds(10))
    bandit.choose(np.ones((3, D)))  # a cached factor, which is not pickled
    copy = pickle.loads(pickle.dumps(bandit))
    data = rounds(10, seed=13)
    assert play(copy, data) == play(bandit, data)
    np.testing.assert_array_equal(copy.estimator_.coef_, bandit.estimator_.coef_)
    assert repr(copy) == repr(bandit)


def test_params_and_repr():
    bandit = ContextualBandit(cwrs.AROWRegressor(), "ucb", alpha=2.0)
    assert bandit.get_params()["estimator__covariance"] == bandit.estimator.covariance
    bandit.set_params(estimator__a=3.0, epsilon=0.1)
    assert bandit.estimator.a == 3.0 and bandit.epsilon == 0.1
    assert repr(bandit) == "ContextualBandit(AROWRegressor(a=3.0), policy='ucb', alpha=2.0, " \
        "epsilon=0.1)"
    with pytest.raises(cwrs.InvalidParameterError):
        bandit.set_params(beta=1)


# ----------------------------------------------------------------- offline evaluation
def test_action_rows_cross_the_context_with_a_one_hot():
    rows = action_rows([2.0, 3.0], 3)
    assert rows.shape == (3, 9)
    np.testing.assert_array_equal(rows[1], [0, 0, 0, 2, 3, 1, 0, 0, 0])


def test_simulate_plays_each_row_once_and_learns_the_labels():
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    bandit = ContextualBandit(cwrs.AROWRegressor(covariance="full"), "ucb", alpha=0.5)
    result = simulate(bandit, X / 8, y, random_state=0)
    assert result.rewards.shape == (150,) and bandit.n_learned_ == 150
    np.testing.assert_allclose(result.progressive_reward[-1], result.rewards.mean())
    assert result.progressive_reward[-1] > 0.6
    again = simulate(ContextualBandit(cwrs.AROWRegressor(covariance="full"), "ucb", alpha=0.5),
                     X / 8, y, random_state=0)
    np.testing.assert_array_equal(again.chosen, result.chosen)
    longer = simulate(ContextualBandit(cwrs.AROWRegressor(), "greedy"), X, y, n_rounds=200)
    assert longer.rewards.shape == (200,)


@pytest.mark.parametrize("policy", ["thompson", "ucb", "epsilon", "greedy"])
@pytest.mark.parametrize("estimator", [
    cwrs.AROWRegressor(covariance="diag"), cwrs.AROWRegressor(covariance="full"),
    cwrs.AROWRegressor(covariance="lowrank", rank=2), cwrs.AROW(covariance="full"),
], ids=["diag", "full", "lowrank", "classifier"])
def test_simulate_in_the_core_is_choose_and_update_on_each_round(policy, estimator):
    from scipy.sparse import csr_matrix
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True)
    X, y = X[::3] / X.max(axis=0), y[::3]  # 60 rows of the three classes
    X[X < 0.3] = 0.0  # contexts with zeros, which the core's rows leave out
    core = ContextualBandit(estimator, policy, alpha=0.3, epsilon=0.2, random_state=5)
    result = simulate(core, X, y, n_rounds=90, random_state=1)
    looped = ContextualBandit(estimator, policy, alpha=0.3, epsilon=0.2, random_state=5)
    rng = np.random.default_rng(1)
    order = np.concatenate([rng.permutation(60) for _ in range(2)])[:90]
    for t, i in enumerate(order):
        actions = csr_matrix(action_rows(X[i], 3))
        index, probability = looped.choose(actions)
        assert (index, probability) == (result.chosen[t], result.probabilities[t]), t
        looped.update(actions, index, float(index == y[i]))
    # The same model (its stored layout may differ: one-row learning adds coordinates lazily).
    for name in ("coef_", "intercept_", "covariance_"):
        np.testing.assert_array_equal(getattr(core.estimator_, name),
                                      getattr(looped.estimator_, name))
    assert state(core)[1:] == state(looped)[1:]
    np.testing.assert_array_equal(result.rewards, result.chosen == y[order])


def test_simulate_refuses_bad_data_and_changes_nothing():
    bandit = ContextualBandit(cwrs.AROWRegressor(), random_state=0)
    X, y = np.random.default_rng(0).normal(size=(10, 2)), np.arange(10) % 3
    simulate(bandit, X, y)
    before = state(bandit)
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        simulate(bandit, bad, y)
    with pytest.raises(ValueError, match="features"):
        simulate(bandit, X[:, :1], y)
    with pytest.raises(ValueError, match="one label"):
        simulate(bandit, X, y[:5])
    assert state(bandit) == before


def test_replay_keeps_the_rounds_the_bandit_agrees_with():
    rng = np.random.default_rng(0)
    data = rounds(300, n_actions=3, seed=14)
    logged = [int(rng.integers(actions.shape[0])) for actions, _ in data]
    bandit = ContextualBandit(cwrs.AROWRegressor(), "greedy")
    result = replay(bandit, [a for a, _ in data], logged, [r[i] for (_, r), i in zip(data, logged)])
    assert 0 < result.n_matched < 300 and result.n_matched == bandit.n_learned_
    assert result.mean_reward == pytest.approx(result.rewards.mean())


@pytest.mark.parametrize("form", ["full", "diag"])  # the forms that take process noise
@pytest.mark.parametrize("policy", ["thompson", "ucb"])
def test_process_noise_follows_a_drifting_reward(form, policy):
    """With process noise the model keeps exploring after the reward model changes."""
    rng = np.random.default_rng(0)
    scores = {}
    for noise in (0.0, 0.05):
        bandit = ContextualBandit(cwrs.AROWRegressor(covariance=form, process_noise=noise),
                                  policy, alpha=0.3, random_state=0)
        theta = np.ones(D)
        best = []
        for t in range(600):
            if t == 300:
                theta = -theta  # the reward flips
            actions = np.random.default_rng(t).normal(size=(5, D))
            index, _ = bandit.choose(actions)
            bandit.update(actions, index, actions[index] @ theta + 0.1 * rng.normal())
            best.append(index == np.argmax(actions @ theta))
        scores[noise] = np.mean(best[300:])
    assert scores[0.05] > scores[0.0]
