"""One model, many threads.

- Predictions from many threads at once give exactly the single-threaded results, and the native
  prediction calls release the GIL (so they can run in parallel).
- partial_fit calls on one model wait for each other and for the calls running on it: the result
  is that of the same calls one after another, in some order. Nothing raises for being
  concurrent ("Already borrowed" was PyO3's answer before) and nothing is lost or torn.

No timing assertions: overlap is forced with barriers and large batches, and results are checked
against the sequential orders they may equal.
"""

from __future__ import annotations

import pickle
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import cwrs
from _gil import runs_during

RNG = np.random.default_rng(5)
D = 12
X = RNG.normal(size=(400, D))
W = RNG.normal(size=D)
Y = {
    "binary": np.where(X @ W > 0, "yes", "no"),
    "multiclass": np.argmax(X[:, :3], axis=1),
}

PREDICTORS = {
    "AROW-diag-binary": (lambda: cwrs.AROW(), "binary"),
    "AROW-full-binary": (lambda: cwrs.AROW(covariance="full"), "binary"),
    "SCW1-diag-multiclass": (lambda: cwrs.SCW1(), "multiclass"),
    "CW-full-multiclass": (lambda: cwrs.CW(covariance="full"), "multiclass"),
    "AROW-rbf-kernel-binary": (lambda: cwrs.AROW(kernel="rbf", budget=50), "binary"),
}


def run_threads(n_threads, work):
    """Runs `work(i)` on `n_threads` threads released together; returns their results."""
    barrier = threading.Barrier(n_threads)

    def start(i):
        barrier.wait()
        return work(i)

    with ThreadPoolExecutor(n_threads) as pool:
        return list(pool.map(start, range(n_threads)))


def state(estimator, but=None):
    """The native model's full state (without its entry `but`), pickled: equal bytes mean
    bit-identical models."""
    values = estimator.__getstate__()
    if but is not None:
        kind, native = values["_model"]
        values = {**values, "_model": (kind, {k: v for k, v in native.items() if k != but})}
    return pickle.dumps(values)


@pytest.mark.parametrize("model_id", PREDICTORS)
def test_concurrent_predictions_equal_single_threaded_ones(model_id):
    make, task = PREDICTORS[model_id]
    model = make().fit(X, Y[task])
    batches = [X[i * 25 : (i + 1) * 25] for i in range(8)]
    methods = ["predict", "decision_function", "predict_proba"]
    expected = {(m, i): getattr(model, m)(b) for m in methods for i, b in enumerate(batches)}
    before = state(model)

    def work(thread):
        mismatches = 0
        for call in range(200):
            method, i = methods[call % 3], (thread + call) % len(batches)
            got = getattr(model, method)(batches[i])
            mismatches += not np.array_equal(got, expected[method, i])
        return mismatches

    assert run_threads(8, work) == [0] * 8
    assert state(model) == before


def test_concurrent_regression_predictions():
    y = X @ W
    model = cwrs.AROWRegressor(covariance="full").fit(X, y)
    expected_mean, expected_std = model.predict(X[:50], return_std=True)

    def work(_):
        results = [model.predict(X[:50], return_std=True) for _ in range(200)]
        return all(np.array_equal(m, expected_mean) and np.array_equal(s, expected_std)
                   for m, s in results)

    assert all(run_threads(8, work))


def test_the_gil_check_can_fail():
    """A pure-Python call holds the GIL throughout: `runs_during` says so."""
    assert not runs_during(lambda: sum(range(300_000)), attempts=3)


@pytest.mark.parametrize("covariance", ["diag", "full"])
def test_native_predictions_release_the_gil(covariance):
    # With a switch interval far longer than the calls, the GIL changes hands only when released:
    # another thread runs while the main thread is inside a native call only if that call
    # released the GIL (`_gil.runs_during`).
    model = cwrs.AROW(covariance=covariance).fit(X, Y["binary"])
    # Calls of a few milliseconds each, many of them: a loaded machine may be slow to wake the
    # counting thread, but not for a hundred calls in a row.
    big = np.ascontiguousarray(np.tile(X, (250, 1)))
    native = model._model
    moved = runs_during(lambda: native.decision_function(big), 100)
    assert moved, "a batch prediction held the GIL for its whole run"


