"""``Recipe.columns_at``: a few columns of a table computed without the others, as ``rows`` gives them.

identify screens a wide table's candidates on a few columns (issue 44); a screen that disagreed
with the rows would drop the recipe that made the table.  The truth here is the kind's own
``rows`` (itself checked against float64 formulas and the frameworks elsewhere), cell by cell.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from pecli.kinds import kinds
from pecli.kinds.sinusoidal import Sinusoidal
from pecli.recipe import Recipe

ROWS = np.array([0, 1, 2, 7, 63, 64, 199])


def _columns(d: int) -> np.ndarray:
    """Columns spread over the width, both ends, and both members of some pairs."""
    picked = np.unique(np.r_[0, 1, 2, d // 3, d // 3 + 1, np.linspace(0, d - 1, 13).round().astype(int), d - 2, d - 1])
    return picked[(picked >= 0) & (picked < d)]


def _assert_columns_are_rows(recipe: Recipe, rows: np.ndarray = ROWS) -> None:
    """``columns_at(rows, cols)`` is ``rows()``'s cells at those rows and columns: dtype and bits."""
    cols = _columns(recipe.shape[1])
    got = recipe.columns_at(rows, cols)
    assert got is not None
    want = recipe.rows(0, recipe.shape[0])[np.ix_(rows, cols)]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


SINUSOIDS = [
    Sinusoidal(200, d, layout=layout, compute=compute, form=form, dtype=dtype)
    for d, layout, (compute, form), dtype in itertools.product(
        (8, 33, 512),
        ("interleaved", "split", "cos-first"),
        (
            ("exact", "exp"),
            ("float64", "exp"),
            ("float32", "exp"),
            ("float32", "div"),
            ("float32", "inv-pow"),
            ("float64", "pow"),
            ("bfloat16", "inv-pow"),
            ("bfloat16", "exp"),
        ),
        ("float32", "float64"),
    )
] + [
    Sinusoidal(200, 33, odd="zero", freq="t2t", compute="float32", start=5),
    Sinusoidal(200, 33, odd="truncate", freq="half"),
    Sinusoidal(200, 64, padding_idx=1, compute="float32"),
    Sinusoidal(200, 64, scale=64**-0.5, compute="float32", form="neg-pow"),
    Sinusoidal(200, 64, scale=64**-0.5),
    Sinusoidal(200, 64, base=500000.0, min_timescale=2.0, start=1000),
    Sinusoidal(200, 64, compute="bfloat16", form="inv-pow", start=1000),  # positions held in bfloat16 repeat
    Sinusoidal(200, 20000),  # a float32 exact table too wide to rotate: rows are the cells rounded once
]


def _params(recipes: list[Recipe], quick: Callable[[Recipe], bool]) -> list[Any]:
    """One case per pipeline in the quick suite, every other layout, width and dtype in CI's slow group."""
    return [
        pytest.param(r, id=r.describe(short=True).replace(" ", ","), marks=() if quick(r) else pytest.mark.slow)
        for r in recipes
    ]


@pytest.mark.parametrize(
    "recipe", _params(SINUSOIDS, lambda r: getattr(r, "layout", "") == "interleaved" and r.dtype == "float32")
)
def test_sinusoid_columns_are_its_rows(recipe: Sinusoidal) -> None:
    cols = _columns(recipe.dim)
    got = recipe.columns_at(ROWS, cols)
    assert got is not None
    want = recipe.rows(0, recipe.shape[0])[np.ix_(ROWS, cols)]
    assert got.dtype == want.dtype
    if recipe.compute == "exact" and recipe.dtype == "float32" and recipe.dim < 20000:
        # rows() rotates float32 exact tables: the same rounding by another route, an ulp at most.
        np.testing.assert_array_max_ulp(got, want, maxulp=1)
    else:
        np.testing.assert_array_equal(got, want)


