"""The xpos kind against rotary-embedding-torch's own ``RotaryEmbedding(use_xpos=True)``
(0.9.1): ``get_scale`` on the positions ``rotate_queries_and_keys`` gives it (queries), and that
scale to the power −1 (keys).  torch's float32 ``pow`` is not correctly rounded, pecli's is: within
2 float32 ulps of the value."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from pecli.kinds.xpos import Xpos

pytestmark = [
    pytest.mark.conformance,
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("rotary_embedding_torch") is None, reason="rotary-embedding-torch is not installed"
    ),
]

CASES = [(16, 64, 512), (512, 64, 512), (4096, 64, 512), (8191, 128, 512), (1000, 32, 256), (2048, 96, 1024)]


def _theirs(n: int, dim: int, base: int) -> tuple[np.ndarray, np.ndarray]:
    import torch
    from rotary_embedding_torch import RotaryEmbedding

    with torch.no_grad():
        module = RotaryEmbedding(dim, use_xpos=True, xpos_scale_base=base)
        seq = module.get_seq_pos(n, dtype=torch.float32)
        scale = module.get_scale(seq, seq_len=n)
        return scale.numpy().copy(), (scale**-1).numpy().copy()


@pytest.mark.parametrize(("n", "dim", "base"), CASES)
def test_xpos_scales_are_rotary_embedding_torchs(n: int, dim: int, base: int) -> None:
    q, k = _theirs(n, dim, base)
    for part, theirs in (("q", q), ("k", k)):
        ours = Xpos(n, dim, base, part).build()  # type: ignore[arg-type]
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
        ulps = np.abs(ours.view(np.int32).astype(np.int64) - theirs.view(np.int32).astype(np.int64))
        print(
            f"\nxpos {part} {n}x{dim} base {base}: max {int(ulps.max())} ulp, {np.mean(ours == theirs):.4%} identical"
        )
        assert int(ulps.max()) <= 2, (part, int(ulps.max()))
