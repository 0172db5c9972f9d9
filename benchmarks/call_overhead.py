"""The fixed cost of a call from Python, old build against new, interleaved in one run.

Each repeat measures every build once, in turn, in a fresh process: the median wall time per
call (after a warm-up) of an AROW (diag, d = 100) fitted on 2,000 dense rows for one-row
`partial_fit`, `partial_fit` of two rows, one-row `decision_function`, `predict` and
`predict_proba`, NumPy's `x @ w` on the same row as a yardstick and scikit-learn's
SGDClassifier (hinge loss) as a peer (a tenth of the calls: it is slow); the table gives the
median over the repeats. The old build is a directory holding another cwrs package (e.g. a wheel of
the old commit, unzipped), put first on PYTHONPATH; the new one is the installed cwrs.

    python benchmarks/call_overhead.py --old /tmp/old-cwrs [--repeat 5] [--calls 20000]
"""

import argparse
import json
import os
import subprocess
import sys

import numpy as np

# The data, models and calls measured (also by benchmarks/call_instructions.py).
SETUP = r"""
import sys
import numpy as np
import cwrs
from sklearn.linear_model import SGDClassifier

calls, warmup, d = int(sys.argv[1]), 2000, 100
total = calls + warmup + 2
rng = np.random.default_rng(4)
X = rng.standard_normal((total, d)) / np.sqrt(d)
y = np.where(X @ rng.standard_normal(d) > 0, 1, -1)
rows = [X[i:i + 1] for i in range(total)]
labels = [y[i:i + 1] for i in range(total)]
pairs = [X[i:i + 2] for i in range(total - 1)]
pair_labels = [y[i:i + 2] for i in range(total - 1)]
w = rng.standard_normal(d)
fitted = cwrs.AROW(r=1.0).fit(X[:2000], y[:2000])
learner = cwrs.AROW(r=1.0).partial_fit(rows[0], labels[0], classes=[-1, 1])
pair_learner = cwrs.AROW(r=1.0).partial_fit(rows[0], labels[0], classes=[-1, 1])
sk_fitted = SGDClassifier(loss="hinge", random_state=0).fit(X[:2000], y[:2000])
sk_learner = SGDClassifier(loss="hinge").partial_fit(rows[0], labels[0], classes=[-1, 1])
measures = {
    "NumPy x @ w": lambda i: rows[i] @ w,
    "decision_function, 1 row": lambda i: fitted.decision_function(rows[i]),
    "predict, 1 row": lambda i: fitted.predict(rows[i]),
    "predict_proba, 1 row": lambda i: fitted.predict_proba(rows[i]),
    "partial_fit, 1 row": lambda i: learner.partial_fit(rows[i], labels[i]),
    "partial_fit, 2 rows": lambda i: pair_learner.partial_fit(pairs[i], pair_labels[i]),
    "scikit-learn decision_function, 1 row": lambda i: sk_fitted.decision_function(rows[i]),
    "scikit-learn partial_fit, 1 row": lambda i: sk_learner.partial_fit(rows[i], labels[i]),
}
"""
MEASURE = SETUP + r"""
import json, time
result = {}
clock = time.perf_counter
for name, call in measures.items():
    n = calls // 10 if name.startswith("scikit-learn") else calls
    for i in range(warmup // 10):
        call(i)
    times = np.empty(n)
    for k in range(n):
        start = clock()
        call(warmup + k)
        times[k] = clock() - start
    result[name] = float(np.median(times)) * 1e6
print(json.dumps(result))
"""


def run(path, calls):
    env = dict(os.environ)
    if path:
        env["PYTHONPATH"] = path + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", MEASURE, str(calls)], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", required=True, help="directory holding the old cwrs package")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--calls", type=int, default=20_000)
    args = parser.parse_args()
    builds = {"old": args.old, "new": None}
    runs = {name: [] for name in builds}
    for r in range(args.repeat):
        for name, path in builds.items():
            runs[name].append(run(path, args.calls))
            print(f"repeat {r + 1}/{args.repeat}: {name} done", file=sys.stderr)
    print("| measure (µs per call, median) | old | new | new / old |")
    print("|---|--:|--:|--:|")
    for measure in runs["new"][0]:
        old, new = (float(np.median([m[measure] for m in runs[b]])) for b in builds)
        print(f"| {measure} | {old:.2f} | {new:.2f} | {new / old:.2f} |")


if __name__ == "__main__":
    main()
