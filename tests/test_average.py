"""Averaged models (`average=`, docs/design.md §3.10) against a NumPy reference: the same learner
without averaging, run row by row, its means recorded after every row and averaged by hand from
row `average` on (scikit-learn's count: `True` is row 1)."""

from __future__ import annotations

import io
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import cwrs
from cwrs import InvalidParameterError

from _cwtest_util import stable_id
from _shared_data import shared_data

# (class, extra hyper-parameters, task): every covariance form, both multiclass strategies and
# the regressors.
CASES = [
    (cwrs.PA1, {}, "binary"),
    (cwrs.Perceptron, {}, "binary"),
    (cwrs.AROW, {"covariance": "diag"}, "binary"),
    (cwrs.AROW, {"covariance": "full"}, "binary"),
    (cwrs.SCW1, {"covariance": "diag"}, "binary"),
    (cwrs.SOP, {"covariance": "full"}, "binary"),
    (cwrs.AROW, {"covariance": "diag", "multi_class": "max-score"}, "multiclass"),
    (cwrs.AROW, {"covariance": "full", "multi_class": "ovr"}, "multiclass"),
    (cwrs.PA1, {"multi_class": "ovr"}, "multiclass"),
    (cwrs.PA1, {"multi_class": "max-score"}, "multiclass"),
    (cwrs.AROWRegressor, {"covariance": "diag"}, "regression"),
    (cwrs.AROWRegressor, {"covariance": "full"}, "regression"),
    (cwrs.PARegressor, {}, "regression"),
]
IDS = [f"{c.__name__}-{'-'.join(map(str, p.values()))}-{t}" for c, p, t in CASES]


