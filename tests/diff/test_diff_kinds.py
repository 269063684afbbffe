"""diff speaks every kind: the cause of a difference is the difference of the recipes, in the kind's words.

Each pair is a table A with one known change (a parameter of its kind, or a transformation no
parameter expresses) against the reference B, a recipe.  A is a plain array (no recipe of its
own), built either by independent NumPy code written from the frameworks' published formulas
(HF ``LlamaRotaryEmbedding`` and ``_compute_llama3_parameters``, GPT-J's interleaved rotation,
"Attention Is All You Need" §3.5, MAE's ``get_2d_sincos_pos_embed``, ALiBi's geometric slopes),
or by pecli from the changed recipe.  The expected cause is written from the change made, never
copied from pecli's output: ``base 500000 (A) vs 10000 (B)`` because A was built with θ = 500000.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pytest

from pecli.diff import compare
from pecli.kinds import kinds
from pecli.recipe import Recipe
from pecli.sources import parse_recipe
from pecli.table import Table
from tests.helpers import f32_step, reference


def plain(x: np.ndarray) -> Table:
    return Table(np.asarray(x), None, "a.npy")


# -- independent builders, from the published formulas ------------------------------------------
#: A LongRoPE pair of factor lists for dim 16 (Phi-3's shape: rising from 1), and as a SOURCE says them.
SHORT_FACTORS = [1.0, 1.1, 1.3, 1.6, 2.0, 2.5, 3.1, 3.8]
LONG_FACTORS = [1.0, 1.2, 1.5, 2.2, 3.0, 4.5, 6.0, 8.0]
SHORT_SPEC, LONG_SPEC = (";".join(map(str, f)) for f in (SHORT_FACTORS, LONG_FACTORS))


def hf_rope(
    n: int,
    d: int,
    theta: float = 10000.0,
    part: str = "cos",
    layout: str = "half",
    start: int = 0,
    llama3: tuple[float, float, float, int] | None = None,
    scale: float = 1.0,
    yarn: tuple[float, int, float, float] | None = None,
    longrope: tuple[list[float], float, int] | None = None,
) -> np.ndarray:
    """transformers' LlamaRotaryEmbedding in float32 (inv_freq, the llama3 or YaRN rescaling,
    cat/interleave); ``yarn``: ``(factor, original_max_position_embeddings, beta_fast, beta_slow)``,
    ``_compute_yarn_parameters`` with ``truncate`` (its cos and sin times ``0.1·ln(factor) + 1``);
    ``longrope``: ``(the factor list used, factor, original_max_position_embeddings)``,
    ``_compute_longrope_parameters`` (``1 / (ext_factors · base^(2i/d))``, times ``√(1 + ln f / ln o)``)."""
    pos_freqs = f32_step(
        np.power, np.float32(theta), np.arange(0, d, 2, dtype=np.int64).astype(np.float32) / np.float32(d)
    )
    inv = (np.float32(1.0) / pos_freqs).astype(np.float32)
    if yarn is not None:
        factor, orig, beta_fast, beta_slow = yarn

        def correction_dim(rotations: float) -> float:
            return (d * math.log(orig / (rotations * 2 * math.pi))) / (2 * math.log(theta))

        low, high = max(math.floor(correction_dim(beta_fast)), 0), min(math.ceil(correction_dim(beta_slow)), d - 1)
        high = high + 0.001 if low == high else high
        ramp = np.clip((np.arange(d // 2, dtype=np.float32) - np.float32(low)) / np.float32(high - low), 0, 1)
        extra = (np.float32(1) - ramp).astype(np.float32)
        interp = np.float32(1) / (np.float32(factor) * pos_freqs)
        inv = (interp * (np.float32(1) - extra) + inv * extra).astype(np.float32)
        scale = float(np.float32(0.1 * math.log(factor) + 1.0))
    if longrope is not None:
        ext, factor, orig = longrope
        inv = (np.float32(1.0) / (np.array(ext, dtype=np.float32) * pos_freqs)).astype(np.float32)
        scale = float(np.float32(math.sqrt(1 + math.log(factor) / math.log(orig))))
    if llama3 is not None:  # _compute_llama3_parameters, in float32 as torch does it
        factor, low, high, orig = llama3
        wavelen = np.float32(2 * math.pi) / inv
        low_wl, high_wl = orig / low, orig / high
        scaled = np.where(wavelen > low_wl, inv / np.float32(factor), inv)
        smooth = (orig / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = ~(wavelen < high_wl) & ~(wavelen > low_wl)
        inv = np.where(medium, smoothed, scaled).astype(np.float32)
    pos = np.arange(start, start + n, dtype=np.float32)[:, None]
    freqs = (pos * inv[None, :]).astype(np.float32)
    emb = np.concatenate([freqs, freqs], axis=1) if layout == "half" else np.repeat(freqs, 2, axis=1)
    out = f32_step(np.cos if part == "cos" else np.sin, emb)  # float32 cos/sin, the same bits on every CPU
    return (out * np.float32(scale)).astype(np.float32)


def paper(n: int, d: int, base: float = 10000.0, layout: str = "interleaved", start: int = 0) -> np.ndarray:
    """§3.5 in float64 from the published formula (``tests.helpers.reference``), cast once."""
    return reference(n, d, base, layout, start).astype(np.float32)


def mae_grid(h: int, d: int, base: float = 10000.0, order: str = "mae") -> np.ndarray:
    """MAE's get_2d_sincos_pos_embed (w first: grid = meshgrid(w, h)); timm's order swaps the axes."""
    gh, gw = np.meshgrid(np.arange(h, dtype=np.float64), np.arange(h, dtype=np.float64), indexing="ij")
    first, second = (gw, gh) if order == "mae" else (gh, gw)

    def one(pos: np.ndarray) -> np.ndarray:
        omega = 1.0 / base ** (np.arange(d // 4, dtype=np.float64) / (d / 4.0))
        out = pos.reshape(-1)[:, None] * omega[None, :]
        return np.concatenate([np.sin(out), np.cos(out)], axis=1)

    return np.concatenate([one(first), one(second)], axis=1).astype(np.float32)


def ofirpress_slopes(heads: int) -> np.ndarray:
    """ofirpress/attention_with_linear_biases' ``get_slopes``: for ``n`` no power of two, the closest
    power's slopes, then every other slope of twice as many heads."""

    def power_of_2(n: int) -> list[float]:
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start**i for i in range(n)]

    closest = 2 ** math.floor(math.log2(heads))
    rest = [] if closest == heads else list(ofirpress_slopes(2 * closest)[0::2][: heads - closest])
    return np.array(power_of_2(closest) + rest, dtype=np.float64)


