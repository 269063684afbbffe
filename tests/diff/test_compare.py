"""The diff engine: element statistics against plain NumPy, and each suspect on its own case."""

from __future__ import annotations

import json
import math
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import pecli.diff.evidence
import pecli.table
from pecli import PecliInputError, Sinusoidal
from pecli.diff.causes import explain
from pecli.diff.report import Comparison, compare, metadata_differences
from pecli.table import Table
from tests.helpers import f32_step, fast_math


def plain(x: np.ndarray, name: str = "array") -> Table:
    return Table(np.asarray(x), None, name)


def recipe(**kw: object) -> Table:
    return Table.from_recipe(Sinusoidal(**kw))  # type: ignore[arg-type]


def names(c: Comparison) -> list[str]:
    return [e.name for e in c.explanations]


def float32_angles(length: int, dim: int, start: int = 0, fast_sin: bool = False) -> np.ndarray:
    """A hand-written PyTorch implementation (`denom = torch.pow(10000, 2 * i / d_model)`, `angle = pos / denom`),
    step for step in float32 (angles formed in float32), each step rounded once (:func:`tests.helpers.f32_step`) so
    the table is the same on every CPU.  ``fast_sin``: sin and cos of the angle reduced modulo float32(2π) in
    float32 (:func:`tests.helpers.fast_math`): no float32 pipeline of pecli's emulates that."""
    pos = np.arange(start, start + length, dtype=np.float32)[:, None]
    i = np.arange(0, dim // 2, dtype=np.float32)
    denom = f32_step(np.power, np.float32(10000), 2 * i / np.float32(dim))
    angle = pos / denom
    if fast_sin:
        angle = fast_math(angle)
    pe = np.zeros((length, dim), dtype=np.float32)
    pe[:, 0::2] = f32_step(np.sin, angle)
    pe[:, 1::2] = f32_step(np.cos, angle)
    return pe


def wrong_formula(length: int, dim: int) -> np.ndarray:
    """The common wrong formula, as a blog walkthrough's code block has it: angle = (pos/10000) ** (2i/d)."""
    a = np.arange(0, length, dtype=np.float32) / np.float32(10000)
    a = np.repeat(a[:, None], dim // 2, axis=1)
    e = np.arange(0, dim // 2, dtype=np.float32) * 2 / np.float32(dim)
    a = np.power(a, e[None, :])
    pe = np.empty((length, dim), dtype=np.float32)
    pe[:, ::2] = np.sin(a)
    pe[:, 1:dim:2] = np.cos(a)
    return pe


# -- verdicts and element statistics ---------------------------------------------------------
def test_identical_tables_are_the_same() -> None:
    c = compare(recipe(length=50, dim=8), plain(Sinusoidal(50, 8).build()))
    assert c.same and c.exit_code == 0
    assert (c.compared, c.mismatched, c.max_abs, c.max_abs_at, c.rms) == (400, 0, 0.0, None, 0.0)
    assert c.worst == [] and c.worst_rows == [] and c.explanations == []


def test_one_changed_element_is_counted_and_located() -> None:
    b = Sinusoidal(50, 8, start=5).build()
    a = b.copy()
    a[7, 3] = np.float32(0.25)
    c = compare(plain(a), recipe(length=50, dim=8, start=5))
    assert not c.same and c.exit_code == 1
    assert (c.compared, c.mismatched, c.nonfinite_mismatched) == (400, 1, 0)
    at = c.max_abs_at
    assert at is not None
    # Positions are B's: start 5 + row 7.
    assert (at.position, at.dim, at.a, at.b) == (12, 3, 0.25, float(b[7, 3]))
    assert c.max_abs == at.abs == abs(0.25 - float(b[7, 3]))
    assert at.rel == pytest.approx(at.abs / abs(float(b[7, 3])))
    assert c.worst == [at]
    assert [(r.position, r.max_abs, r.mismatched) for r in c.worst_rows] == [(12, at.abs, 1)]
    assert c.rms == pytest.approx(at.abs / math.sqrt(400))
    assert c.explanations == []


def test_tolerance_is_numpys_and_b_is_the_reference() -> None:
    zero, one = plain(np.array([[0.0]])), plain(np.array([[1.0]]))
    # |a − b| = 1 ≤ rtol·|b| = 1 with b = 1, but not with b = 0.
    assert compare(zero, one, rtol=1.0).same
    assert not compare(one, zero, rtol=1.0).same
    assert compare(one, zero, atol=1.0).same


finite_or_not = st.floats(allow_nan=True, allow_infinity=True, width=64) | st.sampled_from([0.0, 1.0, -1.0])


def _mismatch_counts_match_np_isclose(draws: int) -> None:
    """``compare``'s mismatch count is ``np.isclose``'s, on ``draws`` drawn pairs of small tables
    (near each other, unrelated, with NaN and infinities), for any tolerances and NaN policy."""

    @settings(max_examples=draws, deadline=None, database=None)
    @given(
        st.data(),
        st.tuples(st.integers(1, 6), st.integers(1, 6)),
        st.floats(0, 10),
        st.floats(0, 2),
        st.booleans(),
    )
    def check(data: st.DataObject, shape: tuple[int, int], atol: float, rtol: float, equal_nan: bool) -> None:
        b = data.draw(hnp.arrays(np.float64, shape, elements=finite_or_not))
        noise = data.draw(
            hnp.arrays(np.float64, shape, elements=st.sampled_from([0.0, 0.0, 1e-3, 1.0, np.nan, np.inf]))
        )
        other = data.draw(hnp.arrays(np.float64, shape, elements=finite_or_not))
        with np.errstate(invalid="ignore", over="ignore"):
            # Mostly near B (so tolerances matter), sometimes unrelated values.
            a = np.where(data.draw(hnp.arrays(np.bool_, shape)), other, b + noise)
            expected = int((~np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)).sum())
        c = compare(plain(a), plain(b), atol=atol, rtol=rtol, equal_nan=equal_nan)  # suspects run too: no crash
        assert c.mismatched == expected
        assert c.same == (expected == 0)
        json.dumps(c.to_dict(), allow_nan=False)

    check()


def test_mismatch_count_matches_np_isclose() -> None:
    # 40 draws here (each runs every suspect: ~0.12 s a draw); the 200 of CI's slow group below.
    _mismatch_counts_match_np_isclose(40)


@pytest.mark.slow
def test_mismatch_count_matches_np_isclose_on_many_draws() -> None:
    _mismatch_counts_match_np_isclose(200)


def test_nan_policy() -> None:
    b = np.array([[np.nan, 1.0, np.inf, np.inf]])
    same_places = plain(b.copy())
    assert compare(same_places, plain(b)).same  # NaN ↔ NaN and +inf ↔ +inf are equal by default
    strict = compare(same_places, plain(b), equal_nan=False)
    assert (strict.mismatched, strict.nonfinite_mismatched) == (1, 1)
    c = compare(plain(np.array([[1.0, np.nan, -np.inf, np.inf]])), plain(b))
    # NaN vs 1, 1 vs NaN, -inf vs +inf differ; +inf vs +inf does not.
    assert (c.mismatched, c.nonfinite_mismatched) == (3, 3)
    assert c.max_abs == math.inf and c.max_abs_at is not None and c.max_abs_at.dim == 0
    assert c.rms is None  # no element has two finite values
    assert c.to_dict()["max_abs"] is None
    json.dumps(c.to_dict(), allow_nan=False)


@pytest.mark.parametrize(
    ("a_shape", "b_shape"),
    [((10, 8), (11, 8)), ((10, 8), (10, 6)), ((1, 1), (3, 2))],
)
def test_shape_mismatch_is_a_difference_without_element_statistics(
    a_shape: tuple[int, int], b_shape: tuple[int, int]
) -> None:
    rng = np.random.default_rng(1)
    c = compare(plain(rng.normal(size=a_shape)), plain(rng.normal(size=b_shape)))
    assert not c.same and c.exit_code == 1 and not c.shapes_match
    assert (c.shape_a, c.shape_b) == (a_shape, b_shape)
    assert (c.compared, c.mismatched, c.max_abs, c.max_rel, c.max_ulp, c.rms) == (0, 0, None, None, None, None)
    assert c.explanations == []
    data = c.to_dict()
    json.dumps(data, allow_nan=False)
    assert data["a"]["shape"] == list(a_shape) and data["exit_code"] == 1


def exact_eighths(rng: np.random.Generator, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """B and A = B + {0, 1/8, 1/2, 1}: differences are exact, with many ties."""
    b = rng.integers(-100, 100, size=shape) / 8.0
    a = b + rng.choice([0.0, 0.0, 0.0, 0.125, 0.5, 1.0], size=shape)
    return a, b


def test_streaming_matches_whole_array_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(7)
    a, b = exact_eighths(rng, (203, 7))
    b[b == 0] = 0.25  # every b non-zero, so rel is defined everywhere
    a[150, 2] = b[150, 2] + 3.0  # a unique maximum late in the table
    whole = compare(plain(a), plain(b), atol=0.2, top=12, suspects=False)
    monkeypatch.setattr(pecli.table, "BLOCK_BYTES", 5 * 7 * 8)  # 5-row blocks: 41 of them
    blocked = compare(plain(a), plain(b), atol=0.2, top=12, suspects=False)
    assert blocked == whole

    diff = np.abs(a - b)
    assert blocked.mismatched == int((~np.isclose(a, b, rtol=0, atol=0.2)).sum())
    assert blocked.max_abs == 3.0 and blocked.max_abs_at is not None
    assert (blocked.max_abs_at.position, blocked.max_abs_at.dim) == (150, 2)
    rel = diff / np.abs(b)
    r, c = (int(i) for i in np.unravel_index(np.argmax(rel), rel.shape))  # first occurrence wins ties
    assert blocked.max_rel == rel.max() and blocked.max_rel_at is not None
    assert (blocked.max_rel_at.position, blocked.max_rel_at.dim) == (r, c)
    assert blocked.rms == pytest.approx(math.sqrt(np.mean(diff**2)), rel=1e-12)
    # Worst elements: largest first, ties in row-major order.
    flat = diff.ravel()
    order = np.lexsort((np.arange(flat.size), -flat))[:12]
    assert [(e.position, e.dim, e.abs) for e in blocked.worst] == [(i // 7, i % 7, flat[i]) for i in order]
    row_max = diff.max(axis=1)
    rows = np.lexsort((np.arange(row_max.size), -row_max))[:12]
    far = ~np.isclose(a, b, rtol=0, atol=0.2)
    assert [(w.position, w.max_abs, w.mismatched) for w in blocked.worst_rows] == [
        (r, row_max[r], int(far[r].sum())) for r in rows
    ]


def test_streaming_over_recipe_blocks_sees_every_row(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pecli.table, "BLOCK_BYTES", 3 * 9 * 8)
    b = Sinusoidal(100, 9, start=3, dtype="float64").build()
    a = b.copy()
    a[[0, 41, 99], [8, 0, 4]] += [1e-3, 2e-3, 3e-3]
    seen: list[int] = []
    c = compare(plain(a), recipe(length=100, dim=9, start=3, dtype="float64"), progress=seen.append)
    assert sum(seen) == 100 and len(seen) == 34
    assert c.mismatched == 3
    assert [(e.position, e.dim) for e in c.worst] == [(102, 4), (44, 0), (3, 8)]


def test_ulp_distance_is_in_the_references_dtype() -> None:
    one = np.array([[1.0]], dtype=np.float32)
    up = np.nextafter(one, np.float32(2))
    assert compare(plain(up), plain(one)).max_ulp == 1.0
    assert compare(plain(up.astype(np.float64)), plain(one)).max_ulp == 1.0
    two_up = np.nextafter(up, np.float32(2))
    assert compare(plain(two_up), plain(one)).max_ulp == 2.0
    # Units are representable values of B's dtype: the neighbour below 1.0 is 1 ulp away too.
    assert compare(plain(np.nextafter(one, np.float32(0))), plain(one)).max_ulp == 1.0
    # Across zero the count stays meaningful (spacing(0) would make this ~1e44).
    zero = np.zeros((1, 1), np.float32)
    assert compare(plain(zero), plain(one)).max_ulp == float(0x3F800000)
    assert compare(plain(-zero), plain(zero), suspects=False).max_ulp == 0.0
    tiny = np.array([[np.finfo(np.float32).smallest_subnormal]], np.float32)
    assert compare(plain(-tiny), plain(tiny), suspects=False).max_ulp == 2.0
    h = np.array([[0.5]], dtype=np.float16)
    assert compare(plain(np.nextafter(h, np.float16(1))), plain(h)).max_ulp == 1.0
    # Ulps are counted in the narrower dtype of the two (diff's rule, like assert_array_max_ulp):
    # float32 1.0000001 against float64 1.0 is 1 float32 ulp (it would be 2**29 float64 ulps).
    c = compare(plain(up), plain(one.astype(np.float64)))
    assert c.max_ulp == 1.0 and c.ulp_dtype == "float32"
    assert compare(plain(np.array([[1]])), plain(np.array([[2]]))).max_ulp is None  # integer reference


def test_to_dict_is_json_ready_and_keeps_each_dtypes_shortest_values() -> None:
    b = Sinusoidal(20, 4).build()
    a = b.copy()
    a[2, 0] = np.nan
    a[3, 1] = np.float32(0.1)
    c = compare(plain(a, "a.npy"), recipe(length=20, dim=4))
    data = json.loads(json.dumps(c.to_dict(), allow_nan=False))
    assert data["a"] == {"source": "a.npy", "shape": [20, 4], "dtype": "float32"}
    assert data["mismatched"] == 2 and data["nonfinite_mismatched"] == 1
    worst = {(w["position"], w["dim"]): w for w in data["worst"]}
    assert worst[(2, 0)]["a"] is None and worst[(2, 0)]["abs"] is None
    assert worst[(3, 1)]["a"] == 0.1  # float32 0.1 written as 0.1, not 0.10000000149011612
    assert data["tolerance"] == {"atol": 0.0, "rtol": 0.0, "ulps": 0, "equal_nan": True}


def test_metadata_differences_compare_recipes_not_versions() -> None:
    a = recipe(length=10, dim=8, base=500000.0, start=2)
    b = recipe(length=10, dim=8)
    assert metadata_differences(a, b) == [("base", 500000.0, 10000.0), ("start", 2, 0)]
    assert metadata_differences(b, recipe(length=10, dim=8)) == []
    only_b = metadata_differences(plain(np.zeros((10, 8))), b)
    assert only_b == [
        ("recipe", None, "sinusoidal length=10 dim=8 base=10000 layout=interleaved start=0 dtype=float32")
    ]
    assert metadata_differences(plain(np.zeros(1)), plain(np.zeros(1))) == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"atol": -1.0}, "atol must be a finite number ≥ 0, got -1.0"),
        ({"rtol": math.nan}, "rtol must be a finite number ≥ 0, got nan"),
        ({"top": -1}, "top must be a whole number ≥ 0, got -1"),
    ],
)
def test_bad_arguments_are_input_errors(kwargs: dict[str, float], message: str) -> None:
    t = plain(np.zeros((2, 2)))
    with pytest.raises(PecliInputError, match=message):
        compare(t, t, **kwargs)  # type: ignore[arg-type]


# -- explanations that fit -------------------------------------------------------------------
def swap_halves(x: np.ndarray) -> np.ndarray:
    s = (x.shape[1] + 1) // 2
    return np.concatenate([x[:, s:], x[:, :s]], axis=1)


def fairseq_padded(length: int, dim: int) -> np.ndarray:
    """Row 0 is fairseq's all-zero padding row; row r + 1 holds position r."""
    return np.vstack([np.zeros((1, dim), dtype=np.float32), Sinusoidal(length, dim).build()])


def transposed(x: np.ndarray) -> np.ndarray:
    h = math.isqrt(x.shape[0])
    return x.reshape(h, h, -1).transpose(1, 0, 2).reshape(x.shape)


Case = Callable[[], tuple[Table, Table]]
CASES: dict[str, tuple[Case, str, str]] = {
    "split vs interleaved, even d": (
        lambda: (plain(Sinusoidal(50, 8, layout="split").build()), recipe(length=50, dim=8)),
        "recipe",
        "layout split ([sin…|cos…]) (A) vs interleaved (sin, cos, sin, …) (B); A's rows fit sinusoidal:len=50,dim=8,",
    ),
    "interleaved vs split, even d": (
        lambda: (plain(Sinusoidal(50, 12).build()), recipe(length=50, dim=12, layout="split")),
        "recipe",
        "layout interleaved (sin, cos, sin, …) (A) vs split ([sin…|cos…]) (B)",
    ),
    # Two plain files a column permutation relates, both identified: their kind's words first (the
    # layout), the permutation after them.
    "split vs interleaved, odd d": (
        lambda: (plain(Sinusoidal(50, 7, layout="split").build()), plain(Sinusoidal(50, 7).build())),
        ("recipe", "columns"),
        "layout split ([sin…|cos…]) (A) vs interleaved (sin, cos, sin, …) (B)",
    ),
    "interleaved vs split, odd d": (
        lambda: (plain(Sinusoidal(50, 9).build()), plain(Sinusoidal(50, 9, layout="split").build())),
        ("recipe", "columns"),
        "layout interleaved (sin, cos, sin, …) (A) vs split ([sin…|cos…]) (B)",
    ),
    "cos-first halves, even d": (
        lambda: (
            plain(swap_halves(Sinusoidal(60, 8, layout="split").build())),
            recipe(length=60, dim=8, layout="split"),
        ),
        "recipe",
        "layout cos-first ([cos…|sin…]) (A) vs split ([sin…|cos…]) (B)",
    ),
    "cos-first halves, odd d": (
        lambda: (
            plain(swap_halves(Sinusoidal(60, 7, layout="split").build())),
            recipe(length=60, dim=7, layout="split"),
        ),
        "recipe",
        "layout cos-first ([cos…|sin…]) (A) vs split ([sin…|cos…]) (B)",
    ),
    "cos-first pairs": (
        lambda: (plain(Sinusoidal(60, 8).build()[:, [1, 0, 3, 2, 5, 4, 7, 6]]), recipe(length=60, dim=8)),
        "columns",
        "each adjacent column pair of B (0 and 1, 2 and 3, …) is swapped in A",
    ),
    "start offset 1": (
        lambda: (plain(Sinusoidal(80, 16, start=1).build()), recipe(length=80, dim=16)),
        "recipe",
        "start 1 (A) vs 0 (B); A's rows fit sinusoidal:len=80,dim=16,base=10000,layout=interleaved,start=1,",
    ),
    "start offset 2": (
        lambda: (plain(Sinusoidal(80, 16, start=2).build()), recipe(length=80, dim=16)),
        "recipe",
        "start 2 (A) vs 0 (B)",
    ),
    "start offset -2": (
        lambda: (recipe(length=80, dim=16), plain(Sinusoidal(80, 16, start=2).build())),
        "recipe",
        "start 0 (A) vs 2 (B); B's rows fit sinusoidal:len=80,dim=16,base=10000,layout=interleaved,start=2,",
    ),
    "fairseq padding row, same shape": (
        lambda: (recipe(length=80, dim=16), plain(fairseq_padded(79, 16))),
        "shift",
        "B's row 0 has no counterpart in A (row 0 all zeros: padding)",
    ),
    "fairseq padding row, one more row": (
        lambda: (recipe(length=80, dim=16), plain(fairseq_padded(80, 16))),
        "shift",
        "(row 0 all zeros: padding); A has 80 rows, B has 81",
    ),
    "zeroed row": (
        lambda: (plain(np.where(np.arange(40)[:, None] == 1, 0, Sinusoidal(40, 8).build())), recipe(length=40, dim=8)),
        "recipe",
        "padding-idx 1 (A) vs none (B); A's rows fit sinusoidal:len=38,dim=8,base=10000,layout=interleaved,start=0,dtype=float32,padding_idx=1",
    ),
    "longer table": (
        lambda: (recipe(length=90, dim=8), recipe(length=80, dim=8)),
        "length",
        "the first 80 rows match; A has 90 rows, B has 80",
    ),
    "transposed 16×16 grid": (
        lambda: (plain(transposed(Sinusoidal(256, 16).build())), recipe(length=256, dim=16)),
        "transposed-grid",
        "transposed 16×16 grid order",
    ),
    "float32 angles over 4096 rows, a fast-math sin": (
        lambda: (plain(float32_angles(4096, 64, fast_sin=True)), recipe(length=4096, dim=64)),
        "precision",
        "A carries float32 angles (from the exact table: A 0.00042, B 0)",
    ),
    "float32 angles over 4096 rows, sin rounded once": (
        lambda: (plain(float32_angles(4096, 64)), recipe(length=4096, dim=64)),
        "recipe",
        "compute float32 (A) vs exact (B); form div (A) vs exp (B); A's rows fit sinusoidal:len=4096,dim=64,",
    ),
    "float16 copy": (
        lambda: (plain(Sinusoidal(300, 16, dtype="float16").build()), recipe(length=300, dim=16, dtype="float64")),
        "precision",
        "within the rounding of float16",
    ),
    "base 500000 vs 10000": (
        lambda: (recipe(length=2000, dim=64, base=500000.0), recipe(length=2000, dim=64)),
        "recipe",
        "base 500000 (A) vs 10000 (B)",
    ),
    "base, plain arrays, split, odd d": (
        lambda: (
            plain(Sinusoidal(300, 33, base=12345.678, layout="split").build()),
            plain(Sinusoidal(300, 33, layout="split").build()),
        ),
        "recipe",
        "base 12345.678 (A) vs 10000 (B)",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_suspect_fires_for_its_case(case: str) -> None:
    build, name, detail = CASES[case]
    a, b = build()
    c = compare(a, b)
    assert not c.same and c.exit_code == 1
    assert names(c) == (list(name) if isinstance(name, tuple) else [name])
    assert detail in c.explanations[0].detail
    first = c.explanations[0]
    # two recipes compared, each proved on every row of its side, leave no residual to measure
    assert first.residual <= 1e-3 or (math.isnan(first.residual) and first.proved)
    assert explain(a, b) == c.explanations  # the same verdict from a fresh read of the sample


def test_float32_angle_envelope_is_reported() -> None:
    c = compare(plain(float32_angles(4096, 64, fast_sin=True)), recipe(length=4096, dim=64))
    (x,) = c.explanations
    assert "2⁻²²·(1 + p)" in x.detail and "0.00098 at position 4095" in x.detail
    # The differences are real float32-angle error: ~1e-4, growing with the position.
    assert 1e-5 < x.residual < 9.8e-4
    assert c.worst_rows[0].position > 2048


def test_tensor2tensor_frequencies_are_another_frequency_rule() -> None:
    n, d = 512, 32
    half = d // 2
    inv = np.exp(np.arange(half) * -(math.log(10000) / (half - 1)))
    angle = np.arange(n)[:, None] * inv[None, :]
    t2t = np.concatenate([np.sin(angle), np.cos(angle)], axis=1).astype(np.float32)
    (x,) = compare(plain(t2t), recipe(length=n, dim=d, layout="split")).explanations
    assert x.name == "recipe"
    assert x.detail.startswith("freq t2t (A) vs paper (B); A's rows fit sinusoidal:len=512,dim=32,")


def test_suspects_are_found_in_a_sample_of_a_long_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pecli.diff.evidence, "SAMPLE_ROWS", 256)  # 4 windows of 64 rows
    b = recipe(length=3000, dim=16)
    start = compare(plain(Sinusoidal(3000, 16, start=3).build()), b)
    assert [x.text.split(";")[0] for x in start.explanations] == ["start 3 (A) vs 0 (B)"]
    assert start.causes_checked_on == "256 sampled rows of 3000"
    base = compare(recipe(length=3000, dim=16, base=20000.0), b).explanations
    assert [x.text.split(";")[0] for x in base] == ["base 20000 (A) vs 10000 (B)"]
    # The test's own float32 angles are p / 10000^(2i/d) in float32, each step rounded once: the div-form
    # float32 pipeline.
    (pipeline,) = compare(plain(float32_angles(3000, 16)), b).explanations
    assert (
        pipeline.text.startswith("compute float32 (A) vs exact (B); form div (A) vs exp (B)")
        and pipeline.residual < 1e-7
    )
    grid = Sinusoidal(64 * 64, 16).build()
    assert names(compare(plain(transposed(grid)), plain(grid))) == ["transposed-grid"]


def test_suspects_can_be_skipped() -> None:
    c = compare(plain(Sinusoidal(50, 8, start=1).build()), recipe(length=50, dim=8), suspects=False)
    assert not c.same and c.explanations == []


# -- and that do not ---------------------------------------------------------------------------
# The wide case takes ~12 s (every fit at 512 columns): in the slow group, with the narrow one as its quick sibling.
@pytest.mark.parametrize(("length", "dim"), [pytest.param(100, 512, marks=pytest.mark.slow), (256, 64)])
def test_the_wrong_formula_is_a_real_difference(length: int, dim: int) -> None:
    a = plain(wrong_formula(length, dim), "wrong_formula.npy")
    c = compare(a, recipe(length=length, dim=dim))
    assert not c.same and c.exit_code == 1
    assert c.explanations == [], c.explanations
    assert explain(a, plain(Sinusoidal(length, dim).build())) == []
    assert explain(a, recipe(length=length, dim=dim, layout="split")) == []


def changed(x: np.ndarray, row: int, col: int, value: float) -> np.ndarray:
    y = x.copy()
    y[row, col] = value
    return y


REF = Sinusoidal(400, 16).build()
LONG = Sinusoidal(4096, 16).build()  # long enough that a float32 pipeline's envelope exceeds float16's rounding
RNG = np.random.default_rng(3)
UNRELATED: dict[str, Case] = {
    "one element changed": lambda: (plain(changed(REF, 7, 3, 0.5)), plain(REF)),
    "one small change late": lambda: (plain(changed(REF, 390, 3, REF[390, 3] + 1e-4)), plain(REF)),
    "learned table": lambda: (plain(RNG.normal(0, 0.02, REF.shape).astype(np.float32)), plain(REF)),
    # A rounded through float16 and every value then moved one float32 ulp: identify "matches" it to
    # a float32 pipeline only within that pipeline's envelope, which must not become "compute
    # float32" as a cause (it would name a pipeline for a rounding).
    "a float16 copy, nudged": lambda: (
        plain(LONG),
        plain(np.nextafter(LONG.astype(np.float16).astype(np.float32), np.float32(2))),
    ),
    # Any table is a tiny multiple of one 1e40 times larger: no factor that small is a cause.
    "beside a huge table": lambda: (plain(REF), plain(np.full(REF.shape, 3e38, np.float32))),
    "noise": lambda: (plain(REF + RNG.uniform(-1e-3, 1e-3, REF.shape)), plain(REF)),
    "reversed columns": lambda: (plain(REF[:, ::-1].copy()), plain(REF)),
    "ten zeroed rows": lambda: (plain(np.where((np.arange(400) < 10)[:, None], 0, REF)), plain(REF)),
    "zeroed row and an edit": lambda: (
        plain(changed(np.where((np.arange(400) == 3)[:, None], 0, REF), 9, 5, 9)),
        plain(REF),
    ),
}


def test_layout_and_base_at_once_are_named_together() -> None:
    # Once left unexplained (two causes); the diff issue asks for both to be named.
    c = compare(plain(Sinusoidal(400, 16, layout="split", base=500.0).build()), plain(REF))
    assert [x.name for x in c.explanations] == ["recipe"]
    assert c.explanations[0].detail.startswith(
        "base 500 (A) vs 10000 (B); layout split ([sin…|cos…]) (A) vs interleaved (sin, cos, sin, …) (B); "
    )


def test_what_once_was_unrelated_is_now_named_by_the_recipe_or_a_factor() -> None:
    # A constant factor is a porting bug (an attention factor applied twice); a start of 20 is
    # beyond a row shift's reach but a recipe parameter the kind's fit measures.
    (x,) = compare(plain(REF * 1.01), plain(REF)).explanations
    assert x.name == "scale" and x.detail.startswith("A is B times 1.01 everywhere")
    (y,) = compare(plain(Sinusoidal(400, 16, start=20).build()), plain(REF)).explanations
    assert y.name == "recipe" and y.detail.startswith("start 20 (A) vs 0 (B); A's rows fit sinusoidal:len=400")


def test_reversed_rows_of_a_square_table_are_rows_in_another_order_not_a_transposed_grid() -> None:
    # 256 rows could be a 16×16 grid: reversing them is not reading that grid column by column.
    (x,) = compare(plain(REF[:256][::-1].copy()), plain(REF[:256])).explanations
    assert x.text == "row-order: A's rows are B's in reverse order: A's row r is B's row 255−r"


@pytest.mark.parametrize("case", list(UNRELATED))
def test_suspects_do_not_fire_for_unrelated_changes(case: str) -> None:
    a, b = UNRELATED[case]()
    c = compare(a, b)
    assert not c.same
    assert c.explanations == [], c.explanations


def test_a_permutation_that_leaves_b_unchanged_proves_nothing() -> None:
    # Constant columns look the same in any layout, so "layout" must not be claimed.
    b = np.tile(np.array([[0.0, 1.0, 0.0, 1.0]]), (10, 1))
    a = b.copy()
    a[4, 2] = 7.0
    assert compare(plain(a), plain(b)).explanations == []
    assert compare(plain(np.ones((100, 8))), plain(np.zeros((100, 8)))).explanations == []


def test_a_fit_of_a_longer_b_says_it_was_checked_on_bs_sampled_rows() -> None:
    # A: 100 rows of θ 10000 (its recipe); B: 100000 rows of θ 500000, a plain array.  The cause
    # is B's rows fitted from A's recipe: on B's sampled rows, which the report must say.
    from pecli.sources import parse_recipe

    a = Table.from_recipe(parse_recipe("rope:len=100,dim=64"))
    b = plain(parse_recipe("rope:len=100000,dim=64,base=500000").build())
    c = compare(a, b)
    assert c.explanations[0].text.startswith("base 10000 (A) vs 500000 (B); B's rows fit rope:len=100000,dim=64")
    assert c.causes_checked_on == "sampled rows of B's 100000"


@pytest.mark.parametrize(
    ("na", "nb"), [(5000, 4096), (8192, 4096), (20000, 16), (16, 20000), (4096, 5000), (4097, 4096)]
)
def test_tables_of_any_two_lengths_are_compared_on_the_rows_both_have(na: int, nb: int) -> None:
    # A long table against a short one: B's sample windows past its end were asked for (issue 40).
    rng = np.random.default_rng(na + nb)
    a, b = plain(rng.random((na, 8))), plain(rng.random((nb, 8)))
    c = compare(a, b)
    assert not c.same and c.exit_code == 1
    assert explain(a, b) == c.explanations
    long, short = max(na, nb), min(na, nb)
    if long > 4 * short:
        return
    c = compare(plain(Sinusoidal(na, 64).build()), recipe(length=nb, dim=64))
    (x,) = c.explanations
    assert x.name == "length" and x.detail.startswith(f"the first {short} rows match"), x.detail


def test_the_nearest_recipe_is_ranked_by_relative_rms_and_said_briefly() -> None:
    # issue 41: a cos cache whose frequencies wobble by 1 % (no recipe has that) gets "a real
    # difference"; the nearest recipe offered is a rotary cache, ranked by relative RMS over the rows
    # compared (not a small sinusoid for being small), and a LongRoPE's 64 factors are said by count.
    from pecli.diff.fitted import nearest_words
    from pecli.sources import parse_recipe

    n, d = 512, 128
    inv = 1 / 10000 ** (np.arange(0, d, 2) / d) * (1 + 0.01 * np.sin(np.arange(d // 2)))
    angle = np.arange(n)[:, None] * inv[None, :]
    a = np.cos(np.concatenate([angle, angle], 1)).astype(np.float32)
    factors = ";".join(str(round(1 + i / 16, 3)) for i in range(64))
    spec = (
        "rope:len=512,dim=128,scaling=longrope,factor=8,original-max-position-embeddings=4096,"
        f"short-factor={factors},long-factor={factors}"
    )
    c = compare(Table(a, None, "a.npy"), Table.from_recipe(parse_recipe(spec)))
    assert not c.explanations and c.nearest.startswith("rope:") and "relative RMS 0.3" in c.nearest, c.nearest
    said = nearest_words(spec, 0.5, 1.0, 32)
    assert "short-factor=1.0;1.062;1.125;…(64 values)" in said and len(said) < 250, said
