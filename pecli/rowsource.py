"""Where a :class:`~pecli.table.Table`'s rows come from: the small protocol a table serves its rows
from, and the stored rows of an array.

A row source is a recipe (:class:`~pecli.recipe.Recipe`: its rows are computed) or
:class:`StoredRows` (an ndarray, a read-only memmap, an h5py dataset, or a table's section, cast or
gathered rows: anything with ``shape``, ``dtype`` and NumPy row slicing).  Each says what holding
rows at once costs and refuses, before anything is allocated, rows that cannot fit in memory; the
table asks, and never asks which of the two it holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

import numpy as np

from pecli.errors import FormatError, PecliInputError
from pecli.resources import CHECK_WORK_ABOVE, check_row_range, ensure_fits_in_memory, human_bytes

#: What to do when rows of a file do not fit in memory (pecli reads whole rows).
WIDE_ROWS_FIX = "free memory or use a machine with more: pecli reads whole rows of a table"


class RowSource(Protocol):
    """What a table serves its rows from."""

    #: Whether the rows are computed (a recipe: rebuilt at another dtype, each block on a thread)
    #: rather than read.
    computed: ClassVar[bool]

    @property
    def shape(self) -> tuple[int, int]: ...

    @property
    def array_dtype(self) -> np.dtype[Any]:
        """The NumPy dtype the rows come in (bfloat16: ``ml_dtypes``')."""
        ...

    def rows(self, r0: int, r1: int) -> np.ndarray:
        """Rows ``[r0, r1)`` as an in-memory array."""
        ...

    def work_bytes(self, rows: int) -> int:
        """Peak bytes of holding ``rows`` rows at once, with the work that makes them."""
        ...

    def ensure_rows_fit(self, rows: int, fix: str | None = None) -> None:
        """Refuse, before anything is allocated, ``rows`` rows at once that cannot fit in memory."""
        ...

    def wide_rows_fix(self) -> str:
        """What to do when even a few rows cannot fit in memory (a recipe: a smaller width)."""
        ...


def refuse_rows(need: int, rows: int, shape: tuple[int, int], dtype: np.dtype[Any], what: str, fix: str) -> None:
    """Refuse (:class:`~pecli.errors.TableTooLargeError`) ``rows`` rows of ``what`` that take
    ``need`` bytes with their float64 work, when that is more than the memory available."""
    if need <= CHECK_WORK_ABOVE:
        return
    n, d = shape
    rows = max(1, min(rows, n))
    said = "one row" if rows == 1 else f"{rows} rows"
    ensure_fits_in_memory(
        need,
        f"{said} of {d} {dtype} values of {what} ({human_bytes(rows * d * dtype.itemsize)}, plus float64 work)",
        fix,
    )


@dataclass(frozen=True)
class StoredRows:
    """The rows of an array-like ``data`` (a file's table, an array in memory), read on request;
    ``what`` names it in errors (the table's source)."""

    data: Any
    what: str

    computed: ClassVar[bool] = False

    @property
    def shape(self) -> tuple[int, int]:
        n, d = self.data.shape
        return (int(n), int(d))

    @property
    def array_dtype(self) -> np.dtype[Any]:
        dtype: np.dtype[Any] = np.dtype(self.data.dtype)
        return dtype

    def rows(self, r0: int, r1: int) -> np.ndarray:
        n, d = self.shape
        check_row_range(n, r0, r1)
        nbytes = (r1 - r0) * d * self.array_dtype.itemsize
        if nbytes > CHECK_WORK_ABOVE:
            ensure_fits_in_memory(
                nbytes,
                f"reading rows {r0}..{r1} of {self.what} ({r1 - r0} × {d} {self.array_dtype})",
                "read fewer rows at once (--rows, --pos), or write the table with -o, which streams it in blocks"
                if r1 - r0 > 1
                else WIDE_ROWS_FIX,
            )
        try:
            return np.asarray(self.data[r0:r1])
        except PecliInputError:
            raise
        except Exception as exc:
            text = (str(exc).strip() or type(exc).__name__).splitlines()[0]
            raise FormatError(f"cannot read rows {r0}..{r1} of {self.what} ({text})") from exc

    def work_bytes(self, rows: int) -> int:
        """The rows and one float64 copy of them (what statistics, comparisons and casts work in)."""
        n, d = self.shape
        return max(0, min(rows, n)) * d * (self.array_dtype.itemsize + 8)

    def ensure_rows_fit(self, rows: int, fix: str | None = None) -> None:
        refuse_rows(self.work_bytes(rows), rows, self.shape, self.array_dtype, self.what, fix or WIDE_ROWS_FIX)

    def wide_rows_fix(self) -> str:
        return WIDE_ROWS_FIX


def row_source(data: Any, what: str) -> RowSource:
    """``data`` itself when it is a row source (a recipe), else its :class:`StoredRows`.  Asked of the
    ``computed`` it declares: a protocol ``isinstance`` reads every member, 10 µs a table."""
    if isinstance(getattr(data, "computed", None), bool):
        source: RowSource = data
        return source
    return StoredRows(data, what)


__all__ = ["WIDE_ROWS_FIX", "RowSource", "StoredRows", "refuse_rows", "row_source"]
