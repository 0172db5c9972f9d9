"""IELLIP and OGD in the dual (kernel) form (docs/design.md §2.9): against the primal form with
the linear kernel (full covariance for IELLIP, to 1e-9), against explicit polynomial features,
against a slow NumPy reference of the dual update with an RBF kernel, and through pickles and
.cwrs files; the learners without a kernel form refuse one."""

from __future__ import annotations

import math

import numpy as np
import pytest

import cwrs
from libol_reference import run
from test_catalog import continued_copies


def stream(n=80, d=4, seed=0, n_classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[rng.random((n, d)) < 0.25] = 0.0
    score = X @ rng.normal(size=(d, n_classes)) + 0.3 * rng.normal(size=(n, n_classes))
    if n_classes == 2:
        return X, np.where(score[:, 0] > score[:, 1], 1, -1)
    return X, np.argmax(score, axis=1)


def row_by_row_decisions(model, X, y, classes):
    """The model's decisions on every row before it is learned (one row per call)."""
    out = []
    for i in range(len(y)):
        if i:
            out.append(model.decision_function(X[i : i + 1])[0])
        model.partial_fit(X[i : i + 1], y[i : i + 1], classes=classes)
    return np.array(out)


IELLIP_PARAMS = [{}, {"b": 0.9, "c": 0.5, "a": 2.0}, {"b": 0.99, "c": 0.3, "a": 0.5}]


@pytest.mark.parametrize("params", IELLIP_PARAMS, ids=str)
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("strategy", ["max-score", "ovr"])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_iellip_linear_kernel_equals_the_full_covariance(params, n_classes, strategy, fit_intercept):
    if n_classes == 2 and strategy == "ovr":
        pytest.skip("one binary model")
    X, y = stream(n_classes=n_classes, seed=n_classes)
    classes = np.unique(y)
    common = dict(fit_intercept=fit_intercept, multi_class=strategy, **params)
    primal = cwrs.IELLIP(covariance="full", **common)
    dual = cwrs.IELLIP(kernel="linear", **common)
    fp = row_by_row_decisions(primal, X, y, classes)
    fd = row_by_row_decisions(dual, X, y, classes)
    np.testing.assert_allclose(fd, fp, rtol=1e-9, atol=1e-9)
    assert (dual.n_mistakes_, dual.n_updates_) == (primal.n_mistakes_, primal.n_updates_)
    assert primal.n_updates_ > 5
    if n_classes == 2:
        np.testing.assert_allclose(dual.coef_, primal.coef_, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(
            dual.predict_proba(X), primal.predict_proba(X), rtol=1e-9, atol=1e-9
        )


@pytest.mark.parametrize("loss", ["hinge", "logistic", "squared_hinge"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_ogd_linear_kernel_equals_the_primal(loss, n_classes):
    X, y = stream(n_classes=n_classes, seed=5)
    classes = np.unique(y)
    primal = cwrs.OGD(eta=0.5, loss=loss)
    dual = cwrs.OGD(eta=0.5, loss=loss, kernel="linear")
    fp = row_by_row_decisions(primal, X, y, classes)
    fd = row_by_row_decisions(dual, X, y, classes)
    np.testing.assert_allclose(fd, fp, rtol=1e-9, atol=1e-9)
    assert (dual.n_mistakes_, dual.n_updates_) == (primal.n_mistakes_, primal.n_updates_)


def poly2_features(X, gamma, coef0):
    """The explicit feature map of (γ·x·z + coef0)²: γ·vec(x xᵀ), √(2γ·coef0)·x, coef0."""
    outer = np.einsum("ni,nj->nij", X, X).reshape(len(X), -1)
    return np.hstack([gamma * outer, math.sqrt(2 * gamma * coef0) * X, np.full((len(X), 1), coef0)])


@pytest.mark.parametrize("params", IELLIP_PARAMS, ids=str)
def test_iellip_poly_kernel_equals_the_primal_on_explicit_features(params):
    X, y = stream(n=60, d=3, seed=7)
    y = np.where(X[:, 0] * X[:, 1] > 0, 1, -1)  # not linearly separable in x
    gamma, coef0 = 0.5, 1.0
    dual = cwrs.IELLIP(kernel="poly", degree=2, gamma=gamma, coef0=coef0, **params)
    primal = cwrs.IELLIP(covariance="full", **params)
    fd = row_by_row_decisions(dual, X, y, [-1, 1])
    fp = row_by_row_decisions(primal, poly2_features(X, gamma, coef0), y, [-1, 1])
    np.testing.assert_allclose(fd, fp, rtol=1e-9, atol=1e-9)
    assert (dual.n_mistakes_, dual.n_updates_) == (primal.n_mistakes_, primal.n_updates_)


def iellip_dual_reference(X, y, kernel, b=0.3, c=0.1, a=1.0, fit_intercept=True):
    """IELLIP (LIBOL's IELLIP.m) in the dual form, written from the representer theorem: with
    μ = Σ_p ν_p φ(x_p) and Σ = a·I + Σ_pq Π_pq φ(x_p)φ(x_q)ᵀ, Σφ(x) has coefficients
    h = (Πk, a) over S ∪ {x}; a mistake adds α·y·h to ν (α = (1 − y·f)/v, v = a·κ + kᵀΠk),
    subtracts (c_t/v)·h hᵀ from Π, and then Σ/(1 − c_t) divides a and Π by 1 − c_t; c_t ← b·c_t
    after every row. Dense, recomputed from scratch every row. Returns the decisions before
    each row and the final (ν, Π, a)."""
    bias = 1.0 if fit_intercept else 0.0
    K = lambda A, B: kernel(A, B) + bias  # noqa: E731
    support, nu, Pi, c_t, decisions = [], np.zeros(0), np.zeros((0, 0)), c, []
    for x, label in zip(X, y):
        S = np.array(support).reshape(len(support), X.shape[1])
        k = K(S, x[None, :])[:, 0]
        f = float(k @ nu)
        decisions.append(f)
        v = a * float(K(x[None, :], x[None, :])[0, 0]) + float(k @ Pi @ k)
        if (1.0 if f >= 0 else -1.0) != label and v > 0 and np.any(x != 0):
            h = np.append(Pi @ k, a)
            nu = np.append(nu, 0.0) + (1 - label * f) / v * label * h
            Pi = np.pad(Pi, ((0, 1), (0, 1))) - (c_t / v) * np.outer(h, h)
            a, Pi = a / (1 - c_t), Pi / (1 - c_t)
            support.append(x)
        c_t *= b
    return np.array(decisions), nu, Pi, a


def rbf(gamma):
    return lambda A, B: np.exp(-gamma * ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))


def test_the_dual_reference_is_libols_iellip_with_the_linear_kernel():
    X, y = stream(n=50, seed=3)
    params = {"b": 0.9, "c": 0.5, "a": 2.0}
    decisions, nu, _, _ = iellip_dual_reference(
        X, y, lambda A, B: A @ B.T, fit_intercept=False, **params
    )
    w, mistakes, _ = run("IELLIP", X, y, covariance="full", **params)
    learned = [i for i in range(len(y)) if (decisions[i] >= 0) != (y[i] > 0) and any(X[i])]
    support = X[learned]
    np.testing.assert_allclose(nu @ support, w, rtol=0, atol=1e-10)
    assert mistakes == np.sum((decisions >= 0) != (y > 0))


@pytest.mark.parametrize("params", IELLIP_PARAMS, ids=str)
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_iellip_rbf_kernel_matches_the_numpy_reference(params, fit_intercept):
    X, y = stream(n=70, d=3, seed=11)
    y = np.where(np.linalg.norm(X, axis=1) > 1.5, 1, -1)  # circles: not linear
    gamma = 0.7
    model = cwrs.IELLIP(kernel="rbf", gamma=gamma, fit_intercept=fit_intercept, **params)
    decisions = row_by_row_decisions(model, X, y, [-1, 1])
    expected, nu, Pi, a = iellip_dual_reference(
        X, y, rbf(gamma), fit_intercept=fit_intercept, **params
    )
    np.testing.assert_allclose(decisions, expected[1:], rtol=1e-9, atol=1e-9)
    state = model._model.state()
    np.testing.assert_allclose(state["dual_coef"], nu, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(
        state["dual_covariance"].reshape(Pi.shape), Pi, rtol=1e-9, atol=1e-9
    )
    assert state["dual_a"] == pytest.approx(a, rel=1e-12) and a > params.get("a", 1.0)
    assert state["n_rounds"] == len(y)


@pytest.mark.parametrize(
    ("cls", "params"),
    [(cwrs.IELLIP, {"b": 0.9, "c": 0.5}), (cwrs.OGD, {"loss": "logistic"})],
    ids=["IELLIP", "OGD"],
)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_kernel_round_state_survives_pickling_and_files(cls, params, n_classes, tmp_path):
    X, y = stream(n=90, n_classes=n_classes, seed=9)
    model = cls(kernel="rbf", gamma=0.5, **params)
    for copy in continued_copies(model, X, y, tmp_path / "model.cwrs"):
        np.testing.assert_array_equal(copy.decision_function(X), model.decision_function(X))
        assert (copy.n_mistakes_, copy.n_updates_) == (model.n_mistakes_, model.n_updates_)


def test_iellip_kernel_with_a_budget_and_averaging():
    X, y = stream(n=150, seed=4)
    budgeted = cwrs.IELLIP(kernel="rbf", budget=10, b=0.99, c=0.3).fit(X, y)
    assert budgeted.n_support_ == 10
    # Σ = a·I + ΦΠΦᵀ stays positive definite through the rescales and removals.
    state = budgeted._model.state()
    gram, Pi = state["gram"].reshape(10, 10), state["dual_covariance"].reshape(10, 10)
    # ΦᵀΣΦ = a·K + KΠK over the support rows.
    eigenvalues = np.linalg.eigvalsh(state["dual_a"] * gram + gram @ Pi @ gram)
    assert np.all(eigenvalues > -1e-12 * np.max(eigenvalues))
    averaged = cwrs.IELLIP(kernel="rbf", average=True, shuffle=False).fit(X, y)
    plain = cwrs.IELLIP(kernel="rbf", shuffle=False).fit(X, y)
    assert averaged.n_updates_ == plain.n_updates_
    assert not np.array_equal(averaged.decision_function(X), plain.decision_function(X))


@pytest.mark.parametrize("name", ["ALMA", "ROMMA", "AggressiveROMMA", "AdaGrad", "FTRL"])
def test_learners_without_a_kernel_form_say_why(name):
    why = "per-coordinate state" if name in ("AdaGrad", "FTRL") else "rescales ‖μ‖²"
    with pytest.raises(cwrs.InvalidParameterError, match=f"{name} has no kernel form.*{why}"):
        getattr(cwrs, name)(kernel="rbf").fit(np.eye(3), [0, 1, 1])
