"""Which recipe made this table?  Fingerprint, shortlist, rebuild, score.

1. **Sample.**  A head window (row 0 on), a tail window and a few windows spread in between
   (all rows of short tables).  Reads stay small whatever the table's size.
2. **Shortlist.**  Every preset, sized to the table (``length`` so that the rows match, or a grid
   whose cells match); the recipe stored with the table, if any; and recipes *fitted* by each
   kind's fingerprint function in :data:`FITTERS`:

   - ``sinusoidal``: for each layout (and odd-width policy), are the sin/cos column pairs on the
     unit circle?  Then each pair's angle step per row (``atan2``, as ``diff`` fits a base) gives
     ``ω_i``; a least-squares fit of ``ω_i = base^(−e_i)`` for each frequency rule (paper, t2t, half)
     gives the base (the roundest number that predicts every measured step), the phases of the first
     non-zero row give the start position, all-zero rows near the top give fairseq's padding row;
     each fit is tried with the exact, float32 (exp, pow, div) and float64 pipelines.
   - ``sincos2d``: for each order, a tiny probe table built by pecli itself says which columns
     belong to which axis and which are sin or cos; the table's first cell must be the probe's
     (sin 0 = 0, cos 0 = 1); how many rows each axis's columns stay at that value gives the grid
     (the inner axis changes at once, the outer one after a whole row of the grid); a zero row 0 is
     a class token; the angles of the second cell give the temperature.

   New kinds plug in through the preset registry: each preset is sized to the table by its kind's
   entry in :data:`SIZERS` (by default a ``length`` or a ``grid``), and a kind may add a
   fingerprint function to :data:`FITTERS` for parameters no preset has.
3. **Score.**  Each candidate builds the sampled rows (``recipe.rows``); a screen on a few head and
   tail rows drops the hopeless ones cheaply.  Candidates whose sampled rows are bit-identical are
   one table with several names.  Reported: the largest ``|table − candidate|`` and the relative
   RMS ``‖table − candidate‖ / ‖candidate‖`` over the sample.
4. **Decide.**  A candidate *matches* when what is left is what rounding explains (see
   :func:`tolerances`): ``4ε`` of the table's dtype, a float64 angle's ``4·2⁻⁵³·(1 + p)``, and for
   float32 pipelines ``10⁻⁶ + 10⁻⁹·p`` (torch against pecli's float32 emulation, dialects
   reference §0), judged without the few columns whose frequency torch's float32 ``exp`` may have
   rounded the other way (:func:`spared_columns`).  It is *close* within the envelope any float32
   pipeline stays in, ``2⁻²²·(1 + p)`` (plain NumPy float32, say, whose ``exp`` and ``sin`` are not
   correctly rounded: such a table cannot tell its pipeline); beyond that the table is from
   **no known recipe**, and the nearest candidates are listed.  Confidence is
   ``1 − tolerance / (score of the nearest different table)``: near 1 when every other table is
   far off.  Candidates within rounding of the best one (exact vs float64 vs float32 pipelines on
   a short table) are not doubt about the recipe: a note says the pipeline is not determined.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from typing import Any, Literal, cast

import numpy as np
from numpy.typing import NDArray

from pecli.analysis import read_rows, sin_cos_pairs, spread_windows
from pecli.errors import PecliInputError, RecipeError
from pecli.presets import PRESETS, Preset
from pecli.recipe import DTYPES, FREQS, KINDS, LAYOUTS, ORDERS, Compute, DType, Form, Freq, Recipe, Sincos2d, Sinusoidal
from pecli.table import Table

Arr = NDArray[np.float64]
Ids = NDArray[np.intp]
Span = tuple[int, int]

HEAD_ROWS = 64
TAIL_ROWS = 32
WINDOW_ROWS = 16
WINDOWS = 8
#: Head and tail rows every candidate is screened on before the whole sample.
SCREEN_ROWS = 8
#: How far down a grid's width is looked for.
MAX_GRID_SCAN = 1 << 16
#: Rows scanned per read while looking for it.
_SCAN_BLOCK = 256
#: |value − cell-0 value| above this means an axis coordinate changed (sin 1 ≈ 0.84 at ω_0 = 1).
_CHANGED = 1e-3
#: Significant digits a base may have and still count as round (10000, 500000, 1.25e4).
_ROUND_DIGITS = 4
_F32_ENVELOPE = 2.0**-22
_ENVELOPE_CAP = 1 / 16

Verdict = Literal["match", "close", "unknown"]


# -- results ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Candidate:
    """A recipe scored against the table.

    ``names`` are every preset that builds this same table (first = the one reported), plus
    ``"stored recipe"`` when it is the recipe saved with the file; empty for a fitted recipe that
    no preset gives.  ``rows`` is how many sampled rows the residual is over (a candidate dropped
    at the screen was scored on the screen rows only).
    """

    recipe: Recipe
    names: tuple[str, ...]
    max_abs: float
    rel_rms: float
    tolerance: float
    close_tolerance: float
    rows: int
    #: ``max_abs`` without the few columns a float32 pipeline may leave off (see :func:`spared_columns`).
    score: float

    @property
    def name(self) -> str:
        """The first preset that builds this table, else the recipe's kind."""
        presets = [n for n in self.names if n in PRESETS]
        return presets[0] if presets else self.recipe.kind

    @property
    def spec(self) -> str:
        """The SOURCE operand that rebuilds the candidate (``sinusoidal:len=…,…``)."""
        from pecli.sources import recipe_spec

        return recipe_spec(self.recipe)

    @property
    def matches(self) -> bool:
        return self.score <= self.tolerance and self.max_abs <= self.close_tolerance

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "names": list(self.names),
            "recipe": self.recipe.to_metadata(),
            "spec": self.spec,
            "max_abs": _num(self.max_abs),
            "score": _num(self.score),
            "rel_rms": _num(self.rel_rms),
            "tolerance": self.tolerance,
            "rows": self.rows,
        }


