"""`SelectiveSampler`: active (label-efficient) learning around a cwrs classifier, asking for a
row's label from the confidence of the model at that moment and learning only the rows asked."""

from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING, Any, Literal, Optional, Union

import numpy as np
import numpy.typing as npt

from ._classifier import Classifier
from ._meta import MetaEstimator, clone
from ._params import InvalidParameterError
from ._validation import (
    check_feature_names,
    check_labels,
    check_sample_weight,
    check_X,
    classes_of,
    feature_names,
    not_fitted_error,
)

if TYPE_CHECKING:
    from typing_extensions import Self

    from ._typing import ArrayLike, Float64Array, MatrixLike, SampleWeight

STRATEGIES = ("margin", "bbq", "random")
# The most rows `fit` scores ahead with one model state (see `_simulate`).
_MAX_BLOCK = 1024


def row_block(matrix, start, stop):
    """Rows start:stop of a matrix as the native model takes it (a C-contiguous array, or a CSR
    tuple (data, indices, indptr, n_cols))."""
    if not isinstance(matrix, tuple):
        return matrix[start:stop]
    data, indices, indptr, n_cols = matrix
    low, high = indptr[start], indptr[stop]
    return data[low:high], indices[low:high], indptr[start : stop + 1] - low, n_cols


def normalized_margin(margin, variance):
    """|m|/√v, with 0/0 (and a score that has no value) taken as 0 (the row is uncertain) and
    m/0 as +inf."""
    root = np.sqrt(variance)
    if root.all() and np.isfinite(root).all():  # the common case, without np.errstate's cost
        ratio = np.abs(margin) / root
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.abs(margin) / root
    nan = np.isnan(ratio)
    if nan.any():
        ratio[nan] = 0.0
    return ratio


def top_two(scores, variances):
    """For multiclass scores (n, K): the gap between the two highest class scores and the
    variances of those two classes (None without variances)."""
    order = np.argsort(-scores, axis=1, kind="stable")[:, :2]
    rows = np.arange(scores.shape[0])[:, None]
    best = scores[rows, order]
    gap = best[:, 0] - best[:, 1]
    if variances is None:
        return gap, None, None
    pair = variances[rows, order]
    return gap, pair[:, 0], pair[:, 1]


def query_rule(strategy, threshold, kappa, b, scores, variances, t, uniforms):
    """The decision of each row from the model's scores and variances (None: first order), the
    1-based row counts `t` (bbq) and one uniform draw per row (random): returns (asked, p),
    p the probability of asking (1 for the deterministic strategies)."""
    if scores.ndim == 2:
        margin, v_first, v_second = top_two(scores, variances)
        margin_variance = None if v_first is None else v_first + v_second
        variance = None if v_first is None else (v_first + v_second) / 2
    else:
        margin, margin_variance = scores, variances
        variance = variances
    if strategy == "margin":
        asked = normalized_margin(margin, margin_variance) < threshold
        return asked, np.ones(asked.shape[0])
    if strategy == "bbq":
        finite = np.isfinite(variance)
        r = variance / (1.0 + variance) if finite.all() else np.where(
            finite, variance / (1.0 + np.where(finite, variance, 0.0)), 1.0
        )
        asked = r > np.asarray(t, dtype=np.float64) ** -kappa
        return asked, np.ones(asked.shape[0])
    confidence = (
        np.where(np.isnan(margin), 0.0, np.abs(margin)) if variances is None
        else normalized_margin(margin, margin_variance)
    )
    # b/(b + inf) = 0 and b/(b + 0) = 1 with b finite and > 0.
    p = np.ones(confidence.shape[0]) if math.isinf(b) else b / (b + confidence)
    return uniforms < p, p


