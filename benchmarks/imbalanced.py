"""Imbalanced streams: class weights and importance weights (the classifiers' `class_weight` and
`sample_weight`), against scikit-learn and Vowpal Wabbit in the same run. Prints a markdown section
for benchmarks/RESULTS.md (`--write` puts it there, in place of the section's last run).

Streams:

1. w1a (../shared/datasets: 2,477 rows, 300 binary features, 72 positives).
2. A synthetic stream with 1% positives: x ~ N(0, I_50), y = +1 where w·x + ε > t, with w a
   random unit vector, ε ~ N(0, 0.3²) (label noise, at the separator where it matters) and t the
   99th percentile of w·x + ε (so exactly 1% positives); 40,000 rows, one stream per seed.
3. "Subsampled": stream 2 with its negatives kept at rate 0.1 and weighted 10 (sample_weight),
   its positives kept with weight 1: the same expected loss from a tenth of the negatives.

Primary protocol, held out: a stratified 70/30 split drawn from the seed, `--passes` shuffled
passes over the 70% (`n_iter=passes, shuffle=True, random_state=seed`; the same passes for
every peer), metrics on the 30%; mean ± sd over `--seeds` seeds. The subsampled stream keeps
the test rows of stream 2 (only its training rows are subsampled). Metrics: balanced accuracy,
F1 of the positive class, PR-AUC (average_precision_score on the decision function) and
accuracy.

Secondary protocol, progressive (test-then-train): one pass over the stream in its stored
order, one row per call, each row scored before it is learned (predicted positive where the
score is > 0), the same metrics over all the rows (on the subsampled stream weighted by the
sample weights, so that they estimate the full stream's); w1a once, the synthetic streams for
the first `--progressive-seeds` seeds.

"balanced" counts sample weights per class, as cwrs's class_weight="balanced" does
(scikit-learn's `compute_class_weight("balanced", classes, y, sample_weight)`): a row of class k
weighs N/(2·count_k) times its sample weight, count_k the sample weights of class k (1 for a
row without one) and N their total; in `fit` over the training rows, in one-row `partial_fit`
calls with the counts of the rows so far, the row's own included. So the subsampled stream's
negatives (weighted 10) count about as much as the full stream's, and "balanced" weighs the two
streams' classes alike. The peers get these class weights times the sample weights as
sample_weight: scikit-learn's SGD "balanced" counts rows, its partial_fit has none, and VW has
none.

Learners, every one with its defaults: cwrs AROW, SCW1, SCW2, NHERD and CW (diagonal
covariance; AROW full too on the d=50 streams), each without and with class_weight="balanced";
scikit-learn SGDClassifier (hinge and log_loss) and PA-I, without and with the "balanced"
weights; Vowpal Wabbit (logistic loss, its defaults otherwise), each row with its importance
weight in VW's text format, without and with the "balanced" weights. A peer that is not
installed is left out with a note; so are cwrs's "balanced" rows on a build without
class_weight.

    python benchmarks/imbalanced.py [--seeds 5] [--passes 5] [--rows 40000]
        [--progressive-seeds 1] [--write] [--quick]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import numpy as np

import cwrs

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _peers  # noqa: E402  (the optional peers, as compare.py imports them)

try:
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import SGDClassifier
    from sklearn.metrics import (
        accuracy_score,
        average_precision_score,
        balanced_accuracy_score,
        f1_score,
    )
    from sklearn.model_selection import train_test_split
except ImportError:  # pragma: no cover - the metrics need scikit-learn
    sys.exit("benchmarks/imbalanced.py needs scikit-learn (pip install -e '.[bench]')")

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
SHARED = Path(
    os.environ.get("CWRS_SHARED_DATASETS")
    or Path(__file__).resolve().parents[2] / "shared" / "datasets"
)
HEADING = "## Imbalanced streams and importance weights"
CLASSES = np.array([-1, 1])
METRICS = ("balanced accuracy", "F1 (positive)", "PR-AUC", "accuracy")
# Vowpal Wabbit's logistic loss, its other settings at their defaults (adaptive, normalized,
# importance-invariant updates; 2^18 weights; the constant feature).
VW_ARGS = ["--loss_function", "logistic", "--quiet"]
SUBSAMPLE_RATE = 0.1
LABEL_NOISE = 0.3
POSITIVE_RATE = 0.01
D_SYNTHETIC = 50


# ================================================================================== streams
@dataclass
class Split:
    """Training rows (with their sample weights, None for all ones) and test rows."""

    X: np.ndarray
    y: np.ndarray
    sample_weight: Optional[np.ndarray]
    X_test: np.ndarray
    y_test: np.ndarray


@dataclass
class Stream:
    name: str
    d: int
    heldout: Callable[[int], Split]  # seed -> split
    # {title: [() -> (X, y, sample_weight) in the order learned, one per run]}
    progressive: dict
    description: str


def load_w1a():
    X = np.load(SHARED / "w1a.X.npy")
    y = np.load(SHARED / "w1a.y.npy").astype(np.int64)
    return X, np.where(y > 0, 1, -1)


def synthetic(seed, n_rows, d=D_SYNTHETIC):
    """The 1%-positive stream of `seed`: rows, labels, and the fraction of labels that the
    noise turned against the noiseless separator w·x > t."""
    rng = np.random.default_rng(seed)
    w = rng.normal(size=d)
    w /= np.linalg.norm(w)
    X = rng.normal(size=(n_rows, d))
    score = X @ w
    noisy = score + LABEL_NOISE * rng.normal(size=n_rows)
    threshold = np.quantile(noisy, 1 - POSITIVE_RATE)
    y = np.where(noisy > threshold, 1, -1)
    flipped = np.mean(y != np.where(score > threshold, 1, -1))
    return X, y, flipped


def subsample(X, y, seed):
    """Negatives kept at SUBSAMPLE_RATE and weighted 1/SUBSAMPLE_RATE, positives kept with
    weight 1; the kept rows stay in stream order."""
    rng = np.random.default_rng([seed, 1])
    keep = (y > 0) | (rng.random(len(y)) < SUBSAMPLE_RATE)
    weight = np.where(y[keep] > 0, 1.0, 1.0 / SUBSAMPLE_RATE)
    return X[keep], y[keep], weight


def split(X, y, seed):
    train, test = train_test_split(np.arange(len(y)), test_size=0.3, stratify=y,
                                   random_state=seed)
    # The training rows keep their stream order (the passes shuffle them anyway).
    train.sort()
    test.sort()
    return train, test


def seed_range(seeds):
    return f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {seeds[0]}–{seeds[-1]}"


def make_streams(n_rows, seeds, progressive_seeds, progressive_rows):
    streams = []
    if (SHARED / "w1a.X.npy").exists():
        X, y = load_w1a()

        def w1a_heldout(seed):
            train, test = split(X, y, seed)
            return Split(X[train], y[train], None, X[test], y[test])

        def w1a_shuffled(seed):
            order = np.random.RandomState(seed).permutation(len(y))[:progressive_rows]
            return lambda: (X[order], y[order], None)

        positives = np.flatnonzero(y > 0)
        rows = min(progressive_rows, len(y))
        stored = (f"stored order (its positives are rows {positives[0]}–{positives[-1]}, "
                  "one run)")
        streams.append(Stream(
            "w1a", X.shape[1], w1a_heldout,
            {stored: [lambda: (X[:rows], y[:rows], None)],
             f"shuffled ({seed_range(seeds)})": [w1a_shuffled(seed) for seed in seeds]},
            f"w1a, {len(y):,} rows × {X.shape[1]} binary features, {int((y > 0).sum())} "
            f"positives ({(y > 0).mean():.1%}); progressive: "
            + ("" if rows == len(y) else f"the first {rows:,} rows of ")
            + "the stored order, where the positives come in one block (rows "
            f"{positives[0]}–{positives[-1]}), and seeded shuffles"))
    else:
        print(f"(w1a skipped: not found in {SHARED})", file=sys.stderr)

    cache = {}

    def stream_of(seed):
        if seed not in cache:
            cache[seed] = synthetic(seed, n_rows)
        return cache[seed]

    def synthetic_heldout(seed):
        X, y, _ = stream_of(seed)
        train, test = split(X, y, seed)
        return Split(X[train], y[train], None, X[test], y[test])

    def subsampled_heldout(seed):
        X, y, _ = stream_of(seed)
        train, test = split(X, y, seed)
        Xs, ys, weight = subsample(X[train], y[train], seed)
        return Split(Xs, ys, weight, X[test], y[test])

    def synthetic_progressive(seed):
        X, y, _ = stream_of(seed)
        return lambda: (X[:progressive_rows], y[:progressive_rows], None)

    def subsampled_progressive(seed):
        X, y, _ = stream_of(seed)
        return lambda: subsample(X[:progressive_rows], y[:progressive_rows], seed)

    flipped = np.mean([stream_of(seed)[2] for seed in seeds])
    kept = np.mean([len(subsampled_heldout(seed).y) for seed in seeds])
    synthetic_name = f"synthetic 1% positives (d={D_SYNTHETIC})"
    rows = min(progressive_rows, n_rows)
    title = f"the first {rows:,} rows in stream order ({seed_range(progressive_seeds)})"
    streams.append(Stream(
        synthetic_name, D_SYNTHETIC, synthetic_heldout,
        {title: [synthetic_progressive(seed) for seed in progressive_seeds]},
        f"{n_rows:,} rows × {D_SYNTHETIC} N(0, 1) features, 1% positives (y = +1 where w·x + ε "
        f"> t, ε ~ N(0, {LABEL_NOISE}²)); the noise puts {flipped:.2%} of the labels against "
        f"the noiseless separator (mean over the seeds); one stream per seed"))
    streams.append(Stream(
        "subsampled", D_SYNTHETIC, subsampled_heldout,
        {f"the subsampled {title[4:]}": [subsampled_progressive(seed)
                                         for seed in progressive_seeds]},
        f"the synthetic stream's training rows with the negatives kept at rate "
        f"{SUBSAMPLE_RATE} and weighted {1 / SUBSAMPLE_RATE:g}, the positives kept with weight "
        f"1 ({kept:,.0f} of {int(0.7 * n_rows):,} training rows on average); tested on the "
        f"synthetic stream's test rows; progressive metrics weighted by the sample weights"))
    return streams


# ================================================================================== learners
def balanced_factor(counts, label):
    """N/(K·count_k) of class `label` from the per-class `counts` (N their sum in class order,
    as cwrs adds them); 0 for a class counted 0, whose rows all weigh 0 (cwrs learns such a row
    with weight 0 whatever its class weight)."""
    total = sum(counts[c] for c in CLASSES)
    count = counts[label]
    return total / (len(CLASSES) * count) if count > 0 else 0.0


def running_balanced_weights(y, sample_weight=None):
    """The "balanced" class weight of each row learned one row per call, as cwrs's
    class_weight="balanced" gives it: each row first adds its sample weight (1 without) to its
    class's count, then weighs N/(K·count_k) with the counts so far, its own included."""
    counts = {label: 0.0 for label in CLASSES}
    weights = np.empty(len(y))
    for i, label in enumerate(y):
        counts[label] += 1.0 if sample_weight is None else float(sample_weight[i])
        weights[i] = balanced_factor(counts, label)
    return weights


