"""The `cwrs` command never destroys a user's file and fails cleanly: outputs that are inputs are
refused, outputs appear only when complete, every path is checked before any work, bad options
and data end with one line and exit status 1, JSON is standard, labels that do not fit the model
are caught; `compare --plot` keeps honest timings; `train` shuffles (exactly, or through a
bounded buffer) and reports its final training accuracy. All data is generated here."""

import argparse
import contextlib
import errno
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import threading

import numpy as np
import pytest

import cwrs
from cwrs import _files, cli
from cwrs.cli import io as cli_io
from cwrs.cli import main


def run(capsys, *argv):
    """(exit status, stdout, stderr) of `cwrs argv...`, run in this process."""
    status = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def strict_json(text):
    """`text` parsed as standard JSON (NaN and Infinity are not JSON)."""

    def refuse(constant):
        raise ValueError(f"non-standard JSON constant {constant}")

    return json.loads(text, parse_constant=refuse)


def classification(n_rows=300, n_features=4, seed=0, sort=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features))
    y = np.where(X[:, 0] + 0.3 * X[:, 1] > 0, 1, -1)
    if sort:  # sorted by label, like svmguide3
        order = np.argsort(y, kind="stable")
        X, y = X[order], y[order]
    return X, y


def write_svm(path, X, y):
    with open(path, "w") as out:
        for row, label in zip(X, y):
            features = " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(row) if v != 0)
            out.write(f"{label} {features}\n")
    return path


@pytest.fixture
def files(tmp_path):
    """A LIBSVM file, an .npz file and a model trained on them."""
    X, y = classification()
    data = write_svm(tmp_path / "data.svm", X, y)
    npz = tmp_path / "data.npz"
    np.savez(npz, X=X, y=y)
    model = tmp_path / "m.cwrs"
    cwrs.AROW().fit(X, y).save(model)
    return data, npz, model


def contents(*paths):
    return {str(p): p.read_bytes() for p in paths}


def assert_refused(capsys, argv, message, untouched):
    """`cwrs argv` fails with one line naming `message` and leaves `untouched` as they were."""
    before = contents(*untouched)
    folder_before = {p.parent: sorted(os.listdir(p.parent)) for p in untouched}
    status, out, err = run(capsys, *argv)
    assert status == 1 and out == "", err
    assert err.startswith("cwrs: error: ") and err.count("\n") == 1, err
    assert message in err
    assert contents(*untouched) == before
    assert {p.parent: sorted(os.listdir(p.parent)) for p in untouched} == folder_before


# ------------------------------------------------------------------ outputs that are inputs
def test_predictions_over_the_data_file_are_refused(capsys, files):
    data, _, model = files
    argv = ["test", "-i", model, "-d", data, "-p", data]
    assert_refused(capsys, argv, f"-p {data} is the same file as -d", [data, model])


def test_predictions_over_the_model_are_refused(capsys, files):
    data, _, model = files
    argv = ["test", "-i", model, "-d", data, "-p", model]
    assert_refused(capsys, argv, f"-p {model} is the same file as -i", [data, model])


def test_model_over_the_training_data_is_refused(capsys, files):
    data, npz, _ = files
    for source in (data, npz):
        argv = ["train", "-a", "AROW", "-d", source, "-o", source]
        assert_refused(capsys, argv, f"-o {source} is the same file as -d", [source])


def test_plot_over_the_data_is_refused(capsys, files):
    pytest.importorskip("matplotlib")
    data, _, _ = files
    argv = ["compare", "-d", data, "--learners", "PA", "--plot", data]
    assert_refused(capsys, argv, f"--plot {data} is the same file as -d", [data])


def test_links_to_an_input_count_as_the_input(capsys, files, tmp_path):
    data, _, model = files
    hard, soft = tmp_path / "hard.svm", tmp_path / "soft.svm"
    os.link(data, hard)
    os.symlink(data, soft)
    for alias in (hard, soft):
        argv = ["test", "-i", model, "-d", data, "-p", alias]
        assert_refused(capsys, argv, "is the same file as -d", [data, model])
        argv = ["train", "-a", "PA", "-d", alias, "-o", data]
        assert_refused(capsys, argv, "is the same file as -d", [data])


