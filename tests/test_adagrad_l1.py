"""AdaGrad's L1 penalty in the paper's two forms (Duchi, Hazan & Singer, JMLR 2011; docs/design.md
§2.9) against an eager NumPy reference written from the formulas: every coordinate of every class
thresholded (FOBOS) or recomputed (RDA) every round, where cwrs does it lazily in O(nnz)."""

from __future__ import annotations

import io
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import cwrs
from cwrs import InvalidParameterError


def _soft(w, threshold):
    return np.sign(w) * np.maximum(0.0, np.abs(w) - threshold)


def reference(X, labels, n_classes, form, eta, delta, lam, penalize_intercept=False):
    """The weights (classes × (features + bias)) after one pass in order; `labels` are class
    indices. Binary (n_classes=2) is one model with y = ±1; multiclass is max-score."""
    X = np.hstack([X, np.ones((X.shape[0], 1))])
    n_models = 1 if n_classes == 2 else n_classes
    d = X.shape[1]
    w, u, G = (np.zeros((n_models, d)) for _ in range(3))
    lams = np.full(d, lam)
    if not penalize_intercept:
        lams[-1] = 0.0
    for t, (x, label) in enumerate(zip(X, labels), start=1):
        scores = w @ x
        if n_classes == 2:
            y = 1.0 if label == 1 else -1.0
            steps = {0: y} if y * scores[0] < 1 else {}
        else:
            others = [k for k in range(n_classes) if k != label]
            rival = others[int(np.argmax(scores[others]))]
            steps = {label: 1.0, rival: -1.0} if scores[label] - scores[rival] < 1 else {}
        for k, step in steps.items():
            g = -step * x
            G[k] += g**2
            u[k] += g
            if form == "fobos":
                w[k] -= eta * g / (delta + np.sqrt(G[k]))
        H = delta + np.sqrt(G)
        if form == "fobos":
            w = _soft(w, lams * eta / H)
        else:
            w = np.sign(-u) * (eta * t / H) * np.maximum(0.0, np.abs(u) / t - lams)
    return w


def _stream(seed, n, d, sparsity, n_classes):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) >= sparsity)
    # Labels from the first features (with noise): the others are noise the penalty zeroes.
    labels = np.argmax(X[:, :n_classes] + 0.3 * rng.normal(size=(n, n_classes)), axis=1)
    if n_classes == 2:
        labels = (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(int)
    labels[:n_classes] = np.arange(n_classes)
    return X, labels


def _coef(model):
    return np.hstack([model.coef_, model.intercept_[:, None]])


CASES = [
    # (form, eta, delta, alpha, sparsity, n_classes, penalize_intercept)
    ("fobos", 1.0, 1.0, 0.2, 0.0, 2, False),
    ("fobos", 0.3, 0.1, 0.1, 0.8, 2, True),
    ("rda", 1.0, 1.0, 0.05, 0.0, 2, False),
    ("rda", 0.5, 0.5, 0.1, 0.8, 2, True),
    ("fobos", 0.5, 1.0, 0.03, 0.6, 3, False),
    ("rda", 0.5, 1.0, 0.05, 0.6, 3, False),
]


@pytest.mark.parametrize("case", CASES, ids=str)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_agrees_with_the_eager_reference(case, seed):
    form, eta, delta, alpha, sparsity, n_classes, penalize_intercept = case
    X, labels = _stream(seed, 200, 12, sparsity, n_classes)
    params = dict(eta=eta, delta=delta, penalty="l1", alpha=alpha, l1_form=form,
                  penalize_intercept=penalize_intercept, shuffle=False)
    expected = reference(X, labels, n_classes, form, eta, delta, alpha, penalize_intercept)
    for data in (X, sp.csr_matrix(X)):
        model = cwrs.AdaGrad(**params).fit(data, labels)
        np.testing.assert_allclose(_coef(model), expected, rtol=0, atol=1e-10)
        # Predictions between rounds see the caught-up weights.
        scores = model.decision_function(data).reshape(len(labels), -1)
        np.testing.assert_allclose(scores.T, (expected @ np.hstack([X, np.ones((200, 1))]).T)
                                   .reshape(scores.T.shape), rtol=0, atol=1e-9)
    # The penalty zeroes weights exactly.
    assert np.any(expected == 0)
    np.testing.assert_array_equal(_coef(model) == 0, expected == 0)


@pytest.mark.parametrize("form", ["fobos", "rda"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_row_by_row_learns_the_same(form, n_classes):
    X, labels = _stream(5, 80, 6, 0.5, n_classes)
    model = cwrs.AdaGrad(penalty="l1", alpha=0.1, l1_form=form)
    for i in range(len(labels)):
        model.partial_fit(X[i : i + 1], labels[i : i + 1], classes=np.arange(n_classes))
    expected = reference(X, labels, n_classes, form, 1.0, 1.0, 0.1)
    np.testing.assert_allclose(_coef(model), expected, rtol=0, atol=1e-10)


def test_without_penalty_is_unchanged():
    X, labels = _stream(3, 100, 8, 0.5, 2)
    plain = cwrs.AdaGrad(shuffle=False).fit(X, labels)
    zero = cwrs.AdaGrad(shuffle=False, penalty="l1", alpha=0.0).fit(X, labels)
    np.testing.assert_array_equal(plain.coef_, zero.coef_)
    np.testing.assert_array_equal(plain.intercept_, zero.intercept_)


@pytest.mark.parametrize("form", ["fobos", "rda"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_round_trips_mid_stream_continue_identically(form, n_classes):
    X, labels = _stream(4, 120, 10, 0.7, n_classes)
    classes = np.arange(n_classes)
    model = cwrs.AdaGrad(penalty="l1", alpha=0.05, l1_form=form)
    model.partial_fit(X[:60], labels[:60], classes=classes)
    buffer = io.BytesIO()
    model.save(buffer)
    copies = [pickle.loads(pickle.dumps(model)), cwrs.load(io.BytesIO(buffer.getvalue()))]
    for m in [model, *copies]:
        m.partial_fit(X[60:], labels[60:])
    for copy in copies:
        np.testing.assert_array_equal(_coef(copy), _coef(model))
        np.testing.assert_array_equal(copy.decision_function(X), model.decision_function(X))
    expected = reference(X, labels, n_classes, form, 1.0, 1.0, 0.05)
    np.testing.assert_allclose(_coef(model), expected, rtol=0, atol=1e-10)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"penalty": "l1-uniform"}, 'penalty must be None or "l1"'),
        ({"penalty": "l1-rda"}, 'penalty must be None or "l1"'),
        ({"penalty": "l1", "l1_form": "eager"}, 'l1_form must be "fobos" or "rda"'),
        ({"penalty": "l1", "l1_form": None}, 'l1_form must be "fobos" or "rda"'),
        ({"penalty": "l1", "alpha": -1.0}, "alpha must be a non-negative finite number"),
        ({"penalty": "l1", "alpha": float("nan")}, "alpha must be a non-negative finite number"),
        ({"l1_form": "rda"}, "l1_form='rda' would have no effect"),
        ({"penalty": "l1", "average": True}, "average cannot be combined with an L1 penalty"),
    ],
)
def test_bad_values_are_refused(params, message):
    with pytest.raises(InvalidParameterError, match=message):
        cwrs.AdaGrad(**params).fit(np.eye(3), [0, 1, 1])


def test_the_diagonal_learners_refuse_the_rda_form():
    with pytest.raises(InvalidParameterError, match="penalty"):
        cwrs.AROW(penalty="l1-rda").fit(np.eye(3), [0, 1, 1])