@dataclass(frozen=True)
class Identification:
    """What :func:`identify` found.  ``best`` is ``None`` when no known recipe explains the table."""

    source: str
    shape: tuple[int, int]
    dtype: str
    verdict: Verdict
    best: Candidate | None
    confidence: float
    #: Other candidates that also match (a different table, but not distinguishable on this one).
    alternatives: list[Candidate]
    #: The candidates closest to the table, best first (``best`` included).
    nearest: list[Candidate]
    #: What the fingerprints showed, one sentence each.
    notes: list[str]
    sample: str
    candidates_tried: int

    @property
    def confidence_label(self) -> str:
        if self.verdict == "unknown":
            return "none"
        if self.verdict == "close" or self.confidence < 0.5:
            return "low"
        return "high" if self.confidence >= 0.9 else "medium"

    @property
    def summary(self) -> str:
        """One line: the verdict and the best candidate."""
        if self.best is None:
            near = self.nearest[0] if self.nearest else None
            tail = f"; nearest {near.name} (max |Δ| {near.max_abs:.3g})" if near else ""
            return f"no known recipe{tail}"
        b = self.best
        how = "matches" if self.verdict == "match" else "is close to"
        return (
            f"{how} {b.name}: {b.recipe.describe()} (max |Δ| {b.max_abs:.3g}, relative RMS {b.rel_rms:.3g}; "
            f"confidence {self.confidence_label})"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "shape": list(self.shape),
            "dtype": self.dtype,
            "verdict": self.verdict,
            "best": self.best.to_dict() if self.best is not None else None,
            "confidence": self.confidence,
            "confidence_label": self.confidence_label,
            "alternatives": [c.to_dict() for c in self.alternatives],
            "nearest": [c.to_dict() for c in self.nearest],
            "notes": list(self.notes),
            "sample": self.sample,
            "candidates_tried": self.candidates_tried,
        }


def _num(x: float) -> float | None:
    return x if math.isfinite(x) else None


# -- the sample ------------------------------------------------------------------------------
def _merge(spans: list[Span]) -> list[Span]:
    out: list[Span] = []
    for a, b in sorted(s for s in spans if s[0] < s[1]):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


