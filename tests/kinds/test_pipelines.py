"""Precision pipelines (pecli.precision, issue 41): RoPE caches computed with inv_freq, the positions
or every step held in 16 bits, against an independent NumPy build of each report's code; diff names
each one in its own words and identify finds it from its tell."""

from __future__ import annotations

from typing import Any, get_args

import ml_dtypes
import numpy as np
import pytest

from pecli.diff.report import compare
from pecli.identification import identify
from pecli.kinds import kinds
from pecli.kinds.rope import Rope
from pecli.precision import PIPELINES, collapsed_rows
from pecli.table import Table
from tests.helpers import f32_step

BF16: Any = ml_dtypes.bfloat16
REDUCED = ("inv-float16", "inv-bfloat16", "positions-bfloat16", "bfloat16")


def torch_like(
    n: int, d: int, theta: float = 10000.0, compute: str = "float32", part: str = "cos", layout: str = "half"
) -> np.ndarray:
    """HF's ``LlamaRotaryEmbedding`` written out in NumPy with the report's casts: ``inv_freq =
    1 / theta ** (arange(0, d, 2).float() / d)`` in float32, then ``.half()``/``.bfloat16()`` with the
    model; positions ``arange(n, dtype=bfloat16)``; under bfloat16 the product and ``cos`` rounded to
    bfloat16 (torch evaluates a bfloat16 op in float32 and rounds).  Each float32 step rounded once."""
    e = np.arange(0, d, 2).astype(np.float32) / np.float32(d)
    inv = np.float32(1) / f32_step(np.power, np.float32(theta), e)
    if compute in ("inv-float16",):
        inv = inv.astype(np.float16).astype(np.float32)
    if compute in ("inv-bfloat16", "bfloat16"):
        inv = inv.astype(BF16).astype(np.float32)
    pos = np.arange(n).astype(np.float32)
    if compute in ("positions-bfloat16", "bfloat16"):
        pos = pos.astype(BF16).astype(np.float32)
    angle = pos[:, None] * inv[None, :]
    if compute == "bfloat16":
        angle = angle.astype(BF16).astype(np.float32)
    value = f32_step(np.cos if part == "cos" else np.sin, angle)
    if compute == "bfloat16":
        value = value.astype(BF16).astype(np.float32)
    return np.concatenate([value, value], 1) if layout == "half" else np.repeat(value, 2, axis=1)


