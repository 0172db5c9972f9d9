"""What progressive scores cost: `partial_fit(X, y, return_scores=True)` against `partial_fit`
alone, and against the Python loop it replaces (per row: `decision_function` of the row, and
`predict_proba` for a second-order learner, which reads xᵀΣx, then `partial_fit` of the row), on
the same seeded data in one run.

    python benchmarks/progressive_scores.py [--repeats 3] [--quick]

Cases: AROW diag on sparse rows (2^18 features, ~100 non-zeros), AROW full on dense rows
(d = 100), PA1 on dense rows (d = 100), AROW max-score with 10 classes (diag, d = 100), and
kernel AROW (RBF, budget 200, d = 20). Rows/s are medians of the repeats; the loop runs on a
prefix of the rows (it is slow) and is reported in rows/s too.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
import scipy.sparse as sp

import cwrs
from _peers import cpu_model


def sparse_rows(n, seed=0):
    rng = np.random.default_rng(seed)
    nnz = 100
    indices = np.sort(rng.choice(2**18, size=(n, nnz)), axis=1)
    data = rng.normal(size=(n, nnz)) / np.sqrt(nnz)
    X = sp.csr_matrix((data.ravel(), indices.ravel(), np.arange(0, n * nnz + 1, nnz)),
                      shape=(n, 2**18))
    X.sum_duplicates()
    w = rng.normal(size=2**18)
    return X, np.where(X @ w > 0, 1, -1)


def dense_rows(n, d, seed=0, n_classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if n_classes == 2:
        return X, np.where(X @ rng.normal(size=d) + 0.3 * rng.normal(size=n) > 0, 1, -1)
    return X, np.argmax(X @ rng.normal(size=(d, n_classes)), axis=1)


def rate(n, run, repeats):
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        run()
        times.append(time.perf_counter() - began)
    return n / float(np.median(times))


def python_loop(estimator, X, y, classes):
    """Per row: the score, for a second-order learner also what reads xᵀΣx (`predict_proba`),
    then learning the row."""
    estimator.partial_fit(X[:1], y[:1], classes=classes)  # a fresh model predicts nothing
    for i in range(1, X.shape[0]):
        row = X[i : i + 1]
        estimator.decision_function(row)
        if estimator._second_order:
            estimator.predict_proba(row)
        estimator.partial_fit(row, y[i : i + 1], classes=classes)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    scale = 0.1 if args.quick else 1.0
    n = int(50_000 * scale)
    cases = [
        ("AROW diag, sparse 2^18", lambda: cwrs.AROW(), sparse_rows(n)),
        ("AROW full, dense d=100", lambda: cwrs.AROW(covariance="full"), dense_rows(n // 5, 100)),
        ("PA1, dense d=100", lambda: cwrs.PA1(), dense_rows(n, 100)),
        ("AROW 10 classes, dense d=100", lambda: cwrs.AROW(), dense_rows(n // 2, 100, n_classes=10)),
        ("AROW kernel RBF, budget 200, d=20", lambda: cwrs.AROW(kernel="rbf", budget=200),
         dense_rows(n // 10, 20)),
    ]
    print(f"{cpu_model()} · cwrs {cwrs.__version__} · numpy {np.__version__} · median of "
          f"{args.repeats}\n")
    print("| learner | rows | partial_fit, rows/s | with return_scores, rows/s | ratio | "
          "Python loop per row, rows/s | scores / loop |")
    print("|---|--:|--:|--:|--:|--:|--:|")
    for name, make, (X, y) in cases:
        classes = np.unique(y)
        rows = X.shape[0]
        plain = rate(rows, lambda: make().partial_fit(X, y, classes=classes), args.repeats)
        scored = rate(
            rows, lambda: make().partial_fit(X, y, classes=classes, return_scores=True),
            args.repeats,
        )
        prefix = min(rows, 2000)
        loop = rate(prefix, lambda: python_loop(make(), X[:prefix], y[:prefix], classes), 1)
        print(f"| {name} | {rows:,} | {plain / 1e3:,.1f}k | {scored / 1e3:,.1f}k | "
              f"{scored / plain:.2f}× | {loop / 1e3:,.1f}k | {scored / loop:,.1f}× |")


if __name__ == "__main__":
    main()
