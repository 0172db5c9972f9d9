"""`predict_proba` of the learners trained on the logistic loss (`OGD(loss="logistic")`,
`FTRL`): σ(μ·x), as scikit-learn's `SGDClassifier(loss="log_loss")`, checked against the
formula written here; absent (as scikit-learn's `available_if`) for any other loss."""

import math
import warnings

import numpy as np
import pytest
from sklearn.calibration import CalibratedClassifierCV
from sklearn.model_selection import cross_val_score

import cwrs

RNG = np.random.default_rng(3)
X = RNG.normal(size=(300, 4))
Y2 = np.where(X[:, 0] + 0.5 * RNG.normal(size=300) > 0, "b", "a")
Y3 = np.argmax(X[:, :3] + 0.3 * RNG.normal(size=(300, 3)), axis=1)
LOGISTIC = [lambda **k: cwrs.FTRL(alpha=1.0, **k), lambda **k: cwrs.OGD(loss="logistic", **k)]


def sigmoid(m):
    return 1.0 / (1.0 + math.exp(-m)) if m >= 0 else math.exp(m) / (1.0 + math.exp(m))


@pytest.mark.parametrize("make", LOGISTIC, ids=["FTRL", "OGD"])
def test_two_classes_get_the_logistic_of_the_margin(make):
    model = make(random_state=0).fit(X, Y2)
    margins = model.decision_function(X)
    expected = np.array([[sigmoid(-m), sigmoid(m)] for m in margins])
    np.testing.assert_allclose(model.predict_proba(X), expected, rtol=1e-15, atol=0)
    np.testing.assert_array_equal(
        model.classes_[model.predict_proba(X).argmax(axis=1)], model.predict(X)
    )
    np.testing.assert_allclose(np.exp(model.predict_log_proba(X)), model.predict_proba(X))


@pytest.mark.parametrize("multi_class", ["max-score", "ovr"])
@pytest.mark.parametrize("make", LOGISTIC, ids=["FTRL", "OGD"])
def test_more_classes_get_a_softmax_or_the_normalized_one_vs_rest_logistic(make, multi_class):
    model = make(multi_class=multi_class, random_state=0).fit(X, Y3)
    scores = model.decision_function(X)
    if multi_class == "ovr":  # scikit-learn's rule for one-vs-rest logistic models
        positive = np.vectorize(sigmoid)(scores)
        expected = positive / positive.sum(axis=1, keepdims=True)
    else:
        exp = np.exp(scores - scores.max(axis=1, keepdims=True))
        expected = exp / exp.sum(axis=1, keepdims=True)
    proba = model.predict_proba(X)
    np.testing.assert_allclose(proba, expected, rtol=1e-13)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-15)
    np.testing.assert_array_equal(model.classes_[proba.argmax(axis=1)], model.predict(X))


def test_extreme_margins_give_0_and_1_without_overflow_and_keep_small_probabilities():
    model = cwrs.FTRL(alpha=1.0, fit_intercept=False).fit(X, Y2)
    rows = np.vstack([X[0] * s for s in (1e3, -1e3, 1e-3)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        proba = model.predict_proba(rows)
    margins = model.decision_function(rows)
    assert np.all(np.isfinite(proba)) and np.all((proba >= 0) & (proba <= 1))
    # The small side is computed as σ(−|m|), not as 1 − σ(|m|): its digits survive.
    small = np.min(proba[0])
    assert small == pytest.approx(sigmoid(-abs(margins[0])), rel=1e-15)


@pytest.mark.parametrize(
    "model",
    [cwrs.OGD(), cwrs.OGD(loss="squared_hinge"), cwrs.FTRL(loss="hinge"), cwrs.PA1(),
     cwrs.Perceptron(), cwrs.AdaGrad()],
    ids=lambda m: repr(m),
)
def test_other_losses_have_no_predict_proba(model):
    assert not hasattr(model, "predict_proba")
    assert not hasattr(model, "predict_log_proba")
    with pytest.raises(AttributeError, match="loss='logistic'|predict_proba"):
        model.fit(X, Y2).predict_proba(X)


def test_scikit_learn_sees_the_probabilities():
    scores = cross_val_score(cwrs.FTRL(alpha=1.0), X, Y2, cv=3, scoring="neg_log_loss")
    assert np.all(scores < 0) and np.all(np.isfinite(scores))
    calibrated = CalibratedClassifierCV(cwrs.OGD(loss="logistic"), cv=3).fit(X, Y2)
    assert calibrated.predict_proba(X).shape == (300, 2)


def test_scores_that_overflowed_to_infinity_give_probabilities_not_nan():
    from cwrs._probability import score_probabilities

    inf = np.inf
    scores = np.array([[inf, 1.0, 2.0], [inf, inf, 0.0], [-inf, -inf, -inf], [1.0, 2.0, 3.0]])
    softmax = score_probabilities(scores, one_vs_rest=False)
    np.testing.assert_array_equal(softmax[:3], [[1, 0, 0], [0.5, 0.5, 0], [1 / 3, 1 / 3, 1 / 3]])
    exp = np.exp([1.0, 2.0, 3.0] - np.float64(3.0))
    np.testing.assert_allclose(softmax[3], exp / exp.sum(), rtol=1e-15)
    ovr = score_probabilities(np.array([[-inf, -inf, -inf], [inf, -inf, -inf]]), one_vs_rest=True)
    np.testing.assert_array_equal(ovr, [[1 / 3, 1 / 3, 1 / 3], [1, 0, 0]])
    np.testing.assert_array_equal(score_probabilities(np.array([inf, -inf]), False), [[0, 1], [1, 0]])
