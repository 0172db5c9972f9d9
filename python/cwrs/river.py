"""river adapter: any cwrs learner as a river estimator, on dict rows whose features appear as
the stream goes (the `river` extra; this module imports without river too).

    >>> from river import datasets, evaluate, metrics
    >>> import cwrs
    >>> from cwrs.river import RiverClassifier
    >>> model = RiverClassifier(cwrs.AROW(r=0.5))
    >>> evaluate.progressive_val_score(datasets.Phishing(), model, metrics.Accuracy())

Design
------
Feature names (any hashable keys) get columns in the order in which they first appear with a
non-zero value. The cwrs model has a fixed width, so it is made `capacity` columns wide and,
when a row brings more features than that, rebuilt twice as wide (or wider) from its own state:
each new column gets mean 0 and variance `a` (Σ₀ = a·I), uncorrelated with the others. This is
exact, not an approximation: a feature never seen so far has exactly that mean and variance in a
model created wide enough from the start (any primal covariance form, the low-rank sketch with a
zero column for it, AdaGrad's and FTRL's sums at 0; with or without an L1 penalty or averaging,
whose sums hold 0 for it), so growing mid-stream gives the same model as a wide model would.
With a constant `process_noise` q > 0 the new columns start at variance a + q·t after t rows:
under the random walk every weight, seen or not, has drifted for t rounds (an unseen feature has
had no evidence to shrink its variance, not a shorter walk), and a wide model's never-seen
column holds exactly that, so the capacity still does not change the model (docs/design.md
§10.4). A string value v of feature f is the one-hot feature (f, v) with value 1.

At prediction time a feature never seen in training has weight 0 and is left out of the score.
Binary second-order learners still count its prior variance (a + q·t)·x_f² in
`predict_proba_one` (exactly as the wide model would); multiclass probabilities leave it out.

Labels are any hashable values equal to themselves (a NaN label is refused). With
`classes=None` the classes are learned as they arrive. river's binary classifiers take bool
labels, and so does this one: before any row, and from a first bool label on, its classes are
[False, True] (True positive) and `predict_proba_one` returns both keys, as river's checks
expect. Otherwise the first two labels seen are the classes of a binary model (the first is the
negative class, y = −1). It learns from the first row on; until a second label has been seen
`predict_one` returns the only label seen. A third label grows the model to one-vs-rest
(`estimator_.multi_class` becomes "ovr", whatever the template's): the binary model is exactly
the two-class one-vs-rest model (class 1 is it, class 0 its mirror image −μ with the same
covariance, which one-vs-rest's class 0 would have learned from the same rows), and every new
class starts at the prior of a never-seen weight, mean 0 and covariance (a + q·t)·I after t
rows (a with q = 0 or "auto"), and learns from its first row on (an averaged model averages
its mean over every row, 0 before its first). It has not learned the earlier rows, which a model
with the class from the start would have learned as negatives (they are not kept, so that is not
recoverable); the earlier classes are exactly what that model holds, except for ALMA, ROMMA and
IELLIP, whose steps read counters the classes share. Max-score cannot grow this way: its rival
may be a class no row has named, which then learns from every row, so a max-score model needs
its classes from the start. With `classes` given, every label must be one of them, and the
model is built with all of them (with `multi_class` as the template says). Before any row the
prediction is that of μ = 0: uniform probabilities, and the first class.

`predict_proba_one` is the predictive probability of second-order learners (their
`predict_proba`: Φ(μ·x/√(xᵀΣx + s²)) for two classes, s² the label noise they learn), else from
the scores: a logistic of the margin (two classes) or a softmax (more), which are not
calibrated probabilities.

Kernel learners (`kernel=...`, `kernel_approximation=...`) are not supported: their feature space
does not grow this way (for a stream of unbounded width use `cwrs.FeatureHasher` with a primal
learner).
"""

from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING, Any, Hashable, Optional, Sequence, cast

import numpy as np

