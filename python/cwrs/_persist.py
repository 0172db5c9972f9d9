"""The `.cwrs` model file: `estimator.save(path)` and `cwrs.load(path)`.

A portable, versioned format that loading never turns into code (no pickle inside): a JSON
header describes the estimator (its class name, hyper-parameters and fitted state) and points
into a payload of little-endian NumPy arrays; a CRC-32 of everything before it closes the file.
Layout and rules: docs/model-format.md.

Both directions stream the arrays (no copy of the whole file is ever held in memory), and both
run the same checks (`_check_state`): `save` refuses a state that `load` would refuse.
"""

from __future__ import annotations

import io
import json
import math
import os
import stat
import struct
import zlib
from typing import (
    IO, TYPE_CHECKING, Any, Callable, NamedTuple, Optional, TypeVar, Union, cast, overload,
)

import numpy as np

from . import _cwrs
from ._active import SelectiveSampler
from ._calibration import CalibratedClassifier, check_map_state, refuse_estimator
from ._classifier import Classifier
from ._estimator import Estimator
from ._files import AtomicOutput, file_kind, naming
from ._kernel import RandomFourierFeatures
from ._meta import clone
from ._params import init_defaults, with_added_parameters
from ._regressor import Regressor
from ._validation import check_class_labels
from .bandit import ContextualBandit

#: Where a model is written to or read from: a path, or a binary file object.
ModelFile = Union[str, "os.PathLike[str]", IO[bytes]]
#: What `save` writes and `load` returns: a cwrs estimator, or an estimator holding one.
Saveable = Union[Estimator, CalibratedClassifier, SelectiveSampler, ContextualBandit]
_Estimator = TypeVar("_Estimator", bound=Saveable)

MAGIC = b"\x89CWRS\r\n\x1a\n"
FORMAT_VERSION = 2
# magic, format version (u32), header length (u64); all integers little-endian
PREFIX = struct.Struct(f"<{len(MAGIC)}sIQ")
CHECKSUM = struct.Struct("<I")
ALIGNMENT = 8
# Array element types the payload may hold: fixed-size, little-endian, no objects.
ARRAY_DTYPES = frozenset(
    ["|b1", "|i1", "|u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8", "<f4", "<f8"]
)
# The kinds of native model a file may hold, by the kind of estimator holding them; the model
# is rebuilt from its named state by the validating `Model.from_state`.
CLASSIFIER_MODELS = frozenset(["binary", "multiclass", "kernel", "multiclass_kernel"])
REGRESSOR_MODELS = frozenset(["regressor"])
# The attributes fit/partial_fit set: all of them in a fitted estimator, none in a new one.
CLASSIFIER_FITTED = frozenset(
    ["_model", "_feature_map", "classes_", "n_features_in_", "_sparse_input"]
)
REGRESSOR_FITTED = frozenset(["_model", "n_features_in_"])
# Fitted only when X was a data frame with string column names (scikit-learn's rule).
FEATURE_NAMES = "feature_names_in_"
# Fitted only by learning from a LIBSVM file: the index base it was read with.
INDEX_BASE = "zero_based_"

# An estimator holding estimators (a `MetaEstimator`: CalibratedClassifier, SelectiveSampler,
# ContextualBandit): its own entries (those of its pickled state) in "state", and each estimator
# it holds, a plain cwrs estimator encoded as a file holding it alone encodes it, in the
# header's "estimators" under the attribute's name; the fitted ones go together.
HELD = ("estimator", "estimator_")

# The most axes an array of the file may have (NumPy allows 32 or 64, by version).
MAX_AXES = 32
BIT_GENERATORS = frozenset(["PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64"])
# Bytes checksummed at a time where no array needs them (padding, a file being refused).
CHUNK = 1 << 20
# NumPy strings have a fixed width, so a declared string type costs memory before any value is
# read: a string array may take at most this many times the file's size, plus STRING_SLACK.
STRING_GROWTH = 64
STRING_SLACK = 1 << 20


class ModelFormatError(ValueError):
    """A file that is not a cwrs model, is corrupted or truncated, or comes from a newer cwrs."""


def _estimator_classes() -> dict[str, type[Estimator]]:
    from ._classifiers import CLASSIFIERS
    from ._regressors import REGRESSORS

    return {cls.__name__: cls for cls in (*CLASSIFIERS, *REGRESSORS)}


# Plain-data helper objects an estimator may hold, rebuilt attribute by attribute.
HELPER_CLASSES: dict[str, Any] = {"RandomFourierFeatures": RandomFourierFeatures}


# ------------------------------------------------------------------------ checks (both ways)
def _check_entries(cls: type[Estimator], state: dict[str, Any]) -> None:
    """`state` has exactly the class's hyper-parameters, and either no fitted attribute or all
    of them, with a native model of a kind this class holds."""
    params = set(cls._get_param_names())
    missing = params - state.keys()
    if missing:
        raise ValueError(f"no value for {sorted(missing)}")
    is_classifier = issubclass(cls, Classifier)
    fitted = CLASSIFIER_FITTED if is_classifier else REGRESSOR_FITTED
    _check_feature_names(state)
    if INDEX_BASE in state and not ("_model" in state and isinstance(state[INDEX_BASE], bool)):
        raise ValueError(f"{INDEX_BASE} must be true or false in a fitted model")
    extra = state.keys() - params - {FEATURE_NAMES, INDEX_BASE}
    if extra and extra != fitted:
        raise ValueError(f"unexpected or missing entries {sorted(extra ^ fitted)}")
    model = state.get("_model")
    kinds = CLASSIFIER_MODELS if is_classifier else REGRESSOR_MODELS
    if extra and not (
        isinstance(model, tuple)
        and len(model) == 2
        and model[0] == "Model"
        and isinstance(model[1], dict)
        and isinstance(model[1].get("kind"), str)
        and model[1]["kind"] in kinds
    ):
        raise ValueError(f"unknown kind of fitted model for a {cls.__name__}")


