"""NumPy's .npy (recipe in a sidecar) and .npz (tables plus a JSON metadata entry)."""

from __future__ import annotations

import io
import math
import os
import stat
from contextlib import ExitStack
from pathlib import Path
from typing import IO, Any, cast

import numpy as np

from pecli.dtypes import DTYPES
from pecli.errors import FormatError
from pecli.formats._common import ZIP_MAGIC, ArrayInfo, Format, WriteOptions, choose_key, first_line, unreadable
from pecli.formats.arrays import array_table, is_bfloat16_storage
from pecli.formats.kept import Listing, kept, probing
from pecli.formats.metadata import META_KEY, decode_metadata, table_metadata
from pecli.formats.rawbytes import write_rows
from pecli.formats.torch import is_torch_zip
from pecli.resources import ensure_fits_in_memory
from pecli.table import Progress, Table


def _npy_header(table: Table) -> dict[str, Any]:
    descr = np.lib.format.dtype_to_descr(table.file_dtype)  # a complex table's pairs: the same bytes
    return {"descr": descr, "fortran_order": False, "shape": table.file_shape}


def _write_npy(table: Table, fp: IO[bytes], options: WriteOptions, progress: Progress | None) -> None:
    np.lib.format.write_array_header_1_0(fp, _npy_header(table))
    write_rows(table, fp, progress)


#: The float widths NumPy names that pecli reads from .npy/.npz (bfloat16 is stored as ``|V2``:
#: see ``array_table``).
FLOAT_DTYPES = ("float16", "float32", "float64")
_READABLE = ", ".join(list(DTYPES)[:-1]) + " and " + list(DTYPES)[-1]


def _check_float_width(dtype: np.dtype[Any], source: str) -> None:
    """Refuse a float pecli cannot write back (float128/longdouble); other kinds (ints, complex,
    objects) are refused by ``array_table`` with its own message."""
    if dtype.kind == "f" and dtype.name not in FLOAT_DTYPES:
        raise FormatError(
            f"{source} holds {dtype.name} values: pecli reads {_READABLE} tables; "
            "convert it, e.g. with numpy's astype('float64')"
        )


def _read_npy(path: Path, key: str | None, stack: ExitStack) -> Table:
    if key is not None:
        raise FormatError(f"{path} is a .npy file with one array: drop ':{key}'")
    try:
        with open(path, "rb") as fp:
            version = np.lib.format.read_magic(fp)
            v1 = version == (1, 0)
            shape, _, dtype = (np.lib.format.read_array_header_1_0 if v1 else np.lib.format.read_array_header_2_0)(fp)
        # Checked before NumPy maps it: some headers (an empty structured dtype, a negative
        # dimension) crash the interpreter inside np.memmap instead of raising.
        if np.dtype(dtype).itemsize == 0 or any(not isinstance(n, int) or n < 0 for n in shape):
            raise ValueError(f"header declares dtype {dtype} and shape {shape}")
        arr = np.load(path, mmap_mode="r", allow_pickle=False)
    except ValueError as exc:
        raise FormatError(f"{path} is not a readable .npy table ({first_line(exc)})") from exc
    except Exception as exc:  # NumPy parses an untrusted header: SyntaxError, TokenError, EOFError, ...
        raise unreadable(path, ".npy file", exc) from exc
    _check_float_width(arr.dtype, str(path))
    st = path.stat()
    info: dict[str, Any] = {
        "format": f"npy (version {version[0]}.{version[1]})",
        "order": "Fortran" if arr.flags.f_contiguous and not arr.flags.c_contiguous else "C",
        "file_size": st.st_size,
    }
    # A sparse file's holes read as zeros.  No blocks at all is a file system that does not count
    # them (some FUSE mounts), not a file of holes: a .npy file holds its header at least.
    stored = getattr(st, "st_blocks", 0)
    if 0 < stored * 512 < st.st_size:
        info["storage size"] = stored * 512
    return array_table(arr, str(path), info, sidecar_of=path)


class _Unseekable(io.RawIOBase):
    """A write-only view of a device: the archive then streams (sizes after each entry) instead of
    seeking back, which a device such as /dev/null accepts but does not do (tell() stays 0)."""

    def __init__(self, fp: IO[bytes]) -> None:
        self.fp = fp

    def writable(self) -> bool:
        return True

    def write(self, b: Any) -> int:
        self.fp.write(b)
        return memoryview(b).nbytes

    def flush(self) -> None:
        self.fp.flush()


