"""Default hyper-parameters of the second-order classifiers: how far each default is from the best
value of a grid, on data of different scales, and whether a scale-free rule for the prior
variance `a` (computed from the training rows) would be a better default.

Why scale matters: with the prior Σ₀ = a·I, scaling the features x by s is the same model as
a → a·s² (the intercept's constant 1 aside), and a row's first variance v = xᵀΣ₀x is a·‖x‖².
So a fixed default a = 1 means a different model on every scale. The candidate rules set
a = c / M with M the training rows' mean ‖x‖² (+ 1 for the intercept, see below), so that the
typical row's first variance is c whatever the scale. For AROW, whose model depends on a and r
only through r/a, a = c/M is the same as r = M/c with a = 1.

Learners: every second-order classifier of cwrs.CLASSIFIERS (diagonal covariance, their
defaults otherwise), each over a grid of its main parameter × a grid of a (SOP, whose only
parameter is a: the a grid).

Data (seeded; held-out split 70/30 stratified, seed 0, unless a test file exists):
- a1a → a1a.t (binary features, d = 123; the shared data sets), w1a (binary, d = 300),
  svmguide3 raw (values in [-0.9, 5]) and standardized (on the training rows' statistics), the
  standardized copy also × 0.01 and × 100; breast_cancer raw (scikit-learn's bundled copy,
  feature scales from 0.001 to 4,000) and standardized; digits (10 classes; raw 0–16 and / 16);
- a hashed text-like stream (CSR, 2^18 columns): word ids Zipf-distributed (exponent 1.05,
  randomly permuted ids), Poisson(60) tokens per row, term counts; a true weight vector on 1% of
  the columns (among the 20,000 most frequent words, N(0, 1)), the label the sign of the unit-
  normalized row's score minus its median (balanced classes), 5% of the labels flipped; once
  with every row scaled to unit L2 norm ("text tf-l2") and once with the raw counts ("text
  counts"), the same rows and labels.

Metrics, each the mean over `--seeds` seeds (0, 1, 2 by default; `--seeds 1` is seed 0 alone):
held-out accuracy after one `fit` pass (`random_state=seed`) and the progressive (test-then-
train) error `n_mistakes_ / n` of one `partial_fit` pass over the training rows in the seed's
random order. One pass leaves the last rows' model, so a single seed's held-out accuracy moves
by several points on the small sets; the data table gives the spread over the seeds.

The best grid point is the best of the grid by each metric (ties: the point nearest the
default). The candidate rules set a from the training rows, every learner's main parameter at
its default, in two families:
- "a = c/M": a = c/M, M = mean ‖x‖² + 1 (the + 1 is the intercept's constant feature: every
  weight, the intercept's included, gets the prior variance a);
- "bias 1": a = c/mean ‖x‖² for the features' weights, the intercept's prior variance kept at 1
  (its scale is the margin's, not the features'); simulated, with the public API, by appending
  a constant column of value sqrt(mean ‖x‖² / c) and fitting without an intercept, which is the
  same model.
For the progressive error the rules use the statistic of all the training rows, as a running
mean would after its first rows.

Shared data: `CWRS_SHARED_DATASETS`, default ../shared/datasets relative to the repository.

    python benchmarks/defaults.py [--quick] [--seeds 3] [--text-rows 20000]
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import scipy
import scipy.sparse as sp

import cwrs

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _peers import cpu_model  # noqa: E402

try:
    import sklearn
    from sklearn.datasets import load_breast_cancer, load_digits
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler
except ImportError:  # pragma: no cover - the data need scikit-learn
    sys.exit("benchmarks/defaults.py needs scikit-learn (pip install -e '.[bench]')")

SEED = 0
DECADES = (1e-3, 1e-2, 1e-1, 1.0, 1e1, 1e2, 1e3)
ETAS = (0.55, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99)
# The main parameter of each learner and its grid (each grid holds the default).
MAIN_GRIDS = {
    "SOP": None,  # its only parameter is a
    "CW": ("eta", ETAS),
    "ExactCW": ("eta", ETAS),
    "AROW": ("r", DECADES),
    "NAROW": ("b", DECADES),
    "SCW1": ("C", DECADES),
    "SCW2": ("C", DECADES),
    "NHERD": ("C", DECADES),
    "IELLIP": ("b", (0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99)),
}
A_GRID = tuple(10.0**k for k in range(-6, 3))  # 1e-6 ... 100: reaches 1/M of every data set
RULE_CS = (0.1, 1.0, 3.0, 10.0, 100.0)
# The candidate rules (family, c), the families as the module docstring says.
RULES = tuple((family, c) for family in ("a=c/M", "bias 1") for c in RULE_CS)
WITHIN = 1.0  # points
# The learners with a regularization parameter that a is measured against (AROW r, NAROW b,
# SCW1/SCW2 C, NHERD C), summarized apart: ExactCW's and IELLIP's models do not depend on a
# (their steps are ratios of Σx and xᵀΣx) except through the intercept's share, SOP has no
# such parameter and CW only its confidence.
REGULARIZED = ("AROW", "NAROW", "SCW1", "SCW2", "NHERD")


def shared_dir():
    return Path(
        os.environ.get("CWRS_SHARED_DATASETS")
        or Path(__file__).resolve().parents[2] / "shared" / "datasets"
    )


def split(X, y):
    return train_test_split(X, y, test_size=0.3, stratify=y, random_state=SEED)


def standardized(Xtr, Xte):
    scaler = StandardScaler().fit(Xtr)
    return scaler.transform(Xtr), scaler.transform(Xte)


def text_stream(n_rows, n_features=2**18, words_per_row=60, zipf_s=1.05, relevant_fraction=0.01,
                relevant_pool=20_000, noise=0.05, seed=SEED):
    """(X unit-norm tf, X raw counts, y), the same rows and labels (see the module docstring)."""
    rng = np.random.default_rng(seed)
    p = np.arange(1, n_features + 1, dtype=float) ** -zipf_s
    p /= p.sum()
    word_of_rank = rng.permutation(n_features)
    lengths = np.maximum(1, rng.poisson(words_per_row, size=n_rows))
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    tokens = word_of_rank[rng.choice(n_features, size=int(indptr[-1]), p=p)]
    counts = sp.csr_matrix((np.ones(tokens.shape[0]), tokens, indptr),
                           shape=(n_rows, n_features))
    counts.sum_duplicates()
    counts.sort_indices()
    unit = counts.copy()
    norms = np.sqrt(np.add.reduceat(unit.data**2, unit.indptr[:-1]))
    unit.data /= np.repeat(norms, np.diff(unit.indptr))
    n_relevant = int(round(relevant_fraction * n_features))
    w = np.zeros(n_features)
    w[word_of_rank[rng.choice(relevant_pool, size=n_relevant, replace=False)]] = rng.normal(
        size=n_relevant)
    score = unit @ w
    y = np.where(score > np.median(score), 1, -1)
    y = np.where(rng.random(n_rows) < noise, -y, y).astype(np.int64)
    return unit, counts, y


def load_data(quick, text_rows):
    """{name: (X_train, y_train, X_test, y_test)}."""
    shared = shared_dir()
    data = {}
    Xa = np.load(shared / "a1a.X.npy")
    ya = np.load(shared / "a1a.y.npy")
    Xat, yat = cwrs.load_svmlight(shared / "a1a.t.libsvm", n_features=123)
    data["a1a"] = (Xa, ya, Xat, yat)
    if not quick:
        Xtr, Xte, ytr, yte = split(np.load(shared / "w1a.X.npy"), np.load(shared / "w1a.y.npy"))
        data["w1a"] = (Xtr, ytr, Xte, yte)
    Xtr, Xte, ytr, yte = split(np.load(shared / "svmguide3.X.npy"),
                               np.load(shared / "svmguide3.y.npy"))
    data["svm3"] = (Xtr, ytr, Xte, yte)
    if not quick:
        Str, Ste = standardized(Xtr, Xte)
        data["svm3 std"] = (Str, ytr, Ste, yte)
        data["svm3 std×0.01"] = (Str * 0.01, ytr, Ste * 0.01, yte)
        data["svm3 std×100"] = (Str * 100, ytr, Ste * 100, yte)
    bc = load_breast_cancer()
    Xtr, Xte, ytr, yte = split(bc.data, np.where(bc.target == 1, 1, -1))
    data["bc"] = (Xtr, ytr, Xte, yte)
    if not quick:
        Str, Ste = standardized(Xtr, Xte)
        data["bc std"] = (Str, ytr, Ste, yte)
        dg = load_digits()
        Xtr, Xte, ytr, yte = split(dg.data, dg.target)
        data["digits"] = (Xtr, ytr, Xte, yte)
        data["digits/16"] = (Xtr / 16, ytr, Xte / 16, yte)
    unit, counts, y = text_stream(text_rows)
    n_train = int(0.7 * text_rows)
    data["text tf-l2"] = (unit[:n_train], y[:n_train], unit[n_train:], y[n_train:])
    if not quick:
        data["text counts"] = (counts[:n_train], y[:n_train], counts[n_train:], y[n_train:])
    return data


def with_constant(X, value):
    """X with a constant column of `value` appended (dense or CSR, as X)."""
    if sp.issparse(X):
        return sp.hstack([X, sp.csr_matrix(np.full((X.shape[0], 1), value))], format="csr")
    return np.hstack([X, np.full((X.shape[0], 1), value)])


def mean_sq_norm(X):
    """M = mean ‖x‖² + 1 over the rows (the + 1: the intercept's constant feature)."""
    if sp.issparse(X):
        return float(X.multiply(X).sum() / X.shape[0]) + 1.0
    return float(np.einsum("ij,ij->", X, X) / X.shape[0]) + 1.0


def evaluate(cls, params, data, orders):
    """(held-out accuracy, progressive error, and their standard deviations over the seeds),
    the means over the seeds: `fit` with random_state = seed, `partial_fit` over the rows in the
    seed's order; nan where the learner fails."""
    Xtr, ytr, Xte, yte = data
    classes = np.unique(ytr)
    accs, errs = [], []
    try:
        for seed, order in enumerate(orders):
            accs.append(cls(random_state=seed, **params).fit(Xtr, ytr).score(Xte, yte))
            model = cls(**params)
            model.partial_fit(Xtr[order], ytr[order], classes=classes)
            errs.append(model.n_mistakes_ / len(order))
    except (ValueError, ArithmeticError, RuntimeError):
        return math.nan, math.nan, math.nan, math.nan
    return float(np.mean(accs)), float(np.mean(errs)), float(np.std(accs)), float(np.std(errs))


def grid_points(main, a_grid):
    """Every (main value, a) of a learner's grid, as parameter dicts."""
    if main is None:
        return [{"a": a} for a in a_grid]
    param, values = main
    return [{param: v, "a": a} for v in values for a in a_grid]


def fmt_params(params):
    return ", ".join(f"{k} {v:g}" for k, v in params.items())


def best_point(grid, values, sign, default):
    """Index of the best (largest sign·value) finite entry; among ties, the grid point nearest
    the default (in log distance), so that a flat direction reports the default."""
    arr = np.array(values, dtype=float)
    arr = np.where(np.isfinite(arr), sign * arr, -np.inf)
    ties = np.flatnonzero(arr >= arr.max() - 1e-12)

    def distance(i):
        return sum(abs(math.log(grid[i][k] / default[k])) for k in default)

    return int(min(ties, key=distance))


def run(quick, text_rows, seeds):
    data = load_data(quick, text_rows)
    names = list(data)
    learners = [c for c in cwrs.CLASSIFIERS if c._second_order]
    missing = [c.__name__ for c in learners if c.__name__ not in MAIN_GRIDS]
    if missing:
        sys.exit(f"no grid for {missing}")
    a_grid, main_grids = A_GRID, dict(MAIN_GRIDS)
    if quick:  # a coarse grid: three values each
        a_grid = (1e-4, 1e-2, 1.0)
        for cls in learners:
            main = main_grids[cls.__name__]
            if main is not None:
                param, values = main
                main_grids[cls.__name__] = (param,
                                            (values[0], cls().get_params()[param], values[-1]))
    stats = {n: mean_sq_norm(data[n][0]) for n in names}
    orders = {n: [np.random.default_rng(seed).permutation(data[n][0].shape[0])
                  for seed in range(seeds)] for n in names}
    # The intercept's prior variance a_b on its constant feature 1 is the prior variance a on a
    # constant feature of value sqrt(a_b / a): the "bias 1" rule appends that column (a_b = 1)
    # and fits without an intercept, the same model.
    with_bias_column = {}
    for n in names:
        Xtr, ytr, Xte, yte = data[n]
        for c in RULE_CS:
            column = math.sqrt((stats[n] - 1.0) / c)  # a = c / mean‖x‖², a_b = 1
            with_bias_column[n, c] = (with_constant(Xtr, column), ytr,
                                      with_constant(Xte, column), yte)
    results = {}  # (learner, data) -> dict
    for cls in learners:
        lname = cls.__name__
        defaults = cls().get_params()
        for n in names:
            cache = {}

            def point(params):
                key = tuple(sorted(params.items()))
                if key not in cache:
                    cache[key] = evaluate(cls, params, data[n], orders[n])
                return cache[key]

            main = main_grids[lname]
            default_params = {"a": defaults["a"]} if main is None else {
                main[0]: defaults[main[0]], "a": defaults["a"]}
            default = point(default_params)
            grid = grid_points(main, a_grid)
            scores = [point(p) for p in grid]
            best_acc = best_point(grid, [s[0] for s in scores], +1, default_params)
            best_err = best_point(grid, [s[1] for s in scores], -1, default_params)
            rules = {}
            for family, c in RULES:
                if family == "a=c/M":
                    rules[family, c] = point({"a": c / stats[n]})
                else:
                    rules[family, c] = evaluate(cls, {"a": c / (stats[n] - 1.0),
                                                      "fit_intercept": False},
                                                with_bias_column[n, c], orders[n])
            results[lname, n] = {
                "default": default,
                "best_acc": (grid[best_acc], scores[best_acc][0]),
                "best_err": (grid[best_err], scores[best_err][1]),
                "rules": rules,
            }
    return data, names, learners, stats, results


def pts(x):
    return "—" if not math.isfinite(x) else f"{100 * x:.1f}"


def gap(x):
    return "—" if not math.isfinite(x) else f"{100 * x:+.1f}"


def table(header, rows):
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join(["---"] + ["--:"] * (len(header) - 1)) + "|"]
    out += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(out)


