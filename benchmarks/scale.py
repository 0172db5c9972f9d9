"""Training on more than one core (docs/design.md §9), one run, ratios side by side.

Sections (each prints a Markdown table):

1. `n_jobs=2` vs `n_jobs=1`: AROW (diag, r=1) `fit`, one pass in stored order, on the text-like
   stream of benchmarks/compare.py (default 1M rows, 2^20 features, ~100 non-zeros per row; the
   last 100k rows held out for the test error). Median rows/s of --repeat interleaved runs.
2. `cwrs.dask.fit` on a `LocalCluster` of 2 worker processes (1 thread each) vs one process, on
   the same training rows as 2 LIBSVM files: the one process learns them with
   `partial_fit_file` (parsing on a second thread), one after the other, on both cores and
   held to one core (the scale-out reference: one core against two); Dask streams each on
   a worker (`n_features` and `classes` given) and merges. The time includes the parse (the
   files were just written, so in the page cache) but not the start of the cluster. Then
   where the Dask fit's time goes (task stream), and the two files learned by the two workers
   alone, without returning or merging anything: the most an epoch could gain. Then one file
   step by step in CPU seconds: cwrs's parse alone (scikit-learn's `load_svmlight_file`
   beside it) and the learning alone, and the bound they set (docs/design.md §9.5).
3. Accuracy: sequential vs sharded (`cwrs.merge` of 2 and 4 contiguous shards per epoch from
   the model of the epoch start, as `cwrs.dask.fit` and `n_jobs` do), AROW, SCW1 and PA1, 1 to 3
   epochs in stored order: test error on a1a.t (trained on a1a, ../shared/datasets) and on the
   held-out rows of the stream.
4. Merge methods for the second-order rules ("information" vs "average", the choice of
   `method="auto"`, docs/design.md §9.2): sharded vs sequential test error on a1a.

    python benchmarks/scale.py [--rows N] [--repeat N] [--sections 1,2,3,4] [--quick]
                               [--cache DIR]

`--cache DIR` keeps the generated stream (about 1 GB at 1M rows) for the next run, so that a
section run alone (`--sections 1`) starts in seconds.

BLAS is pinned to one thread. Markdown goes to stdout, progress to stderr.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import pickle  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

import cwrs  # noqa: E402
import cwrs.dask  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare import LIBSVM_LABELS, make_text_stream, write_text_file  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets"


def log(message):
    print(message, file=sys.stderr, flush=True)


def test_error(model, X, y):
    return float(np.mean(model.predict(X) != y))


def section_n_jobs(data, repeat):
    X, y, X_test, y_test = data
    rates = {1: [], 2: []}
    errors = {}
    for r in range(repeat):
        for n_jobs in (1, 2):
            model = cwrs.AROW(shuffle=False, n_jobs=n_jobs)
            began = time.perf_counter()
            model.fit(X, y)
            rates[n_jobs].append(X.shape[0] / (time.perf_counter() - began))
            errors[n_jobs] = test_error(model, X_test, y_test)
            log(f"  n_jobs={n_jobs} repeat {r}: {rates[n_jobs][-1] / 1e3:,.1f}k rows/s")
    base = statistics.median(rates[1])
    print(f"### 1. `n_jobs`: AROW diag fit, {X.shape[0]:,} rows × 2^20 features\n")
    print("| n_jobs | rows/s (median) | speed-up | test error |")
    print("|--:|--:|--:|--:|")
    for n_jobs in (1, 2):
        rate = statistics.median(rates[n_jobs])
        print(f"| {n_jobs} | {rate / 1e3:,.1f}k | {rate / base:.2f}× | {errors[n_jobs]:.2%} |")
    print()


def learn_file_alone(path, n_features):
    """The learning of one streamed partition in a worker, without the model's transfer and
    merge: what a cwrs.dask.fit epoch cannot beat (run as a Dask task)."""
    model = cwrs.AROW()
    cwrs.dask._learn_file(model, path, n_features, np.array([-1, 1]))
    return model.n_updates_


P = "one process: parse (P, reading thread)"
L_ONE = "one process: learn (L₁, chunks to Python + `partial_fit`)"
L_WORKER = "worker's task: learn (L₂, chunks learned by the core)"


def parse_and_learn(path, n_features, repeat):
    """One file's CPU seconds (medians): its parse and its learning as the one process
    (`partial_fit_file`) and a worker's task (`cwrs.dask._learn_file`) split them between the
    reading thread and the calling thread, and the whole file loaded by cwrs and by
    scikit-learn. Returns (rows, {step: seconds})."""
    from sklearn.datasets import load_svmlight_file

    def cpu(f):
        """(CPU seconds of the calling thread, of the other threads) of f()."""
        process, thread = time.process_time(), time.thread_time()
        f()
        thread = time.thread_time() - thread
        return thread, time.process_time() - process - thread

    def one_process():
        cwrs.AROW().partial_fit_file(path, classes=[-1, 1], n_features=n_features)

    times = {}
    for _ in range(repeat):
        learn, parse = cpu(one_process)
        times.setdefault(P, []).append(parse)
        times.setdefault(L_ONE, []).append(learn)
        learn, parse = cpu(lambda: learn_file_alone(path, n_features))
        times.setdefault("worker's task: parse (reading thread)", []).append(parse)
        times.setdefault(L_WORKER, []).append(learn)
        times.setdefault("whole file: cwrs `load_svmlight`", []).append(sum(cpu(
            lambda: cwrs.load_svmlight(path, n_features=n_features, zero_based=False))))
        times.setdefault("whole file: scikit-learn `load_svmlight_file`", []).append(sum(cpu(
            lambda: load_svmlight_file(path, n_features=n_features, zero_based=False))))
    rows = sum(1 for _ in open(path, "rb"))
    return rows, {name: statistics.median(values) for name, values in times.items()}


def one_core(paths, n_features):
    """Seconds of the one-process fit with the process held to one core (its reading thread
    inherits the affinity): the scale-out reference, one core against the workers' two."""
    cores = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(cores)})
    try:
        model, began = cwrs.AROW(), time.perf_counter()
        for path in paths:
            model.partial_fit_file(path, classes=[-1, 1], n_features=n_features,
                                   zero_based=False)
        return time.perf_counter() - began
    finally:
        os.sched_setaffinity(0, cores)


