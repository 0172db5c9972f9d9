"""`cwrs.dask` on a real local cluster (two worker processes, loopback only): exactness of the
sharded fit, files read on the workers, a worker killed mid-epoch, predictions over dask
collections, and refusals that leave the estimator unchanged (docs/design.md §9.5)."""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest

import cwrs

pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
import cwrs.dask  # noqa: E402


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
        dashboard_address=None,
    )
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


def _regression(n_rows=400, n_features=5, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n_rows, n_features))
    return X, X @ np.arange(1.0, n_features + 1) + 0.3 + 0.1 * rng.normal(size=n_rows)


def test_full_regressor_over_four_partitions_is_the_sequential_fit(client):
    X, y = _regression()
    params = dict(covariance="full", r=0.5, shuffle=False)
    sequential = cwrs.AROWRegressor(**params).fit(X, y)
    est = cwrs.AROWRegressor(**params)
    fitted = cwrs.dask.fit(est, da.from_array(X, chunks=(100, 5)), da.from_array(y, chunks=100),
                           client=client)
    assert fitted is est
    np.testing.assert_allclose(est.coef_, sequential.coef_, rtol=1e-9)
    np.testing.assert_allclose(est.intercept_, sequential.intercept_, rtol=1e-9)
    Xt = np.column_stack([X, np.ones(len(X))])
    ridge = np.linalg.solve(np.eye(6) + Xt.T @ Xt / 0.5, Xt.T @ y / 0.5)
    np.testing.assert_allclose(np.append(est.coef_, est.intercept_), ridge, rtol=1e-9)


def _write_libsvm(path, X, y):
    with open(path, "w") as f:
        for row, label in zip(X, y):
            entries = " ".join(f"{j + 1}:{v:.17g}" for j, v in enumerate(row) if v != 0)
            f.write(f"{label:g} {entries}\n")


def _sparse_classification(n_rows=600, n_features=200, seed=1):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n_rows, n_features)) * (rng.uniform(size=(n_rows, n_features)) < 0.03)
    y = np.where(X @ rng.normal(size=n_features) > 0, 1, -1)
    return X, y


@pytest.mark.parametrize("estimator", [cwrs.AROW(), cwrs.PA1(), cwrs.SCW1(covariance="full")],
                         ids=["arow-diag", "pa1", "scw1-full"])
def test_files_read_on_the_workers_give_the_merge_of_the_shards(client, tmp_path, estimator):
    X, y = _sparse_classification()
    paths = []
    for k, rows in enumerate(np.array_split(np.arange(len(X)), 3)):
        paths.append(str(tmp_path / f"part{k}.libsvm"))
        _write_libsvm(paths[-1], X[rows], y[rows])
    n_features = max(cwrs.load_svmlight(p)[0].shape[1] for p in paths)
    fitted = cwrs.dask.fit(estimator, paths, client=client, n_iter=2)
    # Streamed (the width and classes known): learned by the core as each worker parses.
    streamed = cwrs.dask.fit(type(estimator)(**estimator.get_params()), paths, client=client,
                             n_iter=2, classes=[-1, 1], n_features=n_features)
    # The same epochs by hand: shards from the model of the epoch start, merged in order.
    model = None
    for _ in range(2):
        shards = []
        for path in paths:
            shard = pickle.loads(pickle.dumps(model)) if model else estimator.__class__(
                **estimator.get_params())
            shards.append(shard.partial_fit_file(path, classes=[-1, 1], n_features=n_features))
        model = cwrs.merge(shards, base=model)
    expected = model._model.state()
    for fit in (fitted, streamed):
        state = fit._model.state()
        assert state.keys() == expected.keys()
        for key in state:
            np.testing.assert_array_equal(state[key], expected[key], err_msg=key)
    assert streamed.n_features_in_ == n_features and list(streamed.classes_) == [-1, 1]
    # Read one-based, as partial_fit_file keeps it: later files and `cwrs test` use that base.
    assert fitted.zero_based_ is False and streamed.zero_based_ is model.zero_based_ is False


