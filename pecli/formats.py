"""Format registry: one entry per file format, each a reader and a writer over row blocks.

Every format stores the same metadata (a recipe's ``to_metadata()``): inline where the format
has room for it (HDF5 attributes), otherwise in a ``FILE.json`` sidecar (.npy, .csv).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

import numpy as np

from pecli.atomic import atomic_paths, is_special
from pecli.errors import FormatError, TableTooLargeError
from pecli.recipe import recipe_from_metadata
from pecli.resources import human_bytes
from pecli.table import Progress, Table

SIDECAR_SCHEMA = "pecli-sidecar/1"
#: Dataset name pecli writes in HDF5 files (and looks for first when reading).
H5_DATASET = "pe"
#: Significant digits that make text round-trip bit-exactly, per dtype.
ROUND_TRIP_DIGITS = {"float16": 5, "float32": 9, "float64": 17}


@dataclass(frozen=True)
class Format:
    name: str
    extensions: tuple[str, ...]
    summary: str
    writes_to: Literal["stream", "path"]
    write: Callable[[Table, Any, Progress | None], None]
    read: Callable[[Path, ExitStack], Table]
    inline_metadata: bool
    #: Rough lower bound of bytes per value on disk, for the free-space check.
    bytes_per_value: Callable[[np.dtype[Any]], float]


# --------------------------------------------------------------------------------------- npy
def _write_npy(table: Table, fp: IO[bytes], progress: Progress | None) -> None:
    header = {"descr": np.lib.format.dtype_to_descr(table.dtype), "fortran_order": False, "shape": table.shape}
    np.lib.format.write_array_header_1_0(fp, header)
    for block in table.blocks(progress):
        fp.write(np.ascontiguousarray(block).data)


def _read_npy(path: Path, stack: ExitStack) -> Table:
    try:
        arr = np.load(path, mmap_mode="r", allow_pickle=False)
    except ValueError as exc:
        raise FormatError(f"{path} is not a readable .npy table ({_first_line(exc)})") from exc
    except (OSError, EOFError) as exc:
        raise FormatError(f"{path} is not a readable .npy file ({_first_line(exc)})") from exc
    with open(path, "rb") as fp:
        version = np.lib.format.read_magic(fp)
    info = {
        "format": f"npy (version {version[0]}.{version[1]})",
        "order": "Fortran" if arr.flags.f_contiguous and not arr.flags.c_contiguous else "C",
        "file size": path.stat().st_size,
    }
    return _array_table(arr, path, info)


# --------------------------------------------------------------------------------------- csv
def _write_csv(table: Table, fp: IO[bytes], progress: Progress | None) -> None:
    d = table.shape[1]
    fp.write((",".join(f"d{j}" for j in range(d)) + "\n").encode())
    digits = ROUND_TRIP_DIGITS.get(table.dtype.name, 17)
    row_fmt = ",".join([f"%.{digits}g"] * d) + "\n"
    for block in table.blocks(progress):
        fp.write("".join([row_fmt % tuple(row) for row in block.tolist()]).encode())


def _read_csv(path: Path, stack: ExitStack) -> Table:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(f"{path} is not a text CSV file (byte {exc.start} is not UTF-8)") from exc
    lines = text.splitlines()
    if not lines:
        raise FormatError(f"{path} is empty: expected a header line d0,d1,… and rows of numbers")
    header = lines[0].split(",")
    has_header = not _is_number(header[0].strip())
    body_start = 1 if has_header else 0
    body = lines[body_start:]
    if not body:
        raise FormatError(f"{path} has a header but no rows of numbers")
    width = len(header) if has_header else len(body[0].split(","))
    values: list[list[float]] = []
    for k, line in enumerate(body, start=body_start + 1):
        if not line.strip():
            raise FormatError(f"{path} line {k} is blank: remove blank lines between rows")
        cells = line.split(",")
        if len(cells) != width:
            raise FormatError(f"{path} line {k} has {len(cells)} values, expected {width} like the line above it")
        try:
            values.append([float(c) for c in cells])
        except ValueError:
            bad = next(c for c in cells if not _is_number(c))
            raise FormatError(f"{path} line {k} has a non-numeric value {bad.strip()!r}") from None
    arr = np.array(values, dtype=np.float64)
    info: dict[str, Any] = {"format": "csv", "header": "yes" if has_header else "no", "file size": path.stat().st_size}
    return _array_table(arr, path, info)


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


# ---------------------------------------------------------------------------------------- h5
def _write_h5(table: Table, path: Path, progress: Progress | None) -> None:
    import h5py

    with h5py.File(path, "w") as f:
        ds = f.create_dataset(H5_DATASET, shape=table.shape, dtype=table.dtype)
        start = 0
        for block in table.blocks(progress):
            ds[start : start + len(block)] = block
            start += len(block)
        meta = table.recipe.to_metadata() if table.recipe is not None else {}
        for key, value in meta.items():
            ds.attrs[key] = value
        if meta:
            # The flat attributes are for h5dump/h5ls readers; this one attribute is what pecli reads.
            ds.attrs["pecli_recipe"] = json.dumps(meta)


def _read_h5(path: Path, stack: ExitStack) -> Table:
    import h5py

    try:
        f = stack.enter_context(h5py.File(path, "r"))
    except OSError as exc:
        raise FormatError(f"{path} is not a readable HDF5 file ({_first_line(exc)})") from exc
    datasets: list[str] = []
    f.visititems(lambda name, obj: datasets.append(name) if isinstance(obj, h5py.Dataset) else None)
    if H5_DATASET in datasets:
        name = H5_DATASET
    elif len(datasets) == 1:
        name = datasets[0]
    elif not datasets:
        raise FormatError(f"{path} holds no dataset")
    else:
        shown = ", ".join(datasets[:8]) + (", …" if len(datasets) > 8 else "")
        raise FormatError(f"{path} holds several datasets ({shown}) and none is named '{H5_DATASET}'")
    ds = f[name]
    meta: dict[str, Any] = {}
    if "pecli_recipe" in ds.attrs:
        try:
            meta = json.loads(ds.attrs["pecli_recipe"])
        except (TypeError, ValueError):
            meta = {}
    compression = ds.compression or "none"
    if ds.compression_opts is not None:
        compression += f" (level {ds.compression_opts})"
    info = {
        "format": "hdf5",
        "dataset": "/" + name,
        "layout": f"chunked {ds.chunks}" if ds.chunks else "contiguous",
        "compression": compression,
        "storage size": ds.id.get_storage_size(),
        "file size": path.stat().st_size,
    }
    table = _array_table(ds, path, info, metadata=meta)
    return table


# ------------------------------------------------------------------------------------ shared
def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


class _Squeezed:
    """A view of an array-like without its leading length-1 axes (``(1, N, D)`` → ``(N, D)``)."""

    def __init__(self, data: Any, lead: int) -> None:
        self.data, self.lead = data, lead
        self.shape = tuple(data.shape[lead:])
        self.dtype = data.dtype

    def __getitem__(self, key: slice) -> Any:
        return self.data[(0,) * self.lead + (key,)]


def _array_table(data: Any, path: Path, info: dict[str, Any], metadata: dict[str, Any] | None = None) -> Table:
    dtype = np.dtype(data.dtype)
    if dtype.kind != "f":
        raise FormatError(f"{path} holds {dtype} values: pecli reads floating-point tables (float16/32/64)")
    shape = tuple(data.shape)
    lead = 0
    while len(shape) - lead > 2 and shape[lead] == 1:
        lead += 1
    if len(shape) - lead != 2:
        raise FormatError(f"{path} holds an array of shape {shape}: expected a 2-D table (positions × dims)")
    if lead:
        info["squeezed"] = f"{shape} → {shape[lead:]}"
        data = _Squeezed(data, lead)
    info["byte order"] = _byte_order(dtype)
    meta = metadata or {}
    sidecar = Path(str(path) + ".json")
    if not meta and sidecar.is_file():
        meta = _read_sidecar(sidecar, tuple(data.shape), info)
    recipe = recipe_from_metadata(meta) if meta else None
    if recipe is not None and recipe.shape != tuple(data.shape):
        info["note"] = f"stored recipe {recipe.shape} does not match the data {tuple(data.shape)}; ignored"
        recipe = None
    if recipe is not None and isinstance(data, np.ndarray) and info.get("format") == "csv":
        data = data.astype(recipe.dtype)  # text round-trips exactly through float64
    return Table(data, recipe, str(path), info)


def _byte_order(dtype: np.dtype[Any]) -> str:
    import sys

    order = dtype.byteorder
    if order == "|":
        return "not applicable"
    if order == "=":
        order = "<" if sys.byteorder == "little" else ">"
    return "little-endian" if order == "<" else "big-endian"


def _read_sidecar(sidecar: Path, shape: tuple[int, ...], info: dict[str, Any]) -> dict[str, Any]:
    try:
        doc = json.loads(sidecar.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        info["note"] = f"sidecar {sidecar.name} is not valid JSON; ignored"
        return {}
    if not isinstance(doc, dict) or doc.get("schema") != SIDECAR_SCHEMA or not isinstance(doc.get("recipe"), dict):
        return {}
    if tuple(doc.get("shape", ())) != shape:
        info["note"] = f"sidecar {sidecar.name} describes shape {doc.get('shape')}, not {shape}; ignored"
        return {}
    info["metadata"] = f"sidecar {sidecar.name}"
    recipe: dict[str, Any] = doc["recipe"]
    return recipe


def _sidecar_text(table: Table) -> str:
    assert table.recipe is not None
    doc = {
        "schema": SIDECAR_SCHEMA,
        "shape": list(table.shape),
        "dtype": table.dtype.name,
        "recipe": table.recipe.to_metadata(),
    }
    return json.dumps(doc, indent=2) + "\n"


FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format(
            "npy",
            (".npy",),
            "NumPy array file; recipe in a FILE.json sidecar",
            "stream",
            _write_npy,
            _read_npy,
            False,
            lambda dt: dt.itemsize,
        ),
        Format(
            "h5",
            (".h5", ".hdf5"),
            "HDF5 dataset '/pe' with the recipe as attributes",
            "path",
            _write_h5,
            _read_h5,
            True,
            lambda dt: dt.itemsize,
        ),
        Format(
            "csv",
            (".csv",),
            "header d0,d1,… then rows; text round-trips bit-exactly",
            "stream",
            _write_csv,
            _read_csv,
            False,
            lambda dt: ROUND_TRIP_DIGITS.get(dt.name, 17) * 0.8,
        ),
    )
}


def format_names() -> tuple[str, ...]:
    return tuple(FORMATS)


def resolve_format(path: str, name: str | None) -> Format:
    """The format named by ``--format``, else the one the path's extension says."""
    if name is not None:
        try:
            return FORMATS[name.lower()]
        except KeyError:
            raise FormatError(f"unknown format {name!r}: choose one of {', '.join(FORMATS)}") from None
    suffix = Path(path).suffix.lower()
    for fmt in FORMATS.values():
        if suffix in fmt.extensions:
            return fmt
    known = ", ".join(e for f in FORMATS.values() for e in f.extensions)
    raise FormatError(f"cannot tell the format of {path!r} from its extension: use one of {known} or --format")


