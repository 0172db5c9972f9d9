"""The scikit-learn-style estimator machinery shared by every learner (`Estimator`): the
scikit-learn plumbing, pickling, threads and locks, model construction, the fitting passes (with
their fit-retry policy), `save`, and the covariance the second-order estimators report.

Duck-typed: scikit-learn is not needed at run time. The math lives in the Rust core
(`cwrs._cwrs`); this layer validates, encodes labels and exposes fitted attributes. The
classifier and regressor bases build on it (`cwrs._classifier`, `cwrs._regressor`).
"""

from __future__ import annotations

import functools
import os
from itertools import chain
from typing import TYPE_CHECKING, Any, Callable, Literal, Optional, TypeVar, Union, cast

import numpy as np
import numpy.typing as npt

from . import _cwrs
from ._kernel import CallableKernel
from ._lean import LEAN, LeanPaths
from ._lean import SOURCES as LEAN_SOURCES
from ._lean import enable as enable_lean
from ._lean import forget as forget_lean
from ._locks import OwnedLock
from ._params import (
    HyperParameters,
    InvalidParameterError,
    check_n_jobs,
    check_params,
    check_pass_params,
    warn_if_shards_do_not_pay,
    with_added_parameters,
)
from ._svmlight import _line_chunks, index_base_for, zero_based_file
from ._validation import (
    canonical_csr,
    check_feature_names,
    check_sample_weight,
    check_X,
    feature_names,
    mapped_rows,
    not_fitted_error,
    refuse_overflow,
)

if TYPE_CHECKING:
    import os

    from typing_extensions import Self

    from ._persist import ModelFile
    from ._typing import ArrayLike, Float64Array, MatrixLike, SampleWeight


_FLOAT64 = np.dtype(np.float64)


def _lean_rows(X, n_features):
    """Whether X is native float64 rows of `n_features`, C-contiguous, as the model takes them
    (the lean path of prediction; anything else takes the general path)."""
    if type(X) is not np.ndarray or X.dtype is not _FLOAT64 or X.ndim != 2:
        return False
    (n_rows, width), strides = X.shape, X.strides
    contiguous = strides[1] == 8 and (n_rows == 1 or strides[0] == 8 * width)
    # A misaligned buffer (e.g. `np.frombuffer(buf, offset=1)`) goes to the general path,
    # which copies it.
    return width == n_features and n_rows > 0 and contiguous and X.flags.aligned


# Attributes that only live in memory: never pickled, never compared.
# - `_fit_lock`: see `Estimator._lock`.
# - `_checked_params`: present while the hyper-parameters are as last validated (see
#   `_check_params_if_changed`).
# - `_lean`: the lean paths of `partial_fit` and prediction (`cwrs._lean`).
_TRANSIENT = ("_fit_lock", "_checked_params", LEAN, "_target_of")


_Method = TypeVar("_Method", bound=Callable[..., Any])


def _holding_fit_lock(method: _Method) -> _Method:
    """Runs `method` holding the estimator's `_lock` (see there)."""

    @functools.wraps(method)
    def locked(self, *args, **kwargs):
        with self._lock():
            return method(self, *args, **kwargs)

    return cast(_Method, locked)


