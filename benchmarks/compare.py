"""Side-by-side speed of cwrs and its PyPI peers (scikit-learn, Vowpal Wabbit, river), one run.

Sections (each prints a Markdown table: learner, rate as the median of --repeat runs, online
(progressive-validation) error and/or held-out test error where meaningful, speed relative to
the section's reference row, notes):

1. Diagonal sparse, in memory. A generated text-like stream (default 1M rows, 2^20 features,
   ~100 non-zeros per row, Zipf word ids, tf-idf values, rows L2-normalised, labels from a
   sparse true weight vector with 5% flipped) as one CSR matrix; the last 100k rows (at most a
   tenth) are held out. One `fit` pass, in order: cwrs AROW/SCW1 (diag), PA1, Perceptron;
   scikit-learn's PA-I; river's PA-I on the first 20k rows only (it is too slow for all).
   Reference: scikit-learn PA-I. scikit-learn 1.8 deprecated PassiveAggressiveClassifier
   (removal in 1.10) for SGDClassifier(loss="hinge", penalty=None, learning_rate="pa1",
   eta0=C), which is used where available (the same model; _peers.py falls back).
2. From a text file. The same training rows as a LIBSVM file and a VW file (written untimed):
   Vowpal Wabbit from its text file and from its binary cache; cwrs `partial_fit_file` if
   the installed cwrs has it; scikit-learn's `load_svmlight_file` + fit (the load is shared
   with a cwrs fit on the loaded matrix); LIBSOL's published rates as constant rows.
   Reference: VW from text.
3. Full covariance at d=1000 and d=300: cwrs AROW(covariance="full") against a NumPy + BLAS
   AROW with Sherman-Morrison updates written below; both must end on the same mean vector.
   Rates in updates/s. Reference: NumPy. Then multiclass AROW with a full Σ per class (d=300,
   10 classes; max-score and one-vs-rest) against a NumPy + BLAS max-score AROW, in rows/s.
4. One-row latency at d=100: µs per call (median over many calls after a warm-up) of
   `partial_fit` by cwrs AROW (diag) and PA1, scikit-learn PA-I, river PA-I (`learn_one`,
   dict rows) and VW (`learn` of one example string); cwrs AROW `partial_fit` of two rows
   (the fixed cost of a call); one-row `decision_function`, `predict` and `predict_proba` of
   cwrs AROW, scikit-learn PA-I's `decision_function` and NumPy's `x @ w` alone.
   Reference: scikit-learn PA-I `partial_fit`.
5. Kernel: cwrs AROW with an RBF kernel and a budget of 1000 support rows on 100-d rows, while
   the budget fills and once it is full. No peer. Then prediction, 2,000 rows against the
   1,000 support rows (dense 100-d rows, and sparse rows of 20 of 1,000 features): cwrs
   `decision_function`, `predict`, `predict_proba` against the same sum in NumPy
   (`rbf_kernel(X, support_vectors_) @ dual_coef_`, the reference); and a1a → a1a.t with
   default settings, cwrs `AROW(kernel="rbf")` against scikit-learn's `SVC()` (fit, predict;
   reference: SVC's predict), when ../shared/datasets is there.

Wall time with time.perf_counter, single process; data generation and file writing are not
timed; within each repeat the learners of a section run one after the other (interleaved), so
machine noise hits all of them alike. BLAS is pinned to one thread (the environment variables
are set before NumPy loads). VW reads its input in a second thread, so a note reports the CPU
time over wall time of any run above 1.15.

    python benchmarks/compare.py [--quick] [--repeat N] [--sections 1,2,3,4,5]
                                 [--rows N] [--json out.json] [--plot out.png]

--quick shrinks every section (the whole run takes well under a minute) for a smoke test.
Markdown goes to stdout, progress to stderr. Peers are optional: a missing one is marked
"not installed" (pip install scikit-learn vowpalwabbit river; matplotlib for --plot).
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before NumPy is imported: single-threaded BLAS for section 3

import argparse  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from dataclasses import asdict, dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import scipy  # noqa: E402
import scipy.sparse as sp  # noqa: E402

import cwrs  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _peers  # noqa: E402

N_FEATURES = 2**20
CLASSES = np.array([-1, 1])
LIBSOL_NOTE = "published, not measured: 2-core machine of this kind"
LIBSOL_RATES = {"LIBSOL AROW diag, LIBSVM text": 172e3, "LIBSOL AROW diag, binary format": 457e3}


# ============================================================================ measurement
@dataclass
class Measurement:
    """One timed run: `n` items (examples, updates or calls) in `seconds` of wall time."""

    seconds: float
    n: int
    cpu_seconds: float = 0.0
    online_err: float | None = None
    test_err: float | None = None
    note: str = ""


@dataclass
class Row:
    learner: str
    rate: float | None = None  # items per second, median over the repeats
    online_err: float | None = None
    test_err: float | None = None
    note: str = ""
    ratio: float | None = None  # rate / the reference row's rate
    published: bool = False
    seconds: list = field(default_factory=list)


@dataclass
class Section:
    key: str
    title: str
    unit: str  # "examples/s", "updates/s" or "µs/call"
    reference: str | None
    rows: list = field(default_factory=list)
    notes: list = field(default_factory=list)


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


class Timer:
    """Wall and CPU time of a `with` block."""

    def __enter__(self):
        self._wall, self._cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self._wall
        self.cpu_seconds = time.process_time() - self._cpu


def timed(fn, n):
    """Runs fn() and returns its Measurement of n items."""
    with Timer() as t:
        fn()
    return Measurement(t.seconds, n, t.cpu_seconds)


def run_interleaved(benches, repeat):
    """Runs every bench once per repeat, in order, `repeat` times.

    `benches` maps a row name to a function `bench(evaluate) -> Measurement` (or a dict
    {row name: Measurement} for a bench that times several rows in one go), or to a string
    saying why the row is not measured. `evaluate` is True on the first repeat only: errors
    are deterministic, so they are computed once. Returns {row name: Row}, in bench order."""
    runs = {name: {} for name in benches}  # bench -> row name -> [Measurement]
    failed = {}
    for r in range(repeat):
        for name, bench in benches.items():
            if isinstance(bench, str) or name in failed:
                continue
            log(f"  {name} (run {r + 1}/{repeat})")
            try:
                result = bench(r == 0)
            except Exception as error:  # a peer failing must not stop the comparison
                log(f"  {name} failed: {error!r}")
                failed[name] = f"failed: {type(error).__name__}: {error}"[:160]
                continue
            for row_name, m in (result if isinstance(result, dict) else {name: result}).items():
                runs[name].setdefault(row_name, []).append(m)
    rows = {}
    for name, bench in benches.items():
        if isinstance(bench, str) or name in failed:
            rows[name] = Row(name, note=bench if isinstance(bench, str) else failed[name])
            continue
        for row_name, ms in runs[name].items():
            rows[row_name] = summarize(row_name, ms)
    return rows


def summarize(name, measurements):
    """A row from its repeated measurements: the median rate; errors and note of the first."""
    first = measurements[0]
    rate = statistics.median(m.n / m.seconds for m in measurements)
    cpu_ratio = statistics.median(m.cpu_seconds / m.seconds for m in measurements)
    notes = [first.note] if first.note else []
    if cpu_ratio > 1.15:
        notes.append(f"CPU/wall {cpu_ratio:.2f}")
    return Row(name, rate, first.online_err, first.test_err, "; ".join(notes),
               seconds=[m.seconds for m in measurements])


def finish_section(section, rows_by_name):
    """Fills in the section's rows (in the order of `rows_by_name`) and their speed ratios."""
    section.rows = list(rows_by_name.values()) if isinstance(rows_by_name, dict) else rows_by_name
    reference = next((r for r in section.rows if r.learner == section.reference), None)
    for row in section.rows:
        if reference is not None and reference.rate and row.rate:
            row.ratio = row.rate / reference.rate
    return section


