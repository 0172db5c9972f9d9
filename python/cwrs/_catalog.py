"""The learners of the other online-learning libraries that fall outside the (α, c) template
(docs/design.md §2.9): OGD reads the round, IELLIP rescales Σ, ROMMA and ALMA rescale or
normalise the weights, AdaGrad and FTRL keep their own per-coordinate state (a form of their
own beside the covariance forms). Like every learner, each class names its rule in the rule table of the
Rust core, which holds its paper, update and hyper-parameters; tests/test_rule_table.py pins
the signatures to the table. OGD and IELLIP also run in the kernel (dual) form, IELLIP's
rescaling of Σ = a·I + ΦΠΦᵀ acting on a and Π (docs/design.md §2.9); the others refuse
`kernel=` with a clear error saying why (`NO_KERNEL_FORM`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Literal, Optional

import numpy as np

from ._classifier import Classifier, ConfidenceWeightedClassifier
from ._docs import document
from ._params import InvalidParameterError, store_params
from ._probability import score_probabilities, when_logistic

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ._typing import ClassifierParams, Float64Array, MatrixLike, SecondOrderClassifierParams

#: The losses OGD descends.
LOSSES = ("hinge", "logistic", "squared_hinge")


class _LogisticProbabilities:
    """`predict_proba` of a learner with a `loss` parameter, for loss="logistic": σ(μ·x) for two
    classes, as scikit-learn's `SGDClassifier(loss="log_loss")` gives (see `_probability`)."""

    loss: str
    multi_class: str
    decision_function: Callable[[MatrixLike], Float64Array]

    @when_logistic
    def predict_proba(self, X: MatrixLike) -> Float64Array:
        """Class probabilities of the logistic loss (`loss="logistic"` only; with another loss
        the estimator has no `predict_proba`). Two classes: P(classes_[1] | x) = σ(μ·x) =
        1/(1 + e^−μ·x), the probability the logistic model the loss fits gives, as
        scikit-learn's `SGDClassifier(loss="log_loss")`. More classes: the softmax of the class
        scores (`multi_class="max-score"`), or each one-vs-rest σ(μ_k·x) normalized over the
        classes (`"ovr"`, scikit-learn's rule)."""
        scores = self.decision_function(X)
        return score_probabilities(scores, one_vs_rest=self.multi_class == "ovr")

    @when_logistic
    def predict_log_proba(self, X: MatrixLike) -> Float64Array:
        """Logarithm of `predict_proba` (`loss="logistic"` only)."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))


@document
class ALMA(Classifier):
    _rule = "ALMA"

    def __init__(
        self,
        *,
        alpha: float = 0.9,
        p: float = 2.0,
        C: float = 1.4142135623730951,
        **params: Unpack[ClassifierParams],
    ) -> None:
        store_params(self, locals())


@document
class ROMMA(Classifier):
    _rule = "ROMMA"


@document
class AggressiveROMMA(Classifier):
    _rule = "AggressiveROMMA"


@document
class OGD(_LogisticProbabilities, Classifier):
    """
    Parameters
    ----------
    loss : {"hinge", "logistic", "squared_hinge"}, default="hinge"
        The loss descended: the hinge max(0, 1 − m), the logistic ln(1 + e^−m) or the squared
        hinge max(0, 1 − m)².
    """

    _rule = "OGD"
    _own_params = {"loss": "hinge"}

    def __init__(
        self,
        *,
        eta: float = 1.0,
        loss: Literal["hinge", "logistic", "squared_hinge"] = "hinge",
        **params: Unpack[ClassifierParams],
    ) -> None:
        store_params(self, locals())

    def _rule_config(self):
        if not (isinstance(self.loss, str) and self.loss in LOSSES):
            raise InvalidParameterError(f"loss must be one of {LOSSES}, got {self.loss!r}")
        return {"loss": self.loss}


@document
class IELLIP(ConfidenceWeightedClassifier):
    _rule = "IELLIP"

    def __init__(
        self, *, b: float = 0.3, c: float = 0.1, **params: Unpack[SecondOrderClassifierParams]
    ) -> None:
        store_params(self, locals())


@document
class AdaGrad(Classifier):
    """
    AdaGrad keeps its own per-coordinate state (the gradient sums G_j), not a covariance.

    Parameters
    ----------
    penalty : {None, "l1"}, default=None
        The L1 penalty alpha·‖w‖₁ in one of the paper's two forms (`l1_form`), applied lazily
        so a row costs O(nnz); `sparsity_` and `sparse_coef_` report the result.
    l1_form : {"fobos", "rda"}, default="fobos"
        With `penalty="l1"`: "fobos", the composite mirror descent step, soft-thresholds every
        weight every round by alpha·η/H_jj, H_jj = δ + √G_j; "rda", regularised dual
        averaging, sets w_j = sign(−u_j)·(η·t/H_jj)·max(0, |u_j|/t − alpha) from the sum u_j
        of the loss gradients over the t rounds so far.
    """

    _rule = "AdaGrad"
    _form = "adagrad"
    _own_params = {"penalty": None, "alpha": 1e-4, "penalize_intercept": False, "l1_form": "fobos"}

    def __init__(
        self,
        *,
        eta: float = 1.0,
        delta: float = 1.0,
        penalty: Optional[Literal["l1"]] = None,
        alpha: float = 1e-4,
        penalize_intercept: bool = False,
        l1_form: Literal["fobos", "rda"] = "fobos",
        **params: Unpack[ClassifierParams],
    ) -> None:
        store_params(self, locals())


@document
class FTRL(_LogisticProbabilities, Classifier):
    """
    FTRL keeps its own per-coordinate state (z_j, n_j), not a covariance; `coef_` holds the
    weights computed from it, with exact zeros where |z_j| ≤ l1.

    Parameters
    ----------
    loss : {"logistic", "hinge"}, default="logistic"
        The loss whose gradients FTRL follows: the logistic ln(1 + e^−m) (the paper's) or the
        hinge max(0, 1 − m).
    """

    _rule = "FTRL"
    _form = "ftrl"
    _own_params = {"loss": "logistic"}

    def __init__(
        self,
        *,
        alpha: float = 0.1,
        beta: float = 1.0,
        l1: float = 0.0,
        l2: float = 0.0,
        loss: Literal["logistic", "hinge"] = "logistic",
        **params: Unpack[ClassifierParams],
    ) -> None:
        store_params(self, locals())

    def _rule_config(self):
        losses = ("logistic", "hinge")
        if not (isinstance(self.loss, str) and self.loss in losses):
            raise InvalidParameterError(f"loss must be one of {losses}, got {self.loss!r}")
        return {"loss": self.loss}


CATALOG = (ALMA, ROMMA, AggressiveROMMA, OGD, IELLIP, AdaGrad, FTRL)

#: The learners that refuse a kernel: ALMA and the ROMMAs read and rescale ‖μ‖², which the
#: dual form does not keep; AdaGrad and FTRL keep state per input coordinate.
NO_KERNEL_FORM = (ALMA, ROMMA, AggressiveROMMA, AdaGrad, FTRL)
