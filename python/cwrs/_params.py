"""The estimators' side of checking their hyper-parameters.

The values' rules (the rules' own parameters against the rule table, the covariance, the L1
penalty, process noise, averaging and the kernel's parameters, alone and together) are the
core's: the native configuration built from the hyper-parameters is checked by the core
(`ModelConfig::check`, through `Estimator._checked_config`, the one validation), whose message
reaches the user. Checked here is what the core cannot see: the Python types of the values,
scikit-learn's conventions (`gamma=None`, `average=True`, the passes' parameters, callables and
random states), the names the Python API gives (`penalty`, `multi_class`, `kernel`), values a
file cannot hold, and the parameters that the configuration makes no use of, refused or warned
about through one list, `_INEFFECTIVE` (docs/design.md §6).
"""

from __future__ import annotations

import functools
import inspect
import numbers
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Optional

import numpy as np

from . import _cwrs
from ._lean import forget as forget_lean
from ._typing import (
    ClassifierParams,
    RegressorParams,
    SecondOrderClassifierParams,
    SecondOrderParams,
    SecondOrderRegressorParams,
)
from ._validation import IneffectiveParameterWarning, warn_user

# Every refused hyper-parameter raises the one class the native module defines (a ValueError).
InvalidParameterError = _cwrs.InvalidParameterError

if TYPE_CHECKING:
    from typing_extensions import Self

#: The rule table, by (kind, name): kind is "classification" or "regression".
RULES: dict[tuple[str, str], _cwrs._RuleEntry] = {
    (entry["kind"], entry["name"]): entry for entry in _cwrs.rule_table()
}

KERNELS = ("linear", "rbf", "poly")
# The largest budget: the dual covariance and Gram matrix of a full support set hold
# budget·(budget + 1)/2 floats each, which past 2**30 rows exceeds any address space.
MAX_BUDGET = 2**30
# The largest poly degree (the native kernel raises to an i32 power).
MAX_DEGREE = 2**31 - 1
# The largest count the native configuration holds (an i64).
MAX_COUNT = 2**63 - 1
# The most threads `fit` takes (and -MAX_N_JOBS the fewest n_jobs): more cores than any machine
# has, so a larger value is a mistake (2**31), refused before it costs a thread or a copy.
MAX_N_JOBS = 1024

#: The parameters every classifier takes after its rule's own (its `**params`, typed in
#: `cwrs._typing`), in signature order, with their defaults; second-order learners add
#: `SECOND_ORDER_PARAMETERS` in front of them (see `shared_parameters`).
CLASSIFIER_PARAMETERS: ClassifierParams = {
    "fit_intercept": True,
    "n_iter": 1,
    "shuffle": True,
    "random_state": None,
    "n_jobs": 1,
    "multi_class": "max-score",
    "kernel": None,
    "gamma": None,
    "degree": 3,
    "coef0": 1.0,
    "budget": None,
    "kernel_approximation": None,
    "n_components": 100,
    "average": False,
    "class_weight": None,
}
REGRESSOR_PARAMETERS: RegressorParams = {
    "fit_intercept": True,
    "n_iter": 1,
    "shuffle": True,
    "random_state": None,
    "n_jobs": 1,
    "average": False,
}
SECOND_ORDER_PARAMETERS: SecondOrderParams = {
    "a": 1.0,
    "covariance": "diag",
    "rank": 10,
    "penalty": None,
    "alpha": 1e-4,
    "penalize_intercept": False,
    "process_noise": 0.0,
}


#: Hyper-parameters added after files and pickles were first written, with the value a state
#: written without one was fitted with (docs/model-format.md).
ADDED_PARAMETERS: dict[str, Any] = {
    "n_jobs": 1, "rank": 10, "average": False, "process_noise": 0.0, "class_weight": None,
}


def with_added_parameters(cls, state):
    """`state` (an estimator's saved attributes) with the `ADDED_PARAMETERS` of `cls` that it
    lacks set to their values."""
    added = {k: v for k, v in ADDED_PARAMETERS.items() if k in init_defaults(cls)}
    return {**added, **state}


