# The two entry points of the README: `make run` (the main job) and `make test` (everything).
PYTHON ?= python3

.PHONY: install run test lint bench compare

# Builds the Rust extension (release) and installs cwrs with its test dependencies.
install:
	$(PYTHON) -m pip install --quiet "maturin>=1.7,<2"
	$(PYTHON) -m pip install --quiet --no-build-isolation -e ".[test]"

# Progressive-validation comparison of every learner on the bundled data set.
run: install
	$(PYTHON) -m cwrs

lint:
	cargo fmt --check
	cargo clippy --all-targets -- -D warnings
	cargo clippy --features python -- -D warnings

test: install lint
	cargo test
	$(PYTHON) -m pytest -q

# Criterion benches of the core (diagonal, full, kernel, LIBSVM parser).
bench:
	cargo bench

# cwrs against scikit-learn, Vowpal Wabbit, river and NumPy+BLAS on the same generated data.
compare: install
	$(PYTHON) -m pip install --quiet --no-build-isolation -e ".[test,bench]"
	$(PYTHON) benchmarks/compare.py --plot benchmarks/compare.png
