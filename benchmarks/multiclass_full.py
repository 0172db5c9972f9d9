"""Multiclass full covariance, old build against new (the blocked path for multiclass,
docs/design.md §4.4). Rows per second of `partial_fit` (one call over the whole stream) of
AROW(covariance="full") with max-score and one-vs-rest on a dense stream of K classes (rows
x = c_y + ε, class centres c ~ N(0, I/d)·3, ε ~ N(0, I/d)), d = 300, K = 10 by default.

Each measurement runs in its own process, the builds alternating (old, new, old, new, ...),
and the medians are reported with the new/old ratio; the final states are compared (the
blocked path must give the same bits).

    python benchmarks/multiclass_full.py --old /tmp/cwrs-old [--d 300] [--classes 10]
                                         [--rows 3000] [--repeat 3]

`--old` is a directory holding an installed older cwrs (e.g. `pip install --target DIR` of a
wheel built from main); the new build is the one this Python imports.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

CHILD = r"""
import hashlib, json, pickle, sys, time
import numpy as np
import cwrs
d, K, n, strategy = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
rng = np.random.default_rng(0)
centres = 3 * rng.normal(size=(K, d)) / np.sqrt(d)
y = rng.integers(0, K, size=n)
X = centres[y] + rng.normal(size=(n, d)) / np.sqrt(d)
model = cwrs.AROW(covariance="full", multi_class=strategy)
start = time.perf_counter()
model.partial_fit(X, y, classes=np.arange(K))
seconds = time.perf_counter() - start
state = hashlib.sha256(pickle.dumps(model._model.state())).hexdigest()[:16]
print(json.dumps({"seconds": seconds, "updates": int(model.n_updates_),
                  "mistakes": int(model.n_mistakes_), "state": state}))
"""


def run(path, d, classes, rows, strategy):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    if path:
        env["PYTHONPATH"] = path
    out = subprocess.run([sys.executable, "-c", CHILD, str(d), str(classes), str(rows), strategy],
                         env=env, capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", required=True, help="directory of an installed older cwrs")
    parser.add_argument("--d", type=int, default=300)
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--rows", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "load", os.getloadavg())
    print(f"d = {args.d}, {args.classes} classes, {args.rows:,} dense rows, AROW full, "
          f"medians of {args.repeat} alternating runs\n")
    print("| strategy | old rows/s | new rows/s | new/old | same state |")
    print("|---|---|---|---|---|")
    for strategy in ("max-score", "ovr"):
        results = {"old": [], "new": []}
        for _ in range(args.repeat):
            for build, path in (("old", args.old), ("new", None)):
                results[build].append(run(path, args.d, args.classes, args.rows, strategy))
        rate = {b: statistics.median(args.rows / r["seconds"] for r in rs)
                for b, rs in results.items()}
        same = results["old"][0]["state"] == results["new"][0]["state"]
        print(f"| {strategy} | {rate['old']:,.0f} | {rate['new']:,.0f} | "
              f"{rate['new'] / rate['old']:.2f}× | {'yes' if same else 'NO'} |")
    print("\nload", os.getloadavg())


if __name__ == "__main__":
    main()
