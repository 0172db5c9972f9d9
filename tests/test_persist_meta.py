""".cwrs files of the estimators that hold estimators (CalibratedClassifier, SelectiveSampler,
ContextualBandit): each continues after `load` exactly as it would have, files written for
CalibratedClassifier by the code that first saved it still load, damaged entries are refused;
and `cwrs.merge` of contextual bandits trained on shards of the rounds."""

from __future__ import annotations

import copy
import io
import json
import pickle
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest

import cwrs
from cwrs.bandit import ContextualBandit
from cwrs.cli import main

FIXTURES = Path(__file__).parent / "data" / "format_v2" / "calibrated"
POLICIES = ["thompson", "ucb", "greedy", "epsilon"]


def saved(model):
    buffer = io.BytesIO()
    model.save(buffer)
    return buffer.getvalue()


def loaded(model):
    return cwrs.load(io.BytesIO(saved(model)))


def header_of(data):
    """The JSON header of the file `data`."""
    from cwrs._persist import PREFIX

    _, _, length = PREFIX.unpack(data[:PREFIX.size])
    return json.loads(data[PREFIX.size:PREFIX.size + length])


def header_edit(data, edit):
    """The file `data` with its JSON header changed by `edit` (and its checksum fixed)."""
    from cwrs._persist import PREFIX

    magic, version, length = PREFIX.unpack(data[:PREFIX.size])
    header = header_of(data)
    edit(header)
    text = json.dumps(header).encode()
    body = PREFIX.pack(magic, version, len(text)) + text + data[PREFIX.size + length:-4]
    return body + struct.pack("<I", zlib.crc32(body))


# ======================================================================= CalibratedClassifier
CALIBRATED = sorted(path.stem for path in FIXTURES.glob("*.cwrs") if path.stem != "unfitted")


def test_every_calibrated_fixture_is_tested():
    assert CALIBRATED == ["isotonic_multiclass", "platt_binary", "temperature_multiclass"]


@pytest.mark.parametrize("name", CALIBRATED)
def test_a_calibrated_classifier_file_of_the_first_format_predicts_and_continues(name):
    expected = np.load(FIXTURES / "expected.npz", allow_pickle=False)
    X = expected["X"]
    model = cwrs.load(FIXTURES / f"{name}.cwrs", cwrs.CalibratedClassifier)
    np.testing.assert_array_equal(model.predict_proba(X), expected[f"{name}.predict_proba"])
    model.partial_fit(X[40:50], expected[f"{name}.more"])
    np.testing.assert_array_equal(
        model.predict_proba(X), expected[f"{name}.continued.predict_proba"]
    )


def test_an_unfitted_calibrated_classifier_file_of_the_first_format_loads():
    model = cwrs.load(FIXTURES / "unfitted.cwrs")
    assert repr(model) == repr(
        cwrs.CalibratedClassifier(cwrs.AROW(r=0.5), method="isotonic", n_bins=5)
    )
    assert "estimator_" not in model.__dict__