def test_two_outputs_that_are_one_file_are_refused(tmp_path):
    """No command has two outputs yet; the check they would go through is tested directly."""
    target = tmp_path / "out"
    os.symlink(target, tmp_path / "alias")  # a dangling link to an output not yet written
    (tmp_path / "sub").mkdir()
    for other in (target, tmp_path / "alias", tmp_path / "sub" / ".." / "out"):
        outputs = [("-o", target, True), ("-p", other, False)]
        with pytest.raises(cli.UsageError, match="is the same file as -o"):
            with contextlib.ExitStack() as stack:
                cli.open_outputs(stack, outputs, [])
    assert sorted(os.listdir(tmp_path)) == ["alias", "sub"]


def test_a_failing_test_leaves_the_old_predictions(capsys, files, tmp_path):
    _, _, model = files
    bad = tmp_path / "bad.svm"
    bad.write_text("1 1:0.5 2:1\n" * 20_001 + "-1 3:oops\n")  # fails in its third chunk
    predictions = tmp_path / "predictions.txt"
    predictions.write_text("the previous predictions\n")
    argv = ["test", "-i", model, "-d", bad, "-p", predictions]
    assert_refused(capsys, argv, "line 20002", [predictions, model])


def test_a_failing_test_creates_no_predictions(capsys, files, tmp_path):
    _, npz, model = files
    X, _ = classification()
    np.savez(tmp_path / "strings.npz", X=X, y=np.array(["a", "b"] * 150))
    predictions = tmp_path / "predictions.txt"
    status, out, err = run(capsys, "test", "-i", model, "-d", tmp_path / "strings.npz",
                           "-p", predictions)
    assert status == 1 and not predictions.exists()
    assert sorted(os.listdir(tmp_path)) == ["data.npz", "data.svm", "m.cwrs", "strings.npz"]


def test_outputs_replace_a_file_completely_and_keep_its_mode(capsys, files, tmp_path):
    data, _, model = files
    predictions = tmp_path / "predictions.txt"
    predictions.write_text("x\n" * 10_000)
    os.chmod(predictions, 0o640)
    status, out, err = run(capsys, "test", "-i", model, "-d", data, "-p", predictions)
    assert status == 0, err
    assert predictions.read_text().split() == [
        str(v) for v in cwrs.load(model).predict(classification()[0])
    ]
    assert os.stat(predictions).st_mode & 0o777 == 0o640


def test_an_output_through_a_symlink_replaces_the_file_it_points_to(capsys, files, tmp_path):
    data, _, _ = files
    (tmp_path / "models").mkdir()
    real = tmp_path / "models" / "v1.cwrs"
    real.write_bytes(b"old")
    link = tmp_path / "current.cwrs"
    os.symlink(real, link)
    status, out, err = run(capsys, "train", "-a", "PA", "-d", data, "-o", link, "-q")
    assert status == 0, err
    assert os.path.islink(link) and isinstance(cwrs.load(real), cwrs.PA)


