"""covariance="lowrank" against "diag", "full" and Vowpal Wabbit's sketched Online Newton Step
(issue 17; results in benchmarks/RESULTS.md, "Low-rank covariance").

The stream (correlated informative features): f = 10 latent factors z ~ N(0, I); each row is
x = L(s∘z)/√f + 0.1·ε with L a fixed d×f matrix of N(0, 1) entries, factor scales s from 3.16
down to 0.0316 (log-spaced) and ε ~ N(0, I_d), so every feature is informative and the features
are strongly correlated (the covariance of x is a rank-f matrix plus 0.01·I, ill-conditioned
within the factors); the label is sign(u·z) for a fixed u ~ N(0, I_f) (the weak factors count
as much as the strong ones), flipped with probability 0.05. The rows are made chunk by chunk from one seed, and every learner sees the
same rows in the same order (one pass, AROW with r = 1, a = 1); test error is measured on 2,000
further rows (400 at d = 100,000). Rows per second count the learning calls only (chunks of
1,000 rows, fewer at d = 100,000 to bound memory).

    python benchmarks/lowrank.py                    # d = 1,000, 10,000 and 100,000
    python benchmarks/lowrank.py --dims 100000      # one of them
    python benchmarks/lowrank.py --dims 1000 --rows 3000   # fewer rows than features
    python benchmarks/lowrank.py --quick            # small, for a smoke test
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np

import cwrs

try:
    import vowpalwabbit
except ImportError:  # pragma: no cover - the bench extra
    vowpalwabbit = None

FACTORS, NOISE, FLIP = 10, 0.1, 0.05
SCALES = np.logspace(0.5, -1.5, FACTORS)
VALUES_PER_CHUNK = 20_000_000  # rows × d generated at once (160 MB)


class Stream:
    """The rows of one run: `chunks(n)` yields (X, y) chunks; `test` is a held-out set."""

    def __init__(self, d, seed=0):
        rng = np.random.default_rng(seed)
        self.d, self.loadings = d, rng.normal(size=(FACTORS, d)) / np.sqrt(FACTORS)
        self.direction, self.seed = rng.normal(size=FACTORS), seed
        self.chunk = max(1, min(1000, VALUES_PER_CHUNK // d))
        self.test = self._rows(min(2000, 2 * self.chunk), np.random.default_rng(seed + 1))

    def _rows(self, n, rng):
        z = rng.normal(size=(n, FACTORS))
        X = (z * SCALES) @ self.loadings + NOISE * rng.normal(size=(n, self.d))
        y = np.where(z @ self.direction > 0, 1, -1)
        return X, np.where(rng.random(n) < FLIP, -y, y)

    def chunks(self, n):
        rng = np.random.default_rng(self.seed + 2)
        for start in range(0, n, self.chunk):
            yield self._rows(min(self.chunk, n - start), rng)


def run_cwrs(stream, n, **params):
    model, seconds = cwrs.AROW(shuffle=False, **params), 0.0
    for X, y in stream.chunks(n):
        start = time.perf_counter()
        model.partial_fit(X, y, classes=[-1, 1])
        seconds += time.perf_counter() - start
    X, y = stream.test
    return np.mean(model.predict(X) != y), n / seconds


def _vw_lines(X, y):
    return [
        f"{label} | " + " ".join(f"{j}:{v:.5g}" for j, v in enumerate(row)) for row, label in zip(X, y)
    ]


def run_vw(stream, n, sketch):
    """VW --OjaNewton --sketch_size m, logistic loss, learning from a text file of the same
    rows (the time includes VW's parsing, as `vw --data` does it)."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "train.vw")
        with open(path, "w") as out:
            for X, y in stream.chunks(n):
                out.write("\n".join(_vw_lines(X, y)) + "\n")
        args = ["--OjaNewton", "--sketch_size", str(sketch), "--loss_function", "logistic",
                "--binary", "-b", "18", "--quiet", "--data", path]
        start = time.perf_counter()
        workspace = vowpalwabbit.Workspace(arg_list=args)
        seconds = time.perf_counter() - start
    X, y = stream.test
    predictions = np.array([workspace.predict(line) for line in _vw_lines(X, 0 * y)])
    workspace.finish()
    return np.mean(np.sign(predictions) != y), n / seconds


def table(d, n, ranks, full, vw):
    stream = Stream(d)
    rows = [("diag", *run_cwrs(stream, n, covariance="diag"))]
    for k in ranks:
        rows.append((f"lowrank k={k}", *run_cwrs(stream, n, covariance="lowrank", rank=k)))
    if full:
        rows.append(("full", *run_cwrs(stream, n, covariance="full")))
    if vw and vowpalwabbit is not None:
        for m in (10, 20):
            rows.append((f"VW OjaNewton m={m}", *run_vw(stream, n, m)))
    print(f"\nd = {d:,}, {n:,} training rows (one pass), {len(stream.test[1]):,} test rows")
    print("| learner | test error | rows/s | time per row vs diag |")
    print("|---|---|---|---|")
    diag_speed = rows[0][2]
    for name, error, speed in rows:
        print(f"| {name} | {error:.4f} | {speed:,.0f} | {diag_speed / speed:.1f}× |")
    errors = dict((name, error) for name, error, _ in rows)
    if "full" in errors and "lowrank k=20" in errors:
        gap = errors["diag"] - errors["full"]
        if gap > 0:
            closed = (errors["diag"] - errors["lowrank k=20"]) / gap
            print(f"k = 20 closes {100 * closed:.0f}% of the diag→full error gap")
        else:
            print("full is no better than diag here: there is no diag→full gap to close")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--dims", type=int, nargs="*", default=[1000, 10000, 100000])
    parser.add_argument("--rows", type=int, help="training rows (default: per dimension)")
    args = parser.parse_args()
    print("cwrs", cwrs.__version__, "vowpalwabbit",
          vowpalwabbit.__version__ if vowpalwabbit else "not installed")
    if args.quick:
        table(200, 3000, [5, 20], full=True, vw=True)
        return
    runs = {
        1000: (20000, [5, 10, 20, 50], True, True),
        10000: (4000, [5, 10, 20, 50], False, True),
        100000: (2000, [20], False, False),
    }
    for d in args.dims:
        n, *rest = runs[d]
        table(d, args.rows or n, *rest)


if __name__ == "__main__":
    main()
