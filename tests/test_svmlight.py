"""The LIBSVM reader: `load_svmlight` equals scikit-learn's `load_svmlight_file` (on the shared
data sets and on generated edge cases), malformed lines name their line number, chunked reading
equals whole-file reading, and `partial_fit_file` learns exactly what `partial_fit` does."""

import os
import time

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

import cwrs
from _shared_data import LIBSVM_FILES, shared_data


EDGE_CASES = {
    "comments": b"# header\n1 1:0.5 3:2 # tail\n-1 2:1#no space\n# between\n+1 4:1e-5\n",
    "qid": b"3 qid:1 1:1 2:2\n2 qid:1 1:0.5\n1 qid:-2 3:1\n",
    "blank_lines": b"\n1 1:1\n\n   \n\t\n-1 2:2\n\n",
    "crlf": b"1 1:1 2:2\r\n\r\n-1 3:3\r\n",
    "zero_based": b"1 0:1 2:2\n-1 1:3\n",
    "tabs_and_spaces": b"1\t1:1\t\t2:2\n-1  3:3   4:4 \n1\x0b5:1\x0c6:2\n",
    "exponents": b"1e0 1:1e-5 2:2.5E+3 3:.5 4:-0 5:7. 6:0\n-2.5 1:-1e2 2:1e-300\n",
    "labels": b"+1 1:1\n-1 1:1\n1 1:1\n0 1:1\n2.5 1:1\n1e3 1:1\n-0.5e-1 1:1\n",
    "empty_rows": b"1\n-1 2:1\n1\n",
    "no_entries": b"1\n-1\n",
    "no_final_newline": b"1 1:1\n-1 2:2",
    "empty_file": b"",
    "long_line": (
        b"1 " + b" ".join(b"%d:%d.125" % (j, j % 9) for j in range(1, 5001)) + b"\n-1 7:1\n"
    ),
}


def assert_same_csr(X, Y):
    assert sp.issparse(X) and X.format == "csr" and X.dtype == np.float64
    assert X.shape == Y.shape
    np.testing.assert_array_equal(X.indptr, Y.indptr)
    np.testing.assert_array_equal(X.indices, Y.indices)
    np.testing.assert_array_equal(X.data, Y.data)
    np.testing.assert_array_equal(np.signbit(X.data), np.signbit(Y.data))


def assert_same_as_sklearn(path, **kwargs):
    ours = cwrs.load_svmlight(path, query_id=True, **kwargs)
    theirs = load_svmlight_file(str(path), query_id=True, **kwargs)
    assert_same_csr(ours[0], theirs[0])
    np.testing.assert_array_equal(ours[1], theirs[1])
    assert ours[1].dtype == np.float64
    np.testing.assert_array_equal(ours[2], theirs[2])
    assert ours[2].dtype == np.int64


def write(tmp_path, content, name="data.libsvm"):
    path = tmp_path / name
    path.write_bytes(content)
    return path


@pytest.mark.parametrize("name", LIBSVM_FILES)
def test_shared_data_sets_equal_sklearn(name):
    path = shared_data(name)
    assert_same_as_sklearn(path)
    assert_same_as_sklearn(path, zero_based=False)
    X, _ = load_svmlight_file(str(path))
    assert_same_as_sklearn(path, n_features=X.shape[1] + 5)


@pytest.mark.parametrize("name", EDGE_CASES)
def test_edge_cases_equal_sklearn(tmp_path, name):
    path = write(tmp_path, EDGE_CASES[name])
    assert_same_as_sklearn(path)
    assert_same_as_sklearn(path, zero_based=True)
    if name != "zero_based":
        assert_same_as_sklearn(path, zero_based=False)
    assert_same_as_sklearn(path, n_features=7000)


def test_two_tuple_without_query_id_and_pathlike(tmp_path):
    path = write(tmp_path, EDGE_CASES["qid"])
    X, y = cwrs.load_svmlight(path)
    assert X.shape == (3, 3)
    np.testing.assert_array_equal(y, [3, 2, 1])
    X, y = cwrs.load_svmlight(str(path))
    assert X.shape == (3, 3)