# ============================================================================ data
def _zipf_ranks(rng, shape, n, s):
    """Ranks in [0, n) with P(k) roughly ∝ (k + 1)^-s: the inverse CDF of the continuous
    power law on [1, n + 1), in float32 (the ranks only need to be roughly Zipf)."""
    a = np.float32(1.0 - s)
    u = rng.random(shape, dtype=np.float32)
    u *= np.float32((n + 1.0) ** a) - np.float32(1.0)
    u += np.float32(1.0)
    np.power(u, np.float32(1.0) / a, out=u)
    ranks = u.astype(np.int32)
    ranks -= 1
    np.clip(ranks, 0, n - 1, out=ranks)
    return ranks


def _term_counts(rng, n_rows, n_features, word_of_rank, tokens_per_row, zipf_s):
    """One chunk of documents: each row draws Poisson(tokens_per_row) Zipf tokens. Returns
    the distinct word ids per row (sorted), their counts and the number per row."""
    lengths = np.clip(rng.poisson(tokens_per_row, n_rows), 1, 3 * tokens_per_row)
    width = int(lengths.max())
    words = word_of_rank[_zipf_ranks(rng, (n_rows, width), n_features, zipf_s)]
    words[np.arange(width)[None, :] >= lengths[:, None]] = n_features  # padding sorts last
    words.sort(axis=1)
    valid = words < n_features
    first = valid.copy()  # first occurrence of each distinct word in its row
    first[:, 1:] &= words[:, 1:] != words[:, :-1]
    flat_first = first[valid]
    starts = np.flatnonzero(flat_first)
    counts = np.diff(np.append(starts, flat_first.shape[0]))  # runs never cross rows
    return words[valid][starts], counts, first.sum(axis=1)


def make_text_stream(n_rows, n_features=N_FEATURES, tokens_per_row=135, zipf_s=1.1,
                     relevant_fraction=0.01, relevant_ranks=(100, 20_000), noise=0.05, seed=0,
                     chunk=100_000):
    """A seeded text-like binary stream: X (canonical CSR, float64) and y (±1 int64).

    Each row draws Poisson(tokens_per_row) tokens from a Zipf law over the vocabulary (word
    ids randomly permuted); values are tf-idf (smooth idf over the stream) with the row scaled
    to unit L2 norm, rounded to 6 decimals so that the text files written for section 2 hold
    exactly these numbers. Labels are sign(x·w*) for a sparse w* (1% of the words, drawn among
    the 20,000 most frequent but not the 100 most frequent, which occur in nearly every row
    and would skew the classes; N(0, 1) weights), then `noise` of them flipped."""
    seeds = np.random.SeedSequence(seed).spawn(2 + (n_rows + chunk - 1) // chunk)
    rng = np.random.default_rng(seeds[0])
    word_of_rank = rng.permutation(n_features).astype(np.int32)
    parts = []
    for k, lo in enumerate(range(0, n_rows, chunk)):
        chunk_rng = np.random.default_rng(seeds[2 + k])
        parts.append(_term_counts(chunk_rng, min(chunk, n_rows - lo), n_features, word_of_rank,
                                  tokens_per_row, zipf_s))
    indices = np.concatenate([p[0] for p in parts])
    counts = np.concatenate([p[1] for p in parts]).astype(np.float64)
    nnz = np.concatenate([p[2] for p in parts])
    del parts
    indptr = np.zeros(n_rows + 1, np.int64)
    np.cumsum(nnz, out=indptr[1:])
    document_frequency = np.bincount(indices, minlength=n_features)
    idf = np.log((1.0 + n_rows) / (1.0 + document_frequency)) + 1.0
    data = counts
    data *= idf[indices]
    data /= np.repeat(np.sqrt(np.add.reduceat(data * data, indptr[:-1])), nnz)
    np.round(data, 6, out=data)
    X = sp.csr_matrix((data, indices, indptr), shape=(n_rows, n_features))

    rng = np.random.default_rng(seeds[1])
    n_relevant = int(round(relevant_fraction * n_features))
    w = np.zeros(n_features)
    lo, hi = relevant_ranks
    relevant = word_of_rank[lo + rng.choice(hi - lo, size=n_relevant, replace=False)]
    w[relevant] = rng.normal(size=n_relevant)
    score = X @ w
    y = np.where(score > 0, 1, np.where(score < 0, -1, rng.choice(CLASSES, size=n_rows)))
    y = np.where(rng.random(n_rows) < noise, -y, y).astype(np.int64)
    return X, y


def make_dense(n_rows, d, seed, noise=0.05):
    """Gaussian rows N(0, I/d) (unit norm on average) with labels from a random hyperplane,
    `noise` of them flipped."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, d)) / np.sqrt(d)
    y = np.where(X @ rng.normal(size=d) >= 0, 1, -1)
    return X, np.where(rng.random(n_rows) < noise, -y, y).astype(np.int64)


def make_clusters(n_rows, d, seed, clusters_per_class=50, spread=0.7):
    """Rows around 2 x `clusters_per_class` random centres N(0, I/d), each row its centre plus
    N(0, spread² I/d); the label is the class of the centre. Not linearly separable at this
    size (a linear AROW makes ~20% online mistakes, an RBF one ~3%)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(2 * clusters_per_class, d)) / np.sqrt(d)
    which = rng.integers(0, 2 * clusters_per_class, n_rows)
    X = centres[which] + spread * rng.normal(size=(n_rows, d)) / np.sqrt(d)
    return X, np.where(which < clusters_per_class, 1, -1).astype(np.int64)


# ---------------------------------------------------------------------------- text files
# Each label and each " index:value" pair of a line becomes a record of three little-endian
# uint64 words (24 bytes) plus a mask of the bytes it uses; the masked bytes of all records,
# in order, are the text. Three-digit groups come from a table, so no byte is built one at a
# time. A pair's record: " " + 7 index digits (leading zeros unused) | ":d.ddddd" | "d".
_DIGIT_GROUPS = np.array(  # k -> its three ASCII digits in the low three bytes
    [sum(c << (8 * i) for i, c in enumerate(f"{k:03d}".encode())) for k in range(1000)],
    np.uint64)
_POWERS_OF_TEN = 10 ** np.arange(1, 7)
# n_digits -> mask of word 0: byte 0 (the space) and the last n_digits bytes
_INDEX_MASKS = np.array([sum(1 << (8 * i) for i in [0, *range(8 - k, 8)]) for k in range(8)],
                        np.uint64)


