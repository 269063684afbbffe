"""A reader's array as a :class:`~pecli.table.Table`: any shape to (positions × dims) rows, bfloat16,
complex and integer storage served as floats (exactly), text data's dtype, and the stored recipe
attached where its fingerprint says it describes this data."""

from __future__ import annotations

import math
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from pecli.dtypes import COMPLEX, DTYPES, integers_as_float64, integers_note, is_bfloat16, is_integer_dtype, round_to
from pecli.errors import FormatError, StaleMetadataWarning
from pecli.formats.metadata import PROVENANCE_KEYS, fingerprint, read_sidecar
from pecli.kinds import read_recipe
from pecli.table import Table
from pecli.values import check_float_dtype, complex_as_pairs


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
