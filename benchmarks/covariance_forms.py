"""Memory and time per row of every covariance form, one run; results in benchmarks/RESULTS.md,
"Covariance forms: memory and time per row".

The forms, each a binary learner with its defaults otherwise:

- identity: `PA1()`, a first-order rule (the mean alone, no covariance);
- diagonal: `AROW(covariance="diag")`;
- full: `AROW(covariance="full")`;
- low-rank: `AROW(covariance="lowrank", rank=10)` and `rank=50`;
- kernel: `AROW(kernel="rbf", budget=500)` (the dual form, γ = 1/d);
- random Fourier features: `AROW(kernel_approximation="rff", n_components=500)` (the primal
  diagonal form over 500 random features of the same RBF kernel).

The data (seeded): dense Gaussian rows at d = 100 and d = 1,000 (labels from a random
hyperplane, 5% flipped), and sparse text-like rows, benchmarks/compare.py's stream at 2^18
features (Zipf word ids, tf-idf, unit L2 rows, about 97 non-zeros per row). On the sparse rows
only the forms whose cost follows the non-zeros or a fixed budget run: identity, diagonal,
low-rank at rank 10 (its O(rank·d) update still touches all 2^18 columns) and the kernel; full
(2^36 entries), rank 50 (a 210 MB sketch) and RFF (a 2^18 × 500 map, 1 GB) are left out.

Per (form, data): a fresh model learns warm-up rows until it is in its steady state (2·budget
rows for the kernel, whose support set is then full; 3·rank for low rank, whose sketch of
2·rank rows has then filled and been shrunk, as most rows update; 100 otherwise), then 50 more
rows that set the size n of the timed batch (the rows that fit in --seconds at that pace,
between 100 and --rows). It then learns the next n rows with one `partial_fit`, 3 times (the
same rows again, the model continuing), and scores them with one `decision_function`, 3 times:
the medians give µs per row learned (and rows/s; wall-clock, and the CPU time of the process
beside it) and µs per row predicted. Memory is the size of the model saved with `save()` (a
`.cwrs` file: a JSON header of 1–1.5 KB, then the arrays), beside what the formula of its
arrays predicts, from the state each form keeps (crates/cwrs/src/covariance/), with d' = d + 1
(the intercept is a constant feature with its own weight):

- identity: the mean, 8·d' bytes;
- diagonal: mean and variance per feature, 16·d';
- full: the mean and Σ, d'×d', 8·(d'² + d'). The model keeps Σ as Σ₀ − Σ_b h_b h_bᵀ, with up
  to p_max = min(32, d'/8) rank-one terms h_b (1 below d' = 32) waiting to be folded into Σ₀,
  p = n_updates mod p_max of them at any time; the file of a model with p > 0 terms waiting
  also holds Σ₀ and the terms, so that the loaded model continues bit for bit: 8·(d'² + p·d' +
  1) bytes more;
- low-rank k: the mean, the variances S and the sketch B of 2k rows, 8·(2k + 2)·d';
- kernel, S support rows with nnz_S stored values (every feature of a dense row): ν (S), the
  dual precision Π and the support Gram matrix (S×S each in the file; packed triangles of
  S(S+1)/2 in memory), the CSR support rows (8-byte values, 4-byte indices, S + 1 offsets):
  8·(2S² + 2S + 1) + 12·nnz_S;
- RFF with D features: the map (D×d weights, D offsets) and a diagonal model over D features,
  8·(D·d + D) + 16·(D + 1).

    python benchmarks/covariance_forms.py [--rows 20000] [--seconds 2] [--budget 500]
                                          [--components 500] [--quick]

Every form runs on one thread except full from d' = 256 on, which shares the passes over Σ
between two cores when there are two (its CPU time is then the sum of both, and a busy second
core slows its wall-clock time most). On a loaded machine the CPU times are the steadier.
BLAS is pinned to one thread (RFF maps rows with NumPy). Markdown goes to stdout, progress to
stderr. About 1 minute; `--quick` (1,000 rows at most, 0.1 s batches, budget and components
100) about 10 s.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before NumPy is imported

import argparse  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import scipy  # noqa: E402
import scipy.sparse as sp  # noqa: E402

import cwrs  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _peers  # noqa: E402
from compare import make_text_stream  # noqa: E402

SPARSE_FEATURES = 2**18
REPEATS = 3
PROBE_ROWS = 50
CLASSES = np.array([-1, 1])


def log(message):
    print(message, file=sys.stderr, flush=True)


def dense_rows(n_rows, d, seed=0):
    """Gaussian rows, labels from a random hyperplane with 5% flipped."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, d))
    y = np.where(X @ rng.normal(size=d) >= 0, 1, -1)
    return X, np.where(rng.random(n_rows) < 0.05, -y, y)