def test_unsorted_indices_are_sorted(tmp_path):
    unsorted = write(tmp_path, b"1 3:3 1:1 2:2\n-1 9:1 4:4\n", "unsorted.libsvm")
    ordered = write(tmp_path, b"1 1:1 2:2 3:3\n-1 4:4 9:1\n", "sorted.libsvm")
    with pytest.raises(ValueError):
        load_svmlight_file(str(unsorted))
    X, y = cwrs.load_svmlight(unsorted)
    X_ref, y_ref = load_svmlight_file(str(ordered))
    assert_same_csr(X, X_ref)
    np.testing.assert_array_equal(y, y_ref)


@pytest.mark.parametrize(
    "content, message",
    [
        (b"1 1:1\n\n-1 3;4\n", 'line 3: expected index:value, got "3;4"'),
        (b"# c\n1 1:1\r\n-1 2:\r\n", 'line 3: expected index:value, got "2:"'),
        (b"1 1:1\n1 2:1 2:3\n", "line 2: duplicate index 2"),
        (b"1 1:1\n1 1:1\n1 0:1\n", 'line 3: index 0 in "0:1", but indices are one-based'),
        (b"1 1:nan\n", 'line 1: the value must be finite, got "1:nan"'),
        (b"1 1:1\ninf 1:1\n", 'line 2: the label must be finite, got "inf"'),
        (b"yes 1:1\n", 'line 1: expected a label, got "yes"'),
        (b"1 qid:a 1:1\n", 'line 1: expected qid:integer, got "qid:a"'),
        (b"1 99999999999999999999:1\n", 'line 1: index too large in "99999999999999999999:1"'),
    ],
)
def test_malformed_lines_name_their_line(tmp_path, content, message):
    path = write(tmp_path, content)
    zero_based = False if b"0:1" in content else "auto"
    # The message names the file, then the line.
    with pytest.raises(ValueError) as info:
        cwrs.load_svmlight(path, zero_based=zero_based)
    assert str(info.value) == f"{path}: {message}"
    with pytest.raises(ValueError) as info:
        for _ in cwrs.iter_svmlight(path, chunk_rows=1):
            pass
    assert str(info.value) == f"{path}: {message}"


def test_bad_arguments_and_missing_files(tmp_path):
    missing = tmp_path / "missing.libsvm"
    with pytest.raises(FileNotFoundError, match="missing.libsvm"):
        cwrs.load_svmlight(missing)
    with pytest.raises(FileNotFoundError):
        cwrs.iter_svmlight(missing)
    with pytest.raises(FileNotFoundError):
        cwrs.AROW().partial_fit_file(missing, classes=[-1, 1], n_features=3)
    with pytest.raises(OSError):
        cwrs.load_svmlight(tmp_path)  # a directory
    path = write(tmp_path, b"1 5:1\n")
    with pytest.raises(ValueError, match="n_features was set to 4, but input file contains 5"):
        cwrs.load_svmlight(path, n_features=4)
    with pytest.raises(ValueError, match="n_features was set to 4"):
        list(cwrs.iter_svmlight(path, n_features=4))
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="n_features"):
            cwrs.load_svmlight(path, n_features=bad)
        with pytest.raises(ValueError, match="chunk_rows"):
            cwrs.iter_svmlight(path, chunk_rows=bad)
    with pytest.raises(ValueError, match="zero_based"):
        cwrs.load_svmlight(path, zero_based="yes")


