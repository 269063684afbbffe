"""Text formats: CSV/TSV (header row, round-trip digits) and JSON (lossless, NaN as strings)."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import IO, Any

import numpy as np

from pecli.dtypes import DTYPES, round_to
from pecli.errors import FormatError
from pecli.formats._common import Format, WriteOptions, text_digits, text_start
from pecli.formats.arrays import READ_AS_FLOAT32, array_table, round_trips_float32
from pecli.formats.metadata import read_sidecar, table_metadata
from pecli.formats.percentg import block_text
from pecli.jsontext import NumberTooLarge, load_json
from pecli.resources import ensure_fits_in_memory
from pecli.table import Progress, Table


# -------------------------------------------------------------------------------- CSV / TSV
def _delimited_writer(sep: str) -> Callable[[Table, IO[bytes], WriteOptions, Progress | None], None]:
    def write(table: Table, fp: IO[bytes], options: WriteOptions, progress: Progress | None) -> None:
        d = table.shape[1]
        names = table.info.get("column names") or [f"d{j}" for j in range(d)]  # dims; a transposed table's positions
        fp.write((sep.join(names) + "\n").encode())
        digits = text_digits(table, options)
        shared = table.stream_workers(then=True) > 1  # blocks formatted on several threads at once
        text = functools.partial(block_text, digits=digits, sep=sep, shared=shared)
        for pieces in table.blocks(progress, then=text):  # each block's text made on a streaming thread
            for piece in pieces:  # write(), not writelines(): a file-like given may have only write()
                fp.write(piece)

    return write


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


#: Bytes of text parsed per step: bounds the reader's scratch whatever the file's size.
_PIECE_BYTES = 1 << 21
#: Where ``str.splitlines()`` ends a line besides ``\n`` and ``\r`` (UTF-8 bytes, for counting).
_ODD_BREAKS = (b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e", b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9")
_BREAK_CHARS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
#: The bytes of rows NumPy's parser reads exactly as Python's ``float()`` does: digits, signs,
#: exponents, nan and inf(inity) in any case, blanks, line ends (checked against ``float()``:
#: ``np.loadtxt`` accepts a subset of what it accepts, with the same bits; anything else goes to
#: ``float()`` itself, line by line).
_PLAIN = b"0123456789+-.eEnNaAiIfFtTyY \t\r\n"
#: float64 values per round-trip check (``round_trips_float32`` holds ~60 bytes per value).
_CHECK_VALUES = 1 << 20
#: Bytes per value the reader holds: the float64 values, and their float32 (or stored dtype) copy.
_BYTES_PER_VALUE = 12
#: The parser's scratch besides the values: a piece as bytes, str, lines and NumPy's row buffers,
#: and the float32 round-trip check of at most ``_CHECK_VALUES`` values.
_READ_SCRATCH = 16 * _PIECE_BYTES + 64 * _CHECK_VALUES


def _scan(fp: IO[bytes], path: Path, name: str) -> int:
    """Read the file once: refuse it if it is not UTF-8 (naming the byte, as decoding it whole
    would) and return its number of lines as ``str.splitlines()`` counts them (or one more)."""
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8")()
    fed = breaks = 0
    pending = False
    last = b""  # the previous read's last two bytes: a break split between two reads counts once
    while True:
        data = fp.read(_PIECE_BYTES)
        final = not data
        if pending or final or not data.isascii():
            held = len(decoder.getstate()[0])
            try:
                decoder.decode(data, final)
            except UnicodeDecodeError as exc:
                byte = fed - held + exc.start
                raise FormatError(f"{path} is not a text {name.upper()} file (byte {byte} is not UTF-8)") from exc
            pending = bool(decoder.getstate()[0])
            joined = last + data
            breaks += sum(joined.count(b) - last.count(b) for b in _ODD_BREAKS[5:])
        if final:
            return breaks + 1
        breaks += sum(data.count(b) for b in _ODD_BREAKS[:5])
        breaks += data.count(b"\n") + data.count(b"\r") - data.count(b"\r\n")
        if last.endswith(b"\r") and data.startswith(b"\n"):
            breaks -= 1
        fed += len(data)
        last = (last + data)[-2:]


def _pieces(fp: IO[bytes], sep: bytes) -> Any:
    """``(bytes, final)`` pieces of about ``_PIECE_BYTES``, cut after a line break, or within a
    longer line after a separator (a cut never splits a UTF-8 character or a ``\r\n``)."""
    buf = b""
    while True:
        data = fp.read(_PIECE_BYTES)
        if not data:
            yield buf, True
            return
        buf += data
        cut = buf.rfind(b"\n") + 1 or buf.rfind(b"\r", 0, len(buf) - 1) + 1 or buf.rfind(sep) + 1
        if cut:
            yield buf[:cut], False
            buf = buf[cut:]


class _Line:
    """A line being read across pieces (longer than a piece): its cells so far."""

    def __init__(self, number: int) -> None:
        self.number, self.cells = number, 0
        self.bad: str | None = None
        self.first: str | None = None
        self.seen = False  # anything but blanks (a TSV line of tabs is blank)
        self.values: list[np.ndarray] = []  # line 1's values, before the width is known


class _Reader:
    """The rows of a delimited text file, parsed piece by piece into one preallocated array.

    Line for line the rules (and errors) of reading the whole text and splitting it: line 1 is a
    header unless its first cell is a number; every row has the header's width; a blank line is
    an error unless only blank lines follow it; values are Python's ``float()`` of each cell.
    """

    def __init__(self, path: Path, sep: str, name: str, max_lines: int) -> None:
        self.path, self.sep, self.name, self.max_lines = path, sep, name, max_lines
        self.line = 1  # number of the next line to start
        self.width: int | None = None
        self.has_header = False
        self.out = np.empty((0, 0))
        self.row = 0  # rows stored
        self.checked = 0  # rows whose values were checked for float32 round trips
        self.narrow = True  # every value so far is a float32 written in text
        self.blank_at: int | None = None  # a blank line, an error if a row follows
        self.content = False  # any non-blank line
        self.open: _Line | None = None

    # -- pieces ----------------------------------------------------------------------------------
    def feed(self, piece: bytes, final: bool) -> None:
        rows_from = 0
        if self.width is None:  # the header line may hold anything: only rows go to NumPy's parser
            ends = [k for k in (piece.find(b"\n"), piece.find(b"\r")) if k >= 0]
            rows_from = min(ends) + 1 if ends else len(piece)
        plain = not piece[rows_from:].translate(None, _PLAIN + self.sep.encode())
        text = piece.decode("utf-8")  # valid: _scan checked the file, and cuts fall after ASCII bytes
        lines = text.splitlines()
        tail = None if final or not text or text[-1] in _BREAK_CHARS else lines.pop()
        i = 0
        if self.open is not None and (lines or tail is None):
            self._cells(lines[0] if lines else "", True)  # the open line ends here
            i = 1 if lines else 0
        while self.width is None and i < len(lines):
            self._whole(lines[i])
            i += 1
        if i < len(lines):
            if not (plain and self.blank_at is None and self._fast(lines, i)):
                for k in range(i, len(lines)):
                    self._whole(lines[k])
        if tail is not None:
            if self.open is None:
                self._open_line()
            self._cells(tail[: -len(self.sep)], False)
        self._check_narrow()

    def _fast(self, lines: list[str], i: int) -> bool:
        """Rows ``lines[i:]`` through NumPy's parser; False (nothing stored) if it cannot tell
        them apart from Python's rules (blank lines, other widths, other syntax)."""
        import warnings

        assert self.width is not None
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                block = np.loadtxt(
                    lines[i:] if i else lines, delimiter=self.sep, dtype=np.float64, comments=None, ndmin=2
                )
        except (ValueError, Warning):
            return False
        n = len(lines) - i
        if block.shape != (n, self.width):
            return False
        self._reserve(n)
        self.out[self.row : self.row + n] = block
        self.row += n
        self.line += n
        self.content = True
        return True

    # -- lines -----------------------------------------------------------------------------------
    def _whole(self, line: str) -> None:
        """A complete line (line by line, Python's rules)."""
        if self.width is not None and not line.strip():
            if self.blank_at is None:
                self.blank_at = self.line
            self.line += 1
            return
        self._open_line()
        self._cells(line, True)

    def _open_line(self) -> None:
        self.open = _Line(self.line)
        self.line += 1

    def _cells(self, text: str, last: bool) -> None:
        """More cells of the open line (``text`` split at the separator); ``last``: it ends here."""
        line = self.open
        assert line is not None
        cells = text.split(self.sep)
        if line.first is None:
            line.first = cells[0]
            if line.number == 1:
                self.has_header = not _is_number(cells[0].strip())
        if not line.seen and text.strip():
            line.seen = self.content = True
            if self.width is not None and self.blank_at is not None:
                raise FormatError(f"{self.path} line {self.blank_at} is blank: remove blank lines between rows")
        header = line.number == 1 and self.has_header
        if not header and line.bad is None:
            try:
                values = [float(c) for c in cells]
            except ValueError:
                line.bad = next(c for c in cells if not _is_number(c))
            else:
                if self.width is None:
                    line.values.append(np.array(values, dtype=np.float64))
                elif line.cells + len(cells) <= self.width:
                    if line.cells == 0:
                        self._reserve(1)
                    self.out[self.row, line.cells : line.cells + len(cells)] = values
        line.cells += len(cells)
        if last:
            self.open = None
            if not line.seen and self.width is not None:  # a blank line (line 1 is the header anyway)
                self.blank_at = line.number if self.blank_at is None else self.blank_at
                return
            self._end(line)

    def _end(self, line: _Line) -> None:
        if self.width is None:
            self.width = line.cells
            self._allocate()
            if not self.has_header and line.bad is None:
                self._reserve(1)
                self.out[0] = np.concatenate(line.values)
        if line.number == 1 and self.has_header:
            return
        if line.cells != self.width:
            raise FormatError(
                f"{self.path} line {line.number} has {line.cells} values, expected {self.width} like the header"
            )
        if line.bad is not None:
            raise FormatError(f"{self.path} line {line.number} has a non-numeric value {line.bad.strip()!r}")
        self.row += 1

    # -- memory ----------------------------------------------------------------------------------
    def _allocate(self) -> None:
        """The values array for every line the file may hold, refused if it cannot fit."""
        from pecli.resources import human_bytes

        assert self.width is not None
        rows = max(0, self.max_lines - (1 if self.has_header else 0))
        ensure_fits_in_memory(
            rows * self.width * _BYTES_PER_VALUE + _READ_SCRATCH,
            f"reading {self.path} (up to {rows} rows of {self.width} values, {human_bytes(self.path.stat().st_size)})",
            "free memory, or split the file into smaller tables",
        )
        self.out = np.empty((rows, self.width))  # pages are only taken as rows are written

    def _reserve(self, n: int) -> None:
        if self.row + n > self.out.shape[0]:  # the line count was a bound: cannot happen
            grown = np.empty((max(self.row + n, 2 * self.out.shape[0]), self.out.shape[1]))
            grown[: self.row] = self.out[: self.row]
            self.out = grown

    def _check_narrow(self) -> None:
        """Whether the rows so far are all float32 values (``round_trips_float32`` on bounded slices)."""
        if not self.narrow or self.row == self.checked:
            return
        flat = self.out[self.checked : self.row].reshape(-1)
        for a in range(0, flat.size, _CHECK_VALUES):
            if not round_trips_float32(flat[a : a + _CHECK_VALUES]):
                self.narrow = False
                break
        self.checked = self.row

    def finish(self) -> np.ndarray:
        if self.open is not None:
            self._cells("", True)  # the last line ends with the file (after a separator: one more cell)
        if not self.content:
            raise FormatError(f"{self.path} is empty: expected a header line d0{self.sep}d1… and rows of numbers")
        if self.row == 0:
            raise FormatError(f"{self.path} has a header but no rows of numbers")
        self._check_narrow()
        out = self.out
        if self.row < out.shape[0]:
            out.resize((self.row, out.shape[1]), refcheck=False)  # in place: no copy
        return out


