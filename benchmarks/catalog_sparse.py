"""ALMA and the ROMMAs on a sparse stream over 2^20 features (docs/design.md §2.9): their cost per
row next to the Perceptron's and PA's (O(nnz) peers in the same run). One pass in order of a
random stream: `--rows` rows of 100 non-zeros each (Zipf-distributed columns, normal values,
random ±1 labels, so the rules keep updating), shuffle=False; the median of `--repeats` fits.

    python benchmarks/catalog_sparse.py [--rows 5000] [--repeats 3] [--learners ROMMA ALMA]

ALMA and the ROMMAs pay O(d) per row for ‖μ‖² and O(d) per update for the rescale; a scalar
scale of the identity form (μ = s·u, ‖μ‖² kept: docs/design.md §2.9, measured at commit ad7ecdd
and reverted) makes them O(nnz). Run this script with two builds to compare
(benchmarks/archive/RESULTS-2026-11.md, "ALMA and the ROMMAs in O(nnz)"). For instruction counts (immune to load) run
one learner under callgrind: `valgrind --tool=callgrind python benchmarks/catalog_sparse.py
--rows 1000 --repeats 1 --learners ROMMA`.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp

import cwrs

LEARNERS = ["ALMA", "ROMMA", "AggressiveROMMA", "Perceptron", "PA"]


def stream(n, d=1 << 20, nnz=100, seed=7):
    rng = np.random.default_rng(seed)
    indices = (rng.zipf(1.3, size=n * nnz) % d).astype(np.int64)
    X = sp.csr_matrix(
        (rng.normal(size=n * nnz), indices, np.arange(0, n * nnz + 1, nnz)), shape=(n, d)
    )
    X.sum_duplicates()
    return X, np.where(rng.random(n) < 0.5, -1, 1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--learners", nargs="*", default=LEARNERS)
    args = parser.parse_args()
    X, y = stream(args.rows)
    print(f"{args.rows} rows × 2^20 features, {X.nnz / args.rows:.0f} non-zeros per row")
    print(f"{'learner':18} {'updates':>8} {'seconds':>9} {'µs/row':>8}")
    for name in args.learners:
        times = []
        for _ in range(args.repeats):
            model = getattr(cwrs, name)(shuffle=False)
            start = time.perf_counter()
            model.fit(X, y)
            times.append(time.perf_counter() - start)
        seconds = float(np.median(times))
        print(f"{name:18} {model.n_updates_:8d} {seconds:9.3f} {1e6 * seconds / args.rows:8.1f}")


if __name__ == "__main__":
    main()