def _check_fitted(estimator: Estimator, native: dict[str, Any]) -> None:
    """The fitted attributes agree with each other and with the native model's named state:
    the rule of the estimator's class, its classes and its width."""
    cls = type(estimator)
    rule, model_features = native.get("rule"), native.get("n_features")
    n_classes = None if native.get("kind") == "regressor" else native.get("n_classes", 2)
    if rule != cls._rule:
        raise ValueError(
            f"its model learns with the {rule!r} rule, but {cls.__name__} learns with "
            f"{cls._rule!r}"
        )
    n_features = estimator.n_features_in_
    if not isinstance(n_features, int) or isinstance(n_features, bool) or n_features < 1:
        raise ValueError(f"n_features_in_ must be a positive integer, got {n_features!r:.80}")
    if not isinstance(estimator, Classifier):
        if model_features != n_features:
            raise ValueError(f"n_features_in_={n_features} but the model has {model_features}")
        return
    classes = estimator.classes_
    if not isinstance(classes, np.ndarray) or classes.ndim != 1:
        raise ValueError("classes_ must be a 1-D array of labels")
    check_class_labels(classes, "classes_")
    if len(classes) != n_classes or not np.array_equal(np.unique(classes), classes):
        raise ValueError(
            f"classes_ must hold the model's {n_classes} classes, sorted and distinct, got "
            f"{classes!r:.200}"
        )
    if not isinstance(estimator._sparse_input, bool):
        raise ValueError("_sparse_input must be True or False")
    feature_map = estimator._feature_map
    width = n_features
    if feature_map is not None:
        weights = getattr(feature_map, "weights", None)
        offsets = getattr(feature_map, "offsets", None)
        if not (
            type(feature_map) is RandomFourierFeatures
            and vars(feature_map).keys() == {"weights", "offsets"}
            and isinstance(weights, np.ndarray)
            and isinstance(offsets, np.ndarray)
            and weights.dtype == offsets.dtype == np.float64
            and weights.ndim == 2
            and weights.shape[0] == n_features
            and offsets.shape == (weights.shape[1],)
            and np.isfinite(weights).all()
            and np.isfinite(offsets).all()
        ):
            raise ValueError("the random Fourier features do not match n_features_in_")
        width = weights.shape[1]
    if model_features != width:
        raise ValueError(f"the model has {model_features} input features, expected {width}")


def _check_hyper_parameters(estimator: Estimator) -> None:
    """The estimator's own checks of its hyper-parameters (those `fit` makes)."""
    estimator._check_params()


def _check_state(estimator: Estimator, model: Optional[tuple]) -> None:
    """Raises ValueError or TypeError if `estimator` (with the native model state `model`, a
    ("Model", named state) pair, or None) is not one that `load` accepts. The native model itself is
    checked by its `from_state` (on load as it is rebuilt, on save before writing)."""
    if model is not None:
        _check_fitted(estimator, model[1])
    _check_hyper_parameters(estimator)


def check_storable(estimator: Estimator) -> None:
    """Refuses (InvalidParameterError) a hyper-parameter value that a .cwrs file cannot hold or
    `load` would refuse, so that every model `fit` accepts can be saved. A callable kernel is
    code, which only pickle keeps (see `Estimator.save`)."""
    cls: Any = type(estimator)
    for name in init_defaults(cls):
        value = getattr(estimator, name)
        if _held_as_is(value) or name == "kernel" and callable(value):
            continue
        encoder = _Encoder()
        try:
            encoded = encoder.encode(value, f"{name}={value!r:.80}")
            json.dumps(encoded, allow_nan=False)
            _layout(*_descriptors(encoder.arrays))
            _Decoder(encoder.arrays, STRING_SLACK).decode(encoded)
        except (ValueError, TypeError, RecursionError) as error:
            detail = str(error).removeprefix("corrupted model file: ")
            raise _cwrs.InvalidParameterError(
                f"{name}={value!r:.80} cannot be kept: a saved model could not hold it "
                f"({detail})"
            ) from None


def _held_as_is(value: Any) -> bool:
    """Whether a file holds `value` by construction (the common values, checked at once): a
    plain scalar, or a NumPy random generator over one of NumPy's bit generators."""
    if value is None or type(value) in (bool, int, float, str):
        return True
    if isinstance(value, np.random.RandomState):
        # Its bit generator without a copy of the state where NumPy lets it be read.
        bit_generator = getattr(value, "_bit_generator", None)
        if bit_generator is None:
            return value.get_state(legacy=False)["bit_generator"] in BIT_GENERATORS
        return type(bit_generator).__name__ in BIT_GENERATORS
    if isinstance(value, np.random.Generator):
        return type(value.bit_generator).__name__ in BIT_GENERATORS
    return False


# --------------------------------------------------------------------------------- writing
class _Encoder:
    """Turns an estimator's state into JSON-ready values, moving arrays to the payload."""

    def __init__(self) -> None:
        self.arrays: list[np.ndarray] = []

    def encode(self, value: Any, where: str) -> Any:
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, int):
            return value
        if isinstance(value, float):  # np.float64 too: stored as the Python float it equals
            value = float(value)
            return value if math.isfinite(value) else {"$float": repr(value)}
        if isinstance(value, bytes):
            return {"$bytes": value.decode("latin-1")}
        if isinstance(value, np.generic):
            return {"$scalar": value.dtype.str, "value": self.encode(value.item(), where)}
        if isinstance(value, np.ndarray):
            return self.encode_array(value, where)
        if isinstance(value, tuple):
            return {"$tuple": [self.encode(v, where) for v in value]}
        if isinstance(value, list):
            return [self.encode(v, where) for v in value]
        if isinstance(value, dict):
            pairs = [[self.encode(k, where), self.encode(v, where)] for k, v in value.items()]
            return {"$dict": pairs}
        if isinstance(value, np.random.RandomState):
            # The legacy tuple for MT19937 (the format's first form); a mapping naming the bit
            # generator for the others.
            named = value.get_state(legacy=False)
            legacy = named["bit_generator"] == "MT19937"
            return {"$random_state": self.encode(value.get_state() if legacy else named, where)}
        if isinstance(value, np.random.Generator):
            return {"$generator": self.encode(value.bit_generator.state, where)}
        name = type(value).__name__
        if type(value) is HELPER_CLASSES.get(name):
            return {"$object": name, "attributes": self.encode(vars(value), where)}
        if callable(value):
            raise ValueError(
                f"{where} is a Python callable ({value!r}); a .cwrs file holds data, not code, "
                "so this model can only be saved with pickle"
            )
        raise ValueError(f"{where} has type {name}, which the .cwrs format cannot store")

    def encode_array(self, array: np.ndarray, where: str) -> Any:
        if array.dtype.kind == "U":
            return {"$strings": array.dtype.str, "values": array.tolist()}
        if array.dtype.kind == "S":  # bytes as the code points 0-255 of a JSON string
            values = [value.decode("latin-1") for value in array.tolist()]
            return {"$strings": array.dtype.str, "values": values}
        if array.dtype.kind == "O":
            return {"$objects": [self.encode(v, where) for v in array.tolist()]}
        little = array.astype(array.dtype.newbyteorder("<"), copy=False)
        if little.dtype.str not in ARRAY_DTYPES:
            raise ValueError(f"{where} is an array of {array.dtype}, which the format cannot store")
        self.arrays.append(np.ascontiguousarray(little))
        return {"$array": len(self.arrays) - 1}


