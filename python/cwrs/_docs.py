"""One source for the documentation the estimators share.

An estimator's docstring is assembled by the class decorator `document` from the rule table of
the Rust core (`cwrs._params.RULES`): the method and its paper (authors, venue, year), the
update rule (docs/design.md §2: when it fires, α and c) and the rule's own hyper-parameters
with their defaults and ranges; then what the class's own docstring adds (remarks, and
"Parameters" entries where a shared parameter means something particular for it); then the
entries below for every other parameter of its `__init__`, all in signature order, and the
"Attributes" section of its kind. So `help(cwrs.AROW)` documents every parameter and fitted
attribute, and nothing is written twice; tests/test_docs.py checks that this stays so.
"""

from __future__ import annotations

import inspect
import re
import textwrap
from typing import TYPE_CHECKING, TypeVar

from ._params import rule_entry

if TYPE_CHECKING:
    from ._cwrs import _RuleParam

T = TypeVar("T", bound=type)

#: numpydoc entries of the parameters that several estimators share, by name.
PARAMETERS = {
    "a": """\
a : float, default=1.0
    Initial variance, Σ₀ = a·I (a > 0): the prior of every weight is N(0, a), so a feature seen
    for the first time has mean 0 and variance a.""",
    "covariance": """\
covariance : {"diag", "full", "lowrank"}, default="diag"
    "full" keeps the d×d covariance (Sherman–Morrison rank-one updates, O(d²) per update);
    "diag" keeps one variance per feature, the diagonal of the precision update
    (Σ_j ← Σ_j / (1 + c·Σ_j·x_j²), the papers' own choice), O(nnz) per example; "lowrank"
    keeps the precision D + BᵀB, B a Frequent Directions sketch of 2·rank rows of the updates
    and D diagonal, holding what the sketch drops (O(rank·d) per update, O(rank·nnz + rank²)
    per prediction): the full form's leading correlations at a cost linear in d.""",
    "rank": """\
rank : int, default=10
    The sketch's rank k with `covariance="lowrank"` (1 ≤ k ≤ 1024): 2k rows of d values. The
    model equals the full-covariance one until 2k updates.""",
    "penalty": """\
penalty : {None, "l1", "l1-uniform"}, default=None
    Sparse training (`covariance="diag"` only): after every update each weight is
    soft-thresholded by η_t·alpha·Σ_jj ("l1", the coordinate-dependent FOBOS step: confident
    weights shrink less) or by η_t·alpha ("l1-uniform", the classic truncated gradient), applied
    lazily so a row costs O(nnz). η_t is the rule's step per unit of loss gradient: α_t, or
    1/(2(v + r)) for AROW (1/(2(v + 1/C)) for NHERD). `sparsity_` and `sparse_coef_` report the
    result.""",
    "alpha": """\
alpha : float, default=1e-4
    The L1 strength λ (alpha ≥ 0), used with `penalty`.""",
    "penalize_intercept": """\
penalize_intercept : bool, default=False
    Whether the bias is soft-thresholded too, with `penalty`.""",
    "process_noise": """\
process_noise : float or "auto", default=0.0
    For drifting streams (docs/design.md §10): before every round the covariance grows by
    q·I (q = process_noise ≥ 0), the random-walk step of a Kalman filter, so the model never
    stops learning; larger q tracks changes faster at the cost of a noisier model on a
    stationary stream. "auto" resets the covariance to a·I when a change of the stream is
    detected (the rounds' mistakes, or standardized residuals, rise well above their own
    level) and, for `AROWRegressor`, also grows it by a q estimated online from the residuals
    (covariance matching; 0 on a stationary stream), which tracks gradual drift. 0 is the
    learner without it. A constant q may be at most (1.8e308 − a)/2⁶⁴ (so that no variance
    overflows). Not with an L1 `penalty` or a `kernel`.""",
    "fit_intercept": """\
fit_intercept : bool, default=True
    Learn a bias as a constant feature 1 with its own mean (and variance). With False the model
    is the papers' homogeneous w·x.""",
    "n_iter": """\
n_iter : int, default=1
    Passes over the data made by `fit` (n_iter ≥ 1); `partial_fit` always makes one.""",
    "shuffle": """\
shuffle : bool, default=True
    `fit` presents the rows of each pass in a fresh random order (drawn from `random_state`),
    as scikit-learn's SGD, Perceptron and PA estimators do: an online learner fitted on data
    stored sorted by label (many data sets are) learns badly in stored order. False keeps the
    stored order (a stream's order). `partial_fit` never reorders.""",
    "average": """\
average : bool or int, default=False
    Predict with the running average of the mean weights instead of the last mean, as
    scikit-learn's averaged SGD: True averages the means after every row learned, an int n the
    means after rows n, n + 1, ... (before row n predictions use the mean). `decision_function`,
    `predict`, `coef_` and `intercept_` use the average; the covariance is not averaged, so
    `predict_proba` and `variance` pair the averaged mean with the current Σ (docs/design.md
    §3.10). Kept exactly in O(nnz) per row (a kernel model averages its dual coefficients);
    `partial_fit` continues it and saving keeps it. Not with a kernel `budget` or an L1 penalty.""",
    "random_state": """\
random_state : int, numpy.random.RandomState, numpy.random.Generator or None, default=None
    Seed of the shuffling (and of the random Fourier features); None draws a fresh order at
    every `fit`. Used only with `shuffle=True` or `kernel_approximation`.""",
    "class_weight": """\
class_weight : dict, "balanced" or None, default=None
    Weights of the classes: each row's importance weight is its `sample_weight` times its
    class's weight (a dict {class: weight ≥ 0}; classes it leaves out weigh 1). "balanced":
    n / (n_classes · n_k), n_k the total sample weight of class k counted so far (its rows,
    without `sample_weight`) and n that of all classes. `fit` counts all of y first, which is
    scikit-learn's `compute_class_weight("balanced", classes=classes, y=y,
    sample_weight=sample_weight)`; `partial_fit`, where scikit-learn refuses "balanced", counts
    each call's rows before it learns them, adding them to the counts the model keeps
    (`class_counts_`; saved, pickled and merged with it). A rule weighs a row as
    docs/design.md §2.10 derives; the rules whose step meets a hard constraint (PA, CW,
    ExactCW, ROMMA, AggressiveROMMA, IELLIP) take the same step for every weight above 0.""",
    "n_jobs": """\
n_jobs : int, default=1
    Threads `fit` trains with (-1: every core, -2: all but one, as in scikit-learn; at most
    1024). Each pass splits its rows (shuffled as above) into n_jobs contiguous shards (one
    per row when there are fewer rows), trains a copy of the
    model on each in parallel, and merges them (`cwrs.merge`, method "auto", from the model at
    the start of the pass; docs/design.md §9). The result depends on the data, random_state and
    n_jobs only, but differs from the sequential fit of n_jobs=1 (exactly equal for
    AROWRegressor with covariance="full"). `partial_fit` always learns in order on one thread.
    Kernel learners need n_jobs=1.""",
    "multi_class": """\
multi_class : {"max-score", "ovr"}, default="max-score"
    With more than two classes: "max-score" keeps one Gaussian per class and, on each example,
    applies the binary rule to the margin between the true class y and the highest-scoring wrong
    class s, with m = μ_y·x − μ_s·x and v = xᵀΣ_y x + xᵀΣ_s x (docs/design.md §4); "ovr" learns
    one binary problem per class. Two classes always use the binary learner.""",
    "kernel": """\
kernel : {None, "linear", "rbf", "poly"} or callable, default=None
    Learn in the dual form in a reproducing-kernel Hilbert space (the representer theorem of the
    AROW and CW-Stdev papers): μ = Σ_p ν_p φ(x_p) and Σ = a·I + Σ_pq Π_pq φ(x_p)φ(x_q)ᵀ over the
    support rows x_p, the rows on which the rule fired. Kernels follow scikit-learn: linear x·z,
    rbf exp(−γ‖x − z‖²), poly (γ·x·z + coef0)^degree; a callable k(X, Z) returns the matrix of
    kernel values. The dual covariance is always full (`covariance` is ignored), and with
    `fit_intercept` the kernel gains a constant 1 (the bias feature). With more than two classes
    every class keeps its own dual Gaussian (built-in kernels only).""",
    "gamma": """\
gamma : float or None, default=None
    Kernel scale (gamma > 0) for "rbf", "poly" and the random Fourier features; None means
    1 / n_features. Setting it for another kernel (or none) raises `ValueError`, as it would
    have no effect; so do `degree`, `coef0` and `budget`.""",
    "degree": """\
degree : int, default=3
    Degree of the "poly" kernel (1 ≤ degree ≤ 2**31 − 1).""",
    "coef0": """\
coef0 : float, default=1.0
    Constant term of the "poly" kernel.""",
    "budget": """\
budget : int or None, default=None
    Cap on the number of support rows of a kernel learner (1 ≤ budget ≤ 2**30). When an update would
    exceed it, the support row whose mean term ν_p·φ(x_p) has the smallest norm
    |ν_p|·√k(x_p, x_p) is removed: its precision term exactly (a Schur complement of Π, so the
    covariance stays positive definite), its mean term projected onto the remaining support rows.
    Memory O(budget²), time per example O(budget·nnz + budget²).""",
    "kernel_approximation": """\
kernel_approximation : {None, "rff"}, default=None
    "rff" maps rows to `n_components` random Fourier features of the RBF kernel (Rahimi, Recht,
    NIPS 2007; seeded by `random_state`) and learns the primal model on them: constant cost per
    example on streams of any length. `coef_` is then over the random features.""",
    "n_components": """\
n_components : int, default=100
    Number of random Fourier features (n_components ≥ 1).""",
}

