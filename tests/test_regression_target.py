"""Labels that look like a regression target (many distinct integers, a row or two each): a
classifier warns (`cwrs.RegressionTargetWarning`) on its first fit or partial_fit, and the
`cwrs` command refuses to train or compare classifiers on them, pointing to AROWRegressor."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import cwrs
from cwrs.cli import main

sklearn_datasets = pytest.importorskip("sklearn.datasets")


def run(capsys, *argv):
    status = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def diabetes():
    X, y = sklearn_datasets.load_diabetes(return_X_y=True)  # 442 rows, 214 integer targets
    return X, y


def test_fit_and_the_first_partial_fit_warn_on_a_regression_target():
    X, y = diabetes()
    with pytest.warns(cwrs.RegressionTargetWarning, match="AROWRegressor"):
        cwrs.AROW().fit(X, y)
    model = cwrs.PA()
    with pytest.warns(cwrs.RegressionTargetWarning, match="214 distinct integers on 442 rows"):
        model.partial_fit(X, y, classes=np.unique(y))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.partial_fit(X, y)  # the first call only


@pytest.mark.parametrize("load", ["load_iris", "load_digits", "load_breast_cancer", "load_wine"])
def test_class_labels_do_not_warn(load):
    X, y = getattr(sklearn_datasets, load)(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cwrs.RegressionTargetWarning)
        cwrs.AROW().fit(X, y)
        cwrs.AROW().partial_fit(X[:40], y[:40], classes=np.unique(y))


@settings(max_examples=30, deadline=None)
@given(n_classes=st.integers(2, 60), rows_per_class=st.integers(3, 6), seed=st.integers(0, 99))
def test_classes_with_a_few_rows_each_do_not_warn(n_classes, rows_per_class, seed):
    y = np.random.default_rng(seed).permutation(np.repeat(np.arange(n_classes),
                                                          rows_per_class))
    X = np.random.default_rng(seed).normal(size=(len(y), 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error", cwrs.RegressionTargetWarning)
        cwrs.PA().fit(X, y)


@settings(max_examples=30, deadline=None)
@given(n_rows=st.integers(40, 300), scale=st.sampled_from([1, 10, 1000]),
       seed=st.integers(0, 99))
def test_spread_integer_targets_warn(n_rows, scale, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 3))
    y = np.round(scale * (X @ [3.0, -2.0, 1.0]) * 10 + rng.normal(size=n_rows) * scale * 10)
    if len(np.unique(y)) * 2.5 <= n_rows or len(np.unique(y)) < 20:
        return  # too few distinct values to look like a regression target
    with pytest.warns(cwrs.RegressionTargetWarning):
        cwrs.PA().fit(X, y)


@pytest.mark.parametrize("command", [["train", "-a", "AROW", "-o", "m.cwrs"], ["compare"]])
def test_the_command_refuses_a_regression_target(capsys, tmp_path, command):
    X, y = diabetes()
    data = tmp_path / "diabetes.npz"
    np.savez(data, X=X, y=y)
    argv = [a.replace("m.cwrs", str(tmp_path / "m.cwrs")) for a in command]
    status, out, err = run(capsys, *argv, "-d", data, "-q")
    assert status == 1 and out == "" and err.count("\n") == 1
    assert "look like a regression target" in err and "AROWRegressor" in err
    assert not (tmp_path / "m.cwrs").exists()
    status, out, err = run(capsys, "train", "-a", "AROWRegressor", "-d", data, "-o",
                           tmp_path / "r.cwrs", "-q")
    assert status == 0, err