class Estimator(HyperParameters):
    """Base of all learners: parameters, pickling, fitting passes and the fitted model.

    Subclasses set `_rule` (the rule's name in the table of the Rust core) and define
    `__init__` with their keyword hyper-parameters (see `cwrs._params.HyperParameters`).

    Threads: one estimator may be used from many threads. Predictions (`predict`,
    `decision_function`, `predict_proba`, ...) run in parallel with the GIL released.
    `partial_fit` calls wait for each other and for the calls running on the model, so the
    result is that of the same calls made one after another in some order: concurrent calls
    never corrupt the model and never fail for being concurrent (the first `partial_fit` builds
    the model once; the others wait for it and continue it). `fit` builds a new model and replaces
    the old one when it ends, so a `partial_fit` that overlaps it counts as made either before it
    (its rows are forgotten) or after it. One limitation: a prediction that overlaps the end of a
    `fit` changing `classes_` may pair the old model's scores with the new classes; do not refit
    with other labels while other threads predict.
    """

    # A map applied to rows before the model sees them (random Fourier features), if any.
    _feature_map = None
    _lean: Optional[LeanPaths] = None  # the lean paths (`cwrs._lean`)

    @_holding_fit_lock
    def fit(self, X: MatrixLike, y: ArrayLike, sample_weight: SampleWeight = None) -> Self:
        """Forgets any previous state and learns `n_iter` passes over the rows of X, each in a
        fresh random order (`shuffle=True`, the default; seeded by `random_state`) or in the
        stored order (`shuffle=False`)."""
        names = feature_names(X)
        # SciPy's scan for the canonical form is left to the core's own index check (`_fit_passes`).
        matrix, n_rows, n_features = check_X(X, scan_format=False)
        self._fit(y, sample_weight, matrix, n_rows, n_features, names)
        return self

    def _fit(
        self, y: ArrayLike, sample_weight: SampleWeight, matrix: Any, n_rows: int,
        n_features: int, names: Any,
    ) -> None:
        """`fit` after the checks of X: builds the model, learns and installs it."""
        raise NotImplementedError

    def _model_config(
        self, n_classes: int, n_features: int, sparse: bool
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        raise NotImplementedError

    def _checked_config(
        self, n_classes: int, n_features: int, sparse: bool = False
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """The one validation of the hyper-parameters, wherever they are used (`fit`, its
        shards, `cwrs.dask.fit`, a `partial_fit` after `set_params`, `load`): the checks of
        `check_params`, then the configuration of the native model for `n_classes` (a
        classifier's) and `n_features`, with the callable kernel passed with it, checked by the
        core (`ModelConfig::check`: its message is the user's) on a model of one feature (the
        checks do not depend on the width), which allocates next to nothing."""
        check_params(self, n_classes)
        config, custom = self._model_config(n_classes, n_features, sparse)
        _cwrs.Model({**config, "n_features": 1}, **custom)
        n_jobs = getattr(self, "n_jobs", 1)
        if n_jobs != 1:
            try:
                _cwrs.check_mergeable(config)
            except InvalidParameterError as error:
                raise InvalidParameterError(
                    f"n_jobs={n_jobs!r} needs models that merge: {error}; use n_jobs=1"
                ) from None
        return config, custom

    def _check_params(self, n_classes: Optional[int] = None) -> None:
        """`_checked_config` for the fitted classes (or `n_classes`)."""
        if n_classes is None:
            classes = self.__dict__.get("classes_")
            n_classes = 2 if classes is None else classes.shape[0]
        self._checked_config(n_classes, 1)

    if TYPE_CHECKING:  # what every subclass defines, for the methods here
        n_features_in_: int
        feature_names_in_: npt.NDArray[np.object_]
        zero_based_: bool  # the LIBSVM index base it learned with (`partial_fit_file`)
        _model: Any  # the native model (cwrs._cwrs)

        def partial_fit(self, X: MatrixLike, y: ArrayLike, *args: Any, **kwargs: Any) -> Self: ...

        @property
        def coef_(self) -> Float64Array: ...

    # ----------------------------------------------------------------- scikit-learn plumbing
    def __sklearn_is_fitted__(self):
        return hasattr(self, "_model")

    def __getstate__(self):
        state = self.__dict__.copy()
        for name in _TRANSIENT:
            state.pop(name, None)
        if "_model" in state:
            model = state["_model"]
            state["_model"] = (type(model).__name__, model.state())  # a dict of named entries
        return state

    def __setstate__(self, state):
        # A malformed state raises InvalidModelStateError, as the native model's does.
        name = type(self).__name__
        if not isinstance(state, dict):
            raise _cwrs.InvalidModelStateError(
                f"invalid {name} state: a dict of its attributes, not {type(state).__name__}"
            )
        state = with_added_parameters(type(self), state)  # a pickle from before they existed
        if "_model" in state:
            model = state["_model"]
            if not (isinstance(model, tuple) and len(model) == 2 and isinstance(model[1], dict)):
                raise _cwrs.InvalidModelStateError(
                    f"invalid {name} state: _model must be a pair (kind, named state), got "
                    f"{model!r:.80}"
                )
            # A callable kernel: the estimator keeps it, the native state does not.
            kernel = state.get("kernel")
            custom = (
                {"kernel": CallableKernel(kernel, bool(state.get("_sparse_input")))}
                if callable(kernel) else {}
            )
            state["_model"] = _cwrs.Model.from_state(model[1], **custom)
        self.__dict__.update({k: v for k, v in state.items() if k not in _TRANSIENT})

    if not TYPE_CHECKING:  # hidden from mypy, which would then allow any attribute

        def __setattr__(self, name, value):
            super().__setattr__(name, value)
            if name in LEAN_SOURCES:  # enabled again by the next checked `partial_fit`
                forget_lean(self)

        def __delattr__(self, name):
            super().__delattr__(name)
            if name in LEAN_SOURCES:
                forget_lean(self)

    # ----------------------------------------------------------------- threads
    def _lock(self):
        """The lock held while the fitted attributes are replaced (by `fit` and the first
        `partial_fit`, for their whole run) or read together (by a later `partial_fit`), so that
        no thread sees a mix of two models' attributes. A call from inside a call (a kernel
        function calling its estimator) raises RuntimeError instead of deadlocking."""
        lock = self.__dict__.get("_fit_lock")
        if lock is None:
            lock = self.__dict__.setdefault("_fit_lock", OwnedLock())
        return lock

    def _serialized_partial_fit(self, *args):
        """`self._partial_fit(*args, first_call=...)`: the first call builds the model holding
        `_lock`, so a concurrent first call waits for it and then continues that model."""
        if "_model" not in self.__dict__:
            with self._lock():
                if "_model" not in self.__dict__:
                    return self._partial_fit(*args, first_call=True)
        return self._partial_fit(*args, first_call=False)

    def _learn(self, model, matrix, targets, weights, balanced, return_scores):
        """`partial_fit` of the native `model`; with `return_scores`, the progressive scores
        and variances (None for a first-order learner), else None."""
        if not return_scores:
            model.partial_fit(matrix, targets, weights, None, balanced)
            return None
        return model.partial_fit_scored(
            matrix, targets, weights, None, balanced, variances=self._second_order
        )

    def _reenable_lean(self, model):
        """After a checked `partial_fit` of `model`: the lean paths again, if `set_params`
        (or unpickling) turned them off and `model` is still the fitted one."""
        if LEAN not in self.__dict__:
            with self._lock():
                if self._model is model:
                    self._enable_lean()

    def _fitted_state(self):
        """(native model, feature map, n_features_in_, classes_ or None, feature_names_in_ or
        None), read together."""
        with self._lock():
            get = self.__dict__.get
            return (
                self._model, self._feature_map, self.n_features_in_, get("classes_"),
                get("feature_names_in_"),
            )

    def _install(self, **fitted):
        """Sets the fitted attributes in one step, with the hyper-parameters just validated,
        and enables the lean paths where they apply. Called holding `_lock`. A
        `feature_names_in_` of None (X had no column names) removes the attribute, as in
        scikit-learn."""
        fitted["_checked_params"] = True
        forget_lean(self)
        if "zero_based_" not in fitted:  # a new model has learned from no LIBSVM file yet
            self.__dict__.pop("zero_based_", None)
        if fitted.get("feature_names_in_") is None:
            fitted.pop("feature_names_in_", None)
            self.__dict__.pop("feature_names_in_", None)
        self.__dict__.update(fitted)
        self._enable_lean()

    def _enable_lean(self):
        """Enables the lean paths for the current model where they apply (`cwrs._lean.enable`).
        Called holding `_lock`, after validation."""
        enable_lean(self, self._lean_targets, self._plain_predict())

    def _plain_predict(self) -> bool:
        """Whether `predict` may answer from the lean path's labels: a classifier whose
        `decision_function` no subclass overrides (`predict` goes through an override)."""
        return False

    def save(self, file: ModelFile) -> None:
        """Writes this estimator (hyper-parameters and fitted state) to `file`, a path or a
        binary file object, in the portable .cwrs format; `cwrs.load(file)` reads it back.

        Unlike pickle, loading a .cwrs file never runs code from it. A learner with a callable
        kernel holds code, so it can only be pickled. The state is first checked as `load`
        checks it (ValueError if load would refuse it); a path is then replaced atomically, its
        permissions kept (see `cwrs._persist.save`).
        """
        from ._persist import save

        save(self, file)

    # ----------------------------------------------------------------- model construction
    def _fitted_model(self):
        try:
            return self._model
        except AttributeError:
            raise not_fitted_error(
                f"This {type(self).__name__} instance is not fitted yet. Call 'fit' or "
                "'partial_fit' with appropriate arguments before using this estimator."
            ) from None

    def _check_n_features(self, n_features, expected=None):
        expected = self.n_features_in_ if expected is None else expected
        if n_features != expected:
            raise ValueError(
                f"X has {n_features} features, but {type(self).__name__} is expecting "
                f"{expected} features as input."
            )

    def _model_and_rows(self, X):
        """The fitted native model and X as it takes it: as is if `_lean_rows`, else checked."""
        lean = self._lean
        if lean is not None and _lean_rows(X, lean.n_features):
            return lean.model, X
        return self._fitted_model(), self._check_X_for(X)

    def _checked_scores(self, X, method):
        """μ·x of the rows of X on the general path (`method` names it in an overflow error)."""
        model, rows = self._model_and_rows(X)
        return refuse_overflow(model.decision_function(rows), method)

    def _check_X_for(self, X):
        """X validated against the fitted feature names and number of features, as the model
        sees it."""
        self._fitted_model()
        check_feature_names(type(self).__name__, self.__dict__.get("feature_names_in_"), X)
        matrix, n_rows, n_features = check_X(X)
        self._check_n_features(n_features)
        return mapped_rows(matrix, n_rows, self._feature_map, scanned=True)

    def _fit_passes(self, model, matrix, targets, sample_weight, n_rows, balanced=False):
        """`n_iter` passes of `model` over the rows (shuffled per pass if `shuffle`), weighted
        by `sample_weight` (and the running class counts if `balanced`); returns the model
        learned (another one with `n_jobs` > 1: the merge of each pass's shards)."""
        weights = check_sample_weight(sample_weight, n_rows)
        if weights is not None and not weights.any():
            raise ValueError("sample_weight is all zero: fit would learn nothing")
        check_pass_params(self)
        n_jobs = check_n_jobs(self)
        orders = self._pass_orders(n_rows)
        if n_jobs != 1:
            warn_if_shards_do_not_pay(model, n_jobs, n_rows)
            # In n_jobs shards merged in place, in the core (docs/design.md §9.4). A refused first
            # pass leaves the model as it was: retried in canonical form, with the same order.
            first = next(orders)
            learn = lambda rows: model.fit_sharded(rows, targets, chain([first], orders), n_jobs,
                                                   weights, balanced)
            learned_in_canonical_form(learn, matrix, n_rows)
            return model
        for order in orders:
            # The first pass tells whether a CSR matrix `fit` did not scan is canonical.
            learn = lambda rows, order=order: model.partial_fit(
                rows, targets, weights, order, balanced
            )
            matrix = learned_in_canonical_form(learn, matrix, n_rows)
        return model

    def _pass_orders(self, n_rows):
        """The order of the rows in each of the `n_iter` passes: None (stored order) or a fresh
        permutation per pass, drawn from `random_state`, if `shuffle`."""
        rng = None
        if self.shuffle:
            rng = (
                self.random_state
                if isinstance(self.random_state, (np.random.RandomState, np.random.Generator))
                else np.random.RandomState(self.random_state)
            )
        for _ in range(self.n_iter):
            yield None if rng is None else rng.permutation(n_rows).astype(np.int64)

    def partial_fit_file(
        self,
        path: Union[str, os.PathLike[str]],
        *,
        classes: Optional[ArrayLike] = None,
        zero_based: Union[bool, Literal["auto"], None] = None,
        chunk_rows: int = 10_000,
        n_features: Optional[int] = None,
    ) -> Self:
        """`partial_fit` on the rows of a LIBSVM / SVMlight file, in order, streamed in chunks
        of `chunk_rows` rows: the next chunk is parsed while the current one is learned.

        The rows have `n_features` columns, by default the fitted `n_features_in_`; on the first
        call pass it (a file does not say how many features it has). `classes` is as for
        `partial_fit` (classifiers only). Indices are one-based unless `zero_based=True`
        ("auto": zero-based exactly when an index 0 occurs, which scans the file first; see
        `cwrs.iter_svmlight`). The file may be compressed with gzip, bzip2 or xz. The model
        keeps the base it learned with as `zero_based_`: later files are read with it (None or
        "auto"), and another base is refused, since the features would be shifted by one.

        All or nothing: when any line is bad (malformed, a label not in `classes`, an index
        past `n_features`), or the call is interrupted (KeyboardInterrupt), the estimator is
        restored to its state before the call and the error names the file and the line.
        Another thread's `partial_fit` on this estimator during the call is undone with it.
        """
        if n_features is None:
            n_features = getattr(self, "n_features_in_", None)
        if n_features is None:
            raise ValueError(
                "pass n_features to the first partial_fit_file call: a LIBSVM file does not "
                "say how many features it has"
            )
        fit_args = {} if classes is None else {"classes": classes}
        learned = self.__dict__.get("zero_based_")
        base = index_base_for(zero_based, learned, path)
        base = zero_based_file(path, False if base is None else base)
        saved = self._snapshot()
        try:
            chunks = _line_chunks(path, chunk_rows, base, n_features)
            for X, y, lines in chunks:
                try:
                    self.partial_fit(X, y, **fit_args)
                except ValueError as error:
                    where = self._bad_lines(y, lines, classes)
                    raise ValueError(f"{os.fspath(path)}: {where}: {error}") from None
            self.zero_based_ = base
        except BaseException:
            self._restore(saved)
            raise
        return self

    def _bad_lines(self, y, lines, classes):
        """Where in a chunk `partial_fit` refused: the line of its first label outside the
        classes, if any (classifiers), else the chunk's lines."""
        known = classes if classes is not None else self.__dict__.get("classes_")
        if known is not None:
            unknown = ~np.isin(y, np.asarray(known))
            if unknown.any():
                return f"line {lines[int(np.argmax(unknown))]}"
        return f"lines {lines[0]}-{lines[-1]}"

    def _snapshot(self):
        """The estimator's attributes and a copy of its model, for `_restore`."""
        with self._lock():
            attributes = dict(self.__dict__)
            model = attributes.get("_model")
            return attributes, None if model is None else model.copy()

    def _restore(self, snapshot):
        """Puts back the attributes and the model copy of `_snapshot` (a new model object, so
        that no thread keeps learning into the restored one)."""
        attributes, model = snapshot
        with self._lock():
            if model is not None:
                attributes["_model"] = model
            attributes.pop(LEAN, None)
            self.__dict__.clear()
            self.__dict__.update(attributes)
            if model is not None and "_checked_params" in attributes:
                self._enable_lean()

    @property
    def n_updates_(self) -> int:
        """Rounds whose update changed the model, over everything seen."""
        return self._fitted_model().n_updates

    @property
    def sparsity_(self) -> float:
        """The fraction of exactly-zero entries of `coef_`."""
        return float(np.mean(self.coef_ == 0.0))

    @property
    def sparse_coef_(self) -> Any:
        """`coef_` as a SciPy CSR matrix (one row per class; one row for a regressor)."""
        import scipy.sparse

        return scipy.sparse.csr_matrix(np.atleast_2d(self.coef_))


# ----------------------------------------------------------------- the fit-retry policy
def learned_in_canonical_form(learn, matrix, n_rows):
    """`learn(matrix)`; if the core refuses a CSR matrix that is not in canonical form (unsorted
    or repeated indices, which `fit` left to the core to find), `learn` again on its canonical
    form: a refused call leaves the model as it was, and the retry draws no new row order.
    Returns the matrix learned."""
    try:
        learn(matrix)
        return matrix
    except ValueError:
        canonical = canonical_csr(matrix, n_rows)
        if canonical is None:
            raise
    learn(canonical)
    return canonical


# ----------------------------------------------------------------- the native configuration
def native_config(kind, rule, params, n_features, fit_intercept, a, **entries):
    """The configuration of a native model (docs/model-format.md lists its entries)."""
    return {
        "kind": kind, "rule": rule, "params": dict(params), "n_features": n_features,
        "fit_intercept": fit_intercept, "a": a, **entries,
    }


def l1_config(l1):
    """The configuration entries of an L1 penalty spec (penalty, alpha, penalize_intercept)."""
    if l1 is None:
        return {"penalty": None}
    penalty, alpha, penalize_intercept = l1
    return {"penalty": penalty, "alpha": alpha, "penalize_intercept": penalize_intercept}


# ----------------------------------------------------------------- the reported covariance
# What `covariance_` and `covariance_matrix()` report, from the values the native model stores:
# the block over the features (the bias left out), and Σ as dense matrices whatever the form.
def feature_block(covariances, model, n_features):
    """Per-row covariance values (as the native model stores them) restricted to the features."""
    if model.covariance_kind == "diag":
        return covariances[:, :n_features]
    if model.covariance_kind == "lowrank":  # the variances S, then the sketch B (2k × dim)
        dim = n_features + int(model.config["fit_intercept"])
        return covariances.reshape(len(covariances), -1, dim)[:, :, :n_features]
    dim = int(round(np.sqrt(covariances.shape[1])))
    return covariances.reshape(-1, dim, dim)[:, :n_features, :n_features]


def dense_covariances(model, n_features):
    """Σ over the features as dense matrices, one per class (one for two classes or a
    regressor), whatever the form: the core forms them (`Model.dense_covariance`; the low-rank
    form's (diag(1/S) + BᵀB)⁻¹ by Woodbury's identity)."""
    dim = n_features + int(model.config["fit_intercept"])
    return model.dense_covariance.reshape(-1, dim, dim)[:, :n_features, :n_features]
