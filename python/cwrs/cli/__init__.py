"""The `cwrs` command (also `python -m cwrs`).

    cwrs                                    # every learner on the bundled svmguide3 data, 5 orders
    cwrs --shuffle 10 --plot mistakes.png   # mean ± std over 10 seeded orders, and a figure
    cwrs compare -d data.svm --learners AROW,SCW1 --covariance full --json
    cwrs train -a AROW --param r=0.5 -d train.svm -o model.cwrs --passes 2
    cwrs train -a AROW -d train.svm -o model.cwrs --workers 4   # a local Dask cluster
    cwrs train -a AROW -d wide.svm -o model.cwrs --covariance lowrank --rank 20
    cwrs test -i model.cwrs -d test.svm -p predictions.txt
    cwrs predict -i model.cwrs -d new.svm -p predictions.txt  # rows without labels

Data (`-d`) is a LIBSVM / SVMlight text file (plain, or compressed with gzip, bzip2 or xz; `-`
reads it from stdin), an .npz file with arrays X and y, or the name of a bundled data set
(svmguide3). LIBSVM indices are read as zero-based exactly when an index 0 occurs, as
scikit-learn does, unless --zero-based or --one-based says (--verbose tells which); a model
trained on a LIBSVM file keeps its base, and `test` and `predict` read with it. `train`, `test`
and `predict` stream LIBSVM files in chunks, so files larger than memory work. Results go to
stdout; progress and diagnostics to stderr (`--quiet` silences them, not warnings). Exit
status: 0 on success, 1 for any error (a wrong option as well as bad data), reported as one line
`cwrs: error: ...`.

Outputs (`-o`, `-p`, `--plot`) are checked before any work starts (not an input, not a folder,
in a writable folder) and appear only when complete: they are written to a temporary file beside
the target and renamed into place, wherever they are (/dev/shm too). An existing FIFO or device,
or a name of an open descriptor (`-p /dev/stdout`), is written through instead.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time

import numpy as np

from .._classifiers import CLASSIFIERS
from .._extras import install_hint
from .._params import SECOND_ORDER_PARAMETERS
from .._persist import load
from .._regressors import REGRESSORS
from .._validation import regression_like
from .io import (
    INDEXING,
    VERBOSE,
    UsageError,
    check_weight_file,
    chunks,
    data_path,
    indexing,
    is_npz,
    load_table,
    model_indexing,
    open_outputs,
    scan,
    shuffled,
    split_weights,
    weighted_chunks,
    with_width,
)
from .report import (
    Reporter,
    emit,
    format_comparison,
    label_list,
    label_text,
    metrics_text,
    one_line,
    plot_curves,
    pyplot,
)

COMMANDS = {  # name: (summary, description)
    "compare": (
        "progressive validation of the learners (the default)",
        "Each learner sees the rows once, predicting each before learning it; the online "
        "mistake rate is the fraction it got wrong. Classifiers only: the data needs class "
        "labels.",
    ),
    "train": (
        "train one learner on a file and save it",
        "Trains a learner on a data file, streamed in chunks, and saves it in the .cwrs format; "
        "then reports the online mistakes and the final model's accuracy (MSE, R² for "
        "regressors) on the training data.",
    ),
    "test": (
        "evaluate a saved model on a file",
        "Prints the accuracy (classifiers) or MSE, MAE and R² (regressors) of a saved model on "
        "a data file, streamed in chunks.",
    ),
    "predict": (
        "write a saved model's predictions for a file",
        "Writes one prediction per line of a data file (streamed in chunks) to -p. The rows "
        "need no labels: a LIBSVM line may start with its first index:value, or with a "
        "placeholder label (such as ? or 0), which is ignored.",
    ),
}
LEARNERS = {cls.__name__: cls for cls in (*CLASSIFIERS, *REGRESSORS)}
# Points of each cumulative-mistakes curve of `compare --plot`.
CURVE_POINTS = 200
# Rows `train` shuffles in memory by default: an exact permutation up to this many rows.
SHUFFLE_BUFFER = 1_000_000


# -------------------------------------------------------------------------------- learners
def parse_value(text):
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered == "none":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_params(pairs):
    params = {}
    for pair in pairs or ():
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise UsageError(f"--param takes NAME=VALUE, got {pair!r}")
        params[name] = parse_value(value)
    return params


def learner_class(name, family=None):
    cls = LEARNERS.get(name)
    if cls is None or (family is not None and cls not in family):
        names = ", ".join(c.__name__ for c in (family or LEARNERS.values()))
        raise UsageError(f"unknown learner {name!r}; choose from {names}")
    return cls


def build(cls, params):
    """`cls(**params)` restricted to the parameters it has; those it lacks are an error."""
    unknown = set(params) - set(cls._get_param_names())
    if unknown:
        raise UsageError(
            f"{cls.__name__} has no parameter {', '.join(sorted(unknown))}; its parameters are "
            f"{', '.join(cls._get_param_names())}"
        )
    model = cls(**params)
    try:  # before any data is read
        model._check_params()
    except (ValueError, TypeError) as error:
        raise UsageError(f"--param: {cls.__name__}: {one_line(error)}") from None
    return model


# Parameters of `fit` that the commands (which call partial_fit) replace by their own options.
PASS_OPTIONS = {
    "compare": {"n_iter": "one pass", "shuffle": "--shuffle N", "random_state": "--seed",
                "n_jobs": "one thread per learner"},
    "train": {"n_iter": "--passes", "shuffle": "--shuffle/--no-shuffle", "random_state": "--seed",
              "n_jobs": "--workers N"},
}


def common_params(args):
    params = parse_params(args.param)
    replaced = PASS_OPTIONS[args.command]
    ignored = sorted(set(params) & set(replaced))
    if ignored:
        raise UsageError(
            f"--param {ignored[0]} has no effect in cwrs {args.command}; its option is "
            f"{replaced[ignored[0]]}"
        )
    if args.no_bias:
        params["fit_intercept"] = False
    return params


# --------------------------------------------------------------------------------- compare
def check_class_labels(y, path, command, n_rows=None):
    """Refuses continuous targets (which classifiers cannot learn), and labels that look like
    a regression target, with a message saying what to do instead. `y`: the labels, or their
    distinct values over `n_rows` rows."""
    if y.dtype.kind == "f" and np.isfinite(y).all() and np.any(y != np.round(y)):
        example = y[y != np.round(y)][0]
        regressors = ", ".join(cls.__name__ for cls in REGRESSORS)
        raise UsageError(
            f"{path} has continuous targets (e.g. {example:g}), but {command} needs class "
            f"labels; for regression use a regressor ({regressors}) with `cwrs train -a "
            "AROWRegressor` and `cwrs test`"
        )
    reason = regression_like(np.unique(y), len(y) if n_rows is None else n_rows)
    if reason is not None:
        raise UsageError(f"{path}: {reason} (`cwrs train -a AROWRegressor`)")


def form_params(form, rank):
    """The parameters of covariance form `form`; `rank` (--rank) only with "lowrank"."""
    if form != "lowrank":
        if rank is not None:
            raise UsageError("--rank sets the sketch of --covariance lowrank; it needs that form")
        return {"covariance": form} if form else {}
    return {"covariance": form, "rank": SECOND_ORDER_PARAMETERS["rank"] if rank is None else rank}


def compare_configs(args):
    """(label, class, parameters) of each learner and covariance form to compare."""
    names = args.learners.split(",") if args.learners else [c.__name__ for c in CLASSIFIERS]
    classes = [learner_class(name, CLASSIFIERS) for name in names]
    forms = ("diag", "full") if args.covariance == "both" else (args.covariance,)
    if args.rank is not None and "lowrank" not in forms:
        form_params(None, args.rank)
    extra = common_params(args)
    unused = set(extra).difference(*(cls._get_param_names() for cls in classes))
    if unused:
        raise UsageError(f"no chosen learner has the parameter {', '.join(sorted(unused))}")
    configs = []
    for cls in classes:
        for form in forms if cls._second_order else (None,):
            params = dict(extra, **form_params(form, args.rank if form == "lowrank" else None))
            params = {k: v for k, v in params.items() if k in cls._get_param_names()}
            if form == "lowrank":
                form = f"lowrank, k={params['rank']}"
            build(cls, params)  # refuses a bad value before any data is read
            configs.append((f"{cls.__name__} ({form})" if form else cls.__name__, cls, params))
    return configs


def compare_runs(args, configs, X, y, reporter):
    """Progressive validation of each configuration over each order: one result row and one
    mean cumulative-mistakes curve (with --plot) per configuration."""
    n_rows = len(y)
    orders = (
        [np.random.RandomState(args.seed + k).permutation(n_rows) for k in range(args.shuffle)]
        if args.shuffle
        else [np.arange(n_rows)]
    )
    bounds = np.unique(np.linspace(0, n_rows, min(CURVE_POINTS, n_rows) + 1).astype(int))
    labels = np.unique(y)
    bar = reporter.progress(len(configs) * len(orders), "run", "compare")
    rows, curves = [], {}
    for label, cls, params in configs:
        rates, updates, seconds, curve = [], [], [], np.zeros(len(bounds))
        for order in orders:
            X_order, y_order, model = X[order], y[order], build(cls, params)
            # Learning alone is timed, as one call with or without --plot.
            began = time.perf_counter()
            model.partial_fit(X_order, y_order, classes=labels)
            seconds.append(time.perf_counter() - began)
            rates.append(model.n_mistakes_ / n_rows)
            updates.append(model.n_updates_)
            if args.plot:
                curve += mistakes_curve(build(cls, params), X_order, y_order, labels, bounds)
            bar.update()
        curves[label] = curve / len(orders)
        rows.append(
            {
                "learner": label,
                "mistake_rate": float(np.mean(rates)),
                "mistake_rate_std": float(np.std(rates)),
                "updates": float(np.mean(updates)),
                "seconds": float(np.mean(seconds)),
            }
        )
    bar.close()
    return rows, bounds, curves


def mistakes_curve(model, X, y, labels, bounds):
    """Cumulative mistakes of a second, untimed run of `model` at each of `bounds`, from its
    progressive scores (each row scored before it is learned): a mistake is a row whose true
    class does not score strictly above every other class (for two classes, y·f ≤ 0), as
    `n_mistakes_` counts them (for an averaged model, of the averaged predictions, which
    `n_mistakes_` does not count)."""
    _, scores, _ = model.partial_fit(X, y, classes=labels, return_scores=True)
    truth = np.searchsorted(np.asarray(labels), y)
    if scores.ndim == 1:
        mistakes = np.where(truth == 1, scores, -scores) <= 0
    else:
        own = scores[np.arange(len(y)), truth]
        scores = scores.copy()
        scores[np.arange(len(y)), truth] = -np.inf
        mistakes = own - scores.max(axis=1) <= 0
    cumulative = np.concatenate([[0], np.cumsum(mistakes)])
    return cumulative[bounds].astype(float)


def run_compare(args, reporter):
    plt = pyplot() if args.plot else None
    configs = compare_configs(args)
    path = data_path(args.data)
    with contextlib.ExitStack() as stack:
        (plot,) = open_outputs(stack, [("--plot", args.plot, True)], [("-d", path)])
        X, y = load_table(path, args.zero_based)
        if len(y) == 0:
            raise UsageError(f"{path}: no rows")
        check_class_labels(y, path, "compare")
        reporter.say(f"{path.name}: {X.shape[0]} rows, {X.shape[1]} features")
        rows, bounds, curves = compare_runs(args, configs, X, y, reporter)
        n_runs = max(args.shuffle, 1)
        if plot is not None:
            title = f"{path.name}: {X.shape[0]} rows, mean of {n_runs} order(s)"
            with plot.naming_errors():
                plot_curves(plt, plot.file, bounds, curves, title)
            plot.commit()
            reporter.say(f"wrote {args.plot}")
    result = {
        "data": str(path),
        "rows": int(X.shape[0]),
        "features": int(X.shape[1]),
        "runs": n_runs,
        "learners": rows,
    }
    emit(result, args.json, format_comparison(rows, X.shape[0], n_runs), reporter)


# ----------------------------------------------------------------------------------- train
def training_rows(args, path, n_features, rng):
    """One pass over the training rows as (X, y, weights or None), `n_features` wide: shuffled
    unless --no-shuffle, each row with its --weights weight."""
    rows = ((with_width(X, n_features), y) for X, y in chunks(path, args.zero_based))
    if args.weights is not None:
        rows = weighted_chunks(rows, args.weights)
    rows = shuffled(rows, args.shuffle_buffer, rng) if args.shuffle else rows
    if args.weights is not None:
        return split_weights(rows)
    return ((X, y, None) for X, y in rows)


def class_weight_option(text, labels):
    """--class-weight: "balanced", or CLASS=W pairs naming labels of the data."""
    if text == "balanced":
        return text
    by_name = {str(label): label for label in labels.tolist()}
    # LIBSVM labels are read as floats: 1 names the label 1.0.
    by_name.update({str(int(label)): label for label in labels.tolist()
                    if isinstance(label, float) and label.is_integer()})
    weights = {}
    for pair in text.split(","):
        name, sep, value = pair.partition("=")
        if not sep or name.strip() not in by_name:
            raise UsageError(
                f"--class-weight {text!r}: expected \"balanced\" or CLASS=W pairs with CLASS "
                f"one of the labels {sorted(by_name)}"
            )
        try:
            weights[by_name[name.strip()]] = float(value)
        except ValueError:
            raise UsageError(f"--class-weight {text!r}: {value!r} is not a number") from None
    return weights


def run_train(args, reporter):
    cls = learner_class(args.algorithm)
    params = dict(common_params(args), **form_params(args.covariance, args.rank))
    model = build(cls, params)
    path = data_path(args.data)
    is_classifier = cls in CLASSIFIERS
    with contextlib.ExitStack() as stack:
        inputs = [("-d", path)] + ([] if args.weights is None else [("--weights", args.weights)])
        (output,) = open_outputs(stack, [("-o", args.output, True)], inputs)
        n_rows, width, labels = scan(path, args.zero_based, labels=is_classifier)
        if n_rows == 0:
            raise UsageError(f"{path}: no rows")
        if is_classifier:
            check_class_labels(labels, path, f"{cls.__name__} (a classifier)", n_rows)
        if args.weights is not None:
            if args.workers or args.scheduler:
                raise UsageError(
                    "--weights with --workers/--scheduler: the parts sent to the workers are "
                    "LIBSVM files, which hold no weights; train on one machine"
                )
            check_weight_file(args.weights, n_rows)
        if args.class_weight is not None:
            if not is_classifier:
                raise UsageError(f"--class-weight applies to classifiers, not {cls.__name__}")
            model.set_params(class_weight=class_weight_option(args.class_weight, labels))
        n_features = args.n_features or width
        if width > n_features:
            raise UsageError(f"{path} has {width} features, more than --n-features {n_features}")
        if not args.shuffle:
            order = "in file order"
        elif n_rows <= args.shuffle_buffer:
            order = f"shuffled (seed {args.seed})"
        else:
            order = f"shuffled through a {args.shuffle_buffer}-row buffer (seed {args.seed})"
        reporter.say(
            f"{path.name}: {n_rows} rows, {n_features} features; training {model!r} {order}"
        )
        fit_args = {"classes": labels} if is_classifier else {}
        rng = np.random.default_rng(args.seed)
        began = time.perf_counter()
        if args.workers or args.scheduler:
            order += f", in parts on {cluster_text(args)}"
            train_on_cluster(args, model, path, n_rows, n_features, rng, labels, stack)
        else:
            bar = reporter.progress(n_rows * args.passes, "rows", "train")
            for _ in range(args.passes):
                for X, y, weights in training_rows(args, path, n_features, rng):
                    model.partial_fit(X, y, sample_weight=weights, **fit_args)
                    bar.update(X.shape[0])
            bar.close()
        seconds = time.perf_counter() - began
        if not is_npz(path):  # kept in the model: `test` and `predict` read files with it
            model.zero_based_ = indexing(path, args.zero_based)
        try:
            with output.naming_errors():
                model.save(output.file)
        except MemoryError:
            raise MemoryError(
                f"not enough memory to write the model of {n_features} features to {args.output}"
            ) from None
        output.commit()
    # The final model on its training data, beside the online mistakes made while learning.
    _, training = evaluate(model, path, args.zero_based, reporter, task="training accuracy")
    result = {
        "learner": type(model).__name__,
        "params": {k: v for k, v in model.get_params().items() if k in params},
        "data": str(path),
        "rows": n_rows,
        "features": n_features,
        "passes": args.passes,
        "order": order,
        "weights": None if args.weights is None else str(args.weights),
        "updates": int(model.n_updates_),
        "seconds": seconds,
        "model": str(args.output),
    }
    if is_classifier:
        result["classes"] = labels.tolist()
        result["mistakes"] = int(model.n_mistakes_)
        result["online_mistake_rate"] = model.n_mistakes_ / (n_rows * args.passes)
    result.update({f"training_{name}": value for name, value in training.items()})
    text = [f"{result['learner']} on {path.name}: {n_rows} rows × {args.passes} pass(es), {order}"]
    if is_classifier:
        text.append(
            f"online mistakes {result['mistakes']} "
            f"(rate {result['online_mistake_rate']:.4f}), updates {result['updates']}"
        )
    else:
        text.append(f"updates {result['updates']}")
    text.append(f"final model on the training data: {metrics_text(training)}")
    text.append(f"{seconds:.3f} s; model written to {args.output}")
    emit(result, args.json, "\n".join(text), reporter)


def cluster_text(args):
    return f"scheduler {args.scheduler}" if args.scheduler else f"{args.workers} local workers"


def train_on_cluster(args, model, path, n_rows, n_features, rng, labels, stack):
    """`cwrs.dask.fit` of `model` on the rows (in the order of one --shuffle pass), split into
    one contiguous part per worker and written as LIBSVM files to a temporary folder beside the
    output (which a remote scheduler's workers must see), learned for --passes epochs."""
    from .. import dask as cwrs_dask

    try:
        import distributed
    except ImportError:
        raise UsageError(
            f"--workers and --scheduler need dask and distributed: {install_hint('dask')}"
        ) from None
    if is_npz(path):
        raise UsageError("--workers and --scheduler train from a LIBSVM file, not .npz")
    if args.scheduler:
        client = stack.enter_context(distributed.Client(args.scheduler))
    else:
        cluster = stack.enter_context(distributed.LocalCluster(
            n_workers=args.workers, threads_per_worker=1, processes=True,
            dashboard_address=None))
        client = stack.enter_context(distributed.Client(cluster))
    n_parts = max(1, min(n_rows, len(client.scheduler_info()["workers"])))
    folder = stack.enter_context(tempfile.TemporaryDirectory(
        prefix=".cwrs-parts-", dir=os.path.dirname(os.path.abspath(args.output))))
    bounds = np.linspace(0, n_rows, n_parts + 1).astype(int)
    paths = [os.path.join(folder, f"part{k}.libsvm") for k in range(n_parts)]
    with contextlib.ExitStack() as files:
        outs = [files.enter_context(open(p, "w")) for p in paths]
        row = 0
        for X, y, _ in training_rows(args, path, n_features, rng):
            for i, line in enumerate(libsvm_lines(X, y)):
                outs[int(np.searchsorted(bounds, row + i, side="right")) - 1].write(line)
            row += X.shape[0]
    cwrs_dask.fit(
        model, paths, client=client, n_iter=args.passes, merge="auto", classes=labels,
        n_features=n_features,
    )


def libsvm_lines(X, y):
    """The rows of a CSR matrix X with labels y as LIBSVM lines (one-based, exact values)."""
    data, indices, indptr = X.data.tolist(), (X.indices + 1).tolist(), X.indptr.tolist()
    for i, label in enumerate(y.tolist()):
        span = range(indptr[i], indptr[i + 1])
        yield f"{label!r} " + " ".join(f"{indices[k]}:{data[k]!r}" for k in span) + "\n"


# ------------------------------------------------------------------------------------ test
def predicted_chunks(model, path, zero_based, reporter, task, labels=True):
    """(predictions, labels) of each chunk of the data, streamed, for `model`: rows are cut or
    padded to the model's width, and the features past it are reported once at the end.
    Without `labels`, rows may lack them. `task` names the progress bar."""
    n_features = model.n_features_in_
    bar = reporter.progress(None, "rows", task)
    dropped = 0
    try:
        for X, y in chunks(path, zero_based, getattr(model, "zero_based_", None), labels):
            if is_npz(path) and X.shape[1] != n_features:
                raise UsageError(
                    f"{path} has {X.shape[1]} features, but the model expects {n_features}"
                )
            dropped = max(dropped, X.shape[1] - n_features)
            yield model.predict(with_width(X, n_features)), y
            bar.update(X.shape[0])
    finally:
        bar.close()
    if dropped > 0:
        reporter.say(f"{dropped} feature(s) past the model's {n_features} were never trained on")


def evaluate(model, path, zero_based, reporter, predictions=None, task="test"):
    """One streaming pass of `model`'s predictions over the data: (rows, metrics), writing one
    prediction per line to the Output `predictions` if given. Classifiers: accuracy and
    error rate; a file whose labels share none of the model's classes is refused, and labels
    that are no class are warned about. Regressors: MSE, MAE and R². `task` names the
    progress bar."""
    is_classifier = hasattr(model, "classes_")
    n_rows, correct, squared, absolute, targets, seen = 0, 0, 0.0, 0.0, [], set()
    with contextlib.closing(predicted_chunks(model, path, zero_based, reporter, task)) as read:
        for predicted, y in read:
            if is_classifier:
                seen.update(np.unique(y).tolist())
                correct += int(np.sum(predicted == y))
            else:
                if y.dtype.kind not in "biuf":
                    raise UsageError(
                        f"{path}: a regressor needs numeric targets, but they are {y.dtype} "
                        f"(e.g. {label_text(y[0])}); class labels need a model trained with a "
                        "classifier"
                    )
                with np.errstate(over="ignore"):  # an overflow is reported as a non-finite MSE
                    errors = predicted - y
                    squared += float(errors @ errors)
                    absolute += float(np.abs(errors).sum())
                targets.append(y)
            if predictions is not None:
                predictions.writelines(f"{label_text(p)}\n" for p in predicted)
            n_rows += len(y)
    if n_rows == 0:
        raise UsageError(f"{path}: no rows")
    if not is_classifier:
        y_all = np.concatenate(targets)
        with np.errstate(over="ignore", invalid="ignore"):
            spread = float(np.sum((y_all - y_all.mean()) ** 2))
            r2 = 1.0 - squared / spread if spread > 0 else 0.0
        return n_rows, {"mse": squared / n_rows, "mae": absolute / n_rows, "r2": r2}
    classes = model.classes_.tolist()
    unknown = sorted(seen.difference(classes), key=str)
    if len(unknown) == len(seen):
        raise UsageError(
            f"{path}: none of its labels ({label_list(unknown)}) is a class of the model "
            f"({label_list(classes)}), so every prediction would count as wrong; test on data "
            "labelled like the training data"
        )
    if unknown:
        reporter.warn(
            f"{path}: the labels {label_list(unknown)} are not classes of the model "
            f"({label_list(classes)}); their rows count as errors"
        )
    return n_rows, {"accuracy": correct / n_rows, "error_rate": 1.0 - correct / n_rows}


def trained_model(path):
    """The trained model saved at `path` (-i)."""
    try:
        model = load(path)  # refuses a FIFO or device at once (never waits on one)
    except ValueError as error:  # not a model file, corrupted, or from a newer cwrs
        message = one_line(error)
        raise UsageError(message if path in message else f"{path}: {message}") from None
    if not hasattr(model, "predict"):  # a contextual bandit chooses actions among rows
        raise UsageError(
            f"{path}: the file holds a {type(model).__name__}, which chooses actions and does "
            "not predict labels; the command line does not run it: load it in Python with "
            "cwrs.load"
        )
    if not hasattr(model, "n_features_in_"):
        raise UsageError(f"{path}: the model was saved before it was trained")
    return model


def opened_for_predictions(stack, args, path):
    """What `test` and `predict` start from: the predictions output (-p; None without it, and
    never one of the inputs), the trained model (-i) and the index base to read `path` with."""
    (predictions,) = open_outputs(
        stack, [("-p", args.predictions, False)], [("-i", args.input), ("-d", path)]
    )
    model = trained_model(args.input)
    return predictions, model, model_indexing(path, args.zero_based, model)


def run_test(args, reporter):
    path = data_path(args.data)
    with contextlib.ExitStack() as stack:
        predictions, model, zero_based = opened_for_predictions(stack, args, path)
        n_rows, metrics = evaluate(model, path, zero_based, reporter, predictions)
        if predictions is not None:
            predictions.commit()
    result = {"learner": type(model).__name__, "data": str(path), "rows": n_rows, **metrics}
    if args.predictions:
        result["predictions"] = str(args.predictions)
    text = f"{result['learner']} on {path.name} ({n_rows} rows): {metrics_text(metrics)}"
    emit(result, args.json, text, reporter)


def run_predict(args, reporter):
    path = data_path(args.data)
    with contextlib.ExitStack() as stack:
        predictions, model, zero_based = opened_for_predictions(stack, args, path)
        n_rows = 0
        read = predicted_chunks(model, path, zero_based, reporter, "predict", labels=False)
        with contextlib.closing(read):
            for predicted, _ in read:
                predictions.writelines(f"{label_text(p)}\n" for p in predicted)
                n_rows += len(predicted)
        if n_rows == 0:
            raise UsageError(f"{path}: no rows")
        predictions.commit()
    result = {"learner": type(model).__name__, "data": str(path), "rows": n_rows,
              "predictions": str(args.predictions)}
    text = f"{result['learner']} on {path.name}: {n_rows} predictions written to {args.predictions}"
    emit(result, args.json, text, reporter)


# ----------------------------------------------------------------------------- arguments
class Parser(argparse.ArgumentParser):
    """argparse with cwrs's error convention: one line `cwrs: error: ...`, exit status 1."""

    def error(self, message):
        raise UsageError(f"{message} (see `{self.prog} --help`)")


def count(minimum):
    """An argparse type: an integer of at least `minimum`."""

    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {value}")
        return value

    parse.__name__ = f"integer >= {minimum}"
    return parse


EXIT_STATUS = "Exit status: 0 on success, 1 for any error (wrong options or bad data)."


def parser():
    from .. import __version__

    top = Parser(
        prog="cwrs",
        description="Confidence-weighted online learning. Without a command: compare.",
        epilog=EXIT_STATUS,
    )
    top.add_argument("--version", action="version", version=f"cwrs {__version__}")
    commands = top.add_subparsers(dest="command", metavar="{" + ",".join(COMMANDS) + "}")

    def shared(sub):
        indexing = sub.add_mutually_exclusive_group()
        indexing.add_argument("--zero-based", dest="zero_based", action="store_const",
                              const=True, default="auto",
                              help="LIBSVM indices start at 0 (default: auto, as scikit-learn: "
                              "zero-based exactly when an index 0 occurs)")
        indexing.add_argument("--one-based", dest="zero_based", action="store_const",
                              const=False, help="LIBSVM indices start at 1")
        sub.add_argument("-v", "--verbose", action="store_true",
                         help="say how each data file is read (its indexing)")
        sub.add_argument("--json", action="store_true",
                         help="machine-readable output (standard JSON: a non-finite number is "
                         "null and listed under non_finite)")
        sub.add_argument("-q", "--quiet", action="store_true",
                         help="no progress or diagnostics on stderr (warnings still show)")

    def rank_option(sub):
        sub.add_argument("--rank", type=count(1), metavar="K",
                         help="with --covariance lowrank: the sketch keeps 2K rows, O(K·d) per "
                         f"update (default {SECOND_ORDER_PARAMETERS['rank']})")

    def data_option(sub):
        sub.add_argument("-d", "--data", required=True,
                         help="LIBSVM file (- for stdin) or .npz with X and y")

    def learning(sub):
        sub.add_argument("--param", action="append", metavar="NAME=VALUE",
                         help="a hyper-parameter, e.g. r=0.5 or C=0.1 (repeatable)")
        sub.add_argument("--no-bias", action="store_true", help="fit_intercept=False")

    def command(name, learns):
        """A command; its help lists its own options first, then the groups it shares."""
        summary, description = COMMANDS[name]
        sub = commands.add_parser(name, help=summary, description=description, epilog=EXIT_STATUS)
        if learns:
            learning(sub.add_argument_group("learning"))
        shared(sub.add_argument_group("input and output"))
        return sub

    compare = command("compare", learns=True)
    compare.add_argument("-d", "--data", default="svmguide3",
                         help="LIBSVM file (- for stdin), .npz with X and y, or bundled name "
                         "(svmguide3)")
    compare.add_argument("--learners", help="comma-separated learner names (default: all)")
    compare.add_argument("--covariance", choices=["diag", "full", "lowrank", "both"],
                         default="both",
                         help="covariance form of the second-order learners (default: both, "
                         "diag and full, one row each)")
    rank_option(compare)
    compare.add_argument("--shuffle", type=count(0), default=5, metavar="N",
                         help="average over N seeded permutations (default 5; 0: stored order)")
    compare.add_argument("--seed", type=count(0), default=0,
                         help="seed of the first permutation (default 0)")
    compare.add_argument("--plot", metavar="FILE.png",
                         help="cumulative mistakes against examples, one line per learner "
                         "(needs matplotlib; the timings do not include drawing it)")

    train = command("train", learns=True)
    train.add_argument("-a", "--algorithm", required=True, metavar="NAME",
                       help=f"one of {', '.join(LEARNERS)}")
    data_option(train)
    train.add_argument("-o", "--output", required=True, metavar="MODEL",
                       help="where to write the model (.cwrs format)")
    train.add_argument("--covariance", choices=["diag", "full", "lowrank"],
                       help="covariance form of a second-order learner (default: diag)")
    rank_option(train)
    train.add_argument("--passes", type=count(1), default=1, metavar="N",
                       help="passes over the data (default 1), each shuffled anew unless "
                       "--no-shuffle")
    train.add_argument("--shuffle", action=argparse.BooleanOptionalAction, default=True,
                       help="learn each pass in a random order, seeded by --seed (the default); "
                       "--no-shuffle learns the rows in file order")
    train.add_argument("--shuffle-buffer", type=count(1), default=SHUFFLE_BUFFER, metavar="N",
                       help=f"rows held in memory to shuffle (default {SHUFFLE_BUFFER:,}): a "
                       "file of at most N rows is shuffled exactly, a larger one through a "
                       "buffer of N rows (each row read replaces a random buffered row, which "
                       "is learned)")
    train.add_argument("--seed", type=count(0), default=0, help="seed of the shuffle (default 0)")
    train.add_argument("--n-features", type=count(1), metavar="N",
                       help="model width (default: the widest row of the data)")
    train.add_argument("--weights", metavar="FILE",
                       help="the importance weight of each row (sample_weight): one finite "
                       "number ≥ 0 per line, in the data file's row order")
    train.add_argument("--class-weight", metavar="balanced|CLASS=W,...",
                       help="weights of the classes (class_weight): \"balanced\" (running "
                       "class counts), or a weight per label, e.g. 1=10,-1=1 (others weigh 1)")
    cluster = train.add_mutually_exclusive_group()
    cluster.add_argument("--workers", type=count(1), metavar="N",
                         help="train on a local Dask cluster of N processes (the dask extra): the "
                         "rows in N contiguous parts, learned in parallel and merged after "
                         "each pass (cwrs.merge)")
    cluster.add_argument("--scheduler", metavar="ADDRESS",
                         help="train on the Dask cluster of this scheduler, one part per "
                         "worker; the parts are written beside -o, which the workers must see")

    test = command("test", learns=False)
    test.add_argument("-i", "--input", required=True, metavar="MODEL", help="a .cwrs model")
    data_option(test)
    test.add_argument("-p", "--predictions", metavar="FILE",
                      help="write one prediction per line (written once complete; a FIFO or "
                      "/dev/stdout is written through)")

    predict = command("predict", learns=False)
    predict.add_argument("-i", "--input", required=True, metavar="MODEL", help="a .cwrs model")
    predict.add_argument("-d", "--data", required=True,
                         help="LIBSVM file (- for stdin; labels optional) or .npz with X (y "
                         "optional)")
    predict.add_argument("-p", "--predictions", required=True, metavar="FILE",
                         help="where to write one prediction per line (written once complete; "
                         "a FIFO or /dev/stdout is written through)")
    return top


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in COMMANDS and argv[0].startswith("-")
                    and argv[0] not in ("-h", "--help", "--version")):
        argv.insert(0, "compare")
    try:
        if argv[0] not in COMMANDS and not argv[0].startswith("-"):
            raise UsageError(
                f"unknown command {argv[0]!r}; the commands are {', '.join(COMMANDS)}"
            )
        args = parser().parse_args(argv)
        INDEXING.clear()  # decided afresh by each command, though main may run many in one process
        VERBOSE["on"] = args.verbose and not args.quiet
        run = {"compare": run_compare, "train": run_train, "test": run_test,
               "predict": run_predict}[args.command]
        run(args, Reporter(args.quiet))
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader of stdout went away (e.g. `cwrs | head -1`): nothing more to say to it.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        print("cwrs: interrupted", file=sys.stderr)
        return 130
    except (UsageError, OSError, ValueError, TypeError, ImportError, MemoryError,
            ArithmeticError, RuntimeError) as error:
        print(f"cwrs: error: {one_line(error)}", file=sys.stderr)
        return 1
    except Exception as error:  # a bug: still one line, saying what to report
        print(
            f"cwrs: error: internal error ({type(error).__name__}: {one_line(error)}); please "
            "report it",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
