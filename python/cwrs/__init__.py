"""cwrs: confidence-weighted online learning with a Rust core.

Binary learners Perceptron, PA, PA1, PA2 (first order) and SOP, CW, ExactCW, AROW, NAROW, SCW1,
SCW2, NHERD (second order, `covariance="diag"`, `"full"` or `"lowrank"`), and from other
libraries ALMA, ROMMA, AggressiveROMMA, OGD, AdaGrad, FTRL (first order) and IELLIP (second
order), each a scikit-learn-style estimator with `partial_fit` for streams, for two classes or
many (`multi_class="max-score"|"ovr"`), with `average=` (averaged weights) and, second order,
`process_noise=` (drifting streams).
Regressors: AROWRegressor (recursive least squares), PARegressor, PA1Regressor, PA2Regressor.
Several cores and machines: `n_jobs=`, `cwrs.merge(models)` and `cwrs.dask`.
Calibrated probabilities learned online: `CalibratedClassifier(estimator, method=...)`.
Persistence: `estimator.save(path)` and `cwrs.load(path)` (the .cwrs format), or pickle.
LIBSVM files: `load_svmlight`, `iter_svmlight` and every learner's `partial_fit_file`.
Text streams: `HashingVectorizer` (raw documents) and `FeatureHasher` (token lists, dicts).
Active learning (labels only for the rows the model is unsure of): `SelectiveSampler`.
Contextual bandits (Thompson sampling, UCB from the model's uncertainty): `cwrs.bandit`.
The bundled data set: `cwrs.datasets.load_svmguide3()`.
"""

from . import bandit, datasets
from ._active import SelectiveSampler
from ._catalog import ALMA, FTRL, IELLIP, OGD, ROMMA, AdaGrad, AggressiveROMMA
from ._calibration import CalibratedClassifier
from ._classifier import Classifier
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
from ._cwrs import InvalidModelStateError, InvalidParameterError
from ._hashing import FeatureHasher
from ._merge import merge
from ._persist import ModelFormatError, load
from ._regressor import Regressor
from ._regressors import REGRESSORS, AROWRegressor, PA1Regressor, PA2Regressor, PARegressor
from ._svmlight import iter_svmlight, load_svmlight
from ._text import HashingVectorizer
from ._validation import (
    DataConversionWarning,
    IneffectiveParameterWarning,
    NotFittedError,
    RegressionTargetWarning,
)

__version__ = "0.1.0"

__all__ = [
    "ALMA",
    "AdaGrad",
    "AggressiveROMMA",
    "FTRL",
    "IELLIP",
    "OGD",
    "ROMMA",
    "AROW",
    "AROWRegressor",
    "PA1Regressor",
    "PA2Regressor",
    "PARegressor",
    "REGRESSORS",
    "CLASSIFIERS",
    "CW",
    "CalibratedClassifier",
    "Classifier",
    "Regressor",
    "NAROW",
    "NHERD",
    "PA",
    "PA1",
    "PA2",
    "SCW1",
    "SCW2",
    "SOP",
    "SelectiveSampler",
    "DataConversionWarning",
    "ExactCW",
    "FeatureHasher",
    "HashingVectorizer",
    "IneffectiveParameterWarning",
    "InvalidModelStateError",
    "InvalidParameterError",
    "ModelFormatError",
    "NotFittedError",
    "Perceptron",
    "RegressionTargetWarning",
    "iter_svmlight",
    "load",
    "load_svmlight",
    "merge",
]
