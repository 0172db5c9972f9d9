"""The classifier bases: `Classifier` (every online linear classifier: labels, learning,
prediction, fitted attributes) and `ConfidenceWeightedClassifier` (the second-order ones, with
probabilities and the covariance from the Gaussian over weights). The learners are in
`cwrs._classifiers` and `cwrs._catalog`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, Optional, Union, overload

import numpy as np
import numpy.typing as npt

from . import _cwrs
from ._estimator import Estimator, dense_covariances, feature_block, l1_config, native_config
from ._kernel import CallableKernel, RandomFourierFeatures
from ._params import (
    average_start,
    check_class_weight,
    check_n_components,
    check_pass_params,
    covariance_config,
    kernel_spec,
    l1_spec,
    model_args,
    process_noise_spec,
    resolve_gamma,
    store_params,
)
from ._validation import (
    MAX_WEIGHT,
    check_feature_names,
    check_labels,
    check_sample_weight,
    check_X,
    classes_of,
    feature_names,
    lists_classes,
    mapped_rows,
    refuse_overflow,
    warn_if_regression_like,
)

if TYPE_CHECKING:
    from typing_extensions import Self, Unpack

    from ._typing import (
        ArrayLike,
        ClassifierParams,
        Float64Array,
        MatrixLike,
        SampleWeight,
        SecondOrderClassifierParams,
    )


class Classifier(Estimator):
    """Base of all online linear classifiers (`isinstance(est, cwrs.Classifier)`); not used
    directly: each learner (`cwrs.AROW`, ...) sets its rule and documents its hyper-parameters.

    With two classes the model is the binary learner of the papers (labels ±1, `classes_[1]`
    positive); with more it keeps one Gaussian per class (`multi_class="max-score"`, the
    single-constraint update of docs/design.md §4, or `"ovr"`, one binary problem per class).

    The scikit-learn estimator API, duck-typed (scikit-learn is not needed at run time):
    `partial_fit(X, y, classes=None, sample_weight=None)` (classes on the first call) learns a
    stream, `fit(X, y)` forgets and makes `n_iter` passes; `predict`, `decision_function`,
    `score`, `get_params`/`set_params`; second-order learners (`ConfidenceWeightedClassifier`)
    add `predict_proba` (the Gaussian over weights with the label noise learned from the
    stream) and `predict_posterior_proba`. X is a dense array-like or a SciPy CSR/CSC
    matrix; class labels are all numbers (bool, int or whole floats), all strings or all bytes.
    Pickling round-trips exactly.
    """

    _rule_kind = "classification"

    if TYPE_CHECKING:  # set by fit and the first partial_fit
        classes_: npt.NDArray[Any]
        _sparse_input: bool

    # The parameters of a first-order learner whose rule has none (`_params.store_params`).
    def __init__(self, **params: Unpack[ClassifierParams]) -> None:
        store_params(self, locals())

    def _plain_predict(self) -> bool:
        return type(self).decision_function is Classifier.decision_function

    def __sklearn_tags__(self):
        from sklearn.utils import ClassifierTags, InputTags, Tags, TargetTags

        return Tags(
            estimator_type="classifier",
            target_tags=TargetTags(required=True),
            classifier_tags=ClassifierTags(multi_class=True),
            input_tags=InputTags(sparse=True),
        )

    def _new_model(self, n_classes, n_features, sparse):
        """The native model for `n_classes` and the feature map in front of it (or None);
        `sparse` tells whether the training input is sparse."""
        config, custom = self._checked_config(n_classes, n_features, sparse)
        feature_map = None
        if self.kernel_approximation is not None:
            gamma = resolve_gamma(self.gamma, n_features)
            feature_map = RandomFourierFeatures(
                gamma, config["n_features"], n_features, self.random_state
            )
        return _cwrs.Model(config, **custom), feature_map

    def _model_config(self, n_classes, n_features, sparse):
        """The configuration of the native model for `n_classes` and `n_features` (its width
        is `n_components` with `kernel_approximation`), and the callable kernel passed with it
        (`_checked_config`)."""
        params, covariance, a, fit_intercept = model_args(self)
        width = n_features
        if self.kernel_approximation is not None:
            width = check_n_components(self.n_components)
        kernel = kernel_spec(self, n_classes, n_features)
        if kernel is not None:
            built_in = isinstance(kernel.kernel, str)
            gamma, degree, coef0 = kernel.params
            config = native_config(
                "kernel" if n_classes == 2 else "multiclass_kernel", self._rule, params,
                width, fit_intercept, a, kernel=kernel.kernel if built_in else None,
                gamma=gamma, degree=degree, coef0=coef0, budget=kernel.budget,
                strategy=self.multi_class, n_classes=n_classes, average=average_start(self),
                **l1_config(l1_spec(self)), **self._rule_config(),
            )
            # A callable kernel is passed on its own: it is code, not configuration.
            custom = {} if built_in else {"kernel": CallableKernel(kernel.kernel, sparse)}
            return config, custom
        shape = {} if n_classes == 2 else {"strategy": self.multi_class, "n_classes": n_classes}
        config = native_config(
            "binary" if n_classes == 2 else "multiclass", self._rule, params, width,
            fit_intercept, a, **covariance_config(self, covariance), **l1_config(l1_spec(self)),
            **shape, **self._rule_config(), average=average_start(self),
            process_noise=process_noise_spec(self),
        )
        return config, {}

    def _rule_config(self):
        """Configuration entries of the rule beyond its numbers (OGD's `loss`), checked."""
        return {}

    def _lean_targets(self, model):
        """label -> native target, for the lean paths of a primal model."""
        classes = self.classes_.tolist()  # Python values: NumPy scalars compare slowly
        if model.kind == "binary":
            return {classes[0]: -1.0, classes[1]: 1.0}
        return {label: float(k) for k, label in enumerate(classes)}  # a float: the fast extraction

    def _targets(self, model, y, classes, from_y=False):
        """Labels as the native model takes them: ±1 (binary) or class indices. `from_y`: the
        classes were taken from y, so every label is among them."""
        if from_y and model.kind == "binary":
            return np.where(y == classes[1], 1.0, -1.0)
        index = np.searchsorted(classes, y)
        known = index < classes.shape[0]
        known[known] = classes[index[known]] == y[known]
        if not known.all():
            unknown = np.unique(y[~known]).tolist()
            raise ValueError(f"y contains labels {unknown} that are not in classes {classes}")
        if model.n_classes is not None:
            return index.astype(np.int64)
        return np.where(index == 1, 1.0, -1.0)

    # ----------------------------------------------------------------- learning
    def _class_weighted(self, sample_weight, targets, classes, n_rows):
        """The rows' weights (None: all 1) and whether the model also weighs them by its
        running class counts: `sample_weight` times the weight of each row's class for a
        `class_weight` dict (classes it leaves out weigh 1), or with "balanced" the counts'
        weights, which the model computes (docs/design.md §2.10)."""
        weights = check_sample_weight(sample_weight, n_rows)
        class_weight = check_class_weight(self)
        if class_weight is None or isinstance(class_weight, str):
            return weights, class_weight is not None
        index = {label: k for k, label in enumerate(classes.tolist())}
        factors = np.ones(len(index))
        for label, weight in class_weight.items():
            k = index.get(label.item() if isinstance(label, np.generic) else label)
            if k is None:
                raise ValueError(
                    f"class_weight has a weight for {label!r}, which is not one of the classes "
                    f"{classes!r}"
                )
            factors[k] = weight
        rows = targets if targets.dtype == np.int64 else (targets > 0).astype(np.intp)
        weighted = factors[rows] if weights is None else weights * factors[rows]
        if (weighted > MAX_WEIGHT).any():
            i = int(np.argmax(weighted > MAX_WEIGHT))
            raise ValueError(
                f"row {i}'s weight, its sample_weight times class_weight[{classes[rows[i]]!r}], "
                f"is {float(weighted[i])}: past 2**64, the largest weight a row takes"
            )
        return weighted, False

    def _fit(
        self, y: ArrayLike, sample_weight: SampleWeight, matrix: Any, n_rows: int,
        n_features: int, names: Any,
    ) -> None:
        y = check_labels(y, n_rows)
        classes = classes_of(y)
        warn_if_regression_like(y, classes, exact=True)
        model, feature_map = self._new_model(classes.shape[0], n_features, isinstance(matrix, tuple))
        targets = self._targets(model, y, classes, from_y=True)
        weights, balanced = self._class_weighted(sample_weight, targets, classes, n_rows)
        matrix = mapped_rows(matrix, n_rows, feature_map, scanned=False)
        model = self._fit_passes(model, matrix, targets, weights, n_rows, balanced)
        self._install(
            _model=model, _feature_map=feature_map, classes_=classes, n_features_in_=n_features,
            _sparse_input=isinstance(matrix, tuple), feature_names_in_=names,
        )

    @overload
    def partial_fit(
        self, X: MatrixLike, y: ArrayLike, classes: Optional[ArrayLike] = None,
        sample_weight: SampleWeight = None, *, return_scores: Literal[False] = False,
    ) -> Self: ...

    @overload
    def partial_fit(
        self, X: MatrixLike, y: ArrayLike, classes: Optional[ArrayLike] = None,
        sample_weight: SampleWeight = None, *, return_scores: Literal[True],
    ) -> tuple[Self, Float64Array, Optional[Float64Array]]: ...

    def partial_fit(
        self,
        X: MatrixLike,
        y: ArrayLike,
        classes: Optional[ArrayLike] = None,
        sample_weight: SampleWeight = None,
        *,
        return_scores: bool = False,
    ) -> Union[Self, tuple[Self, Float64Array, Optional[Float64Array]]]:
        """Learns the rows of X once, in order, continuing from the current state.

        `classes` (every label the stream will hold) is required on the first call. A few rows
        of float64 (shape (n, n_features), C order, n ≤ 64) with known labels take a lean path
        (`_cwrs.Model.learn_lean`) that skips the batch machinery; the result is the same.

        With `return_scores=True` it returns `(self, scores, variances)`: what the model
        predicted of each row just before learning it (progressive validation). `scores` is
        what `decision_function` gave that row at that moment, bit for bit (shape (n,) for two
        classes, else (n, n_classes)); `variances` is xᵀΣx of the row under the covariance of
        that moment (per class for more classes), or None for a first-order learner. A score
        with no value (inf − inf) is NaN. The model learned is the same.
        """
        if return_scores:
            return self._serialized_partial_fit(X, y, classes, sample_weight, True)
        lean = self._lean
        if lean is not None and sample_weight is None and (
            classes is None or lists_classes(classes, lean.class_list)
        ):
            learn = lean.learn  # loaded from its slot: `lean.learn(...)` is a slower method lookup
            if learn(X, y, lean.targets, self._check_params_if_changed):
                return self
        return self._serialized_partial_fit(X, y, classes, sample_weight, False)

    def _partial_fit(self, X, y, classes, sample_weight, return_scores, first_call):
        names = feature_names(X) if first_call else None
        matrix, n_rows, n_features = check_X(X)
        y = check_labels(y, n_rows)
        if first_call:
            if classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit.")
            check_pass_params(self)
            known = classes_of(check_labels(classes, None, "classes"))
            warn_if_regression_like(y, known)
            model, feature_map = self._new_model(
                known.shape[0], n_features, isinstance(matrix, tuple)
            )
        else:
            model, feature_map, n_features_in, known, fitted_names = self._fitted_state()
            check_feature_names(type(self).__name__, fitted_names, X)
            self._check_params_if_changed()
            if (
                classes is not None
                and not lists_classes(classes, known.tolist())
                and not np.array_equal(np.unique(check_labels(classes, None, "classes")), known)
            ):
                raise ValueError(
                    f"classes={np.unique(classes)!r} is not the same as on the first call to "
                    f"partial_fit, classes_={known!r}."
                )
            self._check_n_features(n_features, n_features_in)
        targets = self._targets(model, y, known)
        weights, balanced = self._class_weighted(sample_weight, targets, known, n_rows)
        matrix = mapped_rows(matrix, n_rows, feature_map, scanned=True)
        scores = self._learn(model, matrix, targets, weights, balanced, return_scores)
        if first_call:
            self._install(
                _model=model, _feature_map=feature_map, classes_=known, n_features_in_=n_features,
                _sparse_input=isinstance(matrix, tuple), feature_names_in_=names,
            )
        else:
            self._reenable_lean(model)
        return (self, *scores) if return_scores else self

    # ----------------------------------------------------------------- prediction
    def decision_function(self, X: MatrixLike) -> Float64Array:
        """Scores of the mean weights: μ·x (+ intercept), shape (n,) for two classes (positive
        means `classes_[1]`), else μ_k·x per class, shape (n, n_classes). A score that
        overflows float64 is ±inf; one whose terms overflow with both signs (inf − inf) raises
        `ValueError`."""
        lean = self._lean
        # The lean method is loaded from its slot: `lean.decision(X)` is a slower method lookup.
        scores = None if lean is None else (decide := lean.decision)(X)
        return scores if scores is not None else self._checked_scores(X, "decision_function")

    def predict(self, X: MatrixLike) -> npt.NDArray[Any]:
        """The class of highest mean score (for two classes: `classes_[1]` where μ·x > 0)."""
        lean = self._lean
        labels = (
            None if lean is None or lean.predict is None
            else (labels_of := lean.predict)(X, lean.classes, lean.class_rows)
        )
        if labels is not None:
            return labels
        scores = self.decision_function(X)
        best = (scores > 0).astype(np.intp) if scores.ndim == 1 else scores.argmax(axis=1)
        return self.classes_[best]

    def score(
        self, X: MatrixLike, y: ArrayLike, sample_weight: SampleWeight = None
    ) -> float:
        """Mean accuracy of `predict(X)` against y (weighted by sample_weight if given)."""
        predicted = self.predict(X)
        correct = predicted == check_labels(y, predicted.shape[0])
        return float(np.average(correct, weights=sample_weight))

    # ----------------------------------------------------------------- fitted attributes
    def _weights(self):
        """The fitted means as rows × (model features + bias)."""
        model = self._fitted_model()
        if model.kind == "multiclass":
            return model.mean
        if model.kind == "multiclass_kernel":
            raise AttributeError("a multiclass kernel learner has no coef_")
        if model.kind == "kernel":
            config = model.config
            kernel, fit_intercept = config["kernel"], config["fit_intercept"]
            if kernel != "linear":
                raise AttributeError("coef_ is only defined without a kernel or with kernel='linear'")
            weights = model.dual_coef @ self.support_vectors_
            bias = [model.dual_coef.sum()] if fit_intercept else []
            return np.concatenate([np.ravel(weights), bias])[None, :]
        return model.mean[None, :]

    def _n_weights(self):
        """Number of feature weights (random features with kernel_approximation)."""
        feature_map = self._feature_map
        return self.n_features_in_ if feature_map is None else feature_map.weights.shape[1]

    @property
    def coef_(self) -> Float64Array:
        """Mean weight vectors, shape (1, n_features) for two classes, else
        (n_classes, n_features) (over the random features with kernel_approximation)."""
        return self._weights()[:, : self._n_weights()]

    @property
    def intercept_(self) -> Float64Array:
        """Bias weights, shape (1,) or (n_classes,); 0 when `fit_intercept=False`."""
        weights = self._weights()
        if weights.shape[1] > self._n_weights():
            return weights[:, self._n_weights()]
        return np.zeros(weights.shape[0])

    def _kernel_model(self):
        model = self._fitted_model()
        if model.kind != "kernel":
            raise AttributeError("only binary kernel learners (kernel=...) have one support set")
        return model

    @property
    def n_support_(self) -> int:
        """Number of support rows of a kernel learner (summed over the classes' support sets
        for more than two classes)."""
        model = self._fitted_model()
        if model.kind == "multiclass_kernel":
            return int(model.n_support.sum())
        return self._kernel_model().n_support

    @property
    def support_vectors_(self) -> Any:
        """The support rows of a kernel learner: a CSR matrix if it was fitted on sparse input,
        else a dense array, shape (`n_support_`, n_features)."""
        rows = self._kernel_model().support_vectors
        data, indices, indptr = rows["values"], rows["indices"], rows["indptr"]
        indices, indptr = indices.astype(np.int64), indptr.astype(np.int64)
        shape = (indptr.shape[0] - 1, self.n_features_in_)
        if self._sparse_input:
            import scipy.sparse

            return scipy.sparse.csr_matrix((data, indices, indptr), shape=shape)
        dense = np.zeros(shape)
        rows = np.repeat(np.arange(shape[0]), np.diff(indptr))
        dense[rows, indices] = data
        return dense

    @property
    def dual_coef_(self) -> Float64Array:
        """Mean coefficients ν of a binary kernel learner, one per support row (μ = Σ_p ν_p
        φ(x_p)), shape (1, `n_support_`) as in scikit-learn's SVC."""
        return self._kernel_model().dual_coef[None, :]

    @property
    def n_mistakes_(self) -> int:
        """Rounds whose label did not score strictly best before learning (binary: y·f ≤ 0),
        over everything seen."""
        return self._fitted_model().n_mistakes

    @property
    def class_counts_(self) -> Float64Array:
        """The total sample weight of each class (in `classes_` order; a row without one counts
        1) that `class_weight="balanced"` has counted, over everything seen; empty until a
        balanced call."""
        return np.ravel(self._fitted_model().class_counts)  # one value per class, not a row each


def _both_classes(probabilities: Float64Array) -> Float64Array:
    """A binary model's P(classes_[1]) as both columns [1 − p, p]; more classes as they are."""
    if probabilities.ndim == 2:
        return probabilities
    both = np.empty((probabilities.shape[0], 2))
    both[:, 1] = probabilities
    np.subtract(1.0, probabilities, out=both[:, 0])
    return both


class ConfidenceWeightedClassifier(Classifier):
    """Base of the second-order classifiers: a Gaussian N(μ, Σ) over weight vectors."""

    a: float
    _second_order = True

    # The parameters of a second-order learner whose rule has none (`_params.store_params`).
    def __init__(self, **params: Unpack[SecondOrderClassifierParams]) -> None:
        store_params(self, locals())

    def predict_proba(self, X: MatrixLike) -> Float64Array:
        """Predictive class probabilities: the Gaussian over weights and the label noise.

        Two classes: P(classes_[1] | x) = Φ(μ·x / √(xᵀΣx + s²)), the probability that the label
        is positive when it is the sign of the score of a weight vector drawn from N(μ, Σ) plus
        a Gaussian label noise of variance s² (`noise_variance_`), learned from the stream: the
        maximum-likelihood s² of each row's margin and variance just before the row was learned
        (the probit model; docs/design.md §3.14). It has the sign of `decision_function`
        (> 1/2 exactly where μ·x > 0). More classes: the probability that class k scores
        highest when the class scores are independent Gaussians N(μ_k·x, σ² + s²), σ² the mean
        of the classes' xᵀΣ_k x (by quadrature), which ranks the classes exactly as
        `decision_function` does. `predict_posterior_proba` gives the probabilities without
        the label noise.
        """
        lean = self._lean
        both = None if lean is None else (probabilities := lean.proba)(X)
        if both is not None:
            return both
        model, rows = self._model_and_rows(X)
        return _both_classes(refuse_overflow(model.probabilities(rows), "predict_proba"))

    def predict_posterior_proba(self, X: MatrixLike) -> Float64Array:
        """Class probabilities under the Gaussian over weights alone, without label noise.

        Two classes: P(classes_[1] | x) = Φ(μ·x / √(xᵀΣx)), the probability that a weight
        vector drawn from N(μ, Σ) puts x on the positive side: the model's uncertainty about
        its weights, not about the label. As Σ shrinks with the rows learned it goes to 0 or 1
        whatever the noise of the labels, so it is not a calibrated probability of the label
        (`predict_proba` is). More classes: as `predict_proba` with s² = 0.
        """
        model, rows = self._model_and_rows(X)
        probabilities = model.posterior_probabilities(rows)
        return _both_classes(refuse_overflow(probabilities, "predict_posterior_proba"))

    @property
    def noise_variance_(self) -> float:
        """s², the variance of the label noise in units of the margin μ·x that `predict_proba`
        adds to xᵀΣx: learned from the rows as they were learned, starting from 1."""
        return self._fitted_model().noise_variance

    def predict_log_proba(self, X: MatrixLike) -> Float64Array:
        """Logarithm of `predict_proba`."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    @property
    def covariance_(self) -> Float64Array:
        """The covariance over the features (the bias coordinate left out). Two classes: shape
        (n_features, n_features) for `covariance="full"`, (n_features,) for "diag", and for
        "lowrank" its factors (1 + 2·rank, n_features): the variances S, then the sketch B,
        with Σ = (diag(1/S) + BᵀB)⁻¹ over features and bias (`covariance_matrix()` forms it);
        more classes: one such covariance per class, stacked on a first axis."""
        model = self._fitted_model()
        if model.kind in ("kernel", "multiclass_kernel"):
            raise AttributeError("a kernel learner keeps its covariance in the dual form")
        if model.kind == "binary":
            return feature_block(model.covariance[None, :], model, self._n_weights())[0]
        return feature_block(model.covariance, model, self._n_weights())

    def covariance_matrix(self) -> Float64Array:
        """Σ over the features (bias left out) as a dense matrix, whatever the covariance form:
        shape (n_features, n_features), or one per class stacked on a first axis with more than
        two classes. For `covariance="lowrank"` this forms (diag(1/S) + BᵀB)⁻¹: O(d²) memory."""
        self.covariance_  # the same refusals (kernel learners)
        model = self._fitted_model()
        dense = dense_covariances(model, self._n_weights())
        return dense if model.kind == "multiclass" else dense[0]
