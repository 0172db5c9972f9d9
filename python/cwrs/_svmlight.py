"""LIBSVM / SVMlight text files, parsed by the Rust reader: `label [qid:N] index:value ...`.

`load_svmlight` reads a whole file like scikit-learn's `load_svmlight_file`; `iter_svmlight`
streams it in chunks (parsed ahead on a background thread) for `partial_fit`. Both return SciPy
CSR matrices, so they need SciPy.
"""

from __future__ import annotations

import numbers
import os

import numpy as np

from ._cwrs import SvmlightChunks, read_svmlight


def _scipy_sparse():
    try:
        import scipy.sparse
    except ImportError:
        raise ImportError(
            "reading LIBSVM files into sparse matrices needs SciPy: pip install scipy"
        ) from None
    return scipy.sparse


def _positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def load_svmlight(path, n_features=None, zero_based="auto", query_id=False):
    """Loads a LIBSVM / SVMlight file as `(X, y)`, or `(X, y, qid)` with `query_id=True`.

    Same results as `sklearn.datasets.load_svmlight_file` on the same file: X a float64 CSR
    matrix of n_features columns (by default one past the largest index), y the float64 labels,
    qid the int64 query ids (empty when the file has none; 0 for rows without one in a file
    that has some). `zero_based="auto"` reads indices as one-based unless an index 0 appears.
    Unlike scikit-learn, unsorted indices within a line are accepted (and sorted), and
    non-finite values are rejected. A malformed line raises ValueError naming its line number.
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


def iter_svmlight(path, chunk_rows=10_000, zero_based=False, n_features=None):
    """Yields `(X, y)` for consecutive chunks of up to `chunk_rows` rows of a LIBSVM file, X a
    float64 CSR matrix, while the next chunks are parsed on a background thread.

    X has `n_features` columns; by default, one past the largest index seen so far (so the
    width can grow from chunk to chunk). Indices are one-based unless `zero_based=True` (a
    stream cannot look ahead for "auto"). The file is opened here, so a missing file raises at
    the call; a malformed line raises ValueError naming its line number when its chunk is
    reached.
    """
    sparse = _scipy_sparse()
    chunk_rows = _positive_int("chunk_rows", chunk_rows)
    if n_features is not None:
        n_features = _positive_int("n_features", n_features)
    chunks = SvmlightChunks(os.fspath(path), bool(zero_based), chunk_rows)
    return _csr_chunks(sparse, chunks, n_features)


def _csr_chunks(sparse, chunks, n_features):
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
