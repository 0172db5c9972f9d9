"""Diagonal AROW against scikit-learn's PA-I on compare.py's sparse stream, CPU time, one core.

compare.py's section-1 stream (`Stream(220,000)`: 198,000 training rows x 2^20 features, ~99
non-zeros per row, Zipf word ids); one `fit` pass in stored order, cwrs `AROW(covariance="diag")`
and scikit-learn PA-I interleaved in one process, `rounds` times each; CPU time
(`time.process_time`), so the load of a shared machine weighs less than on wall time. Run it
pinned to one core, and once per build to compare builds (each with its own PYTHONPATH):

    taskset -c 1 python benchmarks/sparse_one_core.py [--rounds 5]

`--baseline DIR` (a directory holding another build's `cwrs` package, e.g. a checkout's
`python/`) also fits that build in the same process, interleaved with the others (its package is
copied and imported as `cwrs_baseline`; the package imports itself relatively), and checks that
both builds learn the same coefficients: a comparison of two builds that the load of the machine
moves less than separate processes do.
"""

import argparse
import importlib
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _peers  # noqa: E402
import compare  # noqa: E402

import cwrs  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--baseline", type=Path, help="a directory holding another build's cwrs")
    args = parser.parse_args()
    X, y, _, _ = compare.Stream(220_000, ".").data()
    builds = {"cwrs AROW diag": cwrs}
    if args.baseline is not None:
        copy = Path(tempfile.mkdtemp())
        shutil.copytree(args.baseline / "cwrs", copy / "cwrs_baseline")
        sys.path.insert(0, str(copy))
        builds["baseline AROW diag"] = importlib.import_module("cwrs_baseline")
    fits = {
        name: lambda build=build: build.AROW(r=1.0, covariance="diag", shuffle=False).fit(X, y)
        for name, build in builds.items()
    }
    fits["sklearn PA-I"] = lambda: _peers.sklearn_fit(_peers.sklearn_pa1(C=1.0), X, y)
    coefs = [fits[name]().coef_ for name in builds]
    assert all(np.array_equal(coefs[0], c) for c in coefs), "the builds learn other coefficients"
    seconds = {name: [] for name in fits}
    names = list(fits)
    for r in range(args.rounds):
        # Each round starts with another fit, so that none always runs first.
        for name in names[r % len(names):] + names[:r % len(names)]:
            fit = fits[name]
            start = time.process_time()
            fit()
            seconds[name].append(time.process_time() - start)
    n = X.shape[0]
    for name, times in seconds.items():
        median = statistics.median(times)
        print(f"{name}: {n / median / 1e6:.2f}M rows/s (median of {args.rounds}; "
              f"{', '.join(f'{t * 1e3:.0f}' for t in times)} ms)")
    medians = {name: statistics.median(times) for name, times in seconds.items()}
    print(f"cwrs / sklearn: {medians['sklearn PA-I'] / medians['cwrs AROW diag']:.2f}x")
    if args.baseline is not None:
        baseline = medians["baseline AROW diag"]
        print(f"baseline / sklearn: {medians['sklearn PA-I'] / baseline:.2f}x")
        print(f"cwrs / baseline: {baseline / medians['cwrs AROW diag']:.2f}x")


if __name__ == "__main__":
    main()
