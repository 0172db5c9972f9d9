"""Type stubs of the native module (the PyO3 bindings of the Rust core)."""

from typing import Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

Float64Array = npt.NDArray[np.float64]
CsrArgs = Union[
    Tuple[Float64Array, npt.NDArray[np.int32], npt.NDArray[np.int32], int],
    Tuple[Float64Array, npt.NDArray[np.int64], npt.NDArray[np.int64], int],
]
MatrixArg = Union[Float64Array, CsrArgs]
State = Tuple[str, list, str, int, bool, Float64Array, Float64Array, int, int]

RULE_NAMES: list[str]
L1Spec = Optional[tuple[str, float, bool]]

def normal_quantile(p: float) -> float: ...
def hash_tokens(
    tokens: list[str], n_features: int
) -> tuple[npt.NDArray[np.int64], Float64Array]: ...

def read_svmlight(
    path: str, zero_based: Optional[bool], n_features: Optional[int] = None
) -> tuple[
    Float64Array,
    Float64Array,
    npt.NDArray[np.int64],
    npt.NDArray[np.int64],
    Optional[npt.NDArray[np.int64]],
    int,
]: ...

class SvmlightChunks:
    def __init__(self, path: str, zero_based: bool, chunk_rows: int) -> None: ...
    def __iter__(self) -> SvmlightChunks: ...
    def __next__(
        self,
    ) -> tuple[
        Float64Array, Float64Array, npt.NDArray[np.int64], npt.NDArray[np.int64], int
    ]: ...

class BinaryModel:
    def __init__(
        self,
        rule: str,
        params: list[tuple[str, float]],
        covariance: str,
        n_features: int,
        fit_intercept: bool,
        a: float,
        l1: L1Spec = None,
    ) -> None: ...
    @staticmethod
    def from_state(
        rule: str,
        params: list[tuple[str, float]],
        covariance: str,
        n_features: int,
        fit_intercept: bool,
        mean: Float64Array,
        covariance_values: Float64Array,
        n_updates: int,
        n_mistakes: int,
        l1: L1Spec,
        l1_state: Optional[tuple[float, Float64Array]],
    ) -> BinaryModel: ...
    def state(self) -> State: ...
    def learn_one(self, x: Float64Array, y: float) -> bool: ...
    def partial_fit(
        self,
        x: MatrixArg,
        y: Float64Array,
        repeats: Optional[npt.NDArray[np.uint32]] = None,
        order: Optional[npt.NDArray[np.int64]] = None,
    ) -> None: ...
    def decision_function(self, x: MatrixArg) -> Float64Array: ...
    def variance(self, x: MatrixArg) -> Float64Array: ...
    def positive_probability(self, x: MatrixArg) -> Float64Array: ...
    @property
    def mean(self) -> Float64Array: ...
    @property
    def covariance(self) -> Float64Array: ...
    @property
    def covariance_kind(self) -> str: ...
    @property
    def n_updates(self) -> int: ...
    @property
    def n_mistakes(self) -> int: ...

class MulticlassModel:
    def __init__(
        self,
        rule: str,
        params: list[tuple[str, float]],
        strategy: str,
        covariance: str,
        n_classes: int,
        n_features: int,
        fit_intercept: bool,
        a: float,
        l1: L1Spec = None,
    ) -> None: ...
    @staticmethod
    def from_state(
        rule: str,
        params: list[tuple[str, float]],
        strategy: str,
        covariance: str,
        n_classes: int,
        n_features: int,
        fit_intercept: bool,
        means: Float64Array,
        covariances: Float64Array,
        counters: tuple[int, int],
        l1: L1Spec,
        l1_states: Optional[list[tuple[float, Float64Array]]],
    ) -> MulticlassModel: ...
    def state(self) -> tuple: ...
    def learn_one(self, x: Float64Array, label: int) -> bool: ...
    def partial_fit(
        self,
        x: MatrixArg,
        labels: npt.NDArray[np.int64],
        repeats: Optional[npt.NDArray[np.uint32]] = None,
        order: Optional[npt.NDArray[np.int64]] = None,
    ) -> None: ...
    def decision_function(self, x: MatrixArg) -> Float64Array: ...
    def variance(self, x: MatrixArg) -> Float64Array: ...
    def probabilities(self, x: MatrixArg) -> Float64Array: ...
    @property
    def means(self) -> Float64Array: ...
    @property
    def covariances(self) -> Float64Array: ...
    @property
    def covariance_kind(self) -> str: ...
    @property
    def n_updates(self) -> int: ...
    @property
    def n_mistakes(self) -> int: ...

