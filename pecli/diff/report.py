"""What ``diff`` reports, as plain data: element statistics of A against B, and likely causes.

A is the candidate, B the reference.  An element is within tolerance iff
``|a − b| ≤ atol + rtol·|b|`` (NumPy's ``isclose``, asymmetric); NaNs in the same place are
equal under ``equal_nan``; infinities are equal only to themselves.  Both tables are read in row
blocks and compared in float64, so tables larger than memory work.

When they differ, :mod:`pecli.diff.causes` says what the likely cause is.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from contextlib import closing
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pecli import table as _table
from pecli.diff.causes import (
    DiffSample,
    Explanation,
    SamplePlan,
    check_tolerance,
    explain_sample,
)
from pecli.diff.statistics import Accumulator, Collector, Element, RowDiff, narrower_float
from pecli.dtypes import json_number, numpy_dtype
from pecli.errors import PecliInputError, RecipeError
from pecli.kernels.threads import cpu_threads, prefetch, touch
from pecli.model_files import key_differences
from pecli.proof import verify_all
from pecli.recipe import Recipe
from pecli.table import Progress, Table, TableLike, as_table, first_position


# -- results ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Comparison:
    """Everything ``diff`` reports.  Statistics are ``None`` when the shapes differ (nothing compared).

    Non-finite mismatches (NaN against a number, +inf against -inf) count as an infinite ``abs``;
    ``rms`` is over elements where both values are finite; ``rel`` is over finite, non-zero b;
    ``max_ulp`` counts the values of ``ulp_dtype`` (the narrower float dtype of the two) between a
    and b, both rounded to it; with ``ulps`` an element within that many also matches.
    ``worst`` and ``worst_rows`` rank every non-zero difference, within tolerance or not; ties go
    to the earlier element.  Explanations are only looked for when the tables differ.
    """

    same: bool
    source_a: str
    source_b: str
    shape_a: tuple[int, int]
    shape_b: tuple[int, int]
    dtype_a: str
    dtype_b: str
    atol: float
    rtol: float
    equal_nan: bool
    metadata_differences: list[tuple[str, Any, Any]]
    compared: int
    mismatched: int
    nonfinite_mismatched: int
    max_abs: float | None
    max_abs_at: Element | None
    max_rel: float | None
    max_rel_at: Element | None
    max_ulp: float | None
    max_ulp_at: Element | None
    ulp_dtype: str | None
    rms: float | None
    worst: list[Element] = field(default_factory=list)
    worst_rows: list[RowDiff] = field(default_factory=list)
    explanations: list[Explanation] = field(default_factory=list)
    #: Empty when the causes were tested on every row, else which rows they were tested on.
    causes_checked_on: str = ""
    #: When no cause fits: the nearest recipe tried for A, with its distance on the rows scored.
    nearest: str = ""
    ulps: int = 0
    #: Where a side is a model's settings file: each parameter that differs, said with its keys
    #: (``llama.rope.freq_base 10000 (A) vs rope_theta 1000000 (B)``; :mod:`pecli.model_files`).
    keys: list[str] = field(default_factory=list)

    @property
    def shapes_match(self) -> bool:
        return self.shape_a == self.shape_b

    @property
    def exit_code(self) -> int:
        """0 same, 1 different (a shape mismatch is a difference)."""
        return 0 if self.same else 1

    def _repr_html_(self) -> str:
        """The report ``pecli diff`` prints, as HTML (a notebook shows it)."""
        from pecli.views.console import as_html
        from pecli.views.diff import diff_view

        return as_html(diff_view(self))

    def __str__(self) -> str:
        """The report ``pecli diff`` prints, as plain text (100 columns)."""
        from pecli.views.console import as_text
        from pecli.views.diff import diff_view

        return as_text(diff_view(self))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data (NaN and ±inf become ``None``)."""

        def element(e: Element | None) -> dict[str, Any] | None:
            if e is None:
                return None
            return {
                "position": e.position,
                "dim": e.dim,
                "a": _value(e.a, self.dtype_a),
                "b": _value(e.b, self.dtype_b),
                "abs": json_number(e.abs),
                "rel": json_number(e.rel),
            }

        return {
            "same": self.same,
            "exit_code": self.exit_code,
            "a": {"source": self.source_a, "shape": list(self.shape_a), "dtype": self.dtype_a},
            "b": {"source": self.source_b, "shape": list(self.shape_b), "dtype": self.dtype_b},
            "tolerance": {"atol": self.atol, "rtol": self.rtol, "ulps": self.ulps, "equal_nan": self.equal_nan},
            "ulp_dtype": self.ulp_dtype,
            "causes_checked_on": self.causes_checked_on or None,
            "metadata_differences": [{"key": k, "a": va, "b": vb} for k, va, vb in self.metadata_differences],
            "compared": self.compared,
            "mismatched": self.mismatched,
            "nonfinite_mismatched": self.nonfinite_mismatched,
            "max_abs": json_number(self.max_abs),
            "max_abs_at": element(self.max_abs_at),
            "max_rel": json_number(self.max_rel),
            "max_rel_at": element(self.max_rel_at),
            "max_ulp": json_number(self.max_ulp),
            "max_ulp_at": element(self.max_ulp_at),
            "rms": json_number(self.rms),
            "worst": [element(e) for e in self.worst],
            "worst_rows": [
                {"position": r.position, "max_abs": json_number(r.max_abs), "mismatched": r.mismatched}
                for r in self.worst_rows
            ],
            "explanations": [
                {"name": x.name, "detail": x.detail, "residual": json_number(x.residual), "proved": x.proved}
                for x in self.explanations
            ],
            "nearest": self.nearest or None,
            "keys": list(self.keys),
        }


