"""An odd rotary dim as litgpt builds it (``--odd truncate``): litgpt 0.5's ``build_rope_cache`` takes
``theta = 1 / base ** (arange(0, n_elem, 2) / n_elem)`` — ⌈n/2⌉ frequencies — and cuts
``idx_theta.repeat(1, 2)`` to ``n_elem`` columns, where rotary-embedding-torch (``--odd drop``, the
default) takes ``n // 2`` frequencies over ``n − 1`` columns.  The truth here is that formula written
out in float64 (and a user's float32 table from it, rounded once: the same bits on every CPU);
litgpt's own code is in ``tests/conformance/test_rope_vs_litgpt.py``."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from click.testing import Result

from pecli.diff import compare
from pecli.identification import identify
from pecli.kinds.rope import Rope
from pecli.table import Table

# The quick suite keeps one case of each identify test; CI's full run takes the rest (the 3-minute budget).
SLOW = pytest.mark.slow


def _litgpt(n: int, dim: int, base: float, layout: str = "half", start: int = 0) -> np.ndarray:
    """litgpt's angles for an odd ``dim``, float64: each frequency's angle, the layout's last column cut."""
    theta = base ** (-np.arange(0, dim, 2, dtype=np.float64) / dim)  # ⌈dim/2⌉ of them
    angle = np.arange(start, start + n, dtype=np.float64)[:, None] * theta[None, :]
    whole = np.concatenate([angle, angle], axis=1) if layout == "half" else np.repeat(angle, 2, axis=1)
    return whole[:, :dim]


@pytest.mark.parametrize("dim", [3, 7, 33])
@pytest.mark.parametrize("layout", ["half", "pairs"])
def test_an_odd_dim_truncated_is_litgpts_cut_layout(dim: int, layout: str) -> None:
    n = 200
    for part, fn in (("cos", np.cos), ("sin", np.sin)):
        recipe = Rope(n, dim, layout=layout, part=part, odd="truncate", compute="exact", dtype="float64")  # type: ignore[arg-type]
        table = recipe.build()
        assert table.shape == (n, dim) and recipe.frequency_count == (dim + 1) // 2
        np.testing.assert_allclose(table, fn(_litgpt(n, dim, 10000.0, layout)), rtol=0, atol=1e-13)
    assert Rope(n, dim, odd="truncate", part="inv_freq").shape == (1, (dim + 1) // 2)
    assert Rope(n, dim, odd="truncate", layout="once").shape == (n, (dim + 1) // 2)


def test_an_even_dim_has_no_odd_choice_to_make() -> None:
    # One recipe per table: odd=truncate on an even dim builds, and is, the plain recipe.
    assert Rope(16, 8, odd="truncate") == Rope(16, 8)


@pytest.mark.parametrize(
    ("dim", "base", "layout", "part", "start", "n"),
    [
        (5, 10000.0, "pairs", "cos", 0, 64),
        pytest.param(7, 10000.0, "half", "cos", 0, 300, marks=SLOW),
        pytest.param(33, 500000.0, "half", "sin", 0, 2048, marks=SLOW),
        pytest.param(7, 10000.0, "half", "cos", 1000, 40, marks=SLOW),  # a window of a long cache
        pytest.param(7, 10000.0, "half", "sin", 37, 1, marks=SLOW),  # one decoding step's row
    ],
)
def test_identify_names_litgpts_odd_dim_on_a_users_table(
    dim: int, base: float, layout: str, part: str, start: int, n: int
) -> None:
    fn = np.cos if part == "cos" else np.sin
    mine = fn(_litgpt(n, dim, base, layout, start)).astype(np.float32)  # float64 values rounded once
    found = identify(Table(mine, None, "mine"))
    assert found.verdict == "match" and found.best is not None, found.summary
    recipe = found.best.recipe
    assert isinstance(recipe, Rope), recipe
    assert (recipe.dim, recipe.base, recipe.odd, recipe.layout) == (dim, base, "truncate", layout), recipe.describe()
    np.testing.assert_allclose(recipe.build(), mine, rtol=0, atol=4 * 2.0**-24 * max(1, start + n))


def test_diff_says_which_odd_dim_each_table_takes() -> None:
    # A litgpt cache (7 columns) against rotary-embedding-torch's RotaryEmbedding(dim=7) (6 columns).
    n, dim = 256, 7
    litgpt = np.cos(_litgpt(n, dim, 10000.0)).astype(np.float32)
    angle = np.arange(n, dtype=np.float64)[:, None] * 10000.0 ** (-np.arange(0, dim - 1, 2) / dim)
    torch_rotary = np.cos(np.concatenate([angle, angle], axis=1)).astype(np.float32)
    result = compare(Table(litgpt, None, "litgpt"), Table(torch_rotary, None, "rotary-embedding-torch"))
    cause = " ".join(e.detail for e in result.explanations)
    assert "odd dim 7: 4 frequencies, the last column cut (A, odd=truncate: litgpt)" in cause, cause
    assert "vs 3, the last feature not rotated (B, odd=drop" in cause, cause


def test_a_rope_odd_policy_it_lacks_is_refused_naming_its_own(run: Callable[..., Result]) -> None:
    result = run("generate", "--kind", "rope", "--len", "4", "--dim", "7", "--odd", "zero")
    assert result.exit_code == 2
    assert "unknown odd 'zero': choose one of drop, truncate" in result.stderr
    result = run("generate", "--kind", "rope", "--len", "4", "--dim", "7", "--odd", "truncate", "--scaling", "linear")
    assert result.exit_code == 2 and "rotary-embedding-torch and litgpt build, without a scaling" in result.stderr
