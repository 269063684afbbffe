"""sincos2d's LoFTR order (``--order loftr --coords count``, ``--freq loftr-bug``): the sine map of
LoFTR's ``PositionEncodingSine`` (zju3dv/LoFTR ``src/loftr/utils/position_encoding.py``, kornia's
``feature/loftr/utils/position_encoding.py``) read as ``(H·W, d)`` rows.

Truth: that code written here in float64 NumPy: ``[sin x_k, cos x_k, sin y_k, cos y_k]`` for each
``k < d/4`` (``pe[0::4]`` … ``pe[3::4]``), x and y the ``cumsum`` of ones (cells from 1),
``div_term = exp(arange(0, d/2, 2)·(−ln 10000/(d/2)))`` or, with ``temp_bug_fix=False``, the
floor-divided ``−ln 10000 / d // 2 = −1``; a user's table is it rounded once to float32.  kornia's
own module is in tests/conformance/test_sincos2d_vs_kornia.py.
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


def loftr_map(h: int, w: int, d: int, bug: bool, temperature: float = 10000.0) -> np.ndarray:
    """LoFTR's ``(d, H, W)`` map in float64, as ``(H·W, d)`` rows."""
    y = np.cumsum(np.ones((h, w)), axis=0)
    x = np.cumsum(np.ones((h, w)), axis=1)
    step = -math.log(temperature) / d // 2 if bug else -math.log(temperature) / (d // 2)
    div = np.exp(np.arange(0, d // 2, 2) * step)[:, None, None]
    pe = np.zeros((d, h, w))
    pe[0::4], pe[1::4] = np.sin(x * div), np.cos(x * div)
    pe[2::4], pe[3::4] = np.sin(y * div), np.cos(y * div)
    return pe.reshape(d, h * w).T


def _recipe(h: int, w: int, d: int, bug: bool, **kw: Any) -> Sincos2d:
    freq = "loftr-bug" if bug else "paper"
    return Sincos2d(f"{h}x{w}", d, order="loftr", coords="count", freq=freq, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("bug", [False, True])
@pytest.mark.parametrize(("h", "w", "d"), [(60, 80, 256), (7, 5, 64), (3, 4, 8), (1, 9, 16)])
def test_the_loftr_order_is_the_closed_form(h: int, w: int, d: int, bug: bool) -> None:
    recipe = _recipe(h, w, d, bug, compute="exact", dtype="float64")
    assert np.max(np.abs(recipe.build() - loftr_map(h, w, d, bug))) < 1e-12 * max(h, w)
    n = h * w
    for r0, r1 in ((0, 1), (w - 1, min(n, w + 2)), (n // 3, n)):
        assert np.array_equal(recipe.rows(r0, r1), recipe.build()[r0:r1])


@pytest.mark.parametrize(("h", "w", "d", "bug"), [(60, 80, 256, True), (60, 80, 256, False), (12, 9, 32, True)])
def test_identify_reads_the_loftr_map_from_a_users_table(h: int, w: int, d: int, bug: bool) -> None:
    found = identify(loftr_map(h, w, d, bug).astype(np.float32))
    assert found.verdict == "match" and found.best is not None, found.summary
    recipe: Any = found.best.recipe
    assert (recipe.grid, recipe.order, recipe.coords, recipe.freq) == (
        f"{h}x{w}", "loftr", "count", "loftr-bug" if bug else "paper")  # fmt: skip


def test_diff_names_the_temp_bug() -> None:
    a = Table.from_array(loftr_map(20, 30, 256, bug=True).astype(np.float32), "kornia LoFTR pe")
    b = Table.from_recipe(_recipe(20, 30, 256, bug=False))
    details = [e.detail for e in compare(a, b).explanations]
    assert any(d.startswith("freq loftr-bug, ω_k = e^(−2k) (A) vs paper, ω_k = base^(−k/64) (B)") for d in details), (
        details
    )


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"grid": "4x4", "dim": 16, "freq": "loftr-bug"}, r"freq=loftr-bug and order=mae do not go together"),
        ({"grid": "4x4", "dim": 16, "order": "loftr", "freq": "t2t"}, r"LoFTR's order takes freq paper"),
        ({"grid": "2x4x4", "dim": 16, "order": "loftr"}, r"a 3-D grid 2x4x4 needs order=mae"),
        ({"grid": "4x4", "dim": 18, "order": "loftr"}, r"a multiple of 4"),
    ],
)
def test_what_the_loftr_order_cannot_build_is_refused(params: dict[str, Any], message: str) -> None:
    with pytest.raises(RecipeError, match=message):
        Sincos2d(**params)
