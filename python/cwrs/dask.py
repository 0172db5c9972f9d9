"""Training and prediction on a Dask cluster (the `cwrs[dask]` extra; docs/design.md §9.5).

`fit(estimator, X, y)` learns from a dask array or data frame chunked by rows, or from a list of
LIBSVM files (one partition each, read on a worker by cwrs's chunked reader: streamed, each
chunk learned by the core as the next is parsed on a second thread, when the width and the
classes are known; else parsed first to find them, and kept). Each epoch
sends the current model to the workers once; every partition learns from it, in its stored
order, as a pure task; the shard models come back in partition order (only the coordinates a
shard changed, when that is smaller than the model) and are merged by `cwrs.merge` with the model
of the start of the epoch as base. A task that Dask runs again after losing a worker gives the
same result, so the model does not depend on failures or timing. `predict`,
`decision_function` and `predict_proba` map a fitted estimator over a dask collection's
partitions.
"""

from __future__ import annotations

import copy
import importlib
import os
from typing import Any, Optional, Sequence, Union

import numpy as np

from . import _cwrs
from ._classifier import Classifier
from ._estimator import Estimator
from ._extras import install_hint
from ._merge import METHODS, fitted_attributes, merge as merge_models, with_model
from ._params import InvalidParameterError, check_pass_params
from ._svmlight import _line_chunks
from ._validation import check_labels, classes_of

__all__ = ["fit", "predict", "decision_function", "predict_proba"]

Paths = Sequence[Union[str, "os.PathLike[str]"]]


def fit(
    estimator: Estimator,
    X: Any,
    y: Any = None,
    *,
    client: Any = None,
    n_iter: Optional[int] = None,
    merge: str = "auto",
    classes: Any = None,
    n_features: Optional[int] = None,
    sample_weight: Any = None,
) -> Estimator:
    """Fits `estimator` (forgetting any previous fit) on a Dask cluster and returns it.

    X is a dask array (2-D; rechunked to one block of columns) or a dask data frame, chunked by
    rows, with y a dask array or series of the same row partitions; or a list of LIBSVM file
    paths (y=None), one partition each, read on the workers (one-based indices; every worker
    must see the files; SciPy is needed, as for every LIBSVM reader of cwrs). `client` is a
    `distributed.Client` (None: the current default one), `n_iter` the epochs (None: the
    estimator's `n_iter`), `merge` the method of `cwrs.merge`, `classes` every label (None:
    found in y, which takes one more pass over it). Rows are learned in their stored order
    within each partition (`shuffle` does not apply).

    `sample_weight` (dask collections only) gives each row its importance weight, as in
    `partial_fit`: a 1-D dask array with one weight per row of X (rechunked to X's rows), a
    dask series with the partitions of X, or the name of a column of the data frame X (which
    then is not a feature). A classifier's `class_weight` applies as in `partial_fit`: a dict
    multiplies the weights, "balanced" counts each partition's rows beyond the model it starts
    from, and the merge adds the counts (docs/design.md §9.5).

    `n_features` (files only) is the width of the model; an index past it is an error, as in
    `partial_fit_file`. With it, and with `classes` for a classifier, each file is streamed in
    every epoch: parsed on a second thread of its worker while the core learns its rows, in
    flat memory. Without them (None: one past the largest index of all the files), the files
    are parsed first to find the width and the labels, and their rows stay in the workers'
    memory (as CSR) for every epoch. A model with `kernel_approximation` learns the files
    through its feature map, chunk by chunk (docs/design.md §9.5).
    """
    client = _client(client)
    if merge not in METHODS:
        raise InvalidParameterError(f"merge must be one of {METHODS}, got {merge!r}")
    if not isinstance(estimator, Estimator):
        raise InvalidParameterError(f"estimator must be a cwrs estimator, got {estimator!r}")
    if getattr(estimator, "kernel", None) is not None:
        raise InvalidParameterError("kernel learners cannot be fitted by shards: use kernel=None")
    epochs = getattr(estimator, "n_iter") if n_iter is None else n_iter
    if not isinstance(epochs, int) or isinstance(epochs, bool) or epochs < 1:
        raise InvalidParameterError(f"n_iter must be a positive integer, got {n_iter!r}")
    if n_features is not None and (
        not isinstance(n_features, (int, np.integer)) or isinstance(n_features, bool)
        or n_features < 1
    ):
        raise InvalidParameterError(f"n_features must be a positive integer, got {n_features!r}")
    if not isinstance(estimator, Classifier):
        classes = None
    elif classes is not None:
        classes = np.unique(np.asarray(classes))
    stream = classes is not None or not isinstance(estimator, Classifier)
    parts, n_features, found = _partitions(client, X, y, n_features, stream, sample_weight)
    if isinstance(estimator, Classifier) and classes is None:
        classes = found()
    template = type(estimator)(**estimator.get_params())
    template._check_params(None if classes is None else len(classes))
    model: Any = None
    for _ in range(epochs):
        model = _epoch(client, template, model, parts, n_features, classes, merge)
    fitted = fitted_attributes(model)
    if isinstance(X, (list, tuple)):  # files, read one-based: kept as partial_fit_file keeps it
        fitted["zero_based_"] = False
    with estimator._lock():
        estimator.__dict__.pop("feature_names_in_", None)
        estimator._install(_model=model._model, **fitted)
    return estimator


