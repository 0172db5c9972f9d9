"""`partial_fit(..., return_scores=True)`: what the model predicted of each row just before
learning it, from the core's learning loop.

- The scores are, bit for bit, what `decision_function` (`predict` for a regressor) of the model
  at that moment gives the row alone, and the variances what the native model's `variance`
  gives, in a loop that predicts a row and then learns it, for every learner kind.
- The model learned is the one `partial_fit` learns without scores, bit for bit.
- A refused call leaves the model as it was.
"""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

import cwrs
from cwrs._validation import check_X, mapped_rows

RNG = np.random.default_rng(7)
X = RNG.normal(size=(48, 5))
LABELS = np.where(X[:, 0] - 0.5 * X[:, 1] + 0.3 * RNG.normal(size=48) > 0, "yes", "no")
CLASSES3 = RNG.integers(0, 3, size=48)
TARGETS = X @ np.array([1.0, -2.0, 0.5, 0.0, 1.5]) + 0.1 * RNG.normal(size=48)
WEIGHTS = np.tile([1.0, 0.0, 2.5, 0.25], 12)


def _every_kind():
    """(id, estimator, y, classes): every classifier and regressor, and the forms and options
    that change what a round does."""
    kinds = [(f"{c.__name__}", c(), LABELS, ["no", "yes"]) for c in cwrs.CLASSIFIERS]
    kinds += [(f"{c.__name__}", c(), TARGETS, None) for c in cwrs.REGRESSORS]
    kinds += [
        ("AROW-full", cwrs.AROW(covariance="full"), LABELS, ["no", "yes"]),
        ("AROW-lowrank", cwrs.AROW(covariance="lowrank", rank=2), LABELS, ["no", "yes"]),
        ("AROW-l1", cwrs.AROW(penalty="l1", alpha=0.01), LABELS, ["no", "yes"]),
        ("AROW-average", cwrs.AROW(average=3), LABELS, ["no", "yes"]),
        ("AROW-auto-noise", cwrs.AROW(process_noise="auto"), LABELS, ["no", "yes"]),
        ("AROW-noise", cwrs.AROW(covariance="full", process_noise=0.01), LABELS, ["no", "yes"]),
        ("AROW-multiclass", cwrs.AROW(), CLASSES3, [0, 1, 2]),
        ("SCW1-ovr-full", cwrs.SCW1(multi_class="ovr", covariance="full"), CLASSES3, [0, 1, 2]),
        ("AROW-kernel", cwrs.AROW(kernel="rbf", gamma=0.5, budget=10), LABELS, ["no", "yes"]),
        ("OGD-kernel", cwrs.OGD(kernel="poly", degree=2), LABELS, ["no", "yes"]),
        ("AROW-kernel-multiclass", cwrs.AROW(kernel="rbf"), CLASSES3, [0, 1, 2]),
        ("AROW-rff", cwrs.AROW(kernel_approximation="rff", n_components=20, random_state=0),
         LABELS, ["no", "yes"]),
        ("AROWRegressor-full-auto", cwrs.AROWRegressor(covariance="full", process_noise="auto"),
         TARGETS, None),
    ]
    return kinds


KINDS = _every_kind()


def _learn(estimator, X, y, classes, **kwargs):
    args = {} if classes is None else {"classes": classes}
    return estimator.partial_fit(X, y, **args, **kwargs)


def _native_state(estimator):
    return pickle.dumps(estimator._model.state())


def _variance_alone(estimator, row):
    """xᵀΣx of the row under the native model (after the estimator's feature map, if any)."""
    matrix, n_rows, _ = check_X(row)
    feature_map = estimator.__dict__.get("_feature_map")
    return estimator._model.variance(mapped_rows(matrix, n_rows, feature_map, scanned=True))[0]


