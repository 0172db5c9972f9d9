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
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Optional, Sequence, Union, cast

import numpy as np

from . import _cwrs
from ._classifier import Classifier
from ._meta import MetaEstimator, clone
from ._params import InvalidParameterError
from ._regressor import Regressor
from ._validation import is_sparse, not_fitted_error

if TYPE_CHECKING:
    from typing_extensions import Self

    from ._typing import ArrayLike, Float64Array

# Rounds of `simulate` per call to the core (about a second for the costliest models).
_ROUNDS_PER_CALL = 4096

__all__ = [
    "ContextualBandit", "ReplayResult", "SimulationResult", "action_rows", "replay", "simulate",
]

POLICIES = ("thompson", "ucb", "greedy", "epsilon")


def _real(owner, name, value, low, high, low_open=False):
    if type(value) is float and low <= value <= high and not (low_open and value == low):
        return value  # the common case, without the ABC checks below
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

    - "thompson" (Thompson sampling; Agrawal & Goyal 2013, Chapelle & Li 2011): plays the
      best action under one draw of the weights w ~ N(μ, α²Σ). Only the K scores Xw of the
      round's actions matter, and they are N(Xμ, α²XΣXᵀ) (x with a 1 appended for the
      intercept): with K no more than the model's coordinates D they are drawn jointly,
      Xμ + α·Lz with L a factor of the K × K matrix XΣXᵀ, whose entries xᵀΣy the core computes
      from the covariance form without forming Σ (diagonal: O(nnz) per pair; full: O(nnz²);
      low rank: through the sketch); with more actions than coordinates, w itself is drawn
      through the D scores of basis rows (the bias alone, and each feature with the bias),
      and the actions are scored with it. A factor of a matrix that is only positive
      semidefinite (duplicate actions) gives zero columns for its directions of no variance.
      The probability of the action played is not available in closed form: it is estimated
      by Monte Carlo from the draw played and `n_probability_draws` more, as the fraction of
      these 1 + n draws whose best action is the one played (so it is at least 1/(1 + n));
      with one action it is exactly 1 and nothing is drawn.
    - "ucb" (LinUCB; Li et al. 2010): plays the highest μ·x + α√(xᵀΣx), with probability 1.
    - "greedy": plays the highest μ·x, with probability 1.
    - "epsilon" (ε-greedy): with probability ε plays an action drawn uniformly, else the
      greedy one; the probability of the action played is exact: ε/K + (1 − ε) for the greedy
      action and ε/K for any other (K actions).

    Ties go to the first action (lowest index) of the highest value, for every policy (for
    "epsilon", the greedy action is that first one). Each decision, and each `update` of the
    bandit's own decisions, is one call to the Rust core (`cwrs::bandit`, which Rust programs
    use directly); the actions of a round are a dense array or a SciPy sparse matrix.

    The model is the prior N(0, a·I) until the first update: it is built at the first call
    (`choose`, `update`, ...) from the width of the actions, by a weightless presentation of a
    row (which learns nothing), so every round, the first included, is decided from a model.
    Under the prior every score is 0, so greedy plays the first action and UCB the action of
    the largest a·‖x‖².

    Learning: `update` learns the reward of the action played (the row of the chosen action,
    target the reward); `learn_logged` learns the decisions logged by another policy, by
    default with inverse-propensity weights 1/p (the estimator's `sample_weight`), so that the
    weighted squared loss is an unbiased estimate of the loss over every action, or with
    `method="dr"` by the doubly robust estimator (Dudík, Langford & Li 2011): every action of
    the round, with the model's own prediction as its target, corrected for the action played
    by its residual divided by p.

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
        Seeds the bandit's generator (the core's xoshiro256++, made at the first call): an int
        in [0, 2⁶⁴) as `cwrs::bandit::Generator::seed_from_u64` seeds it, so every decision is
        reproducible and a Rust program seeded alike draws the same; a NumPy Generator gives
        its four words; None takes fresh entropy from the system. The draws (normals by
        Marsaglia's polar method, uniforms of 53 bits) are the same on every machine.

    Attributes
    ----------
    estimator_ : cwrs estimator
        The clone of `estimator` that learns the rewards.
    n_features_in_ : int
        The width of the actions.
    n_rounds_ : int
        Rounds decided by `choose` and `choose_batch`.
    n_learned_ : int
        Rewards learned: one per call of `update` and one per round of `learn_logged` (also
        for `method="dr"`, which presents every action of a round to the estimator).

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
    (0.62, 0.91)
    >>> np.round(bandit.estimator_.coef_ - theta, 2)  # the reward model it learned
    array([-0.  , -0.  ,  0.01,  0.  ,  0.  ])

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

    # ----------------------------------------------------------------- checks
    def _check_params(self) -> None:
        # Called on every round: the estimator and the seed matter only until the model is
        # built (it is a clone of the estimator), so they are checked until then only.
        fitted = self.__dict__.get("estimator_")
        estimator = self.estimator if fitted is None else fitted
        if fitted is None:
            self._check_estimator_and_seed()
        if self.policy not in POLICIES:
            raise InvalidParameterError(f"policy must be one of {POLICIES}, got {self.policy!r}")
        if self.policy in ("thompson", "ucb"):
            for model in {id(estimator): estimator, id(self.estimator): self.estimator}.values():
                if not getattr(model, "_second_order", False):
                    raise InvalidParameterError(
                        f"policy={self.policy!r} needs the covariance of a second-order learner "
                        f"(AROWRegressor, AROW, ...); {type(model).__name__} is first order: "
                        "use policy='greedy' or 'epsilon'"
                    )
        _real(self, "alpha", self.alpha, 0.0, math.inf)
        _real(self, "epsilon", self.epsilon, 0.0, 1.0)
        draws = self.n_probability_draws
        if type(draws) is not int and (
            not isinstance(draws, numbers.Integral) or isinstance(draws, bool)
        ) or draws < 0:
            raise InvalidParameterError(
                f"n_probability_draws must be an int >= 0, got {draws!r}"
            )

    def _check_estimator_and_seed(self) -> None:
        estimator = self.estimator
        if not isinstance(estimator, (Regressor, Classifier)):
            raise InvalidParameterError(
                "ContextualBandit's estimator must be a cwrs regressor or classifier "
                f"(cwrs.AROWRegressor(), cwrs.AROW(), ...), got {estimator!r:.80}"
            )
        if (
            getattr(estimator, "kernel", None) is not None
            or getattr(estimator, "kernel_approximation", None) is not None
        ):
            raise InvalidParameterError("ContextualBandit takes primal learners only (no kernel)")
        seed = self.random_state
        if not (
            seed is None or isinstance(seed, np.random.Generator)
            or (isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and seed >= 0)
        ):
            raise InvalidParameterError(
                f"random_state must be None, an int >= 0 or a numpy.random.Generator, got "
                f"{seed!r:.80}"
            )

    def _actions(self, actions: ArrayLike, what: str = "actions") -> Float64Array:
        """One round's actions as a C-contiguous float64 (K, d) array, or a SciPy CSR matrix
        of float64 for sparse actions (ValueError otherwise)."""
        if is_sparse(actions):
            rows = cast(Any, actions).tocsr().astype(np.float64)
            values = rows.data
        else:
            try:
                rows = values = np.ascontiguousarray(actions, dtype=np.float64)
            except (TypeError, ValueError) as error:
                raise ValueError(f"{what} must be a 2-D array of numbers: {error}") from None
        if rows.ndim != 2:
            raise ValueError(f"{what} must be a 2-D array (one row per action), got "
                             f"{rows.ndim} dimension(s)")
        if rows.shape[0] == 0:
            raise ValueError(f"{what} has no action (no row)")
        if not np.isfinite(values).all():
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
        self._generator = _generator_state(self.random_state)

    def _fitted(self) -> Any:
        if "estimator_" not in self.__dict__:
            raise not_fitted_error(
                "This ContextualBandit has no model yet: call choose or update first."
            )
        return self.estimator_

    def _learn(self, rows: Float64Array, rewards: Float64Array, weights: Float64Array) -> None:
        estimator = self.estimator_
        if isinstance(estimator, Classifier):
            estimator.partial_fit(rows, rewards.astype(np.int64), sample_weight=weights)
        else:
            estimator.partial_fit(rows, rewards, sample_weight=weights)
        self.n_learned_ += rows.shape[0]

    # ----------------------------------------------------------------- decisions
    def _policy_args(self) -> tuple[str, float, float, int]:
        return (self.policy, float(self.alpha), float(self.epsilon),
                int(self.n_probability_draws))

    def _decide(self, rows: Float64Array) -> tuple[int, float]:
        """One round, in the core (`cwrs::bandit::Policy::choose`)."""
        model, matrix = self.estimator_._model_and_rows(rows)
        return _cwrs.bandit_choose(model, self._policy_args(), self._generator, matrix)

    def choose(self, actions: ArrayLike) -> tuple[int, float]:
        """Chooses one action of a round: returns (index of its row, probability that the
        policy chose it). A refused input (no row, NaN, another width) raises ValueError and
        changes nothing."""
        self._check_params()
        rows = self._actions(actions)
        self._ensure_model(rows.shape[1])
        decision = self._decide(rows)
        self.n_rounds_ += 1
        return decision

    def choose_batch(
        self, actions_per_round: Sequence[ArrayLike]
    ) -> tuple[np.ndarray, Float64Array]:
        """Chooses an action in each of several rounds with the same model (nothing is learned
        in between): returns (indices, probabilities), arrays with one entry per round. The
        decisions, and the draws from the generator, are those of `choose` called on each
        round in order. Every round is checked before the first is decided."""
        self._check_params()
        rounds = [self._actions(a, f"actions_per_round[{t}]")
                  for t, a in enumerate(actions_per_round)]
        if not rounds:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        widths = {rows.shape[1] for rows in rounds}
        if len(widths) > 1:
            raise ValueError(f"the rounds' actions have different widths: {sorted(widths)}")
        self._ensure_model(rounds[0].shape[1])
        decisions = [self._decide(rows) for rows in rounds]
        self.n_rounds_ += len(rounds)
        indices, probabilities = zip(*decisions)
        return np.array(indices, dtype=np.int64), np.array(probabilities, dtype=np.float64)

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
        if probability is None:  # the bandit's own decision: in the core (`learn_reward`)
            model, matrix = self.estimator_._model_and_rows(rows)
            _cwrs.bandit_learn(model, matrix, index, value)
            self.n_learned_ += 1
        else:
            self._learn(rows[index : index + 1], np.array([value]), np.array([weight]))
        return self

    def learn_logged(
        self,
        actions_per_round: Sequence[ArrayLike],
        chosen: ArrayLike,
        rewards: ArrayLike,
        probabilities: ArrayLike,
        *,
        method: Literal["ips", "dr"] = "ips",
    ) -> Self:
        """Learns the decisions logged by another policy.

        Round t of the log offers the actions `actions_per_round[t]` (K_t rows), of which the
        logging policy played the row a_t = `chosen[t]` with probability p_t =
        `probabilities[t]` (its propensity) and saw the reward r_t = `rewards[t]`; the rewards
        of the other actions are unknown. The rounds are learned in order.

        - "ips" (inverse propensity scoring): the row a_t with target r_t and weight 1/p_t, every
          round in one call to the estimator, so that the weighted squared loss is an unbiased
          estimate of the loss over every action. With uniform logging (p = 1/K) this is the
          plain update of each chosen row with weight K.
        - "dr" (doubly robust; Dudík, Langford & Li 2011, Vowpal Wabbit's `--cb_type dr`):
          every action row k of the round, with weight 1 and target

              r̂_k + 1[k = a_t]·(r_t − r̂_{a_t})/p_t,

          r̂_k the model's prediction of row k (`estimator_.predict`, μ·x + intercept) before
          the round is learned. All K_t targets are computed first, then the K_t rows are
          learned in order k = 0, ..., K_t − 1 (one call to the estimator per round). Given
          the past, each target's expectation over the logging policy's choice is the true
          reward of its action; the importance weight multiplies only the residual
          r_t − r̂_{a_t}, which is small once the model is decent, instead of the whole reward,
          so the targets vary much less than the IPS estimate of every action's reward
          (r_t/p_t for the action played, 0 for the others). DR needs that decent model: from
          the prior (r̂ = 0) its first targets are r_t/p_t, learned with weight 1, and small
          probabilities make them large; start it from a model learned by "ips" or by the
          bandit's own rounds. With a linear model that fits the reward, "ips" (importance-
          weighted regression of the action played) already varies little, and DR from a
          decent model matched it, not more (see the user guide). Use a second-order
          regressor: a first-order one that steps to fit each row (`PARegressor()`) can
          diverge on these targets. A round costs K_t rows instead of one. The targets of
          the actions not played are the model's own predictions, learned as if observed, so
          they also shrink its covariance along those actions: the uncertainty that UCB and
          Thompson sampling explore from then understates what the log taught; "ips" keeps it.

        Parameters
        ----------
        actions_per_round : sequence of array-like of shape (K_t, n_features)
            The actions of each round (their number may change from round to round).
        chosen : array-like of int, shape (n_rounds,)
            The index of the action the logging policy played in each round.
        rewards : array-like of shape (n_rounds,)
            The reward of that action (0 or 1 for a classifier model).
        probabilities : array-like of shape (n_rounds,)
            The logging policy's probability of that action, in (0, 1].
        method : {"ips", "dr"}, default="ips"
            The estimator of the rewards of the actions not played (see above). "dr" needs a
            regressor model: its targets are not 0 or 1, which a classifier cannot learn.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            For a refused input: every input is checked before anything is learned, so a
            refused call changes nothing. An unknown `method`, or "dr" with a classifier
            model, raises `cwrs.InvalidParameterError` (a ValueError).

        Notes
        -----
        `n_learned_` grows by one per logged round with either method (the rewards learned),
        although "dr" presents K_t rows to the estimator per round.

        References
        ----------
        .. [1] M. Dudík, J. Langford and L. Li, "Doubly robust policy evaluation and
           learning", ICML 2011.
        """
        self._check_params()
        methods = ("ips", "dr")
        if method not in methods:
            raise InvalidParameterError(f"method must be one of {methods}, got {method!r:.80}")
        model = self.estimator_ if "estimator_" in self.__dict__ else self.estimator
        if method == "dr" and isinstance(model, Classifier):
            raise InvalidParameterError(
                "method='dr' needs a regressor model: its targets r̂ + (r − r̂)/p are not 0 or 1, "
                f"which the classifier {type(model).__name__} cannot learn; use method='ips' "
                "or a regressor (cwrs.AROWRegressor(), ...)"
            )
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
        if method == "dr":
            self._learn_doubly_robust(rounds, chosen_array, reward_array, p)
            return self
        picked = np.stack([rows[int(i)] for rows, i in zip(rounds, chosen_array)])
        self._learn(picked, reward_array, 1.0 / p)
        return self

    def _learn_doubly_robust(
        self, rounds: list[Float64Array], chosen: np.ndarray, rewards: Float64Array,
        probabilities: Float64Array,
    ) -> None:
        """`learn_logged(method="dr")` on checked inputs: per round, every row with the
        doubly robust target from the model before the round, weight 1."""
        estimator = self.estimator_
        for rows, index, reward, p in zip(rounds, chosen, rewards, probabilities):
            targets = estimator.predict(rows)
            index = int(index)
            targets[index] += (reward - targets[index]) / p
            if not np.isfinite(targets).all():  # the rounds before it stay learned
                raise ValueError(
                    "a doubly robust target overflowed float64 (a reward or 1/p too large)"
                )
            estimator.partial_fit(rows, targets)
            self.n_learned_ += 1


def _generator_state(random_state: Union[int, np.random.Generator, None]) -> np.ndarray:
    """The four uint64 words of the core's xoshiro256++ generator for `random_state`: an int
    in [0, 2⁶⁴) seeds it as `cwrs::bandit::Generator::seed_from_u64` does (so a Rust program
    seeded alike makes the same draws); a larger int or None goes through NumPy's
    `SeedSequence` (None: fresh entropy from the system); a NumPy Generator gives its next four
    words."""
    words: np.ndarray
    if isinstance(random_state, np.random.Generator):
        words = random_state.integers(0, 2**64, size=4, dtype=np.uint64, endpoint=False)
    elif isinstance(random_state, numbers.Integral) and 0 <= int(random_state) < 2**64:
        words = _cwrs.generator_state(int(random_state))
    else:
        words = np.random.SeedSequence(random_state).generate_state(4, dtype=np.uint64)
    if not words.any():  # the one state xoshiro256++ cannot take
        words = _cwrs.generator_state(0)
    return np.array(words, dtype=np.uint64)


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
    order). Each round the bandit chooses and then learns the reward of its choice (as
    `choose` then `update` with weight 1 would, on the rows `action_rows` gives without their
    zeros), every round in the core: the bandit is changed (start from a new one for a new
    run).

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
    n_actions = classes.shape[0]
    width = n_actions * (contexts.shape[1] + 1)
    bandit._check_params()
    if not np.isfinite(contexts).all():
        raise ValueError("X holds NaN or infinity")
    if bandit.__dict__.get("n_features_in_", width) != width:
        raise ValueError(
            f"the bandit's actions have {bandit.n_features_in_} features, but this data set's "
            f"have {width} (K·(d + 1) for {n_actions} classes and {contexts.shape[1]} features)"
        )
    bandit._ensure_model(width)
    estimator = bandit.estimator_
    model = estimator._fitted_model()
    if estimator._feature_map is not None:
        raise InvalidParameterError("simulate needs an estimator without a feature map")
    contexts = np.ascontiguousarray(contexts)
    codes = codes.astype(np.int64)
    chosen = np.zeros(total, dtype=np.int64)
    probabilities = np.zeros(total)
    # In the core, a block of rounds per call: between blocks Ctrl-C stops the run with the
    # bandit's counts telling the rounds done.
    for start in range(0, total, _ROUNDS_PER_CALL):
        block = order[start : start + _ROUNDS_PER_CALL].astype(np.int64)
        picked, p = _cwrs.bandit_simulate(
            model, bandit._policy_args(), bandit._generator, contexts, codes, block
        )
        chosen[start : start + block.shape[0]] = picked
        probabilities[start : start + block.shape[0]] = p
        bandit.n_rounds_ += block.shape[0]
        bandit.n_learned_ += block.shape[0]
    rewards = (chosen == codes[order]).astype(np.float64)
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
