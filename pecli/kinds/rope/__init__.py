"""The rope kind: rotary position embedding caches (cos, sin, angle, inv_freq) and their scalings.

RoFormer's rotary embedding (Su et al. 2021) as the frameworks cache it: HF transformers 5.23
``LlamaRotaryEmbedding`` / ``GPTNeoXRotaryEmbedding`` with ``modeling_rope_utils.py``'s scaling
types, Meta's complex ``freqs_cis`` and lucidrains' ``rotary-embedding-torch`` (pairs layout).
This module builds any row range (:meth:`Rope.rows`) and fits a table back to its θ, layout,
part, scaling and start (:meth:`Rope.fit`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar, Literal, get_args

import numpy as np

from pecli.dtypes import DType
from pecli.errors import RecipeError
from pecli.kernels.rope_scaling import SCALINGS, Scaling, inv_freq_float32, inv_freq_float64
from pecli.kinds.rope.build import BOTH_PARTS, rope_columns, rope_rows
from pecli.params import choice, flag, int_param, optional_float, positive_float, round_number, spell
from pecli.precision import collapsed_rows, held, pipeline_of
from pecli.recipe import Pipelined, Recipe, listed
from pecli.resources import check_row_range

if TYPE_CHECKING:
    from pecli.dtypes import Arr, Ids
    from pecli.fitting import Sample

RopeLayout = Literal["half", "pairs", "once"]
RopePart = Literal["cos", "sin", "angle", "inv_freq", "cos-sin", "cis"]
#: Its pipelines (:data:`pecli.precision.PIPELINES` says each step's dtype): HF's float32 first, the
#: exact reference, then the reduced ones of porting bugs (inv_freq or positions cast to 16 bits).
RopeCompute = Literal["float32", "exact", "inv-float16", "inv-bfloat16", "positions-bfloat16", "bfloat16"]
#: How the float32 pipeline takes ``base^(−2i/dim)``: ``1 / base^(2i/dim)`` (HF, vLLM, Meta, torchtune) or
#: ``base^(−2i/dim)`` in one float32 pow (keras-hub's ``RotaryEmbedding``).
RopeForm = Literal["pow", "neg-pow"]
#: What an odd ``dim`` rotates: ``dim // 2`` frequencies over ``dim − 1`` columns, the last feature
#: left as it is (rotary-embedding-torch), or ``⌈dim/2⌉`` frequencies whose layout's last column is
#: cut (litgpt's ``build_rope_cache``).
RopeOdd = Literal["drop", "truncate"]

#: Every scaling parameter, once (the block a dropped ``rope_scaling`` loses).
_SCALING_KEYS = tuple(dict.fromkeys(k for t in SCALINGS.values() for k in t.reads if k != "truncate"))
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
    brackets), or a list, tuple or array of numbers; stored as ``"a;b;c"`` so the
    ``KIND:PARAM=VALUE,...`` operand syntax keeps it whole."""
    value = listed(value, ",")
    if not isinstance(value, str):
        raise RecipeError(f"{name} must be numbers, as a list or as text like '1.0,1.05,1.1', got {value!r}")
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
        bad = next(i for i, x in enumerate(numbers) if not (math.isfinite(x) and x > 0))
        raise RecipeError(f"{name} must hold finite numbers > 0, got {numbers[bad]!r} at index {bad} of {len(numbers)}")
    return ";".join(repr(x) for x in numbers)


