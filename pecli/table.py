"""A table is anything that can hand out row ranges: a recipe, or an array read from a file."""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from contextlib import closing
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from pecli.core import check_row_range
from pecli.recipe import DType, Recipe
from pecli.recipe_base import _Recipe
from pecli.resources import ensure_fits_in_memory

#: Rows per block when a table is streamed (writers, statistics): about this many bytes.
BLOCK_BYTES = 4 << 20
#: Reads larger than this are checked against the memory available first.
_CHECK_MEMORY_ABOVE = 64 << 20

Progress = Callable[[int], None]
"""Called with the number of rows just finished."""


@dataclass
class Table:
    """A (positions × dims) table served in row ranges.

    ``data`` is either a recipe (rows are computed) or an array-like with NumPy slicing
    (an ndarray, a read-only memmap, an h5py dataset).  ``info`` holds what the source knows
    about its storage (format, byte order, layout on disk) for ``inspect``.
    """

    data: Any
    recipe: Recipe | None = None
    source: str = "recipe"
    info: dict[str, Any] = field(default_factory=dict)
    #: Extra metadata written with the recipe (e.g. ``converted_from`` after a dtype change).
    provenance: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_recipe(cls, recipe: Recipe) -> Table:
        return cls(recipe, recipe, "recipe")

    def converted(self, dtype: DType) -> Table:
        """The same table in another dtype.

        A recipe is rebuilt at the new dtype (one rounding from the exact value); file data is
        cast, and the metadata records the dtype it came from.
        """
        if np.dtype(dtype) == self.dtype:
            return self
        if self.computed:
            return Table.from_recipe(replace(self.data, dtype=dtype))
        recipe = replace(self.recipe, dtype=dtype) if self.recipe is not None else None
        provenance = {**self.provenance, "converted_from": self.provenance.get("converted_from", self.dtype.name)}
        return Table(_Cast(self.data, np.dtype(dtype)), recipe, self.source, dict(self.info), provenance)

    @property
    def computed(self) -> bool:
        return isinstance(self.data, _Recipe)

    @property
    def shape(self) -> tuple[int, int]:
        n, d = self.data.shape
        return (int(n), int(d))

    @property
    def dtype(self) -> np.dtype[Any]:
        dtype: np.dtype[Any] = np.dtype(self.data.dtype)
        return dtype

    @property
    def start(self) -> int:
        """Position of row 0 (the recipe's start, else 0)."""
        return self.recipe.start if self.recipe is not None else 0

    @property
    def nbytes(self) -> int:
        n, d = self.shape
        return n * d * self.dtype.itemsize

    def rows(self, r0: int, r1: int) -> np.ndarray:
        """Rows ``[r0, r1)`` as an in-memory array."""
        rows: np.ndarray
        if self.computed:
            rows = self.data.rows(r0, r1)
            return rows
        check_row_range(self.shape[0], r0, r1)
        nbytes = (r1 - r0) * self.shape[1] * self.dtype.itemsize
        if nbytes > _CHECK_MEMORY_ABOVE:
            ensure_fits_in_memory(nbytes, f"rows {r0}..{r1} of {self.source}")
        try:
            rows = np.asarray(self.data[r0:r1])
        except Exception as exc:
            from pecli.errors import FormatError

            text = (str(exc).strip() or type(exc).__name__).splitlines()[0]
            raise FormatError(f"cannot read rows {r0}..{r1} of {self.source} ({text})") from exc
        return rows

    def block_rows(self) -> int:
        return max(1, BLOCK_BYTES // max(1, self.shape[1] * self.dtype.itemsize))

    def blocks(self, progress: Progress | None = None) -> Iterator[np.ndarray]:
        """The whole table as consecutive row blocks of about ``BLOCK_BYTES``."""
        n = self.shape[0]
        step = self.block_rows()
        rows: Generator[np.ndarray, None, None] = (self.rows(a, min(a + step, n)) for a in range(0, n, step))
        if self.computed:
            from pecli.fastpath import prefetch

            # Block k+1 is computed while the consumer (a writer) handles block k.
            rows = prefetch(rows)
        with closing(rows):
            for block in rows:
                yield block
                if progress is not None:
                    progress(len(block))


class _Cast:
    """An array-like whose slices come out in another dtype."""

    def __init__(self, data: Any, dtype: np.dtype[Any]) -> None:
        self.data, self.dtype, self.shape = data, dtype, data.shape

    def __getitem__(self, key: slice) -> Any:
        return np.asarray(self.data[key]).astype(self.dtype)
