"""Every preset against its framework's own code (the wrappers in references.py).

Expected (docs/presets.md, "How exact each preset is"): float64 dialects bit-exact; float32 dialects within
``4·2⁻²⁴·max(1, p)`` of the framework, p the largest position in the table (torch's float32
exp/pow/sin are not correctly rounded for every input, so bit-exactness is impossible there);
``exact`` presets within one float32 ulp of the float64 pipeline they are the exact value of.

Run with ``-s`` to print the measured max |Δ| per case (the table in the issue's closing note).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import references as ref

from pecli.identification import identify
from pecli.presets import get_preset

pytestmark = [pytest.mark.conformance, pytest.mark.slow]

Case = tuple[str, dict[str, Any], Callable[[], np.ndarray], str]


def _needs(module: str) -> Any:
    return pytest.mark.skipif(importlib.util.find_spec(module) is None, reason=f"{module} is not installed")


HF, PE, TIMM = _needs("transformers"), _needs("positional_encodings"), _needs("timm")
DIFFUSERS = _needs("diffusers")


def t(fn: Callable[..., dict[str, np.ndarray]], *args: Any, **kwargs: Any) -> Callable[[], np.ndarray]:
    return lambda: fn(*args, **kwargs)["table"]


def grid(fn: Callable[..., dict[str, np.ndarray]], *args: Any) -> Callable[[], np.ndarray]:
    """A positional-encodings N-D output (x, y[, z], ch) flattened to (cells, ch), x-major."""

    def build() -> np.ndarray:
        out = fn(*args)["table"]
        return out.reshape(-1, out.shape[-1])

    return build


def with_zero_row(build: Callable[[], np.ndarray]) -> Callable[[], np.ndarray]:
    return lambda: np.concatenate([np.zeros((1, build().shape[1]), np.float32), build()])


CASES: list[tuple[Case, Any]] = []


def case(mark: Any, preset: str, overrides: dict[str, Any], build: Callable[[], np.ndarray], expect: str) -> None:
    CASES.append(((preset, overrides, build, expect), mark))


# fairseq family (float32): M2M100/XGLM/Speech2Text build num_positions + 2 rows; FSMT is handed the total.
for n, d in ((1024, 512), (100, 7), (8192, 64)):
    case(HF, "fairseq", {"length": n, "dim": d}, t(ref.hf_fsmt_sinusoidal, n + 2, d, 1), "float32")
    case(HF, "hf-m2m100", {"length": n, "dim": d}, t(ref.hf_m2m100_sinusoidal, n, d, 1), "float32")
for n, d in ((2048, 1024), (65, 9)):
    case(HF, "hf-xglm", {"length": n, "dim": d}, t(ref.hf_xglm_sinusoidal, n, d, 1), "float32")
    case(HF, "hf-speech2text", {"length": n, "dim": d}, t(ref.hf_speech2text_sinusoidal, n, d, 1), "float32")
    case(HF, "hf-fsmt", {"length": n, "dim": d}, t(ref.hf_fsmt_sinusoidal, n + 2, d, 1), "float32")
for n, d in ((2048, 512), (300, 65)):
    case(HF, "musicgen", {"length": n, "dim": d}, t(ref.hf_musicgen_sinusoidal, n, d), "float32")
for n, d in ((1500, 1280), (1500, 384), (30000, 64)):
    case(HF, "whisper", {"length": n, "dim": d}, t(ref.hf_whisper_sinusoids, n, d), "float32")
for n, d in ((2048, 64), (4096, 256)):
    case(HF, "gpt-j", {"length": n, "dim": d}, t(ref.hf_gptj_sinusoidal_positions, n, d), "float32")

# diffusers timestep tables (float32), rows t = 0..n-1: get_timestep_embedding itself for other widths,
# and the Timesteps module each model builds (its own flip_sin_to_cos / downscale_freq_shift).
_STEPS = np.arange(1000)
for n, d in ((1000, 128), (1000, 7), (4000, 64)):
    build = t(ref.diffusers_timestep_embedding, np.arange(n), d)  # the function's defaults
    case(DIFFUSERS, "diffusers-timesteps", {"length": n, "dim": d}, build, "float32")
case(DIFFUSERS, "sd-unet-timesteps", {"length": 1000}, t(ref.diffusers_unet2d_condition_time_proj, _STEPS), "float32")
for owner in ("CombinedTimestepTextProjEmbeddings", "CombinedTimestepGuidanceTextProjEmbeddings"):  # SD3, Flux
    case(DIFFUSERS, "sd3-timesteps", {"length": 1000}, t(ref.diffusers_time_proj, owner, _STEPS, 8, 8), "float32")
case(
    DIFFUSERS,
    "sd3-timesteps",
    {"length": 1000},
    t(ref.diffusers_time_proj, "PixArtAlphaCombinedTimestepSizeEmbeddings", _STEPS, 8, 8),
    "float32",
)
case(
    DIFFUSERS,
    "diffusers-dit-timesteps",
    {"length": 1000},
    t(ref.diffusers_time_proj, "CombinedTimestepLabelEmbeddings", _STEPS, 10, 8),
    "float32",
)
for name, shift in (("sd-unet-timesteps", 0), ("diffusers-dit-timesteps", 1)):  # odd width: a zero column
    case(
        DIFFUSERS,
        name,
        {"length": 1000, "dim": 65},
        t(ref.diffusers_timestep_embedding, _STEPS, 65, flip_sin_to_cos=True, downscale_freq_shift=shift),
        "float32",
    )

# float64 pipelines: bit-exact.
for n, d in ((512, 512), (50, 7), (4096, 1024)):
    case(HF, "hf-marian", {"length": n, "dim": d}, t(ref.hf_marian_sinusoidal, n, d), "bit-exact")
    case(HF, "hf-pegasus", {"length": n, "dim": d}, t(ref.hf_pegasus_sinusoidal, n, d), "bit-exact")
    case(HF, "hf-roformer", {"length": n, "dim": d}, t(ref.hf_roformer_sinusoidal, n, d), "bit-exact")
for n, d in ((512, 768), (40, 9), (2048, 2048)):
    case(HF, "hf-distilbert", {"length": n, "dim": d}, t(ref.hf_distilbert_sinusoidal, n, d), "bit-exact")
    case(HF, "hf-xlm", {"length": n, "dim": d}, t(ref.hf_xlm_sinusoidal, n, d), "bit-exact")
    # The paper's exact table is the value the float64 pipeline approximates: within 1 float32 ulp.
    case(HF, "vaswani", {"length": n, "dim": d}, t(ref.hf_xlm_sinusoidal, n, d), "1 ulp")

# 2-D grids.
for h, w, d in ((14, 14, 768), (6, 9, 64), (20, 20, 256)):
    case(HF, "hf-sincos2d", {"grid": f"{h}x{w}", "dim": d}, t(ref.hf_vit_mae_2d, h, w, d), "bit-exact")
    case(TIMM, "timm-sincos2d", {"grid": f"{h}x{w}", "dim": d}, t(ref.timm_sincos2d, (h, w), d), "float32")
    case(
        TIMM,
        "timm-sincos2d-interleave",
        {"grid": f"{h}x{w}", "dim": d},
        t(ref.timm_sincos2d, (h, w), d, interleave_sin_cos=True),
        "float32",
    )
    case(
        TIMM,
        "timm-sincos2d-reverse",
        {"grid": f"{h}x{w}", "dim": d},
        t(ref.timm_sincos2d, (h, w), d, reverse_coord=True),
        "float32",
    )
    # MoCo-v3's own code is not a package: it is timm(reverse, interleave) plus a zero cls row (dialects.md §5).
    case(
        TIMM,
        "moco-v3",
        {"grid": f"{h}x{w}", "dim": d},
        with_zero_row(t(ref.timm_sincos2d, (h, w), d, reverse_coord=True, interleave_sin_cos=True)),
        "float32",
    )
for image, patch, d in ((224, 16, 768), (64, 8, 64)):
    g = image // patch
    # HF's ViTMAE.initialize_weights swaps the halves back to MAE's [w | h]; the official MAE file is
    # not installable, HF's result is (bit-exact with it per dialects.md §5).
    case(HF, "hf-vitmae", {"grid": f"{g}x{g}", "dim": d}, t(ref.hf_vit_mae_initialized, image, patch, d), "bit-exact")
    case(HF, "mae", {"grid": f"{g}x{g}", "dim": d}, t(ref.hf_vit_mae_initialized, image, patch, d), "bit-exact")
for ch in (64, 7, 10):
    case(
        PE, "positional-encodings-1d", {"length": 300, "dim": ch}, t(ref.pe_positional_encoding_1d, ch, 300), "float32"
    )
for ch, x, y in ((64, 5, 7), (10, 16, 16), (6, 3, 40)):
    case(
        PE,
        "positional-encodings-2d",
        {"grid": f"{x}x{y}", "dim": ch},
        grid(ref.pe_positional_encoding_2d, ch, x, y),
        "float32",
    )
for ch, x, y, z in ((96, 3, 4, 5), (10, 8, 8, 8), (7, 2, 3, 4)):
    case(
        PE,
        "positional-encodings-3d",
        {"grid": f"{x}x{y}x{z}", "dim": ch},
        grid(ref.pe_positional_encoding_3d, ch, x, y, z),
        "float32",
    )

# diffusers' scaled grids (float64, cast to float32): PatchEmbed's buffer (DiT, PixArt), SD3's crop of its
# pos_embed_max_size table, get_2d_sincos_pos_embed at other sizes/scales, CogVideoX's 3-D table.
case(DIFFUSERS, "dit", {}, t(ref.diffusers_patch_embed_pos_embed, 32, 2, 1152), "bit-exact")
case(DIFFUSERS, "dit", {"grid": "32x32"}, t(ref.diffusers_2d_sincos_pos_embed, 1152, 32, 16), "bit-exact")
_SCALED = {"grid": "12x12", "dim": 64, "base_size": 8, "interpolation_scale": 0.5}
case(DIFFUSERS, "dit", _SCALED, t(ref.diffusers_2d_sincos_pos_embed, 64, 12, 8, 0.5), "bit-exact")
case(DIFFUSERS, "pixart-alpha", {}, t(ref.diffusers_patch_embed_pos_embed, 128, 2, 1152, 2), "bit-exact")
_PIXART_512 = {"grid": "32x32", "base_size": 32, "interpolation_scale": 1.0}
case(DIFFUSERS, "pixart-alpha", _PIXART_512, t(ref.diffusers_patch_embed_pos_embed, 64, 2, 1152, 1), "bit-exact")
_NON_SQUARE = t(ref.diffusers_2d_sincos_pos_embed, 1152, (48, 64), 64, 2.0)
case(DIFFUSERS, "pixart-alpha", {"grid": "48x64"}, _NON_SQUARE, "bit-exact")
for extra in (1, 2, 5):  # get_2d_sincos_pos_embed(cls_token=True, extra_tokens=N): N zero rows first
    build = t(ref.diffusers_2d_sincos_pos_embed, 64, 12, 8, 0.5, extra_tokens=extra)
    case(DIFFUSERS, "dit", {**_SCALED, "extra_tokens": extra}, build, "bit-exact")
case(DIFFUSERS, "sd3", {}, t(ref.diffusers_patch_embed_pos_embed, 128, 2, 1536, 1, 192), "bit-exact")
for latent in (192, 160):  # 1536² and 1280² images: 96x96 and 80x80 crops
    g = latent // 2
    build = t(ref.diffusers_patch_embed_pos_embed, 128, 2, 1536, 1, 192, latent)
    case(DIFFUSERS, "sd3", {"grid": f"{g}x{g}"}, build, "bit-exact")
case(DIFFUSERS, "cogvideox", {}, t(ref.diffusers_cogvideox_patch_embed), "bit-exact")
_COG_SMALL = {"grid": "5x4x6", "dim": 64, "interpolation_scale": 1.5, "temporal_interpolation_scale": 2.0}
case(DIFFUSERS, "cogvideox", _COG_SMALL, t(ref.diffusers_3d_sincos_pos_embed, 64, (6, 4), 5, 1.5, 2.0), "bit-exact")

RESULTS: list[tuple[str, str, str, float, str]] = []


def _ulps(a: np.ndarray, b: np.ndarray) -> int:
    ia = a.astype(np.float32).view(np.int32).astype(np.int64)
    ib = b.astype(np.float32).view(np.int32).astype(np.int64)
    ia = np.where(ia < 0, -(ia & 0x7FFFFFFF), ia)
    ib = np.where(ib < 0, -(ib & 0x7FFFFFFF), ib)
    return int(np.abs(ia - ib).max())


@pytest.mark.parametrize(
    "c",
    [pytest.param(c, marks=m, id=f"{c[0]}-{'-'.join(str(v) for v in c[1].values())}") for c, m in CASES],
)
def test_preset_matches_its_framework(c: Case) -> None:
    name, overrides, build, expect = c
    recipe = get_preset(name).recipe(**overrides)
    ours = recipe.build()
    theirs = build()
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype, (ours.shape, theirs.shape, theirs.dtype)
    diff = float(np.abs(ours.astype(np.float64) - theirs.astype(np.float64)).max())
    p_max = recipe.start + recipe.shape[0] - 1 if hasattr(recipe, "length") else max(recipe.axes) - 1
    RESULTS.append((name, "x".join(map(str, ours.shape)), expect, diff, f"{np.mean(ours == theirs):.4%} equal"))
    print(
        f"\n{name:26s} {'x'.join(map(str, ours.shape)):>11s}  {expect:9s}  max|Δ| {diff:.3g}  "
        f"{np.mean(ours == theirs):.4%} bit-identical"
    )
    if expect == "bit-exact":
        np.testing.assert_array_equal(ours, theirs)
    elif expect == "1 ulp":
        assert _ulps(ours, theirs) <= 1
    else:
        assert diff <= 4 * 2.0**-24 * max(1, p_max), (diff, p_max)


# ------------------------------------------------------------------------------ RoPE, ALiBi, learned
_ROPE_KEYS = (
    "factor",
    "original_max_position_embeddings",
    "low_freq_factor",
    "high_freq_factor",
    "beta_fast",
    "beta_slow",
    "attention_factor",
    "mscale",
    "mscale_all_dim",
)


def _hf_rope_parameters(recipe: Any) -> tuple[dict[str, Any], int]:
    """The transformers 5.23 ``rope_parameters`` dict (and max_position_embeddings) of a rope recipe."""
    params: dict[str, Any] = {"rope_type": recipe.scaling, "rope_theta": recipe.base}
    params |= {k: getattr(recipe, k) for k in _ROPE_KEYS if getattr(recipe, k) is not None}
    for k in ("short_factor", "long_factor"):
        if getattr(recipe, k):
            params[k] = [float(x) for x in getattr(recipe, k).split(";")]
    if recipe.scaling == "yarn":
        params["truncate"] = recipe.truncate
    # HF's dynamic scaling recomputes once max(position)+1 passes max_position_embeddings.
    max_pos = recipe.original_max_position_embeddings or 2048
    if recipe.scaling in ("yarn", "longrope") and recipe.factor:
        max_pos = int(recipe.original_max_position_embeddings * recipe.factor)
    return params, max_pos


ROPE_CASES = [
    ("llama", {"length": 4096}),
    ("llama", {"length": 300, "start": 100_000}),
    ("llama3", {"length": 512, "start": 8000}),  # across the original 8192
    ("llama3", {"length": 256, "start": 131_000}),
    ("vicuna-16k", {"length": 600, "start": 15_000}),
    ("llama2-dynamic", {"length": 512, "start": 7_900}),  # past max → NTK base for 8412 positions
    ("qwen3-yarn", {"length": 512, "start": 40_000}),
    ("gpt-oss", {"length": 256, "start": 100_000}),
    ("phi3-vision-128k", {"length": 256, "start": 4_000}),  # long_factor: past 4096
    ("phi3-vision-128k", {"length": 256}),  # short_factor
]


@pytest.mark.parametrize(("name", "overrides"), ROPE_CASES, ids=[f"{n}-{o}" for n, o in ROPE_CASES])
@HF
def test_rope_presets_match_transformers(name: str, overrides: dict[str, Any]) -> None:
    base = get_preset(name).recipe(**overrides)
    params, max_pos = _hf_rope_parameters(base)
    positions = np.arange(base.start, base.start + base.length)
    hf = ref.hf_llama_rope(params, positions, head_dim=base.dim, max_position_embeddings=max_pos)
    p_max = base.start + base.length - 1
    for part in ("cos", "sin"):
        ours = get_preset(name).recipe(**overrides, part=part).build()
        diff = float(np.abs(ours.astype(np.float64) - hf[part]).max())
        print(
            f"\n{name:18s} {part} {ours.shape[0]}x{ours.shape[1]} from {base.start}: max|Δ| {diff:.3g}, "
            f"{np.mean(ours == hf[part]):.4%} bit-identical"
        )
        assert ours.shape == hf[part].shape
        assert diff <= 4 * 2.0**-24 * max(1, p_max), (part, diff)
    inv = get_preset(name).recipe(**overrides, part="inv_freq").build()[0]
    assert np.max(np.abs(inv - hf["inv_freq"]) / hf["inv_freq"]) <= 2**-23  # ≤ 1 ulp (torch's pow)
    assert base.attention_scaling() == pytest.approx(float(hf["attention_scaling"]), rel=1e-7)


def _bf16_spacing(v: np.ndarray) -> np.ndarray:
    """The distance between neighbouring bfloat16 values at ``v`` (8 significant bits)."""
    _, e = np.frexp(np.abs(v).astype(np.float64))
    return np.ldexp(1.0, np.maximum(e - 1, -126) - 7)


@pytest.mark.parametrize(("name", "overrides"), ROPE_CASES, ids=[f"{n}-{o}" for n, o in ROPE_CASES])
@HF
def test_rope_presets_in_bfloat16_match_transformers_with_a_bfloat16_input(
    name: str, overrides: dict[str, Any]
) -> None:
    """``--dtype bfloat16``: LlamaRotaryEmbedding's forward for a bfloat16 ``x`` (cos/sin in float32,
    then ``.to(x.dtype)``): within one bfloat16 ulp of it plus the float32 bound (the float32 values
    may differ by that bound and round to neighbouring bfloat16 values), and equal wherever the
    float32 values are."""
    base = get_preset(name).recipe(**overrides)
    params, max_pos = _hf_rope_parameters(base)
    positions = np.arange(base.start, base.start + base.length)
    hf = ref.hf_llama_rope(params, positions, head_dim=base.dim, max_position_embeddings=max_pos, x_dtype="bfloat16")
    hf32 = ref.hf_llama_rope(params, positions, head_dim=base.dim, max_position_embeddings=max_pos)
    for part in ("cos", "sin"):
        ours = get_preset(name).recipe(**overrides, part=part, dtype="bfloat16").build().astype(np.float32)
        ours32 = get_preset(name).recipe(**overrides, part=part).build()
        same = np.mean(ours == hf[part])
        print(f"\n{name:18s} {part} bf16 {ours.shape[0]}x{ours.shape[1]}: {same:.4%} bit-identical")
        RESULTS.append((f"{name} {part}", "x".join(map(str, ours.shape)), "bf16 1 ulp", 0.0, f"{same:.4%} equal"))
        p_max = base.start + base.length - 1
        bound = _bf16_spacing(hf[part]) + 4 * 2.0**-24 * max(1, p_max)
        assert np.all(np.abs(ours.astype(np.float64) - hf[part]) <= bound), part
        agree = ours32 == hf32[part]
        assert np.array_equal(ours[agree], hf[part][agree])


@pytest.mark.parametrize(("name", "head", "n"), [("gpt-neox", 96, 2048), ("gpt-neox", 96, 300), ("pythia", 128, 2048)])
@HF
def test_gpt_neox_partial_rotary_matches_transformers(name: str, head: int, n: int) -> None:
    hf = ref.hf_gpt_neox_rope(np.arange(n), hidden_size=head * 4, num_attention_heads=4, rotary_pct=0.25)
    for part in ("cos", "sin"):
        ours = get_preset(name).recipe(length=n, part=part).build()
        assert ours.shape == hf[part].shape == (n, head // 4)
        assert np.abs(ours - hf[part]).max() <= 4 * 2.0**-24 * n


@HF
def test_meta_llama3_pairs_are_hf_llama3_rotate_half_permuted() -> None:
    """Meta's complex RoPE is HF's rotate-half table with each frequency's column repeated in place
    (the q/k permutation convert_llama_weights_to_hf.py applies)."""
    base = get_preset("meta-llama3").recipe(length=512, start=8000)
    params, max_pos = _hf_rope_parameters(base)
    hf = ref.hf_llama_rope(params, np.arange(8000, 8512), head_dim=128, max_position_embeddings=max_pos)
    half = hf["cos"][:, :64]
    ours = get_preset("meta-llama3").recipe(length=512, start=8000, part="cos").build()
    assert np.abs(ours - np.repeat(half, 2, axis=1)).max() <= 4 * 2.0**-24 * 8511


@pytest.mark.parametrize("n", [256, 2048])
@_needs("rotary_embedding_torch")
def test_meta_llama_pairs_layout_matches_rotary_embedding_torch(n: int) -> None:
    theirs = ref.rotary_embedding_torch_angles(128, n, theta=10000)["angles"]
    ours = get_preset("meta-llama").recipe(length=n, part="angle").build()
    np.testing.assert_array_equal(ours, theirs)  # float32 p·inv_freq: one rounding each side


@pytest.mark.parametrize("heads", [8, 12, 16, 20, 32, 40, 64, 112])
@HF
def test_alibi_presets_match_bloom_and_mpt(heads: int) -> None:
    n = 256
    bloom = ref.hf_bloom_alibi(np.ones((1, n), dtype=np.int64), heads)
    ours = get_preset("bloom-alibi").recipe(heads=heads, length=n).build()
    # Bit-exact but where torch's float32 pow is itself 1 ulp off (one head at n = 32, 40, 56, 128).
    np.testing.assert_allclose(ours, bloom["alibi"][:, 0, :], rtol=2**-22, atol=0)
    print(f"\nbloom-alibi {heads} heads: {np.mean(ours == bloom['alibi'][:, 0, :]):.4%} bit-identical")
    mpt = ref.hf_mpt_alibi(heads, n)
    ours = get_preset("mpt-alibi").recipe(heads=heads, length=n).build()
    np.testing.assert_array_equal(ours, mpt["alibi"][:, 0, :])
    slopes = get_preset("alibi").recipe(heads=heads).build()[0]
    # ofirpress's float64 list cast once; MPT's float32 reciprocals agree up to 64 heads, then 1 ulp.
    assert np.max(np.abs(slopes - mpt["slopes"]) / mpt["slopes"]) <= (0 if heads <= 64 else 2**-23)


@pytest.mark.parametrize(("heads", "bias_max"), [(8, 16), (12, 16), (32, 4), (6, 12)])
@HF
def test_mpt_alibi_bias_max_matches_mpt(heads: int, bias_max: int) -> None:
    # MPT's alibi_bias_max (llm-foundry's gen_slopes): the preset with --bias-max, bit for bit.
    n = 64
    mpt = ref.hf_mpt_alibi(heads, n, alibi_bias_max=bias_max)
    recipe = get_preset("mpt-alibi").recipe(heads=heads, length=n, bias_max=bias_max)
    np.testing.assert_array_equal(recipe.build(), mpt["alibi"][:, 0, :])
    found = identify(mpt["alibi"][:, 0, :])
    assert found.verdict == "match" and found.best is not None, found.summary
    assert found.best.recipe.bias_max == bias_max
    np.testing.assert_array_equal(found.best.recipe.build(), mpt["alibi"][:, 0, :])


LEARNED = [
    ("hf-bert", lambda: ref.hf_bert_position_embeddings(512, 768)["table"], {}),
    ("gpt2", lambda: ref.hf_gpt2_wpe(1024, 768)["table"], {}),
    ("roberta", lambda: ref.hf_roberta_position_embeddings(514, 768)["table"], {"zero_rows": [1]}),
    ("bart", lambda: ref.hf_bart_learned_positional_embedding(1024, 768)["table"], {}),
]


@pytest.mark.parametrize(("name", "build", "extra"), LEARNED, ids=[c[0] for c in LEARNED])
@HF
def test_learned_presets_have_the_frameworks_shape_and_distribution(name: str, build: Any, extra: dict) -> None:
    """Learned tables are random: the same shape, zero rows and distribution, not torch's numbers."""
    theirs = build()
    ours = get_preset(name).recipe().build()
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    for r in extra.get("zero_rows", []):
        assert not ours[r].any() and not theirs[r].any()
    live = [r for r in range(ours.shape[0]) if ours[r].any()]
    s_ours, s_theirs = float(ours[live].std()), float(theirs[live].std())
    print(f"\n{name:8s} {ours.shape}: std {s_ours:.5f} vs framework {s_theirs:.5f}")
    assert abs(s_ours - s_theirs) <= 0.02 * s_theirs and abs(float(ours.mean())) < 1e-3