@pytest.mark.parametrize("kind", ["regressor", "multiclass", "random-features"])
def test_streamed_files_are_the_merge_of_partial_fit_file_shards(client, tmp_path, kind):
    rng = np.random.RandomState(7)
    X = rng.normal(size=(300, 12)) * (rng.uniform(size=(300, 12)) < 0.4)
    if kind == "regressor":
        estimator, y, fit_args = cwrs.AROWRegressor(r=0.5), X @ rng.normal(size=12), {}
    else:
        y = np.digitize(X @ rng.normal(size=12), [-0.5, 0.5]) + 1
        estimator = cwrs.AROW() if kind == "multiclass" else cwrs.AROW(
            kernel_approximation="rff", n_components=16, random_state=0)
        fit_args = {"classes": [1, 2, 3]}
    paths = []
    for k, rows in enumerate(np.array_split(np.arange(len(X)), 2)):
        paths.append(str(tmp_path / f"part{k}.libsvm"))
        _write_libsvm(paths[-1], X[rows], y[rows])
    fitted = cwrs.dask.fit(estimator, paths, client=client, n_iter=2, n_features=14, **fit_args)
    model = None
    for _ in range(2):
        shards = [(pickle.loads(pickle.dumps(model)) if model else estimator.__class__(
            **estimator.get_params())).partial_fit_file(path, n_features=14, **fit_args)
            for path in paths]
        model = cwrs.merge(shards, base=model)
    state, expected = fitted._model.state(), model._model.state()
    for key in expected:
        np.testing.assert_array_equal(state[key], expected[key], err_msg=key)


def test_a_file_without_rows_adds_nothing(client, tmp_path):
    X, y = _sparse_classification(n_rows=200, n_features=20, seed=8)
    full, empty = tmp_path / "full.libsvm", tmp_path / "empty.libsvm"
    _write_libsvm(full, X, y)
    empty.write_text("# no rows\n")
    alone = cwrs.AROW().partial_fit_file(full, classes=[-1, 1], n_features=20)
    for args in ({}, {"classes": [-1, 1], "n_features": 20}):
        fitted = cwrs.dask.fit(cwrs.AROW(), [str(full), str(empty)], client=client, **args)
        np.testing.assert_allclose(fitted.coef_, alone.coef_, rtol=1e-12)
        assert fitted.n_updates_ == alone.n_updates_


def test_streamed_files_refuse_bad_lines_naming_them(client, tmp_path):
    path = tmp_path / "bad.libsvm"
    path.write_text("1 1:0.5 3:1\n-1 2:1\n1 9:1\n")
    est = cwrs.AROW()
    with pytest.raises(ValueError, match=r"bad.libsvm: line 3: n_features was set to 4"):
        cwrs.dask.fit(est, [str(path)], client=client, classes=[-1, 1], n_features=4)
    with pytest.raises(ValueError, match=r"bad.libsvm: line 2: the label -1 is not in classes"):
        cwrs.dask.fit(est, [str(path)], client=client, classes=[1, 2], n_features=10)
    with pytest.raises(ValueError, match="n_features was set to 4"):
        cwrs.dask.fit(est, [str(path)], client=client, n_features=4)
    assert not hasattr(est, "_model")


def _die_once(block, marker):
    """`block`, after killing this worker process the first time it is called."""
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        return block
    os._exit(1)


def test_a_worker_killed_mid_epoch_changes_nothing(client, tmp_path):
    from dask import delayed

    X, y = _sparse_classification(n_rows=400, n_features=30, seed=4)
    blocks = np.array_split(np.arange(len(X)), 4)

    def dask_X(killer):
        parts = []
        for k, rows in enumerate(blocks):
            block = X[rows]
            if killer and k == 2:
                block = delayed(_die_once, pure=True)(block, str(tmp_path / "killed"))
            parts.append(da.from_delayed(block, shape=X[rows].shape, dtype=np.float64)
                         if killer and k == 2 else da.from_array(block))
        return da.concatenate(parts)

    y_dask = da.from_array(y, chunks=(tuple(len(b) for b in blocks),))
    unfaulted = cwrs.dask.fit(cwrs.AROW(), dask_X(False), y_dask, client=client, n_iter=2)
    faulted = cwrs.dask.fit(cwrs.AROW(), dask_X(True), y_dask, client=client, n_iter=2)
    assert os.path.exists(tmp_path / "killed")
    a, b = unfaulted._model.state(), faulted._model.state()
    for key in a:
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)


