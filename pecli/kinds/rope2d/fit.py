"""The rope2d kind's fitters: a table's grid, layout and column order read from its rows, and
the bands and parts tried on them (:meth:`pecli.kinds.rope2d.Rope2d.fit` and ``sizes``)."""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, get_args, get_type_hints

import numpy as np

from pecli.errors import RecipeError
from pecli.fitting import Sample
from pecli.params import round_number

if TYPE_CHECKING:
    from pecli.kinds.rope2d import Rope2d

#: The widest grid whose width :meth:`Rope2d.sizes` reads from the rows.
_MAX_WIDTH = 1 << 12


#: The pixel bands' ``max_res`` values a fit tries (timm's default, common input sizes, lucidrains'
#: ``max_freq`` 10): the highest band ``π·max_res/2`` aliases on a grid, so it is not measured.
_MAX_RES_TRIED = (224, 256, 384, 448, 512, 518, 10)
#: The language bands' bases a fit tries besides the measured one (EVA-02's, Pixtral's, timm's 10000).
BASES_TRIED = (10000.0, 100.0)
PIXEL_TRIED = tuple(itertools.product(_MAX_RES_TRIED, (False, True)))


def fitted(kind: type[Rope2d], sample: Sample) -> Iterator[Rope2d]:
    """rope2d recipes at the grids, layouts and column orders the rows show, each part: language
    bands with the base their first band measures (the band of the last axis's first step), and
    pixel bands at the usual ``max_res``."""
    head = sample.rows(0, min(sample.n, 4))
    for size in _read_sizes(kind, sample):
        for params in _bands_tried(sample, kind(**size, bands="lang")):
            # timm's float32 pipeline or the exact formula: whichever rebuilds the first rows more
            # closely (both on a tie); only those within 1e-3 of the table come forward at all.
            scored = []
            for compute in ("float32", "exact"):
                try:
                    recipe = kind(**size, **params, compute=compute)
                except RecipeError:  # a base of 1, a max_res the grid's bands cannot have
                    continue
                scored.append((float(np.max(np.abs(recipe.rows(0, len(head)) - head), initial=0.0)), recipe))
            best = min((gap for gap, _ in scored), default=math.inf)
            yield from (recipe for gap, recipe in scored if gap == best <= 1e-3)


def _read_sizes(kind: type[Rope2d], sample: Sample) -> Iterator[dict[str, Any]]:
    """Each part's sizes at the grid the rows run over (2 or 3 axes, none of one cell: a 1-D
    table in pairs, a rotary cache, reads as a grid of one column), not the square guess."""
    hints = get_type_hints(kind)  # the kind's choices (its module imports this one)
    seen: set[tuple[Any, ...]] = set()
    for part, stand_in, cls_row, columns in itertools.product(
        ("sin", "cos", "cat", "angle"), ("1x1", "1x1x1"), get_args(hints["cls_row"]), get_args(hints["axis_columns"])
    ):
        stand = {"part": part, "feat_shape": stand_in, "cls_row": cls_row, "axis_columns": columns}
        for size in kind.sizes(stand, sample):  # as many axes as the stand-in
            probe = kind(**size, bands="lang")
            key = tuple(sorted(size.items()))
            if key in seen or probe.shape != sample.table.shape or min(probe.axes) == 1:
                continue
            seen.add(key)
            if read_grid(sample, len(probe.axes), probe.part_width, probe.layout, columns, cls_row) == (
                probe.feat_shape,
                probe.grid_indexing,
                probe.merge,
            ):
                yield size


