"""The scikit-learn-style estimator machinery shared by every learner.

Duck-typed: scikit-learn is not needed at run time. The math lives in the Rust core
(`cwrs._cwrs`); this layer validates, encodes labels and exposes fitted attributes.
"""

from __future__ import annotations

import functools
import os
from itertools import chain
from typing import TYPE_CHECKING, Any, Callable, Literal, Optional, TypeVar, Union, cast

import numpy as np
import numpy.typing as npt

from . import _cwrs
from ._covariance import dense_covariances, feature_block
from ._kernel import CallableKernel, RandomFourierFeatures
from ._lean import LEAN, LeanPaths
from ._lean import SOURCES as LEAN_SOURCES
from ._lean import enable as enable_lean
from ._lean import forget as forget_lean
from ._locks import OwnedLock
from ._params import (
    HyperParameters,
    average_start,
    check_n_components,
    check_n_jobs,
    check_params,
    check_pass_params,
    covariance_config,
    kernel_spec,
    l1_spec,
    model_args,
    process_noise_spec,
    resolve_gamma,
    store_params,
    warn_if_shards_do_not_pay,
    with_added_parameters,
)
from ._svmlight import _line_chunks, index_base_for, zero_based_file
from ._validation import (
    check_feature_names,
    check_labels,
    check_sample_weight,
    check_targets,
    check_X,
    classes_of,
    feature_names,
    learned_in_canonical_form,
    lists_classes,
    mapped_rows,
    not_fitted_error,
    refuse_overflow,
    warn_if_regression_like,
)

if TYPE_CHECKING:
    import os

    from typing_extensions import Self, Unpack

    from ._persist import ModelFile
    from ._typing import (
        ArrayLike,
        ClassifierParams,
        Float64Array,
        MatrixLike,
        SampleWeight,
        SecondOrderClassifierParams,
    )


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
        classifier's) and `n_features`, with the callable kernel passed with it; the native
        model checks the configuration as it is built."""
        check_params(self, n_classes)
        return self._model_config(n_classes, n_features, sparse)

    def _check_params(self, n_classes: Optional[int] = None) -> None:
        """`_checked_config` for the fitted classes (or `n_classes`), with the native model's
        checks of the configuration made on a model of one feature (they do not depend on the
        width), which allocates next to nothing."""
        if n_classes is None:
            classes = self.__dict__.get("classes_")
            n_classes = 2 if classes is None else classes.shape[0]
        config, custom = self._checked_config(n_classes, 1)
        _cwrs.Model({**config, "n_features": 1}, **custom)

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
        Called holding `_lock`, after validation. `predict` goes through `decision_function`
        where a subclass overrides it."""
        plain = getattr(type(self), "decision_function", None) is Classifier.decision_function
        enable_lean(self, self._lean_targets, plain)

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

    def _fit_passes(self, model, matrix, targets, sample_weight, n_rows):
        """`n_iter` passes of `model` over the rows (shuffled per pass if `shuffle`); returns
        the model learned (another one with `n_jobs` > 1: the merge of each pass's shards)."""
        repeats = check_sample_weight(sample_weight, n_rows)
        if repeats is not None and not repeats.any():
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
                                                   repeats)
            learned_in_canonical_form(learn, matrix, n_rows)
            return model
        for order in orders:
            # The first pass tells whether a CSR matrix `fit` did not scan is canonical.
            learn = lambda rows, order=order: model.partial_fit(rows, targets, repeats, order)
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


