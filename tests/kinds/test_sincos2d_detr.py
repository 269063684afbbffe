"""sincos2d's DETR coordinates (``--coords count|detr|deformable`` with ``--order tatp``): the
sine maps of DETR's ``PositionEmbeddingSine`` (facebookresearch/detr ``models/position_encoding.py``)
and Deformable DETR's, read as ``(H·W, d)`` rows.

Truth: that code written here in float64 NumPy (the mask's ``cumsum``, ``normalize`` with ``eps``
10⁻⁶ and ``scale`` 2π, ``dim_t = T^(2⌊i/2⌋/npf)``, ``stack(sin[0::2], cos[1::2])``, ``cat(y, x)``);
a user's table is it rounded once to float32.  transformers' own modules are in
tests/conformance/test_sincos2d_vs_detr.py.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from pecli.diff import compare
from pecli.errors import RecipeError
from pecli.identification import identify
from pecli.kinds.sincos2d import Sincos2d
from pecli.table import Table


def detr_map(h: int, w: int, npf: int, coords: str, temperature: float = 10000.0) -> np.ndarray:
    """DETR's ``(2·npf, H, W)`` map in float64, as ``(H·W, 2·npf)`` rows."""
    y = np.broadcast_to(np.arange(1, h + 1, dtype=np.float64)[:, None], (h, w))
    x = np.broadcast_to(np.arange(1, w + 1, dtype=np.float64)[None, :], (h, w))
    if coords != "count":
        shift = 0.5 if coords == "deformable" else 0.0
        y = (y - shift) / (y[-1:, :] + 1e-6) * 2 * math.pi
        x = (x - shift) / (x[:, -1:] + 1e-6) * 2 * math.pi
    dim_t = temperature ** (2 * (np.arange(npf) // 2) / npf)

    def embed(c: np.ndarray) -> np.ndarray:
        pos = c[:, :, None] / dim_t
        return np.stack((np.sin(pos[:, :, 0::2]), np.cos(pos[:, :, 1::2])), axis=3).reshape(h, w, npf)

    return np.concatenate((embed(y), embed(x)), axis=2).reshape(h * w, 2 * npf)


GRIDS = [(25, 34, 128), (7, 5, 64), (3, 9, 16), (1, 6, 8), (40, 40, 32)]


@pytest.mark.parametrize("coords", ["count", "detr", "deformable"])
@pytest.mark.parametrize(("h", "w", "npf"), GRIDS)
def test_detr_coordinates_are_the_closed_form(coords: str, h: int, w: int, npf: int) -> None:
    recipe = Sincos2d(f"{h}x{w}", 2 * npf, order="tatp", coords=coords, compute="exact", dtype="float64")  # type: ignore[arg-type]
    truth = detr_map(h, w, npf, coords)
    assert np.max(np.abs(recipe.build() - truth)) < 1e-12 * max(1, w)
    # a block of rows, cut inside a grid row, is the whole table's rows
    n = h * w
    for r0, r1 in ((0, 1), (w - 1, min(n, w + 3)), (n // 2, n)):
        assert np.array_equal(recipe.rows(r0, r1), recipe.build()[r0:r1])


def test_the_float64_pipeline_is_the_closed_form_step_by_step() -> None:
    recipe = Sincos2d("25x34", 256, order="tatp", coords="detr", compute="float64", dtype="float64")
    assert np.max(np.abs(recipe.build() - detr_map(25, 34, 128, "detr"))) < 1e-14


@pytest.mark.parametrize(
    ("h", "w", "npf", "coords", "base"),
    [
        (25, 34, 128, "detr", 10000.0),
        (20, 30, 128, "deformable", 10000.0),
        (12, 16, 64, "count", 10000.0),
        (7, 5, 64, "detr", 20.0),
        (16, 16, 32, "deformable", 10000.0),
    ],
)
def test_identify_reads_grid_coordinates_and_base_from_a_users_table(
    h: int, w: int, npf: int, coords: str, base: float
) -> None:
    table = detr_map(h, w, npf, coords, base).astype(np.float32)  # the float64 formula rounded once
    found = identify(table)
    assert found.verdict == "match" and found.best is not None, found.summary
    recipe: Any = found.best.recipe
    assert (recipe.grid, recipe.dim, recipe.order, recipe.coords, recipe.base) == (
        f"{h}x{w}", 2 * npf, "tatp", coords, base)  # fmt: skip


def test_identify_reads_a_detr_map_after_a_class_row() -> None:
    table = np.vstack([np.zeros((1, 64)), detr_map(9, 12, 32, "detr")]).astype(np.float32)
    found = identify(table)
    assert found.verdict == "match" and found.best is not None, found.summary
    recipe: Any = found.best.recipe
    assert (recipe.grid, recipe.cls, recipe.coords) == ("9x12", True, "detr")


def test_a_positional_encodings_table_is_not_called_detr() -> None:
    found = identify(Sincos2d("6x8", 32, order="tatp").build())
    assert found.verdict == "match" and found.best is not None
    assert found.best.recipe.coords == "index"  # type: ignore[attr-defined]


def test_diff_names_normalize_left_out() -> None:
    a = Table.from_array(detr_map(10, 14, 64, "detr").astype(np.float32), "DETR map")
    b = Table.from_recipe(Sincos2d("10x14", 128, order="tatp", coords="count"))
    details = [e.detail for e in compare(a, b).explanations]
    assert any(d.startswith("coords detr (c + 1)/(m + 1e-6)·2π (A) vs count c + 1 (B)") for d in details), details


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"grid": "4x4", "coords": "detr"},
            r"coords=detr is DETR's PositionEmbeddingSine, an HxW grid in the tatp order",
        ),
        ({"grid": "2x4x4", "order": "tatp", "coords": "count"}, r"give --order tatp and an HxW grid|order=tatp"),
        ({"grid": "4x4", "order": "tatp", "coords": "detr", "interpolation_scale": 2.0}, r"has its own coordinates"),
        ({"grid": "4x4", "order": "tatp", "coords": "normalized"}, r"unknown coords 'normalized'"),
        (
            {"grid": "4x4", "order": "tatp", "coords": "detr", "dim": 6},
            r"dim 6 is not a multiple of 4: give e.g. dim=8",
        ),
    ],
)
def test_what_detr_coordinates_cannot_build_is_refused(params: dict[str, Any], message: str) -> None:
    with pytest.raises(RecipeError, match=message):
        Sincos2d(**{"dim": 16, **params})


