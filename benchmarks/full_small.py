"""Full-covariance AROW at small orders (d = 4, 8, 16, 31 by default) in several cwrs builds,
one run (small d must not be slower than the plain loop of docs/design.md §3.3).

Each build is a Python interpreter with its own cwrs installed (`--python`, repeatable; the
default is this interpreter alone). The rounds alternate between the builds (build A, build B,
A, B, … for every order), each round a fresh process pinned to one core that fits AROW
(covariance="full", r=1, no bias, one pass) on the same Gaussian rows and reports its best of
three fits in CPU time (one thread; CPU time is steadier than wall time on a loaded machine); the table gives the median over the rounds, in updates per second, and the ratio
to the first build. The final means of the builds are compared too (they should agree bit for
bit when the arithmetic did not change).

    python benchmarks/full_small.py --python /path/old/.venv/bin/python \\
        --python .venv/bin/python [--dims 4,8,16,31] [--rows 20000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

ONE_FIT = r"""
import json, sys, time
import numpy as np
import cwrs
d, n = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(d)
X = rng.normal(size=(n, d)) / np.sqrt(d)
y = np.where(X @ rng.normal(size=d) >= 0, 1, -1)
y = np.where(rng.random(n) < 0.05, -y, y)
best = float("inf")
for _ in range(3):
    est = cwrs.AROW(r=1.0, covariance="full", fit_intercept=False, shuffle=False)
    start = time.process_time()
    est.fit(X, y)
    best = min(best, time.process_time() - start)
print(json.dumps({"seconds": best, "updates": int(est.n_updates_),
                  "mean": est.coef_[0].tolist()}))
"""


def one_round(python, d, n):
    core = str(min(os.sched_getaffinity(0)))
    out = subprocess.run(["taskset", "-c", core, python, "-c", ONE_FIT, str(d), str(n)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", action="append", help="an interpreter with a cwrs build")
    parser.add_argument("--dims", default="4,8,16,31")
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    pythons = args.python or [sys.executable]
    dims = [int(d) for d in args.dims.split(",")]
    print("| d | " + " | ".join(f"build {k + 1} updates/s" for k in range(len(pythons)))
          + " | " + " | ".join(f"build {k + 1} / build 1" for k in range(1, len(pythons)))
          + " | same mean |")
    print("|--:|" + "--:|" * (2 * len(pythons) - 1) + "---|")
    for d in dims:
        rates = [[] for _ in pythons]
        means = [None] * len(pythons)
        for _ in range(args.rounds):
            for k, python in enumerate(pythons):
                result = one_round(python, d, args.rows)
                rates[k].append(result["updates"] / result["seconds"])
                means[k] = result["mean"]
        medians = [statistics.median(r) for r in rates]
        same = all(m == means[0] for m in means)
        print(f"| {d} | " + " | ".join(f"{m:,.0f}" for m in medians) + " | "
              + " | ".join(f"{m / medians[0]:.2f}×" for m in medians[1:])
              + f" | {'yes' if same else 'no'} |", flush=True)
    for k, python in enumerate(pythons):
        print(f"\nbuild {k + 1}: {python}", end="")
    print()


if __name__ == "__main__":
    main()