def test_a_kind_without_its_own_columns_says_so() -> None:
    """The default: None (identify then builds whole rows), never a made-up block."""
    learned = kinds()["learned"](10, 8, rng="pcg64")  # a row is one stream
    assert learned.columns_at(np.arange(3), np.arange(2)) is None
    assert Sinusoidal(10, 8, dtype="bfloat16").columns_at(np.arange(3), np.arange(2)) is None
    assert kinds()["rope"](10, 8, dtype="float16").columns_at(np.arange(3), np.arange(2)) is None


def _ropes() -> list[Recipe]:
    rope = kinds()["rope"]
    out: list[Recipe] = [
        rope(200, d, layout=layout, part=part, compute=compute, dtype=dtype)
        for d, layout, part, compute, dtype in itertools.product(
            (8, 128),
            ("half", "pairs", "once"),
            ("cos", "sin", "angle"),
            ("float32", "exact", "inv-bfloat16", "positions-bfloat16", "bfloat16"),
            ("float32", "float64"),
        )
    ]
    out += [
        rope(200, 64, part="cos-sin"),
        rope(200, 64, part="cis", compute="exact", dtype="float64"),
        rope(200, 7, odd="truncate"),
        rope(200, 7, layout="pairs"),
        rope(200, 128, scaling="yarn", factor=4.0, original_max_position_embeddings=64, start=3000),
        rope(
            200,
            128,
            scaling="llama3",
            factor=8.0,
            original_max_position_embeddings=64,
            low_freq_factor=1.0,
            high_freq_factor=4.0,
        ),
        rope(200, 128, scaling="proportional", partial_rotary_factor=0.25, form="neg-pow", base=500000.0),
    ]
    return out


@pytest.mark.parametrize(
    "recipe",
    _params(_ropes(), lambda r: getattr(r, "layout", "") == "half" and r.dtype == "float32" and r.shape[1] != 8),
)
def test_rope_columns_are_its_rows(recipe: Recipe) -> None:
    """Every pipeline step is elementwise, so a column alone has the bits it has among all."""
    _assert_columns_are_rows(recipe)


#: Parameters of each scaling for the exact recipes below (a new scaling adds its own here).
_SCALED: dict[str, dict[str, Any]] = {
    "default": {},
    "linear": {"factor": 4.0},
    "dynamic": {"factor": 2.0, "original_max_position_embeddings": 64},
    "yarn": {"factor": 4.0, "original_max_position_embeddings": 64},
    "longrope": {
        "factor": 4.0,
        "original_max_position_embeddings": 64,
        "short_factor": ";".join(["1.0"] * 64),
        "long_factor": ";".join(f"{1 + k / 8:g}" for k in range(64)),
    },
    "llama3": {"factor": 8.0, "original_max_position_embeddings": 64, "low_freq_factor": 1.0, "high_freq_factor": 4.0},
    "proportional": {"partial_rotary_factor": 0.25},
    "keras-dynamic": {"factor": 2.0},
    "litgpt-yarn": {"factor": 4.0, "original_max_position_embeddings": 64},
}


