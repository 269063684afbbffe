"""The one place where the operating system's failures become ``Error:`` lines.

Every command runs inside :func:`pecli.cli.app.PecliGroup.main`, which hands any ``OSError`` or
``MemoryError`` that got that far to :func:`describe_failure`: a full disk under standard output,
a name the file system refuses, a closed stream, an allocation the machine cannot make.  No call
site has to know which of them it may meet.  A closed reader (EPIPE) is not an error at all: the
caller exits 141 quietly, as ``cat`` does.
"""

from __future__ import annotations

import errno
import io
import os
import sys
from types import TracebackType
from typing import Any

#: What to do about each failure, after "cannot write X: <strerror>".
_FIXES = {
    errno.ENOSPC: "free some space or send the output elsewhere",
    errno.EDQUOT: "free some space or send the output elsewhere",
    errno.EBADF: "the stream is closed: redirect it to a file (> FILE) or write with -o FILE",
    errno.ENAMETOOLONG: "use a shorter name (a name may have at most 255 bytes, a path 4096)",
    errno.EACCES: "choose a path you may use",
    errno.EPERM: "choose a path you may use",
    errno.EROFS: "the file system is read-only: choose another path",
    errno.EIO: "the device or terminal failed or went away",
    errno.ENOMEM: "ask for a smaller table, or stream it to a file with -o",
    errno.ENOENT: "check the path",
    errno.ENOTDIR: "a part of the path is a file, not a directory: check the path",
    errno.ELOOP: "the path has a loop of symbolic links: check the path",
    errno.EISDIR: "give a file, not a directory",
    errno.EMFILE: "too many open files: raise the limit (ulimit -n) or close other programs",
    errno.EFBIG: "the file would exceed the file system's or ulimit's size limit: write a smaller table",
}

#: The longest path quoted whole; a longer one is shown by its start and end.
_LONGEST_QUOTED = 160


def describe_failure(exc: BaseException) -> str:
    """One line for an ``OSError`` or ``MemoryError`` that reached the command's boundary."""
    from pecli.views.console import visible

    if isinstance(exc, MemoryError):
        asked = str(exc).strip()  # NumPy says what it asked for: "Unable to allocate 1.46 TiB for an array ..."
        what = f"not enough memory ({asked[0].lower()}{asked[1:]})" if asked else "not enough memory"
        return visible(f"{what}: {_FIXES[errno.ENOMEM]}")
    assert isinstance(exc, OSError)
    where = _where(exc)
    reason = (exc.strerror or str(exc) or type(exc).__name__).rstrip(".")
    code = errno.errorcode.get(exc.errno or 0)
    reason = f"{reason[:1].lower()}{reason[1:]}" + (f" ({code})" if code else "")
    fix = _FIXES.get(exc.errno or 0)
    if exc.errno == errno.ENAMETOOLONG and exc.filename is not None:
        fix = f"use a shorter name ({_too_long(exc.filename)})"
    return visible(f"{where}: {reason}" + (f": {fix}" if fix else ""))


def _too_long(name: Any) -> str:
    """Which limit a path breaks: one of its names (255 bytes on most file systems), or the whole."""
    raw = os.fsencode(name) if isinstance(name, bytes | str | os.PathLike) else str(name).encode()
    longest = max(raw.split(b"/"), key=len)
    if len(longest) > 255:
        return f"one of its names has {len(longest)} bytes, and a name may have at most 255"
    return f"it has {len(raw)} bytes, and a path may have at most 4096"


def _where(exc: OSError) -> str:
    if exc.filename is not None:
        return f"cannot use {_short(exc.filename)}"
    stream = _failing_stdout() or _failed_stream(exc.__traceback__)
    if stream is not None:
        return f"cannot write {stream}"
    return "an operating-system call failed"


def _short(name: Any) -> str:
    text = os.fsdecode(name) if isinstance(name, bytes | str | os.PathLike) else str(name)
    if len(text) <= _LONGEST_QUOTED:
        return text
    return f"{text[:100]}…{text[-50:]}"