def report(data, names, learners, stats, results, elapsed, argv):
    lnames = [c.__name__ for c in learners]
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"{now}. `python benchmarks/defaults.py{' ' + ' '.join(argv) if argv else ''}` "
          f"({cpu_model()}, {os.cpu_count()} cores; cwrs {cwrs.__version__}, NumPy "
          f"{np.__version__}, SciPy {scipy.__version__}, scikit-learn {sklearn.__version__}, "
          f"Python {platform.python_version()}); {elapsed:.0f} s.\n")
    print("Data sets (M = mean ‖x‖² + 1 over the training rows; the spread: the standard "
          "deviation over the seeds of the defaults' metric, the median over the learners, "
          "in points):\n")
    rows = []
    for n in names:
        Xtr, ytr, Xte, _ = data[n]
        acc_sd = np.median([results[ln, n]["default"][2] for ln in lnames])
        err_sd = np.median([results[ln, n]["default"][3] for ln in lnames])
        rows.append([n, f"{Xtr.shape[0]:,}", f"{Xte.shape[0]:,}", f"{Xtr.shape[1]:,}",
                     "CSR" if sp.issparse(Xtr) else "dense", str(len(np.unique(ytr))),
                     f"{stats[n]:.4g}", f"{100 * acc_sd:.1f}", f"{100 * err_sd:.1f}"])
    print(table(["data", "train", "test", "d", "format", "classes", "M", "accuracy spread",
                 "progressive spread"], rows))

    def lead_table(metric):
        """learner × data: `metric(result)` = (the defaults' value, the best point's lead)."""
        rows = [[ln] + [f"{pts(value)} ({100 * lead:.1f})"
                        for value, lead in (metric(results[ln, n]) for n in names)]
                for ln in lnames]
        return table(["learner"] + names, rows)

    print("\nHeld-out accuracy (%) at the defaults, and in brackets the best grid point's lead "
          "over it (points):\n")
    print(lead_table(lambda r: (r["default"][0], r["best_acc"][1] - r["default"][0])))
    print("\nThe best grid point for held-out accuracy (main parameter, a):\n")
    rows = [[ln] + [fmt_params(results[ln, n]["best_acc"][0]) for n in names] for ln in lnames]
    print(table(["learner"] + names, rows))
    print("\nProgressive error (%) at the defaults, and in brackets the best grid point's lead "
          "over it (points):\n")
    print(lead_table(lambda r: (r["default"][1], r["default"][1] - r["best_err"][1])))

    # The candidate rules, the main parameter at its default.
    def rule_name(rule):
        if rule == "default":
            return "today's default (a = 1)"
        family, c = rule
        return f"a = {c:g}/M" if family == "a=c/M" else f"a = {c:g}/mean‖x‖², bias 1"

    def rule_result(r, rule):
        return r["default"] if rule == "default" else r["rules"][rule]

    def compare(rule, members):
        """Per (learner, data): gap to the best grid point and difference to the default, for
        the held-out accuracy and the progressive error (points; a failure counts as -inf)."""
        out = {"acc_gap": [], "acc_vs_default": [], "err_gap": [], "err_vs_default": []}
        for m in members:
            for n in names:
                r = results[m, n]
                acc, err = rule_result(r, rule)[:2]
                acc = acc if math.isfinite(acc) else -math.inf
                err = err if math.isfinite(err) else math.inf
                out["acc_gap"].append((100 * (r["best_acc"][1] - acc), m, n))
                out["acc_vs_default"].append((100 * (acc - r["default"][0]), m, n))
                out["err_gap"].append((100 * (err - r["best_err"][1]), m, n))
                out["err_vs_default"].append((100 * (r["default"][1] - err), m, n))
        return out

    def count_within(items):
        return sum(v <= WITHIN for v, _, _ in items)

    def count_worse(items):
        return sum(v < -WITHIN for v, _, _ in items)

    groups = [(f"all {len(lnames)} learners", lnames),
              (", ".join(REGULARIZED), [ln for ln in lnames if ln in REGULARIZED])]
    for group, members in groups:
        print(f"\nCandidate rules for a (the main parameter at its default), over {group} × "
              f"{len(names)} data sets: how often the rule is within {WITHIN:g} point of the "
              f"best grid point and its worst gap to it; how often it is worse than today's "
              f"default by more than {WITHIN:g} point and its worst difference to it (held-out "
              f"accuracy, then progressive error; points).\n")
        rows = []
        for rule in ["default", *RULES]:
            cmp_ = compare(rule, members)
            total = len(cmp_["acc_gap"])
            cells = [rule_name(rule)]
            for gap_key, def_key in (("acc_gap", "acc_vs_default"),
                                     ("err_gap", "err_vs_default")):
                worst = max(cmp_[gap_key])
                worst_def = min(cmp_[def_key])
                versus = rule != "default"
                cells += [f"{count_within(cmp_[gap_key])}/{total}",
                          f"{worst[0]:.1f} ({worst[1]}, {worst[2]})",
                          f"{count_worse(cmp_[def_key])}/{total}" if versus else "—",
                          f"{worst_def[0]:+.1f} ({worst_def[1]}, {worst_def[2]})"
                          if versus else "—"]
            rows.append(cells)
        print(table(["rule", "acc: within 1 pt of best", "worst gap", "worse than default",
                     "worst vs default", "prog.: within 1 pt of best", "worst gap",
                     "worse than default", "worst vs default"], rows))
    for label, gap_key, def_key in (("held-out accuracy", "acc_gap", "acc_vs_default"),
                                    ("progressive error", "err_gap", "err_vs_default")):
        print(f"\nPer learner, {label}: data sets within {WITHIN:g} point of the best grid "
              f"point / data sets worse than the default by more than {WITHIN:g} point / the "
              f"worst gap to the best grid point (points; its data set), of {len(names)}:\n")
        rows = []
        for ln in lnames:
            row = [ln]
            for rule in ["default", *RULES]:
                cmp_ = compare(rule, [ln])
                worst = max(cmp_[gap_key])
                row.append(f"{count_within(cmp_[gap_key])} / {count_worse(cmp_[def_key])} / "
                           f"{worst[0]:.1f} ({worst[2]})")
            rows.append(row)
        print(table(["learner"] + [rule_name(rule) for rule in ["default", *RULES]], rows))

    for rule in RULES:
        for label, index, sign in (("held-out accuracy", 0, 1), ("progressive error", 1, -1)):
            print(f"\nRule {rule_name(rule)}: {label} (%), and in brackets its gain over the "
                  f"default (points):\n")
            rows = []
            for ln in lnames:
                row = [ln]
                for n in names:
                    r = results[ln, n]
                    value = r["rules"][rule][index]
                    row.append(f"{pts(value)} ({gap(sign * (value - r['default'][index]))})")
                rows.append(row)
            print(table(["learner"] + names, rows))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="four data sets, three values per parameter")
    parser.add_argument("--seeds", type=int, default=3,
                        help="shuffling seeds 0..N-1 that each metric is averaged over")
    parser.add_argument("--text-rows", type=int, default=None,
                        help="rows of the text stream (default 20,000; 4,000 with --quick)")
    args = parser.parse_args(argv)
    text_rows = args.text_rows or (4_000 if args.quick else 20_000)
    start = time.perf_counter()
    out = run(args.quick, text_rows, args.seeds)
    report(*out, time.perf_counter() - start, sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    main()