# The attributes every estimator has once fitted.
_FEATURE_ATTRIBUTES = """\
n_features_in_ : int
    Number of features seen in the first `fit`/`partial_fit`.
feature_names_in_ : ndarray of shape (`n_features_in_`,)
    The column names of X in the first `fit`/`partial_fit`, defined only when X was a data
    frame whose column names are all strings; later calls must pass the same columns (a
    ValueError otherwise; a warning for an array without names)."""

_COMMON_CLASSIFIER_ATTRIBUTES = f"""\
classes_ : ndarray of shape (n_classes,)
    The labels, sorted; with two classes `classes_[1]` is the positive class (y = +1).
{_FEATURE_ATTRIBUTES}
coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
    The mean weights μ (over the random features with `kernel_approximation`; with a kernel only
    for `kernel="linear"`).
intercept_ : ndarray of shape (1,) or (n_classes,)
    The bias weights; 0 when `fit_intercept=False`."""

_COVARIANCE_ATTRIBUTE = """\
covariance_ : ndarray
    The covariance over the features (bias left out): (n_features, n_features) with
    `covariance="full"`, (n_features,) with "diag", and with "lowrank" its factors, shape
    (1 + 2·rank, n_features): row 0 the variances S, then the sketch B (unused rows 0), with
    Σ = (diag(1/S) + BᵀB)⁻¹ over the features and bias; with more than two classes one per class, stacked on a first axis. Not defined for kernel
    learners (their covariance is dual). `covariance_matrix()` gives Σ itself."""

