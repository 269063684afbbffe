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

from pecli.dtypes import DTYPES, is_bfloat16
from pecli.kernels.compiled import flat_sincos, pipeline32
from pecli.kernels.exact import sincos, turns

f32 = np.float32
#: One radian in turns, ``1/2π`` as a double-double: :func:`sincos` of ``x·(1/2π)`` turns is ``sin x``.
_ONE_RADIAN = turns(np.array([1.0]))


def rounded(fn: Callable[..., Any], dt: Any, *args: Any) -> np.ndarray:
    """``fn`` evaluated in float64 and rounded to ``dt`` once (bfloat16: through float32, as torch
    evaluates a bfloat16 op in float32 and rounds its result)."""
    value = np.asarray(fn(*(np.asarray(a, dtype=np.float64) for a in args)))
    return value.astype(f32).astype(dt) if is_bfloat16(dt) else value.astype(dt)


def pow32(base: Any, exponent: np.ndarray) -> np.ndarray:
    """torch's ``float32(base) ** exponent`` for a float32 exponent tensor, rounded once."""
    return rounded(np.power, f32, f32(base), np.asarray(exponent, dtype=f32))


def sin_cos_rounded(
    angle: np.ndarray, dt: Any, kernel: Callable[..., None] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """sin and cos of angles already in ``dt``.  float32 ones are rounded once from pecli's exact
    kernel's value (:func:`rounded32`): a correctly rounded float32 sin, the closest NumPy gets to
    torch's.  ``kernel``: the compiled ``sincos_flat`` (:func:`pecli.kernels.compiled.flat_sincos`),
    the same bits sooner.  float64 angles take NumPy's ``sin`` and ``cos``, as the frameworks'
    float64 pipelines do."""
    if is_bfloat16(dt):  # torch's bfloat16 sin: the float32 sin of the float32 angle, rounded
        s, c = rounded32(angle.astype(f32), ("sin", "cos"), kernel)
        return s.astype(dt), c.astype(dt)
    if dt != f32:
        return np.sin(angle), np.cos(angle)
    s, c = rounded32(angle, ("sin", "cos"), kernel)
    return s, c


#: Below this magnitude an angle's sine is too small for the midpoint test of :func:`rounded32`
#: (float32 subnormals; also ±0, whose sign libm and the kernel may give differently).
_TINY_ANGLE = 2.0**-120
#: The float64 bits below a float32 significand, and where in them a float32 rounding midpoint lies.
_BELOW_F32 = np.uint64((1 << 29) - 1)
_MIDPOINT = 1 << 28
#: float64 ulps by which NumPy's sin/cos may miss the exact value (libm's are within 1; pecli's
#: kernel within 0.75) and still round to float32 as the kernel's value does.
LIBM_MARGIN_ULPS = 1 << 10
_NEAR_LOW = np.uint64(_MIDPOINT - LIBM_MARGIN_ULPS)
_NEAR_WIDTH = np.uint64(2 * LIBM_MARGIN_ULPS)


#: Values per pass of :func:`rounded32`: its float64 scratch stays in the cache and on the heap (a
#: fresh multi-megabyte temporary costs ~4 ns a value in page faults here, as much as ``cos``).
_PASS = 1 << 13


def rounded32(angle: np.ndarray, parts: tuple[str, ...], kernel: Callable[..., None] | None = None) -> list[np.ndarray]:
    """``sin``/``cos`` (in the order of ``parts``) of the angles ``angle`` (radians, any float
    dtype, any shape), each the exact kernel's float64 value rounded once to float32.

    ``kernel`` (the compiled ``sincos_flat``) computes them so.  Without it NumPy's float64 ``sin``
    and ``cos`` (libm: ~15 ns a value here, the kernel ~38 ns for both) give the same bits, proved
    value by value: a libm value more than :data:`LIBM_MARGIN_ULPS` float64 ulps from every float32
    rounding midpoint has the kernel's value (within 0.75 ulp of the exact one) on its side of them
    all, so both round alike.  The few others (~4 in a million), tiny angles, angles beyond 2⁴⁴
    and non-finite ones take the kernel.  The test costs ~0.5 ns a value.
    """
    shape = np.shape(angle)
    flat = np.asarray(angle).reshape(-1)
    outs = [np.empty(flat.size, dtype=f32) for _ in parts]
    n = min(flat.size, _PASS)
    x, scratch = np.empty(n), {"sin": np.empty(n), "cos": np.empty(n)}
    for a in range(0, flat.size, _PASS):
        m = min(_PASS, flat.size - a)
        xv, s, c = x[:m], scratch["sin"][:m], scratch["cos"][:m]
        xv[...] = flat[a : a + m]
        if kernel is not None:
            kernel(xv, _RADIAN_HI, _RADIAN_LO, s, c)
        else:
            _libm_certified(xv, s if "sin" in parts else None, c if "cos" in parts else None)
        for out, part in zip(outs, parts, strict=True):
            out[a : a + m] = s if part == "sin" else c
    return [out.reshape(shape) for out in outs]


_RADIAN_HI, _RADIAN_LO = (float(v[0]) for v in _ONE_RADIAN)
#: The float64 sin and cos :func:`rounded32` certifies (tests put a worse one here).
LIBM: dict[str, Callable[..., Any]] = {"sin": np.sin, "cos": np.cos}
#: Beyond this magnitude (past the kernel's accuracy promise) the kernel decides, so both ways agree.
_HUGE_ANGLE = 2.0**44


def _libm_certified(x: np.ndarray, sin_out: np.ndarray | None, cos_out: np.ndarray | None) -> None:
    """NumPy's sin/cos of ``x`` into the given outputs, the values in doubt replaced by the kernel's."""
    with np.errstate(invalid="ignore"):
        magnitude = np.abs(x)
        doubt = ~((magnitude >= _TINY_ANGLE) & (magnitude <= _HUGE_ANGLE))
        outs = [v for v in (sin_out, cos_out) if v is not None]
        for part, v in (("sin", sin_out), ("cos", cos_out)):
            if v is not None:
                LIBM[part](x, out=v)
    for v in outs:
        doubt |= ((v.view(np.uint64) & _BELOW_F32) - _NEAR_LOW) <= _NEAR_WIDTH
    where = np.flatnonzero(doubt)
    if where.size:
        with np.errstate(invalid="ignore"):  # non-finite or huge angles: the kernel's value, no warning
            s, c = sincos(x[where], *_ONE_RADIAN)
        if sin_out is not None:
            sin_out[where] = s[:, 0]
        if cos_out is not None:
            cos_out[where] = c[:, 0]


def rotary32(
    positions: np.ndarray, inv: np.ndarray, part: str, pairs: int, into: np.ndarray | None = None
) -> np.ndarray:
    """A float32 rotary pipeline, ``freqs = position_ids.float() * inv_freq; freqs.cos()`` (or
    ``sin``): ``(len(positions), len(inv))`` float32 values, each the exact kernel's value of the
    float32 angle rounded once (:func:`rounded32`).  When the whole job of ``pairs`` angles
    repays loading the compiled kernel (the same bits), a float32 ``into`` (any strides) is
    written in one pass and returned; otherwise the values are returned for the caller to place."""
    fused = pipeline32(pairs) if into is not None and into.dtype == f32 else None
    if fused is not None:
        assert into is not None
        spare = np.empty((len(positions), into.shape[1] if part == "cos" else 0), dtype=f32)
        fused(
            positions.astype(f32),
            np.ascontiguousarray(inv, dtype=f32),
            *((spare, into) if part == "cos" else (into, spare)),
        )
        return into
    angle = positions.astype(f32)[:, None] * inv[None, :]
    (values,) = rounded32(angle, (part,), flat_sincos(pairs))
    return values


def compute_dtype(compute: str) -> Any:
    """The NumPy dtype of a pipeline named ``float32``, ``float64`` or ``bfloat16`` (every step
    rounded to bfloat16: NumPy's bfloat16 arithmetic is ``ml_dtypes``', float32 rounded, as torch's)."""
    if compute == "bfloat16":
        return DTYPES["bfloat16"].numpy().type
    return f32 if compute == "float32" else np.float64
