"""``Recipe.canonical()``: recipes with equal canonical forms build the same bits, so identify and
the proof build, score and prove them once (a sinusoid's odd-width policy on an even dim, and its
``freq=half`` on an even frequency width, which is the paper's rule).  The truth is each recipe's
own build: the canonical form must rebuild it bit for bit, at every row and through every path
identify reads (whole rows, a few columns)."""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import get_args

import numpy as np
import pytest

from pecli.errors import RecipeError
from pecli.kinds.sinusoidal import Compute, Form, Freq, Layout, Odd, Sinusoidal
from pecli.proof import verify, verify_all
from pecli.recipe import Recipe
from pecli.table import Table
from tests.helpers import load_script

roundtrip = load_script("identify_roundtrip")


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def assert_twins(recipe: Recipe) -> None:
    twin = recipe.canonical()
    assert twin.canonical() == twin  # canonical twice is canonical once
    assert type(twin) is type(recipe) and twin.shape == recipe.shape
    assert same_bits(np.asarray(twin.build()), np.asarray(recipe.build())), (recipe, twin)
    n, d = recipe.shape
    rows, cols = np.arange(0, n, max(1, n // 5)), np.arange(0, d, max(1, d // 7))
    mine, theirs = recipe.columns_at(rows, cols), twin.columns_at(rows, cols)
    assert (mine is None) == (theirs is None)
    if mine is not None and theirs is not None:
        assert same_bits(np.asarray(theirs), np.asarray(mine)), (recipe, twin)


def sinusoids() -> list[Sinusoidal]:
    """Every form, pipeline, layout, frequency rule and odd-width policy, at even and odd widths."""
    out = []
    for form, compute, layout, freq, odd, dim in itertools.product(
        get_args(Form), get_args(Compute), get_args(Layout), get_args(Freq), get_args(Odd), (6, 7, 96)
    ):
        try:
            out.append(Sinusoidal(300, dim, 10000.0, layout, 5, "float32", freq, 1.0, odd, None, compute, form))
        except RecipeError:
            continue
    return out


def test_a_sinusoid_and_its_canonical_form_are_the_same_bits() -> None:
    recipes = sinusoids()
    merged = [r for r in recipes if r.canonical() != r]
    # freq=half at an even width, and every odd-width policy but sin at an even dim, are merged.
    assert {(r.freq, r.odd) for r in merged if r.dim == 96} == {
        (f, o)
        for f in ("paper", "t2t", "half")
        for o in ("sin", "zero", "truncate", "error")
        if (f, o) != ("paper", "sin")
    } - {("t2t", "sin")}
    assert not [r for r in merged if r.dim == 7 and r.odd != "truncate"]  # an odd width's policy is its table
    for recipe in merged:
        assert_twins(recipe)


def test_other_scales_timescales_and_bases_too() -> None:
    for compute, form in itertools.product(("float32", "float64", "bfloat16", "exact"), ("exp", "pow", "exp-div")):
        if compute == "exact" and form != "exp":
            continue
        recipe = Sinusoidal(
            64, 128, 500.0, dtype="float32", freq="half", odd="zero", compute=compute, form=form, scale=0.125
        )
        assert_twins(recipe)
        assert_twins(replace(recipe, min_timescale=2.0, start=4000))


def test_an_inv_freq_row_is_the_same_bits_in_every_layout() -> None:
    """Drawn rotary recipes (every scaling, pipeline and form the draws reach) as inv_freq rows in
    each layout: one canonical form, the half layout's, and its bits."""
    from pecli.kinds.rope import Rope, RopeLayout

    rows = 0
    for _, drawn in roundtrip.draws(40, 5, only=("rope",)):
        assert isinstance(drawn, Rope)
        for layout in get_args(RopeLayout):
            try:
                recipe = replace(drawn, part="inv_freq", length=1, layout=layout)
            except RecipeError:
                continue
            assert recipe.canonical().layout == "half"
            assert_twins(recipe)
            rows += 1
        if drawn.part != "inv_freq":
            assert drawn.canonical() == drawn  # a cache's layout is where its waves go: its own
    assert rows > 60


@pytest.mark.parametrize("seed", [3, 11])
def test_every_kind_s_canonical_form_rebuilds_its_drawn_recipes(seed: int) -> None:
    for _, recipe in roundtrip.draws(60, seed):
        assert_twins(recipe)


def test_the_proof_proves_twins_once_and_gives_each_its_own_verification() -> None:
    paper = Sinusoidal(200, 64, dtype="float32", compute="float32")
    half, zero = replace(paper, freq="half"), replace(paper, odd="zero")
    other = replace(paper, form="pow")
    table = Table(np.asarray(paper.build()), None, "t.npy")
    table_ = Table(np.asarray(other.build()), None, "t.npy")
    checks = [(paper, 1e-7), (half, 1e-7), (other, 1e-7), (zero, 1e-7), (half, 0.0)]
    for t in (table, table_):
        assert verify_all(t, checks) == [verify(t, recipe, atol) for recipe, atol in checks]
