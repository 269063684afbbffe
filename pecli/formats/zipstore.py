"""ZIP archives of stored (uncompressed) entries, written front to back: what a ``.npz`` is.

:mod:`zipfile` computes an entry's CRC-32 in the thread that writes its data, one step after
the other: 0.27 s a GB here (zlib's ``crc32``, 3.7 GB/s) on top of the writes.  Here a table's
blocks written at their places by the threads that compute them
(:func:`pecli.formats.rawbytes.write_rows`) have their CRCs taken by those threads too, joined in
order by :func:`crc32_combine`; other large pieces (a table read from a file, a pipe) have theirs
computed by a helper thread while the piece is written (zlib and the write both let go of the
GIL), in order.  The archive is the one ``zipfile`` writes with ``force_zip64=True`` (PKWARE's
APPNOTE.TXT, sections 4.3–4.5): each local header carries ZIP64 sizes, filled in after the data
where the file can seek back, else given in a data descriptor after the data (a device, a pipe);
then the central directory, and the ZIP64 end records when the archive needs them.  ``np.load``
and every zip reader open it.
"""

from __future__ import annotations

import functools
import struct
import time
import zlib
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import IO, Any, cast

from pecli.formats.rawbytes import placeable, write_rows
from pecli.table import Progress, Table

#: sig, version needed, flags, method, time, date, CRC-32, sizes (0xFFFFFFFF: in the ZIP64
#: extra), name and extra lengths
_LOCAL = struct.Struct("<4sHHHHHLLLHH")
#: The ZIP64 extra field of a local header: id 1, 16 bytes, uncompressed and compressed size.
_LOCAL_ZIP64 = struct.Struct("<HHQQ")
#: sig, made by, version needed, flags, method, time, date, CRC-32, sizes, name/extra/comment
#: lengths, disk, internal and external attributes, local header offset (the last three 0xFFFFFFFF)
_CENTRAL = struct.Struct("<4sHHHHHHLLLHHHHHLL")
#: The central directory's ZIP64 extra: id 1, 24 bytes, sizes and the local header's offset.
_CENTRAL_ZIP64 = struct.Struct("<HHQQQ")
#: A data descriptor after an entry's data: sig, CRC-32, compressed and uncompressed size.
_DESCRIPTOR = struct.Struct("<4sLQQ")
_END64 = struct.Struct("<4sQHHLLQQQQ")
_LOCATOR = struct.Struct("<4sLQL")
_END = struct.Struct("<4sHHHHLLH")
_ZIP64_VERSION = 45  # 4.5: ZIP64 extensions
_MADE_BY = (3 << 8) | _ZIP64_VERSION  # Unix, 4.5
_UTF8, _DESCRIPTOR_FOLLOWS = 0x800, 0x08
_MAX32, _MAX16 = 0xFFFFFFFF, 0xFFFF
#: Pieces at least this large have their CRC computed on the helper thread.
CRC_ON_HELPER = 1 << 20
#: Entries from which the ZIP64 end records are written (the end record counts 16 bits).
ZIP64_ENTRIES = _MAX16


