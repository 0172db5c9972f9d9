"""The kernel (dual) learners: agreement with the primal form, non-linear problems, the budget,
random Fourier features and persistence."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import cwrs
from cwrs._catalog import NO_KERNEL_FORM

# ALMA, the ROMMAs, AdaGrad and FTRL have no kernel form (docs/design.md §2.9).
KERNEL_CLASSIFIERS = [cls for cls in cwrs.CLASSIFIERS if cls not in NO_KERNEL_FORM]
SECOND_ORDER = [cls for cls in KERNEL_CLASSIFIERS if cls._second_order]


@pytest.mark.parametrize("cls", NO_KERNEL_FORM, ids=lambda c: c.__name__)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_learners_outside_the_template_refuse_a_kernel(cls, n_classes):
    X, y = np.eye(3), np.arange(3) % n_classes
    with pytest.raises(cwrs.InvalidParameterError, match=f"{cls._rule} has no kernel form"):
        cls(kernel="rbf").fit(X, y)
    cls(kernel_approximation="rff", n_components=8, random_state=0).fit(X, y)


def linear_stream(n=120, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[rng.random((n, d)) < 0.3] = 0.0
    X[::17] = 0.0  # all-zero rows
    y = np.where(X @ rng.normal(size=d) + 0.3 * rng.normal(size=n) > 0, 1, -1)
    return X, y


def circles(n=600, seed=0):
    rng = np.random.default_rng(seed)
    radius = np.where(rng.random(n) < 0.5, 1.0, 2.0)
    angle = rng.random(n) * 2 * np.pi
    X = np.c_[radius * np.cos(angle), radius * np.sin(angle)] + rng.normal(0, 0.1, (n, 2))
    return X, np.where(radius > 1.5, 1, -1)


def xor(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    return X, np.where(X[:, 0] * X[:, 1] > 0, 1, -1)


def per_round_decisions(model, X, y):
    """Decision values before each row, learning row by row (progressive validation)."""
    out = []
    for t in range(len(y)):
        if t:
            out.append(model.decision_function(X[t : t + 1])[0])
        else:
            out.append(0.0)
        model.partial_fit(X[t : t + 1], y[t : t + 1], classes=[-1, 1])
    return np.array(out)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("cls", KERNEL_CLASSIFIERS, ids=lambda c: c.__name__)
def test_linear_kernel_equals_the_primal_full_covariance_learner(cls, fit_intercept, sparse):
    X, y = linear_stream()
    Xin = sp.csr_matrix(X) if sparse else X
    primal_kwargs = {"covariance": "full"} if cls._second_order else {}
    primal = cls(fit_intercept=fit_intercept, a=0.8, **primal_kwargs) if cls._second_order else cls(
        fit_intercept=fit_intercept
    )
    dual = cls(fit_intercept=fit_intercept, kernel="linear", **({"a": 0.8} if cls._second_order else {}))
    f_primal = per_round_decisions(primal, Xin, y)
    f_dual = per_round_decisions(dual, Xin, y)
    scale = max(1.0, np.abs(f_primal).max())
    np.testing.assert_allclose(f_dual, f_primal, rtol=1e-8, atol=1e-8 * scale)
    assert np.array_equal(dual.predict(Xin), primal.predict(Xin))
    assert dual.n_mistakes_ == primal.n_mistakes_
    assert dual.n_updates_ == primal.n_updates_ == dual.n_support_
    np.testing.assert_allclose(dual.coef_, primal.coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(dual.intercept_, primal.intercept_, rtol=1e-8, atol=1e-10)
    if cls._second_order:
        np.testing.assert_allclose(
            dual.predict_proba(Xin), primal.predict_proba(Xin), rtol=1e-8, atol=1e-12
        )


@pytest.mark.parametrize("data", [circles, xor])
@pytest.mark.parametrize("cls", SECOND_ORDER + [cwrs.Perceptron, cwrs.PA1], ids=lambda c: c.__name__)
def test_rbf_kernel_learns_what_no_linear_learner_can(cls, data):
    X, y = data()
    linear = cls().partial_fit(X, y, classes=[-1, 1])
    kernel = cls(kernel="rbf", gamma=2.0).partial_fit(X, y, classes=[-1, 1])
    linear_accuracy = 1 - linear.n_mistakes_ / len(y)
    kernel_accuracy = 1 - kernel.n_mistakes_ / len(y)
    # A linear separator is near chance on both problems; the RBF learners reach ≥ 0.85 online.
    assert linear_accuracy < 0.7
    assert kernel_accuracy > 0.85, kernel_accuracy
    assert kernel.score(X, y) > 0.9


def test_budget_is_never_exceeded_and_accuracy_degrades_gracefully():
    # Measured (AROW, rbf γ=2, 2000 rows of circles): online accuracy 0.9955 unbudgeted (1012
    # support rows), 0.9955 at budgets 50 and 20, 0.971 at 10, 0.734 at 5.
    X, y = circles(n=2000, seed=3)
    accuracies = {}
    for budget in (None, 50, 20, 10, 5):
        model = cwrs.AROW(kernel="rbf", gamma=2.0, budget=budget)
        for start in range(0, len(y), 100):
            model.partial_fit(X[start : start + 100], y[start : start + 100], classes=[-1, 1])
            if budget is not None:
                assert model.n_support_ <= budget
        accuracies[budget] = 1 - model.n_mistakes_ / len(y)
        variances = model._model.variance(X)
        assert (variances > 0).all()  # the budget removal keeps Σ positive definite
    assert accuracies[None] > 0.98
    assert accuracies[50] > accuracies[None] - 0.01
    assert accuracies[20] > accuracies[None] - 0.02
    assert accuracies[10] > 0.93
    assert accuracies[5] < accuracies[20] - 0.1


def test_random_fourier_features_approximate_the_rbf_learner():
    X, y = circles(n=1500, seed=5)
    exact = cwrs.AROW(kernel="rbf", gamma=2.0).partial_fit(X, y, classes=[-1, 1])
    rff = cwrs.AROW(
        kernel_approximation="rff", gamma=2.0, n_components=300, covariance="full", random_state=0
    ).partial_fit(X, y, classes=[-1, 1])
    assert rff.coef_.shape == (1, 300)
    assert 1 - rff.n_mistakes_ / len(y) > 0.9
    assert abs(rff.n_mistakes_ - exact.n_mistakes_) < 0.05 * len(y)
    again = cwrs.AROW(
        kernel_approximation="rff", gamma=2.0, n_components=300, covariance="full", random_state=0
    ).partial_fit(X, y, classes=[-1, 1])
    assert np.array_equal(again.coef_, rff.coef_)  # seeded


@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly"])
def test_kernel_models_pickle_and_continue_identically(kernel):
    X, y = circles(n=300)
    model = cwrs.SCW1(kernel=kernel, budget=40).partial_fit(X[:200], y[:200], classes=[-1, 1])
    copy = pickle.loads(pickle.dumps(model))
    assert np.array_equal(copy.decision_function(X), model.decision_function(X))
    model.partial_fit(X[200:], y[200:])
    copy.partial_fit(X[200:], y[200:])
    assert np.array_equal(copy.decision_function(X), model.decision_function(X))
    assert np.array_equal(copy.dual_coef_, model.dual_coef_)
    assert np.array_equal(copy.support_vectors_, model.support_vectors_)


def test_support_vectors_follow_the_input_format():
    X, y = xor(n=200)
    dense = cwrs.AROW(kernel="rbf", random_state=0).fit(X, y)
    sparse = cwrs.AROW(kernel="rbf", random_state=0).fit(sp.csr_matrix(X), y)
    assert isinstance(dense.support_vectors_, np.ndarray)
    assert sp.issparse(sparse.support_vectors_)
    np.testing.assert_array_equal(sparse.support_vectors_.toarray(), dense.support_vectors_)
    assert dense.support_vectors_.shape == (dense.n_support_, 2)
    # Dense rows meet dense support rows in fused multiply-adds (linalg/simd), sparse ones in plain
    # sums: the same model up to rounding (decision values of order 1, equal to 1e-12).
    np.testing.assert_allclose(
        dense.decision_function(X), sparse.decision_function(X), rtol=0, atol=1e-12
    )


def test_kernel_parameter_errors():
    X, y = xor(n=50)
    for bad in (
        {"kernel": "sigmoid"},
        {"kernel": "rbf", "gamma": -1.0},
        {"kernel": "poly", "degree": 0},
        {"kernel": "rbf", "budget": 0},
        {"kernel": "rbf", "kernel_approximation": "rff"},
        {"kernel_approximation": "nystroem"},
        {"kernel_approximation": "rff", "n_components": 0},
    ):
        with pytest.raises(ValueError):
            cwrs.AROW(**bad).fit(X, y)
    with pytest.raises(ValueError, match="two classes"):
        cwrs.AROW(kernel=rbf_callable).fit(X, np.arange(50) % 3)
    model = cwrs.AROW(kernel="rbf").fit(X, y)
    with pytest.raises(AttributeError):
        model.coef_
    with pytest.raises(AttributeError):
        model.covariance_


def rbf_callable(A, B, gamma=2.0):
    """A user-defined RBF kernel on dense or sparse rows."""
    A = A.toarray() if sp.issparse(A) else A
    B = B.toarray() if sp.issparse(B) else B
    squared = (A**2).sum(1)[:, None] + (B**2).sum(1)[None, :] - 2 * A @ B.T
    return np.exp(-gamma * np.maximum(squared, 0.0))


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_callable_kernel_equals_the_built_in_kernel(sparse):
    X, y = circles(n=300)
    Xin = sp.csr_matrix(X) if sparse else X
    built_in = cwrs.AROW(kernel="rbf", gamma=2.0, budget=30, random_state=0).fit(Xin, y)
    custom = cwrs.AROW(kernel=rbf_callable, budget=30, random_state=0).fit(Xin, y)
    assert custom.n_mistakes_ == built_in.n_mistakes_
    assert custom.n_support_ == built_in.n_support_ == 30
    np.testing.assert_allclose(
        custom.decision_function(Xin), built_in.decision_function(Xin), rtol=1e-10, atol=1e-12
    )
    np.testing.assert_allclose(custom.predict_proba(Xin), built_in.predict_proba(Xin), atol=1e-12)
    copy = pickle.loads(pickle.dumps(custom))
    assert np.array_equal(copy.decision_function(Xin), custom.decision_function(Xin))


def test_a_failing_callable_kernel_leaves_the_model_unchanged():
    X, y = circles(n=100)
    calls = {"n": 0}

    def flaky(A, B):
        calls["n"] += 1
        if calls["n"] > 40:
            raise RuntimeError("kernel service down")
        return rbf_callable(A, B)

    model = cwrs.AROW(kernel=flaky).partial_fit(X[:10], y[:10], classes=[-1, 1])
    before = (model.dual_coef_.copy(), model.n_updates_, model.n_mistakes_)
    for scored in (False, True):  # the kernel fails while predicting or learning a row
        calls["n"] = 0
        with pytest.raises(RuntimeError, match="kernel service down"):
            model.partial_fit(X[10:], y[10:], return_scores=scored)
        assert np.array_equal(model.dual_coef_, before[0])
        assert (model.n_updates_, model.n_mistakes_) == before[1:]


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_a_callable_kernel_learns_as_the_python_loop_did(sparse):
    # Recorded from the Python row-by-row loop that drove callable kernels before the Rust loop
    # took them over: a budgeted run with many removals, the same updates and values. Values to
    # 1e-12, not bits: the kernel's own NumPy arithmetic (BLAS's `@`, `exp`) differs in its last
    # bits between CPUs (AVX2 against AVX-512: 3.4e-15 apart).
    X, y = circles(n=400, seed=1)
    Xin = sp.csr_matrix(X) if sparse else X
    model = cwrs.SCW1(kernel=rbf_callable, budget=25, random_state=0).fit(Xin, y)
    assert (model.n_mistakes_, model.n_updates_, model.n_support_) == (9, 218, 25)
    scores = [
        "0x1.552ff2740e9d4p-1", "0x1.44fe512fd8564p-1", "-0x1.8cdae19b50238p-1",
        "0x1.10f62e4a04e1fp-1", "-0x1.ecd1977c631a3p-2", "-0x1.4515e7a94e0efp-1",
    ]
    probabilities = [
        "0x1.8c4b2c5d72030p-1", "0x1.8712d5861e440p-1", "0x1.6c3d2b7cb953cp-3",
        "0x1.6bf3feb48f3acp-1", "0x1.29fe1af2d9d2ep-2", "0x1.dde229b3b2352p-3",
    ]
    recorded = [np.array([float.fromhex(v) for v in values]) for values in (scores, probabilities)]
    np.testing.assert_allclose(model.decision_function(Xin[:6]), recorded[0], rtol=1e-12)
    np.testing.assert_allclose(model.predict_posterior_proba(Xin[:6])[:, 1], recorded[1], rtol=1e-12)


def test_a_callable_kernel_gets_rows_and_support_rows_in_the_fitted_format():
    # Rows come as they are given (a dense array or a CSR matrix), the support rows in the
    # format of the input the model was fitted on, whatever later calls pass.
    X, y = circles(n=60)
    seen = set()

    def kernel(A, B):
        seen.add((type(A), type(B)))
        return rbf_callable(A, B)

    for fitted, other in ((X, sp.csr_matrix(X)), (sp.csr_matrix(X), X)):
        seen.clear()
        model = cwrs.AROW(kernel=kernel, shuffle=False).fit(fitted, y)
        assert seen == {(type(fitted), type(fitted))}
        seen.clear()
        model.partial_fit(other[:3], y[:3])
        model.decision_function(other)
        assert seen == {(type(other), type(fitted)), (type(other), type(other))}


def test_an_exception_of_a_callable_kernel_propagates_as_itself():
    X, y = circles(n=30)

    class KernelDown(Exception):
        pass

    def kernel(A, B):
        raise KernelDown("no values today")

    with pytest.raises(KernelDown, match="no values today"):
        cwrs.AROW(kernel=kernel).fit(X, y)


@pytest.mark.parametrize("multi_class", ["max-score", "ovr"])
def test_multiclass_kernel_learners(multi_class):
    X, y = linear_stream(n=150, d=4, seed=2)
    labels = np.digitize(X[:, 0] + 0.5 * X[:, 1], [-0.5, 0.5])  # three classes
    primal = cwrs.SCW2(covariance="full", multi_class=multi_class).partial_fit(
        X, labels, classes=[0, 1, 2]
    )
    dual = cwrs.SCW2(kernel="linear", multi_class=multi_class).partial_fit(
        X, labels, classes=[0, 1, 2]
    )
    assert dual.n_mistakes_ == primal.n_mistakes_
    np.testing.assert_allclose(
        dual.decision_function(X), primal.decision_function(X), rtol=1e-8, atol=1e-9
    )
    np.testing.assert_allclose(dual.predict_proba(X), primal.predict_proba(X), atol=1e-9)
    # A non-linear three-class problem: rings of radius 1, 2 and 3.
    rng = np.random.default_rng(0)
    ring = rng.integers(0, 3, size=900)
    angle = rng.random(900) * 2 * np.pi
    R = np.c_[(ring + 1) * np.cos(angle), (ring + 1) * np.sin(angle)] + rng.normal(0, 0.1, (900, 2))
    linear = cwrs.AROW(multi_class=multi_class).partial_fit(R, ring, classes=[0, 1, 2])
    kernel = cwrs.AROW(kernel="rbf", gamma=2.0, budget=60, multi_class=multi_class)
    kernel.partial_fit(R, ring, classes=[0, 1, 2])
    assert 1 - kernel.n_mistakes_ / 900 > 0.9 > 1 - linear.n_mistakes_ / 900 + 0.3
    assert kernel.n_support_ <= 3 * 60
    copy = pickle.loads(pickle.dumps(kernel))
    assert np.array_equal(copy.predict_proba(R), kernel.predict_proba(R))
    copy.partial_fit(R[:50], ring[:50])
    kernel.partial_fit(R[:50], ring[:50])
    assert np.array_equal(copy.decision_function(R), kernel.decision_function(R))
