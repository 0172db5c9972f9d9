"""Where the time of covariance="lowrank" goes on sparse rows: seconds per row of AROW
(rank k) against covariance="diag" on hashed-text-like rows (random columns, nnz non-zeros per
row), as the width d and nnz vary, one process, one core, the forms alternating.

    python benchmarks/lowrank_sparse.py [--rows 400] [--rank 10]

Prints a Markdown table for benchmarks/RESULTS.md ("Low-rank covariance on sparse rows").
"""

import argparse
import time

import numpy as np
import scipy.sparse as sp

import cwrs


def stream(n_rows, width, nnz, seed=0):
    rng = np.random.default_rng(seed)
    columns = np.sort(rng.choice(width, size=(n_rows, nnz)), axis=1)
    values = rng.normal(size=(n_rows, nnz)) / np.sqrt(nnz)
    X = sp.csr_matrix(
        (values.ravel(), columns.ravel(), np.arange(0, n_rows * nnz + 1, nnz)),
        shape=(n_rows, width),
    )
    X.sum_duplicates()
    w = rng.normal(size=width)
    y = np.where(X @ w > 0, 1, -1)
    return X, y


def seconds_per_row(make, X, y, warm):
    model = make().partial_fit(X[:warm], y[:warm], classes=[-1, 1])
    start = time.perf_counter()
    model.partial_fit(X[warm:], y[warm:])
    return (time.perf_counter() - start) / (X.shape[0] - warm)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=400)
    parser.add_argument("--rank", type=int, default=10)
    args = parser.parse_args()
    warm = 4 * args.rank  # past the first shrinks of the sketch
    cases = [(2**12, 50), (2**14, 50), (2**16, 50), (2**18, 50), (2**16, 10), (2**16, 250)]
    print(f"| d | nnz | lowrank (k = {args.rank}) µs/row | diag µs/row | lowrank / diag |")
    print("|--:|--:|--:|--:|--:|")
    for width, nnz in cases:
        X, y = stream(args.rows + warm, width, nnz)
        low = seconds_per_row(lambda: cwrs.AROW(covariance="lowrank", rank=args.rank), X, y, warm)
        diag = min(seconds_per_row(cwrs.AROW, X, y, warm) for _ in range(3))
        print(f"| 2^{width.bit_length() - 1} | {nnz} | {low * 1e6:,.0f} | {diag * 1e6:.2f} | "
              f"{low / diag:,.0f}× |")


if __name__ == "__main__":
    main()