class RegressionModel:
    def __init__(
        self,
        rule: str,
        params: list[tuple[str, float]],
        covariance: str,
        n_features: int,
        fit_intercept: bool,
        a: float,
        l1: L1Spec = None,
    ) -> None: ...
    @staticmethod
    def from_state(
        rule: str,
        params: list[tuple[str, float]],
        covariance: str,
        n_features: int,
        fit_intercept: bool,
        mean: Float64Array,
        covariance_values: Float64Array,
        n_updates: int,
        l1: L1Spec,
        l1_state: Optional[tuple[float, Float64Array]],
    ) -> RegressionModel: ...
    def state(self) -> tuple: ...
    def learn_one(self, x: Float64Array, y: float) -> bool: ...
    def partial_fit(
        self,
        x: MatrixArg,
        y: Float64Array,
        repeats: Optional[npt.NDArray[np.uint32]] = None,
        order: Optional[npt.NDArray[np.int64]] = None,
    ) -> None: ...
    def predict(self, x: MatrixArg) -> Float64Array: ...
    def variance(self, x: MatrixArg) -> Float64Array: ...
    @property
    def mean(self) -> Float64Array: ...
    @property
    def covariance(self) -> Float64Array: ...
    @property
    def covariance_kind(self) -> str: ...
    @property
    def n_updates(self) -> int: ...

class KernelModel:
    def __init__(
        self,
        rule: str,
        params: list[tuple[str, float]],
        kernel: Optional[str],
        kernel_params: tuple[float, int, float],
        n_features: int,
        fit_intercept: bool,
        a: float,
        budget: Optional[int],
    ) -> None: ...
    @staticmethod
    def from_state(
        rule: str,
        params: list[tuple[str, float]],
        kernel: Optional[str],
        kernel_params: tuple[float, int, float],
        shape: tuple[int, bool, float, Optional[int]],
        gaussian: tuple[tuple, tuple],
        counters: tuple[int, int],
    ) -> KernelModel: ...
    def state(self) -> tuple: ...
    def partial_fit(
        self,
        x: MatrixArg,
        y: Float64Array,
        repeats: Optional[npt.NDArray[np.uint32]] = None,
        order: Optional[npt.NDArray[np.int64]] = None,
    ) -> None: ...
    def learn_precomputed(self, x: MatrixArg, k: Float64Array, kappa: float, y: float) -> bool: ...
    def check_input(self, x: MatrixArg) -> None: ...
    def decision_function(self, x: MatrixArg) -> Float64Array: ...
    def variance(self, x: MatrixArg) -> Float64Array: ...
    def positive_probability(self, x: MatrixArg) -> Float64Array: ...
    def moments_precomputed(
        self, k: Float64Array, kappas: Float64Array
    ) -> tuple[Float64Array, Float64Array]: ...
    def support_vectors(
        self,
    ) -> tuple[Float64Array, npt.NDArray[np.uint32], npt.NDArray[np.uint64]]: ...
    @property
    def dual_coef(self) -> Float64Array: ...
    @property
    def n_support(self) -> int: ...
    @property
    def n_updates(self) -> int: ...
    @property
    def n_mistakes(self) -> int: ...

def margin_probabilities(scores: Float64Array, variances: Float64Array) -> Float64Array: ...

class MulticlassKernelModel:
    def __init__(
        self,
        rule: str,
        params: list[tuple[str, float]],
        strategy: str,
        n_classes: int,
        kernel: str,
        kernel_params: tuple[float, int, float],
        n_features: int,
        fit_intercept: bool,
        a: float,
        budget: Optional[int],
    ) -> None: ...
    @staticmethod
    def from_state(
        rule: str,
        params: list[tuple[str, float]],
        strategy: str,
        kernel: str,
        kernel_params: tuple[float, int, float],
        shape: tuple[int, bool, float, Optional[int]],
        classes: list[tuple[tuple, tuple]],
        counters: tuple[int, int],
    ) -> MulticlassKernelModel: ...
    def state(self) -> tuple: ...
    def partial_fit(
        self,
        x: MatrixArg,
        labels: npt.NDArray[np.int64],
        repeats: Optional[npt.NDArray[np.uint32]] = None,
        order: Optional[npt.NDArray[np.int64]] = None,
    ) -> None: ...
    def decision_function(self, x: MatrixArg) -> Float64Array: ...
    def variance(self, x: MatrixArg) -> Float64Array: ...
    def probabilities(self, x: MatrixArg) -> Float64Array: ...
    @property
    def n_support(self) -> npt.NDArray[np.uint64]: ...
    @property
    def n_updates(self) -> int: ...
    @property
    def n_mistakes(self) -> int: ...