def fit_balanced_weights(y, sample_weight=None):
    """The "balanced" class weight of each row for one `fit`: scikit-learn's
    `compute_class_weight("balanced", classes, y, sample_weight)`, N/(K·count_k) with the
    sample weights counted per class (rows without weights: n/(K·n_k)). cwrs counts them in
    row order, as here."""
    counts = {label: 0.0 for label in CLASSES}
    for i, label in enumerate(y):
        counts[label] += 1.0 if sample_weight is None else float(sample_weight[i])
    return np.array([balanced_factor(counts, label) for label in y])


def combined(weights, sample_weight):
    return weights if sample_weight is None else weights * sample_weight


class Learner:
    """One row of the tables: `heldout` fits and scores the test rows, `progressive` scores each
    row of a stream before learning it. Both return (scores, predicted labels)."""

    name: str
    family: str  # "cwrs", "peer" or "reference"
    balanced: bool
    max_d: int = 0  # run only on streams of at most this many features (0: on all)

    def available(self):
        return None  # or the reason it is left out


class CwrsLearner(Learner):
    family = "cwrs"

    def __init__(self, cls, balanced, max_d=0, **params):
        self.cls, self.balanced, self.max_d, self.params = cls, balanced, max_d, params
        covariance = params.get("covariance", "diag")
        self.name = f"cwrs {cls.__name__} {covariance}" + (", balanced" if balanced else "")

    def _make(self, **params):
        if self.balanced:
            params["class_weight"] = "balanced"
        return self.cls(**self.params, **params)

    def available(self):
        try:
            self._make()
        except TypeError as error:
            return f"this build has no class_weight ({error})"
        return None

    def heldout(self, data, seed, passes):
        model = self._make(n_iter=passes, shuffle=True, random_state=seed)
        model.fit(data.X, data.y, sample_weight=data.sample_weight)
        return model.decision_function(data.X_test), model.predict(data.X_test)

    def progressive(self, X, y, sample_weight):
        model = self._make(shuffle=False)
        scores = np.zeros(len(y))
        for i in range(len(y)):
            if i:
                scores[i] = model.decision_function(X[i : i + 1])[0]
            weight = None if sample_weight is None else sample_weight[i : i + 1]
            model.partial_fit(X[i : i + 1], y[i : i + 1], classes=CLASSES, sample_weight=weight)
        return scores, np.where(scores > 0, 1, -1)


