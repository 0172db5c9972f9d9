"""LIBSVM / SVMlight text files, parsed by the Rust reader: `label [qid:N] index:value ...`.

`load_svmlight` reads a whole file like scikit-learn's `load_svmlight_file`; `iter_svmlight`
streams it in chunks (parsed ahead on a background thread) for `partial_fit`. Both return SciPy
CSR matrices, so they need SciPy.
"""

from __future__ import annotations

import numbers
import os
from typing import Any, Iterator, Literal, Optional, Union

import numpy as np
import numpy.typing as npt

from ._cwrs import SvmlightChunks, read_svmlight


def _scipy_sparse() -> Any:
    try:
        import scipy.sparse
    except ImportError:
        raise ImportError(
            "reading LIBSVM files into sparse matrices needs SciPy: pip install scipy"
        ) from None
    return scipy.sparse


def _positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


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
        The file (plain text; lines `label [qid:N] index:value ...`, `#` starts a comment).
    n_features : int or None, default=None
        Number of columns (≥ 1, at least one past the largest index); None: one past the largest.
    zero_based : bool or "auto", default="auto"
        Whether indices start at 0; "auto" reads them as one-based unless an index 0 appears.
    query_id : bool, default=False
        Also return the query ids.
    """
    sparse = _scipy_sparse()
    if zero_based not in (True, False, "auto"):
        raise ValueError(f'zero_based must be True, False or "auto", got {zero_based!r}')
    if n_features is not None:
        n_features = _positive_int("n_features", n_features)
    base = None if zero_based == "auto" else bool(zero_based)
    y, data, indices, indptr, qid, n_features = read_svmlight(os.fspath(path), base, n_features)
    X = sparse.csr_matrix((data, indices, indptr), shape=(y.shape[0], n_features))
    if not query_id:
        return X, y
    return X, y, np.empty(0, np.int64) if qid is None else qid


def iter_svmlight(
    path: Union[str, os.PathLike[str]],
    chunk_rows: int = 10_000,
    zero_based: bool = False,
    n_features: Optional[int] = None,
) -> Iterator[tuple[Any, npt.NDArray[np.float64]]]:
    """Yields `(X, y)` for consecutive chunks of up to `chunk_rows` rows of a LIBSVM file, X a
    float64 CSR matrix, while the next chunks are parsed on a background thread.

    X has `n_features` columns; by default, one past the largest index seen so far (so the
    width can grow from chunk to chunk). Indices are one-based unless `zero_based=True` (a
    stream cannot look ahead for "auto"). The file is opened here, so a missing file raises at
    the call; a malformed line raises ValueError naming its line number when its chunk is
    reached.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    chunk_rows : int, default=10_000
        Rows per chunk (≥ 1).
    zero_based : bool, default=False
        Whether indices start at 0.
    n_features : int or None, default=None
        Number of columns of every chunk (≥ 1); None: one past the largest index seen so far.
    """
    sparse = _scipy_sparse()
    chunk_rows = _positive_int("chunk_rows", chunk_rows)
    if n_features is not None:
        n_features = _positive_int("n_features", n_features)
    chunks = SvmlightChunks(os.fspath(path), bool(zero_based), chunk_rows)
    return _csr_chunks(sparse, chunks, n_features)


def _csr_chunks(
    sparse: Any, chunks: SvmlightChunks, n_features: Optional[int]
) -> Iterator[tuple[Any, npt.NDArray[np.float64]]]:
    width, rows = n_features or 0, 0
    for y, data, indices, indptr, found in chunks:
        if n_features is None:
            width = max(width, found)
        elif found > n_features:
            raise ValueError(
                f"n_features was set to {n_features}, but the rows from row {rows} on contain "
                f"{found} features"
            )
        rows += y.shape[0]
        yield sparse.csr_matrix((data, indices, indptr), shape=(y.shape[0], width)), y
