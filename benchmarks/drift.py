"""Process noise on drifting streams (docs/design.md §10): prints a markdown section
for benchmarks/RESULTS.md and draws docs/drift.png.

1. The abrupt-drift regression stream of the test suite (tests/test_regression.py,
   `drift_streams`: 4,000 rows x 5 Gaussian features, y = w·x + N(0, 0.1²), w replaced by an
   independent draw at row 2,000; seeds 0–9). Progressive squared error (each row predicted
   before it is learned) of AROWRegressor (r = 1, a = 1), diag and full, with process_noise on a
   grid and "auto", against PARegressor (ε = 0.1) and river's linear regressors behind a
   StandardScaler: the 500 rows before the change (stationary), the first 100 rows after it,
   rows 100–500 after it, and the last 500 rows.
2. The same suite's rotating stream (2,000 stationary rows, then w turns by π over 2,000 rows:
   gradual drift; seeds 0–2): the error before, over the first 500 rows of the rotation and
   over all of it.
3. An abrupt flip of a hyperplane, classification (10 Gaussian features, y = sign(w·x) with 5%
   of the labels flipped, w → −w at row 5,000 of 10,000; seeds 0–2): progressive accuracy
   before, over the 100 and 1,000 rows after the flip, of AROW (q grid, "auto"), PA1 and river's
   linear classifiers.
4. A rotating hyperplane (river's `synth.Hyperplane`, 10 features in [0, 1], 2 of them
   drifting, `mag_change`, 5% label noise; seeds 0, 1, 2): progressive accuracy of AROW (diag
   and full) with and without process noise, against cwrs PA1 and river's linear classifiers
   (LogisticRegression, PAClassifier, Perceptron, ALMAClassifier, each behind a StandardScaler
   as river's documentation recommends). cwrs learns the raw features with a bias, and again
   behind the same StandardScaler through its river adapter.
5. The same hyperplane with mag_change = 0, and a1a followed by a1a.t (the first 10,000 rows;
   ../shared/datasets): stationary streams, where process noise and false alarms can only
   cost.

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


def river_progressive(model, X, y, loss, label=float):
    """loss(prediction, target) of each row predicted before river's `model` learns it."""
    losses = np.empty(len(y))
    for t in range(len(y)):
        x = dict(enumerate(X[t]))
        losses[t] = loss(model.predict_one(x), y[t])
        model.learn_one(x, label(y[t]))
    return losses


def river_squared_errors(model, X, y):
    return river_progressive(model, X, y, lambda prediction, target: (prediction - target) ** 2)


def regression_section(seeds, kind):
    from river import linear_model, preprocessing

    learners = {"PA (ε=0.1)": (progressive_squared_errors, lambda: cwrs.PARegressor())}
    for covariance in ("diag", "full"):
        for q in GRID:
            learners[f"AROW {covariance}, process_noise={q!r}"] = (
                progressive_squared_errors,
                lambda c=covariance, q=q: cwrs.AROWRegressor(covariance=c, process_noise=q),
            )
    for name, factory in [("LinearRegression", linear_model.LinearRegression),
                          ("PARegressor (C=1, PA-I)", lambda: linear_model.PARegressor(mode=1))]:
        learners[f"river {name}, StandardScaler"] = (
            river_squared_errors, lambda f=factory: preprocessing.StandardScaler() | f()
        )
    if kind == "abrupt":
        windows = {
            "before (500 rows)": slice(HALF - 500, HALF),
            "after: 0–100": slice(HALF, HALF + 100),
            "after: 100–500": slice(HALF + 100, HALF + 500),
            "last 500": slice(-500, None),
        }
    else:
        windows = {
            "before (500 rows)": slice(HALF - 500, HALF),
            "rotation: first 500": slice(HALF, HALF + 500),
            "rotation: all 2,000": slice(HALF, None),
        }
    per_seed_window = list(windows)[1]
    table, curves = {}, {}
    for seed in seeds:
        X, y = drift_streams(seed)[kind]
        for name, (run, factory) in learners.items():
            errors = run(factory(), X, y)
            table.setdefault(name, []).append([errors[w].mean() for w in windows.values()])
            if seed == seeds[0]:
                curves[name] = errors
    pa = np.array(table["PA (ε=0.1)"])[:, 1]
    lines = [
        "| learner | " + " | ".join(windows) + f" | {per_seed_window}, / PA per seed |",
        "|---|" + "--:|" * (len(windows) + 1),
    ]
    for name, rows in table.items():
        means = np.mean(rows, axis=0)
        per_seed = " / ".join(f"{r[1] / p:.2f}" for r, p in zip(rows, pa))
        lines.append(f"| {name} | " + " | ".join(f"{m:.4f}" for m in means) + f" | {per_seed} |")
    return lines, curves


