"""vit-pytorch's fixed sincos tables as sincos2d recipes: ``--freq t2t`` (each axis's frequencies
``base^(−k/(q−1))``, vit-pytorch's ``omega = arange(q) / (q − 1)``) in MAE's column order, and 3-D
``FxHxW`` grids in that order (``posemb_sincos_3d``: ``[sin x | cos x | sin y | cos y | sin z | cos z]``
of ``dim // 6`` frequencies each, zero columns after).  The truth here is vit-pytorch's formula
written out in float64 (a user's float32 table from it is rounded once: the same bits on every
CPU); its own code is in ``tests/conformance/test_sincos2d_vs_vit_pytorch.py``."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from click.testing import Result

from pecli.diff import compare
from pecli.identification import identify
from pecli.kinds.sincos2d import Sincos2d
from pecli.table import Table

# The quick suite keeps one case of each identify test; CI's full run takes the rest (the 3-minute budget).
SLOW = pytest.mark.slow


def _vit_pytorch(axes: tuple[int, ...], dim: int, base: float = 10000.0) -> np.ndarray:
    """vit-pytorch's table in float64: rows over the grid row-major, the last axis (x) fastest."""
    q = dim // (2 * len(axes))
    omega = base ** -(np.arange(q) / (q - 1))
    coords = [c.reshape(-1) for c in np.meshgrid(*(np.arange(n) for n in axes), indexing="ij")]
    blocks = []
    for c in reversed(coords):  # x, y (, z)
        angle = c[:, None].astype(np.float64) * omega[None, :]
        blocks += [np.sin(angle), np.cos(angle)]
    table = np.concatenate(blocks, axis=1)
    return np.pad(table, ((0, 0), (0, dim - table.shape[1])))


@pytest.mark.parametrize(("grid", "dim"), [("14x14", 256), ("6x10", 64), ("4x8x8", 200), ("2x3x5", 48)])
def test_t2t_grids_are_vit_pytorchs_formula(grid: str, dim: int) -> None:
    axes = tuple(int(s) for s in grid.split("x"))
    recipe = Sincos2d(grid, dim, freq="t2t", compute="exact", dtype="float64")
    np.testing.assert_allclose(recipe.build(), _vit_pytorch(axes, dim), rtol=0, atol=1e-13)
    if len(axes) == 3:  # the zero columns past six blocks never turn
        assert np.isnan(recipe.wavelengths()[6 * (dim // 6) :]).all()
        assert np.isfinite(recipe.wavelengths()[: 6 * (dim // 6)]).all()


@pytest.mark.parametrize(
    ("grid", "dim"),
    [
        ("4x8x8", 200),
        pytest.param("14x14", 256, marks=SLOW),
        pytest.param("16x16", 1024, marks=SLOW),
        pytest.param("8x7x7", 768, marks=SLOW),
    ],
)
def test_identify_names_vit_pytorchs_grid_on_a_users_table(grid: str, dim: int) -> None:
    axes = tuple(int(s) for s in grid.split("x"))
    mine = _vit_pytorch(axes, dim).astype(np.float32)  # float64 values rounded once
    found = identify(Table(mine, None, "mine"))
    assert found.verdict == "match" and found.best is not None, found.summary
    best = found.best.recipe
    assert isinstance(best, Sincos2d), best
    assert (best.grid, best.order, best.freq, best.base) == (grid, "mae", "t2t", 10000.0), best.describe()
    np.testing.assert_allclose(best.build(), mine, rtol=0, atol=4 * 2.0**-24 * max(axes))


def test_an_mae_table_is_not_called_t2t() -> None:
    # MAE's k/q table fits k/(q−1) too, with base 10000^((q−1)/q): not round, so not proposed.
    found = identify(Table(Sincos2d("14x14", 256).build(), None, "mae"))
    assert found.best is not None and isinstance(found.best.recipe, Sincos2d)
    assert found.verdict == "match" and found.best.recipe.freq == "paper", found.summary


def test_diff_names_the_frequency_rule() -> None:
    mine = _vit_pytorch((14, 14), 256).astype(np.float32)
    result = compare(Table(mine, None, "vit-pytorch"), Table.from_recipe(Sincos2d("14x14", 256)))
    words = " ".join(e.detail for e in result.explanations)
    assert "freq t2t, ω_k = base^(−k/63) (A) vs paper, ω_k = base^(−k/64) (B)" in words, words


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--grid", "4x4", "--dim", "4", "--freq", "t2t"], "freq=t2t spaces an axis's frequencies by 1/(q−1)"),
        (["--grid", "2x2x2", "--dim", "4"], "too narrow for a 3-D mae grid"),
        (["--grid", "2x2x2", "--dim", "48", "--order", "timm"], "needs order=mae (vit-pytorch 3D), tatp"),
        (["--grid", "4x4", "--dim", "16", "--freq", "half"], "unknown freq 'half': choose one of paper, t2t"),
    ],
)
def test_bad_grids_are_refused_in_one_line(run: Callable[..., Result], args: list[str], message: str) -> None:
    result = run("generate", "--kind", "sincos2d", *args)
    assert result.exit_code == 2 and message in result.stderr, result.stderr
