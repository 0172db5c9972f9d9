"""Contextual bandits from the Gaussian over weights of a cwrs learner: Thompson sampling, UCB,
greedy and ε-greedy (`ContextualBandit`), and their offline evaluation (`simulate`, `replay`).

A second-order regressor keeps the posterior N(μ, Σ) of a linear reward model. For
`AROWRegressor(covariance="full")` its state (Σ⁻¹, Σ⁻¹μ) is LinUCB's (A, b) with
A = I/a + Σ xxᵀ/r and b = Σ x·reward/r (Li, Chu, Langford & Schapire 2010), and N(μ, Σ) is the
posterior that linear Thompson sampling draws from (Agrawal & Goyal 2013); the diagonal form is
the diagonal posterior of Chapelle & Li (2011), the low-rank form a sketched posterior.
"""

from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Optional, Sequence, Union

import numpy as np

from ._classifier import Classifier
from ._meta import MetaEstimator, clone
from ._params import InvalidParameterError
from ._regressor import Regressor
from ._validation import not_fitted_error

if TYPE_CHECKING:
    from typing_extensions import Self

    from ._typing import ArrayLike, Float64Array

__all__ = [
    "ContextualBandit", "ReplayResult", "SimulationResult", "action_rows", "replay", "simulate",
]

POLICIES = ("thompson", "ucb", "greedy", "epsilon")


def _real(owner, name, value, low, high, low_open=False):
    if (
        not isinstance(value, numbers.Real) or isinstance(value, bool) or math.isnan(value)
        or value < low or value > high or (low_open and value == low)
    ):
        bound = "(" if low_open else "["
        raise InvalidParameterError(
            f"{type(owner).__name__}: {name} must be a real in {bound}{low}, {high}], "
            f"got {value!r}"
        )
    return float(value)