def _prepared(estimator: Saveable) -> tuple[bytes, list[np.ndarray]]:
    """The header and the payload arrays of the .cwrs file of `estimator`, after checking that
    `load` would accept them (ValueError or TypeError saying why not)."""
    from . import __version__

    encoder = _Encoder()
    header: dict[str, Any] = {"format": "cwrs-model", "cwrs_version": __version__}
    if type(estimator) in META_KINDS:
        header.update(_encoded_meta(estimator, encoder))
    else:
        header.update(_encoded_estimator(estimator, encoder))
    header["arrays"], _ = _descriptors(encoder.arrays)
    text = json.dumps(header, allow_nan=False, separators=(",", ":")).encode("utf-8")
    return text, encoder.arrays


def _encoded_estimator(estimator: Any, encoder: _Encoder) -> dict[str, Any]:
    """{"estimator": class name, "state": encoded state} of a plain cwrs estimator, after the
    checks `load` makes."""
    cls = type(estimator)
    name = cls.__name__
    if _estimator_classes().get(name) is not cls:
        raise ValueError(f"only cwrs estimators can be saved, not {cls.__qualname__}")
    state = estimator.__getstate__()
    encoded = {key: encoder.encode(value, f"{name}.{key}") for key, value in state.items()}
    try:
        _check_entries(cls, state)
        model = state.get("_model")
        if model is not None:
            _cwrs.Model.from_state(model[1])  # the check `load` makes
        _check_state(estimator, model)
    except (TypeError, ValueError) as error:
        raise type(error)(
            f"this {name} cannot be saved: cwrs.load would refuse its state ({error})"
        ) from None
    return {"estimator": name, "state": encoded}


# ------------------------------------------------------------- estimators holding estimators
class _MetaKind(NamedTuple):
    """What a file may hold of one class of `MetaEstimator`, beside its parameters."""

    #: The classes each estimator it holds must be an instance of.
    held: tuple[type, ...]
    #: The entries a fitted one has beside `estimator_` (all of them), each with its value in a
    #: fresh fitted one of the parameters of the one given, where the check compares them.
    fitted: Callable[[Any], dict[str, Any]]
    #: The entries a fitted one may have or not.
    optional: frozenset[str]
    #: Refuses (ValueError or TypeError) a fitted state (and the `fitted` entries of a fresh
    #: one) that `load` refuses, beyond the entries' names.
    check: Callable[[Any, dict[str, Any], dict[str, Any]], None]


def _state_of(meta: Any) -> dict[str, Any]:
    """The entries of `meta` that pickle keeps (a copy)."""
    getstate = getattr(meta, "__getstate__", None)
    return dict(getstate() if getstate is not None else vars(meta))


def _count(state: dict[str, Any], name: str) -> int:
    value = state[name]
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{name} must be an integer ≥ 0, got {value!r:.80}")
    return int(value)


def _calibrated_fitted(calibrated: Any) -> dict[str, Any]:
    return {"calibration_": None}


def _check_calibrated(calibrated: Any, state: dict[str, Any], fresh: dict[str, Any]) -> None:
    """A map of the classes of a fitted cwrs classifier whose scores it calibrates."""
    estimator = state["estimator_"]
    refuse_estimator(estimator)
    check_map_state(state["calibration_"], len(estimator.classes_))


def _sampler_fitted(sampler: Any) -> dict[str, Any]:
    return {"queried_": None, "n_queried_": None, "n_seen_": None}


def _check_sampler(sampler: Any, state: dict[str, Any], fresh: dict[str, Any]) -> None:
    """Counts that agree (the queried rows among the seen ones), the last call's mask, the
    generator of the "random" draws and the column names of the estimator's features."""
    n_queried, n_seen = _count(state, "n_queried_"), _count(state, "n_seen_")
    queried = state["queried_"]
    if not (
        isinstance(queried, np.ndarray) and queried.dtype == np.bool_ and queried.ndim == 1
        and queried.shape[0] <= n_seen
    ):
        raise ValueError("queried_ must be a 1-D bool array, one entry per row of the last call")
    if n_queried > n_seen:
        raise ValueError(f"n_queried_={n_queried} rows asked of n_seen_={n_seen} seen")
    if "_rng" in state and not isinstance(state["_rng"], np.random.Generator):
        raise ValueError("the generator of the random draws is not a NumPy Generator")
    if FEATURE_NAMES in state:
        _check_feature_names({
            FEATURE_NAMES: state[FEATURE_NAMES], "_model": True,
            "n_features_in_": state["estimator_"].n_features_in_,
        })


def _bandit_fitted(bandit: Any) -> dict[str, Any]:
    """The entries of a fresh bandit of `bandit`'s parameters once it has a model (its model
    built for one feature, which its other entries do not depend on): whatever names and forms
    the bandit gives its generator, a loaded one must have the same."""
    fresh = clone(bandit)
    fresh._ensure_model(1)
    return {
        key: value for key, value in _state_of(fresh).items()
        if key not in HELD and key not in fresh._get_param_names()
    }


def _check_bandit(bandit: Any, state: dict[str, Any], fresh: dict[str, Any]) -> None:
    """Counts of rounds and rows, the width of the model, and every other entry (its random
    generator) of the form a fresh bandit gives it."""
    _count(state, "n_rounds_"), _count(state, "n_learned_")
    estimator = state["estimator_"]
    if state["n_features_in_"] != estimator.n_features_in_:
        raise ValueError(
            f"n_features_in_={state['n_features_in_']!r:.40} but the model has "
            f"{estimator.n_features_in_}"
        )
    if isinstance(estimator, Classifier) and not np.array_equal(estimator.classes_, [0, 1]):
        raise ValueError("a bandit's classifier has the classes [0, 1] (the rewards)")
    for key, reference in fresh.items():
        if not _same_form(state[key], reference):
            raise ValueError(f"{key} is not of the form a bandit gives it ({state[key]!r:.80})")
    if not state["_generator"].any():
        raise ValueError("_generator is all zeros, which is not a state of xoshiro256++")