def _make_learn_file_die_once(marker):
    """On this worker: the next streamed file's task kills the process once its rows are
    learned (the first time, cluster-wide, that any task reaches that point)."""
    import cwrs.dask as module

    original = module.__dict__.setdefault("_original_learn_file", module._learn_file)

    def dying(*args):
        original(*args)
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            return
        os._exit(1)

    module._learn_file = dying


def _restore_learn_file():
    import cwrs.dask as module

    module._learn_file = module.__dict__.get("_original_learn_file", module._learn_file)


def test_a_worker_killed_while_streaming_a_file_changes_nothing(client, tmp_path):
    X, y = _sparse_classification(n_rows=400, n_features=30, seed=5)
    # The same parts under two names: tasks of other keys, so that nothing is reused.
    paths = {"a": [], "b": []}
    for k, rows in enumerate(np.array_split(np.arange(len(X)), 4)):
        for name, names in paths.items():
            names.append(str(tmp_path / f"{name}{k}.libsvm"))
            _write_libsvm(names[-1], X[rows], y[rows])
    args = dict(client=client, n_iter=2, classes=[-1, 1], n_features=30)
    unfaulted = cwrs.dask.fit(cwrs.AROW(), paths["a"], **args)
    client.run(_make_learn_file_die_once, str(tmp_path / "killed"))
    try:
        faulted = cwrs.dask.fit(cwrs.AROW(), paths["b"], **args)
    finally:
        # The killed worker restarted, for the next tests (slow on a loaded machine).
        client.wait_for_workers(2, timeout=180)
        client.run(_restore_learn_file)
    assert os.path.exists(tmp_path / "killed")
    a, b = unfaulted._model.state(), faulted._model.state()
    for key in a:
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)


def test_data_frames_and_predictions(client):
    pd = pytest.importorskip("pandas")
    rng = np.random.RandomState(2)
    X = rng.normal(size=(300, 4))
    labels = np.array(["a", "b", "c"])[np.digitize(X @ [1.0, -1.0, 0.5, 0.0], [-0.5, 0.5])]
    frame = pd.DataFrame(X, columns=["w", "x", "y", "z"])
    X_dd = dd.from_pandas(frame, npartitions=3)
    y_dd = dd.from_pandas(pd.Series(labels), npartitions=3)
    est = cwrs.dask.fit(cwrs.AROW(), X_dd, y_dd, client=client)
    assert list(est.feature_names_in_) == ["w", "x", "y", "z"]
    assert list(est.classes_) == ["a", "b", "c"]
    shards = [
        cwrs.AROW().partial_fit(X_dd.partitions[k].compute(), y_dd.partitions[k].compute(),
                                classes=["a", "b", "c"])
        for k in range(3)
    ]
    np.testing.assert_array_equal(est.coef_, cwrs.merge(shards).coef_)
    assert est.score(frame, labels) > 0.7
    X_da = da.from_array(X, chunks=(100, 4))
    np.testing.assert_array_equal(cwrs.dask.predict(est, X_da).compute(), est.predict(X))
    np.testing.assert_array_equal(
        cwrs.dask.decision_function(est, X_da).compute(), est.decision_function(X))
    np.testing.assert_array_equal(cwrs.dask.predict_proba(est, X_da).compute(),
                                  est.predict_proba(X))
    np.testing.assert_array_equal(cwrs.dask.predict(est, X_dd).compute().to_numpy(),
                                  est.predict(frame))
    np.testing.assert_array_equal(cwrs.dask.predict_proba(est, X_dd).compute().to_numpy(),
                                  est.predict_proba(frame))