from . import _cwrs
from ._classifier import Classifier, ConfidenceWeightedClassifier
from ._estimator import Estimator
from ._params import check_class_weight
from ._probability import score_probabilities
from ._validation import check_sample_weight
from ._regressor import Regressor

if TYPE_CHECKING:
    from river.base import Classifier as _RiverClassifierBase
    from river.base import Regressor as _RiverRegressorBase
else:
    try:  # a proper river estimator when river is installed
        from river.base import Classifier as _RiverClassifierBase
        from river.base import Regressor as _RiverRegressorBase
    except ImportError:  # pragma: no cover - exercised without river
        _RiverClassifierBase = _RiverRegressorBase = object

__all__ = ["RiverClassifier", "RiverRegressor"]

# river's binary classifiers take bool labels and give P(False) and P(True) from the start.
RIVER_BINARY_CLASSES = (False, True)

def _row_weight(w: Any) -> Any:
    """The weight `w` of a `learn_one` row as `partial_fit` takes it: None for 1 (river's
    default, the fast path), else a checked one-element array."""
    if type(w) in (int, float) and w == 1:
        return None
    return check_sample_weight([w], 1)


class _Adapter:
    """The growing feature map and the wrapped model, shared by the classifier and regressor."""

    estimator: Estimator
    capacity: int
    #: Rows learned (the rounds of process noise a never-seen feature has had).
    _rounds: int
    #: While a row is learned, once a grown model replaced them: the estimator's attributes
    #: before (see `_install`); otherwise this class default.
    _replaced: Optional[dict] = None

    def _setup(self, estimator: Estimator, capacity: int, kind: type) -> None:
        if not isinstance(estimator, kind):
            raise TypeError(
                f"{type(self).__name__} wraps a cwrs {kind.__name__}, got {estimator!r}"
            )
        if getattr(estimator, "kernel", None) is not None or (
            getattr(estimator, "kernel_approximation", None) is not None
        ):
            raise ValueError(
                "kernel learners cannot grow their feature space; use a primal learner (and "
                "cwrs.FeatureHasher for a feature space of unbounded width)"
            )
        if (
            isinstance(capacity, bool)
            or not isinstance(capacity, numbers.Integral)
            or capacity < 1
        ):
            raise ValueError(f"capacity must be a positive integer, got {capacity!r}")
        self.estimator = estimator
        self.capacity = capacity
        #: feature name -> column, in order of first appearance.
        self.feature_columns_: dict[Hashable, int] = {}
        #: The fitted cwrs estimator (a clone of `estimator`), None before the first row.
        self.estimator_: Optional[Estimator] = None
        self._rounds = 0

    @property
    def features_(self) -> list[Hashable]:
        """The feature names in column order (the columns of `estimator_.coef_`)."""
        return list(self.feature_columns_)

    # ------------------------------------------------------------------ rows
    @staticmethod
    def _items(x: dict[Hashable, Any]) -> list[tuple[Hashable, float]]:
        """(feature key, value) for the non-zero features of a row. A NaN or infinite value is
        refused, in learning and in prediction, whether the feature was seen or not (a missing
        value is a feature left out of the row, or None, as river's rows have it)."""
        items: list[tuple[Hashable, float]] = []
        for name, value in x.items():
            kind = type(value)
            if kind is float or kind is int:  # the common case first: no ABC check
                if value:
                    value = float(value)
                    if value - value:  # NaN or ±inf (a finite value gives 0.0): inline, hot
                        raise _not_finite(name, value)
                    items.append((name, value))
            elif kind is str:
                items.append(((name, value), 1.0))
            elif isinstance(value, numbers.Real):
                if value != 0:
                    value = float(value)
                    if not math.isfinite(value):
                        raise _not_finite(name, value)
                    items.append((name, value))
            elif value is not None:
                raise TypeError(f"feature {name!r} has a value of type {type(value).__name__}")
        return items

    def _learning_row(self, x: dict[Hashable, Any]) -> tuple[Any, ...]:
        """The row as CSR arrays, new features given columns (the model grown if needed)."""
        columns = self.feature_columns_
        values: dict[int, float] = {}
        for key, value in self._items(x):
            column = columns.setdefault(key, len(columns))
            values[column] = values.get(column, 0.0) + value
        if self.estimator_ is not None and len(columns) > self.estimator_.n_features_in_:
            self._grow(max(len(columns), 2 * self.estimator_.n_features_in_))
        return self._csr(values)

    def _predicting_row(self, x: dict[Hashable, Any]) -> tuple[tuple[Any, ...], float]:
        """The row as CSR arrays over the known features, and Σ value² of the unseen ones."""
        columns = self.feature_columns_
        values: dict[int, float] = {}
        unseen = 0.0
        for key, value in self._items(x):
            column = columns.get(key)
            if column is None:
                unseen += value * value
            else:
                values[column] = values.get(column, 0.0) + value
        return self._csr(values), unseen

    def _csr(self, values: dict[int, float]) -> tuple[Any, ...]:
        """One CSR row (data, indices, indptr, width), indices sorted, int32 (the index type the
        native models try first)."""
        order = sorted(values)
        width = self.estimator_.n_features_in_ if self.estimator_ is not None else 0
        return (
            np.array([values[j] for j in order], dtype=np.float64),
            np.array(order, dtype=np.int32),
            np.array([0, len(order)], dtype=np.int32),
            max(width, self.capacity, len(self.feature_columns_)),
        )

    def _start(self, csr: tuple[Any, ...], first_fit: Any) -> Estimator:
        """A fresh clone of `estimator`, `capacity` (or more) columns wide, fitted on one row by
        `first_fit(estimator, dense_row)`."""
        estimator = type(self.estimator)(**self.estimator.get_params())
        data, indices, _, width = csr
        row = np.zeros((1, width))
        row[0, indices] = data
        first_fit(estimator, row)
        self.estimator_ = estimator
        return estimator

    def _learning(self, learn: Any) -> None:
        """Runs `learn()`, and if it fails puts back every feature, label and model it adopted
        (new columns come last in `feature_columns_`, a grown model is a new object): a row
        that fails leaves the adapter as it was."""
        columns = self.feature_columns_
        n_columns = len(columns)
        labels = getattr(self, "classes_", None)
        n_labels = None if labels is None else len(labels)
        estimator = self.estimator_
        try:
            learn()
            # An adapter pickled before the counter existed had no process noise to count.
            self._rounds = getattr(self, "_rounds", 0) + 1
        except BaseException:
            for key in list(columns)[n_columns:]:
                del columns[key]
            if labels is not None:
                del labels[n_labels:]
            if estimator is not None and self._replaced is not None:
                with estimator._lock():  # noqa: SLF001 - the same lock object is put back
                    estimator.__dict__.clear()
                    estimator.__dict__.update(self._replaced)
            self.estimator_ = estimator
            raise
        finally:  # never kept (nor pickled) past the row: the adapter is as it was
            self.__dict__.pop("_replaced", None)

    def _unseen_variance(self, estimator: Estimator) -> float:
        """The variance of a feature never seen so far (docs/design.md §10.4): a + q·t after t
        rows with a constant process noise q; with "auto", a plus the noise the model added
        since its last reset (the classifiers add none)."""
        a = getattr(estimator, "a", 1.0)
        if a == "auto":  # the learned prior, now (never with process noise)
            learned = estimator._model.prior_variance  # noqa: SLF001 - the adapter is cwrs
            return 1.0 if learned is None else float(learned)
        a = float(a)
        q = getattr(estimator, "process_noise", 0.0)
        if q == "auto":
            if isinstance(estimator, Classifier):
                return a
            added = estimator._model.noise_since_reset  # noqa: SLF001 - the adapter is cwrs
            return a + (added or 0.0)
        if not q:
            return a
        return a + float(q) * getattr(self, "_rounds", 0)

    # ------------------------------------------------------------------ growing
    def _grow(self, width: int) -> None:
        """Rebuilds the fitted model `width` columns wide: each new column has mean 0 and the
        variance of a never-seen feature, uncorrelated with the others (exactly as in a wide
        model; `Model.widened`)."""
        estimator = self.estimator_
        assert estimator is not None
        model = estimator._model  # noqa: SLF001 - the adapter is part of cwrs
        widened = model.widened(width, self._unseen_variance(estimator))
        self._install(estimator, widened, n_features_in_=width)

    def _install(self, estimator: Estimator, model: _cwrs.Model, **fitted: Any) -> None:
        """Makes `model` the fitted model of `estimator`, with the fitted attributes `fitted`
        (assigning them drops the estimator's one-row path, which held the old model). The
        first install of a row keeps the estimator's attributes, for `_learning` to put back
        if the row fails (they are replaced, never changed in place)."""
        with estimator._lock():  # noqa: SLF001 - read together by the estimator's own calls
            if self._replaced is None:
                self._replaced = dict(estimator.__dict__)
            estimator._model = model  # noqa: SLF001
            for name, value in fitted.items():
                setattr(estimator, name, value)


