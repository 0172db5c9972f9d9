"""Averaged models (`average=`, docs/design.md §3.10): what they buy and what they cost.

1. Accuracy on a1a (tested on a1a.t, the shared data sets beside the repository): one pass in
   file order, then ten shuffled passes without and with averaging, for PA1 and SOP (the
   first-order and second-order learners averaging helps most) and AROW.
2. Cost: rows per second of `fit` (one pass in order) with `average=False` and `average=True`,
   and of `decision_function`, on sparse rows (diagonal and identity forms) and dense rows (full
   form). `--off-only` times `average=False` alone, so that the same script measures a build
   without averaging (run it with that build's cwrs on PYTHONPATH) for the speed of the path
   with the option off.

    python benchmarks/average.py [--repeats 5] [--off-only]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import cwrs

SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets"


def accuracy() -> None:
    X, y = cwrs.load_svmlight(str(SHARED / "a1a.libsvm"), n_features=123)
    Xt, yt = cwrs.load_svmlight(str(SHARED / "a1a.t.libsvm"), n_features=123)
    print("| learner | one pass, file order | 10 shuffled passes | 10 shuffled passes, average=True |")
    print("|---|--:|--:|--:|")
    for cls in (cwrs.PA1, cwrs.SOP, cwrs.AROW):
        one = cls(shuffle=False).fit(X, y).score(Xt, yt)
        runs = {
            avg: [cls(n_iter=10, random_state=s, average=avg).fit(X, y).score(Xt, yt) for s in range(5)]
            for avg in (False, True)
        }
        cells = [f"{np.mean(r):.3f} ({min(r):.3f}–{max(r):.3f})" for r in runs.values()]
        print(f"| {cls.__name__} | {one:.3f} | {cells[0]} | {cells[1]} |")


def _sparse(n: int, d: int, nnz: int, rng: np.random.Generator):
    indices = rng.integers(0, d, size=(n, nnz))
    X = sp.csr_matrix(
        (rng.normal(size=n * nnz), indices.ravel(), np.arange(0, n * nnz + 1, nnz)), shape=(n, d)
    )
    X.sum_duplicates()
    return X, np.where(X @ rng.normal(size=d) > 0, 1, -1)


def _best(f, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return min(times)


def cost(repeats: int, off_only: bool) -> None:
    rng = np.random.default_rng(0)
    X, y = _sparse(200_000, 2**16, 50, rng)
    Xd = rng.normal(size=(20_000, 100))
    yd = np.where(Xd @ rng.normal(size=100) > 0, 1, -1)
    cases = [
        ("PA1, sparse (2^16 features, 50 per row)", lambda **kw: cwrs.PA1(shuffle=False, **kw), X, y),
        ("AROW diag, sparse", lambda **kw: cwrs.AROW(shuffle=False, **kw), X, y),
        ("AROW full, dense d=100", lambda **kw: cwrs.AROW(covariance="full", shuffle=False, **kw), Xd, yd),
    ]
    settings = [{}] if off_only else [{"average": False}, {"average": True}]
    print("| learner | setting | fit, rows/s | decision_function, rows/s |")
    print("|---|---|--:|--:|")
    for name, make, XX, yy in cases:
        for kw in settings:
            fit = _best(lambda: make(**kw).fit(XX, yy), repeats)
            model = make(**kw).fit(XX, yy)
            predict = _best(lambda: model.decision_function(XX), repeats)
            label = ", ".join(f"{k}={v}" for k, v in kw.items()) or "(no average parameter)"
            n = XX.shape[0]
            print(f"| {name} | {label} | {n / fit / 1e3:,.0f}k | {n / predict / 1e3:,.0f}k |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--off-only", action="store_true")
    args = parser.parse_args()
    if not args.off_only:
        accuracy()
        print()
    cost(args.repeats, args.off_only)


if __name__ == "__main__":
    main()
