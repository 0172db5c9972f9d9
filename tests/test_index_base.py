"""A model remembers the LIBSVM index base it learned with (`zero_based_`): later files are read
with it (`partial_fit_file`, `cwrs test`, `cwrs predict`), kept by save, load and pickle, a file
or option that says otherwise is refused, and merge refuses models of different bases.

The case of a newcomer: scikit-learn's `dump_svmlight_file` writes indices from 0; a training
file in which feature 0 never occurs has no index 0, so "auto" reads it one-based, while the
test file (with an index 0) reads zero-based: the features were shifted by one, silently."""

import pickle

import numpy as np
import pytest

import cwrs
from cwrs import _persist
from cwrs.cli import main
from test_persist import rewritten

sklearn_datasets = pytest.importorskip("sklearn.datasets")


def run(capsys, *argv):
    status = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def sklearn_pair(folder, seed=0):
    """Train and test files written by scikit-learn (zero-based), feature 0 absent from the
    training file only; and the test rows."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(400, 6))
    y = np.where(X @ rng.normal(size=6) > 0, 1, -1)
    X_train = X[:300].copy()
    X_train[:, 0] = 0.0
    train, test = folder / "train.svm", folder / "test.svm"
    sklearn_datasets.dump_svmlight_file(X_train, y[:300], str(train), zero_based=True)
    sklearn_datasets.dump_svmlight_file(X[300:], y[300:], str(test), zero_based=True)
    return train, test, X[300:], y[300:]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cli_test_refuses_a_file_of_another_base_than_the_model(capsys, tmp_path, seed):
    train, test, X_test, y_test = sklearn_pair(tmp_path, seed)
    model = tmp_path / "m.cwrs"
    status, out, err = run(capsys, "train", "-a", "AROW", "-d", train, "-o", model, "-q")
    assert status == 0, err
    assert cwrs.load(model).zero_based_ is False
    predictions = tmp_path / "p.txt"
    status, out, err = run(capsys, "test", "-i", model, "-d", test, "-p", predictions, "-q")
    assert status == 1 and out == "" and not predictions.exists()
    assert "index 0" in err and "zero_based_=False" in err and "--zero-based" in err
    # Trained zero-based, the model reads the test file zero-based with no option.
    status, out, err = run(capsys, "train", "-a", "AROW", "-d", train, "-o", model, "-q",
                           "--zero-based")
    assert status == 0, err
    fitted = cwrs.load(model)
    assert fitted.zero_based_ is True and fitted.n_features_in_ == 6
    status, out, err = run(capsys, "test", "-i", model, "-d", test, "--json", "-q")
    assert status == 0, err
    assert f'"accuracy": {fitted.score(X_test, y_test)!r}' in out
    # An option saying the other base is refused before anything is read.
    status, out, err = run(capsys, "test", "-i", model, "-d", test, "--one-based", "-q")
    assert status == 1 and "the model learned from zero-based LIBSVM indices" in err


def test_partial_fit_file_keeps_the_base_through_save_load_and_pickle(tmp_path):
    train, test, X_test, y_test = sklearn_pair(tmp_path)
    model = cwrs.AROW().partial_fit_file(train, classes=[-1, 1], n_features=6, zero_based=True)
    assert model.zero_based_ is True
    model.save(tmp_path / "m.cwrs")
    for copy in (cwrs.load(tmp_path / "m.cwrs"), pickle.loads(pickle.dumps(model))):
        assert copy.zero_based_ is True
        copy.partial_fit_file(test)  # read zero-based, as the model learned
        before = copy.coef_.copy()
        with pytest.raises(ValueError, match="learned from zero-based LIBSVM indices"):
            copy.partial_fit_file(test, zero_based=False)
        np.testing.assert_array_equal(copy.coef_, before)
    # A one-based model refuses the file with an index 0, and stays as it was.
    one_based = cwrs.AROW().partial_fit_file(train, classes=[-1, 1], n_features=7)
    assert one_based.zero_based_ is False
    before = one_based.coef_.copy()
    with pytest.raises(ValueError, match="index 0"):
        one_based.partial_fit_file(test, zero_based="auto")
    np.testing.assert_array_equal(one_based.coef_, before)
    # fit forgets the file, and its base.
    assert not hasattr(one_based.fit(X_test, y_test), "zero_based_")


def test_merge_refuses_models_of_different_bases(tmp_path):
    train, _, _, _ = sklearn_pair(tmp_path)
    zero = cwrs.AROW().partial_fit_file(train, classes=[-1, 1], n_features=7, zero_based=True)
    one = cwrs.AROW().partial_fit_file(train, classes=[-1, 1], n_features=7, zero_based=False)
    with pytest.raises(cwrs.InvalidParameterError, match="different index bases"):
        cwrs.merge([zero, one])
    assert cwrs.merge([zero, zero]).zero_based_ is True
    assert cwrs.merge([one, one]).zero_based_ is False


@pytest.mark.parametrize("value", [1, "true", None])
def test_a_crafted_index_base_is_refused(tmp_path, value):
    train, _, _, _ = sklearn_pair(tmp_path)
    model = cwrs.AROW().partial_fit_file(train, classes=[-1, 1], n_features=7, zero_based=True)
    bad = rewritten(_persist.dumps(model), lambda header: header["state"].update(zero_based_=value))
    with pytest.raises(cwrs.ModelFormatError, match="zero_based_"):
        _persist.loads(bad)
