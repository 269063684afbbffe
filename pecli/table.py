"""A table is anything that can hand out row ranges: a recipe, or an array read from a file."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from pecli.dtypes import (
    COMPLEX,
    is_float,
    numpy_dtype,
    precision_of,
    round_to,
)
from pecli.errors import FormatError, PecliInputError
from pecli.kernels.exact import RowBlocks
from pecli.kernels.threads import ordered_blocks, ordered_map, prefetch
from pecli.rowsource import RowSource, refuse_rows, row_source
from pecli.values import read_array

if TYPE_CHECKING:
    from pecli.dtypes import Arr, Ids
    from pecli.recipe import Recipe

#: Rows per block when a table is streamed (writers, statistics): about this many bytes.
BLOCK_BYTES = 4 << 20
#: Blocks of a computed table computed at once while it is streamed, each on one thread
#: (:meth:`Table.blocks`): the streaming peak stays within 256 MB (bfloat16 on 16 cores: 251 MB
#: with 4, 282 MB with 8, 384 MB with 16), and 4 blocks at a time computed a 2 GB table there in
#: 0.75-0.86 s (float32, RoPE, bfloat16), about what np.save takes to write it.
STREAM_BLOCKS = 4
#: Sampled rows at most this far apart are read as one range (one read beats several tiny ones).
READ_GAP = 4

Progress = Callable[[int], None]
"""Called with the number of rows just finished; a negative number starts the count again
(another pass over the same rows: identify's proof passes)."""


#: A file whose table declares this many times more bytes than it stores is not read whole (if
#: it declares over ``MIN_SPARSE_BYTES``): its unwritten chunks read as the fill value (an HDF5
#: lookup per chunk: hours for 10**9 one-row chunks), a sparse file's holes as zeros.  Real
#: compressed data never comes near: deflate cannot beat ~1032:1 (gzip -9 of an all-zero table
#: measures 1009:1), sinusoid tables reach ~1.3:1, LZF ~100:1.
MAX_DECLARED_PER_STORED = 10_000
#: Below this a table is read in a few seconds even as one-value chunks: read as usual.
MIN_SPARSE_BYTES = 1 << 20


@dataclass
class Table:
    """A (positions × dims) table served in row ranges.

    ``data`` is either a recipe (rows are computed) or an array-like with NumPy slicing
    (an ndarray, a read-only memmap, an h5py dataset): the table serves its rows from it as a
    :class:`~pecli.rowsource.RowSource` (an array-like as :class:`~pecli.rowsource.StoredRows`).
    ``info`` holds what the source knows about its storage (format, byte order, layout on disk)
    for ``inspect``.
    """

    data: Any
    recipe: Recipe | None = None
    source: str = "recipe"
    info: dict[str, Any] = field(default_factory=dict)
    #: Extra metadata written with the recipe (e.g. ``converted_from`` after a dtype change).
    provenance: dict[str, Any] = field(default_factory=dict)
    #: The dtype the file stores the values in when it is not ``dtype``: ``"bfloat16"`` for
    #: bfloat16 data served as float32 (exactly); ``"complex64"``/``"complex128"`` for complex
    #: numbers served as their (real, imaginary) parts in column pairs (:data:`pecli.dtypes.COMPLEX`).
    #: Writers write such a table back in that dtype.
    storage: str | None = None
    #: The position of each row when the rows are not positions ``start, start+1, …`` (a table
    #: of explicit positions, :meth:`gather`); None otherwise.
    positions: Any = None
    #: Where the rows come from: ``data`` itself when it is a recipe, else its stored rows.
    row_source: RowSource = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.row_source = row_source(self.data, self.source)
        # A recipe whose single row cannot be computed is refused before any work starts: every
        # command needs at least one row of its table (a view, a stream, a sample).
        if self.computed:
            self.row_source.ensure_rows_fit(1)

    @classmethod
    def from_recipe(cls, recipe: Recipe) -> Table:
        """The table ``recipe`` computes, row block by row block on request (nothing is built here)."""
        return cls(recipe, recipe, "recipe")

    @classmethod
    def from_array(cls, x: Any, name: str = "array") -> Table:
        """A table from an array a script holds: a NumPy array, anything with ``__dlpack__`` on
        the CPU (a torch or JAX tensor) or anything ``np.asarray`` takes.  Read like a file's
        array: float16/32/64 (bfloat16 as float32, exactly), 2-D (positions × dims), a vector as
        one row, more axes as rows.  ``name`` is what reports call it.  No copy where NumPy can
        view the memory.  A bad array is a :class:`~pecli.errors.PecliInputError` saying why."""
        if isinstance(x, Table):
            return x
        arr, info, storage = read_array(x, name)
        return cls(arr, None, name, info, {}, storage)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        """``np.asarray(table)``: the whole table (bfloat16 values as float32, exactly), refused
        like :meth:`to_torch` when it cannot fit in memory; ``__dlpack__`` hands it on the same way."""
        if copy is False:
            raise ValueError("a pecli table is computed or read on request: np.asarray(table) makes a new array")
        n = self.shape[0]
        self.ensure_rows_fit(n, fix="take rows with Table.section(...) first, or write the table with write_table")
        values = np.asarray(self.rows(0, n))
        return values if dtype is None else values.astype(dtype)

    def _repr_html_(self) -> str:
        """The table as ``pecli generate``/``inspect`` print it (its first and last rows, the columns
        that fit), in HTML: a notebook shows a table so.  Only the rows shown are read or computed."""
        from pecli.views.table import table_html

        return table_html(self)

    def __dlpack__(self, **kwargs: Any) -> Any:
        return np.ascontiguousarray(self.__array__()).__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)  # kDLCPU

    def to_torch(self, device: Any = "cpu", dtype: Any = None) -> Any:
        """The whole table as a torch tensor on ``device`` (needs torch): in the table's own
        dtype (a bfloat16 table as ``torch.bfloat16``, bit for bit) unless ``dtype`` is given,
        which torch then casts to.  Refused, like ``build()``, when it cannot fit in memory."""
        try:
            import torch
        except ImportError:
            raise PecliInputError("to_torch needs torch, which is not installed: pip install torch") from None
        n = self.shape[0]
        self.ensure_rows_fit(n, fix="take rows with Table.section(...) first, or write the table with write_table")
        values = np.ascontiguousarray(self.rows(0, n))
        if values.dtype.name == "bfloat16":  # ml_dtypes' bfloat16, which torch cannot import: its bits
            tensor = torch.from_numpy(values.view(np.int16)).view(torch.bfloat16)
        elif self.storage in COMPLEX:  # the column pairs as complex numbers, bit for bit
            tensor = torch.from_numpy(self.file_values(values))
        else:
            tensor = torch.from_numpy(values)
            if self.storage == "bfloat16":  # read as float32, exactly: back to the dtype it holds
                tensor = tensor.to(torch.bfloat16)
        return tensor.to(device=device, dtype=dtype)

    def converted(self, dtype: str) -> Table:
        """The same table in another dtype.

        A recipe is rebuilt at the new dtype (one rounding from the exact value); file data is
        cast, and the metadata records the dtype it came from.  A complex dtype stores the
        (real, imaginary) column pairs of a table in its float dtype as complex numbers: a
        recipe's columns must be such pairs (:meth:`Recipe.complex_pairs`, rope's ``part=cis``).
        """
        if dtype in COMPLEX:
            if self.storage == dtype:
                return self
            real = self.converted(COMPLEX[dtype])
            if real.recipe is not None:
                real.recipe.check_complex_pairs(dtype)
            if real.shape[1] % 2:
                raise PecliInputError(
                    f"{dtype} stores two columns (real, imaginary) as one number, and this table has "
                    f"{real.shape[1]}: give an even width, or --dtype {COMPLEX[dtype]}"
                )
            return replace(real, storage=dtype)
        if numpy_dtype(dtype) == self.dtype:
            if self.storage is None or self.storage == dtype:
                return self
            # bfloat16 read as float32, asked for as float32: the values stay, the storage goes.
            return replace(self, storage=None, provenance={**self.provenance, "converted_from": self.storage})
        if self.storage == dtype:
            return self.as_stored()
        if self.computed:
            return Table.from_recipe(self.data.with_params(dtype=dtype))
        recipe = self.recipe.with_params(dtype=dtype) if self.recipe is not None else None
        provenance = {**self.provenance, "converted_from": self.provenance.get("converted_from", self.dtype_name)}
        return Table(_Cast(self.data, dtype), recipe, self.source, dict(self.info), provenance)

    def as_stored(self) -> Table:
        """The table in the dtype its file stores it in (bfloat16 read as float32 goes back to
        bfloat16, exactly); itself when that is its dtype, or when it is complex (writers store
        the column pairs as complex numbers: :meth:`file_values`)."""
        if self.storage is None or self.computed or self.storage in COMPLEX:
            return self
        return replace(self, data=_Cast(self.data, self.storage), storage=None)

    def section(self, r0: int, r1: int, c0: int, c1: int) -> Table:
        """Rows ``[r0, r1)`` and columns ``[c0, c1)`` (indices) as a table of their own.  It keeps
        the recipe only when it is the whole table: a slice is not what the recipe builds."""
        n, d = self.shape
        if (r0, r1, c0, c1) == (0, n, 0, d):
            return self
        if self.storage in COMPLEX and (c0 % 2 or c1 % 2):
            raise PecliInputError(
                f"{self.source} holds {self.storage} numbers, each two columns (real, imaginary): columns "
                f"{c0}:{c1} would split one; give even bounds (e.g. --cols 0:{d}), or --dtype "
                f"{COMPLEX[self.storage]} to take single columns"
            )
        info = {**self.info, "section": f"rows {r0}:{r1}, columns {c0}:{c1} of {self.source}"}
        positions = self.positions[r0:r1] if self.positions is not None else None
        return Table(
            _Section(self, r0, r1, c0, c1), None, self.source, info, dict(self.provenance), self.storage, positions
        )

    def gather(self, positions: np.ndarray) -> Table:
        """The rows of ``positions`` (any order, repeats allowed) as a table of their own, each
        row labelled with its position.  Written without the recipe, like a section: the recipe
        builds consecutive positions.  A position outside the table is refused."""
        n = self.shape[0]
        positions = np.asarray(positions, dtype=np.int64).reshape(-1)
        rows = positions - self.start
        outside = (rows < 0) | (rows >= n)
        if outside.any():
            p = int(positions[int(np.argmax(outside))])
            raise PecliInputError(
                f"position {p} is outside the table's positions {self.start}..{self.start + n - 1}: "
                f"give a larger --len (or a smaller position)"
            )
        recipe = self.recipe
        source = f"{recipe.kind} {recipe.describe(short=True)}" if self.computed and recipe is not None else self.source
        info = {**self.info, "positions": f"{len(positions)} rows at the positions given, of {source}"}
        return Table(_Gather(self, rows), None, source, info, dict(self.provenance), self.storage, positions)

    def position_of(self, r: int) -> int | float:
        """The position row ``r`` holds (its label in views): a real one where they were given so."""
        if self.positions is None:
            return self.start + r
        p = float(self.positions[r])
        return int(p) if p.is_integer() else p

    @property
    def computed(self) -> bool:
        """Whether the rows are computed from a recipe (rather than read)."""
        return self.row_source.computed

    @property
    def shape(self) -> tuple[int, int]:
        return self.row_source.shape

    @property
    def dtype(self) -> np.dtype[Any]:
        return self.row_source.array_dtype

    @property
    def dtype_name(self) -> str:
        """The dtype the values are held in, as people name it: the file's storage (``bfloat16``,
        served as float32) or ``dtype``."""
        return self.storage or self.dtype.name

    @property
    def values_dtype(self) -> str:
        """The dtype whose precision the values have: bfloat16 storage, a complex dtype's parts
        (complex64: float32), else :attr:`dtype`."""
        return COMPLEX.get(self.dtype_name, self.dtype_name)

    @property
    def file_dtype(self) -> np.dtype[Any]:
        """The dtype a writer stores: :attr:`dtype`, or the complex dtype of a complex table."""
        return np.dtype(self.storage) if self.storage in COMPLEX else self.dtype

    @property
    def file_shape(self) -> tuple[int, int]:
        """The shape a writer stores: :attr:`shape`, or one column per complex number."""
        n, d = self.shape
        return (n, d // 2) if self.storage in COMPLEX else (n, d)

    def file_values(self, block: np.ndarray) -> np.ndarray:
        """Rows of this table as a writer stores them: a complex table's column pairs viewed as
        complex numbers (no copy where the rows are contiguous); other tables' rows as they are."""
        if self.storage not in COMPLEX:
            return block
        return np.ascontiguousarray(block).view(self.file_dtype)

    @property
    def start(self) -> int:
        """Position of row 0 (the recipe's start, else 0)."""
        return self.recipe.start if self.recipe is not None else 0

    def mostly_unstored(self) -> str | None:
        """Why reading this file's table whole is pointless, when it declares far more than it
        stores (``None`` otherwise): ``"1.6 TB declared, 4.1 kB stored — …"``.  The format puts
        ``storage size`` in :attr:`info` (HDF5's chunks, a sparse .npy file's allocated blocks)."""
        from pecli.resources import human_bytes

        stored, declared = self.info.get("storage size"), self.nbytes
        if not isinstance(stored, int) or declared <= MIN_SPARSE_BYTES or stored * MAX_DECLARED_PER_STORED >= declared:
            return None
        hdf5 = self.info.get("format") == "hdf5"
        what = "unwritten chunks read as the fill value" if hdf5 else "the file's holes read as zeros"
        if self.info.get("source") == "an array in memory":
            what = "a broadcast or strided view whose values repeat"
        return f"{human_bytes(declared)} declared, {human_bytes(stored)} stored — {what}"

    def check_stored(self, command: str, fix: str) -> None:
        """Refuse, in one line naming ``fix``, a table :meth:`mostly_unstored` says ``command``
        would read for hours."""
        unstored = self.mostly_unstored()
        if unstored is not None:
            raise PecliInputError(
                f"{self.source} is {unstored}: {command} would read every declared value, for hours; {fix}"
            )

    @property
    def nbytes(self) -> int:
        """Bytes of the values as held (bfloat16 storage: 2 per value)."""
        n, d = self.shape
        precision = precision_of(self.dtype_name)
        return n * d * (precision.itemsize if precision is not None else self.dtype.itemsize)

    # -- memory ------------------------------------------------------------------------------------
    def work_bytes(self, rows: int, copies: int = 1) -> int:
        """Peak bytes of holding ``rows`` rows at once: a recipe's rows and its kernel's scratch
        (:meth:`Recipe.work_bytes`); a file's rows and ``copies`` float64 copies of them (what
        statistics, comparisons and casts work in)."""
        n, d = self.shape
        return int(self.row_source.work_bytes(rows)) + (copies - 1) * 8 * max(0, min(rows, n)) * d

    def ensure_rows_fit(self, rows: int, copies: int = 1, fix: str | None = None) -> None:
        """Refuse, before anything is allocated, work that holds ``rows`` rows at once when it
        cannot fit in the memory available (see :meth:`work_bytes`)."""
        if copies <= 1:
            self.row_source.ensure_rows_fit(rows, fix)
            return
        need = self.work_bytes(rows, copies)
        refuse_rows(need, rows, self.shape, self.dtype, self.source, fix or self.row_source.wide_rows_fix())

    def stream_rows(self) -> int:
        """Rows held at once while the table is streamed: a block, or for a computed table a
        block for each thread computing one and the block being written (:meth:`blocks`)."""
        return min(self.shape[0], self.block_rows() * (self.stream_workers() + 1 if self.computed else 1))

    def stream_workers(self, then: bool = False) -> int:
        """Blocks made at once while streamed (:meth:`blocks`), one a thread, at most :data:`STREAM_BLOCKS`:
        a computed table's; with ``then``, a read table's too (rows under ``BLOCK_BYTES``)."""
        from pecli.kernels.threads import cpu_threads

        return max(1, min(cpu_threads(), STREAM_BLOCKS)) if self.computed or (then and self.block_rows() > 1) else 1

    def ensure_streamable(self) -> None:
        """Refuse, before an output is opened, streaming a table whose blocks (at least a row)
        cannot fit in memory."""
        self.ensure_rows_fit(self.stream_rows(), fix=self.row_source.wide_rows_fix())

    def rows(self, r0: int, r1: int) -> np.ndarray:
        """Rows ``[r0, r1)`` as an in-memory array."""
        return self.row_source.rows(r0, r1)

    def block_rows(self) -> int:
        """Rows in one block of :meth:`blocks` (about ``BLOCK_BYTES``, at least one row)."""
        return max(1, BLOCK_BYTES // max(1, self.shape[1] * self.dtype.itemsize))

    def block_spans(self) -> RowBlocks:
        """The row ranges ``[a, z)`` of :meth:`blocks`, about ``BLOCK_BYTES`` each (a lazy sequence)."""
        return RowBlocks(self.shape[0], self.block_rows())

    def blocks(
        self, progress: Progress | None = None, then: Callable[[np.ndarray], Any] | None = None
    ) -> Iterator[Any]:
        """The whole table as consecutive row blocks of about ``BLOCK_BYTES``; with ``then``, each block's
        ``then(block)`` (a writer's text), made on the thread that computed it or, read in order, on a streaming one."""
        spans, workers = self.block_spans(), self.stream_workers(then is not None)
        make = self.rows if then is None else lambda a, z: then(self.rows(a, z))
        if workers > 1 and len(spans) > 1 and self.computed:  # each on a thread while the consumer has one
            rows = ordered_blocks(make, spans, workers)
        elif workers > 1 and len(spans) > 1 and then is not None:  # read in order, copied (a reader may reuse one)
            rows = ordered_map(then, (np.array(self.rows(a, z)) for a, z in spans), workers)
        elif self.computed:
            rows = prefetch(make(a, z) for a, z in spans)  # block k+1 computed while k is written
        else:
            rows = (make(a, z) for a, z in spans)
        from pecli.interruption import abandoned

        with closing(rows):
            for (a, z), block in zip(spans, rows, strict=False):
                yield block
                if progress is not None:
                    progress(z - a)
                stop = abandoned()
                if stop is not None:  # a signal whose exception a library's callback swallowed: stop now
                    raise stop


class _Section:
    """An array-like of rows ``[r0, r1)`` and columns ``[c0, c1)`` of a table (read in row slices)."""

    def __init__(self, table: Table, r0: int, r1: int, c0: int, c1: int) -> None:
        self.table, self.r0, self.c0, self.c1 = table, r0, c0, c1
        self.shape = (r1 - r0, c1 - c0)
        self.dtype = table.dtype

    def __getitem__(self, key: slice) -> Any:
        start, stop, _ = key.indices(self.shape[0])
        return self.table.rows(self.r0 + start, self.r0 + stop)[:, self.c0 : self.c1]


class _Gather:
    """An array-like of the rows ``ids`` of a table (any order, repeats allowed), read in runs."""

    def __init__(self, table: Table, ids: np.ndarray) -> None:
        self.table, self.ids = table, ids
        self.shape = (len(ids), table.shape[1])
        self.dtype = table.dtype

    def __getitem__(self, key: slice) -> Any:
        start, stop, _ = key.indices(self.shape[0])
        wanted, order = np.unique(self.ids[start:stop], return_inverse=True)
        out = np.empty((len(wanted), self.shape[1]), dtype=self.dtype)
        # Runs of ids at most READ_GAP apart are read as one range (packed sequences: long runs).
        cuts = np.flatnonzero(np.diff(wanted) > READ_GAP) + 1
        for a, b in zip(np.r_[0, cuts], np.r_[cuts, len(wanted)], strict=True):
            lo, hi = int(wanted[a]), int(wanted[b - 1]) + 1
            out[a:b] = self.table.rows(lo, hi)[wanted[a:b] - lo]
        return out[order]


class _Cast:
    """An array-like whose slices come out in another dtype, rounded once (refused where a value
    overflows it)."""

    def __init__(self, data: Any, dtype: str) -> None:
        self.data, self.name, self.dtype, self.shape = data, dtype, numpy_dtype(dtype), data.shape

    def __getitem__(self, key: slice) -> Any:
        block = np.asarray(self.data[key])
        with np.errstate(over="ignore"):
            out = round_to(block, self.name)
        if is_float(block.dtype) and out.dtype.itemsize < block.dtype.itemsize:
            check_fits_dtype(block, self.name, (key.start or 0) if isinstance(key, slice) else 0, out)
        return out


def check_fits_dtype(block: np.ndarray, dtype: Any, first_row: int = 0, cast: np.ndarray | None = None) -> None:
    """Refuse finite values of ``block`` (rows from ``first_row``) that become ±inf in ``dtype``.

    The message names the largest such value, its row and ``dtype``'s largest finite value.
    """
    precision = precision_of(dtype)
    if precision is None or block.size == 0:
        return
    if cast is None:
        with np.errstate(over="ignore"):
            cast = round_to(block, precision.name)
    overflow = np.isinf(cast.astype(np.float32) if precision.name == "bfloat16" else cast)
    if not overflow.any():
        return
    overflow &= np.isfinite(block)
    if not overflow.any():
        return  # ±inf stays ±inf
    where = np.flatnonzero(overflow.reshape(-1))
    values = block.reshape(-1)[where]
    k = int(np.argmax(np.abs(values)))
    row = first_row + int(where[k]) // max(1, block.shape[-1] if block.ndim > 1 else 1)
    raise FormatError(
        f"row {row} holds {float(values[k]):g}, beyond {precision.name}'s largest value {precision.max:g}: "
        f"keep a wider --dtype (float32 or float64), or scale the values"
    )


def ensure_values_fit(table: Table, dtype: Any, progress: Progress | None = None) -> None:
    """Read ``table`` once, in blocks, and refuse it if a finite value overflows ``dtype`` (before
    anything is written: a conversion refused halfway would have written part of a stream)."""
    precision = precision_of(COMPLEX.get(dtype, dtype))  # a complex dtype: its parts
    if table.computed or precision is None or precision.itemsize >= table.dtype.itemsize:
        return
    row = 0
    for block in table.blocks(progress):
        check_fits_dtype(block, precision.name, row)
        row += len(block)


# -- reading ---------------------------------------------------------------------------------
def read_rows(table: Table, row_ids: Sequence[int] | Ids, cols: Ids | None = None) -> Arr:
    """The rows ``row_ids`` (strictly increasing) as float64, optionally only the columns ``cols``.

    Only those rows are read: runs of ids at most :data:`READ_GAP` apart are fetched as one range
    of at most one block (``BLOCK_BYTES``), anything further apart separately.
    """
    ids = np.asarray(row_ids, dtype=np.intp)
    recipe = table.data
    if cols is not None and table.computed and table.positions is None and recipe.direct_cells():
        # A few columns of a computed table: those cells alone (a picture of a 10⁶-wide table).
        grid_rows, grid_cols = np.meshgrid(ids, np.asarray(cols, dtype=np.intp), indexing="ij")
        values = recipe.cells(grid_rows.ravel(), grid_cols.ravel())
        return np.asarray(values, dtype=np.float64).reshape(ids.size, len(cols))
    width = table.shape[1] if cols is None else len(cols)
    out = np.empty((ids.size, width))
    limit = table.block_rows()
    i = 0
    while i < ids.size:
        j = i + 1
        while j < ids.size and ids[j] - ids[j - 1] <= READ_GAP and ids[j] - ids[i] < limit:
            j += 1
        block = np.asarray(table.rows(int(ids[i]), int(ids[j - 1]) + 1))
        # A run of consecutive ids is the block itself; the assignment casts to float64 (copies of a
        # 3·10⁶-wide row in float64 took 80 MB of a 12 MB table's identify).
        picked = block if j - i == block.shape[0] else block[ids[i:j] - ids[i]]
        out[i:j] = picked if cols is None else picked[:, cols]
        i = j
    return out


def spread_windows(n: int, count: int, length: int) -> list[tuple[int, int]]:
    """``count`` windows ``[a, a + length)`` spread evenly over ``[0, n)`` (one window if they would overlap)."""
    if n <= 0 or length <= 0:
        return []
    if count * length >= n:
        return [(0, n)]
    # sorted(set()) rather than np.unique, which imports numpy.ma (13 ms of every -o's start-up)
    starts = sorted({int(s) for s in np.rint(np.linspace(0, n - length, count))})
    return [(s, s + length) for s in starts]


def spread_indices(n: int, most: int) -> Ids:
    """At most ``most`` of the indices ``0 … n − 1``, spread evenly, both ends kept (all of them
    when there are no more): the columns identify screens on, the rows a wave is checked on."""
    spread = np.linspace(0, n - 1, min(n, most)).round().astype(np.intp)
    # Non-decreasing, so its repeats are neighbours: np.unique would sort it again and import
    # numpy.ma (13 ms of every identify's start-up).
    return spread[np.concatenate(([True], spread[1:] != spread[:-1]))] if spread.size > 1 else spread


#: What the library's functions take for a table: a :class:`Table`, a recipe (its table,
#: computed as needed) or an array (:meth:`Table.from_array`: NumPy, DLPack, anything
#: ``np.asarray`` takes).
TableLike = Any


def as_table(x: TableLike, name: str) -> Table:
    """``x`` itself when it is a Table, a recipe's table, else :meth:`Table.from_array` of it."""
    if isinstance(x, Table):
        return x
    if row_source(x, name).computed:
        return Table.from_recipe(x)
    return Table.from_array(x, name)


def first_position(a: Table, b: Table) -> int:
    """The position of row 0: the reference's recipe's, A's if only A has one, else 0 (row indices)."""
    if b.recipe is not None:
        return b.start
    return a.start if a.recipe is not None else 0
