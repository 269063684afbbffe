"""GGUF (issue 24): llama.cpp's files read as a SOURCE (a tensor) and as a config (``--hf-config``).

The files are written by ``gguf.GGUFWriter`` (llama.cpp's own Python writer) and the Llama 3.1
factors by ``convert_hf_to_gguf.py``'s formula as published; the truth is the arrays given to
the writer, ``gguf.quants`` for a quantized tensor, and the recipe of the transformers config the
GGUF keys were converted from.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")

from pecli import open_table, recipe_from_config  # noqa: E402
from pecli.errors import PecliInputError  # noqa: E402
from tests.helpers import write_gguf  # noqa: E402

Q = gguf.GGMLQuantizationType


def llama3_rope_freqs(base: float, dim: int, factor: float, low: float, high: float, old: int) -> np.ndarray:
    """``convert_hf_to_gguf.py``'s ``LlamaModel.generate_extra_tensors`` (llama.cpp), as published:
    float32 frequencies, then each one's divisor, stored as float32."""
    torch = pytest.importorskip("torch")
    freqs = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
    low_freq_wavelen, high_freq_wavelen = old / low, old / high
    rope_factors: list[Any] = []
    for freq in freqs:
        wavelen = 2 * math.pi / freq
        if wavelen < high_freq_wavelen:
            rope_factors.append(1)
        elif wavelen > low_freq_wavelen:
            rope_factors.append(factor)
        else:
            smooth = (old / wavelen - low) / (high - low)
            rope_factors.append(1 / ((1 - smooth) / factor + smooth))
    return torch.tensor(rope_factors, dtype=torch.float32).numpy()


def test_tensors_are_read_in_numpy_order_in_every_float_type(tmp_path: Path) -> None:
    table = np.random.default_rng(0).standard_normal((16, 64)).astype(np.float32)
    path = write_gguf(
        tmp_path / "m.gguf",
        "gpt2",
        {},
        {
            "position_embd.weight": table,
            "half": table.astype(np.float16),
            "bf16": (gguf.quants.quantize(table, Q.BF16), Q.BF16),
            "q8": (gguf.quants.quantize(table, Q.Q8_0), Q.Q8_0),
        },
    )
    with open_table(path, key="position_embd.weight") as t:
        np.testing.assert_array_equal(t.rows(0, 16), table)
    with open_table(path, key="half") as t:
        np.testing.assert_array_equal(t.rows(0, 16), table.astype(np.float16))
    with open_table(path, key="bf16") as t:
        assert t.storage == "bfloat16"
        # bfloat16 is float32's top half, rounded to nearest even by gguf's quantize
        bits = table.view(np.uint32).astype(np.uint64)
        rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16).astype(np.uint32).view(np.float32)
        np.testing.assert_array_equal(t.rows(0, 16), rounded)
    with open_table(path, key="q8") as t:
        assert "dequantized from Q8_0" in t.info["note"]
        # Q8_0: blocks of 32 values, each an int8 times the block's float16 scale max|x|/127
        error = np.abs(t.rows(0, 16) - table).reshape(16, 2, 32)
        scale = np.abs(table).reshape(16, 2, 32).max(axis=2, keepdims=True) / 127
        assert np.all(error <= scale * 0.5 + scale * 2**-10)


def test_the_command_line_lists_reads_and_refuses_to_write_gguf(run, tmp_path: Path) -> None:
    table = np.arange(24, dtype=np.float32).reshape(4, 6)
    path = write_gguf(tmp_path / "m.gguf", "gpt2", {}, {"position_embd.weight": table, "other": table[:2]})
    r = run("inspect", path)
    assert r.exit_code == 0 and "position_embd.weight  (4, 6)  float32" in r.output, r.output
    r = run("export", f"{path}:position_embd.weight", "-o", tmp_path / "pe.npy")
    assert r.exit_code == 0, r.output
    np.testing.assert_array_equal(np.load(tmp_path / "pe.npy"), table)
    before = sorted(tmp_path.iterdir())
    r = run("generate", "--len", "4", "--dim", "8", "-o", tmp_path / "out.gguf")
    assert r.exit_code == 2 and r.stderr.startswith("Error: pecli reads GGUF files but does not write them")
    assert sorted(tmp_path.iterdir()) == before
    (tmp_path / "bad.gguf").write_bytes(b"GGUF" + bytes(12))
    r = run("inspect", tmp_path / "bad.gguf")
    assert r.exit_code == 2 and "is not a readable GGUF file" in r.stderr and r.stderr.count("\n") == 1, r.stderr


