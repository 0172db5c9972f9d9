"""Feature hashing for unbounded feature spaces: a text stream needs no vocabulary pass."""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any, Iterable, Literal, Optional

from . import _cwrs
from ._extras import install_hint
from ._params import HyperParameters, InvalidParameterError
from ._params import _check_bool as check_bool

if TYPE_CHECKING:
    from typing_extensions import Self


def check_n_features(n_features: Any) -> int:
    """`n_features` as an int, if it is an integer in [1, 2**31) (scikit-learn's range)."""
    if (
        isinstance(n_features, bool)
        or not isinstance(n_features, numbers.Integral)
        or not 1 <= int(n_features) < 2**31
    ):
        raise InvalidParameterError(
            f"n_features must be an integer in [1, 2**31), got {n_features!r}"
        )
    return int(n_features)


def sparse_module(owner: str) -> Any:
    """`scipy.sparse`, which the hashers' output needs; `owner` names the class in the error."""
    try:
        import scipy.sparse
    except ImportError:
        raise ImportError(f"cwrs.{owner} needs SciPy: {install_hint('sklearn')}") from None
    return scipy.sparse


def csr_rows(arrays: tuple[Any, Any, Any], n_features: int, owner: str, what: str) -> Any:
    """The CSR matrix of the native (data, indices, indptr) `arrays`, with `n_features`
    columns; no row at all is refused, as scikit-learn refuses it (`what` names the input)."""
    sparse = sparse_module(owner)
    data, indices, indptr = arrays
    if len(indptr) == 1:
        raise ValueError(f"Cannot vectorize empty sequence: {what} holds no sample.")
    return sparse.csr_matrix((data, indices, indptr), shape=(len(indptr) - 1, n_features))


def stateless_transformer_tags(**input_tags: bool) -> Any:
    """scikit-learn's tags of a stateless transformer (no fit needed) of the input `input_tags`
    say (the tags of scikit-learn's own hashers)."""
    from sklearn.utils import InputTags, Tags, TargetTags, TransformerTags

    return Tags(
        estimator_type=None,
        target_tags=TargetTags(required=False),
        transformer_tags=TransformerTags(),
        input_tags=InputTags(two_d_array=False, **input_tags),
        requires_fit=False,
    )


class FeatureHasher(HyperParameters):
    """The hashing trick (Weinberger, Dasgupta, Langford, Smola, Attenberg, ICML 2009): hashes
    each sample's features into `n_features` columns, returning a SciPy CSR matrix that every
    cwrs learner takes, with no vocabulary to build or store.

    Same columns, signs and values as scikit-learn's `FeatureHasher` (MurmurHash3, seed 0;
    column |h| mod n_features; with `alternate_sign` the value is multiplied by the sign of h,
    so that collisions cancel in expectation), read from the samples by the Rust core in one
    pass. Stateless: `fit` only checks the parameters; `get_params`/`set_params` and
    scikit-learn's `clone` work as for every cwrs estimator. Requires SciPy. For raw text, see
    `HashingVectorizer`.

    Parameters
    ----------
    n_features : int, default=2**20
        Number of columns, in [1, 2**31).
    input_type : {"dict", "pair", "string"}, default="dict"
        "dict": each sample is a mapping feature name -> value (a string value v of feature f
        becomes the feature "f=v" with value 1); "pair": an iterable of (name, value) pairs;
        "string": an iterable of names, each with value 1. Names are str (hashed as UTF-8) or
        bytes (hashed as they are), exactly as scikit-learn's `FeatureHasher` takes them;
        anything else raises `TypeError`, and zero values are left out.
    alternate_sign : bool, default=True
        Multiply each value by the sign of its hash, so that collisions cancel in expectation.
    """

    def __init__(
        self,
        n_features: int = 2**20,
        *,
        input_type: Literal["dict", "pair", "string"] = "dict",
        alternate_sign: bool = True,
    ) -> None:
        self.n_features = n_features
        self.input_type = input_type
        self.alternate_sign = alternate_sign

    def transform(self, raw_X: Iterable[Any]) -> Any:
        """The samples of `raw_X` (an iterable) as a CSR matrix of shape (n, n_features)."""
        n_features, input_type, alternate_sign = self._checked_params()
        sparse_module("FeatureHasher")
        if input_type == "string":
            # Values ±1: the core sums the duplicates (exact in any order), as for text.
            arrays = _cwrs.hash_token_lists(raw_X, n_features, alternate_sign, False, None)
            matrix = csr_rows(arrays, n_features, "FeatureHasher", "raw_X")
            matrix.has_canonical_format = True
            return matrix
        arrays = _cwrs.hash_samples(raw_X, input_type, n_features, alternate_sign)
        matrix = csr_rows(arrays, n_features, "FeatureHasher", "raw_X")
        # SciPy sums the duplicates, as for scikit-learn: the same order, the same float sums.
        matrix.sum_duplicates()
        return matrix

    def _checked_params(self) -> tuple[int, str, bool]:
        if self.input_type not in ("dict", "pair", "string"):
            raise InvalidParameterError(
                f'input_type must be "dict", "pair" or "string", got {self.input_type!r}'
            )
        alternate_sign = check_bool("alternate_sign", self.alternate_sign)
        return check_n_features(self.n_features), self.input_type, alternate_sign

    def __sklearn_tags__(self) -> Any:
        return stateless_transformer_tags(
            string=self.input_type == "string", dict=self.input_type == "dict"
        )

    def fit(self, X: Optional[Iterable[Any]] = None, y: Any = None) -> Self:
        """Checks the parameters and returns self (the hasher is stateless)."""
        self._checked_params()
        return self

    def fit_transform(self, raw_X: Iterable[Any], y: Any = None) -> Any:
        """The same as `transform` (the hasher is stateless)."""
        return self.transform(raw_X)
