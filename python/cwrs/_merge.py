"""`cwrs.merge`: one model from models trained on shards of a stream (docs/design.md §9).

The math lives in the Rust core (crates/cwrs/src/parallel/merge/mod.rs, reached through `_cwrs.merge`); this layer checks
that the estimators describe the same model (class, hyper-parameters, classes, features) and
builds the merged estimator around the merged native model.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Literal, Optional, Sequence, TypeVar, overload

import numpy as np

from . import _cwrs
from ._estimator import Estimator
from ._meta import clone
from ._params import InvalidParameterError
from .bandit import ContextualBandit

if TYPE_CHECKING:
    from ._typing import ArrayLike

_E = TypeVar("_E", bound=Estimator)
_Method = Literal["auto", "information", "precision", "average"]

#: How models are combined; see `merge`.
METHODS = ("auto", "information", "precision", "average")

# Hyper-parameters of the training procedure, not of the model: models fitted with other values
# describe the same model and merge; the merged estimator takes the first model's.
_PROCEDURE = ("n_iter", "shuffle", "random_state", "n_jobs")
_KERNEL_KINDS = ("kernel", "multiclass_kernel")


@overload
def merge(
    models: Sequence[ContextualBandit],
    *,
    method: _Method = "auto",
    base: Optional[ContextualBandit] = None,
    weights: Optional[ArrayLike] = None,
) -> ContextualBandit: ...
@overload
def merge(
    models: Sequence[_E],
    *,
    method: _Method = "auto",
    base: Optional[_E] = None,
    weights: Optional[ArrayLike] = None,
) -> _E: ...
def merge(
    models: Sequence[Any],
    *,
    method: _Method = "auto",
    base: Optional[Any] = None,
    weights: Optional[ArrayLike] = None,
) -> Any:
    """One fitted estimator from `models`, fitted estimators of one class and hyper-parameters
    trained on shards of a stream from the common start `base` (None: from scratch). The inputs
    are not changed; the result is a new estimator of the same class and parameters.

    `method` (docs/design.md §9):

    - "information": the evidence each model added to `base` summed, Λ = Λ₀ + Σₖ(Λₖ − Λ₀) and
      η = η₀ + Σₖ(ηₖ − η₀) with Λ = Σ⁻¹, η = Λμ (per coordinate for `covariance="diag"`, per
      class for more than two classes). Exact for `AROWRegressor` (recursive least squares),
      and for AROW given the rounds each shard updated on.
    - "precision": the precision-weighted average Λ = Σₖ bₖΛₖ, μ = Λ⁻¹Σₖ bₖΛₖμₖ.
    - "average": the weighted average of the means (and covariances), iterative parameter
      mixing; the only method for the first-order rules (Perceptron, PA, ...).
    - "auto": "information" for AROW (classifier or regressor) without process noise, whose
      updates add evidence that does not depend on the model that learned it; "average" for
      every other rule (for CW, SCW1, SCW2, NAROW, NHERD, ... the evidence a shard adds depends
      on its state, and its sum over shards overcounts: docs/design.md §9.2) and for a model
      with process noise, whose covariance also grows each round ("information" refuses it).

    `weights` are the bₖ of "precision" and "average", normalised to sum to 1; by default the
    number of rounds each model updated on beyond `base` (the core counts updates, not rows).
    Models with an L1 penalty are merged by their thresholded means, and the merged model has no
    threshold pending. Low-rank models merge by stacking their Frequent Directions sketches
    and shrinking the stack back to 2·rank rows (docs/design.md §9.7): exact while the shards'
    updates fit in the sketch. Kernel models cannot be merged (their support sets differ). Models that
    differ in class, hyper-parameters (other than n_iter, shuffle, random_state, n_jobs),
    classes, features or covariance form (or rank) raise `InvalidParameterError`.

    Contextual bandits (`cwrs.bandit.ContextualBandit`) trained on shards of the rounds merge
    too: the result is a new bandit whose `estimator_` is the merge (as above, with `method`
    and `weights`) of their `estimator_`s, whose `n_rounds_` and `n_learned_` are the sums of
    theirs (with `base`, a bandit they all continued: its counts plus what each added), and
    whose random generator continues the state of the first bandit's generator (a copy: the
    merged bandit draws the numbers the first would draw next). The bandits must have equal
    parameters but `random_state` (policy, alpha, epsilon, n_probability_draws, and their
    estimators' hyper-parameters other than n_iter, shuffle, random_state, n_jobs) and be
    fitted (a bandit without a model raises `NotFittedError`).
    """
    models = list(models)
    if not models:
        raise InvalidParameterError("merge needs at least one model")
    if method not in METHODS:
        raise InvalidParameterError(f"method must be one of {METHODS}, got {method!r}")
    first = models[0]
    if isinstance(first, ContextualBandit):
        return _merge_bandits(models, method, base, weights)
    for k, model in enumerate(models):
        _check_like(first, model, f"model {k}")
    if base is not None:
        _check_like(first, base, "base")
    native_weights = None
    if weights is not None:
        native_weights = [float(w) for w in np.asarray(weights, dtype=np.float64).ravel()]
    bases = {m.zero_based_ for m in models if "zero_based_" in m.__dict__}
    if len(bases) > 1:
        raise InvalidParameterError(
            "the models learned from LIBSVM files with different index bases (zero_based_ "
            "True and False): their features are shifted by one against each other"
        )
    merged_model = _cwrs.merge(
        [m._fitted_model() for m in models],
        method,
        None if base is None else base._fitted_model(),
        native_weights,
    )
    fitted = fitted_attributes(first)
    if bases:
        fitted["zero_based_"] = bases.pop()
    return with_model(first, fitted, merged_model)


# The counts of a bandit that its merge sums.
_BANDIT_COUNTS = ("n_rounds_", "n_learned_")


def _merge_bandits(
    bandits: list[Any], method: Any, base: Optional[Any], weights: Optional[ArrayLike]
) -> ContextualBandit:
    """The bandit of `merge` for contextual bandits (see `merge`)."""
    first = bandits[0]
    for k, bandit in enumerate(bandits):
        _check_bandit_like(first, bandit, f"model {k}")
    if base is not None:
        _check_bandit_like(first, base, "base")
    estimator = merge(
        [bandit.estimator_ for bandit in bandits], method=method,
        base=None if base is None else base.estimator_, weights=weights,
    )
    merged = clone(first)
    params = set(type(first)._get_param_names())
    # Every entry of a fitted bandit but its parameters, its estimators and its counts (its
    # random generator), copied from the first.
    state = {
        key: copy.deepcopy(value) for key, value in first.__getstate__().items()
        if key not in params and key not in ("estimator", "estimator_", *_BANDIT_COUNTS)
    }
    start = {name: 0 if base is None else getattr(base, name) for name in _BANDIT_COUNTS}
    for name in _BANDIT_COUNTS:
        state[name] = start[name] + sum(getattr(b, name) - start[name] for b in bandits)
    merged.__setstate__({**merged.__getstate__(), **state, "estimator_": estimator})
    return merged


def _check_bandit_like(first: ContextualBandit, other: Any, what: str) -> None:
    """Refuses `other` unless it is a fitted bandit of `first`'s parameters (but random_state)."""
    if not isinstance(other, ContextualBandit):
        raise InvalidParameterError(
            f"{what} is a {type(other).__name__}, model 0 a ContextualBandit: only bandits merge "
            "with bandits"
        )
    other._fitted()
    mine, theirs = first.get_params(deep=False), other.get_params(deep=False)
    for name in mine:
        if name not in ("estimator", "random_state") and not _same(mine[name], theirs[name]):
            raise InvalidParameterError(
                f"{what} has {name}={theirs[name]!r}, model 0 {name}={mine[name]!r}: only "
                "bandits of the same parameters merge"
            )
    if type(first.estimator) is not type(other.estimator):
        raise InvalidParameterError(
            f"{what} learns with a {type(other.estimator).__name__}, model 0 with a "
            f"{type(first.estimator).__name__}: only bandits of the same estimator merge"
        )
    mine, theirs = first.estimator.get_params(), other.estimator.get_params()
    for name in mine:
        if name not in _PROCEDURE and not _same(mine[name], theirs[name]):
            raise InvalidParameterError(
                f"{what}'s estimator has {name}={theirs[name]!r}, model 0's {name}="
                f"{mine[name]!r}: only bandits of the same parameters merge"
            )


#: The fitted attributes an estimator has besides its native model.
FITTED = (
    "_feature_map", "classes_", "_sparse_input", "n_features_in_", "feature_names_in_",
    "zero_based_",
)


def fitted_attributes(estimator: Estimator) -> dict[str, Any]:
    """The fitted attributes of `estimator` other than its native model."""
    return {name: estimator.__dict__.get(name) for name in FITTED if name in estimator.__dict__}


def with_model(template: _E, fitted: dict[str, Any], model: Any) -> _E:
    """A new estimator with the class and hyper-parameters of `template`, the fitted
    attributes `fitted` and the native model `model`."""
    estimator = type(template)(**template.get_params())
    fitted = {"feature_names_in_": None, **fitted}
    with estimator._lock():
        estimator._install(_model=model, **fitted)
    return estimator


def _check_like(first, other, what):
    """Refuses `other` unless it is fitted and describes the same model as `first`."""
    if not isinstance(other, Estimator):
        raise InvalidParameterError(f"{what} is not a cwrs estimator: {other!r}")
    if type(other) is not type(first):
        raise InvalidParameterError(
            f"{what} is a {type(other).__name__}, model 0 a {type(first).__name__}: only "
            "models of one class merge"
        )
    kind = other._fitted_model().kind
    if kind in _KERNEL_KINDS:
        raise InvalidParameterError(
            "kernel models cannot be merged: each keeps its own support set, not weights"
        )
    mine, theirs = first.get_params(), other.get_params()
    for name in mine:
        if name not in _PROCEDURE and not _same(mine[name], theirs[name]):
            raise InvalidParameterError(
                f"{what} has {name}={theirs[name]!r}, model 0 {name}={mine[name]!r}: only "
                "models of the same hyper-parameters merge"
            )
    for name in ("classes_", "n_features_in_", "feature_names_in_"):
        if not _same(first.__dict__.get(name), other.__dict__.get(name)):
            raise InvalidParameterError(
                f"{what} differs from model 0 in {name}: only models of the same classes and "
                "features merge"
            )
    if not _same_map(first._feature_map, other._feature_map):
        raise InvalidParameterError(
            f"{what} has other random features than model 0 (kernel_approximation draws them "
            "from random_state): only models of the same features merge"
        )


def _same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (
            isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
            and a.dtype == b.dtype and np.array_equal(a, b)
        )
    return bool(type(a) is type(b) and a == b)


def _same_map(a, b):
    if a is None or b is None:
        return a is b
    return np.array_equal(a.weights, b.weights) and np.array_equal(a.offsets, b.offsets)