def section_dask(data, repeat, workdir):
    import distributed

    X, y, X_test, y_test = data
    halves = np.array_split(np.arange(X.shape[0]), 2)
    paths = [str(workdir / f"part{k}.svm") for k in range(2)]
    for path, rows in zip(paths, halves):
        write_text_file(path, X[rows], y[rows], LIBSVM_LABELS)
    n_features = X.shape[1]
    seconds = {"one process": [], "one process on one core": [], "dask, 2 workers": []}
    stages = {"before the first task starts (submit, schedule)": [],
              "learning (slowest task)": [], "after the last task (gather, merge, install)": [],
              "learning alone, 2 workers (no transfer, no merge)": []}
    errors, returned = {}, 0
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        for r in range(repeat):
            model = cwrs.AROW()
            began = time.perf_counter()
            for path in paths:
                model.partial_fit_file(path, classes=[-1, 1], n_features=n_features,
                                       zero_based=False)
            seconds["one process"].append(time.perf_counter() - began)
            errors["one process"] = test_error(model, X_test, y_test)
            seconds["one process on one core"].append(one_core(paths, n_features))
            errors["one process on one core"] = errors["one process"]
            with distributed.get_task_stream(client) as stream:
                began, began_epoch = time.perf_counter(), time.time()
                model = cwrs.dask.fit(cwrs.AROW(), paths, client=client, classes=[-1, 1],
                                      n_features=n_features)
                seconds["dask, 2 workers"].append(time.perf_counter() - began)
                ended_epoch = time.time()
            errors["dask, 2 workers"] = test_error(model, X_test, y_test)
            tasks = [t for t in stream.data if "_learn_partition" in str(t["key"])]
            computes = [ss for t in tasks for ss in t["startstops"] if ss["action"] == "compute"]
            last = max(ss["stop"] for ss in computes)
            stages["before the first task starts (submit, schedule)"].append(
                min(ss["start"] for ss in computes) - began_epoch)
            stages["learning (slowest task)"].append(
                max(ss["stop"] - ss["start"] for ss in computes))
            stages["after the last task (gather, merge, install)"].append(ended_epoch - last)
            returned = sum(t.get("nbytes", 0) for t in tasks)
            client.cancel(list(client.futures.values()))
            began = time.perf_counter()
            client.gather([client.submit(learn_file_alone, p, n_features, pure=False)
                           for p in paths])
            stages["learning alone, 2 workers (no transfer, no merge)"].append(
                time.perf_counter() - began)
            log(f"  repeat {r}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in seconds.items())
                + f", started {began_epoch:.0f}")
    base = statistics.median(seconds["one process"])
    base_one_core = statistics.median(seconds["one process on one core"])
    print(f"### 2. `cwrs.dask.fit` vs one process: AROW diag, {X.shape[0]:,} rows as 2 LIBSVM "
          "files\n")
    print("| run | seconds (median) | rows/s | speed-up | vs one core | test error |")
    print("|---|--:|--:|--:|--:|--:|")
    for name, values in seconds.items():
        s = statistics.median(values)
        print(f"| {name} | {s:.2f} | {X.shape[0] / s / 1e3:,.1f}k | {base / s:.2f}× | "
              f"{base_one_core / s:.2f}× | {errors[name]:.2%} |")
    print("\nWhere the Dask fit's time goes (medians; the shards returned: "
          f"{returned / 2**20:,.1f} MiB):\n")
    print("| stage | seconds | speed-up over one process if it were all |")
    print("|---|--:|--:|")
    for name, values in stages.items():
        s = statistics.median(values)
        print(f"| {name} | {s:.2f} | {base / s:.2f}× |")
    rows, split = parse_and_learn(paths[0], n_features, repeat)
    print(f"\nOne file ({rows:,} rows) step by step, CPU seconds (medians):\n")
    print("| step | CPU s | rows/s |")
    print("|---|--:|--:|")
    for name, cpu in split.items():
        print(f"| {name} | {cpu:.2f} | {rows / cpu / 1e3:,.1f}k |")
    bound = 2 * max(split[P], split[L_ONE]) / (split[P] + split[L_WORKER])
    print(f"\nTwo workers on two cores against one process that parses on a second thread: at "
          f"most 2·max(P, L₁)/(P + L₂) = {bound:.2f}× before the model's transfer and merge "
          "(docs/design.md §9.5).\n")


