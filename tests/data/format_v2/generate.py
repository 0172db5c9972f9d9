"""Writes the format-version-2 fixtures of tests/test_persist_compat.py: a model of every kind,
saved as a `.cwrs` file and as a pickle by cwrs 0.1.0 (format version 2), with what it predicted
then and what it predicted after one more `partial_fit` (expected.npz). Kept to show how they
were made; never rerun it with a newer cwrs (the point is the old bytes)."""

import pickle
from pathlib import Path

import numpy as np

import cwrs

HERE = Path(__file__).parent
RNG = np.random.default_rng(2026)
X = RNG.normal(size=(48, 6))
Y_BINARY = np.where(X[:, 0] - X[:, 1] + 0.3 * RNG.normal(size=48) > 0, "yes", "no")
Y_MULTI = np.argmax(X[:, :3] + 0.3 * RNG.normal(size=(48, 3)), axis=1)
Y_REAL = X @ np.arange(1.0, 7.0) + 0.1 * RNG.normal(size=48)
FIT, MORE = slice(0, 30), slice(30, 36)  # learned before saving; learned after loading

MODELS = {
    "arow_diag": (cwrs.AROW(r=0.5), Y_BINARY),
    "arow_full": (cwrs.AROW(covariance="full"), Y_BINARY),
    "arow_lowrank": (cwrs.AROW(covariance="lowrank", rank=2), Y_BINARY),
    "arow_average": (cwrs.AROW(average=True), Y_BINARY),
    "arow_l1": (cwrs.AROW(penalty="l1", alpha=0.05), Y_BINARY),
    "arow_noise_diag": (cwrs.AROW(process_noise=0.01), Y_BINARY),
    "arow_noise_full": (cwrs.AROW(covariance="full", process_noise=0.01), Y_BINARY),
    "scw1_full": (cwrs.SCW1(C=0.5, covariance="full"), Y_BINARY),
    "narow": (cwrs.NAROW(), Y_BINARY),
    "cw": (cwrs.CW(), Y_BINARY),
    "sop": (cwrs.SOP(), Y_BINARY),
    "nherd": (cwrs.NHERD(), Y_BINARY),
    "perceptron": (cwrs.Perceptron(), Y_BINARY),
    "pa1": (cwrs.PA1(C=0.5), Y_BINARY),
    "alma": (cwrs.ALMA(), Y_BINARY),
    "romma": (cwrs.ROMMA(), Y_BINARY),
    "iellip": (cwrs.IELLIP(), Y_BINARY),
    "adagrad": (cwrs.AdaGrad(), Y_BINARY),
    "adagrad_l1": (cwrs.AdaGrad(penalty="l1", alpha=0.01), Y_BINARY),
    "ftrl": (cwrs.FTRL(), Y_BINARY),
    "ogd_logistic": (cwrs.OGD(loss="logistic"), Y_BINARY),
    "arow_multiclass_max_score": (cwrs.AROW(), Y_MULTI),
    "arow_multiclass_ovr_full": (cwrs.AROW(covariance="full", multi_class="ovr"), Y_MULTI),
    "arow_multiclass_lowrank": (cwrs.AROW(covariance="lowrank", rank=2), Y_MULTI),
    "pa1_multiclass": (cwrs.PA1(), Y_MULTI),
    "arow_rbf_budget": (cwrs.AROW(kernel="rbf", budget=8), Y_BINARY),
    "cw_poly_multiclass": (cwrs.CW(kernel="poly", degree=2, budget=10), Y_MULTI),
    "arow_rff": (cwrs.AROW(kernel_approximation="rff", n_components=8, random_state=1), Y_BINARY),
    "arow_regressor": (cwrs.AROWRegressor(), Y_REAL),
    "arow_regressor_full": (cwrs.AROWRegressor(covariance="full"), Y_REAL),
    "arow_regressor_lowrank": (cwrs.AROWRegressor(covariance="lowrank", rank=2), Y_REAL),
    "arow_regressor_auto_noise": (cwrs.AROWRegressor(process_noise="auto"), Y_REAL),
    "pa2_regressor": (cwrs.PA2Regressor(), Y_REAL),
}


def outputs(model, prefix):
    """What the model says about X, under `prefix`."""
    said = {f"{prefix}.predict": model.predict(X)}
    for method in ("decision_function", "predict_proba"):
        if hasattr(model, method):
            said[f"{prefix}.{method}"] = getattr(model, method)(X)
    return said


if __name__ == "__main__":
    expected = {"X": X}
    for name, (model, y) in MODELS.items():
        model.fit(X[FIT], y[FIT])
        model.save(HERE / f"{name}.cwrs")
        (HERE / f"{name}.pkl").write_bytes(pickle.dumps(model, protocol=4))
        expected.update(outputs(model, name))
        expected[f"{name}.more"] = y[MORE]
        model.partial_fit(X[MORE], y[MORE])
        expected.update(outputs(model, f"{name}.continued"))
    np.savez(HERE / "expected.npz", **expected)