LLAMA = {"{arch}.context_length": 8192, "{arch}.embedding_length": 4096, "{arch}.attention.head_count": 32}


@pytest.mark.parametrize(
    ("keys", "want"),
    [
        ({"{arch}.rope.freq_base": 10000.0, "{arch}.rope.dimension_count": 128}, {"base": 10000.0, "dim": 128}),
        (  # no dimension_count: the head width, embedding_length / head_count
            {"{arch}.rope.freq_base": 1e6},
            {"base": 1e6, "dim": 128, "scaling": "default"},
        ),
        (
            {"{arch}.rope.scaling.type": "linear", "{arch}.rope.scaling.factor": 4.0},
            {"scaling": "linear", "factor": 4.0, "base": 10000.0},
        ),
        (
            {
                "{arch}.rope.freq_base": 1e6,
                "{arch}.rope.scaling.type": "yarn",
                "{arch}.rope.scaling.factor": 4.0,
                "{arch}.rope.scaling.original_context_length": 32768,
                "{arch}.rope.scaling.yarn_beta_fast": 16.0,
            },
            {"scaling": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768, "beta_fast": 16.0},
        ),
    ],
)
def test_the_rope_keys_are_the_configs_they_were_converted_from(tmp_path: Path, keys: dict, want: dict) -> None:
    path = write_gguf(tmp_path / "m.gguf", "llama", {**LLAMA, **keys}, {})
    recipe = recipe_from_config(path)
    assert recipe.length == 8192
    assert {k: recipe.params(everything=True)[k] for k in want} == want


@pytest.mark.parametrize(
    ("base", "dim", "factor", "low", "high", "old"),
    [(500000.0, 128, 8.0, 1.0, 4.0, 8192), (500000.0, 64, 32.0, 1.0, 4.0, 8192), (1e6, 128, 16.0, 1.0, 2.0, 4096)],
)
def test_llama31_factors_are_named_as_the_scaling_they_come_from(tmp_path: Path, base, dim, factor, low, high, old):
    factors = llama3_rope_freqs(base, dim, factor, low, high, old)
    keys = {**LLAMA, "{arch}.rope.freq_base": base, "{arch}.rope.dimension_count": dim}
    path = write_gguf(tmp_path / "m.gguf", "llama", keys, {"rope_freqs.weight": factors})
    recipe = recipe_from_config(path)
    assert recipe.scaling == "llama3" and recipe.factor == factor
    # The scaling named builds the table of the transformers config the file was converted from
    # (an equivalent parametrization may be named: old/low and old/high are what the ramp reads).
    config = {
        "model_type": "llama",
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "head_dim": dim,
        "max_position_embeddings": 8192,
        "rope_theta": base,
        "rope_scaling": {
            "rope_type": "llama3",
            "factor": factor,
            "low_freq_factor": low,
            "high_freq_factor": high,
            "original_max_position_embeddings": old,
        },
    }
    for part in ("cos", "sin"):
        mine = recipe.with_params(part=part, start=8000, length=192).build()
        theirs = recipe_from_config(config).with_params(part=part, start=8000, length=192).build()
        np.testing.assert_array_equal(mine, theirs)


@pytest.mark.parametrize(
    ("keys", "tensors", "message"),
    [
        ({"{arch}.rope.scaling.attn_factor": 0.5}, {}, "llama.rope.scaling.attn_factor is 0.5"),
        ({"{arch}.rope.scaling.type": "su"}, {}, "'su' is not one pecli reads from GGUF"),
        (  # MiniCPM writes the type; its factors must be there too
            {"{arch}.rope.scaling.type": "longrope", "{arch}.rope.scaling.original_context_length": 4096},
            {},
            "has no rope_factors_long.weight: LongRoPE needs both",
        ),
        (
            {"{arch}.rope.scaling.original_context_length": 4096},
            {"rope_factors_long.weight": np.ones(64, np.float32), "rope_factors_short.weight": np.ones(8, np.float32)},
            "rope_factors_short.weight holds 8 factors",
        ),
        (
            {},
            {"rope_factors_long.weight": np.ones(64, np.float32), "rope_factors_short.weight": np.ones(64, np.float32)},
            "no rope.scaling.original_context_length",
        ),
        ({}, {"rope_freqs.weight": np.linspace(1, 3, 64, dtype=np.float32)}, "no Llama 3.1 scaling rebuilds"),
    ],
)
def test_what_pecli_cannot_name_is_refused(run, tmp_path: Path, keys: dict, tensors: dict, message: str) -> None:
    path = write_gguf(tmp_path / "m.gguf", "llama", {**LLAMA, **keys}, tensors)
    with pytest.raises(PecliInputError, match=message):
        recipe_from_config(path)
    r = run("generate", "--hf-config", path, "--len", "4")
    assert r.exit_code == 2 and message in r.stderr and r.stderr.count("\n") == 1, r.stderr


