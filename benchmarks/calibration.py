"""Calibration of the classifiers' probabilities: how well `predict_proba` (and, for the
first-order learners, the logistic of the margin) estimates P(y | x), against scikit-learn and
river in the same run. Prints markdown tables for benchmarks/RESULTS.md.

Probabilities:

- Second-order learners (`cls._second_order`: SOP, CW, ExactCW, AROW, NAROW, SCW1, SCW2, NHERD,
  IELLIP; AROW also with covariance="full"), two rows each: "Φ", `predict_proba`, the
  predictive probability Φ(m/√(v + s²)), m = μ·x (+ bias), v = xᵀΣx and s² the label noise the
  model learned from the rows so far; and "Φ₀", `predict_posterior_proba`, the probability
  under the weights' Gaussian alone, Φ(m/√v). More classes: the probability that each class
  scores highest (see `help(cwrs.AROW.predict_proba)`).
- First-order learners (Perceptron, PA, PA1, PA2, ALMA, ROMMA, AggressiveROMMA, OGD, AdaGrad,
  FTRL) have no `predict_proba`: the logistic of the margin σ(m), the softmax of the class
  scores for more classes. Neither is fitted to anything: these are the models' raw
  probabilities, the way a user would read them.

Protocols (every learner at its defaults):

- Progressive (test-then-train): one pass over the stream in a random order drawn from seed 0
  (svmguide3 is stored sorted by label), each row scored before it is learned. For cwrs on two
  classes, "Φ₀" and "σ" come from `partial_fit(X, y, classes=..., return_scores=True)`:
  Φ(score/√variance) (1/2 where the variance is 0) or σ(score). The script checks this on the
  first rows of every binary data set against a row-by-row loop (`predict_posterior_proba` of
  the model at that moment, or σ(decision_function), then `partial_fit` of the row): the two
  agree to ~1e-16 (the largest difference is printed with the tables). "Φ", whose s² moves with
  every row, and every second-order probability on more classes (digits) come from that
  row-by-row loop itself (exact); the first-order ones from the scores, which are
  decision_function's bit for bit. The first row of a stream, before any
  learning, scores 0 for every class: probability 1/2 (1/K).
- Held-out: one training pass (`fit` with `random_state=0`, which shuffles), then the test
  rows. a1a is tested on a1a.t (30,956 rows); the other data sets on a stratified 70/30 split
  (random_state=0); the synthetic stream on its last 1,000 rows after training on the first
  20,000.

Data sets: a1a (+ a1a.t), w1a, svmguide3 and breast_cancer from the shared folder
(`CWRS_SHARED_DATASETS`, default ../shared/datasets next to the repository); digits from
scikit-learn (10 classes, X/16); river's bundled Phishing (1,250 rows, 9 features); and a
synthetic imbalanced stream: x ~ N(0, I_20), y = 1 where w·x + ε > t with w a random unit vector
(seed 0), ε ~ N(0, 1) and t the 98th percentile of w·x + ε (exactly 2% positives, 21,000
rows). Flipping 5% of the labels at random cannot keep 2% positives (it alone makes ≥ 4.9% of
the rows positive), so the noise is on the margin instead: the true probability is
P(y = 1 | x) = Φ(w·x − t), shown as the "true P(y | x)" row. The dense sets (breast_cancer,
svmguide3, digits, Phishing) are standardized: held-out with the mean and standard deviation of
the training part; progressive with a running scaler, each row scaled once, on arrival, with the
statistics of the rows so far (itself included), so no later row leaks in. a1a and w1a (binary
features) and the synthetic stream (already standard) are not scaled.

Metrics, on the probabilities P (rows × classes), with the predicted class the one of highest
probability (ties to the first class):
- ECE: top-label expected calibration error (Guo et al. 2017), 15 equal-width bins of the
  confidence (the predicted class's probability) over (0, 1]: Σ_b |B_b|/n · |acc(B_b) − conf(B_b)|.
- Brier: two classes, mean (p − y)² with p = P(y = 1); more classes, mean Σ_k (p_k − 1[y = k])².
- Log loss: mean −log p_y with p_y clipped to [1e-15, 1 − 1e-15] (scikit-learn's old eps).
- Accuracy of the predicted class, and conf − acc: the mean confidence minus the accuracy, in
  points (> 0 overconfident, < 0 underconfident on the whole).
- Saturated: the share of rows whose predicted-class probability is within 1e-6 of 1 (two
  classes: p < 1e-6 or p > 1 − 1e-6).

Peers in the same run: scikit-learn LogisticRegression (batch, C=1, max_iter=1000: a held-out
reference), scikit-learn SGDClassifier(loss="log_loss") (its defaults; progressive one row per
`partial_fit` call, predict_proba before each; held-out one shuffled pass: max_iter=1,
tol=None, random_state=0), river `preprocessing.StandardScaler() |
linear_model.LogisticRegression()` (SoftmaxRegression on digits; progressive
predict_proba_one then learn_one on dicts of the unscaled rows, every feature present; held-out
one pass in a seeded order; river learns the classes as they come, so a row of a class not
seen yet gets probability 0, and the script notes how many such rows there are). river 0.26
has no `river.calibration` module (no CalibratedClassifier); the script says whether the
installed river has one, and does not run it.

    python benchmarks/calibration.py [--quick]

`--quick` (a smoke run, ~8 s): AROW, AROW full, SCW1 and PA1 and the peers on breast_cancer,
Phishing and digits, progressive over the first 400 rows of each stream.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional

import numpy as np
from scipy.special import expit, ndtr, softmax

import cwrs

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _peers import cpu_model  # noqa: E402

try:
    import sklearn
    from sklearn.datasets import load_digits
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression, SGDClassifier
    from sklearn.model_selection import train_test_split
except ImportError:  # pragma: no cover - the data and the peers need scikit-learn
    sys.exit("benchmarks/calibration.py needs scikit-learn (pip install -e '.[bench]')")

try:
    import river
    from river import linear_model as river_linear_model
    from river import preprocessing as river_preprocessing
except ImportError:  # pragma: no cover
    river = None

try:
    from river import calibration as river_calibration
except ImportError:
    river_calibration = None

SHARED = Path(
    os.environ.get("CWRS_SHARED_DATASETS")
    or Path(__file__).resolve().parents[2] / "shared" / "datasets"
)
SEED = 0
N_BINS = 15
EPS = 1e-15
SATURATION = 1e-6
VERIFY_ROWS = 100
QUICK_ROWS = 400
SYNTHETIC_ROWS, SYNTHETIC_TEST, SYNTHETIC_D = 21_000, 1_000, 20
POSITIVE_RATE, MARGIN_NOISE = 0.02, 1.0


# ===================================================================================== data
@dataclass
class DataSet:
    """A stream (in its progressive order, scaled as the progressive protocol scales it) and a
    held-out split; labels are class indices 0..K-1. `true_*` are P(y = 1 | x) where known."""

    name: str
    description: str
    n_classes: int
    X_stream: object
    y_stream: np.ndarray
    raw_stream: object  # unscaled rows in the same order, for river's own scaler
    X_train: object
    y_train: np.ndarray
    raw_train: object
    X_test: object
    y_test: np.ndarray
    raw_test: object
    true_stream: Optional[np.ndarray] = None
    true_test: Optional[np.ndarray] = None


def running_standardize(X):
    """Each row scaled with the mean and standard deviation (ddof 0) of the rows up to and
    including it; a feature with no spread yet is centred only."""
    counts = np.arange(1, len(X) + 1)[:, None]
    mean = np.cumsum(X, axis=0) / counts
    second = np.cumsum(X * X, axis=0) / counts
    std = np.sqrt(np.maximum(second - mean * mean, 0.0))
    std[std < 1e-12] = 1.0
    return (X - mean) / std


def standardize(X_train, X_test):
    mean, std = X_train.mean(axis=0), X_train.std(axis=0)
    std[std < 1e-12] = 1.0
    return (X_train - mean) / std, (X_test - mean) / std


def as_indices(y):
    """Labels as class indices 0..K-1 (for two classes, 1 is the larger label)."""
    return np.unique(y, return_inverse=True)[1].astype(np.int64)


def make_dataset(name, description, X, y, dense, X_test=None, y_test=None, true=None,
                 train_index=None, test_index=None):
    """The progressive stream (the rows in the seed-0 order) and the held-out split: the given
    test rows, the given indices, or a stratified 70/30 split."""
    y = as_indices(y)
    order = np.random.default_rng(SEED).permutation(len(y))
    if X_test is None:
        if train_index is None:
            train_index, test_index = train_test_split(
                np.arange(len(y)), test_size=0.3, stratify=y, random_state=SEED)
        X_train, y_train, X_test, y_test = X[train_index], y[train_index], X[test_index], \
            y[test_index]
    else:
        X_train, y_train, y_test = X, y, as_indices(y_test)
    raw_stream, raw_train, raw_test = X[order], X_train, X_test
    X_stream = running_standardize(X[order]) if dense else X[order]
    if dense:
        X_train, X_test = standardize(X_train, X_test)
    return DataSet(
        name, description, int(y.max()) + 1, X_stream, y[order], raw_stream, X_train, y_train,
        raw_train, X_test, y_test, raw_test,
        None if true is None else true[order],
        None if true is None or test_index is None else true[test_index])


def first_rows(data, n):
    """The data set with its progressive stream cut to its first n rows."""
    return replace(data, X_stream=data.X_stream[:n], y_stream=data.y_stream[:n],
                   raw_stream=data.raw_stream[:n],
                   true_stream=None if data.true_stream is None else data.true_stream[:n])


def load_shared(name):
    X = np.load(SHARED / f"{name}.X.npy")
    y = np.load(SHARED / f"{name}.y.npy")
    return X, y


def synthetic():
    rng = np.random.default_rng(SEED)
    w = rng.normal(size=SYNTHETIC_D)
    w /= np.linalg.norm(w)
    X = rng.normal(size=(SYNTHETIC_ROWS, SYNTHETIC_D))
    margin = X @ w
    noisy = margin + MARGIN_NOISE * rng.normal(size=SYNTHETIC_ROWS)
    threshold = np.quantile(noisy, 1 - POSITIVE_RATE)
    y = (noisy > threshold).astype(np.int64)
    true = ndtr((margin - threshold) / MARGIN_NOISE)
    return X, y, true


def load_datasets(names):
    datasets = []
    missing = []
    for name in names:
        if name in ("a1a", "w1a", "svmguide3", "breast_cancer"):
            if not (SHARED / f"{name}.X.npy").exists():
                missing.append(name)
                continue
            X, y = load_shared(name)
            if name == "a1a":
                X_test, y_test = cwrs.load_svmlight(SHARED / "a1a.t.libsvm", n_features=123)
                X_test = X_test.toarray() if hasattr(X_test, "toarray") else X_test
                datasets.append(make_dataset(
                    name, f"a1a: {len(y):,} rows × 123 binary features ({np.mean(y > 0):.1%} "
                    f"positive); held-out: a1a.t, {len(y_test):,} rows",
                    X, y, dense=False, X_test=X_test, y_test=y_test))
            else:
                dense = name in ("svmguide3", "breast_cancer")
                datasets.append(make_dataset(
                    name, f"{name}: {len(y):,} rows × {X.shape[1]} "
                    f"{'features, standardized' if dense else 'binary features'} "
                    f"({np.mean(y > 0):.1%} positive)", X, y, dense=dense))
        elif name == "digits":
            X, y = load_digits(return_X_y=True)
            datasets.append(make_dataset(
                name, f"digits: {len(y):,} rows × 64 features (X/16, standardized), 10 classes",
                X / 16.0, y, dense=True))
        elif name == "phishing":
            if river is None:
                missing.append(name)
                continue
            rows = list(river.datasets.Phishing())
            keys = sorted(rows[0][0])
            X = np.array([[float(x[key]) for key in keys] for x, _ in rows])
            y = np.array([bool(label) for _, label in rows], dtype=np.int64)
            datasets.append(make_dataset(
                name, f"Phishing (river): {len(y):,} rows × {X.shape[1]} features, "
                f"standardized ({np.mean(y > 0):.1%} positive)", X, y, dense=True))
        elif name == "synthetic":
            X, y, true = synthetic()
            n_train = SYNTHETIC_ROWS - SYNTHETIC_TEST
            datasets.append(make_dataset(
                name, f"synthetic: {SYNTHETIC_ROWS:,} rows × {SYNTHETIC_D} Gaussian features, "
                f"{np.mean(y):.1%} positive, margin noise N(0, {MARGIN_NOISE:g}); held-out: "
                f"train {n_train:,} / test {SYNTHETIC_TEST:,}", X, y, dense=False, true=true,
                train_index=np.arange(n_train), test_index=np.arange(n_train, SYNTHETIC_ROWS)))
    if missing:
        print(f"(skipped, not found: {', '.join(missing)})", file=sys.stderr)
    return datasets


# ================================================================================== metrics
def metrics(P, y):
    """{name: value} of the probabilities P (n × K) for the class indices y."""
    n = len(y)
    rows = np.arange(n)
    predicted = np.argmax(P, axis=1)
    confidence = P[rows, predicted]
    correct = predicted == y
    bins = np.clip(np.ceil(confidence * N_BINS).astype(int) - 1, 0, N_BINS - 1)
    ece = 0.0
    for b in range(N_BINS):
        members = bins == b
        if members.any():
            ece += members.sum() / n * abs(correct[members].mean() - confidence[members].mean())
    onehot = np.zeros_like(P)
    onehot[rows, y] = 1.0
    if P.shape[1] == 2:
        brier = np.mean((P[:, 1] - y) ** 2)
    else:
        brier = np.mean(np.sum((P - onehot) ** 2, axis=1))
    log_loss = -np.mean(np.log(np.clip(P[rows, y], EPS, 1 - EPS)))
    return {"log loss": log_loss, "ECE": ece, "Brier": brier, "accuracy": correct.mean(),
            "conf − acc": confidence.mean() - correct.mean(),
            "saturated": np.mean(confidence > 1 - SATURATION)}


def binary(p1):
    return np.column_stack([1.0 - p1, p1])


# ===================================================================================== cwrs
def gaussian_probability(scores, variances):
    with np.errstate(divide="ignore", invalid="ignore"):
        p = ndtr(scores / np.sqrt(variances))
    return np.where(variances > 0, p, 0.5)


def probabilities_now(estimator, X, posterior=False):
    """What a user reads as the probabilities of a fitted cwrs classifier (the posterior form
    of a second-order one if `posterior`)."""
    if type(estimator)._second_order:
        return (estimator.predict_posterior_proba if posterior else estimator.predict_proba)(X)
    scores = estimator.decision_function(X)
    return binary(expit(scores)) if scores.ndim == 1 else softmax(scores, axis=1)


def posterior_now(estimator, X):
    return probabilities_now(estimator, X, posterior=True)


def predict_then_learn(model, X, y, classes, probabilities):
    """Progressive probabilities by a row loop: row 0 uniform (nothing learned yet), then each
    row's `probabilities(model, row)` before `partial_fit` of the row."""
    P = np.empty((len(y), len(classes)))
    P[0] = 1.0 / len(classes)
    model.partial_fit(X[:1], y[:1], classes=classes)
    for i in range(1, len(y)):
        P[i] = probabilities(model, X[i:i + 1])[0]
        model.partial_fit(X[i:i + 1], y[i:i + 1])
    return P