@dataclass
class Sample:
    """The rows of the table that candidates are scored on, plus what fingerprints need."""

    table: Table
    spans: list[Span]
    values: Arr
    screen_spans: list[Span]
    notes: list[str] = field(default_factory=list)
    #: What a fingerprint showed, with the recipes it proposed (kept if one of them wins).
    clues: dict[str, set[Recipe]] = field(default_factory=dict)
    _grids: dict[tuple[str, int, bool], tuple[int, ...] | None] = field(default_factory=dict)

    @classmethod
    def read(cls, table: Table) -> Sample:
        n, _ = table.shape
        middle = spread_windows(n, WINDOWS + 2, WINDOW_ROWS)[1:-1]  # evenly spaced, clear of the ends
        spans = _merge([(0, min(n, HEAD_ROWS)), (max(0, n - TAIL_ROWS), n), *middle])
        values = np.concatenate([read_rows(table, np.arange(a, b)) for a, b in spans])
        screen = _merge([(0, min(n, SCREEN_ROWS)), (max(0, n - SCREEN_ROWS), n)])
        return cls(table, spans, values, screen)

    def clue(self, text: str, recipe: Recipe) -> None:
        self.clues.setdefault(text, set()).add(recipe)

    @property
    def n(self) -> int:
        return self.table.shape[0]

    @property
    def d(self) -> int:
        return self.table.shape[1]

    @property
    def dtype(self) -> DType:
        name = self.table.dtype.name
        return cast(DType, name) if name in DTYPES else "float64"

    @cached_property
    def scale(self) -> float:
        finite = np.abs(self.values[np.isfinite(self.values)])
        top = float(finite.max()) if finite.size else 0.0
        return top if top > 0 else 1.0

    @cached_property
    def eps(self) -> float:
        return float(np.finfo(self.dtype).eps)

    def rows(self, a: int, b: int) -> Arr:
        """Rows ``[a, b)``, from the sample when it holds them."""
        offset = 0
        for s0, s1 in self.spans:
            if s0 <= a and b <= s1:
                return self.values[offset + a - s0 : offset + b - s0]
            offset += s1 - s0
        return read_rows(self.table, np.arange(a, b))

    def screen_index(self) -> Ids:
        """Positions of the screen rows inside ``values``."""
        index: list[int] = []
        offset = 0
        for s0, s1 in self.spans:
            for a, b in self.screen_spans:
                lo, hi = max(a, s0), min(b, s1)
                if lo < hi:
                    index.extend(range(offset + lo - s0, offset + hi - s0))
            offset += s1 - s0
        return np.array(sorted(set(index)), dtype=np.intp)

    @cached_property
    def zero_rows(self) -> list[int]:
        """All-zero rows among the first rows (padding rows, a class token)."""
        head = self.rows(0, min(self.n, 16))
        return [int(r) for r in np.flatnonzero(~np.any(head != 0, axis=1))]

    def describe(self) -> str:
        rows = sum(b - a for a, b in self.spans)
        if rows == self.n:
            return f"all {self.n} rows"
        return f"{rows} of {self.n} rows (head, tail and {len(self.spans) - 2} windows between)"


# -- tolerances ------------------------------------------------------------------------------
def _max_position(recipe: Recipe, n: int) -> float:
    if isinstance(recipe, Sincos2d):
        return float(max(recipe.axes))
    return float(recipe.start + n)


def tolerances(recipe: Recipe, sample: Sample) -> tuple[float, float]:
    """``(match, close)``: the largest ``|table − candidate|`` that rounding explains.

    match: ``4ε`` of the table's dtype (one rounding of the output, with room), a float64 angle's
    error ``4·2⁻⁵³·(1 + p)``, and for a float32 pipeline ``10⁻⁶ + 10⁻⁹·p``: what torch's float32
    tables differ from pecli's emulation by (≤ 6.1e-5 at p = 10⁵ in the dialects reference).
    close: plus the envelope ``2⁻²²·(1 + p)`` of any float32 pipeline (capped at 1/16, where it
    stops saying anything).  All times the table's largest ``|value|``; p is the largest position.
    """
    p = _max_position(recipe, sample.n)
    match = 4 * sample.eps + 4 * 2.0**-53 * (1 + p)
    if getattr(recipe, "compute", "exact") == "float32":
        match += 1e-6 + 1e-9 * p
    close = match + min(_F32_ENVELOPE * (1 + p), _ENVELOPE_CAP)
    return match * sample.scale, close * sample.scale


# -- fingerprints: sinusoidal ----------------------------------------------------------------
def _interleave(a: Ids, b: Ids) -> Ids:
    return np.stack([a, b], axis=1).ravel()


def _angle_tolerance(sample: Sample, span: float) -> float:
    """How far (rad) a measured angle may drift from a fitted frequency over ``span`` rows."""
    return _F32_ENVELOPE * (1 + span) + 64 * sample.eps


