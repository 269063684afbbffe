"""Looking at a table: a down-sampled picture, the long-range decay, the relative-position
property and the wavelength of every column.  NumPy only; every function reads row ranges, never
a whole table, so files larger than memory work.

- :func:`heatmap_sample`: every s-th row and column (the stride is stated), for a picture.
- :func:`decay`: mean dot product and cosine similarity of ``PE(p)`` with ``PE(p+k)`` against
  ``k`` (the long-range decay TENER, Yan et al. 2019, plots for sinusoids).
- :func:`relative_residual`: how well ``PE(p+k)`` is a *linear* function of ``PE(p)`` (Vaswani et al. 2017, §3.5's
  claim): exact sinusoids leave a residual at rounding level, learned or random tables a large one.
- :func:`wavelengths` of a recipe's columns (``2π/ω``) and :func:`estimate_wavelengths` of a
  table's, measured from its data.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, get_args

import numpy as np
from numpy.typing import NDArray

from pecli.dtypes import json_number
from pecli.errors import PecliInputError
from pecli.fitting import nonzero_runs, pair_frequencies
from pecli.kinds.sinusoidal import Layout, Sinusoidal
from pecli.recipe import Recipe
from pecli.table import BLOCK_BYTES, Table, read_rows, spread_windows

if TYPE_CHECKING:
    from pecli.dtypes import Arr, Ids


#: Base positions p that :func:`decay` averages over when it samples a long table.
DECAY_POSITIONS = 2048
#: Rows per sampled window (contiguous, so that p and p + k come from one read).
WINDOW = 256
#: Most rows :func:`relative_residual` fits on (its SVD costs rows·dim²).
FIT_ROWS = 4096


def _ordinal(k: int) -> str:
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


def _positive(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise PecliInputError(f"{name} must be a whole number ≥ 1, got {value!r}")
    return int(value)


# -- heatmap ---------------------------------------------------------------------------------
class HeatmapSample(NamedTuple):
    """What a heatmap shows: ``values[i, j]`` is row ``row_ids[i]``, column ``col_ids[j]``."""

    values: Arr
    row_ids: Ids
    col_ids: Ids
    description: str


def heatmap_sample(table: Table, max_rows: int = 512, max_cols: int = 512) -> HeatmapSample:
    """At most ``max_rows`` × ``max_cols`` values of ``table``, by striding: every s-th row and
    every t-th column from the first.  Only the sampled rows are read.

    A table whose recipe interleaves sin and cos columns (sin, cos, sin, cos, …) is sampled by
    frequency: every t-th pair, its sin columns first and then its cos columns, so that the
    picture does not alternate between the two.  Otherwise a column stride is made odd when it
    would be even, so a table of unknown layout keeps both kinds of column.
    """
    max_rows, max_cols = _positive("max_rows", max_rows), _positive("max_cols", max_cols)
    n, d = table.shape
    rs = max(1, math.ceil(n / max_rows))
    cs = max(1, math.ceil(d / max_cols))
    row_ids = np.arange(0, n, rs, dtype=np.intp)
    pairs = table.recipe is not None and table.recipe.paired_columns()
    if cs > 1 and pairs:
        every = max(1, math.ceil((d // 2) / max(1, max_cols // 2)))  # pairs: both columns of each fit
        cs = 2 * every
        sin_ids = np.arange(0, d - 1, cs, dtype=np.intp)
        col_ids = np.concatenate([sin_ids, sin_ids + 1])
        cols_text = (
            f"every {_ordinal(every)} sin/cos pair ({col_ids.size} of {d} dims): its first columns, then its second"
        )
    else:
        if cs > 1 and cs % 2 == 0:
            cs += 1
        col_ids = np.arange(0, d, cs, dtype=np.intp)
        cols_text = f"all {d} dims" if cs == 1 else f"every {_ordinal(cs)} dim ({col_ids.size} of {d})"
    values = read_rows(table, row_ids, None if cs == 1 else col_ids)
    rows_text = f"all {n} positions" if rs == 1 else f"every {_ordinal(rs)} position ({row_ids.size} of {n})"
    return HeatmapSample(values, row_ids, col_ids, f"{rows_text}, {cols_text}")


# -- pairs (p, p + k) --------------------------------------------------------------------------
def _base_positions(n: int, max_k: int, positions: Sequence[int] | Ids | None, most: int) -> tuple[Ids, str]:
    """The rows p to average over (p + max_k must be a row too) and a sentence saying which."""
    usable = n - max_k
    if positions is not None:
        p = np.unique(np.asarray(positions, dtype=np.intp))
        if p.size == 0 or p[0] < 0 or p[-1] >= usable:
            raise PecliInputError(
                f"positions must be rows 0..{usable - 1} (so that p + {max_k} is a row of the {n}-row table)"
            )
        return p, f"{p.size} given positions"
    if usable <= most:
        return np.arange(usable, dtype=np.intp), f"every p in 0..{usable - 1}"
    windows = spread_windows(usable, max(1, most // WINDOW), WINDOW)
    p = np.concatenate([np.arange(a, b, dtype=np.intp) for a, b in windows])
    return p, f"{p.size} of the {usable} positions p, in {len(windows)} windows of {WINDOW} spread over the table"


def _groups(p: Ids) -> list[Ids]:
    """Sorted rows p cut into groups spanning fewer than :data:`WINDOW` rows."""
    out: list[Ids] = []
    i = 0
    while i < p.size:
        j = int(np.searchsorted(p, p[i] + WINDOW, side="left"))
        out.append(p[i:j])
        i = j
    return out


def _check_k(n: int, max_k: int) -> int:
    max_k = int(max_k) if isinstance(max_k, (int, np.integer)) and not isinstance(max_k, bool) else -1
    if not 0 <= max_k < n:
        raise PecliInputError(f"k must be in 0..{n - 1} for a table of {n} rows, got {max_k}")
    return max_k


@dataclass(frozen=True)
class Decay:
    """Mean ``PE(p)·PE(p+k)`` and mean cosine similarity, for ``k = 0..max_k``."""

    k: NDArray[np.int64]
    dot: Arr
    cosine: Arr
    #: How many pairs each mean is over (cosines skip all-zero rows, e.g. padding rows).
    pairs: int
    sample: str

    def to_dict(self) -> dict[str, Any]:
        num = json_number
        return {
            "k": [int(k) for k in self.k],
            "dot": [num(x) for x in self.dot],
            "cosine": [num(x) for x in self.cosine],
            "pairs": self.pairs,
            "sample": self.sample,
        }


def default_max_k(rows: int) -> int:
    """The decay's default largest offset: min(rows / 2, 512), so every k averages over at least
    half the positions."""
    return max(1, min(rows // 2, 512))


def decay(table: Table, max_k: int, positions: Sequence[int] | Ids | None = None) -> Decay:
    """The long-range decay (TENER, Yan et al. 2019): for each ``k ≤ max_k`` the mean over p of ``PE(p)·PE(p+k)`` and
    of ``cos∠(PE(p), PE(p+k))``.

    ``positions`` are the rows p to average over; by default every p with ``p + max_k`` in the
    table, or :data:`DECAY_POSITIONS` of them in windows spread over a longer table.  Each group of
    nearby p is one read and one matrix product (Gram matrix of the rows p against the rows
    ``p..p+max_k``), so memory stays at a few blocks whatever the table's length.
    """
    n, d = table.shape
    max_k = _check_k(n, max_k)
    p, text = _base_positions(n, max_k, positions, DECAY_POSITIONS)
    ks = np.arange(max_k + 1)
    dot_sum = np.zeros(max_k + 1)
    cos_sum = np.zeros(max_k + 1)
    cos_count = np.zeros(max_k + 1)
    # Shifts are taken in chunks so that a read never exceeds WINDOW + chunk rows.
    chunk = max(WINDOW, BLOCK_BYTES // max(1, 8 * d) - WINDOW)
    with np.errstate(invalid="ignore", over="ignore"):
        for group in _groups(p):
            first, last = int(group[0]), int(group[-1])
            base = read_rows(table, group)
            base_norm = np.sqrt(np.einsum("ij,ij->i", base, base))
            offset = group - first
            for k0 in range(0, max_k + 1, chunk):
                k1 = min(max_k + 1, k0 + chunk)
                later = read_rows(table, np.arange(first + k0, last + k1))  # rows p + k for k in [k0, k1)
                later_norm = np.sqrt(np.einsum("ij,ij->i", later, later))
                at = offset[:, None] + np.arange(k1 - k0)[None, :]
                dots = (base @ later.T)[np.arange(group.size)[:, None], at]
                denom = base_norm[:, None] * later_norm[at]
                nonzero = denom > 0
                dot_sum[k0:k1] += dots.sum(axis=0)
                cos_sum[k0:k1] += np.where(nonzero, dots / np.where(nonzero, denom, 1.0), 0.0).sum(axis=0)
                cos_count[k0:k1] += nonzero.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        cosine = np.where(cos_count > 0, cos_sum / np.maximum(cos_count, 1), np.nan)
    return Decay(ks.astype(np.int64), dot_sum / p.size, cosine, int(p.size), text)


@dataclass(frozen=True)
class Residuals:
    """Per k, ``‖PE(p+k) − R_k·PE(p)‖_F / ‖PE(p+k)‖_F`` for the least-squares ``R_k``."""

    k: NDArray[np.int64]
    residual: Arr
    #: Rows p the maps were fitted on, and the numerical rank of those rows.
    rows: int
    rank: int
    sample: str
    #: ``R_k`` (dim × dim, acting on column vectors) when asked for with ``maps=True``.
    maps: list[Arr] | None = None
    #: Why no map could be fitted (the rows hold NaN or Inf), or None; the residuals are then NaN.
    unfitted: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "k": [int(k) for k in self.k],
            "residual": [json_number(x) for x in self.residual],
            "rows": self.rows,
            "rank": self.rank,
            "sample": self.sample,
            "unfitted": self.unfitted,
        }


def relative_residual(
    table: Table, ks: Sequence[int], *, positions: Sequence[int] | Ids | None = None, maps: bool = False
) -> Residuals:
    """Vaswani et al. 2017 §3.5's claim, measured: is ``PE(p+k)`` a linear function of ``PE(p)``?

    For each k, ``R_k`` minimises ``Σ_p ‖PE(p+k) − R_k·PE(p)‖²`` over the sampled rows p (the same p
    for every k: by default up to ``max(3·dim, 512)`` of them, at most :data:`FIT_ROWS`, spread
    over the table).  One SVD of the rows ``PE(p)`` serves every k: the best fit of ``PE(p+k)`` is
    its projection on their column space (singular values below ``ε·max(rows, dim)·σ_max`` count as
    zero, as in ``numpy.linalg.lstsq``).  An exact sinusoidal table leaves a residual at rounding
    level (a rotation by ``k·ω_i`` in each sin/cos plane maps ``PE(p)`` to ``PE(p+k)``); a random
    one leaves about ``√(1 − dim/rows)``.  With fewer than ``2·dim`` rows a linear map would fit
    almost any table, so that is refused.
    """
    n, d = table.shape
    k_arr = np.array(sorted({_check_k(n, k) for k in ks}), dtype=np.intp)
    if k_arr.size == 0:
        raise PecliInputError("give at least one k")
    top = int(k_arr[-1])
    want = min(FIT_ROWS, max(3 * d, 512))
    p, text = _base_positions(n, top, positions, want)
    if p.size < 2 * d:
        raise PecliInputError(
            f"the linear fit needs at least 2·dim = {2 * d} positions p with p + {top} in the table, "
            f"but there are {p.size}: with fewer rows than that a linear map fits almost any table"
        )
    x = read_rows(table, p)
    if not np.isfinite(x).all():  # no least-squares map exists, and the SVD would not converge
        why = "the rows hold NaN or Inf: no linear map can be fitted"
        return Residuals(
            k_arr.astype(np.int64), np.full(k_arr.size, np.nan), int(p.size), 0, text, [] if maps else None, why
        )
    u, s, vt = np.linalg.svd(x, full_matrices=False)
    cut = s[0] * max(x.shape) * np.finfo(np.float64).eps if s.size and s[0] > 0 else 0.0
    rank = int(np.sum(s > cut))
    if rank == 0:  # every sampled PE(p) is zero: R_k·0 = 0 says nothing of PE(p+k)
        why = "the rows are all zero: no linear map can be fitted"
        return Residuals(
            k_arr.astype(np.int64), np.full(k_arr.size, np.nan), int(p.size), 0, text, [] if maps else None, why
        )
    u_r = u[:, :rank]
    residual = np.empty(k_arr.size)
    found: list[Arr] = []
    for idx, k in enumerate(k_arr):
        y = read_rows(table, p + k)
        if not np.isfinite(y).all():  # PE(p+k) is not a number somewhere: no residual to measure
            residual[idx] = np.nan
            if maps:
                found.append(np.full((d, d), np.nan))
            continue
        coef = u_r.T @ y
        norm = float(np.linalg.norm(y))
        residual[idx] = float(np.linalg.norm(y - u_r @ coef)) / norm if norm > 0 else np.nan  # 0/0: unmeasured
        if maps:
            # X = U S Vᵀ  ⇒  Rᵀ = V S⁻¹ Uᵀ Y, and PE(p+k) ≈ R·PE(p) for column vectors.
            found.append((vt[:rank].T @ (coef / s[:rank, None])).T)
    return Residuals(k_arr.astype(np.int64), residual, int(p.size), rank, text, found if maps else None)


# -- wavelengths -------------------------------------------------------------------------------
def wavelengths(recipe: Recipe) -> Arr:
    """``2π/ω`` of every column of a recipe (NaN for a zero column), as its kind defines it."""
    waves = recipe.wavelengths()
    if waves is None:
        raise PecliInputError(f"{recipe.kind} recipes have no wavelengths")
    return waves


@dataclass(frozen=True)
class WavelengthEstimate:
    """Per column, the wavelength measured from the data (NaN where it could not be measured)."""

    wavelength: Arr
    #: ``"phase of sin/cos pairs (split layout)"`` or ``"zero crossings"``.
    method: str


def estimate_wavelengths(table: Table, max_rows: int = 4096) -> WavelengthEstimate:
    """Each column's wavelength (in rows), measured from up to ``max_rows`` rows of the table.

    1. **Phase of sin/cos pairs.**  For each layout (interleaved, split, cos-first) the columns are
       paired as that layout pairs sin and cos.  If every pair lies on the unit circle
       (``|s² + c² − 1| ≤ 0.01`` on every non-zero row), the angle ``atan2(s, c)`` of each pair
       advances by ``ω`` per row: the mean unwrapped step over the first rows, refined against rows
       further away (as ``diff`` fits a base), gives ``ω`` to about ``ε/rows``; both columns of the
       pair get ``2π/ω``.
    2. **Zero crossings** otherwise (and for an unpaired column), over the first ``max_rows`` rows:
       a sinusoid crosses zero twice per wavelength, so twice the distance between the first and
       the last crossing (each placed by linear interpolation) over the crossings in between.  A
       column with fewer than three crossings has a wavelength longer than the rows looked at: NaN.
       Meaningful for 1-D tables only.
    """
    n, d = table.shape
    m = min(n, _positive("max_rows", max_rows))
    windows = spread_windows(n, max(1, m // WINDOW), min(m, WINDOW))
    runs = [r for a, b in windows for r in nonzero_runs(a, read_rows(table, np.arange(a, b)))]
    if runs and d >= 2:
        for layout in get_args(Layout):
            sin_cols, cos_cols = Sinusoidal(1, d, layout=layout).pairs()
            order = np.stack([sin_cols, cos_cols], axis=1).ravel()
            omega = pair_frequencies(runs, sin_cols, cos_cols)
            if omega is not None and np.all(omega > 0):
                out = np.full(d, np.nan)
                out[sin_cols] = out[cos_cols] = 2 * math.pi / omega
                rest = np.setdiff1d(np.arange(d), order)
                if rest.size:
                    out[rest] = _crossings(table, m, rest)
                return WavelengthEstimate(out, f"phase of sin/cos pairs ({layout} layout)")
    return WavelengthEstimate(_crossings(table, m, np.arange(d)), "zero crossings")


def _crossings(table: Table, rows: int, cols: Ids) -> Arr:
    """Wavelengths from zero crossings over rows ``[0, rows)``, read in blocks (see above)."""
    count = np.zeros(cols.size)
    first = np.full(cols.size, np.inf)
    last = np.full(cols.size, -np.inf)
    step = table.block_rows()
    for a in range(0, rows, step):
        # One row of overlap, so that a crossing between two blocks is seen.
        b = min(rows, a + step + 1)
        x = read_rows(table, np.arange(a, b), cols)
        lo, hi = x[:-1], x[1:]
        crossing = np.signbit(lo) != np.signbit(hi)
        with np.errstate(invalid="ignore", divide="ignore"):
            where = a + np.arange(lo.shape[0])[:, None] + lo / np.where(crossing, lo - hi, 1.0)
        count += crossing.sum(axis=0)
        first = np.minimum(first, np.where(crossing, where, np.inf).min(axis=0, initial=np.inf))
        last = np.maximum(last, np.where(crossing, where, -np.inf).max(axis=0, initial=-np.inf))
    with np.errstate(invalid="ignore"):
        return np.where(count >= 3, 2.0 * (last - first) / np.maximum(count - 1, 1), np.nan)


__all__ = [
    "Decay",
    "HeatmapSample",
    "Residuals",
    "WavelengthEstimate",
    "decay",
    "estimate_wavelengths",
    "heatmap_sample",
    "relative_residual",
    "wavelengths",
]
