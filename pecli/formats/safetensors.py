"""safetensors, read and written directly (8-byte header length, JSON header, raw little-endian data).

The format is small enough that owning it is simpler than depending on it: pecli streams row
blocks into the file (the ``safetensors`` package wants the whole array in memory), bounds and
validates the header before trusting it, and memory-maps tensors for reading.  The package is
used in the tests as an independent oracle.
"""

from __future__ import annotations

import json
import struct
import sys
from contextlib import ExitStack
from functools import lru_cache
from pathlib import Path
from typing import IO, Any

import numpy as np

from pecli.errors import FormatError
from pecli.formats._common import ArrayInfo, Format, WriteOptions, choose_key, first_line
from pecli.formats.arrays import Bfloat16Rows, array_table
from pecli.formats.kept import Listing, file_version, kept
from pecli.formats.metadata import META_KEY, decode_metadata, table_metadata
from pecli.formats.rawbytes import write_rows
from pecli.jsontext import load_json
from pecli.table import Progress, Table

#: The reference implementation refuses headers over 100 MB; so does pecli.
MAX_HEADER = 100_000_000
_DTYPES = {
    "F16": "<f2",
    "F32": "<f4",
    "F64": "<f8",
    "BF16": "<u2",
    "I8": "i1",
    "U8": "u1",
    "I16": "<i2",
    "U16": "<u2",
    "I32": "<i4",
    "U32": "<u4",
    "I64": "<i8",
    "U64": "<u8",
    "BOOL": "?",
    "C64": "<c8",
    # 8-bit floats: valid safetensors, sized here so that a file holding them is read as valid
    # and refused by name (NumPy has no such dtype; pecli reads F16, BF16, F32 and F64 tables).
    "F8_E4M3": "u1",
    "F8_E5M2": "u1",
    "F8_E8M0": "u1",
}
_CODES = {"float16": "F16", "bfloat16": "BF16", "float32": "F32", "float64": "F64", "complex64": "C64"}


def _write(table: Table, fp: IO[bytes], options: WriteOptions, progress: Progress | None) -> None:
    if options.key == "__metadata__":
        raise FormatError("--key __metadata__ is reserved by the safetensors format: choose another name")
    stored = table.file_dtype.name
    n, d = table.file_shape
    meta = table_metadata(table)
    header: dict[str, Any] = {}
    if meta:
        meta["key"] = options.key
        # __metadata__ must map strings to strings; the JSON copy is what pecli reads back.
        header["__metadata__"] = {**{k: str(v) for k, v in meta.items()}, META_KEY: json.dumps(meta)}
    header[options.key] = {"dtype": _CODES[stored], "shape": [n, d], "data_offsets": [0, table.nbytes]}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the reference writer pads the header to 8 bytes
    fp.write(struct.pack("<Q", len(text)))
    fp.write(text)
    bf16 = table.dtype.name == "bfloat16"
    little = np.dtype("<u2") if bf16 else table.dtype.newbyteorder("<")

    def little_endian(block: np.ndarray) -> np.ndarray:  # bfloat16: its bits as they are
        return np.ascontiguousarray(block.view(np.uint16) if bf16 else block, dtype=little)

    write_rows(table, fp, progress, little_endian)


def _header(path: Path) -> tuple[dict[str, Any], int]:
    """The header (checked) and where the data starts.  Kept for the file as it is now (its
    inode, size and modification time): a checkpoint scan opens each of its N tensors, and
    parsing the header each time cost N² entry checks (0.9 s for 200 tensors)."""
    return _parsed_header(path, file_version(path))