def _value(x: float, dtype: str) -> float | int | None:
    # Shortest text that round-trips in the table's own dtype (0.9092974, not 0.9092974066734314).
    kind = np.dtype(dtype).kind
    return json_number(np.dtype(dtype).type(x)) if kind in "fiu" else json_number(x)


# -- compare ---------------------------------------------------------------------------------
#: Differences of at most this many ulps everywhere are rounding, not a different table.
ROUNDING_ULPS = 4


def _storage(bf16: tuple[bool, bool, float, float] | None, stats: dict[str, Any], last: int) -> list[Explanation]:
    """One side holds bfloat16 values (read as float32): every element is within bfloat16's
    rounding (2⁻⁸ relative, with room) of the other's, plus at most the envelope a float32
    pipeline leaves (``2⁻²²·(1 + p)``, the two tables' own pipelines may differ)."""
    if bf16 is None or bf16[0] == bf16[1] or stats["nonfinite_mismatched"]:
        return []
    envelope = min(2.0**-22 * (1 + last), 1 / 16) * bf16[3]
    if bf16[2] > envelope:
        return []
    side, other = ("A", "B") if bf16[0] else ("B", "A")
    detail = f"{side} holds bfloat16 values (read as float32); every element is within bfloat16 rounding of {other}'s"
    if bf16[2] > 0:
        detail += f" (and within {envelope:.2g} of a float32 pipeline's rounding)"
    return [Explanation("storage", f"within bfloat16 rounding of {other}: {detail}", float(stats["max_abs"] or 0.0))]


def _rounding(a: Table, b: Table, stats: dict[str, Any], ulp_dtype: np.dtype[Any] | None) -> list[Explanation]:
    """Every difference within a few ulps: the same table rounded differently.  When a recipe is
    known, its other pipelines are rebuilt and proved against A, and one that reproduces A bit for
    bit is named (``identify``'s proof, on every row)."""
    ulp, mismatched = stats["max_ulp"], stats["mismatched"]
    if ulp_dtype is None or ulp is None or stats["nonfinite_mismatched"]:
        return []
    # Equal once rounded to the narrower dtype (ulp 0): the precision suspect names the storage.
    if not 0 < ulp <= ROUNDING_ULPS:
        return []
    detail = (
        f"every difference is within {ulp:g} ulp of {ulp_dtype.name} ({mismatched} element"
        f"{'s' if mismatched != 1 else ''}): the same table, rounded differently"
    )
    recipe, target = (b.recipe, a) if b.recipe is not None else (a.recipe, b)
    exact = [v for v, proof in _pipeline_proofs(recipe, target) if proof.holds and proof.max_abs == 0]
    if exact and recipe is not None:
        names = preset_names(exact[0])
        words = exact[0].changes(recipe) if target is a else recipe.changes(exact[0])
        detail += f"; {exact[0].spec()}{f' ({names})' if names else ''} reproduces {target.source} bit for bit"
        detail += f" ({'; '.join(words)})" if words else ""
        return [Explanation("rounding", detail, 0.0)]
    detail += " (a float64 pipeline cast once, a division for a multiplication, a framework's float32 exp)"
    return [Explanation("rounding", detail, float(stats["max_abs"] or 0.0))]