class FullDisk:
    """A file on a full disk: every write fails."""

    def __init__(self, file):
        self.file = file

    def write(self, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def writelines(self, lines):
        self.write(None)

    def __getattr__(self, name):  # all but writing works as on the real file
        return getattr(self.file, name)

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        self.file.close()


@pytest.mark.parametrize("command", ["train", "test"])
def test_a_full_disk_names_the_output_and_keeps_the_old_file(capsys, files, monkeypatch,
                                                              tmp_path, command):
    data, _, model = files
    old = tmp_path / "old.out"
    old.write_text("the previous output\n")
    fdopen = os.fdopen
    monkeypatch.setattr(cli.os, "fdopen", lambda *args: FullDisk(fdopen(*args)))
    argv = {
        "train": ["train", "-a", "AROW", "-d", data, "-o", old],
        "test": ["test", "-i", model, "-d", data, "-p", old],
    }[command]
    option = argv[-2]
    assert_refused(capsys, [*argv, "-q"], f"{option} {old}: No space left on device", [old])


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_predictions_to_a_full_device(capsys, files):
    data, _, model = files
    status, out, err = run(capsys, "test", "-i", model, "-d", data, "-p", "/dev/full", "-q")
    assert status == 1 and err == "cwrs: error: -p /dev/full: No space left on device\n"


# ---------------------------------------------------------------- paths checked up front
@pytest.mark.parametrize(
    "output, message",
    [
        ("{tmp}", "is a folder"),
        ("{tmp}/new/", "is a folder"),
        ("{tmp}/missing/m.out", "its folder does not exist"),
    ],
)
@pytest.mark.parametrize("command", ["train", "compare", "test"])
def test_output_paths_are_checked_before_any_work(capsys, files, tmp_path, command, output,
                                                   message):
    data, _, model = files
    output = output.format(tmp=tmp_path)
    argv = {
        "train": ["train", "-a", "AROW", "-d", data, "-o", output],
        "compare": ["compare", "-d", data, "--learners", "PA", "--plot", output],
        "test": ["test", "-i", model, "-d", data, "-p", output],
    }[command]
    if command == "compare":
        pytest.importorskip("matplotlib")
    status, out, err = run(capsys, *argv)  # not quiet: no diagnostic may come before the error
    assert status == 1 and out == ""
    assert err.startswith("cwrs: error: ") and err.count("\n") == 1, err
    assert message in err


def test_an_unwritable_folder_is_refused_before_training(capsys, files, monkeypatch, tmp_path):
    """The temporary output is created first, so a folder the user cannot write in stops the
    command before it reads any data (simulated: the tests may run as root)."""
    data, _, _ = files

    def denied(directory, name):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(_files, "_create_temporary", denied)
    monkeypatch.setattr(cli, "scan", lambda *args, **kwargs: pytest.fail("data was read"))
    status, out, err = run(capsys, "train", "-a", "AROW", "-d", data, "-o", tmp_path / "m.cwrs")
    assert status == 1 and out == ""
    assert err == f"cwrs: error: -o {tmp_path / 'm.cwrs'}: cannot write in {tmp_path} " \
        "(Permission denied)\n"


def test_a_model_is_only_read_from_a_regular_file(tmp_path, files):
    """A FIFO as the model would block `cwrs test` forever; it is refused at once (a
    subprocess, so that a regression fails by its timeout instead of hanging the suite)."""
    data, _, _ = files
    fifo = tmp_path / "model.fifo"
    os.mkfifo(fifo)
    done = subprocess.run(
        [sys.executable, "-m", "cwrs", "test", "-i", fifo, "-d", data],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 1
    assert done.stderr == f"cwrs: error: {str(fifo)!r} is a FIFO, not a model file: cwrs.load " \
        "reads regular files (to read from a pipe, pass an open binary file)\n"


def test_predictions_to_a_fifo_are_written_through(tmp_path, files):
    data, _, model = files
    fifo = tmp_path / "predictions.fifo"
    os.mkfifo(fifo)
    received = []

    def read():
        with open(fifo) as reader:  # waits for the writer
            received.append(reader.read())

    reader = threading.Thread(target=read, daemon=True)  # never blocks the exit of the tests
    reader.start()
    done = subprocess.run(
        [sys.executable, "-m", "cwrs", "test", "-i", model, "-d", data, "-p", fifo, "-q"],
        capture_output=True, text=True, timeout=120,
    )
    reader.join(timeout=120)
    assert done.returncode == 0, done.stderr
    expected = cwrs.load(model).predict(classification()[0])
    assert received[0].split() == [str(v) for v in expected]
    assert {p.name for p in tmp_path.iterdir()} == {"data.svm", "data.npz", "m.cwrs",
                                                    "predictions.fifo"}


def test_a_fifo_that_nobody_reads_is_an_error_not_a_hang(tmp_path, files):
    data, _, model = files
    fifo = tmp_path / "predictions.fifo"
    os.mkfifo(fifo)
    done = subprocess.run(
        [sys.executable, "-m", "cwrs", "test", "-i", model, "-d", data, "-p", fifo],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 1
    assert "no process reads it (a FIFO needs its reader started first)" in done.stderr
    assert done.stderr.count("\n") == 1


def test_predictions_to_dev_stdout(files):
    data, _, model = files
    done = subprocess.run(
        [sys.executable, "-m", "cwrs", "test", "-i", model, "-d", data, "-p", "/dev/stdout",
         "-q"],
        capture_output=True, text=True, timeout=120, check=True,
    )
    lines = done.stdout.splitlines()
    expected = cwrs.load(model).predict(classification()[0])
    assert lines[:-1] == [str(v) for v in expected]
    assert lines[-1].startswith("AROW on data.svm (300 rows): accuracy ")


@pytest.fixture
def tmpfs_folder():
    """A private folder on the /dev/shm tmpfs: regular files under /dev."""
    if not (os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK)):
        pytest.skip("no writable /dev/shm")
    folder = tempfile.mkdtemp(prefix="cwrs-test-", dir="/dev/shm")
    yield pathlib.Path(folder)
    shutil.rmtree(folder, ignore_errors=True)


def test_regular_files_under_dev_are_replaced_atomically(capsys, files, tmpfs_folder):
    data, _, model = files
    new = tmpfs_folder / "new.cwrs"
    status, out, err = run(capsys, "train", "-a", "AROW", "-d", data, "-o", new, "-q")
    assert status == 0, err
    assert cwrs.load(new).n_features_in_ == 4
    # Over a larger model, and over longer predictions: the new content only.
    larger = tmpfs_folder / "larger.cwrs"
    cwrs.AROW(covariance="full").fit(np.eye(40), np.arange(40) % 2).save(larger)
    status, out, err = run(capsys, "train", "-a", "AROW", "-d", data, "-o", larger, "-q")
    assert status == 0, err
    assert larger.read_bytes() == new.read_bytes()
    predictions = tmpfs_folder / "predictions.txt"
    predictions.write_text("an old line\n" * 10_000)
    status, out, err = run(capsys, "test", "-i", model, "-d", data, "-p", predictions, "-q")
    assert status == 0, err
    expected = [str(v) for v in cwrs.load(model).predict(classification()[0])]
    assert predictions.read_text().splitlines() == expected
    assert sorted(os.listdir(tmpfs_folder)) == ["larger.cwrs", "new.cwrs", "predictions.txt"]


def test_save_to_a_new_file_under_dev_shm(tmpfs_folder):
    X, y = classification()
    model = cwrs.AROW().fit(X, y)
    model.save(tmpfs_folder / "m.cwrs")
    np.testing.assert_array_equal(cwrs.load(tmpfs_folder / "m.cwrs").predict(X), model.predict(X))


@pytest.mark.parametrize("redirect", ["w", "a"])
def test_predictions_to_dev_stdout_redirected_to_a_file(files, tmp_path, redirect):
    """`-p /dev/stdout > out.txt` (or `>>`): the predictions, then the report, where the
    redirection puts them; nothing written before is overwritten."""
    data, _, model = files
    out = tmp_path / "out.txt"
    out.write_text("before\n")
    with open(out, redirect) as stdout:
        subprocess.run(
            [sys.executable, "-m", "cwrs", "test", "-i", model, "-d", data, "-p",
             "/dev/stdout", "-q"],
            stdout=stdout, stderr=subprocess.PIPE, timeout=120, check=True,
        )
    lines = out.read_text().splitlines()
    if redirect == "a":
        assert lines.pop(0) == "before"
    expected = cwrs.load(model).predict(classification()[0])
    assert lines[:-1] == [str(v) for v in expected]
    assert lines[-1].startswith("AROW on data.svm (300 rows): accuracy ")


def test_a_closed_stdout_ends_quietly():
    """`cwrs ... | head -1`: when the reader of stdout has gone, no traceback and no "Exception
    ignored" message at exit."""
    process = subprocess.Popen(
        [sys.executable, "-m", "cwrs", "--learners", "PA", "--shuffle", "1", "-q"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    process.stdout.close()  # before cwrs writes anything
    _, err = process.communicate(timeout=120)
    assert err == b"" and process.returncode == 1


# ---------------------------------------------------------------------- bad data and options
def test_a_file_that_is_not_a_model_is_named(capsys, files):
    data, npz, _ = files
    status, out, err = run(capsys, "test", "-i", npz, "-d", data)
    assert status == 1 and err.startswith(f"cwrs: error: {npz}: not a cwrs model file")


def test_npz_with_one_dimensional_X(capsys, tmp_path):
    np.savez(tmp_path / "flat.npz", X=np.arange(10.0), y=np.arange(10) % 2)
    for argv in (["train", "-a", "PA", "-o", tmp_path / "m.cwrs"], ["compare"]):
        status, out, err = run(capsys, *argv, "-d", tmp_path / "flat.npz", "-q")
        assert status == 1 and "X must be 2-D" in err and err.count("\n") == 1
    assert not (tmp_path / "m.cwrs").exists()


def test_npz_files_that_are_not_numeric_arrays(capsys, tmp_path):
    X, y = classification()
    np.savez(tmp_path / "good.npz", X=X, y=y)
    (tmp_path / "truncated.npz").write_bytes((tmp_path / "good.npz").read_bytes()[:300])
    (tmp_path / "text.npz").write_text("hello\n")
    np.savez(tmp_path / "objects.npz", X=np.array([[1, "a"]], dtype=object), y=np.array([1]))
    for name in ("truncated.npz", "text.npz", "objects.npz"):
        status, out, err = run(capsys, "compare", "-d", tmp_path / name, "-q")
        assert status == 1 and err.count("\n") == 1
        assert f"{name}: not a readable .npz file of numeric arrays X and y" in err


@pytest.mark.parametrize(
    "value, message",
    [
        ("0", "argument --n-features: must be >= 1, got 0"),
        ("-5", "argument --n-features: must be >= 1, got -5"),
        ("wide", "argument --n-features: expected an integer, got 'wide'"),
        ("1000000000000", "not enough memory"),
    ],
)
def test_n_features(capsys, files, tmp_path, value, message):
    data, _, _ = files
    argv = ["train", "-a", "AROW", "-d", data, "-o", tmp_path / "w.cwrs", "--n-features", value]
    status, out, err = run(capsys, *argv, "-q")
    assert status == 1 and out == "" and err.count("\n") == 1
    assert message in err
    assert not (tmp_path / "w.cwrs").exists()


def test_a_model_too_large_to_save_is_one_line_and_no_file(capsys, files, monkeypatch, tmp_path):
    data, _, _ = files

    def out_of_memory(self, file):
        raise MemoryError

    monkeypatch.setattr(cwrs.AROW, "save", out_of_memory)
    before = sorted(os.listdir(tmp_path))
    status, out, err = run(capsys, "train", "-a", "AROW", "-d", data, "-o", tmp_path / "w.cwrs",
                           "-q")
    assert status == 1 and out == ""
    assert err == f"cwrs: error: not enough memory to write the model of 4 features to " \
        f"{tmp_path / 'w.cwrs'}\n"
    assert sorted(os.listdir(tmp_path)) == before


@pytest.mark.parametrize(
    "failure, status, message",
    [
        (KeyboardInterrupt, 130, "cwrs: interrupted"),
        (KeyError("oops"), 1, "cwrs: error: internal error (KeyError: 'oops'); please report it"),
    ],
)
def test_an_interrupted_or_failing_train_keeps_the_old_model(capsys, files, monkeypatch,
                                                             failure, status, message):
    data, _, model = files

    def fail(self, *args, **kwargs):
        raise failure

    monkeypatch.setattr(cwrs.AROW, "partial_fit", fail)
    before = sorted(os.listdir(model.parent))
    outcome = run(capsys, "train", "-a", "AROW", "-d", data, "-o", model, "-q")
    assert outcome == (status, "", message + "\n")
    assert sorted(os.listdir(model.parent)) == before
    assert isinstance(cwrs.load(model), cwrs.AROW)


def test_json_is_standard_when_a_metric_is_not_finite(capsys, tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 2))
    np.savez(tmp_path / "huge.npz", X=X, y=1e300 * np.sign(X[:, 0]))
    cwrs.AROWRegressor().fit(X, np.sign(X[:, 0])).save(tmp_path / "reg.cwrs")
    status, out, err = run(capsys, "test", "-i", tmp_path / "reg.cwrs", "-d",
                           tmp_path / "huge.npz", "--json")
    assert status == 0, err
    result = strict_json(out)
    assert result["mse"] is None and result["non_finite"]["mse"] == "inf"
    assert "not finite, written as null in the JSON: mse" in err


def test_compare_on_an_empty_file(capsys, tmp_path):
    (tmp_path / "empty.svm").write_text("")
    status, out, err = run(capsys, "compare", "-d", tmp_path / "empty.svm", "-q")
    assert status == 1 and err == f"cwrs: error: {tmp_path / 'empty.svm'}: no rows\n"


def test_labels_that_share_nothing_with_the_classes_are_refused(capsys, tmp_path):
    X, y = classification()
    np.savez(tmp_path / "words.npz", X=X, y=np.where(y > 0, "spam", "ham"))
    np.savez(tmp_path / "numbers.npz", X=X, y=y)
    status, _, err = run(capsys, "train", "-a", "AROW", "-d", tmp_path / "words.npz",
                         "-o", tmp_path / "words.cwrs", "-q")
    assert status == 0, err
    status, out, err = run(capsys, "test", "-i", tmp_path / "words.cwrs", "-d",
                           tmp_path / "numbers.npz")
    assert status == 1 and out == ""
    assert "none of its labels (-1, 1) is a class of the model (ham, spam)" in err


def test_labels_partly_unknown_to_the_model_are_warned_about(capsys, tmp_path):
    X, y = classification()
    cwrs.AROW().fit(X, y).save(tmp_path / "m.cwrs")
    np.savez(tmp_path / "three.npz", X=X, y=np.where(np.arange(300) % 10 == 0, 7, y))
    status, out, err = run(capsys, "test", "-i", tmp_path / "m.cwrs", "-d",
                           tmp_path / "three.npz", "-q", "--json")
    assert status == 0
    assert err == (f"cwrs: warning: {tmp_path / 'three.npz'}: the labels 7 are not classes of "
                   "the model (-1, 1); their rows count as errors\n")
    assert strict_json(out)["accuracy"] <= 0.9


def test_a_regressor_tested_on_class_names(capsys, tmp_path):
    X, y = classification()
    cwrs.AROWRegressor().fit(X, X[:, 0]).save(tmp_path / "reg.cwrs")
    np.savez(tmp_path / "words.npz", X=X, y=np.where(y > 0, "spam", "ham"))
    status, out, err = run(capsys, "test", "-i", tmp_path / "reg.cwrs", "-d",
                           tmp_path / "words.npz")
    assert status == 1 and err.count("\n") == 1
    assert "a regressor needs numeric targets, but they are <U4" in err


def test_compare_on_regression_data_says_what_to_do(capsys, tmp_path):
    X, _ = classification()
    np.savez(tmp_path / "reg.npz", X=X, y=X[:, 0] + 0.25)
    for argv in (["compare"], ["train", "-a", "AROW", "-o", tmp_path / "m.cwrs"]):
        status, out, err = run(capsys, *argv, "-d", tmp_path / "reg.npz", "-q")
        assert status == 1 and err.count("\n") == 1
        assert "has continuous targets" in err and "needs class labels" in err
        assert "cwrs train -a AROWRegressor" in err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["train", "-a", "AROW", "-o", "m.cwrs", "--param", "n_iter=3"],
         "--param n_iter has no effect in cwrs train; its option is --passes"),
        (["train", "-a", "AROW", "-o", "m.cwrs", "--param", "random_state=3"],
         "--param random_state has no effect in cwrs train; its option is --seed"),
        (["compare", "--param", "shuffle=true"],
         "--param shuffle has no effect in cwrs compare; its option is --shuffle N"),
    ],
)
def test_fit_parameters_point_to_the_command_options(capsys, files, argv, message):
    data, _, _ = files
    status, out, err = run(capsys, *argv, "-d", data, "-q")
    assert status == 1 and err == f"cwrs: error: {message}\n"
    assert not os.path.exists("m.cwrs")


