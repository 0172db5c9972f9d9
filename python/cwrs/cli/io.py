"""Inputs and outputs of the `cwrs` command: data files (LIBSVM, .npz, bundled, stdin) read
whole or in chunks, rows shuffled through a bounded buffer, and output files checked up front and
written atomically."""

from __future__ import annotations

import atexit
import contextlib
import errno
import itertools
import math
import os
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np

from .._files import AtomicOutput
from .._svmlight import _line_chunks, index_base_for, load_svmlight, zero_based_file

BUNDLED = {"svmguide3": Path(__file__).parent.parent / "data" / "svmguide3.npz"}
CHUNK_ROWS = 10_000


class UsageError(Exception):
    """Bad input from the user: reported as one line on stderr, exit status 1."""


# ------------------------------------------------------------------------------------ data
# How the LIBSVM indices of each file are read, once decided: every pass over a file reads it
# the same way, and --verbose says it once.
INDEXING: dict[Path, bool] = {}
# Whether to say on stderr how each file is read (--verbose).
VERBOSE = {"on": False}


def data_path(spec):
    """The data file of `-d`: a path, a bundled data set, or `-` for stdin, which is copied to a
    private temporary file (read several times by `train`), removed when the command ends."""
    if spec == "-":
        return spool_stdin()
    path = BUNDLED.get(spec, Path(spec))
    if not path.is_file():
        raise UsageError(f"{spec}: no such file (or bundled data set: {', '.join(BUNDLED)})")
    return path


def weight_lines(path):
    """The weights of a --weights file, one per line, with their line numbers: each a finite
    number ≥ 0 (a UsageError naming the file and line otherwise)."""
    try:
        with open(path, encoding="utf-8") as lines:
            for number, line in enumerate(lines, 1):
                text = line.strip()
                try:
                    weight = float(text)
                except ValueError:
                    weight = math.nan
                if not (math.isfinite(weight) and weight >= 0):
                    raise UsageError(
                        f"{path}, line {number}: {text[:40]!r} is not a weight (a finite number "
                        "≥ 0, one per line)"
                    )
                yield number, weight
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"--weights {path}: {error}") from None


def check_weight_file(path, n_rows):
    """Checks the --weights file before training: one weight per row of the data."""
    count = sum(1 for _ in weight_lines(path))
    if count != n_rows:
        raise UsageError(
            f"--weights {path} has {count} weights for {n_rows} rows: one per row, in order"
        )


def weighted_chunks(chunks, path):
    """The (X, y) `chunks` with each row's weight from the --weights file: (X, records of y and
    w), so that a shuffle keeps each label with its weight (see `split_weights`)."""
    lines = weight_lines(path)
    for X, y in chunks:
        weights = np.fromiter((w for _, w in itertools.islice(lines, len(y))), float, len(y))
        yield X, np.rec.fromarrays([y, weights], names="y,w")


def split_weights(chunks):
    """(X, y, weights) of the chunks of `weighted_chunks`."""
    for X, pairs in chunks:
        yield X, np.asarray(pairs["y"]), np.ascontiguousarray(pairs["w"])


def spool_stdin():
    folder = Path(tempfile.mkdtemp(prefix="cwrs-"))  # readable by this user only
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    path = folder / "stdin"
    with open(path, "wb") as copy:
        shutil.copyfileobj(sys.stdin.buffer, copy, 1 << 20)
    return path


def is_npz(path):
    return path.suffix == ".npz"