def _delimited_reader(sep: str, name: str) -> Callable[[Path, str | None, ExitStack], Table]:
    def read(path: Path, key: str | None, stack: ExitStack) -> Table:
        if key is not None:
            raise FormatError(f"{path} is a {name.upper()} file with one table: drop ':{key}'")
        with open(path, "rb") as fp:
            lines = _scan(fp, path, name)
            fp.seek(0)
            reader = _Reader(path, sep, name, lines)
            for piece, final in _pieces(fp, sep.encode()):
                reader.feed(piece, final)
        arr = reader.finish()
        info: dict[str, Any] = {
            "format": name,
            "header": "yes" if reader.has_header else "no",
            "file_size": path.stat().st_size,
        }
        # What array_table does with text data, without its whole-array temporaries: the stored
        # dtype, else float32 when every number is a float32 value (checked piece by piece above).
        meta = read_sidecar(Path(str(path) + ".json"), tuple(arr.shape), info)
        dtype = meta.get("dtype")
        if isinstance(dtype, str) and dtype in DTYPES:
            arr = round_to(arr, dtype)
        elif reader.narrow:
            arr = arr.astype(np.float32)
            info["read as"] = READ_AS_FLOAT32
        return array_table(arr, str(path), info, meta)

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


#: Bytes per value reading JSON holds (measured ~40): the parsed float and its list slot, the
#: float of the converted row, the float64 array.
_JSON_BYTES_PER_VALUE = 48


