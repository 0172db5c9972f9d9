"""Type aliases of the public API (for annotations only: nothing here runs in the hot path).

Written with `typing.Union`/`Optional` rather than `X | Y` so that they evaluate on Python 3.9.
"""

from __future__ import annotations

from typing import Any, Callable, Literal, Mapping, Optional, Sequence, TypedDict, Union

import numpy as np
import numpy.typing as npt

#: X: a dense array-like of shape (n_samples, n_features), any real dtype, or a SciPy CSR/CSC
#: matrix (int32 or int64 indices). SciPy has no type information, so sparse matrices type as Any.
MatrixLike = npt.ArrayLike
#: y: class labels (all numbers, all strings or all bytes; one per row) or regression targets.
ArrayLike = npt.ArrayLike
#: Per-row weights (non-negative integers: each row is learned that many times), or one for all.
SampleWeight = Union[npt.NDArray[Any], Sequence[float], float, None]
#: The seed of the shuffling and of the random features.
RandomState = Union[int, np.random.RandomState, np.random.Generator, None]
Covariance = Literal["diag", "full", "lowrank"]
MultiClass = Literal["max-score", "ovr"]
#: A built-in kernel, or a callable k(X, Z) returning the (len(X), len(Z)) matrix of values.
Kernel = Union[Literal["linear", "rbf", "poly"], Callable[[Any, Any], Any], None]
KernelApproximation = Optional[Literal["rff"]]
Penalty = Optional[Literal["l1", "l1-uniform"]]
#: Process noise q ≥ 0 added to the covariance every round, or "auto" (docs/design.md §10).
ProcessNoise = Union[float, Literal["auto"]]
ClassWeight = Union[None, Literal["balanced"], Mapping[Any, float]]
Float64Array = npt.NDArray[np.float64]


# The keyword-only parameters the estimators share after their rule's own, as the `**params` of
# their `__init__`s (`Unpack[...]`: mypy and IDEs check them by name and type). Their defaults
# and their order in the signatures scikit-learn and `help` read are in `cwrs._params`
# (CLASSIFIER_PARAMETERS, ...).
class RegressorParams(TypedDict, total=False):
    fit_intercept: bool
    n_iter: int
    shuffle: bool
    random_state: RandomState
    n_jobs: int
    average: Union[bool, int]


class ClassifierParams(RegressorParams, total=False):
    multi_class: MultiClass
    kernel: Kernel
    gamma: Optional[float]
    degree: int
    coef0: float
    budget: Optional[int]
    kernel_approximation: KernelApproximation
    n_components: int
    class_weight: ClassWeight


#: The prior variance of AROW regression's weights, or "auto": learned from the stream.
PriorVariance = Union[float, Literal["auto"]]


#: What second-order learners add besides the prior: the covariance form, L1, process noise.
class SecondOrderForm(TypedDict, total=False):
    covariance: Covariance
    rank: int
    penalty: Penalty
    alpha: float
    penalize_intercept: bool
    process_noise: ProcessNoise


#: What second-order learners add: the prior variance, the covariance form, L1, process noise.
class SecondOrderParams(SecondOrderForm, total=False):
    a: float


class SecondOrderClassifierParams(SecondOrderParams, ClassifierParams, total=False):
    pass


class SecondOrderRegressorParams(SecondOrderForm, RegressorParams, total=False):
    a: PriorVariance
