"""A proof holds value by value (issue 41): "within the rounding of D" means every value within one
ulp of D at that value, and a pipeline's slack grows with each row's position, as its bound does."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import ml_dtypes
import numpy as np

from pecli.dtypes import DTYPES
from pecli.identification import identify
from pecli.kinds.rope import Rope
from pecli.proof import verify_all
from pecli.table import Table
from tests.helpers import f32_step

BF16: Any = ml_dtypes.bfloat16


def bf(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, np.float32).astype(BF16).astype(np.float32)


def rtdetr_bfloat16(width: int, height: int, dim: int, temperature: float = 10000.0) -> np.ndarray:
    """transformers' ``RTDetr…build_2d_sinusoidal_position_embedding(width, height, dim, dtype=torch.bfloat16)``
    written out in NumPy: every op evaluated in float32 and rounded to bfloat16, as torch's CPU
    bfloat16 ops are (grid and omega in bfloat16, ``grid[..., None] @ omega[None]``, sin and cos)."""
    gw, gh = np.meshgrid(bf(np.arange(width)), bf(np.arange(height)), indexing="ij")
    pos_dim = dim // 4
    omega = bf(bf(np.arange(pos_dim)) / np.float32(pos_dim))
    omega = bf(np.float32(1.0) / bf(f32_step(np.power, np.float32(temperature), omega)))
    out_w, out_h = (bf(g.reshape(-1)[:, None] * omega[None]) for g in (gw, gh))
    parts = [bf(f32_step(fn, x)) for x in (out_w, out_h) for fn in (np.sin, np.cos)]
    return np.concatenate(parts, 1).astype(BF16)


def test_a_grid_computed_in_bfloat16_is_no_match_within_one_ulp_at_one() -> None:
    # 48 of its 4096 values are up to 49 bfloat16 ulps (of their own) off the closed form rounded
    # once: max |Δ| 0.0078 is one ulp at 1.0, which a uniform bound took for "the rounding of bfloat16".
    table = rtdetr_bfloat16(8, 8, 64)
    found = identify(Table(table, None, "rtdetr.npy"))
    assert found.verdict != "match", found.summary
    assert "within the rounding of bfloat16" not in found.summary
    if found.verdict == "close":
        assert any("not one pecli emulates" in n for n in found.notes), found.notes
        assert found.best is not None and found.best.verification is not None
        assert found.best.verification.max_ulps is not None and found.best.verification.max_ulps > 40


def test_one_ulp_off_everywhere_is_still_within_the_rounding() -> None:
    exact = Rope(300, 64, compute="exact").build()
    table = np.nextafter(exact, np.float32(2))
    found = identify(Table(table, None, "near.npy"))
    assert found.verdict == "match" and "within the rounding of float32" in found.summary, found.summary


def test_max_ulps_counts_each_values_own_ulp() -> None:
    recipe = Rope(64, 16, compute="exact")
    built = recipe.build()
    table = built.copy()
    small = np.unravel_index(np.argmin(np.abs(built) + (built == 0)), built.shape)  # the smallest nonzero value
    for _ in range(3):
        table[small] = np.nextafter(table[small], np.float32(np.inf))
    (v,) = verify_all(Table(table, None, "t"), [(recipe, 1.0)], None, "float32", 1.0)
    assert v.max_ulps == 3.0
    assert DTYPES["float32"].spacing(np.array([float(built[small])]))[0] == np.spacing(np.abs(built[small]))


def test_a_pipelines_slack_grows_with_the_rows_position() -> None:
    # LongRoPE's attention factor √(1 + ln 4 / ln 4096) = 1.0801234 fitted as 1.0801135 moves every
    # value by 1e-5: within the float32 bound at position 4095 (5e-4), far past it on the first rows.
    short = ";".join(["1.0", "1.1", "1.3", "1.6", "2.0", "2.5", "3.1", "3.8"])
    true = Rope(4096, 16, scaling="longrope", factor=4.0, original_max_position_embeddings=4096,
                short_factor=short, long_factor=short)  # fmt: skip
    wrong = replace(true, attention_factor=1.0801135)
    table = Table(true.build(), None, "longrope.npy")
    right_v, wrong_v = verify_all(table, [(true, 1e-3), (wrong, 1e-3)], None, "float32", 1.0801234)
    assert right_v.max_abs == 0 and right_v.ulps_past_slack == 0
    assert wrong_v.holds and wrong_v.max_abs < 2e-5  # inside the uniform tolerance: the old proof passed it
    assert wrong_v.ulps_past_slack is not None and wrong_v.ulps_past_slack > 1
    found = identify(table)
    assert found.verdict == "match" and found.best is not None, found.summary
    assert abs(found.best.recipe.attention_scaling() - 1.0801234497) < 1e-9, found.summary  # type: ignore[attr-defined]
