"""Hyper-parameters without effect in the chosen configuration are refused or warned about
by one mechanism (`cwrs._params.check_ineffective`), wherever the
hyper-parameters are validated: `fit`, the first `partial_fit`, and a `partial_fit` after
`set_params`.

Refused (ValueError) where the user evidently expected an effect the configuration cannot give:
`penalize_intercept=True` without `penalty` (and, checked elsewhere, `penalty` with
`covariance="full"` or a kernel). Warned about (IneffectiveParameterWarning) where ignoring the
value loses nothing, or where generic code sets it (scikit-learn's checks set `alpha` and
`n_components` on any estimator that has them, so refusing them would break its checks): `alpha`
without `penalty`, `n_components` without `kernel_approximation`, `random_state` with
`shuffle=False` and no random features, `penalize_intercept=True` with `fit_intercept=False`.
Defaults never count; `covariance` and `penalty` do not exist on the first-order learners.
"""

import pickle
import warnings

import numpy as np
import pytest

import cwrs
from _cwtest_util import stable_id

X = np.random.default_rng(0).normal(size=(30, 4))
Y = np.where(X[:, 0] > 0, 1, -1)
Y_REGRESSION = X @ np.arange(1.0, 5.0)

REFUSED = [
    (cwrs.SCW1(penalize_intercept=True), "penalize_intercept=True would have no effect: it"),
    (cwrs.AROWRegressor(penalize_intercept=True), "penalize_intercept=True would have no effect"),
    (cwrs.AROW(penalty="l1", covariance="full"), "an L1 penalty needs the diagonal covariance"),
    (cwrs.AROW(penalty="l1", kernel="rbf"), "an L1 penalty applies to the primal learners"),
]
WARNED = [
    (cwrs.AROW(alpha=0.01, random_state=0), "alpha=0.01 has no effect: it is the strength of"),
    (cwrs.AROW(alpha=0.01, kernel="rbf", random_state=0), "alpha=0.01 has no effect"),
    (cwrs.AROWRegressor(alpha=0.5, random_state=0), "alpha=0.5 has no effect"),
    (cwrs.PA1(n_components=50, random_state=0), "n_components=50 has no effect: it is the number"),
    (cwrs.AROW(n_components=10, kernel="rbf", random_state=0), "n_components=10 has no effect"),
    (cwrs.AROW(shuffle=False, random_state=0), "random_state=0 has no effect: it seeds"),
    (cwrs.PARegressor(shuffle=False, random_state=3), "random_state=3 has no effect"),
    (
        cwrs.AROW(penalty="l1", penalize_intercept=True, fit_intercept=False, random_state=0),
        "penalize_intercept=True has no effect: it penalizes the bias",
    ),
]
# Configurations where every parameter set acts: no warning, no error.
EFFECTIVE = [
    cwrs.AROW(),
    cwrs.AROW(penalty="l1", alpha=0.01, penalize_intercept=True),
    cwrs.AROWRegressor(penalty="l1-uniform", alpha=0.5),
    cwrs.CW(kernel_approximation="rff", n_components=20, random_state=0),
    cwrs.CW(kernel_approximation="rff", n_components=20, shuffle=False, random_state=0),
    cwrs.AROW(random_state=0),  # shuffle=True: the seed orders fit's passes
    cwrs.PA(shuffle=True, random_state=np.random.RandomState(0)),
    cwrs.AROW(shuffle=False, random_state=None),
    cwrs.AROW(alpha=1e-4),  # the default value counts as unset
]


def targets(estimator):
    return Y_REGRESSION if isinstance(estimator, cwrs.Regressor) else Y


def first_partial_fit(estimator):
    y = targets(estimator)
    if isinstance(estimator, cwrs.Classifier):
        return estimator.partial_fit(X, y, classes=[-1, 1])
    return estimator.partial_fit(X, y)


@pytest.mark.parametrize("estimator, message", REFUSED, ids=[repr(e) for e, _ in REFUSED])
def test_refused(estimator, message):
    with pytest.raises(ValueError, match=message):
        estimator.fit(X, targets(estimator))
    with pytest.raises(ValueError, match=message):
        first_partial_fit(estimator)
    assert not hasattr(estimator, "_model")


@pytest.mark.parametrize("estimator, message", WARNED, ids=[repr(e) for e, _ in WARNED])
def test_warned_once_per_fit(estimator, message):
    with pytest.warns(cwrs.IneffectiveParameterWarning, match=message) as record:
        estimator.fit(X, targets(estimator))
    assert len(record) == 1
    with pytest.warns(cwrs.IneffectiveParameterWarning, match=message):
        first_partial_fit(type(estimator)(**estimator.get_params()))
    # The model is the one of the configuration without the parameter.
    name = message.split("=")[0]
    plain = type(estimator)(**{**estimator.get_params(), name: type(estimator)().get_params()[name]})
    plain.fit(X, targets(estimator))
    predict = "predict" if isinstance(plain, cwrs.Regressor) else "decision_function"
    assert getattr(plain, predict)(X).tobytes() == getattr(estimator, predict)(X).tobytes()


@pytest.mark.parametrize("estimator", EFFECTIVE, ids=stable_id)
def test_no_message_when_every_parameter_acts(estimator):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        estimator.fit(X, targets(estimator))
        first_partial_fit(type(estimator)(**estimator.get_params()))


def test_set_params_is_checked_by_the_next_partial_fit_and_leaves_the_model():
    model = cwrs.AROW(random_state=0).fit(X, Y)
    before = pickle.dumps(model)
    model.set_params(penalize_intercept=True)
    with pytest.raises(ValueError, match="penalize_intercept=True would have no effect"):
        model.partial_fit(X, Y)
    model.set_params(penalize_intercept=False)
    assert pickle.dumps(model) == before
    model.set_params(shuffle=False)
    with pytest.warns(cwrs.IneffectiveParameterWarning, match="random_state=0"):
        model.partial_fit(X, Y)
    with warnings.catch_warnings():  # checked once per change, not at every call
        warnings.simplefilter("error")
        model.partial_fit(X, Y)


@pytest.mark.parametrize("cls", [cwrs.Perceptron, cwrs.PA1, cwrs.PARegressor])
def test_first_order_learners_have_no_covariance_or_penalty(cls):
    with pytest.raises(TypeError, match="covariance"):
        cls(covariance="full")
    with pytest.raises(ValueError, match="Invalid parameter 'penalty'"):
        cls().set_params(penalty="l1")
