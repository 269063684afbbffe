"""``--resample`` against timm's own ``resample_abs_pos_embed`` (``timm/layers/pos_embed.py``,
1.0.31): bicubic and bilinear, with and without antialias, up and down, square and not, with 0, 1
and 8 prefix tokens; within 1e-6 (timm interpolates in float32, pecli in float64)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import references as ref

from pecli.resample import resample_table
from pecli.table import Table

pytestmark = [
    pytest.mark.conformance,
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("timm") is None, reason="timm is not installed"),
]

CASES = [
    ((14, 14), (16, 16), 1, "bicubic", True),  # ViT-B/16 224 → 256
    ((14, 14), (24, 24), 1, "bicubic", True),  # 224 → 384
    ((14, 14), (7, 7), 1, "bicubic", True),  # down: the antialias filter widens
    ((24, 24), (37, 19), 1, "bicubic", False),
    ((16, 16), (8, 8), 8, "bilinear", False),  # register tokens
    ((14, 14), (24, 24), 0, "bilinear", True),
    ((12, 20), (30, 7), 1, "bicubic", True),
    ((14, 14), (5, 9), 1, "bilinear", True),
    ((7, 7), (40, 40), 1, "bicubic", False),
    ((32, 32), (32, 32), 1, "bicubic", True),  # same grid: unchanged
    ((37, 37), (16, 16), 5, "bilinear", True),
    ((1, 9), (3, 27), 0, "bicubic", True),
]


@pytest.mark.parametrize(("old", "new", "prefix", "mode", "antialias"), CASES)
def test_resample_matches_timm(old, new, prefix, mode, antialias) -> None:
    rng = np.random.default_rng(old[0] * 1000 + new[1])
    x = (rng.standard_normal((prefix + old[0] * old[1], 96)) * 0.02).astype(np.float32)
    theirs = ref.timm_resample_abs_pos_embed(x, new, old, prefix, mode, antialias)["table"]
    ours = resample_table(Table(x), new, old, prefix, mode, antialias)
    got = ours.rows(0, ours.shape[0])
    diff = float(np.max(np.abs(got.astype(np.float64) - theirs)))
    print(
        f"\n{old} → {new} prefix {prefix} {mode} aa={antialias}: max|Δ| {diff:.3g}, {np.mean(got == theirs):.2%} identical"
    )
    assert got.shape == theirs.shape and got.dtype == theirs.dtype
    assert diff <= 1e-6
    assert np.array_equal(got[:prefix], x[:prefix])  # prefix rows kept as they are