@pytest.mark.parametrize("compute", ["exact", "float32", "inv-float16", "bfloat16"])
@pytest.mark.parametrize("scaling", list(_SCALED))
def test_a_rope_s_columns_and_frequencies_alone_are_its_rows_in_every_scaling(scaling: str, compute: str) -> None:
    """A recipe computes the frequencies of the screened columns alone, each scaling from the
    frequencies' indices (an exact recipe's 60-digit powers cost ~8 µs each, a 3·10⁶-wide
    row's float32 ones 20 ms): the values they have among all, in every pipeline and form."""
    from pecli.kernels.rope_scaling import SCALINGS

    assert set(_SCALED) == set(SCALINGS)  # every scaling of the registry has its case
    rope = kinds()["rope"]
    for form in SCALINGS[scaling].forms if compute != "exact" else ("pow",):
        recipe = rope(200, 128, scaling=scaling, compute=compute, form=form, dtype="float64", **_SCALED[scaling])
        used = np.array([0, 1, 5, 31, 32, 63])
        np.testing.assert_array_equal(recipe.inv_freq_at(used), recipe.inv_freq()[used])  # type: ignore[attr-defined]
        _assert_columns_are_rows(recipe)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_an_inv_freq_row_s_columns_are_its_row(dtype: str) -> None:
    """An ``inv_freq`` row is the frequencies themselves: a few of them, cast as the row casts
    them, in every dtype (identify screens a 3·10⁶-wide row's candidates on 1024 of them)."""
    rope = kinds()["rope"]
    for compute, scaling in itertools.product(("exact", "float32", "inv-bfloat16"), ("default", "llama3", "yarn")):
        recipe = rope(1, 256, part="inv_freq", compute=compute, scaling=scaling, dtype=dtype, **_SCALED[scaling])
        cols = _columns(recipe.shape[1])
        got = recipe.columns_at(np.zeros(2, dtype=np.intp), cols)
        assert got is not None
        want = recipe.rows(0, 1)[[0, 0]][:, cols]
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def _grids() -> list[Recipe]:
    """Every sincos2d preset at a small grid, and each order in each pipeline, dtype and frequency
    rule it takes (a combination the kind refuses is left out)."""
    from pecli.errors import RecipeError
    from pecli.presets import PRESETS

    sincos2d = kinds()["sincos2d"]
    out: list[Recipe] = [
        p.recipe(grid="2x3x4" if p.params.get("order") == "cogvideox" or "3d" in p.name else "5x6", dim=48)
        for p in PRESETS.values()
        if p.kind == "sincos2d"
    ]
    orders = ("mae", "timm", "timm-interleave", "timm-reverse", "timm-reverse-interleave", "tatp", "cogvideox", "loftr")
    for order, grid, compute, dtype, freq, extra in itertools.product(
        orders,
        ("5x6", "2x3x4"),
        ("exact", "float32", "float64"),
        ("float32", "float64", "float16", "bfloat16"),
        ("paper", "t2t", "loftr-bug"),
        ({}, {"cls": True}, {"extra_tokens": 3}, {"coords": "detr"}, {"base_size": 4, "interpolation_scale": 2.0}),
    ):
        try:
            out.append(sincos2d(grid, 48, order=order, compute=compute, dtype=dtype, freq=freq, **extra))
        except RecipeError:
            continue
    out.append(sincos2d("5x6", 48, max_size=9, compute="float32"))  # SD3's centred crop
    out.append(sincos2d("5x6", 46, order="tatp"))  # tatp's last axis cut at the width
    return out


@pytest.mark.parametrize(
    "recipe",
    _params(
        _grids(),
        lambda r: r.dtype == "float32" and r.compute in ("exact", "float32") and not getattr(r, "cls", False),
    ),
)
def test_sincos2d_columns_are_its_rows(recipe: Recipe) -> None:
    """Each column's axis, frequency and function, read from the order's own arrangement, and
    each value on its own: the bits ``rows`` gives, the class-token rows and 3-D mae's zero
    columns included."""
    n = recipe.shape[0]
    _assert_columns_are_rows(recipe, np.unique(np.r_[0, 1, 2, 3, n // 2, n - 2, n - 1]))


@pytest.mark.parametrize("compiled", ["0", "1"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_learned_columns_are_its_rows(dtype: str, compiled: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """pecli's splitmix draws are one per cell: a few columns alone are the values ``rows`` gives
    (the compiled loop's, where numba is installed, and NumPy's), in both inits, with rows in front."""
    monkeypatch.setenv("PECLI_COMPILED", compiled)
    learned = kinds()["learned"]
    for extra in ({}, {"init": "truncated-normal"}, {"padding_idx": 1}, {"offset": 2, "seed": 42, "std": 0.5}):
        _assert_columns_are_rows(learned(300, 4000, dtype=dtype, **extra))
