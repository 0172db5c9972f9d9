"""LIBSVM / SVMlight text files, parsed by the Rust reader: `label [qid:N] index:value ...`.

`load_svmlight` reads a whole file like scikit-learn's `load_svmlight_file`; `iter_svmlight`
streams it in chunks (parsed ahead on a background thread) for `partial_fit`. Both return SciPy
CSR matrices, so they need SciPy. Files compressed with gzip, bzip2 or xz are decompressed on the
fly (recognized by their first bytes, whatever their name). Reading runs with the GIL released and
Ctrl-C interrupts it; errors name the file and the line.
"""

from __future__ import annotations

import numbers
import os
from typing import TYPE_CHECKING, Any, Iterator, Literal, Optional, Union

import numpy as np
import numpy.typing as npt

from ._cwrs import SvmlightChunks, svmlight_zero_based

if TYPE_CHECKING:
    from ._cwrs import _Chunk


def _scipy_sparse() -> Any:
    try:
        import scipy.sparse
    except ImportError:
        raise ImportError(
            "reading LIBSVM files into sparse matrices needs SciPy: pip install scipy"
        ) from None
    return scipy.sparse


# More columns than any model holds (see the Rust `Shape::MAX_FEATURES`), and than SciPy's
# int64 shapes allow.
_MAX_FEATURES = (2**63 - 1) // 8 - 1


def _positive_int(name: str, value: Any, most: int = 2**63 - 1) -> int:
    integral = isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if not integral or not 1 <= int(value) <= most:
        raise ValueError(f"{name} must be an integer from 1 to {most}, got {value!r}")
    return int(value)


def _index_base(zero_based: Any) -> Optional[bool]:
    """`zero_based` as the reader takes it: True, False, or None for "auto"."""
    if isinstance(zero_based, (bool, np.bool_)):
        return bool(zero_based)
    if isinstance(zero_based, str) and zero_based == "auto":
        return None
    raise ValueError(f'zero_based must be True, False or "auto", got {zero_based!r}')


def _check_width(path: Any, n_features: int) -> None:
    if n_features > _MAX_FEATURES:
        raise ValueError(
            f"{os.fspath(path)}: its largest index asks for {n_features} features, more than "
            f"any model can hold (at most {_MAX_FEATURES}); is this a LIBSVM file?"
        )


def load_svmlight(
    path: Union[str, os.PathLike[str]],
    n_features: Optional[int] = None,
    zero_based: Union[bool, Literal["auto"]] = "auto",
    query_id: bool = False,
) -> tuple[Any, ...]:
    """Loads a LIBSVM / SVMlight file as `(X, y)`, or `(X, y, qid)` with `query_id=True`.

    Same results as `sklearn.datasets.load_svmlight_file` on the same file: X a float64 CSR
    matrix of n_features columns (by default one past the largest index), y the float64 labels,
    qid the int64 query ids (empty when the file has none; 0 for rows without one in a file
    that has some). `zero_based="auto"` reads indices as one-based unless an index 0 appears.
    Unlike scikit-learn, unsorted indices within a line are accepted (and sorted), and
    non-finite values are rejected. A malformed line raises ValueError naming its line number.

    Parameters
    ----------
    path : str or os.PathLike
        The file (text, lines `label [qid:N] index:value ...`, `#` starts a comment; or that
        text compressed with gzip, bzip2 or xz). A FIFO or `/dev/stdin` is read once.
    n_features : int or None, default=None
        Number of columns (≥ 1, at least one past the largest index); None: one past the largest.
    zero_based : bool or "auto", default="auto"
        Whether indices start at 0; "auto" reads them as one-based unless an index 0 appears.
    query_id : bool, default=False
        Also return the query ids.
    """
    sparse = _scipy_sparse()
    base = _index_base(zero_based)
    if n_features is not None:
        n_features = _positive_int("n_features", n_features, _MAX_FEATURES)
    read = next(SvmlightChunks(os.fspath(path), base, None))  # the whole file: one chunk
    y, found, qid = read["labels"], read["n_features"], read["qids"]
    if n_features is None:
        n_features = max(found, 1)  # as scikit-learn gives a file with no entries
        _check_width(path, n_features)
    elif n_features < found:
        raise ValueError(
            f"n_features was set to {n_features}, but input file contains {found} features"
        )
    X = sparse.csr_matrix(_csr(read), shape=(y.shape[0], n_features))
    if not query_id:
        return X, y
    return X, y, np.empty(0, np.int64) if qid is None else qid


def _csr(chunk: _Chunk) -> tuple[Any, Any, Any]:
    """The CSR arrays (data, indices, indptr) of a chunk read by the core."""
    return chunk["values"], chunk["indices"], chunk["indptr"]


