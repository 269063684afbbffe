""".npz archives written by pecli.formats.zipstore, checked by zip readers that are not pecli's:
Python's ``zipfile`` (which verifies each entry's CRC-32 as it reads), NumPy's ``np.load``, and
Info-ZIP's ``unzip -t`` where it is installed; CRCs against ``zlib.crc32`` of the whole data."""

from __future__ import annotations

import io
import shutil
import struct
import subprocess
import threading
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pytest

import pecli.table
from pecli import Sinusoidal, write_table
from pecli.formats import zipstore
from pecli.formats.zipstore import StoredZip
from pecli.table import Table
from tests.helpers import pwrite_threads


def check_with_readers(path: Path) -> None:
    with zipfile.ZipFile(path) as z:
        assert z.testzip() is None  # every entry's CRC-32 verified
    if shutil.which("unzip"):
        r = subprocess.run(["unzip", "-t", str(path)], capture_output=True, text=True)
        assert r.returncode == 0 and "No errors detected" in r.stdout, r.stdout + r.stderr


def test_a_table_of_many_blocks_is_the_npy_numpy_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """2 MB blocks (CRCs on the helper thread) and a small metadata entry (CRC inline)."""
    monkeypatch.setattr(pecli.table, "BLOCK_BYTES", 2 << 20)
    recipe = Sinusoidal(4000, 1024)  # 16 MB: 8 blocks
    path = tmp_path / "t.npz"
    write_table(Table.from_recipe(recipe), path)
    check_with_readers(path)
    reference = io.BytesIO()
    np.save(reference, recipe.build())
    data = reference.getvalue()
    with zipfile.ZipFile(path) as z:
        assert z.read("pe.npy") == data
        assert [i.compress_type for i in z.infolist()] == [zipfile.ZIP_STORED] * 2
    # The local header too (what a reader that streams the archive goes by): CRC-32 and the ZIP64
    # extra's sizes, filled in after the data.
    with open(path, "rb") as fp:
        head = fp.read(30 + 6 + 20)
    (crc,) = struct.unpack("<L", head[14:18])
    tag, size, plain, stored = struct.unpack("<HHQQ", head[36:56])
    assert (crc, tag, size, plain, stored) == (zlib.crc32(data), 1, 16, len(data), len(data))
    with np.load(path) as z:
        assert sorted(z.files) == ["pe", "pecli_recipe"]


def test_the_running_crc_stays_in_order_across_helper_and_inline_pieces() -> None:
    rng = np.random.default_rng(7)
    sizes = [10, 3 << 20, 5, 1 << 20, (1 << 20) - 1, 2 << 20, 0, 7, 4 << 20, 3]
    pieces = [rng.integers(0, 256, n, dtype=np.uint8) for n in sizes]
    buf = io.BytesIO()
    with StoredZip(buf) as z, z.entry("data.bin") as entry:
        for piece in pieces:
            entry.write(piece.data)
    whole = b"".join(p.tobytes() for p in pieces)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
        info = z.getinfo("data.bin")
        assert (info.CRC, info.file_size) == (zlib.crc32(whole), len(whole))
        assert z.read("data.bin") == whole


class _Pipe(io.RawIOBase):
    """A write-only stream that cannot seek, like a pipe: what it received."""

    def __init__(self) -> None:
        self.got = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, b: object) -> int:
        data = memoryview(b).cast("B")  # type: ignore[arg-type]
        self.got += data
        return data.nbytes


