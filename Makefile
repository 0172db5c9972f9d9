# The two entry points of the README: `make run` (the main job) and `make test` (everything).
PYTHON ?= python3

.PHONY: install run test lint lint-rust typecheck package-check bench compare

# Builds the Rust extension (release) and installs cwrs with its test dependencies.
install:
	$(PYTHON) -m pip install --quiet "maturin>=1.7,<2"
	$(PYTHON) -m pip install --quiet --no-build-isolation -e ".[test]"

# Progressive-validation comparison of every learner on the bundled data set.
run: install
	$(PYTHON) -m cwrs

# Every static check: the Rust lints, then the type checks (which need the built extension).
lint: lint-rust typecheck

lint-rust:
	cargo fmt --check
	cargo clippy --all-targets -- -D warnings
	cargo clippy --features python -- -D warnings

# The stubs of the native module against the built extension (names, parameters, defaults:
# stubtest), then the package and the typing examples in tests/typing ([tool.mypy]).
typecheck: install
	$(PYTHON) -m mypy.stubtest cwrs._cwrs
	$(PYTHON) -m mypy

# The sdist builds a wheel on its own; that wheel is abi3, holds the stubs, py.typed and the
# data, and works in a fresh venv with NumPy only (scripts/check_package.sh; ~3 minutes).
package-check: install
	PYTHON=$(PYTHON) bash scripts/check_package.sh

test: install lint
	cargo test
	$(PYTHON) -m pytest -q
	PYTHON=$(PYTHON) bash scripts/check_package.sh

# Criterion benches of the core (diagonal, full, kernel, LIBSVM parser).
bench:
	cargo bench

# cwrs against scikit-learn, Vowpal Wabbit, river and NumPy+BLAS on the same generated data.
compare: install
	$(PYTHON) -m pip install --quiet --no-build-isolation -e ".[test,bench]"
	$(PYTHON) benchmarks/compare.py --plot benchmarks/compare.png
