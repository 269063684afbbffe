"""The sincos2d kind against vit-pytorch 1.26.11's own ``posemb_sincos_2d`` (``simple_vit.py``, the
simple ViT's fixed table) and ``posemb_sincos_3d`` (``simple_vit_3d.py``): tensor2tensor's frequency
rule ``omega = arange(q) / (q − 1)`` (``--freq t2t``) in MAE's column order, on 2-D grids and on
``FxHxW`` grids of ``dim // 6`` frequencies an axis, zero-padded to ``dim``.

pecli's float32 pipeline within the float32 bound ``4·2⁻²⁴·max(1, c)`` at the largest coordinate
``c`` (torch's float32 ``pow``, ``sin`` and ``cos`` are within an ulp or two of the correctly rounded
ones pecli takes, and an ulp of ``ω`` moves the angle ``c·ω`` by ``c`` of them); ``identify`` names the grid,
the order and the rule of every table, and proves the recipe on the whole table.  ``-s`` prints max |Δ|.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import references as ref

from pecli.identification import identify
from pecli.kinds.sincos2d import Sincos2d
from pecli.table import Table

pytestmark = ref.marks("vit_pytorch", "einops", "torch")

#: (name, wrapper, its arguments, pecli's recipe)
CASES: list[tuple[str, Any, tuple[int, ...], dict[str, Any]]] = [
    ("2d-14x14-256", ref.vit_pytorch_posemb_2d, (14, 14, 256), {"grid": "14x14", "dim": 256}),
    ("2d-8x16-64", ref.vit_pytorch_posemb_2d, (8, 16, 64), {"grid": "8x16", "dim": 64}),
    ("2d-16x16-1024", ref.vit_pytorch_posemb_2d, (16, 16, 1024), {"grid": "16x16", "dim": 1024}),
    ("3d-4x8x8-200", ref.vit_pytorch_posemb_3d, (4, 8, 8, 200), {"grid": "4x8x8", "dim": 200}),
    ("3d-8x7x7-768", ref.vit_pytorch_posemb_3d, (8, 7, 7, 768), {"grid": "8x7x7", "dim": 768}),
    ("3d-2x4x6-36", ref.vit_pytorch_posemb_3d, (2, 4, 6, 36), {"grid": "2x4x6", "dim": 36}),
]
IDS = [name for name, _, _, _ in CASES]


def _bound(grid: str) -> float:
    """The float32 pipeline's bound at the grid's largest coordinate."""
    return 4 * 2.0**-24 * max(1, max(int(s) for s in grid.split("x")) - 1)


@pytest.fixture(scope="module")
def tables() -> dict[str, np.ndarray]:
    return {name: fn(*args)["table"] for name, fn, args, _ in CASES}


@pytest.mark.parametrize("index", range(len(CASES)), ids=IDS)
def test_the_table_is_vit_pytorchs(tables: dict[str, np.ndarray], index: int) -> None:
    name, _, _, recipe = CASES[index]
    theirs = tables[name]
    ours = Sincos2d(**recipe, freq="t2t", compute="float32").build()
    assert ours.shape == theirs.shape and theirs.dtype == np.float32
    delta = float(np.max(np.abs(ours.astype(np.float64) - theirs)))
    print(f"\n{name}: max |Δ| {delta:.3g}, {np.mean(ours == theirs):.4%} identical")
    assert delta <= _bound(recipe["grid"]), delta
    if recipe["grid"].count("x") == 2:  # the columns past six blocks of dim // 6 are zero in both
        assert not theirs[:, 6 * (recipe["dim"] // 6) :].any()


@pytest.mark.parametrize("index", range(len(CASES)), ids=IDS)
def test_identify_names_the_grid_and_the_rule(tables: dict[str, np.ndarray], index: int) -> None:
    name, _, _, recipe = CASES[index]
    found = identify(Table(tables[name], None, "vit-pytorch"))
    print(f"\n{name}: {found.verdict}: {found.summary}")
    assert found.verdict == "match" and found.best is not None, found.summary
    best = found.best.recipe
    assert isinstance(best, Sincos2d)
    assert (best.grid, best.dim, best.base, best.order, best.freq) == (
        recipe["grid"],
        recipe["dim"],
        10000.0,
        "mae",
        "t2t",
    )
    assert float(np.max(np.abs(best.build().astype(np.float64) - tables[name]))) <= _bound(recipe["grid"])
