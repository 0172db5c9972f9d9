# The two entry points of the README: `make run` (the main job) and `make test` (everything).
PYTHON ?= python3

.PHONY: install run test lint bench

# Builds the Rust extension (release) and installs cwrs with its test dependencies.
install:
	$(PYTHON) -m pip install --quiet "maturin>=1.7,<2"
	$(PYTHON) -m pip install --quiet --no-build-isolation -e ".[test]"

# Progressive-validation comparison of every learner on the bundled data set.
run: install
	$(PYTHON) -m cwrs --shuffle 5

lint:
	cargo fmt --check
	cargo clippy --all-targets -- -D warnings
	cargo clippy --features python -- -D warnings

test: install lint
	cargo test
	$(PYTHON) -m pytest -q

bench:
	cargo bench