def _round_base(estimate: float, exponents: Arr, omega: Arr, tolerance: float, span: float) -> tuple[float, int] | None:
    """The roundest base (fewest significant digits) whose frequencies ``base^(−e)`` predict every
    measured ``ω`` within ``tolerance`` rad over ``span`` rows; with its digit count."""
    for digits in range(1, 16):
        base = float(f"{estimate:.{digits}g}")
        if base <= 0 or base == 1:
            continue
        with np.errstate(over="ignore", under="ignore"):
            predicted = np.power(base, -exponents)
        if np.all(np.abs(predicted - omega) * span <= tolerance):
            return base, digits
    return None


def _start(row: Arr, row_index: int, omega: Arr, sin_cols: Ids, cos_cols: Ids) -> int | None:
    """The position of ``row`` from its phases: lowest frequency first, each higher one fixing
    the whole turns (the smallest consistent position ≥ 0); minus its row index."""
    theta = np.arctan2(row[sin_cols], row[cos_cols])
    order = np.argsort(omega)
    p = float(np.mod(theta[order[0]], 2 * np.pi) / omega[order[0]])
    for i in order[1:]:
        turns = np.rint((p * omega[i] - theta[i]) / (2 * np.pi))
        p = float((theta[i] + 2 * np.pi * turns) / omega[i])
    position = int(np.rint(p))
    wrapped = np.angle(np.exp(1j * (theta - position * omega)))
    if position < row_index or not np.all(np.abs(wrapped) <= 1e-2):
        return None
    return position - row_index


def _pipelines() -> list[tuple[Compute, Form]]:
    """(compute, form) pairs frameworks use: exact; float32 exp or pow; div (XLM, Marian, paper's rule only)."""
    return [("exact", "exp"), ("float32", "exp"), ("float32", "pow"), ("float32", "div"), ("float64", "div")]


def fit_sinusoidal(sample: Sample) -> Iterator[Recipe]:
    """Sinusoidal recipes that the table's sin/cos phases fit (see the module docstring)."""
    from pecli.analysis import _nonzero_runs
    from pecli.compare import _fit_base, _frequencies

    n, d = sample.n, sample.d
    if d < 4:
        return
    offset = 0
    runs = []
    for a, b in sample.spans:
        runs += _nonzero_runs(a, sample.values[offset : offset + b - a])
        offset += b - a
    if not runs:
        return
    span = float(runs[-1][1][-1] - runs[0][1][0]) or 1.0
    tol = _angle_tolerance(sample, span)
    pads: list[int | None] = [None, *sample.zero_rows[:2]]
    fits: list[tuple[int, Sinusoidal, Ids, Ids]] = []
    for layout, odd in itertools.product(LAYOUTS, ("sin",) if d % 2 == 0 else ("sin", "zero", "truncate")):
        shape = Sinusoidal(1, d, layout=layout, odd=odd)  # type: ignore[arg-type]
        sin_cols, cos_cols = sin_cos_pairs(shape)
        if odd == "zero" and np.any(sample.values[:, d - 1] != 0):
            continue
        windows = [(rows[:, _interleave(sin_cols, cos_cols)], pos) for rows, pos in runs]
        omega = _frequencies(windows, "interleaved", 2 * sin_cols.size)
        if omega is None:
            continue
        for freq in FREQS:
            try:
                rule = replace(shape, freq=cast(Freq, freq))
            except RecipeError:
                continue
            exps = [rule.exponent(i) for i in range(omega.size)]
            exponents = np.array([num / den for num, den in exps])
            # ω_i = base^(−num_i/den) is compare's base^(−2i/d') with d' = 2·den/num_1.
            estimate = _fit_base(omega, round(2 * exps[1][1] / exps[1][0]))
            rounded = _round_base(estimate, exponents, omega, tol, span) if estimate else None
            if rounded is not None:
                fits.append((rounded[1], replace(rule, base=rounded[0]), sin_cols, cos_cols))
        if not any(f[1].layout == layout for f in fits):
            steps = ", ".join(f"{w:.4g}" for w in omega[:3])
            sample.clues.setdefault(
                f"the columns pair up as sin/cos in the {layout} layout, but their angle steps per row "
                f"({steps}, …) follow no frequency rule base^(−e_i) (ω_0 must be 1)",
                set(),
            )
    # Another rule, odd policy or base can give the same ω (t2t's base is paper's base^(d/(2(half−1))),
    # truncate's is sin's base^((d+1)/d)): keep the round bases when there are any.
    if any(digits <= _ROUND_DIGITS for digits, *_ in fits):
        fits = [f for f in fits if f[0] <= _ROUND_DIGITS]
    started = []
    for _, rule, sin_cols, cos_cols in fits:
        exponents = np.array([num / den for num, den in (rule.exponent(i) for i in range(sin_cols.size))])
        start = _first_start(sample, rule.base, exponents, sin_cols, cos_cols)
        if start is not None:
            started.append((rule, start))
    for layout, start in dict.fromkeys((rule.layout, start) for rule, start in started):
        rules = [r for r, s in started if (r.layout, s) == (layout, start)]
        text = f"the columns pair up as sin/cos in the {layout} layout (row 0 is position {start}); " + (
            "their angle steps fit "
            + ", ".join(f"freq={r.freq} base {r.base:g}" + (f" odd={r.odd}" if d % 2 else "") for r in rules)
        )
        for rule, pad, (compute, form) in itertools.product(rules, pads, _pipelines()):
            if form == "div" and rule.freq != "paper":
                continue
            try:
                recipe = replace(
                    rule,
                    length=n - (0 if pad is None else pad + 1),
                    start=start,
                    dtype=sample.dtype,
                    padding_idx=pad,
                    compute=compute,
                    form=form,
                )
            except RecipeError:
                continue
            sample.clue(text, recipe)
            yield recipe


