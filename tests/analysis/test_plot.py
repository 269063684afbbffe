"""Pictures: real PNGs rendered and read back pixel by pixel, SVG, atomic writes, and the one-line
error when matplotlib is missing."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pecli import OutputError, PecliInputError, Sinusoidal
from pecli.plot import NEEDS_MATPLOTLIB, MissingDependencyError, Plot, curves, decay_plot, default_dims, heatmap
from pecli.table import Table

#: Rendering needs matplotlib (the `plot` extra); the missing-matplotlib error is tested without it.
needs_matplotlib = pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None, reason="needs matplotlib")


def imread(path: Path) -> np.ndarray:
    from matplotlib.image import imread as read

    return np.asarray(read(path))


def gray(levels: np.ndarray) -> Any:
    from matplotlib import colormaps

    return colormaps["gray"](levels)


def interleaved(length: int, dim: int) -> np.ndarray:
    """Float64 closed form: column 2i = sin(p·10000^(−2i/d)), 2i+1 = cos(…)."""
    p = np.arange(length, dtype=np.float64)[:, None]
    angles = p * 10000.0 ** (-2.0 * np.arange(dim // 2) / dim)
    out = np.empty((length, dim))
    out[:, 0::2], out[:, 1::2] = np.sin(angles), np.cos(angles)
    return out


def cell_centres(plot: Plot, rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
    """Pixel coordinates (x, y) of the centre of every heatmap cell."""
    left, top, right, bottom = plot.data_box
    xs = left + (np.arange(cols) + 0.5) * (right - left) / cols
    ys = top + (np.arange(rows) + 0.5) * (bottom - top) / rows
    return np.rint(xs).astype(int), np.rint(ys).astype(int)


def grey_at(image: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """The grey level (0 black … 1 white) at every (y, x), checking the pixels are grey."""
    rgb = image[np.ix_(ys, xs)][..., :3]
    assert np.allclose(rgb, rgb[..., :1], atol=1 / 255), "a heatmap cell is not grey"
    return np.asarray(rgb[..., 0])


@needs_matplotlib
def test_heatmap_png_matches_the_closed_form_cell_by_cell(tmp_path: Path) -> None:
    """The picture blog posts draw ("The Illustrated Transformer"; 32 positions × 128 dims): −1 black, 0 grey, 1 white."""
    out = tmp_path / "pe.png"
    plot = heatmap(Table.from_recipe(Sinusoidal(32, 128)), out)
    image = imread(out)
    assert image.shape[:2] == (plot.size[1], plot.size[0]) == (300, 1000)
    assert plot.format == "png" and plot.description == "all 32 positions, all 128 dims"
    xs, ys = cell_centres(plot, 32, 128)
    grey = grey_at(image, xs, ys)
    # Position 0: sin 0 = 0 is mid-grey in the even columns, cos 0 = 1 is white in the odd ones.
    np.testing.assert_allclose(grey[0, 0::2], 0.5, atol=1 / 255)
    np.testing.assert_allclose(grey[0, 1::2], 1.0, atol=1 / 255)
    # Every cell: the gray colour map at (value + 1)/2 (a 256-entry table, so within 2 levels of linear).
    expected = interleaved(32, 128)
    np.testing.assert_allclose(grey, gray((expected + 1) / 2)[..., 0], atol=1.01 / 255)
    np.testing.assert_allclose(grey, (expected + 1) / 2, atol=2.01 / 255)
    # Not blank: black cells exist (sin reaches −1 within 32 positions in column 0).
    assert grey.min() < 0.05 and grey.max() > 0.95


@needs_matplotlib
def test_a_big_heatmap_is_strided_and_says_so(tmp_path: Path) -> None:
    out = tmp_path / "big.png"
    plot = heatmap(Table(interleaved(4096, 1024).astype(np.float32), None, "big.npy"), out, max_rows=64, max_cols=64)
    assert plot.description == "every 64th position (64 of 4096), every 17th dim (61 of 1024)"
    image = imread(out)
    grey = grey_at(image, *cell_centres(plot, 64, 61))
    # The odd stride keeps sin and cos columns alternating: columns 0, 17, 34, … are sin, cos, sin, …
    np.testing.assert_allclose(grey[0, 0::2], 0.5, atol=1 / 255)
    np.testing.assert_allclose(grey[0, 1::2], 1.0, atol=1 / 255)
    expected = interleaved(4096, 1024)[::64, ::17]
    np.testing.assert_allclose(grey, gray((expected + 1) / 2)[..., 0], atol=1.01 / 255)


@needs_matplotlib
def test_heatmap_svg(tmp_path: Path) -> None:
    out = tmp_path / "pe.svg"
    plot = heatmap(Table.from_recipe(Sinusoidal(16, 8)), out)
    assert plot.format == "svg"
    text = out.read_text()
    assert "<svg" in text and "<image" in text  # the heatmap is embedded as one raster image


@needs_matplotlib
def test_learned_tables_get_a_symmetric_scale(tmp_path: Path) -> None:
    x = np.zeros((4, 4))
    x[0, 0], x[1, 1] = 0.02, -0.01
    out = tmp_path / "learned.png"
    plot = heatmap(Table(x, None, "w"), out, limits=None)
    grey = grey_at(imread(out), *cell_centres(plot, 4, 4))
    assert grey[0, 0] == pytest.approx(1.0, abs=1 / 255) and grey[1, 1] == pytest.approx(0.25, abs=2 / 255)


@needs_matplotlib
def test_existing_files_are_kept_without_force(tmp_path: Path) -> None:
    out = tmp_path / "pe.png"
    out.write_bytes(b"old")
    table = Table.from_recipe(Sinusoidal(8, 8))
    with pytest.raises(OutputError, match=r"pe\.png already exists: pass --force to overwrite it"):
        heatmap(table, out)
    assert out.read_bytes() == b"old"
    heatmap(table, out, force=True)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in tmp_path.iterdir()] == ["pe.png"]  # no temporary left behind


def test_the_format_comes_from_the_extension(tmp_path: Path) -> None:
    with pytest.raises(PecliInputError, match=r"plots are written as \.png or \.svg, not '\.jpg': e\.g\. -o fig\.png"):
        heatmap(Table.from_recipe(Sinusoidal(8, 8)), tmp_path / "pe.jpg")
    assert not list(tmp_path.iterdir())


@needs_matplotlib
def test_curves_default_to_dims_0_32_64_as_blog_walkthroughs_plot_them(tmp_path: Path) -> None:
    assert default_dims(128) == [0, 32, 64]
    assert default_dims(2) == [0, 1] and default_dims(1) == [0]
    out = tmp_path / "curves.png"
    plot = curves(Table.from_recipe(Sinusoidal(512, 128)), out)
    assert plot.description == "positions 0..511"
    image = imread(out)
    left, top, right, bottom = (int(v) for v in plot.data_box)
    area = image[top + 2 : bottom - 2, left + 2 : right - 2, :3]
    # matplotlib's first three line colours (tab:blue, tab:orange, tab:green) are all drawn.
    for colour in ([0.122, 0.467, 0.706], [1.0, 0.498, 0.055], [0.173, 0.627, 0.173]):
        assert np.any(np.all(np.abs(area - colour) < 0.02, axis=-1)), colour


def test_curves_reject_bad_dims(tmp_path: Path) -> None:
    with pytest.raises(PecliInputError, match=r"dims must be columns 0\.\.7, got 8, -1: e\.g\. --dims 0,2"):
        curves(Table.from_recipe(Sinusoidal(8, 8)), tmp_path / "c.png", dims=[0, 8, -1])


@needs_matplotlib
def test_decay_plot(tmp_path: Path) -> None:
    out = tmp_path / "decay.svg"
    plot = decay_plot(Table.from_recipe(Sinusoidal(512, 128)), out)
    assert plot.description == "every p in 0..255"  # max_k defaults to half the rows
    assert "mean cosine similarity" in out.read_text()


def test_missing_matplotlib_is_one_line_with_the_fix(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` now raises ImportError
    table = Table.from_recipe(Sinusoidal(8, 8))
    for draw in (heatmap, curves, decay_plot):
        with pytest.raises(MissingDependencyError) as info:
            draw(table, tmp_path / "x.png")
        assert (
            str(info.value)
            == NEEDS_MATPLOTLIB
            == ("plots need matplotlib: pip install matplotlib (or, in pecli's checkout, pip install -e '.[plot]')")
        )
        assert isinstance(info.value, PecliInputError)
    assert not list(tmp_path.iterdir())
