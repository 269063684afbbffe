"""Text formats: CSV/TSV (header row, round-trip digits) and JSON (lossless, NaN as strings)."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import ExitStack
from functools import lru_cache
from pathlib import Path
from typing import IO, Any

import numpy as np

from pecli.errors import FormatError
from pecli.formats._common import (
    Format,
    NumberTooLarge,
    WriteOptions,
    array_table,
    load_json,
    table_metadata,
    text_digits,
)
from pecli.resources import ensure_fits_in_memory
from pecli.table import Progress, Table


# -------------------------------------------------------------------------------- CSV / TSV
def _delimited_writer(sep: str) -> Callable[[Table, IO[bytes], WriteOptions, Progress | None], None]:
    def write(table: Table, fp: IO[bytes], options: WriteOptions, progress: Progress | None) -> None:
        d = table.shape[1]
        fp.write((sep.join(f"d{j}" for j in range(d)) + "\n").encode())
        digits = text_digits(table, options)
        step = max(1, _CELLS_PER_CALL // max(1, d))
        for block in table.blocks(progress):
            for a in range(0, len(block), step):
                fp.write(format_rows(block[a : a + step], digits, sep))

    return write


#: Values per ``format_rows`` call, so that its arrays stay in the CPU cache.
_CELLS_PER_CALL = 1 << 14
#: The vectorized path handles up to 9 significant digits (float16's 5, float32's 9): its
#: fixed-point integers then stay below 2⁵³, exact in float64.  More use Python's ``%``.
_FAST_DIGITS = 9
#: Above this share of values needing Python's ``%`` (exponent notation, |v| ≥ 10, NaN, a
#: possible rounding tie), a whole call is formatted by Python: same bytes, old speed.
_SLOW_SHARE = 0.05


@lru_cache(maxsize=1)
def _tables() -> tuple[np.ndarray, np.ndarray]:
    """Correctly rounded powers of ten 10⁻³⁴⁰…10³⁴⁰, and ``uint32`` words of four ASCII digits for
    0…9999 followed by the same words with trailing zeros as NUL.  Built on first use."""
    pow10 = np.array([float(f"1e{k}") for k in range(-340, 341)])
    k = np.arange(10000)
    text = (np.stack([k // 1000, k // 100 % 10, k // 10 % 10, k % 10], axis=1) + ord("0")).astype(np.uint8)
    stripped = text.copy()
    for j in range(4):  # a zero digit with only zeros after it is dropped
        stripped[(text[:, j:] == ord("0")).all(axis=1), j] = 0
    return pow10, np.ascontiguousarray(np.concatenate([text, stripped])).view(np.uint32).reshape(-1)


def format_rows(block: np.ndarray, digits: int, sep: str = ",") -> bytes:
    """Rows of ``block`` as delimited text: each value exactly ``'%.{digits}g' % value`` (Python's
    bytes), ``sep`` between values, a newline after each row.

    Vectorized for fixed notation with ``|v| < 10`` (every sinusoid value): the value rounded to
    P significant digits is ``M = rint(|v|·10^(P−1−e))``, computed in float64 within
    ``2⁻⁵²·10^P`` of the exact scaled value, so it is the correctly rounded one unless the
    scaled fraction lies that close to ½.  ``M·10^(13+e−P)`` is then the value in fixed point
    with 12 decimals (an integer below 10¹³ < 2⁵³: exact), split into a units digit and three
    groups of four decimals written through a table of ASCII words (trailing zeros as NUL).  Each value
    gets a slot ``[separator before][sign][units][.][12 fraction digits]``; unused bytes stay
    NUL and are squeezed out at the end.  Possible ties, exponent notation, ``|v| ≥ 10`` and
    NaN/±inf are formatted by Python's ``%`` into their slot.
    """
    cols = block.shape[1]
    fmt = f"%.{digits}g"
    if digits > _FAST_DIGITS or block.size == 0:
        return _python_rows(block, fmt, sep)
    p = digits
    v = block.reshape(-1)
    pow10, digits4 = _tables()
    with np.errstate(all="ignore"):
        a = np.abs(v, dtype=np.float64)
        e = np.floor(np.log10(a, dtype=np.float32 if v.dtype.itemsize <= 4 else np.float64)).astype(np.intp)
        np.clip(e, -5, 1, out=e)  # outside [-4, 0] the value goes to Python anyway
        y = a * pow10[340 + p - 1 - e]
        # log10 (float32 or not) may be one off next to a power of ten: 10^(P−1) ≤ y < 10^P.
        off = (y < pow10[339 + p]) | (y >= pow10[340 + p])
        if off.any():
            e[off] += np.where(y[off] < pow10[339 + p], -1, 1)
            y[off] = a[off] * pow10[340 + p - 1 - e[off]]
        m = np.rint(y)
        tie = np.abs(np.subtract(y, m, out=y), out=y) > 0.5 - 2.0**-50 * 10.0**p  # 4x the error bound
        carry = m >= pow10[340 + p]  # 9.99…95 rounds up to 10^P
        if carry.any():
            m[carry] = pow10[339 + p]
            e[carry] += 1
        zero = a == 0
        python = ~zero & (tie | (e < -4) | (e > 0) | ~np.isfinite(a))
    slow = np.flatnonzero(python)
    if len(slow) > _SLOW_SHARE * v.size:
        return _python_rows(block, fmt, sep)
    texts = [(fmt % float(v[k])).encode() for k in slow]
    if any(len(t) > 15 for t in texts):  # e.g. a three-digit exponent: no room in the slot
        return _python_rows(block, fmt, sep)
    m[python | zero] = 0
    e[python | zero] = -4
    # Fixed point with 12 decimals: P significant digits starting at 10^e, e ≥ −4, P ≤ 9.
    fixed = m * pow10[340 + 12 - p + 1 + e]
    units = np.floor(fixed / 1e12)
    frac = fixed - units * 1e12
    g0 = np.floor(frac / 1e8)
    frac -= g0 * 1e8
    g1 = np.floor(frac / 1e4)
    g2 = frac - g1 * 1e4
    grid = np.zeros((v.size, 4), dtype=np.uint32)
    slot = grid.view(np.uint8)
    slot[1:, 0] = ord(sep)
    slot[cols::cols, 0] = ord("\n")
    slot[:, 1] = np.signbit(v) * np.uint8(ord("-"))
    slot[:, 2] = units.astype(np.uint8) + np.uint8(ord("0"))
    slot[:, 3] = (fixed != units * 1e12) * np.uint8(ord("."))
    # Group k is written without its trailing zeros when every later group is zero.
    tail2, tail1 = g2 == 0, (g1 == 0) & (g2 == 0)
    grid[:, 3] = digits4[(g2 + 10000).astype(np.intp)]
    grid[:, 2] = digits4[(g1 + tail2 * 10000.0).astype(np.intp)]
    grid[:, 1] = digits4[(g0 + tail1 * 10000.0).astype(np.intp)]
    for k, text in zip(slow, texts, strict=True):
        slot[k, 1:] = 0
        slot[k, 1 : 1 + len(text)] = np.frombuffer(text, dtype=np.uint8)
    return grid.tobytes().translate(None, b"\0") + b"\n"


def _python_rows(block: np.ndarray, fmt: str, sep: str) -> bytes:
    row_fmt = sep.join([fmt] * block.shape[1]) + "\n"
    return "".join([row_fmt % tuple(row) for row in block.tolist()]).encode()


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
    except NumberTooLarge as exc:
        raise FormatError(f"{path}: {exc}") from exc
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