def _read_json(path: Path, key: str | None, stack: ExitStack) -> Table:
    # The document is parsed whole: its text twice (bytes, str) and ~48 bytes per number.
    size = path.stat().st_size
    values = 1
    with open(path, "rb") as fp:
        for data in iter(lambda: fp.read(_PIECE_BYTES), b""):
            values += data.count(b",")
    ensure_fits_in_memory(
        2 * size + _JSON_BYTES_PER_VALUE * values,
        f"reading {path} (about {values} numbers)",
        "free memory, or convert the table to .npy or .h5 elsewhere, which are read in blocks",
    )
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
    if not isinstance(dtype, str) or dtype not in DTYPES:
        raise FormatError(f"{path} declares dtype {dtype!r}: expected {', '.join(DTYPES)}")
    rows = doc["data"]
    width = len(rows[0]) if rows and isinstance(rows[0], list) else -1
    parsed: list[list[float]] = []
    for k, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != width:
            raise FormatError(f"{path} row {k} is not a list of {width} numbers")
        try:
            parsed.append([_NONFINITE[v] if isinstance(v, str) else float(v) for v in row])
        except (KeyError, TypeError, ValueError, OverflowError):
            raise FormatError(f"{path} row {k} holds a value that is not a number") from None
    arr = round_to(np.array(parsed, dtype=np.float64).reshape(len(parsed), max(width, 0)), dtype)
    if "shape" in doc and list(arr.shape) != doc["shape"]:
        raise FormatError(f"{path} declares shape {doc['shape']} but holds {list(arr.shape)}")
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    return array_table(arr, str(path), {"format": "json", "file_size": path.stat().st_size}, meta)