# ------------------------------------------------------------------------- exit statuses
@pytest.mark.parametrize(
    "argv",
    [
        ["train", "-a", "AROW"],  # missing required options
        ["--covariance", "dense"],  # a bad choice
        ["--shuffle", "-1"],
        ["test", "-i", "m.cwrs", "-d", "x", "--frobnicate"],  # an unknown option
    ],
)
def test_usage_errors_are_one_line_with_status_1(capsys, argv):
    status, out, err = run(capsys, *argv)
    assert status == 1 and out == ""
    assert err.startswith("cwrs: error: ") and err.count("\n") == 1 and "--help" in err


def test_every_command_and_option_has_help():
    top = cli.parser()
    (commands,) = [a for a in top._actions if isinstance(a, argparse._SubParsersAction)]
    assert {c.dest for c in commands._choices_actions} == set(cli.COMMANDS)
    assert all(c.help for c in commands._choices_actions)
    for name, sub in commands.choices.items():
        assert sub.description and "Exit status: 0 on success, 1 for any error" in sub.epilog
        for action in sub._actions:
            assert action.help, f"cwrs {name} {action.option_strings} has no help"
    assert "Exit status" in top.format_help()


# ---------------------------------------------------------------- compare --plot timings
def test_plot_changes_neither_the_results_nor_how_they_are_timed(capsys, monkeypatch, tmp_path):
    """With --plot the learning is still timed as one call per learner and order (a clock that
    ticks once per reading gives 1 second per run), and the mistakes and updates are those
    of the run without a plot."""
    pytest.importorskip("matplotlib")
    ticks = iter(range(10**6))
    monkeypatch.setattr(cli.time, "perf_counter", lambda: float(next(ticks)))
    argv = ["--learners", "AROW,PA", "--shuffle", "2", "--json", "-q"]
    status, out, _ = run(capsys, *argv)
    plain = strict_json(out)
    status, out, err = run(capsys, *argv, "--plot", tmp_path / "m.png")
    assert status == 0, err
    plotted = strict_json(out)
    assert [r["seconds"] for r in plotted["learners"]] == [1.0, 1.0, 1.0]
    assert plotted == plain
    assert (tmp_path / "m.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(
    "learner, n_classes",
    [(cwrs.AROW, 2), (cwrs.PA, 2), (cwrs.AROW, 3), (lambda: cwrs.SCW1(multi_class="ovr"), 3)],
)
def test_plot_curves_end_at_the_mistakes_of_the_timed_run(learner, n_classes):
    X, y = classification()
    if n_classes == 3:
        y = np.where(X[:, 2] > 0.5, 2, np.where(y > 0, 1, 0))
    labels = np.unique(y)
    bounds = np.array([0, 100, 250, 300])
    curve = cli.mistakes_curve(learner(), X, y, labels, bounds)
    for stop, mistakes in zip(bounds, curve):
        assert mistakes == (learner().partial_fit(X[:stop], y[:stop], classes=labels)
                            .n_mistakes_ if stop else 0)