def load_npz(path, labels=True):
    """Arrays X and y of an .npz file; without `labels`, y may be absent (NaN labels)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            X = data["X"]
            y = data["y"] if labels or "y" in data else np.full(X.shape[:1], np.nan)
    except KeyError as error:
        needs = "X and y" if labels else "X"
        raise UsageError(f"{path}: an .npz data file needs arrays {needs} ({error})") from None
    except (zipfile.BadZipFile, EOFError, ValueError) as error:
        # Not a zip archive, truncated, or arrays of Python objects (never unpickled).
        raise UsageError(
            f"{path}: not a readable .npz file of numeric arrays X and y ({error})"
        ) from None
    if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.shape[0]:
        raise UsageError(
            f"{path}: X must be 2-D (rows × features) and y 1-D with one label per row; got X "
            f"of shape {X.shape} and y of shape {y.shape}"
        )
    return X, y


def indexing(path, zero_based):
    """`zero_based` (True, False or "auto") as decided for `path`: "auto" is decided once, by
    looking for an index 0 in the file, as scikit-learn does."""
    if path not in INDEXING:
        chosen = zero_based_file(path, zero_based)
        INDEXING[path] = chosen
        if VERBOSE["on"]:
            why = "" if zero_based != "auto" else (
                " (an index 0 occurs)" if chosen else " (no index 0 occurs; --zero-based if the "
                "file was written zero-based, as scikit-learn's dump_svmlight_file does)")
            print(f"cwrs: reading {path} as {'zero' if chosen else 'one'}-based{why}",
                  file=sys.stderr)
    return INDEXING[path]


def one_based_hint(error, learned=None):
    """A reader error, with the way out when it is an index 0 in a file read as one-based
    (`learned`: the index base of the model the file is read for, if it has one)."""
    if "but indices are one-based" not in str(error):
        return error
    if learned is not False:
        return UsageError(f"{error}; pass --zero-based if the file counts indices from 0")
    return UsageError(
        f"{error}, as the model learned them (zero_based_=False); if its training file counts "
        "indices from 0 too (scikit-learn's dump_svmlight_file writes them so), train it again "
        "with --zero-based"
    )


def model_indexing(path, zero_based, model):
    """How to read the LIBSVM indices of `path` for `model`: as the model learned them (its
    `zero_based_`), when it learned from LIBSVM files; an option saying otherwise is refused."""
    if is_npz(path):
        return zero_based
    try:
        return index_base_for(zero_based, getattr(model, "zero_based_", None), path)
    except ValueError as error:
        raise UsageError(str(error)) from None


def load_table(path, zero_based):
    """The whole data set as (X, y), for `compare` (which reorders rows)."""
    if is_npz(path):
        return load_npz(path)
    try:
        return load_svmlight(path, zero_based=indexing(path, zero_based))
    except ValueError as error:
        raise one_based_hint(error) from None


def chunks(path, zero_based, learned=None, labels=True):
    """(X, y) chunks of the data, streamed from a LIBSVM file; X may grow wider as it goes.
    `learned`: the index base of the model the file is read for, for the messages. Without
    `labels`, rows may lack them (NaN in y; see `cwrs._svmlight._line_chunks`)."""
    if is_npz(path):
        X, y = load_npz(path, labels)
        for start in range(0, len(y), CHUNK_ROWS):
            yield X[start : start + CHUNK_ROWS], y[start : start + CHUNK_ROWS]
        return
    try:
        read = _line_chunks(path, CHUNK_ROWS, indexing(path, zero_based), None, not labels)
        yield from ((X, y) for X, y, _ in read)
    except ValueError as error:
        raise one_based_hint(error, learned) from None


def scan(path, zero_based, labels):
    """(rows, features, sorted distinct labels or None) of a data file, in one streaming pass."""
    n_rows, n_features, seen = 0, 0, set()
    for X, y in chunks(path, zero_based):
        n_rows, n_features = n_rows + X.shape[0], max(n_features, X.shape[1])
        if labels:
            seen.update(np.unique(y).tolist())
    return n_rows, n_features, (np.array(sorted(seen)) if labels else None)


def with_width(X, n_features):
    """X with exactly `n_features` columns: narrower rows are padded with zeros, and columns past
    the model's width (features it never saw, so with weight 0) are dropped."""
    if X.shape[1] == n_features:
        return X
    if X.shape[1] > n_features:
        return X[:, :n_features]
    if isinstance(X, np.ndarray):
        return np.pad(X, ((0, 0), (0, n_features - X.shape[1])))
    return type(X)((X.data, X.indices, X.indptr), shape=(X.shape[0], n_features))


