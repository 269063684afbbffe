"""HF transformers' rotary scalings (``modeling_rope_utils.py``, 5.23): the one registry of them.

:data:`SCALINGS` holds every fact of each scaling type (the keys it reads, those it needs, its
checks, its attention factor, how a model's config and a GGUF file hold it, its ``inv_freq``, and
the parameters a measured ``inv_freq`` suggests of it), and the rope kind, the fitter and the config
readers all read it; no other module names a scaling.

Long because it is one registry: each scaling's facts, forward (its ``inv_freq``) and back (its
proposals, :class:`Measured`), sit beside each other, as einops keeps every fact of a backend in
one class; split by direction, a new scaling would be written in three files.

``inv_freq`` two ways: :func:`inv_freq_float32` is the framework's float32 pipeline step by step
(scalars rounded to float32 as torch does; ``pow`` evaluated in float64 and rounded once; ``x / t``
with a Python ``x`` is torch's ``t.reciprocal() * x``); :func:`inv_freq_float64` the same formulas
in float64 with ``base^(−2i/dim)`` correctly rounded (the reference).  They read a rotary recipe's
parameters (:class:`RotaryParams`, which :class:`pecli.kinds.rope.Rope` is).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np

from pecli.errors import RecipeError
from pecli.kernels.exact import frequencies, paper_exponents
from pecli.kernels.pipelines import f32, pow32
from pecli.params import round_number

if TYPE_CHECKING:
    from pecli.dtypes import Ids

#: The scaling types, as ``--scaling`` and a config's ``rope_type`` name them (the keys of :data:`SCALINGS`).
Scaling = Literal[
    "default", "linear", "dynamic", "yarn", "longrope", "llama3", "proportional", "keras-dynamic", "litgpt-yarn"
]


class RotaryParams(Protocol):
    """The parameters a scaling reads (a rotary recipe's)."""

    @property
    def dim(self) -> int: ...
    @property
    def frequency_count(self) -> int: ...
    @property
    def base(self) -> float: ...
    @property
    def scaling(self) -> str: ...
    @property
    def seq_len(self) -> int: ...
    @property
    def factor(self) -> float | None: ...
    @property
    def original_max_position_embeddings(self) -> int | None: ...
    @property
    def low_freq_factor(self) -> float | None: ...
    @property
    def high_freq_factor(self) -> float | None: ...
    @property
    def beta_fast(self) -> float | None: ...
    @property
    def beta_slow(self) -> float | None: ...
    @property
    def attention_factor(self) -> float | None: ...
    @property
    def mscale(self) -> float | None: ...
    @property
    def mscale_all_dim(self) -> float | None: ...
    @property
    def short_factor(self) -> str | None: ...
    @property
    def long_factor(self) -> str | None: ...
    @property
    def partial_rotary_factor(self) -> float | None: ...
    @property
    def truncate(self) -> bool: ...
    @property
    def form(self) -> str: ...


def yarn_mscale(scale: float, mscale: float = 1.0) -> float:
    # HF's get_mscale (YaRN paper: 0.1·ln(s) + 1).
    if scale <= 1:
        return 1.0
    return 0.1 * mscale * math.log(scale) + 1.0


def yarn_range(r: RotaryParams, top: int | None = None) -> tuple[float, float]:
    """HF's ``find_correction_range(beta_fast, beta_slow, dim, base, original_max, truncate)``;
    ``top``: the largest index (HF ``dim − 1``; litgpt ``dim/2 − 1``)."""
    dim, base = r.dim, r.base
    orig = r.original_max_position_embeddings
    assert orig is not None

    def correction_dim(rotations: float) -> float:
        return (dim * math.log(orig / (rotations * 2 * math.pi))) / (2 * math.log(base))

    # HF: ``get("beta_fast") or 32``, ``get("beta_slow") or 1``.
    fast, slow = betas(r)
    low: float = correction_dim(fast)
    high: float = correction_dim(slow)
    if r.truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1 if top is None else top)
    if low == high:
        high += 0.001  # HF: "Prevent singularity"
    return low, high


def factors(text: str | None) -> list[float]:
    assert text is not None
    return [float(t) for t in text.split(";")]


# -- inv_freq in HF's float32 pipeline: each scaling from the exponents e and the default inv_freq -----
def _linear32(r: RotaryParams, i: Ids, e: np.ndarray, default: np.ndarray, factor: np.float32) -> np.ndarray:
    return default / factor


def _dynamic32(r: RotaryParams, i: Ids, e: np.ndarray, default: np.ndarray, factor: np.float32) -> np.ndarray:
    dim, orig = r.dim, r.original_max_position_embeddings
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


def _yarn32(r: RotaryParams, i: Ids, e: np.ndarray, default: np.ndarray, factor: np.float32) -> np.ndarray:
    pos = pow32(r.base, e)
    extrapolation = f32(1) / pos
    interpolation = f32(1) / (factor * pos)
    low, high = yarn_range(r)
    ramp = np.clip((i.astype(f32) - f32(low)) / f32(high - low), f32(0), f32(1))
    extra = f32(1) - ramp
    return np.asarray(interpolation * (f32(1) - extra) + extrapolation * extra)


