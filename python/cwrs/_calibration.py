"""`CalibratedClassifier`: a cwrs classifier whose probabilities come from a calibration map
learned online from its progressive scores.

Each `partial_fit` call makes one call `estimator_.partial_fit(X, y, ..., return_scores=True)`,
which returns the score (and, for a second-order learner, xᵀΣx) of every row as the model stood
just before learning it. The map is then updated row by row, in order, from those scores: it
never sees the score of a row the model had already learned, so it is fitted to the scores the
model gives rows it has not seen, which are the scores it will be asked to map.

The maps (docs/guide/probabilities.md gives the math in full):

- "platt": p = σ(A·z + B), one (A, B) per map, fitted by online Newton: the exact Hessian
  w·p(1 − p)·[z, 1][z, 1]ᵀ of each row's log loss, evaluated at the map's current (A, B),
  accumulated onto a prior `prior_strength`·I (so the first rows move the map by bounded
  steps), and each row's gradient step taken through the inverse of that sum.
- "temperature": p = σ(z/T) for two classes, softmax(z/T) for more, one T for every class,
  fitted by online Newton on log T with the accumulated curvature w·β²·Var_p(z), β = 1/T (the
  Gauss-Newton part of the Hessian: the exact one is not convex in log T), on a prior
  `prior_strength` at T = 1.
- "isotonic": a fixed number `n_bins` of equal-width bins over the bounded transform
  u = z / (1 + |z|) ∈ (−1, 1), with per-bin weighted counts (total weight and positive
  weight), each bin starting with `prior_strength` pseudo-rows at σ(z) of its centre (z capped
  at ±30, so that the prior is never exactly 0 or 1); predicting
  fits the non-decreasing (pool-adjacent-violators) step function to the bins' frequencies and
  interpolates it linearly between the bins' centres (cached until the next learning).

One map for two classes (on the score of `classes_[1]`); with more classes, Platt and isotonic
keep one map per class on its own score (one-vs-rest) and normalize the K probabilities to sum
to 1 (scikit-learn's `CalibratedClassifierCV` rule), while temperature scales all the scores
with one T. z is the map's input: `map_input` below.
"""

from __future__ import annotations

import inspect
import math
import numbers
from typing import TYPE_CHECKING, Any, Literal, Optional

import numpy as np
import numpy.typing as npt

from ._classifier import Classifier
from ._locks import OwnedLock
from ._meta import MetaEstimator, clone
from ._params import InvalidParameterError
from ._probability import logistic
from ._validation import (
    check_labels,
    check_sample_weight,
    classes_of,
    not_fitted_error,
)

if TYPE_CHECKING:
    from typing_extensions import Self

    from ._typing import ArrayLike, Float64Array, MatrixLike, SampleWeight

METHODS = ("platt", "temperature", "isotonic")
# Map inputs are clipped to ±INPUT_LIMIT so that an infinite score stays a finite number.
INPUT_LIMIT = 1e6
# The isotonic prior at a bin's centre is σ(z) with z capped at ±PRIOR_LIMIT: never exactly 0
# or 1 in floating point (σ(30) = 1 − 9.4e-14).
PRIOR_LIMIT = 30.0
# log T stays within ±LOG_TEMPERATURE_LIMIT (T from e^-30 to e^30): β = 1/T never overflows.
LOG_TEMPERATURE_LIMIT = 30.0


def map_input(
    scores: Float64Array, variances: Optional[Float64Array]
) -> Float64Array:
    """What the calibration map is a function of: for a first-order learner (no variances) its
    score s; for a second-order learner the variance-normalized margin s/√(1 + v), with
    v = xᵀΣx of the row (per class for more classes).

    Measured on the benchmark streams (benchmarks/calibrated.py, AROW, SCW1 and NAROW with
    each method on six streams), the normalized margin gives the lower progressive log loss in
    38 of 54 cases (the raw score wins mostly on the ten classes of digits): a row whose margin
    is uncertain is mapped closer to 1/2.
    """
    scores = np.clip(scores, -INPUT_LIMIT, INPUT_LIMIT)
    if variances is None:
        return scores
    return scores / np.sqrt(1.0 + np.maximum(variances, 0.0))


