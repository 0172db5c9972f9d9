"""Online calibration: `cwrs.CalibratedClassifier` against the raw `predict_proba` of the same
learners and two calibrated peers, progressive and held out, in one run. Prints markdown for
benchmarks/RESULTS.md ("Online calibration").

Data, scaling and metrics are those of benchmarks/calibration.py (imported from it): a1a (held
out on a1a.t), w1a, svmguide3, breast_cancer, digits (10 classes) and river's Phishing, each
stream in the seed-0 order, the dense ones standardized by a running scaler (progressive) or
the training part's statistics (held out on a stratified 30%, random_state=0); log loss with
probabilities clipped to [1e-15, 1 − 1e-15], top-label ECE with 15 equal-width bins.

Learners: CalibratedClassifier(AROW(), SCW1(), NAROW(); each method "platt", "temperature",
"isotonic"; every parameter at its default), and the raw `predict_proba` of the same learners.

- Progressive (test-then-train): row 0 gets 1/K (nothing learned yet); every later row gets
  `predict_proba` of the calibrated model as it stands, then `partial_fit` of the row. The
  script checks that the map this row-by-row loop ends with is the one a single
  `partial_fit` over the stream learns (largest difference printed). Raw learners: the same
  loop through their own `predict_proba`, the predictive probability with the label noise they
  learned (docs/design.md §3.14).
- Held out: `partial_fit` over the training rows in one seeded order (seed 0), which is also
  what the raw learner learned, then the test rows.

The map's input for second-order learners: the script also runs every calibrated learner with
the raw score s as the input (a subclass swapping `_map_input`) against the variance-normalized
margin s/√(1 + xᵀΣx) the estimator uses, and prints both progressive log losses.

Peers, in the same run:
- "river online Platt (stand-in)": river 0.26.1, the newest release on PyPI, has no
  calibration module, so the script implements river's way of calibrating
  online around river's own `StandardScaler() | LogisticRegression()` (SoftmaxRegression on
  digits), on the unscaled rows: a second river `LogisticRegression` (its default SGD, learning
  rate 0.01, one per class for more classes, normalized) learns P(y | z) from z, the logit of
  the base model's probability, progressively: predict with both, then learn both.
- "AROW + Platt by SGD": the same online Platt map σ(A·z + B) on AROW's normalized margin,
  learned by plain SGD with river's default rate 0.01 from A = 1, B = 0 instead of by Newton
  steps: what the Newton steps buy.
- "SGD + CalibratedClassifierCV": scikit-learn SGDClassifier(loss="log_loss", random_state=0)
  inside CalibratedClassifierCV(method="sigmoid", cv=3), refitted from scratch on all the rows
  so far at 10 checkpoints (every 10% of the stream); each block of 10% is scored by the
  model fitted on the rows before it (the first block gets 1/K; while a class has fewer than 3
  rows, cv=3 cannot fit and the previous model, or 1/K, stays). Held out: fitted on the whole
  training part.

    python benchmarks/calibrated.py [--quick]

`--quick` (a smoke run, < 30 s): breast_cancer, Phishing and digits, the first 400 rows of
each stream; the map's inputs compared for AROW only.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time
import warnings

import numpy as np

import cwrs

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import calibration as base  # noqa: E402  (the data, metrics and river helpers)
from _peers import cpu_model  # noqa: E402

try:
    import sklearn
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import SGDClassifier
except ImportError:  # pragma: no cover
    sys.exit("benchmarks/calibrated.py needs scikit-learn (pip install -e '.[bench]')")

try:
    import river
    from river import linear_model as river_linear_model
except ImportError:  # pragma: no cover
    river = None

SEED = base.SEED
METHODS = ("platt", "temperature", "isotonic")
LEARNERS = {"AROW": cwrs.AROW, "SCW1": cwrs.SCW1, "NAROW": cwrs.NAROW}
CHECKPOINTS = 10
SGD_RATE = 0.01  # river's default learning rate (optim.SGD(0.01))
LOGIT_LIMIT = 30.0


class ScoreInput(cwrs.CalibratedClassifier):
    """The calibrated learner with the raw score as the map's input, for the comparison."""

    _map_input = staticmethod(lambda scores, variances: np.clip(scores, -1e6, 1e6))


