"""Proof that a rebuild is the table: every row compared, as ``pecli diff TABLE RECIPE --atol X`` does,
within what rounding explains (:func:`tolerances`, :func:`pipeline_slack`).

:func:`verify_all` reads the table once for any number of candidate recipes; elements a rebuild
reproduces bit for bit cost no arithmetic, the others are compared in float64 with ``diff``'s own
test (:func:`isclose`).  ``identify`` prints a MATCH only on a :class:`Verification`
that holds.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from pecli.recipe import Recipe
from pecli.table import Progress, Table

if TYPE_CHECKING:
    from pecli.dtypes import Arr
    from pecli.fitting import Sample

#: Past this (times the table's largest value) a tolerance says nothing: values of magnitude 1 would all "match".
_ENVELOPE_CAP = 1 / 16


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
    #: The largest ``|a − b|`` in ulps of the dtype the table's values are held in, at each value
    #: (``verify_all``'s ``held``; None when not asked): "within the rounding" means ≤ 1 here.
    max_ulps: float | None = None
    #: The same past what the recipe's pipeline may move a value by (``verify_all``'s ``slacks``):
    #: a proof needs ≤ 1 here.
    ulps_past_slack: float | None = None

    @property
    def holds(self) -> bool:
        return self.beyond == 0


# -- what a proof allows ------------------------------------------------------------------------------
def tolerances(recipe: Recipe, sample: Sample) -> tuple[float, float]:
    """``(match, close)``: the largest ``|table − candidate|`` that rounding explains.

    match: ``4ε`` of the table's dtype (one rounding of the output, with room) and a float64
    angle's ``4·2⁻⁵³·(1 + p)``; for a float32 pipeline also ``10⁻⁶ + p·2⁻²³``: torch's float32
    ``exp``/``pow``/``sin`` may round a frequency one ulp the other way, which moves a value by up
    to ``p·ulp(ω) ≤ p·2⁻²³`` (ω ≤ 1).  close: plus the envelope ``2⁻²²·(1 + p)`` of any float32
    pipeline (capped at 1/16, where it stops saying anything).  All times the table's largest
    ``|value|``; ``p`` is the kind's :meth:`~Recipe.max_position`.
    """
    p = recipe.max_position()
    match = 4 * sample.eps + pipeline_slack(recipe)
    # Past the cap a tolerance says nothing: values of magnitude 1 would all "match".
    match = min(match, _ENVELOPE_CAP / 4)
    close = min(match + sample.F32_ENVELOPE * (1 + p), _ENVELOPE_CAP)
    return match * sample.scale, close * sample.scale


def pipeline_slack(recipe: Recipe, p: Any = None) -> Any:
    """What the recipe's pipeline may move a value of magnitude 1 by at position ``p`` (a number or
    an array; the table's largest by default), its output's rounding aside: a float64 angle's
    ``4·2⁻⁵³·(1 + p)``, and for a float32 pipeline ``10⁻⁶ + p·2⁻²³`` more (see :func:`tolerances`).
    The proof allows each value this at its own row's position plus one ulp of its own."""
    p = recipe.max_position() if p is None else p
    slack = 4 * 2.0**-53 * (1 + p)
    if recipe.carrier() == "float32":  # a float32 pipeline
        slack = slack + 1e-6 + p * 2.0**-23
    return slack


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
    table: Table,
    checks: list[tuple[Recipe, float]],
    progress: Progress | None = None,
    held: str | None = None,
    scale: float = 1.0,
) -> list[Verification]:
    """:func:`verify` for several recipes in one pass over the table (each row is read once).

    Elements the rebuild reproduces bit for bit need no arithmetic; only the others are compared
    in float64 with ``diff``'s test.  The digest hashes where and how the rebuild departs from
    the table, so two rebuilds with equal digests are the same table.  ``held``: the dtype the
    table's values are held in, whose ulp at each value :attr:`Verification.max_ulps` counts in,
    also past what the recipe's pipeline may move that value by at its row's position
    (:func:`pipeline_slack` times ``scale``, the table's largest ``|value|``).
    """
    from pecli.dtypes import DTYPES

    # Recipes whose rows are the same bits (:meth:`~pecli.recipe.Recipe.canonical`) under one
    # tolerance are one check: the first of them is rebuilt, and its verification is each one's.
    asked = [(recipe.canonical(), atol) for recipe, atol in checks]
    first_asked = {key: i for i, key in reversed(list(enumerate(asked)))}
    if len(first_asked) < len(checks):
        once = sorted(first_asked.values())
        found = verify_all(table, [checks[i] for i in once], progress, held, scale)
        by_key = {asked[i]: v for i, v in zip(once, found, strict=True)}
        return [by_key[key] for key in asked]
    unit = DTYPES[held] if held is not None else None
    n, d = table.shape
    step = table.block_rows()
    max_abs = [0.0] * len(checks)
    max_ulps = [0.0] * len(checks)
    past_slack = [0.0] * len(checks)
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
            if unit is not None:
                slack = pipeline_slack(recipe, recipe.row_positions(r0 + where // max(d, 1))) * scale
                spacing = unit.spacing(b)
                with np.errstate(invalid="ignore"):
                    raw = np.where(diff == 0, 0.0, diff / spacing)
                    off = np.where(diff <= slack, 0.0, (diff - slack) / spacing)
                max_ulps[i] = max(max_ulps[i], float(np.max(np.where(np.isnan(raw), np.inf, raw))))
                past_slack[i] = max(past_slack[i], float(np.max(np.where(np.isnan(off), np.inf, off))))
            far = np.flatnonzero(~close)
            if far.size and first[i] is None:
                first[i] = r0 + int(where[far[0]]) // max(d, 1)
            beyond[i] += int(far.size)
            hashes[i].update((where + r0 * d).astype(np.int64).tobytes())
            hashes[i].update(b.tobytes())
        if progress is not None:
            progress(r1 - r0)
    measured = zip(max_abs, beyond, checks, first, hashes, max_ulps, past_slack, strict=True)
    return [
        Verification(n, m, k, atol, f, h.hexdigest(), *((u, s) if unit is not None else (None, None)))
        for m, k, (_, atol), f, h, u, s in measured
    ]


__all__ = ["Verification", "isclose", "pipeline_slack", "round_up", "tolerances", "verify", "verify_all"]