@functools.cache
def init_defaults(cls) -> dict[str, Any]:
    """The defaults of `cls.__init__`'s parameters, by name."""
    parameters = inspect.signature(cls.__init__).parameters.values()
    return {p.name: p.default for p in parameters if p.name != "self"}


def rule_entry(kind: str, name: str) -> _cwrs._RuleEntry:
    """The table entry of rule `name` of `kind` ("classification" or "regression")."""
    return RULES[kind, name]


# ------------------------------------------------------------------------- single values
def as_float(name, value):
    """`value` as a float, if it is a real number (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidParameterError(f"{name} must be a real number, got {value!r}")
    return float(value)


def _check_bool(name, value):
    if not isinstance(value, (bool, np.bool_)):
        raise InvalidParameterError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def resolve_gamma(gamma, n_features):
    """scikit-learn's convention: `gamma=None` means 1 / n_features."""
    if gamma is None:
        return 1.0 / n_features
    if isinstance(gamma, bool) or not isinstance(gamma, numbers.Real) or not gamma > 0:
        raise InvalidParameterError(f"gamma must be a positive number or None, got {gamma!r}")
    return float(gamma)


def check_budget(budget):
    if budget is None:
        return None
    if not _is_int(budget) or budget < 1:
        raise InvalidParameterError(f"budget must be a positive integer or None, got {budget!r}")
    if budget > MAX_BUDGET:
        raise InvalidParameterError(
            f"budget={budget!r} is too large: a support set that size needs its budget × "
            f"budget dual covariance and Gram matrix ({budget * budget * 8 / 1e9:.3g} GB); "
            f"use a budget of at most 2**30 (a few thousand is usual) or budget=None"
        )
    return int(budget)


def check_n_components(n_components):
    if not _is_int(n_components) or n_components < 1:
        raise InvalidParameterError(f"n_components must be a positive integer, got {n_components!r}")
    return int(n_components)


def check_degree(degree):
    if not _is_int(degree) or not 1 <= degree <= MAX_DEGREE:
        raise InvalidParameterError(f"degree must be a positive integer at most 2**31 - 1, got {degree!r}")
    return int(degree)


# ------------------------------------------------------------------------- groups
# The values go to the native model in this shape, their types checked; the native model checks
# the values.
def model_args(estimator):
    """(rule params, covariance form, a, fit_intercept) for the native model."""
    fit_intercept = _check_bool("fit_intercept", estimator.fit_intercept)
    learned = learned_noise(estimator)
    params = [
        (name, 1.0 if learned and name == "r" else as_float(name, getattr(estimator, name)))
        for name in estimator._rule_params
    ]
    if not estimator._second_order:
        # AdaGrad and FTRL name their own form (docs/design.md §2.9).
        return params, getattr(estimator, "_form", "identity"), 1.0, fit_intercept
    covariance = estimator.covariance
    a = 1.0 if learned_prior(estimator) else as_float("a", estimator.a)
    if not isinstance(covariance, str):
        raise InvalidParameterError(
            f'covariance must be "diag" or "full" (or "lowrank", with rank), got {covariance!r}'
        )
    return params, covariance, a, fit_intercept


def _auto(estimator, name):
    """Whether AROW regression's `name` (r or a) is "auto"; a number, or a classifier's value,
    is left to `as_float`. Only the regressor's r and a take "auto"."""
    value = getattr(estimator, name, None)
    if not isinstance(value, str) or estimator._rule_kind != "regression":
        return False
    if value != "auto":
        raise InvalidParameterError(f'{name} must be a real number or "auto", got {value!r}')
    return True


def learned_noise(estimator):
    """Whether AROW regression learns its noise variance (`r="auto"`): its rule's r is then 1,
    the unit of the learned σ² (docs/design.md §3.14)."""
    return _auto(estimator, "r")


def learned_prior(estimator):
    """Whether AROW regression learns the prior variance of its feature weights (`a="auto"`),
    from a = 1 (docs/design.md §3.14)."""
    return _auto(estimator, "a")


