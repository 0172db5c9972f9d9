"""Online linear regressors.

- `AROWRegressor`: AROW with the squared loss, which the AROW paper (Crammer, Kulesza, Dredze,
  NIPS 2009) notes is recursive least squares: exact Bayesian linear regression with prior
  N(0, a·I) and noise variance r, learned one row at a time (full covariance), or its
  diagonal-precision approximation (`covariance="diag"`).
- `PARegressor`, `PA1Regressor`, `PA2Regressor`: ε-insensitive Passive-Aggressive regression
  (Crammer, Dekel, Keshet, Shalev-Shwartz, Singer, JMLR 2006).

Each update is μ ← μ + α·Σx on the residual e = y − μ·x (Σ = I for PA).

Common parameters: `fit_intercept=True`, `n_iter=1`, `shuffle=False`, `random_state=None`, as
for the classifiers.
"""

from __future__ import annotations

from ._base import ConfidenceWeightedRegressor, Regressor, store_params


class AROWRegressor(ConfidenceWeightedRegressor):
    """AROW regression = recursive least squares (Crammer, Kulesza, Dredze, NIPS 2009).

    Every row: α = e/(v + r), c = 1/r, i.e. μ ← μ + (y − μ·x)/(r + xᵀΣx)·Σx and
    Σ⁻¹ ← Σ⁻¹ + x xᵀ/r. With `covariance="full"` the model after any number of rows is the
    ridge solution (XᵀX + (r/a)·I)⁻¹Xᵀy.

    Parameters
    ----------
    r : float, default=1.0
        Noise variance (> 0).
    a : float, default=1.0
        Prior variance of the weights, Σ₀ = a·I.
    covariance : {"diag", "full"}, default="diag"
    penalty, alpha, penalize_intercept
        Sparse L1 training with `covariance="diag"`, as for the classifiers (η_t = 1/(2(v + r))).
    """

    _rule = "AROW"
    _rule_params = ("r",)

    def __init__(
        self,
        *,
        r=1.0,
        a=1.0,
        covariance="diag",
        penalty=None,
        alpha=1e-4,
        penalize_intercept=False,
        fit_intercept=True,
        n_iter=1,
        shuffle=False,
        random_state=None,
    ):
        store_params(self, locals())


class PARegressor(Regressor):
    """ε-insensitive Passive-Aggressive regression (Crammer et al., JMLR 2006).

    When |e| > ε: μ ← μ + sign(e)·ℓ/‖x‖²·x with ℓ = |e| − ε.

    Parameters
    ----------
    epsilon : float, default=0.1
        Half-width of the insensitive tube (≥ 0).
    """

    _rule = "PA"
    _rule_params = ("epsilon",)

    def __init__(
        self, *, epsilon=0.1, fit_intercept=True, n_iter=1, shuffle=False, random_state=None
    ):
        store_params(self, locals())


class PA1Regressor(Regressor):
    """PA-I regression (Crammer et al., JMLR 2006): the PA step capped at C,
    α = sign(e)·min(C, ℓ/‖x‖²).

    Parameters
    ----------
    C : float, default=1.0
        Aggressiveness (> 0).
    epsilon : float, default=0.1
        Half-width of the insensitive tube (≥ 0).
    """

    _rule = "PA1"
    _rule_params = ("epsilon", "C")

    def __init__(
        self,
        *,
        C=1.0,
        epsilon=0.1,
        fit_intercept=True,
        n_iter=1,
        shuffle=False,
        random_state=None,
    ):
        store_params(self, locals())


class PA2Regressor(Regressor):
    """PA-II regression (Crammer et al., JMLR 2006): α = sign(e)·ℓ/(‖x‖² + 1/(2C)).

    Parameters
    ----------
    C : float, default=1.0
        Aggressiveness (> 0).
    epsilon : float, default=0.1
        Half-width of the insensitive tube (≥ 0).
    """

    _rule = "PA2"
    _rule_params = ("epsilon", "C")

    def __init__(
        self,
        *,
        C=1.0,
        epsilon=0.1,
        fit_intercept=True,
        n_iter=1,
        shuffle=False,
        random_state=None,
    ):
        store_params(self, locals())


REGRESSORS = (AROWRegressor, PARegressor, PA1Regressor, PA2Regressor)