def _zip_target(fp: IO[bytes]) -> IO[bytes]:
    """``fp``, or an unseekable view of it when it is not a regular file (a device, a FIFO)."""
    try:
        regular = stat.S_ISREG(os.fstat(fp.fileno()).st_mode)
    except (AttributeError, OSError, ValueError):  # an in-memory stream: seekable and honest
        return fp
    return fp if regular else cast(IO[bytes], _Unseekable(fp))


def _write_npz(table: Table, fp: IO[bytes], options: WriteOptions, progress: Progress | None) -> None:
    if options.key == META_KEY:
        raise FormatError(f"--key {META_KEY} is reserved for pecli's metadata entry: choose another name")
    from pecli.formats.zipstore import StoredZip

    # np.savez would need the whole array in memory; a zip entry can be streamed into (its CRC
    # taken by the threads that write the blocks: pecli.formats.zipstore).
    with StoredZip(_zip_target(fp)) as zf:
        with zf.entry(options.key + ".npy") as entry:
            np.lib.format.write_array_header_1_0(entry, _npy_header(table))
            entry.write_rows(table, progress)
        meta = table_metadata(table)
        if meta:
            meta["key"] = options.key
            import json

            buf = io.BytesIO()
            # A 0-d unicode array loads with allow_pickle=False (an object array would not).
            np.lib.format.write_array(buf, np.array(json.dumps(meta)), allow_pickle=False)
            zf.add(META_KEY + ".npy", buf.getvalue())


#: How a zip archive starts: a member's local header, or an empty archive's end record (what
#: np.load tells an .npz from an .npy by).
_ZIP_STARTS = (b"PK\x03\x04", b"PK\x05\x06")


def _open_npz(path: Path, stack: ExitStack) -> Any:
    """The archive, open in ``stack``: a short-lived one, which closes the file at once when the
    archive is refused."""
    try:
        # Opened here, not by np.load: NumPy leaves a file it opened open when the zip is broken.
        fid = stack.enter_context(open(os.fspath(path), "rb"))
        start = fid.read(len(np.lib.format.MAGIC_PREFIX))
        fid.seek(0)
        if not start.startswith(_ZIP_STARTS):  # np.load would read an .npy whole, then fail
            npy = start.startswith(np.lib.format.MAGIC_PREFIX)
            raise ValueError("it holds one .npy array, not a zip of them: name it .npy" if npy else "not a zip archive")
        return stack.enter_context(np.load(fid, allow_pickle=False))
    except Exception as exc:  # a zip of untrusted headers: BadZipFile, ValueError, EOFError, ...
        raise unreadable(path, ".npz file", exc) from exc


def _opened_npz(path: Path, stack: ExitStack) -> tuple[Any, Listing]:
    """The archive, open in ``stack``, and its listing."""
    with ExitStack() as opening:  # closed at once when the archive or its listing is refused
        npz = _open_npz(path, opening)
        listing = Listing.of(_npz_arrays(npz))
        stack.enter_context(opening.pop_all())
        return npz, listing


def _entry_header(npz: Any, name: str) -> tuple[tuple[int, ...], np.dtype[Any], int, bool]:
    """Shape, dtype, stored data size and Fortran order of one entry, from its header alone (no
    data is read)."""
    try:
        member = npz.zip.getinfo(name + ".npy")
        with npz.zip.open(member) as fp:
            version = np.lib.format.read_magic(fp)
            v1 = version == (1, 0)
            read_header = np.lib.format.read_array_header_1_0 if v1 else np.lib.format.read_array_header_2_0
            shape, fortran, dtype = read_header(fp)
            return tuple(shape), np.dtype(dtype), member.file_size - fp.tell(), bool(fortran)
    except Exception as exc:  # untrusted header: SyntaxError, KeyError, BadZipFile, ...
        raise FormatError(f"entry {name!r} of {npz.zip.filename} is not a readable array ({first_line(exc)})") from exc


def _npz_arrays(npz: Any) -> list[ArrayInfo]:
    infos = []
    for name in npz.files:
        if name != META_KEY:
            shape, dtype, _, _ = _entry_header(npz, name)
            infos.append(ArrayInfo(name, shape, "bfloat16" if is_bfloat16_storage(dtype) else dtype.name))
    return infos


def _list_npz(path: Path) -> list[ArrayInfo]:
    with ExitStack() as stack:
        return _npz_arrays(_open_npz(path, stack))