# ---------------------------------------------------------------------- train's shuffle
def chunked(X, y, rows):
    return [(X[s : s + rows], y[s : s + rows]) for s in range(0, len(y), rows)]


def reference_buffer(chunks, capacity, rng):
    """The shuffle buffer row by row: fill `capacity` rows, then each incoming row replaces a
    random buffered row, which leaves; at the end the rest leave in random order. The slots
    are drawn per chunk, as `shuffled` draws them."""
    buffer, out = [], []
    for _, y in chunks:
        filling = capacity - len(buffer)
        buffer.extend(y[:filling])
        incoming = y[filling:]
        for row, slot in zip(incoming, rng.integers(capacity, size=len(incoming))):
            out.append(buffer[slot])
            buffer[slot] = row
    return out + [buffer[i] for i in rng.permutation(len(buffer))]


@pytest.mark.parametrize("capacity", [1, 7, 50, 299])
def test_the_shuffle_buffer_is_the_row_by_row_reservoir(capacity):
    y = np.arange(1000)
    X = np.repeat(y[:, None], 2, axis=1).astype(float)
    emitted = list(cli.shuffled(chunked(X, y, 64), capacity, np.random.default_rng(5)))
    order = np.concatenate([labels for _, labels in emitted])
    np.testing.assert_array_equal(
        order, reference_buffer(chunked(X, y, 64), capacity, np.random.default_rng(5))
    )
    np.testing.assert_array_equal(np.concatenate([X for X, _ in emitted])[:, 0], order)
    assert sorted(order) == list(y)


