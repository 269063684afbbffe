"""Early writeback (``pecli.writeback``, issue 25): the disk writes an output while pecli still
writes it, so the final fsync has little left.

What the kernel holds is read back with Linux's ``cachestat(2)`` (6.5+): the dirty pages of the
file's first windows are gone while it is still being written, where without early writeback
they are all still dirty (the control, which also skips file systems that keep no dirty pages).
"""

from __future__ import annotations

import ctypes
import itertools
import os
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import pecli
from pecli import writeback
from pecli.table import Table
from pecli.writeback import EarlyWriteback

MB = 1 << 20


class _Range(ctypes.Structure):
    _fields_ = [("off", ctypes.c_uint64), ("len", ctypes.c_uint64)]


class _Stat(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in ("cache", "dirty", "writeback", "evicted", "recently_evicted")]


def dirty_pages(fd: int, length: int) -> int | None:
    """Dirty pages of bytes ``[0, length)`` of ``fd`` (cachestat, syscall 451), or None."""
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    rng, stat = _Range(0, length), _Stat()
    if libc.syscall(451, fd, ctypes.byref(rng), ctypes.byref(stat), 0) != 0:
        return None
    return int(stat.dirty)


def write_windows(path: Path, total: int, early: bool, window: int) -> tuple[int | None, int | None]:
    """Write ``total`` bytes in 256 kB pieces (with and without early writeback); the dirty pages
    of the first half, read while the file is still open for writing (waiting up to 5 s for them
    to drain where writeback runs), and of the whole file."""
    piece = np.arange(256 << 10, dtype=np.uint8)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        with EarlyWriteback(path, window) if early else _Nothing():
            for _ in range(total // piece.size):
                os.write(fd, memoryview(piece))
                time.sleep(0.002)  # a producer's pace: the thread looks every 10 ms
            deadline = time.monotonic() + 5
            while early and (dirty_pages(fd, total // 2) or 0) and time.monotonic() < deadline:
                time.sleep(0.01)
            return dirty_pages(fd, total // 2), dirty_pages(fd, total)
    finally:
        os.close(fd)


class _Nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="sync_file_range and cachestat are Linux's")
def test_the_first_windows_reach_the_disk_while_the_file_is_written(tmp_path: Path) -> None:
    total, window = 8 * MB, 1 * MB
    half_late, _ = write_windows(tmp_path / "late.bin", total, early=False, window=window)
    if half_late is None:
        pytest.skip("no cachestat(2) here (Linux before 6.5)")
    if half_late == 0:
        pytest.skip("this file system keeps no dirty pages (tmpfs), or wrote them back at once")
    half_early, _ = write_windows(tmp_path / "early.bin", total, early=True, window=window)
    assert half_early == 0, f"{half_early} pages of the first half still dirty (without: {half_late})"
    assert (tmp_path / "early.bin").read_bytes() == (tmp_path / "late.bin").read_bytes()


class Recorder:
    """A stand-in for libc's sync_file_range: records each call, returns ``result``."""

    def __init__(self, result: int = 0) -> None:
        self.calls: list[tuple[int, int, int]] = []
        self.result = result

    def __call__(self, fd: int, offset: int, nbytes: int, flags: int) -> int:
        self.calls.append((offset, nbytes, flags))
        return self.result


def slow_write(path: Path, pieces: int, window: int) -> None:
    """``pieces`` writes of ``window`` bytes, each long enough for the thread to look (10 ms)."""
    with open(path, "wb") as fp, EarlyWriteback(path, window):
        for k in range(pieces):
            fp.write(bytes([k]) * window)
            fp.flush()
            time.sleep(0.03)


def test_each_window_is_started_in_order_and_the_one_before_waited_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spy = Recorder()
    monkeypatch.setattr(writeback, "_sync_file_range", spy)
    window = 64 << 10
    slow_write(tmp_path / "t.bin", 6, window)
    started = [(off, n) for off, n, flags in spy.calls if flags == 2]  # SYNC_FILE_RANGE_WRITE
    waited = [(off, n) for off, n, flags in spy.calls if flags == 7]  # WAIT_BEFORE | WRITE | WAIT_AFTER
    assert started[0][0] == 0 and sum(n for _, n in started) == 6 * window
    for (a, n), (b, _) in itertools.pairwise(started):  # consecutive ranges, each at least a window
        assert b == a + n and n >= window
    assert waited and waited[0][0] == 0
    assert all(off + n in {a for a, _ in started} for off, n in waited)  # only windows already started
    assert sum(n for _, n in waited) < 6 * window  # the last window is left to the final fsync
    assert (tmp_path / "t.bin").read_bytes() == b"".join(bytes([k]) * window for k in range(6))


def test_the_thread_and_its_descriptor_end_with_the_block_also_on_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writeback, "_sync_file_range", Recorder())
    fds = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    with pytest.raises(KeyboardInterrupt), open(tmp_path / "t.bin", "wb") as fp, EarlyWriteback(tmp_path / "t.bin"):
        fp.write(b"x" * 1000)
        assert any(t.name == "pecli-writeback" for t in threading.enumerate())
        raise KeyboardInterrupt
    assert not any(t.name == "pecli-writeback" for t in threading.enumerate())
    if fds is not None:
        assert len(os.listdir("/proc/self/fd")) == fds


def test_a_failing_call_stops_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    failing = Recorder(result=-1)  # a file system without it (EINVAL, ESPIPE): one try, then nothing
    monkeypatch.setattr(writeback, "_sync_file_range", failing)
    slow_write(tmp_path / "t.bin", 4, 64 << 10)
    assert len(failing.calls) == 1
    assert (tmp_path / "t.bin").stat().st_size == 4 * (64 << 10)


def test_pecli_outputs_are_written_back_early_only_when_synced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Path] = []

    class Spy(EarlyWriteback):
        def __enter__(self) -> EarlyWriteback:
            seen.append(Path(self.path))
            return super().__enter__()

    monkeypatch.setattr("pecli.atomic.EarlyWriteback", Spy)
    expected = pecli.Sinusoidal(4096, 512).build()
    monkeypatch.setenv("PECLI_NO_FSYNC", "1")
    pecli.write_table(Table.from_recipe(pecli.Sinusoidal(4096, 512)), tmp_path / "a.npy")
    assert seen == []
    monkeypatch.delenv("PECLI_NO_FSYNC")
    pecli.write_table(Table.from_recipe(pecli.Sinusoidal(4096, 512)), tmp_path / "b.npy")
    assert len(seen) == 1 and seen[0].parent == tmp_path and seen[0].name.startswith(".b.npy.")  # the temporary
    for name in ("a.npy", "b.npy"):
        assert np.array_equal(np.load(tmp_path / name), expected)
