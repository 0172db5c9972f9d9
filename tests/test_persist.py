"""The .cwrs model file: `save`/`load` round trips exactly (predictions and further training), and a
file that is truncated, altered, from a newer cwrs or not a model at all raises ModelFormatError
without running anything from the file."""

import io
import json
import os
import pickle
import re
import struct
import zlib

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cwrs
from cwrs import _persist

N, D = 120, 6
RNG = np.random.default_rng(7)
X = RNG.normal(size=(N, D))
Y_BINARY = np.where(X[:, 0] - X[:, 1] > 0, 1, -1)
Y_WORDS = np.array(["ham", "spam", "eggs"])[np.argmax(X[:, :3], axis=1)]
Y_REAL = X @ RNG.normal(size=D) + 0.1 * RNG.normal(size=N)


def configurations():
    for cls in cwrs.CLASSIFIERS:
        forms = ("diag", "full") if cls._second_order else (None,)
        for form in forms:
            params = {} if form is None else {"covariance": form}
            yield f"{cls.__name__}-{form or 'first'}", cls(**params), Y_BINARY
    yield "AROW-multiclass-words", cwrs.AROW(), Y_WORDS
    yield "SCW1-ovr-full", cwrs.SCW1(multi_class="ovr", covariance="full"), Y_WORDS
    yield "PA1-multiclass", cwrs.PA1(), np.arange(N) % 4
    yield "AROW-l1", cwrs.AROW(penalty="l1", alpha=0.01), Y_BINARY
    yield "AROW-rbf-budget", cwrs.AROW(kernel="rbf", budget=15), Y_BINARY
    yield "CW-poly-multiclass", cwrs.CW(kernel="poly", degree=2), Y_WORDS
    rff = cwrs.AROW(kernel_approximation="rff", n_components=16, random_state=3)
    yield "AROW-rff", rff, Y_BINARY
    yield "PA-shuffled-rng", cwrs.PA(shuffle=True, random_state=np.random.RandomState(5)), Y_BINARY
    yield "AROWRegressor-full", cwrs.AROWRegressor(covariance="full"), Y_REAL
    yield "PA1Regressor", cwrs.PA1Regressor(), Y_REAL


CONFIGS = list(configurations())


def without_addresses(text):
    return re.sub(r" at 0x[0-9A-Fa-f]+", "", text)


def outputs(model):
    """Everything a user can read off a fitted model, as bytes for exact comparison."""
    out = [model.predict(X)]
    for name in ("decision_function", "predict_proba"):
        if hasattr(model, name):
            out.append(getattr(model, name)(X))
    for name in ("coef_", "covariance_", "n_updates_", "n_mistakes_"):
        try:
            out.append(np.asarray(getattr(model, name)))
        except AttributeError:
            pass
    return [np.asarray(o).tobytes() if o.dtype != object else o.tolist() for o in out]