@contextmanager
def open_table(path: str | Path, fmt: str | None = None) -> Iterator[Table]:
    """Open a table file for reading (lazily where the format allows); closes it on exit."""
    p = Path(path)
    if not p.exists():
        raise FormatError(f"{p} does not exist: check the path")
    if p.is_dir():
        raise FormatError(f"{p} is a directory: give a table file")
    if not os.access(p, os.R_OK):
        raise FormatError(f"cannot read {p} (permission denied)")
    if p.stat().st_size == 0:
        raise FormatError(f"{p} is empty")
    reader = resolve_format(str(p), fmt)
    with ExitStack() as stack:
        try:
            table = reader.read(p, stack)
        except OSError as exc:
            raise FormatError(f"cannot read {p}: {_first_line(exc)}") from exc
        yield table


def write_table(
    table: Table,
    dest: str | Path | IO[bytes],
    fmt: str | None = None,
    *,
    force: bool = False,
    sidecar: bool = True,
    progress: Progress | None = None,
) -> None:
    """Write ``table`` to a path (atomically) or a binary stream, in row blocks.

    A path is written through a temporary file beside it and renamed into place, so the target
    is either the previous file or the complete new one.  An existing file is refused unless
    ``force``.  Formats without inline metadata get a ``PATH.json`` sidecar with the recipe.
    """
    if not isinstance(dest, (str, Path)):
        if fmt is None:
            raise FormatError("writing to a stream needs a format name")
        f = resolve_format("-", fmt)
        if f.writes_to != "stream":
            raise FormatError(f"{f.name} cannot be written to a stream (it needs a seekable file): give a file path")
        f.write(table, dest, progress)
        return
    path = Path(dest)
    f = resolve_format(str(path), fmt)
    want_sidecar = sidecar and not f.inline_metadata and table.recipe is not None and not is_special(path)
    _check_free_space(table, path, f)
    targets = [path] + ([Path(str(path) + ".json")] if want_sidecar else [])
    with atomic_paths(*targets, force=force) as temps:
        if f.writes_to == "stream":
            with open(temps[0], "wb") as fp:
                f.write(table, fp, progress)
        else:
            f.write(table, temps[0], progress)
        if want_sidecar:
            temps[1].write_text(_sidecar_text(table), encoding="utf-8")
    if not want_sidecar and not f.inline_metadata:
        _drop_stale_sidecar(Path(str(path) + ".json"))


def _drop_stale_sidecar(sidecar: Path) -> None:
    # The data file was just replaced; a sidecar describing the old one would now lie.
    try:
        doc = json.loads(sidecar.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return
    if isinstance(doc, dict) and doc.get("schema") == SIDECAR_SCHEMA:
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
