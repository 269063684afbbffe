"""The rope2d kind against timm 1.0.31's own 2-D rotary embeddings.

Tables come from ``build_rotary_pos_embed`` (language and pixel bands, ``linear_bands``,
``max_res``, ``ref_feat_shape``; ``references.timm_rotary_pos_embed``) and from the cached table of
``RotaryEmbeddingCat`` as EVA-02 builds it (``references.timm_rotary_embedding_cat``).  Expected
(dialects.md §0): the float32 pipeline within ``4·2⁻²⁴·max(1, p)``, p the largest angle
``|coordinate|·band`` the table holds (float32 angles are off by a few ulps of themselves; the
values, in [−1, 1], are small but their error follows the angle's).  Run with ``-s`` to print
max |Δ| and the share of bit-identical values per table.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import references as ref
from click.testing import CliRunner

from pecli.cli import cli
from pecli.kinds.rope2d import Rope2d
from pecli.presets import get_preset

pytestmark = [
    pytest.mark.conformance,
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("timm") is None, reason="timm is not installed"),
]

#: name, (H, W), dim, bands, max_res, temperature, linear_bands, ref_feat_shape.
CASES: list[tuple[str, tuple[int, int], int, str, int, float, bool, tuple[int, int] | None]] = [
    ("lang-16x16-64", (16, 16), 64, "lang", 224, 10000.0, False, None),
    ("lang-14x20-32", (14, 20), 32, "lang", 224, 10000.0, False, None),
    ("lang-ref-24x24", (24, 24), 64, "lang", 224, 10000.0, False, (16, 16)),
    ("lang-ref-7x11", (7, 11), 96, "lang", 224, 10000.0, False, (16, 16)),
    ("lang-t100-32x32", (32, 32), 128, "lang", 224, 100.0, False, None),
    ("pixel-14x14-64", (14, 14), 64, "pixel", 224, 10000.0, False, None),
    ("pixel-9x5-48", (9, 5), 48, "pixel", 512, 10000.0, False, None),
    ("pixel-linear-14x20", (14, 20), 128, "pixel", 224, 10000.0, True, None),
    ("pixel-linear-ref-31x17", (31, 17), 64, "pixel", 384, 10000.0, True, (16, 16)),
    ("pixel-log-ref-40x40", (40, 40), 32, "pixel", 224, 10000.0, False, (14, 14)),
    ("pixel-1x8-16", (1, 8), 16, "pixel", 224, 10000.0, False, None),
]
#: name, dim, feat_shape, ref_feat_shape (EVA-02's RotaryEmbeddingCat, in_pixels=False).
CAT: list[tuple[str, int, tuple[int, int], tuple[int, int] | None]] = [
    ("eva02-base-224", 64, (16, 16), (16, 16)),
    ("eva02-448", 64, (32, 32), (16, 16)),
    ("eva02-tiny-336", 32, (24, 24), (16, 16)),
    ("cat-no-ref-10x6", 80, (10, 6), None),
]

RESULTS: list[tuple[str, str, str, float, float]] = []


def _angle_bound(recipe: Rope2d) -> float:
    """p: the largest |coordinate·band| of the table, in float64."""
    bands = np.abs(recipe.band_values().astype(np.float64)).max()
    coords = max(np.abs(recipe.coordinates(a).astype(np.float64)).max() for a in (0, 1))
    return float(bands * coords)


def _check(name: str, part: str, recipe: Rope2d, theirs: np.ndarray) -> None:
    ours = recipe.build()
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype == np.float32
    delta = np.abs(ours.astype(np.float64) - theirs)
    diff, same, p = float(delta.max()), float(np.mean(ours == theirs)), _angle_bound(recipe)
    RESULTS.append((name, part, "x".join(map(str, ours.shape)), diff, same))
    print(
        f"\n{name:24s} {part} {ours.shape[0]}x{ours.shape[1]} (p ≤ {p:.4g}): max|Δ| {diff:.3g}, {same:.4%} bit-identical"
    )
    assert diff <= 4 * 2.0**-24 * max(1.0, p), (name, part, diff)


def _recipe(case: tuple[Any, ...], part: str) -> Rope2d:
    _, (h, w), dim, bands, max_res, temperature, linear, ref_shape = case
    ref_feat_shape = None if ref_shape is None else f"{ref_shape[0]}x{ref_shape[1]}"
    return Rope2d(f"{h}x{w}", dim, bands, temperature, max_res, linear, ref_feat_shape, part)  # type: ignore[arg-type]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_build_rotary_pos_embed(case: tuple[Any, ...]) -> None:
    name, shape, dim, bands, max_res, temperature, linear, ref_shape = case
    theirs = ref.timm_rotary_pos_embed(shape, dim, bands == "pixel", max_res, temperature, linear, ref_shape)
    for part in ("sin", "cos"):
        _check(name, part, _recipe(case, part), theirs[part])


@pytest.mark.parametrize("case", CAT, ids=[c[0] for c in CAT])
def test_rotary_embedding_cat(case: tuple[Any, ...]) -> None:
    name, dim, (h, w), ref_shape = case
    theirs = ref.timm_rotary_embedding_cat(dim, (h, w), ref_shape)["table"]
    ref_feat_shape = None if ref_shape is None else f"{ref_shape[0]}x{ref_shape[1]}"
    _check(name, "cat", Rope2d(f"{h}x{w}", dim, "lang", ref_feat_shape=ref_feat_shape, part="cat"), theirs)


def test_the_eva02_preset_is_eva02_base_rotary_embedding_cat() -> None:
    ours = get_preset("eva02").recipe()
    theirs = ref.timm_rotary_embedding_cat(64, (16, 16), (16, 16))["table"]
    assert ours == Rope2d("16x16", 64, "lang", ref_feat_shape="16x16", part="cat")
    assert ours.shape == theirs.shape
    assert float(np.abs(ours.build().astype(np.float64) - theirs).max()) <= 4 * 2.0**-24 * 15


@pytest.mark.parametrize("shape", [(16, 16), (32, 32), (14, 18), (5, 100)])
def test_identify_names_eva02_for_a_table_timm_wrote(tmp_path: Path, shape: tuple[int, int]) -> None:
    """A table written by RotaryEmbeddingCat as EVA-02 builds it: a MATCH naming the eva02 preset."""
    path = tmp_path / "eva02.npy"
    np.save(path, ref.timm_rotary_embedding_cat(64, shape, (16, 16))["table"])
    doc = json.loads(CliRunner().invoke(cli, ["identify", str(path), "--json"]).stdout)
    assert doc["verdict"] == "match" and doc["best"]["name"] == "eva02", doc
    assert doc["best"]["recipe"]["feat_shape"] == f"{shape[0]}x{shape[1]}" and doc["best"]["verified"]["beyond"] == 0


@pytest.mark.parametrize("part", ["sin", "cos"])
def test_identify_names_timm_rope_pixel_for_a_table_timm_wrote(tmp_path: Path, part: str) -> None:
    path = tmp_path / "pixel.npy"
    np.save(path, ref.timm_rotary_pos_embed((14, 14), 64)[part])
    doc = json.loads(CliRunner().invoke(cli, ["identify", str(path), "--json"]).stdout)
    assert doc["verdict"] == "match" and doc["best"]["name"] == "timm-rope-pixel", doc
    assert doc["best"]["recipe"]["part"] == part


#: name, (H, W), dim, bands, ref_feat_shape, rotate_half, grid_indexing.
LAYOUTS: list[tuple[str, tuple[int, int], int, str, tuple[int, int] | None, bool, str]] = [
    ("half-lang-16x16", (16, 16), 64, "lang", None, True, "ij"),
    ("half-pixel-14x20", (14, 20), 32, "pixel", None, True, "ij"),
    ("xy-lang-14x20", (14, 20), 64, "lang", None, False, "xy"),
    ("xy-pixel-ref-24x12", (24, 12), 48, "pixel", (16, 16), False, "xy"),
    ("half-xy-lang-ref-7x11", (7, 11), 96, "lang", (16, 14), True, "xy"),
]


@pytest.mark.parametrize("case", LAYOUTS, ids=[c[0] for c in LAYOUTS])
def test_rotate_half_and_xy_indexing(case: tuple[Any, ...]) -> None:
    # timm's rotate_half=True (apply_rot_embed(half=True)'s layout) and grid_indexing='xy' (width's
    # bands first): the rope2d kind's --layout half and --grid-indexing xy, and identify names them.
    name, (h, w), dim, bands, ref_shape, half, indexing = case
    theirs = ref.timm_rotary_pos_embed((h, w), dim, bands == "pixel", 224, 10000.0, False, ref_shape, half, indexing)
    ref_feat_shape = None if ref_shape is None else f"{ref_shape[0]}x{ref_shape[1]}"
    for part in ("sin", "cos"):
        recipe = Rope2d(
            f"{h}x{w}",
            dim,
            bands,  # type: ignore[arg-type]
            ref_feat_shape=ref_feat_shape,
            part=part,  # type: ignore[arg-type]
            layout="half" if half else "pairs",
            grid_indexing=indexing,  # type: ignore[arg-type]
        )
        _check(name, part, recipe, theirs[part])
    if ref_shape is None:  # identify knows no reference shape without a preset
        from pecli.identification import identify

        found = identify(theirs["sin"])
        assert found.verdict == "match" and found.best is not None, found.summary
        assert (found.best.recipe.layout, found.best.recipe.grid_indexing) == ("half" if half else "pairs", indexing)
        assert float(np.abs(found.best.recipe.build().astype(np.float64) - theirs["sin"]).max()) <= 4 * 2.0**-24 * 20