def noise_config(estimator):
    """The configuration entries of a learned noise variance and a learned prior (none for a
    fixed r and a)."""
    noise = {"noise_variance": "auto"} if learned_noise(estimator) else {}
    return {**noise, "prior": "auto"} if learned_prior(estimator) else noise


def covariance_config(estimator, covariance):
    """The configuration entries of the covariance form: its name, and the sketch's rank for
    "lowrank" (checked here: a positive int; the native model checks its upper bound)."""
    if covariance != "lowrank":
        return {"covariance": covariance}
    rank = estimator.rank
    if isinstance(rank, (bool, np.bool_)) or not isinstance(rank, numbers.Integral) or not (
        1 <= rank <= MAX_COUNT
    ):
        raise InvalidParameterError(f"rank must be a positive int below 2**63, got {rank!r}")
    return {"covariance": covariance, "rank": int(rank)}


def l1_spec(estimator):
    """The L1 penalty spec (penalty, alpha, penalize_intercept) for the native model, or None;
    learners without the `penalty` parameter have none. The names are the Python API's (the
    native "l1-rda" is AdaGrad's `l1_form="rda"`)."""
    penalty = getattr(estimator, "penalty", None)
    if penalty is None:
        return None
    if hasattr(estimator, "l1_form"):
        penalty = _adagrad_penalty(penalty, estimator.l1_form)
    elif not (isinstance(penalty, str) and penalty in ("l1", "l1-uniform")):
        raise InvalidParameterError(f'penalty must be None, "l1" or "l1-uniform", got {penalty!r}')
    penalize_intercept = _check_bool("penalize_intercept", estimator.penalize_intercept)
    return penalty, as_float("alpha", estimator.alpha), penalize_intercept


def _adagrad_penalty(penalty, l1_form):
    """AdaGrad's native penalty: "l1" (FOBOS) or "l1-rda" for `l1_form`."""
    if penalty != "l1":
        raise InvalidParameterError(f'AdaGrad\'s penalty must be None or "l1", got {penalty!r}')
    if not (isinstance(l1_form, str) and l1_form in ("fobos", "rda")):
        raise InvalidParameterError(f'l1_form must be "fobos" or "rda", got {l1_form!r}')
    return "l1-rda" if l1_form == "rda" else "l1"


def average_start(estimator):
    """The row from which predictions use the averaged means (`average=True` is 1, an int n
    is row n, as scikit-learn's SGD counts them), or None for `average=False`."""
    average = estimator.average
    if isinstance(average, (bool, np.bool_)):
        return 1 if average else None
    if not _is_int(average) or not 1 <= average <= MAX_COUNT:
        raise InvalidParameterError(
            f"average must be a bool or a positive integer below 2**63, got {average!r}"
        )
    return int(average)


def process_noise_spec(estimator):
    """The process noise for the native model: a float (0 for learners without the parameter)
    or a name, "auto" (docs/design.md §10); the native model checks the value."""
    value = getattr(estimator, "process_noise", 0.0)
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidParameterError(
            f'process_noise must be a non-negative finite number or "auto", got {value!r}'
        )
    return float(value)


def check_multi_class(estimator):
    multi_class = estimator.multi_class
    if not isinstance(multi_class, str) or multi_class not in ("max-score", "ovr"):
        raise InvalidParameterError(f'multi_class must be "max-score" or "ovr", got {multi_class!r}')
    return multi_class


def check_class_weight(estimator):
    """`class_weight`: None, "balanced" or a mapping {class: finite weight ≥ 0}."""
    class_weight = getattr(estimator, "class_weight", None)
    if class_weight is None or isinstance(class_weight, str) and class_weight == "balanced":
        return class_weight
    if not isinstance(class_weight, Mapping):
        raise ValueError(
            f'class_weight must be None, "balanced" or a dict {{class: weight}}, got '
            f"{class_weight!r:.80}"
        )
    for label, weight in class_weight.items():
        if (
            isinstance(weight, (bool, np.bool_))
            or not isinstance(weight, (int, float, np.integer, np.floating))
            or not np.isfinite(weight)
            or weight < 0
        ):
            raise ValueError(
                f"class_weight[{label!r}] must be a finite number ≥ 0, got {weight!r:.80}"
            )
    return class_weight


