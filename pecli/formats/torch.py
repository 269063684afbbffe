"""PyTorch .pt: written only when torch is installed; read only with ``weights_only=True``.

A .pt file is a pickle; ``torch.load(..., weights_only=True)`` restricts unpickling to tensors
and plain containers, so loading a file can't run code.  pecli never loads one any other way.
"""

from __future__ import annotations

import json
import warnings
from contextlib import ExitStack
from pathlib import Path
from typing import IO, Any

from pecli.errors import FormatError
from pecli.formats._common import ZIP_MAGIC, ArrayInfo, Format, WriteOptions, choose_key, first_line
from pecli.formats.arrays import array_table
from pecli.formats.kept import Listing, kept
from pecli.formats.metadata import META_KEY, decode_metadata
from pecli.formats.metadata import table_metadata as _table_metadata
from pecli.resources import ensure_fits_in_memory
from pecli.table import Progress, Table


def _torch() -> Any:
    from pecli.interruption import Deferred

    try:
        with Deferred():  # a Ctrl-C during torch's import would abort the process from C++
            import torch
    except ImportError:
        raise FormatError("the .pt format needs PyTorch: pip install torch (or choose .safetensors)") from None
    return torch


def _write(table: Table, fp: IO[bytes], options: WriteOptions, progress: Progress | None) -> None:
    torch = _torch()
    if options.key == META_KEY:
        raise FormatError(f"--key {META_KEY} is reserved for pecli's metadata: choose another name")
    ensure_fits_in_memory(table.nbytes, "writing a .pt file (torch.save needs the whole tensor)")
    import numpy as np

    data = np.empty(table.shape, table.dtype)
    start = 0
    for block in table.blocks(progress):
        data[start : start + len(block)] = block
        start += len(block)
    if table.dtype.name == "bfloat16":  # torch takes no ml_dtypes array: the same bits as int16
        tensor = torch.from_numpy(data.view(np.int16)).view(torch.bfloat16)
    else:
        tensor = torch.from_numpy(table.file_values(data))  # a complex table's pairs: complex numbers
    obj: dict[str, Any] = {options.key: tensor}
    meta = _table_metadata(table)
    if meta:
        obj[META_KEY] = json.dumps({**meta, "key": options.key})
    torch.save(obj, fp)


def _stored_zip(path: Path) -> bool:
    """Whether ``path`` is a zip whose entries are all stored uncompressed, as torch.save writes
    them: only such a file is memory-mapped (torch maps a compressed entry's bytes as they lie,
    and reads them as values: a .pt re-zipped with compression read as garbage)."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as zf:
            return all(info.compress_type == zipfile.ZIP_STORED for info in zf.infolist())
    except (OSError, zipfile.BadZipFile, ValueError, EOFError):
        return False


def _load(path: Path) -> dict[str, Any]:
    """The file's tensors by name.  torch.save's zip is memory-mapped (``mmap=True``, torch 2.1
    on): its tensors are read as they are used, not the whole file at once (a checkpoint scan
    reads one row of most of them); the legacy pickle format, and a zip whose entries were
    compressed after torch.save wrote it, are read whole."""
    torch = _torch()
    mapped = _stored_zip(path)
    try:
        # torch warns about what it reads (an unusual pickle protocol, legacy storages): for a file
        # pecli refuses that is noise before the one Error line, for one it reads it says nothing useful.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                obj = torch.load(path, map_location="cpu", weights_only=True, mmap=mapped)
            except TypeError as exc:  # a torch before 2.1 has no mmap
                if not mapped or "mmap" not in str(exc):
                    raise
                obj = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many types (UnpicklingError, RuntimeError, EOFError...)
        raise FormatError(f"{path} is not a .pt file pecli can load safely ({first_line(exc)})") from exc
    if isinstance(obj, torch.Tensor):
        return {"": obj}
    if isinstance(obj, dict):
        return {str(k): v for k, v in obj.items()}
    raise FormatError(f"{path} holds a {type(obj).__name__}: expected a tensor or a dict of tensors")


def _tensors(obj: dict[str, Any]) -> list[ArrayInfo]:
    torch = _torch()
    return [
        ArrayInfo(k, tuple(v.shape), str(v.dtype).removeprefix("torch."))
        for k, v in obj.items()
        if isinstance(v, torch.Tensor)
    ]


def _list(path: Path) -> list[ArrayInfo]:
    return _tensors(_load(path))


def _opened(path: Path) -> tuple[dict[str, Any], Listing]:
    """The file's tensors by name, and its listing."""
    obj = _load(path)
    return obj, Listing.of(_tensors(obj))


def _read(path: Path, key: str | None, stack: ExitStack) -> Table:

    torch = _torch()
    obj, listing = kept(path, "pt", lambda own: _opened(path), stack)
    name = choose_key(path, key, listing.arrays, listing.names)
    tensor = obj[name].detach()
    if tensor.layout != torch.strided or tensor.device.type != "cpu":
        what = f"{tensor.layout} tensor on {tensor.device}"
        raise FormatError(f"{path}:{name} is a {what}: pecli reads dense CPU tensors")
    floats = (torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64, torch.complex128)
    integers = (torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64)  # read as float64
    if tensor.dtype not in floats + integers or tensor.is_conj():
        raise FormatError(
            f"{path}:{name} holds {tensor.dtype} values: pecli reads float16/32/64, bfloat16, complex64/128 "
            "and integer tensors"
        )
    ensure_fits_in_memory(tensor.numel() * tensor.element_size(), f"reading {path}:{name}")
    storage = None
    if tensor.dtype == torch.bfloat16:
        tensor, storage = tensor.float(), "bfloat16"  # exact: bfloat16 is the top half of a float32
    meta = decode_metadata(obj.get(META_KEY), key=name) if isinstance(obj.get(META_KEY), str) else {}
    info = {
        "format": "pt (torch.load weights_only=True)",
        "tensor": name or "(the file's only tensor)",
        "file_size": path.stat().st_size,
    }
    return array_table(tensor.numpy(), f"{path}:{name}" if key else str(path), info, meta, storage=storage)


def is_torch_zip(head: bytes) -> bool:
    """A zip whose first entry is torch.save's ``ARCHIVE/data.pkl`` (an npz's is ``NAME.npy``)."""
    size = int.from_bytes(head[26:28], "little")
    first = head[30 : 30 + size]
    return head.startswith(ZIP_MAGIC) and not first.endswith(b".npy") and b"data.pkl" in head


def _is_torch_file(head: bytes) -> bool:
    """torch.save's zip, or a pickle (its legacy format)."""
    return is_torch_zip(head) or (head[:1] == b"\x80" and head[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05"))


TORCH = Format(
    name="pt",
    extensions=(".pt", ".pth"),
    summary="PyTorch file (needs torch); read with weights_only=True",
    writes_to="stream",
    write=_write,
    read=_read,
    metadata="inline",
    bytes_per_value=lambda dt: dt.itemsize,
    list_keys=_list,
    requires="torch",
    sniff=_is_torch_file,
    title="PyTorch .pt",
    complex_dtypes=("complex64", "complex128"),
)