def _longrope_unused(r: RotaryParams) -> tuple[str, ...]:
    """The factor list a LongRoPE table does not use: ``short_factor`` past the original length,
    ``long_factor`` up to it."""
    orig = r.original_max_position_embeddings
    assert orig is not None
    return ("short_factor",) if r.seq_len > orig else ("long_factor",)


def _longrope_slips(r: RotaryParams) -> tuple[dict[str, Any], ...]:
    """HF switches lists at ``seq_len > original``: a port that misses the switch uses the other."""
    if r.short_factor == r.long_factor:
        return ()
    (unused,) = _longrope_unused(r)
    used = "long_factor" if unused == "short_factor" else "short_factor"
    return ({used: getattr(r, unused)},)


def _longrope_said(a: RotaryParams, b: RotaryParams) -> tuple[str, tuple[str, ...]] | None:
    """``long factors (A) vs short (B) below 4096 positions``: A uses, at B's length, the list B
    keeps for the other side of ``original_max_position_embeddings``."""
    orig = b.original_max_position_embeddings
    if a.seq_len != b.seq_len or orig != a.original_max_position_embeddings:
        return None
    (unused,) = _longrope_unused(b)
    used = "long_factor" if unused == "short_factor" else "short_factor"
    mine, theirs = getattr(a, used), getattr(b, used)
    if mine == theirs or mine != getattr(b, unused):
        return None
    side = "below" if used == "short_factor" else "past"
    return f"{unused[:-7]} factors (A) vs {used[:-7]} (B) {side} {orig} positions", ("short_factor", "long_factor")


def betas(r: RotaryParams) -> tuple[float, float]:
    """YaRN's ``(beta_fast, beta_slow)`` as HF reads them (``get("beta_fast") or 32``, ``or 1``)."""
    return (r.beta_fast or 32.0, r.beta_slow or 1.0)


def _yarn_slips(r: RotaryParams) -> tuple[dict[str, Any], ...]:
    fast, slow = betas(r)
    return ({"beta_fast": slow, "beta_slow": fast},)


def _yarn_said(a: RotaryParams, b: RotaryParams) -> tuple[str, tuple[str, ...]] | None:
    """``beta_fast and beta_slow swapped in A``: the side whose beta_fast is below its beta_slow."""
    mine, theirs = betas(a), betas(b)
    if mine == theirs or mine != theirs[::-1]:
        return None
    who = "A" if mine[0] < mine[1] else "B"
    words = (
        f"beta_fast and beta_slow swapped in {who} (beta_fast {mine[0]:g}, beta_slow {mine[1]:g} (A) "
        f"vs {theirs[0]:g}, {theirs[1]:g} (B))"
    )
    return words, ("beta_fast", "beta_slow")


def _longrope_factors(r: RotaryParams) -> list[float]:
    """LongRoPE's per-frequency factors: the list the table uses (:func:`_longrope_unused`)."""
    return factors(r.short_factor if _longrope_unused(r) == ("long_factor",) else r.long_factor)


def _longrope32(r: RotaryParams, i: Ids, e: np.ndarray, default: np.ndarray, factor: np.float32) -> np.ndarray:
    ext = np.array(_longrope_factors(r), dtype=f32)[i]
    return np.asarray(f32(1) / (ext * pow32(r.base, e)))


def _llama3_32(r: RotaryParams, i: Ids, e: np.ndarray, default: np.ndarray, factor: np.float32) -> np.ndarray:
    orig = r.original_max_position_embeddings
    assert orig is not None and r.low_freq_factor is not None and r.high_freq_factor is not None
    low_wavelen, high_wavelen = orig / r.low_freq_factor, orig / r.high_freq_factor
    wavelen = (f32(1) / default) * f32(2 * math.pi)
    inv = np.where(wavelen > f32(low_wavelen), default / factor, default)
    smooth = ((f32(1) / wavelen) * f32(orig) - f32(r.low_freq_factor)) / f32(r.high_freq_factor - r.low_freq_factor)
    smoothed = (f32(1) - smooth) * inv / factor + smooth * inv
    medium = ~(wavelen < f32(high_wavelen)) & ~(wavelen > f32(low_wavelen))
    return np.where(medium, smoothed, inv).astype(f32)


def _keras_dynamic32(r: RotaryParams, i: Ids, e: np.ndarray, default: np.ndarray, factor: np.float32) -> np.ndarray:
    # keras-hub: inv / ops.power(float32(factor), float32(dim) / float32(max(1, dim − 2)))
    exponent = f32(r.dim) / f32(max(1, r.dim - 2))
    return np.asarray(default / pow32(factor, np.asarray(exponent)))


