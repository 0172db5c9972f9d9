"""The `cwrs` command: a progressive-validation comparison of the learners.

    cwrs                       # every learner on the bundled svmguide3 data, stored order
    cwrs --shuffle 10          # mean ± std over 10 seeded permutations
    cwrs --data my.npz --covariance full --json

Each learner sees the rows once, predicting each before learning it; the online mistake rate is
the fraction of rounds it got wrong (its `n_mistakes_`). Results go to stdout, diagnostics to
stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from ._classifiers import CLASSIFIERS

BUNDLED = {"svmguide3": Path(__file__).parent / "data" / "svmguide3.npz"}


def load_npz(path: Path):
    with np.load(path) as data:
        return data["X"], data["y"]


def learners(names, covariances):
    """(label, class, params) for each requested learner and covariance form."""
    chosen = [c for c in CLASSIFIERS if names is None or c.__name__ in names]
    unknown = set(names or ()) - {c.__name__ for c in CLASSIFIERS}
    if unknown:
        raise ValueError(f"unknown learner(s) {sorted(unknown)}")
    for cls in chosen:
        if cls._second_order:
            for form in covariances:
                yield f"{cls.__name__} ({form})", cls, {"covariance": form}
        else:
            yield cls.__name__, cls, {}


def compare(X, y, names=None, covariances=("diag", "full"), n_shuffles=0, seed=0, bias=True):
    """Progressive validation of each learner; one row of results per learner."""
    classes = np.unique(y)
    orders = (
        [np.random.RandomState(seed + k).permutation(len(y)) for k in range(n_shuffles)]
        if n_shuffles
        else [np.arange(len(y))]
    )
    rows = []
    for label, cls, params in learners(names, covariances):
        rates, updates, seconds = [], [], []
        for order in orders:
            model = cls(fit_intercept=bias, **params)
            start = time.perf_counter()
            model.partial_fit(X[order], y[order], classes=classes)
            seconds.append(time.perf_counter() - start)
            rates.append(model.n_mistakes_ / len(y))
            updates.append(model.n_updates_)
        rows.append(
            {
                "learner": label,
                "mistake_rate": float(np.mean(rates)),
                "mistake_rate_std": float(np.std(rates)),
                "updates": float(np.mean(updates)),
                "seconds": float(np.mean(seconds)),
            }
        )
    return rows


def format_table(rows, n_rows, n_runs):
    lines = [
        f"{'learner':<20} {'mistake rate':>18} {'updates':>9} {'seconds':>9}",
        "-" * 59,
    ]
    for r in sorted(rows, key=lambda r: r["mistake_rate"]):
        rate = f"{r['mistake_rate']:.4f} ± {r['mistake_rate_std']:.4f}"
        lines.append(f"{r['learner']:<20} {rate:>18} {r['updates']:>9.1f} {r['seconds']:>9.4f}")
    lines.append(f"({n_rows} rows, {n_runs} run(s), one online pass each)")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="cwrs", description="Progressive-validation comparison of online learners."
    )
    parser.add_argument(
        "--data",
        default="svmguide3",
        help="a bundled data set (svmguide3) or an .npz file with arrays X and y",
    )
    parser.add_argument("--shuffle", type=int, default=0, metavar="N",
                        help="average over N seeded permutations (default: stored order)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first permutation")
    parser.add_argument("--covariance", choices=["diag", "full", "both"], default="both")
    parser.add_argument("--learners", help="comma-separated learner names (default: all)")
    parser.add_argument("--no-bias", action="store_true", help="fit_intercept=False")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    try:
        path = BUNDLED.get(args.data, Path(args.data))
        X, y = load_npz(path)
        covariances = ("diag", "full") if args.covariance == "both" else (args.covariance,)
        names = args.learners.split(",") if args.learners else None
        if args.shuffle < 0:
            raise ValueError("--shuffle must be >= 0")
        print(f"cwrs: {path.name}: {X.shape[0]} rows, {X.shape[1]} features", file=sys.stderr)
        rows = compare(X, y, names, covariances, args.shuffle, args.seed, not args.no_bias)
    except (OSError, KeyError, ValueError) as error:
        print(f"cwrs: error: {error}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(format_table(rows, X.shape[0], max(args.shuffle, 1)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