# ===================================================================== the maps' arithmetic
def new_map(method: str, n_maps: int, n_bins: int, prior_strength: float) -> dict[str, Any]:
    """The state of a map that has learned nothing: `n_maps` one-vs-rest maps (1 for two
    classes) for Platt and isotonic; one temperature."""
    state: dict[str, Any] = {"method": method, "prior_strength": float(prior_strength)}
    if method == "platt":
        coef = np.zeros((n_maps, 2))
        coef[:, 0] = 1.0  # σ(z): the logistic of the input until rows say otherwise
        curvature = np.zeros((n_maps, 3))  # the 2×2 Hessians' entries (aa, ab, bb)
        curvature[:, 0] = curvature[:, 2] = prior_strength
        state.update(coef=coef, curvature=curvature)
    elif method == "temperature":
        state.update(log_temperature=np.zeros(1), curvature=np.full(1, float(prior_strength)))
    else:
        state.update(weight=np.zeros((n_maps, n_bins)), positive=np.zeros((n_maps, n_bins)))
    return state


def copy_map(state: dict[str, Any]) -> dict[str, Any]:
    return {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in state.items()}


def learn_map(
    state: dict[str, Any], inputs: np.ndarray, targets: np.ndarray, weights: np.ndarray
) -> dict[str, Any]:
    """A new map state: `state` updated by the rows in order. `inputs`: (n,) for two classes,
    (n, K) for more; `targets`: the class indices; `weights`: per row, ≥ 0 (0: no update)."""
    state = copy_map(state)
    method = state["method"]
    if inputs.ndim == 1:
        inputs = inputs[:, None]
        onehot = (targets == 1).astype(np.float64)[:, None]
    else:
        onehot = np.zeros(inputs.shape)
        onehot[np.arange(len(targets)), targets] = 1.0
    # A score with no value (NaN) teaches the map nothing.
    weights = np.where(np.isnan(inputs).any(axis=1), 0.0, weights)
    active = np.flatnonzero(weights > 0)
    if method == "platt":
        _learn_platt(state["coef"], state["curvature"], inputs, onehot, weights, active)
    elif method == "temperature":
        binary = inputs.shape[1] == 1
        _learn_temperature(state, inputs, targets, weights, active, binary)
    else:
        _learn_isotonic(state, inputs, onehot, weights, active)
    return state


def _learn_platt(
    coef: np.ndarray, curvature: np.ndarray, inputs: np.ndarray, onehot: np.ndarray,
    weights: np.ndarray, active: np.ndarray,
) -> None:
    """Online Newton per map (see the module docstring); the maps are independent, so each
    runs over the rows on its own, in Python floats (the fastest for a 2×2 step)."""
    rows_w = weights[active].tolist()
    for k in range(coef.shape[0]):
        a, b = coef[k].tolist()
        haa, hab, hbb = curvature[k].tolist()
        for z, t, w in zip(inputs[active, k].tolist(), onehot[active, k].tolist(), rows_w):
            p = _sigma(a * z + b)
            residual = w * (p - t)
            c = w * p * (1.0 - p)
            naa, nab, nbb = haa + c * z * z, hab + c * z, hbb + c
            det = naa * nbb - nab * nab
            ga, gb = residual * z, residual
            na, nb = a - (nbb * ga - nab * gb) / det, b - (naa * gb - nab * ga) / det
            # A step past floating point (a weight near 2**64 on a huge input) is skipped.
            if det > 0 and math.isfinite(na) and math.isfinite(nb) and math.isfinite(det):
                a, b, haa, hab, hbb = na, nb, naa, nab, nbb
        coef[k] = a, b
        curvature[k] = haa, hab, hbb


def _log_temperature_step(
    u: float, h: float, gradient: float, curvature: float
) -> tuple[float, float]:
    """The Newton step on log T, kept within ±LOG_TEMPERATURE_LIMIT; a step past floating
    point (a weight near 2**64) is skipped."""
    new_h = h + curvature
    new_u = u - gradient / new_h
    if not (math.isfinite(new_h) and math.isfinite(new_u)):
        return u, h
    return min(max(new_u, -LOG_TEMPERATURE_LIMIT), LOG_TEMPERATURE_LIMIT), new_h


def _sigma(m: float) -> float:
    """σ(m) of one float, without overflow."""
    if m >= 0:
        return 1.0 / (1.0 + math.exp(-m))
    small = math.exp(m)
    return small / (1.0 + small)