def _client(client):
    try:
        import distributed
    except ImportError:
        raise ImportError(f"cwrs.dask needs dask and distributed: {install_hint('dask')}") from None
    if client is None:
        try:
            return distributed.default_client()
        except ValueError:
            raise ValueError(
                "cwrs.dask needs a distributed.Client: pass client=, or create one first"
            ) from None
    return client


def _partitions(client, X, y, n_features, stream, sample_weight=None):
    """(partitions as (kind, x, y, weights) of delayed values, futures or paths (weights None
    when not given), n_features, a function computing the classes in y). `stream`: whether the
    classes are known (or not needed), so that files of a known width can be streamed."""
    import dask.array as da
    import dask.dataframe as dd
    from dask import delayed

    if isinstance(X, (list, tuple)):
        if y is not None:
            raise InvalidParameterError("y must be None with LIBSVM files: their labels are in them")
        if sample_weight is not None:
            raise InvalidParameterError(
                "sample_weight is for dask collections: a LIBSVM file holds no weights"
            )
        if not X:
            raise InvalidParameterError("X is an empty list of files")
        paths = [os.fspath(p) for p in X]
        if stream and n_features is not None:
            return [("file", path, None, None) for path in paths], n_features, None
        # Each file is parsed once, on a worker, and kept there (Dask parses it again, from its
        # path, if the worker holding it is lost).
        loaded = [client.submit(_read_file, path, pure=True) for path in paths]
        scans = client.gather([client.submit(_scan, part, pure=True) for part in loaded])
        width = max(w for w, _ in scans)
        if n_features is not None and width > n_features:
            path = paths[[w for w, _ in scans].index(width)]
            raise ValueError(
                f"{path}: n_features was set to {n_features}, but the file has the index {width}"
            )
        return (
            [("rows", part, None, None) for part in loaded],
            n_features or width,
            lambda: np.unique(np.concatenate([labels for _, labels in scans])),
        )
    if n_features is not None:
        raise InvalidParameterError("n_features is for LIBSVM files: a dask collection has its width")
    if y is None:
        raise InvalidParameterError("y is required unless X is a list of LIBSVM files")
    if isinstance(X, da.Array):
        if X.ndim != 2:
            raise InvalidParameterError(f"X must be a 2-D dask array, got {X.ndim} dimensions")
        if not isinstance(y, da.Array) or y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise InvalidParameterError("y must be a 1-D dask array with one value per row of X")
        X = X.rechunk({1: -1})
        y = y.rechunk((X.chunks[0],))
        xs, ys = list(X.to_delayed().ravel()), list(y.to_delayed().ravel())
        n_features = X.shape[1]
        if sample_weight is not None:
            if (
                not isinstance(sample_weight, da.Array) or sample_weight.ndim != 1
                or sample_weight.shape[0] != X.shape[0]
            ):
                raise InvalidParameterError(
                    "sample_weight must be a 1-D dask array with one weight per row of X"
                )
            sample_weight = list(sample_weight.rechunk((X.chunks[0],)).to_delayed().ravel())
    elif isinstance(X, dd.DataFrame):
        if not isinstance(y, (dd.Series, dd.DataFrame)) or y.npartitions != X.npartitions:
            raise InvalidParameterError(
                "y must be a dask series with the partitions of X (X.npartitions)"
            )
        if isinstance(sample_weight, str):
            if sample_weight not in X.columns:
                raise InvalidParameterError(
                    f"sample_weight={sample_weight!r} is not a column of X"
                )
            X, sample_weight = X.drop(columns=[sample_weight]), X[sample_weight]
        if sample_weight is not None:
            if not isinstance(sample_weight, dd.Series) or (
                sample_weight.npartitions != X.npartitions
            ):
                raise InvalidParameterError(
                    "sample_weight must be a dask series with the partitions of X, or the name "
                    "of a column of X"
                )
            sample_weight = list(sample_weight.to_delayed())
        xs, ys = list(X.to_delayed()), list(y.to_delayed())
        n_features = len(X.columns)
    else:
        raise InvalidParameterError(
            f"X must be a dask array, a dask data frame or a list of LIBSVM paths, got "
            f"{type(X).__name__}"
        )
    labels = [delayed(np.unique, pure=True)(delayed(np.asarray)(part)) for part in ys]
    weights = [None] * len(xs) if sample_weight is None else sample_weight
    return (
        [("data", x, part, w) for x, part, w in zip(xs, ys, weights)],
        n_features,
        lambda: np.unique(np.concatenate(client.gather(client.compute(labels)))),
    )