def _predict_alone(estimator, row):
    if isinstance(estimator, tuple(cwrs.REGRESSORS)):
        return estimator.predict(row)
    return estimator.decision_function(row)


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("kind", KINDS, ids=[k[0] for k in KINDS])
def test_the_scores_are_the_predictions_of_a_predict_then_learn_loop(kind, sparse, weighted):
    _, prototype, y, classes = kind
    rows = sp.csr_matrix(X) if sparse else X
    weights = WEIGHTS if weighted else None
    # A first chunk learned plainly, then the scored batch continues it; and the same from a
    # fresh model.
    for start in (0, 8):
        scored, plain, by_row = clone(prototype), clone(prototype), clone(prototype)
        for model in (scored, plain, by_row) if start else ():
            _learn(model, rows[:start], y[:start], classes)
        kwargs = {} if weights is None else {"sample_weight": weights[start:]}
        returned, scores, variances = _learn(
            scored, rows[start:], y[start:], classes, return_scores=True, **kwargs
        )
        assert returned is scored
        _learn(plain, rows[start:], y[start:], classes, **kwargs)
        assert _native_state(scored) == _native_state(plain)
        assert (variances is None) == (not prototype._second_order)
        expected_scores, expected_variances = [], []
        for i in range(start, X.shape[0]):
            row = rows[i : i + 1]
            if i == 0:  # nothing learned yet: a fresh model predicts 0 with the prior variance
                first = clone(prototype)
                _learn(first, row, y[:1], classes, sample_weight=[0.0])
                expected_scores.append(_predict_alone(first, row)[0])
                if variances is not None:
                    expected_variances.append(_variance_alone(first, row))
            else:
                expected_scores.append(_predict_alone(by_row, row)[0])
                if variances is not None:
                    expected_variances.append(_variance_alone(by_row, row))
            h = 1.0 if weights is None else weights[i]
            _learn(by_row, row, y[i : i + 1], classes, sample_weight=[h])
        if getattr(prototype, "kernel_approximation", None) is None:
            np.testing.assert_array_equal(scores, np.array(expected_scores))
            if variances is not None:
                np.testing.assert_array_equal(variances, np.array(expected_variances))
            assert _native_state(by_row) == _native_state(scored)
        else:
            # The random features of a batch come from one BLAS product, whose rounding may
            # differ from a single row's in the last bit: the scores agree to rounding.
            np.testing.assert_allclose(scores, expected_scores, rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(variances, expected_variances, rtol=1e-12)


@pytest.mark.parametrize("kind", KINDS[:3], ids=[k[0] for k in KINDS[:3]])
def test_a_refused_call_leaves_the_model_as_it_was(kind):
    _, prototype, y, classes = kind
    model = _learn(clone(prototype), X[:10], y[:10], classes)
    before = _native_state(model)
    bad = X[10:].copy()
    bad[5, 2] = np.nan
    with pytest.raises(ValueError):
        _learn(model, bad, y[10:], classes, return_scores=True)
    with pytest.raises(ValueError):
        _learn(model, X[10:], y[10:11], classes, return_scores=True)
    with pytest.raises(ValueError):
        _learn(model, X[10:], y[10:], classes, return_scores=True, sample_weight=-WEIGHTS[10:])
    assert _native_state(model) == before


def test_balanced_class_weights_learn_the_same_model_with_scores():
    scored = cwrs.AROW(class_weight="balanced")
    plain = cwrs.AROW(class_weight="balanced")
    for chunk in np.array_split(np.arange(48), 4):
        _, scores, _ = scored.partial_fit(
            X[chunk], LABELS[chunk], classes=["no", "yes"], return_scores=True
        )
        plain.partial_fit(X[chunk], LABELS[chunk], classes=["no", "yes"])
        assert scores.shape == (len(chunk),)
    assert _native_state(scored) == _native_state(plain)
    np.testing.assert_array_equal(scored.class_counts_, plain.class_counts_)


def test_the_scores_give_the_online_mistakes():
    # The progressive scores are what n_mistakes_ counts: y·f ≤ 0 before learning.
    model, scores, _ = cwrs.AROW().partial_fit(X, LABELS, classes=["no", "yes"], return_scores=True)
    signs = np.where(LABELS == "yes", 1.0, -1.0)
    assert model.n_mistakes_ == int(np.sum(signs * scores <= 0))