def check_pass_params(estimator):
    """n_iter, shuffle, random_state and n_jobs (used by `fit`, and `random_state` by the
    random features)."""
    n_iter = estimator.n_iter
    if not _is_int(n_iter) or n_iter < 1:
        raise InvalidParameterError(f"n_iter must be a positive integer, got {n_iter!r}")
    check_n_jobs(estimator)
    _check_bool("shuffle", estimator.shuffle)
    random_state = estimator.random_state
    if not (
        random_state is None
        or isinstance(random_state, (np.random.RandomState, np.random.Generator))
        # NumPy's seeds: what np.random.RandomState takes.
        or _is_int(random_state) and 0 <= random_state < 2**32
    ):
        raise InvalidParameterError(
            "random_state must be None, an int in [0, 2**32 - 1], a numpy RandomState or "
            f"Generator, got {random_state!r}"
        )


def check_n_jobs(estimator):
    """The number of threads `fit` trains with: n_jobs ≥ 1, or -1 (all cores) down to -k (all
    but k − 1, scikit-learn's convention). Whether the models merge, which n_jobs ≠ 1 needs, is
    the core's rule, checked with the native configuration (`Estimator._checked_config`)."""
    n_jobs = getattr(estimator, "n_jobs", 1)
    if not _is_int(n_jobs) or n_jobs == 0 or abs(n_jobs) > MAX_N_JOBS:
        raise InvalidParameterError(
            f"n_jobs must be a non-zero integer from -{MAX_N_JOBS} to {MAX_N_JOBS} (-1: all "
            f"cores), got {n_jobs!r}"
        )
    affinity = getattr(os, "sched_getaffinity", None)
    cores = len(affinity(0)) if affinity is not None else os.cpu_count() or 1
    return int(n_jobs) if n_jobs > 0 else max(1, cores + 1 + int(n_jobs))


def warn_if_shards_do_not_pay(model, n_jobs: int, n_rows: int) -> None:
    """Warns when `fit`'s n_jobs shards of a full covariance have too few rows to pay for their
    merge: it inverts the k + 2 d×d covariances of the shards, the base and the result, O(d³)
    each, while a shard of m rows saves about m·d² of learning in sequence; measured, it pays
    from about 2·(k + 2)·d rows per shard (n_jobs=2 on 600 rows of 300 features: 2.5 times
    slower than n_jobs=1)."""
    shards = min(n_jobs, n_rows)  # never more shards than rows
    if shards < 2 or model.covariance_kind != "full":
        return
    dim = model.config["n_features"] + bool(model.config["fit_intercept"])
    needed = 2 * (shards + 2) * dim
    if n_rows < shards * needed:
        warn_user(
            f"n_jobs={n_jobs} with covariance=\"full\" pays from about {needed} rows per shard "
            f"(2·(k + 2)·d for k shards, for the O(d³) merge of their covariances); this fit has "
            f"{n_rows // shards}: n_jobs=1 is faster.",
            IneffectiveParameterWarning,
        )


class KernelSpec(NamedTuple):
    """A kernel learner's settings for the native model: the kernel (a name, or a callable),
    its parameters (gamma, degree, coef0) and the budget."""

    kernel: Any
    params: tuple[float, int, float]
    budget: Optional[int]


def kernel_spec(estimator, n_classes, n_features) -> Optional[KernelSpec]:
    """The kernel settings of a classifier with `kernel`, else None (and the random features'
    settings checked when `kernel_approximation` is set)."""
    approximation, kernel = estimator.kernel_approximation, estimator.kernel
    if approximation is not None:
        if approximation != "rff":
            raise InvalidParameterError(
                f'kernel_approximation must be None or "rff", got {approximation!r}'
            )
        if kernel is not None:
            raise InvalidParameterError("set either kernel or kernel_approximation, not both")
        resolve_gamma(estimator.gamma, n_features)
        check_n_components(estimator.n_components)
        return None
    if kernel is None:
        return None
    built_in = isinstance(kernel, str)
    if not (built_in and kernel in KERNELS or callable(kernel)):
        raise InvalidParameterError(f"kernel must be None, a callable or one of {KERNELS}, got {kernel!r}")
    params = (
        resolve_gamma(estimator.gamma, n_features),
        check_degree(estimator.degree),
        as_float("coef0", estimator.coef0),
    )
    if n_classes != 2 and not built_in:
        raise InvalidParameterError(
            f"callable kernels support two classes; use a built-in kernel for {n_classes}"
        )
    return KernelSpec(kernel, params, check_budget(estimator.budget))


