"""16-bit tables built as float32 rows rounded once (``pecli.kernels.halves``).

The truth for float16 is NumPy's float64 → float16 cast, which is correctly rounded: an exact
sinusoidal table in float16 must be its float64 table cast so, bit for bit; a float32 pipeline's
float16 table its float32 table cast.  The rounding pass (numba's or NumPy's) must give the bits
of the library casts (NumPy's for float16, ``ml_dtypes``' for bfloat16) on every float32 pattern,
and the same table whichever runs.
"""

from __future__ import annotations

import numpy as np
import pytest

from pecli import Sinusoidal
from pecli.dtypes import round_to
from pecli.kernels.halves import numpy_round, round_rows

pytest.importorskip("ml_dtypes")

#: Cells above which the compiled pass would load (``PECLI_COMPILED`` decides in these tests).
BIG = 1 << 40


def adversarial() -> np.ndarray:
    """float32 bit patterns where rounding to 16 bits is delicate, and ~1M random ones."""
    rng = np.random.default_rng(20261123)
    base = rng.integers(0, 1 << 32, 4000, dtype=np.uint64).astype(np.uint32)
    around: list[np.ndarray] = []
    for low_bits, mid in ((16, 0x8000), (13, 0x1000)):
        top = base & np.uint32(0xFFFFFFFF ^ ((1 << low_bits) - 1))
        for delta in (-2, -1, 0, 1, 2):  # every midpoint pattern ±1 (and ±2), both signs
            around.append(top + np.uint32(mid + delta))
        around.append(top)  # on the 16-bit grid
        around.append(top + np.uint32((1 << low_bits) - 1))  # just below the next grid value
    edges = np.array([2.0**-14, 2.0**-24, 2.0**-25, 65504.0, 65519.0, 65520.0, 65536.0, 1.0, 2.0**-126, 2.0**-149])
    edge_bits = np.concatenate([edges, -edges]).astype(np.float32).view(np.uint32)
    near = (edge_bits[:, None].astype(np.int64) + np.arange(-3, 4)).reshape(-1).astype(np.uint32)
    specials = np.array(
        [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FFF8000], np.uint32
    )
    subnormals = rng.integers(1, 1 << 23, 1000, dtype=np.uint32)
    randoms = rng.integers(0, 1 << 32, 1 << 20, dtype=np.uint64).astype(np.uint32)
    out = np.concatenate([*around, near, specials, subnormals, subnormals | np.uint32(1 << 31), randoms])
    return out[: out.size // 64 * 64]  # rows of 64 (only random patterns are dropped)


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.view(np.uint16).tobytes() == b.view(np.uint16).tobytes()


@pytest.fixture(params=["0", pytest.param("1", marks=pytest.mark.slow)], ids=["numpy", "compiled"])  # numba: slow
def kernel(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "1":
        pytest.importorskip("numba")
    monkeypatch.setenv("PECLI_COMPILED", request.param)
    return str(request.param)


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_a_float32_carrier_is_the_librarys_cast_on_every_pattern(name: str, kernel: str) -> None:
    f32 = adversarial().view(np.float32).reshape(-1, 64)
    with np.errstate(over="ignore", invalid="ignore"):
        want = round_to(f32, name)
        assert same_bits(round_rows(f32, name, None, BIG), want)


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_a_float64_carrier_is_rounded_once_from_it(name: str, kernel: str) -> None:
    # float64 values a hair off the 16-bit midpoints and grid, whose float32 roundings land on
    # them (the doubtful cells, computed again from the float64 values), and the patterns above.
    bits = adversarial()
    finite = bits[np.isfinite(bits.view(np.float32))]
    x = finite.view(np.float32).astype(np.float64)
    x = np.concatenate([x, x * (1 + 2.0**-40), x * (1 - 2.0**-40), x * (1 + 2.0**-23)])
    x = x[: x.size // 64 * 64].reshape(-1, 64)  # (only random patterns are dropped)
    with np.errstate(over="ignore"):
        f32 = x.astype(np.float32)
        want = round_to(x, name)
    assert same_bits(round_rows(f32, name, lambda rows, cols: x[rows, cols], BIG), want)


@pytest.mark.slow
def test_the_numpy_pass_and_the_compiled_kernel_agree_on_every_decided_cell() -> None:
    jit = pytest.importorskip("pecli.kernels.jit")
    bits = adversarial()
    for name in ("float16", "bfloat16"):
        for check in (False, True):
            ours, theirs = np.empty(bits.size, np.uint16), np.empty(bits.size, np.uint16)
            doubts = np.empty(bits.size, np.int64)
            count = jit.round16_into(bits, ours, name == "float16", check, doubts)
            with np.errstate(over="ignore", invalid="ignore"):
                listed = numpy_round(bits, theirs, name, check)
            compiled, numpy = set(doubts[:count].tolist()), set(listed.tolist())
            f32 = bits.view(np.float32)
            if name == "float16":  # NumPy lists the zeros too (settled to the same signed zeros)
                assert numpy == compiled | set(np.flatnonzero(f32 == 0).tolist())
            else:  # the compiled kernel lists inf and nan too (settled by ml_dtypes' cast)
                assert numpy <= compiled
            decided = np.ones(bits.size, bool)
            decided[list(compiled | numpy)] = False
            assert np.array_equal(ours[decided], theirs[decided]), (name, check)
            with np.errstate(over="ignore", invalid="ignore"):
                assert np.array_equal(ours[decided], round_to(f32, name).view(np.uint16)[decided])


@pytest.mark.slow
def test_the_compiled_kernel_lists_exactly_the_cells_it_cannot_decide() -> None:
    jit = pytest.importorskip("pecli.kernels.jit")
    bits = adversarial()
    m = bits & np.uint32(0x7FFFFFFF)
    for name, low_bits, mid in (("float16", 13, 0x1000), ("bfloat16", 16, 0x8000)):
        low = bits & np.uint32((1 << low_bits) - 1)
        near = (low >= mid - 1) & (low <= mid + 1)
        if name == "float16":
            outside = (m != 0) & ((m < 0x38800000) | (m >= 0x477FF000))
        else:
            outside = m >= 0x7F800000
        for check in (False, True):
            out, doubts = np.empty(bits.size, np.uint16), np.empty(bits.size, np.int64)
            count = jit.round16_into(bits, out, name == "float16", check, doubts)
            want = np.flatnonzero(outside | (near & check))
            assert np.array_equal(doubts[:count], want), (name, check)


@pytest.mark.parametrize(
    "params",
    [
        {"length": 3000, "dim": 512},
        {"length": 1000, "dim": 65, "layout": "split"},  # odd width: one more sin
        {"length": 1000, "dim": 65, "layout": "cos-first", "odd": "zero"},  # a zero column
        {"length": 700, "dim": 33, "odd": "truncate", "start": 99_990},
        {"length": 800, "dim": 96, "padding_idx": 1},  # a zero row in front
        {"length": 600, "dim": 128, "start": 2**40, "base": 500000.0},  # far positions
        {"length": 5, "dim": 2},
    ],
)
def test_an_exact_float16_table_is_its_float64_table_correctly_rounded(params: dict[str, object], kernel: str) -> None:
    recipe = Sinusoidal(dtype="float16", **params)  # type: ignore[arg-type]
    table = recipe.build()
    truth = Sinusoidal(dtype="float64", **params).build().astype(np.float16)  # type: ignore[arg-type]
    assert table.dtype == np.float16 and table.tobytes() == truth.tobytes()
    n = table.shape[0]
    a, b = n // 3, n // 3 + min(n - n // 3, 257)
    assert recipe.rows(a, b).tobytes() == table[a:b].tobytes()


def test_the_float16_table_holds_many_doubtful_cells() -> None:
    # The table above: dozens of float32 values within one ulp of a float16 midpoint, recomputed.
    f32 = Sinusoidal(3000, 512).build()
    low = f32.view(np.uint32) & 0x1FFF
    assert np.count_nonzero((low >= 0xFFF) & (low <= 0x1001)) >= 100


@pytest.mark.parametrize("preset", ["fairseq", "tensor2tensor", "llama"])
def test_a_float32_pipeline_in_float16_is_its_float32_table_cast(preset: str, kernel: str) -> None:
    from pecli.presets import get_preset

    recipe = get_preset(preset).recipe(length=700)
    assert recipe.carrier() == "float32"
    from dataclasses import replace

    half = replace(recipe, dtype="float16").build()
    assert half.tobytes() == replace(recipe, dtype="float32").build().astype(np.float16).tobytes()