def _same_form(value: Any, reference: Any) -> bool:
    """Whether `value` has the type of `reference`, and for an array its type and shape."""
    if isinstance(reference, np.ndarray):
        return (
            isinstance(value, np.ndarray) and value.dtype == reference.dtype
            and value.shape == reference.shape
        )
    if isinstance(reference, np.random.Generator):
        return isinstance(value, np.random.Generator) and type(value.bit_generator) is type(
            reference.bit_generator)
    return type(value) is type(reference)


#: The `MetaEstimator`s a file may hold, by class name.
META_CLASSES: dict[str, type] = {
    cls.__name__: cls for cls in (CalibratedClassifier, SelectiveSampler, ContextualBandit)
}
META_KINDS: dict[type, _MetaKind] = {
    CalibratedClassifier: _MetaKind(
        (Classifier,), _calibrated_fitted, frozenset(), _check_calibrated
    ),
    SelectiveSampler: _MetaKind(
        (Classifier,), _sampler_fitted, frozenset([FEATURE_NAMES, "_rng"]), _check_sampler
    ),
    ContextualBandit: _MetaKind(
        (Classifier, Regressor), _bandit_fitted, frozenset(), _check_bandit
    ),
}


def _check_meta(meta: Any) -> None:
    """A `MetaEstimator` that `load` accepts: exactly its parameters, valid, an `estimator` of
    the kind it holds, and either nothing fitted or a fitted `estimator_` with every fitted
    entry of its class, consistent (ValueError or TypeError)."""
    cls = type(meta)
    kind = META_KINDS[cls]
    state = _state_of(meta)
    required = set(cls._get_param_names())
    if not required <= state.keys():
        raise ValueError(f"no value for {sorted(required - state.keys())}")
    meta._check_params()  # before the fitted entries, which may depend on the parameters
    fitted = "estimator_" in state
    fresh = kind.fitted(meta) if fitted else {}
    required |= {"estimator_", *fresh} if fitted else set()
    allowed = required | (kind.optional if fitted else set())
    if not required <= state.keys() <= allowed:
        raise ValueError(
            f"unexpected or missing entries "
            f"{sorted((state.keys() - allowed) | (required - state.keys()))}"
        )
    for key in HELD:
        if key in state and not isinstance(state[key], kind.held):
            raise ValueError(
                f"{key} must be a cwrs {' or '.join(c.__name__.lower() for c in kind.held)}, "
                f"got {state[key]!r:.80}"
            )
    if fitted:
        if "_model" not in state["estimator_"].__dict__:
            raise ValueError("estimator_ is not fitted")
        kind.check(meta, state, fresh)


def _encoded_meta(meta: Any, encoder: _Encoder) -> dict[str, Any]:
    """The header entries of a `MetaEstimator`: the entries of its pickled state in "state",
    but the estimators it holds, in "estimators"."""
    name = type(meta).__name__
    try:
        _check_meta(meta)
    except (TypeError, ValueError) as error:
        raise type(error)(
            f"this {name} cannot be saved: cwrs.load would refuse its state ({error})"
        ) from None
    state = _state_of(meta)
    held = {key: state.pop(key) for key in HELD if key in state}
    return {
        "estimator": name,
        "state": {key: encoder.encode(value, f"{name}.{key}") for key, value in state.items()},
        "estimators": {key: _encoded_estimator(value, encoder) for key, value in held.items()},
    }


def _descriptors(arrays: list[np.ndarray]) -> tuple[list[dict[str, Any]], int]:
    """The header's descriptors of the payload arrays (each aligned), and the payload's size."""
    descriptors, offset = [], 0
    for array in arrays:
        descriptors.append({"dtype": array.dtype.str, "shape": list(array.shape), "offset": offset})
        offset += array.nbytes + -array.nbytes % ALIGNMENT
    return descriptors, offset


def _write(out: IO[bytes], header: bytes, arrays: list[np.ndarray]) -> None:
    """Writes the file to `out`, each array straight from its memory."""
    crc = 0

    def put(data: Any) -> None:
        nonlocal crc
        out.write(data)
        crc = zlib.crc32(data, crc)

    put(PREFIX.pack(MAGIC, FORMAT_VERSION, len(header)))
    put(header)
    for array in arrays:
        if array.nbytes:
            put(_bytes_of(array))
        put(b"\0" * (-array.nbytes % ALIGNMENT))
    out.write(CHECKSUM.pack(crc))


def _bytes_of(array: np.ndarray) -> memoryview:
    """The memory of a C-contiguous array as bytes, without a copy."""
    flat: Any = array.reshape(-1)
    return memoryview(flat).cast("B")


def dumps(estimator: Saveable) -> bytes:
    """The bytes of the .cwrs file of `estimator`."""
    buffer = io.BytesIO()
    _write(buffer, *_prepared(estimator))
    return buffer.getvalue()


def save(estimator: Saveable, file: ModelFile) -> None:
    """Writes `estimator` to `file` (a path or a binary file object) in the .cwrs format.

    A path is written atomically: the model goes to a new temporary file beside the target,
    which is flushed to disk and then renamed over it, so the target holds either its old
    contents or the whole model, never part of it; an existing file keeps its permissions, a
    symbolic link keeps pointing to its target (which receives the model). A FIFO or a
    character device (such as /dev/null) has no file to replace and is written straight
    through; other kinds of file are refused.
    """
    if not isinstance(file, (str, bytes, os.PathLike)) and not hasattr(file, "write"):
        raise TypeError(f"save writes to a path or a binary file object, not {file!r:.80}")
    header, arrays = _prepared(estimator)
    if not isinstance(file, (str, bytes, os.PathLike)):
        _write(file, header, arrays)
        return
    path = os.fspath(file)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    with AtomicOutput(path) as out:
        try:
            _write(out.file, header, arrays)
        except OSError as error:
            raise naming(error, path) from None
        out.commit()