def _temperature_inputs(inputs: np.ndarray, binary: bool) -> np.ndarray:
    """The class scores the temperature divides: (0, z) for two classes (softmax of which is
    (σ(−z/T), σ(z/T))), else the K scores."""
    if binary:
        return np.column_stack([np.zeros(len(inputs)), inputs[:, 0]])
    return inputs


def _learn_temperature(
    state: dict[str, Any], inputs: np.ndarray, targets: np.ndarray, weights: np.ndarray,
    active: np.ndarray, binary: bool,
) -> None:
    """Online Newton on u = log T (see the module docstring). Two classes: the scores (0, z),
    for which p_1 = σ(βz), E_p[s] = p_1·z and Var_p(s) = z²·p_1(1 − p_1)."""
    u = float(state["log_temperature"][0])
    h = float(state["curvature"][0])
    rows_w = weights[active].tolist()
    if binary:
        rows_t = (targets[active] == 1).astype(np.float64).tolist()
        for z, t, w in zip(inputs[active, 0].tolist(), rows_t, rows_w):
            beta = math.exp(-u)
            p = _sigma(beta * z)
            gradient = -w * beta * z * (p - t)  # d(−log p_y)/d(log T)
            u, h = _log_temperature_step(u, h, gradient, w * beta * beta * z * z * p * (1.0 - p))
    else:
        exp = math.exp
        for z, y, w in zip(inputs[active].tolist(), targets[active].tolist(), rows_w):
            beta = exp(-u)
            top = beta * max(z)
            e = [exp(beta * v - top) for v in z]
            total = sum(e)
            mean = sum(ek * v for ek, v in zip(e, z)) / total  # E_p[s]
            second = sum(ek * v * v for ek, v in zip(e, z)) / total
            gradient = -w * beta * (mean - z[y])
            curvature = w * beta * beta * max(second - mean * mean, 0.0)  # w·β²·Var_p(s)
            u, h = _log_temperature_step(u, h, gradient, curvature)
    state["log_temperature"][0] = u
    state["curvature"][0] = h


def bin_index(inputs: np.ndarray, n_bins: int) -> np.ndarray:
    """The isotonic bin of each input: equal-width bins of u = z/(1 + |z|) over (−1, 1)."""
    u = inputs / (1.0 + np.abs(inputs))
    return np.minimum(((u + 1.0) * (n_bins / 2.0)).astype(np.intp), n_bins - 1)


def bin_centres(n_bins: int) -> np.ndarray:
    """The bins' centres on the u scale."""
    return -1.0 + (np.arange(n_bins) + 0.5) * (2.0 / n_bins)


def _learn_isotonic(
    state: dict[str, Any], inputs: np.ndarray, onehot: np.ndarray, weights: np.ndarray,
    active: np.ndarray,
) -> None:
    weight, positive = state["weight"], state["positive"]
    n_bins = weight.shape[1]
    bins = bin_index(inputs[active], n_bins)
    for k in range(weight.shape[0]):
        # np.add.at adds in the rows' order, one at a time, as a loop over the rows would.
        np.add.at(weight[k], bins[:, k], weights[active])
        np.add.at(positive[k], bins[:, k], weights[active] * onehot[active, k])