def cwrs_progressive(make, data, kind):
    classes = np.arange(data.n_classes)
    estimator = make()
    second_order = type(estimator)._second_order
    if kind == "Φ" or data.n_classes > 2 and second_order:
        # The predictive probability's s² moves with every row, and the multiclass Gaussian
        # probability is a quadrature, not a function of the scores alone: the exact
        # row-by-row loop.
        probabilities = probabilities_now if kind == "Φ" else posterior_now
        return predict_then_learn(estimator, data.X_stream, data.y_stream, classes,
                                  probabilities)
    _, scores, variances = estimator.partial_fit(
        data.X_stream, data.y_stream, classes=classes, return_scores=True)
    if np.isnan(scores).any():
        raise RuntimeError(f"{type(estimator).__name__}: NaN scores on {data.name}")
    if data.n_classes > 2:
        return softmax(scores, axis=1)
    if second_order:
        return binary(gaussian_probability(scores, variances))
    return binary(expit(scores))


def verify_progressive(make, data, P_batch, rows=VERIFY_ROWS):
    """max |Δ| between the progressive probabilities from the scores and a row-by-row loop
    (the model's probabilities of the row, then partial_fit of the row), on the first rows."""
    X, y = data.X_stream[:rows], data.y_stream[:rows]
    P = predict_then_learn(make(), X, y, np.arange(data.n_classes), posterior_now)
    return np.max(np.abs(P - P_batch[:len(P)]))


