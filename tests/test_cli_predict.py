"""`cwrs predict -i MODEL -d DATA -p OUT`: predictions for rows whose label field may be absent
or a placeholder, with the output safety of `test`; and an unknown command named."""

import os

import numpy as np
import pytest

import cwrs
from cwrs.cli import main


def run(capsys, *argv):
    status = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture
def trained(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4))
    y = np.where(X[:, 0] - X[:, 2] > 0, 1, -1)
    model = cwrs.AROW().fit(X, y)
    path = tmp_path / "m.cwrs"
    model.save(path)
    return path, model, X


def lines_of(X, labels):
    """LIBSVM lines of X (one-based), each with the label field given (None: absent)."""
    for row, label in zip(X, labels):
        features = " ".join(f"{j + 1}:{v!r}" for j, v in enumerate(row.tolist()))
        yield features if label is None else f"{label} {features}"


@pytest.mark.parametrize("label", [None, "?", "0", "1", "-1", "nolabel"])
def test_predict_reads_rows_without_labels(capsys, tmp_path, trained, label):
    path, model, X = trained
    data = tmp_path / "new.svm"
    data.write_text("\n".join(lines_of(X, [label] * len(X))) + "\n")
    out_path = tmp_path / "p.txt"
    status, out, err = run(capsys, "predict", "-i", path, "-d", data, "-p", out_path, "-q")
    assert status == 0, err
    assert out_path.read_text().split() == [str(v) for v in model.predict(X)]
    assert out.strip() == f"AROW on new.svm: {len(X)} predictions written to {out_path}"


def test_predict_mixed_label_fields_and_npz_without_y(capsys, tmp_path, trained):
    path, model, X = trained
    data = tmp_path / "mixed.svm"
    labels = [None, "?", "1", None] * (len(X) // 4)
    data.write_text("# new rows\n" + "\n".join(lines_of(X, labels)) + "\n")
    npz = tmp_path / "new.npz"
    np.savez(npz, X=X)
    for source in (data, npz):
        out_path = tmp_path / "p.txt"
        status, out, err = run(capsys, "predict", "-i", path, "-d", source, "-p", out_path,
                               "-q")
        assert status == 0, err
        assert out_path.read_text().split() == [str(v) for v in model.predict(X)]


def test_predict_has_the_output_safety_of_test(capsys, tmp_path, trained):
    path, model, X = trained
    data = tmp_path / "new.svm"
    data.write_text("\n".join(lines_of(X, [None] * len(X))) + "\n")
    before = data.read_bytes()
    status, out, err = run(capsys, "predict", "-i", path, "-d", data, "-p", data, "-q")
    assert status == 1 and "is the same file as -d" in err and data.read_bytes() == before
    # A malformed line: the old predictions stay, no temporary file is left.
    bad = tmp_path / "bad.svm"
    bad.write_text("1:0.5 2:1\n? 3:oops\n")
    old = tmp_path / "p.txt"
    old.write_text("the previous predictions\n")
    listing = sorted(os.listdir(tmp_path))
    status, out, err = run(capsys, "predict", "-i", path, "-d", bad, "-p", old, "-q")
    assert status == 1 and "line 2" in err and err.count("\n") == 1
    assert old.read_text() == "the previous predictions\n"
    assert sorted(os.listdir(tmp_path)) == listing
    # -p is required.
    status, out, err = run(capsys, "predict", "-i", path, "-d", data)
    assert status == 1 and "-p/--predictions" in err


def test_test_still_needs_labels(capsys, tmp_path, trained):
    path, _, X = trained
    data = tmp_path / "new.svm"
    data.write_text("\n".join(lines_of(X, [None] * len(X))) + "\n")
    status, out, err = run(capsys, "test", "-i", path, "-d", data, "-q")
    assert status == 1 and "expected a label" in err


@pytest.mark.parametrize("word", ["predcit", "fit", "svmguide3"])
def test_an_unknown_command_is_named(capsys, word):
    status, out, err = run(capsys, word, "-d", "x")
    assert status == 1 and out == ""
    assert err == (f"cwrs: error: unknown command {word!r}; the commands are compare, train, "
                   "test, predict\n")


def test_help_lists_predict(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "predict" in capsys.readouterr().out