# ======================================================================= ContextualBandit
def bandit_stream(seed=0, n_rounds=60, n_features=5, binary=False):
    """Rounds of 4 actions and a linear reward (0/1 for a classifier's bandit)."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=n_features)
    rounds = [rng.normal(size=(4, n_features)) for _ in range(n_rounds)]
    noise = 0.1 * rng.normal(size=n_rounds)

    def reward(t, actions, index):
        value = actions[index] @ theta + noise[t]
        return float(value > 0) if binary else float(value)

    return rounds, reward


def play(bandit, rounds, reward, offset=0):
    """Chooses and learns each round; returns the decisions (index, probability)."""
    decisions = []
    for t, actions in enumerate(rounds):
        index, probability = bandit.choose(actions)
        bandit.update(actions, index, reward(offset + t, actions, index))
        decisions.append((index, probability))
    return decisions


ESTIMATORS = {
    "full": lambda: cwrs.AROWRegressor(covariance="full"),
    "diag": lambda: cwrs.AROWRegressor(r="auto"),
    "lowrank": lambda: cwrs.AROWRegressor(covariance="lowrank", rank=2),
    "classifier": lambda: cwrs.AROW(),
}


@pytest.mark.parametrize("form", sorted(ESTIMATORS))
@pytest.mark.parametrize("policy", POLICIES)
def test_a_bandit_saved_mid_stream_makes_the_same_decisions_after_load(policy, form, tmp_path):
    rounds, reward = bandit_stream(binary=form == "classifier")
    bandit = ContextualBandit(ESTIMATORS[form](), policy, epsilon=0.3, random_state=7)
    play(bandit, rounds[:30], reward)
    bandit.save(tmp_path / "bandit.cwrs")
    again = cwrs.load(tmp_path / "bandit.cwrs")
    assert type(again) is ContextualBandit
    assert repr(again) == repr(bandit)
    assert (again.n_rounds_, again.n_learned_, again.n_features_in_) == (30, 30, 5)
    assert play(again, rounds[30:], reward, 30) == play(bandit, rounds[30:], reward, 30)
    np.testing.assert_array_equal(again.estimator_.coef_, bandit.estimator_.coef_)
    np.testing.assert_array_equal(
        again.estimator_.covariance_matrix(), bandit.estimator_.covariance_matrix()
    )
    assert (again.n_rounds_, again.n_learned_) == (bandit.n_rounds_, bandit.n_learned_)


def test_an_unfitted_bandit_saves_its_parameters_and_decides_as_a_new_one():
    rounds, reward = bandit_stream()
    bandit = ContextualBandit(cwrs.AROWRegressor(a=0.5), "thompson", alpha=0.3,
                              n_probability_draws=4, random_state=3)
    again = loaded(bandit)
    assert repr(again) == repr(bandit)
    assert "estimator_" not in again.__dict__ and not hasattr(again, "n_rounds_")
    assert play(again, rounds, reward) == play(bandit, rounds, reward)


def test_a_bandit_seeded_by_a_generator_round_trips():
    rounds, reward = bandit_stream()
    bandit = ContextualBandit(cwrs.AROWRegressor(), random_state=np.random.default_rng(4))
    unfitted = loaded(bandit)
    play(bandit, rounds[:10], reward)
    fitted = loaded(bandit)
    assert play(fitted, rounds[10:], reward, 10) == play(bandit, rounds[10:], reward, 10)
    fresh = ContextualBandit(cwrs.AROWRegressor(), random_state=np.random.default_rng(4))
    assert play(unfitted, rounds, reward) == play(fresh, rounds, reward)


def test_the_generator_state_round_trips_and_a_bad_one_is_refused():
    rounds, reward = bandit_stream()
    bandit = ContextualBandit(cwrs.AROWRegressor(), "thompson", random_state=7)
    play(bandit, rounds[:5], reward)
    data = saved(bandit)
    again = cwrs.load(io.BytesIO(data))
    assert again._generator.dtype == np.uint64
    np.testing.assert_array_equal(again._generator, bandit._generator)
    assert play(again, rounds[5:], reward, 5) == play(bandit, rounds[5:], reward, 5)

    def shorter(header):
        state = header["state"]["_generator"]
        header["arrays"][state["$array"]]["shape"] = [3]

    with pytest.raises(cwrs.ModelFormatError, match="_generator"):
        cwrs.load(io.BytesIO(header_edit(data, shorter)))
    bandit._generator = np.zeros(4, dtype=np.uint64)
    with pytest.raises(ValueError, match="all zeros"):
        saved(bandit)
    bandit._generator = bandit._generator.astype(np.int64)
    with pytest.raises(ValueError, match="cannot be saved|_generator"):
        saved(bandit)


def fitted_bandit_file():
    rounds, reward = bandit_stream()
    bandit = ContextualBandit(cwrs.AROWRegressor(covariance="full"), random_state=0)
    play(bandit, rounds[:10], reward)
    return saved(bandit)


BANDIT_EDITS = {
    "negative rounds": lambda h: h["state"].update(n_rounds_=-1),
    "rounds as text": lambda h: h["state"].update(n_rounds_="10"),
    "rounds as a float": lambda h: h["state"].update(n_rounds_=10.0),
    "no learned count": lambda h: h["state"].pop("n_learned_"),
    "no width": lambda h: h["state"].pop("n_features_in_"),
    "another width": lambda h: h["state"].update(n_features_in_=6),
    "no generator": lambda h: h["state"].pop("_generator"),
    "a generator that is a number": lambda h: h["state"].update(_generator=3),
    "an unexpected entry": lambda h: h["state"].update(extra=1),
    "no policy": lambda h: h["state"].pop("policy"),
    "an unknown policy": lambda h: h["state"].update(policy="softmax"),
    "a negative alpha": lambda h: h["state"].update(alpha=-1.0),
    "epsilon above 1": lambda h: h["state"].update(epsilon=2.0),
    "no fitted estimator": lambda h: h["estimators"].pop("estimator_"),
    "no estimator": lambda h: h["estimators"].pop("estimator"),
    "no estimators": lambda h: h.pop("estimators"),
    "a first-order estimator for thompson": lambda h: h["estimators"].update(
        estimator=header_of(saved(cwrs.PARegressor()))
    ),
    "a meta-estimator held": lambda h: h["estimators"]["estimator_"].update(
        estimator="ContextualBandit"
    ),
    "a fitted estimator without model": lambda h: h["estimators"].update(
        estimator_=h["estimators"]["estimator"]
    ),
}


@pytest.mark.parametrize("edit", sorted(BANDIT_EDITS))
def test_a_bandit_file_with_damaged_entries_is_refused(edit):
    data = fitted_bandit_file()
    cwrs.load(io.BytesIO(header_edit(data, lambda h: None)))  # rewritten unchanged, it loads
    with pytest.raises(cwrs.ModelFormatError):
        cwrs.load(io.BytesIO(header_edit(data, BANDIT_EDITS[edit])))


def test_a_bandit_that_load_would_refuse_is_not_saved():
    rounds, reward = bandit_stream()
    bandit = ContextualBandit(cwrs.AROWRegressor(), random_state=0)
    play(bandit, rounds[:3], reward)
    bandit.n_rounds_ = -1
    with pytest.raises(ValueError, match="cannot be saved"):
        saved(bandit)
    bandit.n_rounds_ = 3
    bandit.policy = "softmax"
    with pytest.raises(ValueError, match="cannot be saved"):
        saved(bandit)


def test_load_checks_the_expected_class_of_a_bandit(tmp_path):
    path = tmp_path / "bandit.cwrs"
    path.write_bytes(fitted_bandit_file())
    assert type(cwrs.load(path, ContextualBandit)) is ContextualBandit
    with pytest.raises(cwrs.ModelFormatError, match="ContextualBandit"):
        cwrs.load(path, cwrs.AROWRegressor)


@pytest.mark.parametrize("command", ["predict", "test"])
@pytest.mark.parametrize("fitted", [True, False])
def test_the_command_line_refuses_a_bandit_file(command, fitted, tmp_path, capsys):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 5))
    np.savez(tmp_path / "data.npz", X=X, y=X[:, 0])
    model = tmp_path / "bandit.cwrs"
    if fitted:
        model.write_bytes(fitted_bandit_file())
    else:
        ContextualBandit(cwrs.AROWRegressor()).save(model)
    argv = [command, "-i", model, "-d", tmp_path / "data.npz", "-p", tmp_path / "out.txt"]
    assert main([str(a) for a in argv]) == 1
    error = capsys.readouterr().err
    assert "holds a ContextualBandit, which chooses actions" in error
    assert "internal error" not in error


# ======================================================================= SelectiveSampler
def sampler_stream(n_rows=300, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 4))
    y = np.where(X @ rng.normal(size=4) + 0.3 * rng.normal(size=n_rows) > 0, "b", "a")
    return X, y


@pytest.mark.parametrize("strategy", ["margin", "bbq", "random"])
def test_a_sampler_saved_mid_stream_asks_for_the_same_rows_after_load(strategy):
    X, y = sampler_stream()
    sampler = cwrs.SelectiveSampler(cwrs.AROW(), strategy, random_state=5).fit(X[:100], y[:100])
    again = loaded(sampler)
    assert type(again) is cwrs.SelectiveSampler and repr(again) == repr(sampler)
    for model in (sampler, again):
        model.partial_fit(X[100:200], y[100:200])
    np.testing.assert_array_equal(again.queried_, sampler.queried_)
    for start in range(200, 300, 20):  # a stream whose labels are asked for as it goes
        rows = X[start:start + 20]
        asked = sampler.query(rows)
        np.testing.assert_array_equal(again.query(rows), asked)
        labels = np.where(asked, y[start:start + 20], "?")
        sampler.partial_fit(rows, labels, asked)
        again = loaded(again).partial_fit(rows, labels, asked)
    assert (again.n_queried_, again.n_seen_) == (sampler.n_queried_, sampler.n_seen_)
    np.testing.assert_array_equal(again.estimator_.coef_, sampler.estimator_.coef_)
    np.testing.assert_array_equal(again.predict(X), sampler.predict(X))


def test_a_sampler_keeps_the_column_names_it_learned():
    pandas = pytest.importorskip("pandas")
    X, y = sampler_stream()
    frame = pandas.DataFrame(X, columns=["a", "b", "c", "d"])
    sampler = cwrs.SelectiveSampler(cwrs.AROW()).fit(frame, y)
    again = loaded(sampler)
    np.testing.assert_array_equal(again.feature_names_in_, ["a", "b", "c", "d"])
    np.testing.assert_array_equal(again.predict(frame), sampler.predict(frame))


def test_an_unfitted_sampler_round_trips():
    X, y = sampler_stream()
    sampler = cwrs.SelectiveSampler(cwrs.SCW1(C=0.5), "random", b=0.5, random_state=2)
    again = loaded(sampler)
    assert repr(again) == repr(sampler) and "estimator_" not in again.__dict__
    np.testing.assert_array_equal(again.fit(X, y).queried_, sampler.fit(X, y).queried_)


SAMPLER_EDITS = {
    "more asked than seen": lambda h: h["state"].update(n_queried_=10_000),
    "a negative count": lambda h: h["state"].update(n_seen_=-1),
    "no mask": lambda h: h["state"].pop("queried_"),
    "a mask of numbers": lambda h: h["state"].update(queried_=[1, 0]),
    "a generator that is a number": lambda h: h["state"].update(_rng=5),
    "an unknown strategy": lambda h: h["state"].update(strategy="entropy"),
    "a regressor held": lambda h: h["estimators"]["estimator_"].update(
        estimator="AROWRegressor"
    ),
    "an unexpected entry": lambda h: h["state"].update(extra=True),
}


@pytest.mark.parametrize("edit", sorted(SAMPLER_EDITS))
def test_a_sampler_file_with_damaged_entries_is_refused(edit):
    X, y = sampler_stream()
    data = saved(cwrs.SelectiveSampler(cwrs.AROW(), "random", random_state=0).fit(X, y))
    cwrs.load(io.BytesIO(header_edit(data, lambda h: None)))
    with pytest.raises(cwrs.ModelFormatError):
        cwrs.load(io.BytesIO(header_edit(data, SAMPLER_EDITS[edit])))


# ======================================================================= merge of bandits
def shared_rounds(n_rounds=200, n_features=6, seed=11):
    """Rounds with the action logged in each and its reward: the same updates for every
    bandit, whatever it would choose."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=n_features)
    rounds = [rng.normal(size=(4, n_features)) for _ in range(n_rounds)]
    chosen = rng.integers(4, size=n_rounds)
    rewards = [a[i] @ theta + 0.1 * rng.normal() for a, i in zip(rounds, chosen)]
    return rounds, chosen, rewards