def test_sample_weights_and_balanced_classes_are_those_of_the_merged_shards(client):
    """A weight array (or a series, or a column of the frame) gives each partition's rows their
    weights; "balanced" counts each partition's weights beyond the epoch's start, and the merge
    adds the counts: the result is the merge of the shards learned by hand, in every form."""
    pd = pytest.importorskip("pandas")
    rng = np.random.RandomState(3)
    X = rng.normal(size=(240, 4))
    y = np.where(X @ [1.0, -1.0, 0.5, 0.0] > 0.8, 1, 0)
    w = rng.uniform(0.0, 3.0, size=240)
    w[::7] = 0.0
    make = lambda: cwrs.AROW(class_weight="balanced")  # noqa: E731
    model = None
    for _ in range(2):
        shards = []
        for rows in np.array_split(np.arange(240), 3):
            shard = pickle.loads(pickle.dumps(model)) if model else make()
            shards.append(shard.partial_fit(X[rows], y[rows], classes=[0, 1], sample_weight=w[rows]))
        model = cwrs.merge(shards, base=model)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"]).assign(weight=w)
    X_dd, y_dd = dd.from_pandas(frame, npartitions=3), dd.from_pandas(pd.Series(y), npartitions=3)
    forms = [
        (da.from_array(X, chunks=(80, 4)), da.from_array(y, chunks=80), da.from_array(w, chunks=40)),
        (X_dd.drop(columns=["weight"]), y_dd, X_dd["weight"]),
        (X_dd, y_dd, "weight"),
    ]
    for X_form, y_form, w_form in forms:
        est = cwrs.dask.fit(make(), X_form, y_form, client=client, n_iter=2, sample_weight=w_form)
        np.testing.assert_array_equal(est.coef_, model.coef_)
        np.testing.assert_array_equal(est.class_counts_, model.class_counts_)
    np.testing.assert_allclose(model.class_counts_, 2 * np.bincount(y, weights=w), rtol=1e-12)
    short = (forms[0][0], forms[0][1], da.from_array(w[:10], chunks=10))
    for X_form, y_form, bad in (short, (X_dd, y_dd, "nope")):
        with pytest.raises(cwrs.InvalidParameterError, match="sample_weight"):
            cwrs.dask.fit(make(), X_form, y_form, client=client, sample_weight=bad)
    with pytest.raises(ValueError, match="sample_weight"):
        cwrs.dask.fit(make(), forms[0][0], forms[0][1], client=client,
                      sample_weight=da.from_array(-w, chunks=80))


def test_an_empty_partition_contributes_nothing(client):
    pd = pytest.importorskip("pandas")
    rng = np.random.RandomState(5)
    X = rng.normal(size=(160, 3))
    labels = np.where(X @ [1.0, -1.0, 0.5] > 0, "yes", "no")
    frame = pd.DataFrame(X, columns=["u", "v", "w"]).assign(label=labels, t=np.arange(160))
    parts = dd.from_pandas(frame, npartitions=4)
    second = parts.partitions[1].t.compute()
    # A filter that empties the second partition, as a query over a time range does.
    filtered = parts[(parts.t < second.min()) | (parts.t > second.max())]
    kept = dd.concat([filtered.partitions[k] for k in (0, 2, 3)])
    assert filtered.npartitions == 4 and kept.npartitions == 3
    assert len(filtered.partitions[1]) == 0 and len(second) > 0
    features = ["u", "v", "w"]
    for estimator in (cwrs.AROW(), cwrs.PA1()):
        est = cwrs.dask.fit(type(estimator)(), filtered[features], filtered["label"],
                            client=client, n_iter=2)
        alone = cwrs.dask.fit(type(estimator)(), kept[features], kept["label"], client=client,
                              n_iter=2)
        np.testing.assert_array_equal(est.coef_, alone.coef_)
        assert est.n_updates_ == alone.n_updates_
    rows = frame.drop(index=second.index)[features]
    np.testing.assert_array_equal(cwrs.dask.predict(est, filtered[features]).compute().to_numpy(),
                                  est.predict(rows))
    aw = cwrs.dask.fit(cwrs.AROW(), filtered[features], filtered["label"], client=client)
    np.testing.assert_array_equal(
        cwrs.dask.predict_proba(aw, filtered[features]).compute().to_numpy(),
        aw.predict_proba(rows))
    np.testing.assert_array_equal(
        cwrs.dask.decision_function(aw, filtered[features]).compute().to_numpy(),
        aw.decision_function(rows))


def test_an_empty_chunk_of_a_dask_array_contributes_nothing(client):
    X, y = _regression(n_rows=120, n_features=3, seed=4)
    chunks = (40, 0, 80)
    est = cwrs.dask.fit(cwrs.AROWRegressor(), da.from_array(X, chunks=(chunks, 3)),
                        da.from_array(y, chunks=(chunks,)), client=client)
    alone = cwrs.dask.fit(cwrs.AROWRegressor(), da.from_array(X, chunks=((40, 80), 3)),
                          da.from_array(y, chunks=((40, 80),)), client=client)
    np.testing.assert_array_equal(est.coef_, alone.coef_)
    X_da = da.from_array(X, chunks=(chunks, 3))
    np.testing.assert_array_equal(cwrs.dask.predict(est, X_da).compute(), est.predict(X))
    classifier = cwrs.AROW().fit(X, y > y.mean())
    np.testing.assert_array_equal(cwrs.dask.predict_proba(classifier, X_da).compute(),
                                  classifier.predict_proba(X))