def _read_file(path):
    """The rows of a LIBSVM file with one-based indices, parsed by cwrs's chunked reader: a
    list of (X, y) chunks, X CSR as wide as the largest index so far."""
    return [(X, y) for X, y, _ in _line_chunks(path, 10_000, False, None)]


def _scan(chunks):
    """The width (one past the largest index) and the distinct labels of a file's chunks."""
    width = max([1] + [X.shape[1] for X, _ in chunks])
    return width, np.unique(np.concatenate([np.zeros(0)] + [y for _, y in chunks]))


def _epoch(client, template, model, parts, n_features, classes, method):
    """One epoch: every partition learns from `model` (None: from scratch) as a pure task, the
    shards are rebuilt in partition order and merged with `model` as base."""
    base = None if model is None else client.scatter(model, broadcast=True, hash=True)
    futures = []
    for kind, x, y, w in parts:
        if kind == "data":
            x, y = client.compute([x, y])
            if w is not None:
                w = client.compute(w)
        # Pure: the key is a hash of the arguments, so a task run again is the same task.
        futures.append(
            client.submit(
                _learn_partition, base, template, kind, (x, y, w), n_features, classes, pure=True
            )
        )
    # An empty partition (what filters and repartitioning leave) contributes nothing.
    payloads = [payload for payload in client.gather(futures) if payload is not None]
    if not payloads:
        raise ValueError("X has no rows: every partition is empty")
    shards = [_shard(template, model, payload) for payload in payloads]
    return merge_models(shards, method=method, base=model)


def _learn_partition(base, template, kind, rows, n_features, classes, /):
    """The shard model of one partition (`rows`: x, y and the weights or None) as a payload
    for `_shard` (None for a partition without rows): a pure function of its arguments (`base`
    is never changed: the worker may share it between tasks)."""
    x, y, weights = rows
    if kind == "data" and len(y) == 0:
        return None
    model = copy.deepcopy(base) if base is not None else copy.deepcopy(template)
    fit_args = {} if classes is None or base is not None else {"classes": classes}
    start = None if base is None else base._model
    mapped = getattr(model, "kernel_approximation", None) is not None
    if base is None and (kind == "rows" or (kind == "file" and not mapped)):
        # The fresh model this task starts from, copied before it learns: the start of the delta.
        _start(model, n_features, classes)
        start = model._model.copy()
    if kind == "file":
        _learn_file(model, x, n_features, classes)
    elif kind == "rows":
        for X, labels in x:
            X = type(X)((X.data, X.indices, X.indptr), shape=(X.shape[0], n_features))
            model.partial_fit(X, labels)
    else:
        weights = None if weights is None else np.asarray(weights, dtype=np.float64)
        model.partial_fit(x, y, sample_weight=weights, **fit_args)
    if start is None:  # the native model was built by the first partial_fit
        start = _cwrs.Model(model._model.config)
    # Only the coordinates the shard changed, when that is smaller (`Model.delta_since`).
    return fitted_attributes(model), model._model.delta_since(start)


