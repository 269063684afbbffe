"""Fitting a table back to its parameters: the pieces every kind's inverse shares.

A sinusoid's column pair ``(sin pω, cos pω)`` lies on the unit circle and its angle advances by
``ω`` per row; a lone ``cos pω`` (a RoPE cache) obeys ``c[p+k] + c[p−k] = 2·c[p]·cos kω``.
Either way each frequency is measured from the data, and a frequency rule ``ω_i = base^(−e_i)``
then gives the base by least squares.  Nothing here decides a verdict: a fitted recipe is only
a candidate until :mod:`pecli.identification` has rebuilt the table with it and compared.

>>> import numpy as np
>>> p = np.arange(64.0)
>>> omega = 10000.0 ** (-np.arange(4) / 4)
>>> rows = np.concatenate([np.sin(p[:, None] * omega), np.cos(p[:, None] * omega)], axis=1)
>>> found = pair_frequencies([(rows, p)], np.arange(4), np.arange(4, 8))
>>> round(fit_base(found, np.arange(4) / 4))
10000
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from pecli.dtypes import COMPLEX, DTYPES
from pecli.table import Table, read_rows, spread_indices, spread_windows

if TYPE_CHECKING:
    from pecli.dtypes import Arr, Ids
    from pecli.recipe import Recipe

#: ``(rows, positions)``: contiguous rows of a table and the position of each.
Window = tuple["Arr", "Arr"]

T = TypeVar("T")

#: Rows each pair is checked on before the whole window (most wrong layouts fail there).
SCREEN_ROWS = 16
#: ``|s² + c² − 1|`` above this: the two columns are not a sin/cos pair.
ON_CIRCLE = 0.01


def wrap(x: Arr) -> Arr:
    """Angles folded into ``[−π, π)``."""
    wrapped: Arr = (x + np.pi) % (2 * np.pi) - np.pi
    return wrapped


def median(values: Arr) -> float:
    """``np.median`` of ``values`` (every value; NaN if any is NaN or there are none), without
    its import of ``numpy.ma`` (13 ms of the first identify in a process, for a masked-array test
    a plain array never needs).  The middle value, or the mean of the two middle ones."""
    flat = np.asarray(values, dtype=np.float64).reshape(-1)
    if flat.size == 0 or np.isnan(flat).any():
        return math.nan
    half = flat.size // 2
    if flat.size % 2:
        return float(np.partition(flat, half)[half])
    low, high = np.partition(flat, (half - 1, half))[half - 1 : half + 1]
    with np.errstate(invalid="ignore"):  # inf and -inf: NaN, as np.median's
        return float((low + high) / 2)


def nonzero_runs(first: int, rows: Arr) -> list[Window]:
    """Runs of at least two consecutive rows that are not all zero (padding and class rows are),
    with their row indices counted from ``first``."""
    nonzero = np.any(rows != 0, axis=1)
    out = []
    edges = np.flatnonzero(np.diff(np.r_[0, nonzero.astype(np.int8), 0]))
    for a, b in zip(edges[::2], edges[1::2], strict=True):
        if b - a >= 2:
            out.append((rows[a:b], (first + np.arange(a, b)).astype(np.float64)))
    return out


def on_circle(rows: Arr, sin_cols: Ids, cos_cols: Ids, radius: float = 1.0) -> bool:
    """Whether every ``(sin, cos)`` column pair of ``rows`` lies on the circle of ``radius``: the
    first few pairs first (most tables that are not sinusoids leave the circle there), then the
    rest a piece at a time (a 3·10⁶-wide row's squares at once were 60 MB)."""
    ends = [0, min(sin_cols.size, _FIRST_PAIRS), *range(_FIRST_PAIRS + _PAIRS_AT_ONCE, sin_cols.size, _PAIRS_AT_ONCE)]
    for a, b in itertools.pairwise([*ends, sin_cols.size]):
        s, c = rows[:, sin_cols[a:b]], rows[:, cos_cols[a:b]]
        with np.errstate(invalid="ignore", over="ignore"):
            if not np.all(np.abs(s * s + c * c - radius * radius) <= ON_CIRCLE * radius * radius):
                return False
    return True


#: Pairs :func:`on_circle` checks first, then at once.
_FIRST_PAIRS, _PAIRS_AT_ONCE = 64, 1 << 16


def pair_frequencies(windows: Sequence[Window], sin_cols: Ids, cos_cols: Ids, radius: float = 1.0) -> Arr | None:
    """Each ``(sin, cos)`` column pair's angle step per position, from windows of contiguous rows;
    ``None`` when the pairs are not on the circle in the rows it reads (an estimate: callers
    prove it by rebuilding the rows).

    The mean step over the first window (``ω < π``, so each step unwraps unambiguously), refined
    against the last row of each later window: the whole turns in between are the ones the current
    estimate predicts, and the estimate sharpens as the span grows (to about ``ε/span``).
    """
    if not windows or sin_cols.size == 0 or windows[0][0].shape[0] < 2:
        return None
    if not on_circle(windows[0][0][:SCREEN_ROWS], sin_cols, cos_cols, radius):
        return None
    # The rows the estimate uses: all of the first window's, each later window's last.
    if not all(on_circle(rows[-1:], sin_cols, cos_cols, radius) for rows, _ in windows[1:]):
        return None
    if not on_circle(windows[0][0], sin_cols, cos_cols, radius):
        return None
    rows0, p_first = windows[0]
    first = np.arctan2(rows0[:, sin_cols], rows0[:, cos_cols])
    omega: Arr = wrap(np.diff(first, axis=0)).sum(axis=0) / (p_first[-1] - p_first[0])
    theta0, p0 = first[0], p_first[0]
    for rows, positions in windows[1:]:  # only each later window's last row is needed
        dp = positions[-1] - p0
        step = np.arctan2(rows[-1, sin_cols], rows[-1, cos_cols]) - theta0
        omega = (step + 2 * np.pi * np.rint((omega * dp - step) / (2 * np.pi))) / dp
    return omega


#: Rows :func:`transposed` copies at a time, and the width from which it copies so.
_TRANSPOSE_ROWS, _TRANSPOSE_FROM = 8, 256


def transposed(x: Arr) -> Arr:
    """``x.T`` as a C-contiguous copy.  A wide array is copied a few rows at a time: at once, a
    2048×1024 float64 head took 13 ms (the reads of each output row run down a column, every
    8 KB, through the same few cache sets), 8 rows at a time 4 ms.  The same values either way."""
    if x.ndim != 2 or x.shape[1] < _TRANSPOSE_FROM:
        return np.ascontiguousarray(x.T)
    out = np.empty((x.shape[1], x.shape[0]), dtype=x.dtype)
    for r0 in range(0, x.shape[0], _TRANSPOSE_ROWS):
        out[:, r0 : r0 + _TRANSPOSE_ROWS] = x[r0 : r0 + _TRANSPOSE_ROWS].T
    return out


#: Rows :func:`cosine_frequencies` checks its waves on, at most.
CHECK_ROWS = 256


def cosine_frequencies(values: Arr, lever: float = 0.01) -> Arr | None:
    """The frequency ``ω`` of each column of ``values[p] = A·cos(pω + φ)`` (a cos or sin column of
    a RoPE cache, any amplitude ``A``), rows being consecutive positions; ``None`` when a column is
    not such a wave.

    ``x[p+k] + x[p−k] = 2·x[p]·cos kω`` holds for every phase; ``cos kω`` by least squares over the
    rows, starting at ``k = 1`` and doubling ``k`` while ``kω`` stays below ``π/2``, each step taking
    the branch of ``arccos`` nearest the previous estimate (so slow columns get the lever arm they
    need).  A column whose ``k·ω`` never reaches ``lever`` radians within the rows is too slow to
    measure: NaN (its ``1 − cos kω`` is lost in the values' rounding).
    """
    x = np.asarray(values, dtype=np.float64)
    n, cols = x.shape
    if n < 3 or not np.all(np.isfinite(x)):
        return None
    omega = np.full(cols, np.nan)
    reach = np.zeros(cols)
    # A column per row, and only the columns still measured (those whose next k·ω is below π/2),
    # gathered again whenever they are down to half: fast columns finish after a few steps.
    held = np.arange(cols)
    xt = transposed(x)
    active = held
    k = 1
    while 2 * k < n and active.size:
        if 2 * active.size <= held.size:
            held, xt = active, xt[np.searchsorted(held, active)]
        mid = xt[:, k : n - k]
        dot = functools.partial(np.einsum, "ij,ij->i", mid)
        with np.errstate(invalid="ignore", divide="ignore"):
            c = (dot(xt[:, 2 * k :]) + dot(xt[:, : n - 2 * k])) / (2 * dot(mid))
        c = np.clip(c[np.searchsorted(held, active)] if held.size != active.size else c, -1.0, 1.0)
        angle = np.arccos(c)  # k·ω folded into [0, π]
        if k == 1:
            omega, reach = angle.copy(), angle.copy()
        else:
            guess = k * omega[active]
            plus = angle + 2 * np.pi * np.rint((guess - angle) / (2 * np.pi))
            minus = -angle + 2 * np.pi * np.rint((guess + angle) / (2 * np.pi))
            pick = np.where(np.abs(plus - guess) <= np.abs(minus - guess), plus, minus)
            keep = np.isfinite(pick)
            omega[active] = np.where(keep, pick / k, omega[active])
            reach[active] = np.where(keep, pick, reach[active])
        # A column is done where the next step's k·ω reaches π/2 (a NaN one fails below anyway).
        active = active[2 * k * omega[active] < np.pi / 2]
        k *= 2
    if not np.all(np.isfinite(omega)):
        return None
    # The recurrence must reproduce the rows: an amplitude and phase per column, least squares, on
    # at most CHECK_ROWS rows spread over them (a wave's two unknowns need few; the sines and
    # cosines of 2048 rows × 4096 columns took a second).
    # Columns a piece at a time: the bases and their products are ~8 copies of the rows checked
    # (a 64×65536 table's took 130 MB at once).
    checked = spread_indices(n, CHECK_ROWS)
    x = x[checked] if checked.size < n else x  # (every row: no copy)
    pos = checked.astype(np.float64)[:, None]
    scale = max(abs(float(x.max())), abs(float(x.min())), 1e-300)
    for c0 in range(0, cols, _CHECK_PIECE):
        xs, w = x[:, c0 : c0 + _CHECK_PIECE], omega[c0 : c0 + _CHECK_PIECE]
        basis_c, basis_s = np.cos(pos * w), np.sin(pos * w)
        a = np.sum(xs * basis_c, axis=0)
        b = np.sum(xs * basis_s, axis=0)
        gram = (np.sum(basis_c**2, 0), np.sum(basis_c * basis_s, 0), np.sum(basis_s**2, 0))
        det = gram[0] * gram[2] - gram[1] ** 2
        with np.errstate(invalid="ignore", divide="ignore"):
            ca = np.where(det > 0, (a * gram[2] - b * gram[1]) / det, a / np.maximum(gram[0], 1e-300))
            cb = np.where(det > 0, (b * gram[0] - a * gram[1]) / det, 0.0)
        residual = np.abs(xs - basis_c * ca - basis_s * cb).max(axis=0, initial=0.0)
        if not np.all(residual <= 1e-2 * scale):
            return None
    return np.where(reach >= lever, omega, np.nan)


#: Columns :func:`cosine_frequencies` checks at once.
_CHECK_PIECE = 4096


def fit_base(omega: Arr, exponents: Arr) -> float | None:
    """Least-squares ``base`` of ``ω_i = scale·base^(−e_i)`` where ``e_0 = 0`` fixes ``scale = ω_0``.

    Weighted by ``ω²``: the error of a measured ``ω`` is absolute, so that of ``ln ω`` is ``∝ 1/ω``.
    ``None`` when the frequencies do not fall with the exponents.
    """
    omega = np.asarray(omega, dtype=np.float64)
    e = np.asarray(exponents, dtype=np.float64)
    if omega.size < 2 or not np.all(np.isfinite(omega)) or np.any(omega <= 0) or e[0] != 0:
        return None
    x = e[1:]
    y = np.log(omega[1:] / omega[0])
    w = (omega[1:] / omega[0]) ** 2
    if not np.any(x > 0):
        return None
    log_base = -float(np.sum(w * x * y) / np.sum(w * x * x))
    return math.exp(log_base) if 0 < log_base < 700 else None


def round_base(
    estimate: float, exponents: Arr, omega: Arr, tolerance: float | Arr, span: float
) -> tuple[float, int] | None:
    """The roundest base (fewest significant digits) whose ``base^(−e)`` predicts every measured
    ``ω`` within ``tolerance`` radians over ``span`` rows, with its digit count."""
    for digits in range(1, 16):
        base = float(f"{estimate:.{digits}g}")
        if base <= 0 or base == 1:
            continue
        with np.errstate(over="ignore", under="ignore"):
            predicted = np.power(base, -np.asarray(exponents, dtype=np.float64))
        if np.all(np.abs(predicted - omega) * span <= tolerance):
            return base, digits
    return None


def start_position(
    row: Arr, row_index: int, omega: Arr, sin_cols: Ids, cos_cols: Ids, slack: float = 0.0
) -> int | None:
    """The start position (row 0's) of a table whose row ``row_index`` is ``row``, from its phases.

    Lowest frequency first, each higher one fixing the whole turns: the smallest consistent
    position ≥ 0; ``None`` if no whole position explains every phase (to 0.01 rad, and
    ``4·slack·(1 + angle)`` more for a pipeline that rounds every step to a unit of ``slack``:
    keras' bfloat16 angles are 0.1 rad off at position 100).
    """
    theta = np.arctan2(row[sin_cols], row[cos_cols])
    order = np.argsort(omega)
    p = float(np.mod(theta[order[0]], 2 * np.pi) / omega[order[0]])
    for i in order[1:]:
        turns = np.rint((p * omega[i] - theta[i]) / (2 * np.pi))
        p = float((theta[i] + 2 * np.pi * turns) / omega[i])
    position = int(np.rint(p))
    wrapped = np.angle(np.exp(1j * (theta - position * omega)))
    if position < row_index or not np.all(np.abs(wrapped) <= 1e-2 + 4 * slack * (1 + position * omega)):
        return None
    return position - row_index


# -- the sample every fitter reads -------------------------------------------------------------
def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(s for s in spans if s[0] < s[1]):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


@dataclass
class Sample:
    """Rows of a table read once for every kind's fitter: a head window (row 0 on), a tail window
    and a few windows spread in between (all rows of a short table), plus what the fitters found.

    Reads stay small whatever the table's size; a fitter that needs other rows asks :meth:`rows`.
    """

    table: Table
    spans: list[tuple[int, int]]
    values: Arr
    #: Fitters' findings in words, each with the recipes it proposed (kept if one of them wins).
    clues: dict[str, set[Recipe]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    _memo: dict[Hashable, Any] = field(default_factory=dict)

    head_rows = 64
    tail_rows = 32
    window_rows = 16
    window_count = 8
    #: Significant digits a base may have and still count as round (10000, 500000, 1.25e4).
    ROUND_DIGITS = 4
    #: How far any float32 pipeline's angle may drift, per unit of position.
    F32_ENVELOPE = 2.0**-22

    @classmethod
    def read(cls, table: Table) -> Sample:
        n, _ = table.shape
        middle = spread_windows(n, cls.window_count + 2, cls.window_rows)[1:-1]  # evenly spaced, clear of the ends
        spans = _merge([(0, min(n, cls.head_rows)), (max(0, n - cls.tail_rows), n), *middle])
        return cls(table, spans, read_rows(table, np.concatenate([np.arange(a, b) for a, b in spans])))

    def clue(self, text: str, recipe: Recipe | None = None) -> None:
        """Record what a fitter saw (with the recipe it led to, if any)."""
        found = self.clues.setdefault(text, set())
        if recipe is not None:
            found.add(recipe)

    def memo(self, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()`` once per sample (fitters of several kinds and the sizers share results)."""
        if key not in self._memo:
            self._memo[key] = compute()
        value: T = self._memo[key]
        return value

    @property
    def n(self) -> int:
        return self.table.shape[0]

    @property
    def d(self) -> int:
        return self.table.shape[1]

    @cached_property
    def dtype(self) -> str:
        """The dtype recipes fitted to the table are built in: the table's, ``bfloat16`` for
        bfloat16 storage and for float32 values that are all bfloat16 values (bfloat16 weights or
        caches saved as float32), float64 for anything wider or integral."""
        name = self.table.values_dtype
        if name == "float32":
            raw = np.asarray(self.values, dtype=np.float32)
            if raw.size and not np.any(raw.view(np.uint32) & 0xFFFF) and np.any(raw != np.rint(raw)):
                return "bfloat16"
        return name if name in DTYPES else "float64"

    def reading_notes(self) -> list[str]:
        """What identify says of how the values were read: complex numbers as their parts, or
        values of a narrower dtype than the one they were read as."""
        stored = self.table.storage
        if stored in COMPLEX:
            return [
                f"the table is stored as {stored} numbers, fitted as their (real, imaginary) parts: "
                f"pecli export RECIPE --dtype {stored} -o FILE writes a recipe's table so"
            ]
        read_as = self.table.dtype.name
        if self.dtype == read_as:
            return []
        return [f"the values are {self.dtype} (read as {read_as}): candidates are built in {self.dtype}"]

    @cached_property
    def scale(self) -> float:
        """The largest ``|value|`` sampled (1 for an all-zero sample)."""
        finite = np.abs(self.values[np.isfinite(self.values)])
        top = float(finite.max()) if finite.size else 0.0
        return top if top > 0 else 1.0

    @property
    def storage(self) -> str:
        """The precision the values really have (the same as :attr:`dtype`)."""
        return self.dtype

    @cached_property
    def eps(self) -> float:
        """The rounding unit of the values: the dtype's epsilon, or half of bfloat16's (2⁻⁸)."""
        if self.dtype == "bfloat16":
            return 2.0**-8
        return float(np.finfo(self.dtype).eps)

    def windows(self) -> list[tuple[int, Arr]]:
        """``(first row, rows)`` of every sampled span."""
        out, offset = [], 0
        for a, b in self.spans:
            out.append((a, self.values[offset : offset + b - a]))
            offset += b - a
        return out

    def rows(self, a: int, b: int) -> Arr:
        """Rows ``[a, b)``, from the sample when it holds them, else read."""
        for first, rows in self.windows():
            if first <= a and b <= first + rows.shape[0]:
                return rows[a - first : b - first]
        # Read once: the fitters of several kinds (and of a table's column groups) ask for the same rows.
        return self.memo(("rows", a, b), lambda: read_rows(self.table, np.arange(a, b)))

    @cached_property
    def zero_rows(self) -> list[int]:
        """All-zero rows among the first rows (padding rows, a class token)."""
        head = self.rows(0, min(self.n, 16))
        return [int(r) for r in np.flatnonzero(~np.any(head != 0, axis=1))]

    def angle_tolerance(self, span: float) -> float:
        """How far (rad) a measured angle may drift from a fitted frequency over ``span`` rows."""
        return self.F32_ENVELOPE * (1 + span) + 64 * self.eps

    def fit_round_base(
        self, omega: Arr, exponents: Arr, tolerance: float | Arr, span: float
    ) -> tuple[float, int] | None:
        """The roundest base of ``ω_i = base^(−e_i)`` that predicts every measured ``ω``, with its
        digits (``tolerance``: one for all, or one a frequency)."""
        if omega.size < 2 or abs(omega[0] - 1.0) > 1e-3:
            return None  # ω_0 = 1 for every base; anything else is not this rule
        estimate = fit_base(omega, exponents)
        return round_base(estimate, exponents, omega, tolerance, span) if estimate else None

    def describe(self) -> str:
        rows = sum(b - a for a, b in self.spans)
        if rows == self.n:
            return "its one row" if self.n == 1 else f"all {self.n} rows"
        between = len(self.spans) - 2
        return f"{rows} of {self.n} rows (head, tail" + (f" and {between} windows between)" if between > 0 else ")")


__all__ = [
    "Arr",
    "Ids",
    "Sample",
    "Window",
    "cosine_frequencies",
    "fit_base",
    "nonzero_runs",
    "on_circle",
    "pair_frequencies",
    "round_base",
    "start_position",
    "wrap",
]