# --------------------------------------------------------------------------------- reading
class _Reader:
    """Reads a file of known size in order, keeping the CRC-32 of every byte read."""

    def __init__(self, file: Any, size: int) -> None:
        self.file = file
        self.size = size
        self.position = 0
        self.crc = 0

    def read(self, n: int) -> bytes:
        data = self.file.read(n)
        if not isinstance(data, bytes):
            raise TypeError("cwrs.load reads binary files: open the file with mode 'rb'")
        if len(data) != n:
            raise ModelFormatError("truncated model file: it ended while it was being read")
        self.position += n
        self.crc = zlib.crc32(data, self.crc)
        return data

    def read_into(self, array: np.ndarray) -> None:
        view = _bytes_of(array)
        readinto = getattr(self.file, "readinto", None)
        filled = 0
        while filled < len(view):
            if readinto is None:
                chunk = self.read(len(view) - filled)
                view[filled:] = chunk
                return
            count = readinto(view[filled:])
            if not count:
                raise ModelFormatError("truncated model file: it ended while it was being read")
            self.crc = zlib.crc32(view[filled : filled + count], self.crc)
            filled += count
            self.position += count

    def skip_to(self, position: int) -> None:
        while self.position < position:
            self.read(min(CHUNK, position - self.position))

    def check_checksum(self) -> None:
        """Reads up to the checksum and compares it with the CRC of everything before it."""
        self.skip_to(self.size - CHECKSUM.size)
        computed = self.crc
        (stored,) = CHECKSUM.unpack(self.read(CHECKSUM.size))
        if computed != stored:
            raise ModelFormatError(
                "corrupted or truncated model file: the checksum does not match its contents"
            )


class _Decoder:
    """Rebuilds values from the JSON header and the arrays read from the payload."""

    def __init__(self, arrays: list[np.ndarray], string_limit: int) -> None:
        self.arrays = arrays
        self.string_limit = string_limit

    def decode(self, value: Any) -> Any:
        if value is None or isinstance(value, (bool, str, int, float)):
            return value
        if isinstance(value, list):
            return [self.decode(v) for v in value]
        if not isinstance(value, dict) or len(value) == 0:
            raise ModelFormatError(f"corrupted model file: unexpected value {value!r:.80}")
        tag = next(iter(value))
        decode = self.TAGS.get(tag)
        if decode is None:
            raise ModelFormatError(f"corrupted model file: unknown entry {tag!r:.80}")
        return decode(self, value)

    def dtype(self, text: Any) -> np.dtype:
        try:
            dtype = np.dtype(text)
        except (TypeError, ValueError):
            raise ModelFormatError(f"corrupted model file: unknown type {text!r:.40}") from None
        if dtype.kind not in "biufUS":
            raise ModelFormatError(f"corrupted model file: type {text!r:.40} is not allowed")
        if dtype.itemsize > self.string_limit:
            raise ModelFormatError(f"corrupted model file: type {text!r:.40} is too large")
        return dtype

    def _float(self, value: dict[str, Any]) -> float:
        text = value["$float"]
        if text not in ("nan", "inf", "-inf"):
            raise ModelFormatError(f"corrupted model file: bad float {text!r:.80}")
        return float(text)

    def _bytes(self, value: dict[str, Any]) -> bytes:
        return str(value["$bytes"]).encode("latin-1")

    def _scalar(self, value: dict[str, Any]) -> Any:
        return np.array(self.decode(value["value"]), dtype=self.dtype(value["$scalar"]))[()]

    def _tuple(self, value: dict[str, Any]) -> tuple:
        return tuple(self._list(value["$tuple"]))

    def _dict(self, value: dict[str, Any]) -> dict:
        pairs = self._list(value["$dict"])
        if not all(isinstance(pair, list) and len(pair) == 2 for pair in pairs):
            raise ModelFormatError("corrupted model file: a mapping entry is not a pair")
        return {_hashable(k): v for k, v in pairs}

    def _list(self, value: Any) -> list:
        if not isinstance(value, list):
            raise ModelFormatError(f"corrupted model file: expected a list, got {value!r:.80}")
        return [self.decode(v) for v in value]

    def _strings(self, value: dict[str, Any]) -> np.ndarray:
        dtype = self.dtype(value["$strings"])
        values = self._list(value["values"])
        if dtype.kind not in "US" or not all(isinstance(v, str) for v in values):
            raise ModelFormatError(f"corrupted model file: bad string array of {dtype}")
        if len(values) * dtype.itemsize > self.string_limit:
            raise ModelFormatError(
                f"corrupted model file: {len(values)} strings of type {dtype} would take more "
                "memory than such a file can describe"
            )
        if dtype.kind == "S":
            return np.array([v.encode("latin-1") for v in values], dtype=dtype)
        return np.array(values, dtype=dtype)

    def _objects(self, value: dict[str, Any]) -> np.ndarray:
        items = self._list(value["$objects"])
        array = np.empty(len(items), dtype=object)
        array[:] = items
        return array

    def _array(self, value: dict[str, Any]) -> np.ndarray:
        index = value["$array"]
        if not isinstance(index, int) or not 0 <= index < len(self.arrays):
            raise ModelFormatError(f"corrupted model file: no array {index!r:.80}")
        return self.arrays[index]

    def _random_state(self, value: dict[str, Any]) -> np.random.RandomState:
        state = self.decode(value["$random_state"])
        generator = np.random.RandomState(
            _bit_generator(state, "random state") if isinstance(state, dict) else None
        )
        try:
            generator.set_state(state)
        except (TypeError, ValueError, IndexError, KeyError) as error:
            raise ModelFormatError(f"corrupted model file: random state: {error}") from None
        return generator

    def _generator(self, value: dict[str, Any]) -> np.random.Generator:
        state = self.decode(value["$generator"])
        bit_generator = _bit_generator(state, "random generator")
        try:
            bit_generator.state = state
        except (TypeError, ValueError, KeyError, IndexError) as error:
            raise ModelFormatError(f"corrupted model file: random generator: {error}") from None
        return np.random.Generator(bit_generator)

    def _object(self, value: dict[str, Any]) -> object:
        cls = HELPER_CLASSES.get(value["$object"])
        attributes = self.decode(value.get("attributes"))
        if cls is None or not isinstance(attributes, dict):
            raise ModelFormatError(f"corrupted model file: unknown object {value['$object']!r:.80}")
        instance = cls.__new__(cls)
        instance.__dict__.update(attributes)
        return instance

    TAGS: dict[str, Callable[[_Decoder, dict[str, Any]], Any]] = {
        "$float": _float,
        "$bytes": _bytes,
        "$scalar": _scalar,
        "$tuple": _tuple,
        "$dict": _dict,
        "$strings": _strings,
        "$objects": _objects,
        "$array": _array,
        "$random_state": _random_state,
        "$generator": _generator,
        "$object": _object,
    }


