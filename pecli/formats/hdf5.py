"""HDF5 through h5py: one dataset per table, the recipe as attributes on it."""

from __future__ import annotations

import json
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np

from pecli.errors import FormatError
from pecli.formats._common import META_KEY, ArrayInfo, Format, WriteOptions, array_table, decode_metadata, first_line
from pecli.formats._common import table_metadata as _table_metadata
from pecli.table import Progress, Table

#: Rows per chunk aim for ~1 MiB chunks (h5py's guidance: 10 KiB–1 MiB).
_CHUNK_BYTES = 1 << 20


def _write_h5(table: Table, path: Path, options: WriteOptions, progress: Progress | None) -> None:
    import h5py

    n, d = table.shape
    kwargs: dict[str, Any] = {}
    if options.compress is not None:
        name, level = options.compress
        rows = max(1, min(n, _CHUNK_BYTES // max(1, d * table.dtype.itemsize)))
        kwargs = {"compression": name, "compression_opts": level, "shuffle": True, "chunks": (rows, d)}
    with h5py.File(path, "w") as f:
        try:
            ds = f.create_dataset(options.key, shape=table.shape, dtype=table.dtype, **kwargs)
        except ValueError as exc:
            raise FormatError(f"cannot create dataset {options.key!r}: {first_line(exc)}") from exc
        start = 0
        for block in table.blocks(progress):
            ds[start : start + len(block)] = block
            start += len(block)
        meta = _table_metadata(table)
        for key, value in meta.items():
            ds.attrs[key] = value  # one attribute per parameter, for h5dump -A and h5ls -v
        if meta:
            # The one pecli reads back, as a fixed-length byte string: reading a variable-length
            # string from an untrusted file can make libhdf5 loop or allocate gigabytes.
            ds.attrs.create(META_KEY, np.bytes_(json.dumps(meta).encode()))


def _open(path: Path, stack: ExitStack) -> Any:
    import h5py

    try:
        return stack.enter_context(h5py.File(path, "r"))
    except OSError as exc:
        raise FormatError(f"{path} is not a readable HDF5 file ({first_line(exc)})") from exc


def _datasets(f: Any) -> list[ArrayInfo]:
    import h5py

    found: list[ArrayInfo] = []

    def visit(name: str, link: Any) -> None:
        # visititems_links sees links without following them, so external links are never opened.
        if isinstance(link, h5py.HardLink):
            obj = f.get(name)
            if isinstance(obj, h5py.Dataset):
                found.append(
                    ArrayInfo(name, tuple(obj.shape), obj.dtype.name if obj.dtype.kind in "fiub" else str(obj.dtype))
                )

    f.visititems_links(visit)
    return found


#: The largest metadata attribute pecli reads (a recipe is a few hundred bytes).
_MAX_META_BYTES = 1 << 16


def _stored_recipe(ds: Any, info: dict[str, Any]) -> dict[str, Any]:
    """The recipe attribute, read only when its header says it is a small fixed-length string.

    The type and size come from the attribute's header; its data is read only after they check
    out, so a corrupt variable-length string (libhdf5 can loop on one, or allocate gigabytes) is
    never touched.
    """
    if META_KEY not in ds.attrs:
        return {}
    attr = ds.attrs.get_id(META_KEY)
    dtype, shape = attr.dtype, attr.shape
    if dtype.kind != "S" or not 0 < dtype.itemsize <= _MAX_META_BYTES or shape not in ((), (1,)):
        info["note"] = f"attribute {META_KEY} is not a small fixed-length string; ignored"
        return {}
    return decode_metadata(ds.attrs[META_KEY])


def _list_h5(path: Path) -> list[ArrayInfo]:
    with ExitStack() as stack:
        f = _open(path, stack)
        try:
            return _datasets(f)
        except Exception as exc:  # libhdf5 reports corrupt files in many ways
            raise FormatError(f"{path} is not a readable HDF5 file ({first_line(exc)})") from exc


def _read_h5(path: Path, key: str | None, stack: ExitStack) -> Table:
    try:
        return _read_h5_unchecked(path, key, stack)
    except FormatError:
        raise
    except Exception as exc:  # libhdf5 reports corrupt files in many ways
        raise FormatError(f"{path} is not a readable HDF5 file ({first_line(exc)})") from exc


def _read_h5_unchecked(path: Path, key: str | None, stack: ExitStack) -> Table:
    import h5py

    from pecli.formats import choose_key

    f = _open(path, stack)
    if key is not None:
        link = f.get(key, getlink=True)
        if isinstance(link, h5py.ExternalLink):
            raise FormatError(
                f"{path}:{key} is an external link to {link.filename}: pecli does not follow links out of a file"
            )
        if link is None or not isinstance(f.get(key), h5py.Dataset):
            names = ", ".join(a.key for a in _datasets(f)[:8]) or "none"
            raise FormatError(f"{path} has no dataset {key!r}: its datasets are {names}")
        name = key.strip("/")
    else:
        name = choose_key(path, None, _datasets(f))
    ds = f[name]
    if ds.is_virtual:
        raise FormatError(f"{path}:{name} is a virtual dataset: pecli reads only data stored in the file itself")
    if ds.external:
        raise FormatError(
            f"{path}:{name} keeps its data in external files: pecli reads only data stored in the file itself"
        )
    info: dict[str, Any] = {}
    meta = _stored_recipe(ds, info)
    compression = ds.compression or "none"
    if ds.compression_opts is not None:
        compression += f" (level {ds.compression_opts})"
    info |= {
        "format": "hdf5",
        "dataset": "/" + name,
        "layout": f"chunked {ds.chunks}" if ds.chunks else "contiguous",
        "compression": compression,
        "storage size": ds.id.get_storage_size(),
        "file size": path.stat().st_size,
    }
    return array_table(ds, f"{path}:{name}" if key else str(path), info, meta)


H5 = Format(
    "h5",
    (".h5", ".hdf5"),
    "HDF5 dataset (default /pe) with the recipe as attributes; --compress gzip",
    "path",
    _write_h5,
    _read_h5,
    "inline",
    lambda dt: dt.itemsize,
    list_keys=_list_h5,
    aliases=("hdf5",),
)