class ContextualBandit(MetaEstimator):
    """A contextual bandit whose exploration comes from the uncertainty of a cwrs model.

    Each round offers a set of actions, given as rows of features (one row per action, so the
    set and its size may change every round; fixed arms are one-hot rows, or their products
    with the context). The model predicts an action's reward as μ·x (+ intercept), with
    variance xᵀΣx under its covariance Σ (the bias coordinate included), and the policy picks:

    - "thompson" (Thompson sampling; Agrawal & Goyal 2013, Chapelle & Li 2011): draws one
      weight vector w ~ N(μ, α²Σ) and plays the action of the highest w·x. For
      `covariance="diag"`, w = μ + α·diag(√Σ_jj)z, z standard normal of length d from the
      bandit's generator (O(d) per draw). For "lowrank", with Σ = (diag(1/S) + BᵀB)⁻¹ (S the
      variances, B the sketch of 2k rows), w = μ + α·Σ(S^(−1/2)∘z₁ + Bᵀz₂), z = (z₁, z₂) of
      length d + 2k, whose covariance is Σ(diag(1/S) + BᵀB)Σ = Σ, with Σv by Woodbury's
      identity (O(dk) per draw and O(dk) memory). For "full", only the K scores Xw of the
      round's actions matter, and they are N(Xμ, α²XΣXᵀ): with fewer actions than
      coordinates (K < d, the bias included) they are drawn jointly, Xμ + α·Lz with L the
      Cholesky factor of the K × K matrix XΣXᵀ and z of length K (O(K·d²) per round: no O(d³)
      factorization of Σ after each update); with K ≥ d, as w = μ + α·Lz with L the Cholesky
      factor of Σ and z of length d. A factor of a matrix that is only positive semidefinite
      (duplicate actions, or rounding) comes from its eigendecomposition, the negative
      eigenvalues set to 0. The intercept, if
      any, is part of w (x with a 1 appended). The quantities taken from the model are
      computed once per model state and kept until the next update. The probability of the
      action played is not available in closed form: it is estimated by Monte Carlo from the
      draw played and `n_probability_draws` more from the same generator, as the fraction of
      these 1 + n draws whose best action is the one played (so it is at least 1/(1 + n));
      with one action it is exactly 1 and nothing is drawn.
    - "ucb" (LinUCB; Li et al. 2010): plays the highest μ·x + α√(xᵀΣx), computed by the core
      (`decision_function` and `variance` of the native model), with probability 1.
    - "greedy": plays the highest μ·x, with probability 1.
    - "epsilon" (ε-greedy): with probability ε plays an action drawn uniformly, else the
      greedy one; the probability of the action played is exact: ε/K + (1 − ε) for the greedy
      action and ε/K for any other (K actions).

    Ties go to the first action (lowest index) of the highest value, for every policy (for
    "epsilon", the greedy action is that first one).

    The model is the prior N(0, a·I) until the first update: it is built at the first call
    (`choose`, `update`, ...) from the width of the actions, by a weightless presentation of a
    row (which learns nothing), so every round, the first included, is decided from a model.
    Under the prior every score is 0, so greedy plays the first action and UCB the action of
    the largest a·‖x‖².

    Learning: `update` learns the reward of the action played (the row of the chosen action,
    target the reward); `learn_logged` learns the decisions logged by another policy with
    inverse-propensity weights 1/p (the estimator's `sample_weight`), so that the weighted
    squared loss is an unbiased estimate of the loss over every action. The doubly robust
    estimator (a reward model for the actions not played) is not implemented.

    With a second-order classifier (`AROW()`, `SCW1()`, ...) the rewards must be 0 or 1, the
    model is the binary classifier of reward 1 (classes [0, 1]) and its margin μ·x and
    variance xᵀΣx are the scores above. "greedy" and "epsilon" take any cwrs regressor or
    classifier (first-order ones included); "thompson" and "ucb" need a second-order one.
    Drifting rewards: give the estimator a `process_noise` (the diagonal and full forms).

    Persistence: a bandit pickles, and `save(path)` writes it to a .cwrs file (its model, its
    generator and its counts; unfitted, its parameters) that `cwrs.load(path)` reads back, to
    make the same decisions. `cwrs.merge` of bandits of equal parameters (but `random_state`)
    that played shards of the rounds is a bandit of the merge of their models, the sum of
    their counts and a copy of the first one's generator.

    Parameters
    ----------
    estimator : cwrs regressor or second-order classifier
        The reward model (unfitted; it is cloned), e.g. `AROWRegressor(covariance="full")`
        (exact Bayesian linear regression, LinUCB's model) or `covariance="diag"` for large d.
        Primal learners only (no kernel).
    policy : {"thompson", "ucb", "greedy", "epsilon"}, default="thompson"
        How an action is chosen (see above).
    alpha : float, default=1.0
        The scale α ≥ 0 of the exploration: the standard deviation multiplier of UCB and of
        the Thompson draw (N(μ, α²Σ)). With `r="auto"` Σ is in units of the noise variance
        σ², so α is then in units of σ.
    epsilon : float, default=0.05
        "epsilon": the probability ε in [0, 1] of exploring.
    n_probability_draws : int, default=16
        "thompson": the extra draws of the Monte Carlo estimate of the probability of the action
        played (0: the estimate is 1).
    random_state : int, numpy.random.Generator or None, default=None
        Seeds the generator (`numpy.random.default_rng(random_state)`) made at the first call;
        an int makes every decision reproducible.

    Attributes
    ----------
    estimator_ : cwrs estimator
        The clone of `estimator` that learns the rewards.
    n_features_in_ : int
        The width of the actions.
    n_rounds_ : int
        Rounds decided by `choose` and `choose_batch`.
    n_learned_ : int
        Rows learned by `update` and `learn_logged`.

    Examples
    --------
    >>> import numpy as np
    >>> import cwrs
    >>> from cwrs.bandit import ContextualBandit
    >>> rng = np.random.default_rng(0)
    >>> theta = rng.normal(size=5)
    >>> bandit = ContextualBandit(cwrs.AROWRegressor(covariance="full"), random_state=0)
    >>> best = []
    >>> for _ in range(300):
    ...     actions = rng.normal(size=(10, 5))  # 10 actions of 5 features this round
    ...     index, probability = bandit.choose(actions)
    ...     reward = actions[index] @ theta + 0.1 * rng.normal()
    ...     _ = bandit.update(actions, index, reward)
    ...     best.append(index == np.argmax(actions @ theta))
    >>> float(np.mean(best[:50])), float(np.mean(best[-100:]))  # how often it played the best
    (0.62, 0.93)
    >>> np.round(bandit.estimator_.coef_ - theta, 2)  # the reward model it learned
    array([-0.01,  0.  ,  0.01,  0.  , -0.  ])

    References
    ----------
    .. [1] L. Li, W. Chu, J. Langford and R. E. Schapire, "A contextual-bandit approach to
       personalized news article recommendation", WWW 2010.
    .. [2] S. Agrawal and N. Goyal, "Thompson sampling for contextual bandits with linear
       payoffs", ICML 2013.
    .. [3] O. Chapelle and L. Li, "An empirical evaluation of Thompson sampling", NIPS 2011.
    .. [4] A. Bietti, A. Agarwal and J. Langford, "A contextual bandit bake-off", JMLR 22,
       2021.
    """

    if TYPE_CHECKING:
        estimator_: Any
        n_features_in_: int
        n_rounds_: int
        n_learned_: int

    def __init__(
        self,
        estimator: Any,
        policy: Literal["thompson", "ucb", "greedy", "epsilon"] = "thompson",
        *,
        alpha: float = 1.0,
        epsilon: float = 0.05,
        n_probability_draws: int = 16,
        random_state: Union[int, np.random.Generator, None] = None,
    ) -> None:
        self.estimator = estimator
        self.policy = policy
        self.alpha = alpha
        self.epsilon = epsilon
        self.n_probability_draws = n_probability_draws
        self.random_state = random_state

    # ----------------------------------------------------------------- scikit-learn plumbing
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("_factor", None)  # recomputed from the model when needed
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    # ----------------------------------------------------------------- checks
    def _check_params(self) -> None:
        estimator = self.estimator
        classifier = isinstance(estimator, Classifier)
        if not (isinstance(estimator, Regressor) or classifier):
            raise InvalidParameterError(
                "ContextualBandit's estimator must be a cwrs regressor or classifier "
                f"(cwrs.AROWRegressor(), cwrs.AROW(), ...), got {estimator!r:.80}"
            )
        if self.policy not in POLICIES:
            raise InvalidParameterError(f"policy must be one of {POLICIES}, got {self.policy!r}")
        if self.policy in ("thompson", "ucb") and not estimator._second_order:
            raise InvalidParameterError(
                f"policy={self.policy!r} needs the covariance of a second-order learner "
                f"(AROWRegressor, AROW, ...); {type(estimator).__name__} is first order: use "
                "policy='greedy' or 'epsilon'"
            )
        if (
            getattr(estimator, "kernel", None) is not None
            or getattr(estimator, "kernel_approximation", None) is not None
        ):
            raise InvalidParameterError("ContextualBandit takes primal learners only (no kernel)")
        _real(self, "alpha", self.alpha, 0.0, math.inf)
        _real(self, "epsilon", self.epsilon, 0.0, 1.0)
        draws = self.n_probability_draws
        if not isinstance(draws, numbers.Integral) or isinstance(draws, bool) or draws < 0:
            raise InvalidParameterError(
                f"n_probability_draws must be an int >= 0, got {draws!r}"
            )

    def _actions(self, actions: ArrayLike, what: str = "actions") -> Float64Array:
        """One round's actions as a C-contiguous float64 (K, d) array (ValueError otherwise)."""
        try:
            rows = np.ascontiguousarray(actions, dtype=np.float64)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{what} must be a 2-D array of numbers: {error}") from None
        if rows.ndim != 2:
            raise ValueError(f"{what} must be a 2-D array (one row per action), got "
                             f"{rows.ndim} dimension(s)")
        if rows.shape[0] == 0:
            raise ValueError(f"{what} has no action (no row)")
        if not np.isfinite(rows).all():
            raise ValueError(f"{what} holds NaN or infinity")
        width = self.__dict__.get("n_features_in_")
        if width is not None and rows.shape[1] != width:
            raise ValueError(
                f"{what} has {rows.shape[1]} features, but the bandit is expecting {width}"
            )
        return rows

    def _check_reward(self, reward: Any) -> float:
        if not isinstance(reward, numbers.Real) or isinstance(reward, bool):
            try:
                reward = float(np.asarray(reward, dtype=np.float64).item())
            except (TypeError, ValueError):
                raise ValueError(f"reward must be a real number, got {reward!r:.80}") from None
        reward = float(reward)
        if not math.isfinite(reward):
            raise ValueError(f"reward must be finite, got {reward!r}")
        if isinstance(self.estimator_ if "estimator_" in self.__dict__ else self.estimator,
                      Classifier) and reward not in (0.0, 1.0):
            raise ValueError(f"a classifier's rewards must be 0 or 1, got {reward!r}")
        return reward

    @staticmethod
    def _check_probability(probability: Any) -> float:
        try:
            p = float(probability)
        except (TypeError, ValueError):
            raise ValueError(f"probability must be a real in (0, 1], got {probability!r:.80}")
        if not 0.0 < p <= 1.0:
            raise ValueError(f"probability must be in (0, 1], got {probability!r}")
        return p

    @staticmethod
    def _check_index(index: Any, n_actions: int) -> int:
        if not isinstance(index, numbers.Integral) or isinstance(index, bool):
            raise ValueError(f"index must be an int, got {index!r:.80}")
        index = int(index)
        if not 0 <= index < n_actions:
            raise ValueError(f"index {index} is not one of the {n_actions} actions")
        return int(index)

    # ----------------------------------------------------------------- the model
    def _ensure_model(self, width: int) -> None:
        """Builds the prior model for actions of `width` features (and the generator), once."""
        if "estimator_" in self.__dict__:
            return
        estimator = clone(self.estimator)
        row = np.zeros((1, width))
        if isinstance(estimator, Classifier):
            estimator.partial_fit(row, [0], classes=[0, 1], sample_weight=[0.0])
        else:
            estimator.partial_fit(row, [0.0], sample_weight=[0.0])
        self.estimator_ = estimator
        self.n_features_in_ = width
        self.n_rounds_ = 0
        self.n_learned_ = 0
        self._rng = np.random.default_rng(self.random_state)

    def _fitted(self) -> Any:
        if "estimator_" not in self.__dict__:
            raise not_fitted_error(
                "This ContextualBandit has no model yet: call choose or update first."
            )
        return self.estimator_

    def _means(self) -> Float64Array:
        return self.estimator_._fitted_model().mean

    def _sampler(self):
        """The factor of the Thompson draws of the current model state (cached: the state is
        changed only by `update` and `learn_logged`, which forget it)."""
        factor = self.__dict__.get("_factor")
        if factor is None:
            factor = self._factor = _DrawFactor(self.estimator_._fitted_model())
        return factor

    def _learn(self, rows: Float64Array, rewards: Float64Array, weights: Float64Array) -> None:
        estimator = self.estimator_
        if isinstance(estimator, Classifier):
            estimator.partial_fit(rows, rewards.astype(np.int64), sample_weight=weights)
        else:
            estimator.partial_fit(rows, rewards, sample_weight=weights)
        self.__dict__.pop("_factor", None)
        self.n_learned_ += rows.shape[0]

    # ----------------------------------------------------------------- decisions
    def _scores(self, rows: Float64Array) -> Float64Array:
        """Greedy (μ·x) or UCB (μ·x + α√(xᵀΣx)) scores of `rows`, from the core."""
        estimator = self.estimator_
        model = estimator._fitted_model()
        matrix = estimator._check_X_for(rows)
        scores = model.decision_function(matrix)
        if self.policy == "ucb":
            scores = scores + self.alpha * np.sqrt(model.variance(matrix))
        return scores

    def _decide(self, rows: Float64Array, scores: Optional[Float64Array]) -> tuple[int, float]:
        """One round: (index, probability) from the round's rows and, for the deterministic
        scores (greedy, ε-greedy, UCB), their scores."""
        n_actions = rows.shape[0]
        if self.policy == "thompson":
            if n_actions == 1:
                return 0, 1.0
            sampled = self._sampler().sample_scores(
                self._rng, rows, 1 + self.n_probability_draws, self.alpha
            )  # (K, draws): each draw's score of each action
            best = np.argmax(sampled, axis=0)
            index = int(best[0])
            return index, float(np.mean(best == index))
        assert scores is not None
        greedy = int(np.argmax(scores))
        if self.policy != "epsilon":
            return greedy, 1.0
        epsilon = float(self.epsilon)
        if self._rng.random() < epsilon:
            index = int(self._rng.integers(n_actions))
        else:
            index = greedy
        return index, epsilon / n_actions + (1.0 - epsilon) * (index == greedy)

    def choose(self, actions: ArrayLike) -> tuple[int, float]:
        """Chooses one action of a round: returns (index of its row, probability that the
        policy chose it). A refused input (no row, NaN, another width) raises ValueError and
        changes nothing."""
        self._check_params()
        rows = self._actions(actions)
        self._ensure_model(rows.shape[1])
        scores = None if self.policy == "thompson" else self._scores(rows)
        decision = self._decide(rows, scores)
        self.n_rounds_ += 1
        return decision

    def choose_batch(
        self, actions_per_round: Sequence[ArrayLike]
    ) -> tuple[np.ndarray, Float64Array]:
        """Chooses an action in each of several rounds with the same model (nothing is learned
        in between): returns (indices, probabilities), arrays with one entry per round. The
        decisions, and the draws from the generator, are those of `choose` called on each
        round in order; the scores of every round are computed in one call to the core."""
        self._check_params()
        rounds = [self._actions(a, f"actions_per_round[{t}]")
                  for t, a in enumerate(actions_per_round)]
        if not rounds:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        widths = {rows.shape[1] for rows in rounds}
        if len(widths) > 1:
            raise ValueError(f"the rounds' actions have different widths: {sorted(widths)}")
        self._ensure_model(rounds[0].shape[1])
        indices = np.zeros(len(rounds), dtype=np.int64)
        probabilities = np.zeros(len(rounds))
        if self.policy == "thompson":
            for t, rows in enumerate(rounds):
                indices[t], probabilities[t] = self._decide(rows, None)
        else:
            scores = self._scores(np.concatenate(rounds))
            start = 0
            for t, rows in enumerate(rounds):
                stop = start + rows.shape[0]
                indices[t], probabilities[t] = self._decide(rows, scores[start:stop])
                start = stop
        self.n_rounds_ += len(rounds)
        return indices, probabilities

    # ----------------------------------------------------------------- learning
    def update(
        self, actions: ArrayLike, index: int, reward: float, probability: Optional[float] = None
    ) -> Self:
        """Learns the reward of the action played in a round: the row `actions[index]` with
        target `reward`.

        Without `probability` (the bandit's own decisions) the row is learned with weight 1:
        the model regresses the reward on the features, and which rows it sees depends only on
        the features and the past, so no importance weight is needed. With `probability` (a
        decision of another policy, played with that probability) it is learned with weight
        1/probability, as `learn_logged` does; do not pass the probability `choose` returned
        for the bandit's own decisions (the Monte Carlo estimate of Thompson sampling would
        only add noise to the weights). A refused input (no row, a width other than the
        bandit's, NaN reward, probability outside (0, 1], an index out of range) raises
        ValueError and changes nothing."""
        self._check_params()
        rows = self._actions(actions)
        index = self._check_index(index, rows.shape[0])
        value = self._check_reward(reward)
        weight = 1.0 if probability is None else 1.0 / self._check_probability(probability)
        self._ensure_model(rows.shape[1])
        self._learn(rows[index : index + 1], np.array([value]), np.array([weight]))
        return self

    def learn_logged(
        self,
        actions_per_round: Sequence[ArrayLike],
        chosen: ArrayLike,
        rewards: ArrayLike,
        probabilities: ArrayLike,
    ) -> Self:
        """Learns the decisions logged by another policy: in round t the row
        `actions_per_round[t][chosen[t]]` with target `rewards[t]` and weight
        1/`probabilities[t]` (inverse propensity: the logging policy's probability of the
        action it played), in order, in one call to the estimator. With uniform logging
        (p = 1/K) this is the plain update of each chosen row with weight K. Every input is
        checked before anything is learned: a refused one raises ValueError and changes
        nothing."""
        self._check_params()
        rounds = [self._actions(a, f"actions_per_round[{t}]")
                  for t, a in enumerate(actions_per_round)]
        n_rounds = len(rounds)
        chosen_array = np.asarray(chosen)
        reward_array = np.asarray(rewards, dtype=np.float64)
        p = np.asarray(probabilities, dtype=np.float64)
        for name, values in (("chosen", chosen_array), ("rewards", reward_array),
                             ("probabilities", p)):
            if values.shape != (n_rounds,):
                raise ValueError(f"{name} must have one entry per round ({n_rounds}), got shape "
                                 f"{values.shape}")
        if n_rounds == 0:
            return self
        widths = {rows.shape[1] for rows in rounds}
        if len(widths) > 1:
            raise ValueError(f"the rounds' actions have different widths: {sorted(widths)}")
        if not np.issubdtype(chosen_array.dtype, np.integer):
            raise ValueError(f"chosen must hold ints, got dtype {chosen_array.dtype}")
        for t, rows in enumerate(rounds):
            self._check_index(int(chosen_array[t]), rows.shape[0])
        for value in reward_array:
            self._check_reward(value)
        if not ((p > 0) & (p <= 1)).all():
            raise ValueError("probabilities must be in (0, 1]")
        self._ensure_model(rounds[0].shape[1])
        picked = np.stack([rows[int(i)] for rows, i in zip(rounds, chosen_array)])
        self._learn(picked, reward_array, 1.0 / p)
        return self