def _litgpt_yarn32(r: RotaryParams, i: Ids, e: np.ndarray, default: np.ndarray, factor: np.float32) -> np.ndarray:
    # litgpt's build_rope_cache: the ramp weighs the *extrapolated* frequencies (HF's weighs the
    # interpolated ones), and the range stops at dim/2 − 1.
    pos = pow32(r.base, e)
    extrapolation = f32(1) / pos
    interpolation = f32(1) / (factor * pos)
    low, high = yarn_range(r, r.dim // 2 - 1)
    ramp = np.clip((i.astype(f32) - f32(low)) / f32(high - low), f32(0), f32(1))
    return np.asarray(interpolation * (f32(1) - ramp) + extrapolation * ramp)


def _litgpt_yarn64(r: RotaryParams, i: Ids, default: np.ndarray, factor: float) -> np.ndarray:
    low, high = yarn_range(r, r.dim // 2 - 1)
    ramp = np.clip((i - low) / (high - low), 0, 1)
    return np.asarray((default / factor) * (1 - ramp) + default * ramp)


def _litgpt_yarn_attention(r: RotaryParams) -> float:
    # litgpt scales cos and sin only when mscale or mscale_all_dim is given (HF: 0.1·ln f + 1 by default).
    factor = r.factor
    assert factor is not None
    if r.attention_factor is not None:
        return r.attention_factor
    if r.mscale and r.mscale_all_dim:
        return float(yarn_mscale(factor, r.mscale) / yarn_mscale(factor, r.mscale_all_dim))
    if r.mscale_all_dim:
        return yarn_mscale(factor, r.mscale_all_dim)
    if r.mscale:
        return yarn_mscale(factor, r.mscale)
    return 1.0


def inv_freq_float32(r: RotaryParams, used: Ids | None = None) -> np.ndarray:
    """``inv_freq`` as HF computes it in float32 (scalars rounded to float32 as torch does; pow
    evaluated in float64 and rounded once; ``x / t`` with a Python ``x`` is torch's
    ``t.reciprocal() * x``); ``used``: those frequencies alone (each scaling takes a frequency
    from its own index: the same values)."""
    # torch.arange(0, dim, 2, dtype=int64).float() / dim; an odd dim's dim // 2 frequencies, as
    # rotary-embedding-torch takes them (torch.arange(0, dim, 2)[:(dim // 2)]), or all ⌈dim/2⌉ (litgpt).
    i = _indices(r, used)
    e = (2 * i).astype(f32) / f32(r.dim)
    # HF: 1.0 / (base ** e); keras-hub: ops.power(float32(base), -e), one rounding.
    default = f32(1) / pow32(r.base, e) if r.form == "pow" else pow32(r.base, -e)
    factor = f32(r.factor) if r.factor is not None else f32(1)
    return SCALINGS[r.scaling].float32(r, i, e, default, factor)


def _indices(r: RotaryParams, used: Ids | None) -> Ids:
    return np.arange(r.frequency_count) if used is None else np.asarray(used, dtype=np.intp)


# -- the same formulas in float64, from the correctly rounded default inv_freq -------------------------
def _powers(r: RotaryParams, base: float, i: Ids) -> np.ndarray:
    """``base^(−2i/dim)`` for each ``i``, correctly rounded (every frequency's exponents kept
    between calls: :func:`paper_exponents`)."""
    whole = i.size == r.frequency_count and np.array_equal(i, np.arange(i.size))
    exponents = paper_exponents(r.dim, r.frequency_count) if whole else tuple((2 * int(k), r.dim) for k in i)
    return np.array(frequencies(base, 1.0, exponents)[0])


def _dynamic64(r: RotaryParams, i: Ids, default: np.ndarray, factor: float) -> np.ndarray:
    orig = r.original_max_position_embeddings
    assert orig is not None
    seq = max(r.seq_len, orig)
    return _powers(r, r.base * ((factor * seq / orig) - (factor - 1)) ** (r.dim / (r.dim - 2)), i)


def _yarn64(r: RotaryParams, i: Ids, default: np.ndarray, factor: float) -> np.ndarray:
    low, high = yarn_range(r)
    extra = 1 - np.clip((i - low) / (high - low), 0, 1)
    return np.asarray((default / factor) * (1 - extra) + default * extra)


def _llama3_64(r: RotaryParams, i: Ids, default: np.ndarray, factor: float) -> np.ndarray:
    orig = r.original_max_position_embeddings
    assert orig is not None and r.low_freq_factor is not None and r.high_freq_factor is not None
    wavelen = 2 * math.pi / default
    inv = np.where(wavelen > orig / r.low_freq_factor, default / factor, default)
    smooth = (orig / wavelen - r.low_freq_factor) / (r.high_freq_factor - r.low_freq_factor)
    medium = (wavelen >= orig / r.high_freq_factor) & (wavelen <= orig / r.low_freq_factor)
    return np.where(medium, (1 - smooth) * inv / factor + smooth * inv, inv)


def inv_freq_float64(r: RotaryParams, used: Ids | None = None) -> np.ndarray:
    """``inv_freq`` from the same formulas in float64, with ``base^(−2i/dim)`` correctly rounded;
    ``used``: those frequencies alone (the same values; an exact recipe's 60-digit powers cost
    ~8 µs each, and identify screens 1024 columns of a 65536-wide table)."""
    factor = r.factor if r.factor is not None else 1.0
    i = _indices(r, used)
    return np.asarray(SCALINGS[r.scaling].float64(r, i, _powers(r, r.base, i), factor))


def inv_freq_near(r: RotaryParams) -> np.ndarray:
    """:func:`inv_freq_float64` with ``base^(−2i/dim)`` from NumPy's float64 ``pow`` (within an ulp
    or two, not correctly rounded): for measuring (where a fitted start lies), never for a table.
    The correctly rounded powers cost ~8 µs each (60-digit decimals): 0.3 s at 65536 columns, for
    each θ a fit tried.  Dynamic NTK's rescaled θ keeps them."""
    factor = r.factor if r.factor is not None else 1.0
    i = _indices(r, None)
    default = np.power(float(r.base), -(2 * i) / r.dim)
    return np.asarray(SCALINGS[r.scaling].float64(r, i, default, factor))


# -- the factor HF multiplies cos and sin by ------------------------------------------------------------
def _yarn_attention(r: RotaryParams) -> float:
    factor = r.factor
    assert factor is not None
    if r.attention_factor is not None:
        return r.attention_factor
    if r.mscale and r.mscale_all_dim:
        return float(yarn_mscale(factor, r.mscale) / yarn_mscale(factor, r.mscale_all_dim))
    return yarn_mscale(factor)


def _longrope_attention(r: RotaryParams) -> float:
    if r.attention_factor is not None:
        return r.attention_factor
    factor, orig = r.factor, r.original_max_position_embeddings
    assert factor is not None and orig is not None
    if factor <= 1.0:
        return 1.0
    return math.sqrt(1 + math.log(factor) / math.log(orig))


# -- checks beyond the keys each needs ------------------------------------------------------------------
def _check_dynamic(r: RotaryParams) -> None:
    if r.dim < 4:
        raise RecipeError(
            f"scaling=dynamic rescales the base by factor^(dim/(dim−2)), which needs dim ≥ 4, got {r.dim}"
        )


def _check_longrope(r: RotaryParams) -> None:
    if r.factor is None and r.attention_factor is None:
        raise RecipeError(
            "scaling=longrope needs --factor (max_position_embeddings / original_max_position_embeddings, "
            "Phi-3 128k: 131072/4096 = 32) or --attention-factor"
        )


def _check_llama3(r: RotaryParams) -> None:
    assert r.low_freq_factor is not None and r.high_freq_factor is not None
    if r.high_freq_factor <= r.low_freq_factor:
        raise RecipeError(
            f"high_freq_factor ({r.high_freq_factor}) must be greater than low_freq_factor "
            f"({r.low_freq_factor}): Llama 3.1 uses 4 and 1"
        )


def _unscaled32(r: RotaryParams, i: Ids, e: np.ndarray, default: np.ndarray, factor: np.float32) -> np.ndarray:
    return default


def proportional_angles(r: RotaryParams) -> int:
    """The frequencies proportional RoPE rotates, HF's ``int(partial_rotary_factor * head_dim // 2)``
    (Gemma 4's full-attention layers): the others are 0, columns that never turn."""
    share = r.partial_rotary_factor if r.partial_rotary_factor is not None else 1.0
    return int(share * r.dim // 2)


def _proportional32(r: RotaryParams, i: Ids, e: np.ndarray, default: np.ndarray, factor: np.float32) -> np.ndarray:
    # _compute_proportional_rope_parameters: 1 / base^(2i/head_dim) for the rotated ones (the
    # default's own), torch.zeros after them, then inv_freq /= factor.
    out = np.array(default, dtype=f32)
    out[i >= proportional_angles(r)] = 0
    return out / factor


def _proportional64(r: RotaryParams, i: Ids, default: np.ndarray, factor: float) -> np.ndarray:
    out = np.array(default, dtype=np.float64)
    out[i >= proportional_angles(r)] = 0
    return out / factor


def _proportional_said(a: RotaryParams, b: RotaryParams) -> tuple[str, tuple[str, ...]] | None:
    """``rotary on 16 of 64 frequencies (A) vs 64 (B)``: how many pairs turn, each side's."""
    mine, theirs = proportional_angles(a), proportional_angles(b)
    if mine == theirs or a.dim != b.dim:
        return None
    share = a.partial_rotary_factor if mine < theirs else b.partial_rotary_factor
    words = (
        f"rotary on {mine} of {a.dim // 2} frequencies (A) vs {theirs} (B), the others zero: "
        f"partial_rotary_factor {share if share is not None else 1.0:g} in {'A' if mine < theirs else 'B'}"
    )
    return words, ("partial_rotary_factor",)


def _check_proportional(r: RotaryParams) -> None:
    share = r.partial_rotary_factor
    if share is not None and not 0 < share <= 1:
        raise RecipeError(
            f"partial_rotary_factor must be in (0, 1], the share of the dim/2 frequencies rotated, got {share!r}: "
            "Gemma 4 uses 0.25"
        )


# -- how llama.cpp stores a scaling in a GGUF file beyond rope.scaling.type --------------------------
def _llama3_divisors(factors: np.ndarray, base: float, dim: int) -> dict[str, Any] | None:
    """The Llama 3.1 scaling whose per-frequency divisors ``factors`` are, as ``convert_hf_to_gguf.py``
    computes them from ``factor``, ``low_freq_factor``, ``high_freq_factor`` and
    ``original_max_position_embeddings`` (float32 frequencies, the smooth ramp in torch's float32,
    stored as float32): every candidate of the published values is rebuilt here in float64 and must
    give the file's factors within 2⁻¹⁶ relative (torch's float32 ramp is up to 1.7·10⁻⁶ away where
    the ramp is steep); none is guessed, and the candidates' factors differ by far more than that.
    None: no published one gives them."""
    freqs = (1.0 / (np.float32(base) ** (np.arange(0, dim, 2, dtype=np.float32) / np.float32(dim)))).astype(np.float32)
    factor = float(np.max(factors))
    for old in (8192, 4096, 2048, 16384, 32768, 65536, 131072):
        for low, high in ((1.0, 4.0), (1.0, 2.0), (1.0, 8.0), (2.0, 4.0), (0.5, 4.0)):
            ramp = []
            for freq in freqs.tolist():
                wavelen = 2 * math.pi / freq
                if wavelen < old / high:
                    ramp.append(1.0)
                elif wavelen > old / low:
                    ramp.append(factor)
                else:
                    smooth = (old / wavelen - low) / (high - low)
                    ramp.append(1 / ((1 - smooth) / factor + smooth))
            if len(ramp) == len(factors) and np.allclose(ramp, factors, rtol=2.0**-16, atol=0):
                return {
                    "factor": factor,
                    "low_freq_factor": low,
                    "high_freq_factor": high,
                    "original_max_position_embeddings": old,
                }
    return None


# -- proposals: what a measured inv_freq says of each scaling (the fitter's inverse) -----------------
#: ``original_max_position_embeddings`` values models use: tried for the scalings that need one.
_COMMON_ORIGINAL = (1024, 2048, 4096, 8192, 16384, 32768)
#: Original lengths a llama3 or YaRN ramp is checked against (the ramp's place tells them apart).
_RAMP_ORIGINAL = tuple(sorted({*(2**k for k in range(6, 21)), *_COMMON_ORIGINAL, 4000, 6000, 40960}))


@dataclass(frozen=True)
class Measured:
    """A rotary cache's measured ``inv_freq``, as the rope fitter (:mod:`pecli.kinds.rope.thetas`)
    hands it to each scaling's :attr:`ScalingType.propose`: the frequencies and the θ they allow."""

    #: The measured frequencies, fastest first (the prefix that was measurable).
    inv: np.ndarray
    #: Their exponents ``2i/dim``.
    exponents: np.ndarray
    dim: int
    seq_len: int
    #: The cos/sin amplitude: 1, or an attention factor.
    amplitude: float
    #: Every frequency was measured, not only a fast prefix.
    complete: bool
    #: The round θ the fits allow, best first.
    thetas: tuple[float, ...]
    #: ``(θ, measured / default ratio)`` for each θ whose fastest frequencies the measurement rebuilds.
    waves: tuple[tuple[float, np.ndarray], ...]
    #: θ fitted to the most frequencies (None: no fit).
    full: float | None
    #: θ values models use, tried besides the fitted ones.
    common: tuple[float, ...]
    #: A candidate's exact ``inv_freq`` from its parameters; None: a grid is proposed unchecked.
    predict: Callable[[dict[str, Any]], np.ndarray] | None

    @property
    def scale(self) -> float:
        """The fastest frequency: 1 unless every frequency is divided alike (linear, keras-dynamic)."""
        return float(self.inv[0])

    def flat(self) -> Iterator[float]:
        """θ whose every frequency is the measured one over :attr:`scale` (no ramp, no factor list)."""
        return (theta for theta, ratio in self.waves if np.allclose(ratio, 1, rtol=1e-3))


def _default_proposals(m: Measured, name: str) -> Iterator[dict[str, Any]]:
    if math.isclose(m.scale, 1, rel_tol=1e-6):
        yield from ({"base": theta} for theta in m.flat())


def _divided(m: Measured) -> bool:
    """Every frequency divided alike, by more than rounding (linear, keras-dynamic)."""
    return 0 < m.scale < 1 and not math.isclose(m.scale, 1, rel_tol=1e-6)


def _linear_proposals(m: Measured, name: str) -> Iterator[dict[str, Any]]:
    if _divided(m):
        yield from ({"base": theta, "factor": round_number(1 / m.scale, 4)} for theta in m.flat())


def _keras_dynamic_proposals(m: Measured, name: str) -> Iterator[dict[str, Any]]:
    # Every frequency divided by factor^(dim/(dim−2)), a round factor.
    if _divided(m):
        f = (1 / m.scale) ** (max(1, m.dim - 2) / m.dim)
        nice = round(f * 4) / 4
        if nice > 1 and abs(f - nice) <= 1e-3 * nice:
            yield from ({"base": theta, "factor": nice} for theta in m.flat())


def _litgpt_yarn_proposals(m: Measured, name: str) -> Iterator[dict[str, Any]]:
    # Its ramp is reversed: the fast end is divided by the factor and the slow end left alone (ratio
    # 1/factor rising to 1, measured against the fast end's scale).
    if not 0 < m.scale < 1:
        return
    f = 1 / m.scale
    for theta, ratio in m.waves:
        if ratio[-1] > 1.01:
            for guess, orig in itertools.product(sorted({round(f), round(f * 2) / 2} - {0, 1}), _COMMON_ORIGINAL):
                yield {"base": theta, "factor": float(guess), "original_max_position_embeddings": orig}


def _ramp_proposals(rotations: float, keys: dict[str, Any], m: Measured, name: str) -> Iterator[dict[str, Any]]:
    """The slow end divided by a factor, the fast end left alone (llama3, yarn; YaRN's cos/sin
    amplitude also tells its factor).  The ramp's first scaled frequency says the original length
    o: llama3 scales the wavelengths past o/4, YaRN the frequencies past its beta_fast = 32
    rotations in o (``rotations``); each is d·ln(o/(2π·r))/(2·ln θ) columns in.  Only lengths
    within two columns of the measured one are proposed, each checked by ``m.predict`` on the
    measured frequencies."""
    if not math.isclose(m.scale, 1, rel_tol=1e-6):
        return
    for theta, ratio in m.waves:
        if ratio[-1] > 0.99 or ratio[-1] <= 0:
            continue
        slow = 1 / float(ratio[-1])
        guesses: set[float] = (
            {round(slow), round(slow * 2) / 2} if m.complete else {2, 4, 8, 16, 32, 40, 64, round(slow)}
        )
        if m.amplitude != 1.0:  # yarn's attention factor 0.1·ln(f) + 1
            guesses.add(round_number(math.exp(10 * (m.amplitude - 1)), 3))
        first = int(np.argmax(ratio < 1 - 1e-3))
        for f, orig in itertools.product(
            sorted(g for g in guesses if g > 1), _RAMP_ORIGINAL if m.predict is not None else _COMMON_ORIGINAL
        ):
            if m.predict is not None:
                if abs(m.dim * math.log(orig / (2 * math.pi * rotations)) / (2 * math.log(theta)) - first) > 2:
                    continue
            params = {"base": theta, "factor": float(f), "original_max_position_embeddings": orig, **keys}
            if m.predict is None or np.allclose(
                m.predict({**params, "scaling": name})[: m.inv.size], m.inv, rtol=5e-3, atol=0
            ):
                yield params


def _longrope_proposals(m: Measured, name: str) -> Iterator[dict[str, Any]]:
    # A factor per frequency, measured (every frequency must be): round ones rebuild it.
    plain = bool(m.thetas) and np.allclose(m.inv / (m.scale * np.power(m.thetas[0], -m.exponents)), 1, rtol=1e-3)
    if not m.complete or plain:
        return
    for theta in dict.fromkeys([*m.thetas[:2], *m.common]):
        ext = np.power(theta, -m.exponents) / m.inv
        if np.all(ext >= 0.999) and np.all(ext < 1e4):
            factors = ";".join(repr(round_number(float(f), 4)) for f in ext)
            own = {"base": theta, "short_factor": factors, "long_factor": factors}
            # The attention factor HF derives, sqrt(1 + ln f / ln o), for a round factor and a
            # common original length at or past the table (short factors there): the amplitude,
            # measured to ~1e-5, cannot tell 1.0801234 from 1.0801135.
            for f, orig in itertools.product((2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0), _COMMON_ORIGINAL):
                attention = math.sqrt(1 + math.log(f) / math.log(orig))
                if orig >= m.seq_len and abs(attention - m.amplitude) <= 5e-5 * m.amplitude:
                    yield {**own, "factor": f, "original_max_position_embeddings": orig}
            yield {**own, "original_max_position_embeddings": m.seq_len, "attention_factor": m.amplitude}


def _dynamic_proposals(m: Measured, name: str) -> Iterator[dict[str, Any]]:
    # θ' = θ·(f·s/o − (f − 1))^(d/(d−2)) for a round θ, a common o and a round f.
    if m.full is None or not math.isclose(m.scale, 1, rel_tol=1e-6) or m.dim < 4:
        return
    for theta, orig in itertools.product(m.common, _COMMON_ORIGINAL):
        if m.seq_len <= orig or m.full <= theta:
            continue
        r = (m.full / theta) ** ((m.dim - 2) / m.dim)
        f = (r - 1) / (m.seq_len / orig - 1)
        nice = round(f * 4) / 4
        if nice > 1 and abs(f - nice) <= 1e-2 * nice:
            yield {"base": theta, "factor": nice, "original_max_position_embeddings": orig}


@dataclass(frozen=True)
class ScalingType:
    """One scaling type of ``modeling_rope_utils.py``: every fact pecli knows of it."""

    name: str
    #: The keys of a config's ``rope_scaling`` it reads (the rope recipe's parameters of the same names).
    reads: tuple[str, ...]
    #: Those it cannot be built without.
    needs: tuple[str, ...]
    #: ``inv_freq`` in HF's float32 pipeline, from the frequencies' indices ``i``, their exponents
    #: ``2i/dim``, their default ``inv_freq`` and the factor: some frequencies alone (``i`` any of
    #: them) give the values they have among all.
    float32: Callable[[RotaryParams, Ids, np.ndarray, np.ndarray, np.float32], np.ndarray]
    #: ``inv_freq`` in float64, from the indices, the correctly rounded default ``inv_freq`` and the factor.
    float64: Callable[[RotaryParams, Ids, np.ndarray, float], np.ndarray]
    #: The factor cos and sin are multiplied by; None: 1 (no attention factor to fit or say).
    attention: Callable[[RotaryParams], float] | None = None
    #: A check beyond the keys it needs (a :class:`~pecli.errors.RecipeError` naming the fix).
    check: Callable[[RotaryParams], None] | None = None
    #: ``standardize_rope_params``: ``original_max_position_embeddings`` comes from the config (its
    #: top-level key first, Phi-3's place), else ``max_position_embeddings``.
    original_from_config: bool = False
    #: Without a ``factor``, HF takes ``max_position_embeddings / original_max_position_embeddings``.
    factor_from_lengths: bool = False
    #: HF's dynamic NTK rescales past ``max_position_embeddings``: it is the original length.
    original_is_max_position: bool = False
    #: Older names a config's ``rope_type`` may give it.
    aliases: tuple[str, ...] = ()
    #: A ``rope_type`` of transformers' (a model's config.json may name it); else another library's.
    in_transformers: bool = True
    #: The float32 forms of ``base^(−2i/dim)`` frameworks pair it with (a rope recipe's ``form``):
    #: keras-hub's ``neg-pow`` goes with the scalings keras-hub has whose inv_freq starts from it.
    forms: tuple[str, ...] = ("pow",)
    #: Its float32 inv_freq starts from the default one, so the form changes it (the others take
    #: their own ``1 / base^(2i/dim)``: a form does nothing there).
    from_default: bool = True
    #: The parameters it reads that a given table does not use (LongRoPE's other factor list):
    #: no cause when two tables differ in them.
    unused: Callable[[RotaryParams], tuple[str, ...]] = lambda r: ()
    #: The slips ports make in its parameters (YaRN's betas given the other way round, LongRoPE's
    #: other list used at this length), as parameter changes: diff tries each as a neighbour.
    slips: Callable[[RotaryParams], tuple[dict[str, Any], ...]] = lambda r: ()
    #: Such a slip between two tables of this scaling in its own words, A's first, and the
    #: parameters the phrase covers; None when they differ otherwise.
    said: Callable[[RotaryParams, RotaryParams], tuple[str, tuple[str, ...]] | None] = lambda a, b: None
    #: The value llama.cpp writes for it in a GGUF file's ``{arch}.rope.scaling.type``
    #: (``convert_hf_to_gguf.py``); None: a GGUF file cannot say it.
    gguf: str | None = None
    #: The GGUF tensors llama.cpp stores its per-frequency lists in (a config key → the tensor's
    #: name; Phi-3's LongRoPE factors, ``convert_hf_to_gguf.py``'s ``Phi3MiniModel``).
    gguf_lists: dict[str, str] = field(default_factory=dict)
    #: Its parameters from the per-frequency divisors llama.cpp stores in ``rope_freqs.weight``
    #: (Llama 3.1's), None where no published ones give them; None: not stored that way.
    gguf_divisors: Callable[[np.ndarray, float, int], dict[str, Any] | None] | None = None
    #: Its parameters (θ as ``base`` among them) that a measured ``inv_freq`` suggests, and the
    #: scaling's name (to predict a candidate by): the fitter's proposals, each rebuilt and proved
    #: on the whole table by identify.  None: never proposed (its tables are named as another's).
    propose: Callable[[Measured, str], Iterator[dict[str, Any]]] | None = None

    def proposals(self, measured: Measured) -> Iterator[dict[str, Any]]:
        """:attr:`propose`'s parameters with this scaling named: a rope recipe's, ready to build."""
        for params in self.propose(measured, self.name) if self.propose is not None else ():
            yield {**params, "scaling": self.name}


_BOTH_FORMS = ("pow", "neg-pow")
#: The keys YaRN reads, transformers' and litgpt's alike.
_YARN_KEYS = (
    "factor",
    "original_max_position_embeddings",
    "beta_fast",
    "beta_slow",
    "attention_factor",
    "mscale",
    "mscale_all_dim",
    "truncate",
)
#: Every scaling type by name, ``default`` (none) first.
SCALINGS: dict[str, ScalingType] = {
    s.name: s
    for s in (
        # transformers 4.x called Qwen2-VL's rope "mrope"; 5.x says default + mrope_section.
        ScalingType(
            "default",
            (),
            (),
            _unscaled32,
            lambda r, i, default, factor: default,
            aliases=("mrope",),
            forms=_BOTH_FORMS,
            gguf="none",
            propose=_default_proposals,
        ),
        ScalingType(
            "linear",
            ("factor",),
            ("factor",),
            _linear32,
            lambda r, i, default, factor: default / factor,
            forms=_BOTH_FORMS,
            gguf="linear",
            propose=_linear_proposals,
        ),
        ScalingType(
            "dynamic",
            ("factor", "original_max_position_embeddings"),
            ("factor", "original_max_position_embeddings"),
            _dynamic32,
            _dynamic64,
            check=_check_dynamic,
            original_is_max_position=True,
            from_default=False,
            propose=_dynamic_proposals,
        ),
        ScalingType(
            "yarn",
            _YARN_KEYS,
            ("factor", "original_max_position_embeddings"),
            _yarn32,
            _yarn64,
            attention=_yarn_attention,
            original_from_config=True,
            factor_from_lengths=True,
            from_default=False,
            slips=_yarn_slips,
            said=_yarn_said,
            gguf="yarn",
            propose=functools.partial(_ramp_proposals, 32.0, {}),
        ),
        ScalingType(
            "longrope",
            ("factor", "original_max_position_embeddings", "attention_factor", "short_factor", "long_factor"),
            ("original_max_position_embeddings", "short_factor", "long_factor"),
            _longrope32,
            lambda r, i, default, factor: np.asarray(default / np.array(_longrope_factors(r))[i]),
            attention=_longrope_attention,
            check=_check_longrope,
            original_from_config=True,
            factor_from_lengths=True,
            aliases=("su",),  # Phi-3's first name for it
            from_default=False,
            unused=_longrope_unused,
            slips=_longrope_slips,
            said=_longrope_said,
            gguf="longrope",
            gguf_lists={"long_factor": "rope_factors_long.weight", "short_factor": "rope_factors_short.weight"},
            propose=_longrope_proposals,
        ),
        ScalingType(
            "llama3",
            ("factor", "original_max_position_embeddings", "low_freq_factor", "high_freq_factor"),
            ("factor", "original_max_position_embeddings", "low_freq_factor", "high_freq_factor"),
            _llama3_32,
            _llama3_64,
            check=_check_llama3,
            original_from_config=True,
            gguf_divisors=_llama3_divisors,
            propose=functools.partial(_ramp_proposals, 4.0, {"low_freq_factor": 1.0, "high_freq_factor": 4.0}),
        ),
        # Gemma 4's full-attention layers: the first partial_rotary_factor·dim/2 frequencies of the
        # whole head's exponents, then zero frequencies (the table keeps the head's width).
        ScalingType(
            "proportional",
            ("factor", "partial_rotary_factor"),
            (),
            _proportional32,
            _proportional64,
            check=_check_proportional,
            said=_proportional_said,
        ),
        # keras-hub's RotaryEmbedding(rope_type="dynamic"): not HF's dynamic NTK (which rescales the
        # base past the original length) but inv_freq / factor^(dim/(dim−2)) at every length.
        ScalingType(
            "keras-dynamic",
            ("factor",),
            ("factor",),
            _keras_dynamic32,
            lambda r, i, default, factor: default / factor ** (r.dim / max(1, r.dim - 2)),
            in_transformers=False,
            forms=("neg-pow", "pow"),
            propose=_keras_dynamic_proposals,
        ),
        # litgpt's build_rope_cache with beta_fast/beta_slow in its rope_adjustments.
        ScalingType(
            "litgpt-yarn",
            _YARN_KEYS,
            ("factor", "original_max_position_embeddings"),
            _litgpt_yarn32,
            _litgpt_yarn64,
            attention=_litgpt_yarn_attention,
            in_transformers=False,
            from_default=False,
            propose=_litgpt_yarn_proposals,
        ),
    )
}


__all__ = [
    "SCALINGS",
    "Measured",
    "RotaryParams",
    "Scaling",
    "ScalingType",
    "betas",
    "factors",
    "inv_freq_float32",
    "inv_freq_float64",
    "inv_freq_near",
    "proportional_angles",
    "scaling_named",
    "yarn_mscale",
    "yarn_range",
]


def scaling_named(name: str) -> ScalingType | None:
    """The scaling type a config's ``rope_type`` names (its name or an older one)."""
    return SCALINGS.get(name) or next((t for t in SCALINGS.values() if name in t.aliases), None)
