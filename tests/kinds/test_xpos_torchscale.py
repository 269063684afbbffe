"""torchscale's xPos as the xpos kind builds it: ``--rotary cos|sin`` (the scale times the rotary cos
or sin of ``r·10000^(−2i/d)``, ``duplicate_interleave(cos · scale)``) and ``--center ceil`` (the
powers centred on ``⌈n/2⌉``: ``min_pos = −(length + offset) // 2``).  The truth here is that formula
written out in float64 (a user's float32 table from it rounded once: the same bits on every CPU);
torchscale's own code is in ``tests/conformance/test_xpos_vs_torchscale.py``."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from click.testing import Result

from pecli.diff import compare
from pecli.identification import identify
from pecli.kinds.xpos import Xpos, XposPart, XposRotary
from pecli.table import Table

# The quick suite keeps one case of each identify test; CI's full run takes the rest (the 3-minute budget).
SLOW = pytest.mark.slow


def _torchscale(n: int, d: int, base: float, rotary: str, keys: bool = False) -> np.ndarray:
    """torchscale's table in float64: ``cos(r·ω_i)·ζ_i^(±(r − ⌈n/2⌉)/B)``, each value twice."""
    h = d // 2
    zeta = (np.arange(0, d, 2) + 0.4 * d) / (1.4 * d)
    rows = np.arange(n, dtype=np.float64)[:, None]
    scale = zeta[None, :] ** ((-1 if keys else 1) * (rows - -(-n // 2)) / base)
    angle = rows * 10000.0 ** (-np.arange(h) / h)[None, :]
    return np.repeat((np.cos(angle) if rotary == "cos" else np.sin(angle)) * scale, 2, axis=1)


@pytest.mark.parametrize(("n", "rotary", "keys"), [(511, "cos", False), (64, "sin", True), (7, "cos", True)])
def test_rotary_times_the_scale_is_the_formula(n: int, rotary: XposRotary, keys: bool) -> None:
    part: XposPart = "k" if keys else "q"
    recipe = Xpos(n, 16, 512.0, part=part, compute="float64", dtype="float64", rotary=rotary, center="ceil")
    expected = _torchscale(n, 16, 512.0, rotary, keys)
    np.testing.assert_allclose(recipe.build(), expected, rtol=1e-13, atol=1e-15)


def test_an_even_length_has_one_centre() -> None:
    assert Xpos(64, 8, center="ceil") == Xpos(64, 8)
    assert Xpos(63, 8, center="ceil").middle == 32 and Xpos(63, 8).middle == 31


@pytest.mark.parametrize(
    ("n", "base", "rotary", "keys"), [(511, 512.0, "cos", False), pytest.param(300, 256.0, "sin", True, marks=SLOW)]
)
def test_identify_names_torchscales_table_on_a_users_file(n: int, base: float, rotary: str, keys: bool) -> None:
    mine = _torchscale(n, 32, base, rotary, keys).astype(np.float32)  # float64 values rounded once
    found = identify(Table(mine, None, "mine"))
    assert found.verdict == "match" and found.best is not None, found.summary
    best = found.best.recipe
    assert isinstance(best, Xpos), best
    center = "ceil" if n % 2 else "floor"  # an even length's centres are one row
    assert (best.scale_base, best.part, best.rotary, best.center) == (base, "k" if keys else "q", rotary, center)


def test_identify_reads_the_ceil_centre_of_a_scale_table() -> None:
    table = Xpos(301, 32, part="k", center="ceil").build()
    found = identify(Table(table, None, "mine"))
    assert found.verdict == "match" and found.best is not None, found.summary
    assert isinstance(found.best.recipe, Xpos) and found.best.recipe.center == "ceil"


def test_diff_names_the_rotary_factor_and_the_centre() -> None:
    mine = _torchscale(511, 32, 512.0, "cos").astype(np.float32)
    result = compare(Table(mine, None, "torchscale"), Table.from_recipe(Xpos(511, 32)))
    words = " ".join(e.detail for e in result.explanations)
    assert "rotary cos (A) vs none (B)" in words and "center ceil (A) vs floor (B)" in words, words


def test_a_rotary_factor_it_lacks_is_refused(run: Callable[..., Result]) -> None:
    result = run("generate", "--kind", "xpos", "--len", "8", "--dim", "4", "--rotary", "tan")
    assert result.exit_code == 2 and "'tan' is not one of 'none', 'cos', 'sin'" in result.stderr, result.stderr


@pytest.mark.parametrize(("keys", "rotary"), [(False, "cos"), pytest.param(True, "none", marks=SLOW)])
def test_one_decoding_step_of_torchscale_is_named(keys: bool, rotary: XposRotary) -> None:
    # torchscale on one token: min_pos = −1 // 2 = −1, so its one row is at power −1/B (⌈1/2⌉ = 1).
    part: XposPart = "k" if keys else "q"
    table = Xpos(1, 64, part=part, rotary=rotary, center="ceil").build()
    found = identify(Table(table, None, "mine"))
    assert found.verdict == "match" and found.best is not None, found.summary
    np.testing.assert_array_equal(found.best.recipe.build(), table)