def pool_adjacent_violators(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The non-decreasing sequence closest to `values` in weighted least squares (all weights
    > 0): adjacent blocks that violate the order are pooled into their weighted mean."""
    means: list[float] = []
    totals: list[float] = []
    sizes: list[int] = []
    for value, weight in zip(values.tolist(), weights.tolist()):
        means.append(value)
        totals.append(weight)
        sizes.append(1)
        while len(means) > 1 and means[-2] > means[-1]:
            total = totals[-2] + totals[-1]
            means[-2] = (means[-2] * totals[-2] + means[-1] * totals[-1]) / total
            totals[-2] = total
            sizes[-2] += sizes[-1]
            del means[-1], totals[-1], sizes[-1]
    return np.repeat(np.array(means), sizes)


def isotonic_curves(state: dict[str, Any]) -> np.ndarray:
    """Per map, the fitted non-decreasing probability at each bin's centre: the bins'
    frequencies with `prior_strength` pseudo-rows at σ(z) of the centre, through PAV."""
    weight, positive = state["weight"], state["positive"]
    prior = state["prior_strength"]
    centres = bin_centres(weight.shape[1])
    prior_p = logistic(np.clip(centres / (1.0 - np.abs(centres)), -PRIOR_LIMIT, PRIOR_LIMIT))
    total = weight + prior
    frequency = (positive + prior * prior_p) / total
    return np.array([pool_adjacent_violators(f, t) for f, t in zip(frequency, total)])


def apply_map(
    state: dict[str, Any], inputs: np.ndarray, curves: Optional[np.ndarray] = None
) -> np.ndarray:
    """The probabilities (n, 2) or (n, K) of the map for the inputs (n,) or (n, K).
    `curves`: `isotonic_curves(state)`, if already computed."""
    method = state["method"]
    binary = inputs.ndim == 1
    columns = inputs[:, None] if binary else inputs
    if method == "temperature":
        beta = math.exp(-float(state["log_temperature"][0]))
        scores = beta * _temperature_inputs(columns, binary)
        scores = scores - scores.max(axis=1, keepdims=True)
        probabilities = np.exp(scores)
        return probabilities / probabilities.sum(axis=1, keepdims=True)
    if method == "platt":
        coef = state["coef"]
        p = logistic(coef[:, 0] * columns + coef[:, 1])
    else:
        if curves is None:
            curves = isotonic_curves(state)
        centres = bin_centres(curves.shape[1])
        u = columns / (1.0 + np.abs(columns))
        p = np.column_stack([np.interp(u[:, k], centres, curves[k]) for k in range(len(curves))])
    if binary:
        return np.column_stack([1.0 - p[:, 0], p[:, 0]])
    total = p.sum(axis=1, keepdims=True)
    # Every one-vs-rest probability 0: no class is preferred (scikit-learn's rule).
    return np.where(total > 0, p / np.where(total > 0, total, 1.0), 1.0 / p.shape[1])


def check_map_state(state: Any, n_classes: int) -> None:
    """ValueError unless `state` is the map state of a `CalibratedClassifier` over `n_classes`
    classes (what `learn_map` makes): the entries of its method, float64 arrays of the right
    shapes, finite, with positive curvatures and 0 ≤ positive ≤ weight in every bin."""
    if not isinstance(state, dict) or state.get("method") not in METHODS:
        raise ValueError("calibration_ must be a map state naming one of the methods")
    method = state["method"]
    n_maps = 1 if n_classes == 2 else n_classes
    strength = state.get("prior_strength")
    if type(strength) is not float or not 0.0 < strength < math.inf:
        raise ValueError("the map's prior_strength must be a positive finite float")
    shapes: dict[str, tuple[int, ...]]
    if method == "platt":
        shapes = {"coef": (n_maps, 2), "curvature": (n_maps, 3)}
    elif method == "temperature":
        shapes = {"log_temperature": (1,), "curvature": (1,)}
    else:
        weight = state.get("weight")
        n_bins = weight.shape[-1] if isinstance(weight, np.ndarray) and weight.ndim == 2 else 0
        if n_bins < 2:
            raise ValueError("an isotonic map has at least 2 bins")
        shapes = {"weight": (n_maps, n_bins), "positive": (n_maps, n_bins)}
    if state.keys() != {"method", "prior_strength", *shapes}:
        raise ValueError(f"a {method} map has the entries {sorted(shapes)}")
    for key, shape in shapes.items():
        value = state[key]
        if not (
            isinstance(value, np.ndarray) and value.dtype == np.float64 and value.shape == shape
            and np.isfinite(value).all()
        ):
            raise ValueError(
                f"the map's {key} must be finite float64 of shape {shape} for {n_classes} classes"
            )
    if method == "platt":
        haa, hab, hbb = state["curvature"].T
        if not ((haa > 0) & (hbb > 0) & (haa * hbb - hab * hab > 0)).all():
            raise ValueError("the map's curvature must be positive definite")
    elif method == "temperature":
        if not (state["curvature"] > 0).all() or abs(state["log_temperature"][0]) > \
                LOG_TEMPERATURE_LIMIT:
            raise ValueError("the map's temperature or curvature is out of range")
    elif not ((state["positive"] >= 0) & (state["positive"] <= state["weight"])).all():
        raise ValueError("the map's bins must hold 0 ≤ positive ≤ weight")


# ============================================================================ the estimator
def refuse_estimator(estimator: Any) -> None:
    """TypeError unless `estimator` is a cwrs classifier whose `partial_fit` returns scores."""
    partial_fit = getattr(estimator, "partial_fit", None)
    if not (
        isinstance(estimator, Classifier)
        and partial_fit is not None
        and "return_scores" in inspect.signature(partial_fit).parameters
    ):
        raise TypeError(
            "CalibratedClassifier calibrates a cwrs classifier (cwrs.AROW(), cwrs.PA1(), ...: "
            "its partial_fit(..., return_scores=True) gives the progressive scores), not "
            f"{estimator!r:.80}"
        )


class CalibratedClassifier(MetaEstimator):
    """A cwrs classifier with a calibration map learned online from its progressive scores.

    Parameters
    ----------
    estimator : a cwrs classifier (`cwrs.AROW()`, `cwrs.SCW1()`, `cwrs.PA1()`, ...)
        The learner to calibrate; never modified: `fit` and the first `partial_fit` learn a
        fresh copy of it, `estimator_`.
    method : {"platt", "temperature", "isotonic"}, default "platt"
        The map from scores to probabilities. "platt": σ(A·z + B) per class (one-vs-rest,
        normalized, for more than two classes). "temperature": σ(z/T), or softmax(z/T) over the
        classes, one T. "isotonic": a non-decreasing step function over `n_bins` bins,
        interpolated, per class (one-vs-rest, normalized). z is `score` for a first-order
        learner, and the variance-normalized margin score/√(1 + xᵀΣx) for a second-order one.
    n_bins : int, default 100
        The number of isotonic bins (equal-width over z/(1 + |z|) ∈ (−1, 1)); the map keeps
        2 · n_bins numbers per class, however long the stream. Unused by the other methods.
    prior_strength : float > 0, default 1.0
        How much the map trusts its starting point before rows arrive: the prior curvature
        (Platt: on A and B, starting at A = 1, B = 0, i.e. σ(z); temperature: on log T,
        starting at T = 1) or the pseudo-rows per isotonic bin (at σ(z) of the bin's centre).

    Learning: `partial_fit(X, y, classes=None, sample_weight=None)` makes one call
    `estimator_.partial_fit(X, y, classes, sample_weight, return_scores=True)` and then updates
    the map row by row, in order, from each row's score before the model learned it; a row of
    weight w counts w times in the map's update (weight 0: none). `fit(X, y, sample_weight)`
    is a fresh copy of `estimator` and one such `partial_fit` (one pass, in order).

    Prediction: `predict_proba(X)` is the map applied to `estimator_.decision_function(X)` (and
    xᵀΣx for a second-order learner); `predict` the class of highest probability;
    `predict_log_proba` its logarithm. `classes_`, `n_features_in_` and `feature_names_in_` are
    those of `estimator_`.

    Fitted attributes: `estimator_` and `calibration_`, the map's state: a dict with "method",
    "prior_strength" and its arrays (Platt: "coef", (A, B) per map, and "curvature", the
    accumulated 2×2 Hessians as (aa, ab, bb); temperature: "log_temperature" and its
    "curvature"; isotonic: "weight" and "positive", the bins' weighted counts per map). One map
    for two classes, one per class otherwise.

    A refused call (bad X, y, classes or weights, an estimator that is not a cwrs classifier)
    raises before anything changes: `estimator_` and the map stay as they were. Pickling
    round-trips exactly, and so do `save(path)` and `cwrs.load(path)`. The estimator's own
    `n_iter` and `shuffle` do not apply: every row is learned once, in the order given.
    Threads: concurrent `partial_fit` calls take turns; predictions run alongside them.
    docs/guide/probabilities.md gives the math and the measurements.

    Examples
    --------
    >>> import numpy as np
    >>> import cwrs
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 3))
    >>> y = (X[:, 0] + rng.normal(size=500) > 0).astype(int)  # noisy labels
    >>> model = cwrs.CalibratedClassifier(cwrs.AROW(), method="platt")
    >>> model = model.partial_fit(X[:250], y[:250], classes=[0, 1]).partial_fit(X[250:], y[250:])
    >>> model.predict_proba(X[:2]).round(2)
    array([[0.47, 0.53],
           [0.48, 0.52]])
    >>> model.estimator_.predict_proba(X[:2]).round(2)  # AROW's own, with its label noise
    array([[0.44, 0.56],
           [0.45, 0.55]])
    >>> model.estimator_.predict_posterior_proba(X[:2]).round(2)  # sure of its weights
    array([[0.03, 0.97],
           [0.06, 0.94]])

    References
    ----------
    .. [1] J. Platt, "Probabilistic outputs for support vector machines and comparisons to
       regularized likelihood methods", Advances in Large Margin Classifiers, 1999.
    .. [2] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger, "On calibration of modern neural
       networks", ICML 2017 (temperature scaling).
    .. [3] B. Zadrozny and C. Elkan, "Transforming classifier scores into accurate multiclass
       probability estimates", KDD 2002 (isotonic calibration, one-vs-rest normalization).
    """

    _required_parameters = ("estimator",)

    def __init__(
        self,
        estimator: Classifier,
        method: Literal["platt", "temperature", "isotonic"] = "platt",
        n_bins: int = 100,
        prior_strength: float = 1.0,
    ) -> None:
        self.estimator = estimator
        self.method = method
        self.n_bins = n_bins
        self.prior_strength = prior_strength

    if TYPE_CHECKING:
        estimator_: Classifier
        calibration_: dict[str, Any]

    # The map's input (a static method, so that a measurement can swap it).
    _map_input = staticmethod(map_input)

    # ----------------------------------------------------------------- parameters
    def _check_params(self) -> None:
        """The checks of the hyper-parameters (InvalidParameterError, or TypeError for the
        estimator)."""
        refuse_estimator(self.estimator)
        if not isinstance(self.method, str) or self.method not in METHODS:
            raise InvalidParameterError(
                f"method must be one of {', '.join(map(repr, METHODS))}, got {self.method!r:.80}"
            )
        n_bins = self.n_bins
        if isinstance(n_bins, bool) or not isinstance(n_bins, numbers.Integral) or n_bins < 2:
            raise InvalidParameterError(f"n_bins must be an integer ≥ 2, got {n_bins!r:.80}")
        if n_bins > 1_000_000:
            raise InvalidParameterError(f"n_bins must be at most 1,000,000, got {n_bins}")
        strength = self.prior_strength
        if (
            isinstance(strength, bool)
            or not isinstance(strength, numbers.Real)
            or not (0.0 < float(strength) < math.inf)
        ):
            raise InvalidParameterError(
                f"prior_strength must be a positive finite number, got {strength!r:.80}"
            )

    # ----------------------------------------------------------------- scikit-learn plumbing
    def __sklearn_is_fitted__(self) -> bool:
        return "estimator_" in self.__dict__

    def __sklearn_tags__(self) -> Any:
        from sklearn.utils import ClassifierTags, InputTags, Tags, TargetTags

        return Tags(
            estimator_type="classifier",
            target_tags=TargetTags(required=True),
            classifier_tags=ClassifierTags(multi_class=True),
            input_tags=InputTags(sparse=True),
        )

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("_cache", None)  # the isotonic curves, computed again when needed
        state.pop("_fit_lock", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if "estimator_" in state:
            self.__dict__["_cache"] = {}

    def _fitted(self) -> Classifier:
        try:
            return self.__dict__["estimator_"]
        except KeyError:
            raise not_fitted_error(
                "This CalibratedClassifier instance is not fitted yet. Call 'fit' or "
                "'partial_fit' with appropriate arguments before using this estimator."
            ) from None

    @property
    def classes_(self) -> npt.NDArray[Any]:
        """The class labels, those of `estimator_`."""
        return self._fitted_attribute("classes_")

    @property
    def n_features_in_(self) -> int:
        """The number of features, that of `estimator_`."""
        return self._fitted_attribute("n_features_in_")

    @property
    def feature_names_in_(self) -> npt.NDArray[np.object_]:
        """The column names of X, if it was a data frame with string column names."""
        return self._fitted_attribute("feature_names_in_")

    def _fitted_attribute(self, name: str) -> Any:
        estimator = self.__dict__.get("estimator_")
        if estimator is None:
            raise AttributeError(f"{name} is set by fit or partial_fit")
        return getattr(estimator, name)

    # ----------------------------------------------------------------- learning
    def fit(self, X: MatrixLike, y: ArrayLike, sample_weight: SampleWeight = None) -> Self:
        """Forgets any previous state: a fresh copy of `estimator` and a new map learn the rows
        of X in one pass, in order (one `partial_fit` with the classes of y)."""
        self._check_params()
        labels = check_labels(y, None)
        classes = classes_of(labels)
        weights = check_sample_weight(sample_weight, labels.shape[0])
        if weights is not None and not weights.any():
            raise ValueError("sample_weight is all zero: fit would learn nothing")
        with self._lock():
            self._learn(clone(self.estimator), None, X, y, classes, sample_weight)
        return self

    def partial_fit(
        self,
        X: MatrixLike,
        y: ArrayLike,
        classes: Optional[ArrayLike] = None,
        sample_weight: SampleWeight = None,
    ) -> Self:
        """Learns the rows of X once, in order: the estimator learns them
        (`estimator_.partial_fit(..., return_scores=True)`, `classes` required on the first
        call), then the map learns each row's score from before the estimator learned it."""
        with self._lock():
            estimator = self.__dict__.get("estimator_")
            if estimator is None:
                self._check_params()
                self._learn(clone(self.estimator), None, X, y, classes, sample_weight)
            else:
                self._learn(estimator, self.calibration_, X, y, classes, sample_weight)
        return self

    def _lock(self) -> OwnedLock:
        """Held while learning: concurrent `partial_fit` calls take turns, so that the map
        learns each call's rows after the estimator learned them, in the same order."""
        lock = self.__dict__.get("_fit_lock")
        if lock is None:
            lock = self.__dict__.setdefault("_fit_lock", OwnedLock())
        return lock

    def _learn(
        self, estimator: Classifier, state: Optional[dict[str, Any]], X: MatrixLike,
        y: ArrayLike, classes: Optional[ArrayLike], sample_weight: SampleWeight,
    ) -> None:
        """`estimator` learns the rows (all or nothing), then the map `state` (None: a new one)
        learns their progressive scores; the two are installed together. What the map needs of
        y and the weights is checked first, so that nothing fails once the estimator learned."""
        if state is not None:
            self._check_params()  # refused as fit refuses them, though they apply at the next fit
        labels = check_labels(y, None)
        weights = check_sample_weight(sample_weight, labels.shape[0])
        _, scores, variances = estimator.partial_fit(
            X, y, classes, sample_weight, return_scores=True
        )
        known = estimator.classes_
        targets = np.searchsorted(known, labels)
        if state is None:
            n_maps = 1 if len(known) == 2 else len(known)
            state = new_map(self.method, n_maps, int(self.n_bins), float(self.prior_strength))
        inputs = self._map_input(scores, variances)
        row_weights = np.ones(len(targets)) if weights is None else weights
        learned = learn_map(state, inputs, targets, row_weights)
        # `_cache` holds the isotonic curves once a prediction computed them (`predict_proba`).
        self.__dict__.update(estimator_=estimator, calibration_=learned, _cache={})

    # ----------------------------------------------------------------- prediction
    def _inputs(self, X: MatrixLike) -> np.ndarray:
        estimator = self._fitted()
        scores = estimator.decision_function(X)
        variances = None
        if type(estimator)._second_order:
            # The native model's xᵀΣx of the rows, as partial_fit's return_scores gives it.
            variances = estimator._fitted_model().variance(estimator._check_X_for(X))
        return self._map_input(scores, variances)

    def predict_proba(self, X: MatrixLike) -> Float64Array:
        """The calibrated class probabilities, shape (n, n_classes), each row summing to 1."""
        inputs = self._inputs(X)
        state = self.calibration_
        curves = None
        if state["method"] == "isotonic":
            # The cache holds (state, its curves) in one entry: a prediction that overlaps a
            # partial_fit never pairs a map with another map's curves.
            cache = self.__dict__["_cache"]
            entry = cache.get("curves")
            if entry is not None and entry[0] is state:
                curves = entry[1]
            else:
                curves = isotonic_curves(state)
                cache["curves"] = (state, curves)
        return apply_map(state, inputs, curves)

    def predict_log_proba(self, X: MatrixLike) -> Float64Array:
        """Logarithm of `predict_proba`."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X: MatrixLike) -> npt.NDArray[Any]:
        """The class of highest calibrated probability (the first of equal ones)."""
        best = np.argmax(self.predict_proba(X), axis=1)
        return self.classes_[best]

    def score(self, X: MatrixLike, y: ArrayLike, sample_weight: SampleWeight = None) -> float:
        """Mean accuracy of `predict(X)` against y (weighted by sample_weight if given)."""
        predicted = self.predict(X)
        correct = predicted == check_labels(y, predicted.shape[0])
        return float(np.average(correct, weights=sample_weight))