def _pair_records(indices, values):
    """The records of `index:value` pairs (indices < 10^7, 0 <= values < 10, written with 6
    decimals): words (nnz, 3) and byte masks (nnz, 3), both uint64."""
    top, rest = np.divmod(indices.astype(np.int32), 1_000_000)  # int32: fast division
    middle, low = np.divmod(rest, 1000)
    words = np.empty((indices.shape[0], 3), np.uint64)
    words[:, 0] = (ord(" ") | (top + ord("0")).astype(np.uint64) << np.uint64(8)
                   | _DIGIT_GROUPS[middle] << np.uint64(16) | _DIGIT_GROUPS[low] << np.uint64(40))
    units, decimals = np.divmod(np.rint(values * 1e6).astype(np.int32), 1_000_000)
    first, last = np.divmod(decimals, 1000)
    last_digits = _DIGIT_GROUPS[last]
    words[:, 1] = (ord(":") | (units + ord("0")).astype(np.uint64) << np.uint64(8)
                   | np.uint64(ord(".") << 16) | _DIGIT_GROUPS[first] << np.uint64(24)
                   | last_digits << np.uint64(48))  # the third digit falls off the top
    words[:, 2] = last_digits >> np.uint64(16)
    masks = np.empty_like(words)
    masks[:, 0] = _INDEX_MASKS[1 + np.searchsorted(_POWERS_OF_TEN, indices, side="right")]
    masks[:, 1], masks[:, 2] = np.uint64(2**64 - 1), np.uint64(0xFF)
    return words, masks


def _text_record(text):
    """The record (words, masks) of a short text (at most 24 bytes)."""
    raw = text.encode().ljust(24, b"\0")
    return (np.frombuffer(raw, np.uint64),
            np.frombuffer(bytes(1 if i < len(text) else 0 for i in range(24)), np.uint64))


def _text_lines(X, y, labels):
    """The rows as text lines `<label> <index>:<value> ...` (1-based indices, values with 6
    decimals), built with array operations. `labels` maps ±1 to the label text."""
    n, nnz = X.shape[0], X.nnz
    assert X.indices.max(initial=0) + 1 < 10**7
    assert X.data.min(initial=0) >= 0 and X.data.max(initial=0) < 10
    words = np.empty((n + nnz, 3), np.uint64)
    masks = np.empty((n + nnz, 3), np.uint64)
    label_at = X.indptr[:-1] + np.arange(n)  # each row: its label, then its pairs
    for value, text in labels.items():  # "\n" + label: a newline ends the previous line
        rows = label_at[y == value]
        words[rows], masks[rows] = _text_record("\n" + text)
    pair_at = np.arange(nnz) + np.repeat(np.arange(1, n + 1), np.diff(X.indptr))
    words[pair_at], masks[pair_at] = _pair_records(X.indices + 1, X.data)
    text = words.view(np.uint8)[masks.view(bool)].tobytes()
    return text[1:] + b"\n"


def write_text_file(path, X, y, labels, chunk=50_000):
    """Writes X, y as text lines (see `_text_lines`), `chunk` rows at a time."""
    with open(path, "wb") as f:
        for lo in range(0, X.shape[0], chunk):
            f.write(_text_lines(X[lo:lo + chunk], y[lo:lo + chunk], labels))


LIBSVM_LABELS = {1: "+1", -1: "-1"}
VW_LABELS = {1: "1 |", -1: "-1 |"}
VW_UNLABELLED = {1: "|", -1: "|"}


# ============================================================================ helpers
def error_rate(predicted, y):
    return float(np.mean(np.asarray(predicted) != y))


def cwrs_fit_bench(make, X, y, X_test=None, y_test=None):
    """A bench: a fresh cwrs estimator's one-pass `fit`; online error from n_mistakes_."""

    def bench(evaluate):
        est = make()
        m = timed(lambda: est.fit(X, y), X.shape[0])
        if evaluate:
            m.online_err = est.n_mistakes_ / X.shape[0]
            if X_test is not None:
                m.test_err = error_rate(est.predict(X_test), y_test)
        return m

    return bench


def peer_missing(name):
    """"not installed" if the peer is missing (the row's note), else None (so that
    `peer_missing(name) or bench` is the bench when the peer is there)."""
    return "not installed" if _peers.versions()[name] == "not installed" else None


