"""Online error against sparsity for AROW (diag) with the coordinate-dependent L1 step
(penalty="l1", threshold eta_t*lambda*Sigma_jj) and the classic uniform truncated gradient
(penalty="l1-uniform", threshold eta_t*lambda), on a synthetic high-dimensional sparse text-like
stream.

The stream (seeded): 2^18 features; each row draws ~62 tokens (~50 distinct word ids) from a
Zipf distribution over the vocabulary (p_k ~ 1/k^1.05, word ids randomly permuted); values are
term counts (or 1 with --values binary), each row scaled to unit L2 norm (--raw keeps the counts;
AROW's default r = 1 then does badly, use e.g. --r 30); a sparse true weight vector (1% of the
features non-zero, drawn among the 20,000 most frequent words so that a typical row holds a few
of them, N(0, 1) weights); labels sign(x.w*) (a fair coin where x.w* = 0), then 5% flipped.

One online pass per (penalty, alpha) with partial_fit in chunks of 1000 rows; the online error is
n_mistakes_/n (progressive validation: every row is predicted before it is learned).  At the end,
the error of each penalty is interpolated (linearly in log non-zeros) at common sparsity levels to
say which is better at equal sparsity.

    python benchmarks/l1_sparsity.py [--rows 50000] [--values tf|binary] [--raw] [--r 1]
                                     [--seed 0]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
import scipy.sparse as sp

import cwrs

N_FEATURES = 2**18
ALPHAS = tuple(float(f"{10.0 ** (k / 3):.2g}") for k in range(-18, 1))  # 1e-6, 2.2e-6, ..., 1


def make_stream(n_rows=50_000, n_features=N_FEATURES, words_per_row=62, zipf_s=1.05,
                relevant_fraction=0.01, relevant_pool=20_000, noise=0.05, values="tf",
                normalize=True, seed=0):
    rng = np.random.default_rng(seed)
    ranks = np.arange(1, n_features + 1, dtype=float)
    p = ranks**-zipf_s
    p /= p.sum()
    word_of_rank = rng.permutation(n_features)  # the rank-k word gets a random id
    lengths = np.maximum(1, rng.poisson(words_per_row, size=n_rows))
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    tokens = word_of_rank[rng.choice(n_features, size=int(indptr[-1]), p=p)]
    X = sp.csr_matrix((np.ones(tokens.shape[0]), tokens, indptr), shape=(n_rows, n_features))
    X.sum_duplicates()  # term counts
    if values == "binary":
        X.data[:] = 1.0
    X.sort_indices()
    if normalize:  # unit L2 norm per row, the usual text preprocessing
        norms = np.sqrt(np.add.reduceat(X.data**2, X.indptr[:-1]))
        X.data /= np.repeat(norms, np.diff(X.indptr))
    n_relevant = int(round(relevant_fraction * n_features))
    relevant = word_of_rank[rng.choice(relevant_pool, size=n_relevant, replace=False)]
    w = np.zeros(n_features)
    w[relevant] = rng.normal(size=n_relevant)
    score = X @ w
    y = np.where(score > 0, 1, np.where(score < 0, -1, rng.choice([-1, 1], size=n_rows)))
    flip = rng.random(n_rows) < noise
    y = np.where(flip, -y, y).astype(np.int64)
    info = {
        "nnz_per_row": X.nnz / n_rows,
        "features_seen": int(np.count_nonzero(np.bincount(X.indices, minlength=n_features))),
        "n_relevant": n_relevant,
        "rows_without_signal": float(np.mean(score == 0)),
        "positive": float(np.mean(y == 1)),
    }
    return X, y, info


def one_pass(X, y, penalty, alpha, r=1.0, chunk=1000):
    est = cwrs.AROW(covariance="diag", r=r, fit_intercept=True, penalty=penalty,
                    **({} if penalty is None else {"alpha": alpha}))
    classes = np.array([-1, 1])
    t0 = time.perf_counter()
    for lo in range(0, X.shape[0], chunk):
        est.partial_fit(X[lo : lo + chunk], y[lo : lo + chunk], classes=classes)
    elapsed = time.perf_counter() - t0
    coef = np.asarray(est.coef_).ravel()
    nnz = int(np.count_nonzero(coef))
    sparsity = float(est.sparsity_) if penalty is not None else float(np.mean(coef == 0))
    if penalty is not None:
        assert est.sparse_coef_.nnz == nnz
    return {
        "penalty": penalty or "none",
        "alpha": alpha,
        "error": est.n_mistakes_ / X.shape[0],
        "sparsity": sparsity,
        "nnz": nnz,
        "updates": int(est.n_updates_),
        "seconds": elapsed,
    }


def interpolate(rows, log_nnz):
    """Error at the given log10(non-zeros), linear in log10(nnz) between grid points."""
    pts = sorted((np.log10(max(r["nnz"], 1)), r["error"]) for r in rows)
    xs = np.array([p[0] for p in pts])
    es = np.array([p[1] for p in pts])
    return np.interp(log_nnz, xs, es)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=50_000)
    ap.add_argument("--values", choices=["tf", "binary"], default="tf")
    ap.add_argument("--raw", action="store_true",
                    help="keep raw counts (default: rows scaled to unit L2 norm)")
    ap.add_argument("--r", type=float, default=1.0, help="AROW's r (default 1)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    X, y, info = make_stream(n_rows=args.rows, values=args.values, normalize=not args.raw,
                             seed=args.seed)
    print(f"stream: {X.shape[0]} rows x 2^18 features, {info['nnz_per_row']:.1f} non-zeros/row "
          f"({args.values} values{'' if args.raw else ', unit L2 rows'}), "
          f"{info['features_seen']} features seen, "
          f"{info['n_relevant']} relevant, {100 * info['rows_without_signal']:.1f}% rows without "
          f"signal, {100 * info['positive']:.1f}% positive, 5% label noise; seed {args.seed}; "
          f"built in {time.perf_counter() - t0:.1f} s")
    print(f"cwrs {getattr(cwrs, '__version__', '?')}, python {sys.version.split()[0]}, "
          f"{os.cpu_count()} cpus")
    print()

    print(f"AROW(covariance='diag', r={args.r}, fit_intercept=True), one pass, partial_fit in "
          f"chunks of 1000 rows")
    results = [one_pass(X, y, None, 0.0, args.r)]
    for penalty in ("l1", "l1-uniform"):
        for alpha in ALPHAS:
            results.append(one_pass(X, y, penalty, alpha, args.r))

    header = (f"{'penalty':<11} {'alpha':>7} {'online err':>10} {'sparsity':>9} "
              f"{'non-zeros':>10} {'updates':>8} {'time s':>7}")
    print(header)
    print("-" * len(header))
    for r in results:
        print(f"{r['penalty']:<11} {r['alpha']:>7.2g} {100 * r['error']:>9.2f}% "
              f"{r['sparsity']:>9.4f} {r['nnz']:>10d} {r['updates']:>8d} {r['seconds']:>7.2f}")
    print()

    # Equal sparsity: interpolate each penalty's error at common non-zero counts, over the range
    # where both models still beat the constant (majority-class) predictor by a point; below it
    # both have collapsed to predicting the majority class and the comparison says nothing.
    majority = min(np.mean(y == 1), np.mean(y == -1))
    print(f"majority-class error {100 * majority:.2f}%")
    by = {p: [r for r in results if r["penalty"] in (p, "none")] for p in ("l1", "l1-uniform")}
    useful = {p: [r for r in rs if r["error"] < majority - 0.01 and r["nnz"] > 0]
              for p, rs in by.items()}
    lo = max(min(np.log10(r["nnz"]) for r in rs) for rs in useful.values())
    hi = min(max(np.log10(r["nnz"]) for r in rs) for rs in useful.values())
    print("at equal sparsity (error interpolated linearly in log10 non-zeros, over the range "
          "where both beat the majority class by a point):")
    print(f"{'non-zeros':>10} {'sparsity':>9} {'l1 err':>8} {'uniform err':>12} {'better':>11}")
    wins = {"l1": 0, "l1-uniform": 0, "tie": 0}
    diffs = []
    if hi > lo:
        for q in np.linspace(lo, hi, 12):
            e1, e2 = interpolate(by["l1"], q), interpolate(by["l1-uniform"], q)
            better = "l1" if e1 < e2 - 1e-4 else ("l1-uniform" if e2 < e1 - 1e-4 else "tie")
            wins[better] += 1
            diffs.append(e2 - e1)
            nnz = 10**q
            print(f"{nnz:>10.0f} {1 - nnz / N_FEATURES:>9.4f} {100 * e1:>7.2f}% "
                  f"{100 * e2:>11.2f}% {better:>11}")
        print(f"l1 better at {wins['l1']}, uniform at {wins['l1-uniform']}, tie at "
              f"{wins['tie']} of {sum(wins.values())} levels; mean (uniform - l1) error "
              f"{100 * np.mean(diffs):+.2f} points")
    else:
        print("the two sparsity ranges do not overlap")
    print(f"total {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
