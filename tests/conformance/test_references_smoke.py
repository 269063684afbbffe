"""Smoke tests for the reference wrappers in ``references.py``: each one runs at a small shape and its
shape/dtype/structure is checked against shared/reference/dialects.md.  No pecli code is involved; a
missing framework skips its tests.

``references`` is imported by name: pytest's default (prepend) import mode puts this folder, which has
no ``__init__.py``, first on ``sys.path``.
"""

from __future__ import annotations

import importlib.util
import math
import sys

import numpy as np
import pytest
import references as R

pytestmark = [pytest.mark.conformance, pytest.mark.slow]

F32 = np.float32


@pytest.fixture
def hf() -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")


def _row0_split(d: int, cos_first: bool = False) -> np.ndarray:
    """Row 0 of a 0-based split table: sin(0)=0 on the sin block, cos(0)=1 on the cos block."""
    s = (d + 1) // 2
    sin_block, cos_block = np.zeros(s, F32), np.ones(d - s, F32)
    return np.concatenate([cos_block, sin_block] if cos_first else [sin_block, cos_block])


# ------------------------------------------------------------------------------- transformers: fairseq clones


@pytest.mark.usefixtures("hf")
def test_m2m100_full_buffer_has_offset_rows_and_zero_padding_row() -> None:
    out = R.hf_m2m100_sinusoidal(1024, 16, 1)
    table = out["table"]
    assert table.shape == (1026, 16) and table.dtype == F32
    assert int(out["offset"]) == 2
    assert not table[1].any()  # padding row
    np.testing.assert_array_equal(table[0], _row0_split(16))
    # row r holds the sinusoid of r: the last sin column has frequency exactly 1/10000 (the /(half-1) rule)
    assert table[2, 7] == pytest.approx(math.sin(2e-4), rel=1e-6)


@pytest.mark.usefixtures("hf")
def test_fsmt_make_weight_equals_m2m100_table() -> None:
    fsmt = R.hf_fsmt_sinusoidal(1026, 16, 1)["table"]
    assert fsmt.shape == (1026, 16) and fsmt.dtype == F32
    np.testing.assert_array_equal(fsmt, R.hf_m2m100_sinusoidal(1024, 16, 1)["table"])


@pytest.mark.usefixtures("hf")
@pytest.mark.parametrize("wrapper", [R.hf_xglm_sinusoidal, R.hf_speech2text_sinusoidal])
def test_fairseq_clones_offset_and_padding(wrapper) -> None:
    out = wrapper(30, 7, 1)
    table = out["table"]
    assert table.shape == (32, 7) and table.dtype == F32 and int(out["offset"]) == 2
    assert not table[1].any()
    assert not table[:, -1].any()  # odd width → trailing zero column
    np.testing.assert_array_equal(table, R.hf_m2m100_sinusoidal(30, 7, 1)["table"])


@pytest.mark.usefixtures("hf")
def test_musicgen_is_cos_first_without_padding_row() -> None:
    table = R.hf_musicgen_sinusoidal(20, 16)["table"]
    assert table.shape == (20, 16) and table.dtype == F32
    np.testing.assert_array_equal(table[0], _row0_split(16, cos_first=True))
    assert np.all(np.abs(table[1:]).sum(1) > 0)
    m2m = R.hf_m2m100_sinusoidal(18, 16)["table"]  # same frequencies, halves swapped
    np.testing.assert_array_equal(table, np.concatenate([m2m[:, 8:], m2m[:, :8]], 1))


# ----------------------------------------------------------------------------- transformers: XLM family


@pytest.mark.usefixtures("hf")
@pytest.mark.parametrize("wrapper", [R.hf_marian_sinusoidal, R.hf_pegasus_sinusoidal, R.hf_roformer_sinusoidal])
def test_marian_family_split_with_wider_sin_block_and_no_padding(wrapper) -> None:
    table = wrapper(12, 7, 1)["table"]  # padding_idx is ignored
    assert table.shape == (12, 7) and table.dtype == F32
    np.testing.assert_array_equal(table[0], _row0_split(7))  # 4 sin columns, 3 cos columns
    assert table[1].any()
    np.testing.assert_array_equal(table, R.hf_marian_sinusoidal(12, 7)["table"])


