"""The native model's score_covariance: the (n, n) covariance x_iᵀΣx_j of the rows' scores,
against X̃ Σ X̃ᵀ from the dense Σ (X̃ with the bias column of 1 last when fit_intercept), its
diagonal the model's variance bit for bit."""

import numpy as np
import pytest
import scipy.sparse as sp

import cwrs

FORMS = [
    (cwrs.AROWRegressor, "diag"),
    (cwrs.AROWRegressor, "full"),
    (cwrs.AROWRegressor, "lowrank"),
    (cwrs.AROW, "diag"),
    (cwrs.AROW, "full"),
]


def _data(n_rows=80, n_features=7, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features))
    X[rng.random(X.shape) < 0.4] = 0.0
    w = rng.normal(size=n_features)
    return X, X @ w + 0.1 * rng.normal(size=n_rows)


def _fitted(estimator, form, fit_intercept, X, y):
    extra = {"rank": 3} if form == "lowrank" else {}
    est = estimator(covariance=form, fit_intercept=fit_intercept, **extra)
    target = y if estimator is cwrs.AROWRegressor else np.where(y > 0, 1, -1)
    return est.fit(X, target)


@pytest.mark.parametrize("estimator, form", FORMS)
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_score_covariance_is_x_sigma_xt(estimator, form, fit_intercept, layout):
    X, y = _data()
    est = _fitted(estimator, form, fit_intercept, X, y)
    rows = X[:9]
    given = sp.csr_matrix(rows) if layout == "csr" else rows
    model = est._fitted_model()
    checked = est._check_X_for(given)
    got = model.score_covariance(checked)
    assert got.shape == (9, 9) and got.dtype == np.float64
    # The whole Σ, the bias coordinate last.
    dim = X.shape[1] + int(fit_intercept)
    sigma = model.dense_covariance.reshape(dim, dim)
    wide = np.hstack([rows, np.ones((len(rows), 1))]) if fit_intercept else rows
    want = wide @ sigma @ wide.T
    scale = np.sqrt(np.outer(np.diag(want), np.diag(want)))
    np.testing.assert_array_less(np.abs(got - want), 1e-12 * scale + 1e-300)
    if not fit_intercept:
        np.testing.assert_allclose(
            rows @ est.covariance_matrix() @ rows.T, want, rtol=1e-12, atol=1e-15
        )
    np.testing.assert_array_equal(got, got.T)
    np.testing.assert_array_equal(np.diag(got), model.variance(checked))


def test_score_covariance_refuses_a_multiclass_or_kernel_model():
    X, y = _data()
    labels = np.digitize(y, [-0.5, 0.5])
    multiclass = cwrs.AROW(covariance="diag").fit(X, labels)
    with pytest.raises(ValueError, match="multiclass"):
        multiclass._fitted_model().score_covariance(multiclass._check_X_for(X[:3]))
    kernel = cwrs.AROW(kernel="rbf").fit(X, np.where(y > 0, 1, -1))
    with pytest.raises(ValueError, match="kernel"):
        kernel._fitted_model().score_covariance(kernel._check_X_for(X[:3]))
