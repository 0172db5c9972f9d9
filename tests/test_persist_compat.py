"""Files written by earlier versions of cwrs load unchanged: the format-version-1 fixtures in
tests/data/format_v1 (written by tests/data/format_v1/generate.py with cwrs 0.1.0) predict what
they predicted when they were saved, and keep learning. A kernel model's decision values may
differ in their last bits: its kernel values now come from the crate's own exp and fused dot
products (docs/design.md §3.4.1)."""

import io
import pickle
from pathlib import Path

import numpy as np
import pytest

import cwrs

FIXTURES = Path(__file__).parent / "data" / "format_v1"
EXPECTED = np.load(FIXTURES / "expected.npz", allow_pickle=False)
NAMES = sorted(path.stem for path in FIXTURES.glob("*.cwrs"))


def test_every_fixture_has_expectations():
    assert len(NAMES) >= 11
    assert set(NAMES) <= set(EXPECTED.files)


@pytest.mark.parametrize("name", NAMES)
def test_version_1_file_loads_with_identical_predictions(name):
    X = EXPECTED["X"]
    model = cwrs.load(FIXTURES / f"{name}.cwrs")
    np.testing.assert_array_equal(model.predict(X), EXPECTED[name])
    if f"{name}.decision_function" in EXPECTED.files:
        expected = EXPECTED[f"{name}.decision_function"]
        if getattr(model, "kernel", None) is None:
            np.testing.assert_array_equal(model.decision_function(X), expected)
        else:
            np.testing.assert_allclose(model.decision_function(X), expected, rtol=1e-12, atol=0)
    # It still learns, and a file saved now loads back to the same model.
    labels = EXPECTED[name][:5]
    model.partial_fit(X[:5], labels)
    again = cwrs.load(FIXTURES / f"{name}.cwrs")
    again.partial_fit(X[:5], labels)
    np.testing.assert_array_equal(model.predict(X), again.predict(X))


# Format version 2 (today's): a model of every kind, as a file and as a pickle, predicts exactly
# what it predicted when it was saved, and one more `partial_fit` learns exactly what it learned
# then (tests/data/format_v2/generate.py).
FIXTURES_V2 = Path(__file__).parent / "data" / "format_v2"
EXPECTED_V2 = np.load(FIXTURES_V2 / "expected.npz", allow_pickle=False)
NAMES_V2 = sorted(path.stem for path in FIXTURES_V2.glob("*.cwrs"))


def assert_says(model, expected, prefix):
    X = expected["X"]
    said = {tuple(key.rsplit(".", 1)) for key in expected.files}
    methods = [m for m in ("predict", "decision_function", "predict_proba") if (prefix, m) in said]
    assert "predict" in methods
    for method in methods:
        # The expected probabilities are Φ(μ·x/√(xᵀΣx)), which `predict_posterior_proba` gives.
        called = "predict_posterior_proba" if method == "predict_proba" else method
        np.testing.assert_array_equal(getattr(model, called)(X), expected[f"{prefix}.{method}"])


def test_every_version_2_fixture_has_a_pickle_and_expectations():
    assert len(NAMES_V2) >= 30
    assert {path.stem for path in FIXTURES_V2.glob("*.pkl")} == set(NAMES_V2)
    assert all(f"{name}.continued.predict" in EXPECTED_V2.files for name in NAMES_V2)


@pytest.mark.parametrize("form", ["file", "pickle"])
@pytest.mark.parametrize("name", NAMES_V2)
def test_version_2_model_predicts_and_continues_bit_for_bit(name, form):
    if form == "file":
        model = cwrs.load(FIXTURES_V2 / f"{name}.cwrs")
    else:
        model = pickle.loads((FIXTURES_V2 / f"{name}.pkl").read_bytes())
    assert_says(model, EXPECTED_V2, name)
    X = EXPECTED_V2["X"]
    model.partial_fit(X[30:36], EXPECTED_V2[f"{name}.more"])
    assert_says(model, EXPECTED_V2, f"{name}.continued")


# Files the Rust crate wrote (`cwrs::model::file::save`, tests/data/format_v2/rust/, kept byte
# for byte by the crate's own test) for the models of the version-2 fixtures: they hold the
# native model, `classes_` and `n_features_in_` alone. `cwrs.load` gives the estimator the
# hyper-parameters the model's configuration implies, and it predicts and continues exactly as
# the estimator Python saved.
RUST_WRITTEN = sorted(path.stem for path in (FIXTURES_V2 / "rust").glob("*.cwrs"))


def test_the_rust_crate_wrote_every_fixture_it_can():
    # Not the random-feature model: its map is applied by Python only.
    assert set(RUST_WRITTEN) == {name for name in NAMES_V2 if not name.endswith("_rff")}


@pytest.mark.parametrize("name", RUST_WRITTEN)
def test_a_model_written_in_rust_loads_predicts_and_continues_as_in_python(name):
    model = cwrs.load(FIXTURES_V2 / "rust" / f"{name}.cwrs")
    python = cwrs.load(FIXTURES_V2 / f"{name}.cwrs")
    assert type(model) is type(python)
    # A kernel's gamma comes back resolved (the number the model was built with).
    resolved = {"gamma": model.get_params()["gamma"]} if "gamma" in model.get_params() else {}
    assert model.get_params() == {**python.get_params(), **resolved}
    assert_says(model, EXPECTED_V2, name)
    X = EXPECTED_V2["X"]
    model.partial_fit(X[30:36], EXPECTED_V2[f"{name}.more"])
    assert_says(model, EXPECTED_V2, f"{name}.continued")
    # And it saves as any estimator does.
    buffer = io.BytesIO()
    model.save(buffer)
    buffer.seek(0)
    np.testing.assert_array_equal(cwrs.load(buffer).predict(X), model.predict(X))