class SklearnLearner(Learner):
    family = "peer"

    def __init__(self, name, make, balanced):
        self.make, self.balanced = make, balanced
        self.name = name + (", balanced" if balanced else "")

    def available(self):
        return None if _peers.sklearn is not None else "scikit-learn is not installed"

    def heldout(self, data, seed, passes):
        # Its class_weight="balanced" counts rows, not sample weights: cwrs's class weights go in
        # sample_weight (SGD multiplies the two per row, so without sample weights this is its
        # own "balanced").
        weights = data.sample_weight
        if self.balanced:
            weights = combined(fit_balanced_weights(data.y, weights), weights)
        model = self.make(max_iter=passes, tol=None, shuffle=True, random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(data.X, data.y, sample_weight=weights)
        return model.decision_function(data.X_test), model.predict(data.X_test)

    def progressive(self, X, y, sample_weight):
        # partial_fit refuses class_weight="balanced": the running weights go in sample_weight.
        weights = running_balanced_weights(y, sample_weight) if self.balanced else np.ones(len(y))
        weights = combined(weights, sample_weight)
        model = self.make(shuffle=False, random_state=0)
        scores = np.zeros(len(y))
        for i in range(len(y)):
            if i:  # w·x + b by hand: decision_function's checks cost more than the row
                scores[i] = X[i] @ model.coef_[0] + model.intercept_[0]
            model.partial_fit(X[i : i + 1], y[i : i + 1], classes=CLASSES,
                              sample_weight=weights[i : i + 1])
        return scores, np.where(scores > 0, 1, -1)


def sgd(loss):
    return lambda **params: SGDClassifier(loss=loss, **params)


def pa1(**params):
    return _peers.sklearn_pa1(C=1.0, **params)


def vw_features(X):
    """The feature part of VW's text format, one line per row ("| 3:0.5 17:1")."""
    lines = []
    for row in X:
        nonzero = np.flatnonzero(row)
        lines.append("| " + " ".join(f"{j}:{row[j]:.9g}" for j in nonzero))
    return lines


def vw_label(label, weight):
    return f"{int(label)} {weight:.9g} "


class VWLearner(Learner):
    family = "peer"

    def __init__(self, balanced):
        self.balanced = balanced
        self.name = "VW logistic, importance weights" + (", balanced" if balanced else "")

    def available(self):
        return None if _peers.vowpalwabbit is not None else "vowpalwabbit is not installed"

    @staticmethod
    def _predict(workspace, features):
        return np.array([workspace.predict(line) for line in features])

    def heldout(self, data, seed, passes):
        weights = (fit_balanced_weights(data.y, data.sample_weight) if self.balanced
                   else np.ones(len(data.y)))
        weights = combined(weights, data.sample_weight)
        features = vw_features(data.X)
        examples = [vw_label(label, weight) + line
                    for label, weight, line in zip(data.y, weights, features)]
        workspace = _peers.vowpalwabbit.Workspace(arg_list=VW_ARGS)
        # The passes of cwrs's fit: a permutation per pass from RandomState(seed).
        rng = np.random.RandomState(seed)
        for _ in range(passes):
            for i in rng.permutation(len(examples)):
                workspace.learn(examples[i])
        scores = self._predict(workspace, vw_features(data.X_test))
        workspace.finish()
        return scores, np.where(scores > 0, 1, -1)

    def progressive(self, X, y, sample_weight):
        weights = running_balanced_weights(y, sample_weight) if self.balanced else np.ones(len(y))
        weights = combined(weights, sample_weight)
        workspace = _peers.vowpalwabbit.Workspace(arg_list=VW_ARGS)
        scores = np.zeros(len(y))
        for i, line in enumerate(vw_features(X)):
            scores[i] = workspace.predict(line)
            workspace.learn(vw_label(y[i], weights[i]) + line)
        workspace.finish()
        return scores, np.where(scores > 0, 1, -1)


class AlwaysNegative(Learner):
    """The majority class: the accuracy any learner must beat to have learned anything."""

    family = "reference"
    balanced = False
    name = "always negative (reference)"

    def heldout(self, data, seed, passes):
        return np.zeros(len(data.y_test)), -np.ones(len(data.y_test), dtype=np.int64)

    def progressive(self, X, y, sample_weight):
        return np.zeros(len(y)), -np.ones(len(y), dtype=np.int64)


def learners():
    out = []
    for balanced in (False, True):
        for cls in (cwrs.AROW, cwrs.SCW1, cwrs.SCW2, cwrs.NHERD, cwrs.CW):
            out.append(CwrsLearner(cls, balanced))
        out.append(CwrsLearner(cwrs.AROW, balanced, max_d=D_SYNTHETIC, covariance="full"))
    for balanced in (False, True):
        out.append(SklearnLearner("sklearn SGD hinge", sgd("hinge"), balanced))
        out.append(SklearnLearner("sklearn SGD log_loss", sgd("log_loss"), balanced))
        out.append(SklearnLearner("sklearn PA-I (C=1)", pa1, balanced))
        out.append(VWLearner(balanced))
    out.append(AlwaysNegative())
    return out


# ================================================================================== metrics
def metrics(y, scores, predicted, sample_weight=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # F1 of a model that predicts no positive is 0
        return np.array([
            balanced_accuracy_score(y, predicted, sample_weight=sample_weight),
            f1_score(y, predicted, pos_label=1, zero_division=0, sample_weight=sample_weight),
            average_precision_score(y, scores, pos_label=1, sample_weight=sample_weight),
            accuracy_score(y, predicted, sample_weight=sample_weight),
        ])


def run_heldout(stream, roster, seeds, passes, log):
    """{learner name: array seeds × metrics} of the held-out protocol."""
    table = {}
    for seed in seeds:
        data = stream.heldout(seed)
        for learner in roster:
            start = time.perf_counter()
            scores, predicted = learner.heldout(data, seed, passes)
            table.setdefault(learner.name, []).append(metrics(data.y_test, scores, predicted))
            log(f"{stream.name} seed {seed} {learner.name}: {time.perf_counter() - start:.1f} s")
    return {name: np.array(rows) for name, rows in table.items()}


def run_progressive(stream, roster, log):
    """{title: {learner name: array runs × metrics}} of the progressive protocol."""
    tables = {}
    for title, runs in stream.progressive.items():
        table = tables.setdefault(title, {})
        for run, data in enumerate(runs):
            X, y, sample_weight = data()
            for learner in roster:
                start = time.perf_counter()
                scores, predicted = learner.progressive(X, y, sample_weight)
                table.setdefault(learner.name, []).append(
                    metrics(y, scores, predicted, sample_weight))
                log(f"{stream.name} progressive, {title}, run {run} {learner.name}: "
                    f"{time.perf_counter() - start:.1f} s")
    return {title: {name: np.array(rows) for name, rows in table.items()}
            for title, table in tables.items()}


# ================================================================================== report
def cell(values, percent=True):
    scale, unit = (100, "") if percent else (1, "")
    if len(values) == 1:
        return f"{scale * values[0]:.2f}{unit}"
    return f"{scale * np.mean(values):.2f} ± {scale * np.std(values, ddof=1):.2f}{unit}"


def metrics_table(table):
    lines = ["| learner | " + " | ".join(METRICS) + " |", "|---|" + "--:|" * len(METRICS)]
    for name, rows in table.items():
        lines.append(f"| {name} | " + " | ".join(cell(rows[:, k]) for k in range(len(METRICS)))
                     + " |")
    return lines


def best_against_peers(table, families):
    """Per metric: cwrs's best learner (by the mean) against the best peer, with the paired
    difference per seed."""
    lines = ["| metric | cwrs's best | peers' best | cwrs − peer (paired) | cwrs ahead |",
             "|---|---|---|--:|---|"]
    verdicts = {}
    for k, metric in enumerate(METRICS):
        def best(family):
            names = [n for n in table if families[n] == family]
            return max(names, key=lambda n: np.mean(table[n][:, k])) if names else None

        ours, theirs = best("cwrs"), best("peer")
        if ours is None or theirs is None:
            lines.append(f"| {metric} | {ours or '—'} | {theirs or '—'} | — | — |")
            continue
        difference = table[ours][:, k] - table[theirs][:, k]
        mean = np.mean(difference)
        verdict = verdicts[metric] = "yes" if mean > 0 else "no" if mean < 0 else "tie"
        if mean != 0 and len(difference) > 1 and abs(mean) <= np.std(difference, ddof=1):
            verdict += " (within 1 sd)"
        lines.append(f"| {metric} | {ours}: {cell(table[ours][:, k])} | {theirs}: "
                     f"{cell(table[theirs][:, k])} | {cell(difference)} | {verdict} |")
    return lines, verdicts


def subsampled_table(full, reweighted, goal=0.01):
    lines = ["| learner | accuracy, full data | accuracy, subsampled + reweighted | difference "
             "(points, paired) | within 1 point | balanced accuracy, full | balanced accuracy, "
             "subsampled |", "|---|--:|--:|--:|---|--:|--:|"]
    for name in full:
        if name not in reweighted:
            continue
        accuracy = METRICS.index("accuracy")
        difference = reweighted[name][:, accuracy] - full[name][:, accuracy]
        within = "yes" if abs(np.mean(difference)) <= goal else "no"
        lines.append(f"| {name} | {cell(full[name][:, accuracy])} | "
                     f"{cell(reweighted[name][:, accuracy])} | {cell(difference)} | {within} | "
                     f"{cell(full[name][:, 0])} | {cell(reweighted[name][:, 0])} |")
    return lines


def class_weights_line(full, subsampled, seeds):
    """The "balanced" class weights of `fit` on the training rows of the two streams, each
    class's mean over the seeds."""
    def per_class(stream):
        weights = []
        for seed in seeds:
            data = stream.heldout(seed)
            balanced = fit_balanced_weights(data.y, data.sample_weight)
            weights.append([balanced[data.y == label][0] for label in CLASSES])
        return np.mean(weights, axis=0)

    full_weights, subsampled_weights = per_class(full), per_class(subsampled)
    return "; ".join(
        f"{'positives' if label > 0 else 'negatives'} {full_weights[k]:#.4g} on the full "
        f"stream, {subsampled_weights[k]:#.4g} subsampled" for k, label in enumerate(CLASSES))


def cwrs_defaults():
    """The hyper-parameters of the benchmark's cwrs learners at their defaults."""
    out = []
    for cls in (cwrs.AROW, cwrs.SCW1, cwrs.SCW2, cwrs.NHERD, cwrs.CW):
        params = cls().get_params()
        shown = [f"{symbol}={params[name]:g}" for name, symbol in
                 (("r", "r"), ("C", "C"), ("eta", "η"), ("a", "a")) if name in params]
        out.append(f"{cls.__name__} " + ", ".join(shown))
    return "; ".join(out)


def write_section(text):
    """Replaces the section HEADING of RESULTS.md (up to the next "## " heading) by `text`,
    or appends it with its line in the contents."""
    lines = RESULTS.read_text().splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith(HEADING)]
    new = text.rstrip("\n").splitlines()
    if starts:
        start = starts[0]
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")),
                   len(lines))
        lines[start:end] = new + ([""] if end < len(lines) else [])
    else:
        anchor = HEADING[3:].lower().replace(" ", "-")
        last = lines.index("## Contents") + 2  # the heading, a blank line, then the list
        while lines[last + 1].startswith("- ["):
            last += 1
        lines.insert(last + 1, f"- [{HEADING[3:]}](#{anchor})")
        lines += [""] + new
    RESULTS.write_text("\n".join(lines) + "\n")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="seeds of the held-out protocol")
    parser.add_argument("--passes", type=int, default=5, help="shuffled passes over the train")
    parser.add_argument("--rows", type=int, default=40_000, help="rows of the synthetic stream")
    parser.add_argument("--progressive-seeds", type=int, default=1,
                        help="synthetic streams run progressively (one row per call)")
    parser.add_argument("--progressive-rows", type=int, default=None,
                        help="rows of each stream run progressively (default: all)")
    parser.add_argument("--write", action="store_true",
                        help=f"write the section into {RESULTS.name}")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 2 seeds, 2 passes, 4,000 synthetic rows, 300 rows "
                             "of each stream progressive")
    parser.add_argument("--verbose", action="store_true", help="time each run on stderr")
    args = parser.parse_args(argv)
    if args.quick:
        args.seeds, args.passes, args.rows = 2, 2, 4_000
        args.progressive_seeds, args.progressive_rows = 1, 300
    if args.progressive_rows is None:
        args.progressive_rows = args.rows
    return args