class Classifier(Estimator):
    """Base of all online linear classifiers (`isinstance(est, cwrs.Classifier)`); not used
    directly: each learner (`cwrs.AROW`, ...) sets its rule and documents its hyper-parameters.

    With two classes the model is the binary learner of the papers (labels ±1, `classes_[1]`
    positive); with more it keeps one Gaussian per class (`multi_class="max-score"`, the
    single-constraint update of docs/design.md §4, or `"ovr"`, one binary problem per class).

    The scikit-learn estimator API, duck-typed (scikit-learn is not needed at run time):
    `partial_fit(X, y, classes=None, sample_weight=None)` (classes on the first call) learns a
    stream, `fit(X, y)` forgets and makes `n_iter` passes; `predict`, `decision_function`,
    `score`, `get_params`/`set_params`; second-order learners (`ConfidenceWeightedClassifier`)
    add `predict_proba` from the Gaussian over weights. X is a dense array-like or a SciPy CSR/CSC
    matrix; class labels are all numbers (bool, int or whole floats), all strings or all bytes.
    Pickling round-trips exactly.
    """

    _rule_kind = "classification"

    if TYPE_CHECKING:  # set by fit and the first partial_fit
        classes_: npt.NDArray[Any]
        _sparse_input: bool

    # The parameters of a first-order learner whose rule has none (`_params.store_params`).
    def __init__(self, **params: Unpack[ClassifierParams]) -> None:
        store_params(self, locals())

    def __sklearn_tags__(self):
        from sklearn.utils import ClassifierTags, InputTags, Tags, TargetTags

        return Tags(
            estimator_type="classifier",
            target_tags=TargetTags(required=True),
            classifier_tags=ClassifierTags(multi_class=True),
            input_tags=InputTags(sparse=True),
        )

    def _new_model(self, n_classes, n_features, sparse):
        """The native model for `n_classes` and the feature map in front of it (or None);
        `sparse` tells whether the training input is sparse."""
        config, custom = self._checked_config(n_classes, n_features, sparse)
        feature_map = None
        if self.kernel_approximation is not None:
            gamma = resolve_gamma(self.gamma, n_features)
            feature_map = RandomFourierFeatures(
                gamma, config["n_features"], n_features, self.random_state
            )
        return _cwrs.Model(config, **custom), feature_map

    def _model_config(self, n_classes, n_features, sparse):
        """The configuration of the native model for `n_classes` and `n_features` (its width
        is `n_components` with `kernel_approximation`), and the callable kernel passed with it
        (`_checked_config`)."""
        params, covariance, a, fit_intercept = model_args(self)
        width = n_features
        if self.kernel_approximation is not None:
            width = check_n_components(self.n_components)
        kernel = kernel_spec(self, n_classes, n_features)
        if kernel is not None:
            built_in = isinstance(kernel.kernel, str)
            gamma, degree, coef0 = kernel.params
            config = _config(
                "kernel" if n_classes == 2 else "multiclass_kernel", self._rule, params,
                width, fit_intercept, a, kernel=kernel.kernel if built_in else None,
                gamma=gamma, degree=degree, coef0=coef0, budget=kernel.budget,
                strategy=self.multi_class, n_classes=n_classes, average=average_start(self),
                **self._rule_config(),
            )
            # A callable kernel is passed on its own: it is code, not configuration.
            custom = {} if built_in else {"kernel": CallableKernel(kernel.kernel, sparse)}
            return config, custom
        shape = {} if n_classes == 2 else {"strategy": self.multi_class, "n_classes": n_classes}
        config = _config(
            "binary" if n_classes == 2 else "multiclass", self._rule, params, width,
            fit_intercept, a, **covariance_config(self, covariance), **_l1_config(l1_spec(self)),
            **shape, **self._rule_config(), average=average_start(self),
            process_noise=process_noise_spec(self),
        )
        return config, {}

    def _rule_config(self):
        """Configuration entries of the rule beyond its numbers (OGD's `loss`), checked."""
        return {}

    def _lean_targets(self, model):
        """label -> native target, for the lean paths of a primal model."""
        classes = self.classes_.tolist()  # Python values: NumPy scalars compare slowly
        if model.kind == "binary":
            return {classes[0]: -1.0, classes[1]: 1.0}
        return {label: float(k) for k, label in enumerate(classes)}  # a float: the fast extraction

    def _targets(self, model, y, classes, from_y=False):
        """Labels as the native model takes them: ±1 (binary) or class indices. `from_y`: the
        classes were taken from y, so every label is among them."""
        if from_y and model.kind == "binary":
            return np.where(y == classes[1], 1.0, -1.0)
        index = np.searchsorted(classes, y)
        known = index < classes.shape[0]
        known[known] = classes[index[known]] == y[known]
        if not known.all():
            unknown = np.unique(y[~known]).tolist()
            raise ValueError(f"y contains labels {unknown} that are not in classes {classes}")
        if model.n_classes is not None:
            return index.astype(np.int64)
        return np.where(index == 1, 1.0, -1.0)

    # ----------------------------------------------------------------- learning
    def _fit(
        self, y: ArrayLike, sample_weight: SampleWeight, matrix: Any, n_rows: int,
        n_features: int, names: Any,
    ) -> None:
        y = check_labels(y, n_rows)
        classes = classes_of(y)
        warn_if_regression_like(y, classes, exact=True)
        model, feature_map = self._new_model(classes.shape[0], n_features, isinstance(matrix, tuple))
        targets = self._targets(model, y, classes, from_y=True)
        matrix = mapped_rows(matrix, n_rows, feature_map, scanned=False)
        model = self._fit_passes(model, matrix, targets, sample_weight, n_rows)
        self._install(
            _model=model, _feature_map=feature_map, classes_=classes, n_features_in_=n_features,
            _sparse_input=isinstance(matrix, tuple), feature_names_in_=names,
        )

    def partial_fit(
        self,
        X: MatrixLike,
        y: ArrayLike,
        classes: Optional[ArrayLike] = None,
        sample_weight: SampleWeight = None,
    ) -> Self:
        """Learns the rows of X once, in order, continuing from the current state.

        `classes` (every label the stream will hold) is required on the first call. A few rows
        of float64 (shape (n, n_features), C order, n ≤ 64) with known labels take a lean path
        (`_cwrs.Model.learn_lean`) that skips the batch machinery; the result is the same.
        """
        lean = self._lean
        if lean is not None and sample_weight is None and (
            classes is None or lists_classes(classes, lean.class_list)
        ):
            if lean.learn(X, y, lean.targets, self._check_params_if_changed):
                return self
        return self._serialized_partial_fit(X, y, classes, sample_weight)

    def _partial_fit(self, X, y, classes, sample_weight, first_call):
        names = feature_names(X) if first_call else None
        matrix, n_rows, n_features = check_X(X)
        y = check_labels(y, n_rows)
        if first_call:
            if classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit.")
            check_pass_params(self)
            known = classes_of(check_labels(classes, None, "classes"))
            warn_if_regression_like(y, known)
            model, feature_map = self._new_model(
                known.shape[0], n_features, isinstance(matrix, tuple)
            )
        else:
            model, feature_map, n_features_in, known, fitted_names = self._fitted_state()
            check_feature_names(type(self).__name__, fitted_names, X)
            self._check_params_if_changed()
            if (
                classes is not None
                and not lists_classes(classes, known.tolist())
                and not np.array_equal(np.unique(check_labels(classes, None, "classes")), known)
            ):
                raise ValueError(
                    f"classes={np.unique(classes)!r} is not the same as on the first call to "
                    f"partial_fit, classes_={known!r}."
                )
            self._check_n_features(n_features, n_features_in)
        targets = self._targets(model, y, known)
        matrix = mapped_rows(matrix, n_rows, feature_map, scanned=True)
        model.partial_fit(matrix, targets, check_sample_weight(sample_weight, n_rows))
        if first_call:
            self._install(
                _model=model, _feature_map=feature_map, classes_=known, n_features_in_=n_features,
                _sparse_input=isinstance(matrix, tuple), feature_names_in_=names,
            )
        else:
            self._reenable_lean(model)
        return self

    # ----------------------------------------------------------------- prediction
    def decision_function(self, X: MatrixLike) -> Float64Array:
        """Scores of the mean weights: μ·x (+ intercept), shape (n,) for two classes (positive
        means `classes_[1]`), else μ_k·x per class, shape (n, n_classes). A score that
        overflows float64 is ±inf; one whose terms overflow with both signs (inf − inf) raises
        `ValueError`."""
        lean = self._lean
        scores = None if lean is None else lean.decision(X)
        return scores if scores is not None else self._checked_scores(X, "decision_function")

    def predict(self, X: MatrixLike) -> npt.NDArray[Any]:
        """The class of highest mean score (for two classes: `classes_[1]` where μ·x > 0)."""
        lean = self._lean
        labels = (
            None if lean is None or lean.predict is None
            else lean.predict(X, lean.classes, lean.class_rows)
        )
        if labels is not None:
            return labels
        scores = self.decision_function(X)
        best = (scores > 0).astype(np.intp) if scores.ndim == 1 else scores.argmax(axis=1)
        return self.classes_[best]

    def score(
        self, X: MatrixLike, y: ArrayLike, sample_weight: SampleWeight = None
    ) -> float:
        """Mean accuracy of `predict(X)` against y (weighted by sample_weight if given)."""
        predicted = self.predict(X)
        correct = predicted == check_labels(y, predicted.shape[0])
        return float(np.average(correct, weights=sample_weight))

    # ----------------------------------------------------------------- fitted attributes
    def _weights(self):
        """The fitted means as rows × (model features + bias)."""
        model = self._fitted_model()
        if model.kind == "multiclass":
            return model.mean
        if model.kind == "multiclass_kernel":
            raise AttributeError("a multiclass kernel learner has no coef_")
        if model.kind == "kernel":
            config = model.config
            kernel, fit_intercept = config["kernel"], config["fit_intercept"]
            if kernel != "linear":
                raise AttributeError("coef_ is only defined without a kernel or with kernel='linear'")
            weights = model.dual_coef @ self.support_vectors_
            bias = [model.dual_coef.sum()] if fit_intercept else []
            return np.concatenate([np.ravel(weights), bias])[None, :]
        return model.mean[None, :]

    def _n_weights(self):
        """Number of feature weights (random features with kernel_approximation)."""
        feature_map = self._feature_map
        return self.n_features_in_ if feature_map is None else feature_map.weights.shape[1]

    @property
    def coef_(self) -> Float64Array:
        """Mean weight vectors, shape (1, n_features) for two classes, else
        (n_classes, n_features) (over the random features with kernel_approximation)."""
        return self._weights()[:, : self._n_weights()]

    @property
    def intercept_(self) -> Float64Array:
        """Bias weights, shape (1,) or (n_classes,); 0 when `fit_intercept=False`."""
        weights = self._weights()
        if weights.shape[1] > self._n_weights():
            return weights[:, self._n_weights()]
        return np.zeros(weights.shape[0])

    def _kernel_model(self):
        model = self._fitted_model()
        if model.kind != "kernel":
            raise AttributeError("only binary kernel learners (kernel=...) have one support set")
        return model

    @property
    def n_support_(self) -> int:
        """Number of support rows of a kernel learner (summed over the classes' support sets
        for more than two classes)."""
        model = self._fitted_model()
        if model.kind == "multiclass_kernel":
            return int(model.n_support.sum())
        return self._kernel_model().n_support

    @property
    def support_vectors_(self) -> Any:
        """The support rows of a kernel learner: a CSR matrix if it was fitted on sparse input,
        else a dense array, shape (n_support_, n_features)."""
        rows = self._kernel_model().support_vectors
        data, indices, indptr = rows["values"], rows["indices"], rows["indptr"]
        indices, indptr = indices.astype(np.int64), indptr.astype(np.int64)
        shape = (indptr.shape[0] - 1, self.n_features_in_)
        if self._sparse_input:
            import scipy.sparse

            return scipy.sparse.csr_matrix((data, indices, indptr), shape=shape)
        dense = np.zeros(shape)
        rows = np.repeat(np.arange(shape[0]), np.diff(indptr))
        dense[rows, indices] = data
        return dense

    @property
    def dual_coef_(self) -> Float64Array:
        """Mean coefficients ν of a binary kernel learner, one per support row (μ = Σ_p ν_p
        φ(x_p)), shape (1, n_support_) as in scikit-learn's SVC."""
        return self._kernel_model().dual_coef[None, :]

    @property
    def n_mistakes_(self) -> int:
        """Rounds whose label did not score strictly best before learning (binary: y·f ≤ 0),
        over everything seen."""
        return self._fitted_model().n_mistakes