def alibi_slopes(heads: int) -> np.ndarray:
    """Press et al.'s slopes 2^(−8i/n) as a (1, heads) row: theirs for n a power of two, and one
    geometric series (no closest-power step) for any other n."""
    return np.array([[2.0 ** (-8.0 * (i + 1) / heads) for i in range(heads)]], dtype=np.float32)


# -- the matrix --------------------------------------------------------------------------------
def changed(spec: str, **change: object) -> Callable[[], np.ndarray]:
    """pecli's table of ``spec`` with ``change`` applied (a recipe of the same kind)."""
    return lambda: parse_recipe(spec).with_params(**change).build()


def columns(spec: str, order: Callable[[int], list[int]]) -> Callable[[], np.ndarray]:
    def build() -> np.ndarray:
        x = parse_recipe(spec).build()
        return x[:, order(x.shape[1])]

    return build


def rows_shifted(spec: str, k: int) -> Callable[[], np.ndarray]:
    def build() -> np.ndarray:
        x = parse_recipe(spec).build()
        return np.concatenate([x[k:], x[-1:].repeat(k, axis=0) * 0 + x[-k:]])[: x.shape[0]]

    return build


L3 = (8.0, 1.0, 4.0, 8192)
SHUFFLED = np.random.default_rng(5).permutation(256)
ROPE = "rope:len=256,dim=64"
ROPE_L3 = "rope:len=4096,dim=128,base=500000,scaling=llama3,factor=8,low-freq-factor=1,high-freq-factor=4,original-max-position-embeddings=8192"
YARN = "rope:len=1024,dim=64,scaling=yarn,factor=4,original-max-position-embeddings=256"
DYNAMIC = "rope:len=2048,dim=64,scaling=dynamic,factor=2,original-max-position-embeddings=1024"
LONGROPE = (
    "rope:len=2048,dim=8,scaling=longrope,factor=4,original-max-position-embeddings=512,"
    "short-factor=1;1.1;1.2;1.5,long-factor=1;1.5;2;3"
)
SIN = "sinusoidal:len=200,dim=64"
GRID = "sincos2d:grid=14x14,dim=64"
MROPE = "mrope:dim=128,sequence=text=16;image=1x8x8;text=8"
ROPE2D = "rope2d:feat-shape=8x8,dim=64,bands=lang"
AXIAL = "axial:axes-dim=16;56;56,tokens=text=8;image=4x4"
XPOS = "xpos:len=128,dim=64"
ALIBI = "alibi:heads=16"
BIAS = "alibi:heads=8,length=32,part=bias"


def evens_then_odds(d: int) -> list[int]:
    return list(range(0, d, 2)) + list(range(1, d, 2))


