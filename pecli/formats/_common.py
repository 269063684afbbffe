"""What every format shares: the metadata schema, the array → Table adapter, sidecars."""

from __future__ import annotations

import errno
import json
import math
import stat
import sys
import warnings
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

import numpy as np

from pecli.dtypes import COMPLEX, DTYPES, integers_as_float64, integers_note, is_bfloat16, is_integer_dtype, round_to
from pecli.errors import FormatError, PecliInputError, StaleMetadataWarning, TableTooLargeError
from pecli.jsontext import load_json
from pecli.kinds import read_recipe
from pecli.recipe import SCHEMA
from pecli.table import Progress, Table
from pecli.values import check_float_dtype, complex_as_pairs

SIDECAR_SCHEMA = "pecli-sidecar/1"
#: Name of the table inside multi-array files pecli writes (h5 dataset, npz entry, tensor name).
DEFAULT_KEY = "pe"
#: Metadata that says what was done to a table after it was built (``export --dtype``,
#: ``--resample``), kept through reads and writes with or without a recipe.
PROVENANCE_KEYS = ("converted_from", "resampled_from", "resampled_with")
#: The first bytes of a zip archive (an .npz; torch.save writes zips too).
ZIP_MAGIC = b"PK\x03\x04"
#: Entry/attribute holding the JSON metadata in formats that store it next to the data.
META_KEY = "pecli_recipe"


@dataclass(frozen=True)
class ArrayInfo:
    """One array inside a multi-array file, as ``inspect`` lists it."""

    key: str
    shape: tuple[int, ...]
    dtype: str


@dataclass(frozen=True)
class WriteOptions:
    key: str = DEFAULT_KEY
    #: HDF5 only: None, or ("gzip", level).
    compress: tuple[str, int] | None = None
    #: Text formats: significant digits; None means enough to round-trip exactly.
    digits: int | None = None


Writer = Callable[[Table, Any, WriteOptions, Progress | None], None]
Reader = Callable[[Path, str | None, ExitStack], Table]
Lister = Callable[[Path], list[ArrayInfo]]


#: A test of a file's first bytes (at least its first 64 kB, fewer when the file is shorter).
Sniffer = Callable[[bytes], bool]


@dataclass(frozen=True)
class Format:
    """A file format: every fact pecli knows of it, on one entry of the registry
    (:data:`pecli.formats.FORMATS`, which finds the entries of other packages too)."""

    name: str
    extensions: tuple[str, ...]
    summary: str
    #: "stream": writes to any binary stream (stdout too); "path": needs a seekable file.
    writes_to: Literal["stream", "path"]
    #: None for read-only formats (GGUF).
    write: Writer | None
    #: None for write-only formats (C header).
    read: Reader | None
    #: Where the recipe goes: in the file, in a FILE.json sidecar, or nowhere.
    metadata: Literal["inline", "sidecar", "none"]
    #: Rough lower bound of bytes per value on disk, for the free-space check.
    bytes_per_value: Callable[[np.dtype[Any]], float]
    #: Lists the arrays of multi-array formats (h5, npz, safetensors, pt).
    list_keys: Lister | None = None
    #: A library this format needs beyond pecli's own dependencies.
    requires: str | None = None
    aliases: tuple[str, ...] = field(default_factory=tuple)
    #: Whether its first bytes say it is this format and no other (how an unnamed stream is told).
    sniff: Sniffer | None = None
    #: Whether bytes could begin a file of this format (``--from NAME`` on a stream is refused at
    #: once when they cannot); the same test as ``sniff`` unless given.
    begins: Sniffer | None = None
    #: Its reader needs the bytes in order only, so a stream is read through a temporary copy;
    #: False: it seeks (HDF5, torch's zip), so a stream is refused.
    streamable: bool = False
    #: What its messages call it (its name otherwise): "HDF5", "PyTorch .pt".
    title: str | None = None
    #: Whether ``--compress`` applies to it.
    compresses: bool = False
    #: A text format: UTF-8 numbers, written with ``--digits`` significant digits.
    text: bool = False
    #: The complex dtypes it stores (``--dtype complex64``: Meta's ``freqs_cis``); a complex
    #: table is refused by the others, which are told its (real, imaginary) parts instead.
    complex_dtypes: tuple[str, ...] = ()

    def could_begin(self, head: bytes) -> bool:
        """Whether ``head`` could begin this format: a format with no test of its bytes takes any."""
        test = self.begins or self.sniff
        return test is None or test(head)

    @property
    def called(self) -> str:
        return self.title or self.name


