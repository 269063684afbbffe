"""Early writeback: the disk takes a file while pecli still writes it.

A file written in full and then fsynced reaches the disk twice over in time: first the page cache
fills, then ``fsync`` waits while the disk writes all of it.  While an output is written with
fsync on (the default), a background thread asks Linux to start writing each new
:data:`WINDOW` of the file (``sync_file_range(SYNC_FILE_RANGE_WRITE)``) and waits for the
window before it, so the disk works while the table is computed and the final ``fsync`` finds
little left to do.  It is a hint only: the final ``fsync`` still makes the file durable and
reports any error.

Measured (``python benchmarks/write_path.py --cases ingest --disk DIR``: 4 MB writes and an
fsync, with and without it): 1 GB on a 2-core machine's disk 0.76 s without, 0.56 s with it, a
``dd``-style write of a ready array and an fsync 0.84 s; on a 16-core one (plain writes of 2 GB,
one run) 1.59 s for the ``dd``-style write, 1.21 s with writeback started every 128 MB.
Elsewhere (not Linux, or a libc without ``sync_file_range``) nothing is done.
"""

from __future__ import annotations

import os
import threading
from types import TracebackType
from typing import Any

#: Bytes of new data after which writeback of them is started.
WINDOW = 64 << 20
#: Seconds between looks at the file's size.
POLL = 0.01

_WAIT_BEFORE, _WRITE, _WAIT_AFTER = 1, 2, 4
_sync_file_range: Any = None


def _function() -> Any:
    """libc's ``sync_file_range``, or False where there is none."""
    global _sync_file_range
    if _sync_file_range is None:
        from pecli.libc import linux_function

        _sync_file_range = linux_function("sync_file_range", ("c_int", "c_int64", "c_int64", "c_uint")) or False
    return _sync_file_range


class EarlyWriteback:
    """While the ``with`` block writes ``path``, start its writeback a window at a time.

    Does nothing where ``sync_file_range`` is missing or the file cannot be opened; stops at the
    first call that fails (a file system that does not support it)."""

    def __init__(self, path: os.PathLike[str] | str, window: int | None = None) -> None:
        self.path, self.window = path, WINDOW if window is None else window
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> EarlyWriteback:
        fn = _function()
        if not fn:
            return self
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return self
        self._thread = threading.Thread(target=self._run, args=(fn, fd), name="pecli-writeback", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._stop.set()  # the thread ends within POLL (or its current call) and closes its descriptor
        if self._thread is not None:
            self._thread.join()

    def _run(self, fn: Any, fd: int) -> None:
        try:
            started = waited = 0  # bytes whose writeback was started / finished
            while not self._stop.wait(POLL):
                size = os.fstat(fd).st_size
                if size - started < self.window:
                    continue
                if fn(fd, started, size - started, _WRITE) != 0:
                    return
                if started > waited:  # the window before this one: wait for it
                    if fn(fd, waited, started - waited, _WAIT_BEFORE | _WRITE | _WAIT_AFTER) != 0:
                        return
                    waited = started
                started = size
        except OSError:
            return
        finally:
            os.close(fd)
