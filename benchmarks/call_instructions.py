"""Instructions per call of the calls of benchmarks/call_overhead.py, old build against new,
counted by callgrind (immune to the machine's load): each measure's loop of N calls runs
between `os.getppid()` (callgrind zeroes its counters there) and `os.getpgrp()` (it dumps them
there), and an empty loop measured alike is subtracted; the cyclic garbage collector is off
while they run (a collection in one loop and not in another moved the counts by ~10%).

    python benchmarks/call_instructions.py --old /tmp/old-cwrs [--calls 2000]
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from call_overhead import SETUP

# After the setup of benchmarks/call_overhead.py (scikit-learn left out: too slow here).
MEASURE = SETUP + r"""
import gc, os
measures = {"empty loop": lambda i: None, **measures}
gc.disable()
for name, call in measures.items():
    if name.startswith("scikit-learn"):
        continue
    for i in range(10):
        call(i)
    os.getppid()
    for i in range(calls):
        call(i)
    os.getpgrp()
    print(name)
"""


def count(path, calls):
    """Instructions per call of each measure for the cwrs package in `path` (None: installed)."""
    # One BLAS thread: callgrind runs threads in turn and counts the idle ones' spinning too.
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    if path:
        env["PYTHONPATH"] = path + os.pathsep + env.get("PYTHONPATH", "")
    with tempfile.TemporaryDirectory() as out:
        command = [
            "valgrind", "--tool=callgrind", "--zero-before=os_getppid",
            "--dump-before=os_getpgrp", f"--callgrind-out-file={out}/cg",
            sys.executable, "-c", MEASURE, str(calls),
        ]
        names = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
        dumps = sorted(Path(out).glob("cg.*"), key=lambda p: int(p.name.split(".")[-1]))
        totals = [int(re.search(r"^summary: (\d+)", p.read_text(), re.M).group(1)) for p in dumps]
    per_call = dict(zip(names.stdout.splitlines(), (t / calls for t in totals)))
    empty = per_call.pop("empty loop")
    return {name: value - empty for name, value in per_call.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", required=True, help="directory holding the old cwrs package")
    parser.add_argument("--calls", type=int, default=3000)
    args = parser.parse_args()
    old, new = count(args.old, args.calls), count(None, args.calls)
    print("| measure (instructions per call) | old | new | new / old |")
    print("|---|--:|--:|--:|")
    for name in new:
        print(f"| {name} | {old[name]:,.0f} | {new[name]:,.0f} | {new[name] / old[name]:.2f} |")


if __name__ == "__main__":
    main()