@lru_cache(maxsize=4)
def _parsed_header(path: Path, version: tuple[int, int, int]) -> tuple[dict[str, Any], int]:
    size = version[1]
    with open(path, "rb") as fp:
        raw = fp.read(8)
        if len(raw) < 8:
            raise FormatError(f"{path} is not a safetensors file (shorter than its 8-byte header length)")
        (n,) = struct.unpack("<Q", raw)
        if 8 + n > size:
            raise FormatError(
                f"{path} is not a readable safetensors file: it declares a header longer than the file "
                f"(header length {n} does not fit the file of {size} bytes); it is truncated or not safetensors"
            )
        if n > MAX_HEADER:
            raise FormatError(
                f"{path}: its safetensors header of {n} bytes is larger than the {MAX_HEADER // 1_000_000} MB "
                "pecli accepts (the reference implementation's limit too); re-save it with less __metadata__"
            )
        text = fp.read(n)
    try:
        header = load_json(text.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        if "digits" in str(exc):  # Python's 4300-digit guard on int("1" * 5000)
            raise FormatError(
                f"{path} is not a readable safetensors file: its header holds an integer too large to read "
                f"(over {sys.get_int_max_str_digits()} digits)"
            ) from exc
        raise FormatError(f"{path} is not a readable safetensors file (header is not JSON: {exc})") from exc
    if not isinstance(header, dict):
        raise FormatError(f"{path} is not a readable safetensors file (header is not a JSON object)")
    data_size = size - 8 - n
    for key, entry in header.items():
        if key == "__metadata__":
            continue
        _check_entry(path, key, entry, data_size)
    return header, 8 + n


def _check_entry(path: Path, key: str, entry: Any, data_size: int) -> None:
    try:
        code, shape, (begin, end) = entry["dtype"], entry["shape"], entry["data_offsets"]
        itemsize = np.dtype(_DTYPES[code]).itemsize
        count = 1
        if not isinstance(shape, list) or len(shape) > 32:
            raise ValueError
        for s in shape:
            if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < 2**62:
                raise ValueError
            count *= s
    except (KeyError, TypeError, ValueError) as exc:
        raise FormatError(f"{path}: tensor {key!r} has a malformed entry in the header") from exc
    if not (isinstance(begin, int) and isinstance(end, int) and 0 <= begin <= end <= data_size):
        raise FormatError(f"{path}: tensor {key!r} points outside the file (offsets {begin}..{end})")
    if end - begin != count * itemsize:
        raise FormatError(f"{path}: tensor {key!r} declares {count} values but {end - begin} bytes")


def _arrays(header: dict[str, Any]) -> list[ArrayInfo]:
    names = {code: name for name, code in _CODES.items()}
    return [
        ArrayInfo(k, tuple(v["shape"]), names.get(v["dtype"], v["dtype"].lower()))
        for k, v in header.items()
        if k != "__metadata__"
    ]


def _list(path: Path) -> list[ArrayInfo]:
    return _arrays(_header(path)[0])


def _read(path: Path, key: str | None, stack: ExitStack) -> Table:

    header, offset = _header(path)
    listing = kept(path, "safetensors listing", lambda own: Listing.of(_arrays(header)), stack)
    name = choose_key(path, key, listing.arrays, listing.names)
    entry = header[name]
    code, shape, (begin, _) = entry["dtype"], tuple(entry["shape"]), entry["data_offsets"]
    dtype = np.dtype(_DTYPES[code])
    if code.startswith("F8_"):
        raise FormatError(
            f"{path}: tensor {name!r} holds {code} values (8-bit floats): pecli reads F16, BF16, F32, F64, C64 "
            "and integer tensors; convert it first (e.g. torch: t.to(torch.float32))"
        )
    try:
        if 0 in shape:
            data: Any = np.zeros(shape, dtype)
        else:
            data = np.memmap(path, dtype=dtype, mode="r", offset=offset + begin, shape=shape)
    except Exception as exc:  # e.g. more dims than NumPy supports
        raise FormatError(f"{path}: tensor {name!r} cannot be mapped ({first_line(exc)})") from exc
    info: dict[str, Any] = {
        "format": "safetensors",
        "tensor": name,
        "stored dtype": code,
        "file_size": path.stat().st_size,
    }
    if code == "BF16":
        data = Bfloat16Rows(data)
    stored = header.get("__metadata__")
    meta = decode_metadata(stored.get(META_KEY), key=name) if isinstance(stored, dict) else {}
    if isinstance(stored, dict):
        info["metadata keys"] = ", ".join(sorted(stored)) or "none"
    storage = "bfloat16" if code == "BF16" else None
    return array_table(data, f"{path}:{name}" if key else str(path), info, meta, storage=storage)


#: The largest header a sniffed safetensors file may declare (text's first 8 bytes make a far larger number).
_MAX_SNIFFED_HEADER = 100_000_000


def _header_size_first(head: bytes) -> bool:
    """An 8-byte little-endian header size, then the header's ``{``."""
    if len(head) <= 8 or head[8:9] != b"{":
        return False
    size = int.from_bytes(head[:8], "little")
    return 2 <= size <= _MAX_SNIFFED_HEADER


SAFETENSORS = Format(
    name="safetensors",
    extensions=(".safetensors",),
    summary="Hugging Face safetensors; tensor name from --key, recipe in __metadata__",
    writes_to="stream",
    write=_write,
    read=_read,
    metadata="inline",
    bytes_per_value=lambda dt: dt.itemsize,
    list_keys=_list,
    sniff=_header_size_first,
    streamable=True,
    complex_dtypes=("complex64",),  # C64; the format has no complex128
)
