"""Writes decisions.json beside this file: the rows X and, for every fixture, the decision
values (predictions for a regressor) it gave when it was saved, taken from expected.npz, for the
Rust reader's test (crates/cwrs/src/model/file/tests.rs), which reads JSON rather than NumPy's npz."""

import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
expected = np.load(HERE / "expected.npz", allow_pickle=False)
names = sorted(path.stem for path in HERE.glob("*.cwrs"))
decisions = {"X": expected["X"].tolist()}
for name in names:
    key = f"{name}.decision_function"
    key = key if key in expected.files else f"{name}.predict"
    decisions[name] = expected[key].tolist()
(HERE / "decisions.json").write_text(json.dumps(decisions) + "\n")
