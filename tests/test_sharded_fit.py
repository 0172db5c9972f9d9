"""`fit` with n_jobs > 1 in the core (crates/cwrs/src/parallel/sharded/mod.rs, docs/design.md §9.4): bit-identical to the
definition, each pass split into contiguous shards of its row order, a copy of the model of the
start of the pass learned on each, the copies merged by `_cwrs.merge(shards, "auto", base)`
(the Python implementation it replaced, kept here as the reference)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import cwrs
from cwrs import _cwrs
from cwrs._estimator import Estimator
from cwrs._params import check_n_jobs
from cwrs._validation import check_sample_weight


def _reference_fit_passes(self, model, matrix, targets, sample_weight, n_rows, balanced=False):
    """The definition, one shard after the other, through copies and the state merge."""
    assert not balanced, "the cases have no class_weight"
    weights = check_sample_weight(sample_weight, n_rows)
    n_jobs = check_n_jobs(self)
    for order in self._pass_orders(n_rows):
        if order is None:
            order = np.arange(n_rows, dtype=np.int64)
        chunks = [c for c in np.array_split(order, n_jobs) if c.size]
        shards = [model.copy() for _ in chunks]
        for shard, chunk in zip(shards, chunks):
            shard.partial_fit(matrix, targets, weights, chunk)
        model = _cwrs.merge(shards, "auto", model)
    return model


def _outcome(fit):
    """The state `fit()` learns, as bytes, or the error it raises. (The information merge can
    refuse a model with process noise, whose shards' precisions may shrink below the base's:
    then both implementations refuse it alike.)"""
    try:
        return pickle.dumps(fit()._model.state())
    except ValueError as error:
        return str(error)


def _data(n_rows, n_features=12, classes=2, seed=0, sparse=False):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n_rows, n_features))
    if sparse:
        X[rng.uniform(size=X.shape) < 0.7] = 0.0
        X = sp.csr_matrix(X)
    scores = X @ rng.normal(size=n_features) + 0.5 * rng.normal(size=n_rows)
    if classes == 2:
        return X, np.where(scores > 0, 1, -1)
    return X, np.digitize(scores, np.quantile(scores, [1 / 3, 2 / 3]))


CASES = {
    # The in-place merge: diagonal information, identity average.
    "arow-diag": (cwrs.AROW(), {}),
    "arow-sparse-stored-order": (cwrs.AROW(shuffle=False), {"sparse": True}),
    "pa1-identity": (cwrs.PA1(), {}),
    "multiclass-diag": (cwrs.AROW(), {"classes": 3}),
    "regressor-diag": (cwrs.AROWRegressor(), {"regression": True}),
    "ogd-rounds": (cwrs.OGD(), {}),
    # Through the state merge: the full form, an L1 penalty, a constant process noise.
    "scw1-full": (cwrs.SCW1(covariance="full"), {}),
    "arow-l1": (cwrs.AROW(penalty="l1", alpha=1e-3), {}),
    "arow-noise": (cwrs.AROW(process_noise=1e-4), {}),
    # Low-rank: the information merge (AROW) and the average (SCW1, multiclass).
    "arow-lowrank": (cwrs.AROW(covariance="lowrank", rank=2), {}),
    "scw1-lowrank-multiclass": (cwrs.SCW1(covariance="lowrank", rank=2), {"classes": 3}),
}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("n_jobs", [2, 3])
def test_sharded_fit_is_bit_identical_to_its_definition(name, n_jobs, monkeypatch):
    template, data = CASES[name]
    X, y = _data(301, classes=data.get("classes", 2), sparse=data.get("sparse", False))
    if data.get("regression"):
        y = X @ np.linspace(-1, 1, X.shape[1]) + 0.1
    weights = np.random.RandomState(1).randint(0, 3, size=X.shape[0]) * 0.75
    for sample_weight in (None, weights):
        make = lambda: type(template)(**template.get_params()).set_params(  # noqa: E731
            n_jobs=n_jobs, n_iter=3, random_state=5
        )
        fitted = _outcome(lambda: make().fit(X, y, sample_weight=sample_weight))
        with monkeypatch.context() as patch:
            patch.setattr(Estimator, "_fit_passes", _reference_fit_passes)
            reference = _outcome(lambda: make().fit(X, y, sample_weight=sample_weight))
        assert fitted == reference, name


def test_more_jobs_than_rows_and_bad_rows(monkeypatch):
    X, y = _data(5)
    fitted = _outcome(lambda: cwrs.AROW(n_jobs=8, n_iter=2, random_state=3).fit(X, y))
    monkeypatch.setattr(Estimator, "_fit_passes", _reference_fit_passes)
    assert _outcome(lambda: cwrs.AROW(n_jobs=8, n_iter=2, random_state=3).fit(X, y)) == fitted
    monkeypatch.undo()
    X, y = _data(200)
    for shuffle in (False, True):
        bad = X.copy()
        bad[150, 3] = np.nan
        with pytest.raises(ValueError, match="NaN|finite"):
            cwrs.AROW(n_jobs=2, shuffle=shuffle).fit(bad, y)
    csr = sp.csr_matrix(X)
    csr.indices[-1] = X.shape[1] + 5  # past the width: refused, never read
    with pytest.raises(ValueError):
        cwrs.AROW(n_jobs=2).fit(
            sp.csr_matrix((csr.data, csr.indices, csr.indptr), shape=X.shape), y
        )


def test_work_whose_second_thread_the_system_refuses_runs_on_the_calling_thread():
    """With every new thread refused (RUST_MIN_STACK beyond the address space makes each spawn
    fail, as a limit on threads or memory would), the calls that use more threads learn and
    predict the same bits on the calling thread: `fit(n_jobs=k)`, a large `partial_fit` (its
    rows validated ahead), a wide full covariance and a kernel model's scores. They were
    internal errors ("failed to spawn thread"); n_jobs above the system's limit on threads
    (n_jobs=40000 on 40 rows) was one on any machine."""
    import os
    import subprocess
    import sys

    script = (
        "import numpy as np, cwrs, pickle, sys\n"
        "rng = np.random.RandomState(0)\n"
        "X = rng.randn(20000, 4)\n"
        "y = np.sign(X[:, 0] - X[:, 1] + 0.1)\n"
        "out = []\n"
        "for n_jobs in (2, 3):\n"
        "    model = cwrs.AROW(n_jobs=n_jobs, n_iter=2, random_state=1).fit(X[:60], y[:60])\n"
        "    out.append(model._model.state())\n"
        "out.append(cwrs.AROW().partial_fit(X, y, classes=[-1, 1])._model.state())\n"
        "wide = rng.randn(40, 300)\n"
        "full = cwrs.AROW(covariance='full').partial_fit(wide, np.sign(wide[:, 0]), classes=[-1, 1])\n"
        "out.append(full._model.state())\n"
        "kernel = cwrs.AROW(kernel='rbf', budget=300).partial_fit(X[:400], y[:400], classes=[-1, 1])\n"
        "out.append(kernel.decision_function(X))\n"
        "sys.stdout.buffer.write(pickle.dumps(out))\n"
    )
    run = lambda env: subprocess.run(
        [sys.executable, "-c", script], env={**os.environ, **env}, capture_output=True
    )
    normal = run({})
    refused = run({"RUST_MIN_STACK": str(1 << 60), "RUST_BACKTRACE": "0"})
    assert normal.returncode == 0, normal.stderr.decode()
    assert refused.returncode == 0, refused.stderr.decode()[-2000:]
    assert refused.stdout == normal.stdout


@pytest.mark.parametrize("n_jobs", [1025, 10**6, 2**31, 2**40, 2**63, 2**70, -1025, -(2**70)])
def test_absurd_n_jobs_are_refused_naming_n_jobs(n_jobs):
    """More threads than any machine has cores: a mistake, refused before any thread, copy or
    allocation (2**31 aborted the interpreter, 2**63 was an internal error, 2**70 an
    OverflowError, 10**6 took seconds and gigabytes for 40 rows); a fitted model is kept."""
    X, y = _data(40)
    model = cwrs.AROW(covariance="full").fit(X, y)
    before = pickle.dumps(model._model.state())
    model.set_params(n_jobs=n_jobs)
    with pytest.raises(ValueError, match="n_jobs"):
        model.fit(X, y)
    assert pickle.dumps(model._model.state()) == before


def test_more_jobs_than_rows_learn_one_shard_per_row():
    """The largest n_jobs on a few rows of a full covariance: one shard (and one copy) per row,
    as n_jobs equal to the number of rows."""
    X, y = _data(6, n_features=40)
    fit = lambda n_jobs: _outcome(
        lambda: cwrs.AROW(covariance="full", n_jobs=n_jobs, n_iter=2, random_state=0).fit(X, y)
    )
    assert fit(1024) == fit(6)


def test_full_covariance_shards_too_short_to_pay_warn():
    """n_jobs=2 with a full covariance was 8 times slower than n_jobs=1 on shards too short to
    pay for the O(d³) merge, without a word: it warns, naming the rows a shard needs; the diagonal
    form (whose merge is O(d)) and long enough shards do not."""
    import warnings

    X, y = _data(200, n_features=60)
    with pytest.warns(cwrs.IneffectiveParameterWarning, match=r"n_jobs=2 .* 488 rows per shard"):
        cwrs.AROW(covariance="full", n_jobs=2).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cwrs.AROW(n_jobs=2).fit(X, y)
        X, y = _data(400, n_features=20)
        cwrs.AROW(covariance="full", n_jobs=2).fit(X, y)