# The docstring entries both adapters share.
_CAPACITY = """capacity : int, default=16
        Initial width of the model (capacity ≥ 1); doubled (at least) whenever exceeded."""
_FITTED = """The fitted learner (`estimator_.coef_` is over `features_`), None before the first row.
    features_ : list
        The feature names, in column order."""


class RiverClassifier(_Adapter, _RiverClassifierBase):
    __doc__ = f"""Any cwrs classifier as a river classifier (`learn_one`, `predict_one`,
    `predict_proba_one`) on dict rows, with a feature space that grows with the stream.

    See the module docstring for the design: columns in order of first appearance, the model
    rebuilt wider (exactly) when `capacity` is exceeded, unseen features ignored at prediction
    time, labels discovered on the fly (binary, then one-vs-rest) or given by `classes`.

    Parameters
    ----------
    estimator : cwrs.Classifier
        The learner and its hyper-parameters, e.g. `cwrs.AROW(r=0.5)`; it is cloned, never
        changed (the fitted clone is `estimator_`). Kernel learners are not supported.
    {_CAPACITY}
    classes : sequence of labels or None, default=None
        Every label the stream will hold (a fixed set, e.g. for max-score multiclass); None:
        learned as they arrive, river's classes [False, True] for bool labels, a binary model
        over the first two labels seen, one-vs-rest from a third on (module docstring).

    Attributes
    ----------
    estimator_ : cwrs.Classifier or None
        {_FITTED}
    classes_ : list
        The labels known so far (the negative class first for a binary learner).
    """

    def __init__(
        self,
        estimator: Classifier,
        capacity: int = 16,
        classes: Optional[Sequence[Hashable]] = None,
    ) -> None:
        self._setup(estimator, capacity, Classifier)
        if classes is not None:
            classes = list(classes)
            for label in classes:
                _check_label(label)
            if len(classes) < 2 or len(set(classes)) != len(classes):
                raise ValueError(f"classes must hold two or more distinct labels, got {classes!r}")
        self.classes = classes
        self.classes_: list[Hashable] = [] if classes is None else list(classes)

    @classmethod
    def _unit_test_params(cls) -> Any:
        from ._classifiers import AROW, PA1

        yield {"estimator": AROW()}
        yield {"estimator": PA1(), "capacity": 1, "classes": [False, True]}

    # ------------------------------------------------------------------ learning
    def _label_index(self, y: Hashable) -> int:
        """The class index of label `y`; with `classes=None` a new label becomes the next class."""
        _check_label(y)
        labels = self.classes_
        if self.classes is None and not labels and isinstance(y, (bool, np.bool_)):
            labels.extend(RIVER_BINARY_CLASSES)  # a first bool label: river's binary classes
        for i, label in enumerate(labels):
            if label == y:
                return i
        if self.classes is not None:
            raise ValueError(f"label {y!r} is not one of classes={self.classes!r}")
        labels.append(y)
        return len(labels) - 1

    def learn_one(self, x: dict[Hashable, Any], y: Hashable, w: float = 1.0) -> None:
        """Learns one row `x` (feature name -> value) with label `y` and importance weight `w`
        (river's convention; any real from 0 to 2**64; 0 skips the row, which is not read: no
        label, feature or row is counted), times the weight of its class when the estimator has
        a `class_weight` (a dict keyed by the labels `y` takes, or "balanced"); a row that fails
        leaves the adapter unchanged (no label, feature or width adopted)."""
        weights = _row_weight(w)
        if weights is not None and weights[0] == 0.0:
            return
        self._learning(lambda: self._learn_one(x, y, weights))

    def _learn_one(self, x: dict[Hashable, Any], y: Hashable, weights: Any) -> None:
        index = self._label_index(y)
        class_weight = check_class_weight(self.estimator)
        if isinstance(class_weight, dict) and y in class_weight:
            w = 1.0 if weights is None else weights[0]
            weights = check_sample_weight([w * class_weight[y]], 1)
        balanced = class_weight == "balanced"
        csr = self._learning_row(x)
        estimator = cast(Optional[Classifier], self.estimator_)
        n_classes = 2 if self.classes is None else len(self.classes)
        if estimator is None:
            # The clone learns by class index: the weight of the row's class is in `weights`.
            def first(est: Any, row: Any) -> None:
                est.set_params(class_weight="balanced" if balanced else None)
                est.partial_fit(row, [index], classes=list(range(n_classes)), sample_weight=weights)

            self._start(csr, first)
            return
        if index >= len(estimator.classes_):  # a new label (classes=None)
            self._add_class()
        model = estimator._model  # noqa: SLF001
        if model.kind == "binary":
            model.partial_fit(csr, np.array([1.0 if index == 1 else -1.0]), weights, None, balanced)
        else:
            model.partial_fit(csr, np.array([index], dtype=np.int64), weights, None, balanced)

    def _add_class(self) -> None:
        """Grows the fitted model by one class, one-vs-rest (module docstring): a binary model
        becomes the equal two-class one-vs-rest model, and the new class starts at the prior of
        a weight never seen so far (mean 0, variance a, or a + q·t after t rows with a constant
        process noise q), having learned none of the earlier rows."""
        estimator = cast(Classifier, self.estimator_)
        model = estimator._model  # noqa: SLF001 - the adapter is part of cwrs
        a = self._unseen_variance(estimator)
        if model.kind == "binary":
            model = model.as_one_vs_rest()
        model = model.with_prior_class(a)
        classes = np.arange(model.n_classes, dtype=estimator.classes_.dtype)
        self._install(estimator, model, classes_=classes, multi_class="ovr")

    # ------------------------------------------------------------------ prediction
    def _probabilities(self, x: dict[Hashable, Any]) -> Optional[np.ndarray]:
        """The class probabilities (over the model's classes), or None before any row."""
        estimator = self.estimator_
        if estimator is None:
            return None
        csr, unseen = self._predicting_row(x)
        model = estimator._model  # noqa: SLF001
        if model.kind == "binary":
            if isinstance(estimator, ConfidenceWeightedClassifier) and not unseen:
                # The model's own path, which keeps the ratio exact at any scale of the row.
                positive = float(model.probabilities(csr)[0])
            elif isinstance(estimator, ConfidenceWeightedClassifier):
                score = model.decision_function(csr)
                variance = model.variance(csr) + self._unseen_variance(estimator) * unseen
                positive = float(_cwrs.margin_probabilities(score, variance)[0])
            else:
                return score_probabilities(model.decision_function(csr), one_vs_rest=False)[0]
            return np.array([1.0 - positive, positive])
        if isinstance(estimator, ConfidenceWeightedClassifier):
            return model.probabilities(csr)[0]
        return score_probabilities(model.decision_function(csr), one_vs_rest=False)[0]

    def predict_proba_one(self, x: dict[Hashable, Any], **kwargs: Any) -> dict[Any, float]:
        """P(label | x) for every label known so far; before any row the uniform distribution
        (the prediction of μ = 0) over `classes`, or over {False, True} for a binary learner."""
        probabilities = self._probabilities(x)
        if probabilities is None:
            labels = self._labels_before_learning()
            return {label: 1.0 / len(labels) for label in labels}
        if len(self.classes_) == 1:
            return {self.classes_[0]: 1.0}
        return {label: float(p) for label, p in zip(self.classes_, probabilities)}

    def _labels_before_learning(self) -> list[Hashable]:
        """The classes predicted from before the first row (μ = 0): `classes`, or river's
        binary convention [False, True] for a binary learner."""
        return self.classes_ or list(RIVER_BINARY_CLASSES)

    def predict_one(self, x: dict[Hashable, Any], **kwargs: Any) -> Any:
        """The most probable label: the one label seen if only one; before any row the first
        class (all scores are 0): False for a binary learner, else `classes[0]`."""
        if self.estimator_ is None:
            return self._labels_before_learning()[0]
        if len(self.classes_) < 2:
            return self.classes_[0]
        csr, _ = self._predicting_row(x)
        scores = self.estimator_._model.decision_function(csr)  # noqa: SLF001
        if scores.ndim == 1:
            return self.classes_[int(scores[0] > 0)]
        return self.classes_[int(scores[0].argmax())]


