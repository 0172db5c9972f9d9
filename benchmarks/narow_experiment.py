"""The synthetic experiment of the NAROW paper (Orabona & Crammer, "New adaptive algorithms for
online classification", NIPS 2010, §6 and Fig. 3), with cwrs's learners.

Data (the paper's, after Crammer, Dredze & Pereira's exact CW experiment): 5,000 points in R²⁰;
the first two coordinates from a Gaussian rotated by 45° with standard deviations 10 (long axis)
and 1 (short axis), the other 18 from independent N(0, 8.5) (read as variance 8.5, the usual
N(μ, σ²) notation; `--noise-variance`); the label is the side of the separator through the
origin along the long axis (so the set is linearly separable). Four orderings: easy → hard (by
the signed distance y·w*·x to the separator, largest first), hard → easy, by x₁·y and by x₃·y
(ascending), each computed from the clean labels, so that a set is presented in the same order
with and without noise. With `noise`, 10% of the training labels are flipped and mistakes are
still counted against the clean labels. No bias (the separator
passes through the origin), full covariance for the second-order rules of the paper (AROW,
NAROW) and AdaGrad's diagonal.

Each learner's one hyper-parameter (AdaGrad's two) is chosen on a single random set in random
order, as the paper does, separately for clean and noisy labels: the grid value with the fewest
mistakes. Curves are the cumulative mistakes averaged over `--repetitions` fresh sets.

    python benchmarks/narow_experiment.py --repetitions 100 --plot docs/narow_experiment.png

prints the totals as a Markdown table (for benchmarks/RESULTS.md) and writes the 2×4 grid of
cumulative-mistake plots (top: clean labels, bottom: 10% label noise).
"""

from __future__ import annotations

import argparse
import itertools
import time
from typing import Any, Callable, NamedTuple

import numpy as np

import cwrs

N_POINTS, N_DIMS = 5000, 20
ORDERINGS = ("easy → hard", "hard → easy", "by x₁·y", "by x₃·y")
NOISE_RATE = 0.1


class Learner(NamedTuple):
    """A learner of the comparison: `make(**params)` builds it; `grid` lists the values tried
    on the tuning set."""

    name: str
    make: Callable[..., Any]
    grid: list[dict[str, float]]


def _powers(low: int, high: int) -> list[float]:
    return [float(2.0**k) for k in range(low, high + 1)]


LEARNERS = [
    Learner("PA-I", lambda C: cwrs.PA1(C=C, fit_intercept=False), [{"C": c} for c in _powers(-12, 2)]),
    Learner(
        "AROW",
        lambda r: cwrs.AROW(r=r, covariance="full", fit_intercept=False),
        [{"r": r} for r in _powers(-4, 8)],
    ),
    Learner(
        "NAROW",
        lambda b: cwrs.NAROW(b=b, covariance="full", fit_intercept=False),
        [{"b": b} for b in _powers(-12, 2)],
    ),
    # AdaGrad (Duchi, Hazan & Singer 2011), the paper's fourth learner.
    Learner(
        "AdaGrad",
        lambda eta, delta: cwrs.AdaGrad(eta=eta, delta=delta, fit_intercept=False),
        [{"eta": e, "delta": d} for e, d in itertools.product(_powers(-6, 2), _powers(-4, 2))],
    ),
]


def make_data(rng: np.random.Generator, noise_variance: float = 8.5):
    """(X, clean labels) of one random set."""
    long_axis = rng.normal(0.0, 10.0, N_POINTS)
    short_axis = rng.normal(0.0, 1.0, N_POINTS)
    X = np.empty((N_POINTS, N_DIMS))
    # The 45° rotation of (long, short): the long axis along (1, 1)/√2.
    X[:, 0] = (long_axis - short_axis) / np.sqrt(2.0)
    X[:, 1] = (long_axis + short_axis) / np.sqrt(2.0)
    X[:, 2:] = rng.normal(0.0, np.sqrt(noise_variance), (N_POINTS, N_DIMS - 2))
    y = np.where(short_axis > 0, 1.0, -1.0)  # the separator is the long axis
    return X, y


def noisy_labels(rng: np.random.Generator, y: np.ndarray, noise: bool) -> np.ndarray:
    if not noise:
        return y
    flip = rng.random(y.shape[0]) < NOISE_RATE
    return np.where(flip, -y, y)


