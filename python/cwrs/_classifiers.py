"""The binary learners of the confidence-weighted family.

Every learner applies the same template on each example (x, y ∈ {−1, +1}), with
m = y·μ·x and v = xᵀΣx:

    μ ← μ + α·y·Σx,        Σ⁻¹ ← Σ⁻¹ + c·x xᵀ

and differs only in the scalars (α, c) and when it fires (docs/design.md §2). First-order
learners keep Σ = I. Second-order learners start from Σ = a·I and keep either the full covariance
(`covariance="full"`, Sherman–Morrison rank-one updates, O(d²) per update) or its diagonal
(`covariance="diag"`, the diagonal of the precision update, O(nnz) per example).

Each class names its rule in the rule table of the Rust core (`_cwrs.rule_table()`), which holds
the rule's paper, update and hyper-parameters (defaults, ranges, meanings); `@document` builds the
docstring from it and from the entries of the parameters the learners share (covariance, kernels,
multiclass, L1, ...) in `_docs.py`, and `cwrs._params` validates the parameters against it.
Each `__init__` spells out the rule's own parameters; those the learners share are its
`**params`, typed once in `cwrs._typing` (`Unpack[...]`: mypy and IDEs check them by name and
type), and `cwrs._params` gives the `__init__` the full signature, with their defaults, that
scikit-learn and `help` read. tests/test_rule_table.py pins the signatures to the table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._classifier import Classifier, ConfidenceWeightedClassifier
from ._docs import document
from ._params import store_params

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ._typing import ClassifierParams, SecondOrderClassifierParams


@document
class Perceptron(Classifier):
    _rule = "Perceptron"


@document
class PA(Classifier):
    _rule = "PA"


@document
class PA1(Classifier):
    _rule = "PA1"

    def __init__(self, *, C: float = 1.0, **params: Unpack[ClassifierParams]) -> None:
        store_params(self, locals())


@document
class PA2(Classifier):
    _rule = "PA2"

    def __init__(self, *, C: float = 1.0, **params: Unpack[ClassifierParams]) -> None:
        store_params(self, locals())


@document
class SOP(ConfidenceWeightedClassifier):
    """Parameters
    ----------
    a : float, default=1.0
        Initial variance, Σ₀ = a·I (a > 0). This is the inverse of the paper's regulariser: the
        paper's A₀ = a'·I corresponds to a = 1/a'.
    """

    _rule = "SOP"


@document
class CW(ConfidenceWeightedClassifier):
    _rule = "CW"

    def __init__(self, *, eta: float = 0.7, **params: Unpack[SecondOrderClassifierParams]) -> None:
        store_params(self, locals())


@document
class ExactCW(ConfidenceWeightedClassifier):
    _rule = "ExactCW"

    def __init__(self, *, eta: float = 0.7, **params: Unpack[SecondOrderClassifierParams]) -> None:
        store_params(self, locals())


@document
class AROW(ConfidenceWeightedClassifier):
    _rule = "AROW"

    def __init__(self, *, r: float = 1.0, **params: Unpack[SecondOrderClassifierParams]) -> None:
        store_params(self, locals())


@document
class NAROW(ConfidenceWeightedClassifier):
    _rule = "NAROW"

    def __init__(self, *, b: float = 1.0, **params: Unpack[SecondOrderClassifierParams]) -> None:
        store_params(self, locals())


@document
class SCW1(ConfidenceWeightedClassifier):
    _rule = "SCW1"

    def __init__(
        self, *, C: float = 1.0, eta: float = 0.75, **params: Unpack[SecondOrderClassifierParams]
    ) -> None:
        store_params(self, locals())


@document
class SCW2(ConfidenceWeightedClassifier):
    _rule = "SCW2"

    def __init__(
        self, *, C: float = 1.0, eta: float = 0.9, **params: Unpack[SecondOrderClassifierParams]
    ) -> None:
        store_params(self, locals())


@document
class NHERD(ConfidenceWeightedClassifier):
    _rule = "NHERD"

    def __init__(self, *, C: float = 1.0, **params: Unpack[SecondOrderClassifierParams]) -> None:
        store_params(self, locals())


from ._catalog import CATALOG  # noqa: E402 (the learners of docs/design.md §2.9)

CLASSIFIERS = (
    Perceptron, PA, PA1, PA2, SOP, CW, ExactCW, AROW, NAROW, SCW1, SCW2, NHERD, *CATALOG
)
