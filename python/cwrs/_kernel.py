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


# The largest budget: the dual covariance and Gram matrix of a full support set hold
# budget·(budget + 1)/2 floats each, which past 2**30 rows exceeds any address space.
MAX_BUDGET = 2**30
# The largest poly degree (the native kernel raises to an i32 power).
MAX_DEGREE = 2**31 - 1


def check_budget(budget):
    if budget is None:
        return None
    if isinstance(budget, bool) or not isinstance(budget, numbers.Integral) or budget < 1:
        raise ValueError(f"budget must be a positive integer or None, got {budget!r}")
    if budget > MAX_BUDGET:
        raise ValueError(
            f"budget={budget!r} is too large: a support set that size needs its budget × "
            f"budget dual covariance and Gram matrix ({budget * budget * 8 / 1e9:.3g} GB); "
            f"use a budget of at most 2**30 (a few thousand is usual) or budget=None"
        )
    return int(budget)


# The kernel parameters, their defaults, and the kernels that use them.
KERNEL_PARAMETERS = {
    "gamma": (None, ("rbf", "poly", "rff")),
    "degree": (3, ("poly",)),
    "coef0": (1.0, ("poly",)),
    "budget": (None, ("linear", "rbf", "poly", "a callable kernel")),
}
# n_components is left out: scikit-learn's estimator checks set it on every estimator.


def check_kernel_parameters(estimator):
    """Refuses a kernel parameter set (away from its default) that the chosen kernel does not
    use, so that it cannot be silently ignored."""
    kernel = estimator.kernel
    chosen = (
        "rff" if estimator.kernel_approximation == "rff"
        else "a callable kernel" if callable(kernel)
        else kernel
    )
    for name, (default, users) in KERNEL_PARAMETERS.items():
        value = getattr(estimator, name)
        if chosen in users or value is default or _equal(value, default):
            continue
        setting = "no kernel" if chosen is None else f"kernel={kernel!r}"
        if chosen == "rff":
            setting = 'kernel_approximation="rff"'
        users_text = " or ".join(
            'kernel_approximation="rff"' if u == "rff"
            else u if u == "a callable kernel"
            else f"kernel={u!r}"
            for u in users
        )
        raise ValueError(
            f"{name}={value!r} has no effect with {setting}: it is used by {users_text}; "
            f"leave it at its default ({default!r})"
        )


def _equal(value, default):
    try:
        return type(value) is not bool and bool(value == default)
    except (TypeError, ValueError):
        return False


def check_n_components(n_components):
    if (
        isinstance(n_components, bool)
        or not isinstance(n_components, numbers.Integral)
        or n_components < 1
    ):
        raise ValueError(f"n_components must be a positive integer, got {n_components!r}")
    return int(n_components)


def check_degree(degree):
    if (
        isinstance(degree, bool)
        or not isinstance(degree, numbers.Integral)
        or not 1 <= degree <= MAX_DEGREE
    ):
        raise ValueError(f"degree must be a positive integer at most 2**31 - 1, got {degree!r}")
    return int(degree)


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