def test_the_shuffle_buffer_on_sparse_rows_with_a_small_capacity_stays_bounded(monkeypatch):
    sparse = pytest.importorskip("scipy.sparse")
    y = np.arange(5000)
    X = sparse.csr_matrix(np.repeat(y[:, None], 3, axis=1).astype(float))
    pools = []
    add = cli_io.RowPool.add

    def watched_add(pool, X, y):
        pools.append(pool)
        return add(pool, X, y)

    monkeypatch.setattr(cli_io.RowPool, "add", watched_add)
    emitted = list(cli.shuffled(chunked(X, y, 100), 40, np.random.default_rng(1)))
    order = np.concatenate([labels for _, labels in emitted])
    assert sorted(order) == list(y)
    np.testing.assert_array_equal(sparse.vstack([X for X, _ in emitted]).toarray()[:, 1], order)
    assert max(pool.size for pool in pools) <= 2 * 40 + 100


def test_a_buffer_as_large_as_the_data_is_an_exact_permutation():
    y = np.arange(500)
    X = y[:, None].astype(float)
    emitted = cli.shuffled(chunked(X, y, 64), 500, np.random.default_rng(9))
    order = np.concatenate([labels for _, labels in emitted])
    np.testing.assert_array_equal(order, np.random.default_rng(9).permutation(500))