def _first_start(sample: Sample, base: float, exponents: Arr, sin_cols: Ids, cos_cols: Ids) -> int | None:
    head = sample.rows(0, min(sample.n, 16))
    nonzero = np.flatnonzero(np.any(head != 0, axis=1))
    if not nonzero.size:
        return None
    r = int(nonzero[0])
    return _start(head[r], r, np.power(base, -exponents), sin_cols, cos_cols)


# -- fingerprints: sincos2d ------------------------------------------------------------------
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


def grid_layout(order: str, d: int, naxes: int) -> GridLayout | None:
    """Learn an order's layout from a small table pecli builds (so new orders need no code here):
    each column must be a function of one grid coordinate for one row-major arrangement."""
    sizes = _PROBE[naxes]
    try:
        probe = Sincos2d("x".join(map(str, sizes)), d, order=order, dtype="float64")  # type: ignore[arg-type]
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
            return GridLayout(order, rows[0], tuple(axes), tuple(perm), probe.per_axis, columns)
    return None


def _first_change(sample: Sample, first_row: int, cols: Ids, cell0: Arr, limit: int) -> int:
    """Cells after the first before the values in ``cols`` move away from the first cell's."""
    n = min(sample.n, first_row + limit)
    r = first_row + 1
    while r < n:
        # The sample's head first (already read), then blocks read from the table.
        stop = min(n, HEAD_ROWS if r < HEAD_ROWS else r + _SCAN_BLOCK)
        block = sample.rows(r, stop)[:, cols]
        moved = np.flatnonzero(np.max(np.abs(block - cell0[cols]), axis=1) > _CHANGED)
        if moved.size:
            return r + int(moved[0]) - first_row
        r = stop
    return n - first_row