def _failing_stdout() -> str | None:
    """ "standard output" when flushing it fails now: what it still buffers cannot be written."""
    try:
        sys.stdout.flush()
    except OSError:
        return "standard output"
    except (ValueError, AttributeError):  # closed, or no stream at all
        pass
    return None


def _failed_stream(tb: TracebackType | None) -> str | None:
    """Which standard stream the failed write went to, found among the locals of the failing
    frames (``file.write`` in Click's echo, ``fp.write`` in NumPy's header writer, Rich's
    console).  None when no frame holds one: the caller then says less rather than guess."""
    streams: dict[int, str] = {}
    for name, objects in (
        ("standard output", (sys.stdout, sys.__stdout__)),
        ("standard error", (sys.stderr, sys.__stderr__)),
    ):
        for obj in objects:
            if obj is None:
                continue
            streams[id(obj)] = name
            buffer = getattr(obj, "buffer", None)
            if buffer is not None:
                streams[id(buffer)] = name
                raw = getattr(buffer, "raw", None)
                if raw is not None:
                    streams[id(raw)] = name
    frames = []
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    for frame in reversed(frames):  # the innermost frame knows best
        for value in frame.f_locals.values():
            if id(value) in streams:
                return streams[id(value)]
            if type(value).__name__ == "Console" and type(value).__module__.startswith("rich"):
                file = getattr(value, "_file", None) or (sys.stderr if getattr(value, "stderr", False) else sys.stdout)
                if id(file) in streams:
                    return streams[id(file)]
    return None


class _ClosedStream(io.RawIOBase):
    """Stands for a standard stream the shell closed (``>&-``): writing to it fails with EBADF,
    which the boundary reports, and a command that never writes to it runs as usual.  Once the
    failure is reported (:func:`drop_pending_output`) it takes writes quietly, so the flush at
    exit does not fail again."""

    def __init__(self) -> None:
        super().__init__()
        self.reported = False

    def writable(self) -> bool:
        return True

    def write(self, b: Any) -> int:
        if self.reported:
            return len(b)
        raise OSError(errno.EBADF, os.strerror(errno.EBADF))


def drop_pending_output() -> None:
    """After a failure: flush what standard output still buffers, and where that fails too,
    drop it (``/dev/null`` takes descriptor 1), so that Python's own flush at exit prints no
    second error."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        raw = getattr(getattr(sys.stdout, "buffer", None), "raw", None)
        if isinstance(raw, _ClosedStream):
            raw.reported = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        except (OSError, ValueError):
            pass


def guard_closed_streams() -> None:
    """Give a closed stdout or stderr a stand-in (Python sets them to None).

    The descriptor is taken by ``/dev/null`` as well, so that no file pecli opens later gets
    number 1 or 2 and receives what was meant for the terminal.
    """
    for fd, name in ((1, "stdout"), (2, "stderr")):
        if getattr(sys, name) is not None:
            continue
        try:
            os.fstat(fd)
        except OSError:
            try:
                devnull = os.open(os.devnull, os.O_WRONLY)
                if devnull != fd:
                    os.dup2(devnull, fd)
                    os.close(devnull)
            except OSError:
                pass
        stream = io.TextIOWrapper(io.BufferedWriter(_ClosedStream()), encoding="utf-8", errors="replace")
        setattr(sys, name, stream)


def quiet_unraisable(unraisable: Any) -> None:
    """``sys.unraisablehook`` while a command runs: an interruption raised inside a library's
    finaliser or weakref callback (h5py's, torch's) is not printed as "Exception ignored in …"
    (it is recorded, and the write it interrupted is abandoned before its rename: see
    :mod:`pecli.interruption`); anything else goes to Python's own hook."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt) or type(unraisable.exc_value).__name__ == "Stop":
        return
    sys.__unraisablehook__(unraisable)