@pytest.mark.usefixtures("hf")
@pytest.mark.parametrize("wrapper", [R.hf_xlm_sinusoidal, R.hf_distilbert_sinusoidal])
def test_xlm_family_interleaved_float64_cast(wrapper) -> None:
    table = wrapper(10, 9)["table"]
    assert table.shape == (10, 9) and table.dtype == F32
    np.testing.assert_array_equal(table[0], np.array([0, 1] * 4 + [0], F32))
    # interleaved columns hold the Marian table's columns (same float64 angles, one cast)
    marian = R.hf_marian_sinusoidal(10, 9)["table"]
    np.testing.assert_array_equal(table[:, 0::2], marian[:, :5])
    np.testing.assert_array_equal(table[:, 1::2], marian[:, 5:])


# ------------------------------------------------------------------------------- transformers: oddballs


@pytest.mark.usefixtures("hf")
def test_whisper_sinusoids_split_and_rejects_odd_channels() -> None:
    table = R.hf_whisper_sinusoids(1500, 64)["table"]
    assert table.shape == (1500, 64) and table.dtype == F32
    np.testing.assert_array_equal(table[0], _row0_split(64))
    with pytest.raises(ValueError):
        R.hf_whisper_sinusoids(10, 7)


@pytest.mark.usefixtures("hf")
def test_gptj_sinusoidal_positions() -> None:
    table = R.hf_gptj_sinusoidal_positions(64, 32)["table"]
    assert table.shape == (64, 32) and table.dtype == F32
    np.testing.assert_array_equal(table[0], _row0_split(32))


@pytest.mark.usefixtures("hf")
def test_vit_mae_raw_and_initialized_differ_by_the_half_swap() -> None:
    raw = R.hf_vit_mae_2d(4, 4, 32, cls_token=True)["table"]
    init = R.hf_vit_mae_initialized(image_size=8, patch_size=2, hidden_size=32)["table"]  # 4×4 grid
    assert raw.shape == init.shape == (17, 32) and raw.dtype == init.dtype == F32
    assert not raw[0].any() and not init[0].any()  # cls rows
    assert np.abs(raw - init).max() > 1.0
    np.testing.assert_array_equal(init, np.concatenate([raw[:, 16:], raw[:, :16]], 1))
    non_square = R.hf_vit_mae_2d(2, 3, 8)["table"]
    assert non_square.shape == (6, 8)
    with pytest.raises(ValueError):
        R.hf_vit_mae_2d(2, 2, 6)


# ----------------------------------------------------------------------------------- transformers: RoPE

LONGROPE_SHORT = [1.0] * 16
LONGROPE_LONG = [1.0 + i / 4 for i in range(16)]

ROPE_CASES = {
    "default": ({"rope_type": "default", "rope_theta": 10000.0}, 2048),
    "linear": ({"rope_type": "linear", "rope_theta": 10000.0, "factor": 4.0}, 2048),
    "dynamic": ({"rope_type": "dynamic", "rope_theta": 10000.0, "factor": 4.0}, 2048),
    "yarn": (
        {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0, "original_max_position_embeddings": 2048},
        8192,
    ),
    "longrope": (
        {
            "rope_type": "longrope",
            "rope_theta": 10000.0,
            "factor": 4.0,
            "short_factor": LONGROPE_SHORT,
            "long_factor": LONGROPE_LONG,
            "original_max_position_embeddings": 2048,
        },
        8192,
    ),
    "llama3": (
        {
            "rope_type": "llama3",
            "rope_theta": 500000.0,
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 2048,
        },
        16384,
    ),
}
POSITIONS = np.array([0, 1, 2, 100, 2047, 2048, 5000, 8000])  # past original_max_position_embeddings (2048)


@pytest.mark.usefixtures("hf")
@pytest.mark.parametrize("rope_type", list(ROPE_CASES))
def test_llama_rope_shapes_layout_and_scaling(rope_type: str) -> None:
    params, max_pos = ROPE_CASES[rope_type]
    out = R.hf_llama_rope(params, POSITIONS, head_dim=32, max_position_embeddings=max_pos)
    cos, sin = out["cos"], out["sin"]
    assert cos.shape == sin.shape == (len(POSITIONS), 32) and cos.dtype == sin.dtype == F32
    assert out["inv_freq"].shape == out["original_inv_freq"].shape == (16,) and out["inv_freq"].dtype == F32
    np.testing.assert_array_equal(cos[:, :16], cos[:, 16:])  # rotate_half layout [f, f]
    att = float(out["attention_scaling"])
    np.testing.assert_allclose(cos[0], np.full(32, att, F32))  # position 0: cos = 1 · attention_scaling
    expected_att = {"yarn": 0.1 * math.log(4.0) + 1, "longrope": math.sqrt(1 + math.log(4.0) / math.log(2048))}
    assert att == pytest.approx(expected_att.get(rope_type, 1.0))
    unscaled = R.hf_llama_rope({"rope_type": "default", "rope_theta": params["rope_theta"]}, [0], head_dim=32)
    assert np.array_equal(out["inv_freq"], unscaled["inv_freq"]) == (rope_type == "default")
    # dynamic and longrope swap inv_freq at run time when max(pos)+1 exceeds the (original) max length
    assert (not np.array_equal(out["inv_freq"], out["original_inv_freq"])) == (rope_type in {"dynamic", "longrope"})


