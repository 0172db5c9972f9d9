"""Type-checked by mypy (see [tool.mypy] in pyproject.toml), never run: the public API as a user
writes it, with the types mypy must infer (`assert_type`) and the mistakes it must reject (each
`# type: ignore[code]` is required: with `warn_unused_ignores` an accepted line fails the check).
"""

from __future__ import annotations

from typing import Any, Union

import numpy as np
import numpy.typing as npt
from typing_extensions import assert_type

import cwrs
from cwrs.bandit import ContextualBandit, SimulationResult, simulate
from cwrs.river import RiverClassifier, RiverRegressor

X = np.zeros((4, 3))
y = np.array([0, 1, 0, 1])

clf = cwrs.AROW(r=0.5, covariance="full").fit(X, y)
assert_type(clf, cwrs.AROW)
assert_type(clf.partial_fit(X, y, classes=[0, 1]), cwrs.AROW)
assert_type(
    clf.partial_fit(X, y, return_scores=True),
    tuple[cwrs.AROW, npt.NDArray[np.float64], Union[npt.NDArray[np.float64], None]],
)
assert_type(clf.decision_function(X), npt.NDArray[np.float64])
assert_type(clf.predict_proba(X), npt.NDArray[np.float64])
assert_type(clf.predict(X), npt.NDArray[Any])
assert_type(clf.score(X, y), float)
assert_type(clf.n_updates_, int)
assert_type(clf.set_params(r=2.0), cwrs.AROW)
assert isinstance(clf, cwrs.Classifier)

reg = cwrs.AROWRegressor(a=2.0).partial_fit(X, y.astype(float))
assert_type(reg.predict(X), npt.NDArray[np.float64])
assert_type(reg.predict(X, return_std=True), tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]])
assert_type(
    reg.partial_fit(X, y.astype(float), return_scores=True),
    tuple[cwrs.AROWRegressor, npt.NDArray[np.float64], Union[npt.NDArray[np.float64], None]],
)
assert_type(cwrs.AROWRegressor(r="auto").fit(X, y.astype(float)).noise_variance_, float)
assert_type(
    cwrs.AROWRegressor(r="auto", a="auto").fit(X, y.astype(float)).prior_variance_, float
)
assert_type(clf.predict_posterior_proba(X), npt.NDArray[np.float64])
assert_type(clf.noise_variance_, float)
assert_type(cwrs.FTRL().fit(X, y).predict_proba(X), npt.NDArray[np.float64])
assert_type(cwrs.PARegressor(epsilon=0.0).fit(X, y).coef_, npt.NDArray[np.float64])

clf.save("model.cwrs")
assert_type(
    cwrs.load("model.cwrs"),
    Union[cwrs.Classifier, cwrs.Regressor, cwrs.CalibratedClassifier, cwrs.SelectiveSampler,
          ContextualBandit],
)
assert_type(cwrs.load("model.cwrs", ContextualBandit), ContextualBandit)
assert_type(cwrs.load("model.cwrs", cwrs.AROW), cwrs.AROW)
calibrated = cwrs.CalibratedClassifier(cwrs.AROW(), method="isotonic").fit(X, y)
assert_type(calibrated, cwrs.CalibratedClassifier)
assert_type(calibrated.partial_fit(X, y, classes=[0, 1]), cwrs.CalibratedClassifier)
assert_type(calibrated.predict_proba(X), npt.NDArray[np.float64])
assert_type(calibrated.predict(X), npt.NDArray[Any])
assert_type(cwrs.load("model.cwrs", cwrs.CalibratedClassifier), cwrs.CalibratedClassifier)
assert_type(cwrs.load("model.cwrs", cwrs.Classifier).predict(X), npt.NDArray[Any])

hasher = cwrs.FeatureHasher(2**10, input_type="string")
vectorizer = cwrs.HashingVectorizer(n_features=2**10, ngram_range=(1, 2), norm=None)
assert_type(vectorizer.fit(["a text"]), cwrs.HashingVectorizer)
river_clf = RiverClassifier(cwrs.SCW1(C=0.5), capacity=8)
river_clf.learn_one({"a": 1.0, 2: 0.5}, True)
assert_type(river_clf.predict_proba_one({"a": 1.0}), dict[Any, float])
RiverRegressor(cwrs.PA1Regressor()).learn_one({"x": 1.0}, 2.5)

sampler = cwrs.SelectiveSampler(cwrs.AROW(), "bbq", kappa=0.5).fit(X, y)
assert_type(sampler, cwrs.SelectiveSampler)
assert_type(sampler.query(X), npt.NDArray[np.bool_])
assert_type(sampler.partial_fit(X, y, sampler.query(X)), cwrs.SelectiveSampler)
assert_type(sampler.n_queried_, int)

# Mistakes the types catch.
cwrs.AROW(eta=0.7)  # type: ignore[call-arg]
cwrs.CW(covariance="dense")  # type: ignore[arg-type]
cwrs.CalibratedClassifier(cwrs.AROW(), method="sigmoid")  # type: ignore[arg-type]
cwrs.AROW(1.0)  # type: ignore[call-arg]
cwrs.PA.predict_proba  # type: ignore[attr-defined]
cwrs.FeatureHasher(input_type="text")  # type: ignore[arg-type]
cwrs.HashingVectorizer(norm="max")  # type: ignore[arg-type]
cwrs.load("model.cwrs", dict)  # type: ignore[type-var]
cwrs.SelectiveSampler(cwrs.AROW(), "entropy")  # type: ignore[arg-type]

bandit = ContextualBandit(cwrs.AROWRegressor(covariance="full"), "ucb", alpha=0.5)
assert_type(bandit.choose(X), tuple[int, float])
assert_type(bandit.update(X, 0, 1.0), ContextualBandit)
assert_type(bandit.choose_batch([X, X])[1], npt.NDArray[np.float64])
assert_type(simulate(bandit, X, y), SimulationResult)
assert_type(bandit.learn_logged([X], [0], [1.0], [0.5], method="dr"), ContextualBandit)
bandit.learn_logged([X], [0], [1.0], [0.5], method="direct")  # type: ignore[arg-type]
ContextualBandit(cwrs.AROWRegressor(), "softmax")  # type: ignore[arg-type]
bandit.save("bandit.cwrs")
assert_type(cwrs.merge([bandit, bandit]), ContextualBandit)
assert_type(cwrs.merge([clf, clf]), cwrs.AROW)
