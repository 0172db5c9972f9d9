"""Type stubs of the native module `cwrs._cwrs` (the PyO3 bindings of the Rust core, crates/cwrs-python/src/python/).

Checked against the built module by `python -m mypy.stubtest cwrs._cwrs` (`make typecheck`):
every name, parameter name, parameter kind and default here matches the runtime. The types
follow the Rust signatures: `usize`/`u64` are `int`, `f64` is `float`, `PyReadonlyArray1<T>` is
a 1-D NumPy array of T, `Option<T>` is `T | None`. PyO3 classes cannot be subclassed (no
`subclass` option), hence `@final`.
"""

import os
from typing import Any, Callable, Final, Iterable, Literal, TypedDict, final

import numpy as np
import numpy.typing as npt
from typing_extensions import Self, TypeAlias

__all__ = [
    "Model",
    "InvalidParameterError",
    "InvalidModelStateError",
    "margin_probabilities",
    "check_mergeable",
    "bandit_choose",
    "bandit_learn",
    "bandit_simulate",
    "standard_normals",
    "generator_state",
    "hash_documents",
    "analyze_documents",
    "hash_token_lists",
    "hash_samples",
    "TEXT_UNICODE_VERSION",
    "merge",
    "learn_svmlight",
    "SvmlightChunks",
    "svmlight_zero_based",
    "RULE_NAMES",
    "MAX_WEIGHT",
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
MAX_WEIGHT: float

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
    weighted: str
    weighted_exact: bool

def rule_table() -> list[_RuleEntry]: ...

def margin_probabilities(scores: _F64, variances: _F64) -> _F64: ...
def check_mergeable(config: _State) -> None: ...

# Contextual bandits (crates/cwrs-python/src/python/bandit.rs): the policy as (name, alpha,
# epsilon, n_probability_draws); the generator's state, 4 uint64 words, moves on in place.
_Policy: TypeAlias = tuple[str, float, float, int]
def bandit_choose(
    model: Model, args: _Policy, state: _U64, actions: _Matrix
) -> tuple[int, float]: ...
def bandit_simulate(
    model: Model, args: _Policy, state: _U64, contexts: _Matrix, labels: _I64, order: _I64
) -> tuple[_I64, _F64]: ...
def bandit_learn(model: Model, actions: _Matrix, index: int, reward: float) -> None: ...
def standard_normals(state: _U64, n: int) -> _F64: ...
def generator_state(seed: int) -> _U64: ...

# Feature hashing (crates/cwrs-python/src/python/text.rs): CSR arrays (data, indices, indptr).
_Csr: TypeAlias = tuple[_F64, _I32, _I64]
# The Unicode version of the text tokenizer's character tables.
TEXT_UNICODE_VERSION: str

def hash_documents(
    documents: Iterable[str | bytes],
    n_features: int,
    lowercase: bool,
    analyzer: str,
    ngram_range: tuple[int, int],
    alternate_sign: bool,
    binary: bool,
    norm: str | None,
) -> _Csr: ...
def analyze_documents(
    documents: Iterable[str | bytes], lowercase: bool, analyzer: str, ngram_range: tuple[int, int]
) -> list[list[str]]: ...
def hash_token_lists(
    token_lists: Iterable[Iterable[str | bytes]],
    n_features: int,
    alternate_sign: bool,
    binary: bool,
    norm: str | None,
) -> _Csr: ...
def hash_samples(
    samples: Iterable[Any], input_type: str, n_features: int, alternate_sign: bool
) -> _Csr: ...
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

def learn_svmlight(
    model: Model,
    path: str | os.PathLike[str],
    n_features: int,
    classes: list[float] | None = None,
    zero_based: bool = False,
    chunk_rows: int = 10_000,
) -> None: ...
def svmlight_zero_based(path: str | os.PathLike[str]) -> bool: ...
@final
class SvmlightChunks:
    def __new__(
        cls,
        path: str | os.PathLike[str],
        zero_based: bool | None,
        chunk_rows: int | None,
        optional_labels: bool = False,
    ) -> Self: ...
    zero_based: Final[bool]
    def __iter__(self) -> Self: ...
    def __next__(self) -> _Chunk: ...

# A binary kernel model's support rows as CSR arrays.
class _SupportVectors(TypedDict):
    version: int
    values: _F64
    indices: _U32
    indptr: _U64

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
    # New models (this one unchanged): over more features, each new one at the prior (mean 0,
    # variance unseen_variance); a binary model as the two-class one-vs-rest model; a
    # one-vs-rest model with one more class at the prior.
    def widened(self, n_features: int, unseen_variance: float) -> Model: ...
    def as_one_vs_rest(self) -> Model: ...
    def with_prior_class(self, prior_variance: float) -> Model: ...
    # The entries changed since base (picklable), and the model they describe from that base
    # (None: a fresh model of their configuration).
    def delta_since(self, base: Model) -> _State: ...
    @staticmethod
    def from_delta(delta: _State, base: Model | None = None) -> Model: ...
    # False (nothing learned) unless x is 1 to 64 C-contiguous float64 rows of the model's width
    # and y one label per row, each a key of targets (None: finite numbers, for a regressor);
    # check_batch() is called before more than one row is learned.
    def learn_lean(
        self,
        x: object,
        y: object,
        targets: dict[Any, float] | None,
        check_batch: Callable[[], object],
        /,
    ) -> bool: ...
    # The lean paths of prediction: None (the general path) unless x is rows as learn_lean takes
    # them and no value is NaN. decision_lean: scores (n,) or (n, n_classes); proba_lean: (n, 2)
    # or (n, n_classes); predict_lean: classes taken at each row's best class (class_rows[k] is
    # classes[k:k+1], copied for one row).
    def decision_lean(self, x: object, /) -> _F64 | None: ...
    def proba_lean(self, x: object, /) -> _F64 | None: ...
    def predict_lean(
        self, x: object, classes: npt.NDArray[Any], class_rows: tuple[npt.NDArray[Any], ...], /
    ) -> npt.NDArray[Any] | None: ...
    def partial_fit(
        self, x: _Matrix, y: _F64 | _I64, weights: _F64 | None = None, order: _I64 | None = None,
        balanced: bool = False,
    ) -> None: ...
    def partial_fit_scored(
        self, x: _Matrix, y: _F64 | _I64, weights: _F64 | None = None, order: _I64 | None = None,
        balanced: bool = False, variances: bool = False,
    ) -> tuple[_F64, _F64 | None]: ...
    def fit_sharded(
        self,
        x: _Matrix,
        y: _F64 | _I64,
        orders: Iterable[_I64 | None],
        n_jobs: int,
        weights: _F64 | None = None,
        balanced: bool = False,
    ) -> None: ...
    def decision_function(self, x: _Matrix) -> _F64: ...
    def variance(self, x: _Matrix) -> _F64: ...
    def score_covariance(self, x: _Matrix) -> _F64: ...
    def probabilities(self, x: _Matrix) -> _F64: ...
    def posterior_probabilities(self, x: _Matrix) -> _F64: ...
    def predictive_variance(self, x: _Matrix) -> _F64: ...
    # Read-only attributes (`Final`: assigning one is an error, as at run time).
    kind: Final[str]
    config: Final[_State]
    n_classes: Final[int | None]
    covariance_kind: Final[str | None]
    mean: Final[_F64]
    covariance: Final[_F64]
    dense_covariance: Final[_F64]
    n_updates: Final[int]
    n_mistakes: Final[int | None]
    n_support: Final[int | _U64]
    support_vectors: Final[_SupportVectors]
    dual_coef: Final[_F64]
    noise_since_reset: Final[float | None]
    noise_variance: Final[float | None]
    prior_variance: Final[float | None]
    class_counts: Final[_F64]  # (n_classes, 1) for a multiclass model, as every per-class array
