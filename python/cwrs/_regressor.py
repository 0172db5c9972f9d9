"""The regressor bases: `Regressor` (every online linear regressor: learning, prediction, R²,
fitted attributes) and `ConfidenceWeightedRegressor` (the second-order ones, with the predictive
standard deviation and the covariance from the Gaussian over weights). The learners are in
`cwrs._regressors`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, Optional, Union, overload

import numpy as np

from . import _cwrs
from ._estimator import Estimator, dense_covariances, feature_block, l1_config, native_config
from ._params import (
    average_start,
    check_pass_params,
    covariance_config,
    l1_spec,
    model_args,
    noise_config,
    process_noise_spec,
)
from ._validation import (
    check_feature_names,
    check_sample_weight,
    check_targets,
    check_X,
    feature_names,
    refuse_overflow,
)

if TYPE_CHECKING:
    from typing_extensions import Self

    from ._typing import ArrayLike, Float64Array, MatrixLike, SampleWeight


class Regressor(Estimator):
    """Base of the online linear regressors (`isinstance(est, cwrs.Regressor)`); not used
    directly: each regressor (`cwrs.AROWRegressor`, ...) sets its rule and documents its
    hyper-parameters.

    The scikit-learn estimator API, duck-typed: `partial_fit(X, y, sample_weight=None)` learns a
    stream, `fit(X, y)` forgets and makes `n_iter` passes; `predict` (μ·x; with
    `return_std=True` for AROWRegressor also the predictive standard deviation), `score` (R²),
    `get_params`/`set_params`. Pickling round-trips exactly.
    """

    _rule_kind = "regression"

    def __sklearn_tags__(self) -> Any:
        from sklearn.utils import InputTags, RegressorTags, Tags, TargetTags

        return Tags(
            estimator_type="regressor",
            target_tags=TargetTags(required=True),
            regressor_tags=RegressorTags(),
            input_tags=InputTags(sparse=True),
        )

    def _new_model(self, n_features: int) -> Any:
        return _cwrs.Model(self._checked_config(1, n_features)[0])

    def _model_config(
        self, n_classes: int, n_features: int, sparse: bool
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """The configuration of the native model for `n_features` (`_checked_config`)."""
        params, covariance, a, fit_intercept = model_args(self)
        config = native_config(
            "regressor", self._rule, params, n_features, fit_intercept, a,
            **covariance_config(self, covariance), **l1_config(l1_spec(self)),
            average=average_start(self), process_noise=process_noise_spec(self),
            **noise_config(self),
        )
        return config, {}

    def _lean_targets(self, model: Any) -> None:
        return None

    def _fit(
        self, y: ArrayLike, sample_weight: SampleWeight, matrix: Any, n_rows: int,
        n_features: int, names: Any,
    ) -> None:
        y = check_targets(y, n_rows)
        model = self._new_model(n_features)
        model = self._fit_passes(model, matrix, y, sample_weight, n_rows)
        self._install(_model=model, n_features_in_=n_features, feature_names_in_=names)

    @overload
    def partial_fit(
        self, X: MatrixLike, y: ArrayLike, sample_weight: SampleWeight = None, *,
        return_scores: Literal[False] = False,
    ) -> Self: ...

    @overload
    def partial_fit(
        self, X: MatrixLike, y: ArrayLike, sample_weight: SampleWeight = None, *,
        return_scores: Literal[True],
    ) -> tuple[Self, Float64Array, Optional[Float64Array]]: ...

    def partial_fit(
        self, X: MatrixLike, y: ArrayLike, sample_weight: SampleWeight = None, *,
        return_scores: bool = False,
    ) -> Union[Self, tuple[Self, Float64Array, Optional[Float64Array]]]:
        """Learns the rows of X once, in order, continuing from the current state. A few rows
        of float64 (shape (n, n_features), C order, n ≤ 64) with finite numeric targets take a
        lean path (`_cwrs.Model.learn_lean`) that skips the batch machinery; the result is the
        same.

        With `return_scores=True` it returns `(self, scores, variances)`: what the model
        predicted of each row just before learning it (progressive validation). `scores` is
        what `predict` gave that row at that moment, bit for bit; `variances` is xᵀΣx of the
        row under the covariance of that moment (without the noise variance r), or None for a
        first-order learner. The model learned is the same."""
        if return_scores:
            return self._serialized_partial_fit(X, y, sample_weight, True)
        lean = self._lean
        if sample_weight is None and lean is not None:
            learn = lean.learn  # loaded from its slot: `lean.learn(...)` is a slower method lookup
            if learn(X, y, None, self._check_params_if_changed):
                return self
        return self._serialized_partial_fit(X, y, sample_weight, False)

    def _partial_fit(
        self, X: MatrixLike, y: ArrayLike, sample_weight: SampleWeight, return_scores: bool,
        first_call: bool,
    ) -> Any:
        names = feature_names(X) if first_call else None
        matrix, n_rows, n_features = check_X(X)
        y = check_targets(y, n_rows)
        if first_call:
            check_pass_params(self)
            model = self._new_model(n_features)
        else:
            model, _, n_features_in, _, fitted_names = self._fitted_state()
            check_feature_names(type(self).__name__, fitted_names, X)
            self._check_params_if_changed()
            self._check_n_features(n_features, n_features_in)
        weights = check_sample_weight(sample_weight, n_rows)
        scores = self._learn(model, matrix, y, weights, False, return_scores)
        if first_call:
            self._install(_model=model, n_features_in_=n_features, feature_names_in_=names)
        else:
            self._reenable_lean(model)
        return (self, *scores) if return_scores else self

    def predict(self, X: MatrixLike) -> Float64Array:
        """The mean prediction μ·x (+ intercept); ±inf where it overflows float64."""
        lean = self._lean
        values = None if lean is None else (predict := lean.decision)(X)
        return values if values is not None else self._checked_scores(X, "predict")

    def score(
        self, X: MatrixLike, y: ArrayLike, sample_weight: SampleWeight = None
    ) -> float:
        """Coefficient of determination R² of `predict(X)` against y."""
        predicted = self.predict(X)
        y = check_targets(y, predicted.shape[0])
        residual = np.average((y - predicted) ** 2, weights=sample_weight)
        spread = np.average((y - np.average(y, weights=sample_weight)) ** 2, weights=sample_weight)
        if spread == 0:
            return 1.0 if residual == 0 else 0.0
        return float(1.0 - residual / spread)

    @property
    def coef_(self) -> Float64Array:
        """Mean weight vector, shape (n_features,)."""
        return self._fitted_model().mean[: self.n_features_in_]

    @property
    def intercept_(self) -> Float64Array:
        """Bias weight, shape (1,); 0 when `fit_intercept=False`."""
        bias = self._fitted_model().mean[self.n_features_in_ :]
        return bias if bias.shape[0] else np.zeros(1)


class ConfidenceWeightedRegressor(Regressor):
    """Base of the second-order regressors: a Gaussian N(μ, Σ) over weight vectors."""

    r: Union[float, Literal["auto"]]

    @overload
    def predict(self, X: MatrixLike, return_std: Literal[False] = ...) -> Float64Array: ...
    @overload
    def predict(
        self, X: MatrixLike, return_std: Literal[True]
    ) -> tuple[Float64Array, Float64Array]: ...
    def predict(
        self, X: MatrixLike, return_std: bool = False
    ) -> Union[Float64Array, tuple[Float64Array, Float64Array]]:
        """The mean prediction μ·x; with `return_std=True` also the predictive standard
        deviation √(xᵀΣx + r): the spread of the weights' prediction plus the noise variance r
        of the model (exact for AROW regression, which is Bayesian linear regression with prior
        N(0, a·I) and noise variance r). With a constant `process_noise` q it is the Kalman
        filter's one-step-ahead √(xᵀ(Σ + q·I)x + r), the bias coordinate included in x. With
        `r="auto"` it is √(σ̂²·(xᵀΣx + 1)): the normal-inverse-gamma model, whose Σ is in units
        of the noise variance σ², with σ̂² (`noise_variance_`) learned from the residuals. The
        fitted model's setting counts, whatever `set_params` said since."""
        model = self._fitted_model()
        matrix = self._check_X_for(X)
        mean = refuse_overflow(model.decision_function(matrix), "predict")
        if not return_std:
            return mean
        return mean, np.sqrt(model.predictive_variance(matrix))

    @property
    def noise_variance_(self) -> float:
        """The noise variance of the targets learned from the residuals: σ̂² = r·mean of
        e²/(xᵀΣx + r) over the rows learned, e each row's residual just before it was learned
        (with a weak prior of one row at σ² = r). `predict(X, return_std=True)` uses it with
        `r="auto"`; with a fixed r it shows how far r is from the stream's noise."""
        return self._fitted_model().noise_variance

    @property
    def prior_variance_(self) -> float:
        """The prior variance a of the feature weights the model is under: with `a="auto"`, the
        value learned from the stream by maximizing the evidence (MacKay's fixed point
        a = ‖μ‖²/(σ̂²/r·γ), γ = Σ_j (1 − Σ_jj/a) over the features, re-estimated after rows
        2^k·(n_features + 1)); otherwise the a given. Like a, it is in units of r (with
        `r="auto"`, of σ²): the weights' prior variance is σ̂²/r·a. The intercept keeps a = 1."""
        model = self._fitted_model()
        learned = model.prior_variance
        return float(model.config["a"]) if learned is None else float(learned)

    @property
    def covariance_(self) -> Float64Array:
        """The covariance over the features (the bias coordinate left out): shape
        (n_features, n_features) for `covariance="full"`, (n_features,) for "diag", and for
        "lowrank" its factors (1 + 2·rank, n_features): the variances S, then the sketch B, with
        Σ = (diag(1/S) + BᵀB)⁻¹ over features and bias."""
        model = self._fitted_model()
        return feature_block(model.covariance[None, :], model, self.n_features_in_)[0]

    def covariance_matrix(self) -> Float64Array:
        """Σ over the features (bias left out) as a dense (n_features, n_features) matrix,
        whatever the covariance form (for "lowrank", (diag(1/S) + BᵀB)⁻¹: O(d²) memory)."""
        return dense_covariances(self._fitted_model(), self.n_features_in_)[0]
