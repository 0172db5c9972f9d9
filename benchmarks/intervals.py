"""Prediction intervals of AROWRegressor: the coverage of mean ± 1.96·std from
`predict(X, return_std=True)` at the defaults (r = 1, a = 1), with the noise variance learned
(`r="auto"`) and with the prior variance learned too (`r="auto", a="auto"`), against
scikit-learn's BayesianRidge and ARDRegression in the same run, with the fit times (median over
the seeds).

    python benchmarks/intervals.py [--seeds 5]

Data: scikit-learn's diabetes (442 rows, 10 features, targets 25–346) and two synthetic linear
streams (3,000 rows, 20 Gaussian features, weights N(0, 25), Gaussian noise of σ = 0.1 and 3).
Each seed: a 70/30 split, features standardized with the training rows' statistics, one
`partial_fit` pass of the training rows, then the held-out rows. Reported: the share of held-out
targets inside the 95% interval, the RMSE and the mean interval width, averaged over the seeds.

`r="auto"`: under a normal-inverse-gamma prior the noise variance σ² scales the whole
posterior, Σ = σ²·P, and the estimator learns σ̂² as r times the mean of e_t²/(v_t + r) over the
rows, with e_t = y_t − μ_t·x_t and v_t = x_tᵀΣ_t x_t before row t is learned (docs/design.md
§3.14); the interval is ±1.96·√(σ̂²·(xᵀΣx + 1)). The script checks the estimator's σ̂² against
the same mean computed here from the progressive scores of `partial_fit(...,
return_scores=True)` (with the estimator's prior of one row at σ² = r) and prints the largest
relative difference (at a = 1: with `a="auto"` σ̂² is that mean had the rows been learned under
the learned prior).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.linear_model import ARDRegression, BayesianRidge
from sklearn.model_selection import train_test_split

import cwrs
from _peers import cpu_model

R = 1.0  # AROWRegressor's default noise variance


def data_sets():
    X, y = load_diabetes(return_X_y=True)
    yield "diabetes", X, y
    rng = np.random.default_rng(0)
    for noise in (0.1, 3.0):
        X = rng.normal(size=(3000, 20))
        w = 5.0 * rng.normal(size=20)
        yield f"synthetic, σ = {noise}", X, X @ w + noise * rng.normal(size=3000)


def interval_row(mean, std, y):
    return (
        float(np.mean(np.abs(y - mean) <= 1.96 * std)),
        float(np.sqrt(np.mean((mean - y) ** 2))),
        float(np.mean(2 * 1.96 * std)),
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    print(f"{cpu_model()} · cwrs {cwrs.__version__} · numpy {np.__version__} · "
          f"{args.seeds} seeds\n")
    worst = 0.0
    for name, X, y in data_sets():
        results: dict[str, list[tuple[float, float, float]]] = {}
        times: dict[str, list[float]] = {}
        for seed in range(args.seeds):
            X_train, X_test, y_train, y_test = train_test_split(
                X, y, test_size=0.3, random_state=seed
            )
            center, scale = X_train.mean(axis=0), X_train.std(axis=0)
            X_train, X_test = (X_train - center) / scale, (X_test - center) / scale
            for covariance in ("diag", "full"):
                for r, a in ((R, 1.0), ("auto", 1.0), ("auto", "auto")):
                    label = f"cwrs AROWRegressor {covariance}" + (", r=\"auto\"" if r == "auto" else "")
                    label += ", a=\"auto\"" if a == "auto" else ""
                    start = time.perf_counter()
                    model, scores, variances = cwrs.AROWRegressor(
                        covariance=covariance, r=r, a=a
                    ).partial_fit(X_train, y_train, return_scores=True)
                    times.setdefault(label, []).append(time.perf_counter() - start)
                    mean, std = model.predict(X_test, return_std=True)
                    results.setdefault(label, []).append(interval_row(mean, std, y_test))
                    if a == "auto":
                        continue  # σ̂² then follows the learned prior (docs/design.md §3.14)
                    ratios = (y_train - scores) ** 2 / (variances + R)
                    expected = R * (1.0 + ratios.sum()) / (1.0 + len(ratios))
                    worst = max(worst, abs(model.noise_variance_ / expected - 1.0))
            for label, peer in (("scikit-learn BayesianRidge", BayesianRidge()),
                                ("scikit-learn ARDRegression", ARDRegression())):
                start = time.perf_counter()
                peer.fit(X_train, y_train)
                times.setdefault(label, []).append(time.perf_counter() - start)
                mean, std = peer.predict(X_test, return_std=True)
                results.setdefault(label, []).append(interval_row(mean, std, y_test))
        print(f"### {name}\n")
        print("| model | coverage of the 95% intervals | RMSE | mean width | fit time (ms) |")
        print("|---|--:|--:|--:|--:|")
        for label, rows in results.items():
            coverage, rmse, width = np.mean(rows, axis=0)
            fit_ms = 1e3 * float(np.median(times[label]))
            print(f"| {label} | {coverage:.3f} | {rmse:.3f} | {width:.3f} | {fit_ms:.2f} |")
        print()
    print(f"Check: the estimator's σ̂² and the mean of the progressive e²/(v + r) differ by at "
          f"most {worst:.1e} (relative).")


if __name__ == "__main__":
    main()