def check_params(estimator, n_classes=2):
    """Every check of the hyper-parameters (a classifier's for `n_classes`) made before the
    native model is configured, in order: their types, the parameters without effect, then
    that a saved model can hold each value (so that `fit` never accepts a model that cannot be
    kept). The native model then checks the values (`Estimator._checked_config`)."""
    _check_values(estimator, n_classes)
    from ._persist import check_storable  # the file format depends on the estimators

    check_storable(estimator)


def _check_values(estimator, n_classes):
    """The types of the values and what the native configuration does not hold (the passes,
    the parameters without effect, `multi_class` of a two-class model)."""
    _, covariance, _, _ = model_args(estimator)
    l1_spec(estimator)
    average_start(estimator)
    process_noise_spec(estimator)
    if estimator._rule_kind == "classification":
        estimator._rule_config()
        check_class_weight(estimator)
        check_multi_class(estimator)
        check_ineffective(estimator)
        if kernel_spec(estimator, n_classes, 1) is not None:
            return
    else:
        check_ineffective(estimator)
    covariance_config(estimator, covariance)


# ------------------------------------------------------------------------- without effect
class _Dependent(NamedTuple):
    """A hyper-parameter that acts only in some configurations: `name`, whether it acts in the
    estimator's (`acts`), whether setting it elsewhere is refused (where the user evidently
    expected an effect the configuration cannot give) or warned about (where ignoring it loses
    nothing, and where generic code sets it: scikit-learn's checks set `alpha` on every
    regressor and `n_components` on every estimator that has them), and `why`: what it does and
    needs. A kernel parameter's `why` names the kernels that use it."""

    name: str
    acts: Callable[[Any], bool]
    refuse: bool
    why: str
    kernels: tuple[str, ...] = ()


def _kernel_choice(estimator):
    """The kernel setting as `_Dependent.kernels` names it."""
    if estimator.kernel_approximation == "rff":
        return "rff"
    return "a callable kernel" if callable(estimator.kernel) else estimator.kernel


def _kernel_parameter(name, kernels):
    users = " or ".join(
        'kernel_approximation="rff"' if user == "rff"
        else user if user == "a callable kernel"
        else f"kernel={user!r}"
        for user in kernels
    )
    return _Dependent(
        name, lambda est: _kernel_choice(est) in kernels, True, f"is used by {users}", kernels
    )


_INEFFECTIVE = (
    _kernel_parameter("gamma", ("rbf", "poly", "rff")),
    _kernel_parameter("degree", ("poly",)),
    _kernel_parameter("coef0", ("poly",)),
    _kernel_parameter("budget", ("linear", "rbf", "poly", "a callable kernel")),
    _Dependent(
        "rank",
        lambda est: est.covariance == "lowrank",
        False,
        'is the rank of the sketched covariance, which needs covariance="lowrank"',
    ),
    _Dependent(
        "alpha",
        lambda est: est.penalty is not None,
        False,
        'is the strength of the L1 penalty, which needs penalty="l1" or "l1-uniform"',
    ),
    _Dependent(
        "penalize_intercept",
        lambda est: est.penalty is not None,
        True,
        'applies the L1 penalty to the bias, which needs penalty="l1" or "l1-uniform"',
    ),
    _Dependent(
        "l1_form",
        lambda est: est.penalty is not None,
        True,
        'chooses the form of the L1 penalty, which needs penalty="l1"',
    ),
    _Dependent(
        "penalize_intercept",
        lambda est: est.fit_intercept,
        False,
        "penalizes the bias, and fit_intercept=False learns none",
    ),
    _Dependent(
        "process_noise",
        lambda est: getattr(est, "kernel", None) is None,
        True,
        "grows the covariance of a primal model, and a kernel learner keeps its covariance in "
        "the dual form",
    ),
    _Dependent(
        "n_components",
        lambda est: est.kernel_approximation is not None,
        False,
        'is the number of random Fourier features, which needs kernel_approximation="rff"',
    ),
    _Dependent(
        "random_state",
        lambda est: est.shuffle or getattr(est, "kernel_approximation", None) is not None,
        False,
        "seeds the shuffling of fit (and the random Fourier features), and shuffle=False "
        "keeps the stored order",
    ),
)