def cwrs_heldout(make, data, kind):
    estimator = make(random_state=SEED).fit(data.X_train, data.y_train)
    return probabilities_now(estimator, data.X_test, posterior=kind == "Φ₀")


def cwrs_learners(quick):
    """[(label, factory, kind)] for every classifier at its defaults, plus AROW full; the
    second-order learners twice, predictive ("Φ") and posterior ("Φ₀")."""
    learners = []
    for cls in cwrs.CLASSIFIERS:
        if quick and cls.__name__ not in ("AROW", "SCW1", "PA1"):
            continue
        made = [(cls.__name__, cls)]
        if cls is cwrs.AROW:
            made.append(("AROW full", lambda **kw: cwrs.AROW(covariance="full", **kw)))
        for label, make in made:
            if not cls._second_order:
                learners.append((label, make, "σ"))
                continue
            learners.append((label, make, "Φ"))
            learners.append((f"{label}, posterior", make, "Φ₀"))
    return learners


# ==================================================================================== peers
def sgd(**kw):
    return SGDClassifier(loss="log_loss", random_state=SEED, **kw)


def sgd_progressive(data):
    return predict_then_learn(sgd(), data.X_stream, data.y_stream, np.arange(data.n_classes),
                              lambda model, X: model.predict_proba(X))


