"""Files written by earlier versions of cwrs load unchanged: the format-version-1 fixtures in
tests/data/format_v1 (written by tests/data/format_v1/generate.py with cwrs 0.1.0) predict what
they predicted when they were saved, and keep learning. A kernel model's decision values may
differ in their last bits: its kernel values now come from the crate's own exp and fused dot
products (docs/design.md §3.4.1)."""

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
