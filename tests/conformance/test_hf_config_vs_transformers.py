"""``--hf-config``: a model's config.json read without torch, against the rotary class transformers
5.23 builds from the same file (``AutoConfig.from_pretrained`` + the model's ``*RotaryEmbedding``).

The configs are shaped like the published ones (Hugging Face Hub ``config.json`` of each model,
values copied; vocabulary and layer counts left out: they do not touch positions).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import references as ref

from pecli.hfconfig import DEFAULTS, read_config, recipe_from_config

pytestmark = [
    pytest.mark.conformance,
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("transformers") is None, reason="transformers is not installed"),
]

_BASE = {"vocab_size": 256, "num_hidden_layers": 1, "intermediate_size": 64}
CONFIGS: dict[str, dict[str, Any]] = {
    # meta-llama/Llama-3.1-8B-Instruct
    "llama-3.1": {
        "model_type": "llama",
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "max_position_embeddings": 131072,
        "rope_theta": 500000.0,
        "rope_scaling": {
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192,
            "rope_type": "llama3",
        },
    },
    # Qwen/Qwen2.5-7B-Instruct with the YaRN block its model card adds for 128K
    "qwen2.5-yarn": {
        "model_type": "qwen2",
        "hidden_size": 3584,
        "num_attention_heads": 28,
        "num_key_value_heads": 4,
        "max_position_embeddings": 32768,
        "rope_theta": 1000000.0,
        "rope_scaling": {"factor": 4.0, "original_max_position_embeddings": 32768, "type": "yarn"},
    },
    # microsoft/Phi-3-mini-128k-instruct (LongRoPE, original_max_position_embeddings beside rope_scaling)
    "phi-3-longrope": {
        "model_type": "phi3",
        "hidden_size": 3072,
        "num_attention_heads": 32,
        "max_position_embeddings": 131072,
        "original_max_position_embeddings": 4096,
        "rope_theta": 10000.0,
        "rope_scaling": {
            "type": "longrope",
            "short_factor": [1.0 + 0.05 * i for i in range(48)],
            "long_factor": [1.0 + 1.3 * i for i in range(48)],
        },
    },
    # google/gemma-7b (head_dim 256 ≠ hidden_size / heads)
    "gemma": {
        "model_type": "gemma",
        "hidden_size": 3072,
        "num_attention_heads": 16,
        "num_key_value_heads": 16,
        "head_dim": 256,
        "max_position_embeddings": 8192,
        "rope_theta": 10000.0,
    },
    # EleutherAI/pythia-1b (the 4.x keys rotary_pct / rotary_emb_base)
    "gpt-neox": {
        "model_type": "gpt_neox",
        "hidden_size": 2048,
        "num_attention_heads": 8,
        "max_position_embeddings": 2048,
        "rotary_pct": 0.25,
        "rotary_emb_base": 10000,
    },
    # mistralai/Mistral-7B-v0.1 (no head_dim: hidden_size / heads)
    "mistral": {
        "model_type": "mistral",
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "max_position_embeddings": 32768,
        "rope_theta": 10000.0,
    },
    # transformers 5 style: rope_parameters, dynamic NTK
    "llama-dynamic-v5": {
        "model_type": "llama",
        "hidden_size": 2048,
        "num_attention_heads": 16,
        "max_position_embeddings": 4096,
        "rope_parameters": {"rope_type": "dynamic", "factor": 2.0, "rope_theta": 10000.0},
    },
    # microsoft/phi-2 (partial_rotary_factor 0.4)
    "phi-2": {
        "model_type": "phi",
        "hidden_size": 2560,
        "num_attention_heads": 32,
        "max_position_embeddings": 2048,
        "partial_rotary_factor": 0.4,
        "rope_theta": 10000.0,
    },
}
_ROTARY = {
    "llama": "llama.modeling_llama.LlamaRotaryEmbedding",
    "qwen2": "qwen2.modeling_qwen2.Qwen2RotaryEmbedding",
    "phi3": "phi3.modeling_phi3.Phi3RotaryEmbedding",
    "gemma": "gemma.modeling_gemma.GemmaRotaryEmbedding",
    "gpt_neox": "gpt_neox.modeling_gpt_neox.GPTNeoXRotaryEmbedding",
    "mistral": "mistral.modeling_mistral.MistralRotaryEmbedding",
    "phi": "phi.modeling_phi.PhiRotaryEmbedding",
}


def _theirs(directory: Path, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    torch = pytest.importorskip("torch")
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(directory)
    module_name, cls_name = _ROTARY[config.model_type].rsplit(".", 1)
    cls = getattr(importlib.import_module(f"transformers.models.{module_name}"), cls_name)
    with torch.no_grad():
        module = cls(config)
        cos, sin = module(torch.zeros(1), torch.from_numpy(positions)[None])
    return cos[0].numpy(), sin[0].numpy()


@pytest.mark.parametrize("name", list(CONFIGS))
def test_a_config_gives_the_cos_sin_transformers_builds_from_it(tmp_path: Path, name: str) -> None:
    (tmp_path / "config.json").write_text(json.dumps({**_BASE, **CONFIGS[name]}))
    recipe = recipe_from_config(read_config(tmp_path))
    n = recipe.length
    windows = [(0, 512), (n - 512, 512)]  # the start, and the end (LongRoPE's long factors)
    if recipe.scaling == "dynamic":
        windows.append((n, 512))  # past max_position_embeddings: the NTK-rescaled base
    for start, length in windows:
        positions = np.arange(start, start + length)
        cos, sin = _theirs(tmp_path, positions)
        p_max = start + length - 1
        for part, theirs in (("cos", cos), ("sin", sin)):
            ours = (
                recipe_from_config(read_config(tmp_path))
                .__class__(**{**recipe.params(everything=True), "part": part, "start": start, "length": length})
                .build()
            )
            assert ours.shape == theirs.shape, (name, ours.shape, theirs.shape)
            diff = float(np.max(np.abs(ours.astype(np.float64) - theirs)))
            print(
                f"\n{name:18s} {part} {length}x{ours.shape[1]} from {start}: max|Δ| {diff:.3g}, "
                f"{np.mean(ours == theirs):.4%} bit-identical"
            )
            assert diff <= 4 * 2.0**-24 * max(1, p_max), (name, part, start, diff)


@pytest.mark.parametrize("model_type", list(DEFAULTS))
def test_the_defaults_pecli_fills_in_are_the_config_classes_own(model_type: str) -> None:
    from transformers import AutoConfig

    config = AutoConfig.for_model(model_type, hidden_size=512, num_attention_heads=8)
    config = getattr(config, "text_config", config)  # a multimodal model: its language model's
    want = DEFAULTS[model_type]
    head_dim = getattr(config, "head_dim", None) or 512 // 8
    assert head_dim == (want["head_dim"] or 512 // 8)
    assert config.rope_parameters["rope_theta"] == want["rope_theta"]
    assert config.rope_parameters.get("partial_rotary_factor", 1.0) == want["partial_rotary_factor"]


def test_a_sinusoidal_model_config_gives_its_table(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    from transformers.models.m2m_100.modeling_m2m_100 import M2M100SinusoidalPositionalEmbedding

    # facebook/m2m100_418M: d_model 1024, max_position_embeddings 1024, pad_token_id 1
    config = {"model_type": "m2m_100", "d_model": 1024, "max_position_embeddings": 1024, "pad_token_id": 1}
    (tmp_path / "config.json").write_text(json.dumps(config))
    ours = recipe_from_config(read_config(tmp_path)).build()
    with torch.no_grad():
        theirs = M2M100SinusoidalPositionalEmbedding(1024, 1024, 1).weights.numpy()
    assert ours.shape == theirs.shape
    assert float(np.max(np.abs(ours.astype(np.float64) - theirs))) <= 4 * 2.0**-24 * 1026


# Qwen/Qwen2-VL-7B-Instruct (transformers 4.x keys: rope_scaling type "mrope") and a v5-style
# Qwen2.5-VL config with text_config; checked against the model's own get_rope_index + rotary class.
QWEN2_VL = {
    "model_type": "qwen2_vl",
    "hidden_size": 3584,
    "num_attention_heads": 28,
    "num_key_value_heads": 4,
    "max_position_embeddings": 32768,
    "rope_theta": 1000000.0,
    "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]},
    "vision_config": {"spatial_merge_size": 2},
}
QWEN25_VL = {
    "model_type": "qwen2_5_vl",
    "text_config": {
        "hidden_size": 2048,
        "num_attention_heads": 16,
        "max_position_embeddings": 128000,
        "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0, "mrope_section": [16, 24, 24]},
    },
    "vision_config": {"spatial_merge_size": 2, "tokens_per_second": 2},
}


@pytest.mark.parametrize(("config", "model"), [(QWEN2_VL, "qwen2_vl"), (QWEN25_VL, "qwen2_5_vl")])
def test_an_mrope_config_with_a_sequence_is_what_the_model_builds(tmp_path: Path, config: dict, model: str) -> None:
    from dataclasses import replace

    (tmp_path / "config.json").write_text(json.dumps(config))
    recipe = recipe_from_config(read_config(tmp_path))
    assert recipe.kind == "mrope"
    # 5 text tokens, a 4x4 raw image grid (2x2 merged tokens), 3 text tokens, a 2x4x4 video, 2 text
    types = [0] * 5 + [1] * 4 + [0] * 3 + [2] * 8 + [0] * 2
    theirs = ref.hf_qwen_vl_mrope(
        types,
        image_grid_thw=[[1, 4, 4]],
        video_grid_thw=[[2, 4, 4]],
        second_per_grid_ts=[1.0] if model == "qwen2_5_vl" else None,
        model=model,
        head_dim=recipe.dim,
        rope_theta=recipe.base,
        tokens_per_second=2,
    )
    sequence = (
        "text=5;image=1x2x2;text=3;video=2x2x2@1;text=2"
        if model == "qwen2_5_vl"
        else ("text=5;image=1x2x2;text=3;video=2x2x2;text=2")
    )
    for part in ("cos", "sin"):
        ours = replace(recipe, sequence=sequence, part=part).build()
        diff = float(np.max(np.abs(ours.astype(np.float64) - theirs[part])))
        print(f"\n{model} {part} {ours.shape}: max|Δ| {diff:.3g}, {np.mean(ours == theirs[part]):.4%} bit-identical")
        assert ours.shape == theirs[part].shape
        assert diff <= 4 * 2.0**-24 * max(1, int(theirs["position_ids"].max()))


# Model types pecli has no defaults of: transformers' own config class completes the config.
COMPLETED: dict[str, tuple[dict[str, Any], str, str | None]] = {
    # deepseek-ai/DeepSeek-V3 (rotary width qk_rope_head_dim 64; YaRN with mscale and mscale_all_dim)
    "deepseek-v3": (
        {
            "model_type": "deepseek_v3",
            "hidden_size": 7168,
            "num_attention_heads": 128,
            "num_key_value_heads": 128,
            "qk_nope_head_dim": 128,
            "qk_rope_head_dim": 64,
            "v_head_dim": 128,
            "max_position_embeddings": 163840,
            "rope_theta": 10000,
            "rope_scaling": {
                "beta_fast": 32,
                "beta_slow": 1,
                "factor": 40,
                "mscale": 1.0,
                "mscale_all_dim": 1.0,
                "original_max_position_embeddings": 4096,
                "type": "yarn",
            },
        },
        "deepseek_v3.modeling_deepseek_v3.DeepseekV3RotaryEmbedding",
        None,
    ),
    # google/gemma-3-4b-it's text model: global layers θ 10⁶ with linear ×8, local layers θ 10⁴
    **{
        f"gemma-3-{layer}": (
            {
                "model_type": "gemma3_text",
                "hidden_size": 2560,
                "num_attention_heads": 8,
                "num_key_value_heads": 4,
                "head_dim": 256,
                "max_position_embeddings": 131072,
                "rope_local_base_freq": 10000.0,
                "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
                "rope_theta": 1000000.0,
                "sliding_window": 1024,
                "num_hidden_layers": 6,  # five sliding layers, then a full one (sliding_window_pattern 6)
            },
            "gemma3.modeling_gemma3.Gemma3RotaryEmbedding",
            layer,
        )
        for layer in ("full_attention", "sliding_attention")
    },
    # google/gemma-4's text model (sizes shrunk): full-attention layers rotate 1/4 of global_head_dim's
    # frequencies (rope_type proportional, θ 10⁶), sliding ones all of head_dim's (θ 10⁴)
    **{
        f"gemma-4-{layer}": (
            {
                "model_type": "gemma4_text",
                "hidden_size": 256,
                "num_attention_heads": 2,
                "num_key_value_heads": 1,
                "head_dim": 64,
                "global_head_dim": 128,
                "max_position_embeddings": 4096,
                "num_hidden_layers": 6,
                "layer_types": ["sliding_attention"] * 5 + ["full_attention"],
                "rope_parameters": {
                    "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                    "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25, "rope_theta": 1e6},
                },
            },
            "gemma4.modeling_gemma4.Gemma4TextRotaryEmbedding",
            layer,
        )
        for layer in ("full_attention", "sliding_attention")
    },
}


@pytest.mark.parametrize("name", list(COMPLETED))
def test_a_config_pecli_has_no_defaults_of_is_read_through_transformers(tmp_path: Path, name: str) -> None:
    torch = pytest.importorskip("torch")
    from transformers import AutoConfig

    raw, rotary, layer = COMPLETED[name]
    assert raw["model_type"] not in DEFAULTS
    (tmp_path / "config.json").write_text(json.dumps({**_BASE, **raw}))
    spec = f"{tmp_path}/config.json" + (f":{layer}" if layer else "")
    recipe = recipe_from_config(spec)
    config = AutoConfig.from_pretrained(tmp_path)
    module_name, cls_name = rotary.rsplit(".", 1)
    cls = getattr(importlib.import_module(f"transformers.models.{module_name}"), cls_name)
    for start in (0, recipe.length - 512):
        positions = torch.arange(start, start + 512)[None]
        with torch.no_grad():
            args = (torch.zeros(1), positions) + ((layer,) if layer else ())
            cos, sin = (t[0].numpy() for t in cls(config)(*args))
        for part, theirs in (("cos", cos), ("sin", sin)):
            ours = recipe.with_params(part=part, start=start, length=512).build()
            assert ours.shape == theirs.shape, (name, ours.shape, theirs.shape)
            diff = float(np.max(np.abs(ours.astype(np.float64) - theirs)))
            print(f"\n{name:28s} {part} from {start}: max|Δ| {diff:.3g}, {np.mean(ours == theirs):.4%} bit-identical")
            assert diff <= 4 * 2.0**-24 * max(1, start + 511), (name, part, start, diff)