class SelectiveSampler(MetaEstimator):
    """Active learning with confidence (Dredze & Crammer 2008; Cesa-Bianchi, Gentile & Orabona
    2009): learns a stream from the labels of the rows the model is unsure of.

    A meta-estimator around a cwrs classifier (`estimator`, never modified: `fit` and the first
    `partial_fit` learn a clone, `estimator_`). For each row, in order, it decides from the model
    as it is at that moment whether to ask for the row's label, and learns only the rows it
    asked for; `predict`, `decision_function`, `score` (and `predict_proba` when the estimator
    has it) are `estimator_`'s. With m the row's score (μ·x; with more than two classes the gap
    between the two highest class scores) and v its variance xᵀΣx under the model's covariance
    (with more classes v_top + v_second for the gap, and their mean for "bbq"), the strategies
    are:

    - "margin" (Dredze & Crammer 2008): ask when the normalized margin |m|/√v < `threshold`,
      i.e. (two classes) when the weights' Gaussian gives the row's predicted label a
      probability Φ(|m|/√v) (`predict_posterior_proba`) below Φ(`threshold`). Rows of small margin and rows unlike anything seen
      (large v) are asked.
    - "bbq" (Cesa-Bianchi, Gentile & Orabona 2009, "bound on bias query"): ask when
      r_t = v/(1 + v) > t^(−κ), t the 1-based number of rows seen so far (asked or not). It
      asks for rows in directions the model has seen little of, whatever their margin; the
      rows asked among the first t grow like t^κ (up to the dimension and a logarithm).
    - "random" (Cesa-Bianchi, Gentile & Zaniboni 2006, "Worst-case analysis of selective
      sampling for linear classification"): ask with probability p = b/(b + |m|/√v) (first-order
      learners: p = b/(b + |m|)), with one uniform draw per row from a generator seeded by
      `random_state`, and learn an asked row with weight 1/p (times its `sample_weight`): the
      expected weighted loss is the full stream's (importance weighting), so the model is not
      biased towards the uncertain rows it asks for.

    "margin" and "bbq" need the variance: a first-order estimator (`Perceptron`, `PA1`, ...) is
    refused with them (ValueError); "random" takes any classifier. Kernel learners are refused.

    The defaults are measured (benchmarks/active.py; benchmarks/RESULTS.md, "Active learning"):
    each is the smallest value of its sweep whose held-out accuracy (AROW, one pass, the mean
    over three orders) is within one point of learning every label on each of a1a, w1a, digits
    and a synthetic stream. "margin" with `threshold=0.5` used 17% of a1a's labels (8–41% on
    the others) and saves the most labels of the three; "bbq" and "random" needed more (bbq at
    κ = 0.4 89–100% of the labels on three of the four sets).

    The model exists before the first row: `fit` builds it from the classes of y (the prior
    N(0, a·I), through a weightless presentation of the first row, which learns nothing), so
    every row, the first included, is decided from the model. At the prior every score is 0,
    so "margin" (`threshold` > 0) and "random" ask for the first row; "bbq" never asks at t = 1
    (r < 1 = 1^(−κ)). A rule that never asks learns nothing: `estimator_` stays the prior
    (μ = 0, `predict` gives `classes_[0]` with two classes) and `n_queried_` is 0.

    A stream without labels: `query(X)` returns which rows to label, decided with the model as
    it is (labels are not known yet, so every row of one call is decided by the same model);
    then `partial_fit(X, y, queried)` with the same rows learns those whose `queried` is True
    (the other labels are ignored and may be anything) and counts every row as seen. Calling
    them one row at a time makes the same decisions, and learns the same model, as `fit`.
    `partial_fit(X, y)` without `queried` (every label known) continues `fit`'s simulation:
    `fit` on a stream is `partial_fit` on its pieces, in order.

    Persistence: a sampler pickles, and `save(path)` writes it to a .cwrs file (its model, its
    counts and the generator of "random"'s draws; unfitted, its parameters) that
    `cwrs.load(path)` reads back, to ask for the same rows and learn the same model.

    Parameters
    ----------
    estimator : cwrs classifier
        The learner (unfitted; it is cloned). Second order (AROW, SCW1, NAROW, ...) for "margin"
        and "bbq"; any cwrs classifier for "random". `fit` learns one pass in the stored order
        (its `shuffle` and `n_iter` do not apply: the stream is the order of the rows).
    strategy : {"margin", "bbq", "random"}, default="margin"
        The query rule (see above).
    threshold : float, default=0.5
        "margin": ask when |m|/√v < threshold; any value ≥ 0 (0: never ask; inf: ask every row).
        The weights' Gaussian gives the predicted label of a row the probability Φ(|m|/√v)
        (two classes, `predict_posterior_proba`), so 0.5 asks the rows it gives less than
        Φ(0.5) ≈ 69%.
    kappa : float, default=0.4
        "bbq": the exponent κ in [0, 1] of the threshold t^(−κ); larger asks more (κ = 0:
        never, since r < 1; κ = 1: any row with r > 1/t). How many rows a κ asks depends on
        the scale of v (a·‖x‖² at the prior).
    b : float, default=1.0
        "random": the scale b in (0, inf] of p = b/(b + |m|/√v); larger asks more (inf: every
        row, with weight 1).
    random_state : int, numpy.random.Generator or None, default=None
        "random": seeds the generator of the draws (`numpy.random.default_rng(random_state)`),
        made anew by `fit` (which draws one number per row, and which later `query` and
        `partial_fit` calls continue) or by the first `query` or `partial_fit`; an int makes
        the decisions reproducible. Unused by the other strategies.

    Attributes
    ----------
    estimator_ : cwrs classifier
        The clone of `estimator` learned from the asked rows.
    classes_ : ndarray
        `estimator_.classes_`.
    n_features_in_ : int
        `estimator_.n_features_in_`.
    feature_names_in_ : ndarray of str
        The column names of X, when X was a data frame with string column names.
    queried_ : ndarray of bool, shape (n_samples,)
        `fit`: which rows were asked for (`partial_fit`: the `queried` of its last call).
    n_queried_ : int
        Rows asked for (and learned, unless their sample_weight is 0) over everything seen.
    n_seen_ : int
        Rows seen (asked or not) over everything seen: the t of "bbq".

    Examples
    --------
    >>> import numpy as np
    >>> import cwrs
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 10))
    >>> y = (X @ rng.normal(size=10) > 0).astype(int)
    >>> sampler = cwrs.SelectiveSampler(cwrs.AROW()).fit(X[:1500], y[:1500])
    >>> sampler.n_queried_, round(sampler.score(X[1500:], y[1500:]), 3)
    (210, 0.974)

    A stream whose labels are asked for as it goes: `query`, then `partial_fit` with the labels
    of the rows asked (the others are never looked at).

    >>> asked = sampler.query(X[1500:1510])
    >>> asked.sum()
    np.int64(1)
    >>> sampler.partial_fit(X[1500:1510], np.where(asked, y[1500:1510], -1), asked).n_seen_
    1510

    References
    ----------
    .. [1] M. Dredze and K. Crammer, "Active Learning with Confidence", ACL 2008.
    .. [2] N. Cesa-Bianchi, C. Gentile and F. Orabona, "Robust bounds for classification via
       selective sampling", ICML 2009.
    .. [3] N. Cesa-Bianchi, C. Gentile and L. Zaniboni, "Worst-case analysis of selective
       sampling for linear classification", JMLR 7, 2006.
    """

    if TYPE_CHECKING:
        estimator_: Classifier
        queried_: npt.NDArray[np.bool_]
        n_queried_: int
        n_seen_: int
        feature_names_in_: npt.NDArray[np.object_]

    def __init__(
        self,
        estimator: Any,
        strategy: Literal["margin", "bbq", "random"] = "margin",
        *,
        threshold: float = 0.5,
        kappa: float = 0.4,
        b: float = 1.0,
        random_state: Union[int, np.random.Generator, None] = None,
    ) -> None:
        self.estimator = estimator
        self.strategy = strategy
        self.threshold = threshold
        self.kappa = kappa
        self.b = b
        self.random_state = random_state

    # ----------------------------------------------------------------- scikit-learn plumbing
    def __sklearn_tags__(self):
        tags = self.estimator.__sklearn_tags__()
        tags.non_deterministic = self.strategy == "random" and self.random_state is None
        return tags

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "estimator_")

    # ----------------------------------------------------------------- checks
    def _check_params(self):
        """The strategy and its parameter checked against the estimator (ValueError)."""
        estimator = self.estimator
        if not isinstance(estimator, Classifier):
            raise InvalidParameterError(
                f"SelectiveSampler's estimator must be a cwrs classifier (cwrs.AROW(), ...), got "
                f"{estimator!r:.80}"
            )
        if self.strategy not in STRATEGIES:
            raise InvalidParameterError(
                f"strategy must be one of {STRATEGIES}, got {self.strategy!r}"
            )

        def real(name, low, high, low_open=False):
            value = getattr(self, name)
            if (
                not isinstance(value, numbers.Real) or isinstance(value, bool)
                or math.isnan(value) or value < low or value > high
                or (low_open and value == low)
            ):
                bound = "(" if low_open else "["
                raise InvalidParameterError(
                    f"{name} must be a real in {bound}{low}, {high}], got {value!r}"
                )
            return float(value)

        if self.strategy == "margin":
            real("threshold", 0.0, math.inf)
        elif self.strategy == "bbq":
            real("kappa", 0.0, 1.0)
        else:
            real("b", 0.0, math.inf, low_open=True)
        if self.strategy != "random" and not estimator._second_order:
            raise InvalidParameterError(
                f"strategy={self.strategy!r} needs the variance xᵀΣx of a second-order learner "
                f"(AROW, SCW1, NAROW, ...); {type(estimator).__name__} is first order: use "
                "strategy='random', which takes any classifier"
            )
        if (
            getattr(estimator, "kernel", None) is not None
            or getattr(estimator, "kernel_approximation", None) is not None
        ):
            raise InvalidParameterError(
                "SelectiveSampler takes primal learners only (no kernel= or "
                "kernel_approximation=)"
            )

    def _rows(self, X, fitted_names):
        """X checked (as the estimators check it) and as rows that slice: a C-contiguous float64
        array or a CSR matrix; and its number of rows."""
        check_feature_names("SelectiveSampler", fitted_names, X)
        matrix, n_rows, n_features = check_X(X)
        if isinstance(matrix, tuple):
            import scipy.sparse

            data, indices, indptr, n_cols = matrix
            matrix = scipy.sparse.csr_matrix((data, indices, indptr), shape=(n_rows, n_cols))
        return matrix, n_rows, n_features

    def _fitted(self):
        if "estimator_" not in self.__dict__:
            raise not_fitted_error(
                "This SelectiveSampler instance is not fitted yet. Call 'fit' or 'partial_fit' "
                "with appropriate arguments before using this estimator."
            )
        return self.estimator_

    # ----------------------------------------------------------------- the decisions
    def _decide(self, estimator, matrix, t0, uniforms):
        """(asked, p) of each row of `matrix` (as `estimator._check_X_for` returns rows) from
        `estimator`'s model as it is, the rows being seen as rows t0 + 1, t0 + 2, ...;
        `uniforms`: the draws of "random", or a generator to draw them from."""
        model = estimator._model
        scores = model.decision_function(matrix)
        variances = model.variance(matrix) if estimator._second_order else None
        n_rows = scores.shape[0]
        if isinstance(uniforms, np.random.Generator):
            uniforms = uniforms.random(n_rows)
        t = np.arange(t0 + 1, t0 + 1 + n_rows)
        return query_rule(
            self.strategy, self.threshold, self.kappa, self.b, scores, variances, t, uniforms
        )

    def _prior(self, rows, classes):
        """A clone of the estimator with its model built for `classes` and nothing learned."""
        estimator = clone(self.estimator)
        first = np.asarray(classes)[:1]
        estimator.partial_fit(rows[:1], first, classes=classes, sample_weight=[0.0])
        return estimator

    def fit(self, X: MatrixLike, y: ArrayLike, sample_weight: SampleWeight = None) -> Self:
        """Simulates the stream of the rows of X in order: decides each row from the current
        model and learns it (with its label from y) only if asked. Sets `queried_`,
        `n_queried_`, `n_seen_` and `estimator_` (a new one: the previous state is forgotten)."""
        self._check_params()
        names = feature_names(X)
        rows, n_rows, _ = self._rows(X, names)
        y = check_labels(y, n_rows)
        classes = classes_of(y)
        weights = check_sample_weight(sample_weight, n_rows)
        if weights is not None and not weights.any():
            raise ValueError("sample_weight is all zero: fit would learn nothing")
        estimator = self._prior(rows, classes)
        rng = np.random.default_rng(self.random_state) if self.strategy == "random" else None
        queried = self._simulate(estimator, rows, y, weights, 0, rng)
        self._install_prior(estimator, names)
        self.__dict__.pop("_rng", None)
        if rng is not None:  # a stream that goes on with query continues its draws
            self._rng = rng
        self.queried_ = queried
        self.n_queried_ = int(queried.sum())
        self.n_seen_ = n_rows
        return self

    def _simulate(self, estimator, rows, y, weights, t0, rng):
        """Decides each row from `estimator`'s model as it is then (the rows being rows t0 + 1,
        ...) and learns the asked ones; returns the asked mask. The inputs are checked."""
        n_rows = rows.shape[0]
        uniforms = rng.random(n_rows) if rng is not None else np.zeros(n_rows)
        queried = np.zeros(n_rows, dtype=bool)
        matrix = estimator._check_X_for(rows)  # checked once; blocks are slices of it
        learn = estimator.partial_fit
        unit_weights = self.strategy != "random" and weights is None
        # Rows are scored in blocks with one model state: the first asked row of a block is
        # learned and the next block starts after it. A block twice the last gap between asked
        # rows scores about 2 rows per row, far fewer calls than one per row.
        start, block = 0, 1
        while start < n_rows:
            stop = min(n_rows, start + block)
            asked, p = self._decide(
                estimator, row_block(matrix, start, stop), t0 + start, uniforms[start:stop]
            )
            if not asked.any():
                start, block = stop, min(2 * block, _MAX_BLOCK)
                continue
            k = int(np.argmax(asked))
            i = start + k
            queried[i] = True
            if unit_weights:  # without weights a dense row takes the lean path
                learn(rows[i : i + 1], y[i : i + 1])
            else:
                weight = 1.0 / p[k] if self.strategy == "random" else 1.0
                if weights is not None:
                    weight *= weights[i]
                learn(rows[i : i + 1], y[i : i + 1], sample_weight=[weight])
            start, block = i + 1, min(2 * (k + 1), _MAX_BLOCK)
        return queried

    def _generator(self):
        """The generator of the "random" draws, made on first use (kept with the state)."""
        rng = self.__dict__.get("_rng")
        if rng is None:
            rng = self._rng = np.random.default_rng(self.random_state)
        return rng

    def query(
        self, X: MatrixLike, classes: Optional[ArrayLike] = None
    ) -> npt.NDArray[np.bool_]:
        """Which rows of X to ask the labels of, decided from the model as it is (one model for
        every row of X; the rows are seen as rows `n_seen_` + 1, ... for "bbq"); "random" draws
        one number per row. Learns nothing: pass the same rows to `partial_fit` with their
        labels.

        Before the first `partial_fit` there is no model: with `classes` (every label the stream
        will hold) it is built as `fit` builds it, the prior, and decides; without, every row is
        asked.
        """
        self._check_params()
        if "estimator_" not in self.__dict__:
            names = feature_names(X)
            rows, n_rows, _ = self._rows(X, names)
            if classes is None:
                return np.ones(n_rows, dtype=bool)
            known = classes_of(check_labels(classes, None, "classes"))
            self._install_prior(self._prior(rows, known), names)
        elif classes is not None:
            self._check_classes(classes)
        rows, n_rows, _ = self._rows(X, self.__dict__.get("feature_names_in_"))
        estimator = self.estimator_
        estimator._check_n_features(rows.shape[1])
        matrix = estimator._check_X_for(rows)
        draws = self._generator() if self.strategy == "random" else None
        asked, _ = self._decide(estimator, matrix, self.n_seen_, draws)
        return asked

    def _install_prior(self, estimator, names):
        """Installs a prior `estimator` (nothing learned, nothing seen)."""
        self.__dict__.pop("feature_names_in_", None)
        if names is not None:
            self.feature_names_in_ = names
        self.estimator_ = estimator
        self.queried_ = np.zeros(0, dtype=bool)
        self.n_queried_ = 0
        self.n_seen_ = 0

    def _check_classes(self, classes):
        known = self.estimator_.classes_
        if not np.array_equal(np.unique(check_labels(classes, None, "classes")), known):
            raise ValueError(
                f"classes={np.unique(classes)!r} is not the same as on the first call, "
                f"classes_={known!r}."
            )

    def partial_fit(
        self,
        X: MatrixLike,
        y: ArrayLike,
        queried: Optional[ArrayLike] = None,
        classes: Optional[ArrayLike] = None,
        sample_weight: SampleWeight = None,
    ) -> Self:
        """Continues the stream with the rows of X.

        With `queried` (the mask of the last `query` on these rows): learns the rows whose
        `queried` is True with their labels (the labels of the other rows are ignored and may
        be anything) and counts every row as seen. For "random" an asked row is learned with
        weight 1/p, p its probability of being asked under the model as it is at the start of
        this call, which is the model `query` decided with as long as nothing was learned in
        between (p is recomputed rather than kept from `query`, so no state waits between the
        two calls).

        Without `queried` (every label known, as in `fit`): decides each row from the model as
        it is then and learns it only if asked, as `fit` does, continuing the stream: `fit` on
        the rows of several calls is these calls made in order on a new sampler.

        `classes` (every label the stream will hold) is required on the first call, unless
        `query(X, classes)` built the model (the prior, under which p = 1). A refused call
        changes nothing.
        """
        self._check_params()
        first_call = "estimator_" not in self.__dict__
        names = feature_names(X) if first_call else self.__dict__.get("feature_names_in_")
        rows, n_rows, _ = self._rows(X, names)
        mask = None
        if queried is not None:
            mask = np.asarray(queried)
            if mask.dtype != bool or mask.shape != (n_rows,):
                raise ValueError(
                    f"queried must be a bool array of shape ({n_rows},) (one per row of X, as "
                    f"query returns), got dtype {mask.dtype} and shape {mask.shape}"
                )
        y = check_labels(y, n_rows)
        weights = check_sample_weight(sample_weight, n_rows)
        if first_call:
            if classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit.")
            known = classes_of(check_labels(classes, None, "classes"))
            estimator = self._prior(rows, known)  # a clone, installed only if it learns
        else:
            estimator = self.estimator_
            if classes is not None:
                self._check_classes(classes)
            estimator._check_n_features(rows.shape[1])
            known = estimator.classes_
        if mask is None:
            # Every label is learned if asked: all are checked before any row is learned.
            estimator._targets(estimator._fitted_model(), y, known)
            rng = self._generator() if self.strategy == "random" else None
            mask = self._simulate(estimator, rows, y, weights, self.__dict__.get("n_seen_", 0),
                                  rng)
        else:
            self._learn_asked(estimator, rows, y, mask, weights, first_call)
        if first_call:
            self._install_prior(estimator, names)
        self.queried_ = mask.copy()
        self.n_queried_ += int(mask.sum())
        self.n_seen_ += n_rows
        return self

    def _learn_asked(self, estimator, rows, y, mask, weights, prior):
        """Learns the rows of `mask` (a query's), each with weight 1/p times its sample weight."""
        learned = np.flatnonzero(mask)
        if not learned.size:
            return
        if self.strategy == "random" and not prior:
            matrix = estimator._check_X_for(rows)
            _, p = self._decide(estimator, matrix, self.n_seen_, np.zeros(rows.shape[0]))
            row_weights = 1.0 / p[learned]
        else:
            row_weights = np.ones(learned.size)
        if weights is not None:
            row_weights = row_weights * weights[learned]
        estimator.partial_fit(rows[learned], y[learned], sample_weight=row_weights)

    # ----------------------------------------------------------------- delegation
    def _checked_rows(self, X):
        estimator = self._fitted()
        rows, _, n_features = self._rows(X, self.__dict__.get("feature_names_in_"))
        estimator._check_n_features(n_features)
        return estimator, rows

    def predict(self, X: MatrixLike) -> npt.NDArray[Any]:
        """`estimator_.predict(X)`."""
        estimator, rows = self._checked_rows(X)
        return estimator.predict(rows)

    def decision_function(self, X: MatrixLike) -> Float64Array:
        """`estimator_.decision_function(X)`."""
        estimator, rows = self._checked_rows(X)
        return estimator.decision_function(rows)

    @property
    def predict_proba(self):
        """`estimator_.predict_proba(X)` (second-order estimators only)."""
        if not hasattr(self.estimator, "predict_proba"):
            raise AttributeError(
                f"{type(self.estimator).__name__} has no predict_proba (a first-order learner)"
            )
        return self._predict_proba

    def _predict_proba(self, X: MatrixLike) -> Float64Array:
        estimator, rows = self._checked_rows(X)
        return estimator.predict_proba(rows)

    def score(self, X: MatrixLike, y: ArrayLike, sample_weight: SampleWeight = None) -> float:
        """Mean accuracy of `predict(X)` against y (`estimator_.score`)."""
        estimator, rows = self._checked_rows(X)
        return estimator.score(rows, y, sample_weight)

    @property
    def classes_(self) -> npt.NDArray[Any]:
        """`estimator_.classes_`."""
        return self._fitted().classes_

    @property
    def n_features_in_(self) -> int:
        """`estimator_.n_features_in_`."""
        return self._fitted().n_features_in_
