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


def dense_covariances(covariances, model, n_features):
    """Σ over the features per row of native covariance values, as dense matrices."""
    if model.covariance_kind == "diag":
        return np.stack([np.diag(row) for row in feature_block(covariances, model, n_features)])
    if model.covariance_kind != "lowrank":
        return feature_block(covariances, model, n_features)
    dim = n_features + int(model.config["fit_intercept"])
    out = np.empty((len(covariances), n_features, n_features))
    for k, row in enumerate(covariances):
        variances, sketch = row[:dim], row[dim:].reshape(-1, dim)
        sigma = np.linalg.inv(np.diag(1.0 / variances) + sketch.T @ sketch)
        out[k] = sigma[:n_features, :n_features]
    return out