# ============================================================================ sections
class Stream:
    """The text-like stream of sections 1 and 2, generated (and written) at most once."""

    def __init__(self, n_rows, workdir):
        self.n_rows, self.workdir = n_rows, Path(workdir)
        self._data = self._files = None

    def data(self):
        if self._data is None:
            log(f"generating the text-like stream: {self.n_rows:,} rows x 2^20 features")
            with Timer() as t:
                X, y = make_text_stream(self.n_rows)
            n_test = min(100_000, self.n_rows // 10)
            cut = self.n_rows - n_test
            self._data = X[:cut], y[:cut], X[cut:], y[cut:]
            log(f"  {t.seconds:.1f} s, {X.nnz / X.shape[0]:.1f} non-zeros per row, "
                f"{np.mean(y == 1):.1%} positive")
        return self._data

    def files(self):
        """(LIBSVM path, VW path, VW test lines without labels) of the training rows."""
        if self._files is None:
            X, y, X_test, y_test = self.data()
            svm, vw = self.workdir / "train.svm", self.workdir / "train.vw"
            log(f"writing {svm.name} and {vw.name} to {self.workdir}")
            with Timer() as t:
                write_text_file(svm, X, y, LIBSVM_LABELS)
                write_text_file(vw, X, y, VW_LABELS)
            vw_test = _text_lines(X_test, y_test, VW_UNLABELLED).decode().splitlines()
            log(f"  {t.seconds:.1f} s, {svm.stat().st_size / 2**20:,.0f} MiB and "
                f"{vw.stat().st_size / 2**20:,.0f} MiB")
            self._files = svm, vw, vw_test
        return self._files


def river_bench(X, y, rows):
    """A bench: river's PA-I `learn_one` over the first `rows` rows (as dicts, built here)."""
    log(f"  converting {rows:,} rows to dicts for river")
    dicts = [dict(zip(X.indices[a:b].tolist(), X.data[a:b].tolist()))
             for a, b in zip(X.indptr[:rows], X.indptr[1:rows + 1])]
    labels = (y[:rows] == 1).tolist()

    def bench(evaluate):
        model = _peers.river_pa1(C=1.0)
        m = timed(lambda: [model.learn_one(x, t) for x, t in zip(dicts, labels)], rows)
        m.note = f"learn_one on the first {rows:,} rows only"
        return m

    return bench


def pa_without_intercept_gap(X, y):
    """max |Δcoef| between cwrs PA1 and scikit-learn's PA-I fitted without an intercept: the
    same algorithm on the same rows, so 0 up to rounding."""
    ours = cwrs.PA1(C=1.0, fit_intercept=False, shuffle=False).fit(X, y)
    theirs = _peers.sklearn_fit(_peers.sklearn_pa1(C=1.0).set_params(fit_intercept=False), X, y)
    return float(np.max(np.abs(ours.coef_ - theirs.coef_)))


def section_sparse_memory(stream, repeat, river_rows):
    X, y, X_test, y_test = stream.data()
    n = X.shape[0]

    def cwrs_bench(cls, **params):
        return cwrs_fit_bench(lambda: cls(**params, n_iter=1, shuffle=False), X, y, X_test, y_test)

    def sklearn_bench(evaluate):
        est = _peers.sklearn_pa1(C=1.0)
        m = timed(lambda: _peers.sklearn_fit(est, X, y), n)
        if evaluate:
            m.test_err = error_rate(est.predict(X_test), y_test)
        return m

    benches = {
        "cwrs AROW diag (r=1)": cwrs_bench(cwrs.AROW, r=1.0, covariance="diag"),
        "cwrs SCW1 diag (C=1)": cwrs_bench(cwrs.SCW1, C=1.0, covariance="diag"),
        "cwrs PA1 (C=1)": cwrs_bench(cwrs.PA1, C=1.0),
        "cwrs Perceptron": cwrs_bench(cwrs.Perceptron),
        "sklearn PA-I (C=1)": peer_missing("sklearn") or sklearn_bench,
        "river PA-I (C=1)": peer_missing("river") or river_bench(X, y, min(river_rows, n)),
    }
    section = Section("1", f"1. Diagonal sparse, in memory ({n:,} training rows, CSR)",
                      "examples/s", "sklearn PA-I (C=1)")
    section.notes = [
        f"{n:,} rows x 2^20 features, {X.nnz / n:.1f} non-zeros per row (Zipf word ids, "
        f"tf-idf, unit L2 rows, labels from a sparse w* with 5% flipped); one `fit` pass in "
        f"order. Online error: mistakes before learning (n_mistakes_ / n); test error: the "
        f"next {X_test.shape[0]:,} rows, held out.",
    ]
    if not peer_missing("sklearn"):
        section.notes.append(f"scikit-learn PA-I is `{_peers.sklearn_pa1_api()}` with "
                             f"max_iter=1, tol=None, shuffle=False, average=False.")
    rows = run_interleaved(benches, repeat)
    if not peer_missing("sklearn"):
        check = min(n, 100_000)
        gap = pa_without_intercept_gap(X[:check], y[:check])
        section.notes.append(
            f"Check: without an intercept, cwrs PA1 and scikit-learn PA-I learn the same model "
            f"(max |Δcoef| = {gap:.1e} after the first {check:,} rows). With one they differ: "
            f"scikit-learn's sparse SGD leaves the bias out of ‖x‖² and moves it 100× slower "
            f"(intercept_decay 0.01), while cwrs learns it as a constant feature 1 with its own "
            f"weight, which on these unit-norm rows costs PA1 and the Perceptron accuracy.")
    return finish_section(section, rows)


def section_text_file(stream, repeat):
    X, y, X_test, y_test = stream.data()
    svm, vw, vw_test = stream.files()
    n = X.shape[0]

    def vw_bench(cache_file=None):
        def bench(evaluate):
            with Timer() as t:
                ws = _peers.vw_train_file(vw, cache_file)
            m = Measurement(t.seconds, n, t.cpu_seconds, online_err=_peers.vw_online_error(ws))
            if evaluate:
                m.test_err = error_rate([ws.predict(line) for line in vw_test], y_test)
            ws.finish()
            return m

        return bench

    def cwrs_file_bench(evaluate):
        est = cwrs.AROW(r=1.0, covariance="diag")
        m = timed(lambda: est.partial_fit_file(str(svm), classes=CLASSES, n_features=N_FEATURES),
                  n)
        if evaluate:
            m.online_err = est.n_mistakes_ / n
            m.test_err = error_rate(est.predict(X_test), y_test)
        return m

    def load_then_fit(evaluate):
        """One load_svmlight_file, then a scikit-learn fit and a cwrs fit on its result."""
        with Timer() as load:
            X_loaded, y_loaded = _peers.load_svmlight(str(svm), N_FEATURES)
        sk, cw = _peers.sklearn_pa1(C=1.0), cwrs.AROW(r=1.0, covariance="diag", shuffle=False)
        fit_sk = timed(lambda: _peers.sklearn_fit(sk, X_loaded, y_loaded), n)
        fit_cw = timed(lambda: cw.fit(X_loaded, y_loaded), n)
        result = {}
        for name, fit, est in (("sklearn PA-I: load_svmlight_file + fit", fit_sk, sk),
                               ("cwrs AROW diag: load_svmlight_file + fit", fit_cw, cw)):
            m = Measurement(load.seconds + fit.seconds, n, load.cpu_seconds + fit.cpu_seconds,
                            note=f"load {load.seconds:.1f} s + fit {fit.seconds:.2f} s")
            if evaluate:
                m.test_err = error_rate(est.predict(X_test), y_test)
                m.online_err = est.n_mistakes_ / n if est is cw else None
            result[name] = m
        return result

    vw_ok = peer_missing("vowpalwabbit")
    cache = stream.workdir / "train.vw.cache"
    if vw_ok is None:
        log("  writing VW's cache (untimed)")
        _peers.vw_make_cache(vw, cache)
    has_file_reader = hasattr(cwrs.AROW(), "partial_fit_file")
    benches = {
        "VW, text file": vw_ok or vw_bench(),
        "VW, cache file": vw_ok or vw_bench(cache),
        "cwrs AROW diag: partial_fit_file": cwrs_file_bench if has_file_reader
        else "not available (no partial_fit_file in this cwrs)",
        "load_svmlight_file + fit": peer_missing("sklearn") or load_then_fit,
    }
    rows = run_interleaved(benches, repeat)
    for name, rate in LIBSOL_RATES.items():
        rows[name] = Row(name, rate, note=LIBSOL_NOTE, published=True)
    section = Section("2", f"2. From a text file ({n:,} training rows)", "examples/s",
                      "VW, text file")
    section.notes = [
        f"The training rows of section 1 as a LIBSVM file ({svm.stat().st_size / 2**20:,.0f} "
        f"MiB) and a VW file ({vw.stat().st_size / 2**20:,.0f} MiB), just written (so in the "
        f"page cache). VW: `{' '.join(_peers.VW_ARGS)} --data FILE` (one pass, constant "
        f"feature on; --binary makes its progressive loss the mistake rate), the cache written "
        f"beforehand by a `--cache_file` run. The load_svmlight_file rows share one load per "
        f"repeat.",
    ]
    return finish_section(section, rows)


def numpy_arow_full(X, y, r=1.0, a=1.0, in_place=True):
    """Reference AROW with a full covariance in NumPy (Sherman-Morrison rank-one updates),
    no bias. `in_place`: Σx by BLAS dsymv and Σ −= β·Σx Σxᵀ by BLAS dsyr on Σ's upper
    triangle, as a careful NumPy user would write it (SciPy's BLAS wrappers); otherwise the
    textbook `S @ x` and `S -= beta * np.outer(Sx, Sx)`, which allocates a d×d temporary per
    update. Returns (mean, number of updates, number of mistakes)."""
    d = X.shape[1]
    mu, S = np.zeros(d), np.asfortranarray(a * np.eye(d))
    if in_place:
        from scipy.linalg.blas import dsymv, dsyr
    updates = mistakes = 0
    for x, label in zip(X, y.astype(np.float64)):
        Sx = dsymv(1.0, S, x) if in_place else S @ x
        v = x @ Sx
        m = label * (mu @ x)
        mistakes += m <= 0
        if m < 1:
            beta = 1.0 / (v + r)
            alpha = (1.0 - m) * beta
            mu += alpha * label * Sx
            if in_place:
                S = dsyr(-beta, Sx, a=S, overwrite_a=True)
            else:
                S -= beta * np.outer(Sx, Sx)
            updates += 1
    return mu, updates, mistakes


def section_full_covariance(d, n_rows, repeat):
    X, y = make_dense(n_rows, d, seed=d)
    means = {}

    def cwrs_bench(evaluate):
        est = cwrs.AROW(r=1.0, covariance="full", fit_intercept=False, shuffle=False)
        with Timer() as t:
            est.fit(X, y)
        means["cwrs"] = est.coef_[0]
        return Measurement(t.seconds, est.n_updates_, t.cpu_seconds,
                           online_err=est.n_mistakes_ / n_rows,
                           note=f"{est.n_updates_:,} updates in {n_rows:,} rows")

    def numpy_bench(in_place):
        def bench(evaluate):
            with Timer() as t:
                mu, updates, mistakes = numpy_arow_full(X, y, in_place=in_place)
            means["numpy, in place" if in_place else "numpy"] = mu
            return Measurement(t.seconds, updates, t.cpu_seconds,
                               online_err=mistakes / n_rows,
                               note=f"{updates:,} updates in {n_rows:,} rows")
        return bench

    reference = f"NumPy+BLAS AROW full, dsymv + dsyr in place (d={d})"
    benches = {
        f"cwrs AROW full (d={d})": cwrs_bench,
        reference: numpy_bench(in_place=True),
        f"NumPy AROW full, S @ x and np.outer (d={d})": numpy_bench(in_place=False),
    }
    section = Section(f"3-{d}", f"3. Full covariance, d={d} ({n_rows:,} dense rows)",
                      "updates/s", reference)
    rows = run_interleaved(benches, repeat)
    section.notes = [
        f"Gaussian rows N(0, I/d), labels from a random hyperplane with 5% flipped; AROW r=1, "
        f"Σ₀ = I, no bias. NumPy+BLAS: `Sx = dsymv(1, S, x); ...; dsyr(-beta, Sx, a=S, "
        f"overwrite_a=True)` per update (SciPy's BLAS, in place); the textbook NumPy row "
        f"allocates `np.outer(Sx, Sx)` per update. BLAS on one thread; "
        + ("the whole run pinned to one core (--cores 1)." if len(os.sched_getaffinity(0)) == 1
           else "cwrs may use both cores from d = 256 on.")]
    if "cwrs" in means:
        gap = max(np.max(np.abs(means["cwrs"] - mu)) / np.max(np.abs(mu))
                  for name, mu in means.items() if name != "cwrs")
        section.notes.append(f"Final mean vectors agree to max|Δμ| / max|μ| = {gap:.2e} "
                             f"({'OK' if gap <= 1e-9 else 'MISMATCH'}, tolerance 1e-9).")
    return finish_section(section, rows)


def numpy_arow_multiclass_full(X, y, K, r=1.0, a=1.0):
    """Reference max-score AROW with one full Σ per class in NumPy + BLAS (docs/design.md §4.1):
    the rival s is the highest-scoring wrong class (the first on ties), m = μ_y·x − μ_s·x,
    V = xᵀΣ_y x + xᵀΣ_s x; on m < 1, μ_y += αΣ_y x, μ_s −= αΣ_s x with α = (1 − m)/(V + r), and
    each Σ_k −= Σ_k x xᵀΣ_k/(r + v_k) by dsymv and dsyr in place. Returns (means, updates)."""
    from scipy.linalg.blas import dsymv, dsyr

    d = X.shape[1]
    mu = np.zeros((K, d))
    S = [np.asfortranarray(a * np.eye(d)) for _ in range(K)]
    updates = 0
    for x, label in zip(X, y):
        scores = mu @ x
        others = np.delete(np.arange(K), label)
        rival = int(others[np.argmax(scores[others])])
        m = scores[label] - scores[rival]
        Sx = {k: dsymv(1.0, S[k], x) for k in (label, rival)}
        v = {k: x @ Sx[k] for k in Sx}
        if m < 1:
            alpha = (1.0 - m) / (v[label] + v[rival] + r)
            mu[label] += alpha * Sx[label]
            mu[rival] -= alpha * Sx[rival]
            for k in Sx:
                S[k] = dsyr(-1.0 / (r + v[k]), Sx[k], a=S[k], overwrite_a=True)
            updates += 1
    return mu, updates


def section_multiclass_full(d, K, n_rows, repeat):
    """Multiclass AROW with full covariance (the blocked path, docs/design.md §4.4), max-score
    and one-vs-rest, against the NumPy + BLAS max-score reference above."""
    rng = np.random.default_rng(d + K)
    centres = 3 * rng.normal(size=(K, d)) / np.sqrt(d)
    y = rng.integers(0, K, size=n_rows)
    X = centres[y] + rng.normal(size=(n_rows, d)) / np.sqrt(d)
    means = {}

    def cwrs_bench(strategy):
        def bench(evaluate):
            est = cwrs.AROW(covariance="full", multi_class=strategy, fit_intercept=False,
                            shuffle=False)
            with Timer() as t:
                est.fit(X, y)
            means[strategy] = est.coef_
            return Measurement(t.seconds, n_rows, t.cpu_seconds,
                               online_err=est.n_mistakes_ / n_rows,
                               note=f"{est.n_updates_:,} updates")
        return bench

    def numpy_bench(evaluate):
        with Timer() as t:
            mu, updates = numpy_arow_multiclass_full(X, y, K)
        means["numpy"] = mu
        return Measurement(t.seconds, n_rows, t.cpu_seconds, note=f"{updates:,} updates")

    reference = f"NumPy+BLAS AROW max-score, full Σ per class (d={d}, K={K})"
    benches = {
        f"cwrs AROW full max-score (d={d}, K={K})": cwrs_bench("max-score"),
        f"cwrs AROW full ovr (d={d}, K={K})": cwrs_bench("ovr"),
        reference: numpy_bench,
    }
    section = Section(f"3-mc-{d}", f"3. Multiclass full covariance, d={d}, {K} classes "
                      f"({n_rows:,} dense rows)", "rows/s", reference)
    rows = run_interleaved(benches, repeat)
    section.notes = [f"Rows x = c_y + ε (class centres 3·N(0, I/d), ε ~ N(0, I/d)); AROW r=1, "
                     f"Σ₀ = I, no bias; BLAS on one thread."]
    if "max-score" in means and "numpy" in means:
        gap = np.max(np.abs(means["max-score"] - means["numpy"])) / np.max(np.abs(means["numpy"]))
        section.notes.append(f"cwrs max-score and NumPy final means agree to max|Δμ| / max|μ| "
                             f"= {gap:.2e} ({'OK' if gap <= 1e-9 else 'MISMATCH'}).")
    return finish_section(section, rows)


def per_call_seconds(call, n_calls, n_warmup):
    """Median wall time of call(i) over n_calls calls, after n_warmup untimed ones."""
    for i in range(n_warmup):
        call(i)
    times = np.empty(n_calls)
    clock = time.perf_counter
    for k in range(n_calls):
        start = clock()
        call(n_warmup + k)
        times[k] = clock() - start
    return float(np.median(times))


def section_latency(n_calls, n_warmup, repeat, d=100):
    total = n_calls + n_warmup
    X, y = make_dense(total, d, seed=4)
    rows = [X[i:i + 1] for i in range(total)]  # (1, d) float64 rows, sliced beforehand
    targets = [y[i:i + 1] for i in range(total)]

    def latency_bench(make_learner, note=""):
        """`make_learner()` returns a function learn(i) that learns row i."""

        def bench(evaluate):
            seconds = per_call_seconds(make_learner(), n_calls, n_warmup)
            return Measurement(seconds, 1, seconds, note=note)

        return bench

    def cwrs_learner(cls, **params):
        def make():
            est = cls(**params)
            est.partial_fit(rows[0], targets[0], classes=CLASSES)
            return lambda i: est.partial_fit(rows[i], targets[i])

        return make

    def cwrs_with_classes():
        """The README's streaming loop: `classes=` passed again on every call."""
        est = cwrs.AROW(r=1.0)
        est.partial_fit(rows[0], targets[0], classes=CLASSES)
        classes = CLASSES.tolist()
        return lambda i: est.partial_fit(rows[i], targets[i], classes=classes)

    def sklearn_learner():
        est = _peers.sklearn_pa1(C=1.0)
        est.partial_fit(rows[0], targets[0], classes=CLASSES)
        return lambda i: est.partial_fit(rows[i], targets[i])

    # (2, d) rows: the fixed cost of a call
    pairs = [X[min(i, total - 2):min(i, total - 2) + 2] for i in range(total)]
    pair_targets = [y[min(i, total - 2):min(i, total - 2) + 2] for i in range(total)]

    def cwrs_two_rows():
        est = cwrs.AROW(r=1.0)
        est.partial_fit(rows[0], targets[0], classes=CLASSES)
        return lambda i: est.partial_fit(pairs[i], pair_targets[i])

    def predictor(make, method):
        """`make()` returns an estimator; the bench calls `method` on one row."""

        def make_call():
            est = make().fit(X[:2_000], y[:2_000])
            call = getattr(est, method)
            return lambda i: call(rows[i])

        return make_call

    def numpy_dot():
        w = np.random.default_rng(0).standard_normal(d)
        return lambda i: rows[i] @ w

    benches = {
        "cwrs AROW diag partial_fit": latency_bench(cwrs_learner(cwrs.AROW, r=1.0)),
        "cwrs PA1 partial_fit": latency_bench(cwrs_learner(cwrs.PA1, C=1.0)),
        "sklearn PA-I partial_fit": peer_missing("sklearn") or latency_bench(sklearn_learner),
        "cwrs AROW diag partial_fit, 2 rows": latency_bench(cwrs_two_rows, "(2, d) rows"),
        "cwrs AROW diag partial_fit, classes= every call": latency_bench(
            cwrs_with_classes, "classes= repeated"),
        "cwrs AROW diag decision_function": latency_bench(
            predictor(lambda: cwrs.AROW(r=1.0), "decision_function"), "prediction"),
        "cwrs AROW diag predict": latency_bench(
            predictor(lambda: cwrs.AROW(r=1.0), "predict"), "prediction"),
        "cwrs AROW diag predict_proba": latency_bench(
            predictor(lambda: cwrs.AROW(r=1.0), "predict_proba"), "prediction"),
        "sklearn PA-I decision_function": peer_missing("sklearn") or latency_bench(
            predictor(lambda: _peers.sklearn_pa1(C=1.0), "decision_function"), "prediction"),
        "NumPy x @ w": latency_bench(numpy_dot, "prediction: the dot product alone"),
    }
    if peer_missing("river") is None:
        dicts = [dict(enumerate(row[0].tolist())) for row in rows]
        labels = (y == 1).tolist()

        def river_learner():
            model = _peers.river_pa1(C=1.0)
            return lambda i: model.learn_one(dicts[i], labels[i])

        benches["river PA-I learn_one"] = latency_bench(river_learner, "dict row")
    else:
        benches["river PA-I learn_one"] = "not installed"
    if peer_missing("vowpalwabbit") is None:
        lines = [f"{t} | " + " ".join(f"{j}:{v:.6g}" for j, v in enumerate(row))
                 for t, row in zip(y.tolist(), X)]

        def vw_learner():
            ws = _peers.vw_new()
            return lambda i: ws.learn(lines[i])

        benches["VW learn"] = latency_bench(vw_learner, "example string, parse included")
    else:
        benches["VW learn"] = "not installed"
    section = Section("4", f"4. One-row latency: partial_fit and prediction (d={d}, dense)",
                      "µs/call", "sklearn PA-I partial_fit")
    section.notes = [
        f"Median over {n_calls:,} calls of one (1, {d}) float64 row each, after {n_warmup:,} "
        f"warm-up calls, per repeat; the median of the repeats' medians. Rows, dicts and "
        f"strings are built beforehand."]
    return finish_section(section, run_interleaved(benches, repeat))


def section_kernel(n_rows, budget, repeat, d=100, chunk=100, gamma=1.0):
    X, y = make_clusters(n_rows, d, seed=5)

    def bench(evaluate):
        est = cwrs.AROW(r=1.0, kernel="rbf", gamma=gamma, budget=budget)
        phases = {"filling": [0.0, 0, 0.0], "full": [0.0, 0, 0.0]}
        for lo in range(0, n_rows, chunk):
            phase = phases["filling" if lo == 0 or est.n_support_ < budget else "full"]
            with Timer() as t:
                est.partial_fit(X[lo:lo + chunk], y[lo:lo + chunk], classes=CLASSES)
            phase[0] += t.seconds
            phase[1] += min(chunk, n_rows - lo)
            phase[2] += t.cpu_seconds
        online = est.n_mistakes_ / n_rows
        total = [sum(p[i] for p in phases.values()) for i in range(3)]
        result = {f"cwrs AROW rbf, budget={budget}: all rows": Measurement(
            total[0], total[1], total[2], online_err=online,
            note=f"{est.n_updates_:,} updates, {est.n_support_:,} support rows at the end")}
        for name, (seconds, n, cpu) in phases.items():
            if n:
                what = "rows while the budget fills" if name == "filling" else \
                    "rows once the budget is full"
                result[f"cwrs AROW rbf, budget={budget}: {name}"] = Measurement(
                    seconds, n, cpu, note=f"{n:,} {what}")
        return result

    section = Section("5", f"5. Kernel AROW (RBF, budget {budget}, d={d}, {n_rows:,} rows)",
                      "examples/s", None)
    section.notes = [
        f"`cwrs.AROW(r=1, kernel=\"rbf\", gamma={gamma:g}, budget={budget})`, `partial_fit` "
        f"in chunks of {chunk} rows; rows from 50 Gaussian clusters per class (N(0, I/d) "
        f"centres, spread 0.7; a linear AROW makes ~20% online mistakes on them). A chunk "
        f"counts as 'full' once the support set holds {budget} rows when it starts. No peer."]
    return finish_section(section, run_interleaved({"kernel": bench}, repeat))


def rbf_peer(X, support, coef, gamma, bias):
    """The same decision in NumPy/SciPy: rbf_kernel(X, S) @ ν (+ the bias feature's Σν)."""
    from sklearn.metrics.pairwise import rbf_kernel

    return rbf_kernel(X, support, gamma=gamma) @ coef + bias * coef.sum()


def rbf_proba_peer(X, support, coef, pi, a, gamma, bias):
    """The same probability in NumPy/SciPy: Φ(kᵀν / √(a·κ + kᵀΠk)) with k = rbf_kernel(X, S)
    (+ the bias feature) and κ = k(x, x) (+ bias) = 1 + bias; kᵀΠk row by row as
    `np.einsum('ij,jk,ik->i', K, Π, K)` sums it, through one matrix product K·Π."""
    from scipy.special import ndtr
    from sklearn.metrics.pairwise import rbf_kernel

    K = rbf_kernel(X, support, gamma=gamma) + bias
    variance = a * (1.0 + bias) + np.einsum("ij,ij->i", K @ pi, K)
    return ndtr((K @ coef) / np.sqrt(variance))


def section_kernel_predict(n_rows, budget, repeat, d=100, gamma=1.0, sparse_d=1000, nnz=20):
    """Kernel AROW prediction against the same sum in NumPy (BLAS on one thread, as set
    above), dense and sparse rows; every cwrs decision checked against the peer's."""
    if peer_missing("sklearn"):
        return []
    X, y = make_clusters(budget + n_rows, d, seed=6)
    rng = np.random.default_rng(6)
    Xs = sp.random(budget + n_rows, sparse_d, density=nnz / sparse_d, format="csr",
                   random_state=rng, data_rvs=lambda k: rng.uniform(0.5, 1.5, k))
    ys = np.where(np.asarray(Xs[:, : sparse_d // 2].sum(axis=1)).ravel()
                  > np.asarray(Xs[:, sparse_d // 2:].sum(axis=1)).ravel(), 1, -1)
    sections = []
    for kind, data, labels, g in (("dense", X, y, gamma), ("sparse", Xs, ys, 0.05)):
        est = cwrs.AROW(r=1.0, kernel="rbf", gamma=g, budget=budget)
        est.fit(data[:budget], labels[:budget])
        rows = data[budget:]
        support, coef = est.support_vectors_, np.ravel(est.dual_coef_)
        gap = np.max(np.abs(est.decision_function(rows) - rbf_peer(rows, support, coef, g, 1.0)))
        shape = f"{rows.shape[0]:,} rows × {est.n_support_:,} support rows"

        def bench(call, note=""):
            def timed_call(evaluate):
                with Timer() as t:
                    call()
                return Measurement(t.seconds, rows.shape[0], t.cpu_seconds, note=note)

            return timed_call

        state = est._model.state()
        pi = np.asarray(state["dual_covariance"]).reshape(est.n_support_, est.n_support_)
        a = float(state.get("a", 1.0))
        proba_gap = np.max(np.abs(est.predict_proba(rows)[:, 1]
                                  - rbf_proba_peer(rows, support, coef, pi, a, g, 1.0)))
        benches = {
            f"cwrs AROW rbf decision_function ({kind})": bench(
                lambda: est.decision_function(rows), f"max |Δ| vs NumPy {gap:.1e}"),
            f"cwrs AROW rbf predict ({kind})": bench(lambda: est.predict(rows)),
            f"NumPy rbf_kernel @ dual_coef_ ({kind})": bench(
                lambda: rbf_peer(rows, support, coef, g, 1.0)),
            f"cwrs AROW rbf predict_proba ({kind})": bench(
                lambda: est.predict_proba(rows),
                f"with the variance kᵀΠk; max |Δ| vs NumPy {proba_gap:.1e}"),
            f"NumPy predict_proba ({kind})": bench(
                lambda: rbf_proba_peer(rows, support, coef, pi, a, g, 1.0),
                "K·Π and the row sums of (K·Π)∘K, Φ from SciPy"),
        }
        title = (f"5b. Kernel AROW prediction, {kind} rows (RBF, d={rows.shape[1]:,}"
                 f"{f', {nnz} non-zeros' if kind == 'sparse' else ''}; {shape})")
        section = Section("5", title, "rows/s", f"NumPy rbf_kernel @ dual_coef_ ({kind})")
        proba = Section("5", f"{title}: predict_proba", "rows/s", f"NumPy predict_proba ({kind})")
        proba.notes = [
            "The same model and rows; the peer is Φ(kᵀν / √(a·κ + kᵀΠk)) in NumPy/SciPy "
            "(`rbf_kernel`, `K @ Π`, `np.einsum('ij,ij->i', K @ Π, K)`, `ndtr`), BLAS on one "
            "thread, Π from the model's state."]
        section.notes = [
            f"`cwrs.AROW(r=1, kernel=\"rbf\", gamma={g:g}, budget={budget})` fitted on "
            f"{budget:,} rows, then each call on the {shape}; the peer is "
            f"`sklearn.metrics.pairwise.rbf_kernel(X, support_vectors_, gamma) @ dual_coef_` "
            f"(+ Σν, the bias feature), BLAS on one thread; cwrs uses both cores on large "
            f"batches."]
        rows_by_name = run_interleaved(benches, repeat)
        is_proba = {name: "predict_proba" in name for name in rows_by_name}
        sections.append(finish_section(
            section, {n: r for n, r in rows_by_name.items() if not is_proba[n]}))
        sections.append(finish_section(
            proba, {n: r for n, r in rows_by_name.items() if is_proba[n]}))
    return sections


def section_kernel_a1a(repeat):
    """Kernel prediction on a1a.t as a new user would try it: the README's defaults."""
    shared = Path(__file__).resolve().parents[2] / "shared" / "datasets"
    if not (shared / "a1a.t.libsvm").exists() or peer_missing("sklearn"):
        return []
    from sklearn.svm import SVC

    X, y = cwrs.load_svmlight(str(shared / "a1a.libsvm"), n_features=123)
    Xt, yt = cwrs.load_svmlight(str(shared / "a1a.t.libsvm"), n_features=123)

    def fit_predict(name, make):
        def bench(evaluate):
            with Timer() as fit:
                est = make().fit(X, y)
            with Timer() as predict:
                predicted = est.predict(Xt)
            test = error_rate(predicted, yt)
            n_support = getattr(est, "n_support_", None)
            note = f"{int(np.sum(n_support)):,} support rows" if n_support is not None else ""
            return {
                f"{name}: fit": Measurement(fit.seconds, X.shape[0], fit.cpu_seconds, note=note),
                f"{name}: predict": Measurement(predict.seconds, Xt.shape[0],
                                                predict.cpu_seconds, test_err=test),
            }
        return bench

    name = "cwrs AROW(kernel=\"rbf\")"
    benches = {name: fit_predict(name, lambda: cwrs.AROW(kernel="rbf")),
               "SVC()": fit_predict("SVC()", SVC)}
    section = Section("5", "5c. Kernel prediction on a1a.t, as a new user would try it",
                      "rows/s", "SVC(): predict")
    section.notes = [
        f"Defaults throughout: `cwrs.AROW(kernel=\"rbf\")` (γ = 1/n_features, no budget) and "
        f"scikit-learn's `SVC()`, fitted on a1a ({X.shape[0]:,} rows), then `predict` on a1a.t "
        f"({Xt.shape[0]:,} rows, CSR); rates in rows of each call's input."]
    return [finish_section(section, run_interleaved(benches, repeat))]


# ============================================================================ report
def blas_threads():
    """The thread counts of the loaded BLAS libraries (threadpoolctl), else what was asked."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "1 (requested)"
    counts = {str(lib["num_threads"]) for lib in threadpool_info() if lib["user_api"] == "blas"}
    return "/".join(sorted(counts)) or "unknown"


def header(args):
    versions = {"cwrs": cwrs.__version__, "numpy": np.__version__, "scipy": scipy.__version__,
                **_peers.versions()}
    return {
        "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "cpu": _peers.cpu_model(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "blas_threads": blas_threads(),
        "versions": versions,
        "repeat": args.repeat,
        "quick": args.quick,
        "sklearn_pa1": _peers.sklearn_pa1_api(),
    }


def fmt_rate(rate, unit):
    if rate is None:
        return "—"
    if unit == "µs/call":
        return f"{1e6 / rate:,.1f}"
    return f"{rate / 1e3:,.1f}k" if rate >= 1e4 else f"{rate:,.0f}"


def fmt_pct(value):
    return "—" if value is None else f"{value:.2%}"


def markdown(section):
    lines = [f"### {section.title}", ""]
    lines += [note + "\n" for note in section.notes]
    rate_head = f"{section.unit} (median)"
    ratio_head = f"speed vs {section.reference}" if section.reference else "speed ratio"
    lines.append(f"| learner | {rate_head} | online error | test error | {ratio_head} | note |")
    lines.append("|---|--:|--:|--:|--:|---|")
    for row in section.rows:
        ratio = "—" if row.ratio is None else f"{row.ratio:.2f}×"
        lines.append(f"| {row.learner} | {fmt_rate(row.rate, section.unit)} | "
                     f"{fmt_pct(row.online_err)} | {fmt_pct(row.test_err)} | {ratio} | "
                     f"{row.note} |")
    return "\n".join(lines) + "\n"


def plot(sections, path):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.patches
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        log("--plot needs matplotlib (pip install matplotlib); no plot written")
        return
    shown = [s for s in sections if any(r.rate for r in s.rows)]
    height = 1.2 + 0.45 * sum(len(s.rows) for s in shown) + 0.6 * len(shown)
    fig, axes = plt.subplots(len(shown), 1, figsize=(9, height), squeeze=False)
    for ax, section in zip(axes[:, 0], shown):
        rows = [r for r in section.rows if r.rate]
        names = [r.learner for r in rows][::-1]
        rates = [r.rate for r in rows][::-1]
        colors = ["#bbbbbb" if r.published else "#d95f02" if r.learner.startswith("cwrs")
                  else "#1b9e77" for r in rows][::-1]
        ax.barh(names, rates, color=colors)
        ax.set_xscale("log")
        ax.set_xlim(10 ** np.floor(np.log10(min(rates) / 2)), max(rates) * 4)
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        label = "calls/s" if section.unit == "µs/call" else section.unit
        ax.set_xlabel(f"{label} (log scale)")
        ax.set_title(section.title, fontsize=10, loc="left")
        ax.tick_params(axis="y", labelsize=8)
        for y_pos, rate in enumerate(rates):
            ax.text(rate, y_pos, " " + fmt_rate(rate, section.unit)
                    + (" µs" if section.unit == "µs/call" else ""), va="center", fontsize=7)
    legend = [matplotlib.patches.Patch(color=c, label=l) for c, l in (
        ("#d95f02", "cwrs"), ("#1b9e77", "peer"), ("#bbbbbb", "published, not measured"))]
    fig.legend(handles=legend, fontsize=8, loc="upper center", ncol=3, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.35 / fig.get_figheight()))
    fig.savefig(path, dpi=120)
    log(f"plot written to {path}")


# ============================================================================ main
def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    parser.add_argument("--repeat", type=int, default=None,
                        help="runs per learner, the median is reported (default 3, quick 1)")
    parser.add_argument("--sections", default="1,2,3,4,5", help="comma-separated, e.g. 1,3")
    parser.add_argument("--rows", type=int, default=None,
                        help="rows of the sparse stream of sections 1-2 (default 1,000,000)")
    parser.add_argument("--cores", type=int, default=None,
                        help="pin the whole run to this many cores (the first ones it may use), "
                             "e.g. 1 for one-core figures")
    parser.add_argument("--json", type=Path, help="write every result to this JSON file")
    parser.add_argument("--plot", type=Path, help="write a PNG bar chart (needs matplotlib)")
    args = parser.parse_args(argv)
    args.repeat = args.repeat or (1 if args.quick else 3)
    args.rows = args.rows or (50_000 if args.quick else 1_000_000)
    args.sections = {s.strip() for s in args.sections.split(",") if s.strip()}
    if args.repeat < 1 or args.rows < 20 or not args.sections <= set("12345"):
        parser.error("--repeat >= 1, --rows >= 20, --sections among 1,2,3,4,5")
    if args.cores is not None and args.cores < 1:
        parser.error("--cores >= 1")
    return args


def pin_cores(n):
    """Restricts this process (and the threads it starts) to its first `n` allowed cores,
    before cwrs first asks how many there are (it asks once)."""
    allowed = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, allowed[:n])
    log(f"pinned to core(s) {allowed[:n]}")


def main(argv=None):
    args = parse_args(argv)
    if args.cores is not None:
        pin_cores(args.cores)
    quick = args.quick
    info = header(args)
    versions = " · ".join(f"{k} {v}" for k, v in info["versions"].items())
    print(f"## cwrs vs peers: {info['date']}\n")
    print(f"{info['cpu']}, {info['cores']} cores · Python {info['python']} · {versions} · "
          f"BLAS threads {info['blas_threads']} · median of {args.repeat} run(s)"
          f"{' · --quick' if quick else ''}\n")
    sections = []
    with tempfile.TemporaryDirectory(prefix="cwrs-compare-") as workdir:
        stream = Stream(args.rows, workdir)
        steps = [
            ("1", lambda: [section_sparse_memory(stream, args.repeat,
                                                 2_000 if quick else 20_000)]),
            ("2", lambda: [section_text_file(stream, args.repeat)]),
            ("3", lambda: [section_full_covariance(1000, 300 if quick else 3_000, args.repeat),
                           section_full_covariance(300, 1_000 if quick else 3_000, args.repeat),
                           section_multiclass_full(300, 10, 300 if quick else 2_000,
                                                   args.repeat)]),
            ("4", lambda: [section_latency(2_000 if quick else 20_000, 200 if quick else 2_000,
                                           args.repeat)]),
            ("5", lambda: [section_kernel(600 if quick else 3_000, 200 if quick else 1_000,
                                          args.repeat),
                           *section_kernel_predict(400 if quick else 2_000,
                                                   200 if quick else 1_000, args.repeat),
                           *section_kernel_a1a(args.repeat)]),
        ]
        for key, run in steps:
            if key not in args.sections:
                continue
            log(f"section {key}")
            for section in run():
                sections.append(section)
                print(markdown(section), flush=True)
    if args.json:
        args.json.write_text(json.dumps(
            {"header": info, "sections": [asdict(s) for s in sections]}, indent=2))
        log(f"results written to {args.json}")
    if args.plot:
        plot(sections, args.plot)


if __name__ == "__main__":
    main()