def _digits(dtype: np.dtype[Any]) -> int:
    """Significant digits a value of ``dtype`` is written with (what round-trips it)."""
    precision = DTYPES.get(dtype.name)
    return precision.digits if precision is not None else 17


def _is_text(head: bytes) -> bool:
    return text_start(head) is not None


def _text_kind(head: bytes) -> str | None:
    """json, tsv or csv, as text's first bytes show it: JSON starts with ``[`` or ``{``, TSV has a
    tab in its first line."""
    text = text_start(head)
    if text is None:
        return None
    if text.lstrip()[:1] in ("[", "{"):
        return "json"
    return "tsv" if "\t" in text.partition("\n")[0] else "csv"


CSV = Format(
    name="csv",
    extensions=(".csv",),
    summary="header d0,d1,… then rows; text round-trips bit-exactly; recipe in FILE.json",
    writes_to="stream",
    write=_delimited_writer(","),
    read=_delimited_reader(",", "csv"),
    metadata="sidecar",
    bytes_per_value=lambda dt: 0.8 * _digits(dt),
    sniff=lambda head: _text_kind(head) == "csv",
    begins=_is_text,
    streamable=True,
    text=True,
)
TSV = Format(
    name="tsv",
    extensions=(".tsv", ".tab"),
    summary="like CSV, tab-separated",
    writes_to="stream",
    write=_delimited_writer("\t"),
    read=_delimited_reader("\t", "tsv"),
    metadata="sidecar",
    bytes_per_value=lambda dt: 0.8 * _digits(dt),
    sniff=lambda head: _text_kind(head) == "tsv",
    begins=_is_text,
    streamable=True,
    text=True,
)
JSON = Format(
    name="json",
    extensions=(".json",),
    summary='object with metadata, dtype, shape, data; NaN/±Inf as "NaN"/"Infinity" strings',
    writes_to="stream",
    write=_write_json,
    read=_read_json,
    metadata="inline",
    bytes_per_value=lambda dt: 0.8 * (_digits(dt) + 1),
    sniff=lambda head: _text_kind(head) == "json",
    begins=_is_text,
    streamable=True,
    text=True,
)