def _pipeline_proofs(recipe: Recipe | None, target: Table) -> list[tuple[Recipe, Any]]:
    """The recipe in each of its kind's other pipelines (:meth:`Recipe.pipelines`), proved on ``target``."""
    if recipe is None or recipe.shape != target.shape:
        return []
    variants = recipe.pipelines()
    if not variants:
        return []
    return list(zip(variants, verify_all(target, [(v, 0.0) for v in variants]), strict=True))


def preset_names(recipe: Recipe) -> str:
    """The presets whose recipe, at this size, is ``recipe``."""
    from pecli.presets import PRESETS

    sizes = ("length", "dim", "grid", "dtype", "heads", "start")
    size = {k: v for k, v in recipe.params(everything=True).items() if k in sizes}
    names = []
    for p in PRESETS.values():
        if p.kind != recipe.kind:
            continue
        try:
            if p.recipe(**size) == recipe:
                names.append(p.name)
        except RecipeError:
            continue
    return ", ".join(names)


def compare(
    a: TableLike,
    b: TableLike,
    *,
    atol: float = 0.0,
    rtol: float = 0.0,
    equal_nan: bool = True,
    top: int = 10,
    progress: Progress | None = None,
    suspects: bool = True,
    ulps: int = 0,
) -> Comparison:
    """Compare candidate A with reference B, block by block; explain the differences if ``suspects``.

    An element matches when ``|a − b| ≤ atol + rtol·|b|``, or when at most ``ulps`` values of the
    narrower float dtype of the two lie between them (NumPy's ``assert_array_max_ulp``).
    """
    a, b = as_table(a, "A"), as_table(b, "B")
    for t in (a, b):
        t.check_stored(
            "diff", "inspect its rows with pecli inspect --rows A:B, or compare a file that stores its table"
        )
    atol, rtol = check_tolerance("atol", atol), check_tolerance("rtol", rtol)
    if isinstance(ulps, bool) or not isinstance(ulps, int) or ulps < 0:
        raise PecliInputError(f"ulps must be a whole number ≥ 0, got {ulps!r}: e.g. --ulps 4")
    if isinstance(top, bool) or not isinstance(top, int) or top < 0:
        raise PecliInputError(f"top must be a whole number ≥ 0, got {top!r}")
    first = first_position(a, b)
    plan = SamplePlan.make(a.shape, b.shape)
    acc: Accumulator | None = None
    sample: DiffSample | None = None
    # Ulps are counted in the coarsest dtype the values are held in: bfloat16 when either side holds
    # bfloat16 values (files read as float32 included), so a bfloat16 copy of a float32 table is
    # one ulp away, not 65,536.
    held_bf16 = "bfloat16" in (a.dtype_name, b.dtype_name)
    ulp_dtype = numpy_dtype("bfloat16") if held_bf16 else narrower_float(a.dtype, b.dtype)
    if a.shape == b.shape:

        def accumulator() -> Accumulator:
            return Accumulator(top, atol, rtol, equal_nan, first, ulp_dtype, ulps)

        # The suspects' sample is copied out of the blocks as they pass: no second read.
        kept = plan if suspects else SamplePlan([], [])
        col_a, col_b = Collector(kept.a_windows, a.shape[1]), Collector(kept.b_windows, b.shape[1])
        acc = _stream(a, b, accumulator, (col_a, col_b), progress)
        sample = DiffSample.from_windows(kept, col_a.parts, col_b.parts, first)
    same = acc is not None and acc.mismatched == 0
    explanations: list[Explanation] = []
    nearest = ""
    checked_on = ""
    if suspects and not same:
        if sample is None:
            sample = DiffSample.read(a, b, plan, first)
    stats = acc.result() if acc is not None else _NO_STATS
    bf16 = stats.pop("bf16", None)
    if suspects and not same and sample is not None:
        last = first + max(a.shape[0], b.shape[0])
        rounding = _storage(bf16, stats, last) + _rounding(a, b, stats, acc.ulp_dtype if acc is not None else None)
        causes = explain_sample(a, b, sample, atol, rtol, equal_nan) if not rounding else None
        explanations = rounding or (causes.found if causes is not None else [])
        nearest = causes.nearest if causes is not None else ""
        sampled = sum(w.a.shape[0] for w in sample.windows)
        on_rows = [x for x in explanations if not x.proved]
        if on_rows and not rounding and a.shape[1] == b.shape[1] and sampled < a.shape[0]:
            # The counts and maxima are over every element; a cause is tested on the sample.
            checked_on = f"{sampled} sampled rows of {a.shape[0]}"
        elif on_rows and not rounding and a.shape[1] == b.shape[1] and b.shape[0] > max(a.shape[0], sampled):
            # B longer than A's whole sample: a fit of B is checked on B's own sampled rows.
            checked_on = f"sampled rows of B's {b.shape[0]}"
        elif on_rows and a.shape[1] != b.shape[1]:
            # Other widths: a side's recipe is fitted to the other side's own sampled rows.
            checked_on = "sampled rows of the fitted side"
    recipes = {"A": a.recipe, "B": b.recipe} | dict(x.fitted for x in explanations if x.fitted is not None)
    return Comparison(
        same=same,
        source_a=a.source,
        source_b=b.source,
        shape_a=a.shape,
        shape_b=b.shape,
        dtype_a=a.dtype_name,
        dtype_b=b.dtype_name,
        atol=atol,
        rtol=rtol,
        equal_nan=equal_nan,
        metadata_differences=metadata_differences(a, b),
        explanations=explanations,
        causes_checked_on=checked_on,
        nearest=nearest,
        ulps=ulps,
        keys=key_differences(a, b, recipes["A"], recipes["B"]) if not same else [],
        ulp_dtype=acc.ulp_dtype.name if acc is not None and acc.ulp_dtype is not None else None,
        **stats,
    )