def _bit_generator(state: Any, what: str) -> np.random.BitGenerator:
    """A new NumPy bit generator of the kind `state` (a bit generator's state mapping) names."""
    name = state.get("bit_generator") if isinstance(state, dict) else None
    if not isinstance(name, str) or name not in BIT_GENERATORS:
        raise ModelFormatError(f"corrupted model file: unknown {what}")
    return getattr(np.random, name)()


def _hashable(key: Any) -> Any:
    if isinstance(key, (list, dict)) or (isinstance(key, np.ndarray) and key.ndim > 0):
        raise ModelFormatError("corrupted model file: a mapping key is not hashable")
    return key


def _layout(descriptors: Any, payload_size: int) -> list[tuple[int, int, int, np.dtype, list]]:
    """(offset, size in bytes, index, dtype, shape) of each payload array, by offset; refuses
    arrays that overlap or run past the payload before anything is allocated."""
    if not isinstance(descriptors, list):
        raise ModelFormatError("corrupted model file: the header has no array list")
    layout = []
    for index, descriptor in enumerate(descriptors):
        try:
            dtype, shape, offset = descriptor["dtype"], descriptor["shape"], descriptor["offset"]
        except (TypeError, KeyError):
            raise ModelFormatError("corrupted model file: bad array descriptor") from None
        if not isinstance(dtype, str) or dtype not in ARRAY_DTYPES:
            raise ModelFormatError(f"corrupted model file: array type {dtype!r:.40}")
        dtype = np.dtype(dtype)
        if not (
            isinstance(shape, list)
            and all(type(n) is int and n >= 0 for n in shape)  # not a JSON true or false
            and type(offset) is int
            and offset >= 0
            # What NumPy can shape, even without elements: few axes, each extent addressable.
            and len(shape) <= MAX_AXES
            and math.prod(max(n, 1) for n in shape) * dtype.itemsize < 2**63
        ):
            raise ModelFormatError("corrupted model file: bad array shape or offset")
        size = math.prod(shape) * dtype.itemsize
        if offset + size > payload_size:
            raise ModelFormatError("corrupted model file: an array runs past the end of the data")
        layout.append((offset, size, index, dtype, shape))
    layout.sort(key=lambda entry: entry[:2])
    end = 0
    for offset, size, *_ in layout:
        if offset < end:
            raise ModelFormatError("corrupted model file: two arrays overlap")
        end = offset + size
    return layout


def _read_arrays(reader: _Reader, layout: list, payload_start: int) -> list[np.ndarray]:
    arrays: list[Any] = [None] * len(layout)
    for offset, _, index, dtype, shape in layout:
        reader.skip_to(payload_start + offset)
        array = np.empty(math.prod(shape), dtype=dtype)
        reader.read_into(array)
        if not dtype.isnative:
            array = array.byteswap().view(dtype.newbyteorder("="))
        arrays[index] = array.reshape(shape)
    return arrays


def _read(file: Any, size: int, expected: Optional[type]) -> Any:
    """The estimator in `file`, `size` bytes from its current position."""
    reader = _Reader(file, size)
    if size < PREFIX.size + CHECKSUM.size:
        raise ModelFormatError("not a cwrs model file (it does not start with the .cwrs signature)")
    magic, version, header_length = PREFIX.unpack(reader.read(PREFIX.size))
    if magic != MAGIC:
        raise ModelFormatError("not a cwrs model file (it does not start with the .cwrs signature)")
    if version > FORMAT_VERSION:
        raise ModelFormatError(
            f"this model file has format version {version}, written by a newer cwrs; this cwrs "
            f"reads format versions up to {FORMAT_VERSION}: upgrade cwrs to load it"
        )
    if version < 1:
        raise ModelFormatError(f"corrupted model file: format version {version}")
    upgrade = version == 1
    payload_start = PREFIX.size + header_length
    payload_size = size - CHECKSUM.size - payload_start
    if payload_size < 0:
        raise ModelFormatError("truncated model file: it ends before its header does")
    try:
        cls, state, held, layout = _parse_header(
            reader.read(header_length), payload_size, expected
        )
        if held is not None and upgrade:
            raise ModelFormatError(f"corrupted model file: format version 1 has no {cls.__name__}")
    except ModelFormatError:
        reader.check_checksum()  # a damaged file is reported as such, whatever broke first
        raise
    arrays = _read_arrays(reader, layout, payload_start)
    reader.check_checksum()
    decoder = _Decoder(arrays, STRING_GROWTH * size + STRING_SLACK)
    try:
        state = {key: decoder.decode(value) for key, value in state.items()}
        if upgrade and isinstance(state.get("_model"), tuple):
            state["_model"] = _model_from_v1(state["_model"], state.get("a", 1.0))
        if held is not None:
            held = {
                key: (inner, {k: decoder.decode(v) for k, v in inner_state.items()})
                for key, (inner, inner_state) in held.items()
            }
    except ModelFormatError:
        raise
    except (KeyError, TypeError, ValueError, OverflowError, IndexError, AttributeError) as error:
        raise ModelFormatError(f"corrupted model file: {error!r:.200}") from None
    except RecursionError:
        raise ModelFormatError("corrupted model file: its header is nested too deeply") from None
    if held is not None:
        return _rebuild_meta(cls, state, held)
    return _rebuild(cast(Any, cls), state)


def _rebuild_meta(cls: type, state: dict[str, Any], held: dict[str, Any]) -> Any:
    """The `MetaEstimator` of class `cls` with the entries `state` holding the estimators of
    `held` (attribute -> (class, state)), each rebuilt and checked as a file holding it alone,
    refused unless it passes `_check_meta`."""
    if "estimator" not in held:
        raise ModelFormatError(f"corrupted model file: a {cls.__name__} holds its estimator")
    if held.keys() & state.keys():
        raise ModelFormatError("corrupted model file: an estimator is held twice")
    meta = cast(Any, cls).__new__(cls)
    estimators = {key: _rebuild(inner_cls, inner) for key, (inner_cls, inner) in held.items()}
    entries = {**state, **estimators}
    setstate = getattr(meta, "__setstate__", None)
    try:
        if setstate is not None:
            setstate(entries)
        else:
            meta.__dict__.update(entries)
        _check_meta(meta)
    except (TypeError, ValueError, KeyError, AttributeError, IndexError, OverflowError) as error:
        raise ModelFormatError(f"corrupted model file: {error}") from None
    return meta