@pytest.mark.parametrize("how", ["from_state", "pickle", "deepcopy", "from_delta"])
def test_restoring_a_full_covariance_releases_the_gil(how):
    """Rebuilding a model from its state (what cwrs.load, save's check, copy.deepcopy,
    unpickling and a Dask delta without its base do) checks a full covariance in O(d³): detached, as predictions are, so other
    threads go on (they froze for seconds at d = 3,000)."""
    import copy

    wide = np.random.default_rng(1).normal(size=(8, 1500))
    model = cwrs.AROW(covariance="full").partial_fit(wide, np.arange(8) % 2, classes=[0, 1])
    state, pickled = model._model.state(), pickle.dumps(model)
    delta = model._model.delta_since(model._model)
    call = {
        "from_state": lambda: cwrs._cwrs.Model.from_state(state),
        "pickle": lambda: pickle.loads(pickled),
        "deepcopy": lambda: copy.deepcopy(model),
        # A Dask worker's whole-model delta, rebuilt without its base.
        "from_delta": lambda: cwrs._cwrs.Model.from_delta(delta),
    }[how]
    assert runs_during(call, attempts=20), f"{how} held the GIL for its whole run"


# ----------------------------------------------------------------------------- concurrent updates
UPDATERS = {
    "AROW-diag-binary": (lambda: cwrs.AROW(), "binary"),
    "AROW-full-binary": (lambda: cwrs.AROW(covariance="full"), "binary"),
    "PA1-multiclass": (lambda: cwrs.PA1(), "multiclass"),
    "NHERD-full-multiclass": (lambda: cwrs.NHERD(covariance="full"), "multiclass"),
    "AROW-rbf-kernel-binary": (lambda: cwrs.AROW(kernel="rbf", budget=30), "binary"),
}
BIG = np.ascontiguousarray(np.tile(X, (30, 1)))  # 12 000 rows: long enough to overlap


def big_targets(task):
    return np.tile(Y[task], 30)


def after(make, task, *batches):
    """The model after `batches` (row slices of BIG) learned one after another."""
    model = make().partial_fit(X[:10], Y[task][:10], classes=np.unique(Y[task]))
    for rows in batches:
        model.partial_fit(BIG[rows], big_targets(task)[rows])
    return state(model)


@pytest.mark.parametrize("model_id", UPDATERS)
def test_concurrent_partial_fits_serialize(model_id):
    make, task = UPDATERS[model_id]
    first, second = slice(0, 6000), slice(6000, 12000)
    if "kernel" in model_id:
        first, second = slice(0, 600), slice(600, 1200)
    orders = {after(make, task, first, second), after(make, task, second, first)}
    model = make().partial_fit(X[:10], Y[task][:10], classes=np.unique(Y[task]))
    rows = [first, second]
    run_threads(2, lambda i: model.partial_fit(BIG[rows[i]], big_targets(task)[rows[i]]))
    assert state(model) in orders


@pytest.mark.parametrize("model_id", UPDATERS)
def test_predictions_during_partial_fit_see_the_model_before_or_after(model_id):
    make, task = UPDATERS[model_id]
    rows = slice(0, 600) if "kernel" in model_id else slice(0, 12000)
    model = make().partial_fit(X[:10], Y[task][:10], classes=np.unique(Y[task]))
    probe = X[:40]
    before = model.decision_function(probe)
    twin = pickle.loads(pickle.dumps(model)).partial_fit(BIG[rows], big_targets(task)[rows])
    after_update = twin.decision_function(probe)

    def work(i):
        if i == 0:
            model.partial_fit(BIG[rows], big_targets(task)[rows])
            return True
        seen = [model.decision_function(probe) for _ in range(50)]
        return all(np.array_equal(s, before) or np.array_equal(s, after_update) for s in seen)

    assert all(run_threads(4, work))
    np.testing.assert_array_equal(model.decision_function(probe), after_update)


def block_rows(n_threads, rows_per_thread, width=3, seed=0):
    """Each thread's rows use only its own block of `width` features, so that with a diagonal
    covariance and no intercept the threads' updates touch disjoint coordinates and commute:
    any interleaving gives the same model as learning the threads' rows one after another."""
    rng = np.random.default_rng(seed)
    d = n_threads * width
    blocks = []
    for t in range(n_threads):
        Xt = np.zeros((rows_per_thread, d))
        Xt[:, t * width : (t + 1) * width] = rng.normal(size=(rows_per_thread, width))
        yt = np.where(Xt[:, t * width] + 0.3 * rng.normal(size=rows_per_thread) > 0, 1, -1)
        blocks.append((Xt, yt))
    return blocks