def _bands_tried(sample: Sample, probe: Rope2d) -> list[dict[str, Any]]:
    """Language bands with the base that row 1 (the last axis's coordinate 1) shows in band 1,
    ``base^(−1/q)`` (alternate bands: ``base^(−(2n−1)/(n·q))``), and pixel bands at each of
    :data:`_MAX_RES_TRIED`."""

    q, n = probe.dim // 4, len(probe.axes)
    slot = probe.column_axes.index(n - 1)
    row = 1 + (probe.cls_row == "first")  # the last axis's cell 1

    def omega(band: int) -> float:
        """The last axis's band ``band`` (its angle at cell 1); cat: read the cos half."""
        if sample.n <= row or band >= q:
            return math.nan
        column = int(probe.band_columns(slot, 1 if probe.part == "cat" else 0)[0][band])
        value = float(sample.rows(row, row + 1)[0, column])
        measure = {"sin": math.asin, "cos": math.acos, "cat": math.acos}.get(probe.part, float)
        return measure(max(-1.0, min(1.0, value))) if math.isfinite(value) else math.nan

    tried: list[dict[str, Any]] = []
    if 0 < (w := omega(1)) < 1:
        tried.append({"bands": "lang", "base": round_number(w ** (-q))})
        # Pixtral's alternate bands: the last axis's band 1 is base^(−(2n − 1)/(n·q))
        tried.append({"bands": "lang", "base": round_number(w ** (-n * q / (2 * n - 1))), "axis_bands": "alternate"})
    for base in BASES_TRIED:  # a base measured in float16 or bfloat16 is a few units off a round one
        tried += [{"bands": "lang", "base": base}, {"bands": "lang", "base": base, "axis_bands": "alternate"}]
    if q == 1:  # one band an axis: base^0 = 1 whatever the base (alternate: the last axis's is base^(−(n−1)/n))
        tried.append({"bands": "lang"})
        if 0 < (w := omega(0)) < 1:
            tried.append({"bands": "lang", "base": round_number(w ** (-n / (n - 1))), "axis_bands": "alternate"})
    tried = [t for t in tried if 1 < float(t.get("base", 2.0)) < 1e12]  # no pow overflows: a base measured near 1 or 0
    return tried + [{"bands": "pixel", "max_res": max_res, "linear_bands": linear} for max_res, linear in PIXEL_TRIED]


