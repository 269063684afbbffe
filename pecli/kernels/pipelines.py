"""Building blocks of the frameworks' own float32/float64 pipelines, step by step.

torch (and NumPy) evaluate ``exp``, ``pow``, ``sin`` and ``cos`` of float32 tensors to within an
ulp or so but not always correctly rounded; the closest a portable emulation gets is to evaluate
each step in float64 (sin and cos by pecli's exact kernel) and round it once to float32, with
every Python scalar rounded to float32 first (as torch does for a float32 tensor).  The kinds
compose these steps in their framework's order (see each kind's ``pipeline`` docstring); what the
emulation leaves off is one float32 ulp of a step, and the tolerances in ``pecli.identification``
say what that becomes in the table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pecli.kernels.exact import sincos, turns

f32 = np.float32
#: One radian in turns, ``1/2π`` as a double-double: :func:`sincos` of ``x·(1/2π)`` turns is ``sin x``.
_ONE_RADIAN = turns(np.array([1.0]))


def rounded(fn: Callable[..., Any], dt: Any, *args: Any) -> np.ndarray:
    """``fn`` evaluated in float64 and rounded to ``dt`` once."""
    return np.asarray(fn(*(np.asarray(a, dtype=np.float64) for a in args))).astype(dt)


def pow32(base: Any, exponent: np.ndarray) -> np.ndarray:
    """torch's ``float32(base) ** exponent`` for a float32 exponent tensor, rounded once."""
    return rounded(np.power, f32, f32(base), np.asarray(exponent, dtype=f32))


def sin_cos_rounded(
    angle: np.ndarray, dt: Any, kernel: Callable[..., None] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """sin and cos of angles already in ``dt``.  float32 ones are evaluated by pecli's exact kernel
    (``angle/2π`` in turns as a double-double, within 0.75 float64 ulp) and rounded once: a
    correctly rounded float32 sin, the closest NumPy gets to torch's.  ``kernel``: the compiled
    ``sincos_flat`` (:func:`pecli.kernels.compiled.flat_sincos`), the same bits sooner.  float64 angles take
    NumPy's ``sin`` and ``cos``, as the frameworks' float64 pipelines do."""
    if dt != f32:
        return np.sin(angle), np.cos(angle)
    x = np.ascontiguousarray(angle, dtype=np.float64).reshape(-1)
    w_hi, w_lo = _ONE_RADIAN
    if kernel is None:
        s, c = sincos(x, w_hi, w_lo)
    else:
        s, c = np.empty(x.size), np.empty(x.size)
        kernel(x, float(w_hi[0]), float(w_lo[0]), s, c)
    return s.reshape(angle.shape).astype(f32), c.reshape(angle.shape).astype(f32)


def compute_dtype(compute: str) -> Any:
    """The NumPy dtype of a pipeline named ``float32`` or ``float64``."""
    return f32 if compute == "float32" else np.float64
