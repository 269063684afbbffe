"""Text formats: CSV/TSV (header row, round-trip digits) and JSON (lossless, NaN as strings)."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import IO, Any

import numpy as np

from pecli.errors import FormatError
from pecli.formats._common import Format, WriteOptions, array_table, load_json, table_metadata, text_digits
from pecli.resources import ensure_fits_in_memory
from pecli.table import Progress, Table


# -------------------------------------------------------------------------------- CSV / TSV
def _delimited_writer(sep: str) -> Callable[[Table, IO[bytes], WriteOptions, Progress | None], None]:
    def write(table: Table, fp: IO[bytes], options: WriteOptions, progress: Progress | None) -> None:
        d = table.shape[1]
        fp.write((sep.join(f"d{j}" for j in range(d)) + "\n").encode())
        row_fmt = sep.join([f"%.{text_digits(table, options)}g"] * d) + "\n"
        for block in table.blocks(progress):
            fp.write("".join([row_fmt % tuple(row) for row in block.tolist()]).encode())

    return write


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _delimited_reader(sep: str, name: str) -> Callable[[Path, str | None, ExitStack], Table]:
    def read(path: Path, key: str | None, stack: ExitStack) -> Table:
        if key is not None:
            raise FormatError(f"{path} is a {name.upper()} file with one table: drop ':{key}'")
        ensure_fits_in_memory(path.stat().st_size, f"reading {path}")
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise FormatError(f"{path} is not a text {name.upper()} file (byte {exc.start} is not UTF-8)") from exc
        lines = text.splitlines()
        if not lines or not text.strip():
            raise FormatError(f"{path} is empty: expected a header line d0{sep}d1… and rows of numbers")
        header = lines[0].split(sep)
        has_header = not _is_number(header[0].strip())
        start = 1 if has_header else 0
        body = lines[start:]
        while body and not body[-1].strip():
            body.pop()  # trailing blank lines at the end of a file are harmless
        if not body:
            raise FormatError(f"{path} has a header but no rows of numbers")
        width = len(header) if has_header else len(body[0].split(sep))
        values: list[list[float]] = []
        for k, line in enumerate(body, start=start + 1):
            if not line.strip():
                raise FormatError(f"{path} line {k} is blank: remove blank lines between rows")
            cells = line.split(sep)
            if len(cells) != width:
                raise FormatError(f"{path} line {k} has {len(cells)} values, expected {width} like the header")
            try:
                values.append([float(c) for c in cells])
            except ValueError:
                bad = next(c for c in cells if not _is_number(c))
                raise FormatError(f"{path} line {k} has a non-numeric value {bad.strip()!r}") from None
        arr = np.array(values, dtype=np.float64)
        info: dict[str, Any] = {
            "format": name,
            "header": "yes" if has_header else "no",
            "file size": path.stat().st_size,
        }
        table = array_table(arr, str(path), info, sidecar_of=path, text_data=True)
        return table

    return read


# ------------------------------------------------------------------------------------- JSON
#: JSON has no NaN or Infinity; these strings (protobuf's JSON mapping) keep them lossless.
_NONFINITE = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


def json_value(x: Any) -> Any:
    """Shortest text that round-trips in the value's own dtype; NaN/±Inf as strings."""
    if not np.isfinite(x):
        return "NaN" if np.isnan(x) else ("Infinity" if x > 0 else "-Infinity")
    return float(str(x)) if isinstance(x, np.floating) else float(x)


def _json_cell(v: Any, digits: int) -> str:
    return json.dumps(json_value(v)) if not np.isfinite(v) else f"{float(v):.{digits}g}"


def _write_json(table: Table, fp: IO[bytes], options: WriteOptions, progress: Progress | None) -> None:
    head = {
        "format": "pecli/1",
        "metadata": table_metadata(table),
        "key": options.key,
        "dtype": table.dtype.name,
        "shape": list(table.shape),
    }
    fp.write((json.dumps(head)[:-1] + ', "data": [\n').encode())
    digits = text_digits(table, options)
    row_fmt = "[" + ", ".join([f"%.{digits}g"] * table.shape[1]) + "]"
    first = True
    for block in table.blocks(progress):
        if np.isfinite(block).all():
            rows = [row_fmt % tuple(row) for row in block.tolist()]
        else:  # NaN/±Inf become strings, which %g cannot write
            rows = ["[" + ", ".join(_json_cell(v, digits) for v in row) + "]" for row in block]
        if rows:
            fp.write((("" if first else ",\n") + ",\n".join(rows)).encode())
            first = False
    fp.write(b"\n]}\n")


def _read_json(path: Path, key: str | None, stack: ExitStack) -> Table:
    ensure_fits_in_memory(path.stat().st_size * 4, f"reading {path}")
    try:
        doc = load_json(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise FormatError(f"{path} is not UTF-8 JSON (byte {exc.start})") from exc
    except ValueError as exc:
        raise FormatError(f"{path} is not valid JSON ({exc})") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("data"), list):
        raise FormatError(f'{path} is JSON but not a pecli table: expected an object with a "data" list of rows')
    if key is not None and key != doc.get("key"):
        raise FormatError(f"{path} holds one table named {doc.get('key')!r}, not {key!r}")
    dtype = doc.get("dtype", "float64")
    if dtype not in ("float16", "float32", "float64"):
        raise FormatError(f"{path} declares dtype {dtype!r}: expected float16, float32 or float64")
    rows = doc["data"]
    width = len(rows[0]) if rows and isinstance(rows[0], list) else -1
    values = []
    for k, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != width:
            raise FormatError(f"{path} row {k} is not a list of {width} numbers")
        try:
            values.append([_NONFINITE[v] if isinstance(v, str) else float(v) for v in row])
        except (KeyError, TypeError, ValueError, OverflowError):
            raise FormatError(f"{path} row {k} holds a value that is not a number") from None
    arr = np.array(values, dtype=np.float64).reshape(len(values), max(width, 0)).astype(dtype)
    if "shape" in doc and list(arr.shape) != doc["shape"]:
        raise FormatError(f"{path} declares shape {doc['shape']} but holds {list(arr.shape)}")
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    return array_table(arr, str(path), {"format": "json", "file size": path.stat().st_size}, meta)


CSV = Format(
    "csv",
    (".csv",),
    "header d0,d1,… then rows; text round-trips bit-exactly; recipe in FILE.json",
    "stream",
    _delimited_writer(","),
    _delimited_reader(",", "csv"),
    "sidecar",
    lambda dt: 0.8 * {"float16": 5, "float32": 9}.get(dt.name, 17),
)
TSV = Format(
    "tsv",
    (".tsv", ".tab"),
    "like CSV, tab-separated",
    "stream",
    _delimited_writer("\t"),
    _delimited_reader("\t", "tsv"),
    "sidecar",
    lambda dt: 0.8 * {"float16": 5, "float32": 9}.get(dt.name, 17),
)
JSON = Format(
    "json",
    (".json",),
    'object with metadata, dtype, shape, data; NaN/±Inf as "NaN"/"Infinity" strings',
    "stream",
    _write_json,
    _read_json,
    "inline",
    lambda dt: 0.8 * {"float16": 6, "float32": 10}.get(dt.name, 18),
)
