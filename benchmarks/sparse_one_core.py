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

`--processes N` runs the measurement in N fresh processes in turn (each with `--rounds` rounds)
and reports each process's medians, then the median over processes: scikit-learn's time moves
by up to ±30% from one process to the next (whether its 8 MiB weight vector lands on huge pages
depends on where the allocator places it), so one process says little about the ratio. The
process where scikit-learn ran fastest is named too, and its ratio.
"""

import argparse
import importlib
import json
import shutil
import statistics
import subprocess
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
    parser.add_argument("--processes", type=int, default=1, help="fresh processes, in turn")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.processes > 1:
        return over_processes(args)
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
    if args.json:
        print(json.dumps({name: statistics.median(times) for name, times in seconds.items()}))
        return
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


def over_processes(args):
    """Runs the measurement in `args.processes` fresh processes in turn; prints each one's
    medians (ms) and ratios, the median over processes, and where scikit-learn was fastest."""
    command = [sys.executable, __file__, "--rounds", str(args.rounds), "--json"]
    if args.baseline is not None:
        command += ["--baseline", str(args.baseline)]
    runs = []
    for p in range(args.processes):
        output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        runs.append(json.loads(output.splitlines()[-1]))
        print(f"process {p + 1}: " + ", ".join(f"{name} {t * 1e3:.0f} ms" for name, t in
              runs[-1].items()) + "; " + ratios(runs[-1]), flush=True)
    median = {name: statistics.median(run[name] for run in runs) for name in runs[0]}
    print("median over processes: " + ", ".join(f"{name} {t * 1e3:.0f} ms" for name, t in
          median.items()) + "; " + ratios(median))
    fastest = min(range(len(runs)), key=lambda p: runs[p]["sklearn PA-I"])
    print(f"scikit-learn fastest in process {fastest + 1} "
          f"({runs[fastest]['sklearn PA-I'] * 1e3:.0f} ms): {ratios(runs[fastest])}")


def ratios(medians):
    """Each build's speed against scikit-learn's (its time over theirs) in one run's medians."""
    return ", ".join(f"{name.split()[0]} / sklearn {medians['sklearn PA-I'] / t:.2f}x"
                     for name, t in medians.items() if name != "sklearn PA-I")


if __name__ == "__main__":
    main()