def _learn_file(model, path, n_features, classes):
    """Learns the rows of the LIBSVM file `path`, `n_features` wide, as they are parsed (on a
    second thread): in the core, or through the feature map of `kernel_approximation`."""
    fit_args = {} if classes is None else {"classes": classes}
    if getattr(model, "kernel_approximation", None) is not None:
        model.partial_fit_file(path, n_features=n_features, **fit_args)
        return
    if "_model" not in model.__dict__:  # not started by the caller
        _start(model, n_features, classes)
    native_classes = None if classes is None else [float(c) for c in model.classes_]
    _cwrs.learn_svmlight(model._model, os.fspath(path), n_features, native_classes)


def _start(model, n_features, classes):
    """Installs in `model` the native model that its first `partial_fit` of sparse rows
    `n_features` wide would build, before it learns any row."""
    check_pass_params(model)
    if classes is None:
        native = model._new_model(n_features)
        model._install(_model=native, n_features_in_=n_features, feature_names_in_=None)
        return
    known = classes_of(check_labels(classes, None, "classes"))
    native, feature_map = model._new_model(known.shape[0], n_features, True)
    model._install(_model=native, _feature_map=feature_map, classes_=known,
                   n_features_in_=n_features, _sparse_input=True, feature_names_in_=None)


def _shard(template, base, payload):
    """The shard estimator a payload of `_learn_partition` describes, from the estimator `base`
    the epoch started from (None: from scratch)."""
    fitted, delta = payload
    native = _cwrs.Model.from_delta(delta, None if base is None else base._model)
    return with_model(template, fitted, native)


# ------------------------------------------------------------------------- prediction
def predict(estimator: Estimator, X: Any) -> Any:
    """`estimator.predict` over the partitions of a dask array or data frame (a dask array, or
    a dask series for a data frame)."""
    return _map(estimator, X, "predict", None)


def decision_function(estimator: Estimator, X: Any) -> Any:
    """`estimator.decision_function` over the partitions of a dask array or data frame."""
    return _map(estimator, X, "decision_function", _width(estimator, "decision_function"))


def predict_proba(estimator: Estimator, X: Any) -> Any:
    """`estimator.predict_proba` over the partitions of a dask array or data frame."""
    if not hasattr(estimator, "predict_proba"):
        raise AttributeError(f"{type(estimator).__name__} has no predict_proba")
    return _map(estimator, X, "predict_proba", len(getattr(estimator, "classes_")))


def _width(estimator, method):
    """Columns of a method's output: None for one value per row."""
    classes = getattr(estimator, "classes_", None)
    return None if classes is None or len(classes) == 2 else len(classes)


def _map(estimator, X, method, width):
    import dask.array as da
    import dask.dataframe as dd

    estimator._fitted_model()
    classes = getattr(estimator, "classes_", None)
    dtype = classes.dtype if method == "predict" and classes is not None else np.float64

    def apply(block):
        if len(block) == 0:  # an empty partition: no rows, as the method would give them
            return np.empty((0,) if width is None else (0, width), dtype=dtype)
        return getattr(estimator, method)(block)

    if isinstance(X, da.Array):
        X = X.rechunk({1: -1})
        if width is None:
            return X.map_blocks(apply, drop_axis=1, dtype=dtype)
        return X.map_blocks(apply, chunks=(X.chunks[0], (width,)), dtype=np.float64)
    if isinstance(X, dd.DataFrame):
        pd = importlib.import_module("pandas")  # dask.dataframe's own dependency
        if width is None:
            return X.map_partitions(lambda part: pd.Series(apply(part), index=part.index))
        return X.map_partitions(
            lambda part: pd.DataFrame(apply(part), index=part.index),
            meta=pd.DataFrame({k: np.zeros(0) for k in range(width)}),
        )
    raise InvalidParameterError(
        f"X must be a dask array or a dask data frame, got {type(X).__name__}"
    )
