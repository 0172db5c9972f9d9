"""Files written in full or not at all: the one way cwrs writes a user's file (`save` and every
output of the `cwrs` command).

A regular file (or a new one) is written to a temporary file beside its target, with a name
nobody else uses (O_EXCL), then flushed to disk and renamed over the target, so the target holds
either its old or its new content, never a part. The target keeps its permissions, and a
symbolic link stays a link (its target is replaced), wherever it is (a file on the /dev/shm
tmpfs too: what the path is decides, not where). A FIFO, a character device or a block device
(`/dev/null`) has no file to replace and is written through instead; a FIFO that no process reads
is an error, not a wait. A name of one of this process's open descriptors (`/dev/stdout`,
`/dev/fd/N`) is written through that descriptor, at its position: `-p /dev/stdout > out.txt`
puts the lines into out.txt where the shell's redirection says. Anything else (a folder, a
socket) is refused. Errors name the user's path, never the temporary file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import sys
import time
from types import TracebackType
from typing import IO, Any, Optional

# Seconds a FIFO output may wait for its reader.
FIFO_READER_WAIT = 5.0


def file_kind(mode: int) -> str:
    """What a non-regular file is, for messages."""
    kinds = [
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ]
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def naming(error: OSError, path: str) -> OSError:
    """`error` as the same kind of OSError, naming the user's `path` (not a temporary file)."""
    if error.errno is None:
        return OSError(f"cannot write {path!r}: {error}")
    return type(error)(error.errno, error.strerror, path)


class AtomicOutput:
    """The file at `path`, opened for writing (as `file`): `commit()` puts the content in
    place; `discard()` (or leaving a `with` block without committing) leaves the target as it
    was and removes the temporary file."""

    def __init__(self, path: Any, binary: bool = True) -> None:
        self.path = os.fspath(path)
        self.temporary: Optional[str] = None
        mode = "wb" if binary else "w"
        # Through symbolic links: the link stays, its target changes.
        self.target = os.path.realpath(self.path)
        try:
            status: Optional[os.stat_result] = os.stat(self.target)
        except FileNotFoundError:
            status = None
        descriptor = _open_descriptor_named(self.path)
        if descriptor is not None:
            self.file: IO[Any] = _write_through_descriptor(descriptor, self.path, mode)
            return
        if status is not None and _written_through(status.st_mode):
            self.file = _open_write_through(self.path, mode)
            return
        if status is not None and not stat.S_ISREG(status.st_mode):
            if stat.S_ISDIR(status.st_mode):
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), self.path)
            raise ValueError(
                f"cannot write {self.path!r}: it is {file_kind(status.st_mode)}, not a "
                "regular file"
            )
        directory = os.path.dirname(self.target)
        try:
            self.temporary, descriptor = _create_temporary(
                directory, os.path.basename(self.target)
            )
            if status is not None and hasattr(os, "fchmod"):
                os.fchmod(descriptor, stat.S_IMODE(status.st_mode))
        except OSError as error:
            raise naming(error, self.path) from None
        self.file = os.fdopen(descriptor, mode)

    def commit(self) -> None:
        """Puts the written content in place (durably, where the platform allows)."""
        try:
            if self.temporary is None:
                self.file.close()
                return
            self.file.flush()
            os.fsync(self.file.fileno())
            self.file.close()
            os.replace(self.temporary, self.target)
        except OSError as error:
            self.discard()
            raise naming(error, self.path) from None
        self.temporary = None
        _sync_directory(os.path.dirname(self.target))

    def discard(self) -> None:
        """Leaves the target as it was (a no-op after `commit`)."""
        with contextlib.suppress(OSError):
            self.file.close()
        if self.temporary is not None:
            with contextlib.suppress(OSError):
                os.remove(self.temporary)
            self.temporary = None

    def __enter__(self) -> AtomicOutput:
        return self

    def __exit__(
        self,
        kind: Optional[type[BaseException]],
        error: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> None:
        self.discard()


def _written_through(mode: int) -> bool:
    """Whether a file of this mode has no content to replace: a FIFO or a device."""
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode)


def _open_descriptor_named(path: str) -> Optional[int]:
    """The number N of this process's descriptor that `path` names (`/dev/stdout`,
    `/dev/fd/N`, `/proc/self/fd/N`, or a link to one of them), else None. Opening such a name
    on Linux opens its file anew, at offset 0 and without the redirection's O_APPEND, and
    replacing it would leave the descriptor on the old file: it is written through instead."""
    folders = {os.path.realpath(folder) for folder in ("/dev/fd", "/proc/self/fd")}
    link = os.path.abspath(path)
    for _ in range(40):  # the links the system itself follows at most
        if os.path.realpath(os.path.dirname(link)) in folders:
            name = os.path.basename(link)
            return int(name) if name.isdigit() else None
        if not os.path.islink(link):
            return None
        link = os.path.normpath(os.path.join(os.path.dirname(link), os.readlink(link)))
    return None


def _write_through_descriptor(descriptor: int, path: str, mode: str) -> IO[Any]:
    """A file writing to a copy of `descriptor`, after what Python buffered for it (the
    command's own stdout, say), so that both arrive in order."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, OSError, ValueError):
            if stream.fileno() == descriptor:
                stream.flush()
    try:
        return os.fdopen(os.dup(descriptor), mode)
    except OSError as error:
        raise naming(error, path) from None


def _open_write_through(path: str, mode: str) -> IO[Any]:
    """`path` opened for writing as it is. A FIFO gets a few seconds for its reader to open
    it (a reader started beside the writer may come second); one that no process reads then
    is an error, not a wait forever."""
    deadline = time.monotonic() + FIFO_READER_WAIT
    while True:
        try:
            descriptor = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError as error:
            if error.errno != errno.ENXIO:
                raise
            if time.monotonic() > deadline:
                raise OSError(
                    errno.ENXIO, "a FIFO that no process reads; start its reader first", path
                ) from None
            time.sleep(0.01)
    os.set_blocking(descriptor, True)
    return os.fdopen(descriptor, mode)


def _create_temporary(directory: str, name: str) -> tuple[str, int]:
    """A new file beside the target, with a name nobody else uses (O_EXCL: never an existing
    file) and the mode a new file gets (0o666 less the umask)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        temporary = os.path.join(directory, f".{name[:200]}.{secrets.token_hex(8)}.tmp")
        try:
            return temporary, os.open(temporary, flags, 0o666)
        except FileExistsError:
            continue


def _sync_directory(directory: str) -> None:
    """Makes the rename durable where the platform allows it (not on Windows)."""
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)