def ordering(name: str, X: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The presentation order `name` (or a random one for "random"), from the clean labels."""
    # The signed distance to the separator w* = (−1, 1, 0, …)/√2.
    signed = y * (X[:, 1] - X[:, 0]) / np.sqrt(2.0)
    keys = {
        "easy → hard": -signed,
        "hard → easy": signed,
        "by x₁·y": X[:, 0] * y,
        "by x₃·y": X[:, 2] * y,
    }
    if name == "random":
        return rng.permutation(X.shape[0])
    return np.argsort(keys[name], kind="stable")


def cumulative_mistakes(estimator, X, y_train, y_clean) -> np.ndarray:
    """Learns the rows in order, one at a time; the cumulative count of rows whose prediction
    before learning disagrees with the clean label (a score of 0 is a mistake, as in cwrs)."""
    n = X.shape[0]
    mistakes = np.zeros(n)
    flipped = y_train != y_clean
    seen = 0
    for i in range(n):
        row = X[i : i + 1]
        if i == 0:
            estimator.partial_fit(row, y_train[:1], classes=[-1.0, 1.0])
            mistakes[0] = 1.0  # the prior mean μ = 0 scores 0
            seen = estimator.n_mistakes_
            continue
        if flipped[i]:
            # The learner counts mistakes against the label it is given: read the score.
            score = float(estimator.decision_function(row)[0])
            mistakes[i] = float(y_clean[i] * score <= 0)
            estimator.partial_fit(row, y_train[i : i + 1])
            seen = estimator.n_mistakes_
        else:
            estimator.partial_fit(row, y_train[i : i + 1])
            now = estimator.n_mistakes_
            mistakes[i], seen = float(now > seen), now
    return np.cumsum(mistakes)


def tune(learner: Learner, noise: bool, seed: int, noise_variance: float) -> dict[str, float]:
    """The grid value with the fewest mistakes on one random set in random order."""
    rng = np.random.default_rng(seed)
    X, y = make_data(rng, noise_variance)
    y_train = noisy_labels(rng, y, noise)
    order = ordering("random", X, y, rng)
    totals = [
        cumulative_mistakes(learner.make(**params), X[order], y_train[order], y[order])[-1]
        for params in learner.grid
    ]
    return learner.grid[int(np.argmin(totals))]


def run(
    repetitions: int,
    seed: int = 0,
    noise_variance: float = 8.5,
    learners: list[Learner] = LEARNERS,
    noises: tuple[bool, ...] = (False, True),
    log: Callable[[str], None] = lambda _: None,
):
    """Cumulative mistakes averaged over `repetitions` sets: {noise: array (orderings, learners,
    rows)}, and the chosen parameters {(noise, learner name): params}."""
    chosen = {}
    for noise, learner in itertools.product(noises, learners):
        chosen[noise, learner.name] = tune(learner, noise, seed + 10_000, noise_variance)
        log(f"tuned {learner.name} ({'noisy' if noise else 'clean'}): {chosen[noise, learner.name]}")
    curves = {}
    for noise in noises:
        total = np.zeros((len(ORDERINGS), len(learners), N_POINTS))
        for rep in range(repetitions):
            rng = np.random.default_rng([seed, rep, int(noise)])
            X, y = make_data(rng, noise_variance)
            y_train = noisy_labels(rng, y, noise)
            for o, name in enumerate(ORDERINGS):
                order = ordering(name, X, y, rng)
                for k, learner in enumerate(learners):
                    estimator = learner.make(**chosen[noise, learner.name])
                    total[o, k] += cumulative_mistakes(estimator, X[order], y_train[order], y[order])
        curves[noise] = total / repetitions
        log(f"{'noisy' if noise else 'clean'} labels: {repetitions} repetitions done")
    return curves, chosen


def table(curves, chosen, learners: list[Learner] = LEARNERS) -> str:
    """The total mistakes (mean over repetitions) as a Markdown table."""
    lines = [
        "| labels | learner (parameters) | " + " | ".join(ORDERINGS) + " |",
        "|---|---|" + "--:|" * len(ORDERINGS),
    ]
    for noise, total in curves.items():
        for k, learner in enumerate(learners):
            params = ", ".join(f"{p}={v:g}" for p, v in chosen[noise, learner.name].items())
            cells = " | ".join(f"{total[o, k, -1]:.1f}" for o in range(len(ORDERINGS)))
            label = "10% noise" if noise else "clean"
            lines.append(f"| {label} | {learner.name} ({params}) | {cells} |")
    return "\n".join(lines)


def plot(curves, path: str, learners: list[Learner] = LEARNERS) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = list(curves)
    fig, axes = plt.subplots(len(rows), len(ORDERINGS), figsize=(16, 4 * len(rows)), squeeze=False)
    x = np.arange(1, N_POINTS + 1)
    for r, noise in enumerate(rows):
        for o, name in enumerate(ORDERINGS):
            ax = axes[r, o]
            for k, learner in enumerate(learners):
                ax.plot(x, curves[noise][o, k], label=learner.name)
            ax.set_title(f"{name}, {'10% label noise' if noise else 'clean labels'}")
            ax.set_xlabel("Examples")
            ax.set_ylabel("Cumulative number of mistakes")
            ax.grid(alpha=0.3)
    axes[0, 0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=80)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repetitions", type=int, default=5, help="sets per setting (paper: 100)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--noise-variance", type=float, default=8.5)
    parser.add_argument("--plot", default=None, help="where to write the 2×4 PNG grid")
    args = parser.parse_args()
    started = time.perf_counter()
    curves, chosen = run(args.repetitions, args.seed, args.noise_variance, log=print)
    print(f"\n{args.repetitions} repetitions, {time.perf_counter() - started:.0f} s\n")
    print(table(curves, chosen))
    if args.plot:
        plot(curves, args.plot)
        print(f"\nplot written to {args.plot}")


if __name__ == "__main__":
    main()