def sgd_heldout(data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = sgd(max_iter=1, tol=None, shuffle=True).fit(data.X_train, data.y_train)
    return model.predict_proba(data.X_test)


def logistic_heldout(data):
    model = LogisticRegression(C=1.0, max_iter=1000).fit(data.X_train, data.y_train)
    return model.predict_proba(data.X_test)


def river_model(n_classes):
    last = (river_linear_model.LogisticRegression() if n_classes == 2
            else river_linear_model.SoftmaxRegression())
    return river_preprocessing.StandardScaler() | last


def as_dicts(X):
    X = X.toarray() if hasattr(X, "toarray") else np.asarray(X)
    return [dict(enumerate(row.tolist())) for row in X]


def river_label(y, n_classes):
    return bool(y) if n_classes == 2 else int(y)


def river_probabilities(model, x, n_classes):
    """river's probabilities as a row; a class the model has not seen yet gets 0 (an empty
    answer, before any class is seen, 1/K)."""
    answer = model.predict_proba_one(x)
    if not answer:
        return np.full(n_classes, 1.0 / n_classes)
    if n_classes == 2:
        return np.array([answer.get(False, 0.0), answer.get(True, 0.0)])
    return np.array([answer.get(k, 0.0) for k in range(n_classes)])


def unseen_class_rows(P, y):
    """Rows whose class got probability exactly 0: river learns the classes as they come."""
    return P[np.arange(len(y)), y] == 0.0


def river_progressive(data):
    model = river_model(data.n_classes)
    rows = as_dicts(data.raw_stream)
    P = np.empty((len(rows), data.n_classes))
    for i, (x, label) in enumerate(zip(rows, data.y_stream)):
        P[i] = river_probabilities(model, x, data.n_classes)
        model.learn_one(x, river_label(label, data.n_classes))
    return P


def river_heldout(data):
    model = river_model(data.n_classes)
    rows = as_dicts(data.raw_train)
    for i in np.random.default_rng(SEED).permutation(len(rows)):
        model.learn_one(rows[i], river_label(data.y_train[i], data.n_classes))
    return np.array([river_probabilities(model, x, data.n_classes)
                     for x in as_dicts(data.raw_test)])


# ==================================================================================== report
COLUMNS = ("log loss", "ECE", "Brier", "accuracy", "conf − acc", "saturated")


def fmt(name, value):
    if value is None:
        return "—"
    if name in ("accuracy", "saturated"):
        return f"{100 * value:.1f}%"
    if name == "conf − acc":
        return f"{100 * value:+.1f}"
    return f"{value:.3f}" if value < 10 else f"{value:.2f}"


def table(data, rows):
    """rows: [(label, kind, progressive metrics or None, held-out metrics or None)]."""
    lines = [f"### {data.name}", "", data.description + ".", "",
             "| learner | p | " + " | ".join(f"prog. {c}" for c in COLUMNS) + " | "
             + " | ".join(f"held-out {c}" for c in COLUMNS) + " |",
             "|---|:-:|" + "--:|" * (2 * len(COLUMNS))]
    for label, kind, progressive, heldout in rows:
        cells = [fmt(c, None if progressive is None else progressive[c]) for c in COLUMNS]
        cells += [fmt(c, None if heldout is None else heldout[c]) for c in COLUMNS]
        lines.append(f"| {label} | {kind} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def summary(results):
    lines = ["### Summary", "",
             "Progressive log loss / ECE; the best cwrs second-order learner by progressive log "
             "loss; scikit-learn LogisticRegression is batch, held out.", "",
             "| data set | best cwrs second-order | its log loss / ECE | AROW | AROW, posterior "
             "| AROW held-out saturated (Φ / Φ₀) | SGD log_loss | river LR | "
             "LogisticRegression (held-out) |",
             "|---|---|--:|--:|--:|--:|--:|--:|--:|"]
    for data, rows in results:
        by_label = {label: (progressive, heldout) for label, _, progressive, heldout in rows}
        second = [(progressive["log loss"], label) for label, kind, progressive, _ in rows
                  if kind == "Φ" and progressive is not None]
        _, best = min(second)

        def pair(label, which=0):
            entry = by_label.get(label)
            if entry is None or entry[which] is None:
                return "—"
            m = entry[which]
            return f"{fmt('log loss', m['log loss'])} / {fmt('ECE', m['ECE'])}"

        saturated = " / ".join(
            "—" if by_label.get(label) is None else fmt("saturated", by_label[label][1]["saturated"])
            for label in ("AROW", "AROW, posterior"))
        river_label_ = next((label for label in by_label if label.startswith("river")), None)
        lines.append(
            f"| {data.name} | {best} | {pair(best)} | {pair('AROW')} | "
            f"{pair('AROW, posterior')} | {saturated} | "
            f"{pair('SGD log_loss')} | {pair(river_label_) if river_label_ else '—'} | "
            f"{pair('LogisticRegression', 1)} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="AROW, AROW full, SCW1 and PA1 on breast_cancer, Phishing and "
                        f"digits, progressive over the first {QUICK_ROWS} rows only")
    args = parser.parse_args()
    started, load = time.time(), os.getloadavg()[0]
    names = (["breast_cancer", "phishing", "digits"] if args.quick else
             ["a1a", "w1a", "svmguide3", "breast_cancer", "digits", "phishing", "synthetic"])
    datasets = load_datasets(names)
    if args.quick:
        datasets = [first_rows(data, QUICK_ROWS) for data in datasets]
    learners = cwrs_learners(args.quick)

    results = []
    notes = {}
    worst_difference = 0.0
    for data in datasets:
        rows = []
        for label, make, kind in learners:
            P_progressive = cwrs_progressive(make, data, kind)
            if kind != "Φ" and not (data.n_classes > 2 and kind == "Φ₀"):
                worst_difference = max(worst_difference,
                                       verify_progressive(make, data, P_progressive))
            rows.append((label, kind, metrics(P_progressive, data.y_stream),
                         metrics(cwrs_heldout(make, data, kind), data.y_test)))
        rows.append(("SGD log_loss", "peer", metrics(sgd_progressive(data), data.y_stream),
                     metrics(sgd_heldout(data), data.y_test)))
        if river is not None:
            label = "river LR" if data.n_classes == 2 else "river softmax"
            P_river = river_progressive(data)
            rows.append((label, "peer", metrics(P_river, data.y_stream),
                         metrics(river_heldout(data), data.y_test)))
            unseen = unseen_class_rows(P_river, data.y_stream)
            if unseen.any():
                notes[data.name] = (
                    f"{label} on {data.name}: {unseen.sum()} progressive rows of a class it "
                    "had not seen yet get probability 0 (clipped to 1e-15); without them its "
                    "progressive log loss is "
                    f"{metrics(P_river[~unseen], data.y_stream[~unseen])['log loss']:.3f}.")
        rows.append(("LogisticRegression", "batch", None,
                     metrics(logistic_heldout(data), data.y_test)))
        if data.true_stream is not None:
            rows.append(("true P(y \\| x)", "—", metrics(binary(data.true_stream), data.y_stream),
                         metrics(binary(data.true_test), data.y_test)))
        results.append((data, rows))
        print(f"({data.name} done, {time.time() - started:.0f} s)", file=sys.stderr)

    versions = (f"cwrs {cwrs.__version__} · numpy {np.__version__} · sklearn "
                f"{sklearn.__version__} · river "
                f"{river.__version__ if river is not None else 'not installed'}")
    print(f"{cpu_model()}, {os.cpu_count()} cores · Python {platform.python_version()} · "
          f"{versions} · load average {load:.2f} at the start · seed {SEED}"
          + (" · --quick" if args.quick else ""))
    print()
    print("p: Φ = cwrs `predict_proba` (the predictive Φ(m/√(v + s²))), Φ₀ = "
          "`predict_posterior_proba` (Φ(m/√v)), σ = logistic (softmax) of the "
          "margin, peer = scikit-learn / river probabilities. Progressive: each row scored "
          "before it is learned, one pass in a seeded order; held-out: one training pass, "
          "then the test rows. ECE: top-label, 15 equal-width bins. Saturated: the share of "
          "rows whose predicted-class probability is within 1e-6 of 1. conf − acc: mean "
          "confidence minus accuracy, in points (> 0: overconfident).")
    if river is not None:
        print()
        print(f"river {river.__version__} "
              + ("has no `river.calibration` module (no CalibratedClassifier): left out."
                 if river_calibration is None else
                 "has a `river.calibration` module, which this script does not measure."))
    print()
    print(f"Check: the progressive probabilities from `partial_fit(..., return_scores=True)` "
          f"and a row-by-row loop (the model's probabilities, then partial_fit of the row) "
          f"differ by at most {worst_difference:.1e} over the first {VERIFY_ROWS} rows of every "
          f"binary data set (and the first-order learners on digits), every cwrs learner.")
    for data, rows in results:
        print()
        print(table(data, rows))
        if data.name in notes:
            print()
            print(notes[data.name])
    print()
    print(summary(results))
    print()
    print(f"Run time: {time.time() - started:.0f} s.")


if __name__ == "__main__":
    main()
