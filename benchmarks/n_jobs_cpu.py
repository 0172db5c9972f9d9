"""`n_jobs=1` against `n_jobs=2` in one process, interleaved (docs/design.md §9.4):
AROW diag `fit`, one pass in stored order over the first --rows rows of benchmarks/scale.py's
stream (kept by `scale.py --cache DIR`). Per fit: wall seconds and the process's CPU seconds
(all threads), so that a loaded machine still shows the work each setting does; the wall ratio
means something only on an idle machine. Run it once per build to compare builds:

    PYTHONPATH=<build>/python python benchmarks/n_jobs_cpu.py --cache /tmp/cwrs-stream
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

import cwrs  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=900_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cache", default="/tmp/cwrs-stream")
    parser.add_argument("--stream", type=int, default=1_000_000,
                        help="rows of the cached stream (its file name)")
    args = parser.parse_args()
    path = Path(args.cache) / f"stream-{args.stream}"
    X = sp.load_npz(f"{path}.npz")[: args.rows]
    y = np.load(f"{path}.npy")[: args.rows]
    X.has_canonical_format  # SciPy's scan, once, outside the timings
    wall, cpu = {1: [], 2: []}, {1: [], 2: []}
    load = os.getloadavg()[0]
    for _ in range(args.repeat):
        for n_jobs in (1, 2):
            model = cwrs.AROW(shuffle=False, n_jobs=n_jobs)
            began, began_cpu = time.perf_counter(), time.process_time()
            model.fit(X, y)
            wall[n_jobs].append(time.perf_counter() - began)
            cpu[n_jobs].append(time.process_time() - began_cpu)
    print(f"{cwrs.__file__}: {args.rows:,} rows, median of {args.repeat}, load average "
          f"{load:.1f} → {os.getloadavg()[0]:.1f}")
    print("| n_jobs | wall s | CPU s (all threads) | wall, each run | CPU, each run |")
    print("|--:|--:|--:|---|---|")
    for n_jobs in (1, 2):
        runs = lambda values: " / ".join(f"{v:.3f}" for v in values)  # noqa: E731
        print(f"| {n_jobs} | {statistics.median(wall[n_jobs]):.3f} | "
              f"{statistics.median(cpu[n_jobs]):.3f} | {runs(wall[n_jobs])} | {runs(cpu[n_jobs])} |")


if __name__ == "__main__":
    main()