def detect_grid(sample: Sample, layout: GridLayout, cls: bool) -> tuple[int, ...] | None:
    """The grid (in the recipe's axis order) if the table is this layout's, else ``None``."""
    key = (layout.order, len(layout.axes), cls)
    if key in sample._grids:
        return sample._grids[key]
    found: tuple[int, ...] | None = None
    cells = sample.n - int(cls)
    first = sample.rows(int(cls), int(cls) + 1)[0] if cells > 0 else None
    if first is not None and np.max(np.abs(first - layout.cell0)) <= _CHANGED:
        runs = [_first_change(sample, int(cls), cols, layout.cell0, MAX_GRID_SCAN) for cols in layout.columns]
        divides = all(runs[a - 1] % runs[a] == 0 for a in range(1, len(runs))) and cells % runs[0] == 0
        sizes = [cells // runs[0]] + [runs[a - 1] // runs[a] for a in range(1, len(runs))]
        if divides and runs[-1] == 1 and min(sizes) >= 2:
            ordered = [0] * len(sizes)
            for a, size in enumerate(sizes):
                ordered[layout.recipe_axis[a]] = size
            found = tuple(ordered)
    sample._grids[key] = found
    return found


def fit_grid(sample: Sample) -> Iterator[Recipe]:
    """Sincos2d recipes whose first cell, grid and temperature the table fits."""
    from pecli.compare import _fit_base

    d = sample.d
    for order, naxes, cls in itertools.product(ORDERS, (2, 3), (False, True)):
        if (naxes == 3 and order != "tatp") or (cls and 0 not in sample.zero_rows):
            continue
        layout = grid_layout(order, d, naxes)
        grid = detect_grid(sample, layout, cls) if layout is not None else None
        if layout is None or grid is None:
            continue
        text = "x".join(map(str, grid))
        clue = f"the rows form a {text} grid in the {order} order" + (" after a zero class row" if cls else "")
        # The second cell is one step along the innermost axis: its angles are ω_k themselves.
        sin, cos = layout.axes[-1]
        second = sample.rows(int(cls) + 1, int(cls) + 2)[0]
        omega = np.arctan2(second[sin], second[cos])
        exponents = np.arange(omega.size) / layout.per_axis
        estimate = _fit_base(omega, 2 * layout.per_axis) if omega.size >= 2 else None
        rounded = _round_base(estimate, exponents, omega, _angle_tolerance(sample, 1.0), 1.0) if estimate else None
        bases = sorted({10000.0} | ({rounded[0]} if rounded else set()))
        for base, compute in itertools.product(bases, ("exact", "float64", "float32")):
            try:
                recipe = Sincos2d(text, d, base, order, cls, sample.dtype, compute)  # type: ignore[arg-type]
            except RecipeError:
                continue
            sample.clue(f"{clue}; its second cell's angles fit base {base:g}" if base != 10000 else clue, recipe)
            yield recipe


#: Kind → function proposing recipes of that kind fitted to the sample (presets are tried anyway).
FITTERS: dict[str, Callable[[Sample], Iterator[Recipe]]] = {"sinusoidal": fit_sinusoidal, "sincos2d": fit_grid}


# -- presets, sized to the table ---------------------------------------------------------------
Sizer = Callable[[Preset, Sample], Iterable[dict[str, Any]]]


def size_by_fields(preset: Preset, sample: Sample) -> Iterator[dict[str, Any]]:
    """The default sizer: a ``grid`` (the detected one, the preset's own, a square or cube) for
    kinds that have one, else the ``length`` that gives the table's rows (padding rows included)."""
    names = {f.name for f in fields(KINDS[preset.kind])}
    if "grid" in names:
        yield from ({"grid": g} for g in _preset_grids(preset, sample))
    elif "length" in names:
        try:
            extra = preset.recipe(**_common(preset, sample, length=sample.n)).shape[0] - sample.n
        except RecipeError:
            return
        if sample.n - extra >= 1:
            yield {"length": sample.n - extra}


def _size_alibi(preset: Preset, sample: Sample) -> Iterator[dict[str, Any]]:
    # Slopes are one row of `heads`; a bias table is (heads, length).
    yield {"heads": sample.d}
    yield {"heads": sample.n, "length": sample.d}


#: Kind → the sizes to try a preset at (kinds not listed: :func:`size_by_fields`).
SIZERS: dict[str, Sizer] = {"alibi": _size_alibi}


def _common(preset: Preset, sample: Sample, **size: Any) -> dict[str, Any]:
    """``size`` plus the table's width and dtype, for the parameters the preset's kind has."""
    names = {f.name for f in fields(KINDS[preset.kind])}
    wanted = {"dim": sample.d, "dtype": sample.dtype, **size}
    return {k: v for k, v in wanted.items() if k in names}


def preset_recipes(preset: Preset, sample: Sample) -> Iterator[Recipe]:
    """The preset's recipe at each size its kind's sizer proposes that gives the table's shape."""
    for size in SIZERS.get(preset.kind, size_by_fields)(preset, sample):
        try:
            recipe = preset.recipe(**_common(preset, sample, **size))
        except RecipeError:
            continue
        if recipe.shape == sample.table.shape:
            yield recipe


def _preset_grids(preset: Preset, sample: Sample) -> list[str]:
    params = {**preset.size, **preset.params}
    default = str(params.get("grid", ""))
    naxes = default.count("x") + 1
    cls = bool(params.get("cls", False))
    cells = sample.n - int(cls)
    grids: list[str] = []
    layout = grid_layout(str(params.get("order", "mae")), sample.d, naxes)
    found = detect_grid(sample, layout, cls) if layout is not None else None
    if found is not None:
        grids.append("x".join(map(str, found)))
    if math.prod(int(s) for s in default.split("x")) == cells:
        grids.append(default)
    side = round(cells ** (1 / naxes))
    if side**naxes == cells:
        grids.append("x".join([str(side)] * naxes))
    return list(dict.fromkeys(grids))


# -- scoring ---------------------------------------------------------------------------------
@dataclass
class _Scored:
    recipe: Recipe
    names: list[str]
    rank: int  # proposal order: presets first, in registry order
    max_abs: float = math.inf
    score: float = math.inf
    rel_rms: float = math.inf
    rows: int = 0
    digest: str = ""
    built: Arr | None = None  # the whole sample, when it was built


def _try_build(recipe: Recipe, spans: list[Span]) -> Arr | None:
    """The candidate's rows at ``spans``; ``None`` if it cannot be built at this shape."""
    try:
        return np.concatenate([np.asarray(recipe.rows(a, b), dtype=np.float64) for a, b in spans])
    except Exception:  # a candidate that fails to build (any kind's bug) must not stop the others
        return None


def spared_columns(recipe: Recipe, d: int) -> int:
    """Columns a float32 pipeline may leave off by more than rounding: 2·⌈d/100⌉ (none below 32).

    torch's float32 ``exp``/``pow`` is off by an ulp for a few frequencies (1 of 128 for fairseq's
    d = 256, 6 of 640 for Whisper's 1280), which moves those sin and cos columns by ``p·ulp(ω)``,
    up to 6e-5 at p = 1024.  pecli's emulation cannot know which, so a float32 candidate is judged
    without its worst few columns (their difference must still stay in the float32 envelope).
    """
    return 2 * math.ceil(d / 100) if getattr(recipe, "compute", "exact") == "float32" and d >= 32 else 0


def _score(s: _Scored, table_rows: Arr, built: Arr) -> None:
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(table_rows - built)
        diff[~np.isfinite(diff)] = np.inf
        per_column = diff.max(axis=0) if diff.size else np.zeros(1)
        s.max_abs = float(per_column.max())
        spare = min(spared_columns(s.recipe, per_column.size), per_column.size - 1)
        s.score = float(np.partition(per_column, per_column.size - 1 - spare)[per_column.size - 1 - spare])
        norm = float(np.sqrt(np.sum(built * built)))
        rms = float(np.sqrt(np.sum(diff * diff)))
    s.rel_rms = rms / norm if norm > 0 else (0.0 if rms == 0 else math.inf)
    s.rows = built.shape[0]
    s.digest = hashlib.blake2b(np.ascontiguousarray(built).tobytes(), digest_size=16).hexdigest()


def _proposals(sample: Sample) -> list[_Scored]:
    found: dict[Recipe, _Scored] = {}

    def add(recipe: Recipe, name: str | None) -> None:
        entry = found.setdefault(recipe, _Scored(recipe, [], len(found)))
        if name is not None and name not in entry.names:
            entry.names.append(name)

    presets = [(p, r) for p in PRESETS.values() for r in preset_recipes(p, sample)]
    for preset, recipe in presets:
        add(recipe, preset.name)
    stored = sample.table.recipe
    if stored is not None and stored.shape == sample.table.shape:
        add(stored, "stored recipe")
    fitted = [r for fitter in FITTERS.values() for r in fitter(sample)]
    # A preset read from row `start` on (HF's past_key_values_length): presets fix no start, so
    # each start the phases showed is tried on every preset that has one.
    starts = {s for r in fitted if (s := getattr(r, "start", 0))}
    for (preset, recipe), start in itertools.product(presets, sorted(starts)):
        if "start" in {f.name for f in fields(recipe)} and getattr(recipe, "padding_idx", None) is None:
            try:
                add(replace(recipe, start=start), preset.name)
            except RecipeError:
                pass
    for recipe in fitted:
        add(recipe, None)
    return list(found.values())


def identify(table: Table, *, nearest: int = 5) -> Identification:
    """Which recipe (preset or fitted parameters) made ``table``, how sure, and the nearest others."""
    n, d = table.shape
    if n == 0 or d == 0:
        raise PecliInputError(f"{table.source} is empty ({n}×{d}): there is nothing to identify")
    sample = Sample.read(table)
    proposals = _proposals(sample)
    screen_rows = sample.values[sample.screen_index()]
    for p in proposals:
        built = _try_build(p.recipe, sample.screen_spans)
        if built is not None:
            _score(p, screen_rows, built)
    # Everything that could still be "close", and the best few whatever they score, get the whole sample.
    for i, p in enumerate(sorted(proposals, key=lambda p: (p.score, p.rank))):
        if p.digest and (i < nearest or p.score <= tolerances(p.recipe, sample)[1]):
            p.built = _try_build(p.recipe, sample.spans)
            if p.built is not None:
                _score(p, sample.values, p.built)
    groups = _merge_identical(proposals)
    groups.sort(key=lambda g: (g[0].score, not any(x in PRESETS for x in g[0].names), g[0].rank))
    candidates = [_candidate(g, sample) for g in groups]
    verdict, confidence = _decide(groups, candidates, sample)
    _stored_note(sample, candidates)
    winners = {m.recipe for m in groups[0]} if verdict != "unknown" else None
    clues = [text for text, recipes in sample.clues.items() if winners is None or recipes & winners]
    return Identification(
        source=table.source,
        shape=(n, d),
        dtype=table.dtype.name,
        verdict=verdict,
        best=candidates[0] if verdict != "unknown" else None,
        confidence=confidence,
        alternatives=[c for c in candidates[1:] if c.matches] if verdict == "match" else [],
        nearest=candidates[:nearest],
        notes=clues + sample.notes,
        sample=sample.describe(),
        candidates_tried=len(proposals),
    )


def _decide(groups: list[list[_Scored]], candidates: list[Candidate], sample: Sample) -> tuple[Verdict, float]:
    """The verdict on the best candidate and the confidence in it (see the module docstring)."""
    if not candidates:
        return "unknown", 0.0
    best = candidates[0]
    if best.matches:
        verdict: Verdict = "match"
    elif best.score <= best.close_tolerance:
        verdict = "close"
    else:
        return "unknown", 0.0
    # The runner-up is the nearest *different* table: candidates within rounding of the best one
    # differ only in how it was computed, which is reported apart (a note), not as doubt.
    same = [_distance(groups[0][0], g[0]) <= best.close_tolerance for g in groups[1:]]
    runner = min((c.score for c, s in zip(candidates[1:], same, strict=True) if not s), default=math.inf)
    bound = best.tolerance if verdict == "match" else best.close_tolerance
    confidence = max(0.0, 1.0 - bound / runner) if runner > 0 else 0.0
    twins = [c for c, s in zip(candidates[1:], same, strict=True) if s and c.matches]
    if twins:
        sample.notes.append(
            "the pipeline is not determined at this length: "
            + ", ".join(f"{c.name} ({_pipeline(c.recipe)})" for c in twins[:4])
            + f" also match{'es' if len(twins) == 1 else ''} within rounding"
        )
    return verdict, min(confidence, 0.49) if verdict == "close" else confidence


def _pipeline(recipe: Recipe) -> str:
    compute = getattr(recipe, "compute", "exact")
    form = getattr(recipe, "form", None)
    return compute if compute == "exact" or form is None else f"{compute} {form}"


def _distance(a: _Scored, b: _Scored) -> float:
    """Largest difference between two candidates' sampled rows (∞ unless both were built whole)."""
    if a.built is None or b.built is None:
        return math.inf
    with np.errstate(invalid="ignore"):
        return float(np.nanmax(np.abs(a.built - b.built)))


def _merge_identical(proposals: list[_Scored]) -> list[list[_Scored]]:
    """Proposals grouped by their sampled rows: one group per distinct table, preset-named first."""
    groups: dict[tuple[str, int], list[_Scored]] = {}
    for p in proposals:
        if p.digest:
            groups.setdefault((p.digest, p.rows), []).append(p)
    out = list(groups.values())
    for members in out:
        members.sort(key=lambda p: (not any(x in PRESETS for x in p.names), p.rank))
    return out


def _candidate(group: list[_Scored], sample: Sample) -> Candidate:
    head = group[0]
    names = tuple(dict.fromkeys(x for m in group for x in m.names))
    match, close = tolerances(head.recipe, sample)
    return Candidate(head.recipe, names, head.max_abs, head.rel_rms, match, close, head.rows, head.score)


def _stored_note(sample: Sample, candidates: list[Candidate]) -> None:
    stored = [c for c in candidates if "stored recipe" in c.names]
    if not stored:
        return
    c = stored[0]
    if c.matches:
        sample.notes.append("the data agrees with the recipe stored in the file")
    else:
        sample.notes.append(f"the data does NOT match the recipe stored in the file (max |Δ| {c.max_abs:.3g})")


__all__ = [
    "FITTERS",
    "SIZERS",
    "Candidate",
    "GridLayout",
    "Identification",
    "Sample",
    "detect_grid",
    "fit_grid",
    "fit_sinusoidal",
    "grid_layout",
    "identify",
    "preset_recipes",
    "size_by_fields",
    "tolerances",
]
