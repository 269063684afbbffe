"""HF transformers' rotary ``inv_freq`` and its scalings (``modeling_rope_utils.py``, 5.23), two ways.

:func:`inv_freq_float32` is the framework's float32 pipeline step by step (scalars rounded to
float32 as torch does; ``pow`` evaluated in float64 and rounded once; ``x / t`` with a Python
``x`` is torch's ``t.reciprocal() * x``); :func:`inv_freq_float64` the same formulas in float64
with ``base^(−2i/dim)`` correctly rounded (the reference).  They read a rotary recipe's
parameters (:class:`pecli.kinds.rope.Rope`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from pecli.kernels.exact import frequencies
from pecli.kernels.pipelines import f32, pow32

if TYPE_CHECKING:  # the recipe whose parameters these read (it imports this module, not the reverse)
    from pecli.kinds.rope import Rope


def yarn_mscale(scale: float, mscale: float = 1.0) -> float:
    # HF's get_mscale (YaRN paper: 0.1·ln(s) + 1).
    if scale <= 1:
        return 1.0
    return 0.1 * mscale * math.log(scale) + 1.0


def yarn_range(r: Rope) -> tuple[float, float]:
    """HF's ``find_correction_range(beta_fast, beta_slow, dim, base, original_max, truncate)``."""
    dim, base = r.dim, r.base
    orig = r.original_max_position_embeddings
    assert orig is not None

    def correction_dim(rotations: float) -> float:
        return (dim * math.log(orig / (rotations * 2 * math.pi))) / (2 * math.log(base))

    # HF: ``get("beta_fast") or 32``, ``get("beta_slow") or 1``.
    low: float = correction_dim(r.beta_fast or 32)
    high: float = correction_dim(r.beta_slow or 1)
    if r.truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001  # HF: "Prevent singularity"
    return low, high


def factors(text: str | None) -> list[float]:
    assert text is not None
    return [float(t) for t in text.split(";")]


def inv_freq_float32(r: Rope) -> np.ndarray:
    """``inv_freq`` as HF computes it in float32 (scalars rounded to float32 as torch does; pow
    evaluated in float64 and rounded once; ``x / t`` with a Python ``x`` is torch's
    ``t.reciprocal() * x``)."""
    dim = r.dim

    # torch.arange(0, dim, 2, dtype=int64).float() / dim
    e = np.arange(0, dim, 2).astype(f32) / f32(dim)
    default = f32(1) / pow32(r.base, e)
    factor = f32(r.factor) if r.factor is not None else f32(1)
    if r.scaling == "default":
        return default
    if r.scaling == "linear":
        return default / factor
    if r.scaling == "dynamic":
        orig = r.original_max_position_embeddings
        assert orig is not None and r.factor is not None
        if r.seq_len > orig:
            # forward path: seq_len is a 0-dim int64 tensor, so every step is a float32 tensor op
            s = factor * f32(r.seq_len)
            s = s / f32(orig)
            s = s - f32(r.factor - 1)
            # pow(Tensor, Scalar): torch keeps the Python exponent in double for a float tensor
            s = f32(np.power(np.float64(s), dim / (dim - 2)))
            base = f32(r.base) * s
        else:  # init path (seq_len = max_position_embeddings): Python floats
            base = f32(r.base * ((r.factor * orig / orig) - (r.factor - 1)) ** (dim / (dim - 2)))
        return f32(1) / pow32(base, e)
    if r.scaling == "yarn":
        pos = pow32(r.base, e)
        extrapolation = f32(1) / pos
        interpolation = f32(1) / (factor * pos)
        low, high = yarn_range(r)
        ramp = np.clip((np.arange(dim // 2, dtype=f32) - f32(low)) / f32(high - low), f32(0), f32(1))
        extra = f32(1) - ramp
        return np.asarray(interpolation * (f32(1) - extra) + extrapolation * extra)
    if r.scaling == "longrope":
        orig = r.original_max_position_embeddings
        assert orig is not None
        ext = np.array(factors(r.long_factor if r.seq_len > orig else r.short_factor), dtype=f32)
        return np.asarray(f32(1) / (ext * pow32(r.base, e)))
    # llama3
    orig = r.original_max_position_embeddings
    assert orig is not None and r.low_freq_factor is not None and r.high_freq_factor is not None
    low_wavelen, high_wavelen = orig / r.low_freq_factor, orig / r.high_freq_factor
    wavelen = (f32(1) / default) * f32(2 * math.pi)
    inv = np.where(wavelen > f32(low_wavelen), default / factor, default)
    smooth = ((f32(1) / wavelen) * f32(orig) - f32(r.low_freq_factor)) / f32(r.high_freq_factor - r.low_freq_factor)
    smoothed = (f32(1) - smooth) * inv / factor + smooth * inv
    medium = ~(wavelen < f32(high_wavelen)) & ~(wavelen > f32(low_wavelen))
    return np.where(medium, smoothed, inv).astype(f32)


def inv_freq_float64(r: Rope) -> np.ndarray:
    """``inv_freq`` from the same formulas in float64, with ``base^(−2i/dim)`` correctly rounded."""
    dim, half = r.dim, r.dim // 2

    def powers(base: float) -> np.ndarray:
        return np.array(frequencies(base, 1.0, tuple((2 * i, dim) for i in range(half)))[0])

    default = powers(r.base)
    factor = r.factor if r.factor is not None else 1.0
    if r.scaling == "default":
        return default
    if r.scaling == "linear":
        return default / factor
    if r.scaling == "dynamic":
        orig = r.original_max_position_embeddings
        assert orig is not None
        seq = max(r.seq_len, orig)
        return powers(r.base * ((factor * seq / orig) - (factor - 1)) ** (dim / (dim - 2)))
    if r.scaling == "yarn":
        low, high = yarn_range(r)
        extra = 1 - np.clip((np.arange(half) - low) / (high - low), 0, 1)
        return np.asarray((default / factor) * (1 - extra) + default * extra)
    if r.scaling == "longrope":
        orig = r.original_max_position_embeddings
        assert orig is not None
        return np.asarray(default / np.array(factors(r.long_factor if r.seq_len > orig else r.short_factor)))
    orig = r.original_max_position_embeddings
    assert orig is not None and r.low_freq_factor is not None and r.high_freq_factor is not None
    wavelen = 2 * math.pi / default
    inv = np.where(wavelen > orig / r.low_freq_factor, default / factor, default)
    smooth = (orig / wavelen - r.low_freq_factor) / (r.high_freq_factor - r.low_freq_factor)
    medium = (wavelen >= orig / r.high_freq_factor) & (wavelen <= orig / r.low_freq_factor)
    return np.where(medium, (1 - smooth) * inv / factor + smooth * inv, inv)


__all__ = ["factors", "inv_freq_float32", "inv_freq_float64", "yarn_mscale", "yarn_range"]
