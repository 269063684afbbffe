"""Why two tables differ: :func:`explain` tries the usual suspects (layout, cos-first, shifted
rows, a padding row, transposed grid order, float32 angles, another base) and reports one only
when it *fits*: after undoing it, every sampled element of A is within ``max(tolerance, slack)``
of B, where

* ``slack = max(2⁻²⁰, 4·ε) · max|B|`` with ε the machine epsilon of the coarser of the two dtypes:
  2⁻²⁰ ≈ 9.5e-7 is 8 float32 ulps at 1.0, about where float32 framework tables of ~1000 rows
  and an exact table agree (≤ 4.8e-7 measured for fairseq's 1026×512), yet five orders of
  magnitude below what a wrong layout or formula produces (0.1–2); 4·ε widens it for float16,
  and for bfloat16 (a bfloat16 file read as float32 counts as bfloat16: its values carry that
  rounding) to 2⁻⁵, still three times below a wrong layout's smallest;
* or, for a "float32 angles" fit, the envelope ``2⁻²²·(1 + max(1, p)) · max|B|`` at position p.
  A float32 pipeline rounds the exponent 2i/d, ``base^x``, ``ω`` and ``p·ω``, which moves the
  angle by at most ``p·ω·(ln(base)·x + 3)·2⁻²⁴ ≤ 3·2⁻²⁴·p`` rad (``base^−x·(ln(base)·x + 3)`` is
  largest at x = 0); the rest covers sin/cos rounding.  Envelopes wider than ``max|B|/16``
  (p ≳ 2.6e5) prove nothing and are not used.

A suspect must also be identifiable: if B itself is unchanged by it (within the same bounds),
fitting it is no evidence and it is not reported.
"""

from __future__ import annotations

from pecli.diff.evidence import (
    DiffSample,
    Explanation,
    SamplePlan,
    check_tolerance,
    criteria_for,
)
from pecli.diff.transforms import (
    base_suspect,
    column_index_suspect,
    layout_and_more,
    permutation_suspects,
    precision_suspect,
    shift_suspects,
    transposed_suspect,
    transposed_table,
)
from pecli.table import Table, first_position


def explain(a: Table, b: Table, *, atol: float = 0.0, rtol: float = 0.0, equal_nan: bool = True) -> list[Explanation]:
    """The usual causes of a difference that fit A against reference B (see the module docstring)."""
    atol, rtol = check_tolerance("atol", atol), check_tolerance("rtol", rtol)
    sample = DiffSample.read(a, b, SamplePlan.make(a.shape, b.shape), first_position(a, b))
    return explain_sample(a, b, sample, atol, rtol, equal_nan)


def explain_sample(
    a: Table, b: Table, sample: DiffSample, atol: float, rtol: float, equal_nan: bool
) -> list[Explanation]:
    (na, d), (nb, db) = a.shape, b.shape
    if a.shape == b.shape[::-1] and (na != nb or not _symmetric_shape_rest(a, b, sample, atol, rtol, equal_nan)):
        found_t = transposed_table(a, b, atol, rtol)
        if found_t or na != nb:
            return found_t
    if d != db or na == 0 or nb == 0 or d == 0 or not sample.windows:
        return []
    crit = criteria_for(a, b, sample, atol, rtol, equal_nan)
    found: list[Explanation] = []
    if na == nb:
        found += permutation_suspects(a, b, sample, crit)
    found += shift_suspects(a, b, sample, crit)
    if na == nb:
        found += transposed_suspect(b, sample, crit)
        found += precision_suspect(a, b, sample, crit)
        # Fitting a base rebuilds the sample, so only when nothing simpler fits.  (A base so close
        # to B's that all differences stay within the float32 envelope is reported as precision.)
        found += [] if found else base_suspect(a, b, sample, crit)
        found += [] if found else column_index_suspect(a, b, sample, crit)
    if not found and na == nb:
        found += layout_and_more(a, b, sample, crit, [shift_suspects, base_suspect])
    return found


def _symmetric_shape_rest(a: Table, b: Table, sample: DiffSample, atol: float, rtol: float, equal_nan: bool) -> bool:
    """For square tables: whether a cheaper suspect already explains the difference (then the
    transposition, which reads B once more, is not tried)."""
    crit = criteria_for(a, b, sample, atol, rtol, equal_nan)
    return bool(permutation_suspects(a, b, sample, crit) or transposed_suspect(b, sample, crit))


__all__ = ["DiffSample", "Explanation", "SamplePlan", "check_tolerance", "explain", "explain_sample"]
