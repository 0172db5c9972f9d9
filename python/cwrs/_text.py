"""Raw text to hashed rows: scikit-learn's HashingVectorizer, with its work in the Rust core."""

from __future__ import annotations

import numbers
import re
import unicodedata
from typing import TYPE_CHECKING, Any, Callable, Iterable, Literal, Optional, Union

from . import _cwrs
from ._hashing import (
    check_bool,
    check_n_features,
    csr_rows,
    sparse_module,
    stateless_transformer_tags,
)
from ._params import HyperParameters, InvalidParameterError

if TYPE_CHECKING:
    from typing_extensions import Self

DEFAULT_TOKEN_PATTERN = r"(?u)\b\w\w+\b"
ANALYZERS = ("word", "char", "char_wb")
NORMS = ("l1", "l2", None)


class HashingVectorizer(HyperParameters):
    """Documents (str, or bytes in UTF-8) to a SciPy CSR matrix of hashed token counts (the
    hashing trick, Weinberger et al., ICML 2009): no vocabulary to build or store, so a text
    stream goes straight into `partial_fit`.

    The same parameters, defaults and output as scikit-learn's `HashingVectorizer` (the values
    identical), tokenized and hashed in the Rust core with the GIL released: the documents are
    lowercased as `str.lower` does, cut into words (maximal runs of at least two characters
    matching Python's `re` `\\w`, the default `token_pattern`) or character n-grams, each token
    hashed with MurmurHash3 into a column with a sign, duplicates summed, then made binary and
    normalized as asked. A `token_pattern` other than the default, or a callable `analyzer`,
    tokenizes with Python (slower: Python's `re`), then hashes in Rust. Stateless: `fit` only
    checks the parameters. Requires SciPy.

    Parameters
    ----------
    input : {"content"}, default="content"
        The documents themselves (str, or bytes decoded as strict UTF-8).
    lowercase : bool, default=True
        Lowercase the documents (`str.lower`) before tokenizing them.
    token_pattern : str, default=r"(?u)\\b\\w\\w+\\b"
        The regular expression of a word (`analyzer="word"`); with one group, the group is the
        token.
    ngram_range : (int, int), default=(1, 1)
        The smallest and largest n of the n-grams (of words, joined by a space, or of
        characters), 1 <= min_n <= max_n.
    analyzer : {"word", "char", "char_wb"} or callable, default="word"
        Words; character n-grams; character n-grams inside words padded with spaces; or a
        function from a document (decoded) to its tokens.
    n_features : int, default=2**20
        Number of columns, in [1, 2**31).
    binary : bool, default=False
        Every stored value of a row 1 (before the norm).
    norm : {"l1", "l2"} or None, default="l2"
        Each row divided by its norm (rows of norm 0 kept as they are).
    alternate_sign : bool, default=True
        A token counts the sign of its hash instead of 1, so that collisions cancel in
        expectation.
    """

    def __init__(
        self,
        *,
        input: Literal["content"] = "content",
        lowercase: bool = True,
        token_pattern: str = DEFAULT_TOKEN_PATTERN,
        ngram_range: tuple[int, int] = (1, 1),
        analyzer: Union[Literal["word", "char", "char_wb"], Callable[[str], Any]] = "word",
        n_features: int = 2**20,
        binary: bool = False,
        norm: Optional[Literal["l1", "l2"]] = "l2",
        alternate_sign: bool = True,
    ) -> None:
        self.input = input
        self.lowercase = lowercase
        self.token_pattern = token_pattern
        self.ngram_range = ngram_range
        self.analyzer = analyzer
        self.n_features = n_features
        self.binary = binary
        self.norm = norm
        self.alternate_sign = alternate_sign

    def transform(self, X: Iterable[Union[str, bytes]]) -> Any:
        """The documents of `X` (an iterable) as a CSR matrix of shape (n, n_features)."""
        params = self._checked_params(X)
        sparse_module("HashingVectorizer")
        n_features = params["n_features"]
        rows = (params["alternate_sign"], params["binary"], self.norm)
        tokens = self._python_analyzer(params)
        if tokens is None:
            arrays = _cwrs.hash_documents(X, n_features, *self._analysis(params), *rows)
        else:
            arrays = _cwrs.hash_token_lists((tokens(doc) for doc in X), n_features, *rows)
        matrix = csr_rows(arrays, n_features, "HashingVectorizer", "X")
        matrix.has_canonical_format = True  # sorted columns, each once
        return matrix

    def __sklearn_tags__(self) -> Any:
        return stateless_transformer_tags(string=True)

    def fit(self, X: Optional[Iterable[Union[str, bytes]]] = None, y: Any = None) -> Self:
        """Checks the parameters and returns self (the vectorizer is stateless)."""
        self._checked_params(X)
        return self

    def partial_fit(self, X: Optional[Iterable[Union[str, bytes]]] = None, y: Any = None) -> Self:
        """The same as `fit` (the vectorizer is stateless)."""
        return self.fit(X, y)

    def fit_transform(self, X: Iterable[Union[str, bytes]], y: Any = None) -> Any:
        """The same as `transform` (the vectorizer is stateless)."""
        return self.fit(X, y).transform(X)

    def build_analyzer(self) -> Callable[[Union[str, bytes]], list[str]]:
        """The function from a document to its tokens, the strings `transform` hashes."""
        params = self._checked_params(None)
        tokens = self._python_analyzer(params)
        if tokens is not None:
            return tokens
        analysis = self._analysis(params)
        return lambda doc: _cwrs.analyze_documents([doc], *analysis)[0]

    def _analysis(self, params: dict[str, Any]) -> tuple[bool, str, tuple[int, int]]:
        """The core's analysis parameters (lowercase, analyzer, ngram_range), for an analyzer
        named by a string."""
        assert isinstance(self.analyzer, str)
        return params["lowercase"], self.analyzer, params["ngram_range"]

    def _checked_params(self, X: Any) -> dict[str, Any]:
        """The parameters checked (scikit-learn checks them at fit and transform), and `X`
        refused if it is one string instead of an iterable of documents."""
        if isinstance(X, str):
            raise ValueError(
                "Iterable over raw text documents expected, string object received."
            )
        if self.input != "content":
            raise InvalidParameterError(
                f"input must be 'content' (the documents themselves), got {self.input!r}"
            )
        if not (callable(self.analyzer) or self.analyzer in ANALYZERS):
            raise InvalidParameterError(
                f"analyzer must be 'word', 'char', 'char_wb' or a callable, got "
                f"{self.analyzer!r}"
            )
        if self.norm not in NORMS:
            raise InvalidParameterError(f"norm must be 'l1', 'l2' or None, got {self.norm!r}")
        ngram_range = self.ngram_range
        if not (
            isinstance(ngram_range, tuple)
            and len(ngram_range) == 2
            and all(isinstance(n, numbers.Integral) for n in ngram_range)
            and not any(isinstance(n, bool) for n in ngram_range)
            and 1 <= ngram_range[0] <= ngram_range[1] < 2**31
        ):
            raise InvalidParameterError(
                f"ngram_range must be a tuple (min_n, max_n) of integers with "
                f"1 <= min_n <= max_n < 2**31, got {ngram_range!r}"
            )
        return {
            "pattern": self._checked_pattern(),
            "lowercase": check_bool("lowercase", self.lowercase),
            "binary": check_bool("binary", self.binary),
            "alternate_sign": check_bool("alternate_sign", self.alternate_sign),
            "n_features": check_n_features(self.n_features),
            "ngram_range": (int(ngram_range[0]), int(ngram_range[1])),
        }

    def _checked_pattern(self) -> Optional[re.Pattern[str]]:
        """The compiled `token_pattern` (None unless the analyzer is "word")."""
        if self.analyzer != "word":
            return None
        if not isinstance(self.token_pattern, str):
            raise InvalidParameterError(
                f"token_pattern must be a str, got {self.token_pattern!r}"
            )
        try:
            pattern = re.compile(self.token_pattern)
        except re.error as error:
            raise InvalidParameterError(
                f"token_pattern {self.token_pattern!r} is not a regular expression: {error}"
            ) from None
        if pattern.groups > 1:
            raise InvalidParameterError(
                "token_pattern has more than 1 capturing group; only one may be captured, "
                f"got {self.token_pattern!r}"
            )
        return pattern

    def _python_analyzer(self, params: dict[str, Any]) -> Optional[Callable[[Any], list[str]]]:
        """The tokenizer in Python that `transform` must use, or None when the core's does the
        same: a callable `analyzer`, a `token_pattern` other than the default, or a Python whose
        Unicode version is not that of the core's character tables (docs/design.md)."""
        lowercase = params["lowercase"]
        same_unicode = unicodedata.unidata_version == _cwrs.TEXT_UNICODE_VERSION
        if callable(self.analyzer):
            # As scikit-learn: bytes decoded, anything else (a token list, say) passed as it is.
            analyzer = self.analyzer
            return lambda doc: analyzer(doc.decode("utf-8") if isinstance(doc, bytes) else doc)
        if self.analyzer != "word":
            if same_unicode or not lowercase:
                return None
            # Only the lowercasing depends on the tables here: Python's, then the core's n-grams.
            analysis = (False, self.analyzer, params["ngram_range"])
            return lambda doc: _cwrs.analyze_documents([decoded(doc).lower()], *analysis)[0]
        if same_unicode and self.token_pattern == DEFAULT_TOKEN_PATTERN:
            return None
        pattern = params["pattern"]
        min_n, max_n = params["ngram_range"]

        def tokens(doc: Any) -> list[str]:
            text = decoded(doc)
            return word_ngrams(pattern.findall(text.lower() if lowercase else text), min_n, max_n)

        return tokens


def decoded(doc: Any) -> str:
    """A document as text: a str as it is, bytes decoded as strict UTF-8."""
    if isinstance(doc, bytes):
        return doc.decode("utf-8")
    if not isinstance(doc, str):
        raise TypeError(f"documents must be str or bytes, got one of type {type(doc).__name__}")
    return doc


def word_ngrams(tokens: list[str], min_n: int, max_n: int) -> list[str]:
    """The n-grams of `tokens` for n in [min_n, max_n], joined by a space, in scikit-learn's
    order (the core's, for its own words)."""
    grams = list(tokens) if min_n == 1 else []
    for n in range(max(min_n, 2), min(max_n, len(tokens)) + 1):
        grams.extend(" ".join(tokens[i : i + n]) for i in range(len(tokens) - n + 1))
    return grams