def sharded_fit(estimator, X, y, n_parts, epochs, method="auto"):
    """`epochs` passes in stored order, each the merge (by `method`) of `n_parts` contiguous
    shards learned from the model of the epoch start (as cwrs.dask.fit and n_jobs do)."""
    classes = np.unique(y)
    bounds = np.linspace(0, X.shape[0], n_parts + 1).astype(int)
    model = None
    for _ in range(epochs):
        shards = []
        for lo, hi in zip(bounds[:-1], bounds[1:]):
            shard = pickle.loads(pickle.dumps(model)) if model is not None else type(
                estimator)(**estimator.get_params())
            shards.append(shard.partial_fit(X[lo:hi], y[lo:hi], classes=classes))
        model = cwrs.merge(shards, base=model, method=method)
    return model


def section_accuracy(stream):
    sets = []
    if (data := a1a()) is not None:
        sets.append(("a1a → a1a.t", *data))
    X, y, X_test, y_test = stream
    sets.append((f"stream {X.shape[0]:,} rows", X, y, X_test, y_test))
    learners = [("AROW", cwrs.AROW()), ("SCW1", cwrs.SCW1()), ("PA1", cwrs.PA1())]
    print("### 3. Accuracy of sharded training: test error, sequential vs merged shards\n")
    print("| data | learner | epochs | sequential | 2 shards | 4 shards | max gap |")
    print("|---|---|--:|--:|--:|--:|--:|")
    for name, Xtr, ytr, Xte, yte in sets:
        for learner, estimator in learners:
            for epochs in (1, 2, 3):
                sequential = type(estimator)(**estimator.get_params()).set_params(
                    shuffle=False, n_iter=epochs).fit(Xtr, ytr)
                base = test_error(sequential, Xte, yte)
                sharded = [test_error(sharded_fit(estimator, Xtr, ytr, k, epochs), Xte, yte)
                           for k in (2, 4)]
                gap = max(abs(e - base) for e in sharded)
                print(f"| {name} | {learner} | {epochs} | {base:.2%} | {sharded[0]:.2%} | "
                      f"{sharded[1]:.2%} | {gap * 100:.2f} pt |")
                log(f"  {name} {learner} {epochs}: {base:.4f} {sharded}")
    print()


