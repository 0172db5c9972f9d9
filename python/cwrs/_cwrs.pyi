"""Type stubs of the native module `cwrs._cwrs` (the PyO3 bindings of the Rust core, src/python/).

Checked against the built module by `python -m mypy.stubtest cwrs._cwrs` (`make typecheck`):
every name, parameter name, parameter kind and default here matches the runtime. The types
follow the Rust signatures: `usize`/`u64` are `int`, `f64` is `float`, `PyReadonlyArray1<T>` is
a 1-D NumPy array of T, `Option<T>` is `T | None`. PyO3 classes cannot be subclassed (no
`subclass` option), hence `@final`.
"""

import os
from typing import Literal, TypedDict, final

import numpy as np
import numpy.typing as npt
from typing_extensions import Self, TypeAlias

__all__ = [
    "BinaryModel",
    "MulticlassModel",
    "RegressionModel",
    "KernelModel",
    "MulticlassKernelModel",
    "normal_quantile",
    "margin_probabilities",
    "hash_tokens",
    "SvmlightChunks",
    "read_svmlight",
    "RULE_NAMES",
    "rule_table",
]

_F64: TypeAlias = npt.NDArray[np.float64]
_I32: TypeAlias = npt.NDArray[np.int32]
_I64: TypeAlias = npt.NDArray[np.int64]
_U32: TypeAlias = npt.NDArray[np.uint32]
_U64: TypeAlias = npt.NDArray[np.uint64]
# A batch of rows: a C-contiguous float64 (n, d) array, or the arrays of a CSR matrix
# (data, indices, indptr, n_cols) with one integer type (int32 or int64) for indices and indptr.
_Matrix: TypeAlias = _F64 | tuple[_F64, _I32, _I32, int] | tuple[_F64, _I64, _I64, int]
# The hyper-parameters of a rule, by name: [("C", 1.0), ("eta", 0.75)].
_Params: TypeAlias = list[tuple[str, float]]
# An L1 penalty: (penalty name, alpha, penalize_intercept).
_L1Spec: TypeAlias = tuple[str, float, bool] | None
# A lazy L1 state: (accumulated penalty H, H at each coordinate's last update).
_L1State: TypeAlias = tuple[float, _F64]
# Kernel parameters (gamma, degree, coef0) and shape (n_features, fit_intercept, a, budget).
_KernelParams: TypeAlias = tuple[float, int, float]
_KernelShape: TypeAlias = tuple[int, bool, float, int | None]
# One dual Gaussian: the support rows as CSR (data, indices, indptr), then (ν, Π, Gram).
_DualGaussian: TypeAlias = tuple[tuple[_F64, _U32, _U64], tuple[_F64, _F64, _F64]]

RULE_NAMES: list[str]

class _RuleParam(TypedDict):
    name: str
    default: float
    low: float
    high: float
    low_open: bool
    high_open: bool
    requirement: str
    doc: str

class _RuleEntry(TypedDict):
    name: str
    kind: Literal["classification", "regression"]
    second_order: bool
    params: list[_RuleParam]
    title: str
    reference: str
    summary: str

def rule_table() -> list[_RuleEntry]: ...

def normal_quantile(p: float) -> float: ...
def margin_probabilities(scores: _F64, variances: _F64) -> _F64: ...
def hash_tokens(tokens: list[bytes], n_features: int) -> tuple[_I64, _F64]: ...
def read_svmlight(
    path: str | os.PathLike[str], zero_based: bool | None, n_features: int | None = None
) -> tuple[_F64, _F64, _I64, _I64, _I64 | None, int]: ...
@final
class SvmlightChunks:
    def __new__(
        cls, path: str | os.PathLike[str], zero_based: bool | None, chunk_rows: int
    ) -> Self: ...
    @property
    def zero_based(self) -> bool: ...
    def __iter__(self) -> Self: ...
    def __next__(self) -> tuple[_F64, _F64, _I64, _I64, int, _U64]: ...

@final
class BinaryModel:
    def __new__(
        cls,
        rule: str,
        params: _Params,
        covariance: str,
        n_features: int,
        fit_intercept: bool,
        a: float,
        l1: _L1Spec = None,
    ) -> Self: ...
    @staticmethod
    def from_state(
        rule: str,
        params: _Params,
        covariance: str,
        n_features: int,
        fit_intercept: bool,
        mean: _F64,
        covariance_values: _F64,
        n_updates: int,
        n_mistakes: int,
        l1: _L1Spec,
        l1_state: _L1State | None,
    ) -> BinaryModel: ...
    def state(
        self,
    ) -> tuple[
        str, _Params, str, int, bool, _F64, _F64, int, int, _L1Spec, _L1State | None
    ]: ...
    def learn_one(self, x: _F64, y: float) -> bool: ...
    def partial_fit(
        self, x: _Matrix, y: _F64, repeats: _U32 | None = None, order: _I64 | None = None
    ) -> None: ...
    def decision_function(self, x: _Matrix) -> _F64: ...
    def variance(self, x: _Matrix) -> _F64: ...
    def positive_probability(self, x: _Matrix) -> _F64: ...
    @property
    def mean(self) -> _F64: ...
    @property
    def covariance(self) -> _F64: ...
    @property
    def covariance_kind(self) -> str: ...
    @property
    def n_updates(self) -> int: ...
    @property
    def n_mistakes(self) -> int: ...