_KERNEL_ATTRIBUTES = """\
n_updates_ : int
    Rounds whose update changed the model, over everything seen.
n_mistakes_ : int
    Rounds whose label did not score strictly best before learning (binary: y·f ≤ 0).
n_support_ : int
    Kernel learners: the number of support rows (summed over classes).
support_vectors_ : ndarray or CSR matrix of shape (`n_support_`, n_features)
    Binary kernel learners: the support rows (CSR if fitted on sparse input).
dual_coef_ : ndarray of shape (1, `n_support_`)
    Binary kernel learners: ν, with μ = Σ_p ν_p φ(x_p) (scikit-learn's SVC shape). A
    multiclass kernel learner keeps one support set per class and has no `dual_coef_`.
sparsity_ : float
    The fraction of exactly-zero entries of `coef_`.
sparse_coef_ : scipy.sparse.csr_matrix
    `coef_` as a CSR matrix (needs SciPy)."""

_REGRESSOR_ATTRIBUTES = f"""\
{_FEATURE_ATTRIBUTES}
coef_ : ndarray of shape (n_features,)
    The mean weights μ.
intercept_ : ndarray of shape (1,)
    The bias weight; 0 when `fit_intercept=False`."""

_REGRESSOR_COUNTERS = """\
n_updates_ : int
    Rows whose update changed the model, over everything seen.
sparsity_ : float
    The fraction of exactly-zero entries of `coef_`.
sparse_coef_ : scipy.sparse.csr_matrix
    `coef_` as a 1-row CSR matrix (needs SciPy)."""

