"""Active learning: held-out accuracy against the fraction of the training labels used, for
`cwrs.SelectiveSampler` (AROW at its defaults, each strategy over a sweep of its parameter) and,
in the same run, Vowpal Wabbit's `--active --simulation` and river's `active.EntropySampler`.
Prints markdown tables for benchmarks/RESULTS.md.

Protocol: one pass over the training rows in a random order (order seeds 0, 1, 2; `--quick`: 0
alone; the same orders for every method), every label known to the simulation, each method
deciding per row whether to ask for it and learning only the rows it asked for; then the
accuracy on the held-out rows. "labels" is the fraction of the training rows asked for, both
figures the mean over the orders. The all-labels row is plain AROW on the same pass.

cwrs: `SelectiveSampler(AROW(), strategy)`, "margin" (ask when |m|/√v < threshold), "bbq" (ask
when v/(1+v) > t^(−κ)) and "random" (ask with p = b/(b + |m|/√v), learn with weight 1/p;
`random_state` = the order seed); see `help(cwrs.SelectiveSampler)`.

Vowpal Wabbit (the `vowpalwabbit` package): `--active --simulation --mellowness c0` with the
squared loss (its default), `--binary`, `-b 18`, one pass; its importance-weighted active learning
(IWAL) decides from the disagreement of the importance-weighted update. VW reports nothing per
query in simulation mode, but it rewrites each example it learns: an example it did not ask
for comes back from `learn` with the label FLT_MAX and weight 0, an asked one keeps its label
and gets weight 1/p; the labels used are the examples with a positive weight. `--vw-loss
logistic` or `hinge` runs VW with those losses: on a1a (three orders) their query rate jumps from
at most 1% of the labels (c0 ≤ 0.03 logistic, ≤ 0.01 hinge) to 72% (logistic) and 99% (hinge)
at c0 = 0.1, and with up to 72% of the labels their models predict the majority class (0.7595)
or little better (hinge: 0.7677–0.7765 with 2–6%), so the squared loss, VW's default, gives VW
its best curve and is the one reported. Binary data only: under `--oaa` each class's binary
subproblem would ask on its own, and the multiclass labels asked cannot be read back.

river: `active.EntropySampler(model, discount_factor, seed)` around the best of river's
`LogisticRegression` with SGD(0.01) (its default), SGD(0.1) and AdaGrad(0.1), the one of best
held-out accuracy with every label on that data set (chosen on the test rows: a favour to the
peer); `OneVsRestClassifier` of it for digits. It asks with probability (normalized entropy of
predict_proba)^discount_factor and learns the asked rows unweighted. A multiclass model that
has seen no class predicts no probabilities, whose entropy is 0, so the sampler would never ask:
on digits it is first given the first row of each class in the stream order (10 labels,
counted as asked).

Data: a1a (1,605 rows × 123 binary features) tested on a1a.t (30,956 rows), read with
`cwrs.load_svmlight(n_features=123)`; w1a (2,477 rows × 300, 2.9% positive) split 70/30
stratified with seed 0; digits (scikit-learn, 1,797 rows × 64, 10 classes) split 70/30
stratified with seed 0 and standardized with the training part's statistics; a synthetic
stream: x ~ N(0, I_50), y = sign(w·x + 0.3·ε) for a random unit w and ε ~ N(0, 1) (seed 0),
20,000 training rows (`--quick`: 5,000) and 5,000 test rows.

"vs peers" compares each peer point (labels f, accuracy a) with the cwrs "margin" curve at f:
linear interpolation between its sweep points (the all-labels point included); a peer point
below the smallest fraction of the sweep is not compared ("—": the curve is not measured
there), and the count of such points is printed. The last check is the
accuracy of "margin" at 30% of the labels (interpolated) against all labels on a1a.

Speed: rows per second of `SelectiveSampler.fit` (the whole simulated stream) on the synthetic
training rows at each strategy's default, with plain AROW `fit` for scale: the sampler decides
rows in blocks scored with one model state and learns each asked row with its own `partial_fit`
call, so its cost is mostly the Python of one call per asked row.

"Defaults" prints, for each strategy, the smallest value of its sweep whose accuracy is within
one point of all labels on every data set: how the defaults of `SelectiveSampler` were chosen.

Shared data: `CWRS_SHARED_DATASETS`, default ../shared/datasets relative to the repository.

    python benchmarks/active.py [--quick] [--vw-loss squared|logistic|hinge]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

import cwrs

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _peers import cpu_model  # noqa: E402

try:
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
except ImportError:  # pragma: no cover
    sys.exit("benchmarks/active.py needs scikit-learn (pip install -e '.[bench]')")
try:
    import vowpalwabbit
except ImportError:  # pragma: no cover
    vowpalwabbit = None
try:
    import river
    from river import active as river_active
    from river import linear_model as river_linear_model
    from river import multiclass as river_multiclass
    from river import optim as river_optim
except ImportError:  # pragma: no cover
    river = None

SHARED = Path(
    os.environ.get("CWRS_SHARED_DATASETS")
    or Path(__file__).resolve().parents[2] / "shared" / "datasets"
)
SWEEPS = {
    "margin": ("threshold", [0.003, 0.01, 0.03, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0]),
    "bbq": ("kappa", [0.1, 0.2, 0.3, 0.4, 0.5, 0.7]),
    "random": ("b", [0.05, 0.1, 0.2, 0.5, 1.0, 2.0]),
}
QUICK_SWEEPS = {
    "margin": ("threshold", [0.2, 0.5, 1.0, 2.0]),
    "bbq": ("kappa", [0.2, 0.4, 0.5]),
    "random": ("b", [0.1, 0.5, 2.0]),
}
VW_MELLOWNESS = [1e-4, 3e-4, 1e-3, 3e-3, 5e-3, 7e-3, 0.01, 0.02, 0.03, 0.1, 0.3]
RIVER_DISCOUNT = [0.5, 1.0, 2.0, 3.0, 5.0, 8.0]
SYNTHETIC_D, SYNTHETIC_TEST, SYNTHETIC_NOISE = 50, 5_000, 0.3


# ============================================================================ data
class Data:
    def __init__(self, name, note, X, y, X_test, y_test, binary=True):
        self.name, self.note, self.binary = name, note, binary
        self.X, self.y, self.X_test, self.y_test = X, y, X_test, y_test


def load(names, quick):
    import scipy.sparse

    datasets = []
    for name in names:
        if name == "a1a":
            X, y = cwrs.load_svmlight(SHARED / "a1a.libsvm", n_features=123)
            X_test, y_test = cwrs.load_svmlight(SHARED / "a1a.t.libsvm", n_features=123)
            datasets.append(Data(name, f"{len(y):,} rows × 123; test a1a.t, {len(y_test):,} rows",
                                 X.tocsr(), y, X_test.tocsr(), y_test))
        elif name == "w1a":
            X, y = cwrs.load_svmlight(SHARED / "w1a.libsvm", n_features=300)
            X_train, X_test, y_train, y_test = train_test_split(
                X.tocsr(), y, test_size=0.3, stratify=y, random_state=0)
            datasets.append(Data(name, f"{len(y_train):,} rows × 300; test {len(y_test):,} "
                                 "(70/30 stratified, seed 0)",
                                 scipy.sparse.csr_matrix(X_train), y_train,
                                 scipy.sparse.csr_matrix(X_test), y_test))
        elif name == "digits":
            X, y = load_digits(return_X_y=True)
            X_train, X_test, y_train, y_test = train_test_split(
                X, y, test_size=0.3, stratify=y, random_state=0)
            mean, std = X_train.mean(axis=0), X_train.std(axis=0)
            std[std == 0] = 1.0
            datasets.append(Data(name, f"{len(y_train):,} rows × 64, 10 classes, standardized; "
                                 f"test {len(y_test):,} (70/30 stratified, seed 0)",
                                 (X_train - mean) / std, y_train, (X_test - mean) / std, y_test,
                                 binary=False))
        elif name == "synthetic":
            n_train = 5_000 if quick else 20_000
            rng = np.random.default_rng(0)
            w = rng.normal(size=SYNTHETIC_D)
            w /= np.linalg.norm(w)
            X = rng.normal(size=(n_train + SYNTHETIC_TEST, SYNTHETIC_D))
            y = np.where(X @ w + SYNTHETIC_NOISE * rng.normal(size=X.shape[0]) > 0, 1, -1)
            datasets.append(Data(name, f"{n_train:,} rows × {SYNTHETIC_D}; test "
                                 f"{SYNTHETIC_TEST:,}", X[:n_train], y[:n_train], X[n_train:],
                                 y[n_train:]))
    return datasets


def orders(data, seeds):
    return [np.random.default_rng(seed).permutation(len(data.y)) for seed in seeds]


# ============================================================================ cwrs
def cwrs_points(data, seeds, sweeps):
    """{(strategy, value): (labels, accuracy)}, the means over the orders, with ("all", None)."""
    points = {}
    runs = orders(data, seeds)
    accuracy = [cwrs.AROW(shuffle=False).fit(data.X[o], data.y[o]).score(data.X_test, data.y_test)
                for o in runs]
    points[("all labels", None)] = (1.0, float(np.mean(accuracy)))
    for strategy, (param, values) in sweeps.items():
        for value in values:
            fractions, accuracy = [], []
            for seed, order in zip(seeds, runs):
                sampler = cwrs.SelectiveSampler(
                    cwrs.AROW(), strategy, random_state=seed, **{param: value}
                ).fit(data.X[order], data.y[order])
                fractions.append(sampler.n_queried_ / len(order))
                accuracy.append(sampler.score(data.X_test, data.y_test))
            points[(strategy, value)] = (float(np.mean(fractions)), float(np.mean(accuracy)))
    return points


# ============================================================================ Vowpal Wabbit
def vw_lines(X, y=None):
    import scipy.sparse

    X = scipy.sparse.csr_matrix(X)
    lines = []
    for i in range(X.shape[0]):
        lo, hi = X.indptr[i], X.indptr[i + 1]
        features = " ".join(f"{j}:{v:.17g}" for j, v in zip(X.indices[lo:hi], X.data[lo:hi]))
        label = "" if y is None else f"{1 if y[i] > 0 else -1} "
        lines.append(f"{label}|f {features}")
    return lines


def vw_points(data, seeds, loss="squared"):
    train, test = vw_lines(data.X, data.y), vw_lines(data.X_test)
    truth = np.where(data.y_test > 0, 1, -1)
    points = {}
    for mellowness in [None, *VW_MELLOWNESS]:
        fractions, accuracy = [], []
        for order in orders(data, seeds):
            args = ["--loss_function", loss, "--binary", "--quiet", "-b", "18"]
            if mellowness is not None:
                args = ["--active", "--simulation", "--mellowness", str(mellowness), *args]
            workspace = vowpalwabbit.Workspace(arg_list=args)
            asked = 0
            for i in order:
                example = workspace.example(train[i])
                workspace.learn(example)
                asked += example.get_simplelabel_weight() > 0  # weight 0: not asked
                workspace.finish_example(example)
            predicted = np.array([workspace.predict(line) for line in test])
            workspace.finish()
            fractions.append(asked / len(order))
            accuracy.append(float(np.mean(predicted == truth)))
        key = ("all labels", None) if mellowness is None else ("mellowness", mellowness)
        points[key] = (float(np.mean(fractions)), float(np.mean(accuracy)))
    return points


# ============================================================================ river
RIVER_MODELS = {
    "LogisticRegression(SGD(0.01))": lambda: river_linear_model.LogisticRegression(),
    "LogisticRegression(SGD(0.1))": lambda: river_linear_model.LogisticRegression(
        optimizer=river_optim.SGD(0.1)),
    "LogisticRegression(AdaGrad(0.1))": lambda: river_linear_model.LogisticRegression(
        optimizer=river_optim.AdaGrad(0.1)),
}


def river_rows(X):
    import scipy.sparse

    X = scipy.sparse.csr_matrix(X)
    return [
        {int(j): float(v) for j, v in zip(X.indices[X.indptr[i]:X.indptr[i + 1]],
                                          X.data[X.indptr[i]:X.indptr[i + 1]])}
        for i in range(X.shape[0])
    ]


def river_accuracy(model, data, test_rows):
    if data.binary:  # the linear model's weights on the test matrix: fast and exact
        w = np.zeros(data.X_test.shape[1])
        for k, v in model.weights.items():
            w[k] = v
        scores = data.X_test @ w + model.intercept
        return float(np.mean(np.where(scores > 0, 1, -1) == np.where(data.y_test > 0, 1, -1)))
    predicted = np.array([model.predict_one(x) for x in test_rows])
    return float(np.mean(predicted == data.y_test))


def river_model(name, binary):
    model = RIVER_MODELS[name]()
    return model if binary else river_multiclass.OneVsRestClassifier(model)


def river_points(data, seeds):
    rows = river_rows(data.X)
    test_rows = None if data.binary else river_rows(data.X_test)
    labels = [bool(label > 0) if data.binary else int(label) for label in data.y]
    runs = orders(data, seeds)
    best, best_accuracy = None, -1.0
    for name in RIVER_MODELS:
        accuracy = []
        for order in runs:
            model = river_model(name, data.binary)
            for i in order:
                model.learn_one(rows[i], labels[i])
            accuracy.append(river_accuracy(model, data, test_rows))
        if np.mean(accuracy) > best_accuracy:
            best, best_accuracy = name, float(np.mean(accuracy))
    points = {("all labels", None): (1.0, best_accuracy)}
    for discount in RIVER_DISCOUNT:
        fractions, accuracy = [], []
        for seed, order in zip(seeds, runs):
            sampler = river_active.EntropySampler(
                river_model(best, data.binary), discount_factor=discount, seed=seed)
            asked = 0
            if not data.binary:  # the cold start: one row of each class, in stream order
                firsts = {}
                for i in order:
                    firsts.setdefault(labels[i], i)
                for i in sorted(firsts.values(), key=list(order).index):
                    sampler.learn_one(rows[i], labels[i])
                asked = len(firsts)
                order = [i for i in order if i not in set(firsts.values())]
            for i in order:
                _, ask = sampler.predict_one(rows[i])
                if ask:
                    asked += 1
                    sampler.learn_one(rows[i], labels[i])
            fractions.append(asked / len(data.y))
            accuracy.append(river_accuracy(sampler.classifier, data, test_rows))
        points[("discount_factor", discount)] = (
            float(np.mean(fractions)), float(np.mean(accuracy)))
    return points, best


# ============================================================================ reporting
def margin_curve(points):
    """(fractions, accuracies) of the "margin" sweep and the all-labels point, by fraction."""
    curve = sorted(value for key, value in points.items() if key[0] in ("margin", "all labels"))
    return np.array([f for f, _ in curve]), np.array([a for _, a in curve])


def curve_at(curve, fraction):
    """The curve at `fraction` of the labels, None below its smallest measured fraction."""
    fractions, accuracy = curve
    if fraction < fractions[0]:
        return None
    return float(np.interp(fraction, fractions, accuracy))


def table(data, cwrs_pts, peers):
    print(f"\n### {data.name}\n\n{data.note}\n")
    print("| method | parameter | labels | accuracy | cwrs margin at these labels |")
    print("|---|---|---:|---:|---:|")
    curve = margin_curve(cwrs_pts)
    for (strategy, value), (fraction, accuracy) in cwrs_pts.items():
        parameter = "" if value is None else f"{SWEEPS.get(strategy, ('',))[0]}={value:g}"
        print(f"| cwrs {strategy} | {parameter} | {fraction:.1%} | {accuracy:.4f} | |")
    gaps, unmeasured = [], 0
    for peer, points in peers:
        for (kind, value), (fraction, accuracy) in points.items():
            parameter = "" if value is None else f"{kind}={value:g}"
            ours = curve_at(curve, fraction)
            label = "all labels" if value is None else "active"
            if ours is None:
                unmeasured += 1
                print(f"| {peer} {label} | {parameter} | {fraction:.1%} | {accuracy:.4f} | — |")
                continue
            if kind != "all labels":
                gaps.append((ours - accuracy, peer, parameter, fraction))
            print(f"| {peer} {label} | {parameter} | {fraction:.1%} | {accuracy:.4f} | "
                  f"{ours:.4f} ({100 * (ours - accuracy):+.1f}) |")
    if gaps:
        worst = min(gaps)
        below = sum(gap < 0 for gap, *_ in gaps)
        verdict = ("on or above every peer point it covers" if not below
                   else f"below {below} of the {len(gaps)} peer points it covers")
        print(f"\nvs peers: the cwrs margin curve is {verdict}; closest: {100 * worst[0]:+.2f} "
              f"points against {worst[1]} {worst[2]} at {worst[3]:.1%} of the labels; "
              f"{unmeasured} peer point(s) below its smallest fraction of labels, not compared.")
    return curve


def speed(data):
    print("\n### Speed (synthetic training rows, one fit)\n")
    print("| model | labels | rows/s |")
    print("|---|---:|---:|")
    n_rows = len(data.y)
    for name, make in [
        ("AROW fit (all labels)", lambda: cwrs.AROW(shuffle=False)),
        ("margin (default threshold=0.5)", lambda: cwrs.SelectiveSampler(cwrs.AROW())),
        ("bbq (default kappa=0.4)", lambda: cwrs.SelectiveSampler(cwrs.AROW(), "bbq")),
        ("random (default b=1)",
         lambda: cwrs.SelectiveSampler(cwrs.AROW(), "random", random_state=0)),
        ("margin, threshold=inf (every row)",
         lambda: cwrs.SelectiveSampler(cwrs.AROW(), threshold=np.inf)),
    ]:
        best = np.inf
        for _ in range(3):
            model = make()
            start = time.perf_counter()
            model.fit(data.X, data.y)
            best = min(best, time.perf_counter() - start)
        asked = getattr(model, "n_queried_", n_rows) / n_rows
        print(f"| {name} | {asked:.1%} | {n_rows / best:,.0f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="order seed 0 only, a shorter sweep, 5,000 synthetic rows")
    parser.add_argument("--vw-loss", default="squared", choices=["squared", "logistic", "hinge"],
                        help="Vowpal Wabbit's loss function (default: squared, its own default)")
    args = parser.parse_args()
    seeds = [0] if args.quick else [0, 1, 2]
    sweeps = QUICK_SWEEPS if args.quick else SWEEPS
    started = time.time()
    load_avg = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC · {cpu_model()} · load "
          f"{load_avg:.2f} · cwrs {cwrs.__version__} · vowpalwabbit "
          f"{vowpalwabbit.__version__ if vowpalwabbit else 'not installed'} · river "
          f"{river.__version__ if river else 'not installed'} · order seeds {seeds} · VW loss "
          f"{args.vw_loss}"
          + (" · --quick" if args.quick else ""))
    datasets = load(["a1a", "w1a", "digits", "synthetic"], args.quick)
    summary = []
    all_points = {}
    for data in datasets:
        points = all_points[data.name] = cwrs_points(data, seeds, sweeps)
        peers = []
        if vowpalwabbit is not None and data.binary:
            peers.append(("VW", vw_points(data, seeds, args.vw_loss)))
        if river is not None:
            river_pts, best = river_points(data, seeds)
            peers.append((f"river {best}", river_pts))
        curve = table(data, points, peers)
        if data.name == "a1a":
            at_30 = curve_at(curve, 0.3)
            everything = points[("all labels", None)][1]
            summary.append(
                f"a1a: cwrs margin at 30% of the labels {at_30:.4f}, all labels {everything:.4f}"
                f" ({100 * (at_30 - everything):+.2f} points: "
                f"{'within' if everything - at_30 <= 0.01 else 'more than'} one point)"
            )
    print("\n### Defaults: the smallest parameter within one point of all labels everywhere\n")
    for strategy, (param, values) in sweeps.items():
        chosen = next((value for value in values if all(
            points[(strategy, value)][1] >= points[("all labels", None)][1] - 0.01
            for points in all_points.values())), None)
        if chosen is None:
            print(f"- {strategy}: no {param} of the sweep")
            continue
        used = ", ".join(f"{name} {points[(strategy, chosen)][0]:.0%}"
                         for name, points in all_points.items())
        print(f"- {strategy}: {param}={chosen:g} (labels used: {used})")
    speed(datasets[-1])
    print()
    for line in summary:
        print(line)
    print(f"\n{time.time() - started:.0f} s")


if __name__ == "__main__":
    main()
