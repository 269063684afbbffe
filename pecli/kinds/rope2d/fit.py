"""The rope2d kind's fitters: a table's grid, layout and column order read from its rows, and
the bands and parts tried on them (:meth:`pecli.kinds.rope2d.Rope2d.fit` and ``sizes``)."""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from pecli.errors import RecipeError
from pecli.fitting import Sample

if TYPE_CHECKING:
    from pecli.kinds.rope2d import Rope2d

#: The widest grid whose width :meth:`Rope2d.sizes` reads from the rows.
_MAX_WIDTH = 1 << 12


#: The pixel bands' ``max_res`` values a fit tries (timm's default, common input sizes, lucidrains'
#: ``max_freq`` 10): the highest band ``π·max_res/2`` aliases on a grid, so it is not measured.
_MAX_RES_TRIED = (224, 256, 384, 448, 512, 518, 10)


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
    seen: set[tuple[Any, ...]] = set()
    for part, stand_in in itertools.product(("sin", "cos", "cat", "angle"), ("1x1", "1x1x1")):
        for size in kind.sizes({"part": part, "feat_shape": stand_in}, sample):  # as many axes as the stand-in
            probe = kind(**size, bands="lang")
            key = tuple(sorted(size.items()))
            if key in seen or probe.shape != sample.table.shape or min(probe.axes) == 1:
                continue
            seen.add(key)
            if read_grid(sample, len(probe.axes), probe.part_width, probe.layout) == (
                probe.feat_shape,
                probe.grid_indexing,
            ):
                yield size


def _bands_tried(sample: Sample, probe: Rope2d) -> list[dict[str, Any]]:
    """Language bands with the base that row 1 (the last axis's coordinate 1) shows in band 1,
    ``base^(−1/q)`` (alternate bands: ``base^(−(2n−1)/(n·q))``), and pixel bands at each of
    :data:`_MAX_RES_TRIED`."""
    from pecli.fitting import round_number

    q = probe.dim // 4
    slot = probe.column_axes.index(len(probe.axes) - 1)
    column = probe.part_width if probe.part == "cat" else 0  # cat: read the cos half
    column += 2 * q * slot + 2 if probe.layout == "pairs" else q * slot + 1
    value = float(sample.rows(1, 2)[0, column]) if sample.n > 1 and q > 1 else math.nan
    measure = {"sin": math.asin, "cos": math.acos, "cat": math.acos}.get(probe.part, float)
    omega = measure(max(-1.0, min(1.0, value))) if math.isfinite(value) else math.nan
    n = len(probe.axes)
    tried = []
    if 0 < omega < 1:
        tried.append({"bands": "lang", "base": round_number(omega ** (-q))})
        # Pixtral's alternate bands: the last axis's band 1 is base^(−(2n − 1)/(n·q))
        tried.append(
            {"bands": "lang", "base": round_number(omega ** (-n * q / (2 * n - 1))), "axis_bands": "alternate"}
        )
    return tried + [
        {"bands": "pixel", "max_res": max_res, "linear_bands": linear}
        for max_res, linear in itertools.product(_MAX_RES_TRIED, (False, True))
    ]


def layout_of(sample: Sample, width: int) -> str | None:
    """``pairs`` when every column equals its neighbour (``[a0, a0, a1, a1, …]``), ``half`` when
    each part's halves are equal (``cat([x, x])``), in the sample's head; else None."""
    head = sample.rows(0, min(sample.n, sample.head_rows))
    if sample.d % 2 == 0 and np.array_equal(head[:, 0::2], head[:, 1::2]):
        return "pairs"
    parts = [head[:, a : a + width] for a in range(0, sample.d - width + 1, width)] if width else []
    if width % 2 == 0 and parts and all(np.array_equal(p[:, : width // 2], p[:, width // 2 :]) for p in parts):
        return "half"
    return None


def read_grid(sample: Sample, n: int, width: int, layout: str = "pairs") -> tuple[str, str] | None:
    """The ``n``-axis grid a table's rows run over (``width`` columns per part, in ``layout``)
    and its column order (``ij``, or ``xy`` when the first two blocks of bands are the second
    and the first axis), or ``None``: a block's columns hold still while the later axes run, so
    where they first move is its axis's stride (the last axis's is 1)."""
    block = width // n if layout == "pairs" else width // (2 * n)
    strides = []
    for axis in range(n):
        a, b = axis * block, (axis + 1) * block
        strides.append(sample.memo(("rope2d stride", a, b), functools.partial(axis_stride, sample, slice(a, b))))
    indexing = "ij"
    first, second = strides[0], strides[1]
    if first is not None and second is not None and first < second:  # the second axis's bands first: xy
        strides[0], strides[1], indexing = strides[1], strides[0], "xy"
    known = [s for s in strides[:-1] if s is not None]
    if len(known) != n - 1 or any(s % t for s, t in itertools.pairwise([*known, 1])):
        return None
    steps = [*known, 1]
    if sample.n % steps[0]:
        return None
    sizes = [sample.n // steps[0], *(s // t for s, t in itertools.pairwise(steps))]
    return ("x".join(map(str, sizes)), indexing) if min(sizes) >= 1 else None


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
