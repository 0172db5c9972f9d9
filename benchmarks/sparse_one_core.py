"""Diagonal AROW against scikit-learn's PA-I on compare.py's sparse stream, CPU time, one core.

compare.py's section-1 stream (`Stream(220,000)`: 198,000 training rows x 2^20 features, ~99
non-zeros per row, Zipf word ids); one `fit` pass in stored order, cwrs `AROW(covariance="diag")`
and scikit-learn PA-I interleaved in one process, `rounds` times each; CPU time
(`time.process_time`), so the load of a shared machine weighs less than on wall time. Run it
pinned to one core, and once per build to compare builds (each with its own PYTHONPATH):

    taskset -c 1 python benchmarks/sparse_one_core.py [--rounds 5]
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _peers  # noqa: E402
import compare  # noqa: E402

import cwrs  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    X, y, _, _ = compare.Stream(220_000, ".").data()
    fits = {
        "cwrs AROW diag": lambda: cwrs.AROW(r=1.0, covariance="diag", shuffle=False).fit(X, y),
        "sklearn PA-I": lambda: _peers.sklearn_fit(_peers.sklearn_pa1(C=1.0), X, y),
    }
    seconds = {name: [] for name in fits}
    for _ in range(args.rounds):
        for name, fit in fits.items():
            start = time.process_time()
            fit()
            seconds[name].append(time.process_time() - start)
    n = X.shape[0]
    for name, times in seconds.items():
        median = statistics.median(times)
        print(f"{name}: {n / median / 1e6:.2f}M rows/s (median of {args.rounds}; "
              f"{', '.join(f'{t * 1e3:.0f}' for t in times)} ms)")
    ratio = statistics.median(seconds["sklearn PA-I"]) / statistics.median(seconds["cwrs AROW diag"])
    print(f"cwrs / sklearn: {ratio:.2f}x")


if __name__ == "__main__":
    main()
