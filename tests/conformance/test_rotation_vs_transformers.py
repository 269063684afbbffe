"""``pecli.rotation`` against transformers 5.23's own rotations (issue 42, item 3): GPT-NeoX's
``apply_rotary_pos_emb`` (rotate_half on the first ``rotary_ndims`` dims, the rest passed: partial
rotary) with its ``GPTNeoXRotaryEmbedding`` cache, and GPT-J's ``apply_rotary_pos_emb``
(``rotate_every_two``: pairs) with its ``create_sinusoidal_positions`` table.  Expected: the pairing,
the rotated width and the base read back, and the cache proved by rotating."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from pecli.rotation import rotation_of

pytestmark = [
    pytest.mark.conformance,
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("transformers") is None, reason="transformers is not installed"),
]

N, HEADS, D = 48, 4, 64


@pytest.mark.parametrize(("partial", "theta"), [(0.25, 10000.0), (1.0, 500000.0)])
def test_gpt_neox_partial_rotary(partial: float, theta: float) -> None:
    torch = pytest.importorskip("torch")
    from transformers import GPTNeoXConfig
    from transformers.models.gpt_neox.modeling_gpt_neox import GPTNeoXRotaryEmbedding, apply_rotary_pos_emb

    rope = {"rope_type": "default", "rope_theta": theta, "partial_rotary_factor": partial}  # 5.x's keys
    config = GPTNeoXConfig(
        hidden_size=D * HEADS, num_attention_heads=HEADS, rope_parameters=rope, max_position_embeddings=N
    )
    assert config.rope_parameters["rope_theta"] == theta
    q = torch.randn(1, HEADS, N, D, generator=torch.Generator().manual_seed(0))
    cos, sin = GPTNeoXRotaryEmbedding(config)(q, torch.arange(N)[None])
    q_rot, _ = apply_rotary_pos_emb(q, q, cos, sin)
    before, after = (t[0].transpose(0, 1).numpy() for t in (q, q_rot))  # (positions, heads, head_dim)
    found = rotation_of(before, after)
    width = int(D * partial)
    assert (found.width, found.pairing) == (width, "half")
    assert found.recipe is not None and found.recipe.params()["base"] == theta
    assert found.max_abs <= found.tolerance


def test_gptj_pairs() -> None:
    torch = pytest.importorskip("torch")
    from transformers.models.gptj.modeling_gptj import apply_rotary_pos_emb, create_sinusoidal_positions

    rotary = 32
    table = create_sinusoidal_positions(N, rotary)  # (N, rotary): sin half, cos half
    sin, cos = torch.split(table, rotary // 2, dim=-1)
    q = torch.randn(1, N, HEADS, D, generator=torch.Generator().manual_seed(1))
    q_rot = torch.cat([apply_rotary_pos_emb(q[..., :rotary], sin[None], cos[None]), q[..., rotary:]], dim=-1)
    found = rotation_of(q[0].numpy(), q_rot[0].numpy())
    assert (found.width, found.pairing) == (rotary, "pairs")
    assert found.recipe is not None and found.recipe.params()["base"] == 10000.0
    assert found.max_abs <= found.tolerance
    assert np.isfinite(found.angles).all()