@pytest.mark.usefixtures("hf")
def test_gpt_neox_partial_rotary() -> None:
    out = R.hf_gpt_neox_rope(range(10), hidden_size=256, num_attention_heads=4, rotary_pct=0.25)
    assert out["cos"].shape == out["sin"].shape == (10, 16) and out["cos"].dtype == F32  # 64 · 0.25
    assert out["inv_freq"].shape == (8,)
    np.testing.assert_array_equal(out["cos"][:, :8], out["cos"][:, 8:])


# ---------------------------------------------------------------------------------- transformers: ALiBi


@pytest.mark.usefixtures("hf")
@pytest.mark.parametrize("heads", [8, 12])
def test_bloom_and_mpt_alibi(heads: int) -> None:
    bloom = R.hf_bloom_alibi([[1] * 6, [0, 0, 1, 1, 1, 1]], heads)
    assert bloom["alibi"].shape == (2 * heads, 1, 6) and bloom["alibi"].dtype == F32
    assert bloom["slopes"].shape == (heads,) and bloom["slopes"].dtype == F32
    assert bloom["alibi"].min() == 0.0  # non-negative: slope · (cumsum(mask) - 1) · mask
    np.testing.assert_array_equal(bloom["alibi"][:heads, 0, 1], bloom["slopes"])
    mpt = R.hf_mpt_alibi(heads, 6)
    assert mpt["alibi"].shape == (heads, 1, 6) and mpt["alibi"].dtype == F32
    assert mpt["alibi"].max() == 0.0  # non-positive: slope · (pos - (L-1))
    np.testing.assert_allclose(mpt["slopes"], bloom["slopes"], rtol=2e-7, atol=0)
    ref = [2 ** (-8 * (k + 1) / heads) for k in range(heads)] if heads == 8 else None
    if ref is not None:
        np.testing.assert_allclose(bloom["slopes"], np.array(ref, F32), rtol=1e-7)


# -------------------------------------------------------------------------- transformers: learned tables


@pytest.mark.usefixtures("hf")
def test_learned_tables_shapes_std_and_padding_rows() -> None:
    bert = R.hf_bert_position_embeddings(512, 64, seed=0)["table"]
    gpt2 = R.hf_gpt2_wpe(1024, 64, seed=0)["table"]
    roberta = R.hf_roberta_position_embeddings(514, 64, pad_token_id=1, seed=0)["table"]
    bart = R.hf_bart_learned_positional_embedding(1024, 64, seed=0)
    assert bert.shape == (512, 64) and gpt2.shape == (1024, 64) and roberta.shape == (514, 64)
    assert bart["table"].shape == (1026, 64) and int(bart["offset"]) == 2
    for table in (bert, gpt2, roberta, bart["table"]):
        assert table.dtype == F32
        assert table.std() == pytest.approx(0.02, rel=0.05)
    assert not roberta[1].any() and roberta[0].any() and roberta[2].any()
    assert all(np.abs(t).sum(1).min() > 0 for t in (bert, gpt2, bart["table"]))
    np.testing.assert_array_equal(bert, R.hf_bert_position_embeddings(512, 64, seed=0)["table"])  # seeded
    assert not np.array_equal(bert, R.hf_bert_position_embeddings(512, 64, seed=1)["table"])


# ---------------------------------------------------------------------------------- positional-encodings