@pytest.mark.parametrize("one_row", [True, False], ids=["one-row-calls", "batch-calls"])
@pytest.mark.parametrize("name", ["AROW", "SCW2", "PA1"])
def test_many_writers_lose_nothing(name, one_row):
    n_threads, n_rows = 4, 400
    blocks = block_rows(n_threads, n_rows)
    d = blocks[0][0].shape[1]
    make = lambda: getattr(cwrs, name)(fit_intercept=False)  # noqa: E731
    sequential = make().partial_fit(np.zeros((1, d)), [1], classes=[-1, 1])
    for Xt, yt in blocks:
        for i in range(n_rows):
            sequential.partial_fit(Xt[i : i + 1], yt[i : i + 1])
    model = make().partial_fit(np.zeros((1, d)), [1], classes=[-1, 1])

    def work(t):
        Xt, yt = blocks[t]
        step = 1 if one_row else 20
        for i in range(0, n_rows, step):
            model.partial_fit(Xt[i : i + step], yt[i : i + step])

    run_threads(n_threads, work)
    # The label noise s² is one number learned from every row in turn, so it follows the
    # interleaving: every other value is the sequential model's bit for bit.
    assert state(model, but="noise_estimate") == state(sequential, but="noise_estimate")
    assert model.n_updates_ == sequential.n_updates_ > 0
    if hasattr(model, "noise_variance_"):
        ratio = model.noise_variance_ / sequential.noise_variance_
        assert np.log(ratio) == pytest.approx(0, abs=0.3)


@pytest.mark.parametrize("task", ["binary", "multiclass"])
def test_concurrent_first_partial_fits_build_one_model(task):
    classes = np.unique(Y[task])
    halves = [slice(0, 200), slice(200, 400)]

    def sequential(order):
        model = cwrs.AROW(covariance="full")
        for h in order:
            model.partial_fit(X[halves[h]], Y[task][halves[h]], classes=classes)
        return state(model)

    orders = {sequential([0, 1]), sequential([1, 0])}
    for _ in range(5):
        model = cwrs.AROW(covariance="full")
        run_threads(2, lambda i: model.partial_fit(X[halves[i]], Y[task][halves[i]],
                                                   classes=classes))
        assert state(model) in orders
        assert model.n_features_in_ == D and list(model.classes_) == list(classes)


def test_fit_concurrent_with_partial_fit_is_one_or_the_other_first():
    task = "binary"
    classes = np.unique(Y[task])
    model = cwrs.AROW(covariance="full", random_state=0).fit(X[:50], Y[task][:50])
    fit_only = state(cwrs.AROW(covariance="full", random_state=0).fit(X[50:], Y[task][50:]))
    fit_then_partial = state(
        cwrs.AROW(covariance="full", random_state=0)
        .fit(X[50:], Y[task][50:])
        .partial_fit(X[:50], Y[task][:50])
    )

    def work(i):
        if i == 0:
            model.fit(X[50:], Y[task][50:])
        else:
            model.partial_fit(X[:50], Y[task][:50], classes=classes)

    run_threads(2, work)
    assert state(model) in {fit_only, fit_then_partial}


def test_a_callable_kernel_model_serializes_its_calls():
    kernel = lambda A, B: (A @ B.T + 1.0) ** 2  # noqa: E731
    task, rows = "binary", [slice(0, 60), slice(60, 120)]
    classes = np.unique(Y[task])

    def sequential(order):
        model = cwrs.AROW(kernel=kernel).partial_fit(X[:5], Y[task][:5], classes=classes)
        for i in order:
            model.partial_fit(X[rows[i]], Y[task][rows[i]])
        return model.dual_coef_.tobytes(), model.n_updates_

    orders = {sequential([0, 1]), sequential([1, 0])}
    model = cwrs.AROW(kernel=kernel).partial_fit(X[:5], Y[task][:5], classes=classes)
    run_threads(2, lambda i: model.partial_fit(X[rows[i]], Y[task][rows[i]]))
    assert (model.dual_coef_.tobytes(), model.n_updates_) in orders
