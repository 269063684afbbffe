"""rope2d's merge windows and interleaved axes against transformers 5.23's own vision rotary
embeddings: ``Qwen3VLVisionRotaryEmbedding`` (``models/qwen3_vl/modeling_qwen3_vl.py``; Qwen2-VL,
Qwen2.5-VL before its window reorder, GLM-4V and PaddleOCR-VL order their rows the same) and
``Kimi_K25VisionRotaryEmbedding`` (``models/kimi_k25/modeling_kimi_k25.py``, MoonViT's 2-D RoPE).

Both take ``1/θ^(arange(0, head_dim/2, 2)/(head_dim/2))`` (``head_dim/4`` frequencies per axis) on
the ``(h, w)`` ids of ``vision_utils.get_vision_position_ids(grid_thw, spatial_merge_size)``: rows
in ``m×m`` merge windows (Qwen3-VL's ``spatial_merge_size`` 2; Kimi's 1).  Qwen3-VL's columns are
``[h | w]`` twice (``--layout half``); Kimi's ``[w0, h0, w1, h1, …]`` twice (``--axis-columns
interleaved --grid-indexing xy --layout half``).

Truth: the modules' ``forward``, cos and sin within the float32 bound of the modern-encodings issue
(4·2⁻²⁴·max(1, p)); ``identify`` names the recipe from a table the module wrote, and ``diff`` names
the merge order against a row-major recipe.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import references as ref

from pecli.diff import compare
from pecli.kinds.rope2d import Rope2d
from pecli.table import Table
from tests.helpers import identified_and_checked

pytestmark = ref.marks("torch", "transformers")

#: (H, W, head_dim, rope_theta, spatial_merge_size)
QWEN = [(6, 8, 64, 10000.0, 2), (16, 16, 80, 10000.0, 2), (4, 12, 64, 1e6, 2), (8, 8, 64, 10000.0, 4)]
#: (H, W, head_dim, rope_theta)
KIMI = [(6, 8, 64, 10000.0), (27, 14, 72, 10000.0), (32, 32, 128, 1e6)]


def _theirs(model: str, h: int, w: int, head_dim: int, theta: float, merge: int) -> dict[str, np.ndarray]:
    import torch
    from transformers.models.kimi_k25.modeling_kimi_k25 import Kimi_K25VisionRotaryEmbedding
    from transformers.models.qwen3_vl.modeling_qwen3_vl import Qwen3VLVisionRotaryEmbedding
    from transformers.vision_utils import get_vision_position_ids

    module = {"qwen3-vl": Qwen3VLVisionRotaryEmbedding, "kimi": Kimi_K25VisionRotaryEmbedding}[model]
    config = SimpleNamespace(rope_parameters={"rope_type": "axial", "rope_theta": theta}, head_dim=head_dim)
    ids = get_vision_position_ids(torch.tensor([[1, h, w]]), spatial_merge_size=merge)
    cos, sin = module(config)(torch.zeros(1), ids)
    return {"cos": cos.numpy().copy(), "sin": sin.numpy().copy()}


def _ours(model: str, h: int, w: int, head_dim: int, theta: float, merge: int, part: str) -> Rope2d:
    if model == "kimi":
        extra: dict[str, Any] = {"axis_columns": "interleaved", "grid_indexing": "xy"}
    else:
        extra = {"merge": merge}
    return Rope2d(f"{h}x{w}", head_dim, "lang", theta, part=part, layout="half", **extra)  # type: ignore[arg-type]


CASES = [("qwen3-vl", *c) for c in QWEN] + [("kimi", *c, 1) for c in KIMI]


@pytest.mark.parametrize(("model", "h", "w", "head_dim", "theta", "merge"), CASES)
def test_the_vision_caches_are_transformers(
    model: str, h: int, w: int, head_dim: int, theta: float, merge: int
) -> None:
    theirs = _theirs(model, h, w, head_dim, theta, merge)
    bound = 4 * 2.0**-24 * max(1, h - 1, w - 1)
    for part in ("cos", "sin"):
        ours = _ours(model, h, w, head_dim, theta, merge, part).build()
        assert ours.shape == theirs[part].shape and ours.dtype == theirs[part].dtype
        delta = np.abs(ours.astype(np.float64) - theirs[part])
        print(f"\n{model} {h}x{w} head_dim {head_dim} θ {theta:g} merge {merge} {part}: max|Δ| {delta.max():.3g}, "
              f"{np.mean(delta == 0):.2%} identical")  # fmt: skip
        assert delta.max() <= bound


@pytest.mark.parametrize(("model", "h", "w", "head_dim", "theta", "merge"), CASES)
def test_identify_names_a_vision_cache(
    tmp_path: Path, model: str, h: int, w: int, head_dim: int, theta: float, merge: int
) -> None:
    path = tmp_path / "cos.npy"
    np.save(path, _theirs(model, h, w, head_dim, theta, merge)["cos"])
    doc: Any = identified_and_checked(path, "rope2d")
    recipe = doc["best"]["recipe"]
    assert (recipe["feat_shape"], recipe["dim"], recipe["base"]) == (f"{h}x{w}", head_dim, theta)
    assert recipe.get("merge", 1) == merge and recipe["layout"] == "half"
    assert recipe.get("axis_columns", "blocks") == ("interleaved" if model == "kimi" else "blocks")


def test_diff_names_the_merge_windows() -> None:
    a = Table.from_array(_theirs("qwen3-vl", 6, 8, 64, 10000.0, 2)["cos"], "Qwen3-VL vision cos")
    b = Table.from_recipe(_ours("qwen3-vl", 6, 8, 64, 10000.0, 1, "cos"))
    details = [e.detail for e in compare(a, b).explanations]
    assert any("row order 2×2 merge windows (A) vs row-major (B)" in d for d in details), details
