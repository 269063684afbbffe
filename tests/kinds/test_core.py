"""The core against a float64 closed form, over random shapes, offsets and row ranges."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pecli import RecipeError, Sinusoidal
from pecli.kernels.exact import TWO_PI_DEC
from tests.helpers import reference, reference_tolerance

recipes = st.builds(
    Sinusoidal,
    length=st.integers(1, 40),
    dim=st.integers(1, 48),
    base=st.sampled_from([10000.0, 500000.0, 2.0, 1e4 + 0.5, 0.9]),
    layout=st.sampled_from(["interleaved", "split"]),
    start=st.one_of(st.integers(0, 100), st.integers(0, 2**31)),
    dtype=st.just("float64"),
)


@settings(max_examples=150, deadline=None)
@given(recipes)
def test_matches_float64_closed_form(recipe: Sinusoidal) -> None:
    got = recipe.build()
    ref = reference(recipe.length, recipe.dim, recipe.base, recipe.layout, recipe.start)
    tol = reference_tolerance(recipe.start, recipe.length) * max(1.0, 1 / recipe.base)
    np.testing.assert_allclose(got, ref, rtol=0, atol=tol)


@settings(max_examples=100, deadline=None)
@given(recipes, st.data())
def test_row_range_equals_rows_of_whole_table(recipe: Sinusoidal, data: st.DataObject) -> None:
    r0 = data.draw(st.integers(0, recipe.length - 1))
    r1 = data.draw(st.integers(r0, recipe.length))
    whole = recipe.build()
    # Bit-identical, not merely close: every element is computed on its own.
    assert np.array_equal(recipe.rows(r0, r1), whole[r0:r1])


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_narrow_dtypes_are_one_rounding_of_float64(dtype: str) -> None:
    wide = Sinusoidal(300, 33, start=12345, dtype="float64").build()
    narrow = Sinusoidal(300, 33, start=12345, dtype=dtype).build()
    assert np.array_equal(narrow, wide.astype(dtype))


def test_block_boundaries_do_not_change_values(monkeypatch: pytest.MonkeyPatch) -> None:
    import pecli.kernels.exact

    recipe = Sinusoidal(1000, 7, start=99, dtype="float64")
    whole = recipe.build()
    monkeypatch.setattr(pecli.kernels.exact, "BLOCK_CELLS", 5)  # forces many tiny kernel blocks
    assert np.array_equal(recipe.build(), whole)


def test_start_offset_shifts_rows() -> None:
    a = Sinusoidal(50, 16).build()
    b = Sinusoidal(40, 16, start=10).build()
    assert np.array_equal(a[10:], b)


def test_split_is_a_column_permutation_of_interleaved() -> None:
    for dim in (6, 7):
        inter = Sinusoidal(20, dim).build()
        split = Sinusoidal(20, dim, layout="split").build()
        order = list(range(0, dim, 2)) + list(range(1, dim, 2))
        assert np.array_equal(split, inter[:, order])


def test_position_zero_is_exact() -> None:
    row = Sinusoidal(1, 9, dtype="float64").build()[0]
    assert row.tolist() == [0, 1, 0, 1, 0, 1, 0, 1, 0]


def test_two_pi_constant_is_right() -> None:
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 70
    assert abs(mpmath.mpf(str(TWO_PI_DEC)) - 2 * mpmath.pi) < mpmath.mpf(10) ** -58


def test_rows_outside_table_refused() -> None:
    with pytest.raises(RecipeError, match="outside"):
        Sinusoidal(10, 4).rows(5, 11)


@pytest.mark.parametrize("layout", ["interleaved", "split", "cos-first"])
def test_pairs_are_the_columns_each_function_says(layout: str) -> None:
    """``pairs()`` and ``column_frequencies`` (all columns at once) against ``column(j)`` (the definition, one column at a
    time) for every width to 39, odd-width policy and frequency rule the kind accepts."""
    checked = 0
    for d, odd, freq in itertools.product(range(1, 40), ("sin", "zero", "truncate", "error"), ("paper", "half", "t2t")):
        try:
            r = Sinusoidal(1, d, layout=layout, odd=odd, freq=freq)  # type: ignore[arg-type]
        except RecipeError:
            continue
        sin_of = {i: j for j in range(d) for i, fn in [r.column(j)] if fn == "sin"}
        cos_of = {i: j for j in range(d) for i, fn in [r.column(j)] if fn == "cos"}
        both = sorted(sin_of.keys() & cos_of.keys())
        s, c = r.pairs()
        assert s.tolist() == [sin_of[i] for i in both] and c.tolist() == [cos_of[i] for i in both], (d, odd, freq)
        frequency, is_cos = r.column_frequencies(np.arange(d))
        assert [
            (int(i), "zero" if i < 0 else "cos" if c else "sin") for i, c in zip(frequency, is_cos, strict=True)
        ] == [r.column(j) for j in range(d)], (d, odd, freq)
        checked += 1
    assert checked > 300


def test_exponent_values_are_each_frequency_s_fraction_divided() -> None:
    """``exponent_values`` (all frequencies at once, for the fit) against ``exponent(i)`` (the
    definition, one fraction at a time), for every rule at odd and even widths."""
    for d, freq in itertools.product((4, 7, 10, 33, 512), ("paper", "half", "t2t")):
        r = Sinusoidal(1, d, freq=freq, odd="zero")  # type: ignore[arg-type]
        want = [num / den for num, den in (r.exponent(i) for i in range(r.sin_columns))]
        assert r.exponent_values(r.sin_columns).tolist() == want, (d, freq)