def _stream(
    a: Table,
    b: Table,
    accumulator: Callable[[], Accumulator],
    collect: tuple[Collector, Collector],
    progress: Progress | None,
) -> Accumulator:
    """Every row of A and B through one accumulator, in row order.  A background thread reads (or
    computes) the next blocks and touches their pages, so that page faults and file reads overlap
    the arithmetic on the other core."""
    n, d = a.shape
    step = max(1, _table.BLOCK_BYTES // max(1, d * 8))
    acc = accumulator()

    def blocks() -> Generator[tuple[int, np.ndarray, np.ndarray], None, None]:
        for r0 in range(0, n, step):
            r1 = min(r0 + step, n)
            block_a, block_b = np.asarray(a.rows(r0, r1)), np.asarray(b.rows(r0, r1))
            touch(block_a)
            touch(block_b)
            yield r0, block_a, block_b

    source = prefetch(blocks(), depth=2) if cpu_threads() > 1 and n > step else blocks()
    with closing(source):
        for r0, block_a, block_b in source:
            collect[0].feed(r0, block_a)
            collect[1].feed(r0, block_b)
            acc.add(r0, block_a, block_b)
            if progress is not None:
                progress(len(block_a))
    return acc


def metadata_differences(a: Table, b: Table) -> list[tuple[str, Any, Any]]:
    """``(key, value in A, value in B)`` for every recipe parameter that differs (``pecli_version`` ignored)."""
    ra, rb = a.recipe, b.recipe
    if ra is None and rb is None:
        return []
    if ra is None or rb is None:
        return [("recipe", ra.describe() if ra is not None else None, rb.describe() if rb is not None else None)]
    ma, mb = ra.to_metadata(), rb.to_metadata()
    keys = [k for k in ma if k != "pecli_version"] + [k for k in mb if k not in ma and k != "pecli_version"]
    return [(k, ma.get(k), mb.get(k)) for k in keys if ma.get(k) != mb.get(k)]


_NO_STATS: dict[str, Any] = {
    "compared": 0,
    "mismatched": 0,
    "nonfinite_mismatched": 0,
    "max_abs": None,
    "max_abs_at": None,
    "max_rel": None,
    "max_rel_at": None,
    "max_ulp": None,
    "max_ulp_at": None,
    "rms": None,
}