@pytest.mark.parametrize("fmt", ["svm", "npz"])
def test_train_shuffles_by_default_and_reports_its_training_accuracy(capsys, tmp_path, fmt):
    """On data sorted by label, the model of one in-order pass is poor on its own data; `train`
    shuffles exactly (a permutation per pass from --seed) and says how good the final model
    is on the training data."""
    X, y = classification(sort=True)
    if fmt == "svm":
        data = write_svm(tmp_path / "sorted.svm", X, y)
    else:
        data = tmp_path / "sorted.npz"
        np.savez(data, X=X, y=y)
    model = tmp_path / "m.cwrs"
    argv = ["train", "-a", "AROW", "-d", data, "-o", model, "--passes", "2", "--seed", "3",
            "--json", "-q"]
    status, out, err = run(capsys, *argv)
    assert status == 0, err
    result = strict_json(out)
    rng = np.random.default_rng(3)
    reference = cwrs.AROW()
    for _ in range(2):
        order = rng.permutation(len(y))
        reference.partial_fit(X[order], y[order], classes=[-1, 1])
    np.testing.assert_allclose(cwrs.load(model).coef_, reference.coef_, rtol=1e-12)
    assert result["mistakes"] == reference.n_mistakes_
    assert result["training_accuracy"] == reference.score(X, y)
    assert result["training_accuracy"] > 0.9
    assert result["order"] == "shuffled (seed 3)"
    status, out, err = run(capsys, *argv[:-2], "--shuffle", "--json", "-q")
    spelled_out = strict_json(out)  # the default, spelled out
    assert spelled_out.pop("seconds") >= 0 and result.pop("seconds") >= 0
    assert spelled_out == result

    status, out, err = run(capsys, *argv[:-2], "--no-shuffle", "--json", "-q")
    in_order = strict_json(out)
    in_file_order = cwrs.AROW().partial_fit(X, y, classes=[-1, 1]).partial_fit(X, y)
    assert in_order["training_accuracy"] == in_file_order.score(X, y)
    assert in_order["order"] == "in file order"