def test_a_collection_without_rows_is_refused(client):
    X, y = _regression(n_rows=10, n_features=3)
    est = cwrs.AROWRegressor()
    with pytest.raises(ValueError, match="no rows"):
        cwrs.dask.fit(est, da.from_array(X[:0], chunks=((0, 0), 3)),
                      da.from_array(y[:0], chunks=((0, 0),)), client=client)
    assert not hasattr(est, "coef_") and "_model" not in vars(est)


def test_dask_fit_refuses_what_fit_refuses_with_the_same_error(client):
    X, y = _regression(n_rows=40)
    labels = np.where(y > y.mean(), 1, -1)
    X_da, y_da = da.from_array(X, chunks=(20, 5)), da.from_array(labels, chunks=20)
    for est in (cwrs.ROMMA(average=True), cwrs.AROW(random_state=-1),
                cwrs.AROW(kernel_approximation="rff", n_components=3.0)):
        with pytest.raises(cwrs.InvalidParameterError) as by_fit:
            type(est)(**est.get_params()).fit(X, labels)
        with pytest.raises(cwrs.InvalidParameterError) as by_dask:
            cwrs.dask.fit(est, X_da, y_da, client=client)
        assert str(by_dask.value) == str(by_fit.value)
        assert "_model" not in vars(est)


def test_refusals_leave_the_estimator_unchanged(client, tmp_path):
    X, y = _regression(n_rows=40)
    X_da, y_da = da.from_array(X, chunks=(20, 5)), da.from_array(y, chunks=20)
    est = cwrs.AROWRegressor().fit(X, y)
    before = pickle.dumps(est)
    cases = [
        ((est, X_da), {}, "y is required"),
        ((est, [str(tmp_path / "a.libsvm")], y_da), {}, "y must be None"),
        ((est, X, y), {}, "dask array"),
        ((est, X_da, y_da[:10]), {}, "one value per row"),
        ((est, X_da, y_da), {"merge": "sum"}, "merge"),
        ((est, X_da, y_da), {"n_iter": 0}, "n_iter"),
        ((est, []), {}, "empty list"),
        ((est, X_da, y_da), {"n_features": 5}, "n_features is for LIBSVM files"),
        ((est, [str(tmp_path / "a.libsvm")]), {"n_features": 0}, "n_features"),
        ((cwrs.AROW(kernel="rbf"), X_da, y_da), {}, "kernel"),
        ((cwrs.PA1(), X_da, da.sign(y_da)), {"merge": "information"}, "first-order"),
    ]
    for args, kwargs, needle in cases:
        with pytest.raises(cwrs.InvalidParameterError, match=needle):
            cwrs.dask.fit(*args, client=client, **kwargs)
        assert pickle.dumps(est) == before


def test_cli_train_on_a_scheduler_is_the_dask_fit_of_its_parts(client, tmp_path, capsys):
    from cwrs import cli

    X, y = _sparse_classification(n_rows=300, n_features=40, seed=6)
    data = tmp_path / "train.libsvm"
    _write_libsvm(data, X, y)
    address = client.scheduler.address
    argv = ["train", "-a", "AROW", "-d", str(data), "-o", str(tmp_path / "m.cwrs"),
            "--no-shuffle", "--passes", "2", "--scheduler", address, "--n-features", "45"]
    assert cli.main(argv) == 0
    trained = cwrs.load(tmp_path / "m.cwrs")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.cwrs", "train.libsvm"]
    parts = []
    for k, rows in enumerate(np.array_split(np.arange(300), 2)):
        parts.append(str(tmp_path / f"part{k}.libsvm"))
        _write_libsvm(parts[-1], X[rows], y[rows])
    expected = cwrs.dask.fit(cwrs.AROW(), parts, client=client, n_iter=2)
    assert trained.n_features_in_ == 45
    np.testing.assert_array_equal(trained.coef_[0, :40], expected.coef_[0])
    assert "in parts on scheduler" in capsys.readouterr().out
    assert cli.main(argv[:-4] + ["--workers", "2", "--scheduler", address]) == 1
