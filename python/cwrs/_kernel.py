"""Kernel options shared by the classifiers: the dual (kernel) model and the random Fourier
feature approximation of the RBF kernel (Rahimi & Recht, NIPS 2007)."""

from __future__ import annotations

import numbers

import numpy as np

KERNELS = ("linear", "rbf", "poly")


def resolve_gamma(gamma, n_features):
    """scikit-learn's convention: `gamma=None` means 1 / n_features."""
    if gamma is None:
        return 1.0 / n_features
    if isinstance(gamma, bool) or not isinstance(gamma, numbers.Real) or not gamma > 0:
        raise ValueError(f"gamma must be a positive number or None, got {gamma!r}")
    return float(gamma)


def check_budget(budget):
    if budget is None:
        return None
    if isinstance(budget, bool) or not isinstance(budget, numbers.Integral) or budget < 1:
        raise ValueError(f"budget must be a positive integer or None, got {budget!r}")
    return int(budget)


def check_degree(degree):
    if isinstance(degree, bool) or not isinstance(degree, numbers.Integral) or degree < 1:
        raise ValueError(f"degree must be a positive integer, got {degree!r}")
    return int(degree)


class RandomFourierFeatures:
    """z(x) = √(2/D)·cos(Wᵀx + b) with W ~ N(0, 2γ·I) (d × D) and b ~ U[0, 2π), so that
    z(x)·z(x') approximates exp(−γ‖x − x'‖²)."""

    def __init__(self, gamma, n_components, n_features, random_state):
        if (
            isinstance(n_components, bool)
            or not isinstance(n_components, numbers.Integral)
            or n_components < 1
        ):
            raise ValueError(f"n_components must be a positive integer, got {n_components!r}")
        rng = (
            random_state
            if isinstance(random_state, (np.random.RandomState, np.random.Generator))
            else np.random.RandomState(random_state)
        )
        self.weights = rng.normal(0.0, np.sqrt(2.0 * gamma), size=(n_features, n_components))
        self.offsets = rng.uniform(0.0, 2.0 * np.pi, size=n_components)

    def transform(self, matrix, n_rows):
        """The features of a checked matrix (dense array or CSR tuple) as a dense array."""
        if isinstance(matrix, tuple):
            import scipy.sparse

            data, indices, indptr, n_cols = matrix
            matrix = scipy.sparse.csr_matrix((data, indices, indptr), shape=(n_rows, n_cols))
        projection = np.asarray(matrix @ self.weights)
        scale = np.sqrt(2.0 / self.weights.shape[1])
        return np.ascontiguousarray(scale * np.cos(projection + self.offsets))