def flip_rows(seed, n_rows=10_000, n_features=10, flip_at=5_000, label_noise=0.05):
    """y = sign(w·x), 5% of the labels flipped, w → −w at row `flip_at`."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features))
    w = rng.normal(size=n_features)
    sign = np.where(np.arange(n_rows) < flip_at, 1.0, -1.0)
    y = (sign * (X @ w) > 0).astype(int)
    noisy = rng.random(n_rows) < label_noise
    y[noisy] = 1 - y[noisy]
    return X, y


def cwrs_hits(model, X, y):
    hits = np.zeros(len(y))
    model.partial_fit(X[:1], y[:1], classes=[0, 1])
    for t in range(1, len(y)):
        hits[t] = model.predict(X[t : t + 1])[0] == y[t]
        model.partial_fit(X[t : t + 1], y[t : t + 1])
    return hits


def river_hits(model, X, y):
    return river_progressive(model, X, y, lambda prediction, target: prediction == target, bool)


def classification_learners():
    from river import linear_model, preprocessing

    learners = {"cwrs PA1 (C=1)": (cwrs_hits, lambda: cwrs.PA1())}
    for covariance in ("diag", "full"):
        for q in [0.0, 1e-4, 1e-3, 1e-2, "auto"]:
            learners[f"cwrs AROW {covariance}, process_noise={q!r}"] = (
                cwrs_hits, lambda c=covariance, q=q: cwrs.AROW(covariance=c, process_noise=q)
            )
    for name, factory in [("LogisticRegression", linear_model.LogisticRegression),
                          ("PAClassifier (C=1, PA-I)",
                           lambda: linear_model.PAClassifier(C=1.0, mode=1)),
                          ("Perceptron", linear_model.Perceptron)]:
        learners[f"river {name}, StandardScaler"] = (
            river_hits, lambda f=factory: preprocessing.StandardScaler() | f()
        )
    return learners


def flip_section(seeds, flip_at=5_000):
    windows = {
        "before (1,000 rows)": slice(flip_at - 1000, flip_at),
        "after: 0–100": slice(flip_at, flip_at + 100),
        "after: 0–1,000": slice(flip_at, flip_at + 1000),
        "after: 1,000–5,000": slice(flip_at + 1000, None),
    }
    table = {}
    for seed in seeds:
        X, y = flip_rows(seed, flip_at=flip_at)
        for name, (run, factory) in classification_learners().items():
            hits = run(factory(), X, y)
            table.setdefault(name, []).append([hits[w].mean() for w in windows.values()])
    lines = ["| learner | " + " | ".join(windows) + " |", "|---|" + "--:|" * len(windows)]
    for name, rows in table.items():
        lines.append(f"| {name} | " + " | ".join(f"{m:.2%}" for m in np.mean(rows, axis=0))
                     + " |")
    return lines


def a1a_section(n_rows=10_000):
    from cwrs._svmlight import load_svmlight

    shared = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "datasets")
    if not os.path.exists(os.path.join(shared, "a1a.libsvm")):
        return [f"(skipped: a1a not found in {shared})"]
    parts = [load_svmlight(os.path.join(shared, f), n_features=123)
             for f in ("a1a.libsvm", "a1a.t.libsvm")]
    X = np.vstack([np.asarray(part[0].todense()) for part in parts])[:n_rows]
    y = (np.concatenate([part[1] for part in parts])[:n_rows] > 0).astype(int)
    lines = ["| learner | progressive accuracy |", "|---|--:|"]
    for name, (run, factory) in classification_learners().items():
        lines.append(f"| {name} | {run(factory(), X, y)[1:].mean():.2%} |")
    return lines


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
    regression, curves = regression_section(list(range(10)), "abrupt")
    rotating, _ = regression_section(seeds, "rotating")
    flip = flip_section(seeds)
    hyperplane = hyperplane_section(seeds, args.rows, args.mag_change)
    stationary = hyperplane_section(seeds, args.rows, 0.0)
    a1a = a1a_section()
    if args.plot:
        plot(curves, args.plot)
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"## Drifting streams: process noise ({stamp})\n")
    print(f"{platform.processor() or platform.machine()} · Python {platform.python_version()} · "
          f"cwrs {cwrs.__version__} · one run ({time.time() - start:.0f} s) · "
          f"`python benchmarks/drift.py --rows {args.rows}`\n")
    print("### 1. Abrupt change, regression (the test suite's stream, seeds 0–9)\n")
    print("Mean progressive squared error (noise floor 0.01), averaged over the seeds; the last "
          "column divides each seed's error over the 100 rows after the change by PA's.\n")
    print("\n".join(regression))
    print("\n### 2. Gradual rotation, regression (the test suite's stream, seeds 0–2)\n")
    print("\n".join(rotating))
    print("\n### 3. Abrupt flip of a hyperplane, classification (10,000 rows, w → −w at row "
          "5,000, seeds 0–2)\n")
    print("Mean progressive accuracy over the seeds.\n")
    print("\n".join(flip))
    print(f"\n### 4. Rotating hyperplane, classification ({args.rows:,} rows, mag_change="
          f"{args.mag_change}, seeds 0–2)\n")
    print("\n".join(hyperplane))
    print(f"\n### 5. Stationary hyperplane, classification ({args.rows:,} rows, mag_change=0, "
          "seeds 0–2)\n")
    print("\n".join(stationary))
    print("\n### 6. a1a then a1a.t, classification (the first 10,000 rows, stationary)\n")
    print("\n".join(a1a))


if __name__ == "__main__":
    main()
