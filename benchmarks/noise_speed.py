"""Diagonal AROW's learning speed with and without process noise (docs/design.md
§10.1): one pass over a sparse stream (2^20 features, ~100 non-zeros per row, Zipf-distributed
indices as in benchmarks/acceptance_cg.py), q = 0 and q = 1e-4 alternated, median seconds of the
repeats. To compare two builds, run it under each (PYTHONPATH=<dir holding a cwrs package>)
alternately; for instruction counts run one fit under `valgrind --tool=callgrind` with --once.

    python benchmarks/noise_speed.py [--rows 20000] [--repeats 5] [--once Q]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp

import cwrs


def stream(n_rows, dim=1 << 20, nnz=100, seed=7):
    rng = np.random.default_rng(seed)
    indices = (rng.zipf(1.3, size=n_rows * nnz) % dim).astype(np.int64)
    values = rng.normal(size=n_rows * nnz)
    X = sp.csr_matrix((values, indices, np.arange(0, n_rows * nnz + 1, nnz)), shape=(n_rows, dim))
    X.sum_duplicates()
    return X, np.where(rng.random(n_rows) < 0.5, -1, 1)


def fit_seconds(q, X, y):
    model = cwrs.AROW(shuffle=False, process_noise=q)
    start = time.perf_counter()
    model.fit(X, y)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--once", type=float, help="one fit with this q (for callgrind)")
    args = parser.parse_args()
    X, y = stream(args.rows)
    if args.once is not None:
        fit_seconds(args.once, X, y)
        return
    seconds = {0.0: [], 1e-4: []}
    for _ in range(args.repeats):
        for q in seconds:
            seconds[q].append(fit_seconds(q, X, y))
    median = {q: float(np.median(s)) for q, s in seconds.items()}
    print(f"{cwrs.__file__}: q=0 {median[0.0]:.3f} s, q=1e-4 {median[1e-4]:.3f} s, "
          f"ratio {median[1e-4] / median[0.0]:.2f}")


if __name__ == "__main__":
    main()
