#!/usr/bin/env bash
# Packaging check (`make package-check`): what a user installs from the sdist or the wheel works.
#
#  1. `maturin sdist`: the source distribution holds everything a build needs.
#  2. A wheel built from that sdist alone by pip, with build isolation (maturin from PyPI, as
#     `pip install cwrs-*.tar.gz` does it): an abi3 wheel (one wheel for CPython >= 3.9) holding
#     the stubs, py.typed and the bundled data, and no tests or benches.
#  3. That wheel in a fresh virtual environment with NumPy only (no SciPy, scikit-learn, river):
#     import, fit, predict, predict_proba, save/load on the bundled data; cwrs.river imports
#     without river; the `cwrs` command runs the main job.
#
# Needs maturin (make install puts it there) and PyPI (maturin and NumPy in the fresh venvs).
# Keeps its work in a temporary directory, removed at the end unless KEEP=1. The wheel is built
# with the Cargo profile $PROFILE (default release) in the project's target directory, so that
# the dependencies `make install` compiled with that profile are not compiled again; cwrs itself
# is cleaned from it first, so that it is compiled from the sdist's sources alone.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/cwrs-package.XXXXXX")
if [[ "${KEEP:-0}" != 1 ]]; then trap 'rm -rf "$work"' EXIT; fi
fail() { echo "package-check: $*" >&2; exit 1; }
seconds() { date +%s; }

# ---------------------------------------------------------------- 1. sdist
maturin=("$PYTHON" -m maturin)
"${maturin[@]}" --version >/dev/null 2>&1 || maturin=(maturin)
"${maturin[@]}" sdist --out "$work/sdist" >"$work/sdist.log" 2>&1 \
    || { cat "$work/sdist.log" >&2; fail "maturin sdist failed"; }
sdist=$(ls "$work"/sdist/cwrs-*.tar.gz)
tar tzf "$sdist" | sed 's|^[^/]*/||' | sort >"$work/sdist.txt"
for f in pyproject.toml Cargo.toml Cargo.lock README.md LICENSE crates/cwrs/src/lib.rs \
    crates/cwrs-python/src/lib.rs crates/cwrs-python/src/python/mod.rs \
    python/cwrs/__init__.py python/cwrs/_cwrs.pyi python/cwrs/py.typed python/cwrs/river.py \
    python/cwrs/cli/__init__.py python/cwrs/cli/io.py python/cwrs/cli/report.py \
    python/cwrs/data/svmguide3.npz; do
    grep -qx "$f" "$work/sdist.txt" || fail "the sdist lacks $f"
done
if grep -E '\.(so|pyd)$|^target/' "$work/sdist.txt"; then fail "the sdist holds build products"; fi
echo "sdist: $(basename "$sdist") ($(wc -l <"$work/sdist.txt") files, $(du -k "$sdist" | cut -f1) KiB)"

# ---------------------------------------------------------------- 2. wheel from the sdist
start=$(seconds)
profile=${PROFILE:-release}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}
cargo clean --quiet --package cwrs --package cwrs-python --profile "$profile"
MATURIN_PEP517_ARGS="--profile $profile" "$PYTHON" -m pip wheel --quiet --no-deps --wheel-dir "$work/wheel" "$sdist" \
    || fail "building a wheel from the sdist failed"
wheel=$(ls "$work"/wheel/cwrs-*.whl)
name=$(basename "$wheel")
echo "wheel: $name (built from the sdist with the $profile profile in $(($(seconds) - start)) s)"
[[ "$name" == cwrs-*-cp39-abi3-*.whl ]] || fail "$name is not an abi3 (cp39-abi3) wheel"
"$PYTHON" - "$wheel" <<'EOF' || fail "the wheel's contents are wrong"
import sys, zipfile

names = set(zipfile.ZipFile(sys.argv[1]).namelist())
required = ["cwrs/__init__.py", "cwrs/py.typed", "cwrs/_cwrs.pyi", "cwrs/river.py",
            "cwrs/cli/__init__.py", "cwrs/cli/io.py", "cwrs/cli/report.py",
            "cwrs/data/svmguide3.npz"]
missing = [n for n in required if n not in names]
extension = [n for n in names if n.startswith("cwrs/_cwrs.") and n.endswith((".so", ".pyd"))]
stray = [n for n in names if n.split("/")[0] in ("tests", "benches", "benchmarks", "src", "crates")]
license_ = [n for n in names if n.endswith(".dist-info/licenses/LICENSE") or n.endswith("/LICENSE")]
if missing or len(extension) != 1 or stray or not license_:
    sys.exit(f"missing {missing}, extension {extension}, stray {stray}, license {license_}")
print(f"wheel holds {len(names)} files: stubs, py.typed, data, {extension[0]}, LICENSE")
EOF

# ---------------------------------------------------------------- 3. install with NumPy only
"$PYTHON" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet "$wheel" || fail "installing the wheel failed"
"$work/venv/bin/python" - <<'EOF' || fail "the installed wheel does not work"
import importlib.metadata as metadata
import importlib.util
import pathlib
import pickle
import tempfile

import numpy as np

import cwrs
import cwrs.river  # river is optional: the adapter module imports without it

installed = {d.metadata["Name"].lower() for d in metadata.distributions()}
assert not installed & {"scipy", "scikit-learn", "river"}, installed
assert metadata.requires("cwrs") and all(
    "extra ==" in r or r.startswith("numpy") for r in metadata.requires("cwrs")
), metadata.requires("cwrs")
root = pathlib.Path(cwrs.__file__).parent
assert (root / "py.typed").is_file() and (root / "_cwrs.pyi").is_file()
assert importlib.util.find_spec("river") is None
data = np.load(root / "data" / "svmguide3.npz")
X, y = data["X"], data["y"]
model = cwrs.AROW(r=0.5, shuffle=True, random_state=0, n_iter=5).fit(X, y)  # rows sorted by label
accuracy = model.score(X, y)
assert accuracy > 0.7, accuracy
assert model.predict_proba(X[:5]).shape == (5, 2)
assert np.array_equal(pickle.loads(pickle.dumps(model)).predict(X), model.predict(X))
saved = pathlib.Path(tempfile.mkdtemp()) / "model.cwrs"
model.save(saved)
assert np.array_equal(cwrs.load(saved).predict(X), model.predict(X))
stream = cwrs.river.RiverClassifier(cwrs.SCW1())
for row, label in zip(X[:50], y[:50]):
    stream.learn_one(dict(enumerate(row)), label)
assert stream.predict_one(dict(enumerate(X[0]))) in set(y[:50])
print(f"installed wheel with NumPy {np.__version__} only: AROW accuracy {accuracy:.3f}, "
      "river adapter without river ok")
EOF
# The console script, with the bundled data (the main job); --plot needs matplotlib, absent here.
"$work/venv/bin/cwrs" --shuffle 1 --learners AROW,PA --json -q >"$work/cli.json" \
    || fail "the cwrs command failed in the NumPy-only install"
"$work/venv/bin/cwrs" --plot "$work/m.png" 2>"$work/cli.err" && fail "--plot without matplotlib"
grep -qF 'pip install ".[plot]"' "$work/cli.err" || fail "--plot does not say how to get matplotlib"
echo "console script: ok"
echo "package-check: ok"
