"""Kernel options shared by the classifiers: the dual (kernel) model and the random Fourier
feature approximation of the RBF kernel (Rahimi & Recht, NIPS 2007)."""

from __future__ import annotations

import numpy as np

from ._locks import OwnedLock
from ._params import check_n_components


class RandomFourierFeatures:
    """z(x) = √(2/D)·cos(Wᵀx + b) with W ~ N(0, 2γ·I) (d × D) and b ~ U[0, 2π), so that
    z(x)·z(x') approximates exp(−γ‖x − x'‖²)."""

    def __init__(self, gamma, n_components, n_features, random_state):
        n_components = check_n_components(n_components)
        rng = (
            random_state
            if isinstance(random_state, (np.random.RandomState, np.random.Generator))
            else np.random.RandomState(random_state)
        )
        self.weights = rng.normal(0.0, np.sqrt(2.0 * gamma), size=(n_features, n_components))
        self.offsets = rng.uniform(0.0, 2.0 * np.pi, size=n_components)

    def transform(self, matrix, n_rows):
        """The features of a checked matrix (dense array or CSR tuple) as a dense array."""
        values = matrix[0] if isinstance(matrix, tuple) else matrix
        if not np.isfinite(values).all():
            raise ValueError("Input X contains NaN or infinity")
        if isinstance(matrix, tuple):
            import scipy.sparse

            data, indices, indptr, n_cols = matrix
            if indices.size and (indices.min() < 0 or indices.max() >= n_cols):
                bad = indices.min() if indices.min() < 0 else indices.max()
                raise ValueError(
                    f"sparse column index {bad} is out of range for {n_cols} features"
                )
            matrix = scipy.sparse.csr_matrix((data, indices, indptr), shape=(n_rows, n_cols))
        with np.errstate(over="ignore", invalid="ignore"):
            projection = np.asarray(matrix @ self.weights)
        overflowed = ~np.isfinite(projection).all(axis=1)
        if overflowed.any():
            raise ValueError(
                f"the random Fourier features of row {int(np.argmax(overflowed))} overflow: "
                "its projection X·W exceeds the float64 range; rescale X"
            )
        scale = np.sqrt(2.0 / self.weights.shape[1])
        return np.ascontiguousarray(scale * np.cos(projection + self.offsets))