def updated(bandit, rounds, chosen, rewards, span):
    for t in range(*span):
        bandit.update(rounds[t], int(chosen[t]), rewards[t])
    return bandit


@pytest.mark.parametrize("method", ["information", "auto"])
def test_merging_bandits_of_two_halves_is_one_bandit_of_every_round(method):
    rounds, chosen, rewards = shared_rounds()
    make = lambda seed: ContextualBandit(  # noqa: E731
        cwrs.AROWRegressor(covariance="full"), "ucb", alpha=0.5, random_state=seed
    )
    whole = updated(make(0), rounds, chosen, rewards, (0, 200))
    halves = [updated(make(1), rounds, chosen, rewards, (0, 100)),
              updated(make(2), rounds, chosen, rewards, (100, 200))]
    for bandit in halves:
        bandit.choose_batch(rounds[:3])
    before = [pickle.dumps(bandit) for bandit in halves]
    merged = cwrs.merge(halves, method=method)
    assert [pickle.dumps(bandit) for bandit in halves] == before  # the inputs are unchanged
    assert type(merged) is ContextualBandit and merged.get_params(deep=False).keys() == \
        whole.get_params(deep=False).keys()
    assert (merged.policy, merged.alpha, merged.random_state) == ("ucb", 0.5, 1)
    assert (merged.n_rounds_, merged.n_learned_, merged.n_features_in_) == (6, 200, 6)
    np.testing.assert_allclose(merged.estimator_.coef_, whole.estimator_.coef_, rtol=0,
                               atol=1e-9)
    np.testing.assert_allclose(merged.estimator_.covariance_matrix(),
                               whole.estimator_.covariance_matrix(), rtol=0, atol=1e-9)
    # It decides as the bandit of every round, and saves as any bandit.
    assert merged.choose_batch(rounds[:20])[0].tolist() == whole.choose_batch(rounds[:20])[0] \
        .tolist()
    assert loaded(merged).choose(rounds[0]) == merged.choose(rounds[0])


