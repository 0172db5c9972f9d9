"""Process noise on drifting streams (issue 17; docs/design.md §10): prints a markdown section
for benchmarks/RESULTS.md and draws docs/drift.png.

1. The abrupt-drift regression stream of the test suite (tests/test_regression.py,
   `drift_streams`: 4,000 rows x 5 Gaussian features, y = w·x + N(0, 0.1²), w replaced by an
   independent draw at row 2,000; seeds 0, 1, 2). Progressive squared error (each row predicted
   before it is learned) of AROWRegressor (r = 1, a = 1), diag and full, with process_noise on a
   grid and "auto", against PARegressor (ε = 0.1): the 500 rows before the change (stationary),
   the first 100 rows after it, rows 100–500 after it, and the last 500 rows.
2. A rotating hyperplane (river's `synth.Hyperplane`, 10 features in [0, 1], 2 of them
   drifting, `mag_change`, 5% label noise; 20,000 rows, seeds 0, 1, 2): progressive accuracy of
   AROW (diag and full) with and without process noise, against cwrs PA1 and river's linear
   classifiers (LogisticRegression, PAClassifier, Perceptron, ALMAClassifier, each behind a
   StandardScaler as river's documentation recommends). cwrs learns the raw features with a
   bias, and again behind the same StandardScaler through its river adapter.
3. The same hyperplane with mag_change = 0: a stationary stream, where process noise and false
   alarms can only cost.

    python benchmarks/drift.py [--rows 20000] [--mag-change 0.001] [--plot docs/drift.png]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import numpy as np

import cwrs

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
from test_regression import HALF, drift_streams  # noqa: E402  (the test suite's stream)

GRID = [0.0, 1e-4, 1e-3, 1e-2, 1e-1, "auto"]


def progressive_squared_errors(model, X, y):
    errors = np.empty(len(y))
    for t in range(len(y)):
        errors[t] = (model.predict(X[t : t + 1])[0] - y[t]) ** 2 if t else y[t] ** 2
        model.partial_fit(X[t : t + 1], y[t : t + 1])
    return errors


def regression_section(seeds):
    learners = {"PA (ε=0.1)": lambda: cwrs.PARegressor()}
    for covariance in ("diag", "full"):
        for q in GRID:
            learners[f"AROW {covariance}, process_noise={q!r}"] = (
                lambda c=covariance, q=q: cwrs.AROWRegressor(covariance=c, process_noise=q)
            )
    windows = {
        "before (500 rows)": slice(HALF - 500, HALF),
        "after: 0–100": slice(HALF, HALF + 100),
        "after: 100–500": slice(HALF + 100, HALF + 500),
        "last 500": slice(-500, None),
    }
    table, curves = {}, {}
    for seed in seeds:
        X, y = drift_streams(seed)["abrupt"]
        for name, factory in learners.items():
            errors = progressive_squared_errors(factory(), X, y)
            table.setdefault(name, []).append([errors[w].mean() for w in windows.values()])
            if seed == seeds[0]:
                curves[name] = errors
    lines = [
        "| learner | " + " | ".join(windows) + " | after 0–100 per seed |",
        "|---|" + "--:|" * (len(windows) + 1),
    ]
    for name, rows in table.items():
        means = np.mean(rows, axis=0)
        per_seed = " / ".join(f"{r[1]:.3f}" for r in rows)
        lines.append(f"| {name} | " + " | ".join(f"{m:.4f}" for m in means) + f" | {per_seed} |")
    return lines, curves


def hyperplane_rows(seed, n_rows, mag_change):
    from river.datasets import synth

    stream = synth.Hyperplane(seed=seed, n_features=10, n_drift_features=2,
                              mag_change=mag_change, noise_percentage=0.05, sigma=0.1)
    rows = list(stream.take(n_rows))
    X = np.array([[x[k] for k in sorted(x)] for x, _ in rows])
    y = np.array([int(label) for _, label in rows])
    return rows, X, y


def cwrs_accuracy(model, X, y):
    correct = 0
    model.partial_fit(X[:1], y[:1], classes=[0, 1])
    for t in range(1, len(y)):
        correct += int(model.predict(X[t : t + 1])[0] == y[t])
        model.partial_fit(X[t : t + 1], y[t : t + 1])
    return correct / (len(y) - 1)


def river_accuracy(model, rows):
    correct = 0
    for t, (x, label) in enumerate(rows):
        if t:
            correct += int(model.predict_one(x) == label)
        model.learn_one(x, label)
    return correct / (len(rows) - 1)


def hyperplane_section(seeds, n_rows, mag_change):
    from river import linear_model, preprocessing

    cwrs_learners = {"cwrs PA1 (C=1)": lambda: cwrs.PA1()}
    for covariance in ("diag", "full"):
        for q in [0.0, 1e-4, 1e-3, 1e-2, "auto"]:
            cwrs_learners[f"cwrs AROW {covariance}, process_noise={q!r}"] = (
                lambda c=covariance, q=q: cwrs.AROW(covariance=c, process_noise=q)
            )
    river_learners = {
        "river LogisticRegression": linear_model.LogisticRegression,
        "river PAClassifier (C=1, PA-I)": lambda: linear_model.PAClassifier(C=1.0, mode=1),
        "river Perceptron": linear_model.Perceptron,
        "river ALMAClassifier": linear_model.ALMAClassifier,
    }
    from cwrs.river import RiverClassifier

    for covariance in ("diag", "full"):
        for q in [0.0, 1e-4, 1e-3, "auto"]:
            name = f"cwrs AROW {covariance}, process_noise={q!r}, StandardScaler (cwrs.river)"
            river_learners[name] = lambda c=covariance, q=q: RiverClassifier(
                cwrs.AROW(covariance=c, process_noise=q)
            )
    results = {}
    for seed in seeds:
        rows, X, y = hyperplane_rows(seed, n_rows, mag_change)
        for name, factory in cwrs_learners.items():
            results.setdefault(name, []).append(cwrs_accuracy(factory(), X, y))
        for name, factory in river_learners.items():
            model = preprocessing.StandardScaler() | factory()
            results.setdefault(name, []).append(river_accuracy(model, rows))
    lines = ["| learner | progressive accuracy (mean) | per seed |", "|---|--:|---|"]
    for name, accuracies in results.items():
        per_seed = " / ".join(f"{a:.2%}" for a in accuracies)
        lines.append(f"| {name} | {np.mean(accuracies):.2%} | {per_seed} |")
    return lines


def plot(curves, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    window = 25
    fig, ax = plt.subplots(figsize=(8, 4))
    for name in ["PA (ε=0.1)", "AROW full, process_noise=0.0", "AROW full, process_noise=0.01",
                 "AROW full, process_noise='auto'"]:
        # Trailing average: the value at row t averages rows t − window + 1 … t.
        moving = np.convolve(curves[name], np.ones(window) / window, mode="valid")
        rows = np.arange(HALF - 300, HALF + 700)
        ax.plot(rows, moving[rows - window + 1], label=name)
    ax.set_yscale("log")
    ax.axvline(HALF, color="grey", lw=0.5)
    ax.set_xlabel("row")
    ax.set_ylabel(f"squared error ({window}-row moving average)")
    ax.set_title("Abrupt change at row 2,000 (test suite stream, seed 0)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--mag-change", type=float, default=0.001)
    parser.add_argument("--plot", default=os.path.join("docs", "drift.png"))
    args = parser.parse_args()
    seeds = [0, 1, 2]
    start = time.time()
    regression, curves = regression_section(seeds)
    hyperplane = hyperplane_section(seeds, args.rows, args.mag_change)
    stationary = hyperplane_section(seeds, args.rows, 0.0)
    if args.plot:
        plot(curves, args.plot)
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"## Drifting streams: process noise ({stamp})\n")
    print(f"{platform.processor() or platform.machine()} · Python {platform.python_version()} · "
          f"cwrs {cwrs.__version__} · one run ({time.time() - start:.0f} s) · "
          "`python benchmarks/drift.py`\n")
    print("### 1. Abrupt change, regression (the test suite's stream, seeds 0–2)\n")
    print("Mean progressive squared error (noise floor 0.01), averaged over the seeds.\n")
    print("\n".join(regression))
    print(f"\n### 2. Rotating hyperplane, classification ({args.rows:,} rows, mag_change="
          f"{args.mag_change}, seeds 0–2)\n")
    print("\n".join(hyperplane))
    print(f"\n### 3. Stationary hyperplane, classification ({args.rows:,} rows, mag_change=0, "
          "seeds 0–2)\n")
    print("\n".join(stationary))


if __name__ == "__main__":
    main()