def test_positional_encodings_1d_2d_3d() -> None:
    pytest.importorskip("torch")
    pytest.importorskip("positional_encodings")
    one = R.pe_positional_encoding_1d(7, 30)["table"]
    assert one.shape == (30, 7) and one.dtype == F32
    np.testing.assert_array_equal(one[0], np.array([0, 1, 0, 1, 0, 1, 0], F32))  # interleaved, truncated
    two = R.pe_positional_encoding_2d(10, 5, 7)["table"]
    assert two.shape == (5, 7, 10) and two.dtype == F32
    np.testing.assert_array_equal(two[:, 0, :6], two[:, 3, :6])  # x-block depends on x only (C = 6)
    three = R.pe_positional_encoding_3d(10, 3, 4, 5)["table"]
    assert three.shape == (3, 4, 5, 10) and three.dtype == F32
    assert "tensorflow" not in sys.modules


# ------------------------------------------------------------------------------------------------- timm


def test_timm_sincos2d_without_torchvision() -> None:
    pytest.importorskip("torch")
    if importlib.util.find_spec("timm") is None:  # importorskip("timm") would run timm/__init__ (needs torchvision)
        pytest.skip("timm is not installed")
    table = R.timm_sincos2d([3, 5], dim=16)["table"]
    assert table.shape == (15, 16) and table.dtype == F32
    np.testing.assert_array_equal(table[0], np.array([0] * 8 + [1] * 8, F32))  # [sin h | sin w | cos h | cos w]
    inter = R.timm_sincos2d([3, 5], dim=16, interleave_sin_cos=True)["table"]
    np.testing.assert_array_equal(inter[0], np.array([0] * 4 + [1] * 4 + [0] * 4 + [1] * 4, F32))
    rev = R.timm_sincos2d([3, 5], dim=16, reverse_coord=True)["table"]
    assert rev.shape == (15, 16) and not np.array_equal(rev, table)


# ----------------------------------------------------------------------------------- rotary-embedding-torch


def test_rotary_embedding_torch_angles_interleaved() -> None:
    pytest.importorskip("torch")
    pytest.importorskip("rotary_embedding_torch")
    out = R.rotary_embedding_torch_angles(32, 20)
    angles = out["angles"]
    assert angles.shape == (20, 32) and angles.dtype == F32 and out["freqs"].shape == (16,)
    np.testing.assert_array_equal(angles[:, 0::2], angles[:, 1::2])  # [f0, f0, f1, f1, …]
    np.testing.assert_array_equal(angles[1, 0::2], out["freqs"])
    scaled = R.rotary_embedding_torch_angles(32, 20, interpolate_factor=4.0, offset=3)
    np.testing.assert_array_equal(scaled["positions"], (np.arange(20, dtype=F32) + 3) / 4)
    ntk = R.rotary_embedding_torch_angles(32, 20, theta_rescale_factor=2.0)
    assert ntk["freqs"][0] == 1.0 and ntk["freqs"][-1] < out["freqs"][-1]


def test_rotary_embedding_torch_axial_freqs() -> None:
    pytest.importorskip("torch")
    pytest.importorskip("rotary_embedding_torch")
    out = R.rotary_embedding_torch_axial_freqs(8, (2, 3, 4))
    angles = out["angles"]
    assert angles.shape == (24, 24) and angles.dtype == F32 and out["freqs"].shape == (4,)
    np.testing.assert_array_equal(angles[:, 0::2], angles[:, 1::2])  # [f0, f0, f1, f1, …] per axis
    # freqs_for='lang': f0 = 1, so columns 0, 8 and 16 are the cell's (t, h, w), t slowest.
    np.testing.assert_array_equal(angles[:, [0, 8, 16]], np.array(list(np.ndindex(2, 3, 4)), dtype=F32))
    pixel = R.rotary_embedding_torch_axial_freqs(8, (5, 3), freqs_for="pixel", max_freq=256)
    assert pixel["angles"].shape == (15, 16) and pixel["freqs"][0] == F32(math.pi)
    np.testing.assert_allclose(pixel["cos"], np.cos(pixel["angles"].astype(np.float64)), rtol=0, atol=1e-6)


# ----------------------------------------------------------------------------------------------- diffusers


def test_diffusers_timestep_embedding() -> None:
    pytest.importorskip("torch")
    pytest.importorskip("diffusers")
    table = R.diffusers_timestep_embedding([0, 1.5, 999], 7)["table"]
    assert table.shape == (3, 7) and table.dtype == F32
    np.testing.assert_array_equal(table[0], np.array([0, 0, 0, 1, 1, 1, 0], F32))  # odd → zero column
    flipped = R.diffusers_timestep_embedding([0, 1.5, 999], 8, flip_sin_to_cos=True, downscale_freq_shift=0)
    np.testing.assert_array_equal(flipped["table"][0], np.array([1] * 4 + [0] * 4, F32))