# ----------------------------------------------------------------- Thompson draws
class _DrawFactor:
    """The Thompson draws of one model state: `sample_scores(rng, rows, n, alpha)` returns the
    scores (K, n) of the K rows under n draws w ~ N(μ, α²Σ) (see `ContextualBandit`)."""

    def __init__(self, model: Any) -> None:
        self.mean = np.array(model.mean)
        self.fit_intercept = bool(model.config["fit_intercept"])
        dim = self.mean.shape[0]
        self.kind = model.covariance_kind
        covariance = np.asarray(model.covariance)
        self.root: Optional[Float64Array] = None  # full: Σ's factor, made when needed
        if self.kind == "diag":
            self.deviations = np.sqrt(covariance)
        elif self.kind == "lowrank":
            factors = covariance.reshape(-1, dim)
            self.variances, self.sketch = factors[0], factors[1:]
            # Σv = Dv − DBᵀM⁻¹BDv with M = I + BDBᵀ (Woodbury), D = diag(S); M ≥ I.
            self.scaled = self.sketch * self.variances  # BD
            self.inner_inverse = np.linalg.inv(
                np.eye(self.sketch.shape[0]) + self.scaled @ self.sketch.T
            )
        else:
            self.covariance = covariance.reshape(dim, dim)

    def augmented(self, rows: Float64Array) -> Float64Array:
        """The rows as the model sees them: with the bias coordinate 1 if it has one."""
        if not self.fit_intercept:
            return rows
        return np.hstack([rows, np.ones((rows.shape[0], 1))])

    def weight_perturbations(self, z: Float64Array) -> Float64Array:
        """Tz for rows z (n, m), with TTᵀ = Σ (diag: m = dim; lowrank: m = dim + 2k)."""
        if self.kind == "diag":
            return z * self.deviations
        dim = self.mean.shape[0]
        v = z[:, :dim] / np.sqrt(self.variances) + z[:, dim:] @ self.sketch
        return v * self.variances - ((v @ self.scaled.T) @ self.inner_inverse) @ self.scaled

    def sample_scores(
        self, rng: np.random.Generator, rows: Float64Array, n: int, alpha: float
    ) -> Float64Array:
        full_rows = self.augmented(rows)
        n_actions, dim = full_rows.shape
        if self.kind == "full" and n_actions < dim:
            # The K scores of w ~ N(μ, α²Σ) are N(Xμ, α²XΣXᵀ): drawn jointly through the
            # factor of the K × K matrix (O(K·d²) per round, no O(d³) factorization of Σ).
            factor = _psd_factor(full_rows @ self.covariance @ full_rows.T)
            z = rng.standard_normal((n, n_actions))
            return (full_rows @ self.mean)[:, None] + alpha * (factor @ z.T)
        if self.kind == "full":  # K ≥ d: through the factor of Σ itself, computed once
            if self.root is None:
                self.root = _psd_factor(self.covariance)
            z = rng.standard_normal((n, dim))
            return full_rows @ (self.mean + alpha * (z @ self.root.T)).T
        width = self.mean.shape[0] + (self.sketch.shape[0] if self.kind == "lowrank" else 0)
        z = rng.standard_normal((n, width))
        weights = self.mean + alpha * self.weight_perturbations(z)
        return full_rows @ weights.T


