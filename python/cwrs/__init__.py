"""cwrs: confidence-weighted online learning with a Rust core.

Binary learners Perceptron, PA, PA1, PA2 (first order) and SOP, CW, ExactCW, AROW, NAROW, SCW1,
SCW2, NHERD (second order, `covariance="diag"` or `"full"`), each a scikit-learn-style estimator
with `partial_fit` for streams.
"""

from ._classifiers import (
    AROW,
    CLASSIFIERS,
    CW,
    NAROW,
    NHERD,
    PA,
    PA1,
    PA2,
    SCW1,
    SCW2,
    SOP,
    ExactCW,
    Perceptron,
)
from ._validation import DataConversionWarning, NotFittedError

__version__ = "0.1.0"

__all__ = [
    "AROW",
    "CLASSIFIERS",
    "CW",
    "NAROW",
    "NHERD",
    "PA",
    "PA1",
    "PA2",
    "SCW1",
    "SCW2",
    "SOP",
    "DataConversionWarning",
    "ExactCW",
    "NotFittedError",
    "Perceptron",
]
