"""The scikit-learn-style estimator machinery shared by every binary learner.

Duck-typed: scikit-learn is not needed at run time. The math lives in the Rust core
(`cwrs._cwrs.BinaryModel`); this layer validates, maps labels to ±1 and exposes fitted
attributes.
"""

from __future__ import annotations

import inspect
import numbers

import numpy as np

from ._cwrs import BinaryModel
from ._validation import (
    not_fitted_error,
    check_labels,
    check_sample_weight,
    check_X,
    column_or_1d,
)


class BinaryClassifier:
    """Base of all binary online linear classifiers.

    Subclasses set `_rule` (the Rust rule name) and `_rule_params` (the hyper-parameters the rule
    takes) and define `__init__` with their keyword hyper-parameters.
    """

    _rule: str
    _rule_params: tuple = ()
    _second_order = False

    # ----------------------------------------------------------------- scikit-learn plumbing
    @classmethod
    def _get_param_names(cls):
        signature = inspect.signature(cls.__init__)
        return sorted(p.name for p in signature.parameters.values() if p.name != "self")

    def get_params(self, deep=True):
        """The hyper-parameters, as passed to `__init__`."""
        return {name: getattr(self, name) for name in self._get_param_names()}

    def set_params(self, **params):
        """Sets hyper-parameters; they take effect at the next `fit` (or a new `partial_fit`)."""
        valid = self._get_param_names()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(
                    f"Invalid parameter {name!r} for estimator {type(self).__name__}. "
                    f"Valid parameters are: {valid!r}."
                )
            setattr(self, name, value)
        return self

    def __repr__(self):
        defaults = {
            p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values()
        }
        changed = [
            f"{name}={value!r}"
            for name, value in self.get_params().items()
            if not (value is defaults.get(name) or _same(value, defaults.get(name)))
        ]
        return f"{type(self).__name__}({', '.join(changed)})"

    def __sklearn_tags__(self):
        from sklearn.utils import ClassifierTags, InputTags, Tags, TargetTags

        return Tags(
            estimator_type="classifier",
            target_tags=TargetTags(required=True),
            classifier_tags=ClassifierTags(multi_class=False),
            input_tags=InputTags(sparse=True),
        )

    def __sklearn_is_fitted__(self):
        return hasattr(self, "_model")

    def __getstate__(self):
        state = self.__dict__.copy()
        if "_model" in state:
            state["_model"] = state["_model"].state()
        return state

    def __setstate__(self, state):
        if "_model" in state:
            state["_model"] = BinaryModel.from_state(*state["_model"])
        self.__dict__.update(state)

    # ----------------------------------------------------------------- model construction
    def _new_model(self, n_features):
        if not isinstance(self.fit_intercept, (bool, np.bool_)):
            raise ValueError(f"fit_intercept must be True or False, got {self.fit_intercept!r}")
        params = [(name, _as_float(name, getattr(self, name))) for name in self._rule_params]
        if self._second_order:
            covariance, a = self.covariance, _as_float("a", self.a)
            if not isinstance(covariance, str):
                raise ValueError(f'covariance must be "diag" or "full", got {covariance!r}')
        else:
            covariance, a = "identity", 1.0
        return BinaryModel(self._rule, params, covariance, n_features, bool(self.fit_intercept), a)

    def _fitted_model(self):
        try:
            return self._model
        except AttributeError:
            raise not_fitted_error(
                f"This {type(self).__name__} instance is not fitted yet. Call 'fit' or "
                "'partial_fit' with appropriate arguments before using this estimator."
            ) from None

    def _check_n_features(self, n_features):
        if n_features != self.n_features_in_:
            raise ValueError(
                f"X has {n_features} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input."
            )

    def _check_X_for(self, X):
        """X validated against the fitted number of features."""
        self._fitted_model()
        matrix, _, n_features = check_X(X)
        self._check_n_features(n_features)
        return matrix

    def _signed_labels(self, y, classes):
        positive = y == classes[1]
        if not (positive | (y == classes[0])).all():
            unknown = [label for label in np.unique(y) if label not in set(classes.tolist())]
            raise ValueError(f"y contains labels {unknown} that are not in classes {classes}")
        return np.where(positive, 1.0, -1.0)

    # ----------------------------------------------------------------- learning
    def fit(self, X, y, sample_weight=None):
        """Forgets any previous state and learns `n_iter` passes over the rows of X in order
        (or in a fresh random order per pass when `shuffle=True`)."""
        matrix, n_rows, n_features = check_X(X)
        y = check_labels(y, n_rows)
        classes = _binary_classes(y)
        signed = self._signed_labels(y, classes)
        repeats = check_sample_weight(sample_weight, n_rows)
        if repeats is not None and not repeats.any():
            raise ValueError("sample_weight is all zero: fit would learn nothing")
        n_iter = self.n_iter
        if not isinstance(n_iter, numbers.Integral) or isinstance(n_iter, bool) or n_iter < 1:
            raise ValueError(f"n_iter must be a positive integer, got {n_iter!r}")
        model = self._new_model(n_features)
        rng = None
        if self.shuffle:
            rng = (
                self.random_state
                if isinstance(self.random_state, (np.random.RandomState, np.random.Generator))
                else np.random.RandomState(self.random_state)
            )
        for _ in range(n_iter):
            order = None if rng is None else rng.permutation(n_rows).astype(np.int64)
            model.partial_fit(matrix, signed, repeats, order)
        self._model, self.classes_, self.n_features_in_ = model, classes, n_features
        return self

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Learns the rows of X once, in order, continuing from the current state.

        `classes` (the two labels) is required on the first call.
        """
        matrix, n_rows, n_features = check_X(X)
        y = check_labels(y, n_rows)
        first_call = not hasattr(self, "_model")
        if first_call:
            if classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit.")
            known = _binary_classes(column_or_1d(classes, "classes"))
            model = self._new_model(n_features)
        else:
            known = self.classes_
            if classes is not None and not np.array_equal(np.unique(classes), known):
                raise ValueError(
                    f"classes={np.unique(classes)!r} is not the same as on the first call to "
                    f"partial_fit, classes_={known!r}."
                )
            self._check_n_features(n_features)
            model = self._model
        signed = self._signed_labels(y, known)
        model.partial_fit(matrix, signed, check_sample_weight(sample_weight, n_rows))
        if first_call:
            self._model, self.classes_, self.n_features_in_ = model, known, n_features
        return self

    # ----------------------------------------------------------------- prediction
    def decision_function(self, X):
        """The mean margin μ·x (+ intercept) for each row: positive means `classes_[1]`."""
        return self._fitted_model().decision_function(self._check_X_for(X))

    def predict(self, X):
        """The label of the mean weight vector's side: `classes_[1]` where μ·x > 0."""
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(np.intp)]

    def score(self, X, y, sample_weight=None):
        """Mean accuracy of `predict(X)` against y (weighted by sample_weight if given)."""
        correct = self.predict(X) == column_or_1d(y)
        return float(np.average(correct, weights=sample_weight))

    # ----------------------------------------------------------------- fitted attributes
    @property
    def coef_(self):
        """Mean weight vector, shape (1, n_features)."""
        return self._fitted_model().mean[None, : self.n_features_in_]

    @property
    def intercept_(self):
        """Bias weight, shape (1,); 0 when `fit_intercept=False`."""
        bias = self._fitted_model().mean[self.n_features_in_ :]
        return bias if bias.shape[0] else np.zeros(1)

    @property
    def n_updates_(self):
        """Rounds whose update changed the model, over everything seen."""
        return self._fitted_model().n_updates

    @property
    def n_mistakes_(self):
        """Rounds with y·f(x) ≤ 0 before learning, over everything seen."""
        return self._fitted_model().n_mistakes


