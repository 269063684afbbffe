"""The sinusoidal kind's inverse: the layout, frequency rule, base, start and padding row a table's
sin/cos pairs follow, and the pipelines proposed for them (:meth:`pecli.kinds.sinusoidal.Sinusoidal.fit`).
The kind is passed in: its module imports this one."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast, get_args, get_type_hints

import numpy as np

from pecli.errors import RecipeError
from pecli.fitting import Sample, median
from pecli.params import round_number
from pecli.precision import held

if TYPE_CHECKING:
    from pecli.dtypes import DType
    from pecli.fitting import Ids
    from pecli.kinds.sinusoidal import Compute, Form, Freq, Sinusoidal


def fit_sinusoid(kind: type[Sinusoidal], sample: Sample) -> Iterator[Sinusoidal]:
    """Recipes whose sin/cos phases the table follows.

    For each layout (and odd-width policy): are the column pairs on the unit circle?  Each pair's
    angle step per row gives ``ω_i``; a least-squares fit of ``ω_i = base^(−e_i)`` for each
    frequency rule gives the base (the roundest number that predicts every measured step); the
    phases of the first non-zero row give the start; all-zero rows at the top give fairseq's
    padding row; each fit is proposed with the exact, float32 (exp, exp-div, pow, inv-pow, div)
    and float64 pipelines (and bfloat16 inv-pow for bfloat16 data)."""
    n, d = sample.n, sample.d
    if d < 4:
        return
    from pecli.fitting import nonzero_runs, on_circle, pair_frequencies

    runs = [r for a, rows in sample.windows() for r in nonzero_runs(a, rows)]
    # One row has no angle step to measure: the bases frameworks use are tried (row 0's phases
    # then give the start), and identify proves each on every value.
    one_row = n == 1 and bool(np.all(np.isfinite(sample.values))) and bool(np.any(sample.values != 0))
    if not runs and not one_row:
        return
    span = float(runs[-1][1][-1] - runs[0][1][0]) if runs else 1.0
    span = span or 1.0
    tol = sample.angle_tolerance(span)
    fits: list[tuple[int, Sinusoidal, Ids, Ids]] = []
    for layout, odd in itertools.product(
        _choices(kind, "layout"), ("sin",) if d % 2 == 0 else ("sin", "zero", "truncate")
    ):
        shape = kind(1, d, layout=layout, odd=odd)  # type: ignore[arg-type]
        sin_cols, cos_cols = shape.pairs()
        if odd == "zero" and np.any(sample.values[:, d - 1] != 0):
            continue
        scale = _scale(runs[0][0] if runs else sample.values, sin_cols, cos_cols, d, sample.eps)
        omega = pair_frequencies(runs, sin_cols, cos_cols, scale)
        if omega is None and one_row and on_circle(sample.values, sin_cols, cos_cols, scale):
            for freq, base in _one_row(kind):
                try:
                    fits.append((1, replace(shape, freq=freq, scale=scale, base=base), sin_cols, cos_cols))
                except RecipeError:
                    continue
            continue
        if omega is None:
            continue
        # keras' bfloat16 pipeline rounds each frequency to bfloat16: up to 2⁻⁸ of it off over the span
        drift = 2 * 2.0**-8 * omega * span if _bfloat16_values(sample) else 0.0
        for freq in _choices(kind, "freq"):
            try:
                rule = replace(shape, freq=cast("Freq", freq), scale=scale)
            except RecipeError:
                continue
            exponents = rule.exponent_values(omega.size)
            rounded_base = sample.fit_round_base(omega, exponents, tol + drift, span)
            if rounded_base is None and span < _SHORT_SPAN:
                # A few rows far from position 0: a float32 angle there is rounded by up to p·2⁻²⁴,
                # which so short a span cannot average out (positions to 10⁵ allowed for).
                rounded_base = sample.fit_round_base(omega, exponents, tol + drift + 2.0**-23 * 1e5 / span, span)
            if rounded_base is None and _bfloat16_values(sample):
                # Angles from positions and frequencies held in bfloat16 follow no rule closely
                # enough to measure a base by (rows repeat past 256): the paper's base is tried as it is.
                rounded_base = (10000.0, 1)
            if rounded_base is not None:
                fits.append((rounded_base[1], replace(rule, base=rounded_base[0]), sin_cols, cos_cols))
        if not any(f[1].layout == layout for f in fits):
            steps = ", ".join(f"{w:.4g}" for w in omega[:3])
            sample.clue(
                f"the columns pair up as sin/cos in the {layout} layout, but their angle steps per row "
                f"({steps}, …) follow no frequency rule base^(−e_i) (ω_0 must be 1)"
            )
    # Another rule, odd policy or base can give the same ω (t2t's base is paper's base^(d/(2(half−1))),
    # truncate's is sin's base^((d+1)/d)): keep the round bases when there are any.
    if any(digits <= sample.ROUND_DIGITS for digits, *_ in fits):
        fits = [f for f in fits if f[0] <= sample.ROUND_DIGITS]
    started = []
    for _, rule, sin_cols, cos_cols in fits:
        start = _first_start(sample, rule, sin_cols, cos_cols)
        if start is not None:
            started.append((rule, start))
    pads: list[int | None] = [None, *sample.zero_rows[:2]]
    for layout, start in dict.fromkeys((rule.layout, start) for rule, start in started):
        rules = [r for r, s in started if (r.layout, s) == (layout, start)]
        text = f"the columns pair up as sin/cos in the {layout} layout (row 0 is position {start}); " + (
            "their angle steps fit "
            + ", ".join(f"freq={r.freq} base {r.base:g}" + (f" odd={r.odd}" if d % 2 else "") for r in rules)
        )
        pipelines = _PIPELINES + (_bfloat16_pipelines(kind) if _bfloat16_values(sample) else ())
        for rule, pad, (compute, form) in itertools.product(rules, pads, pipelines):
            if form == "div" and rule.freq != "paper":
                continue
            try:
                recipe = replace(
                    rule,
                    length=n - (0 if pad is None else pad + 1),
                    start=start,
                    dtype=cast("DType", sample.dtype),
                    padding_idx=pad,
                    compute=compute,
                    form=form,
                )
            except RecipeError:
                continue
            sample.clue(text, recipe)
            yield recipe


#: Rows spanned below which the angle steps are measured too loosely to exclude a start far from 0.
_SHORT_SPAN = 16
#: The bases the sinusoid presets use, tried for a table of one row (which has no angle step).
_COMMON_BASES = (10000.0,)


def _one_row(kind: type[Sinusoidal]) -> Iterator[tuple[Freq, float]]:
    """Each frequency rule with each common base (a rule the kind refuses at a width is skipped later)."""
    return itertools.product(_choices(kind, "freq"), _COMMON_BASES)


#: (compute, form) pairs frameworks use: exact; float32 exp, exp-div (diffusers), pow or inv-pow
#: (keras-hub); div (XLM, Marian: paper's rule only).
_PIPELINES: tuple[tuple[Compute, Form], ...] = (
    ("exact", "exp"),
    ("float32", "exp"),
    ("float32", "exp-div"),
    ("float32", "pow"),
    ("float32", "inv-pow"),
    ("float32", "div"),
    ("float64", "div"),
)


#: And for bfloat16 values (stored as bfloat16, or cast up afterwards), pipelines computed in
#: bfloat16 step by step (keras-hub's inv-pow, and each other form a port may run under autocast).
def _bfloat16_pipelines(kind: type[Sinusoidal]) -> tuple[tuple[Compute, Form], ...]:
    return tuple(("bfloat16", f) for f in _choices(kind, "form"))


def _choices(kind: type[Sinusoidal], name: str) -> tuple[Any, ...]:
    """The values a choice parameter of the kind takes (its ``Literal``)."""
    return get_args(get_type_hints(kind)[name])


def _bfloat16_values(sample: Sample) -> bool:
    """Whether the sampled values are bfloat16 numbers (the tell of a bfloat16 pipeline whose table
    was cast up): all of them, but those below float16's normal range (a float16 file rounds them)."""

    def read() -> bool:
        if sample.dtype == "bfloat16":
            return True
        x = np.asarray(sample.values, dtype=np.float64)
        x = x[np.isfinite(x) & (np.abs(x) >= 2.0**-14)]
        return (
            bool(x.size) and np.array_equal(held(x, "bfloat16").astype(np.float64), x) and bool(np.any(x != np.rint(x)))
        )

    return sample.memo(("bfloat16 values",), read)


