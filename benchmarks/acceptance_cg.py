"""Work for callgrind, old build against new (the speed acceptance of the one-row and
fit paths; benchmarks/archive/RESULTS-2026-11.md).

    python acceptance_cg.py fit RULE     one fit of 20,000 sparse rows (2^20 features, 100 Zipf
                                         non-zeros per row): count the native partial_fit
    python acceptance_cg.py fit-weighted RULE
                                         the same fit with a sample weight per row (uniform in
                                         [0.5, 2]): what importance weights cost
    python acceptance_cg.py again RULE   the same fit, then the same rows learned 3 more times by
                                         `partial_fit` into the model, which is no longer fresh
                                         (criterion's diag_sparse path): count minus `fit`'s
    python acceptance_cg.py fit-full D   one fit of AROW full over 3,000 dense rows of D features
    python acceptance_cg.py one-row N    N one-row partial_fit calls (AROW diag, d = 100): the
                                         cost of one call is the difference of two N, per call

Run it under `valgrind --tool=callgrind` with each build's Python (see acceptance.sh).
"""

import sys

import numpy as np

import cwrs


def fit(rule, again=0, weighted=False):
    n, d, nnz = 20_000, 1 << 20, 100
    rng = np.random.default_rng(7)
    indices = (rng.zipf(1.3, size=n * nnz) % d).astype(np.int64)
    import scipy.sparse as sp

    X = sp.csr_matrix(
        (rng.normal(size=n * nnz), indices, np.arange(0, n * nnz + 1, nnz)), shape=(n, d)
    )
    X.sum_duplicates()
    y = np.where(rng.random(n) < 0.5, -1, 1)
    model = getattr(cwrs, rule)(shuffle=False)
    model.fit(X, y, sample_weight=rng.uniform(0.5, 2.0, size=n) if weighted else None)
    for _ in range(again):
        model.partial_fit(X, y)
    return model.n_updates_


def fit_full(d):
    n = 3000
    rng = np.random.default_rng(7)
    X = rng.normal(size=(n, d))
    y = np.where(X @ rng.normal(size=d) + rng.normal(size=n) > 0, 1, -1)
    model = cwrs.AROW(covariance="full", shuffle=False)
    model.fit(X, y)
    return model.n_updates_


def one_row(n):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n + 10, 100))
    y = np.where(X[:, 0] > 0, 1, -1)
    model = cwrs.AROW(shuffle=False).partial_fit(X[:10], y[:10], classes=[-1, 1])
    rows = [(X[i : i + 1], y[i : i + 1]) for i in range(10, n + 10)]
    for x, target in rows:
        model.partial_fit(x, target)
    return model.n_updates_


if __name__ == "__main__":
    mode, arg = sys.argv[1], sys.argv[2]
    if mode in ("fit", "again", "fit-weighted"):
        print(fit(arg, again=3 if mode == "again" else 0, weighted=mode == "fit-weighted"))
    else:
        print((fit_full if mode == "fit-full" else one_row)(int(arg)))
