"""Which θ and scaling a rotary cache's measured frequencies say (:func:`scalings`), and the θ of
an odd rotary dim, of ``inv_freq`` cast to 16 bits and of angles stored in 16 bits: the half of the
rope kind's inverse that turns frequencies into recipe parameters (:mod:`pecli.kinds.rope.fit`
measures the frequencies, the layout, the part and the start).  Only proposals: identify rebuilds
each one and compares every value."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from pecli.errors import RecipeError
from pecli.fitting import fit_base
from pecli.kernels.rope_scaling import SCALINGS, Measured
from pecli.params import round_number
from pecli.precision import held, pipeline_of

if TYPE_CHECKING:
    from pecli.dtypes import Arr
    from pecli.kinds.rope import Rope

#: θ values models use, tried as round candidates besides the fitted one.
COMMON_THETAS = (10000.0, 500000.0, 1000000.0, 150000.0, 1e4 * 2**0.5)
#: Factors tried for NTK-aware θ rescaling, ``θ·f^(d/(d−2))`` (rotary-embedding-torch, dynamic NTK).
_COMMON_FACTORS = (1.5, 2.0, 3.0, 4.0, 8.0, 16.0)


def scalings(
    inv: Arr, dim: int, seq_len: int, amplitude: float, predict: Callable[[dict[str, Any]], Arr] | None = None
) -> Iterator[dict[str, Any]]:
    """Scaling parameters the measured ``inv_freq`` (and cos/sin amplitude) suggest, each with its θ.

    ``inv`` is fastest first; NaN where a frequency was too slow to measure.  θ and the scale come
    from the fastest quarter (which llama3 and yarn leave alone); the ratio of the measured to the
    default frequencies then tells the family: 1 everywhere (default), a constant (linear), 1 at
    the fast end and ``1/factor`` at the slow end (llama3, yarn), a pure power law with another θ
    (dynamic NTK).  Here the θ are measured; each scaling of the registry proposes its own
    parameters from them (:attr:`~pecli.kernels.rope_scaling.ScalingType.propose`).  Only
    proposals: identify rebuilds each one and compares.  ``predict`` gives a candidate's exact
    ``inv_freq``: a ramp's original length is tried from a wide grid and kept where its ramp is the
    measured one.
    """
    h = inv.size
    e = np.arange(h) * 2.0 / dim
    known = np.isfinite(inv)
    count = int(np.argmin(known)) if not known.all() else h  # the measured prefix
    if count < 2:
        return
    inv, e = inv[:count], e[:count]
    fast = max(2, count // 4)
    estimates = [x for x in (fit_base(inv[:fast], e[:fast]), fit_base(inv, e)) if x is not None]
    scale = float(inv[0])
    # The roundest θ each estimate allows, at two precisions (the fast quarter is measured to about
    # 1e-6; a slow table's less well): 10000, not 10000.3, and 12345, not 12350.
    thetas = [
        next((t for t in _roundings(x) if _fits(inv[:fast], scale, t, e[:fast], rtol)), x)
        for x in estimates
        for rtol in (1e-5, 1e-4)
    ]
    # θ rescaled NTK-style, θ0·f^(d/(d−2)) (rotary-embedding-torch's theta_rescale_factor): not round.
    thetas += [
        t * f ** (dim / (dim - 2))
        for t, f in itertools.product(COMMON_THETAS, _COMMON_FACTORS)
        if dim > 2 and any(abs(t * f ** (dim / (dim - 2)) / x - 1) < 1e-4 for x in estimates)
    ]
    thetas = [t for t in dict.fromkeys(thetas) if t > 1]
    # A narrow YaRN or llama3 cache scales frequencies inside the fast quarter (dim 32, original
    # length 1024: from the third on), so θ also comes from the two or three fastest alone; such a
    # θ is tried only for a slow end divided by a factor, which the whole table then proves.
    short = [
        t
        for k in (2, 3)
        if count >= k and (x := fit_base(inv[:k], e[:k])) is not None
        for t in [next((t for t in _roundings(x) if _fits(inv[:k], scale, t, e[:k], 1e-5)), None)]
        if t is not None and t > 1 and t not in thetas  # a round θ only: two frequencies prove little
    ]
    # A ramp that starts at the second frequency (YaRN over a small original length) leaves only
    # ω₀ = 1 to measure θ by: the common θ are tried for it, their ramp checked by ``predict``.
    if predict is not None:
        short += [t for t in COMMON_THETAS if t not in thetas and t not in short]
    waves = []
    for theta in [*thetas, *dict.fromkeys(short)]:
        ratio = inv / (scale * np.power(theta, -e))
        lead = (1 if theta in COMMON_THETAS and predict is not None else 2) if theta in short else fast
        if not np.allclose(ratio[:lead], 1, rtol=1e-3):
            continue
        if theta in short and (ratio[-1] > 1 / 1.5 or np.any(np.diff(ratio) > 1e-3)):
            continue  # not a slow end divided by a factor (of 1.5 or more)
        waves.append((theta, ratio))
    measured = Measured(
        inv=inv,
        exponents=e,
        dim=dim,
        seq_len=seq_len,
        amplitude=amplitude,
        complete=count == h,
        thetas=tuple(thetas),
        waves=tuple(waves),
        full=estimates[-1] if estimates else None,
        common=COMMON_THETAS,
        predict=predict,
    )
    for scaling in SCALINGS.values():
        yield from scaling.proposals(measured)


def odd_width(inv: Arr, d: int, odd_dim: int | None = None) -> Iterator[dict[str, Any]]:
    """θ of an odd rotary dim ``odd_dim`` (``d + 1`` unless given: rotary-embedding-torch's
    ``RotaryEmbedding(dim=7)``, ``d/2`` frequencies ``θ^(−2i/(d+1))``; ``d − 1``: litgpt's, ``d/2``
    frequencies ``θ^(−2i/(d−1))``), proposed only when a θ of at most 4 significant digits predicts
    the frequencies over ``odd_dim`` (to 1e-4) better than any such θ over ``d``: 10000 over 7, not
    2683 over 6.  The fast half only: a 16-bit table's slow waves are measured to 1e-2 (identify
    proves the whole table)."""
    known = np.isfinite(inv)
    count = int(np.argmin(known)) if not known.all() else inv.size
    if count < 2:
        return
    inv = inv[: max(2, (count + 1) // 2) if count > 4 else count]
    best: list[tuple[float, float] | None] = []
    for width in (d, d + 1 if odd_dim is None else odd_dim):
        e = np.arange(inv.size) * 2.0 / width
        x = fit_base(inv, e)
        misses = [] if x is None else [(float(np.abs(inv * np.power(t, e) - 1).max()), t) for t in _roundings(x, 4)]
        best.append(min(misses, default=None))
    even, odd = best
    if odd is not None and odd[0] <= 1e-4 and (even is None or odd[0] < even[0]) and odd[1] > 1:
        yield {"base": odd[1], "scaling": "default"}


def _roundings(x: float, digits: int = 8) -> Iterator[float]:
    """``x`` to 1, 2, … ``digits`` significant digits."""
    return (round_number(x, k) for k in range(1, digits + 1))


def _fits(inv: Arr, scale: float, theta: float, e: Arr, rtol: float) -> bool:
    """Whether ``scale·θ^(−e)`` predicts the measured frequencies to ``rtol``."""
    return theta > 1 and bool(np.allclose(inv / (scale * np.power(theta, -e)), 1, rtol=rtol, atol=0))


def coarse_thetas(inv: Arr, dim: int, eps: float) -> Iterator[dict[str, Any]]:
    """θ (no scaling) for frequencies measured from angles stored in 16 bits (to about ``eps`` of
    themselves): the roundest θ of the fit, and the common θ, that predict every one to ``eps``."""
    e = np.arange(inv.size) * 2.0 / dim
    estimate = fit_base(inv, e)
    thetas = [*(_roundings(estimate, 4) if estimate is not None else []), *COMMON_THETAS]
    for theta in dict.fromkeys(t for t in thetas if t > 1):
        if np.allclose(np.power(theta, -e), inv, rtol=eps, atol=0):
            yield {"base": theta, "scaling": "default"}


def grid_thetas(cls: type[Rope], inv: Arr, dim: int) -> Iterator[dict[str, Any]]:
    """θ (no scaling) for a cast ``inv_freq``, when the measured fast frequencies lie on the float16
    or bfloat16 grid of a round or common θ's float32 ``inv_freq`` (bfloat16's rounding, 2⁻⁹, is
    more than :func:`scalings` allows a θ's frequencies).  Proposals only: identify proves them."""
    h = inv.size
    fast = max(2, h // 4)
    measured = inv[:fast]
    if not np.all(np.isfinite(measured)) or dim < 4:
        return
    estimate = fit_base(measured, np.arange(fast) * 2.0 / dim)
    thetas = [*(_roundings(estimate) if estimate is not None else []), *COMMON_THETAS]
    casts = [c for c in cls.computes if pipeline_of(c).positions == "float32" and pipeline_of(c).reduced]
    for compute in casts:
        grid = pipeline_of(compute).frequencies
        if not np.allclose(held(measured, grid), measured, rtol=3e-5, atol=0):
            continue  # the tell: the fast frequencies are float16/bfloat16 numbers
        for theta in dict.fromkeys(t for t in thetas if t > 1):
            try:
                own = cls(2, dim, base=theta, compute=compute).inv_freq()
            except RecipeError:
                continue
            if np.allclose(own[:fast], measured, rtol=3e-5, atol=0) and not np.allclose(
                cls(2, dim, base=theta).inv_freq()[:fast], measured, rtol=3e-5, atol=0
            ):
                yield {"base": theta, "scaling": "default", "compute": compute}


__all__ = ["COMMON_THETAS", "coarse_thetas", "grid_thetas", "odd_width", "scalings"]