class RiverRegressor(_Adapter, _RiverRegressorBase):
    __doc__ = f"""Any cwrs regressor as a river regressor (`learn_one`, `predict_one`) on dict rows, with a
    feature space that grows with the stream (see the module docstring).

    Parameters
    ----------
    estimator : cwrs.Regressor
        The learner and its hyper-parameters, e.g. `cwrs.AROWRegressor(r=0.1)`; it is cloned,
        never changed (the fitted clone is `estimator_`).
    {_CAPACITY}

    Attributes
    ----------
    estimator_ : cwrs.Regressor or None
        {_FITTED}
    """

    def __init__(self, estimator: Regressor, capacity: int = 16) -> None:
        self._setup(estimator, capacity, Regressor)

    @classmethod
    def _unit_test_params(cls) -> Any:
        from ._regressors import AROWRegressor, PA2Regressor

        yield {"estimator": AROWRegressor()}
        yield {"estimator": PA2Regressor(), "capacity": 1}

    def learn_one(self, x: dict[Hashable, Any], y: float, w: float = 1.0) -> None:
        """Learns one row `x` (feature name -> value) with target `y` and importance weight `w`
        (river's convention; any real from 0 to 2**64; 0 skips the row, which is not read); a row
        that fails leaves the adapter unchanged (no feature or width adopted)."""
        if isinstance(y, bool) or not isinstance(y, numbers.Real):
            raise TypeError(f"the target must be a real number, got {y!r}")
        weights = _row_weight(w)
        if weights is not None and weights[0] == 0.0:
            return
        self._learning(lambda: self._learn_one(x, float(y), weights))

    def _learn_one(self, x: dict[Hashable, Any], y: float, weights: Any) -> None:
        csr = self._learning_row(x)
        if self.estimator_ is None:
            self._start(csr, lambda est, row: est.partial_fit(row, [float(y)], weights))
            return
        self.estimator_._model.partial_fit(csr, np.array([float(y)]), weights)  # noqa: SLF001

    def predict_one(self, x: dict[Hashable, Any]) -> float:
        """The mean prediction μ·x (0.0 before any row)."""
        if self.estimator_ is None:
            return 0.0
        csr, _ = self._predicting_row(x)
        return float(self.estimator_._model.decision_function(csr)[0])  # noqa: SLF001


def _not_finite(name: Hashable, value: float) -> ValueError:
    return ValueError(
        f"feature {name!r} has the value {value!r}; values must be finite, not NaN or "
        "infinite (leave a missing value out of the row, or give it as None)"
    )


def _check_label(y: Hashable) -> None:
    """Refuses a label that is not equal to itself (NaN): no later label could match it."""
    try:
        same = bool(y == y)
    except (TypeError, ValueError):  # e.g. an array, whose == is elementwise
        same = False
    if not same:
        raise ValueError(f"label {y!r} is not equal to itself (NaN?) and cannot be a class")
