"""Three more kinds: rotary (RoPE) caches, ALiBi slopes and bias, and learned (random-init) tables.

Like ``pecli.recipe``, the recipes here are NumPy-free frozen dataclasses (``--help`` stays fast);
the builders import NumPy inside the functions that need it.  Each kind builds any row range
``[r0, r1)`` directly, bit-identical to the same rows of the whole table.

- ``rope``: the cos/sin caches (or the raw angles, or ``inv_freq``) of rotary embeddings, with
  HuggingFace transformers' scaling types (``modeling_rope_utils.py``, 5.23) and two layouts;
- ``alibi``: the per-head slopes of ALiBi, or the bias table the frameworks add to the scores;
- ``learned``: a seeded draw from the initial distribution of a learned position table (BERT,
  GPT-2, RoBERTa, BART, ViT), reproducible row by row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from pecli.choices import DTYPES, DType
from pecli.errors import RecipeError
from pecli.recipe_base import _choice, _int_param, _positive_float, _Recipe

if TYPE_CHECKING:
    import numpy as np

from pecli.choices import (
    ALIBI_COMPUTES as ALIBI_COMPUTES,
)
from pecli.choices import (
    ALIBI_FORMS as ALIBI_FORMS,
)
from pecli.choices import (
    ALIBI_ORIGINS as ALIBI_ORIGINS,
)
from pecli.choices import (
    ALIBI_PARTS as ALIBI_PARTS,
)
from pecli.choices import (
    INITS as INITS,
)
from pecli.choices import (
    ROPE_COMPUTES as ROPE_COMPUTES,
)
from pecli.choices import (
    ROPE_LAYOUTS as ROPE_LAYOUTS,
)
from pecli.choices import (
    ROPE_PARTS as ROPE_PARTS,
)
from pecli.choices import (
    SCALINGS as SCALINGS,
)
from pecli.choices import (
    AlibiCompute as AlibiCompute,
)
from pecli.choices import (
    AlibiForm as AlibiForm,
)
from pecli.choices import (
    AlibiOrigin as AlibiOrigin,
)
from pecli.choices import (
    AlibiPart as AlibiPart,
)
from pecli.choices import (
    Init as Init,
)
from pecli.choices import (
    RopeCompute as RopeCompute,
)
from pecli.choices import (
    RopeLayout as RopeLayout,
)
from pecli.choices import (
    RopePart as RopePart,
)
from pecli.choices import (
    Scaling as Scaling,
)

#: Which optional RoPE parameters each scaling type reads (HF's required + optional keys).
_SCALING_PARAMS: dict[str, tuple[str, ...]] = {
    "default": (),
    "linear": ("factor",),
    "dynamic": ("factor", "original_max_position_embeddings"),
    "yarn": (
        "factor",
        "original_max_position_embeddings",
        "beta_fast",
        "beta_slow",
        "attention_factor",
        "mscale",
        "mscale_all_dim",
        "truncate",
    ),
    "longrope": ("factor", "original_max_position_embeddings", "attention_factor", "short_factor", "long_factor"),
    "llama3": ("factor", "original_max_position_embeddings", "low_freq_factor", "high_freq_factor"),
}
_REQUIRED: dict[str, tuple[str, ...]] = {
    "default": (),
    "linear": ("factor",),
    "dynamic": ("factor", "original_max_position_embeddings"),
    "yarn": ("factor", "original_max_position_embeddings"),
    "longrope": ("original_max_position_embeddings", "short_factor", "long_factor"),
    "llama3": ("factor", "original_max_position_embeddings", "low_freq_factor", "high_freq_factor"),
}
_EXAMPLES = {
    "factor": "--factor 8",
    "original_max_position_embeddings": "--original-max-position-embeddings 8192",
    "low_freq_factor": "--low-freq-factor 1 (Llama 3.1)",
    "high_freq_factor": "--high-freq-factor 4 (Llama 3.1)",
    "short_factor": "--short-factor '1.0,1.05,…' (dim/2 numbers)",
    "long_factor": "--long-factor '1.0,1.3,…' (dim/2 numbers)",
}
#: Positions that float32 still represents exactly (HF: ``position_ids.float()``).
_F32_EXACT = 2**24


def _spell(name: str) -> str:
    return "--len" if name == "length" else "--" + name.replace("_", "-")


def _optional_float(name: str, value: object, hint: str, *, positive: bool = True) -> float | None:
    if value is None:
        return None
    if positive:
        return _positive_float(name, value, hint)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(float(value)):
        raise RecipeError(f"{name} must be a finite number, got {value!r}: {hint}")
    return float(value)


def _factor_list(name: str, value: object, count: int) -> str:
    """A list of ``count`` positive numbers given as ``"a,b,c"`` (also ``;`` or spaces, optional
    brackets); stored as ``"a;b;c"`` so the ``KIND:PARAM=VALUE,...`` operand syntax keeps it whole."""
    if not isinstance(value, str):
        raise RecipeError(f"{name} must be text like '1.0,1.05,1.1', got {value!r}")
    text = value.strip().strip("[]()")
    items = [t for t in text.replace(";", ",").replace(" ", ",").split(",") if t.strip()]
    try:
        numbers = [float(t) for t in items]
    except ValueError:
        raise RecipeError(f"{name} must be numbers separated by commas, got {value!r}") from None
    if len(numbers) != count:
        raise RecipeError(
            f"{name} has {len(numbers)} numbers but a rotary dim of {2 * count} needs dim/2 = {count}: "
            "give one factor per frequency"
        )
    if not all(math.isfinite(x) and x > 0 for x in numbers):
        raise RecipeError(f"{name} must hold finite numbers > 0, got {value!r}")
    return ";".join(repr(x) for x in numbers)


# ====================================================================================== RoPE
@dataclass(frozen=True, slots=True)
class Rope(_Recipe):
    """Rotary position embedding caches: row ``r`` is position ``start + r``.

    ``inv_freq_i = base^(−2i/dim)`` (``i < dim/2``), changed by ``scaling`` exactly as HF
    transformers 5.23 ``modeling_rope_utils.py`` does (``linear``, ``dynamic`` NTK, ``yarn``,
    ``longrope``, ``llama3``; ``original_max_position_embeddings`` plays HF's
    ``max_position_embeddings`` for ``dynamic``).  ``dynamic`` and ``longrope`` depend on the
    sequence length, taken as HF's forward does for one call over these positions:
    ``seq_len = start + length``.  ``part``: ``cos`` or ``sin`` (times the attention factor of
    yarn/longrope), ``angle`` (``p·inv_freq``), ``inv_freq`` (one row of ``dim/2``).
    ``layout``: ``half`` repeats the ``dim/2`` values as ``[f0…f_{h−1}, f0…f_{h−1}]``
    (HF rotate_half, GPT-NeoX); ``pairs`` as ``[f0, f0, f1, f1, …]`` (Meta complex, GPT-J,
    lucidrains).  ``compute``: ``float32`` emulates HF's float32 pipeline step by step (what the
    model uses; within a few float32 ulps of torch, see dialects.md §0); ``exact`` is the real
    value of the same formula (``inv_freq`` evaluated in float64, the angle and cos/sin exact),
    rounded once: a reference, not what any framework computes.
    """

    length: int
    dim: int
    base: float = 10000.0
    start: int = 0
    layout: RopeLayout = "half"
    part: RopePart = "cos"
    scaling: Scaling = "default"
    factor: float | None = None
    original_max_position_embeddings: int | None = None
    low_freq_factor: float | None = None
    high_freq_factor: float | None = None
    beta_fast: float | None = None
    beta_slow: float | None = None
    attention_factor: float | None = None
    mscale: float | None = None
    mscale_all_dim: float | None = None
    short_factor: str | None = None
    long_factor: str | None = None
    truncate: bool = True
    compute: RopeCompute = "float32"
    dtype: DType = "float32"

    kind: ClassVar[str] = "rope"
    core: ClassVar[tuple[str, ...]] = ("length", "dim", "base", "layout", "part", "scaling", "dtype")

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "length", _int_param("length", self.length, 1, "give the number of positions, e.g. --len 4096"))
        set_(self, "dim", _int_param("dim", self.dim, 2, "give the rotary dim, e.g. --dim 128"))
        set_(self, "start", _int_param("start", self.start, 0, "positions count from 0 or more"))
        set_(self, "base", _positive_float("base", self.base, "RoPE's theta, e.g. --base 10000", not_one=True))
        for name, choices in (
            ("layout", ROPE_LAYOUTS),
            ("part", ROPE_PARTS),
            ("scaling", SCALINGS),
            ("compute", ROPE_COMPUTES),
            ("dtype", DTYPES),
        ):
            _choice(name, getattr(self, name), choices)
        if self.dim % 2:
            raise RecipeError(
                f"dim {self.dim} is odd, but rotary embeddings rotate pairs of dims: use an even --dim, e.g. "
                f"{self.dim - 1} or {self.dim + 1}"
            )
        if self.truncate not in (True, False, 0, 1):
            raise RecipeError(f"truncate must be true or false, got {self.truncate!r}")
        set_(self, "truncate", bool(self.truncate))
        hint = "a number > 0"
        for name in ("factor", "low_freq_factor", "high_freq_factor", "beta_fast", "beta_slow", "attention_factor"):
            set_(self, name, _optional_float(name, getattr(self, name), hint))
        for name in ("mscale", "mscale_all_dim"):
            set_(self, name, _optional_float(name, getattr(self, name), "DeepSeek uses 1.0", positive=False))
        if self.original_max_position_embeddings is not None:
            set_(
                self,
                "original_max_position_embeddings",
                _int_param(
                    "original_max_position_embeddings",
                    self.original_max_position_embeddings,
                    1,
                    "the length the model was trained on, e.g. 8192",
                ),
            )
        self._check_scaling_params()
        last = self.start + self.length - 1
        if last >= 2**53:
            raise RecipeError(
                f"positions must stay below 2**53, but the last is {last}: use a smaller --start or --len"
            )

    def _check_scaling_params(self) -> None:
        set_ = object.__setattr__
        used = _SCALING_PARAMS[self.scaling]
        unused = [
            n
            for names in _SCALING_PARAMS.values()
            for n in names
            if n not in used and getattr(self, n) != (True if n == "truncate" else None)
        ]
        if unused:
            names = ", ".join(dict.fromkeys(map(_spell, unused)))
            raise RecipeError(
                f"scaling={self.scaling} does not use {names}: drop it, or choose the scaling that does "
                f"({', '.join(s for s in SCALINGS if set(unused) <= set(_SCALING_PARAMS[s])) or 'none'})"
            )
        if self.scaling == "dynamic" and self.dim < 4:
            raise RecipeError(
                f"scaling=dynamic rescales the base by factor^(dim/(dim−2)), which needs dim ≥ 4, got {self.dim}"
            )
        missing = [n for n in _REQUIRED[self.scaling] if getattr(self, n) is None]
        if missing:
            raise RecipeError(
                f"scaling={self.scaling} needs {' and '.join(map(_spell, missing))}, e.g. "
                + ", ".join(_EXAMPLES[n] for n in missing)
            )
        if self.scaling == "longrope":
            for name in ("short_factor", "long_factor"):
                set_(self, name, _factor_list(name, getattr(self, name), self.dim // 2))
            if self.factor is None and self.attention_factor is None:
                raise RecipeError(
                    "scaling=longrope needs --factor (max_position_embeddings / original_max_position_embeddings, "
                    "Phi-3 128k: 131072/4096 = 32) or --attention-factor"
                )
        if self.scaling == "llama3":
            assert self.low_freq_factor is not None and self.high_freq_factor is not None
            if self.high_freq_factor <= self.low_freq_factor:
                raise RecipeError(
                    f"high_freq_factor ({self.high_freq_factor}) must be greater than low_freq_factor "
                    f"({self.low_freq_factor}): Llama 3.1 uses 4 and 1"
                )

    @property
    def shape(self) -> tuple[int, int]:
        if self.part == "inv_freq":
            return (1, self.dim // 2)
        return (self.length, self.dim)

    @property
    def seq_len(self) -> int:
        """HF's ``max(position_ids) + 1`` for one forward call over these positions."""
        return self.start + self.length

    def attention_scaling(self) -> float:
        """The factor HF multiplies cos and sin by (1 except for yarn and longrope)."""
        factor = self.factor
        if self.scaling == "yarn":
            assert factor is not None
            if self.attention_factor is not None:
                return self.attention_factor
            if self.mscale and self.mscale_all_dim:
                return float(_yarn_mscale(factor, self.mscale) / _yarn_mscale(factor, self.mscale_all_dim))
            return _yarn_mscale(factor)
        if self.scaling == "longrope":
            if self.attention_factor is not None:
                return self.attention_factor
            assert factor is not None and self.original_max_position_embeddings is not None
            if factor <= 1.0:
                return 1.0
            return math.sqrt(1 + math.log(factor) / math.log(self.original_max_position_embeddings))
        return 1.0

    def inv_freq(self) -> np.ndarray:
        """The ``dim/2`` inverse frequencies: float32 (``compute="float32"``) or float64."""
        return _rope_inv_freq_f32(self) if self.compute == "float32" else _rope_inv_freq_f64(self)

    def rows(self, r0: int, r1: int) -> np.ndarray:
        """Rows ``[r0, r1)`` of the table, built directly."""
        from pecli.core import check_row_range

        check_row_range(self.shape[0], r0, r1)
        return _rope_rows(self, r0, r1)


