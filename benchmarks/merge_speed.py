"""Time of the merges that build a model: `fit(n_jobs=2)` with full and low-rank covariance
(each pass merges the shards through `cwrs.merge`'s core, docs/design.md §9.4) and `cwrs.merge`
of two full models, median of a few repeats.

    python benchmarks/merge_speed.py                     # this build
    python benchmarks/merge_speed.py --against DIR       # and the build whose `cwrs` package
                                                         # is in DIR, runs interleaved
"""

import argparse
import json
import os
import pickle
import statistics
import subprocess
import sys
import time

import numpy as np


def data(n_rows, n_features, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_rows, n_features)) / np.sqrt(n_features)
    w = rng.standard_normal(n_features)
    return X, np.where(X @ w + 0.1 * rng.standard_normal(n_rows) > 0, 1, -1)


def cases():
    import cwrs

    def fit(d, covariance, rows, **extra):
        X, y = data(rows, d)

        def run():
            cwrs.AROW(covariance=covariance, n_jobs=2, n_iter=3, shuffle=False, **extra).fit(X, y)

        return run

    def merge_full(d, method):
        X, y = data(400, d, seed=1)
        a = cwrs.AROW(covariance="full").partial_fit(X[:200], y[:200], classes=[-1, 1])
        b = cwrs.AROW(covariance="full").partial_fit(X[200:], y[200:], classes=[-1, 1])
        return lambda: cwrs.merge([a, b], method=method)

    def merge_pass(d, covariance):
        # What one pass of fit(n_jobs=2) merges: two shards learned from the model of its start.
        X, y = data(600, d, seed=2)
        base = cwrs.AROW(covariance=covariance).partial_fit(X[:200], y[:200], classes=[-1, 1])
        shards = [pickle.loads(pickle.dumps(base)).partial_fit(X[lo:lo + 200], y[lo:lo + 200])
                  for lo in (200, 400)]
        return lambda: cwrs.merge(shards, base=base)

    return {
        "fit n_jobs=2, full, d=300, 3000 rows, n_iter=3": fit(300, "full", 3000),
        "fit n_jobs=2, full, d=600, 3000 rows, n_iter=3": fit(600, "full", 3000),
        "fit n_jobs=2, lowrank k=10, d=2000, 5000 rows, n_iter=3": fit(2000, "lowrank", 5000),
        "cwrs.merge of one pass's 2 shards and base, full, d=600": merge_pass(600, "full"),
        "cwrs.merge of one pass's 2 shards and base, lowrank k=10, d=2000":
            merge_pass(2000, "lowrank"),
        "cwrs.merge of 2 full models, d=1000, information": merge_full(1000, "information"),
        "cwrs.merge of 2 full models, d=1000, average": merge_full(1000, "average"),
    }


def measure(repeat):
    times = {}
    for name, run in cases().items():
        run()  # warm up
        times[name] = []
        for _ in range(repeat):
            began = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - began)
    return times


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--against", help="a directory holding another build's cwrs package")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.json:
        print(json.dumps(measure(args.repeat)))
        return
    builds = {"this build": None}
    if args.against:
        builds = {"against": args.against, "this build": None}
    runs = {name: {} for name in builds}
    # Interleaved, one repeat per process, so that both builds meet the same machine load.
    for _ in range(args.repeat):
        for name, path in builds.items():
            env = dict(os.environ)
            if path:
                env["PYTHONPATH"] = path
            out = subprocess.run([sys.executable, __file__, "--json", "--repeat", "1"],
                                 env=env, check=True, capture_output=True, text=True).stdout
            for case, times in json.loads(out).items():
                runs[name].setdefault(case, []).extend(times)
    names = list(builds)
    print("| case | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    for case in runs[names[0]]:
        cells = [f"{statistics.median(runs[n][case]):.3f} s" for n in names]
        print(f"| {case} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