#: The "Attributes" sections, by kind of estimator.
ATTRIBUTES = {
    "first-order classifier": "\n".join([_COMMON_CLASSIFIER_ATTRIBUTES, _KERNEL_ATTRIBUTES]),
    "second-order classifier": "\n".join(
        [_COMMON_CLASSIFIER_ATTRIBUTES, _COVARIANCE_ATTRIBUTE, _KERNEL_ATTRIBUTES]
    ),
    "first-order regressor": "\n".join([_REGRESSOR_ATTRIBUTES, _REGRESSOR_COUNTERS]),
    "second-order regressor": "\n".join(
        [
            _REGRESSOR_ATTRIBUTES,
            """\
covariance_ : ndarray
    The covariance over the features (bias left out): (n_features, n_features) with
    `covariance="full"`, (n_features,) with "diag".""",
            _REGRESSOR_COUNTERS,
        ]
    ),
}

_SECTION = re.compile(r"^(\w[\w ]*)\n-{3,}$", re.MULTILINE)
_ENTRY = re.compile(r"^([A-Za-z_][\w, ]*?) :", re.MULTILINE)


def documented_parameters(doc: str) -> set[str]:
    """The names that have an entry in the "Parameters" section of a numpydoc docstring."""
    section = _section(inspect.cleandoc(doc), "Parameters")
    names: set[str] = set()
    for match in _ENTRY.finditer(section):
        names.update(name.strip() for name in match.group(1).split(","))
    return names


def _section(doc: str, title: str) -> str:
    """The body of the section `title` of a cleaned docstring ("" if it has none)."""
    headers = list(_SECTION.finditer(doc))
    for i, header in enumerate(headers):
        if header.group(1) == title:
            end = headers[i + 1].start() if i + 1 < len(headers) else len(doc)
            return doc[header.end() : end]
    return ""


def _entries(section: str) -> dict[str, str]:
    """The numpydoc entries of a "Parameters" section body, by parameter name."""
    starts = list(_ENTRY.finditer(section))
    entries = {}
    for i, start in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(section)
        entries[start.group(1).strip()] = section[start.start() : end].strip("\n")
    return entries


# A word of prose (two letters or more, so not a variable such as m, v or C), with the
# punctuation that may end it.
_PROSE_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]+[,.;:]?")
_NO_BREAK = "\u00a0"


def _fill(text: str, indent: str = "") -> str:
    """`text` wrapped to 96 columns, breaking a line only outside brackets and either after a
    separator (, ; : .) or between two words of prose, so that a formula such as
    "α = (1 − m)/(v + r)" is never split across lines."""
    tokens = text.split(" ")
    depth, glued = 0, tokens[0]
    for left, right in zip(tokens, tokens[1:]):
        depth += sum(map(left.count, "([{")) - sum(map(left.count, ")]}"))
        prose = _PROSE_WORD.fullmatch(left) and _PROSE_WORD.fullmatch(right)
        breakable = depth <= 0 and (left[-1:] in tuple(",;:.") or bool(prose))
        glued += (" " if breakable else _NO_BREAK) + right
    wrapped = textwrap.fill(
        glued, width=96, initial_indent=indent, subsequent_indent=indent,
        break_long_words=False, break_on_hyphens=False,
    )
    return wrapped.replace(_NO_BREAK, " ")