class Form:
    """One covariance form: its learner, its warm-up length and its memory formula."""

    def __init__(self, name, make, warmup, formula, predicted_bytes, dense_only=False):
        self.name, self.make, self.warmup = name, make, warmup
        self.formula, self.predicted_bytes, self.dense_only = formula, predicted_bytes, dense_only


def full_bytes(model, d):
    """8·(d'² + d'), and 8·(d'² + p·d' + 1) more with p rank-one terms waiting: Σ₀ and the
    terms are saved beside Σ. Terms wait until p_max of them fold at once (1 below 32
    coordinates), whichever calls the updates came in, so p = n_updates mod p_max."""
    dim = d + 1
    waiting = model.n_updates_ % (1 if dim < 32 else min(max(dim // 8, 1), 32))
    folded = 8 * (dim**2 + dim)
    return folded + (8 * (dim**2 + waiting * dim + 1) if waiting else 0)


def kernel_bytes(model, d):
    """8·(2S² + 2S + 1) + 12·nnz_S: ν, Π and the Gram matrix (S×S in the file), CSR rows."""
    support = model.support_vectors_
    n_support = model.n_support_
    stored = support.nnz if sp.issparse(support) else n_support * d
    return 8 * (2 * n_support**2 + 2 * n_support + 1) + 12 * stored


def forms(budget, components):
    return [
        Form("identity (PA1)", lambda: cwrs.PA1(shuffle=False), 100,
             "8·d'", lambda m, d: 8 * (d + 1)),
        Form("diagonal", lambda: cwrs.AROW(covariance="diag", shuffle=False), 100,
             "16·d'", lambda m, d: 16 * (d + 1)),
        Form("full", lambda: cwrs.AROW(covariance="full", shuffle=False), 100,
             "8·(d'² + d') [+ 8·(d'² + p·d' + 1)]", full_bytes, dense_only=True),
        Form("low-rank, rank 10",
             lambda: cwrs.AROW(covariance="lowrank", rank=10, shuffle=False), 30,
             "8·22·d'", lambda m, d: 8 * 22 * (d + 1)),
        Form("low-rank, rank 50",
             lambda: cwrs.AROW(covariance="lowrank", rank=50, shuffle=False), 150,
             "8·102·d'", lambda m, d: 8 * 102 * (d + 1), dense_only=True),
        Form(f"kernel rbf, budget {budget}",
             lambda: cwrs.AROW(kernel="rbf", budget=budget, shuffle=False), 2 * budget,
             "8·(2S² + 2S + 1) + 12·nnz_S", kernel_bytes),
        Form(f"RFF, {components} components",
             lambda: cwrs.AROW(kernel_approximation="rff", n_components=components,
                               random_state=0, shuffle=False), 100,
             f"8·({components}·d + {components}) + 16·{components + 1}",
             lambda m, d: 8 * (components * d + components) + 16 * (components + 1),
             dense_only=True),
    ]


def measure(form, X, y, d, max_rows, seconds, workdir):
    """(rows timed, learn s/row, learn CPU s/row, predict s/row, file bytes, formula bytes)
    of one form."""
    model = form.make()
    warmup = form.warmup
    model.partial_fit(X[:warmup], y[:warmup], classes=CLASSES)
    probe = slice(warmup, warmup + PROBE_ROWS)
    began = time.perf_counter()
    model.partial_fit(X[probe], y[probe])
    pace = (time.perf_counter() - began) / PROBE_ROWS
    n = int(min(max_rows, max(100, seconds / pace)))
    start = warmup + PROBE_ROWS
    X_batch, y_batch = X[start:start + n], y[start:start + n]
    learn, learn_cpu, predict = [], [], []
    for _ in range(REPEATS):
        began, began_cpu = time.perf_counter(), time.process_time()
        model.partial_fit(X_batch, y_batch)
        learn.append((time.perf_counter() - began) / n)
        learn_cpu.append((time.process_time() - began_cpu) / n)
    for _ in range(REPEATS):
        began = time.perf_counter()
        model.decision_function(X_batch)
        predict.append((time.perf_counter() - began) / n)
    path = Path(workdir) / "model.cwrs"
    model.save(path)
    return (n, statistics.median(learn), statistics.median(learn_cpu),
            statistics.median(predict), path.stat().st_size, form.predicted_bytes(model, d))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=20_000, help="most rows in a timed batch")
    parser.add_argument("--seconds", type=float, default=2.0,
                        help="the time a timed batch aims at (it sets the rows, up to --rows)")
    parser.add_argument("--budget", type=int, default=500, help="the kernel's budget")
    parser.add_argument("--components", type=int, default=500, help="RFF's n_components")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 1,000 rows, 0.1 s batches, budget and components 100")
    args = parser.parse_args(argv)
    if args.quick:
        args.rows, args.seconds, args.budget, args.components = 1000, 0.1, 100, 100
    started, load = time.time(), os.getloadavg()[0]
    roster = forms(args.budget, args.components)
    n_rows = max(form.warmup for form in roster) + PROBE_ROWS + args.rows

    datasets = []
    for d in (100, 1000):
        X, y = dense_rows(n_rows, d, seed=d)
        datasets.append((f"dense d = {d:,}", X, y, d))
    X, y = make_text_stream(n_rows, n_features=SPARSE_FEATURES)
    datasets.append(("sparse d = 2^18", X, y, SPARSE_FEATURES))
    sparse_nnz = X.nnz / X.shape[0]

    lines = []
    with tempfile.TemporaryDirectory() as workdir:
        for label, X, y, d in datasets:
            for form in roster:
                if form.dense_only and sp.issparse(X):
                    continue
                log(f"{label}: {form.name}")
                n, learn, learn_cpu, predict, size, predicted = measure(
                    form, X, y, d, args.rows, args.seconds, workdir)
                lines.append(f"| {form.name} | {label} | {n:,} | {1e6 * learn:,.2f} | "
                             f"{1 / learn:,.0f} | {1e6 * learn_cpu:,.2f} | "
                             f"{1e6 * predict:,.2f} | {size:,} | "
                             f"{form.formula} | {predicted:,} | {size - predicted:,} |")

    command = "python benchmarks/covariance_forms.py" + (" --quick" if args.quick else (
        f" --rows {args.rows} --seconds {args.seconds:g} --budget {args.budget}"
        f" --components {args.components}"))
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(started))}, {_peers.cpu_model()}, "
          f"{os.cpu_count()} cores · Python {platform.python_version()} · cwrs {cwrs.__version__}"
          f" · numpy {np.__version__} · scipy {scipy.__version__} · BLAS threads 1 · median of "
          f"{REPEATS} · load average {load:.1f} at the start · one run "
          f"({time.time() - started:.0f} s) · `{command}`\n")
    print(f"Sparse rows: {sparse_nnz:.1f} non-zeros per row on average. d' = d + 1 (the "
          "intercept); S = support rows, nnz_S their stored values. Bytes: the saved `.cwrs` "
          "file; the formula counts its arrays, the rest is the header.\n")
    print("| form | data | rows timed | learn µs/row | learn rows/s | learn CPU µs/row "
          "| predict µs/row | file bytes | formula | formula bytes | file − formula |")
    print("|---|---|--:|--:|--:|--:|--:|--:|---|--:|--:|")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
