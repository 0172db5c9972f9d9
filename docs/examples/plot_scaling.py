"""
Several cores: n_jobs and Dask
==============================

`n_jobs=k` makes `fit` learn each pass as k contiguous shards of the shuffled rows, one thread
each, and merges the shard models at the end of the pass (for AROW, by summing the evidence
each shard added to the precision; docs/design.md §9). `cwrs.dask.fit` does the same with one
task per partition of a dask array, here on a local Dask cluster of two worker processes. The
left panel shows the wall time of each fit, the right one the accuracy on held-out rows: a
sharded pass costs little accuracy against the sequential one. AROW with a full covariance over
256 features (an O(d²) update per row) makes each row expensive enough for the parallel work to
show. The timings are indicative: this page is built on a machine of two cores shared with
other work, and the speed-up depends on the cores actually granted; each configuration is
timed twice and the faster fit kept.
"""

import time

import dask
import dask.array as da
import matplotlib.pyplot as plt
import numpy as np
from distributed import Client, LocalCluster, wait

import cwrs
import cwrs.dask

n_features, rows_per_block, n_blocks = 256, 5000, 4
w = np.random.default_rng(0).normal(size=n_features)  # the separator, seed 0


def make_block(seed):
    """Rows of the stream: a block of rows drawn from its own seed, labels with noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows_per_block, n_features))
    y = np.where(X @ w + 0.2 * np.sqrt(n_features) * rng.normal(size=rows_per_block) > 0, 1, -1)
    return X, y


# %%
# Threads: one `fit` per value of `n_jobs` on the four training blocks, the rows in one seeded
# random order.

def fit_with_threads(X_train, y_train, n_jobs):
    seconds = []
    for _ in range(2):
        model = cwrs.AROW(covariance="full", n_jobs=n_jobs, random_state=0)
        start = time.perf_counter()
        model.fit(X_train, y_train)
        seconds.append(time.perf_counter() - start)
    return model, min(seconds)


# %%
# Dask: the same four blocks, drawn on the workers from the same seeds (so no data is sent to
# the cluster), in two or four partitions, persisted before the clock starts. Each partition is
# learned by one task in its stored order and the task models are merged.

def training_blocks_on_dask(n_partitions):
    blocks = [dask.delayed(make_block, nout=2)(seed) for seed in range(1, n_blocks + 1)]
    X = da.concatenate([da.from_delayed(X_block, (rows_per_block, n_features), float)
                        for X_block, _ in blocks])
    y = da.concatenate([da.from_delayed(y_block, (rows_per_block,), int)
                        for _, y_block in blocks])
    rows = n_blocks * rows_per_block // n_partitions
    return X.rechunk((rows, n_features)).persist(), y.rechunk(rows).persist()


def fit_on_dask(n_partitions):
    X_dask, y_dask = training_blocks_on_dask(n_partitions)
    wait([X_dask, y_dask])
    seconds = []
    for _ in range(2):
        start = time.perf_counter()
        model = cwrs.dask.fit(cwrs.AROW(covariance="full"), X_dask, y_dask, classes=[-1, 1])
        seconds.append(time.perf_counter() - start)
    return model, min(seconds)


# %%
# Dask starts its worker processes with multiprocessing's "spawn" method, which imports the
# main script anew in each of them: the work runs under the main-module guard. The cluster has
# two worker processes of one thread each, on the loopback interface; the `with` blocks close
# it.

if __name__ == "__main__":
    training = [make_block(seed) for seed in range(1, n_blocks + 1)]
    X_train = np.concatenate([X for X, _ in training])
    y_train = np.concatenate([y for _, y in training])
    X_test, y_test = make_block(n_blocks + 1)
    wall_time, accuracy = {}, {}
    for n_jobs in [1, 2]:
        model, seconds = fit_with_threads(X_train, y_train, n_jobs)
        wall_time[f"n_jobs={n_jobs}"] = seconds
        accuracy[f"n_jobs={n_jobs}"] = model.score(X_test, y_test)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster, Client(cluster):
        for n_partitions in [2, 4]:
            model, seconds = fit_on_dask(n_partitions)
            wall_time[f"Dask, {n_partitions} partitions"] = seconds
            accuracy[f"Dask, {n_partitions} partitions"] = model.score(X_test, y_test)

    for name in wall_time:
        print(f"{name:22s} fit {wall_time[name]:.2f} s  held-out accuracy {accuracy[name]:.4f}")

    fig, (ax_time, ax_accuracy) = plt.subplots(1, 2, figsize=(10, 4))
    names = list(wall_time)
    colors = ["tab:blue", "tab:blue", "tab:orange", "tab:orange"]
    bars = ax_time.bar(names, [wall_time[name] for name in names], color=colors)
    ax_time.bar_label(bars, fmt="%.2f s")
    ax_time.margins(y=0.1)
    ax_time.set_ylabel("wall time of fit (s)")
    bars = ax_accuracy.bar(names, [accuracy[name] for name in names], color=colors)
    ax_accuracy.bar_label(bars, fmt="%.4f")
    ax_accuracy.set_ylim(0.5, 1.0)  # from chance level
    ax_accuracy.set_ylabel("held-out accuracy")
    for ax in (ax_time, ax_accuracy):
        ax.tick_params(axis="x", labelrotation=20)
    fig.tight_layout()
    plt.show()