def _psd_factor(covariance: Float64Array) -> Float64Array:
    """A factor L with LLᵀ = Σ: the Cholesky factor, or, for a Σ that rounding made not
    positive definite, from its eigendecomposition with the negative eigenvalues set to 0."""
    try:
        factor = np.linalg.cholesky(covariance)
    except np.linalg.LinAlgError:
        values, vectors = np.linalg.eigh((covariance + covariance.T) / 2)
        factor = vectors * np.sqrt(np.clip(values, 0.0, None))
    return np.asarray(factor, dtype=np.float64)



# ----------------------------------------------------------------- offline evaluation
class SimulationResult(NamedTuple):
    """What `simulate` returns, one entry per round: `rewards` (1 when the action played was
    the row's label, else 0), `chosen` (the class index played), `probabilities` (the policy's
    probability of it) and `progressive_reward` (the mean reward of the rounds so far; the
    progressive loss is 1 − it)."""

    rewards: Float64Array
    chosen: np.ndarray
    probabilities: Float64Array
    progressive_reward: Float64Array


class ReplayResult(NamedTuple):
    """What `replay` returns: `mean_reward` over the rounds kept (NaN if none), `n_matched`
    (the rounds whose logged action the bandit chose) and `rewards` of those rounds."""

    mean_reward: float
    n_matched: int
    rewards: Float64Array


