"""The covariance a fitted model reports, from the values its native model stores: the block over
the features (the bias left out), and Σ as dense matrices whatever the form."""

from __future__ import annotations

import numpy as np


def feature_block(covariances, model, n_features):
    """Per-row covariance values (as the native model stores them) restricted to the features."""
    if model.covariance_kind == "diag":
        return covariances[:, :n_features]
    if model.covariance_kind == "lowrank":  # the variances S, then the sketch B (2k × dim)
        dim = n_features + int(model.config["fit_intercept"])
        return covariances.reshape(len(covariances), -1, dim)[:, :, :n_features]
    dim = int(round(np.sqrt(covariances.shape[1])))
    return covariances.reshape(-1, dim, dim)[:, :n_features, :n_features]


def dense_covariances(model, n_features):
    """Σ over the features as dense matrices, one per class (one for two classes or a
    regressor), whatever the form: the core forms them (`Model.dense_covariance`; the low-rank
    form's (diag(1/S) + BᵀB)⁻¹ by Woodbury's identity)."""
    dim = n_features + int(model.config["fit_intercept"])
    return model.dense_covariance.reshape(-1, dim, dim)[:, :n_features, :n_features]