def test_train_with_a_small_shuffle_buffer_is_deterministic(capsys, tmp_path):
    X, y = classification(n_rows=500, sort=True)
    data = write_svm(tmp_path / "sorted.svm", X, y)
    results = []
    for name in ("a.cwrs", "b.cwrs"):
        status, out, err = run(capsys, "train", "-a", "PA", "-d", data, "-o", tmp_path / name,
                               "--shuffle-buffer", "64", "--seed", "2", "--json")
        assert status == 0 and "through a 64-row buffer (seed 2)" in err
        results.append(strict_json(out))
    assert results[0]["mistakes"] == results[1]["mistakes"]
    assert (tmp_path / "a.cwrs").read_bytes() == (tmp_path / "b.cwrs").read_bytes()
    rng = np.random.default_rng(2)
    order = np.concatenate(
        [labels for _, labels in cli.shuffled(chunked(X, np.arange(500), 500), 64, rng)]
    )
    reference = cwrs.PA().partial_fit(X[order], y[order], classes=[-1, 1])
    np.testing.assert_allclose(cwrs.load(tmp_path / "a.cwrs").coef_, reference.coef_,
                               rtol=1e-12)


def test_regressor_training_reports_its_training_error(capsys, tmp_path):
    X, _ = classification()
    targets = X @ np.array([1.0, -2.0, 0.5, 0.0])
    np.savez(tmp_path / "reg.npz", X=X, y=targets)
    status, out, err = run(capsys, "train", "-a", "AROWRegressor", "-d", tmp_path / "reg.npz",
                           "-o", tmp_path / "reg.cwrs", "-q")
    assert status == 0, err
    fitted = cwrs.load(tmp_path / "reg.cwrs")
    mse = np.mean((fitted.predict(X) - targets) ** 2)
    assert f"final model on the training data: mse {mse:.6g}" in out