#: Values :func:`_scale` measures the radius on, at most.
_RADIUS_VALUES = 1 << 16


def _scale(rows: np.ndarray, sin_cols: Ids, cos_cols: Ids, d: int, eps: float) -> float:
    """The radius the ``(sin, cos)`` pairs of ``rows`` lie on: 1, or a ``scale`` (x-transformers'
    ``dim^-0.5`` where it is that, else the median radius to 7 digits, a float32 parameter's).
    ``eps``: the data's rounding unit; bfloat16 values (``2⁻⁸``) put a radius of 1 as far as
    1.0002 off (keras' bfloat16 table from position 100), and say a scale to 3 digits only."""
    from pecli.table import spread_indices

    # The median over pairs spread across the width, 65536 values at most (a 3·10⁶-wide row's
    # squares at once were 48 MB, 64 rows × 32768 pairs 0.14 s; the radius is only proposed, and
    # the proof reads every value).
    spread = spread_indices(sin_cols.size, max(1, _RADIUS_VALUES // max(1, rows.shape[0])))
    s, c = rows[:, sin_cols[spread]], rows[:, cos_cols[spread]]
    with np.errstate(invalid="ignore", over="ignore"):
        radius = math.sqrt(median(s * s + c * c))
    tol = max(1e-6, 2 * eps)
    if not math.isfinite(radius) or radius == 0 or abs(radius - 1) <= tol:
        return 1.0
    return d**-0.5 if abs(radius - d**-0.5) <= tol * radius else round_number(radius, 7 if tol == 1e-6 else 3)


def _first_start(sample: Sample, rule: Sinusoidal, sin_cols: Ids, cos_cols: Ids) -> int | None:
    """The position of row 0, from the phases of the first non-zero row."""
    head = sample.rows(0, min(sample.n, 16))
    nonzero = np.flatnonzero(np.any(head != 0, axis=1))
    if not nonzero.size:
        return None
    r = int(nonzero[0])
    exponents = rule.exponent_values(sin_cols.size)
    from pecli.fitting import start_position

    slack = 2.0**-8 if _bfloat16_values(sample) else 0.0  # keras' pipeline rounds every step to bfloat16
    return start_position(head[r], r, np.power(rule.base, -exponents), sin_cols, cos_cols, slack)


__all__ = ["fit_sinusoid"]
