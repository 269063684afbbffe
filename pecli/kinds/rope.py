"""The rope kind: rotary position embedding caches (cos, sin, angle, inv_freq) and their scalings.

RoFormer's rotary embedding (Su et al. 2021) as the frameworks cache it: HF transformers 5.23
``LlamaRotaryEmbedding`` / ``GPTNeoXRotaryEmbedding`` with ``modeling_rope_utils.py``'s scaling
types, Meta's complex ``freqs_cis`` and lucidrains' ``rotary-embedding-torch`` (pairs layout).
This module builds any row range (:meth:`Rope.rows`) and fits a table back to its θ, layout,
part, scaling and start (:meth:`Rope.fit`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Literal, get_args

import numpy as np

from pecli.dtypes import DType
from pecli.errors import RecipeError
from pecli.fitting import Arr, Sample, cosine_frequencies, fit_base, round_number
from pecli.kernels.exact import row_blocks, sincos, turns
from pecli.kernels.pipelines import f32, rotary32
from pecli.kernels.rope_scaling import inv_freq_float32, inv_freq_float64, yarn_mscale
from pecli.kernels.threads import run_blocks
from pecli.kinds.base import Recipe, check_row_range, choice, flag, int_param, optional_float, positive_float, spell

RopeLayout = Literal["half", "pairs", "once"]
RopePart = Literal["cos", "sin", "angle", "inv_freq"]
Scaling = Literal["default", "linear", "dynamic", "yarn", "longrope", "llama3"]
RopeCompute = Literal["float32", "exact"]

#: The optional parameters each scaling type reads: HF's keys for it (:mod:`pecli.hfconfig` reads them).
SCALING_PARAMS: dict[str, tuple[str, ...]] = {
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


def factor_list(name: str, value: object, count: int) -> str:
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


@dataclass(frozen=True, slots=True)
class Rope(Recipe):
    """Rotary position embedding caches: row ``r`` is position ``start + r``.

    ``inv_freq_i = base^(−2i/dim)`` (``i < dim/2``), changed by ``scaling`` exactly as HF
    transformers 5.23 ``modeling_rope_utils.py`` does (``linear``, ``dynamic`` NTK, ``yarn``,
    ``longrope``, ``llama3``; ``original_max_position_embeddings`` plays HF's
    ``max_position_embeddings`` for ``dynamic``).  ``dynamic`` and ``longrope`` depend on the
    sequence length, taken as HF's forward does for one call over these positions:
    ``seq_len = start + length``.  ``part``: ``cos`` or ``sin`` (times the attention factor of
    yarn/longrope), ``angle`` (``p·inv_freq``), ``inv_freq`` (one row of ``dim/2``).
    ``layout``: ``half`` repeats the ``dim/2`` values as ``[f0…f_{h−1}, f0…f_{h−1}]``
    (HF rotate_half, GPT-NeoX); ``pairs`` as ``[f0, f0, f1, f1, …]`` (GPT-J, lucidrains);
    ``once`` keeps them once, ``dim/2`` columns (HF's ``freqs`` before ``cat``, the real or
    imaginary part of Meta's complex ``freqs_cis``).
    ``compute``: ``float32`` emulates HF's float32 pipeline step by step (what the
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
    example: ClassVar[str] = "--kind rope --len 4096 --dim 128"

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "length", int_param("length", self.length, 1, "give the number of positions, e.g. --len 4096"))
        set_(self, "dim", int_param("dim", self.dim, 2, "give the rotary dim, e.g. --dim 128"))
        set_(self, "start", int_param("start", self.start, 0, "positions count from 0 or more"))
        set_(self, "base", positive_float("base", self.base, "RoPE's theta, e.g. --base 10000", not_one=True))
        for name, literal in (
            ("layout", RopeLayout),
            ("part", RopePart),
            ("scaling", Scaling),
            ("compute", RopeCompute),
            ("dtype", DType),
        ):
            choice(name, getattr(self, name), get_args(literal))
        if self.dim % 2:
            raise RecipeError(
                f"dim {self.dim} is odd, but rotary embeddings rotate pairs of dims: use an even --dim, e.g. "
                f"{self.dim - 1} or {self.dim + 1}"
            )
        set_(self, "truncate", flag("truncate", self.truncate))
        hint = "a number > 0"
        for name in ("factor", "low_freq_factor", "high_freq_factor", "beta_fast", "beta_slow", "attention_factor"):
            set_(self, name, optional_float(name, getattr(self, name), hint))
        for name in ("mscale", "mscale_all_dim"):
            set_(self, name, optional_float(name, getattr(self, name), "DeepSeek uses 1.0", positive=False))
        if self.original_max_position_embeddings is not None:
            set_(
                self,
                "original_max_position_embeddings",
                int_param(
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
        used = SCALING_PARAMS[self.scaling]
        unused = [
            n
            for names in SCALING_PARAMS.values()
            for n in names
            if n not in used and getattr(self, n) != (True if n == "truncate" else None)
        ]
        if unused:
            names = ", ".join(dict.fromkeys(map(spell, unused)))
            raise RecipeError(
                f"scaling={self.scaling} does not use {names}: drop it, or choose the scaling that does "
                f"({', '.join(s for s in get_args(Scaling) if set(unused) <= set(SCALING_PARAMS[s])) or 'none'})"
            )
        if self.scaling == "dynamic" and self.dim < 4:
            raise RecipeError(
                f"scaling=dynamic rescales the base by factor^(dim/(dim−2)), which needs dim ≥ 4, got {self.dim}"
            )
        missing = [n for n in _REQUIRED[self.scaling] if getattr(self, n) is None]
        if missing:
            raise RecipeError(
                f"scaling={self.scaling} needs {' and '.join(map(spell, missing))}, e.g. "
                + ", ".join(_EXAMPLES[n] for n in missing)
            )
        if self.scaling == "longrope":
            for name in ("short_factor", "long_factor"):
                set_(self, name, factor_list(name, getattr(self, name), self.dim // 2))
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
        return (self.length, self.dim // 2 if self.layout == "once" else self.dim)

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
                return float(yarn_mscale(factor, self.mscale) / yarn_mscale(factor, self.mscale_all_dim))
            return yarn_mscale(factor)
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
        return inv_freq_float32(self) if self.compute == "float32" else inv_freq_float64(self)

    def rows(self, r0: int, r1: int) -> np.ndarray:
        """Rows ``[r0, r1)`` of the table, built directly."""
        check_row_range(self.shape[0], r0, r1)
        return _rope_rows(self, r0, r1)

    def wavelengths(self) -> np.ndarray:
        """``2π/inv_freq`` of each column's frequency (in positions)."""
        waves = 2 * math.pi / np.asarray(self.inv_freq(), dtype=np.float64)
        if self.part == "inv_freq" or self.layout == "once":
            return waves
        return np.tile(waves, 2) if self.layout == "half" else np.repeat(waves, 2)

    def pipeline(self) -> str:
        return self.compute

    def max_position(self) -> float:
        return 1.0 if self.part == "inv_freq" else float(self.start + self.length)

    # -- the inverse -------------------------------------------------------------------------
    @classmethod
    def fit(cls, sample: Sample) -> Iterator[Recipe]:
        """Rotary caches whose frequencies the table follows (see :func:`fit_rope`)."""
        yield from fit_rope(sample)

    @classmethod
    def sizes(cls, params: dict[str, Any], sample: Sample) -> Iterator[dict[str, Any]]:
        """inv_freq is one row of dim/2; the other parts are ``length`` rows of ``dim``."""
        if params.get("part") == "inv_freq" or sample.n == 1:
            yield {"length": 1, "dim": 2 * sample.d, "dtype": sample.dtype, "part": "inv_freq"}
        if sample.n > 1:
            # A model's cos cache, sin cache and angles are all that model's table, in any layout.
            for part in get_args(RopePart)[:3]:
                if sample.d % 2 == 0:
                    yield {"length": sample.n, "dim": sample.d, "dtype": sample.dtype, "part": part}
                yield {"length": sample.n, "dim": 2 * sample.d, "dtype": sample.dtype, "part": part, "layout": "once"}


def _rope_rows(r: Rope, r0: int, r1: int) -> np.ndarray:
    inv = r.inv_freq()
    half = r.dim // 2
    if r.part == "inv_freq":
        return np.asarray(inv[None, :], dtype=r.dtype)[r0:r1]
    out = np.empty((r1 - r0, r.shape[1]), dtype=r.dtype)
    # Column views for the dim/2 distinct values: the layout is only where they go.
    views = {"half": (out[:, :half], out[:, half:]), "pairs": (out[:, 0::2], out[:, 1::2]), "once": (out,)}
    placed = views[r.layout]
    att = r.attention_scaling()
    if r.compute == "exact":
        w_hi, w_lo = turns(inv)
    pairs = r.shape[0] * half  # the whole table's, so every row range has the whole's bits

    def block(a: int, b: int) -> None:
        positions = np.arange(r.start + r0 + a, r.start + r0 + b)
        values: Any
        targets = [view[a:b] for view in placed]
        if r.compute == "float32" and r.part != "angle":  # freqs.cos() * attention_scaling, in float32
            values = rotary32(positions, inv, r.part, pairs, into=targets[0])
            if att != 1.0:
                values *= f32(att)
            if values is targets[0]:  # written in place by the compiled pipeline
                targets = targets[1:]
        elif r.compute == "float32":
            values = positions.astype(f32)[:, None] * inv[None, :]  # position_ids.float() * inv_freq
        elif r.part == "angle":
            values = positions.astype(np.float64)[:, None] * inv[None, :]
        else:
            s, c = sincos(positions.astype(np.float64), w_hi, w_lo)
            values = (c if r.part == "cos" else s) * att
        # Assignment casts to the output dtype: float32 values as HF's ``.to(x.dtype)``,
        # float64 (exact) values rounded once.
        for target in targets:
            target[...] = values

    run_blocks(block, row_blocks(r1 - r0, half))
    return out


# ==================================================================================== fitting
#: θ values models use, tried as round candidates besides the fitted one.
_COMMON_THETAS = (10000.0, 500000.0, 1000000.0, 150000.0, 1e4 * 2**0.5)
#: original_max_position_embeddings values tried for the scalings that need one.
_COMMON_ORIGINAL = (1024, 2048, 4096, 8192, 16384, 32768)
#: Factors tried for NTK-aware θ rescaling, ``θ·f^(d/(d−2))`` (rotary-embedding-torch, dynamic NTK).
_COMMON_FACTORS = (1.5, 2.0, 3.0, 4.0, 8.0, 16.0)
#: Starts beyond this are not proposed (float32 positions stop being whole numbers at 2**24).
_MAX_START = 2**24
#: Rows read from the top to measure slow frequencies (their lever arm).
FIT_ROWS = 2048


def _layouts(d: int) -> list[tuple[RopeLayout, np.ndarray, int]]:
    """Each layout a ``d``-wide table could have: its distinct columns and the rotary dim."""
    out: list[tuple[RopeLayout, np.ndarray, int]] = []
    if d % 2 == 0 and d >= 4:
        out += [("half", np.arange(d // 2), d), ("pairs", np.arange(0, d, 2), d)]
    return [*out, ("once", np.arange(d), 2 * d)]


def _repeats(values: Arr, layout: RopeLayout) -> bool:
    """Whether the table repeats its ``d/2`` distinct columns as the layout says."""
    h = values.shape[1] // 2
    if layout == "half":
        return bool(np.array_equal(values[:, :h], values[:, h:], equal_nan=True))
    if layout == "pairs":
        return bool(np.array_equal(values[:, 0::2], values[:, 1::2], equal_nan=True))
    return True


def _scalings(inv: Arr, dim: int, seq_len: int, amplitude: float) -> Iterator[dict[str, Any]]:
    """Scaling parameters the measured ``inv_freq`` (and cos/sin amplitude) suggest, each with its θ.

    ``inv`` is fastest first; NaN where a frequency was too slow to measure.  θ and the scale come
    from the fastest quarter (which llama3 and yarn leave alone); the ratio of the measured to the
    default frequencies then tells the family: 1 everywhere (default), a constant (linear), 1 at
    the fast end and ``1/factor`` at the slow end (llama3, yarn), a pure power law with another θ
    (dynamic NTK).  Only proposals: identify rebuilds each one and compares.
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
        for t, f in itertools.product(_COMMON_THETAS, _COMMON_FACTORS)
        if dim > 2 and any(abs(t * f ** (dim / (dim - 2)) / x - 1) < 1e-4 for x in estimates)
    ]
    thetas = [t for t in dict.fromkeys(thetas) if t > 1]
    for theta in thetas:
        ratio = inv / (scale * np.power(theta, -e))
        if not np.allclose(ratio[:fast], 1, rtol=1e-3):
            continue
        if np.allclose(ratio, 1, rtol=1e-3):
            if math.isclose(scale, 1, rel_tol=1e-6):
                yield {"base": theta, "scaling": "default"}
            elif 0 < scale < 1:
                yield {"base": theta, "scaling": "linear", "factor": round_number(1 / scale, 4)}
            continue
        if not math.isclose(scale, 1, rel_tol=1e-6) or ratio[-1] > 0.99 or ratio[-1] <= 0:
            continue
        # The slow end divided by a factor: llama3, or yarn (whose cos/sin amplitude also tells it).
        slow = 1 / float(ratio[-1])
        guesses = {round(slow), round(slow * 2) / 2} if count == h else {2, 4, 8, 16, 32, 40, 64, round(slow)}
        if amplitude != 1.0:  # yarn's attention factor 0.1·ln(f) + 1
            guesses.add(round_number(math.exp(10 * (amplitude - 1)), 3))
        for f in sorted(g for g in guesses if g > 1):
            for orig in _COMMON_ORIGINAL:
                yield {
                    "base": theta,
                    "scaling": "llama3",
                    "factor": float(f),
                    "original_max_position_embeddings": orig,
                    "low_freq_factor": 1.0,
                    "high_freq_factor": 4.0,
                }
                yield {"base": theta, "scaling": "yarn", "factor": float(f), "original_max_position_embeddings": orig}
    # longrope: a factor per frequency, measured (every frequency must be): round ones rebuild it.
    plain = bool(thetas) and np.allclose(inv / (scale * np.power(thetas[0], -e)), 1, rtol=1e-3)
    if count == h and not plain:
        for theta in dict.fromkeys([*thetas[:2], *_COMMON_THETAS]):
            ext = np.power(theta, -e) / inv
            if np.all(ext >= 0.999) and np.all(ext < 1e4):
                factors = ";".join(repr(round_number(float(f), 4)) for f in ext)
                yield {
                    "base": theta,
                    "scaling": "longrope",
                    "short_factor": factors,
                    "long_factor": factors,
                    "original_max_position_embeddings": seq_len,
                    "attention_factor": amplitude,
                }
    # dynamic NTK: θ' = θ·(f·s/o − (f − 1))^(d/(d−2)) for a round θ, a common o and a round f.
    if estimates and math.isclose(scale, 1, rel_tol=1e-6) and dim >= 4:
        full = estimates[-1]
        for theta, orig in itertools.product(_COMMON_THETAS, _COMMON_ORIGINAL):
            if seq_len <= orig or full <= theta:
                continue
            r = (full / theta) ** ((dim - 2) / dim)
            f = (r - 1) / (seq_len / orig - 1)
            nice = round(f * 4) / 4
            if nice > 1 and abs(f - nice) <= 1e-2 * nice:
                yield {"base": theta, "scaling": "dynamic", "factor": nice, "original_max_position_embeddings": orig}


def _roundings(x: float) -> Iterator[float]:
    """``x`` to 1, 2, … 8 significant digits."""
    return (round_number(x, digits) for digits in range(1, 9))


def _fits(inv: Arr, scale: float, theta: float, e: Arr, rtol: float) -> bool:
    """Whether ``scale·θ^(−e)`` predicts the measured frequencies to ``rtol``."""
    return theta > 1 and bool(np.allclose(inv / (scale * np.power(theta, -e)), 1, rtol=rtol, atol=0))


def _start_of(head: Arr, inv: Arr, part: RopePart, amplitude: float) -> list[int]:
    """Candidate positions of row 0 from the phases of its distinct columns (cos: ``±``; sin:
    ``θ`` or ``π − θ``)."""
    if part == "angle":  # row 0 is start·inv_freq
        return [round(float(head[0, 0] / inv[0]))] if inv[0] > 0 and head[0, 0] >= 0 else []
    x = np.clip(head[0] / amplitude, -1.0, 1.0)
    theta = np.arccos(x) if part == "cos" else np.arcsin(x)
    order = np.argsort(inv)
    # Slowest frequency first: its phase is the position itself while p·ω < π/2.
    first = order[0]
    seeds = (
        [theta[first] / inv[first], -theta[first] / inv[first]]
        if part == "cos"
        else [
            theta[first] / inv[first],
            (math.pi - theta[first]) / inv[first],
        ]
    )
    out = []
    for p in seeds:
        for i in order[1:]:
            w = inv[i]
            branches = (theta[i], -theta[i]) if part == "cos" else (theta[i], math.pi - theta[i])
            best = min(
                (b + 2 * math.pi * np.rint((p * w - b) / (2 * math.pi)) for b in branches),
                key=lambda v: abs(v - p * w),
            )
            if abs(best - p * w) > 0.5:  # the slower estimate is too rough to fix this one's turns
                continue
            p = best / w
        if -0.5 < p < _MAX_START:
            out.append(max(0, round(p)))
    return sorted(set(out))


def fit_rope(sample: Sample) -> Iterator[Rope]:
    """Rotary caches whose measured frequencies the table follows.

    1. Layout: the ``d/2`` distinct columns are repeated as halves (``half``) or in pairs.
    2. Part: a single row of falling positive values is ``inv_freq``; rows linear in the position
       are ``angle``; otherwise ``cos``/``sin``, whose amplitude is the attention factor (yarn,
       longrope) and whose frequencies follow from ``x[p+k] + x[p−k] = 2·x[p]·cos kω``.
    3. The frequencies give θ and the scaling (:func:`_scalings`); the phases of row 0 the start.
    Every candidate is only proposed: identify rebuilds it and compares.
    """
    n, d = sample.n, sample.d
    if n == 1:  # inv_freq: one row of dim/2 falling positive values
        inv = sample.values[0]
        if d >= 2 and np.all(inv > 0) and np.all(np.diff(inv) <= 0):
            for params in _scalings(inv, 2 * d, 1, 1.0):
                yield from _variants(sample, {"length": 1, "dim": 2 * d, "part": "inv_freq", **params})
        return
    if d < 2:
        return
    top = sample.rows(0, min(n, sample.head_rows))
    repeated = False
    for layout, cols, dim in _layouts(d):
        # Columns that repeat are half or pairs, never once.
        if not _repeats(top, layout) or (layout == "once" and repeated):
            continue
        repeated = layout != "once"
        head = sample.rows(0, min(n, FIT_ROWS))
        if not _repeats(head, layout):
            continue
        x = head[:, cols]
        steps = np.diff(x, axis=0)
        # Angles grow linearly with the position; a float32 angle is rounded to 2⁻²⁴ of its size.
        if x.shape[0] >= 3 and np.allclose(steps, steps[0], rtol=0, atol=2.0**-21 * np.abs(x).max()):
            inv = (x[-1] - x[0]) / (x.shape[0] - 1)
            parts: list[tuple[RopePart, Arr, float]] = [("angle", inv, 1.0)] if np.all(inv > 0) else []
        else:
            omega = cosine_frequencies(x)
            if omega is None:
                continue
            amplitude = _amplitude(x)
            parts = [("cos", omega, amplitude), ("sin", omega, amplitude)]
        for part, inv, amplitude in parts:
            wave = (
                "rows grow linearly with the position (rotary angles)"
                if part == "angle"
                else (f"the rows are {part} waves of amplitude {amplitude:.6g}")
            )
            where = "stand once" if layout == "once" else f"repeat in the {layout} layout"
            for params in _scalings(inv, dim, sample.n, amplitude):
                for start in _start_of(x, np.asarray(_inv_of(params, dim, n), dtype=np.float64), part, amplitude):
                    spec = {"length": n, "dim": dim, "layout": layout, "part": part, "start": start, **params}
                    for recipe in _variants(sample, spec, amplitude):
                        sample.clue(
                            f"the {dim // 2} distinct columns {where}; {wave}; their frequencies fit θ = "
                            f"{recipe.base:.10g}"
                            + (f" with {recipe.scaling} scaling" if recipe.scaling != "default" else ""),
                            recipe,
                        )
                        yield recipe


def _amplitude(x: Arr) -> float:
    """The waves' amplitude: 1, unless scaled beyond float32 rounding (yarn/longrope attention
    factor).  The fastest column (ω ≈ 1 rad per row) reaches its peak within a few rows."""
    measured = float(np.abs(x[:, 0]).max())
    return 1.0 if abs(measured - 1.0) <= 1e-3 else measured


def _inv_of(params: dict[str, Any], dim: int, n: int) -> Arr:
    """The exact inv_freq of a candidate, for placing its start (``start = 0`` assumed for dynamic)."""
    try:
        return Rope(n, dim, compute="exact", **params).inv_freq()
    except RecipeError:
        return np.power(params["base"], -np.arange(dim // 2) * 2.0 / dim)


def _variants(sample: Sample, params: dict[str, Any], amplitude: float = 1.0) -> Iterator[Rope]:
    """The candidate in HF's float32 pipeline and exact, with an explicit attention factor when the
    amplitude is not the scaling's own."""
    for compute in get_args(RopeCompute):
        try:
            recipe = Rope(**params, compute=compute, dtype=sample.dtype)
        except RecipeError:
            continue
        if params.get("part") in ("cos", "sin") and not math.isclose(
            recipe.attention_scaling(), amplitude, rel_tol=1e-5
        ):
            if params.get("scaling") not in ("yarn", "longrope"):
                continue
            try:
                recipe = replace(recipe, attention_factor=float(np.float32(amplitude)))
            except RecipeError:
                continue
        yield recipe


__all__ = ["SCALING_PARAMS", "Rope", "RopeCompute", "RopeLayout", "RopePart", "Scaling", "factor_list", "fit_rope"]
