"""rope2d's merge windows (``--merge M``): rows in ``M×M`` windows, as transformers'
``vision_utils.get_vision_position_ids(grid_thw, spatial_merge_size)`` orders the vision RoPE of
Qwen2-VL, Qwen2.5-VL (before its window reorder), Qwen3-VL, GLM-4V and PaddleOCR-VL.

Truth: the ids written here in NumPy from that function's reshape (``(H/M, M, W/M, M)``,
``transpose(1, 2)``, flattened), the language bands ``θ^(−k/q)`` in float64; the tables a user
holds are those formulas rounded once to float32.  transformers' own modules are in
tests/conformance/test_rope2d_vs_qwen_vision.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from pecli.diff import compare
from pecli.errors import RecipeError
from pecli.identification import identify
from pecli.kinds.rope2d import Rope2d
from pecli.table import Table


def merged_ids(h: int, w: int, m: int) -> np.ndarray:
    """``(cells, 2)`` (h, w) ids in ``m×m`` windows: get_vision_position_ids' reshape in NumPy."""
    hh, ww = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    shape = (h // m, m, w // m, m)
    return np.stack([x.reshape(shape).transpose(0, 2, 1, 3).reshape(-1) for x in (hh, ww)], axis=1)


def qwen_vision(h: int, w: int, head_dim: int, theta: float, m: int, part: str) -> np.ndarray:
    """Qwen3-VL's vision cos or sin in float64: ``[h·ω | w·ω]`` twice, ``ω_k = θ^(−k/q)``."""
    q = head_dim // 4
    omega = theta ** (-np.arange(q) / q)
    ids = merged_ids(h, w, m).astype(np.float64)
    angle = np.concatenate([ids[:, :1] * omega, ids[:, 1:] * omega], axis=1)
    angle = np.concatenate([angle, angle], axis=1)
    return np.cos(angle) if part == "cos" else np.sin(angle)


@pytest.mark.parametrize(
    ("h", "w", "head_dim", "theta", "m"),
    [(6, 8, 64, 10000.0, 2), (4, 12, 32, 1e6, 2), (8, 8, 16, 10000.0, 4), (2, 10, 16, 100.0, 2), (9, 6, 16, 1e4, 3)],
)
def test_merge_windows_are_the_closed_form(h: int, w: int, head_dim: int, theta: float, m: int) -> None:
    for part in ("cos", "sin"):
        recipe = Rope2d(f"{h}x{w}", head_dim, "lang", theta, part=part, compute="exact", dtype="float64", layout="half", merge=m)  # type: ignore[arg-type]  # fmt: skip
        truth = qwen_vision(h, w, head_dim, theta, m, part)
        assert np.max(np.abs(recipe.build() - truth)) < 1e-13
        # any row range (a window cut in two; the last row alone) is the whole table's rows
        for r0, r1 in ((0, 1), (3, 11), (m * w - 1, h * w)):
            assert np.array_equal(recipe.rows(r0, r1), recipe.build()[r0:r1])


def test_merge_windows_with_a_class_row_and_pairs() -> None:
    recipe = Rope2d("4x4", 16, "lang", part="sin", compute="exact", dtype="float64", cls_row="first", merge=2)
    q = 4
    ids = merged_ids(4, 4, 2)
    angle = np.concatenate([ids[:, :1] * 1e4 ** (-np.arange(q) / q), ids[:, 1:] * 1e4 ** (-np.arange(q) / q)], axis=1)
    truth = np.vstack([np.zeros((1, 16)), np.sin(np.repeat(angle, 2, axis=1))])
    assert np.max(np.abs(recipe.build() - truth)) < 1e-13


@pytest.mark.parametrize(
    ("h", "w", "head_dim", "theta", "m", "part"),
    [
        (6, 8, 64, 10000.0, 2, "cos"),
        (16, 16, 80, 10000.0, 2, "sin"),
        (8, 8, 64, 1e6, 4, "cos"),
        (2, 10, 32, 1e4, 2, "cos"),
    ],
)
def test_identify_reads_the_windows_from_a_users_table(
    h: int, w: int, head_dim: int, theta: float, m: int, part: str
) -> None:
    table = qwen_vision(h, w, head_dim, theta, m, part).astype(np.float32)  # the float64 formula rounded once
    found = identify(table)
    assert found.verdict == "match" and found.best is not None, found.summary
    recipe: Any = found.best.recipe
    assert (recipe.feat_shape, recipe.dim, recipe.base, recipe.merge, recipe.layout) == (
        f"{h}x{w}", head_dim, theta, m, "half")  # fmt: skip


def test_a_row_major_table_is_not_called_merged() -> None:
    recipe = Rope2d("6x8", 32, "lang", part="cos", layout="half")
    found = identify(recipe.build())
    assert found.verdict == "match" and found.best is not None and found.best.recipe.merge == 1  # type: ignore[attr-defined]


def test_diff_names_the_row_order() -> None:
    a = Table.from_array(qwen_vision(6, 8, 64, 10000.0, 2, "cos").astype(np.float32), "qwen vision cos")
    b = Table.from_recipe(Rope2d("6x8", 64, "lang", part="cos", layout="half"))
    details = [e.detail for e in compare(a, b).explanations]
    assert any(d.startswith("row order 2×2 merge windows (A) vs row-major (B)") for d in details), details


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"feat_shape": "6x7", "merge": 2}, r"feat_shape 6x7 does not split into 2×2 merge windows: .*or merge=1"),
        ({"feat_shape": "6x8", "merge": 0}, r"merge must be at least 1, got 0"),
        ({"feat_shape": "4x6x8", "merge": 4}, r"feat_shape 4x6x8 does not split into 4×4 merge windows"),
    ],
)
def test_grids_the_windows_do_not_tile_are_refused(params: dict[str, Any], message: str) -> None:
    with pytest.raises(RecipeError, match=message):
        Rope2d(dim=16, bands="lang", **params)


def test_generate_merge_from_the_command_line(run) -> None:
    result = run(
        "generate", "--kind", "rope2d", "--feat-shape", "6x7", "--dim", "16", "--bands", "lang", "--merge", "2"
    )
    assert result.exit_code == 2 and "does not split into 2×2 merge windows" in result.output
    assert "Traceback" not in result.output
    ok = run("generate", "--kind", "rope2d", "--feat-shape", "4x4", "--dim", "16", "--bands", "lang", "--merge", "2")
    assert ok.exit_code == 0 and "merge=2" in ok.output, ok.output