def _model_from_v1(model: tuple, a: Any) -> tuple[str, dict[str, Any]]:
    """The ("Model", named state) pair of a format-version-1 model: a (native class name,
    positional state tuple) pair (docs/model-format.md maps the positions to the names). A
    linear model's state holds no `a` (only a fresh model uses it): the estimator's is taken."""
    kind, native = model
    if kind in ("BinaryModel", "RegressionModel"):
        binary = kind == "BinaryModel"
        rule, params, covariance, n_features, fit_intercept, mean, sigma, n_updates = native[:8]
        l1, l1_state = native[-2:]
        state = _linear(rule, params, covariance, n_features, fit_intercept, a, l1)
        state.update(kind="binary" if binary else "regressor", mean=mean, n_updates=n_updates)
        state["covariance_values"] = sigma
        if binary:
            state["n_mistakes"] = native[8]
        if l1_state is not None:
            state["l1_total"], state["l1_last"] = l1_state
        return "Model", state
    if kind == "MulticlassModel":
        (rule, params, strategy, covariance, n_classes, n_features, fit_intercept, means, sigmas,
         (n_updates, n_mistakes), l1, l1_states) = native
        state = _linear(rule, params, covariance, n_features, fit_intercept, a, l1)
        state.update(
            kind="multiclass", strategy=strategy, n_classes=n_classes, means=means,
            covariance_values=sigmas, n_updates=n_updates, n_mistakes=n_mistakes,
        )
        if l1_states is not None:
            state["l1_totals"] = np.array([total for total, _ in l1_states], dtype=np.float64)
            state["l1_last"] = np.concatenate([last for _, last in l1_states])
        return "Model", state
    if kind == "KernelModel":
        rule, params, kernel, kernel_params, shape, gaussian, counters = native
        classes = None
    elif kind == "MulticlassKernelModel":
        rule, params, strategy, kernel, kernel_params, shape, classes, counters = native
    else:
        raise ValueError(f"unknown kind of fitted model {kind!r:.80}")
    (gamma, degree, coef0), (n_features, fit_intercept, a, budget) = kernel_params, shape
    state = {
        "version": 1, "kind": "kernel", "rule": rule, "params": dict(params),
        "n_features": n_features, "fit_intercept": fit_intercept, "a": a, "kernel": kernel,
        "gamma": gamma, "degree": degree, "coef0": coef0, "budget": budget,
        "n_updates": counters[0], "n_mistakes": counters[1],
    }
    if classes is None:
        state.update(_dual_from_v1(gaussian))
    else:
        state.update(kind="multiclass_kernel", strategy=strategy, n_classes=len(classes))
        state["classes"] = [{"version": 1, **_dual_from_v1(g)} for g in classes]
    return "Model", state


def _linear(
    rule: Any, params: Any, covariance: Any, n_features: Any, fit_intercept: Any, a: Any, l1: Any
) -> dict[str, Any]:
    """The configuration entries of a format-version-1 linear model."""
    state = {
        "version": 1, "rule": rule, "params": dict(params), "covariance": covariance,
        "n_features": n_features, "fit_intercept": fit_intercept, "a": a, "penalty": None,
    }
    if l1 is not None:
        state["penalty"], state["alpha"], state["penalize_intercept"] = l1
    return state


def _dual_from_v1(gaussian: tuple) -> dict[str, Any]:
    """The named entries of one format-version-1 dual Gaussian."""
    (values, indices, indptr), (nu, pi, gram) = gaussian
    return {
        "support_values": values, "support_indices": indices, "support_indptr": indptr,
        "dual_coef": nu, "dual_covariance": pi, "gram": gram,
    }


def _parse_header(
    text: bytes, payload_size: int, expected: Optional[type]
) -> tuple[type, dict[str, Any], Optional[dict[str, Any]], list]:
    """The header's estimator class, its encoded state, the classes and encoded states of the
    estimators it holds (None for a plain estimator), and the layout of the payload."""
    try:
        header = json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise ModelFormatError(f"corrupted model file: unreadable header ({error})") from None
    except RecursionError:
        raise ModelFormatError("corrupted model file: its header is nested too deeply") from None
    if not isinstance(header, dict) or header.get("format") != "cwrs-model":
        raise ModelFormatError("corrupted model file: the header is not a cwrs model header")
    name = str(header.get("estimator"))
    cls: Optional[type] = META_CLASSES.get(name) or _estimator_classes().get(name)
    if cls is None:
        raise ModelFormatError(f"unknown estimator {header.get('estimator')!r:.80} in model file")
    if expected is not None and not issubclass(cls, expected):
        raise ModelFormatError(
            f"the file holds an estimator of class {cls.__name__}, not {expected.__name__}"
        )
    state = header.get("state")
    if not isinstance(state, dict):
        raise ModelFormatError("corrupted model file: the header has no state")
    held = None
    if cls in META_KINDS:
        held = _held_estimators(header.get("estimators"), META_KINDS[cls].held)
    elif "estimators" in header:
        raise ModelFormatError(f"corrupted model file: a {name} holds no estimators")
    return cls, state, held, _layout(header.get("arrays"), payload_size)


def _held_estimators(
    entries: Any, kinds: tuple[type, ...]
) -> dict[str, tuple[type[Estimator], dict[str, Any]]]:
    """attribute -> (class, encoded state) of the estimators a `MetaEstimator` holds: plain cwrs
    estimators of the `kinds` it takes only."""
    if not isinstance(entries, dict) or not entries.keys() <= set(HELD):
        raise ModelFormatError("corrupted model file: bad list of held estimators")
    held: dict[str, tuple[type[Estimator], dict[str, Any]]] = {}
    for key, entry in entries.items():
        cls = _estimator_classes().get(str(entry.get("estimator"))) if isinstance(
            entry, dict) else None
        if cls is None or not issubclass(cls, kinds):
            what = " or ".join(kind.__name__.lower() for kind in kinds)
            raise ModelFormatError(
                f"corrupted model file: {key} must be a cwrs {what}, got "
                f"{entry.get('estimator') if isinstance(entry, dict) else entry!r:.80}"
            )
        if not isinstance(entry.get("state"), dict):
            raise ModelFormatError(f"corrupted model file: {key} has no state")
        held[key] = (cls, entry["state"])
    return held


