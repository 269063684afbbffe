"""Reading a stream: standard input (the SOURCE ``-``), or a pipe, FIFO or terminal named by a
path (``/dev/stdin``, ``<(cmd)``, a named pipe).

A stream cannot seek, cannot be memory-mapped and can be read only once, so it is copied, block
by block, into a temporary file (never held in memory) that the formats' ordinary readers open;
the copy is deleted when its block ends, on an error or an interrupt too.  Which format it holds
is the formats' business (:func:`pecli.formats.open_stream`): they see its first bytes before
anything is copied, and may refuse it.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import IO, Any, NoReturn

from pecli.errors import FormatError

#: What messages call ``-``.
STDIN = "standard input"
#: Paths that name an open descriptor, not a file: read as streams even when they lead to a file.
_DESCRIPTORS = ("/dev/stdin", "/dev/fd/", "/proc/self/fd/")
#: Bytes shown to ``suffix`` before copying: any format's magic, and a CSV header line.
HEAD_BYTES = 1 << 16
_COPY_BYTES = 1 << 20
#: Free space a stream's copy leaves in the temporary directory: the copy stops before it.
SPARE_BYTES = 256 << 20

#: Streams being read now (device and inode, or the object): a second read would find it drained.
_reading: set[tuple[Any, ...]] = set()


def is_stream(path: str | Path) -> bool:
    """Whether ``path`` is read as a stream: a FIFO, a character device or a socket (a terminal,
    ``/dev/null``), or a name of an open descriptor such as ``/dev/stdin``.

    >>> is_stream("/dev/null"), is_stream("pe.npy")
    (True, False)
    """
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISSOCK(mode):
        return True
    text = str(path)
    return not stat.S_ISDIR(mode) and (text == _DESCRIPTORS[0] or text.startswith(_DESCRIPTORS[1:]))


@contextmanager
def stream_copy(path: str | Path | None, suffix: Callable[[bytes], str]) -> Iterator[Path]:
    """A temporary copy of standard input (``path`` None) or of the stream ``path`` names.

    ``suffix(head)`` is shown the first bytes (up to :data:`HEAD_BYTES`) before anything is
    copied, and returns the copy's file suffix (``.npy``) or raises to refuse the stream.  The
    copy is deleted when the block ends.
    """
    words = STDIN if path is None else str(path)
    with ExitStack() as stack:
        if path is not None and _path_identity(path) in _reading:  # before open(), which would
            _read_once(words)  # wait for ever for a second writer on a FIFO already drained
        fp = _open(path, words, stack)
        ident = _identity(fp)
        if ident in _reading:
            _read_once(words)
        _reading.add(ident)
        stack.callback(_reading.discard, ident)
        head = _read(fp, HEAD_BYTES, words)
        if not head:
            raise FormatError(f"{words} is empty")
        yield _spool(fp, head, suffix(head), words, stack)


def _open(path: str | Path | None, words: str, stack: ExitStack) -> IO[bytes]:
    if path is None:
        stdin = sys.stdin
        fp: IO[bytes] | None = getattr(stdin, "buffer", None) if stdin is not None else None
        if fp is None:
            raise FormatError("standard input is closed: pipe a table in, e.g. pecli inspect - < pe.npy")
    else:
        try:
            fp = stack.enter_context(open(path, "rb"))
        except OSError as exc:
            raise FormatError(f"cannot read {words}: {exc.strerror or exc}") from exc
    if fp.isatty():
        raise FormatError(f"{words} is a terminal: pipe a table in, e.g. pecli inspect - < pe.npy")
    return fp


def _read_once(words: str) -> NoReturn:
    raise FormatError(
        f"{words} can be read only once: save it to a file first (e.g. cat > t.npy) and name the file twice"
    )


def _path_identity(path: str | Path) -> tuple[Any, ...] | None:
    try:
        st = os.stat(path)  # never blocks, even on a FIFO
    except (OSError, ValueError):
        return None
    return ("file", st.st_dev, st.st_ino)


def _identity(fp: IO[bytes]) -> tuple[Any, ...]:
    try:
        st = os.fstat(fp.fileno())
    except (OSError, ValueError):  # an in-memory stream (io.UnsupportedOperation is both)
        return ("object", id(fp))
    return ("file", st.st_dev, st.st_ino)


def _read(fp: IO[bytes], size: int, words: str) -> bytes:
    try:
        return fp.read(size)
    except OSError as exc:
        raise FormatError(f"cannot read {words}: {exc.strerror or exc}") from exc


def _room(folder: str) -> int:
    """Bytes a stream's copy may take in ``folder``: its free space less :data:`SPARE_BYTES`."""
    try:
        st = os.statvfs(folder)
    except (OSError, AttributeError):  # Windows has no statvfs: the disk's own limit applies
        return 1 << 62
    return max(HEAD_BYTES, st.f_bavail * st.f_frsize - SPARE_BYTES)


def _spool(fp: IO[bytes], head: bytes, suffix: str, words: str, stack: ExitStack) -> Path:
    """Copy the stream (``head`` already read) into a temporary file, a block at a time; the
    file goes when ``stack`` closes."""
    import tempfile  # imports shutil (and bz2, lzma): not at startup

    where = tempfile.gettempdir()
    try:
        # A private directory: nobody else can put a FILE.json sidecar beside the copy.
        folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="pecli-stdin-", ignore_cleanup_errors=True))
        copy = Path(folder, f"table{suffix}")
        room = _room(folder)
        with open(copy, "xb") as out:
            data, copied = head, 0
            while data:
                copied += len(data)
                if copied > room:  # an endless stream (`yes 1, |`) stops here, not when the disk is full
                    raise FormatError(
                        f"{words} is longer than the {room >> 20} MB that may be copied to {where} "
                        f"(its free space less {SPARE_BYTES >> 20} MB): save it to a file and read the file, "
                        "or set TMPDIR to a directory with more room"
                    )
                out.write(data)
                data = _read(fp, _COPY_BYTES, words)
    except OSError as exc:
        raise FormatError(
            f"cannot copy {words} to a temporary file in {where} ({exc.strerror or exc}): "
            "free some space there, or set TMPDIR to a directory with room"
        ) from exc
    return copy
