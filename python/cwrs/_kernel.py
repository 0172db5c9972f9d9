"""Kernel options shared by the classifiers: the dual (kernel) model and the random Fourier
feature approximation of the RBF kernel (Rahimi & Recht, NIPS 2007)."""

from __future__ import annotations

import numpy as np

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


class CallableKernel:
    """A kernel callable `kernel(X, Z)` as the native dual form calls it (crates/cwrs-python/src/python/
    callable_kernel.rs): rows come as a dense array or the CSR arrays
    `(data, indices, indptr, n_cols)`; the callable gets X dense or as a CSR matrix as the rows
    came, and Z (the support rows) as a CSR matrix when `sparse_support` (the model learned from
    sparse input), else dense. What it returns is checked: a ValueError naming the kernel says
    what is wrong, and the values go back flat."""

    def __init__(self, function, sparse_support):
        if not callable(function):
            raise TypeError("kernel must be a callable kernel(X, Z)")
        self.function = function
        self.sparse_support = sparse_support

    def evaluate(self, rows, support):
        """k(rows_i, support_p) for every pair, row-major."""
        return self._values(_matrix(rows, isinstance(rows, tuple)),
                            _matrix(support, self.sparse_support))

    def diagonal(self, rows):
        """k(rows_i, rows_i), one call per row (as the row's 1-row slice); each must be ≥ 0."""
        rows = _matrix(rows, isinstance(rows, tuple))
        values = np.concatenate(
            [self._values(rows[i:i + 1], rows[i:i + 1]) for i in range(rows.shape[0])]
        )
        negative = np.flatnonzero(values < 0.0)
        if negative.size:
            i = int(negative[0])
            raise ValueError(
                f"kernel {self._name()} gives k(x, x) = {float(values[i])!r} < 0 for row {i}: "
                "a kernel must be positive definite (k(x, x) >= 0)"
            )
        return values

    def _name(self):
        """The kernel's `__name__`, else its repr."""
        name = getattr(self.function, "__name__", None)
        return str(name) if name else repr(self.function)

    def _values(self, a, b):
        """kernel(a, b), checked to be a finite float64 array of shape (len(a), len(b))."""
        n, m = a.shape[0], b.shape[0]
        result = self.function(a, b)
        if result is None:
            problem = "returned None"
        elif hasattr(result, "toarray") or hasattr(result, "tocsr"):
            problem = "returned a sparse matrix; return a dense array (e.g. .toarray())"
        else:
            try:
                values = np.asarray(result, dtype=np.float64)
            except (TypeError, ValueError):
                problem = f"returned {type(result).__name__}, not an array of numbers"
            else:
                if values.ndim < 2 and values.size == n * m:
                    values = values.reshape(n, m)
                if values.shape != (n, m):
                    expected = f"({n}, {m}) = (len(X), len(Z))"
                    problem = f"returned shape {values.shape!r}, expected {expected}"
                elif not np.isfinite(values).all():
                    problem = "returned NaN or infinity"
                else:
                    return np.ascontiguousarray(values).ravel()
        raise ValueError(
            f"kernel {self._name()}(X, Z) {problem}; a kernel callable must return the dense "
            "matrix of kernel values k(X[i], Z[j])"
        )


def _matrix(rows, sparse):
    """Rows from the native side (a dense array or CSR arrays) as a CSR matrix when `sparse`,
    else as a dense array."""
    import scipy.sparse

    if isinstance(rows, tuple):
        data, indices, indptr, n_cols = rows
        matrix = scipy.sparse.csr_matrix((data, indices, indptr), shape=(len(indptr) - 1, n_cols))
        return matrix if sparse else matrix.toarray()
    return scipy.sparse.csr_matrix(rows) if sparse else rows
