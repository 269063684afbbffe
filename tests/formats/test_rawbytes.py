"""Row blocks written at their place in the file by the threads that computed them
(``pecli.formats.rawbytes``): the same file as the blocks written in order, read back by each
format's own library, and a failure in a thread a clean error that leaves nothing behind."""

from __future__ import annotations

import errno
import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import h5py
import numpy as np
import pytest

import pecli.table
from pecli import OutputError, Sinusoidal, write_table
from pecli.kernels.threads import set_threads
from pecli.table import Table
from tests.helpers import pwrite_threads


@pytest.fixture
def threads_and_blocks(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(pecli.table, "BLOCK_BYTES", 16 * 1024)  # 4 to 8 rows a block: 125+ blocks
    set_threads(3)
    yield
    set_threads(None)


def read_back(path: Path) -> np.ndarray:
    if path.suffix == ".h5":
        with h5py.File(path, "r") as f:
            return np.asarray(f["pe"][...])
    if path.suffix == ".safetensors":
        from safetensors.numpy import load_file

        return load_file(path)["pe"]
    return np.load(path)


@pytest.mark.parametrize("ext", [".npy", ".safetensors", ".h5"])
@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
def test_blocks_placed_by_their_threads_make_the_file_written_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threads_and_blocks: None, ext: str, dtype: str
) -> None:
    recipe = Sinusoidal(1000, 512, dtype=dtype)  # type: ignore[arg-type]
    writers = pwrite_threads(monkeypatch)
    placed, ordered = tmp_path / f"placed{ext}", tmp_path / f"ordered{ext}"
    rows: list[int] = []
    write_table(Table.from_recipe(recipe), placed, progress=rows.append)
    blocks = len(Table.from_recipe(recipe).block_spans())
    assert len(writers) == blocks and threading.main_thread() not in writers
    assert sum(rows) == 1000  # progress counts every row, once
    set_threads(1)  # one thread: the blocks written in order through the file object
    write_table(Table.from_recipe(recipe), ordered)
    assert len(writers) == blocks
    assert placed.read_bytes() == ordered.read_bytes()
    assert read_back(placed).tobytes() == recipe.build().tobytes()


def test_bfloat16_blocks_are_placed_as_their_bits(tmp_path: Path, threads_and_blocks: None) -> None:
    recipe = Sinusoidal(700, 256, dtype="bfloat16")
    for ext in (".npy", ".safetensors"):
        write_table(Table.from_recipe(recipe), tmp_path / f"t{ext}")
    bits = recipe.build().view(np.uint16)
    np.testing.assert_array_equal(np.load(tmp_path / "t.npy").view(np.uint16), bits)
    raw = (tmp_path / "t.safetensors").read_bytes()  # an 8-byte header length, the JSON header, the data
    start = 8 + int.from_bytes(raw[:8], "little")
    assert json.loads(raw[8:start])["pe"]["dtype"] == "BF16"
    assert raw[start:] == bits.astype("<u2").tobytes()


def test_a_thread_that_cannot_write_is_one_clean_error_and_nothing_is_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threads_and_blocks: None
) -> None:
    pwrite, calls = os.pwrite, []

    def full(fd: int, data: memoryview, offset: int) -> int:
        calls.append(offset)
        if len(calls) == 5:
            raise OSError(errno.ENOSPC, "No space left on device")
        return pwrite(fd, data, offset)

    monkeypatch.setattr(os, "pwrite", full)
    out = tmp_path / "t.npy"
    out.write_bytes(b"old")
    with pytest.raises(OutputError, match=f"no space left on device while writing {out}"):
        write_table(Table.from_recipe(Sinusoidal(1000, 512)), out, force=True)
    assert out.read_bytes() == b"old" and sorted(p.name for p in tmp_path.iterdir()) == ["t.npy"]


def test_no_block_is_written_once_the_write_has_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threads_and_blocks: None
) -> None:
    """A block still being computed when another thread's write fails writes nothing afterwards:
    the file's descriptor is closed by then, and its number may already be another file's."""
    table = Table.from_recipe(Sinusoidal(1000, 512))
    late = table.block_spans()[2][0]
    rows = Table.rows

    def slow(self: Table, r0: int, r1: int) -> np.ndarray:
        if r0 == late:
            time.sleep(0.5)
        return rows(self, r0, r1)

    pwrite, calls = os.pwrite, []

    def fails_first(fd: int, data: memoryview, offset: int) -> int:
        calls.append(time.monotonic())
        if len(calls) == 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        return pwrite(fd, data, offset)

    monkeypatch.setattr(Table, "rows", slow)
    monkeypatch.setattr(os, "pwrite", fails_first)
    with pytest.raises(OutputError, match="no space left on device"):
        write_table(table, tmp_path / "t.npy")
    failed = time.monotonic()
    time.sleep(0.8)  # the late block is computed by now
    assert calls and max(calls) < failed
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("ext", [".npy", ".npz", ".safetensors", ".h5"])
def test_ctrl_c_while_threads_place_blocks_keeps_the_old_file_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threads_and_blocks: None, ext: str
) -> None:
    writers = pwrite_threads(monkeypatch)
    out = tmp_path / f"t{ext}"
    out.write_bytes(b"old")

    def interrupt(rows: int) -> None:
        if len(writers) >= 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_table(Table.from_recipe(Sinusoidal(1000, 512)), out, force=True, progress=interrupt)
    written = len(writers)
    time.sleep(0.3)  # blocks still computing then write nothing
    assert len(writers) == written
    assert out.read_bytes() == b"old" and sorted(p.name for p in tmp_path.iterdir()) == [f"t{ext}"]
