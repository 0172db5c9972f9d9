"""What a newcomer meets before any learner: `make` alone, the install lines of the getting-started
page, and the test suite saying when it skipped the tests of the shared data sets."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("make") is None, reason="no make")
def test_make_alone_prints_the_two_commands_and_builds_nothing():
    done = subprocess.run(["make", "--no-print-directory"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, check=True)
    commands = [line.split("#")[0].strip() for line in done.stdout.splitlines()]
    assert commands == ["make run", "make test"]
    assert done.stderr == ""


def test_the_install_lines_install_from_a_clone_and_list_every_extra():
    readme = (ROOT / "docs" / "guide" / "getting-started.md").read_text()
    assert not re.search(r"pip install \S*cwrs\[\w", readme)  # no release to install from yet
    extras = re.findall(r'^pip install "\.\[(\w+)\]"', readme, re.M)
    assert {"sklearn", "river", "dask"} <= set(extras)
    listing = readme[readme.index("The extras:"):]
    listing = listing[: listing.index("\n\n")]
    for extra in ("sklearn", "river", "dask", "plot", "progress", "test", "docs", "bench"):
        assert f"`{extra}`" in listing


def test_tests_skipped_for_missing_shared_data_are_summed_up_in_one_line(tmp_path):
    """A clone without ../shared/datasets: the skips end the run with one line naming the folder
    looked in; CWRS_SHARED_DATASETS names another."""
    environment = {**os.environ, "CWRS_SHARED_DATASETS": str(tmp_path)}
    environment.pop("CI", None)  # CI fails instead of skipping
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "tests/test_svmlight.py", "-k", "shared_data_sets_equal_sklearn"],
        cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    summary = [line for line in done.stdout.splitlines() if "shared data sets" in line]
    assert summary == [
        f"7 tests skipped: the shared data sets are not in {tmp_path} (set "
        "CWRS_SHARED_DATASETS to their folder)"
    ]