def test_merging_bandits_continued_from_a_base_counts_the_base_once():
    rounds, chosen, rewards = shared_rounds()
    make = lambda: ContextualBandit(cwrs.AROWRegressor(covariance="full"), "greedy")  # noqa: E731
    base = updated(make(), rounds, chosen, rewards, (0, 50))
    whole = updated(copy.deepcopy(base), rounds, chosen, rewards, (50, 200))
    shards = [updated(copy.deepcopy(base), rounds, chosen, rewards, span)
              for span in ((50, 100), (100, 200))]
    merged = cwrs.merge(shards, base=base, method="information")
    assert merged.n_learned_ == 200
    np.testing.assert_allclose(merged.estimator_.coef_, whole.estimator_.coef_, rtol=0,
                               atol=1e-9)
    np.testing.assert_allclose(merged.estimator_.covariance_matrix(),
                               whole.estimator_.covariance_matrix(), rtol=0, atol=1e-9)


def test_the_merged_bandit_continues_the_first_bandits_generator():
    rounds, chosen, rewards = shared_rounds()
    # epsilon=1: every choice is a uniform draw from the generator alone.
    make = lambda seed: ContextualBandit(  # noqa: E731
        cwrs.AROWRegressor(), "epsilon", epsilon=1.0, random_state=seed
    )
    first = updated(make(1), rounds, chosen, rewards, (0, 30))
    first.choose_batch(rounds[:7])
    second = updated(make(2), rounds, chosen, rewards, (30, 60))
    follower = copy.deepcopy(first)
    merged = cwrs.merge([first, second])
    expected = follower.choose_batch(rounds[:50])[0].tolist()
    assert merged.choose_batch(rounds[:50])[0].tolist() == expected
    # A copy: the first bandit's own generator goes on as it would have.
    assert first.choose_batch(rounds[:50])[0].tolist() == expected


