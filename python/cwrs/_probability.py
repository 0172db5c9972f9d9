"""Probabilities from the scores of learners without a covariance: the logistic of the margin
for two classes, and for more classes a softmax of the scores (max-score) or the normalized
logistic of each one-vs-rest score (scikit-learn's `SGDClassifier(loss="log_loss")` rule). For a
learner trained on the logistic loss (`OGD(loss="logistic")`, `FTRL`) these are the model's
own probabilities; for the others (the river adapter's first-order learners) a monotone map of
the scores, not calibrated."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, TypeVar

import numpy as np

_Method = TypeVar("_Method", bound=Callable[..., Any])


def logistic(margins: np.ndarray) -> np.ndarray:
    """σ(m) = 1/(1 + e^−m) elementwise, without overflow: e^−|m| only."""
    margins = np.asarray(margins, dtype=np.float64)
    small = np.exp(-np.abs(margins))
    return np.where(margins >= 0, 1.0 / (1.0 + small), small / (1.0 + small))


def score_probabilities(scores: np.ndarray, one_vs_rest: bool) -> np.ndarray:
    """Class probabilities from `decision_function`'s scores: (n,) → (n, 2) as [σ(−m), σ(m)]
    (each side computed directly, so a tiny probability keeps its digits); (n, K) → a softmax,
    or for one-vs-rest models σ(m_k) normalized over the classes."""
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim == 1:
        return np.column_stack([logistic(-scores), logistic(scores)])
    if one_vs_rest:
        weights = logistic(scores)
    else:
        top = scores.max(axis=1, keepdims=True)
        with np.errstate(invalid="ignore"):
            weights = np.exp(scores - top)
        # A score that overflowed to +inf takes all the probability (shared by equal ones).
        weights = np.where(np.isinf(top), (scores == top).astype(np.float64), weights)
    total = weights.sum(axis=1, keepdims=True)
    # Every one-vs-rest score at −inf: no class is preferred.
    return np.where(total > 0, weights / np.where(total > 0, total, 1.0), 1.0 / scores.shape[1])


if TYPE_CHECKING:  # the method's own type, for mypy

    def when_logistic(method: _Method) -> _Method: ...


class _WhenLogistic:
    """A method that exists only while the estimator's `loss` is "logistic": for another loss
    reading it raises AttributeError, so `hasattr(estimator, "predict_proba")` is False and
    scikit-learn's tools (CalibratedClassifierCV, `neg_log_loss` scoring) see no
    probabilities, as for `SGDClassifier(loss="hinge")`."""

    def __init__(self, method: Callable[..., Any]) -> None:
        self.method = method
        self.__doc__ = method.__doc__
        self.__name__ = method.__name__

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self.method
        if instance.loss != "logistic":
            raise AttributeError(
                f"{self.__name__} needs loss='logistic' (the probabilities of the logistic "
                f"loss), not loss={instance.loss!r}"
            )
        return self.method.__get__(instance, owner)


if not TYPE_CHECKING:
    when_logistic = _WhenLogistic  # a decorator, as scikit-learn's `available_if`
