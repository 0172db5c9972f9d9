"""`cwrs compare/train --covariance lowrank --rank K`: the command's models and
mistake rates are the Python API's, and --rank is refused where it would mean nothing."""

import json

import numpy as np
import pytest

import cwrs
from cwrs.cli import main


@pytest.fixture
def data(tmp_path):
    """An .npz of correlated rows (three latent factors) and the labels of a hyperplane."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 3)) @ rng.normal(size=(3, 12)) + 0.1 * rng.normal(size=(300, 12))
    y = np.where(X @ rng.normal(size=12) > 0, 1, -1)
    path = tmp_path / "correlated.npz"
    np.savez(path, X=X, y=y)
    return path, X, y


def run(capsys, *argv):
    status = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_train_saves_the_low_rank_model_of_the_python_api(capsys, data, tmp_path):
    path, X, y = data
    model_path = tmp_path / "m.cwrs"
    status, out, err = run(
        capsys, "train", "-a", "AROW", "-d", path, "-o", model_path, "--covariance", "lowrank",
        "--rank", "3", "--no-shuffle", "--param", "r=0.5", "-q",
    )
    assert status == 0, err
    saved = cwrs.load(model_path)
    expected = cwrs.AROW(covariance="lowrank", rank=3, r=0.5, shuffle=False).fit(X, y)
    assert saved.get_params()["covariance"] == "lowrank" and saved.get_params()["rank"] == 3
    assert saved.covariance_.shape == (1 + 2 * 3, 12)
    np.testing.assert_array_equal(saved.coef_, expected.coef_)
    np.testing.assert_array_equal(saved.covariance_, expected.covariance_)


def test_compare_reports_the_low_rank_form_with_its_rank(capsys, data):
    path, X, y = data
    status, out, err = run(
        capsys, "compare", "-d", path, "--learners", "AROW,PA1", "--covariance", "lowrank",
        "--rank", "2", "--shuffle", "0", "--json",
    )
    assert status == 0, err
    rates = {row["learner"]: row["mistake_rate"] for row in json.loads(out)["learners"]}
    assert set(rates) == {"AROW (lowrank, k=2)", "PA1"}
    model = cwrs.AROW(covariance="lowrank", rank=2).partial_fit(X, y, classes=[-1, 1])
    assert rates["AROW (lowrank, k=2)"] == model.n_mistakes_ / len(y)
    # Without --rank, the library's default rank.
    status, out, err = run(
        capsys, "compare", "-d", path, "--learners", "AROW", "--covariance", "lowrank",
        "--shuffle", "0", "--json",
    )
    default = cwrs.AROW().get_params()["rank"]
    assert [row["learner"] for row in json.loads(out)["learners"]] == [f"AROW (lowrank, k={default})"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["compare", "--rank", "3"], "--rank sets the sketch of --covariance lowrank"),
        (["train", "-a", "AROW", "-o", "m.cwrs", "--covariance", "full", "--rank", "3"],
         "--rank sets the sketch of --covariance lowrank"),
        (["train", "-a", "AROW", "-o", "m.cwrs", "--rank", "3"],
         "--rank sets the sketch of --covariance lowrank"),
        (["train", "-a", "AROW", "-o", "m.cwrs", "--covariance", "lowrank", "--rank", "5000"],
         "rank must be an integer in [1, 1024], got 5000"),
        (["compare", "--covariance", "lowrank", "--rank", "0"], "--rank"),
    ],
)
def test_a_rank_without_its_form_or_out_of_range_is_an_error(capsys, data, argv, message):
    path, _, _ = data
    status, out, err = run(capsys, *argv, "-d", path, "-q")
    assert status == 1 and out == ""
    assert err.startswith("cwrs: error: ") and message in err and err.count("\n") == 1