def main(argv=None):
    args = parse_args(argv)
    log = (lambda message: print(message, file=sys.stderr, flush=True)) if args.verbose \
        else (lambda message: None)
    started, load = time.time(), os.getloadavg()[0]
    seeds = list(range(args.seeds))
    streams = make_streams(args.rows, seeds, list(range(args.progressive_seeds)),
                           args.progressive_rows)
    roster, left_out = [], []
    for learner in learners():
        reason = learner.available()
        (left_out.append((learner.name, reason)) if reason else roster.append(learner))
    families = {learner.name: learner.family for learner in roster}

    heldout, progressive = {}, {}
    for stream in streams:
        runnable = [lr for lr in roster if not getattr(lr, "max_d", 0) or stream.d <= lr.max_d]
        heldout[stream.name] = run_heldout(stream, runnable, seeds, args.passes, log)
        progressive[stream.name] = run_progressive(stream, runnable, log)

    versions = " · ".join(f"{name} {version}" for name, version in
                          {"cwrs": cwrs.__version__, "numpy": np.__version__,
                           **_peers.versions()}.items() if name != "river")
    command = "python benchmarks/imbalanced.py" + (" --quick" if args.quick else (
        f" --seeds {args.seeds} --passes {args.passes} --rows {args.rows}"
        f" --progressive-seeds {args.progressive_seeds}"
        + (f" --progressive-rows {args.progressive_rows}"
           if args.progressive_rows != args.rows else "")))
    out = [HEADING, "",
           f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {_peers.cpu_model()}, "
           f"{os.cpu_count()} cores · Python {platform.python_version()} · {versions} · one run "
           f"({time.time() - started:.0f} s) · `{command}` · load average {load:.1f} at the "
           f"start (no timings here: the figures do not depend on it).", ""]
    out += [
        f"Primary protocol, **held out**: a stratified 70/30 split per seed (seeds "
        f"{seeds[0]}–{seeds[-1]}), {args.passes} shuffled passes over the 70% (cwrs `n_iter="
        f"{args.passes}, shuffle=True, random_state=seed`; scikit-learn `max_iter={args.passes}, "
        f"tol=None, shuffle=True, random_state=seed`; VW the same permutations as cwrs, one "
        f"`learn` per row), metrics on the 30%: mean ± sd over the seeds, in percent. "
        f"Secondary, **progressive**: one pass in stream order, one row per call, each row "
        f"scored before it is learned (positive where the score is > 0). \"balanced\" counts "
        f"sample weights per class (scikit-learn's `compute_class_weight(\"balanced\", classes, "
        f"y, sample_weight)`): a row of class k weighs N/(2·count_k) times its sample weight, "
        f"count_k the sample weights of class k and N their total, counted over the training "
        f"rows in `fit` and over the rows so far (its own included) in one-row `partial_fit` "
        f"calls. The peers get exactly these weights (times the sample weights) as "
        f"sample_weight: scikit-learn's SGD \"balanced\" counts rows and its partial_fit has "
        f"none; VW has none. Every learner with its defaults: cwrs {cwrs_defaults()} (diagonal "
        f"covariance unless \"full\"); scikit-learn `SGDClassifier(loss=...)` (α=1e-4, "
        f"learning_rate='optimal', L2) and PA-I as "
        f"`{_peers.sklearn_pa1_api()}` with C=1; Vowpal Wabbit `{' '.join(VW_ARGS)}` (adaptive, "
        f"normalized, importance-invariant updates), each example `label weight | features`. "
        f"PR-AUC is `average_precision_score` on the decision function (VW: its raw score).", ""]
    for name, reason in left_out:
        out.append(f"Left out: {name}: {reason}.  ")
    if left_out:
        out.append("")
    ahead = {}
    for number, stream in enumerate(streams, 1):
        out += [f"### {number}. {stream.name}", "", stream.description + ".", ""]
        out += ["Held out:", ""] + metrics_table(heldout[stream.name]) + [""]
        lines, ahead[stream.name] = best_against_peers(heldout[stream.name], families)
        out += ["cwrs's best learner against the best peer, per metric (held out; the paired "
                "difference over the seeds):", ""] + lines + [""]
        for title, table in progressive[stream.name].items():
            out += [f"Progressive, {title}:", ""] + metrics_table(table) + [""]
    synthetic_name = streams[-2].name
    out += [f"### {len(streams) + 1}. Subsampled and reweighted against the full data", "",
            "Held-out accuracy of each learner trained on the subsampled stream (negatives kept "
            f"at {SUBSAMPLE_RATE}, sample_weight {1 / SUBSAMPLE_RATE:g}) against the same learner "
            "trained on all the synthetic stream's training rows, on the same test rows; the "
            "goal is within 1 point. (At 1% positives, always-negative scores 99% accuracy: the "
            "balanced accuracy columns show what the difference does to the positives.) With "
            "\"balanced\" both runs weigh the classes alike: the class weights count sample "
            f"weights, so the subsampled negatives (kept at {SUBSAMPLE_RATE}, weighted "
            f"{1 / SUBSAMPLE_RATE:g}) count about as much as all the full stream's. The class "
            "weights that \"balanced\" gives in `fit`, mean over the seeds: "
            + class_weights_line(streams[-2], streams[-1], seeds)
            + "; what differs is which negatives the subsample keeps.", ""]
    out += subsampled_table(heldout[synthetic_name], heldout["subsampled"]) + [""]
    def summary(verdicts):
        behind = [metric for metric, verdict in verdicts.items() if verdict != "yes"]
        if not behind:
            return "yes, in every metric"
        return "ahead in " + (", ".join(m for m in verdicts if m not in behind) or "none") + \
            "; not in " + ", ".join(behind)

    out += ["**Is cwrs's best learner ahead of every peer?** (held out, by the mean; the tables "
            "\"cwrs's best learner against the best peer\" above) " + "; ".join(
                f"{name}: {summary(verdicts)}" for name, verdicts in ahead.items()) + "."]
    text = "\n".join(out) + "\n"
    print(text)
    if args.write:
        write_section(text)


if __name__ == "__main__":
    main()