class StoredZip:
    """Entries written one after the other to ``fp`` (a binary file, seekable or not); the
    central directory when the block closes (not on an error: the caller discards the file)."""

    def __init__(self, fp: IO[bytes]) -> None:
        self.fp = fp
        self.seekable = _seekable(fp)
        self.base = fp.tell() if self.seekable else 0
        self.pos = 0  # bytes written, from the archive's start
        self.central: list[bytes] = []
        t = time.localtime(time.time())
        self.dos_time = (t.tm_hour << 11) | (t.tm_min << 5) | (t.tm_sec // 2)
        self.dos_date = ((max(t.tm_year, 1980) - 1980) << 9) | (t.tm_mon << 5) | t.tm_mday

    def __enter__(self) -> StoredZip:
        return self

    def __exit__(self, kind: object, *rest: object) -> None:
        if kind is None:
            self._finish()

    def _write(self, data: Any) -> None:
        self.fp.write(data)
        self.pos += memoryview(data).nbytes

    @contextmanager
    def entry(self, name: str) -> Iterator[_Entry]:
        """An entry named ``name`` whose data is what is written to the yielded object."""
        try:
            raw, flags = name.encode("ascii"), 0
        except UnicodeEncodeError:
            raw, flags = name.encode("utf-8"), _UTF8
        if not self.seekable:
            flags |= _DESCRIPTOR_FOLLOWS
        offset = self.pos
        self._write(self._local_header(raw, flags, 0, 0))
        data = _Entry(self)
        try:
            yield data
            crc, size = data.finish()
        finally:
            data.close()
        if self.seekable:  # the header's CRC and sizes, now known
            end = self.fp.tell()
            self.fp.seek(self.base + offset)
            self.fp.write(self._local_header(raw, flags, crc, size))
            self.fp.seek(end)
        else:
            self._write(_DESCRIPTOR.pack(b"PK\x07\x08", crc, size, size))
        record = _CENTRAL.pack(
            b"PK\x01\x02", _MADE_BY, _ZIP64_VERSION, flags, 0, self.dos_time, self.dos_date, crc,
            _MAX32, _MAX32, len(raw), _CENTRAL_ZIP64.size, 0, 0, 0, 0o600 << 16, _MAX32,
        )  # fmt: skip
        self.central.append(record + raw + _CENTRAL_ZIP64.pack(1, _CENTRAL_ZIP64.size - 4, size, size, offset))

    def add(self, name: str, data: bytes) -> None:
        """A small entry whose data is ``data``."""
        with self.entry(name) as out:
            out.write(data)

    def _local_header(self, raw: bytes, flags: int, crc: int, size: int) -> bytes:
        head = _LOCAL.pack(
            b"PK\x03\x04", _ZIP64_VERSION, flags, 0, self.dos_time, self.dos_date, crc,
            _MAX32, _MAX32, len(raw), _LOCAL_ZIP64.size,
        )  # fmt: skip
        return head + raw + _LOCAL_ZIP64.pack(1, _LOCAL_ZIP64.size - 4, size, size)

    def _finish(self) -> None:
        start, count = self.pos, len(self.central)
        for record in self.central:
            self._write(record)
        size = self.pos - start
        if count >= ZIP64_ENTRIES or start >= _MAX32 or size >= _MAX32:
            end64 = self.pos
            self._write(
                _END64.pack(b"PK\x06\x06", _END64.size - 12, _MADE_BY, _ZIP64_VERSION, 0, 0, count, count, size, start)
            )
            self._write(_LOCATOR.pack(b"PK\x06\x07", 0, end64, 1))
        n = min(count, _MAX16)
        self._write(_END.pack(b"PK\x05\x06", 0, 0, n, n, min(size, _MAX32), min(start, _MAX32), 0))
        self.fp.flush()


class _Entry:
    """The data of one entry: written at once, its CRC-32 computed in order on a helper thread
    (large pieces, at most two ahead of the writes) or here (small ones)."""

    def __init__(self, archive: StoredZip) -> None:
        self.archive = archive
        self.crc = 0
        self.size = 0
        self.pending: deque[Future[None]] = deque()
        self.helper: ThreadPoolExecutor | None = None

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")
        if view.nbytes >= CRC_ON_HELPER:
            if self.helper is None:
                self.helper = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pecli-crc")
            # One worker runs the steps in the order they were given: the running CRC stays in order.
            self.pending.append(self.helper.submit(self._step, view))
            while len(self.pending) > 2:  # the blocks waiting for their CRC stay few
                self.pending.popleft().result()
        else:
            self._drain()
            self.crc = zlib.crc32(view, self.crc)
        self.archive._write(view)
        self.size += view.nbytes
        return view.nbytes

    def write_rows(self, table: Table, progress: Progress | None) -> None:
        """``table``'s rows as raw bytes (:func:`pecli.formats.rawbytes.write_rows`).  Where its
        blocks are written at their places by the threads that compute them, each thread takes
        its block's CRC-32 too, and they are joined here in the table's order
        (:func:`crc32_combine`); elsewhere through :meth:`write`."""
        fp = self.archive.fp
        if placeable(table, fp) is None:
            write_rows(table, cast(IO[bytes], self), progress)
            return
        self._drain()
        crcs: dict[int, tuple[int, int]] = {}
        write_rows(table, fp, progress, seen=lambda row, data: crcs.__setitem__(row, (zlib.crc32(data), data.nbytes)))
        for row in sorted(crcs):
            crc, size = crcs[row]
            self.crc = crc32_combine(self.crc, crc, size)
            self.size += size
            self.archive.pos += size

    def _step(self, view: memoryview) -> None:
        self.crc = zlib.crc32(view, self.crc)

    def _drain(self) -> None:
        while self.pending:
            self.pending.popleft().result()

    def finish(self) -> tuple[int, int]:
        self._drain()
        return self.crc, self.size

    def close(self) -> None:
        if self.helper is not None:
            self.helper.shutdown(wait=True, cancel_futures=True)


#: CRC-32's polynomial, bit-reversed (zlib's ``POLY``).
_POLY = 0xEDB88320


def _multmodp(a: int, b: int) -> int:
    """``a·b`` modulo CRC-32's polynomial (zlib's ``multmodp``; ``a`` is not zero)."""
    m, p = 1 << 31, 0
    while True:
        if a & m:
            p ^= b
            if not a & (m - 1):
                return p
        m >>= 1
        b = (b >> 1) ^ _POLY if b & 1 else b >> 1


#: ``x^(2^k)`` modulo the polynomial, k = 0…31 (zlib's ``x2n_table``).
_X2N = [1 << 30]
for _ in range(31):
    _X2N.append(_multmodp(_X2N[-1], _X2N[-1]))


def crc32_combine(crc1: int, crc2: int, len2: int) -> int:
    """The CRC-32 of ``A + B`` from ``crc32(A)``, ``crc32(B)`` and ``len(B)`` (zlib's
    ``crc32_combine``, which Python's ``zlib`` does not offer): ``crc1·x^(8·len2) + crc2``."""
    return _multmodp(_shift(len2), crc1) ^ crc2


@functools.lru_cache(maxsize=64)
def _shift(nbytes: int) -> int:
    """``x^(8·nbytes)`` modulo the polynomial (zlib's ``x2nmodp(nbytes, 3)``): the blocks of a table
    are mostly of one size."""
    p, n, k = 1 << 31, nbytes, 3  # x^0
    while n:
        if n & 1:
            p = _multmodp(_X2N[k & 31], p)
        n >>= 1
        k += 1
    return p


def _seekable(fp: IO[bytes]) -> bool:
    try:
        if not fp.seekable():
            return False
        fp.tell()
    except (AttributeError, OSError, ValueError):
        return False
    return True