@pytest.mark.parametrize("compute", ["float32", *REDUCED])
@pytest.mark.parametrize(("n", "d", "theta", "part", "layout"), [
    (4096, 128, 10000.0, "cos", "half"),
    (700, 64, 500000.0, "sin", "pairs"),
    (3, 8, 1000000.0, "cos", "half"),
])  # fmt: skip
def test_each_pipeline_is_the_reports_code_bit_for_bit(
    compute: str, n: int, d: int, theta: float, part: str, layout: str
) -> None:
    ours = Rope(n, d, base=theta, compute=compute, part=part, layout=layout).build()  # type: ignore[arg-type]
    np.testing.assert_array_equal(ours, torch_like(n, d, theta, compute, part, layout))
    # any row range has the whole table's bits
    np.testing.assert_array_equal(
        Rope(n, d, base=theta, compute=compute, part=part, layout=layout).rows(n // 2, n), ours[n // 2 :]
    )  # type: ignore[arg-type]


def test_positions_in_bfloat16_repeat_the_rows_the_registry_says() -> None:
    table = Rope(8192, 16, compute="positions-bfloat16").build()
    same = np.flatnonzero(np.all(table[1:] == table[:-1], axis=1)) + 1
    assert same[0] == 257  # 256 and 257 are one bfloat16 number
    assert collapsed_rows(0, 8192, "bfloat16") == (8176, 8191)  # 8176…8191 round to 8192
    assert np.all(table[8176:] == table[8191]) and not np.array_equal(table[8175], table[8176])
    assert collapsed_rows(0, 256, "bfloat16") is None and collapsed_rows(0, 8192, "float32") is None


EXPECTED = {
    "inv-float16": "inv_freq rounded to float16 in A",
    "inv-bfloat16": "inv_freq rounded to bfloat16 in A",
    "positions-bfloat16": "positions held in bfloat16 in A: rows 4088–4095 equal",
    "bfloat16": "every step in bfloat16 in A: rows 4088–4095 equal",
}


@pytest.mark.parametrize("compute", REDUCED)
# against a plain array diff identifies it first (~2 s each): the slow group; the recipe as the quick sibling
@pytest.mark.parametrize("reference", ["recipe", pytest.param("array", marks=pytest.mark.slow)])
def test_diff_names_each_pipeline_in_its_own_words(compute: str, reference: str) -> None:
    a = Table(torch_like(4096, 128, compute=compute), None, "mine.npy")
    recipe = Rope(4096, 128)
    b = Table.from_recipe(recipe) if reference == "recipe" else Table(recipe.build(), None, "theirs.npy")
    c = compare(a, b)
    assert not c.same and c.explanations, c
    cause = c.explanations[0]
    assert cause.detail.startswith(EXPECTED[compute]), cause.detail
    assert f"compute={compute}" in cause.detail and cause.residual == 0
    # and the other way round: B carries it
    back = compare(b, a).explanations[0]
    assert back.detail.startswith(EXPECTED[compute].replace(" in A", " in B")) or back.detail.startswith(
        EXPECTED[compute].replace("in A", "(B)")
    ), back.detail


def test_two_reduced_pipelines_are_said_side_by_side() -> None:
    a = Rope(600, 32, compute="inv-float16")
    b = Rope(600, 32, compute="inv-bfloat16")
    assert a.pipeline_change(b) == "inv_freq rounded to float16 (A) vs inv_freq rounded to bfloat16 (B)"
    assert Rope(600, 32).pipeline_change(Rope(600, 32, compute="exact")) is None  # said as a parameter


@pytest.mark.parametrize("compute", REDUCED)
@pytest.mark.parametrize(("n", "d", "theta", "part", "layout"), [
    (4096, 128, 10000.0, "cos", "half"),
    (2048, 64, 500000.0, "sin", "pairs"),
])  # fmt: skip
def test_identify_finds_each_pipeline_from_its_tell(
    compute: str, n: int, d: int, theta: float, part: str, layout: str
) -> None:
    found = identify(Table(torch_like(n, d, theta, compute, part, layout), None, "mine.npy"))
    assert found.verdict == "match" and found.best is not None, found.summary
    r = found.best.recipe
    assert isinstance(r, Rope)
    assert (r.compute, r.base, r.part, r.layout) == (compute, theta, part, layout), found.summary
    assert "bit for bit" in found.summary


def test_a_float32_cache_is_never_named_a_reduced_pipeline() -> None:
    found = identify(Table(torch_like(4096, 128), None, "mine.npy"))
    assert found.best is not None and found.best.recipe.pipeline() == "float32", found.summary


def test_every_kinds_compute_is_in_the_pipeline_registry() -> None:
    for kind, cls in kinds().items():
        from typing import get_type_hints

        hint = get_type_hints(cls).get("compute")
        assert hint is None or set(get_args(hint)) <= set(PIPELINES), kind


def test_a_pipeline_a_kind_does_not_have_is_one_line_naming_the_ones_it_has() -> None:
    from click.testing import CliRunner

    from pecli.cli import cli

    result = CliRunner().invoke(
        cli, ["generate", "--kind", "sinusoidal", "--len", "8", "--dim", "8", "--compute", "inv-float16"]
    )
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "unknown compute 'inv-float16': choose one of exact, float64, float32, bfloat16" in result.stderr


def test_identify_says_which_pipeline_a_short_table_cannot_tell() -> None:
    # Positions held in bfloat16 are exact below 257 (256 and 257 are one bfloat16 number): a
    # 200-row cache is the float32 one bit for bit, and identify says so with the row that would tell.
    found = identify(Table(torch_like(200, 64), None, "mine.npy"))
    assert found.verdict == "match"
    assert "positions held in bfloat16 build the same 200 rows (a table cannot tell them apart before row 257)" in (
        found.notes
    )
    np.testing.assert_array_equal(torch_like(257, 64, compute="positions-bfloat16")[:200], torch_like(200, 64))
    longer = identify(Table(torch_like(300, 64), None, "mine.npy"))
    assert not any("cannot tell" in n for n in longer.notes)
