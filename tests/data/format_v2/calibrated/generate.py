"""Writes the CalibratedClassifier fixtures of tests/test_persist_meta.py: calibrated
classifiers saved as `.cwrs` files by the code that first saved them (format version 2), fitted
(each map) and not, with what the fitted ones predicted then and after one more `partial_fit`
(expected.npz). Kept to show how they were made; never rerun it with a newer cwrs (the point is
the old bytes)."""

from pathlib import Path

import numpy as np

import cwrs

HERE = Path(__file__).parent
RNG = np.random.default_rng(2026)
X = RNG.normal(size=(60, 4))
Y = np.argmax(X[:, :3] + 0.5 * RNG.normal(size=(60, 3)), axis=1)
FIT, MORE = slice(0, 40), slice(40, 50)  # learned before saving; learned after loading

MODELS = {
    "platt_binary": (cwrs.CalibratedClassifier(cwrs.AROW(r=0.5)), Y % 2),
    "temperature_multiclass": (
        cwrs.CalibratedClassifier(cwrs.SCW1(C=0.5), method="temperature"), Y
    ),
    "isotonic_multiclass": (
        cwrs.CalibratedClassifier(cwrs.PA1(), method="isotonic", n_bins=8, prior_strength=2.0),
        Y,
    ),
}


def main() -> None:
    expected = {"X": X}
    for name, (model, y) in MODELS.items():
        model.fit(X[FIT], y[FIT])
        model.save(HERE / f"{name}.cwrs")
        expected[f"{name}.predict_proba"] = model.predict_proba(X)
        expected[f"{name}.more"] = y[MORE]
        model.partial_fit(X[MORE], y[MORE])
        expected[f"{name}.continued.predict_proba"] = model.predict_proba(X)
    cwrs.CalibratedClassifier(cwrs.AROW(r=0.5), method="isotonic", n_bins=5).save(
        HERE / "unfitted.cwrs"
    )
    np.savez(HERE / "expected.npz", **expected)


if __name__ == "__main__":
    main()
