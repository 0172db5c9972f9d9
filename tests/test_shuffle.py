"""`fit` shuffles by default: each pass presents the rows in a fresh random
order drawn from `random_state`, as scikit-learn's SGD, Perceptron and PA estimators do, for
every estimator (classifiers, regressors, kernel learners); `shuffle=False` keeps the stored
order and `partial_fit` never reorders.

Why it matters: data sets are often stored sorted by label (the bundled svmguide3: 947 × −1,
then 296 × +1), and an online learner that reads them in that order ends on a long run of one
class. With the stored order, `cross_val_score(make_pipeline(StandardScaler(), SCW1()), X, y,
cv=5)` scored 0.28, far below the majority class (0.76).
"""

import inspect
import pickle

import numpy as np
import pytest

import cwrs
from cwrs.datasets import load_svmguide3

ESTIMATORS = [*cwrs.CLASSIFIERS, *cwrs.REGRESSORS]
N, D = 40, 5


def sorted_data(regression=False):
    """Rows sorted by label, as many stored data sets are."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(N, D))
    score = X @ rng.normal(size=D)
    if regression:
        return X[np.argsort(score)], np.sort(score)
    y = np.where(score > 0, 1, -1)
    order = np.argsort(y, kind="stable")
    return X[order], y[order]


def first_fit(estimator, X, y):
    """partial_fit (with the classes on a classifier's first call)."""
    if isinstance(estimator, cwrs.Classifier) and not hasattr(estimator, "_model"):
        return estimator.partial_fit(X, y, classes=[-1, 1])
    return estimator.partial_fit(X, y)


def clone_with(estimator, **params):
    return type(estimator)(**{**estimator.get_params(), **params})


def model_state(estimator):
    """The native model's whole state (means, covariances, counters, support set), as bytes."""
    return pickle.dumps(estimator._model.state())


def assert_same_model(a, b):
    assert model_state(a) == model_state(b)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_shuffle_is_the_default(cls):
    assert inspect.signature(cls).parameters["shuffle"].default is True
    assert cls().shuffle is True


@pytest.mark.parametrize(
    "estimator",
    [cls(random_state=5) for cls in ESTIMATORS]
    + [
        cwrs.AROW(kernel="rbf", random_state=5),
        cwrs.PA1(kernel="linear", budget=10, random_state=5),
    ],
    ids=repr,
)
def test_default_fit_is_a_fresh_permutation_per_pass(estimator):
    """The default fit with n_iter=2 is two passes, each in the order of the next permutation of
    np.random.RandomState(random_state), exactly as partial_fit on the permuted rows."""
    X, y = sorted_data(regression=isinstance(estimator, cwrs.Regressor))
    fitted = estimator.set_params(n_iter=2).fit(X, y)
    rng = np.random.RandomState(5)
    manual = clone_with(estimator, random_state=None)
    for _ in range(2):
        order = rng.permutation(N)
        first_fit(manual, X[order], y[order])
    assert_same_model(fitted, manual)
    in_order = clone_with(estimator, shuffle=False, random_state=None).fit(X, y)
    assert model_state(fitted) != model_state(in_order)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_shuffle_false_keeps_the_stored_order(cls):
    X, y = sorted_data(regression=issubclass(cls, cwrs.Regressor))
    fitted = cls(shuffle=False).fit(X, y)
    assert_same_model(fitted, first_fit(cls(), X, y))


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_partial_fit_never_reorders(cls):
    # shuffle=True (the default) and a seed change nothing in partial_fit: one pass, in order.
    X, y = sorted_data(regression=issubclass(cls, cwrs.Regressor))
    streamed = first_fit(cls(shuffle=True, random_state=3), X, y)
    assert_same_model(streamed, cls(shuffle=False).fit(X, y))


def test_default_scw1_cross_validates_on_sorted_svmguide3():
    """The example a user met: the default SCW1 in a pipeline, cross-validated on the bundled
    svmguide3 (stored sorted by label), beats the majority class (0.762); in stored order it
    scores 0.279."""
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = load_svmguide3()
    majority = max(np.mean(y == 1), np.mean(y == -1))
    assert majority == pytest.approx(0.762, abs=1e-3)
    for seed in (0, 1):
        pipeline = make_pipeline(StandardScaler(), cwrs.SCW1(random_state=seed))
        assert cross_val_score(pipeline, X, y, cv=5).mean() > majority
    in_order = make_pipeline(StandardScaler(), cwrs.SCW1(shuffle=False))
    assert cross_val_score(in_order, X, y, cv=5).mean() < 0.5


def test_bundled_svmguide3_is_sorted_by_label():
    X, y = load_svmguide3()
    assert X.shape == (1243, 21) and X.dtype == np.float64
    assert (y[:947] == -1).all() and (y[947:] == 1).all()
