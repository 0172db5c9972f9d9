"""Online linear regressors.

- `AROWRegressor`: AROW with the squared loss, which the AROW paper (Crammer, Kulesza, Dredze,
  NIPS 2009) notes is recursive least squares: exact Bayesian linear regression with prior
  N(0, a·I) and noise variance r, learned one row at a time (full covariance), or its
  diagonal-precision approximation (`covariance="diag"`).
- `PARegressor`, `PA1Regressor`, `PA2Regressor`: ε-insensitive Passive-Aggressive regression
  (Crammer, Dekel, Keshet, Shalev-Shwartz, Singer, JMLR 2006).

Each update is μ ← μ + α·Σx on the residual e = y − μ·x (Σ = I for PA). As for the classifiers,
each rule's paper, update and hyper-parameters come from the rule table of the Rust core, the
shared parameters from `_docs.py` (see `cwrs._classifiers`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Union

from ._docs import document
from ._params import store_params
from ._regressor import ConfidenceWeightedRegressor, Regressor

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ._typing import RegressorParams, SecondOrderRegressorParams


@document
class AROWRegressor(ConfidenceWeightedRegressor):
    """With `covariance="full"` the model after any number of rows is the ridge solution
    (XᵀX + (r/a)·I)⁻¹Xᵀy. `predict(X, return_std=True)` also gives the predictive standard
    deviation √(xᵀΣx + r).

    Parameters
    ----------
    r : float or "auto", default=1.0
        Noise variance (r > 0). "auto": σ² is learned from the residuals as `noise_variance_`,
        the model learns as with r = 1 as the unit of σ², the normal-inverse-gamma model, whose
        Σ and prior a are in units of σ², and `predict(X, return_std=True)` gives
        √(σ̂²·(xᵀΣx + 1)).
    a : float or "auto", default=1.0
        Prior variance of the weights, Σ₀ = a·I (a > 0). "auto": the prior variance of the
        feature weights is learned from the stream by maximizing the evidence, as scikit-learn's
        BayesianRidge does in batch (`prior_variance_`), re-estimated after rows
        2^k·(n_features + 1) (k = 0, 1, …, counted over every call to `partial_fit`), starting
        from a = 1; the intercept keeps a = 1. The model is then exactly the one learned with
        the final a from the start (`covariance="full"`; per coordinate for "diag"). Needs
        `covariance="full"` or "diag", without L1, process noise, averaging or `n_jobs` > 1.
        Best with `r="auto"`, whose intervals then adapt to both the noise and the weights.
    """

    _rule = "AROW"

    def __init__(
        self, *, r: Union[float, Literal["auto"]] = 1.0,
        **params: Unpack[SecondOrderRegressorParams],
    ) -> None:
        store_params(self, locals())


@document
class PARegressor(Regressor):
    _rule = "PA"

    def __init__(self, *, epsilon: float = 0.1, **params: Unpack[RegressorParams]) -> None:
        store_params(self, locals())


@document
class PA1Regressor(Regressor):
    _rule = "PA1"

    def __init__(
        self, *, C: float = 1.0, epsilon: float = 0.1, **params: Unpack[RegressorParams]
    ) -> None:
        store_params(self, locals())


@document
class PA2Regressor(Regressor):
    _rule = "PA2"

    def __init__(
        self, *, C: float = 1.0, epsilon: float = 0.1, **params: Unpack[RegressorParams]
    ) -> None:
        store_params(self, locals())


REGRESSORS = (AROWRegressor, PARegressor, PA1Regressor, PA2Regressor)
