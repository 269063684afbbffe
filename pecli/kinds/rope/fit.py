"""The rope kind's inverse: a table's layout, part, θ, scaling and start, measured from its rows
(:func:`fit_rope`); only proposals, which identify and diff rebuild and compare."""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from pecli.dtypes import DType
from pecli.errors import RecipeError
from pecli.fitting import Sample, cosine_frequencies
from pecli.kernels.rope_scaling import SCALINGS, inv_freq_near
from pecli.kinds.rope.thetas import COMMON_THETAS, coarse_thetas, grid_thetas, odd_width, scalings
from pecli.params import round_number
from pecli.precision import held, pipeline_of
from pecli.table import spread_indices

if TYPE_CHECKING:
    from pecli.dtypes import Arr, Ids
    from pecli.kinds.rope import Rope, RopeCompute, RopeLayout, RopeOdd, RopePart

# ==================================================================================== fitting
#: Starts beyond this are not proposed (float32 positions stop being whole numbers at 2**24).
_MAX_START = 2**24
#: Whole turns of the slowest column tried for a start far from 0, and how many such starts a
#: table may leave open before none is proposed.
_MAX_TURNS, _MAX_FAR_STARTS = 4096, 4
#: Rows read from the top to measure slow frequencies (their lever arm).
FIT_ROWS = 2048
#: Candidate starts below which each is refined on its own (scalars) rather than all at once (NumPy).
_SCALAR_CANDIDATES = 16
#: Columns a start is refined through, at most: each fixes the next one's whole turns, so a chain
#: spread over the frequencies gives the start as well as every column (a 16384-wide table's 8192
#: columns, one Python step each, took 2 s), and the proof checks it on all of them.
_REFINE_COLUMNS = 256