def random_file(tmp_path, n_rows=1500, n_features=200, seed=0):
    """A sparse ±1 stream with a linear teacher, as one-based LIBSVM text."""
    rng = np.random.RandomState(seed)
    teacher = rng.randn(n_features)
    lines = []
    for _ in range(n_rows):
        columns = np.sort(rng.choice(n_features, size=rng.randint(0, 12), replace=False))
        values = np.round(rng.randn(columns.shape[0]), 4)
        label = 1 if values @ teacher[columns] + 0.1 * rng.randn() > 0 else -1
        lines.append(f"{label:+d} " + " ".join(f"{j + 1}:{v}" for j, v in zip(columns, values)))
    return write(tmp_path, ("\n".join(lines) + "\n").encode(), "random.libsvm")


def test_chunks_concatenate_to_the_whole_file(tmp_path):
    path = random_file(tmp_path)
    X, y = cwrs.load_svmlight(path, zero_based=False)
    for chunk_rows in (1, 7, 256, 10_000):
        chunks = list(cwrs.iter_svmlight(path, chunk_rows=chunk_rows, n_features=X.shape[1]))
        assert all(Xc.shape[0] <= chunk_rows for Xc, _ in chunks)
        assert_same_csr(sp.vstack([Xc for Xc, _ in chunks], format="csr"), X)
        np.testing.assert_array_equal(np.concatenate([yc for _, yc in chunks]), y)
    # Without n_features the width is the largest index seen so far.
    chunks = list(cwrs.iter_svmlight(path, chunk_rows=100))
    widths = [Xc.shape[1] for Xc, _ in chunks]
    assert widths == sorted(widths) and widths[-1] == X.shape[1]
    padded = [sp.csr_matrix((Xc.data, Xc.indices, Xc.indptr), shape=(Xc.shape[0], X.shape[1]))
              for Xc, _ in chunks]
    assert_same_csr(sp.vstack(padded, format="csr"), X)


def _threads():
    return len(os.listdir("/proc/self/task"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
def test_abandoned_iterator_ends_its_thread(tmp_path):
    path = random_file(tmp_path)
    before = _threads()
    chunks = cwrs.iter_svmlight(path, chunk_rows=10)
    X, _ = next(chunks)
    assert X.shape[0] == 10
    del chunks
    deadline = time.monotonic() + 10
    while _threads() > before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _threads() == before


@pytest.mark.parametrize(
    "make",
    [lambda: cwrs.AROW(covariance="diag"), lambda: cwrs.AROW(covariance="full"), cwrs.PA1],
    ids=["AROW-diag", "AROW-full", "PA1"],
)
def test_partial_fit_file_equals_partial_fit(tmp_path, make):
    path = random_file(tmp_path)
    X, y = cwrs.load_svmlight(path, zero_based=False)
    reference = make().partial_fit(X, y, classes=[-1, 1])
    streamed = make().partial_fit_file(path, classes=[-1, 1], chunk_rows=97, n_features=X.shape[1])
    assert np.array_equal(streamed.coef_, reference.coef_)
    assert np.array_equal(streamed.intercept_, reference.intercept_)
    assert streamed.n_mistakes_ == reference.n_mistakes_
    # Later calls take n_features from the fitted model.
    reference.partial_fit(X, y)
    assert streamed.partial_fit_file(path, chunk_rows=500) is streamed
    assert np.array_equal(streamed.coef_, reference.coef_)


def test_partial_fit_file_regressor_and_n_features(tmp_path):
    path = random_file(tmp_path)
    X, y = cwrs.load_svmlight(path, zero_based=False)
    reference = cwrs.AROWRegressor().partial_fit(X, y)
    streamed = cwrs.AROWRegressor().partial_fit_file(path, n_features=X.shape[1], chunk_rows=64)
    assert np.array_equal(streamed.coef_, reference.coef_)
    with pytest.raises(ValueError, match="pass n_features"):
        cwrs.AROW().partial_fit_file(path, classes=[-1, 1])
    with pytest.raises(ValueError, match="classes must be passed"):
        cwrs.AROW().partial_fit_file(path, n_features=X.shape[1])
    with pytest.raises(ValueError, match="features"):
        streamed.partial_fit_file(path, n_features=X.shape[1] + 1)
