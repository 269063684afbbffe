"""rope2d's alternate bands against transformers 5.23's own ``PixtralVisionRotaryEmbedding``
(``models/pixtral/modeling_pixtral.py``): height takes the even frequencies of
``1/θ^(arange(0, head_dim, 2)/head_dim)``, width the odd ones, ``[h | w]`` twice.

Truth: the module's ``forward`` on the ``(h, w)`` ids ``PixtralVisionModel`` makes for a grid of
patches (``meshgrid(arange(H), arange(W), indexing='ij')``), cos and sin within the float32 bound
of the modern-encodings issue (4·2⁻²⁴·max(1, p)); ``identify`` names the recipe (and the preset
``pixtral`` at its own grid) from a table the module wrote.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import references as ref

from pecli.kinds.rope2d import Rope2d
from pecli.presets import get_preset
from tests.helpers import identified_and_checked

pytestmark = ref.marks("torch", "transformers")

#: (H, W, head_dim, rope_theta)
CASES = [(16, 16, 64, 10000.0), (24, 32, 64, 10000.0), (8, 12, 128, 1000000.0), (5, 7, 32, 10000.0), (64, 64, 64, 1e4)]


def _theirs(h: int, w: int, head_dim: int, theta: float) -> dict[str, np.ndarray]:
    import torch
    from transformers import PixtralVisionConfig
    from transformers.models.pixtral.modeling_pixtral import PixtralVisionRotaryEmbedding

    config = PixtralVisionConfig(head_dim=head_dim, hidden_size=16 * head_dim, num_attention_heads=16, rope_theta=theta)
    module = PixtralVisionRotaryEmbedding(config)
    ids = torch.stack(torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij"), dim=-1).reshape(-1, 2)
    cos, sin = module(torch.zeros(1), ids)
    return {"cos": cos.numpy().copy(), "sin": sin.numpy().copy()}


def _ours(h: int, w: int, head_dim: int, theta: float, part: str) -> Rope2d:
    return Rope2d(f"{h}x{w}", head_dim, "lang", theta, part=part, layout="half", axis_bands="alternate")  # type: ignore[arg-type]


@pytest.mark.parametrize(("h", "w", "head_dim", "theta"), CASES)
def test_alternate_bands_are_pixtrals(h: int, w: int, head_dim: int, theta: float) -> None:
    theirs = _theirs(h, w, head_dim, theta)
    bound = 4 * 2.0**-24 * max(1, h - 1, w - 1)
    for part in ("cos", "sin"):
        ours = _ours(h, w, head_dim, theta, part).build()
        assert ours.shape == theirs[part].shape and ours.dtype == theirs[part].dtype
        delta = np.abs(ours.astype(np.float64) - theirs[part])
        print(f"\npixtral {h}x{w} head_dim {head_dim} θ {theta:g} {part}: max|Δ| {delta.max():.3g}, "
              f"{np.mean(delta == 0):.2%} identical")  # fmt: skip
        assert delta.max() <= bound


def test_the_pixtral_preset_is_the_default_config() -> None:
    theirs = _theirs(64, 64, 64, 10000.0)["cos"]
    ours = get_preset("pixtral").recipe().build()
    assert ours.shape == theirs.shape
    assert np.abs(ours.astype(np.float64) - theirs).max() <= 4 * 2.0**-24 * 63


@pytest.mark.parametrize(("h", "w", "head_dim", "theta"), CASES)
def test_identify_names_a_table_pixtral_wrote(tmp_path: Path, h: int, w: int, head_dim: int, theta: float) -> None:
    path = tmp_path / "cos.npy"
    np.save(path, _theirs(h, w, head_dim, theta)["cos"])
    doc: Any = identified_and_checked(path, "rope2d")
    recipe = doc["best"]["recipe"]
    assert (recipe["feat_shape"], recipe["dim"], recipe["base"]) == (f"{h}x{w}", head_dim, theta)
    assert (recipe["axis_bands"], recipe["layout"]) == ("alternate", "half")
    if (h, w, head_dim, theta) == (64, 64, 64, 1e4):
        assert "pixtral" in doc["names"], doc["names"]
