"""The overhead of `n_jobs` (docs/design.md §9.4): one AROW diag pass in stored order
over the first N rows of the text-like stream of benchmarks/compare.py, with n_jobs=1, n_jobs=2
(the core's sharded fit) and n_jobs=2 the way it was before (Python: copies, `partial_fit` per
shard, `_cwrs.merge` through states; the reference of tests/test_sharded_fit.py).

    python benchmarks/sharded_overhead.py make [--rows 100000]   # generate, keep in --cache
    python benchmarks/sharded_overhead.py seq|new|old            # one fit, for callgrind:
        valgrind --tool=callgrind python benchmarks/sharded_overhead.py new
    python benchmarks/sharded_overhead.py seconds [--repeat 7]   # all three, interleaved

The `seconds` mode fits on the first 90% of the rows and reports the test error on the rest.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import cwrs
from cwrs._estimator import Estimator

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))
from test_sharded_fit import _reference_fit_passes  # noqa: E402

NEW_PASSES = Estimator._fit_passes


def fit(variant, X, y):
    Estimator._fit_passes = _reference_fit_passes if variant == "old" else NEW_PASSES
    model = cwrs.AROW(shuffle=False, n_jobs=1 if variant == "seq" else 2)
    return model.fit(X, y)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["make", "seq", "new", "old", "seconds"])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--cache", default="/tmp/cwrs-sharded-overhead")
    args = parser.parse_args()
    cache = Path(args.cache)
    if args.mode == "make":
        from compare import make_text_stream

        X, y = make_text_stream(args.rows)
        cache.mkdir(parents=True, exist_ok=True)
        sp.save_npz(cache / "X.npz", X, compressed=False)
        np.save(cache / "y.npy", y)
        return
    X, y = sp.load_npz(cache / "X.npz"), np.load(cache / "y.npy")
    if args.mode != "seconds":
        print(args.mode, fit(args.mode, X, y).n_updates_)
        return
    n_train = X.shape[0] * 9 // 10
    names = {"seq": "n_jobs=1", "new": "n_jobs=2, core", "old": "n_jobs=2, before (Python)"}
    seconds = {variant: [] for variant in names}
    errors = {}
    load = os.getloadavg()[0]
    for _ in range(args.repeat):
        for variant in names:
            began = time.perf_counter()
            model = fit(variant, X[:n_train], y[:n_train])
            seconds[variant].append(time.perf_counter() - began)
            errors[variant] = float(np.mean(model.predict(X[n_train:]) != y[n_train:]))
    print(f"{n_train:,} rows, median of {args.repeat}, load average {load:.1f} → "
          f"{os.getloadavg()[0]:.1f}\n")
    print("| fit | seconds (median) | vs n_jobs=1 | test error |\n|---|--:|--:|--:|")
    base = statistics.median(seconds["seq"])
    for variant, name in names.items():
        median = statistics.median(seconds[variant])
        print(f"| {name} | {median:.3f} | {base / median:.2f}× | {errors[variant]:.2%} |")


if __name__ == "__main__":
    main()
