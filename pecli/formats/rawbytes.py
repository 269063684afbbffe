"""A table's values as raw bytes, row after row: the data of a ``.npy``, a safetensors tensor, an
uncompressed HDF5 dataset.

Where the file is a regular one and the table is computed on several threads at once, each
thread writes the block it computed at the block's place in the file (``os.pwrite``), while the
block is still in its core's cache, instead of handing it to one writing thread.  Measured with
``python benchmarks/write_path.py --cases handoff`` (4 MB blocks made by workers, 4 GB to
/dev/shm): on a 16-core machine 1.41 and 1.63 s against 1.72 and 1.83 s at 2 and 4 workers
(pecli streams with at most :data:`pecli.table.STREAM_BLOCKS`: four), 0.376 against 0.398 s for 1
GB on 2 cores.  Elsewhere (a pipe, a device, an in-memory stream, a table read from a file, one
thread) the blocks are written in order through the file object.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable
from typing import IO

import numpy as np

from pecli.table import Progress, Table


def _as_is(block: np.ndarray) -> np.ndarray:
    return block


def placeable(table: Table, fp: IO[bytes]) -> int | None:
    """``fp``'s descriptor when :func:`write_rows` writes ``table``'s blocks at their places from
    the threads that compute them (a regular file, several threads, several blocks), else None."""
    fd = _regular_file(fp)
    return fd if fd is not None and table.stream_workers() > 1 and len(table.block_spans()) > 1 else None


def write_rows(
    table: Table,
    fp: IO[bytes],
    progress: Progress | None,
    convert: Callable[[np.ndarray], np.ndarray] = _as_is,
    seen: Callable[[int, memoryview], None] | None = None,
) -> None:
    """Every row of ``table`` to ``fp`` from its position, as the bytes of ``convert(block)`` (the
    rows as they are by default), one row block at a time; ``fp`` is left after the last byte.
    Where the blocks are placed by their threads (:func:`placeable`), ``seen(first_row, bytes)``
    is called with each block's bytes by the thread that wrote them, in no particular order."""
    n, d = table.shape
    fd = placeable(table, fp)
    if fd is None:
        for block in table.blocks(progress):
            fp.write(_raw(convert(block)))
        return
    fp.flush()
    start = fp.tell()
    row_bytes = d * table.dtype.itemsize
    gate = _Gate()

    def place(a: int, z: int) -> int:
        data = _raw(convert(table.rows(a, z)))
        if data.nbytes != (z - a) * row_bytes:
            raise AssertionError(f"rows {a}..{z} gave {data.nbytes} bytes, not {(z - a) * row_bytes}")
        with gate:
            _pwrite_all(fd, data, start + a * row_bytes)
        if seen is not None:
            seen(a, data)
        return z - a

    from pecli.interruption import abandoned
    from pecli.kernels.threads import ordered_blocks

    try:
        for rows in ordered_blocks(place, table.block_spans(), table.stream_workers()):
            if progress is not None:
                progress(rows)
            stop = abandoned()
            if stop is not None:  # a signal whose exception a library's callback swallowed: stop now
                raise stop
    finally:
        gate.close()  # on an error, a block still computing must not write once fp is closed
    fp.seek(start + n * row_bytes)


class _Gate:
    """Writes by the workers, until :meth:`close`: it waits for those under way and lets no more
    begin (their descriptor may be closed and its number given to another file right after)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._open, self._busy = True, 0

    def __enter__(self) -> None:
        with self._cond:
            if not self._open:
                raise _Closed
            self._busy += 1

    def __exit__(self, *exc: object) -> None:
        with self._cond:
            self._busy -= 1
            self._cond.notify_all()

    def close(self) -> None:
        with self._cond:
            self._open = False
            self._cond.wait_for(lambda: self._busy == 0)


class _Closed(Exception):
    """A worker's block after the write was given up: nobody reads its result."""


def _raw(values: np.ndarray) -> memoryview:
    """The bytes of ``values`` (C order), a view where they are contiguous: bfloat16 has no buffer
    format of its own."""
    return np.ascontiguousarray(values).view(np.uint8).reshape(-1).data


def _regular_file(fp: IO[bytes]) -> int | None:
    """``fp``'s descriptor when it is a regular file that ``os.pwrite`` can write, else None."""
    if not hasattr(os, "pwrite"):  # Windows
        return None
    try:
        fd = fp.fileno()
        return fd if stat.S_ISREG(os.fstat(fd).st_mode) else None
    except (AttributeError, OSError, ValueError):  # an in-memory stream (io.UnsupportedOperation)
        return None


def _pwrite_all(fd: int, data: memoryview, offset: int) -> None:
    while data.nbytes:
        done = os.pwrite(fd, data, offset)
        data, offset = data[done:], offset + done
