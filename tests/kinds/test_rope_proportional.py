"""Proportional RoPE (Gemma 4's full-attention layers, transformers 5.23 ``rope_type
"proportional"``): the first ``int(partial_rotary_factor · dim // 2)`` frequencies of the whole
head's exponents ``base^(−2i/dim)``, zeros after them, the table keeping the head's width.

Truth: ``_compute_proportional_rope_parameters`` and ``Gemma4TextRotaryEmbedding.forward``
(transformers 5.23, ``modeling_rope_utils.py`` and ``models/gemma4/modeling_gemma4.py``) transcribed
in NumPy one float32 step at a time (``f32_step``: the same bits on every CPU); transformers' own
class is the judge in tests/conformance/test_hf_config_vs_transformers.py."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pecli.hfconfig import recipe_from_config
from pecli.identification import identify
from pecli.kinds.rope import Rope
from pecli.table import Table
from tests.helpers import f32_step


def gemma4_cos_sin(positions: np.ndarray, head_dim: int, share: float, base: float) -> tuple[np.ndarray, np.ndarray]:
    """HF: ``rope_angles = int(share * head_dim // 2)``; ``1.0 / (base ** (arange(0, 2·rope_angles, 2).float()
    / head_dim))``; ``torch.zeros`` for the other ``head_dim // 2 − rope_angles``; ``inv_freq /= 1.0``;
    then ``cat((freqs, freqs))`` of ``positions.float() · inv_freq`` and its cos and sin."""
    angles = int(share * head_dim // 2)
    exponent = f32_step(np.divide, np.arange(0, 2 * angles, 2, dtype=np.float32), np.float32(head_dim))
    rotated = f32_step(np.divide, 1.0, f32_step(np.power, np.float32(base), exponent))
    inv = np.concatenate([rotated, np.zeros(head_dim // 2 - angles, dtype=np.float32)])
    freqs = f32_step(np.multiply, positions.astype(np.float32)[:, None], inv[None, :])
    emb = np.concatenate([freqs, freqs], axis=1)
    return f32_step(np.cos, emb), f32_step(np.sin, emb)


@pytest.mark.parametrize(("head_dim", "share", "base"), [(512, 0.25, 1e6), (64, 0.5, 10000.0), (16, 0.3, 10000.0)])
def test_the_cache_is_gemma_4_s_bit_for_bit(head_dim: int, share: float, base: float) -> None:
    cos, sin = gemma4_cos_sin(np.arange(300), head_dim, share, base)
    for part, theirs in (("cos", cos), ("sin", sin)):
        ours = Rope(300, head_dim, base=base, part=part, scaling="proportional", partial_rotary_factor=share).build()  # type: ignore[arg-type]
        assert ours.shape == (300, head_dim) and np.array_equal(ours, theirs), part
    # The unrotated pairs never turn: cos 1 and sin 0 on every row, in both halves.
    turning = int(share * head_dim // 2)
    assert np.all(cos[:, turning : head_dim // 2] == 1) and np.all(sin[:, head_dim // 2 + turning :] == 0)


@pytest.mark.parametrize(("part", "share"), [("cos", 0.25), ("sin", 0.5)])
def test_identify_reads_the_share_and_the_base_back(part: str, share: float) -> None:
    cos, sin = gemma4_cos_sin(np.arange(300), 128, share, 1e6)
    result = identify(Table(cos if part == "cos" else sin, None, "table.npy"))
    assert result.verdict == "match" and result.best is not None, result.notes
    recipe = result.best.recipe
    assert (recipe.scaling, recipe.partial_rotary_factor, recipe.base, recipe.part) == (  # type: ignore[attr-defined]
        "proportional",
        share,
        1e6,
        part,
    )
    assert result.best.max_abs == 0


def test_diff_names_the_share_that_turns_and_the_scaling_dropped(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    cos, _ = gemma4_cos_sin(np.arange(256), 128, 0.25, 1e6)
    np.save(tmp_path / "gemma4.npy", cos)
    other = "rope:len=256,dim=128,base=1000000,scaling=proportional,partial_rotary_factor=0.5"
    r = run("diff", tmp_path / "gemma4.npy", other)
    assert r.exit_code == 1 and (
        "likely cause: rotary on 16 of 64 frequencies (A) vs 32 (B), the others zero: partial_rotary_factor 0.25 in A"
        in r.stdout
    ), r.output
    # A port that reads rope_type proportional as the default RoPE of the whole head:
    r = run("diff", tmp_path / "gemma4.npy", "rope:len=256,dim=128,base=1000000")
    assert (
        r.exit_code == 1
        and "likely cause: scaling proportional (partial-rotary-factor 0.25) in A, missing in B" in (r.stdout)
    ), r.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--scaling", "proportional", "--partial-rotary-factor", "1.5"], "partial_rotary_factor must be in (0, 1]"),
        (["--partial-rotary-factor", "0.25"], "scaling=default does not use --partial-rotary-factor"),
    ],
)
def test_bad_shares_are_one_line(run, tmp_path: Path, args: list[str], message: str) -> None:  # type: ignore[no-untyped-def]
    r = run("generate", "--kind", "rope", "--len", "8", "--dim", "16", *args, "-o", tmp_path / "x.npy")
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and message in r.stderr, r.output
    assert not (tmp_path / "x.npy").exists()


def test_a_gemma_4_config_gives_each_layer_type_its_cache(tmp_path: Path) -> None:
    # google/gemma-4's text config shape (sizes shrunk): full-attention layers use global_head_dim
    # and proportional RoPE, sliding ones the default RoPE of head_dim.
    config = {
        "model_type": "gemma4_text",
        "hidden_size": 256,
        "num_attention_heads": 2,
        "head_dim": 64,
        "global_head_dim": 128,
        "max_position_embeddings": 1024,
        "num_hidden_layers": 6,
        "layer_types": ["sliding_attention"] * 5 + ["full_attention"],
        "rope_parameters": {
            "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 1.0},
            "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25, "rope_theta": 1000000.0},
        },
    }
    (tmp_path / "config.json").write_text(json.dumps(config))
    full = recipe_from_config(f"{tmp_path}/config.json:full_attention")
    cos, _ = gemma4_cos_sin(np.arange(1024), 128, 0.25, 1e6)
    assert np.array_equal(full.build(), cos)
    sliding = recipe_from_config(f"{tmp_path}/config.json:sliding_attention")
    assert (sliding.dim, sliding.scaling, sliding.base) == (64, "default", 10000.0)  # type: ignore[attr-defined]
    # transformers' per_layer_config (as it saves the config) says the same by layer index.
    saved = {**config, "per_layer_config": {"5": {"head_dim": 128}}}
    del saved["global_head_dim"]
    (tmp_path / "config.json").write_text(json.dumps(saved))
    assert recipe_from_config(f"{tmp_path}/config.json:full_attention") == full