def layout_of(sample: Sample, width: int) -> str | None:
    """``pairs`` when every column equals its neighbour (``[a0, a0, a1, a1, …]``), ``half`` when
    each part's halves are equal (``cat([x, x])``), in the sample's head; else None."""
    head = sample.rows(0, min(sample.n, sample.head_rows))
    # The first pair (or half's first column) first: most tables differ there already, and the
    # whole head's comparison cost 4 ms a call at 65536 columns, 104 calls a table.
    if sample.d % 2 == 0 and np.array_equal(head[:, 0], head[:, 1]) and np.array_equal(head[:, 0::2], head[:, 1::2]):
        return "pairs"
    parts = [head[:, a : a + width] for a in range(0, sample.d - width + 1, width)] if width else []
    if (
        width % 2 == 0
        and parts
        and np.array_equal(parts[0][:, 0], parts[0][:, width // 2])
        and all(np.array_equal(p[:, : width // 2], p[:, width // 2 :]) for p in parts)
    ):
        return "half"
    return None


def read_grid(
    sample: Sample, n: int, width: int, layout: str = "pairs", axis_columns: str = "blocks", cls_row: str = "none"
) -> tuple[str, str, int] | None:
    """The ``n``-axis grid a table's rows run over (``width`` columns per part, in ``layout``,
    each axis's bands together or in turn as ``axis_columns`` says, a class token's row first,
    last or none), its column order (``ij``, or ``xy`` when the first two axes' bands are the
    second and the first axis) and its merge windows (1: C order), or ``None``: an axis's columns
    hold still while the later axes run, so where they first move is its axis's stride (the last
    axis's is 1); a 2-D grid whose first axis moves after ``m`` rows and is back at row ``m²`` runs
    in ``m×m`` windows (:func:`_merged_width`)."""
    q = width // (2 * n)
    skip = 1 if cls_row == "first" else 0
    cells = sample.n - (cls_row != "none")
    strides, columns = [], []
    for axis in range(n):
        columns.append(axis_columns_of(axis, n, q, layout, axis_columns))
        key = ("rope2d stride", layout, axis_columns, n, q, axis, skip)
        strides.append(sample.memo(key, functools.partial(axis_stride, sample, columns[-1], skip)))
    indexing = "ij"
    first, second = strides[0], strides[1]
    if first is not None and second is not None and first < second:  # the second axis's bands first: xy
        strides[0], strides[1], indexing = strides[1], strides[0], "xy"
        columns[0], columns[1] = columns[1], columns[0]
    known = [s for s in strides[:-1] if s is not None]
    if len(known) != n - 1 or any(s % t for s, t in itertools.pairwise([*known, 1])):
        return None
    steps = [*known, 1]
    if cells < 1 or cells % steps[0]:
        return None
    if n == 2 and (grid_w := _merged_width(sample, columns[0], skip, steps[0], cells)) is not None:
        return (f"{cells // grid_w}x{grid_w}", indexing, steps[0])
    sizes = [cells // steps[0], *(s // t for s, t in itertools.pairwise(steps))]
    return ("x".join(map(str, sizes)), indexing, 1) if min(sizes) >= 1 else None


def _merged_width(sample: Sample, slow: np.ndarray, skip: int, m: int, cells: int) -> int | None:
    """The width ``W`` of a 2-D grid whose rows run in ``m×m`` merge windows, or ``None`` (C order):
    the first axis's ``slow`` columns move at row ``m`` and are back at row ``m²`` (the next
    window), and first show a coordinate past ``m − 1`` at row ``m·W`` (the next row of windows)."""
    if m < 2 or cells % (m * m) or cells < 2 * m * m:
        return None
    reach = min(cells, m * _MAX_WIDTH + 1)
    rows = sample.rows(skip, skip + reach)[:, slow]
    if not np.array_equal(rows[m * m], rows[0]):
        return None
    inside = rows[: m * m : m]  # the window's first column of cells: coordinates 0 … m − 1
    past = next((r for r in range(0, reach, m) if not np.any(np.all(rows[r] == inside, axis=1))), None)
    if past is None:
        return cells // m if cells // m % m == 0 else None  # one row of windows
    grid_w = past // m
    return grid_w if past % (m * m) == 0 and cells % (m * grid_w) == 0 else None


def axis_columns_of(slot: int, n: int, q: int, layout: str, axis_columns: str) -> np.ndarray:
    """The first part's columns of the ``slot``-th axis's ``q`` bands (as :meth:`Rope2d.band_columns`
    places them, before the recipe is known): in pairs both copies, in halves the first."""
    k = np.arange(q)
    place = k * n + slot if axis_columns == "interleaved" else slot * q + k
    return np.sort(np.concatenate([2 * place, 2 * place + 1])) if layout == "pairs" else place


def axis_stride(sample: Sample, columns: slice | np.ndarray, skip: int = 0) -> int | None:
    """How many rows after row ``skip`` the ``columns`` first differ from its, or ``None``: read in
    blocks up to :data:`_MAX_WIDTH` rows."""
    head = sample.rows(skip, min(sample.n, skip + sample.head_rows))
    if not head.size or not head[0, columns].size:
        return None
    row0 = head[0, columns]
    moved = np.flatnonzero(np.any(head[:, columns] != row0, axis=1))
    if moved.size:  # the head (already read) shows it
        return int(moved[0])
    r, end = skip + int(head.shape[0]), min(sample.n, skip + _MAX_WIDTH + 1)
    while r < end:
        rows = sample.rows(r, min(end, r + 256))
        moved = np.flatnonzero(np.any(rows[:, columns] != row0, axis=1))
        if moved.size:
            return int(r + moved[0]) - skip
        r += rows.shape[0]
    return None


def grid_width(sample: Sample, dim: int) -> int | None:
    """The width W of the 2-D grid a rope2d table's rows run over, or ``None``: the h columns (the
    first ``dim/2``) hold still along a grid row (see :func:`axis_stride`)."""
    return None if dim < 4 or layout_of(sample, sample.d) != "pairs" else axis_stride(sample, slice(0, dim // 2))