def _data(task, n=60, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[rng.random(size=X.shape) < 0.4] = 0.0  # sparse rows: the lazy sums see few coordinates
    w = rng.normal(size=d)
    score = X @ w + 0.3 * rng.normal(size=n)
    if task == "binary":
        return X, np.where(score > 0, 1, 0)
    if task == "multiclass":
        return X, np.digitize(score, np.quantile(score, [0.33, 0.66]))
    return X, score


def _weights(est):
    """The mean as rows × (features + bias): one row per class, or one row."""
    return np.column_stack([np.atleast_2d(est.coef_), np.reshape(est.intercept_, (-1, 1))])


def _reference(cls, params, X, y, order, start):
    """The averaged means after learning `order` (row indices) row by row, averaged by hand
    from the `start`-th row learned on (the plain means before it)."""
    plain = cls(**params, average=False)
    classes = np.unique(y) if isinstance(plain, cwrs.Classifier) else None
    means = []
    for i in order:
        kwargs = {"classes": classes} if classes is not None else {}
        plain.partial_fit(X[i : i + 1], y[i : i + 1], **kwargs)
        means.append(_weights(plain))
    if len(means) < start:
        return means[-1]
    return np.mean(means[start - 1 :], axis=0)


def _fit_in_chunks(est, X, y, order, chunks):
    classes = np.unique(y) if isinstance(est, cwrs.Classifier) else None
    for part in np.array_split(order, chunks):
        kwargs = {"classes": classes} if classes is not None else {}
        est.partial_fit(X[part], y[part], **kwargs)
    return est


@pytest.mark.parametrize("cls, params, task", CASES, ids=IDS)
@pytest.mark.parametrize("average", [True, 7])
@pytest.mark.parametrize("sparse", [False, True])
def test_matches_reference(cls, params, task, average, sparse):
    X, y = _data(task)
    rng = np.random.default_rng(1)
    # Three passes in shuffled orders, learned in four partial_fit calls: the average carries
    # over calls and passes.
    order = np.concatenate([rng.permutation(len(y)) for _ in range(3)])
    Xin = sp.csr_matrix(X) if sparse else X
    est = _fit_in_chunks(cls(**params, average=average), Xin, y, order, chunks=4)
    start = 1 if average is True else average
    expected = _reference(cls, params, X, y, order, start)
    np.testing.assert_allclose(_weights(est), expected, rtol=1e-9, atol=1e-12)
    # Every prediction uses the averaged mean.
    scores = X @ expected[:, :-1].T + expected[:, -1]
    decision = est.predict(X) if task == "regression" else est.decision_function(Xin)
    np.testing.assert_allclose(decision, np.squeeze(scores), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("cls, params, task", CASES[:3], ids=IDS[:3])
def test_before_the_start_row_predictions_use_the_mean(cls, params, task):
    X, y = _data(task)
    averaged = _fit_in_chunks(cls(**params, average=len(y) + 1), X, y, np.arange(len(y)), 1)
    plain = _fit_in_chunks(cls(**params), X, y, np.arange(len(y)), 1)
    np.testing.assert_array_equal(_weights(averaged), _weights(plain))
    # One more row starts the average: the mean after it, alone.
    averaged.partial_fit(X[:1], y[:1])
    plain.partial_fit(X[:1], y[:1])
    np.testing.assert_array_equal(_weights(averaged), _weights(plain))


def test_average_false_is_the_plain_learner():
    X, y = _data("binary")
    plain, off = cwrs.AROW(random_state=0).fit(X, y), cwrs.AROW(random_state=0, average=False)
    off.fit(X, y)
    np.testing.assert_array_equal(plain.coef_, off.coef_)
    np.testing.assert_array_equal(plain.predict_proba(X), off.predict_proba(X))


def test_proba_pairs_the_averaged_mean_with_the_current_covariance():
    X, y = _data("binary")
    est = cwrs.AROW(average=True, random_state=0).fit(X, y)
    plain = cwrs.AROW(random_state=0).fit(X, y)
    np.testing.assert_array_equal(est.covariance_, plain.covariance_)
    # P(y = +1) = Φ(μ̄·x / √(xᵀΣx + s²)) over the model's coordinates (the bias feature 1
    # included); the label noise s² is learned from the current mean's margins, as the plain
    # model's.
    Xb = np.column_stack([X, np.ones(len(X))])
    variance = np.einsum("ij,j,ij->i", Xb, plain._fitted_model().covariance, Xb)
    assert est.noise_variance_ == plain.noise_variance_
    expected = norm_cdf(est.decision_function(X) / np.sqrt(variance + est.noise_variance_))
    np.testing.assert_allclose(est.predict_proba(X)[:, 1], expected, rtol=1e-9)
    posterior = norm_cdf(est.decision_function(X) / np.sqrt(variance))
    np.testing.assert_allclose(est.predict_posterior_proba(X)[:, 1], posterior, rtol=1e-9)


def norm_cdf(z):
    from scipy.special import ndtr

    return ndtr(z)


@pytest.mark.parametrize("cls, params, task", [CASES[2], CASES[7], CASES[11]], ids=IDS[2:3] + IDS[7:8] + IDS[11:12])
def test_round_trips_continue_the_average(cls, params, task, tmp_path):
    X, y = _data(task)
    first, second = np.arange(30), np.arange(30, 60)
    est = _fit_in_chunks(cls(**params, average=5), X, y, first, 1)
    pickled = pickle.loads(pickle.dumps(est))
    path = tmp_path / "model.cwrs"
    est.save(path)
    loaded = cwrs.load(path)
    for copy in (pickled, loaded):
        np.testing.assert_array_equal(_weights(copy), _weights(est))
    for model in (est, pickled, loaded):
        model.partial_fit(X[second], y[second])
    for copy in (pickled, loaded):
        np.testing.assert_array_equal(_weights(copy), _weights(est))
    expected = _reference(cls, params, X, y, np.arange(60), 5)
    np.testing.assert_allclose(_weights(est), expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("value", [0, -1, 1.5, "yes", None])
def test_bad_average_is_refused(value):
    X, y = _data("binary")
    with pytest.raises(InvalidParameterError, match="average"):
        cwrs.PA1(average=value).fit(X, y)


@pytest.mark.parametrize(
    "params",
    [{"kernel": "rbf", "budget": 10}, {"penalty": "l1", "covariance": "diag"}],
    ids=["budget", "l1"],
)
def test_average_refuses_what_it_cannot_average_exactly(params):
    X, y = _data("binary")
    with pytest.raises(InvalidParameterError, match="average"):
        cwrs.AROW(**params, average=True).fit(X, y)


def _a1a():
    from cwrs import load_svmlight

    X, y = load_svmlight(str(shared_data("a1a.libsvm")), n_features=123)
    Xt, yt = load_svmlight(str(shared_data("a1a.t.libsvm")), n_features=123)
    return X, y, Xt, yt


@pytest.mark.parametrize("cls", [cwrs.PA1, cwrs.SOP])
def test_a1a_several_shuffled_passes_keep_their_accuracy_when_averaged(cls):
    """Without averaging, ten shuffled passes on a1a lose accuracy on a1a.t against one pass
    in file order (the last rows' updates decide the mean); the averaged model does not."""
    X, y, Xt, yt = _a1a()
    one_pass = cls(shuffle=False).fit(X, y).score(Xt, yt)
    plain = [cls(n_iter=10, random_state=s).fit(X, y).score(Xt, yt) for s in range(3)]
    averaged = [cls(n_iter=10, random_state=s, average=True).fit(X, y).score(Xt, yt) for s in range(3)]
    assert min(averaged) >= one_pass - 0.005, (one_pass, averaged)
    assert np.mean(plain) < one_pass - 0.01, (one_pass, plain)
    assert min(averaged) > max(plain), (plain, averaged)


@pytest.mark.parametrize("cls, params, task", CASES, ids=IDS)
def test_learning_is_unchanged_by_averaging(cls, params, task):
    """The averaged learner learns row by row; its last means are the plain learner's, bit for
    bit (the full form's blocks and the batch path give the same bits)."""
    X, y = _data(task, n=200)
    order = np.arange(len(y))
    averaged = _fit_in_chunks(cls(**params, average=3), X, y, order, 1)
    plain = _fit_in_chunks(cls(**params), X, y, order, 1)
    a, p = averaged._fitted_model().state(), plain._fitted_model().state()
    for key in ("mean", "means", "covariance_values", "n_updates", "n_mistakes"):
        if key in p:
            np.testing.assert_array_equal(a[key], p[key])


def _rbf(X, Z):
    return np.exp(-0.5 * ((X[:, None, :] - Z[None, :, :]) ** 2).sum(axis=2))


KERNEL_CASES = [
    (cwrs.AROW, {"kernel": "rbf", "gamma": 0.5}, "binary"),
    (cwrs.PA1, {"kernel": "poly", "degree": 2}, "binary"),
    (cwrs.AROW, {"kernel": _rbf}, "binary"),
    (cwrs.AROW, {"kernel": "rbf", "gamma": 0.5, "multi_class": "max-score"}, "multiclass"),
    (cwrs.PA1, {"kernel": "rbf", "gamma": 0.5, "multi_class": "ovr"}, "multiclass"),
]


@pytest.mark.parametrize("cls, params, task", KERNEL_CASES, ids=stable_id)
@pytest.mark.parametrize("average", [True, 9])
def test_kernel_models_average_their_dual_coefficients(cls, params, task, average):
    """μ·φ(x) is linear in ν, so the averaged model's scores are the plain model's scores after
    each row, averaged by hand."""
    X, y = _data(task, n=40)
    classes = np.unique(y)
    order = np.concatenate([np.arange(len(y)), np.arange(len(y))[::-1]])
    est = cls(**params, average=average)
    for part in np.array_split(order, 3):
        est.partial_fit(X[part], y[part], classes=classes)
    plain, scores = cls(**params), []
    for i in order:
        plain.partial_fit(X[i : i + 1], y[i : i + 1], classes=classes)
        scores.append(plain.decision_function(X))
    start = 1 if average is True else average
    np.testing.assert_allclose(est.decision_function(X), np.mean(scores[start - 1 :], axis=0), rtol=1e-9, atol=1e-9)
    if task == "binary":
        # ν̄: each row's ν padded with zeros for the support rows that joined later.
        restored = pickle.loads(pickle.dumps(est))
        np.testing.assert_array_equal(restored.decision_function(X), est.decision_function(X))
        assert est.dual_coef_.shape == (1, est.n_support_)


def test_linear_kernel_averages_as_the_primal_model():
    X, y = _data("binary")
    dual = cwrs.PA1(kernel="linear", average=4, shuffle=False).fit(X, y)
    primal = cwrs.PA1(average=4, shuffle=False).fit(X, y)
    np.testing.assert_allclose(dual.coef_, primal.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(dual.intercept_, primal.intercept_, rtol=1e-9, atol=1e-12)


def test_every_learning_path_gives_the_same_average():
    """A large batch (validated ahead on a second core), chunks and single rows (the one-row
    path) give the same averaged model, bit for bit."""
    X, y = _data("binary", n=9000, d=5)
    batch = cwrs.AROW(average=100).partial_fit(X, y, classes=[0, 1])
    chunks = _fit_in_chunks(cwrs.AROW(average=100), X, y, np.arange(len(y)), 9)
    rows = cwrs.AROW(average=100)
    for i in range(2000):
        rows.partial_fit(X[i : i + 1], y[i : i + 1], classes=[0, 1])
    rows.partial_fit(X[2000:], y[2000:])
    for other in (chunks, rows):
        np.testing.assert_array_equal(_weights(other), _weights(batch))
