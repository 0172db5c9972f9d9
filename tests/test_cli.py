"""The `cwrs` command end to end: the default comparison, compare/train/test with --json on the
shared data sets, --plot, and one-line errors with exit status 1. Each result is checked against
the same computation done through the Python API."""

import json
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

import cwrs
from cwrs.cli import main
from _shared_data import shared_data



def run(capsys, *argv):
    """(exit status, stdout, stderr) of `cwrs argv...`, run in this process."""
    status = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def run_json(capsys, *argv):
    status, out, err = run(capsys, *argv, "--json")
    assert status == 0, err
    return json.loads(out)


def test_no_arguments_compares_every_learner_on_the_bundled_data(capsys):
    status, out, err = run(capsys)
    assert status == 0
    lines = out.strip().splitlines()
    n_configs = sum(2 if cls._second_order else 1 for cls in cwrs.CLASSIFIERS)
    assert len(lines) == n_configs + 3  # header, rule, one line per learner, footer
    assert "mistake rate" in lines[0] and "(1243 rows, 5 run(s)" in lines[-1]
    assert "svmguide3" in err


def test_the_console_entry_point_runs_the_main_job():
    """`python -m cwrs --shuffle 2 --json`, as a user would run it, in a subprocess."""
    done = subprocess.run(
        [sys.executable, "-m", "cwrs", "--shuffle", "2", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(done.stdout)
    assert result["runs"] == 2 and result["rows"] == 1243
    assert all(0.0 <= r["mistake_rate"] <= 1.0 for r in result["learners"])
    assert "%|" not in done.stderr  # no progress bar when stderr is not a terminal


def test_compare_json_matches_the_python_api(capsys):
    a1a = shared_data("a1a.libsvm")
    result = run_json(
        capsys, "compare", "-d", a1a, "--learners", "AROW,PA1", "--covariance", "diag",
        "--shuffle", "2", "--seed", "4", "--param", "C=0.5", "--no-bias",
    )
    assert result["rows"] == 1605 and result["features"] == 119 and result["runs"] == 2
    X, y = cwrs.load_svmlight(a1a)
    expected = {}
    for label, model in [("AROW (diag)", cwrs.AROW), ("PA1", lambda **p: cwrs.PA1(C=0.5, **p))]:
        rates = []
        for seed in (4, 5):
            order = np.random.RandomState(seed).permutation(len(y))
            fitted = model(fit_intercept=False).partial_fit(X[order], y[order], classes=[-1, 1])
            rates.append(fitted.n_mistakes_ / len(y))
        expected[label] = np.mean(rates)
    got = {r["learner"]: r["mistake_rate"] for r in result["learners"]}
    assert got == pytest.approx(expected, abs=0)


def png_size(path):
    data = Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    length, kind = struct.unpack(">I4s", data[8:16])
    assert kind == b"IHDR"
    (checksum,) = struct.unpack(">I", data[16 + length : 20 + length])
    assert zlib.crc32(data[12 : 16 + length]) == checksum
    assert data.endswith(b"IEND\xaeB`\x82")
    return struct.unpack(">II", data[16:24])


def test_plot_writes_a_valid_png(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "mistakes.png"
    argv = ["--learners", "AROW,Perceptron", "--shuffle", "2", "--plot", path]
    status, out, err = run(capsys, *argv)
    assert status == 0 and f"wrote {path}" in err
    width, height = png_size(path)
    assert width > 400 and height > 300


def test_plot_without_matplotlib_says_how_to_get_it(capsys, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib` fail
    status, out, err = run(capsys, "--plot", tmp_path / "m.png")
    assert status == 1 and out == ""
    assert err.strip() == (
        'cwrs: error: --plot needs matplotlib: pip install ".[plot]" in a clone of cwrs (no '
        "release on a package index yet)"
    )


def test_workers_without_dask_say_how_to_install_it_from_a_clone(capsys, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "distributed", None)  # makes `import distributed` fail
    status, out, err = run(capsys, "train", "-a", "PA", "-d", "svmguide3", "-o",
                           tmp_path / "m.cwrs", "--workers", "2", "-q")
    assert status == 1 and out == ""
    assert 'pip install ".[dask]" in a clone of cwrs' in err and "cwrs[" not in err
    assert not (tmp_path / "m.cwrs").exists()


def test_train_then_test_matches_the_python_api(capsys, tmp_path):
    a1a, a1a_test = shared_data("a1a.libsvm"), shared_data("a1a.t.libsvm")
    model_path, predictions = tmp_path / "a1a.cwrs", tmp_path / "predictions.txt"
    trained = run_json(
        capsys, "train", "-a", "AROW", "--param", "r=0.5", "-d", a1a, "-o", model_path,
        "--passes", "2", "--no-shuffle",
    )
    X, y = cwrs.load_svmlight(a1a)
    reference = cwrs.AROW(r=0.5).partial_fit(X, y, classes=[-1, 1]).partial_fit(X, y)
    assert trained["passes"] == 2 and trained["rows"] == 1605
    assert trained["mistakes"] == reference.n_mistakes_
    assert trained["updates"] == reference.n_updates_
    assert trained["classes"] == [-1.0, 1.0]
    np.testing.assert_array_equal(cwrs.load(model_path).coef_, reference.coef_)

    tested = run_json(capsys, "test", "-i", model_path, "-d", a1a_test, "-p", predictions)
    X_test, y_test = cwrs.load_svmlight(a1a_test, n_features=X.shape[1])
    predicted = reference.predict(X_test)
    assert tested["rows"] == len(y_test)
    assert tested["accuracy"] == np.mean(predicted == y_test)
    written = np.loadtxt(predictions)
    np.testing.assert_array_equal(written, predicted)


@pytest.mark.parametrize("option, class_weight", [
    ("balanced", "balanced"), ("1=4,-1=0.5", {1.0: 4.0, -1.0: 0.5}), ("1=3", {1.0: 3.0}),
])
def test_train_with_class_weights_matches_the_python_api(capsys, tmp_path, option, class_weight):
    w1a = shared_data("w1a.libsvm")
    model_path = tmp_path / "w1a.cwrs"
    trained = run_json(capsys, "train", "-a", "AROW", "-d", w1a, "-o", model_path,
                       "--no-shuffle", "--class-weight", option)
    X, y = cwrs.load_svmlight(w1a)
    reference = cwrs.AROW(class_weight=class_weight)
    for part in range(0, X.shape[0], 10_000):  # the CLI's chunks: the whole file
        reference.partial_fit(X[part : part + 10_000], y[part : part + 10_000], classes=[-1, 1])
    assert trained["mistakes"] == reference.n_mistakes_
    np.testing.assert_array_equal(cwrs.load(model_path).coef_, reference.coef_)
    status, _, err = run(capsys, "train", "-a", "AROW", "-d", w1a, "-o", tmp_path / "x.cwrs",
                         "--class-weight", "7=2")
    assert status != 0 and "one of the labels" in err and not (tmp_path / "x.cwrs").exists()


@pytest.mark.parametrize("shuffle", ["--no-shuffle", "--shuffle"])
def test_train_with_a_weights_file_matches_the_python_api(capsys, tmp_path, shuffle):
    """--weights gives each row its weight, kept with its row through the shuffle: the model of
    sample_weight on the same rows in the same order."""
    a1a = shared_data("a1a.libsvm")
    X, y = cwrs.load_svmlight(a1a)
    weights = np.random.default_rng(4).uniform(0.0, 3.0, size=len(y))
    weights[::9] = 0.0
    weight_file = tmp_path / "weights.txt"
    weight_file.write_text("".join(f"{w!r}\n" for w in weights.tolist()))
    model_path = tmp_path / "a1a.cwrs"
    trained = run_json(capsys, "train", "-a", "SCW1", "-d", a1a, "-o", model_path, shuffle,
                       "--seed", "3", "--weights", weight_file, "--class-weight", "balanced")
    order = np.arange(len(y))
    if shuffle == "--shuffle":  # the CLI's shuffle: a permutation when the buffer holds every row
        order = np.random.default_rng(3).permutation(len(y))
    reference = cwrs.SCW1(class_weight="balanced").partial_fit(
        X[order], y[order], classes=[-1, 1], sample_weight=weights[order])
    assert trained["weights"] == str(weight_file)
    np.testing.assert_array_equal(cwrs.load(model_path).coef_, reference.coef_)
    np.testing.assert_array_equal(cwrs.load(model_path).class_counts_, reference.class_counts_)


@pytest.mark.parametrize("content, error", [
    ("1\n2\n", "has 2 weights for 1605 rows"),
    ("1\n-1\n" + "1\n" * 1603, "line 2: '-1' is not a weight"),
    ("1\nnan\n" + "1\n" * 1603, "line 2: 'nan' is not a weight"),
    ("1\nheavy\n" + "1\n" * 1603, "line 2: 'heavy' is not a weight"),
])
def test_a_bad_weights_file_is_refused_before_anything_is_written(capsys, tmp_path, content,
                                                                  error):
    weight_file = tmp_path / "weights.txt"
    weight_file.write_text(content)
    model_path = tmp_path / "model.cwrs"
    status, _, err = run(capsys, "train", "-a", "AROW", "-d", shared_data("a1a.libsvm"), "-o",
                         model_path, "--weights", weight_file)
    assert status != 0 and error in err and not model_path.exists()
    status, _, err = run(capsys, "train", "-a", "AROW", "-d", shared_data("a1a.libsvm"), "-o",
                         weight_file, "--weights", weight_file)
    assert status != 0 and "same file" in err and weight_file.read_text() == content


def test_full_covariance_training_in_text_mode(capsys, tmp_path):
    breast_cancer = shared_data("breast_cancer.libsvm")
    model_path = tmp_path / "bc.cwrs"
    status, out, err = run(
        capsys, "train", "-a", "SCW1", "--covariance", "full", "-d", breast_cancer, "-o", model_path
    )
    assert status == 0
    assert "SCW1 on breast_cancer.libsvm: 569 rows × 1 pass(es)" in out
    assert "online mistakes" in out and f"model written to {model_path}" in out
    assert cwrs.load(model_path).covariance_.shape == (30, 30)
    status, out, err = run(capsys, "test", "-i", model_path, "-d", breast_cancer, "-q")
    assert status == 0 and out.startswith("SCW1 on breast_cancer.libsvm (569 rows): accuracy ")
    assert err == ""


def test_regression_and_multiclass_from_npz(capsys, tmp_path):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 5))
    targets = X @ np.array([1.0, -2.0, 0.5, 0.0, 3.0]) + 0.01 * rng.normal(size=300)
    np.savez(tmp_path / "reg.npz", X=X, y=targets)
    run_json(capsys, "train", "-a", "AROWRegressor", "-d", tmp_path / "reg.npz",
             "-o", tmp_path / "reg.cwrs", "--no-shuffle")
    result = run_json(capsys, "test", "-i", tmp_path / "reg.cwrs", "-d", tmp_path / "reg.npz")
    reference = cwrs.AROWRegressor().partial_fit(X, targets)
    errors = reference.predict(X) - targets
    assert result["mse"] == pytest.approx(np.mean(errors**2), rel=1e-12)
    assert result["r2"] > 0.99

    labels = np.argmax(X[:, :3], axis=1)
    np.savez(tmp_path / "three.npz", X=X, y=labels)
    trained = run_json(capsys, "train", "-a", "NAROW", "-d", tmp_path / "three.npz",
                       "-o", tmp_path / "three.cwrs")
    assert trained["classes"] == [0, 1, 2]
    tested = run_json(capsys, "test", "-i", tmp_path / "three.cwrs", "-d", tmp_path / "three.npz")
    assert tested["accuracy"] > 0.8


def test_version(capsys):
    with pytest.raises(SystemExit) as exit:
        main(["--version"])
    assert exit.value.code == 0
    assert capsys.readouterr().out.strip() == f"cwrs {cwrs.__version__}"


def malformed(tmp_path):
    path = tmp_path / "bad.svm"
    path.write_text("+1 1:0.5 2:1\n-1 3:oops\n")
    return path


def model_file(tmp_path):
    path = tmp_path / "m.cwrs"
    cwrs.PA().fit(np.eye(3), [0, 1, 1]).save(path)
    return path


BAD = {
    "missing data file": (["-d", "/nonexistent.svm"], "/nonexistent.svm: no such file"),
    "unknown learner": (["train", "-a", "Nope", "-d", "svmguide3", "-o", "x"], "unknown learner"),
    "compare a regressor": (["--learners", "AROWRegressor"], "unknown learner 'AROWRegressor'"),
    "param without value": (["--param", "r"], "--param takes NAME=VALUE"),
    "unknown parameter": (
        ["train", "-a", "PA", "--param", "r=1", "-d", "svmguide3", "-o", "x"],
        "PA has no parameter r",
    ),
    "unknown parameter lists the names": (
        ["train", "-a", "AROW", "--param", "C=1", "-d", "svmguide3", "-o", "x"],
        "AROW has no parameter C; its parameters are a, alpha, ",
    ),
    "bad value refused before the data is read": (
        ["train", "-a", "AROW", "--param", "r=abc", "-d", malformed, "-o", "x"],
        "--param: AROW: r must",
    ),
    "bad value refused before compare reads the data": (
        ["compare", "--learners", "AROW", "--param", "r=abc", "-d", malformed],
        "--param: AROW: r must",
    ),
    "parameter of no learner": (
        ["--learners", "PA,AROW", "--param", "rr=1"],
        "no chosen learner has the parameter rr",
    ),
    "bad hyper-parameter": (
        ["train", "-a", "AROW", "--param", "r=-1", "-d", "svmguide3", "-o", "x"],
        "r must be",
    ),
    "zero passes": (["train", "-a", "PA", "-d", "svmguide3", "-o", "x", "--passes", "0"],
                    "argument --passes: must be >= 1, got 0"),
    "output folder missing": (
        ["train", "-a", "PA", "-d", "svmguide3", "-o", "/nonexistent/m.cwrs"],
        "/nonexistent/m.cwrs: its folder does not exist",
    ),
    "malformed line": (["train", "-a", "PA", "-d", malformed, "-o", "x"], "line 2"),
    "not a model": (["test", "-i", malformed, "-d", "svmguide3"], "not a cwrs model file"),
    "missing model": (["test", "-i", "/nonexistent.cwrs", "-d", "svmguide3"],
                      "/nonexistent.cwrs: No such file"),
    "wrong width": (["test", "-i", model_file, "-d", "svmguide3"], "the model expects 3"),
}


@pytest.mark.parametrize("case", list(BAD), ids=list(BAD))
def test_bad_input_gives_one_line_and_status_1(capsys, tmp_path, case):
    argv, message = BAD[case]
    argv = [a(tmp_path) if callable(a) else a for a in argv]
    status, out, err = run(capsys, *argv, "-q")
    assert status == 1 and out == ""
    assert err.count("\n") == 1 and err.startswith("cwrs: error: ")
    assert message in err
    assert not os.path.exists("x")


def test_quiet_silences_diagnostics(capsys):
    status, out, err = run(capsys, "--learners", "PA", "-q")
    assert status == 0 and err == "" and "PA" in out


def test_progress_bar_on_a_terminal(capsys, monkeypatch, tmp_path):
    pytest.importorskip("tqdm")

    class Terminal:
        """Stands in for a terminal on stderr: tqdm draws its bar there."""

        def __init__(self):
            self.text = []

        def isatty(self):
            return True

        def write(self, text):
            self.text.append(text)

        def flush(self):
            pass

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["train", "-a", "AROW", "-d", "svmguide3", "-o", str(tmp_path / "m.cwrs")]) == 0
    drawn = "".join(terminal.text)
    assert "train:" in drawn and "/1243" in drawn and "rows/s" in drawn
    terminal.text.clear()
    assert main(["train", "-a", "AROW", "-d", "svmguide3", "-o", str(tmp_path / "m.cwrs"), "-q"]) == 0
    assert terminal.text == []
