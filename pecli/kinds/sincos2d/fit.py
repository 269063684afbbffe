"""The sincos2d kind's fitters: the grid, order and zero rows a table's rows run over, and the
frequency rule, temperature and coordinate scales its second cell's angles show
(:meth:`pecli.kinds.sincos2d.Sincos2d.fit` and ``sizes``).  An order's columns are learnt from a
small table the kind builds (:func:`grid_layout`), so a new order needs no fitting code here."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast, get_args, get_type_hints

import numpy as np

from pecli.dtypes import DType
from pecli.errors import RecipeError
from pecli.fitting import Sample
from pecli.params import round_number

if TYPE_CHECKING:
    from pecli.dtypes import Arr, Ids
    from pecli.kinds.sincos2d import Freq, Sincos2d

#: |value − cell-0 value| above this means an axis coordinate changed (sin 1 ≈ 0.84 at ω_0 = 1).
_CHANGED = 1e-3
#: How far down a grid's width is looked for, and the rows read per step while looking.
MAX_GRID_SCAN = 1 << 16
_SCAN_BLOCK = 256


def fitted(kind: type[Sincos2d], sample: Sample) -> Iterator[Sincos2d]:
    """Grids whose first cell, shape and temperature the table fits.

    For each order, a tiny probe table built here says which columns belong to which axis and
    which are sin or cos; the table's first cell must be the probe's (sin 0 = 0, cos 0 = 1); how
    many rows each axis's columns stay at that value gives the grid (the inner axis changes at
    once, the outer one after a whole row of the grid); a zero row 0 is a class token, more
    zero rows diffusers' ``extra_tokens``; the angles of the second cell give the temperature.
    """
    d, hints = sample.d, get_type_hints(kind)
    zeros = _leading_zero_rows(sample)
    for order, naxes, prefix in itertools.product(
        get_args(hints["order"]), (2, 3), dict.fromkeys((0, min(zeros, 1), zeros))
    ):
        if (naxes == 3 and order not in kind.orders_3d) or (naxes == 2 and order == "cogvideox"):
            continue  # (cogvideox's one frame is a 3-D grid of one frame)
        layout = grid_layout(kind, order, d, naxes)
        grid = detect_grid(sample, layout, prefix) if layout is not None else None
        if layout is None or grid is None:
            continue
        text = "x".join(map(str, grid[1:] if order == "cogvideox" and grid[0] == 1 else grid))
        after = {0: "", 1: " after a zero class row"}.get(prefix, f" after {prefix} zero rows (extra tokens)")
        clue = f"the rows form a {text} grid in the {order} order{after}"
        # The second cell is one step along the innermost axis: its angles are ω_k themselves.
        sin, cos = layout.axes[-1]
        second = sample.rows(prefix + 1, prefix + 2)[0]
        omega = np.arctan2(second[sin], second[cos])
        # The fastest column's ω is 1, so its angle is the coordinate step: 1, or diffusers'
        # base_size / (m · interpolation_scale) for an axis of m cells.
        step = float(omega[0]) if omega.size else 1.0
        scaled = omega.size > 0 and 0 < step < 3 and abs(step - 1) > 1e-3  # beyond π the angle wraps
        measured = omega / step if scaled else omega
        m = grid[layout.recipe_axis[-1]]
        coordinates = _coordinate_scales(step, m) if scaled else [{}]
        for (freq, base), compute, scales in itertools.product(
            _rule_bases(sample, measured, layout.per_axis, order), get_args(hints["compute"]), coordinates
        ):
            try:
                dtype = cast(DType, sample.dtype)
                recipe = kind(
                    text, d, base, order, prefix > 0, dtype, compute, **scales, extra_tokens=prefix, freq=freq
                )
            except RecipeError:
                continue
            words = [f"its second cell's angles fit base {base:g}"] if base != 10000 else []
            words += ["its frequencies spaced by 1/(q−1) (freq=t2t)"] if freq == "t2t" else []
            words += (
                [f"coordinates step by {step:.6g} ({', '.join(f'{k} {v:g}' for k, v in scales.items())})"]
                if scales
                else []
            )
            sample.clue("; ".join([clue, *words]), recipe)
            yield recipe
    yield from _fitted_counted(kind, sample)


def _fitted_counted(kind: type[Sincos2d], sample: Sample) -> Iterator[Sincos2d]:
    """Sine maps whose cells count from 1 (``coords``), after a class row or none: DETR's
    ``PositionEmbeddingSine`` (the tatp order, ``[sin y, cos y, … | sin x, cos x, …]``) and LoFTR's
    (``[sin x, cos x, sin y, cos y]`` a frequency), read as ``(H·W, d)`` rows.  The y columns hold
    still along a grid row (its width); cell 0's x angle of frequency 1 says the rule (``count`` 1,
    ``detr`` 2π/(W + 10⁻⁶), ``deformable`` π/(W + 10⁻⁶)); the x angles of the widest cell below
    1.5π (no wrap) over its coordinate are the ``ω_k``, which give the base (LoFTR's
    ``temp_bug_fix=False``, ``ω_k = e^(−2k)``, is tried beside)."""
    d, q = sample.d, sample.d // 4
    if d % 4:
        return
    hints = get_type_hints(kind)
    zeros = _leading_zero_rows(sample)
    for order, prefix in itertools.product(("tatp", "loftr"), dict.fromkeys((0, min(zeros, 1), zeros))):
        layout = grid_layout(kind, order, d, 2)
        cells = sample.n - prefix
        if layout is None or cells < 2:
            continue
        (sin, cos), head = layout.axes[-1], sample.rows(prefix, prefix + 1)[0]
        width = _first_change(sample, prefix, layout.columns[0], head, MAX_GRID_SCAN)
        if width < 2 or cells % width or sin.size < q:
            continue
        x0 = float(np.mod(np.arctan2(head[sin[0]], head[cos[0]]), 2 * math.pi))
        for coords in get_args(hints["coords"]):
            probe = kind(f"{cells // width}x{width}", d, order=order, coords=coords, compute="exact")
            c = probe.coordinates(1)
            if coords == "index" or abs(x0 - c[0]) > max(1e-3, 8 * sample.eps):  # bfloat16: 2⁻⁸ a value
                continue
            cell = int(np.flatnonzero(c <= 1.5 * math.pi)[-1])
            row = sample.rows(prefix + cell, prefix + cell + 1)[0]
            measured = np.mod(np.arctan2(row[sin], row[cos]), 2 * math.pi) / c[cell]
            rules = _rule_bases(sample, measured, q, order)
            for (freq, base), compute in itertools.product(rules, get_args(hints["compute"])):
                try:
                    recipe = kind(
                        probe.grid, d, base, order, prefix > 0, cast(DType, sample.dtype), compute,
                        extra_tokens=prefix, freq=freq, coords=coords,
                    )  # fmt: skip
                except RecipeError:
                    continue
                after = {0: "", 1: " after a zero class row"}.get(prefix, f" after {prefix} zero rows")
                sample.clue(
                    f"the rows form a {probe.grid} grid of a sine map in the {order} order{after}, cells from 1 "
                    f"({probe.value_words('coords', coords)}); {probe.value_words('freq', freq)}, base {base:g}",
                    recipe,
                )
                yield recipe


def sized(kind: type[Sincos2d], params: dict[str, Any], sample: Sample) -> Iterator[dict[str, Any]]:
    """The detected grid, the preset's own, or a square (cube) with the table's cells; after the
    preset's zero rows, or after the table's own when it starts with two or more (diffusers'
    ``extra_tokens`` in front of a preset's grid)."""
    default = str(params.get("grid", ""))
    naxes = default.count("x") + 1 if default else 2
    own = int(params.get("extra_tokens") or bool(params.get("cls", False)))
    zeros = _leading_zero_rows(sample)
    layout = grid_layout(kind, str(params.get("order", "mae")), sample.d, naxes)
    for prefix in dict.fromkeys([own, *([zeros] if zeros >= 2 else [])]):
        cells = sample.n - prefix
        grids: list[str] = []
        found = detect_grid(sample, layout, prefix) if layout is not None else None
        if found is not None:
            grids.append("x".join(map(str, found)))
        if default and math.prod(int(s) for s in default.split("x")) == cells:
            grids.append(default)
        side = round(cells ** (1 / naxes)) if cells > 0 else 0
        if side >= 1 and side**naxes == cells:
            grids.append("x".join([str(side)] * naxes))
        extra = {} if prefix == own else {"cls": True, "extra_tokens": prefix}
        for g in dict.fromkeys(grids):
            yield {"grid": g, "dim": sample.d, "dtype": sample.dtype, **extra}


def _rule_bases(sample: Sample, omega: Arr, q: int, order: str) -> list[tuple[Freq, float]]:
    """The frequency rules and bases the measured ``ω_k`` of an axis of ``q`` fit: the paper's
    ``k/q`` with 10000 and the roundest base that predicts them; tensor2tensor's ``k/(q−1)``
    (vit-pytorch) only with a base of at most 4 significant digits (an MAE table fits it too, with
    10000^((q−1)/q)), or with 10000 where one frequency alone was measured; in LoFTR's order, its
    ``temp_bug_fix=False`` rule ``e^(−2k)`` (no base) too."""
    fitted = sample.fit_round_base(omega, np.arange(omega.size) / q, sample.angle_tolerance(1.0), 1.0)
    out: list[tuple[Freq, float]] = [("paper", b) for b in sorted({10000.0} | ({fitted[0]} if fitted else set()))]
    if q >= 2 and omega.size < 2:  # one frequency measured (a narrow table): no rule to tell, both tried
        out.append(("t2t", 10000.0))
    elif q >= 2:
        spaced = sample.fit_round_base(omega, np.arange(omega.size) / (q - 1), sample.angle_tolerance(1.0), 1.0)
        if spaced is not None and spaced[1] <= 4:
            out.append(("t2t", spaced[0]))
    if order == "loftr":
        out.append(("loftr-bug", 10000.0))
    return out


#: diffusers' base_size values tried (a sample size over a patch size), beside the axis's own size.
_BASE_SIZES = (16, 32, 64, 96, 128, 192, 256)


def _coordinate_scales(step: float, m: int) -> list[dict[str, Any]]:
    """``interpolation_scale`` and ``base_size`` that make diffusers' coordinate step
    ``base_size / (m · interpolation_scale)`` (or ``1 / interpolation_scale`` without a base size)
    equal ``step``, for a round scale (to 3 significant digits)."""
    out: list[dict[str, Any]] = []
    for base_size in (None, m, *_BASE_SIZES):
        scale = (base_size / m if base_size else 1.0) / step
        nice = round_number(scale, 3)
        if nice > 0 and abs(scale - nice) <= 1e-4 * nice and (base_size or nice != 1):
            params: dict[str, Any] = {"interpolation_scale": nice}
            if base_size:
                params["base_size"] = base_size
            if params not in out:
                out.append(params)
    return out


@dataclass(frozen=True)
class GridLayout:
    """Where each axis of an order lives: ``axes[a]`` is the ``(sin, cos)`` columns of the a-th
    axis in row-major order (outermost first), ``recipe_axis[a]`` that axis's place in ``grid``."""

    order: str
    cell0: Arr
    axes: tuple[tuple[Ids, Ids], ...]
    recipe_axis: tuple[int, ...]
    per_axis: int
    #: Every column of each axis (a truncated table can leave a sin without its cos).
    columns: tuple[Ids, ...]


_PROBE = {2: (3, 5), 3: (2, 3, 5)}


#: Widest table whose grid layout is learnt: the probe holds 30 float64 rows of the table's width
#: (a 1×3,000,000 row took 1.1 GB and 3 s per order, and the layouts kept grew past 4 GB).  A 2-D
#: sincos grid is as wide as a model (ViT-22B: 6144), so wider tables are read as no grid.
MAX_LAYOUT_COLUMNS = 1 << 17
#: The layouts learnt so far, by (kind, order, width, axes): at most :data:`_LAYOUTS_KEPT`.
_LAYOUTS: dict[tuple[type[Sincos2d], str, int, int], GridLayout | None] = {}
_LAYOUTS_KEPT = 64


def grid_layout(kind: type[Sincos2d], order: str, d: int, naxes: int) -> GridLayout | None:
    """Learn an order's layout from a small table built here (so new orders need no fitting code):
    each column must be a function of one grid coordinate for one row-major arrangement.  The probe
    is built in the float64 pipeline: which coordinate a column follows does not need the exact
    values, whose frequencies cost a Decimal power each (3 s for a 300,000-wide table).  Kept for
    the next call (the oldest dropped past :data:`_LAYOUTS_KEPT`).  ``None`` past
    :data:`MAX_LAYOUT_COLUMNS` columns too."""
    if d > MAX_LAYOUT_COLUMNS:
        return None
    key = (kind, order, d, naxes)
    if key not in _LAYOUTS:
        if len(_LAYOUTS) >= _LAYOUTS_KEPT:
            del _LAYOUTS[next(iter(_LAYOUTS))]
        _LAYOUTS[key] = _learn_layout(kind, order, d, naxes)
    return _LAYOUTS[key]


def _learn_layout(kind: type[Sincos2d], order: str, d: int, naxes: int) -> GridLayout | None:
    """:func:`grid_layout`, learnt."""
    sizes = _PROBE[naxes]
    try:
        probe = kind("x".join(map(str, sizes)), d, order=order, dtype="float64", compute="float64")  # type: ignore[arg-type]
    except RecipeError:
        return None
    rows = probe.rows(0, probe.shape[0])
    cells = np.arange(rows.shape[0])
    for perm in itertools.permutations(range(naxes)):
        coords = np.unravel_index(cells, tuple(sizes[a] for a in perm))
        owner = np.full(d, -1)
        for a, c in enumerate(coords):
            # Column j depends on coordinate c only if rows with the same c hold the same value.
            first = np.array([int(np.flatnonzero(c == v)[0]) for v in range(int(c.max()) + 1)])
            same = np.all(rows == rows[first[c]], axis=0)
            owner[same & (owner == -1)] = a
        # Every column explained, and every axis seen in some column (a truncated table can drop one).
        if np.all(owner >= 0) and set(owner.tolist()) == set(range(naxes)):
            axes = []
            columns = tuple(np.flatnonzero(owner == a) for a in range(naxes))
            for cols in columns:
                sin = cols[np.abs(rows[0, cols]) < 0.5]
                cos = cols[np.abs(rows[0, cols]) >= 0.5]
                k = min(sin.size, cos.size)
                axes.append((sin[:k], cos[:k]))
            # Row 0 copied: a view would keep the whole probe (15 to 30 rows) alive with the layout.
            return GridLayout(order, rows[0].copy(), tuple(axes), tuple(perm), probe.per_axis, columns)
    return None


def _first_change(sample: Sample, first_row: int, cols: Ids, cell0: Arr, limit: int) -> int:
    """Cells after the first before the values in ``cols`` move away from the first cell's: where
    a few of them move first (an axis's first columns are its fastest in every order), then every
    column on the rows before that alone (all of a 65536-wide table's columns on every head row
    took 14 ms a call)."""
    few = _moves_after(sample, first_row, cols[:_FIRST_COLUMNS], cell0, limit)
    return _moves_after(sample, first_row, cols, cell0, min(limit, few + 1)) if cols.size > _FIRST_COLUMNS else few


#: Columns of an axis :func:`_first_change` looks at first.
_FIRST_COLUMNS = 8


def _moves_after(sample: Sample, first_row: int, cols: Ids, cell0: Arr, limit: int) -> int:
    """:func:`_first_change` on every column of ``cols``, within ``limit`` cells."""
    n = min(sample.n, first_row + limit)
    r = first_row + 1
    while r < n:
        # The sample's head first (already read), then blocks read from the table.
        stop = min(n, sample.head_rows if r < sample.head_rows else r + _SCAN_BLOCK)
        block = sample.rows(r, stop)[:, cols]
        moved = np.flatnonzero(np.max(np.abs(block - cell0[cols]), axis=1) > _CHANGED)
        if moved.size:
            return r + int(moved[0]) - first_row
        r = stop
    return n - first_row


def _leading_zero_rows(sample: Sample) -> int:
    """How many all-zero rows the table starts with (a class token, diffusers' extra tokens)."""
    return next((k for k in range(sample.n) if k not in sample.zero_rows), sample.n)


def detect_grid(sample: Sample, layout: GridLayout, prefix: int) -> tuple[int, ...] | None:
    """The grid (in the recipe's axis order) after ``prefix`` zero rows if the table is this
    layout's, else ``None``."""
    return sample.memo(("grid", layout.order, len(layout.axes), prefix), lambda: _detect(sample, layout, prefix))


def _detect(sample: Sample, layout: GridLayout, prefix: int) -> tuple[int, ...] | None:
    cells = sample.n - prefix
    first = sample.rows(prefix, prefix + 1)[0] if cells > 0 else None
    if first is None or np.max(np.abs(first - layout.cell0)) > _CHANGED:
        return None
    runs = [_first_change(sample, prefix, cols, layout.cell0, MAX_GRID_SCAN) for cols in layout.columns]
    divides = all(runs[a - 1] % runs[a] == 0 for a in range(1, len(runs))) and cells % runs[0] == 0
    sizes = [cells // runs[0]] + [runs[a - 1] // runs[a] for a in range(1, len(runs))]
    # CogVideoX's one frame (``HxW``: a time axis of 1) is the only axis that may not move.
    one_frame = layout.order == "cogvideox" and sizes[0] == 1
    if not (divides and runs[-1] == 1 and min(sizes[1:] if one_frame else sizes) >= 2):
        return None
    ordered = [0] * len(sizes)
    for a, size in enumerate(sizes):
        ordered[layout.recipe_axis[a]] = size
    return tuple(ordered)


__all__ = ["MAX_GRID_SCAN", "GridLayout", "detect_grid", "fitted", "grid_layout", "sized"]