def hyper_parameters_of(cls: Any, config: dict[str, Any]) -> dict[str, Any]:
    """The hyper-parameters with which an estimator of class `cls` builds a native model of
    `config` (its configuration entries): what a file that holds the model alone (written by
    the Rust crate, `cwrs::model::file::save`) gets. The configuration is the model's, so
    values the estimator resolves at fit (a kernel's `gamma="scale"`, ALMA's default C) come
    back resolved; what the configuration does not hold (`n_iter`, `shuffle`, `random_state`,
    `n_jobs`) keeps its default."""
    params = dict(init_defaults(cls))
    rule_params = config.get("params")
    if isinstance(rule_params, dict):
        params.update({k: v for k, v in rule_params.items() if k in params})
    for key in ("a", "fit_intercept", "rank", "alpha", "penalize_intercept", "process_noise",
                "kernel", "gamma", "degree", "coef0", "budget", "loss"):
        if key in config and key in params:
            params[key] = config[key]
    if "covariance" in params and config.get("covariance") in ("diag", "full", "lowrank"):
        params["covariance"] = config["covariance"]
    if "penalty" in params:
        penalty = config.get("penalty")
        params["penalty"] = "l1" if penalty == "l1-rda" else penalty
        if penalty == "l1-rda":
            params["l1_form"] = "rda"
    if "multi_class" in params and "strategy" in config:
        params["multi_class"] = config["strategy"]
    if "average" in params:
        start = config.get("average")
        params["average"] = False if start is None else True if start == 1 else start
    if "r" in params and config.get("noise_variance") == "auto":
        params["r"] = "auto"
    if "a" in params and config.get("prior") == "auto":
        params["a"] = "auto"
    return params


def _rebuild(cls: type[Estimator], state: dict[str, Any]) -> Estimator:
    """The estimator of class `cls` with `state`, refused unless it passes `_check_state` and
    its native model's validating `from_state`. A state holding the fitted model without any
    hyper-parameter (a file the Rust crate wrote) gets those the model's configuration
    implies (`hyper_parameters_of`)."""
    model = state.get("_model")
    if (
        isinstance(model, tuple) and len(model) == 2 and isinstance(model[1], dict)
        and not set(init_defaults(cast(Any, cls))) & set(state)
    ):
        state = {**hyper_parameters_of(cls, model[1]), **state}
    state = with_added_parameters(cls, state)
    try:
        _check_entries(cls, state)
    except ValueError as error:
        raise ModelFormatError(f"corrupted model file: {error}") from None
    model = state.get("_model")
    estimator = cls.__new__(cls)
    try:
        estimator.__setstate__(state)  # the native model's `from_state` checks its state
        _check_state(estimator, model)
    except (TypeError, ValueError, OverflowError, AttributeError, IndexError) as error:
        raise ModelFormatError(f"corrupted model file: {error}") from None
    return estimator


def _check_feature_names(state: dict[str, Any]) -> None:
    """`feature_names_in_`, if stored: one string per feature of a fitted model."""
    if FEATURE_NAMES not in state:
        return
    names = state[FEATURE_NAMES]
    if not (
        "_model" in state
        and isinstance(names, np.ndarray)
        and names.dtype == object
        and names.shape == (state.get("n_features_in_"),)
        and all(isinstance(name, str) for name in names)
    ):
        raise ValueError("feature_names_in_ is not one name per feature")


def loads(data: bytes) -> Estimator:
    """The estimator stored in `data`, the bytes of a .cwrs file."""
    data = bytes(data)
    return _read(io.BytesIO(data), len(data), None)


@overload
def load(
    file: ModelFile,
) -> Union[Classifier, Regressor, CalibratedClassifier, SelectiveSampler, ContextualBandit]: ...
@overload
def load(file: ModelFile, expected: type[_Estimator]) -> _Estimator: ...
def load(
    file: ModelFile, expected: Optional[type[Any]] = None
) -> Union[Classifier, Regressor, CalibratedClassifier, SelectiveSampler, ContextualBandit,
           Estimator]:
    """The estimator saved by `estimator.save(file)` (a path or a binary file object).

    `expected`, a cwrs class such as `cwrs.AROW`, `cwrs.Classifier`,
    `cwrs.CalibratedClassifier`, `cwrs.SelectiveSampler` or `cwrs.bandit.ContextualBandit`,
    makes sure the file holds one (and tells type checkers so): `cwrs.load(path, cwrs.AROW)`
    is typed `AROW`.

    Raises ModelFormatError (a ValueError) for a file that is not a cwrs model (or not of the
    `expected` class), is truncated or altered (checked by CRC-32), holds a state no cwrs
    estimator can have, or was written by a newer cwrs with a newer format version. A path must
    name a regular file (a FIFO or a device is refused at once, without waiting for data).
    """
    if expected is not None and not (
        isinstance(expected, type)
        and (issubclass(expected, Estimator) or expected in META_KINDS)
    ):
        raise TypeError(f"expected must be a cwrs estimator class, got {expected!r:.80}")
    if not isinstance(file, (str, bytes, os.PathLike)):
        if not hasattr(file, "read"):
            raise TypeError(f"load reads a path or a binary file object, not {file!r:.80}")
        return _read_file_object(file, expected)
    path = os.fspath(file)
    # O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    descriptor = os.open(path, flags)
    with os.fdopen(descriptor, "rb") as opened:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise ModelFormatError(
                f"{os.fsdecode(path)!r} is {file_kind(status.st_mode)}, not a model file: "
                "cwrs.load reads regular files (to read from a pipe, pass an open binary file)"
            )
        return _read(opened, status.st_size, expected)


def _read_file_object(file: Any, expected: Optional[type]) -> Any:
    """Reads a model from a binary file object: streamed if it can tell its size (seekable),
    else read whole first."""
    seekable = getattr(file, "seekable", None)
    if seekable is not None and seekable():
        start = file.tell()
        size = file.seek(0, io.SEEK_END) - start
        file.seek(start)
        return _read(file, size, expected)
    data = file.read()
    if not isinstance(data, bytes):
        raise TypeError("cwrs.load reads binary files: open the file with mode 'rb'")
    return _read(io.BytesIO(data), len(data), expected)