class ConfidenceWeightedClassifier(BinaryClassifier):
    """Base of the second-order learners: a Gaussian N(μ, Σ) over weight vectors."""

    _second_order = True

    def predict_proba(self, X):
        """P(y | x) under the Gaussian over weights: P(classes_[1] | x) = Φ(μ·x / √(xᵀΣx)).

        This is the probability that a weight vector drawn from N(μ, Σ) puts x on the positive
        side. It has the sign of `decision_function` (> 1/2 exactly where μ·x > 0), but it is not
        a monotone function of it across rows: a row whose margin is uncertain (large xᵀΣx) gets
        a probability closer to 1/2.
        """
        positive = self._fitted_model().positive_probability(self._check_X_for(X))
        return np.column_stack([1.0 - positive, positive])

    def predict_log_proba(self, X):
        """Logarithm of `predict_proba`."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    @property
    def covariance_(self):
        """The covariance over the features (the bias coordinate left out): shape
        (n_features, n_features) for `covariance="full"`, (n_features,) for "diag"."""
        model = self._fitted_model()
        values, dim, d = model.covariance, model.mean.shape[0], self.n_features_in_
        if model.covariance_kind == "diag":
            return values[:d]
        return values.reshape(dim, dim)[:d, :d]


def _binary_classes(y):
    classes = np.unique(y)
    if classes.shape[0] < 2:
        raise ValueError(
            f"Classifier can't train when only one class is present (got one class: "
            f"{classes.tolist()}); it needs two classes."
        )
    if classes.shape[0] > 2:
        raise ValueError(
            "Only binary classification is supported. The type of the target is multiclass "
            f"({classes.shape[0]} classes)."
        )
    return classes


def _as_float(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    return float(value)


def _same(a, b):
    try:
        return bool(a == b) and type(a) is type(b)
    except (TypeError, ValueError):
        return False