def at_default(value, default):
    """Whether `value` is the parameter's default: the default object itself, or a number equal
    to it (a bool only counts as a bool: True is not 1)."""
    if value is default:
        return True
    if isinstance(value, (bool, np.bool_)) != isinstance(default, bool):
        return False
    try:
        return bool(value == default)
    except (TypeError, ValueError):  # a value that does not compare (an array)
        return False


def check_ineffective(estimator):
    """Refuses, or warns about, hyper-parameters set (to anything but their default) in a
    configuration that makes no use of them; see `_INEFFECTIVE`. Runs wherever the
    hyper-parameters are validated, after the checks of their types (the kernel parameters
    first, then the passes' parameters, which the others depend on)."""
    _check_effects(estimator, [d for d in _INEFFECTIVE if d.kernels])
    check_pass_params(estimator)
    _check_effects(estimator, [d for d in _INEFFECTIVE if not d.kernels])


def _check_effects(estimator, dependents):
    defaults = init_defaults(type(estimator))
    for name, acts, refuse, why, kernels in dependents:
        # A rule's own parameter of the same name (ALMA's alpha) always acts.
        if name not in defaults or name in estimator._rule_params:
            continue
        value, default = getattr(estimator, name), defaults[name]
        if at_default(value, default) or acts(estimator):
            continue
        if kernels:
            choice = _kernel_choice(estimator)
            setting = (
                'kernel_approximation="rff"' if choice == "rff"
                else "no kernel" if choice is None
                else f"kernel={estimator.kernel!r}"
            )
            raise InvalidParameterError(
                f"{name}={value!r} has no effect with {setting}: it {why}; leave it at its "
                f"default ({default!r})"
            )
        if refuse:
            raise InvalidParameterError(
                f"{name}={value!r} would have no effect: it {why}. Set that too, or leave "
                f"{name} at its default ({default!r})."
            )
        warn_user(f"{name}={value!r} has no effect: it {why}.", IneffectiveParameterWarning)


# ------------------------------------------------------------------------- the estimators' side
def shared_parameters(cls) -> SecondOrderClassifierParams:
    """The parameters `cls` shares with the other learners of its kind and order (its
    `__init__`'s `**params`), in signature order, with their defaults."""
    shared = CLASSIFIER_PARAMETERS if cls._rule_kind == "classification" else REGRESSOR_PARAMETERS
    return {**SECOND_ORDER_PARAMETERS, **shared} if cls._second_order else {**shared}


def _shared_signature(cls):
    """The signature of `cls.__init__` (written `(self, *, <the rule's own>, **params)`) as
    scikit-learn's `get_params`, `help` and the docstrings read it: its own keyword-only
    parameters, then each shared one (`shared_parameters`) with its type and default."""
    parameters = inspect.signature(cls.__init__).parameters.values()
    own = [p for p in parameters if p.kind is not p.VAR_KEYWORD]
    types = {**SecondOrderParams.__annotations__, **ClassifierParams.__annotations__}
    if cls._rule_kind == "regression":
        types.update(SecondOrderRegressorParams.__annotations__)
    shared = [
        inspect.Parameter(
            name, inspect.Parameter.KEYWORD_ONLY, default=default,
            annotation=types[name].__forward_arg__,
        )
        for name, default in shared_parameters(cls).items()
    ]
    return inspect.Signature([*own, *shared], return_annotation="None")