class CallableKernelModel:
    """A dual model whose kernel is a Python callable `kernel(X, Z) -> (len(X), len(Z))` array.

    It wraps the native `KernelModel` (which holds all the math and the support set) and feeds
    it kernel values row by row, so it has the native models' interface. Slower than the built-in
    kernels: one call of the callable per row.

    A learning pass reads the support set, calls the kernel and updates the native model in
    turns, so calls on one model hold a lock (threads sharing it wait for each other, as with
    the native models).
    """

    def __init__(self, native, kernel, sparse):
        self.native = native
        self.kernel = kernel
        self.sparse = sparse
        self._lock = OwnedLock()

    # ------------------------------------------------------------------ persistence
    def state(self):
        return (self.native.state(), self.kernel, self.sparse)

    @classmethod
    def from_state(cls, native_state, kernel, sparse):
        from ._cwrs import KernelModel

        return cls(KernelModel.from_state(*native_state), kernel, sparse)

    # ------------------------------------------------------------------ kernel values
    def _rows(self, matrix, n_rows):
        """The rows in the form the callable takes: a dense array or a CSR matrix."""
        if isinstance(matrix, tuple):
            import scipy.sparse

            data, indices, indptr, n_cols = matrix
            return scipy.sparse.csr_matrix((data, indices, indptr), shape=(n_rows, n_cols))
        return matrix

    def _support(self, n_features):
        data, indices, indptr = self.native.support_vectors()
        shape = (indptr.shape[0] - 1, n_features)
        if self.sparse:
            import scipy.sparse

            return scipy.sparse.csr_matrix(
                (data, indices.astype(np.int64), indptr.astype(np.int64)), shape=shape
            )
        dense = np.zeros(shape)
        dense[np.repeat(np.arange(shape[0]), np.diff(indptr).astype(np.int64)), indices] = data
        return dense

    def _values(self, rows, support):
        """k(rows, support) (n × |S|, C order) and k(x, x) per row."""
        n = rows.shape[0]
        k = np.zeros((n, support.shape[0]))
        if support.shape[0]:
            k = self._call(rows, support, (n, support.shape[0]))
        kappas = np.array([self._call(rows[i : i + 1], rows[i : i + 1], (1, 1))[0, 0]
                           for i in range(n)])
        if (kappas < 0).any():
            i = int(np.argmax(kappas < 0))
            raise ValueError(
                f"kernel {self._name()} gives k(x, x) = {kappas[i]!r} < 0 for row {i}: a kernel "
                "must be positive definite (k(x, x) >= 0)"
            )
        return np.ascontiguousarray(k), kappas

    def _name(self):
        return getattr(self.kernel, "__name__", None) or repr(self.kernel)

    def _call(self, A, B, shape):
        """kernel(A, B) as a finite float64 array of `shape`, or a ValueError naming the
        kernel and what is wrong with its output."""
        out = self.kernel(A, B)
        problem = None
        if out is None:
            problem = "returned None"
        elif hasattr(out, "toarray") or hasattr(out, "tocsr"):
            problem = "returned a sparse matrix; return a dense array (e.g. .toarray())"
        else:
            try:
                out = np.asarray(out, dtype=np.float64)
            except (TypeError, ValueError):
                problem = f"returned {type(out).__name__}, not an array of numbers"
            else:
                if out.ndim < 2 and out.size == shape[0] * shape[1]:
                    out = out.reshape(shape)
                if out.shape != shape:
                    problem = f"returned shape {out.shape}, expected {shape} = (len(X), len(Z))"
                elif not np.isfinite(out).all():
                    problem = "returned NaN or infinity"
        if problem is not None:
            raise ValueError(
                f"kernel {self._name()}(X, Z) {problem}; a kernel callable must return the "
                "dense matrix of kernel values k(X[i], Z[j])"
            )
        return out

    # ------------------------------------------------------------------ the native interface
    def partial_fit(self, matrix, y, repeats=None, order=None):
        with self._lock:
            self._partial_fit(matrix, y, repeats, order)

    def _partial_fit(self, matrix, y, repeats, order):
        self.native.check_input(matrix)
        n_rows = y.shape[0]
        rows = self._rows(matrix, n_rows)
        n_features = rows.shape[1]
        sequence = np.arange(n_rows) if order is None else order
        if repeats is not None:
            sequence = np.repeat(sequence, repeats[sequence])
        snapshot = self.native.state()
        try:
            support = self._support(n_features)
            for i in sequence:
                row = rows[i : i + 1]
                k, kappas = self._values(row, support)
                one = row if not isinstance(matrix, tuple) else _csr_tuple(row)
                if self.native.learn_precomputed(one, k[0], kappas[0], float(y[i])):
                    support = self._support(n_features)
        except BaseException:
            from ._cwrs import KernelModel

            self.native = KernelModel.from_state(*snapshot)
            raise

    def _moments(self, matrix):
        with self._lock:
            return self._moments_unlocked(matrix)

    def _moments_unlocked(self, matrix):
        self.native.check_input(matrix)
        n_rows = matrix[2].shape[0] - 1 if isinstance(matrix, tuple) else matrix.shape[0]
        rows = self._rows(matrix, n_rows)
        k, kappas = self._values(rows, self._support(rows.shape[1]))
        return self.native.moments_precomputed(k.ravel(), kappas)

    def decision_function(self, matrix):
        return self._moments(matrix)[0]

    def variance(self, matrix):
        return self._moments(matrix)[1]

    def positive_probability(self, matrix):
        from ._cwrs import margin_probabilities

        return margin_probabilities(*self._moments(matrix))

    def support_vectors(self):
        return self.native.support_vectors()

    @property
    def dual_coef(self):
        return self.native.dual_coef

    @property
    def n_support(self):
        return self.native.n_support

    @property
    def n_updates(self):
        return self.native.n_updates

    @property
    def n_mistakes(self):
        return self.native.n_mistakes


def _csr_tuple(row):
    """A one-row CSR matrix as the native models take it."""
    index_type = np.int32 if row.indices.dtype == np.int32 else np.int64
    return (
        np.ascontiguousarray(row.data, dtype=np.float64),
        np.ascontiguousarray(row.indices, dtype=index_type),
        np.ascontiguousarray(row.indptr, dtype=index_type),
        row.shape[1],
    )
