"""sincos2d's DETR coordinates (``--order tatp --coords count|detr|deformable``) against
transformers 5.23's own ``*SinePositionEmbedding`` modules: DETR's
(``models/detr/modeling_detr.py::DetrSinePositionEmbedding``) and the eight that copy it
(Conditional DETR, MaskFormer, Mask2Former, OneFormer, SAM 2, EdgeTAM, SAM 3), and Deformable DETR's
(``(y − 0.5)/(H + eps)·scale``).

Each returns a channels-first map ``(1, 2·num_position_features, H, W)``: ``[y | x]`` channels,
each axis's ``sin, cos`` of ``c / T^(2⌊i/2⌋/npf)`` interleaved, cells counted from 1 (the mask's
``cumsum``), normalised to ``2π`` with ``normalize=True``.  pecli's table is that map's
``flatten(1).T``: a row per cell, h-major.  Truth: the modules' ``forward`` in float32, within
2⁻²⁴ (torch's float32 sin/cos, the steps before rounded as pecli's float32 pipeline rounds them);
``identify`` names grid, coordinates and base from a map the module wrote; ``diff`` names the
coordinates against a recipe with others.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import references as ref

from pecli.diff import compare
from pecli.kinds.sincos2d import Sincos2d
from pecli.table import Table
from tests.helpers import identified_and_checked

pytestmark = ref.marks("torch", "transformers")

#: transformers module → its class's prefix; Deformable DETR's coordinates are its own.
MODULES = {
    "detr": "Detr",
    "conditional_detr": "ConditionalDetr",
    "deformable_detr": "DeformableDetr",
    "maskformer": "MaskFormer",
    "mask2former": "Mask2Former",
    "oneformer": "OneFormer",
    "sam2": "Sam2",
    "edgetam": "EdgeTam",
    "sam3": "Sam3",
}
#: (H, W, num_position_features)
GRIDS = [(25, 34, 128), (7, 5, 64), (64, 64, 128), (2, 3, 4)]


def _theirs(module: str, h: int, w: int, npf: int, normalize: bool) -> np.ndarray:
    import torch

    found = importlib.import_module(f"transformers.models.{module}.modeling_{module}")
    cls = getattr(found, f"{MODULES[module]}SinePositionEmbedding")
    pos = cls(npf, normalize=normalize)(torch.Size([1, 3, h, w]), "cpu", torch.float32)
    return np.ascontiguousarray(pos[0].flatten(1).T.numpy())


def _coords(module: str, normalize: bool) -> str:
    return "count" if not normalize else "deformable" if module == "deformable_detr" else "detr"


CASES = [(m, *g, norm) for m in MODULES for g in GRIDS[:2] for norm in (True, False)] + [
    ("detr", *g, True) for g in GRIDS[2:]
]


@pytest.mark.parametrize(("module", "h", "w", "npf", "normalize"), CASES)
def test_the_sine_maps_are_transformers(module: str, h: int, w: int, npf: int, normalize: bool) -> None:
    theirs = _theirs(module, h, w, npf, normalize)
    ours = Sincos2d(f"{h}x{w}", 2 * npf, order="tatp", coords=_coords(module, normalize), compute="float32").build()  # type: ignore[arg-type]
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    delta = np.abs(ours.astype(np.float64) - theirs)
    print(f"\n{module} {h}x{w} npf {npf} normalize {normalize}: max|Δ| {delta.max():.3g}, "
          f"{np.mean(delta == 0):.2%} identical")  # fmt: skip
    assert delta.max() <= 2.0**-24


@pytest.mark.parametrize(("module", "h", "w", "npf", "normalize"), CASES)
def test_identify_names_a_map_transformers_wrote(
    tmp_path: Path, module: str, h: int, w: int, npf: int, normalize: bool
) -> None:
    path = tmp_path / "pos.npy"
    np.save(path, _theirs(module, h, w, npf, normalize))
    doc: Any = identified_and_checked(path, "sincos2d")
    recipe = doc["best"]["recipe"]
    assert (recipe["grid"], recipe["dim"], recipe["base"], recipe["order"]) == (f"{h}x{w}", 2 * npf, 10000.0, "tatp")
    assert recipe["coords"] == _coords(module, normalize)


@pytest.mark.parametrize(
    ("module", "b_coords", "said"),
    [
        ("detr", "index", "coords detr (c + 1)/(m + 1e-6)·2π (A) vs index c (B)"),
        ("deformable_detr", "detr", "coords deformable (c + 0.5)/(m + 1e-6)·2π (A) vs detr (c + 1)/(m + 1e-6)·2π (B)"),
    ],
)
def test_diff_names_the_coordinates(module: str, b_coords: str, said: str) -> None:
    a = Table.from_array(_theirs(module, 25, 34, 128, True), f"{module} map")
    b = Table.from_recipe(Sincos2d("25x34", 256, order="tatp", coords=b_coords))  # type: ignore[arg-type]
    details = [e.detail for e in compare(a, b).explanations]
    assert any(d.startswith(said) for d in details), details