def _yarn_mscale(scale: float, mscale: float = 1.0) -> float:
    # HF's get_mscale (YaRN paper: 0.1·ln(s) + 1).
    if scale <= 1:
        return 1.0
    return 0.1 * mscale * math.log(scale) + 1.0


def _yarn_range(r: Rope) -> tuple[float, float]:
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


def _factors(text: str | None) -> list[float]:
    assert text is not None
    return [float(t) for t in text.split(";")]


def _rope_inv_freq_f32(r: Rope) -> np.ndarray:
    """``inv_freq`` as HF computes it in float32 (scalars rounded to float32 as torch does; pow
    evaluated in float64 and rounded once; ``x / t`` with a Python ``x`` is torch's
    ``t.reciprocal() * x``)."""
    import numpy as np

    f32 = np.float32
    dim = r.dim

    def pow32(b: Any, e: np.ndarray) -> np.ndarray:
        return np.power(np.float64(f32(b)), e.astype(np.float64)).astype(f32)

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
        low, high = _yarn_range(r)
        ramp = np.clip((np.arange(dim // 2, dtype=f32) - f32(low)) / f32(high - low), f32(0), f32(1))
        extra = f32(1) - ramp
        return np.asarray(interpolation * (f32(1) - extra) + extrapolation * extra)
    if r.scaling == "longrope":
        orig = r.original_max_position_embeddings
        assert orig is not None
        ext = np.array(_factors(r.long_factor if r.seq_len > orig else r.short_factor), dtype=f32)
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


def _rope_inv_freq_f64(r: Rope) -> np.ndarray:
    """``inv_freq`` from the same formulas in float64, with ``base^(−2i/dim)`` correctly rounded."""
    import numpy as np

    from pecli.numerics import frequencies

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
        low, high = _yarn_range(r)
        extra = 1 - np.clip((np.arange(half) - low) / (high - low), 0, 1)
        return np.asarray((default / factor) * (1 - extra) + default * extra)
    if r.scaling == "longrope":
        orig = r.original_max_position_embeddings
        assert orig is not None
        return np.asarray(default / np.array(_factors(r.long_factor if r.seq_len > orig else r.short_factor)))
    orig = r.original_max_position_embeddings
    assert orig is not None and r.low_freq_factor is not None and r.high_freq_factor is not None
    wavelen = 2 * math.pi / default
    inv = np.where(wavelen > orig / r.low_freq_factor, default / factor, default)
    smooth = (orig / wavelen - r.low_freq_factor) / (r.high_freq_factor - r.low_freq_factor)
    medium = (wavelen >= orig / r.high_freq_factor) & (wavelen <= orig / r.low_freq_factor)
    return np.where(medium, (1 - smooth) * inv / factor + smooth * inv, inv)


def _turns(omega: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``omega/2π`` as a double-double ``(hi, lo)`` (the exact kernel's input)."""
    import decimal

    import numpy as np

    from pecli.numerics import _TWO_PI_DEC

    ctx = decimal.Context(prec=60)
    hi, lo = np.empty(len(omega)), np.empty(len(omega))
    for i, w in enumerate(omega.tolist()):
        t = ctx.divide(decimal.Decimal(w), _TWO_PI_DEC)
        hi[i] = float(t)
        lo[i] = float(ctx.subtract(t, decimal.Decimal(hi[i])))
    return hi, lo


def _rope_rows(r: Rope, r0: int, r1: int) -> np.ndarray:
    import numpy as np

    from pecli.core import _BLOCK_CELLS
    from pecli.numerics import sincos

    inv = r.inv_freq()
    half = r.dim // 2
    if r.part == "inv_freq":
        return np.asarray(inv[None, :], dtype=r.dtype)[r0:r1]
    out = np.empty((r1 - r0, r.dim), dtype=r.dtype)
    # Column views for the dim/2 distinct values: the layout is only where they go.
    first, second = (out[:, :half], out[:, half:]) if r.layout == "half" else (out[:, 0::2], out[:, 1::2])
    att = r.attention_scaling()
    if r.compute == "exact":
        w_hi, w_lo = _turns(inv)
    step = max(1, _BLOCK_CELLS // half)
    for a in range(0, r1 - r0, step):
        b = min(a + step, r1 - r0)
        positions = np.arange(r.start + r0 + a, r.start + r0 + b)
        values: Any
        if r.compute == "float32":
            f32 = np.float32
            angle = positions.astype(f32)[:, None] * inv[None, :]  # position_ids.float() * inv_freq
            if r.part == "angle":
                values = angle
            else:
                fn = np.cos if r.part == "cos" else np.sin
                values = fn(angle.astype(np.float64)).astype(f32) * f32(att)
        elif r.part == "angle":
            values = positions.astype(np.float64)[:, None] * inv[None, :]
        else:
            s, c = sincos(positions.astype(np.float64), w_hi, w_lo)
            values = (c if r.part == "cos" else s) * att
        # Assignment casts to the output dtype: float32 values as HF's ``.to(x.dtype)``,
        # float64 (exact) values rounded once.
        first[a:b] = values
        second[a:b] = values
    return out


# ===================================================================================== ALiBi
@dataclass(frozen=True, slots=True)
class Alibi(_Recipe):
    """ALiBi: head ``k`` of ``n`` gets the slope ``2^(−8(k+1)/n)`` (``n`` a power of two;
    otherwise the first ``c = 2^⌊log2 n⌋`` slopes of ``c`` heads, then every other slope of
    ``2c`` heads: ofirpress's ``get_slopes``, which Bloom, MPT and GPT-NeoX reproduce).

    ``part``: ``slopes`` (one row of ``heads``) or ``bias``, the ``(heads, length)`` table the
    frameworks add to the attention scores of every query: ``origin=first`` is Bloom's and
    ofirpress's ``slope·j`` for key ``j = 0..length−1``; ``origin=last`` is MPT's
    ``slope·(j − length + 1)`` (≤ 0).  Both equal ``−slope·distance`` up to a per-row constant,
    which softmax ignores.  ``compute``: ``float32`` is the frameworks' pipeline (float32 slopes,
    float32 ``slope·j``), with the slopes from ``form``: ``list`` (ofirpress/GPT-NeoX: the
    float64 Python list cast to float32), ``pow`` (Bloom: ``float32(2^(−8/c))`` to the power k
    in float32) or ``recip`` (MPT: ``1/2^(8k/n2)`` in float32, ``n2 = 2^⌈log2 n⌉``);
    ``exact``: slopes and bias rounded once from the exact values.
    """

    heads: int
    length: int | None = None
    part: AlibiPart = "slopes"
    origin: AlibiOrigin = "first"
    compute: AlibiCompute = "float32"
    form: AlibiForm = "list"
    dtype: DType = "float32"

    kind: ClassVar[str] = "alibi"
    core: ClassVar[tuple[str, ...]] = ("heads", "part", "dtype")

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "heads", _int_param("heads", self.heads, 1, "give the number of attention heads, e.g. --heads 16"))
        for name, choices in (
            ("part", ALIBI_PARTS),
            ("origin", ALIBI_ORIGINS),
            ("compute", ALIBI_COMPUTES),
            ("form", ALIBI_FORMS),
            ("dtype", DTYPES),
        ):
            _choice(name, getattr(self, name), choices)
        if self.heads > 2**20:
            raise RecipeError(f"heads must be at most 2**20, got {self.heads}: slopes 2^(−8k/n) underflow beyond")
        if self.part == "bias":
            if self.length is None:
                raise RecipeError("part=bias needs the number of key positions: give --len, e.g. --len 2048")
            set_(self, "length", _int_param("length", self.length, 1, "the number of key positions, e.g. --len 2048"))
            if self.compute == "float32" and self.length > _F32_EXACT:
                raise RecipeError(
                    f"length {self.length} is beyond 2**24, where float32 distances stop being exact: "
                    "use compute=exact or a smaller --len"
                )
        else:
            if self.length is not None:
                raise RecipeError("length only applies to part=bias: drop --len, or add --part bias")
            if self.origin != "first":
                raise RecipeError("origin only applies to part=bias: drop --origin, or add --part bias")
        if self.compute == "exact" and self.form != "list":
            raise RecipeError(f"form={self.form} is a float32 pipeline: use compute=float32, or drop --form")

    @property
    def shape(self) -> tuple[int, int]:
        if self.part == "slopes":
            return (1, self.heads)
        assert self.length is not None
        return (self.heads, self.length)

    def slopes(self) -> np.ndarray:
        """The ``heads`` slopes: float32 (``compute="float32"``) or float64 (exact, correctly rounded)."""
        return _alibi_slopes(self)

    def rows(self, r0: int, r1: int) -> np.ndarray:
        """Rows ``[r0, r1)`` of the table (heads, for ``part=bias``), built directly."""
        import numpy as np

        from pecli.core import check_row_range

        check_row_range(self.shape[0], r0, r1)
        slopes = self.slopes()
        if self.part == "slopes":
            return np.asarray(slopes[None, :], dtype=self.dtype)[r0:r1]
        assert self.length is not None
        keys = np.arange(self.length) - (self.length - 1 if self.origin == "last" else 0)
        dt: Any = np.float32 if self.compute == "float32" else np.float64
        # float32: the frameworks' float32 product slope·j (one rounding each), then .to(dtype).
        bias: np.ndarray = slopes[r0:r1, None].astype(dt) * keys[None, :].astype(dt)
        return bias.astype(self.dtype)


def slope_exponents(n: int) -> list[tuple[int, int]]:
    """``(k, m)`` per head, the slope being ``2^(−8k/m)``: ofirpress's ``get_slopes`` order."""
    if n & (n - 1) == 0:
        return [(k + 1, n) for k in range(n)]
    c = 1 << (n.bit_length() - 1)
    return slope_exponents(c) + slope_exponents(2 * c)[0::2][: n - c]


def _ofirpress_slopes(n: int) -> list[float]:
    # attention_with_linear_biases fairseq/models/transformer.py::get_slopes, in Python floats.
    def power_of_2(m: int) -> list[float]:
        start = 2 ** (-(2 ** -(math.log2(m) - 3)))
        return [start * start**i for i in range(m)]

    if math.log2(n).is_integer():
        return power_of_2(n)
    c = 2 ** math.floor(math.log2(n))
    return power_of_2(c) + _ofirpress_slopes(2 * c)[0::2][: n - c]


def _alibi_slopes(a: Alibi) -> np.ndarray:
    import numpy as np

    n = a.heads
    f32 = np.float32
    if a.compute == "exact":
        from pecli.numerics import frequencies

        return np.array(frequencies(2.0, 1.0, tuple((8 * k, m) for k, m in slope_exponents(n)))[0])
    if a.form == "list":
        return np.array(_ofirpress_slopes(n), dtype=f32)
    if a.form == "pow":  # HF bloom _get_alibi_slopes: torch.pow(float32 base, int32 powers)
        c = 2 ** math.floor(math.log2(n))

        def powers(m: int, ks: Any) -> Any:
            base = np.float64(f32(2 ** (-(2 ** -(math.log2(m) - 3)))))
            return np.power(base, ks.astype(np.float64)).astype(f32)

        parts = [powers(c, np.arange(1, 1 + c))]
        if c != n:
            parts.append(powers(2 * c, np.arange(1, 1 + 2 * min(c, n - c), 2)))
        return np.concatenate(parts)
    # recip: HF mpt build_mpt_alibi_tensor(alibi_bias_max=8)
    n2 = 2 ** math.ceil(math.log2(n))
    x = np.arange(1, n2 + 1).astype(f32) * f32(8 / n2)
    slopes = f32(1) / np.power(2.0, x.astype(np.float64)).astype(f32)
    if n2 != n:
        slopes = np.concatenate([slopes[1::2], slopes[::2]])[:n]
    return slopes


# =================================================================================== learned
@dataclass(frozen=True, slots=True)
class Learned(_Recipe):
    """A learned position table at initialisation: ``length`` rows of ``dim`` values drawn from
    ``N(0, std²)`` (``init=normal``: HF BERT/GPT-2/RoBERTa/BART ``normal_(0, 0.02)``) or the
    normal truncated at ±2·std and redrawn (``truncated-normal``: TF's
    ``truncated_normal_initializer``, original BERT).  timm/HF ViT's ``trunc_normal_(std=.02)``
    truncates at ±2 *absolute* (±100 std), so it is ``normal`` here.

    The values come from NumPy's PCG64, row ``r`` from its own stream
    ``SeedSequence(seed).spawn(r+1)[r]``, so any row range is computed directly: the same
    distribution as the framework's init, not torch's random numbers.  Drawn in float64,
    scaled, rounded once.  ``padding_idx = k`` puts ``k + 1`` rows in front and zeroes row ``k``
    (RoBERTa: 514 = 512 + 2 rows, row 1 zero); ``offset = k`` puts ``k`` drawn rows in front
    (BART/OPT: 2).
    """

    length: int
    dim: int
    std: float = 0.02
    init: Init = "normal"
    seed: int = 0
    padding_idx: int | None = None
    offset: int = 0
    dtype: DType = "float32"

    kind: ClassVar[str] = "learned"
    core: ClassVar[tuple[str, ...]] = ("length", "dim", "std", "init", "seed", "dtype")

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "length", _int_param("length", self.length, 1, "give the number of positions, e.g. --len 512"))
        set_(self, "dim", _int_param("dim", self.dim, 1, "give the hidden size, e.g. --dim 768"))
        set_(self, "std", _positive_float("std", self.std, "BERT and GPT-2 use --std 0.02"))
        set_(self, "seed", _int_param("seed", self.seed, 0, "any whole number ≥ 0, e.g. --seed 0"))
        set_(self, "offset", _int_param("offset", self.offset, 0, "BART and OPT use --offset 2"))
        _choice("init", self.init, INITS)
        _choice("dtype", self.dtype, DTYPES)
        if self.padding_idx is not None:
            set_(self, "padding_idx", _int_param("padding_idx", self.padding_idx, 0, "RoBERTa uses 1"))
            if self.offset:
                raise RecipeError(
                    "give padding_idx (rows in front with a zero row, RoBERTa) or offset (drawn rows in front, "
                    "BART), not both"
                )

    @property
    def front(self) -> int:
        """Rows before the first position."""
        return self.offset if self.padding_idx is None else self.padding_idx + 1

    @property
    def shape(self) -> tuple[int, int]:
        return (self.length + self.front, self.dim)

    def rows(self, r0: int, r1: int) -> np.ndarray:
        """Rows ``[r0, r1)`` of the table, each drawn from its own stream."""
        import numpy as np

        from pecli.core import check_row_range

        check_row_range(self.shape[0], r0, r1)
        out = np.empty((r1 - r0, self.dim), dtype=self.dtype)
        for r in range(r0, r1):
            if r == self.padding_idx:
                out[r - r0] = 0
                continue
            rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(self.seed, spawn_key=(r,))))
            z = rng.standard_normal(self.dim)
            if self.init == "truncated-normal":
                bad = np.abs(z) > 2.0
                while bad.any():  # TF: values beyond 2 std are dropped and re-picked
                    z[bad] = rng.standard_normal(int(bad.sum()))
                    bad = np.abs(z) > 2.0
            out[r - r0] = z * self.std
        return out


__all__ = [
    "ALIBI_COMPUTES",
    "ALIBI_FORMS",
    "ALIBI_ORIGINS",
    "ALIBI_PARTS",
    "INITS",
    "ROPE_COMPUTES",
    "ROPE_LAYOUTS",
    "ROPE_PARTS",
    "SCALINGS",
    "Alibi",
    "Learned",
    "Rope",
    "slope_exponents",
]
