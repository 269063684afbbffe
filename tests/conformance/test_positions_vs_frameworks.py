"""Explicit positions against the frameworks that look rows up by position ids.

transformers' ``M2M100SinusoidalPositionalEmbedding.forward(input_ids)`` and RoBERTa's
``create_position_ids_from_input_ids`` number a padded batch the fairseq way; ``pecli generate
--token-ids`` must pick the same rows.  ``LlamaRotaryEmbedding.forward(x, position_ids)`` takes any
position ids (packed sequences restart at 0); ``--positions`` must give its cos/sin.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import references as ref

from pecli.positions import fairseq_positions
from pecli.presets import get_preset
from pecli.table import Table

pytestmark = [
    pytest.mark.conformance,
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("transformers") is None, reason="transformers is not installed"),
]

#: A padded batch (padding id 1), as a tokenizer pads on the right and on the left.
BATCH = np.array(
    [
        [0, 17, 23, 99, 5, 2, 1, 1, 1],
        [1, 1, 1, 0, 42, 42, 8, 9, 2],
        [0, 3, 4, 5, 6, 7, 8, 9, 2],
    ]
)


def test_token_ids_pick_the_rows_m2m100_forward_returns() -> None:
    torch = pytest.importorskip("torch")
    from transformers.models.m2m_100.modeling_m2m_100 import M2M100SinusoidalPositionalEmbedding

    dim, length = 32, 16
    with torch.no_grad():
        module = M2M100SinusoidalPositionalEmbedding(length, dim, padding_idx=1)
        theirs = module(torch.from_numpy(BATCH)).numpy().reshape(-1, dim)
        their_ids = module.create_position_ids_from_input_ids(torch.from_numpy(BATCH), 1).numpy()
    assert np.array_equal(fairseq_positions(BATCH, 1), their_ids)
    recipe = get_preset("hf-m2m100").recipe(length=length, dim=dim)
    ours = Table.from_recipe(recipe).gather(fairseq_positions(BATCH, recipe.padding_idx).reshape(-1))
    rows = ours.rows(0, ours.shape[0])
    p_max = int(their_ids.max())
    assert np.max(np.abs(rows.astype(np.float64) - theirs)) <= 4 * 2.0**-24 * max(1, p_max)
    assert np.all(rows[BATCH.reshape(-1) == 1] == 0)  # padding tokens: the zero row


def test_positions_of_packed_sequences_are_what_llama_rope_returns() -> None:
    # Two sequences packed in one row, positions restarting at 0 (FlashAttention varlen packing).
    ids = np.r_[np.arange(300), np.arange(200), np.arange(4000, 4100)]
    hf = ref.hf_llama_rope({"rope_type": "default", "rope_theta": 10000.0}, ids, head_dim=128)
    for part in ("cos", "sin"):
        recipe = get_preset("llama").recipe(length=4100, part=part)
        rows = Table.from_recipe(recipe).gather(ids)
        ours = rows.rows(0, rows.shape[0])
        assert np.max(np.abs(ours.astype(np.float64) - hf[part])) <= 4 * 2.0**-24 * 4100
        # and bit for bit the rows of the contiguous table
        whole = recipe.build()
        assert np.array_equal(ours, whole[ids])


#: SD3's and Flux's timesteps are σ·1000, fractional; a few, with whole ones between.
FRACTIONAL = [0.0, 0.5, 1.25, 12.0, 333.3333, 500.001, 998.75, 999.5]


@pytest.mark.parametrize(
    ("preset", "flip", "shift", "dim"),
    [
        ("diffusers-timesteps", False, 1, 128),
        ("sd-unet-timesteps", True, 0, 320),
        ("sd3-timesteps", True, 0, 256),
        ("diffusers-dit-timesteps", True, 1, 255),
    ],
)
def test_fractional_timesteps_are_diffusers_get_timestep_embedding(
    preset: str, flip: bool, shift: int, dim: int
) -> None:
    # --positions with real numbers: the preset's float32 pipeline at t = 0.5, 999.5, …, as
    # diffusers computes it for a float32 timesteps tensor (timesteps[:, None].float() * freqs).
    pytest.importorskip("diffusers")
    from pecli.positions import rows_at_positions

    theirs = ref.diffusers_timestep_embedding(FRACTIONAL, dim, flip_sin_to_cos=flip, downscale_freq_shift=shift)[
        "table"
    ]
    table = rows_at_positions(Table.from_recipe(get_preset(preset).recipe(length=1000, dim=dim)), np.array(FRACTIONAL))
    ours = table.rows(0, len(FRACTIONAL))
    assert ours.shape == theirs.shape and table.recipe is None
    bound = 4 * 2.0**-24 * np.maximum(1.0, np.array(FRACTIONAL))[:, None]
    assert np.all(np.abs(ours.astype(np.float64) - theirs) <= bound)
    print(f"\n{preset} at fractional t: max|Δ| {np.abs(ours.astype(np.float64) - theirs).max():.3g}, "
          f"{np.mean(ours == theirs):.2%} bit-identical")  # fmt: skip