# ------------------------------------------------------------------------------- outputs
def same_file(a, b):
    """Whether paths a and b name one file: the same device and inode when both exist (so hard
    links and symlinks count), else the same resolved path."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


class Output:
    """A file the command writes (cwrs._files.AtomicOutput), opened before any work starts so
    that a bad path fails first, and put in place by `commit` only once complete; if the
    command fails, `close` leaves the target as it was."""

    def __init__(self, option, path, binary):
        self.option, self.path = option, str(path)
        target = os.path.realpath(self.path)
        if os.path.isdir(target) or self.path.endswith(os.sep):
            raise UsageError(f"{option} {self.path}: is a folder; give a file name")
        folder = os.path.dirname(target)
        if not os.path.isdir(folder):
            raise UsageError(f"{option} {self.path}: its folder does not exist")
        try:
            self.output = AtomicOutput(self.path, binary)
        except OSError as error:
            if error.errno == errno.ENXIO:
                raise UsageError(
                    f"{option} {self.path}: no process reads it (a FIFO needs its reader "
                    "started first)"
                ) from None
            if error.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
                raise UsageError(
                    f"{option} {self.path}: cannot write in {folder} ({error.strerror})"
                ) from None
            raise UsageError(f"{option} {self.path}: {error.strerror or error}") from None
        except ValueError as error:
            raise UsageError(f"{option} {error}") from None
        self.file = self.output.file

    @contextlib.contextmanager
    def naming_errors(self):
        """Write errors (a full disk, a closed pipe) reported with the output they concern."""
        try:
            yield
        except OSError as error:
            if isinstance(error, BrokenPipeError):
                raise
            raise UsageError(f"{self.option} {self.path}: {error.strerror or error}") from None

    def writelines(self, lines):
        with self.naming_errors():
            self.file.writelines(lines)

    def commit(self):
        with self.naming_errors():
            self.output.commit()

    def close(self):
        """Discards an uncommitted output (the target stays as it was)."""
        self.output.discard()


def open_outputs(stack, outputs, inputs):
    """For each (option, path, binary) of `outputs`, its Output (None where path is None), after
    checking that none is the same file as an (option, path) of `inputs` or as another output.
    `stack` (a contextlib.ExitStack) discards those not committed when the command ends."""
    given = [(option, path) for option, path, _ in outputs if path is not None]
    for index, (option, path) in enumerate(given):
        for other_option, other in [*inputs, *given[:index]]:
            if same_file(path, other):
                raise UsageError(
                    f"{option} {path} is the same file as {other_option} {other}; writing it "
                    "would destroy that file: choose another output"
                )
    opened = []
    for option, path, binary in outputs:
        output = None if path is None else Output(option, path, binary)
        if output is not None:
            stack.callback(output.close)
        opened.append(output)
    return opened


# ------------------------------------------------------------------------------- shuffling
def stack_rows(parts):
    if isinstance(parts[0], np.ndarray):
        return np.concatenate(parts)
    import scipy.sparse

    return scipy.sparse.vstack(parts, format="csr")


class RowPool:
    """The chunks whose rows a shuffle buffer holds, each row addressed by a running number."""

    def __init__(self):
        self.parts, self.starts, self.size = [], [], 0

    def add(self, X, y):
        """Numbers of the rows of (X, y), added."""
        self.parts.append((X, y))
        self.starts.append(self.size)
        self.size += len(y)
        return np.arange(self.size - len(y), self.size)

    def take(self, ids):
        """(X, y) of the rows numbered `ids`, in that order."""
        part_of = np.searchsorted(self.starts, ids, side="right") - 1
        grouped = np.argsort(part_of, kind="stable")
        parts, first = np.unique(part_of[grouped], return_index=True)
        pieces = []
        for part, rows in zip(parts, np.split(ids[grouped], first[1:])):
            X, y = self.parts[part]
            pieces.append((X[rows - self.starts[part]], y[rows - self.starts[part]]))
        X, y = stack_rows([X for X, _ in pieces]), np.concatenate([y for _, y in pieces])
        back = np.empty_like(grouped)
        back[grouped] = np.arange(len(grouped))
        return X[back], y[back]


def shuffled(chunks, capacity, rng):
    """The rows of the (X, y) `chunks` (of equal width) in random order, through a buffer of
    `capacity` rows: once the buffer is full, each incoming row takes the place of a random
    buffered row, which leaves; at the end the buffered rows leave in random order. With
    `capacity` at least the number of rows this is an exact uniform permutation."""
    pool, slots = RowPool(), np.empty(0, dtype=np.intp)
    for X, y in chunks:
        ids = pool.add(X, y)
        filling = capacity - len(slots)
        slots = np.concatenate([slots, ids[:filling]])
        incoming = ids[filling:]
        if len(incoming) == 0:
            continue
        # Row i replaces slot picks[i] and emits what it holds: the row placed there at the
        # previous pick of that slot in this chunk, else the slot's content before the chunk.
        picks = rng.integers(capacity, size=len(incoming))
        by_slot = np.argsort(picks, kind="stable")
        sorted_picks = picks[by_slot]
        repeat = sorted_picks[1:] == sorted_picks[:-1]
        emitted = slots[picks]
        emitted[by_slot[1:][repeat]] = incoming[by_slot[:-1][repeat]]
        last = np.append(~repeat, True)
        slots[sorted_picks[last]] = incoming[by_slot[last]]
        yield pool.take(emitted)
        if pool.size > 2 * capacity:  # drop the chunks no slot holds a row of any more
            X_kept, y_kept = pool.take(slots)
            pool = RowPool()
            slots = pool.add(X_kept, y_kept)
    remaining = slots[rng.permutation(len(slots))]
    for start in range(0, len(remaining), CHUNK_ROWS):
        yield pool.take(remaining[start : start + CHUNK_ROWS])