def store_params(estimator, arguments):
    """Stores `__init__`'s keyword arguments (its `locals()`) as attributes, unvalidated
    (scikit-learn's rule: validation happens in `fit`): the rule's own, then the shared ones
    in `**params`, those not given at their defaults. An unknown name is a `TypeError`, as for
    any function."""
    own = {name: value for name, value in arguments.items() if name not in ("self", "params")}
    given = arguments.get("params", {})
    shared = shared_parameters(type(estimator))
    unknown = [name for name in given if name not in shared]
    if unknown:
        raise TypeError(
            f"{type(estimator).__name__}.__init__() got an unexpected keyword argument "
            f"{unknown[0]!r}"
        )
    for name, value in {**own, **shared, **given}.items():
        setattr(estimator, name, value)


@functools.cache
def _param_set(cls):
    return frozenset(cls._get_param_names())


class HyperParameters:
    """The hyper-parameter half of every estimator (a base of `cwrs._estimator.Estimator`): the
    rule's parameters and order from the table, scikit-learn's `get_params`/`set_params` and
    repr, and validation when the parameters changed.

    Subclasses set `_rule` (the rule's name in the table) and `_rule_kind`; `_rule_params`
    (the hyper-parameters the rule takes) and `_second_order` are taken from the table.
    """

    _rule: str
    _rule_kind: str  # "classification" or "regression", the rule table's kind
    _rule_params: tuple = ()
    _second_order = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "_rule" in vars(cls):
            entry = rule_entry(cls._rule_kind, cls._rule)
            cls._rule_params = tuple(param["name"] for param in entry["params"])
            cls._second_order = entry["second_order"]
        init = vars(cls).get("__init__")
        if init is not None and "params" in inspect.signature(init).parameters:
            init.__signature__ = _shared_signature(cls)

    @classmethod
    def _get_param_names(cls):
        signature = inspect.signature(cls.__init__)
        return sorted(p.name for p in signature.parameters.values() if p.name != "self")

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The hyper-parameters, as passed to `__init__`."""
        return {name: getattr(self, name) for name in self._get_param_names()}

    def set_params(self, **params: Any) -> Self:
        """Sets hyper-parameters; they take effect at the next `fit` (or a new `partial_fit`)."""
        valid = self._get_param_names()
        for name, value in params.items():
            if name not in valid:
                raise InvalidParameterError(
                    f"Invalid parameter {name!r} for estimator {type(self).__name__}. "
                    f"Valid parameters are: {valid!r}."
                )
            setattr(self, name, value)
        # Validated by the next partial_fit, which takes its checked path until then.
        forget_lean(self)
        self.__dict__.pop("_checked_params", None)
        return self

    def __repr__(self):
        defaults = init_defaults(type(self))
        changed = [
            f"{name}={value!r}"
            for name, value in self.get_params().items()
            if not (value is defaults.get(name) or _same(value, defaults.get(name)))
        ]
        return f"{type(self).__name__}({', '.join(changed)})"

    if not TYPE_CHECKING:  # hidden from mypy, which would then allow any attribute

        def __setattr__(self, name, value):
            object.__setattr__(self, name, value)
            if name in _param_set(type(self)):  # validated again by `_check_params_if_changed`
                self.__dict__.pop("_checked_params", None)

    def _check_params_if_changed(self):
        """Validates the hyper-parameters, as `fit` would, if any was assigned since the last
        validation (an assignment drops `_checked_params`, see `__setattr__`; O(1) otherwise):
        a `partial_fit` that continues a model refuses bad values too, though they take effect
        only at the next `fit`."""
        if "_checked_params" not in self.__dict__:
            self._check_params()
            self.__dict__["_checked_params"] = True

    def _check_params(self):
        """Every check `fit` makes of the hyper-parameters (defined by the estimators)."""
        raise NotImplementedError


def _same(a, b):
    try:
        return bool(a == b) and type(a) is type(b)
    except (TypeError, ValueError):
        return False
