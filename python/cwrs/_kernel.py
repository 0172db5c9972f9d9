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