@pytest.mark.parametrize("name,model,y", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_round_trip_predicts_and_trains_on_identically(tmp_path, name, model, y):
    model.partial_fit(X[:80], y[:80], **({} if "Regressor" in name else {"classes": np.unique(y)}))
    path = tmp_path / "model.cwrs"
    model.save(path)
    loaded = cwrs.load(path)
    assert type(loaded) is type(model)
    assert without_addresses(repr(loaded)) == without_addresses(repr(model))
    assert outputs(loaded) == outputs(model)
    # Training goes on exactly as it would have.
    model.partial_fit(X[80:], y[80:])
    loaded.partial_fit(X[80:], y[80:])
    assert outputs(loaded) == outputs(model)
    # fit (which resets, and may draw from random_state) too; without a seed each fit shuffles
    # afresh, so both get the same one.
    if model.random_state is None:
        for estimator in (model, loaded):
            estimator.set_params(random_state=0)
    assert outputs(loaded.fit(X, y)) == outputs(model.fit(X, y))


def test_unfitted_estimator_round_trips_its_hyper_parameters():
    model = cwrs.SCW2(C=0.25, eta=0.8, covariance="full", fit_intercept=False)
    buffer = io.BytesIO()
    model.save(buffer)
    loaded = cwrs.load(io.BytesIO(buffer.getvalue()))
    assert loaded.get_params() == model.get_params()
    assert not hasattr(loaded, "classes_")


def test_sparse_input_model_round_trips(tmp_path):
    Xs = sp.random(60, 40, density=0.1, format="csr", random_state=1)
    y = np.where(np.asarray(Xs.sum(axis=1)).ravel() > 0.5, 1, 0)
    model = cwrs.AROW().fit(Xs, y)
    model.save(tmp_path / "m.cwrs")
    loaded = cwrs.load(str(tmp_path / "m.cwrs"))
    np.testing.assert_array_equal(loaded.decision_function(Xs), model.decision_function(Xs))


def test_callable_kernel_cannot_be_saved_and_leaves_no_file(tmp_path):
    model = cwrs.AROW(kernel=lambda A, B: A @ B.T).fit(X, Y_BINARY)
    with pytest.raises(ValueError, match="callable.*pickle"):
        model.save(tmp_path / "m.cwrs")
    assert list(tmp_path.iterdir()) == []


def saved(model=None):
    model = model or cwrs.AROW(covariance="full").fit(X, Y_WORDS)
    return _persist.dumps(model)


def test_truncated_files_raise_a_clear_error():
    data = saved()
    for cut in [0, 5, 20, 40, len(data) // 2, len(data) - 5, len(data) - 1]:
        with pytest.raises(cwrs.ModelFormatError, match="truncated|corrupted|not a cwrs model"):
            _persist.loads(data[:cut])


def test_every_altered_byte_is_detected():
    data = saved(cwrs.PA1().fit(X[:10], Y_BINARY[:10]))
    for position in range(len(data)):
        altered = bytearray(data)
        altered[position] ^= 0x24
        with pytest.raises(cwrs.ModelFormatError):
            _persist.loads(bytes(altered))


def test_a_newer_format_version_asks_for_an_upgrade():
    data = bytearray(saved())
    struct.pack_into("<I", data, len(_persist.MAGIC), _persist.FORMAT_VERSION + 1)
    with pytest.raises(cwrs.ModelFormatError, match="newer cwrs.*upgrade"):
        _persist.loads(bytes(data))


def test_other_files_are_not_models(tmp_path):
    for content in [b"", b"1 1:0.5\n", pickle.dumps(cwrs.AROW())]:
        path = tmp_path / "other"
        path.write_bytes(content)
        with pytest.raises(cwrs.ModelFormatError, match="not a cwrs model file"):
            cwrs.load(path)


def rewritten(data, edit):
    """`data` with its header changed by `edit(header)` and a valid checksum, as a crafted (not
    merely damaged) file would be."""
    _, version, length = _persist.PREFIX.unpack_from(data)
    start = _persist.PREFIX.size
    header = json.loads(data[start : start + length])
    edit(header)
    text = json.dumps(header).encode()
    body = _persist.PREFIX.pack(_persist.MAGIC, version, len(text)) + text
    body += data[start + length : -_persist.CHECKSUM.size]
    return body + _persist.CHECKSUM.pack(zlib.crc32(body))


def set_model_kind(kind):
    def edit(header):
        header["state"]["_model"]["$tuple"][0] = kind

    return edit


def first_array(edit_descriptor):
    def edit(header):
        edit_descriptor(header["arrays"][0])

    return edit


CRAFTED = {
    "unknown estimator": (lambda h: h.update(estimator="os.system"), "unknown estimator"),
    "callable model kind": (set_model_kind("CallableKernelModel"), "unknown kind"),
    "module attribute as model": (set_model_kind("learn_svmlight"), "unknown kind"),
    "unknown tag": (
        lambda h: h["state"].update(r={"$pickle": "cos\nsystem\n"}),
        "unknown entry",
    ),
    "object dtype array": (first_array(lambda a: a.update(dtype="|O")), "array type"),
    "array past the end": (first_array(lambda a: a.update(offset=10**9)), "past the end"),
    "negative shape": (first_array(lambda a: a.update(shape=[-1])), "shape"),
    "shape mismatch": (first_array(lambda a: a.update(shape=[2])), "corrupted"),
    "missing hyper-parameter": (lambda h: h["state"].pop("r"), "no value for"),
    "renamed attribute": (
        lambda h: h["state"].update(_modem=h["state"].pop("_model")),
        "unexpected or missing entries",
    ),
    "not a model header": (lambda h: h.update(format="other"), "not a cwrs model header"),
}


@pytest.mark.parametrize("case", list(CRAFTED), ids=list(CRAFTED))
def test_crafted_headers_are_rejected(case):
    edit, message = CRAFTED[case]
    with pytest.raises(cwrs.ModelFormatError, match=message):
        _persist.loads(rewritten(saved(cwrs.AROW().fit(X, Y_BINARY)), edit))


@settings(
    max_examples=int(os.environ.get("CWRS_FUZZ_EXAMPLES", 300)),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.data())
def test_random_damage_gives_model_format_error_only(data):
    """Fuzzes the loader: random overwrites, insertions and cuts, with the checksum recomputed half
    the time so the damage reaches the parser."""
    model = cwrs.CW(covariance="full", shuffle=False).fit(X[:30], Y_BINARY[:30])
    original = bytearray(saved(model))
    for _ in range(data.draw(st.integers(1, 4))):
        position = data.draw(st.integers(0, len(original) - 1))
        action = data.draw(st.sampled_from(["overwrite", "insert", "delete"]))
        byte = data.draw(st.integers(0, 255))
        if action == "overwrite":
            original[position] = byte
        elif action == "insert":
            original.insert(position, byte)
        else:
            del original[position]
    damaged = bytes(original)
    if data.draw(st.booleans()) and len(damaged) > _persist.CHECKSUM.size:
        body = damaged[: -_persist.CHECKSUM.size]
        damaged = body + _persist.CHECKSUM.pack(zlib.crc32(body))
    try:
        model = _persist.loads(damaged)
    except cwrs.ModelFormatError:
        return
    # Damage that survives parsing (a changed digit of a weight, say) gives a model that predicts
    # or says clearly why it cannot.
    try:
        model.decision_function(X[:3])
    except ValueError:
        pass