#: A zip local file header's fixed part, before its file name and extra field (APPNOTE 4.3.7).
_LOCAL_HEADER = 30


def _mapped_entry(
    path: Path, npz: Any, name: str, shape: tuple[int, ...], dtype: np.dtype[Any], held: int, fortran: bool
) -> np.ndarray | None:
    """An entry stored uncompressed (``np.savez``'s), memory-mapped where its data lies in the
    file: what a checkpoint scan's probe (:func:`~pecli.formats.kept.probing`) reads of it is the
    rows it probes, not the whole entry (a 1 GB ``.npz`` of 200 arrays was read whole to probe each
    one's first row).  None where it cannot be (compressed, encrypted, empty, a non-numeric
    dtype): it is then read whole."""
    import zipfile

    try:
        member = npz.zip.getinfo(name + ".npy")
        if member.compress_type != zipfile.ZIP_STORED or member.flag_bits & 1 or dtype.hasobject or not all(shape):
            return None
        with open(path, "rb") as fp:
            fp.seek(member.header_offset)
            local = fp.read(_LOCAL_HEADER)
        if len(local) < _LOCAL_HEADER or not local.startswith(ZIP_MAGIC):
            return None
        name_len, extra_len = int.from_bytes(local[26:28], "little"), int.from_bytes(local[28:30], "little")
        start = member.header_offset + _LOCAL_HEADER + name_len + extra_len + (member.file_size - held)
        return np.memmap(path, dtype=dtype, mode="r", offset=start, shape=shape, order="F" if fortran else "C")
    except (OSError, ValueError, KeyError, zipfile.BadZipFile):
        return None


def _read_npz(path: Path, key: str | None, stack: ExitStack) -> Table:

    npz, listing = kept(path, "npz", lambda own: _opened_npz(path, own), stack)
    name = choose_key(path, key, listing.arrays, listing.names)
    shape, dtype, held, fortran = _entry_header(npz, name)
    _check_float_width(dtype, f"{path}:{name}")
    declared = math.prod(shape) * dtype.itemsize
    if declared > held:
        raise FormatError(f"{path}:{name} declares {declared} bytes of data but holds {held}")
    arr = _mapped_entry(path, npz, name, shape, dtype, held, fortran) if probing() else None
    if arr is None:
        # Read whole (zipfile checks its CRC-32 then): check what it declares first.
        ensure_fits_in_memory(declared, f"reading {path}:{name}")
        try:
            arr = npz[name]
            if not isinstance(arr, np.ndarray):  # a raw (non-.npy) member shadowing the .npy one
                raise ValueError(f"entry {name!r} is not an .npy array")
        except Exception as exc:
            raise unreadable(f"{path}:{name}", "array", exc) from exc
    meta: dict[str, Any] = {}
    if META_KEY in npz.files:
        try:
            stored = npz[META_KEY]
        except Exception:  # unreadable metadata (e.g. an object array) is no metadata
            stored = None
        # A member that is not an .npy comes back as raw bytes: no metadata either.
        if isinstance(stored, np.ndarray) and stored.dtype.kind == "U" and stored.ndim == 0:
            meta = decode_metadata(str(stored), key=name)
    info = {"format": "npz", "key": name, "file_size": path.stat().st_size}
    return array_table(arr, f"{path}:{name}", info, meta)


def _is_npy(head: bytes) -> bool:
    return head.startswith(b"\x93NUMPY")


def _is_npz(head: bytes) -> bool:
    return head.startswith(ZIP_MAGIC) and not is_torch_zip(head)


NPY = Format(
    name="npy",
    extensions=(".npy",),
    summary="NumPy array; recipe in a FILE.json sidecar",
    writes_to="stream",
    write=_write_npy,
    read=_read_npy,
    metadata="sidecar",
    bytes_per_value=lambda dt: dt.itemsize,
    sniff=_is_npy,
    streamable=True,
    complex_dtypes=("complex64", "complex128"),
)
NPZ = Format(
    name="npz",
    extensions=(".npz",),
    summary=f"NumPy zip archive: the table plus a '{META_KEY}' JSON entry",
    writes_to="stream",
    write=_write_npz,
    read=_read_npz,
    metadata="inline",
    bytes_per_value=lambda dt: dt.itemsize,
    list_keys=_list_npz,
    sniff=_is_npz,
    begins=lambda head: head.startswith(ZIP_MAGIC),
    streamable=True,
    complex_dtypes=("complex64", "complex128"),
)