def text_start(head: bytes) -> str | None:
    """``head`` as text, or None when it is not UTF-8 text (a control byte, an invalid sequence)."""
    import codecs

    try:
        text = codecs.getincrementaldecoder("utf-8")().decode(head, final=False)  # a cut character is fine
    except UnicodeDecodeError:
        return None
    if any(c < " " and c not in "\t\r\n" for c in text):
        return None
    return text


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


def table_metadata(table: Table) -> dict[str, Any]:
    """The one metadata schema: the recipe's parameters plus provenance notes (flat JSON scalars)."""
    if table.recipe is None and not table.provenance:
        return {}
    from pecli._version import __version__

    meta = table.recipe.to_metadata() if table.recipe is not None else {"schema": SCHEMA, "pecli_version": __version__}
    meta.update(table.provenance)
    meta["fingerprint"] = fingerprint(table)
    return meta


#: Rows a fingerprint hashes: this many windows of this many rows, spread through the table.
FINGERPRINT_WINDOWS, FINGERPRINT_ROWS = 8, 8


def fingerprint(table: Table) -> str:
    """What ties stored metadata to its data: the data's shape, dtype and bytes, and a hash of 64
    rows spread through it (head, tail and between; not every byte, so that writing and reading
    stay at disk speed).  Data rewritten by other code (``np.save`` over a pecli file) no longer
    matches, and its stored recipe is ignored."""
    import hashlib

    from pecli.table import spread_windows

    n, d = table.shape
    # bfloat16 read as float32 hashes as bfloat16; complex numbers as their parts (the recipe's dtype)
    name = table.storage if table.storage in DTYPES else table.dtype.name
    h = hashlib.blake2b(f"{n}x{d}:{name}".encode(), digest_size=12)
    step = table.block_rows()  # windows of wide rows (an ALiBi bias: 64 heads × 2M keys) a block at a time
    for a, b in spread_windows(n, FINGERPRINT_WINDOWS, FINGERPRINT_ROWS):
        for r in range(a, b, step):
            rows = np.ascontiguousarray(table.rows(r, min(b, r + step)))
            if name == "bfloat16":
                rows = (rows.view(np.uint32) >> 16).astype("<u2") if rows.dtype == np.float32 else rows.view("<u2")
            h.update(rows.astype(rows.dtype.newbyteorder("<"), copy=False).tobytes())
    itemsize = DTYPES[name].itemsize if name in DTYPES else table.dtype.itemsize
    return f"{n * d * itemsize}:{h.hexdigest()}"