def _layouts(d: int) -> list[tuple[RopeLayout, np.ndarray, int]]:
    """Each layout a ``d``-wide table could have: its distinct columns and the rotary dim (an odd
    ``d`` is litgpt's odd rotary dim, ``⌈d/2⌉`` frequencies with the layout's last column cut)."""
    out: list[tuple[RopeLayout, np.ndarray, int]] = []
    if d >= 4 or d == 3:
        out += [("half", np.arange((d + 1) // 2), d), ("pairs", np.arange(0, d, 2), d)]
    return [*out, ("once", np.arange(d), 2 * d)]


def _strided(cols: np.ndarray) -> slice:
    """A layout's distinct columns (evenly spaced from 0: :func:`_layouts`) as a slice, which takes
    them as a view."""
    step = int(cols[1] - cols[0]) if cols.size > 1 else 1
    return slice(0, int(cols[-1]) + 1 if cols.size else 0, step)


def _odd(dim: int) -> RopeOdd:
    """How a rotary dim that a table's width shows whole treats an odd dim: the layout cut (litgpt)."""
    return "truncate" if dim % 2 else "drop"


def _repeats(values: Arr, layout: RopeLayout) -> bool:
    """Whether the table repeats its ``⌈d/2⌉`` distinct columns as the layout says (an odd width's
    second copy one short)."""
    d = values.shape[1]
    h = (d + 1) // 2
    if layout == "half":
        return bool(np.array_equal(values[:, : d - h], values[:, h:], equal_nan=True))
    if layout == "pairs":
        return bool(np.array_equal(values[:, 0::2][:, : d // 2], values[:, 1::2], equal_nan=True))
    return True


def _rint(x: float) -> float:
    """``np.rint`` of a Python float (half to even, as ``round``; NaN and ±inf as they are)."""
    return float(round(x)) if math.isfinite(x) else x


def _start_of(head: Arr, inv: Arr, part: RopePart, amplitude: float) -> list[int]:
    """Candidate positions of row 0 from the phases of its distinct columns (cos: ``±``; sin:
    ``θ`` or ``π − θ``)."""
    if part == "angle":  # row 0 is start·inv_freq
        return [round(float(head[0, 0] / inv[0]))] if inv[0] > 0 and head[0, 0] >= 0 else []
    x = np.clip(head[0] / amplitude, -1.0, 1.0)
    theta = np.arccos(x) if part == "cos" else np.arcsin(x)
    order = np.argsort(inv)
    order = order[spread_indices(order.size, _REFINE_COLUMNS)]  # spread over the frequencies, both ends kept
    # Slowest frequency first: its phase is the position itself while p·ω < π/2.
    first = order[0]
    seeds = (
        [theta[first] / inv[first], -theta[first] / inv[first]]
        if part == "cos"
        else [
            theta[first] / inv[first],
            (math.pi - theta[first]) / inv[first],
        ]
    )
    out = []

    # The chain as Python floats: one refine is a scalar loop (NumPy scalars cost 5x as much).
    chain_w, chain_t = inv[order].tolist(), theta[order].tolist()
    chain_u = [-t for t in chain_t] if part == "cos" else [math.pi - t for t in chain_t]
    turn = 2 * math.pi

    def refine(p: float, strict: bool, first: int = 1) -> float | None:
        """A candidate position refined column by column from ``order[first]``, slowest first."""
        p = float(p)
        for w, t, u in zip(chain_w[first:], chain_t[first:], chain_u[first:], strict=True):
            pw = p * w
            one = t + turn * _rint((pw - t) / turn)  # each branch's whole turns nearest p·ω
            two = u + turn * _rint((pw - u) / turn)
            best = one if abs(one - pw) <= abs(two - pw) else two  # the first on a tie
            if abs(best - pw) > 0.5:  # the slower estimate is too rough to fix this one's turns
                if strict:
                    return None
                continue
            p = best / w
        return p

    def refine_all(p: Arr) -> list[float]:
        """:func:`refine` (strict) of many candidates: column by column for all at once while many
        remain (most fail at the first columns), then each on its own (NumPy's cost per call
        outweighs a few scalars)."""
        for k, i in enumerate(order[1:], start=1):
            if p.size <= _SCALAR_CANDIDATES:
                return [q for x in p if (q := refine(float(x), True, k)) is not None]
            w = inv[i]
            branches = (theta[i], -theta[i]) if part == "cos" else (theta[i], math.pi - theta[i])
            one, two = (b + 2 * math.pi * np.rint((p * w - b) / (2 * math.pi)) for b in branches)
            best = np.where(np.abs(one - p * w) <= np.abs(two - p * w), one, two)  # the first on a tie
            kept = np.abs(best - p * w) <= 0.5
            p = best[kept] / w
        return [float(x) for x in p]

    for seed in seeds:
        p = refine(seed, strict=False)
        if p is not None and -0.5 < p < _MAX_START:
            out.append(max(0, round(p)))
    # Rows far from 0 (a window of a long cache): the slowest column has turned past π, so each
    # whole turn of it is a seed, kept only if every faster column agrees with it.
    # Two faster columns at least must confirm a turn, and a start they cannot single out (more
    # than a few agree) is none: a narrow cache has too few columns to tell its turns apart.
    turns = min(_MAX_TURNS, int(_MAX_START * inv[first] / (2 * math.pi))) if len(order) >= 3 else 0
    k = np.arange(1, turns + 1, dtype=np.float64)[:, None]
    found = refine_all((np.array(seeds)[None, :] + 2 * math.pi * k / inv[first]).reshape(-1))
    far = {round(p) for p in found if 0 <= p < _MAX_START}
    if len(far) > _MAX_FAR_STARTS:  # (the turns were tried in order until more than a few agreed: the same)
        far = set()
    return sorted(set(out) | far)


def starts_of(recipe: Rope, sample: Sample) -> list[int]:
    """Starts at which ``recipe``'s cos, sin or angle rows would begin with the sample's row 0:
    from row 0's phases (:func:`_start_of`) with the recipe's frequencies at start 0 and, where its
    scaling has an original length, past it (LongRoPE's long factors; a table far into a long cache
    measures too few of its slow frequencies for a factor list to be fitted).  Only where the
    table's first rows repeat as the recipe's layout does (any row has phases: a learned table's
    would give starts to screen for nothing), and once per set of frequencies (presets share them)."""
    if recipe.part not in ("cos", "sin", "angle") or recipe.shape[1] != sample.d or sample.n < 1:
        return []
    head = sample.rows(0, min(sample.n, 8))
    if recipe.layout == "once" or not _repeats(head, recipe.layout):
        return []  # once: no repeat to tell a rotary cache by
    count = recipe.frequency_count
    cols = np.arange(0, 2 * count, 2) if recipe.layout == "pairs" else np.arange(count)  # each frequency's column
    row = np.asarray(head[:1], dtype=np.float64)[:, cols[cols < sample.d]]
    if not np.all(np.isfinite(row)):
        return []
    at = [replace(recipe, start=0)]
    if recipe.original_max_position_embeddings:
        at.append(replace(recipe, start=recipe.original_max_position_embeddings))
    starts: set[int] = set()
    for r in at:
        try:
            inv = np.asarray(r.inv_freq(), dtype=np.float64)[: row.shape[1]]
        except RecipeError:
            continue
        turning = inv > 0  # proportional RoPE's zero frequencies place no start
        if np.count_nonzero(turning) < 2:
            continue
        part, amplitude = r.part, r.attention_scaling()
        key = ("rope starts from row 0", recipe.layout, part, amplitude, inv.tobytes())
        starts.update(
            sample.memo(
                key,
                lambda: [s for s in _start_of(row[:, turning], inv[turning], part, amplitude) if s > 0],  # noqa: B023
            )
        )
    return sorted(starts)


def fit_rope(cls: type[Rope], sample: Sample) -> Iterator[Rope]:
    """Rotary caches whose measured frequencies the table follows: one table of one part
    (:func:`_fit_one`), or a cos table and a sin table held together (:func:`_fit_both`)."""
    yield from _fit_one(cls, sample)
    yield from _fit_both(cls, sample)


#: How a table holds its cos and sin tables together: the part, the columns of each, and in words.
_BOTH = (
    (
        "cos-sin",
        lambda d: (np.arange(d // 2), np.arange(d // 2, d)),
        "the first half of the columns is a cos table and the second half its sin table",
    ),
    (
        "cis",
        lambda d: (np.arange(0, d, 2), np.arange(1, d, 2)),
        "the even columns are cosines and each odd column the sine of the same angle",
    ),
)


def _fit_both(cls: type[Rope], sample: Sample) -> Iterator[Rope]:
    """vLLM's ``[cos | sin]`` cache and the ``(cos, sin)`` pairs of a complex ``freqs_cis`` viewed
    as real: when the two groups of columns lie on one circle (``cos² + sin²`` the same
    everywhere), the cos columns are fitted as a table of their own and each recipe found is
    proposed with the part that puts the sin table beside it."""
    from pecli.table import Table

    n, d = sample.n, sample.d
    if d < 4 or d % 2:
        return
    head = sample.rows(0, min(n, sample.head_rows))

    def one_circle(rows: Arr, cos_cols: Ids, sin_cols: Ids) -> bool:
        radius = rows[:, cos_cols] ** 2 + rows[:, sin_cols] ** 2
        slack = max(1e-3, 4 * sample.eps) * max(1.0, radius[0, 0])
        return bool(np.all(np.isfinite(radius)) and np.allclose(radius, radius[0, 0], rtol=0, atol=slack))

    for part, columns, words in _BOTH:
        cos_cols, sin_cols = columns(d)
        # Row 0 first: most tables leave the circle there already, and the whole head's radii cost
        # four copies of the head (a 64×65536 learned table's were 64 MB).
        if not one_circle(head[:1], cos_cols, sin_cols) or not one_circle(head, cos_cols, sin_cols):
            continue
        cos_table = Table(_Columns(sample, cos_cols), None, sample.table.source, {})
        cos_sample = type(sample)(cos_table, sample.spans, sample.values[:, cos_cols])
        for recipe in _fit_one(cls, cos_sample):
            if recipe.part != "cos" or (part == "cis" and recipe.layout != "once"):
                continue
            try:
                whole = replace(recipe, part=cast("RopePart", part))
            except RecipeError:
                continue
            sample.clue(f"{words}; the cos table's frequencies fit θ = {whole.base:.10g}", whole)
            yield whole


class _Columns:
    """Some columns of a sampled table, their rows read through the sample (which reads each span
    once for every fitter); an array-like for :class:`~pecli.table.Table`."""

    def __init__(self, sample: Sample, cols: np.ndarray) -> None:
        self.sample, self.cols = sample, cols
        self.shape = (sample.n, len(cols))
        self.dtype = sample.table.dtype
        # Evenly spaced columns (every _BOTH reading's) as a slice: a view, where a list of them
        # copied a 2048-row head of 512 columns once more before the reader copies it (5 ms).
        step = int(cols[1] - cols[0]) if cols.size > 1 else 1
        even = cols.size > 0 and step > 0 and np.array_equal(cols, np.arange(cols[0], cols[-1] + 1, step))
        self.take: slice | np.ndarray = slice(int(cols[0]), int(cols[-1]) + 1, step) if even else cols

    def __getitem__(self, key: slice) -> np.ndarray:
        start, stop, _ = key.indices(self.shape[0])
        return np.asarray(self.sample.rows(start, stop))[:, self.take]


def _fit_one(cls: type[Rope], sample: Sample) -> Iterator[Rope]:
    """Rotary caches whose measured frequencies the table follows.

    1. Layout: the ``d/2`` distinct columns are repeated as halves (``half``) or in pairs.
    2. Part: a single row of falling positive values is ``inv_freq``; rows linear in the position
       are ``angle``; otherwise ``cos``/``sin``, whose amplitude is the attention factor (yarn,
       longrope) and whose frequencies follow from ``x[p+k] + x[p−k] = 2·x[p]·cos kω``.
    3. The frequencies give θ and the scaling (:func:`scalings`); the phases of row 0 the start.
    Every candidate is only proposed: identify rebuilds it and compares.  ``cls`` is the kind
    (given, not imported: the kind's module imports this one).
    """
    n, d = sample.n, sample.d
    if n == 1:  # inv_freq: one row of dim/2 falling positive values
        inv = np.asarray(sample.values[0], dtype=np.float64)
        if d >= 2 and np.all(inv > 0) and np.all(np.diff(inv) <= 0):
            found = [(2 * d, params) for params in scalings(inv, 2 * d, 1, 1.0)]
            found += [(2 * d + 1, params) for params in odd_width(inv, 2 * d)]
            found += [(2 * d - 1, {**p, "odd": "truncate"}) for p in odd_width(inv, 2 * d, 2 * d - 1)]
            found += [(w, params) for w in (2 * d, 2 * d + 1) for params in grid_thetas(cls, inv, w)]
            for width, params in found:
                yield from _variants(cls, sample, {"length": 1, "dim": width, "part": "inv_freq", **params})
    if n <= 2:
        yield from _fit_short(cls, sample)
        return
    if d < 2:
        return
    top = sample.rows(0, min(n, sample.head_rows))
    first = _first_repeat(top)
    if first is not None and first < 3:
        # Positions held in 16 bits from a start past 256 repeat the first rows: too few to measure a
        # wave by, so the common θ are tried at the held start row 0's phases give.
        yield from _fit_short(cls, sample, _collapsed_computes(top[:first], sample.dtype))
    repeated = False
    for layout, cols, dim in _layouts(d):
        # Columns that repeat are half or pairs, never once.
        if not _repeats(top, layout) or (layout == "once" and repeated):
            continue
        repeated = layout != "once"
        head = sample.rows(0, min(n, FIT_ROWS))
        if not _repeats(head, layout):
            continue
        # Positions held in 16 bits repeat rows (bfloat16: 256 and 257 are one): the waves are
        # measured on the rows before the first repeat, and only such pipelines are proposed.
        repeat = _first_repeat(head)
        x = head[: repeat or None, _strided(cols)]  # a view (a 64×65536 copy was 32 MB)
        reduced = _collapsed_computes(x, sample.dtype) if repeat is not None else ()
        if "bfloat16" in reduced:
            # Angles rounded to bfloat16 are too coarse to measure a frequency by: the common θ are
            # proposed as they are, at the start row 0's phases give (0 if none; a limit,
            # docs/pipelines.md).
            waves: tuple[RopePart, ...] = ("cos", "sin")
            for theta, part, width in itertools.product(COMMON_THETAS, waves, (dim,) if dim % 2 else (dim, dim + 1)):
                spec = {
                    "length": n,
                    "dim": width,
                    "layout": layout,
                    "part": part,
                    "base": theta,
                    "compute": "bfloat16",
                    "odd": _odd(dim),
                }
                try:
                    inv = np.asarray(
                        cls(1, width, base=theta, compute="bfloat16", odd=_odd(dim)).inv_freq(), dtype=np.float64
                    )
                except RecipeError:
                    continue
                for start in _start_of(x[:1], inv, part, 1.0) or [0]:
                    yield from _variants(cls, sample, {**spec, "start": start})
        # Proportional RoPE (Gemma 4) leaves its last pairs unturned: measured without them too.
        measured = list(_turning(x, dim))  # the columns that turn, and their share
        for x, share in measured:
            # Angles grow linearly with the position; a float32 angle is rounded to 2⁻²⁴ of its size,
            # one stored in 16 bits to the storage's unit (then the slope is a least-squares one).
            coarse = max(2.0**-21, 2 * sample.eps)
            if x.shape[0] >= 3 and _linear(x, coarse * max(float(x.max()), -float(x.min()))):
                inv = (
                    (x[-1] - x[0]) / (x.shape[0] - 1)
                    if coarse == 2.0**-21
                    else np.polyfit(np.arange(x.shape[0], dtype=np.float64), x.astype(np.float64), 1)[0]
                )
                parts: list[tuple[RopePart, Arr, float]] = [("angle", inv, 1.0)] if np.all(inv > 0) else []
            else:
                omega = cosine_frequencies(x)
                if omega is None:
                    continue
                amplitude = _amplitude(x)
                parts = [("cos", omega, amplitude), ("sin", omega, amplitude)]
            for part, inv, amplitude in parts:
                wave = (
                    "rows grow linearly with the position (rotary angles)"
                    if part == "angle"
                    # One clue for both parts: the waves alone cannot tell cos from sin (row 0's phase
                    # does, per candidate), and two notes naming each would contradict each other.
                    else f"the rows are waves (cos or sin) of amplitude {amplitude:.6g}"
                )
                where = "stand once" if layout == "once" else f"repeat in the {layout} layout"
                predict = functools.partial(_inv_of, cls, dim=dim, n=n)
                widths = [(dim, params) for params in scalings(inv, dim, sample.n, amplitude, predict)]
                if repeat is None:
                    widths += [(dim, params) for params in grid_thetas(cls, inv, dim)]
                if amplitude == 1.0 and dim % 2 == 0:
                    widths += [(dim + 1, params) for params in odd_width(inv, dim)]
                if amplitude == 1.0 and layout == "once":  # litgpt's odd dim, its frequencies once
                    widths += [(dim - 1, {**p, "odd": "truncate"}) for p in odd_width(inv, dim, dim - 1)]
                if part == "angle" and coarse > 2.0**-21:
                    widths += [(w, params) for w in (dim, dim + 1) for params in coarse_thetas(inv, w, sample.eps)]
                if dim % 2:  # the whole odd width shows: litgpt's cut layout
                    widths = [(width, {**params, "odd": "truncate"}) for width, params in widths]
                if share is not None:  # the scaling's share of the frequencies, at the head's width
                    widths = [
                        (width, {**params, "scaling": _ZEROING.name, "partial_rotary_factor": share})
                        for width, params in widths
                        if width == dim and set(params) - {"base", "scaling"} <= set(_ZEROING.reads)
                    ]
                for width, params in widths:
                    for start in _start_of(
                        x, np.asarray(_inv_of(cls, params, width, n), dtype=np.float64)[: x.shape[1]], part, amplitude
                    ):
                        if share is not None and _unturned_anyway(params, x.shape[1], width, start + n, part, sample):
                            continue  # the default RoPE leaves those columns flat too: no sign of zeros
                        spec = {"length": n, "dim": width, "layout": layout, "part": part, "start": start, **params}
                        for recipe in _variants(cls, sample, spec, amplitude, reduced):
                            sample.clue(
                                f"the {len(cols)} distinct columns {where}; {wave}; their frequencies fit θ = "
                                f"{recipe.base:.10g}"
                                + (f" with {recipe.scaling} scaling" if recipe.scaling != "default" else ""),
                                recipe,
                            )
                            yield recipe


#: Rows :func:`_linear` tries first.
_LINEAR_PROBE_ROWS = 16


def _linear(x: Arr, atol: float) -> bool:
    """Whether every step between consecutive rows of ``x`` is its first step, within ``atol``
    (``np.allclose`` of the steps).  The first rows are tried alone first: a wave fails there, and
    the whole head's steps and their test are four copies of it (a 2048×1024 sinusoid's 8 ms)."""
    probe = np.diff(x[: _LINEAR_PROBE_ROWS + 1], axis=0)
    if not np.allclose(probe, probe[0], rtol=0, atol=atol):
        return False
    return bool(np.allclose(np.diff(x, axis=0), probe[0], rtol=0, atol=atol))


#: The scaling that reads the share of frequencies that turn (proportional RoPE): its other
#: parameters (a factor) combine with a measured θ; a ramp or a list does not.
_ZEROING = next(t for t in SCALINGS.values() if "partial_rotary_factor" in t.reads)


def _turning(x: Arr, dim: int) -> Iterator[tuple[Arr, float | None]]:
    """The distinct columns as measured (share None), and, when the last ones never turn (every row
    cos 1, or sin and angle 0: proportional RoPE's zero frequencies), the ones before them with the
    share ``partial_rotary_factor`` that rotates just those (the roundest with HF's
    ``int(share·dim // 2)`` equal to their count)."""
    yield x, None
    h = x.shape[1]
    flat = np.all(x == x[:1], axis=0) & ((x[0] == 0) | (x[0] == 1))
    turning = h - int(np.argmin(flat[::-1])) if not flat.all() else 0
    if x.shape[0] < 3 or not 2 <= turning < h or dim % 2:
        return
    for digits in range(1, 9):
        share = round_number(2 * turning / dim, digits)
        if 0 < share <= 1 and int(share * dim // 2) == turning:
            yield x[:, :turning], share
            return


def _unturned_anyway(params: dict[str, Any], turning: int, dim: int, end: int, part: str, sample: Sample) -> bool:
    """Whether the first column proportional RoPE leaves unturned would stay flat (within the
    values' rounding) with its default frequency ``θ^(−2·turning/dim)`` up to position ``end``: a
    short or slow cache whose last columns are 1 is then no evidence of zero frequencies."""
    reach = end * float(params["base"]) ** (-2 * turning / dim) / float(params.get("factor") or 1.0)
    return bool((reach * reach / 2 if part == "cos" else reach) <= sample.eps)


def _fit_short(cls: type[Rope], sample: Sample, pipelines: tuple[str, ...] | None = None) -> Iterator[Rope]:
    """Caches of one or two rows: too few to measure a wave's frequency by (three rows at least, for
    ``x[p+1] + x[p−1] = 2·x[p]·cos ω``).  The common θ are tried, each in every pipeline and form, at
    the start row 0's phases give with that pipeline's own ``inv_freq`` (:func:`_start_of`); an
    angle row is ``start·inv_freq`` (``ω₀ = 1``), so its own θ is measured as well.  Only
    proposals: identify rebuilds each one and compares every value.

    Also a longer table whose position ids, held in 16 bits, repeat its first rows (``pipelines``: the
    reduced ones that hold them so): row 0 is the held position, and the start is the one within
    its rounding that repeats row 0 as many times as the table does."""
    n, d = sample.n, sample.d
    row = np.asarray(sample.rows(0, 1), dtype=np.float64)
    if d < 2 or not np.all(np.isfinite(row)):
        return
    if pipelines is None and n == 1 and (zero := _position_zero(cls, sample, row)) is not None:
        yield from zero
        return
    head = np.asarray(sample.rows(0, min(n, 64)))
    run = next((k for k in range(1, len(head)) if not np.array_equal(head[k], head[0])), len(head))
    # The start is searched once per dtype the pipelines hold inv_freq in (float32 and float64 ones
    # differ by an ulp, which moves no start; a cast to float16 or bfloat16 does), then proposed in
    # each pipeline and form of the group.
    groups: dict[str, list[RopeCompute]] = {}
    for pipeline in cls.computes if pipelines is None else [c for c in cls.computes if c in pipelines]:
        held_in = pipeline_of(pipeline).frequencies
        groups.setdefault(held_in if held_in in ("float16", "bfloat16") else "float32", []).append(pipeline)
    invs: dict[tuple[Any, ...], tuple[int, Arr] | None] = {}

    def inv_of(width: int, theta: float, pipeline: RopeCompute, odd: RopeOdd) -> tuple[int, Arr] | None:
        """The count of frequencies and those a wide row is placed by (spread over them, both ends
        kept: :data:`_SHORT_COLUMNS`; a whole 3,000,000-wide row's, kept for each θ and pipeline,
        took a gigabyte, and computing it 2 s)."""
        key = (width, theta, pipeline, odd)
        if key not in invs:
            try:
                rope = cls(1, width, base=theta, compute=pipeline, odd=odd)
                count = rope.frequency_count
                invs[key] = (count, np.asarray(rope.inv_freq_at(spread_indices(count, _SHORT_COLUMNS)), np.float64))
            except RecipeError:
                invs[key] = None
        return invs[key]

    for layout, cols, dim in _layouts(d):
        if not _repeats(row, layout):
            continue
        x = row[:, cols]
        angle = bool(x[0, 0] >= 1 and np.all(x > 0) and np.all(np.diff(x[0]) < 0))
        waves: tuple[RopePart, ...] = ("cos", "sin") if np.all(np.abs(x) <= 1) else ()
        parts: tuple[RopePart, ...] = ("angle", *waves) if angle else waves
        # The layout's own dim; an even one also as an odd dim one wider (rotary-embedding-torch's) and,
        # its frequencies once, one narrower (litgpt's).
        widths: list[tuple[int, RopeOdd]] = [(dim, _odd(dim))]
        widths += [(dim + 1, "drop")] if dim % 2 == 0 else []
        widths += [(dim - 1, "truncate")] if layout == "once" else []
        for (width, odd), part in itertools.product(widths, parts):
            measured = (
                [p["base"] for p in scalings(x[0] / x[0, 0], width, n, 1.0) if p["scaling"] == "default"]
                if angle
                else []
            )
            for theta, members in itertools.product(dict.fromkeys([*measured, *COMMON_THETAS]), groups.values()):
                found = inv_of(width, theta, members[0], odd)
                if found is None or (found[0] != x.shape[1] and found[0] > _SHORT_COLUMNS):
                    continue
                # A wide row is placed by columns spread over its frequencies (proposals only: the
                # proof reads every column).
                count, inv = found
                seen = x[:, spread_indices(count, _SHORT_COLUMNS)] if count == x.shape[1] else x
                for position in _start_of(seen, inv, part, 1.0):
                    # _start_of always offers a position; only those that predict row 0 are proposed
                    # (each pipeline within its own rounding: bfloat16 angles drift 2⁻⁸ of themselves).
                    off = _row_off(seen[0], inv, part, position)
                    for compute in members:
                        held_in = pipeline_of(compute).positions
                        for start in _held_starts(position, run, held_in, len(head)):
                            if off > _short_tolerance(compute, start, sample.eps):
                                continue
                            spec = {"dim": width, "layout": layout, "part": part, "base": theta, "start": start}
                            for form in cls.forms:
                                try:
                                    dtype = cast(DType, sample.dtype)
                                    yield cls(n, **spec, odd=odd, compute=compute, form=form, dtype=dtype)
                                except RecipeError:
                                    continue


def _position_zero(cls: type[Rope], sample: Sample, row: Arr) -> list[Rope] | None:
    """A single row of 1s or of 0s: a cos or a sin table at position 0, where every θ, scaling,
    pipeline and form gives ``cos 0 = 1`` and ``sin 0 = 0`` exactly, so the row tells none of them
    apart.  One recipe per layout (θ = 10000, HF's float32 pipeline) instead of every common θ in
    every pipeline and form: those ~1000 candidates were all the same row, each built whole (a
    65536-wide row of 1s took 18 s).  ``None`` for any other row."""
    part: RopePart | None = "cos" if np.all(row == 1) else "sin" if np.all(row == 0) else None
    if part is None:
        return None
    value = 1 if part == "cos" else 0
    out = []
    for layout, _, dim in _layouts(sample.d):
        try:
            recipe = cls(
                1, dim, layout=layout, part=part, base=COMMON_THETAS[0], odd=_odd(dim), dtype=cast(DType, sample.dtype)
            )
        except RecipeError:
            continue
        sample.clue(
            f"one row of {value}s: a rotary {part} table at position 0, the same at every θ, scaling and "
            "pipeline (the row cannot tell them apart)",
            recipe,
        )
        out.append(recipe)
    return out


#: Columns a one- or two-row cache is placed by, at most (a 3,000,000-wide row took 0.1 s a candidate).
_SHORT_COLUMNS = 4096


def _held_starts(position: int, run: int, dtype: str, rows: int) -> list[int]:
    """The starts whose position ids, held in ``dtype``, give row 0 ``position`` and repeat it for
    ``run`` rows (at least, when every one of the table's ``rows`` read is row 0): ``[position]``
    where the ids are whole numbers (then rows never repeat)."""
    if dtype not in ("float16", "bfloat16"):
        return [position] if run == 1 else []
    ids = np.arange(max(0, position - 2 * _HELD_REACH), position + 2 * _HELD_REACH + run)
    values = held(ids.astype(np.float32), dtype)
    out = []
    for i in np.flatnonzero(values == position):
        length = int(np.argmin(values[i:] == position)) if not np.all(values[i:] == position) else len(ids) - i
        if length == run or (run == rows and length >= run):
            out.append(int(ids[i]))
    return out


#: How far (in positions) a 16-bit rounding may move a position id that pecli proposes a start for:
#: bfloat16 keeps 8 significant bits, so ids up to 2¹³ move by 16 at most (a table further out has
#: no start to tell by its first run of rows).
_HELD_REACH = 16


def _row_off(row: Arr, inv: Arr, part: RopePart, start: int) -> float:
    """How far ``row`` is from the part's values at ``start`` with ``inv`` (float64; relative for angles)."""
    angle = start * inv
    if part == "angle":
        return float(np.max(np.abs(angle - row) / np.maximum(1.0, np.abs(row))))
    return float(np.max(np.abs((np.cos(angle) if part == "cos" else np.sin(angle)) - row)))


def _short_tolerance(compute: str, start: int, eps: float) -> float:
    """What a pipeline's rounding and the storage's may move row 0 by at ``start``: a float32 angle
    by ``start·2⁻²³``, one held in bfloat16 by ``(1 + start)·2⁻⁸``."""
    drift = 2.0**-8 if pipeline_of(compute).angle == "bfloat16" else 2.0**-23
    return 0.01 + 4 * eps + drift * (1 + start)


def _amplitude(x: Arr) -> float:
    """The waves' amplitude: 1, unless scaled beyond float32 rounding (yarn/longrope attention
    factor).  The fastest column (ω ≈ 1 rad per row) reaches its peak within a few rows."""
    measured = float(np.abs(x[:, 0]).max())
    return 1.0 if abs(measured - 1.0) <= 1e-3 else measured


def _inv_of(cls: type[Rope], params: dict[str, Any], dim: int, n: int) -> Arr:
    """The float64 inv_freq of a candidate, for placing its start (``start = 0`` assumed for dynamic)."""
    try:
        return inv_freq_near(cls(n, dim, **{**params, "compute": "exact"}))
    except RecipeError:
        count = (dim + 1) // 2 if params.get("odd") == "truncate" else dim // 2
        out: Arr = np.power(params["base"], -np.arange(count) * 2.0 / dim)
        return out


def _first_repeat(head: Arr) -> int | None:
    """The first row equal to the row before it (positions collapsed by a 16-bit dtype), else None."""
    same = np.flatnonzero(np.all(head[1:] == head[:-1], axis=1))
    return int(same[0]) + 1 if same.size else None


def _collapsed_computes(x: Arr, dtype: str) -> tuple[str, ...]:
    """The pipelines (:mod:`pecli.precision`) that repeated rows admit: positions held in bfloat16,
    and every step in bfloat16 too when the values are bfloat16 numbers."""
    on_grid = dtype == "bfloat16" or bool(np.array_equal(held(x, "bfloat16"), x.astype(np.float32)))
    return ("positions-bfloat16", "bfloat16") if on_grid else ("positions-bfloat16",)


def _variants(
    cls: type[Rope], sample: Sample, params: dict[str, Any], amplitude: float = 1.0, reduced: tuple[str, ...] = ()
) -> Iterator[Rope]:
    """The candidate in HF's float32 pipeline and exact; when the measured amplitude is not the
    scaling's own attention factor, with the amplitude as an explicit factor, and also with the
    scaling's own when the two are within 1e-3 (the amplitude is measured to ~1e-5: LongRoPE's
    sqrt(1 + ln 4 / ln 4096) = 1.0801234 was fitted as 1.0801135 and proved "within the
    envelope", wrong from row 1 on; identify prefers the one that rebuilds the table to rounding)."""
    scaling = SCALINGS[params.get("scaling", "default")]
    # A reduced pipeline (pecli.precision) only where the rows show its tell: a cast inv_freq's own θ
    # names its pipeline; repeated rows admit the bfloat16 positions'.
    computes = (
        [params.pop("compute")]
        if "compute" in params
        else [
            *(c for c in cls.computes if not pipeline_of(c).reduced),
            *reduced,
        ]
    )
    for compute, form in itertools.product(computes, cls.forms):
        if form not in scaling.forms:
            continue  # no framework computes this scaling in that form
        try:
            recipe = cls(**params, compute=cast("RopeCompute", compute), form=form, dtype=cast(DType, sample.dtype))
        except RecipeError:
            continue  # a form goes with the float32 pipeline only
        if params.get("part") not in ("angle", "inv_freq") and not math.isclose(
            recipe.attention_scaling(), amplitude, rel_tol=1e-5
        ):
            if SCALINGS[recipe.scaling].attention is None:  # a scaling without an attention factor
                continue
            if math.isclose(recipe.attention_scaling(), amplitude, rel_tol=1e-3):
                yield recipe  # the measured amplitude may be the scaling's own, measured loosely
            try:
                recipe = replace(recipe, attention_factor=float(np.float32(amplitude)))
            except RecipeError:
                continue
        yield recipe


__all__ = ["fit_rope"]
