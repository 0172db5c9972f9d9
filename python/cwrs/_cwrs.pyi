"""Type stubs of the native module `cwrs._cwrs` (the PyO3 bindings of the Rust core, src/python/).

Checked against the built module by `python -m mypy.stubtest cwrs._cwrs` (`make typecheck`):
every name, parameter name, parameter kind and default here matches the runtime. The types
follow the Rust signatures: `usize`/`u64` are `int`, `f64` is `float`, `PyReadonlyArray1<T>` is
a 1-D NumPy array of T, `Option<T>` is `T | None`. PyO3 classes cannot be subclassed (no
`subclass` option), hence `@final`.
"""

import os
from typing import Any, Callable, Iterable, Literal, TypedDict, final

import numpy as np
import numpy.typing as npt
from typing_extensions import Self, TypeAlias

__all__ = [
    "Model",
    "InvalidParameterError",
    "InvalidModelStateError",
    "normal_quantile",
    "margin_probabilities",
    "hash_tokens",
    "merge",
    "learn_svmlight",
    "SvmlightChunks",
    "read_svmlight",
    "svmlight_zero_based",
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
# A model's configuration or state by name (docs/model-format.md): a version, strings, bools,
# numbers, None, 1-D arrays, the rule's hyper-parameters as a dict, and per-class states.
_State: TypeAlias = dict[str, Any]

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
def merge(
    models: list[Model], method: str, base: Model | None = None, weights: list[float] | None = None
) -> Model: ...
# A LIBSVM file or chunk by name: labels, the CSR arrays values, indices and indptr, qids (None
# when no row has one), n_features and lines (the 1-based line number of each row).
class _Chunk(TypedDict):
    version: int
    labels: _F64
    values: _F64
    indices: _I64
    indptr: _I64
    qids: _I64 | None
    n_features: int
    lines: _U64

def read_svmlight(
    path: str | os.PathLike[str], zero_based: bool | None, n_features: int | None = None
) -> _Chunk: ...
def svmlight_zero_based(path: str | os.PathLike[str], zero_based: bool | None) -> bool: ...
def learn_svmlight(
    model: Model,
    path: str | os.PathLike[str],
    n_features: int,
    classes: list[float] | None = None,
    zero_based: bool = False,
    chunk_rows: int = 10_000,
) -> None: ...
@final
class SvmlightChunks:
    def __new__(
        cls, path: str | os.PathLike[str], zero_based: bool | None, chunk_rows: int
    ) -> Self: ...
    @property
    def zero_based(self) -> bool: ...
    def __iter__(self) -> Self: ...
    def __next__(self) -> _Chunk: ...

class InvalidParameterError(ValueError): ...
class InvalidModelStateError(ValueError): ...

@final
class Model:
    # kernel: a cwrs._kernel.CallableKernel (a custom kernel), or None.
    def __new__(cls, config: _State, kernel: Any | None = None) -> Self: ...
    @staticmethod
    def from_state(state: _State, kernel: Any | None = None) -> Model: ...
    def state(self) -> _State: ...
    def copy(self) -> Model: ...
    # False (nothing learned) unless x is 1 to 64 C-contiguous float64 rows of the model's width
    # and y one label per row, each a key of targets (None: finite numbers, for a regressor);
    # check_batch() is called before more than one row is learned.
    def learn_lean(
        self,
        x: object,
        y: object,
        targets: dict[Any, float] | None,
        check_batch: Callable[[], object],
    ) -> bool: ...
    def partial_fit(
        self, x: _Matrix, y: _F64 | _I64, repeats: _U32 | None = None, order: _I64 | None = None
    ) -> None: ...
    def fit_sharded(
        self,
        x: _Matrix,
        y: _F64 | _I64,
        orders: Iterable[_I64 | None],
        n_jobs: int,
        repeats: _U32 | None = None,
    ) -> None: ...
    def decision_function(self, x: _Matrix) -> _F64: ...
    def variance(self, x: _Matrix) -> _F64: ...
    def probabilities(self, x: _Matrix) -> _F64: ...
    @property
    def kind(self) -> str: ...
    @property
    def config(self) -> _State: ...
    @property
    def n_classes(self) -> int | None: ...
    @property
    def covariance_kind(self) -> str | None: ...
    @property
    def mean(self) -> _F64: ...
    @property
    def covariance(self) -> _F64: ...
    @property
    def dense_covariance(self) -> _F64: ...
    @property
    def n_updates(self) -> int: ...
    @property
    def n_mistakes(self) -> int | None: ...
    @property
    def n_support(self) -> int | _U64: ...
    def support_vectors(self) -> tuple[_F64, _U32, _U64]: ...
    @property
    def dual_coef(self) -> _F64: ...
