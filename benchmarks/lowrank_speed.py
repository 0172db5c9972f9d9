"""Time per row of covariance="lowrank" against "diag", for old-against-new
comparisons on a loaded machine; results in benchmarks/RESULTS.md, "Low-rank covariance".

Dense rows of benchmarks/lowrank.py's "factors" stream (10 latent factors, d features), AROW,
one pass. Two modes:

    python benchmarks/lowrank_speed.py time D N REPEATS SPEC...   # e.g. 1000 3000 2 diag lowrank:20
    valgrind --tool=callgrind python benchmarks/lowrank_speed.py learn SPEC [D] [N]

`time` learns N rows with each SPEC ("diag", "full", "lowrank:K") in chunks of 1,000 rows,
REPEATS times interleaved, and prints the median µs per row and the ratio to the first SPEC.
`learn` makes one pass for an instruction count (callgrind: `Model::partial_fit` inclusive).
Run it with PYTHONPATH pointing at another build of cwrs to compare builds in the same run.
"""

import sys
import time

import numpy as np

import cwrs


def rows(d, n):
    rng = np.random.default_rng(0)
    loadings = rng.normal(size=(10, d)) / np.sqrt(10)
    z = rng.normal(size=(n, 10))
    X = z * np.logspace(0.5, -1.5, 10) @ loadings + 0.1 * rng.normal(size=(n, d))
    return X, np.where(z @ rng.normal(size=10) > 0, 1, -1)


def model(spec):
    form, _, rank = spec.partition(":")
    return cwrs.AROW(shuffle=False, covariance=form, **({"rank": int(rank)} if rank else {}))


def main(argv):
    if argv[0] == "learn":
        spec, d, n = argv[1], int(argv[2]) if len(argv) > 2 else 1000, int(argv[3]) if len(argv) > 3 else 2000
        X, y = rows(d, n)
        learner = model(spec).partial_fit(X[:10], y[:10], classes=[-1, 1]).partial_fit(X[10:], y[10:])
        print(spec, learner.n_updates_)
        return
    d, n, repeats, specs = int(argv[1]), int(argv[2]), int(argv[3]), argv[4:]
    X, y = rows(d, n)
    times = {spec: [] for spec in specs}
    for _ in range(repeats):
        for spec in specs:
            learner, start = model(spec), time.perf_counter()
            for i in range(0, n, 1000):
                learner.partial_fit(X[i:i + 1000], y[i:i + 1000], classes=[-1, 1])
            times[spec].append((time.perf_counter() - start) / n)
    base = np.median(times[specs[0]])
    for spec in specs:
        median = np.median(times[spec])
        print(f"{spec:12s} {1e6 * median:9.1f} µs/row  {median / base:6.1f}×")


if __name__ == "__main__":
    main(sys.argv[1:])