def pairs_swapped(d: int) -> list[int]:
    return [j ^ 1 for j in range(d)]


# (A's builder, B's spec, the cause's first words)
PAIRS: dict[str, tuple[Callable[[], np.ndarray], str, str]] = {
    # rope: every scaling dropped or changed, base, part, layout, attention factor, start, transformations
    "rope base 500000 (HF code)": (lambda: hf_rope(256, 64, 500000.0), ROPE, "base 500000 (A) vs 10000 (B)"),
    "rope base 1e6 (HF code)": (lambda: hf_rope(256, 64, 1e6), ROPE, "base 1000000 (A) vs 10000 (B)"),
    "rope sin for cos (HF code)": (lambda: hf_rope(256, 64, part="sin"), ROPE, "part sin (A) vs cos (B)"),
    "rope pairs for half (GPT-J code)": (
        lambda: hf_rope(256, 64, layout="pairs"),
        ROPE,
        "layout pairs (A) vs half (B)",
    ),
    "rope pairs sin (GPT-J code)": (
        lambda: hf_rope(256, 64, part="sin", layout="pairs"),
        ROPE,
        "layout pairs (A) vs half (B); part sin (A) vs cos (B)",
    ),
    "rope start 7 (HF code)": (lambda: hf_rope(256, 64, start=7), ROPE, "start 7 (A) vs 0 (B)"),
    "rope llama3 dropped (HF code)": (
        lambda: hf_rope(4096, 128, 500000.0),
        ROPE_L3,
        "scaling llama3 (factor 8, original-max-position-embeddings 8192, low-freq-factor 1, high-freq-factor 4) missing in A",
    ),
    "rope llama3 added (HF code)": (
        lambda: hf_rope(4096, 128, 500000.0, llama3=L3),
        "rope:len=4096,dim=128,base=500000",
        "scaling llama3 (factor 8, original-max-position-embeddings 8192, low-freq-factor 1, high-freq-factor 4) in A, missing in B",
    ),
    "rope llama3 base lost": (changed(ROPE_L3, base=10000.0), ROPE_L3, "base 10000 (A) vs 500000 (B)"),
    "rope yarn dropped": (
        changed(YARN, scaling="default", factor=None, original_max_position_embeddings=None),
        YARN,
        "scaling yarn (factor 4, original-max-position-embeddings 256) missing in A",
    ),
    "rope yarn attention factor 1": (
        changed(YARN, attention_factor=1.0),
        YARN,
        "attention factor 1 (A) vs 1.13863 (B)",
    ),
    "rope linear dropped": (
        changed("rope:len=256,dim=64,scaling=linear,factor=4", scaling="default", factor=None),
        "rope:len=256,dim=64,scaling=linear,factor=4",
        "scaling linear (factor 4) missing in A",
    ),
    "rope linear factor 2": (
        changed("rope:len=256,dim=64,scaling=linear,factor=4", factor=2.0),
        "rope:len=256,dim=64,scaling=linear,factor=4",
        "factor 2 (A) vs 4 (B)",
    ),
    "rope dynamic dropped": (
        changed(DYNAMIC, scaling="default", factor=None, original_max_position_embeddings=None),
        DYNAMIC,
        "scaling dynamic (factor 2, original-max-position-embeddings 1024) missing in A",
    ),
    # At one length dynamic NTK is another base too (31082.24…): the named scaling is the rounder answer.
    "rope dynamic added": (
        changed(DYNAMIC),
        "rope:len=2048,dim=64",
        "scaling dynamic (factor 2, original-max-position-embeddings 1024) in A, missing in B",
    ),
    "rope longrope dropped": (
        changed(
            LONGROPE,
            scaling="default",
            factor=None,
            original_max_position_embeddings=None,
            short_factor=None,
            long_factor=None,
        ),
        LONGROPE,
        "scaling longrope (factor 4, original-max-position-embeddings 512) missing in A",
    ),
    "rope angle for cos": (changed(ROPE, part="angle"), ROPE, "part angle (A) vs cos (B)"),
    "rope exact for float32": (
        changed("rope:len=8192,dim=64", compute="exact"),
        "rope:len=8192,dim=64",
        "compute exact (A) vs float32 (B)",
    ),
    "rope halves as pairs (columns)": (columns(ROPE, evens_then_odds), ROPE, "columns: "),
    "rope attention factor applied twice": (
        lambda: parse_recipe(YARN).build() * np.float32(1.13863),
        YARN,
        "attention factor 1.29648 (A) vs 1.13863 (B)",
    ),
    "rope rows shifted": (changed(ROPE, start=3), ROPE, "start 3 (A) vs 0 (B)"),
    # sinusoidal
    "sin base 500000 (paper code)": (lambda: paper(200, 64, 500000.0), SIN, "base 500000 (A) vs 10000 (B)"),
    "sin split (paper code)": (
        lambda: paper(200, 64, layout="split"),
        SIN,
        "layout split ([sin…|cos…]) (A) vs interleaved (sin, cos, sin, …) (B)",
    ),
    "sin split + base (paper code)": (
        lambda: paper(200, 64, 500000.0, "split"),
        SIN,
        "base 500000 (A) vs 10000 (B); layout split",
    ),
    "sin start 5 (paper code)": (lambda: paper(200, 64, start=5), SIN, "start 5 (A) vs 0 (B)"),
    "sin t2t frequencies": (changed(SIN, freq="t2t"), SIN, "freq t2t (A) vs paper (B)"),
    "sin cos-first": (changed(SIN, layout="cos-first"), SIN, "layout cos-first ([cos…|sin…]) (A)"),
    "sin pairs swapped": (columns(SIN, pairs_swapped), SIN, "columns: each adjacent column pair of B"),
    "sin padding row": (changed(SIN, padding_idx=0, length=199), SIN, "padding-idx 0 (A) vs none (B)"),
    "sin scaled": (lambda: paper(200, 64) * np.float32(0.5), SIN, "scale 0.5 (A) vs 1 (B)"),
    "sin column index bug": (
        lambda: np.where(
            np.arange(64) % 2 == 0,
            np.sin(np.arange(200.0)[:, None] / 10000 ** (np.arange(64) / 64)),
            np.cos(np.arange(200.0)[:, None] / 10000 ** (np.arange(64) / 64)),
        ).astype(np.float32),
        SIN,
        "column-index: A puts the column index in the exponent",
    ),
    # sincos2d: 2-D orders and grids
    "grid axes swapped (MAE code)": (
        lambda: mae_grid(14, 64, order="timm"),
        GRID,
        "order timm-interleave (A) vs mae (B)",
    ),
    "grid mae code is the grid": (lambda: mae_grid(14, 64, base=100.0), GRID, "base 100 (A) vs 10000 (B)"),
    "grid base 1000": (changed(GRID, base=1000.0), GRID, "base 1000 (A) vs 10000 (B)"),
    "grid timm order": (changed(GRID, order="timm"), GRID, "order timm (A) vs mae (B)"),
    "grid interpolation scale": (changed(GRID, interpolation_scale=2.0), GRID, "interpolation-scale 2 (A) vs 1 (B)"),
    "grid timm vs mae reference": (
        changed("sincos2d:grid=14x14,dim=64,order=timm", order="mae"),
        "sincos2d:grid=14x14,dim=64,order=timm",
        "order mae (A) vs timm (B)",
    ),
    "grid halves swapped": (
        columns(GRID, lambda d: list(range(d // 2, d)) + list(range(d // 2))),
        GRID,
        "order timm-interleave (A) vs mae (B)",
    ),
    "grid 16x16 base": (
        changed("sincos2d:grid=16x16,dim=32", base=20000.0),
        "sincos2d:grid=16x16,dim=32",
        "base 20000 (A) vs 10000 (B)",
    ),
    # mrope
    "mrope sections": (changed(MROPE, mrope_section="24;20;20"), MROPE, "mrope-section 24;20;20 (A) vs 16;24;24 (B)"),
    "mrope sections 2": (changed(MROPE, mrope_section="32;16;16"), MROPE, "mrope-section 32;16;16 (A) vs 16;24;24 (B)"),
    "mrope sin": (changed(MROPE, part="sin"), MROPE, "part sin (A) vs cos (B)"),
    "mrope base": (changed(MROPE, base=10000.0), MROPE, "base 10000 (A) vs 1000000 (B)"),
    "mrope exact": (changed(MROPE, compute="exact", base=500.0), MROPE, "base 500 (A) vs 1000000 (B); A's rows fit"),
    "mrope scaled": (lambda: parse_recipe(MROPE).build() * np.float32(2), MROPE, "scale: A is B times 2"),
    "mrope sin + base": (changed(MROPE, part="sin", base=10000.0), MROPE, "base 10000 (A) vs 1000000 (B); part sin"),
    "mrope sections + sin": (
        changed(MROPE, part="sin", mrope_section="24;20;20"),
        MROPE,
        "mrope-section 24;20;20 (A) vs 16;24;24 (B); part sin (A) vs cos (B)",
    ),
    # rope2d
    "rope2d base": (changed(ROPE2D, base=100.0), ROPE2D, "base 100 (A) vs 10000 (B)"),
    "rope2d base 1000": (changed(ROPE2D, base=1000.0), ROPE2D, "base 1000 (A) vs 10000 (B)"),
    "rope2d sin": (
        changed(ROPE2D, part="sin"),
        "rope2d:feat-shape=8x8,dim=64,bands=lang,part=cos",
        "part sin (A) vs cos (B)",
    ),
    "rope2d pixel bands sin": (
        changed("rope2d:feat-shape=8x8,dim=64,bands=pixel,part=cos", part="sin"),
        "rope2d:feat-shape=8x8,dim=64,bands=pixel,part=cos",
        "part sin (A) vs cos (B)",
    ),
    "rope2d linear bands": (
        changed("rope2d:feat-shape=8x8,dim=64,bands=pixel", linear_bands=True),
        "rope2d:feat-shape=8x8,dim=64,bands=pixel",
        "linear-bands true (A) vs false (B)",
    ),
    "rope2d scaled": (lambda: parse_recipe(ROPE2D).build() * np.float32(3), ROPE2D, "scale: A is B times 3"),
    "rope2d exact": (
        changed("rope2d:feat-shape=32x32,dim=64,bands=lang,part=cos", compute="exact", base=500.0),
        "rope2d:feat-shape=32x32,dim=64,bands=lang,part=cos",
        "base 500 (A) vs 10000 (B); compute exact",
    ),
    "rope2d sin + base": (
        changed("rope2d:feat-shape=8x8,dim=64,bands=lang,part=cos", part="sin", base=100.0),
        "rope2d:feat-shape=8x8,dim=64,bands=lang,part=cos",
        "base 100 (A) vs 10000 (B); part sin",
    ),
    # Pixtral's split of one frequency set, Lumina's axes in turn, torchtune's cells from 1
    "rope2d pixtral bands": (
        changed("rope2d:feat-shape=8x8,dim=64,bands=lang,part=cos,layout=half", axis_bands="alternate"),
        "rope2d:feat-shape=8x8,dim=64,bands=lang,part=cos,layout=half",
        "axis-bands alternate (A) vs same (B)",
    ),
    "rope2d lumina columns": (
        changed("rope2d:feat-shape=8x8,dim=32,bands=lang,part=cis", axis_columns="interleaved"),
        "rope2d:feat-shape=8x8,dim=32,bands=lang,part=cis",
        "axis-columns interleaved (A) vs blocks (B)",
    ),
    "rope2d torchtune first index": (
        changed("rope2d:feat-shape=8x8,dim=32,bands=lang,part=cis", first_index=1),
        "rope2d:feat-shape=8x8,dim=32,bands=lang,part=cis",
        "first-index 1 (A) vs 0 (B)",
    ),
    # axial
    "axial sin": (changed(AXIAL, part="sin"), AXIAL, "part sin (A) vs cos (B)"),
    "axial half layout": (changed(AXIAL, layout="half"), AXIAL, "layout half (A) vs pairs (B)"),
    "axial base": (changed(AXIAL, base=1000.0), AXIAL, "base 1000 (A) vs 10000 (B)"),
    # NTK-aware scaling multiplies θ by the factor: the same table as θ = 20000, one change fewer.
    "axial ntk factor": (changed(AXIAL, ntk_factor=2.0), AXIAL, "base 20000 (A) vs 10000 (B)"),
    "axial linear factor": (changed(AXIAL, linear_factor=2.0), AXIAL, "linear-factor 2 (A) vs 1 (B)"),
    "axial scaled": (lambda: parse_recipe(AXIAL).build() * np.float32(0.25), AXIAL, "scale: A is B times 0.25"),
    "axial half + sin": (changed(AXIAL, layout="half", part="sin"), AXIAL, "layout half (A) vs pairs (B); part sin"),
    "axial base + sin": (changed(AXIAL, base=1000.0, part="sin"), AXIAL, "base 1000 (A) vs 10000 (B); part sin"),
    # xpos
    "xpos scale base": (changed(XPOS, scale_base=256.0), XPOS, "scale-base 256 (A) vs 512 (B)"),
    "xpos scale base 300": (changed(XPOS, scale_base=300.0), XPOS, "scale-base 300 (A) vs 512 (B)"),
    "xpos k for q": (changed(XPOS, part="k"), XPOS, "part k (A) vs q (B)"),
    "xpos q for k": (
        changed("xpos:len=128,dim=64,part=k", part="q"),
        "xpos:len=128,dim=64,part=k",
        "part q (A) vs k (B)",
    ),
    "xpos k + scale base": (changed(XPOS, part="k", scale_base=256.0), XPOS, "scale-base 256 (A) vs 512 (B); part k"),
    "xpos scaled": (lambda: parse_recipe(XPOS).build() * np.float32(2), XPOS, "scale: A is B times 2"),
    "xpos exact + scale base": (
        changed("xpos:len=4096,dim=64", compute="float64", scale_base=256.0),
        "xpos:len=4096,dim=64",
        "scale-base 256 (A) vs 512 (B)",
    ),
    "xpos 1024": (
        changed("xpos:len=1024,dim=32", scale_base=1024.0),
        "xpos:len=1024,dim=32",
        "scale-base 1024 (A) vs 512 (B)",
    ),
    # alibi: slope conventions and origins
    # float64 slopes cast once against torch's float32 pow: the same values, rounded differently.
    "alibi slopes (paper code) vs float32 pow": (lambda: alibi_slopes(16), "alibi:heads=16,form=pow", "precision: "),
    "alibi origin last": (changed(BIAS, origin="last"), BIAS, "origin last (A) vs first (B)"),
    "alibi origin first": (
        changed("alibi:heads=8,length=32,part=bias,origin=last", origin="first"),
        "alibi:heads=8,length=32,part=bias,origin=last",
        "origin first (A) vs last (B)",
    ),
    # A head count that is no power of two: one geometric series against ofirpress's interleave.
    "alibi 12 heads geometric slopes vs interleave (plain code)": (
        lambda: alibi_slopes(12),
        "alibi:heads=12",
        "slopes geometric 2^(−8k/12) (A) vs closest-power interleave (B); A's rows fit alibi:heads=12,",
    ),
    "alibi 12 heads bias, interleave vs geometric (plain code)": (
        lambda: (ofirpress_slopes(12).astype(np.float32)[:, None] * np.arange(32, dtype=np.float32)[None, :]).astype(
            np.float32
        ),
        "alibi:heads=12,length=32,part=bias,slope-series=geometric",
        "slopes closest-power interleave (A) vs geometric 2^(−8k/12) (B); A's rows fit alibi:heads=12,len=32,",
    ),
    "alibi scaled slopes": (lambda: parse_recipe(ALIBI).build() * np.float32(2), ALIBI, "scale: A is B times 2"),
    # With 8 heads the slopes are 2^-(h+1): halving every slope is the next head's row.
    "alibi bias halved": (
        lambda: parse_recipe(BIAS).build() * np.float32(0.5),
        BIAS,
        "shift: A's row r is B's row r+1",
    ),
    "alibi 12 heads origin": (
        changed("alibi:heads=12,length=16,part=bias", origin="last"),
        "alibi:heads=12,length=16,part=bias",
        "origin last (A) vs first (B)",
    ),
    "alibi 12 heads bias scaled": (
        lambda: parse_recipe("alibi:heads=12,length=16,part=bias").build() * np.float32(4),
        "alibi:heads=12,length=16,part=bias",
        "scale: A is B times 4",
    ),
    "alibi slopes reversed heads": (
        columns(ALIBI, lambda d: list(range(d // 2, d)) + list(range(d // 2))),
        ALIBI,
        "columns: A is B with its two column blocks swapped",
    ),
    # learned: no formula
    # pecli's own draw with a seed identify tries (0-15, 42, ...) is named by its seed; another seed is
    # the "no formula" answer.
    "learned seed": (
        changed("learned:len=64,dim=16", seed=1),
        "learned:len=64,dim=16",
        "seed 1 (A) vs 0 (B); A's rows fit learned:len=64,dim=16,",
    ),
    # pecli's draws are rebuilt exactly by their recipes: a parameter of the draw that rebuilds A
    # bit for bit is the cause (a seed among those identify tries, learned.FIT_SEEDS, too).
    "learned std": (
        changed("learned:len=64,dim=16", std=0.1),
        "learned:len=64,dim=16",
        "std 0.1 (A) vs 0.02 (B); A's rows fit learned:len=64,dim=16,std=0.1,",
    ),
    "learned truncated": (
        changed("learned:len=64,dim=16", init="truncated-normal"),
        "learned:len=64,dim=16",
        "init truncated-normal (A) vs normal (B); A's rows fit learned:len=64,dim=16,",
    ),
    "learned seed 99": (changed("learned:len=128,dim=32", seed=99), "learned:len=128,dim=32", "learned: "),
    "learned rng": (
        changed("learned:len=64,dim=16", rng="pcg64"),
        "learned:len=64,dim=16",
        "rng pcg64 (A) vs splitmix (B); A's rows fit learned:len=64,dim=16,",
    ),
    "learned std + seed": (
        changed("learned:len=64,dim=16", std=0.05, seed=3),
        "learned:len=64,dim=16",
        "std 0.05 (A) vs 0.02 (B); seed 3 (A) vs 0 (B); A's rows fit",
    ),
    "learned wide": (
        changed("learned:len=16,dim=256", seed=2),
        "learned:len=16,dim=256",
        "seed 2 (A) vs 0 (B); A's rows fit learned:len=16,dim=256,",
    ),
    "learned init + seed": (
        changed("learned:len=64,dim=16", init="truncated-normal", seed=4),
        "learned:len=64,dim=16",
        "init truncated-normal (A) vs normal (B); seed 4 (A) vs 0 (B); A's rows fit",
    ),
    # Two kinds: each side's recipe, found by identify on A, against B's.
    "a MAE grid against a 1-D sinusoid": (
        lambda: mae_grid(14, 64),
        "sinusoidal:len=196,dim=64",
        "kind sincos2d (A) vs sinusoidal (B); A is sincos2d:grid=14x14,dim=64",
    ),
    "an HF cos cache against a sinusoid": (
        lambda: hf_rope(256, 64),
        "sinusoidal:len=256,dim=64",
        "kind rope (A) vs sinusoidal (B); A is rope:len=256,dim=64",
    ),
    "learned against a sinusoid": (changed("learned:len=64,dim=16", seed=2), "sinusoidal:len=64,dim=16", "none"),
    # Tables of different lengths or grids: B's recipe is sized to A, and only what changes the
    # values is the cause (a length is not; a class row or another grid is).
    "grid without its class row (MAE code)": (
        lambda: mae_grid(14, 64),
        "sincos2d:grid=14x14,dim=64,cls=true",
        "cls false (A) vs true (B); A's rows fit sincos2d:grid=14x14,dim=64,",
    ),
    "grid of another size (MAE code)": (
        lambda: mae_grid(12, 64),
        GRID,
        "grid 12x12 (A) vs 14x14 (B); A's rows fit sincos2d:grid=12x12,dim=64,",
    ),
    "sin starting later, shorter (paper code)": (
        lambda: paper(190, 64, start=10),
        SIN,
        "start 10 (A) vs 0 (B); A's rows fit sinusoidal:len=190,dim=64,",
    ),
    "rope shorter + base (HF code)": (
        lambda: hf_rope(128, 64, theta=500000.0),
        ROPE,
        "base 500000 (A) vs 10000 (B); A's rows fit rope:len=128,dim=64,",
    ),
    # Partial rotary (HF's partial_rotary_factor, GPT-NeoX's rotary_pct, GPT-J's rotary_dim): the
    # cache is rotary_dim wide, its frequencies theta^(-2i/rotary_dim); dropped or applied wrongly.
    "rope yarn betas swapped (HF code)": (
        lambda: hf_rope(2048, 64, yarn=(4.0, 512, 1.0, 32.0)),
        "rope:len=2048,dim=64,scaling=yarn,factor=4,original-max-position-embeddings=512",
        "beta_fast and beta_slow swapped in A (beta_fast 1, beta_slow 32 (A) vs 32, 1 (B)); A's rows fit rope:len=2048,",
    ),
    # LongRoPE switches lists at seq_len > original_max_position_embeddings; ports that miss it.
    "rope longrope long factors below the original length (HF code)": (
        lambda: hf_rope(2048, 16, longrope=(LONG_FACTORS, 8.0, 4096)),
        f"rope:len=2048,dim=16,scaling=longrope,factor=8,original-max-position-embeddings=4096,short-factor={SHORT_SPEC},long-factor={LONG_SPEC}",
        "long factors (A) vs short (B) below 4096 positions; A's rows fit rope:len=2048,dim=16,",
    ),
    "rope longrope short factors past the original length (HF code)": (
        lambda: hf_rope(6000, 16, longrope=(SHORT_FACTORS, 8.0, 4096)),
        f"rope:len=6000,dim=16,scaling=longrope,factor=8,original-max-position-embeddings=4096,short-factor={SHORT_SPEC},long-factor={LONG_SPEC}",
        "short factors (A) vs long (B) past 4096 positions; A's rows fit rope:len=6000,dim=16,",
    ),
    "rope partial rotary dropped (HF code)": (
        lambda: hf_rope(1024, 128),
        "rope:len=1024,dim=32",
        "rotary on 128 of 128 dims (A) vs 32 (B): partial_rotary_factor 0.25 in B; A's rows fit rope:len=1024,dim=128,",
    ),
    "rope partial rotary where B rotates all (HF code)": (
        lambda: hf_rope(1024, 32),
        "rope:len=1024,dim=128",
        "rotary on 32 of 128 dims (A) vs 128 (B): partial_rotary_factor 0.25 in A; A's rows fit rope:len=1024,dim=32,",
    ),
    "rope partial rotary 0.5, pairs, sin (GPT-J code)": (
        lambda: hf_rope(500, 32, layout="pairs", part="sin"),
        "rope:len=500,dim=64,layout=pairs,part=sin",
        "rotary on 32 of 64 dims (A) vs 64 (B): partial_rotary_factor 0.5 in A; A's rows fit rope:len=500,dim=32,",
    ),
    # Rows in another order, found row by row in B whatever the kind (a draw's rows too).
    "rope rows shuffled (HF code)": (
        lambda: hf_rope(256, 64)[SHUFFLED],
        ROPE,
        "row-order: A's rows are B's rows in another order (A's row → B's row: "
        + ", ".join(f"{r}→{SHUFFLED[r]}" for r in range(6)),
    ),
    "learned 12×16 grid read column by column": (
        lambda: parse_recipe("learned:len=192,dim=16").build().reshape(12, 16, 16).transpose(1, 0, 2).reshape(192, 16),
        "learned:len=192,dim=16",
        "row-order: A's rows are B's 12×16 grid read column by column: A's row x·12+y is B's row y·16+x",
    ),
    "grid read column by column without its class row (MAE code)": (
        lambda: np.concatenate([np.zeros((1, 64), np.float32), mae_grid(14, 64)])[
            np.r_[0, 1 + (np.arange(196) % 14) * 14 + np.arange(196) // 14]
        ][1:],
        "sincos2d:grid=14x14,dim=64,cls=true",
        # A square MAE grid read column by column is timm's interleaved order (a recipe says it).
        "order timm-interleave (A) vs mae (B); cls false (A) vs true (B)",
    ),
}

#: One pair of each kind runs in the quick suite; the whole matrix with the slow tests.
QUICK = {
    "rope llama3 dropped (HF code)",
    "rope partial rotary dropped (HF code)",
    "rope yarn betas swapped (HF code)",
    "rope longrope long factors below the original length (HF code)",
    "sin split + base (paper code)",
    "grid axes swapped (MAE code)",
    "mrope sections",
    "rope2d base",
    "axial half layout",
    "xpos scale base",
    "alibi origin last",
    "learned seed",
}


def _cause(name: str) -> tuple[int, str]:
    build, spec, _ = PAIRS[name]
    c = compare(plain(build()), Table.from_recipe(parse_recipe(spec)))
    return c.exit_code, "none" if not c.explanations else c.explanations[0].text


@pytest.mark.parametrize("name", [pytest.param(n, marks=() if n in QUICK else pytest.mark.slow) for n in PAIRS])
def test_each_pair_gets_its_cause_in_the_kinds_words(name: str) -> None:
    code, text = _cause(name)
    expected = PAIRS[name][2]
    assert code == 1
    assert text == expected if expected == "none" else text.startswith(expected), text


def test_the_matrix_covers_every_kind_eight_times() -> None:
    counts: dict[str, int] = {}
    for _, spec, _ in PAIRS.values():
        kind = spec.split(":")[0]
        counts[kind] = counts.get(kind, 0) + 1
    assert len(PAIRS) >= 80
    assert set(counts) == set(kinds()) and min(counts.values()) >= 8, counts


@pytest.mark.slow
def test_no_cause_names_columns_a_table_does_not_have() -> None:
    """A cos cache has no sin columns: no cause line of a kind other than the sinusoid speaks of
    (sin, cos) pairs, and a permutation is said in rows and columns only."""
    for name, (_build, spec, _) in PAIRS.items():
        if spec.startswith("sinusoidal"):
            continue
        _, text = _cause(name)
        assert "[sin…|cos…]" not in text and "(sin, cos" not in text, (name, text)


def test_the_diff_package_asks_the_kinds_and_never_probes_them() -> None:
    import ast
    from pathlib import Path

    import pecli.diff

    root = Path(pecli.diff.__file__).parent
    kind_classes = {cls.__name__ for cls in kinds().values()}
    for path in sorted(root.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id not in ("getattr", "hasattr"), (
                    f"{path.name}:{node.lineno} probes with {node.func.id}"
                )
                if node.func.id == "isinstance":
                    names = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
                    assert not names & kind_classes, f"{path.name}:{node.lineno} branches on a kind"
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pecli.kinds."):
                assert node.module == "pecli.recipe", f"{path.name} imports a kind: {node.module}"


def test_neighbours_are_recipes_of_the_same_kind_one_step_away() -> None:
    for cls in kinds().values():
        from pecli.sources import operand_example

        recipe = parse_recipe(operand_example(cls))
        for other in recipe.neighbours():
            assert isinstance(other, Recipe) and other.kind == recipe.kind and other != recipe
            assert other.changes(recipe), (recipe, other)
    r = parse_recipe(ROPE_L3)
    assert replace(
        r,
        scaling="default",
        factor=None,
        original_max_position_embeddings=None,  # type: ignore[type-var]
        low_freq_factor=None,
        high_freq_factor=None,
    ) in set(r.neighbours())