def _range_text(param: _RuleParam) -> str:
    """A parameter's valid range, as "C > 0" or "eta in (0.5, 1)"."""
    name, low, high = param["name"], param["low"], param["high"]
    if high == float("inf"):
        return f"{name} {'>' if param['low_open'] else '≥'} {low:g}"
    opening, closing = "(" if param["low_open"] else "[", ")" if param["high_open"] else "]"
    return f"{name} in {opening}{low:g}, {high:g}{closing}"


def _rule_parameter(param: _RuleParam) -> str:
    meaning = param["doc"].rstrip(".")
    return "\n".join([
        f"{param['name']} : float, default={param['default']!r}",
        _fill(f"{meaning} ({_range_text(param)}).", "    "),
    ])


def document(cls: T) -> T:
    """Class decorator: the docstring of an estimator from its rule's table entry, its own
    docstring and the shared entries of `PARAMETERS` and `ATTRIBUTES` (see the module doc)."""
    entry = rule_entry(cls._rule_kind, cls._rule)  # type: ignore[attr-defined]
    own = inspect.cleandoc(cls.__doc__ or "")
    headers = list(_SECTION.finditer(own))
    if headers and (headers[0].group(1) != "Parameters" or len(headers) > 1):
        raise ValueError(f"{cls.__name__}: only a Parameters section may follow the remarks")
    remarks = own[: headers[0].start()].strip() if headers else own.strip()
    overrides = _entries(_section(own, "Parameters"))
    rule_params = {param["name"]: _rule_parameter(param) for param in entry["params"]}
    names = [n for n in inspect.signature(cls).parameters if n != "self"]
    parameters = [overrides.get(n) or rule_params.get(n) or PARAMETERS[n] for n in names]
    order = "second-order" if entry["second_order"] else "first-order"
    kind = "classifier" if entry["kind"] == "classification" else "regressor"
    weight = "sample_weight" if kind == "regressor" else "sample_weight × class_weight"
    paragraphs = [
        _fill(f"{entry['title']} ({entry['reference']})."),
        _fill(entry["summary"]),
        _fill(
            f"A row of weight h ({weight}): {entry['weighted']}"
            + ("; weight h then h′ is weight h + h′ once" if entry["weighted_exact"] else "")
            + " (docs/design.md §2.10)."
        ),
        *([remarks] if remarks else []),
        "\n".join(["Parameters\n----------", *parameters]),
        "Attributes\n----------\n" + ATTRIBUTES[f"{order} {kind}"],
        # A citation's lines after the first are indented under its text.
        "References\n----------\n"
        + _fill(f".. [1] {entry['reference']}: {entry['title']}.").replace("\n", "\n   "),
        "Examples\n--------\n" + _example(cls.__name__, kind),
    ]
    cls.__doc__ = "\n\n".join(paragraphs)
    return cls


def _example(name: str, kind: str) -> str:
    """The Examples section of estimator `name`: a first model, run as a doctest by the test
    suite (tests/test_doc_examples.py)."""
    if kind == "regressor":
        return f"""\
>>> import numpy as np
>>> from cwrs import {name}
>>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 1.0]])
>>> y = X @ [2.0, -1.0]  # the target 2·x₀ − x₁
>>> model = {name}(n_iter=20, random_state=0).fit(X, y)
>>> bool(abs(model.predict([[3.0, 1.0]])[0] - 5.0) < 1.0)
True"""
    return f"""\
>>> import numpy as np
>>> from cwrs import {name}
>>> X = np.array([[2.0, 0.0], [0.0, 2.0], [1.5, 0.5], [0.5, 1.5]])
>>> y = np.array(["spam", "ham", "spam", "ham"])
>>> model = {name}(n_iter=5, random_state=0).fit(X, y)
>>> model.predict([[1.8, 0.2], [0.1, 1.9]])
array(['spam', 'ham'], dtype='<U4')
>>> model = model.partial_fit(X[:2], y[:2])  # a stream: continue from the current state"""