def test_generate_from_the_command_line(run) -> None:
    ok = run("generate", "--kind", "sincos2d", "--grid", "2x3", "--dim", "8", "--order", "tatp", "--coords", "detr")
    assert ok.exit_code == 0 and "coords=detr" in ok.output, ok.output
    bad = run("generate", "--kind", "sincos2d", "--grid", "2x3", "--dim", "8", "--coords", "detr")
    assert bad.exit_code == 2 and "give --order tatp" in bad.output and "Traceback" not in bad.output


@pytest.mark.parametrize("lead", [(), (1,)])
def test_identify_reads_a_channels_first_map(tmp_path: Any, run, lead: tuple[int, ...]) -> None:
    """DETR's module returns ``(1, C, H, W)``: read as ``C·H`` rows of ``W`` it is no table pecli
    knows, and identify says what its channels-first reading is, with the command that rebuilds it."""
    rows = detr_map(6, 10, 32, "deformable").astype(np.float32)  # (H·W, C)
    path = tmp_path / "pos.npy"
    np.save(path, rows.T.reshape(*lead, 64, 6, 10))
    shown = run("identify", str(path))
    assert shown.exit_code == 0, shown.output
    said = " ".join(shown.output.split())
    assert "read channels-first, (64, 6, 10) as 60×64 (a row per cell, h-major), it matches sincos2d grid=6x10" in said
    assert "coords=deformable" in said and "then reshape to (64, 6, 10)" in said


def test_stored_shape_reads_the_reshaped_fact() -> None:
    from pecli.transposition import stored_shape

    assert stored_shape({"reshaped": "(256, 25, 34) → (6400, 34) (leading axes as rows)"}) == (256, 25, 34)
    assert stored_shape({"reshaped": "(7,) → (1, 7) (a vector is one row)"}) == (7,)
    assert stored_shape({}) is None
