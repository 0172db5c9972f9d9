"""The real data sets kept beside the repository, in `../shared/datasets` (too large to commit),
or in the folder the environment variable CWRS_SHARED_DATASETS names.

A test that needs one gets its path from `shared_data`: where the folder is missing, the test is
skipped on a developer's machine (and tests/conftest.py says so in one line at the end of the
run) but fails under CI (`CI=true`), which always has the data sets, so that a missing folder
never passes there unnoticed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SHARED_DATASETS = Path(
    os.environ.get("CWRS_SHARED_DATASETS")
    or Path(__file__).resolve().parents[2] / "shared" / "datasets"
)
# The start of the reason of every test skipped for a missing shared data file.
MISSING = "shared data file"
# The LIBSVM files of the shared data sets (the .npy files hold the same rows, densified).
LIBSVM_FILES = (
    "a1a.libsvm",
    "a1a.original.libsvm",
    "a1a.t.libsvm",
    "breast_cancer.libsvm",
    "svmguide3.libsvm",
    "w1a.libsvm",
    "w1a.original.libsvm",
)


def shared_data(name: str) -> Path:
    """The path of the shared data file `name`; skips the calling test when it is missing, or
    fails it under CI."""
    path = SHARED_DATASETS / name
    if not path.exists():
        reason = f"{MISSING} {name} not found in {SHARED_DATASETS}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason}; CI runs every test on the shared data sets", pytrace=False)
        pytest.skip(reason)
    return path