# ============================================================================ cwrs
def progressive(make, data):
    """Row-by-row progressive probabilities of a CalibratedClassifier (or a raw learner)."""
    classes = np.arange(data.n_classes)
    X, y = data.X_stream, data.y_stream
    model = make()
    P = np.empty((len(y), data.n_classes))
    P[0] = 1.0 / data.n_classes
    model.partial_fit(X[:1], y[:1], classes=classes)
    for i in range(1, len(y)):
        row = X[i:i + 1]
        P[i] = model.predict_proba(row)[0]
        model.partial_fit(row, y[i:i + 1])
    return P, model


def map_difference(looped, data, make):
    """max |Δ| between the map of the row-by-row loop and that of one partial_fit."""
    whole = make().partial_fit(data.X_stream, data.y_stream, classes=np.arange(data.n_classes))
    return max(
        float(np.max(np.abs(a - whole.calibration_[k]))) if a.size else 0.0
        for k, a in looped.calibration_.items() if isinstance(a, np.ndarray)
    )


def heldout(make, data):
    order = np.random.default_rng(SEED).permutation(len(data.y_train))
    model = make().partial_fit(data.X_train[order], data.y_train[order],
                               classes=np.arange(data.n_classes))
    return model.predict_proba(data.X_test)


def raw_progressive(cls, data):
    """The learner's own `predict_proba`, row by row (its label noise s² moves with each row)."""
    return progressive(cls, data)[0]


def sgd_platt(data):
    """AROW's progressive normalized margins, mapped by σ(A·z + B) learned by plain SGD."""
    _, scores, variances = cwrs.AROW().partial_fit(
        data.X_stream, data.y_stream, classes=np.arange(data.n_classes), return_scores=True)
    z = scores / np.sqrt(1.0 + variances)
    n_maps = 1 if z.ndim == 1 else z.shape[1]
    z = z.reshape(len(z), n_maps)
    targets = (data.y_stream[:, None] == (np.arange(n_maps) + (n_maps == 1))).astype(float)
    a, b = np.ones(n_maps), np.zeros(n_maps)
    p = np.empty_like(z)
    for i in range(len(z)):
        p[i] = 1.0 / (1.0 + np.exp(-(a * z[i] + b)))
        residual = p[i] - targets[i]
        a -= SGD_RATE * residual * z[i]
        b -= SGD_RATE * residual
    if n_maps == 1:
        return np.column_stack([1 - p[:, 0], p[:, 0]])
    return p / p.sum(axis=1, keepdims=True)


# ============================================================================ peers
def calibrated_sgd():
    return CalibratedClassifierCV(SGDClassifier(loss="log_loss", random_state=SEED),
                                  method="sigmoid", cv=3)


