"""diffusers' coordinate scaling of sincos2d grids (``interpolation_scale``, ``base_size``, SD3's
``max_size`` crop) and CogVideoX's 3-D layout, against the float64 closed forms written below from
diffusers 0.42.1's ``get_2d_sincos_pos_embed`` / ``get_3d_sincos_pos_embed`` docstrings and code;
the conformance group (tests/conformance/test_presets_vs_frameworks.py) runs diffusers itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
from click.testing import Result

from pecli.kinds.sincos2d import Sincos2d
from pecli.presets import get_preset


def axis(coords: list[float], q: int) -> list[list[float]]:
    """One axis' ``[sin | cos]`` block: ``q`` frequencies ``10000^(−k/q)``, plain Python float64."""
    return [[math.sin(c / 10000 ** (k / q)) for k in range(q)] + [math.cos(c / 10000 ** (k / q)) for k in range(q)]
            for c in coords]  # fmt: skip


def mae_scaled(h: int, w: int, d: int, base_size: int | None, scale: float, built: int | None = None) -> np.ndarray:
    """``[w | h]`` rows h-major, an axis of ``m`` cells at ``(c + o)·base_size/(M·scale)``, M the built
    size (``max_size`` or ``m``) and ``o = (M − m)//2`` the centred crop's offset."""

    def coords(m: int) -> list[float]:
        size = built or m
        return [(c + (size - m) // 2) * (base_size or size) / (size * scale) for c in range(m)]

    ch, cw = axis(coords(h), d // 4), axis(coords(w), d // 4)
    return np.array([cw[j] + ch[i] for i in range(h) for j in range(w)])


@pytest.mark.parametrize(
    ("grid", "d", "base_size", "scale"),
    [("6x6", 16, 16, 1.0), ("5x7", 32, 8, 2.0), ("4x4", 8, None, 1.875), ("3x9", 16, 64, 0.5)],
)
def test_scaled_grid_is_the_closed_form(grid: str, d: int, base_size: int | None, scale: float) -> None:
    h, w = map(int, grid.split("x"))
    ours = Sincos2d(grid, d, base_size=base_size, interpolation_scale=scale, dtype="float64").build()
    np.testing.assert_allclose(ours, mae_scaled(h, w, d, base_size, scale), rtol=0, atol=1e-14)


def test_sd3_crop_is_the_centre_of_the_max_size_table() -> None:
    ours = Sincos2d("4x6", 16, base_size=4, max_size=10, dtype="float64").build()
    np.testing.assert_allclose(ours, mae_scaled(4, 6, 16, 4, 1.0, built=10), rtol=0, atol=1e-14)
    # The crop's first cell is cell (3, 2) of the 10x10 table.
    whole = Sincos2d("10x10", 16, base_size=4, dtype="float64").build()
    np.testing.assert_array_equal(ours.reshape(4, 6, 16), whole.reshape(10, 10, 16)[3:7, 2:8])


def test_float_pipelines_use_diffusers_float32_coordinates() -> None:
    # torch.arange(m, float32) / (m / base_size) / interpolation_scale, then float64 sin/cos.
    recipe = Sincos2d("7x7", 8, base_size=3, interpolation_scale=1.1, compute="float64", dtype="float64")
    f32 = np.float32
    coords = [float(f32(f32(c) / f32(7 / 3)) / f32(1.1)) for c in range(7)]
    c = axis(coords, 2)
    expected = np.array([c[j] + c[i] for i in range(7) for j in range(7)])
    np.testing.assert_allclose(recipe.build(), expected, rtol=0, atol=1e-15)


def test_cogvideox_is_time_then_space() -> None:
    t, h, w, d = 3, 2, 4, 32
    ours = Sincos2d(f"{t}x{h}x{w}", d, order="cogvideox", interpolation_scale=1.875, temporal_interpolation_scale=2.0,
                    dtype="float64").build()  # fmt: skip
    time = axis([c / 2.0 for c in range(t)], d // 8)
    cw, ch = axis([c / 1.875 for c in range(w)], 3 * d // 16), axis([c / 1.875 for c in range(h)], 3 * d // 16)
    expected = np.array([time[a] + cw[j] + ch[i] for a in range(t) for i in range(h) for j in range(w)])
    np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-14)
    # An HxW grid is one frame: time column sin 0 = 0, cos 0 = 1.
    frame = Sincos2d(f"{h}x{w}", d, order="cogvideox", interpolation_scale=1.875, dtype="float64").build()
    np.testing.assert_array_equal(frame, Sincos2d(f"1x{h}x{w}", d, order="cogvideox", interpolation_scale=1.875,
                                                  dtype="float64").build())  # fmt: skip


def test_axes_with_the_same_coordinates_keep_their_own_frequencies() -> None:
    """A cube's time axis has its spatial axes' coordinates but its own frequencies (d/8, not
    3d/16); the two spatial axes of a square share theirs (built once, placed twice)."""
    n, d = 4, 32
    ours = Sincos2d(f"{n}x{n}x{n}", d, order="cogvideox", dtype="float64").build()
    time, space = axis([float(c) for c in range(n)], d // 8), axis([float(c) for c in range(n)], 3 * d // 16)
    expected = np.array([time[a] + space[j] + space[i] for a in range(n) for i in range(n) for j in range(n)])
    np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-14)


def test_defaults_leave_existing_grids_unchanged() -> None:
    plain = Sincos2d("14x14", 64, compute="float64").build()
    # base_size equal to the grid's side and scale 1 divide by exactly 1.
    np.testing.assert_array_equal(Sincos2d("14x14", 64, compute="float64", base_size=14).build(), plain)
    dit = get_preset("dit").recipe(dim=64)  # base_size 16 on its own 16x16 grid
    np.testing.assert_array_equal(dit.build(), Sincos2d("16x16", 64, compute="float64").build())


def test_presets_build_the_models_tables() -> None:
    assert get_preset("sd3").recipe().shape == (4096, 1536)
    assert get_preset("pixart-alpha").recipe().shape == (4096, 1152)
    assert get_preset("dit").recipe().shape == (256, 1152)
    assert get_preset("cogvideox").recipe().shape == (13 * 30 * 45, 1920)
    # PixArt's coordinates are c/2: cell (0, 1) is w = 0.5.
    row = get_preset("pixart-alpha").recipe(dtype="float64").rows(1, 2)[0]
    assert row[0] == math.sin(0.5) and row[1152 // 4] == math.cos(0.5)


BAD = [
    (["--grid", "4x4", "--dim", "8", "--interpolation-scale", "0"], "interpolation_scale must be a finite number > 0"),
    (["--grid", "4x4", "--dim", "8", "--interpolation-scale", "nan"], "interpolation_scale must be a finite number"),
    (["--grid", "4x4", "--dim", "8", "--base-size", "0"], "base_size must be at least 1, got 0: e.g. 64"),
    (
        ["--grid", "4x4", "--dim", "8", "--max-size", "3"],
        "grid 4x4 must be an HxW crop of max_size 3: raise --max-size",
    ),
    (
        ["--grid", "4x4", "--dim", "8", "--temporal-interpolation-scale", "2"],
        "temporal_interpolation_scale needs order=cogvideox: drop --temporal-interpolation-scale",
    ),
    (["--grid", "2x2x2", "--dim", "24", "--order", "cogvideox"], "dim 24 must be a multiple of 16 for order=cogvideox"),
    (
        ["--grid", "2x2x2", "--dim", "16", "--order", "timm"],
        "a 3-D grid 2x2x2 needs order=mae (vit-pytorch 3D), tatp (positional-encodings 3D) or cogvideox",
    ),
    (["--grid", "2x2x2", "--dim", "16", "--order", "tatp", "--max-size", "4"], "must be an HxW crop of max_size 4"),
]


@pytest.mark.parametrize(("args", "message"), BAD, ids=[str(i) for i in range(len(BAD))])
def test_bad_scales_are_one_line_errors_with_exit_2(run: Callable[..., Result], args: list[str], message: str) -> None:
    r = run("generate", *args)
    assert r.exit_code == 2 and r.stdout == "", (r.exit_code, r.output)
    lines = r.stderr.strip().splitlines()
    assert message in r.stderr and len(lines) == 1 and lines[0].startswith("Error:"), r.stderr


@pytest.mark.parametrize("extra", [2, 3, 7])
def test_extra_tokens_are_zero_rows_before_the_closed_form_grid(extra: int) -> None:
    # diffusers' get_2d_sincos_pos_embed(cls_token=True, extra_tokens=N): N zero rows, then the grid.
    made = np.vstack([np.zeros((extra, 32)), mae_scaled(5, 7, 32, 8, 2.0)])
    ours = Sincos2d("5x7", 32, base_size=8, interpolation_scale=2.0, extra_tokens=extra, dtype="float64").build()
    np.testing.assert_allclose(ours, made, rtol=0, atol=1e-15)
    assert ours.shape == (35 + extra, 32) and not ours[:extra].any()
    # identify counts the zero rows of the closed form (cast once to float32, as a user would save it)
    from pecli.identification import identify
    from pecli.table import Table

    found = identify(Table(made.astype(np.float32), None, "mine"))
    assert found.verdict == "match" and found.best is not None, found.summary
    recipe = found.best.recipe
    assert isinstance(recipe, Sincos2d) and (recipe.grid, recipe.extra_tokens) == ("5x7", extra), recipe.describe()


def test_one_extra_token_is_the_class_token() -> None:
    assert Sincos2d("4x4", 16, extra_tokens=1) == Sincos2d("4x4", 16, cls=True)
    assert Sincos2d("4x4", 16, extra_tokens=0) == Sincos2d("4x4", 16)