def action_rows(context: ArrayLike, n_actions: int) -> Float64Array:
    """The actions of a round of the multiclass reduction: row k is the context with a 1
    appended, [x, 1], placed in block k of K blocks of d + 1 zeros (the context crossed with a
    one-hot of the action): shape (K, K·(d + 1)), so a linear model of these rows is one
    linear model, with its own intercept, per action."""
    row = np.append(np.asarray(context, dtype=np.float64), 1.0)
    return np.kron(np.eye(n_actions), row)


def simulate(
    bandit: ContextualBandit,
    X: ArrayLike,
    y: ArrayLike,
    n_rounds: Optional[int] = None,
    random_state: Union[int, np.random.Generator, None] = None,
) -> SimulationResult:
    """Runs `bandit` on the bandit problem of a multiclass data set, as the contextual bandit
    bake-off does (Bietti, Agarwal & Langford 2021): each class is an action, each row of X a
    round whose context is the row, and the reward is 1 when the action chosen is the row's
    label, else 0 (the other classes' rewards are never revealed). The actions of a round are
    `action_rows(x, K)`: the context with a constant 1, crossed with a one-hot of the action
    (K·(d + 1) features, a linear model per action), K the number of classes of y (in sorted
    order). Each round the bandit chooses and then learns the reward of its choice (`update`,
    weight 1): the bandit is changed (start from a new one for a new run).

    Parameters
    ----------
    bandit : ContextualBandit
        The policy; a regressor learns the 0/1 reward, a classifier the label "reward 1".
    X : array-like of shape (n_samples, n_features)
        The contexts (dense).
    y : array-like of shape (n_samples,)
        The labels.
    n_rounds : int, optional
        How many rounds (default: one per row); more than the rows go through them again.
    random_state : int, numpy.random.Generator or None
        None: the rows in their stored order; else each pass over the rows in an order drawn
        by `numpy.random.default_rng(random_state)`.

    Returns
    -------
    SimulationResult
        Per round: rewards, chosen, probabilities, progressive_reward.
    """
    contexts = np.asarray(X, dtype=np.float64)
    labels = np.asarray(y)
    if contexts.ndim != 2 or labels.shape != (contexts.shape[0],) or contexts.shape[0] == 0:
        raise ValueError(
            f"X must be 2-D with one label of y per row, got shapes {contexts.shape} and "
            f"{labels.shape}"
        )
    classes, codes = np.unique(labels, return_inverse=True)
    n_samples = contexts.shape[0]
    total = n_samples if n_rounds is None else int(n_rounds)
    if total < 0:
        raise ValueError(f"n_rounds must be >= 0, got {n_rounds!r}")
    rng = None if random_state is None else np.random.default_rng(random_state)
    passes = -(-total // n_samples) if total else 0
    order = np.concatenate(
        [np.arange(n_samples) if rng is None else rng.permutation(n_samples)
         for _ in range(passes)]
    )[:total] if passes else np.zeros(0, dtype=np.int64)
    rewards = np.zeros(total)
    chosen = np.zeros(total, dtype=np.int64)
    probabilities = np.zeros(total)
    n_actions = classes.shape[0]
    for t, i in enumerate(order):
        actions = action_rows(contexts[i], n_actions)
        index, probability = bandit.choose(actions)
        reward = float(index == codes[i])
        bandit.update(actions, index, reward)
        rewards[t], chosen[t], probabilities[t] = reward, index, probability
    progressive = np.cumsum(rewards) / np.arange(1, total + 1)
    return SimulationResult(rewards, chosen, probabilities, progressive)


def replay(
    bandit: ContextualBandit,
    actions_per_round: Sequence[ArrayLike],
    chosen: ArrayLike,
    rewards: ArrayLike,
) -> ReplayResult:
    """Evaluates `bandit` offline on decisions logged by the uniformly random policy (Li, Chu,
    Langford & Wang, WSDM 2011): for each logged round in order the bandit chooses among the
    round's actions; when it chooses the logged action, the logged reward counts and the bandit
    learns it (`update`), else the round is skipped. With uniform logging the rounds kept are
    a sample of the rounds the bandit would have played, so the mean reward over them is an
    unbiased estimate of its online reward (about 1/K of the rounds are kept). Logs of
    another policy are not replayed correctly: use uniform random ones."""
    chosen_array = np.asarray(chosen)
    reward_array = np.asarray(rewards, dtype=np.float64)
    n_rounds = len(actions_per_round)
    if chosen_array.shape != (n_rounds,) or reward_array.shape != (n_rounds,):
        raise ValueError("chosen and rewards must have one entry per round")
    if not np.isfinite(reward_array).all():
        raise ValueError("rewards must be finite")
    kept = []
    for actions, logged, reward in zip(actions_per_round, chosen_array, reward_array):
        index, _ = bandit.choose(actions)
        if index == int(logged):
            bandit.update(actions, index, float(reward))
            kept.append(float(reward))
    kept_array = np.array(kept)
    mean = float(kept_array.mean()) if kept else math.nan
    return ReplayResult(mean, len(kept), kept_array)
