# The two entry points of the README: `make run` (the main job) and `make test` (everything).
# Both work in a project-local virtual environment ($(VENV), made by scripts/venv.sh with the
# interpreter $(PYTHON)); nothing is installed into the Python that runs make.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# The Cargo profile of the extension built into $(VENV): "quick" (Cargo.toml: release code
# without fat LTO, which takes most of a release build's time) for running and testing;
# `make compare` builds with "release", the profile of wheels. pip passes the profile to maturin.
PROFILE ?= quick
export MATURIN_PEP517_ARGS ?= --profile $(PROFILE)

.PHONY: help venv install-run install run test lint lint-rust typecheck docs browser package-check bench compare

# `make` alone: what to run (it builds nothing).
help:
	@echo "make run    # builds cwrs into .venv, then compares every learner on the bundled data"
	@echo "make test   # builds cwrs and its test dependencies into .venv, then every check and test"

venv:
	@PYTHON=$(PYTHON) bash scripts/venv.sh $(VENV)

# The package and its runtime dependency (NumPy) only. The Rust build shows its progress.
install-run: venv
	$(PY) -m pip install --quiet "maturin>=1.7,<2"
	@echo "cwrs setup: building the Rust extension (profile $(PROFILE); 1-2 minutes the first time)"
	$(PY) -m pip install --no-build-isolation --progress-bar off -v -e . 2>&1 \
	    | grep --line-buffered -E '^ *(Compiling|Finished|Built|Installing|Successfully|error|warning: unused)|ERROR' || true
	@$(PY) -c "import cwrs" || { echo "cwrs setup: the build failed; run '$(PY) -m pip install -v -e .' to see why" >&2; exit 1; }

# The package with its test dependencies (pytest, hypothesis, mypy, SciPy, scikit-learn, ...).
install: install-run
	$(PY) -m pip install --quiet --no-build-isolation -e ".[test]"

# Progressive-validation comparison of every learner on the bundled data set.
run: install-run
	$(PY) -m cwrs

# Every static check: the Rust lints and docs, then the type checks (which need the built
# extension).
lint: lint-rust typecheck

lint-rust:
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	cargo clippy -p cwrs-python --features python -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet
	@cargo tree -p cwrs -e normal | grep -Eq '\b(pyo3|numpy) ' \
	    && { echo "the cwrs crate must not depend on pyo3 or numpy" >&2; exit 1; } || true

# The stubs of the native module against the built extension (names, parameters, defaults:
# stubtest), then the package and the typing examples in tests/typing ([tool.mypy]).
typecheck: install
	$(PY) -m mypy.stubtest cwrs._cwrs
	$(PY) -m mypy

# The documentation site (Sphinx: docs/conf.py) into docs/_build/html, from scratch, with the
# Rust crate's reference (rustdoc) in docs/_build/html/rust; a warning is an error.
docs: install
	rm -rf docs/_build docs/generated docs/auto_examples target/doc
	RUSTDOCFLAGS="-D warnings" cargo doc -p cwrs --no-deps --quiet
	$(PY) -m sphinx -W --keep-going -E -q -b html docs docs/_build/html
	cp -r target/doc docs/_build/html/rust
	echo '<meta http-equiv="refresh" content="0; url=cwrs/index.html">' > docs/_build/html/rust/index.html

# The headless browser that opens the built site in the tests (Debian's chromium).
browser:
	bash scripts/chromium.sh

# The sdist builds a wheel on its own; that wheel is abi3, holds the stubs, py.typed and the
# data, and works in a fresh venv with NumPy only (scripts/check_package.sh; the wheel is built
# with $(PROFILE), reusing the dependencies `make install` compiled).
package-check: install
	PROFILE=$(PROFILE) PYTHON=$(PY) bash scripts/check_package.sh

# pytest runs on every core (pytest-xdist's -n auto).
test: install lint docs browser
	cargo test --workspace
	cargo run --quiet --example stream
	cargo run --quiet --example serve
	cargo run --quiet --example save
	cargo run --quiet --example shards
	cargo run --quiet --example weights
	cargo run --quiet --example bandit
	$(PY) -m pytest -q -n auto
	PROFILE=$(PROFILE) PYTHON=$(PY) bash scripts/check_package.sh

# Criterion benches of the core (diagonal, full, kernel, LIBSVM parser).
bench:
	cargo bench -p cwrs

# cwrs against scikit-learn, Vowpal Wabbit, river and NumPy+BLAS on the same generated data,
# with the extension built as wheels are (fat LTO).
compare: PROFILE = release
compare: install
	$(PY) -m pip install --quiet --no-build-isolation -e ".[test,bench]"
	$(PY) benchmarks/compare.py --plot benchmarks/compare.png