def iter_svmlight(
    path: Union[str, os.PathLike[str]],
    chunk_rows: int = 10_000,
    zero_based: Union[bool, Literal["auto"]] = False,
    n_features: Optional[int] = None,
) -> Iterator[tuple[Any, npt.NDArray[np.float64]]]:
    """Yields `(X, y)` for consecutive chunks of up to `chunk_rows` rows of a LIBSVM file, X a
    float64 CSR matrix, while the next chunks are parsed on a background thread.

    X has `n_features` columns; by default, one past the largest index seen so far (so the
    width can grow from chunk to chunk). Indices are one-based unless `zero_based=True`;
    `zero_based="auto"` first scans the whole file for an index 0 (zero-based exactly when one
    occurs, as scikit-learn's "auto"), so it takes a file that can be read twice, not a pipe.
    The file is opened here, so a missing file raises at the call; a malformed line raises
    ValueError naming the file and the line when its chunk is reached. An iterator belongs to
    the process that made it: after a fork, make a new one in the child.

    Parameters
    ----------
    path : str or os.PathLike
        The file (plain, or compressed with gzip, bzip2 or xz); a FIFO or `/dev/stdin` works
        with a fixed `zero_based`.
    chunk_rows : int, default=10_000
        Rows per chunk (≥ 1).
    zero_based : bool or "auto", default=False
        Whether indices start at 0; "auto": whether an index 0 occurs in the file.
    n_features : int or None, default=None
        Number of columns of every chunk (≥ 1); None: one past the largest index seen so far.
    """
    return (chunk[:2] for chunk in _line_chunks(path, chunk_rows, zero_based, n_features))


def zero_based_file(path: Union[str, os.PathLike[str]], zero_based: Any) -> bool:
    """Whether the indices of the LIBSVM file `path` are read as zero-based under `zero_based`
    (True, False, or "auto": whether an index 0 occurs, found by a scan that parses nothing)."""
    base = _index_base(zero_based)
    if base is not None:
        return base
    return svmlight_zero_based(os.fspath(path))


def index_base_for(zero_based: Any, learned: Optional[bool], path: Any) -> Any:
    """The `zero_based` to read the LIBSVM file `path` with, for a model that learned from
    LIBSVM files with base `learned` (its `zero_based_`; None when it never learned from one):
    "auto" (or None) takes the model's base, and an explicit other base is refused, since the
    features would be shifted by one. (A file with an index 0 read as one-based is refused by
    the reader.)"""
    accepted = zero_based is None or isinstance(zero_based, (bool, np.bool_))
    if not (accepted or (isinstance(zero_based, str) and zero_based == "auto")):
        raise ValueError(f'zero_based must be True, False, "auto" or None, got {zero_based!r}')
    if learned is None or (isinstance(zero_based, str) and zero_based == "auto"):
        return learned if learned is not None else zero_based
    if zero_based is None or _index_base(zero_based) == learned:
        return learned
    bases = {True: "zero-based", False: "one-based"}
    raise ValueError(
        f"{os.fspath(path)} is read as {bases[not learned]}, but the model learned from "
        f"{bases[learned]} LIBSVM indices (zero_based_={learned}): its features would be "
        "shifted by one; read it as the model did, or train it again with the other base"
    )


def _line_chunks(
    path: Union[str, os.PathLike[str]],
    chunk_rows: int,
    zero_based: Any,
    n_features: Optional[int],
    optional_labels: bool = False,
) -> Iterator[tuple[Any, npt.NDArray[np.float64], npt.NDArray[np.uint64]]]:
    """`iter_svmlight`'s chunks as `(X, y, lines)`, lines the line number of each row. With
    `optional_labels`, a line may lack its label (to predict it): the line starts with its
    first `index:value`, or with a placeholder such as `?`; its label is NaN."""
    sparse = _scipy_sparse()
    chunk_rows = _positive_int("chunk_rows", chunk_rows)
    base = _index_base(zero_based)
    if n_features is not None:
        n_features = _positive_int("n_features", n_features, _MAX_FEATURES)
    chunks = SvmlightChunks(os.fspath(path), base, chunk_rows, optional_labels)
    return _csr_chunks(sparse, chunks, n_features, os.fspath(path))


def _csr_chunks(
    sparse: Any, chunks: SvmlightChunks, n_features: Optional[int], path: str
) -> Iterator[tuple[Any, npt.NDArray[np.float64], npt.NDArray[np.uint64]]]:
    width = n_features or 0
    for chunk in chunks:
        y, indices, indptr = chunk["labels"], chunk["indices"], chunk["indptr"]
        found, lines = chunk["n_features"], chunk["lines"]
        if n_features is None:
            _check_width(path, found)
            width = max(width, found)
        elif found > n_features:
            first = int(np.argmax(indices >= n_features))
            row = int(np.searchsorted(indptr, first, side="right")) - 1
            written = int(indices[first]) + (0 if chunks.zero_based else 1)
            raise ValueError(
                f"{path}: line {lines[row]}: n_features was set to {n_features}, but the line "
                f"has the index {written}"
            )
        yield sparse.csr_matrix(_csr(chunk), shape=(y.shape[0], width)), y, lines