def test_an_unseekable_target_gets_data_descriptors(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    big, small = rng.integers(0, 256, 3 << 20, dtype=np.uint8).tobytes(), b"meta"
    pipe = _Pipe()
    with StoredZip(pipe) as z:
        with z.entry("pe.npy") as entry:
            entry.write(big)
        z.add("m.npy", small)
    path = tmp_path / "piped.zip"
    path.write_bytes(bytes(pipe.got))
    check_with_readers(path)
    with zipfile.ZipFile(path) as z:
        assert [i.flag_bits & 0x08 for i in z.infolist()] == [0x08, 0x08]  # sizes after the data
        assert z.read("pe.npy") == big and z.read("m.npy") == small


def test_zip64_end_records_are_read_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ZIP64 end records (written for 65535+ entries or past 4 GiB) are where readers find
    the central directory: forced here at two entries."""
    monkeypatch.setattr(zipstore, "ZIP64_ENTRIES", 2)
    path = tmp_path / "t.npz"
    write_table(Table.from_recipe(Sinusoidal(50, 8)), path)
    assert b"PK\x06\x06" in path.read_bytes() and b"PK\x06\x07" in path.read_bytes()
    check_with_readers(path)
    with np.load(path) as z:
        assert np.array_equal(z["pe"], Sinusoidal(50, 8).build())


def test_a_non_ascii_key_is_named_in_utf8(tmp_path: Path) -> None:
    from pecli.formats import WriteOptions

    path = tmp_path / "t.npz"
    write_table(Table.from_recipe(Sinusoidal(5, 4)), path, options=WriteOptions(key="位置"))
    check_with_readers(path)
    with zipfile.ZipFile(path) as z:
        assert z.namelist()[0] == "位置.npy" and z.infolist()[0].flag_bits & 0x800


def test_an_error_mid_entry_stops_the_helper_and_writes_no_directory() -> None:
    buf = io.BytesIO()
    with pytest.raises(RuntimeError, match="boom"), StoredZip(buf) as z, z.entry("pe.npy") as entry:
        entry.write(bytes(2 << 20))
        raise RuntimeError("boom")
    assert b"PK\x01\x02" not in buf.getvalue()
    assert not [t for t in threading.enumerate() if t.name.startswith("pecli-crc")]


@pytest.mark.slow
def test_an_archive_past_4_gib(tmp_path: Path) -> None:
    """A table of 4.3 GB: sizes only ZIP64 holds, the CRC verified by zipfile."""
    if shutil.disk_usage(tmp_path).free < 10 << 30:
        pytest.skip("needs 10 GB free")
    recipe = Sinusoidal(1_050_000, 1024)
    path = tmp_path / "big.npz"
    write_table(Table.from_recipe(recipe), path)
    with zipfile.ZipFile(path) as z:
        assert z.testzip() is None
        info = z.getinfo("pe.npy")
    assert info.file_size == recipe.nbytes + 128 and info.header_offset == 0
    # The last rows, after the entry's local header (its name and extra field lengths at 26).
    with open(path, "rb") as fp:
        name_len, extra_len = struct.unpack("<HH", fp.read(30)[26:30])
    n, d = recipe.shape
    start = 30 + name_len + extra_len + 128 + (n - 3) * d * 4
    last = np.fromfile(path, dtype=np.float32, count=3 * d, offset=start).reshape(3, d)
    assert np.array_equal(last, recipe.rows(n - 3, n))


@pytest.mark.parametrize(("first", "second"), [(0, 0), (1, 0), (0, 1), (5, 7), (1000, 4 << 20), (3 << 20, 1)])
def test_crc32_combine_is_zlibs_crc_of_the_two_together(first: int, second: int) -> None:
    rng = np.random.default_rng(first + second)
    a, b = rng.bytes(first), rng.bytes(second)
    assert zipstore.crc32_combine(zlib.crc32(a), zlib.crc32(b), len(b)) == zlib.crc32(a + b)


def test_blocks_placed_by_their_threads_have_their_crcs_joined_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pecli.kernels.threads import set_threads

    monkeypatch.setattr(pecli.table, "BLOCK_BYTES", 64 << 10)  # 63 blocks of 32 rows
    writers = pwrite_threads(monkeypatch)
    recipe = Sinusoidal(2000, 512)
    path = tmp_path / "t.npz"
    set_threads(3)
    try:
        write_table(Table.from_recipe(recipe), path)
    finally:
        set_threads(None)
    assert len(writers) == 63 and threading.main_thread() not in writers
    check_with_readers(path)
    reference = io.BytesIO()
    np.save(reference, recipe.build())
    with zipfile.ZipFile(path) as z:
        assert z.getinfo("pe.npy").CRC == zlib.crc32(reference.getvalue())
        assert z.read("pe.npy") == reference.getvalue()