def test_a_model_without_rotary_positions_is_not_given_one(tmp_path: Path) -> None:
    # GPT-2 converted by llama.cpp: learned positions, no {arch}.rope.* keys.
    table = np.zeros((1024, 8), np.float32)
    keys = {"{arch}.context_length": 1024, "{arch}.embedding_length": 768, "{arch}.attention.head_count": 12}
    path = write_gguf(tmp_path / "gpt2.gguf", "gpt2", keys, {"position_embd.weight": table})
    with pytest.raises(PecliInputError, match=r"no gpt2\.rope\.\* keys: .* pecli inspect FILE:position_embd\.weight"):
        recipe_from_config(path)


def test_per_layer_head_counts_and_a_short_rope_freqs_are_handled(tmp_path: Path) -> None:
    writer_keys = {"{arch}.context_length": 64, "{arch}.embedding_length": 256, "{arch}.rope.freq_base": 10000.0}
    path = tmp_path / "m.gguf"
    writer = gguf.GGUFWriter(path, "llama")
    for key, value in writer_keys.items():
        (writer.add_uint32 if isinstance(value, int) else writer.add_float32)(key.format(arch="llama"), value)
    writer.add_array("llama.attention.head_count", [4, 4, 4])  # one per layer, all equal
    writer.add_tensor("rope_freqs.weight", np.ones(5, np.float32))  # 64 wide: 32 frequencies, not 5
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with pytest.raises(PecliInputError, match="holds 5 factors, and a rotary width of 64 has 32 frequencies"):
        recipe_from_config(path)


#: Phi-3-mini-128k's shape: 3072 wide, 32 heads (96-wide rotary), 131072 positions trained at 4096.
PHI3 = {
    "{arch}.context_length": 131072,
    "{arch}.embedding_length": 3072,
    "{arch}.attention.head_count": 32,
    "{arch}.rope.dimension_count": 96,
    "{arch}.rope.freq_base": 10000.0,
    "{arch}.rope.scaling.original_context_length": 4096,
}


@pytest.mark.parametrize("attn", ["default", "none", 1.25])
def test_phi3_longrope_factors_are_the_config_they_were_converted_from(tmp_path: Path, attn: Any) -> None:
    # convert_hf_to_gguf.py's Phi3MiniModel: long/short factors as float32 tensors, the attention
    # factor √(1 + ln 32 / ln 4096) as rope.scaling.attn_factor (float32).  Factors exact in float32,
    # so the file and the config hold the same numbers and the tables must agree bit for bit.
    rng = np.random.default_rng(3)
    long = (1 + 40 * np.sort(rng.random(48))).astype(np.float32)
    short = (1 + 0.2 * np.sort(rng.random(48))).astype(np.float32)
    default = math.sqrt(1 + math.log(131072 / 4096) / math.log(4096))
    factor = {"default": default, "none": None, 1.25: 1.25}[attn]
    keys = {**PHI3, **({} if factor is None else {"{arch}.rope.scaling.attn_factor": factor})}
    tensors = {"rope_factors_long.weight": long, "rope_factors_short.weight": short}
    path = write_gguf(tmp_path / "phi3.gguf", "phi3", keys, tensors)
    recipe = recipe_from_config(path)
    rope = {
        "rope_type": "longrope",
        "long_factor": long.tolist(),
        "short_factor": short.tolist(),
        **({"attention_factor": float(np.float32(1.25))} if attn == 1.25 else {}),
    }
    config = {
        "model_type": "phi3",
        "hidden_size": 3072,
        "num_attention_heads": 32,
        "max_position_embeddings": 131072,
        "original_max_position_embeddings": 4096,
        "rope_theta": 10000.0,
        "rope_scaling": rope,
    }
    theirs = recipe_from_config(config)
    assert recipe.scaling == "longrope" and recipe.attention_factor == theirs.attention_factor
    for part, start in (("cos", 0), ("sin", 0), ("cos", 131000)):  # short factors, then long past 4096
        mine = recipe.with_params(part=part, start=start, length=64).build()
        np.testing.assert_array_equal(mine, theirs.with_params(part=part, start=start, length=64).build())
