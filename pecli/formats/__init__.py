"""Format registry: one entry per file format, each a reader and a writer over row blocks.

Every format stores the same metadata (``table_metadata``): inline where the format has room
(HDF5 attributes, npz entry, safetensors ``__metadata__``, JSON field, .pt dict entry, C comment),
otherwise in a ``FILE.json`` sidecar (.npy, .csv, .tsv).  Adding a format is one module with a
``Format`` entry, listed in ``FORMATS`` below, plus its tests.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import IO

from pecli.atomic import atomic_paths, is_special
from pecli.errors import FormatError, OutputError, TableTooLargeError
from pecli.formats._common import (
    DEFAULT_KEY,
    META_KEY,
    ArrayInfo,
    Format,
    WriteOptions,
    is_pecli_sidecar,
    sidecar_text,
)
from pecli.formats.cheader import CHEADER
from pecli.formats.hdf5 import H5
from pecli.formats.npy import NPY, NPZ
from pecli.formats.safetensors import SAFETENSORS
from pecli.formats.text import CSV, JSON, TSV
from pecli.formats.torch import TORCH
from pecli.resources import human_bytes
from pecli.table import Progress, Table

__all__ = [
    "DEFAULT_KEY",
    "FORMATS",
    "ArrayInfo",
    "Format",
    "WriteOptions",
    "choose_key",
    "list_arrays",
    "open_table",
    "resolve_format",
    "write_table",
]

FORMATS: dict[str, Format] = {f.name: f for f in (NPY, NPZ, H5, CSV, TSV, JSON, SAFETENSORS, TORCH, CHEADER)}


def resolve_format(path: str, name: str | None) -> Format:
    """The format named by ``--format``, else the one the path's extension says."""
    if name is not None:
        wanted = name.lower()
        for fmt in FORMATS.values():
            if wanted == fmt.name or wanted in fmt.aliases:
                return fmt
        raise FormatError(f"unknown format {name!r}: choose one of {', '.join(FORMATS)}")
    lower = Path(path).name.lower()
    for fmt in FORMATS.values():
        if any(lower.endswith(ext) for ext in fmt.extensions):
            return fmt
    known = ", ".join(e for f in FORMATS.values() for e in f.extensions)
    raise FormatError(f"cannot tell the format of {path!r} from its extension: use one of {known} or --format")


def choose_key(path: Path, key: str | None, arrays: list[ArrayInfo]) -> str:
    """The array to read: the one asked for, else 'pe', else the file's only table."""
    names = [a.key for a in arrays]
    if key is not None:
        if key not in names:
            shown = ", ".join(names[:8]) + (", …" if len(names) > 8 else "") or "none"
            raise FormatError(f"{path} has no array {key!r}: its arrays are {shown}")
        return key
    if DEFAULT_KEY in names:
        return DEFAULT_KEY
    tables = [a.key for a in arrays if len([s for s in a.shape if s != 1]) <= 2 and a.key != META_KEY]
    if len(names) == 1:
        return names[0]
    if not names:
        raise FormatError(f"{path} holds no arrays")
    if len(tables) == 1:
        return tables[0]
    shown = ", ".join(names[:8]) + (", …" if len(names) > 8 else "")
    raise FormatError(f"{path} holds several arrays ({shown}): choose one as {path}:KEY")


def _check_readable(p: Path) -> None:
    if not p.exists():
        raise FormatError(f"{p} does not exist: check the path")
    if p.is_dir():
        raise FormatError(f"{p} is a directory: give a table file")
    if not os.access(p, os.R_OK):
        raise FormatError(f"cannot read {p} (permission denied)")
    if p.stat().st_size == 0:
        raise FormatError(f"{p} is empty")


def _reader(p: Path, fmt: str | None) -> Format:
    f = resolve_format(str(p), fmt)
    if f.read is None:
        raise FormatError(f"{f.name} is a write-only format: pecli cannot read {p}")
    return f