class ConfidenceWeightedClassifier(Classifier):
    """Base of the second-order classifiers: a Gaussian N(μ, Σ) over weight vectors."""

    a: float
    _second_order = True

    # The parameters of a second-order learner whose rule has none (`_params.store_params`).
    def __init__(self, **params: Unpack[SecondOrderClassifierParams]) -> None:
        store_params(self, locals())

    def predict_proba(self, X: MatrixLike) -> Float64Array:
        """Class probabilities under the Gaussian over weights.

        Two classes: P(classes_[1] | x) = Φ(μ·x / √(xᵀΣx)), the probability that a weight
        vector drawn from N(μ, Σ) puts x on the positive side. It has the sign of
        `decision_function` (> 1/2 exactly where μ·x > 0), but it is not a monotone function of
        it across rows: a row whose margin is uncertain (large xᵀΣx) gets a probability closer
        to 1/2. More classes: the probability that class k scores highest when the class
        scores are independent Gaussians N(μ_k·x, σ²) with the common variance σ² the mean of
        the classes' xᵀΣ_k x (by quadrature); the common variance makes the probabilities rank
        the classes exactly as `decision_function` does.
        """
        lean = self._lean
        both = None if lean is None else lean.proba(X)
        if both is not None:
            return both
        model, rows = self._model_and_rows(X)
        probabilities = refuse_overflow(model.probabilities(rows), "predict_proba")
        if probabilities.ndim == 2:
            return probabilities
        both = np.empty((probabilities.shape[0], 2))
        both[:, 1] = probabilities
        np.subtract(1.0, probabilities, out=both[:, 0])
        return both

    def predict_log_proba(self, X: MatrixLike) -> Float64Array:
        """Logarithm of `predict_proba`."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    @property
    def covariance_(self) -> Float64Array:
        """The covariance over the features (the bias coordinate left out). Two classes: shape
        (n_features, n_features) for `covariance="full"`, (n_features,) for "diag", and for
        "lowrank" its factors (1 + 2·rank, n_features): the variances S, then the sketch B,
        with Σ = (diag(1/S) + BᵀB)⁻¹ over features and bias (`covariance_matrix()` forms it);
        more classes: one such covariance per class, stacked on a first axis."""
        model = self._fitted_model()
        if model.kind in ("kernel", "multiclass_kernel"):
            raise AttributeError("a kernel learner keeps its covariance in the dual form")
        if model.kind == "binary":
            return feature_block(model.covariance[None, :], model, self._n_weights())[0]
        return feature_block(model.covariance, model, self._n_weights())

    def covariance_matrix(self) -> Float64Array:
        """Σ over the features (bias left out) as a dense matrix, whatever the covariance form:
        shape (n_features, n_features), or one per class stacked on a first axis with more than
        two classes. For `covariance="lowrank"` this forms (diag(1/S) + BᵀB)⁻¹: O(d²) memory."""
        self.covariance_  # the same refusals (kernel learners)
        model = self._fitted_model()
        dense = dense_covariances(model, self._n_weights())
        return dense if model.kind == "multiclass" else dense[0]


def _config(kind, rule, params, n_features, fit_intercept, a, **entries):
    """The configuration of a native model (docs/model-format.md lists its entries)."""
    return {
        "kind": kind, "rule": rule, "params": dict(params), "n_features": n_features,
        "fit_intercept": fit_intercept, "a": a, **entries,
    }


def _l1_config(l1):
    """The configuration entries of an L1 penalty spec (penalty, alpha, penalize_intercept)."""
    if l1 is None:
        return {"penalty": None}
    penalty, alpha, penalize_intercept = l1
    return {"penalty": penalty, "alpha": alpha, "penalize_intercept": penalize_intercept}