def test_bandits_that_differ_or_have_no_model_do_not_merge():
    rounds, chosen, rewards = shared_rounds()

    def fitted(**params):
        estimator = params.pop("estimator", cwrs.AROWRegressor())
        return updated(ContextualBandit(estimator, **params), rounds, chosen, rewards, (0, 5))

    first = fitted()
    for other in (fitted(policy="ucb"), fitted(alpha=2.0), fitted(epsilon=0.5),
                  fitted(n_probability_draws=3), fitted(estimator=cwrs.AROWRegressor(r=2.0)),
                  fitted(estimator=cwrs.AROWRegressor(covariance="full"))):
        with pytest.raises(cwrs.InvalidParameterError, match="same"):
            cwrs.merge([first, other])
    cwrs.merge([first, fitted(random_state=5)])  # only the seed differs
    with pytest.raises(cwrs.NotFittedError):
        cwrs.merge([first, ContextualBandit(cwrs.AROWRegressor())])
    with pytest.raises(cwrs.NotFittedError):
        cwrs.merge([first], base=ContextualBandit(cwrs.AROWRegressor()))
    with pytest.raises(cwrs.InvalidParameterError, match="only bandits"):
        cwrs.merge([first, first.estimator_])
    with pytest.raises(cwrs.InvalidParameterError, match="only bandits"):
        cwrs.merge([first], base=first.estimator_)
    with pytest.raises(cwrs.InvalidParameterError):
        cwrs.merge([first.estimator_], base=first)
