"""List-valued parameters (LongRoPE's factors) said short in prose, whole in every spec."""

from __future__ import annotations

import pytest

from pecli import Rope
from pecli.lists import list_difference, short_list
from pecli.sources import parse_recipe

# 48 factors (Phi-3's count for a 96-wide head), written as a config writes them.
FACTORS = [1.05, 1.05, 1.05, 1.1, 1.1, 1.1, 1.2500000000000002, *[1.5] * 40, 2.000000000000001]
LONGROPE = {"length": 64, "dim": 96, "scaling": "longrope", "factor": 32.0, "original_max_position_embeddings": 4096}


def longrope(short: list[float]) -> Rope:
    return Rope(**LONGROPE, short_factor=short, long_factor=[2.0] * 48)


def test_a_long_list_is_said_by_its_first_items_last_and_count() -> None:
    text = ";".join(map(repr, FACTORS))
    assert short_list(text) == "1.05;1.05;1.05;…;2 (48 values)"
    assert short_list("1;2;3;4;5;6") is None  # six numbers are said whole
    assert short_list("text=8;image=4x4") is None  # not numbers
    assert short_list("1.5") is None


def test_two_lists_are_said_by_where_they_differ() -> None:
    a = ";".join(map(repr, FACTORS))
    moved = FACTORS.copy()
    moved[6] = 1.3
    assert (
        list_difference(a, ";".join(map(repr, moved)))
        == "1 of 48 values differs: [6] 1.2500000000000002 (A) vs 1.3 (B)"
    )
    many = [x + 1 for x in FACTORS[:5]] + FACTORS[5:]
    assert (
        list_difference(a, ";".join(map(repr, many)), ("", ""))
        == "5 of 48 values differ: [0] 1.05 vs 2.05, [1] 1.05 vs 2.05, [2] 1.05 vs 2.05, …"
    )
    assert list_difference(a, a.replace("1.5;", "1.50;")) is None  # the same numbers: no difference named
    assert list_difference("1;2;3", "1;2;4") is None  # short lists are said whole
    assert list_difference(a, "1;2") is None


def test_a_longrope_recipe_says_its_factors_short_and_its_spec_keeps_them() -> None:
    recipe = longrope(FACTORS)
    words = recipe.describe()
    assert "short_factor=1.05;1.05;1.05;…;2 (48 values)" in words
    assert "long_factor=2;2;2;…;2 (48 values)" in words
    assert "1.2500000000000002" not in words
    spec = recipe.spec()
    assert "1.2500000000000002" in spec
    assert parse_recipe(spec) == recipe  # rebuild it with: every factor


def test_a_changed_factor_is_named_with_its_index_and_both_values() -> None:
    moved = FACTORS.copy()
    moved[6] = 1.3
    assert longrope(FACTORS).changes(longrope(moved)) == [
        "short-factor: 1 of 48 values differs: [6] 1.2500000000000002 (A) vs 1.3 (B)"
    ]


@pytest.mark.parametrize("dim", [8, 12])
def test_short_factor_lists_are_still_said_whole(dim: int) -> None:
    half = dim // 2
    a = Rope(**{**LONGROPE, "dim": dim}, short_factor=[1.0] * half, long_factor=[2.0] * half)
    b = Rope(**{**LONGROPE, "dim": dim}, short_factor=[1.0] * (half - 1) + [3.0], long_factor=[2.0] * half)
    ones = ";".join(["1.0"] * half)
    assert f"short_factor={ones}" in a.describe()
    assert a.changes(b) == [f"short-factor {ones} (A) vs {';'.join(['1.0'] * (half - 1) + ['3.0'])} (B)"]