@dataclass(frozen=True, slots=True)
class Rope(Pipelined):
    """Rotary position embedding caches: row ``r`` is position ``start + r``.

    ``inv_freq_i = base^(−2i/dim)`` (``i < dim/2``), changed by ``scaling`` exactly as HF
    transformers 5.23 ``modeling_rope_utils.py`` does (``linear``, ``dynamic`` NTK, ``yarn``,
    ``longrope``, ``llama3``; ``original_max_position_embeddings`` plays HF's
    ``max_position_embeddings`` for ``dynamic``).  ``dynamic`` and ``longrope`` depend on the
    sequence length, taken as HF's forward does for one call over these positions:
    ``seq_len = start + length``.  ``part``: ``cos`` or ``sin`` (times the attention factor of
    yarn/longrope), ``angle`` (``p·inv_freq``), ``inv_freq`` (one row of ``dim/2``).
    ``cos-sin`` is the cos table and the sin table side by side, ``[cos | sin]``, each in the
    layout (vLLM's and SGLang's ``cos_sin_cache`` with ``once``, torchtune's Qwen2 and Phi-3 caches
    with ``half``); ``cis`` is each frequency's ``(cos, sin)`` in turn, ``[c0, s0, c1, s1, …]``
    (``dim`` columns, layout ``once``): Meta's and torchtitan's complex ``freqs_cis`` viewed as real
    (``torch.view_as_real``), torchtune's ``(n, dim/2, 2)`` cache flattened; written with
    ``--dtype complex64`` it is ``freqs_cis`` itself, one complex number per frequency.
    ``layout``: ``half`` repeats the ``dim/2`` values as ``[f0…f_{h−1}, f0…f_{h−1}]``
    (HF rotate_half, GPT-NeoX); ``pairs`` as ``[f0, f0, f1, f1, …]`` (GPT-J, lucidrains);
    ``once`` keeps them once, ``dim/2`` columns (HF's ``freqs`` before ``cat``, the real or
    imaginary part of Meta's complex ``freqs_cis``).
    ``odd``: an odd ``dim`` takes the frequencies ``base^(−2i/dim)`` for ``i < dim // 2`` over
    ``dim − 1`` columns, the last feature not rotated (``drop``: rotary-embedding-torch's
    ``RotaryEmbedding(dim=7)``), or for ``i < ⌈dim/2⌉`` with the layout's last column cut, ``dim``
    columns (``truncate``: litgpt 0.5's ``build_rope_cache``, ``idx_theta.repeat(1, 2)[..., :n_elem]``
    for a ``rotary_percentage`` that leaves ``n_elem`` odd).  An even ``dim`` has no choice to make.
    ``form``: ``pow`` takes the inverse frequencies as ``1 / base^(2i/dim)`` (HF, vLLM, Meta,
    torchtune), ``neg-pow`` as ``base^(−2i/dim)`` in one float32 pow (keras-hub's
    ``RotaryEmbedding``); the float32 values differ by the second rounding.
    ``compute``: ``float32`` emulates HF's float32 pipeline step by step (what the
    model uses; within a few float32 ulps of torch, see dialects.md §0); ``exact`` is the real
    value of the same formula (``inv_freq`` evaluated in float64, the angle and cos/sin exact),
    rounded once: a reference, not what any framework computes.  ``inv-float16``,
    ``inv-bfloat16``, ``positions-bfloat16`` and ``bfloat16`` are that float32 pipeline with
    ``inv_freq``, the positions, or every step held in 16 bits (:mod:`pecli.precision`).
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
    partial_rotary_factor: float | None = None
    truncate: bool = True
    compute: RopeCompute = "float32"
    form: RopeForm = "pow"
    dtype: DType = "float32"
    odd: RopeOdd = "drop"

    kind: ClassVar[str] = "rope"
    core: ClassVar[tuple[str, ...]] = ("length", "dim", "base", "layout", "part", "scaling", "dtype")
    #: Its pipelines, the framework's first (what ``--compute`` takes).
    computes: ClassVar[tuple[RopeCompute, ...]] = get_args(RopeCompute)
    #: The float32 pipeline's ways to take base^(−2i/dim) (what ``--form`` takes), HF's first.
    forms: ClassVar[tuple[RopeForm, ...]] = get_args(RopeForm)
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
            ("form", RopeForm),
            ("dtype", DType),
            ("odd", RopeOdd),
        ):
            choice(name, getattr(self, name), get_args(literal))
        if self.dim % 2 == 0:  # an even dim has no odd column to treat: one recipe per table
            set_(self, "odd", "drop")
        if self.dim % 2 and self.scaling != "default":
            raise RecipeError(
                f"dim {self.dim} is odd, which only rotary-embedding-torch and litgpt build, without a scaling: "
                f"use an even --dim for scaling={self.scaling}, e.g. {self.dim - 1} or {self.dim + 1}"
            )
        set_(self, "truncate", flag("truncate", self.truncate))
        hint = "a number > 0"
        for name in (
            "factor",
            "low_freq_factor",
            "high_freq_factor",
            "beta_fast",
            "beta_slow",
            "attention_factor",
            "partial_rotary_factor",
        ):
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
        if self.form != "pow" and self.compute == "exact":
            raise RecipeError(
                f"form={self.form} is how a float32 pipeline rounds base^(−2i/dim): it goes with --compute float32 "
                "(the exact table has no rounding to choose)"
            )
        if self.form != "pow" and not SCALINGS[self.scaling].from_default:
            # yarn, longrope and dynamic take 1/base^(2i/dim) themselves (keras-hub's yarn too): the
            # form does nothing there, and the recipe says so.
            object.__setattr__(self, "form", "pow")
        if self.part == "cis" and self.layout == "half":  # the default: cis has one layout, which it picks
            object.__setattr__(self, "layout", "once")
        if self.part == "cis" and self.layout != "once":
            raise RecipeError(
                "part=cis holds each frequency once, as its (cos, sin) pair: give --layout once "
                "(--part cos-sin puts a cos and a sin table of any layout side by side)"
            )
        self._check_scaling_params()
        last = self.start + self.length - 1
        if last >= 2**53:
            raise RecipeError(
                f"positions must stay below 2**53, but the last is {last}: use a smaller --start or --len"
            )

    def _check_scaling_params(self) -> None:
        """The scaling's own parameters, as its entry in :data:`~pecli.kernels.rope_scaling.SCALINGS` says."""
        scaling = SCALINGS[self.scaling]
        unused = [
            n
            for t in SCALINGS.values()
            for n in t.reads
            if n not in scaling.reads and getattr(self, n) != (True if n == "truncate" else None)
        ]
        if unused:
            names = ", ".join(dict.fromkeys(map(spell, unused)))
            raise RecipeError(
                f"scaling={self.scaling} does not use {names}: drop it, or choose the scaling that does "
                f"({', '.join(t.name for t in SCALINGS.values() if set(unused) <= set(t.reads)) or 'none'})"
            )
        missing = [n for n in scaling.needs if getattr(self, n) is None]
        if missing:
            raise RecipeError(
                f"scaling={self.scaling} needs {' and '.join(map(spell, missing))}, e.g. "
                + ", ".join(_EXAMPLES[n] for n in missing)
            )
        for name in ("short_factor", "long_factor"):
            if name in scaling.reads:
                object.__setattr__(self, name, factor_list(name, getattr(self, name), self.frequency_count))
        if scaling.check is not None:
            scaling.check(self)

    @property
    def frequency_count(self) -> int:
        """How many frequencies: ``dim // 2``, or ``⌈dim/2⌉`` for an odd dim truncated (litgpt)."""
        return (self.dim + 1) // 2 if self.odd == "truncate" else self.dim // 2

    @property
    def shape(self) -> tuple[int, int]:
        count = self.frequency_count
        if self.part == "inv_freq":
            return (1, count)
        # An odd dim: drop leaves the last feature unrotated (dim − 1 columns), truncate cuts the
        # layout's last column (dim columns).
        width = count if self.layout == "once" else min(2 * count, self.dim)
        return (self.length, 2 * width if self.part in BOTH_PARTS else width)

    @property
    def seq_len(self) -> int:
        """HF's ``max(position_ids) + 1`` for one forward call over these positions."""
        return self.start + self.length

    def attention_scaling(self) -> float:
        """The factor HF multiplies cos and sin by (1 except for yarn and longrope)."""
        attention = SCALINGS[self.scaling].attention
        return 1.0 if attention is None else attention(self)

    def inv_freq(self) -> np.ndarray:
        """The ``dim/2`` inverse frequencies: float64 (``compute="exact"``), else float32 as HF computes
        them, held in the pipeline's dtype (``inv-float16``: rounded to float16)."""
        if self.compute == "exact":
            return inv_freq_float64(self)
        return held(inv_freq_float32(self), pipeline_of(self.compute).frequencies)

    def inv_freq_at(self, used: np.ndarray) -> np.ndarray:
        """``inv_freq()[used]``, the same values, computed for those frequencies alone where its
        scaling allows (an exact recipe's 60-digit powers cost ~8 µs each; a 3·10⁶-wide row's
        float32 ones, 20 ms for each θ a fit tries)."""
        if self.compute == "exact":
            return inv_freq_float64(self, used)
        return held(inv_freq_float32(self, used), pipeline_of(self.compute).frequencies)

    def rows(self, r0: int, r1: int) -> np.ndarray:
        """Rows ``[r0, r1)`` of the table, built directly."""
        check_row_range(self.shape[0], r0, r1)
        return rope_rows(self, r0, r1)

    def canonical(self) -> Rope:
        """An ``inv_freq`` row in the ``half`` layout: the layout is only where a cache puts its
        frequencies' waves, and that row is the frequencies themselves (8 of the 25 ``inv_freq``
        candidates of a 64-value row differed in their layout alone)."""
        return replace(self, layout="half") if self.part == "inv_freq" and self.layout != "half" else self

    def columns_at(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray | None:
        """Rows × columns from those columns' frequencies alone (each pipeline step is
        elementwise: the bits :meth:`rows` gives); float32 and float64 tables, not an ``inv_freq``
        row (``None``)."""
        check_row_range(self.shape[0], int(rows.min(initial=0)), int(rows.max(initial=-1)) + 1)
        return rope_columns(self, rows, cols)

    def wavelengths(self) -> np.ndarray:
        """``2π/inv_freq`` of each column's frequency (in positions)."""
        inv = np.asarray(self.inv_freq(), dtype=np.float64)
        # A zero frequency (proportional RoPE's unrotated pairs) never turns: no wavelength (NaN).
        waves = np.divide(2 * math.pi, inv, out=np.full(inv.shape, np.nan), where=inv != 0)
        if self.part == "cis":
            return np.repeat(waves, 2)
        if self.part != "inv_freq" and self.layout != "once":
            waves = (np.tile(waves, 2) if self.layout == "half" else np.repeat(waves, 2))[: self.dim]
        return np.tile(waves, 2) if self.part == "cos-sin" else waves

    def pipeline(self) -> str:
        return self.compute if self.form == "pow" else f"{self.compute} {self.form}"

    def describe(self, short: bool = False) -> str:
        """An odd dim is said even in the short line: the table's width does not show it."""
        text = Recipe.describe(self, short)
        return f"dim={self.dim} {text}" if short and self.dim % 2 else text

    def max_position(self) -> float:
        return 1.0 if self.part == "inv_freq" else float(self.start + self.length)

    def row_positions(self, rows: Ids) -> Arr:
        """Row ``r`` holds position ``start + r`` (its angles ``p·ω``, ω ≤ 1)."""
        if self.part == "inv_freq":
            return np.ones(len(rows))
        return np.asarray(rows, dtype=np.float64) + self.start

    def rescaled_base(self) -> tuple[float, float] | None:
        """``(θ, f)`` when the base is ``θ·f^(dim/(dim−2))`` for a θ of at most 4 significant digits
        and a factor that is a multiple of 1/2 up to 64 (the NTK-aware rescaling: rotary-embedding-torch's
        ``theta_rescale_factor``, x-transformers' ``base_rescale_factor``, and what HF's dynamic NTK
        makes of a sequence length), else None.  Such a base is said with its formula; it still
        counts as a long number for identify, where a named scaling with round parameters (HF's
        dynamic) explains the same table better."""
        if self.dim <= 2 or _round(self.base):
            return None  # a round base is what it says: 10000 is not 2500·2^(4/2)
        for halves in range(3, 129):
            factor = halves / 2
            theta = self.base / factor ** (self.dim / (self.dim - 2))
            if theta > 1 and _round(theta):
                return float(f"{theta:.4g}"), factor  # the value _round accepted
        return None

    def paired_columns(self) -> bool:
        """cis holds each frequency's (cos, sin) side by side; pairs repeats each frequency twice."""
        return self.part == "cis" or self.layout == "pairs"

    def complex_pairs(self) -> bool:
        """cis is ``cos + i·sin`` of each frequency as (real, imaginary) parts: ``freqs_cis``."""
        return self.part == "cis"

    # -- diff's vocabulary ---------------------------------------------------------------------
    def neighbours(self) -> Iterator[Recipe]:
        """The generic neighbours, the scaling block dropped (a config whose ``rope_scaling`` was
        lost), and for yarn/longrope the attention factor left out of cos and sin."""
        yield from Recipe.neighbours(self)
        if self.scaling != "default":
            yield self.with_params(scaling="default", **dict.fromkeys(_SCALING_KEYS), truncate=True)
            if self.attention_scaling() != 1.0:
                yield replace(self, attention_factor=1.0)

    def slips(self) -> Iterator[Recipe]:
        """The reduced pipelines, and the slips in the scaling's parameters its registry entry names
        (YaRN's betas swapped, LongRoPE's other factor list used at this length)."""
        yield from Pipelined.slips(self)
        for slip in SCALINGS[self.scaling].slips(self):
            yield replace(self, **slip)

    def changes(self, other: Recipe) -> list[str]:
        """The scaling block as one phrase (``scaling llama3 (factor 8, …) missing in A``), the
        attention factor as the number cos and sin are multiplied by, the rest parameter by parameter."""
        if not isinstance(other, Rope):
            return Recipe.changes(self, other)
        out: list[str] = []
        skip = ["scaling", "attention_factor"]
        pipeline = self.pipeline_change(other)
        if pipeline:
            out.append(pipeline)
            skip.append("compute")
        if self.scaling != other.scaling:
            if self.scaling == "default":
                out.append(f"scaling {other.scaling_words()} missing in A")
            elif other.scaling == "default":
                out.append(f"scaling {self.scaling_words()} in A, missing in B")
            else:
                out.append(f"scaling {self.scaling_words()} (A) vs {other.scaling_words()} (B)")
            skip += [*_SCALING_KEYS, "truncate"]  # said with the scaling
        else:  # a parameter of the scaling that neither table uses is no cause (LongRoPE's other list)
            unused = SCALINGS[self.scaling].unused
            skip += [name for name in unused(self) if name in unused(other)]
            slip = SCALINGS[self.scaling].said(self, other)  # YaRN's betas swapped, LongRoPE's switch missed
            if slip is not None:
                out.append(slip[0])
                skip += list(slip[1])
        if self.dim != other.dim:  # partial rotary (partial_rotary_factor, rotary_pct) kept or dropped
            whole, part = max(self.dim, other.dim), min(self.dim, other.dim)
            who = "A" if self.dim == part else "B"
            out.append(
                f"rotary on {self.dim} of {whole} dims (A) vs {other.dim} (B): partial_rotary_factor "
                f"{part / whole:g} in {who}"
            )
        if self.odd != other.odd and self.dim == other.dim:
            first, second = (self, other) if self.odd == "truncate" else (other, self)
            names = ("A", "B") if first is self else ("B", "A")
            out.append(f"odd dim {self.dim}: {first.odd_words(names[0])} vs {second.odd_words(names[1])}")
            skip.append("odd")
        out += self.parameter_changes(other, skip)
        mine, theirs = self.attention_scaling(), other.attention_scaling()
        if mine != theirs and (self.scaling == other.scaling or mine != 1.0 != theirs):
            out.append(f"attention factor {mine:.6g} (A) vs {theirs:.6g} (B)")
        return out

    def pipeline_change(self, other: Rope) -> str | None:
        """A reduced pipeline in its own words, this recipe being A's: ``inv_freq rounded to float16
        in A``, ``positions held in bfloat16 in A: rows 8184–8191 equal`` (None when neither side's
        pipeline is reduced: ``compute`` is then said as a parameter)."""
        mine, theirs = pipeline_of(self.compute), pipeline_of(other.compute)
        if mine == theirs or not (mine.reduced or theirs.reduced):
            return None

        def said(r: Rope, who: str) -> str:
            steps = pipeline_of(r.compute)
            rows = collapsed_rows(r.start, r.length, steps.positions) if r.part != "inv_freq" else None
            return steps.words + who + (f": rows {rows[0]}–{rows[1]} equal" if rows else "")

        if not theirs.reduced:
            return said(self, " in A")
        if not mine.reduced:
            return said(other, " in B")
        return f"{said(self, ' (A)')} vs {said(other, ' (B)')}"

    def value_words(self, name: str, value: Any) -> str:
        """A base rescaled NTK-style is said with its formula: ``40889.94 (10000·4^(128/126))``."""
        if name == "base" and isinstance(value, float) and not _round(value):
            try:
                rescaled = replace(self, base=value).rescaled_base()
            except RecipeError:
                rescaled = None
            if rescaled is not None:
                theta, factor = rescaled
                return f"{value:.10g} ({theta:g}·{factor:g}^({self.dim}/{self.dim - 2}))"
        return Recipe.value_words(self, name, value)

    def odd_words(self, who: str) -> str:
        """What an odd dim rotates, said for table ``who``: ``4 frequencies, the last column cut (A, litgpt)``."""
        if self.odd == "truncate":
            return f"{self.frequency_count} frequencies, the last column cut ({who}, odd=truncate: litgpt)"
        return f"{self.frequency_count}, the last feature not rotated ({who}, odd=drop: rotary-embedding-torch)"

    def scaling_words(self) -> str:
        """The scaling type with its parameters: ``llama3 (factor 8, low-freq-factor 1, …)``."""
        if self.scaling == "default":
            return "none"
        values = [
            f"{spell(k)[2:]} {self.value_words(k, getattr(self, k))}"
            for k in SCALINGS[self.scaling].reads
            if getattr(self, k) is not None and k not in ("short_factor", "long_factor", "truncate")
        ]
        return f"{self.scaling} ({', '.join(values)})" if values else self.scaling

    # -- the inverse -------------------------------------------------------------------------
    @classmethod
    def fit(cls, sample: Sample) -> Iterator[Recipe]:
        """Rotary caches whose frequencies the table follows (see :func:`pecli.kinds.rope.fit.fit_rope`)."""
        from pecli.kinds.rope.fit import fit_rope

        yield from fit_rope(cls, sample)

    def starts_in(self, sample: Sample) -> list[int]:
        """The starts row 0's phases give with this recipe's frequencies, below and past its
        original length (LongRoPE's lists switch there: see :func:`pecli.kinds.rope.fit.starts_of`)."""
        from pecli.kinds.rope.fit import starts_of

        return starts_of(self, sample)

    @classmethod
    def sizes(cls, params: dict[str, Any], sample: Sample) -> Iterator[dict[str, Any]]:
        """inv_freq is one row of dim/2; the other parts are ``length`` rows of ``dim``."""
        if params.get("part") == "inv_freq" or sample.n == 1:
            yield {"length": 1, "dim": 2 * sample.d, "dtype": sample.dtype, "part": "inv_freq"}
        if params.get("part") in BOTH_PARTS and sample.n > 1 and sample.d % 2 == 0:
            # A cos table and a sin table together: each is half the columns.
            once = params.get("part") == "cis" or params.get("layout") == "once"
            yield {"length": sample.n, "dim": sample.d if once else sample.d // 2, "dtype": sample.dtype}
            return
        if sample.n > 1:
            # A model's cos cache, sin cache and angles are all that model's table, in any layout.
            for part in get_args(RopePart)[:3]:
                # An odd width is litgpt's odd rotary dim, its layout's last column cut.
                odd: dict[str, Any] = {"odd": "truncate"} if sample.d % 2 else {}
                if sample.d > 1:
                    yield {"length": sample.n, "dim": sample.d, "dtype": sample.dtype, "part": part, **odd}
                yield {"length": sample.n, "dim": 2 * sample.d, "dtype": sample.dtype, "part": part, "layout": "once"}


def _round(x: float) -> bool:
    """Whether ``x`` has at most 4 significant digits."""
    return math.isclose(x, round_number(x), rel_tol=1e-12)


__all__ = ["Rope", "RopeCompute", "RopeForm", "RopeLayout", "RopeOdd", "RopePart", "Scaling", "factor_list", "fit_rope"]


def __getattr__(name: str) -> Any:
    # ``fit_rope`` lives in the fitting module, loaded when identify or diff first asks for it.
    if name == "fit_rope":
        from pecli.kinds.rope.fit import fit_rope

        return fit_rope
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