@final
class MulticlassModel:
    def __new__(
        cls,
        rule: str,
        params: _Params,
        strategy: str,
        covariance: str,
        n_classes: int,
        n_features: int,
        fit_intercept: bool,
        a: float,
        l1: _L1Spec = None,
    ) -> Self: ...
    @staticmethod
    def from_state(
        rule: str,
        params: _Params,
        strategy: str,
        covariance: str,
        n_classes: int,
        n_features: int,
        fit_intercept: bool,
        means: _F64,
        covariances: _F64,
        counters: tuple[int, int],
        l1: _L1Spec,
        l1_states: list[_L1State] | None,
    ) -> MulticlassModel: ...
    def state(
        self,
    ) -> tuple[
        str,
        _Params,
        str,
        str,
        int,
        int,
        bool,
        _F64,
        _F64,
        tuple[int, int],
        _L1Spec,
        list[_L1State] | None,
    ]: ...
    def learn_one(self, x: _F64, label: int) -> bool: ...
    def partial_fit(
        self, x: _Matrix, labels: _I64, repeats: _U32 | None = None, order: _I64 | None = None
    ) -> None: ...
    def decision_function(self, x: _Matrix) -> _F64: ...
    def variance(self, x: _Matrix) -> _F64: ...
    def probabilities(self, x: _Matrix) -> _F64: ...
    @property
    def means(self) -> _F64: ...
    @property
    def covariances(self) -> _F64: ...
    @property
    def covariance_kind(self) -> str: ...
    @property
    def n_updates(self) -> int: ...
    @property
    def n_mistakes(self) -> int: ...

@final
class RegressionModel:
    def __new__(
        cls,
        rule: str,
        params: _Params,
        covariance: str,
        n_features: int,
        fit_intercept: bool,
        a: float,
        l1: _L1Spec = None,
    ) -> Self: ...
    @staticmethod
    def from_state(
        rule: str,
        params: _Params,
        covariance: str,
        n_features: int,
        fit_intercept: bool,
        mean: _F64,
        covariance_values: _F64,
        n_updates: int,
        l1: _L1Spec,
        l1_state: _L1State | None,
    ) -> RegressionModel: ...
    def state(
        self,
    ) -> tuple[str, _Params, str, int, bool, _F64, _F64, int, _L1Spec, _L1State | None]: ...
    def learn_one(self, x: _F64, y: float) -> bool: ...
    def partial_fit(
        self, x: _Matrix, y: _F64, repeats: _U32 | None = None, order: _I64 | None = None
    ) -> None: ...
    def predict(self, x: _Matrix) -> _F64: ...
    def variance(self, x: _Matrix) -> _F64: ...
    @property
    def mean(self) -> _F64: ...
    @property
    def params(self) -> list[tuple[str, float]]: ...
    @property
    def covariance(self) -> _F64: ...
    @property
    def covariance_kind(self) -> str: ...
    @property
    def n_updates(self) -> int: ...

@final
class KernelModel:
    def __new__(
        cls,
        rule: str,
        params: _Params,
        kernel: str | None,
        kernel_params: _KernelParams,
        n_features: int,
        fit_intercept: bool,
        a: float,
        budget: int | None,
    ) -> Self: ...
    @staticmethod
    def from_state(
        rule: str,
        params: _Params,
        kernel: str | None,
        kernel_params: _KernelParams,
        shape: _KernelShape,
        gaussian: _DualGaussian,
        counters: tuple[int, int],
    ) -> KernelModel: ...
    def state(
        self,
    ) -> tuple[
        str, _Params, str | None, _KernelParams, _KernelShape, _DualGaussian, tuple[int, int]
    ]: ...
    def partial_fit(
        self, x: _Matrix, y: _F64, repeats: _U32 | None = None, order: _I64 | None = None
    ) -> None: ...
    def learn_precomputed(self, x: _Matrix, k: _F64, kappa: float, y: float) -> bool: ...
    def check_input(self, x: _Matrix) -> None: ...
    def decision_function(self, x: _Matrix) -> _F64: ...
    def variance(self, x: _Matrix) -> _F64: ...
    def positive_probability(self, x: _Matrix) -> _F64: ...
    def moments_precomputed(self, k: _F64, kappas: _F64) -> tuple[_F64, _F64]: ...
    def support_vectors(self) -> tuple[_F64, _U32, _U64]: ...
    @property
    def dual_coef(self) -> _F64: ...
    @property
    def n_support(self) -> int: ...
    @property
    def kernel_form(self) -> tuple[str | None, bool]: ...
    @property
    def n_updates(self) -> int: ...
    @property
    def n_mistakes(self) -> int: ...

@final
class MulticlassKernelModel:
    def __new__(
        cls,
        rule: str,
        params: _Params,
        strategy: str,
        n_classes: int,
        kernel: str,
        kernel_params: _KernelParams,
        n_features: int,
        fit_intercept: bool,
        a: float,
        budget: int | None,
    ) -> Self: ...
    @staticmethod
    def from_state(
        rule: str,
        params: _Params,
        strategy: str,
        kernel: str,
        kernel_params: _KernelParams,
        shape: _KernelShape,
        classes: list[_DualGaussian],
        counters: tuple[int, int],
    ) -> MulticlassKernelModel: ...
    def state(
        self,
    ) -> tuple[
        str,
        _Params,
        str,
        str,
        _KernelParams,
        _KernelShape,
        list[_DualGaussian],
        tuple[int, int],
    ]: ...
    def partial_fit(
        self, x: _Matrix, labels: _I64, repeats: _U32 | None = None, order: _I64 | None = None
    ) -> None: ...
    def decision_function(self, x: _Matrix) -> _F64: ...
    def variance(self, x: _Matrix) -> _F64: ...
    def probabilities(self, x: _Matrix) -> _F64: ...
    @property
    def n_support(self) -> _U64: ...
    @property
    def n_updates(self) -> int: ...
    @property
    def n_mistakes(self) -> int: ...
