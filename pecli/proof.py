"""Proof that a rebuild is the table: every row compared, as ``pecli diff TABLE RECIPE --atol X`` does.

:func:`verify_all` reads the table once for any number of candidate recipes; elements a rebuild
reproduces bit for bit cost no arithmetic, the others are compared in float64 with ``diff``'s own
test (:func:`isclose`).  ``identify`` prints a MATCH only on a :class:`Verification`
that holds.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from pecli.kinds.base import Recipe
from pecli.table import Progress, Table

if TYPE_CHECKING:
    from pecli.dtypes import Arr


def isclose(a: Arr, b: Arr, atol: float, rtol: float, equal_nan: bool) -> NDArray[np.bool_]:
    """Where A's elements equal the reference B's within ``atol + rtol·|b|``: NumPy's ``isclose``,
    term for term (so counts agree with it exactly); equal infinities too, and NaNs in the same
    place with ``equal_nan``.  The one test ``diff`` and ``identify``'s proof both use."""
    with np.errstate(invalid="ignore", over="ignore"):
        close: NDArray[np.bool_] = ((np.abs(a - b) <= atol + rtol * np.abs(b)) & np.isfinite(b)) | (a == b)
        if equal_nan:
            close |= np.isnan(a) & np.isnan(b)
    return close


@dataclass(frozen=True)
class Verification:
    """A candidate compared with every row of the table, as ``pecli diff --atol atol`` compares."""

    rows: int
    max_abs: float
    #: Elements outside ``atol`` (0: ``pecli diff FILE SOURCE --atol atol`` exits 0).
    beyond: int
    atol: float
    first_beyond_row: int | None = None
    #: A hash of where and how the rebuild departs from the table: equal digests, the same rebuild.
    digest: str = ""

    @property
    def holds(self) -> bool:
        return self.beyond == 0


def round_up(x: float) -> float:
    """``x`` rounded up to two significant digits (a tolerance a user can type)."""
    if x <= 0 or not math.isfinite(x):
        return x
    e = math.floor(math.log10(x)) - 1
    value = float(f"{math.ceil(x / 10.0**e)}e{e}")
    return value if value >= x else float(f"{math.ceil(x / 10.0**e) + 1}e{e}")


def verify(table: Table, recipe: Recipe, atol: float, progress: Progress | None = None) -> Verification:
    """``recipe`` rebuilt and compared with every row of ``table``, block by block, as ``pecli diff
    TABLE RECIPE --atol atol`` compares them (NaNs in the same place equal)."""
    return verify_all(table, [(recipe, atol)], progress)[0]


def verify_all(
    table: Table, checks: list[tuple[Recipe, float]], progress: Progress | None = None
) -> list[Verification]:
    """:func:`verify` for several recipes in one pass over the table (each row is read once).

    Elements the rebuild reproduces bit for bit need no arithmetic; only the others are compared
    in float64 with ``diff``'s test.  The digest hashes where and how the rebuild departs from
    the table, so two rebuilds with equal digests are the same table.
    """
    n, d = table.shape
    step = table.block_rows()
    max_abs = [0.0] * len(checks)
    beyond = [0] * len(checks)
    first: list[int | None] = [None] * len(checks)
    hashes = [hashlib.blake2b(digest_size=16) for _ in checks]
    for r0 in range(0, n, step):
        r1 = min(n, r0 + step)
        block = np.asarray(table.rows(r0, r1))
        flat = block.reshape(-1)
        for i, (recipe, atol) in enumerate(checks):
            built = np.asarray(recipe.rows(r0, r1)).reshape(-1)
            if built.dtype != flat.dtype:  # compare values, not bits
                built = built.astype(np.float64)
            where = np.flatnonzero(built != (flat if flat.dtype == built.dtype else flat.astype(np.float64)))
            if not where.size:
                continue
            a = flat[where].astype(np.float64)
            b = built[where].astype(np.float64)
            close = isclose(a, b, atol, 0.0, equal_nan=True)
            with np.errstate(invalid="ignore", over="ignore"):
                diff = np.where(close & ~np.isfinite(a - b), 0.0, np.abs(a - b))
            max_abs[i] = max(max_abs[i], float(np.max(np.where(np.isnan(diff), np.inf, diff))))
            far = np.flatnonzero(~close)
            if far.size and first[i] is None:
                first[i] = r0 + int(where[far[0]]) // max(d, 1)
            beyond[i] += int(far.size)
            hashes[i].update((where + r0 * d).astype(np.int64).tobytes())
            hashes[i].update(b.tobytes())
        if progress is not None:
            progress(r1 - r0)
    return [
        Verification(n, m, k, atol, f, h.hexdigest())
        for m, k, (_, atol), f, h in zip(max_abs, beyond, checks, first, hashes, strict=True)
    ]


__all__ = ["Verification", "isclose", "round_up", "verify", "verify_all"]