def decode_metadata(text: Any, key: str | None = None) -> dict[str, Any]:
    """Parse stored JSON metadata; anything unreadable counts as none (never an error).

    ``key``: in a multi-array file the metadata names the array it describes; for any other
    array it is none.
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    try:
        meta = load_json(text)
    except (TypeError, ValueError):
        return {}
    if not isinstance(meta, dict) or (key is not None and meta.get("key", key) != key):
        return {}
    return meta


def first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def unreadable(path: object, what: str, exc: BaseException) -> PecliInputError:
    """The error for a file a reader failed on: "PATH is not a readable WHAT (why)", except where
    the machine, not the file, is the cause: memory the process may not have (an address-space
    limit refusing the map, an allocation NumPy cannot make) is said to be that."""
    if isinstance(exc, MemoryError) or getattr(exc, "errno", None) == errno.ENOMEM:
        return TableTooLargeError(
            f"reading {path} needs more memory than this process may use ({first_line(exc)}): "
            "raise the limit (ulimit -v, the container's memory) or read a smaller file"
        )
    return FormatError(f"{path} is not a readable {what} ({first_line(exc)})")


def byte_order(dtype: np.dtype[Any]) -> str:
    order = dtype.byteorder
    if order == "|":
        return "not applicable"
    if order == "=":
        order = "<" if sys.byteorder == "little" else ">"
    return "little-endian" if order == "<" else "big-endian"


class Rows:
    """A 2-D ``(rows, width)`` view of an array-like of any other shape, read a row range at a time.

    Leading length-1 axes are dropped (``(1, N, D)`` → ``(N, D)``); a vector is one row (a RoPE
    ``inv_freq``, ALiBi slopes: ``(n,)`` → ``(1, n)``); the leading axes of an N-D array are the
    rows in C order, as the frameworks flatten a grid (``(X, Y, C)`` → ``(X·Y, C)``).  Only the
    outer slices that hold the rows asked for are read (h5py datasets stay lazy).
    """

    def __init__(self, data: Any, shape: tuple[int, ...]) -> None:
        self.data, self.dtype = data, data.dtype
        self.lead = 0
        while len(shape) - self.lead > 1 and shape[self.lead] == 1:
            self.lead += 1
        self.inner = shape[self.lead :]
        self.width = int(self.inner[-1]) if self.inner else 1
        self.per_outer = math.prod(self.inner[1:-1]) if len(self.inner) > 2 else 1
        rows = 1 if len(self.inner) == 1 else math.prod(self.inner[:-1])
        self.shape = (int(rows), self.width)

    def __getitem__(self, key: slice) -> Any:
        a, b, _ = key.indices(self.shape[0])
        head = (0,) * self.lead
        if len(self.inner) <= 2:
            if len(self.inner) == 1:
                return np.asarray(self.data[head]).reshape(1, -1)[a:b]
            return self.data[(*head, slice(a, b))]
        per = self.per_outer
        o0, o1 = a // per, -(-b // per) if b > a else a // per
        block = np.asarray(self.data[(*head, slice(o0, o1))]).reshape(-1, self.width)
        return block[a - o0 * per : b - o0 * per]


class Bfloat16Rows:
    """bfloat16 values stored as 2-byte words (safetensors' BF16, a ``|V2`` .npy as
    ``jax.numpy.save`` writes it, a bfloat16 array), served as float32: exact, a bfloat16 is the
    top half of a float32.  pecli computes and compares in float32/float64, so reading bfloat16
    as float32 loses nothing; the table remembers its storage (:attr:`Table.storage`) and writes
    it back as bfloat16."""

    def __init__(self, raw: Any) -> None:
        self.raw, self.shape, self.dtype = raw, raw.shape, np.dtype(np.float32)

    def __getitem__(self, key: Any) -> Any:
        return (np.asarray(self.raw[key]).view("<u2").astype(np.uint32) << 16).view(np.float32)


class ComplexRows:
    """Complex numbers (complex64, complex128) served as their (real, imaginary) parts in column
    pairs, ``[re0, im0, re1, im1, …]``: the same bytes as floats, exact.  The table remembers its
    storage (:attr:`Table.storage`) and writes it back as complex numbers."""

    def __init__(self, raw: Any) -> None:
        if len(raw.shape) == 1:  # a vector of numbers is one row
            raw = raw.reshape(1, -1) if isinstance(raw, np.ndarray) else np.asarray(raw).reshape(1, -1)
        self.raw, self.dtype = raw, np.dtype(COMPLEX[np.dtype(raw.dtype).name])
        self.shape = (*raw.shape[:-1], 2 * raw.shape[-1])

    def __getitem__(self, key: Any) -> Any:
        return complex_as_pairs(np.asarray(self.raw[key]))


class IntegerRows:
    """Integers (position ids: ``get_rope_index``'s int64, Flux's ids saved as integers) served as
    float64, exactly; a 64-bit value beyond 2⁵³ is refused when its rows are read
    (:func:`~pecli.dtypes.integers_as_float64`)."""

    def __init__(self, raw: Any, source: str) -> None:
        self.raw, self.shape, self.dtype, self.source = raw, raw.shape, np.dtype(np.float64), source

    def __getitem__(self, key: Any) -> Any:
        return integers_as_float64(np.asarray(self.raw[key]), self.source)


def is_bfloat16_storage(dtype: np.dtype[Any]) -> bool:
    """Whether an array of ``dtype`` holds bfloat16 values: ml_dtypes' bfloat16, or a 2-byte
    void (``|V2``), which is how NumPy saves bfloat16 without ml_dtypes' help (JAX's
    ``jax.numpy.load`` reads it back as bfloat16 too)."""
    return is_bfloat16(dtype) or (dtype.kind == "V" and dtype.itemsize == 2 and dtype.fields is None)


def array_table(
    data: Any,
    source: str,
    info: dict[str, Any],
    metadata: dict[str, Any] | None = None,
    sidecar_of: Path | None = None,
    text_data: bool = False,
    storage: str | None = None,
) -> Table:
    """Wrap a readable array as a Table: check it is a 2-D float table, attach its recipe.

    ``text_data``: the values were parsed from text into float64; the stored metadata's dtype is
    restored (exact, because the text holds enough digits to round-trip).  ``storage``: the
    dtype the values are stored in when the reader serves them in another (``bfloat16`` served
    as float32); bfloat16 arrays (and ``|V2`` ones) are served that way here.
    """
    meta = dict(metadata or {})
    if is_bfloat16_storage(np.dtype(data.dtype)):
        data, storage = Bfloat16Rows(data), "bfloat16"
    elif np.dtype(data.dtype).name in COMPLEX:
        if not data.shape:
            raise FormatError(
                f"{source} holds a single number: expected a table (positions × dims), a vector or a grid"
            )
        info.setdefault("byte order", byte_order(np.dtype(data.dtype)))  # the file's, not the parts' served
        data, storage = ComplexRows(data), np.dtype(data.dtype).name
    elif is_integer_dtype(data.dtype):
        info.setdefault("byte order", byte_order(np.dtype(data.dtype)))  # the file's, not the float64 served
        info.setdefault("stored dtype", np.dtype(data.dtype).name)
        info.setdefault("note", integers_note(data.dtype))
        data = IntegerRows(data, source)
    if not meta and sidecar_of is not None:
        meta = read_sidecar(Path(str(sidecar_of) + ".json"), tuple(data.shape), info)
    if text_data and isinstance(meta.get("dtype"), str) and meta["dtype"] in DTYPES:
        data = round_to(data, meta["dtype"])
        if meta["dtype"] == "bfloat16":
            data, storage = Bfloat16Rows(data), "bfloat16"
    elif text_data and data.dtype == np.float64 and round_trips_float32(data):
        # Text says nothing of its dtype: numbers that are all float32 values were float32.
        data = data.astype(np.float32)
        info["read as"] = READ_AS_FLOAT32
    dtype = np.dtype(data.dtype)
    check_float_dtype(dtype, source)
    shape = tuple(int(s) for s in data.shape)
    if not shape:
        raise FormatError(f"{source} holds a single number: expected a table (positions × dims), a vector or a grid")
    if len(shape) != 2:
        view = Rows(data, shape)
        if view.shape[0] == 1 and len(view.inner) == 1 and len(shape) == 1:
            info["reshaped"] = f"{shape} → {view.shape} (a vector is one row)"
        else:
            info["reshaped"] = f"{shape} → {view.shape}" + ("" if len(view.inner) <= 2 else " (leading axes as rows)")
        data = view
    info.setdefault("byte order", byte_order(dtype))
    if storage in COMPLEX:
        info.setdefault("stored dtype", f"{storage}, {data.shape[-1] // 2} numbers a row")
        info.setdefault("note", f"{storage} numbers are shown as {COMPLEX[storage]} (real, imaginary) column pairs")
    elif storage is not None:
        info.setdefault("stored dtype", storage)
        info.setdefault("note", f"{storage} values are shown as float32 (exactly)")
    recipe, problem = read_recipe(meta) if meta else (None, None)
    if problem is not None:
        info["recipe"] = f"stored, not rebuilt by this pecli ({problem}): ignored"
    if recipe is not None and (recipe.shape != tuple(data.shape) or recipe.dtype not in (dtype.name, storage)):
        info["note"] = f"stored recipe {recipe.shape} {recipe.dtype} does not match the data; ignored"
        recipe = None
    provenance = {k: v for k, v in meta.items() if k in PROVENANCE_KEYS}
    table = Table(data, recipe, source, info, provenance, storage)
    stored = meta.get("fingerprint")
    if recipe is not None and stored is None:
        # Metadata without a fingerprint (written by hand, or by other code) is not taken on its
        # word: the recipe's own rows must hash as the data's do.
        stored = fingerprint(Table.from_recipe(recipe))
    if recipe is not None and stored != fingerprint(table):
        # The data was rewritten after pecli wrote it: the recipe would label other numbers.
        where = info.get("metadata", "the stored metadata")
        why = "its fingerprint does not match" if "fingerprint" in meta else "its recipe does not rebuild it"
        info["note"] = f"{where} was written for other data ({why}): recipe ignored"
        warnings.warn(f"{source}: {info['note']}", StaleMetadataWarning, stacklevel=2)
        table = Table(data, None, source, info, provenance, storage)
    return table


#: What ``inspect`` says of text data read as float32 without a stored dtype.
READ_AS_FLOAT32 = "float32: every number round-trips through float32 (no stored dtype says otherwise)"


def round_trips_float32(values: np.ndarray) -> bool:
    """Whether every number is a float32 value written in text: within the rounding of 9
    significant digits (what round-trips float32) of the float32 nearest to it.  float64 data
    written with 17 digits essentially never is."""
    if not values.size:
        return False
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        narrow = values.astype(np.float32).astype(np.float64)
        finite = np.isfinite(values)
        if not np.array_equal(np.isfinite(narrow), finite) or np.any(np.isnan(values) != np.isnan(narrow)):
            return False
        x, f = values[finite], narrow[finite]
        digit = np.where(f != 0, 10.0 ** (np.floor(np.log10(np.abs(f), where=f != 0, out=np.zeros_like(f))) - 8), 0.0)
        # One unit of the 9th significant digit: the rounding of %.9g, with room at decade edges.
        return bool(np.all(np.abs(x - f) <= digit))


#: A sidecar is a few hundred bytes (a LongRoPE recipe a few kB): anything larger is not ours.
MAX_SIDECAR_BYTES = 64 << 10


def read_sidecar(sidecar: Path, shape: tuple[int, ...], info: dict[str, Any]) -> dict[str, Any]:
    try:
        st = sidecar.stat()
    except OSError:
        return {}
    if not stat.S_ISREG(st.st_mode):
        return {}  # a FIFO or a device in the sidecar slot would block or never end: not ours
    if st.st_size > MAX_SIDECAR_BYTES:
        info["note"] = f"{sidecar.name} is {st.st_size} bytes, too large for a pecli sidecar; ignored"
        return {}
    try:
        with open(sidecar, "rb") as fp:
            doc = load_json(fp.read(MAX_SIDECAR_BYTES + 1).decode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        info["note"] = f"sidecar {sidecar.name} is not valid JSON; ignored"
        return {}
    if not isinstance(doc, dict) or doc.get("schema") != SIDECAR_SCHEMA or not isinstance(doc.get("recipe"), dict):
        return {}
    if not isinstance(doc.get("shape"), list) or tuple(doc["shape"]) != shape:
        info["note"] = f"sidecar {sidecar.name} describes shape {doc.get('shape')}, not {shape}; ignored"
        return {}
    info["metadata"] = f"sidecar {sidecar.name}"
    recipe: dict[str, Any] = doc["recipe"]
    return recipe


def is_pecli_sidecar(path: Path) -> bool:
    """Whether ``path`` holds a pecli sidecar (a regular file, bounded, with the sidecar schema)."""
    return _sidecar_state(path) == "pecli"


def is_foreign_file(path: Path) -> bool:
    """Whether ``path`` holds something other than a pecli sidecar: a file pecli must not replace.

    A file that vanishes while being looked at is absent, not foreign: another pecli writing the
    same ``-o`` removed its old sidecar a moment ago (``pecli.atomic``), which is no reason to refuse.
    """
    return _sidecar_state(path) == "other"


def _sidecar_state(path: Path) -> str:
    """``"absent"``, ``"pecli"`` (a pecli sidecar) or ``"other"`` (anything else at ``path``)."""
    try:
        st = path.stat()
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_SIDECAR_BYTES:
            return "other"
        doc = load_json(path.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        return "absent"
    except (OSError, ValueError, UnicodeDecodeError):
        return "other"
    return "pecli" if isinstance(doc, dict) and doc.get("schema") == SIDECAR_SCHEMA else "other"


def sidecar_text(table: Table) -> str:
    doc = {
        "schema": SIDECAR_SCHEMA,
        "shape": list(table.shape),
        "dtype": table.dtype.name,
        "recipe": table_metadata(table),
    }
    return json.dumps(doc, indent=2) + "\n"


def text_digits(table: Table, options: WriteOptions) -> int:
    if options.digits is not None:
        return options.digits
    precision = DTYPES.get(table.dtype.name)
    return precision.digits if precision is not None else 17


def write_all(fp: IO[bytes], chunks: Any) -> None:
    for chunk in chunks:
        fp.write(chunk)