def fit_quietly(model, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(X, y)


def sklearn_progressive(data):
    """Refitted on the rows so far at every 10% of the stream; each block scored by the model
    of the rows before it (the first block: 1/K)."""
    n, K = len(data.y_stream), data.n_classes
    edges = np.linspace(0, n, CHECKPOINTS + 1).astype(int)
    P = np.full((n, K), 1.0 / K)
    model = None
    for start, stop in zip(edges[1:-1], edges[2:]):
        try:
            model = fit_quietly(calibrated_sgd(), data.X_stream[:start], data.y_stream[:start])
        except ValueError:  # a class with fewer than 3 rows so far: the previous model stays
            if model is None:
                continue
        P[start:stop][:, model.classes_] = model.predict_proba(data.X_stream[start:stop])
        missing = np.setdiff1d(np.arange(K), model.classes_)
        P[start:stop][:, missing] = 0.0
    return P


def sklearn_heldout(data):
    return fit_quietly(calibrated_sgd(), data.X_train, data.y_train).predict_proba(data.X_test)


def logit(p):
    p = min(max(p, math.exp(-LOGIT_LIMIT)), 1 - math.exp(-LOGIT_LIMIT))
    return math.log(p / (1 - p))


class RiverOnlinePlatt:
    """Stand-in for an online Platt CalibratedClassifier around a river classifier: one river
    LogisticRegression (default SGD, rate 0.01) per map on z = logit of the base probability."""

    def __init__(self, n_classes):
        self.n_classes = n_classes
        self.base = base.river_model(n_classes)
        self.maps = [river_linear_model.LogisticRegression()
                     for _ in range(1 if n_classes == 2 else n_classes)]

    def _inputs(self, x):
        p = base.river_probabilities(self.base, x, self.n_classes)
        columns = p[1:] if self.n_classes == 2 else p
        return [{"z": logit(float(q))} for q in columns]

    def predict(self, x):
        q = np.array([m.predict_proba_one(z).get(True, 0.5)
                      for m, z in zip(self.maps, self._inputs(x))])
        if self.n_classes == 2:
            return np.array([1 - q[0], q[0]])
        return q / q.sum() if q.sum() > 0 else np.full(self.n_classes, 1 / self.n_classes)

    def learn(self, x, label):
        targets = [label == 1] if self.n_classes == 2 else [label == k for k in
                                                               range(self.n_classes)]
        for m, z, t in zip(self.maps, self._inputs(x), targets):
            m.learn_one(z, bool(t))
        self.base.learn_one(x, base.river_label(label, self.n_classes))


def river_progressive(data):
    model = RiverOnlinePlatt(data.n_classes)
    rows = base.as_dicts(data.raw_stream)
    P = np.empty((len(rows), data.n_classes))
    for i, (x, label) in enumerate(zip(rows, data.y_stream)):
        P[i] = model.predict(x)
        model.learn(x, int(label))
    return P


def river_heldout(data):
    model = RiverOnlinePlatt(data.n_classes)
    rows = base.as_dicts(data.raw_train)
    for i in np.random.default_rng(SEED).permutation(len(rows)):
        model.learn(rows[i], int(data.y_train[i]))
    return np.array([model.predict(x) for x in base.as_dicts(data.raw_test)])


# ============================================================================ report
def cell(m, key):
    return "—" if m is None else f"{m[key]:.3f}"


def table(data, rows):
    lines = [f"### {data.name}", "", data.description + ".", "",
             "| learner | prog. log loss | prog. ECE | prog. Brier | prog. accuracy "
             "| held-out log loss | held-out ECE |",
             "|---|--:|--:|--:|--:|--:|--:|"]
    for label, prog, held in rows:
        accuracy = "—" if prog is None else f"{100 * prog['accuracy']:.1f}%"
        lines.append(f"| {label} | {cell(prog, 'log loss')} | {cell(prog, 'ECE')} | "
                     f"{cell(prog, 'Brier')} | {accuracy} | {cell(held, 'log loss')} | "
                     f"{cell(held, 'ECE')} |")
    return "\n".join(lines)


def goal_line(data, rows):
    """Whether some calibrated second-order learner beats both peers on progressive log loss
    and ECE."""
    peers = [(label, prog) for label, prog, _ in rows
             if label.startswith(("river", "SGD +"))]
    ours = [(label, prog) for label, prog, _ in rows if label.startswith("Calibrated")]
    winners = [label for label, prog in ours
               if all(prog["log loss"] < p["log loss"] and prog["ECE"] < p["ECE"]
                      for _, p in peers)]
    best = min(ours, key=lambda entry: entry[1]["log loss"])
    return (f"| {data.name} | {len(winners)} of {len(ours)} | {best[0]} "
            f"({best[1]['log loss']:.3f} / {best[1]['ECE']:.3f}) | "
            + " | ".join(f"{p['log loss']:.3f} / {p['ECE']:.3f}" for _, p in peers) + " |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="breast_cancer, Phishing and digits, the first 400 rows; the "
                        "map's inputs compared for AROW only")
    args = parser.parse_args()
    started, load = time.time(), os.getloadavg()[0]
    names = (["breast_cancer", "phishing", "digits"] if args.quick else
             ["a1a", "w1a", "svmguide3", "breast_cancer", "digits", "phishing"])
    datasets = base.load_datasets(names)
    if args.quick:
        datasets = [base.first_rows(data, base.QUICK_ROWS) for data in datasets]

    results, inputs, worst = [], [], 0.0
    for data in datasets:
        rows = []
        for name, cls in LEARNERS.items():
            rows.append((f"{name} raw predict_proba", base.metrics(raw_progressive(cls, data),
                                                                   data.y_stream),
                         base.metrics(heldout(cls, data), data.y_test)))
            for method in METHODS:
                def make(cls=cls, method=method):
                    return cwrs.CalibratedClassifier(cls(), method=method)

                def make_score(cls=cls, method=method):
                    return ScoreInput(cls(), method=method)

                P, looped = progressive(make, data)
                worst = max(worst, map_difference(looped, data, make))
                prog = base.metrics(P, data.y_stream)
                rows.append((f"CalibratedClassifier({name}, {method})", prog,
                             base.metrics(heldout(make, data), data.y_test)))
                if args.quick and name != "AROW":
                    continue
                score_loss = base.metrics(progressive(make_score, data)[0],
                                          data.y_stream)["log loss"]
                inputs.append((data.name, name, method, score_loss, prog["log loss"]))
        rows.append(("AROW + Platt by SGD (rate 0.01)", base.metrics(sgd_platt(data),
                                                                      data.y_stream), None))
        if river is not None:
            rows.append(("river online Platt (stand-in)",
                         base.metrics(river_progressive(data), data.y_stream),
                         base.metrics(river_heldout(data), data.y_test)))
        rows.append(("SGD + CalibratedClassifierCV (refit every 10%)",
                     base.metrics(sklearn_progressive(data), data.y_stream),
                     base.metrics(sklearn_heldout(data), data.y_test)))
        results.append((data, rows))
        print(f"({data.name} done, {time.time() - started:.0f} s)", file=sys.stderr)

    print(f"{cpu_model()}, {os.cpu_count()} cores · Python {platform.python_version()} · "
          f"cwrs {cwrs.__version__} · numpy {np.__version__} · sklearn {sklearn.__version__} · "
          f"river {river.__version__ if river is not None else 'not installed'} · load "
          f"average {load:.2f} at the start · seed {SEED}" + (" · --quick" if args.quick else ""))
    print()
    print(f"Check: the map a row-by-row loop (predict_proba, then partial_fit of the row) ends "
          f"with and the map of one partial_fit over the stream differ by at most {worst:.1e}.")
    print()
    print("### Summary")
    print()
    print("Progressive log loss / ECE. Goal: a calibrated cwrs second-order learner below both "
          "peers on both.")
    print()
    peer_names = (["river online Platt (stand-in)"] if river is not None else []) + \
        ["SGD + CalibratedClassifierCV"]
    print("| data set | calibrated learners below both peers on both | best calibrated by log "
          "loss | " + " | ".join(peer_names) + " |")
    print("|---|--:|---|" + "--:|" * len(peer_names))
    for data, rows in results:
        print(goal_line(data, rows))
    print()
    print("AROW alone, progressive log loss / ECE (the guide's table):")
    print()
    columns = ["AROW raw predict_proba"] + [f"CalibratedClassifier(AROW, {m})" for m in METHODS]
    print("| data set | AROW predict_proba | " + " | ".join(
        f"AROW, {m}" for m in METHODS) + " | " + " | ".join(peer_names) + " |")
    print("|---|" + "--:|" * (len(columns) + len(peer_names)))
    for data, rows in results:
        by_label = {label: prog for label, prog, _ in rows}
        peers = [prog for label, prog, _ in rows if label.startswith(("river", "SGD +"))]
        cells = [by_label[label] for label in columns] + peers
        print(f"| {data.name} | " + " | ".join(
            f"{m['log loss']:.3f} / {m['ECE']:.3f}" for m in cells) + " |")
    for data, rows in results:
        print()
        print(table(data, rows))
    print()
    print("### The map's input for second-order learners")
    print()
    print("Progressive log loss with the raw score s and with the variance-normalized margin "
          "s/√(1 + xᵀΣx) as the map's input (the estimator's choice: `map_input`).")
    print()
    print("| data set | learner | method | score s | s/√(1 + v) | better |")
    print("|---|---|---|--:|--:|---|")
    wins = 0
    for name, learner, method, score_loss, normalized_loss in inputs:
        better = "s/√(1 + v)" if normalized_loss < score_loss else "s"
        wins += normalized_loss < score_loss
        print(f"| {name} | {learner} | {method} | {score_loss:.3f} | {normalized_loss:.3f} | "
              f"{better} |")
    print()
    print(f"s/√(1 + v) has the lower progressive log loss in {wins} of {len(inputs)} cases.")
    print()
    print(f"Run time: {time.time() - started:.0f} s.")


if __name__ == "__main__":
    main()