def a1a():
    """(train X, y, test X, y) of a1a → a1a.t, or None when ../shared/datasets is missing."""
    if not (SHARED / "a1a.libsvm").exists():
        log(f"  {SHARED} not found: a1a left out")
        return None
    Xa, ya = cwrs.load_svmlight(SHARED / "a1a.libsvm", zero_based=False)
    Xt, yt = cwrs.load_svmlight(SHARED / "a1a.t.libsvm", zero_based=False,
                                n_features=Xa.shape[1])
    return Xa, ya, Xt[:, : Xa.shape[1]], yt


def section_methods():
    """Sharded vs sequential test error on a1a per merge method, for the second-order rules
    (which "auto" merges by information for AROW only: docs/design.md §9.2)."""
    data = a1a()
    if data is None:
        return
    Xa, ya, Xt, yt = data
    print("### 4. Merge methods for the second-order rules: a1a → a1a.t, test error\n")
    print("| learner | epochs | sequential | information 2 / 4 shards | average 2 / 4 shards | "
          "max gap information | max gap average |")
    print("|---|--:|--:|--:|--:|--:|--:|")
    for name in ("AROW", "SCW1", "SCW2", "CW", "NAROW", "NHERD"):
        estimator = getattr(cwrs, name)()
        for epochs in (1, 2, 3):
            sequential = type(estimator)(**estimator.get_params()).set_params(
                shuffle=False, n_iter=epochs).fit(Xa, ya)
            base = test_error(sequential, Xt, yt)
            errors = {(method, k): test_error(sharded_fit(estimator, Xa, ya, k, epochs, method),
                                              Xt, yt)
                      for method in ("information", "average") for k in (2, 4)}
            gap = {m: max(abs(errors[m, k] - base) for k in (2, 4))
                   for m in ("information", "average")}
            print(f"| {name} | {epochs} | {base:.2%} | {errors['information', 2]:.2%} / "
                  f"{errors['information', 4]:.2%} | {errors['average', 2]:.2%} / "
                  f"{errors['average', 4]:.2%} | {gap['information'] * 100:.2f} pt | "
                  f"{gap['average'] * 100:.2f} pt |", flush=True)
    print()


def load_stream(rows, cache):
    """The text-like stream of `rows` rows, from `cache` (a directory) when it holds it; else
    generated, and saved there when `cache` is given."""
    import scipy.sparse as sp

    if cache is not None:
        path = Path(cache) / f"stream-{rows}"
        if path.with_suffix(".npz").exists():
            log(f"loading the stream from {path}.npz")
            return sp.load_npz(path.with_suffix(".npz")), np.load(path.with_suffix(".npy"))
    log(f"generating the stream: {rows:,} rows")
    X, y = make_text_stream(rows)
    if cache is not None:
        Path(cache).mkdir(parents=True, exist_ok=True)
        sp.save_npz(path.with_suffix(".npz"), X, compressed=False)
        np.save(path.with_suffix(".npy"), y)
    return X, y


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sections", default="1,2,3,4")
    parser.add_argument("--cache", default=None,
                        help="a directory to keep the generated stream in between runs")
    parser.add_argument("--quick", action="store_true", help="100k rows, one repeat")
    args = parser.parse_args()
    if args.quick:
        args.rows, args.repeat = 100_000, 1
    sections = {int(s) for s in args.sections.split(",")}
    if sections & {1, 2, 3}:
        X, y = load_stream(args.rows, args.cache)
        n_test = min(100_000, args.rows // 10)
        data = X[:-n_test], y[:-n_test], X[-n_test:], y[-n_test:]
    print(f"## Training on more than one core: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
          "\n")
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores · Python "
          f"{platform.python_version()} · cwrs {cwrs.__version__} · median of {args.repeat} "
          f"run(s) · load average at the start {os.getloadavg()[0]:.1f}\n")
    if 1 in sections:
        section_n_jobs(data, args.repeat)
    if 2 in sections:
        with tempfile.TemporaryDirectory() as workdir:
            section_dask(data, args.repeat, Path(workdir))
    if 3 in sections:
        section_accuracy(data)
    if 4 in sections:
        section_methods()


if __name__ == "__main__":
    main()