@contextmanager
def open_table(path: str | Path, fmt: str | None = None, key: str | None = None) -> Iterator[Table]:
    """Open one table of a file for reading (lazily where the format allows); closes it on exit."""
    p = Path(path)
    _check_readable(p)
    f = _reader(p, fmt)
    assert f.read is not None
    with ExitStack() as stack:
        try:
            table = f.read(p, key, stack)
        except OSError as exc:
            raise FormatError(f"cannot read {p}: {exc.strerror or exc}") from exc
        yield table


def list_arrays(path: str | Path, fmt: str | None = None) -> list[ArrayInfo] | None:
    """The arrays inside a multi-array file (None for single-table formats)."""
    p = Path(path)
    _check_readable(p)
    f = _reader(p, fmt)
    if f.list_keys is None:
        return None
    try:
        return f.list_keys(p)
    except OSError as exc:
        raise FormatError(f"cannot read {p}: {exc.strerror or exc}") from exc


def write_table(
    table: Table,
    dest: str | Path | IO[bytes],
    fmt: str | None = None,
    *,
    options: WriteOptions | None = None,
    force: bool = False,
    sidecar: bool = True,
    progress: Progress | None = None,
) -> None:
    """Write ``table`` to a path (atomically) or a binary stream, in row blocks.

    A path is written through a temporary file beside it and renamed into place, so the target
    is either the previous file or the complete new one.  An existing file is refused unless
    ``force``.  Formats without room for metadata get a ``PATH.json`` sidecar with the recipe.
    """
    options = options or WriteOptions()
    if not isinstance(dest, (str, Path)):
        if fmt is None:
            raise FormatError("writing to a stream needs a format name")
        f = resolve_format("-", fmt)
        if f.writes_to != "stream":
            raise FormatError(f"{f.name} cannot be written to a stream (it needs a seekable file): give a file path")
        f.write(table, dest, options, progress)
        return
    path = Path(dest)
    f = resolve_format(str(path), fmt)
    has_meta = table.recipe is not None or bool(table.provenance)
    want_sidecar = sidecar and f.metadata == "sidecar" and has_meta and not is_special(path)
    _check_free_space(table, path, f)
    targets = [path] + ([Path(str(path) + ".json")] if want_sidecar else [])
    if want_sidecar:
        _check_sidecar_slot(targets[1])
    if force and want_sidecar and targets[1].exists() and not is_pecli_sidecar(targets[1]):
        raise OutputError(
            f"{targets[1]} exists and is not a pecli sidecar: pecli never replaces it, even with --force; "
            "move it away, or write with --no-sidecar"
        )
    with atomic_paths(*targets, force=force) as temps:
        if f.writes_to == "stream":
            with open(temps[0], "wb") as fp:
                f.write(table, fp, options, progress)
        else:
            f.write(table, temps[0], options, progress)
        if want_sidecar:
            temps[1].write_text(sidecar_text(table), encoding="utf-8")
    if not want_sidecar and f.metadata == "sidecar":
        _drop_stale_sidecar(Path(str(path) + ".json"))


def _check_sidecar_slot(sidecar: Path) -> None:
    """Refuse a FIFO, a device or a directory where the sidecar goes: writing the recipe into a
    FIFO blocks until someone reads it (for ever, usually), into a device it is lost."""
    try:
        mode = sidecar.stat().st_mode  # follows a symlink: one to a regular file is fine
    except OSError:
        return  # absent (or a dangling symlink: check_destination judges it)
    if not stat.S_ISREG(mode):
        raise OutputError(
            f"{sidecar} exists and is not a regular file: pecli will not write the recipe there; "
            "remove it or use --no-sidecar"
        )


def _drop_stale_sidecar(sidecar: Path) -> None:
    # The data file was just replaced; a sidecar describing the old one would now lie.
    if is_pecli_sidecar(sidecar):
        sidecar.unlink(missing_ok=True)


def _check_free_space(table: Table, path: Path, f: Format) -> None:
    if is_special(path) or not path.parent.is_dir():
        return
    n, d = table.shape
    need = int(n * d * f.bytes_per_value(table.dtype))
    free = shutil.disk_usage(path.parent).free
    if need > free:
        raise TableTooLargeError(
            f"{path} would need at least {human_bytes(need)} but {path.parent} has {human_bytes(free)} free: "
            "choose a smaller table or another directory"
        )
