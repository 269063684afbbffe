"""The fast paths against independent references: the rotation kernel against the exact
double-double kernel and mpmath, the CSV formatter against Python's own ``%`` formatting."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pecli.kernels.rotation as fp
from pecli.formats.percentg import format_rows
from pecli.kernels.exact import frequency_turns, sincos
from pecli.kernels.rotation import fill_sincos
from pecli.kernels.threads import prefetch
from tests.helpers import ulp_distance

DTYPES = [np.float16, np.float32, np.float64]
LAYOUTS = ["interleaved", "split", "cos-first", "separate", "every-other-row"]


def views(layout: str, rows: int, n_sin: int, n_cos: int, dtype: type) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(table, sin_out, cos_out)`` laid out as the recipes (and other callers) do."""
    if layout == "interleaved":
        out = np.full((rows, n_sin + n_cos), np.nan, dtype=dtype)
        return out, out[:, 0 : 2 * n_sin : 2], out[:, 1 : 2 * n_cos : 2]
    if layout == "split":
        out = np.full((rows, n_sin + n_cos), np.nan, dtype=dtype)
        return out, out[:, :n_sin], out[:, n_sin:]
    if layout == "cos-first":
        out = np.full((rows, n_sin + n_cos), np.nan, dtype=dtype)
        return out, out[:, n_cos:], out[:, :n_cos]
    if layout == "every-other-row":  # strided rows of an interleaved table
        out = np.full((2 * rows, n_sin + n_cos), np.nan, dtype=dtype)
        return out, out[::2, 0 : 2 * n_sin : 2], out[::2, 1 : 2 * n_cos : 2]
    s, c = np.full((rows, n_sin), np.nan, dtype=dtype), np.full((rows, n_cos), np.nan, dtype=dtype)
    return s, s, c


def exact(first: int, rows: int, n_sin: int, n_cos: int, w_hi: np.ndarray, w_lo: np.ndarray) -> tuple[np.ndarray, ...]:
    s, c = sincos(np.arange(first, first + rows, dtype=np.float64), w_hi[:n_sin], w_lo[:n_sin])
    return s, c[:, :n_cos]


def worst(value: np.ndarray, truth: np.ndarray, dtype: type) -> float:
    return float(ulp_distance(value, truth, dtype).max(initial=0.0))


def fill(layout: str, dtype: type, first: int, rows: int, n_sin: int, n_cos: int, dim: int, **kw: int) -> tuple:
    _, w_hi, w_lo = frequency_turns(10000.0, dim, n_sin)
    _, s, c = views(layout, rows, n_sin, n_cos, dtype)
    fill_sincos(s, c, first, w_hi, w_lo, **kw)
    return s, c, w_hi, w_lo


shapes = st.tuples(
    st.sampled_from(LAYOUTS),
    st.sampled_from(DTYPES),
    st.one_of(st.integers(0, 600), st.integers(0, 2**40)),  # first position
    st.integers(1, 300),  # rows
    st.integers(0, 40),  # n_cos
    st.booleans(),  # odd width: one more sin than cos
)


@settings(max_examples=120, deadline=None)
@given(shapes)
def test_within_one_ulp_of_the_exact_kernel(case: tuple) -> None:
    layout, dtype, first, rows, n_cos, odd = case
    n_sin = n_cos + odd
    if n_sin == 0:
        return
    s, c, w_hi, w_lo = fill(layout, dtype, first, rows, n_sin, n_cos, 2 * n_sin)
    es, ec = exact(first, rows, n_sin, n_cos, w_hi, w_lo)
    if dtype is np.float64:  # float64 keeps the exact kernel: the same bits
        assert np.array_equal(s, es) and np.array_equal(c, ec)
        return
    assert worst(s, es, dtype) <= 1.0 and worst(c, ec, dtype) <= 1.0
    # Correctly rounded unless within ~2⁻²⁰ ulp of a midpoint: in practice every value.
    assert np.array_equal(s, es.astype(dtype)) and np.array_equal(c, ec.astype(dtype))


def test_small_positions_match_the_float64_closed_form() -> None:
    # Independent of the double-double kernel: float64 sin/cos of p·ω is within ~1e-13 here.
    s, c, _, _ = fill("interleaved", np.float32, 0, 2000, 32, 32, 64)
    omega = 10000.0 ** (-np.arange(0, 64, 2) / 64)
    angle = np.arange(2000.0)[:, None] * omega
    assert np.abs(s - np.sin(angle)).max() <= 6e-8 and np.abs(c - np.cos(angle)).max() <= 6e-8


@settings(max_examples=60, deadline=None)
@given(shapes, st.data())
def test_any_row_range_equals_the_same_rows_of_the_whole(case: tuple, data: st.DataObject) -> None:
    layout, dtype, first, rows, n_cos, odd = case
    n_sin = n_cos + odd
    if n_sin == 0:
        return
    whole_s, whole_c, _, _ = fill(layout, dtype, first, rows, n_sin, n_cos, 2 * n_sin + 1)
    a = data.draw(st.integers(0, rows - 1))
    b = data.draw(st.integers(a + 1, rows))
    other = data.draw(st.sampled_from(LAYOUTS))  # the layout does not change the values either
    part_s, part_c, _, _ = fill(other, dtype, first + a, b - a, n_sin, n_cos, 2 * n_sin + 1)
    assert np.array_equal(part_s, whole_s[a:b]) and np.array_equal(part_c, whole_c[a:b])


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_threads_give_the_same_bits(layout: str, dtype: type, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fp, "_THREAD_CELLS", 64)  # split even this small table…
    monkeypatch.setattr(fp, "_B_MAX", 16)  # …into parts of several blocks each
    one = fill(layout, dtype, 12345, 700, 33, 32, 66, threads=1)
    many = fill(layout, dtype, 12345, 700, 33, 32, 66, threads=5)
    assert np.array_equal(one[0], many[0]) and np.array_equal(one[1], many[1])
    assert len(fp._split_rows(12345, 700, fp.block_rows(33), 33, 5)) == 5


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_block_boundaries(dtype: type, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tiny blocks, few rotations per batch and small scratch chunks: every boundary is crossed."""
    s0, c0, w_hi, w_lo = fill("split", dtype, 9_999_990, 500, 9, 8, 17)
    monkeypatch.setattr(fp, "_B_MAX", 8)
    monkeypatch.setattr(fp, "_B_MIN", 8)
    monkeypatch.setattr(fp, "_CHUNK_CELLS", 20)
    for layout in ("interleaved", "split"):
        s, c, _, _ = fill(layout, dtype, 9_999_990, 500, 9, 8, 17)
        es, ec = exact(9_999_990, 500, 9, 8, w_hi, w_lo)
        assert worst(s, es, dtype) <= 1.0 and worst(c, ec, dtype) <= 1.0
        # Another B, the same values (both are correctly rounded here).
        assert np.array_equal(s, s0) and np.array_equal(c, c0)


def test_interleaved_float32_takes_the_complex64_path(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []
    real = fp._interleaved_view

    def spy(s: np.ndarray, c: np.ndarray) -> np.ndarray | None:
        view = real(s, c)
        seen.append(view is not None)
        return view

    monkeypatch.setattr(fp, "_interleaved_view", spy)
    for layout in LAYOUTS:
        fill(layout, np.float32, 0, 10, 5, 4, 9)
    assert seen == [True, False, False, False, True]


def test_values_near_zero_are_recomputed_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    """sin(2π·p·w) with p·w within 2⁻⁵⁴ of ½: about 10⁻¹⁶, where the rotation's absolute error
    (~2⁻⁵² ≈ 2·10⁻¹⁶) is the whole value.  The TINY fix-up must make it correctly rounded."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 60
    p0 = 1_000_003
    w_hi, w_lo = np.array([0.5 / p0]), np.array([0.0])
    truth = float(mpmath.sin(2 * mpmath.pi * p0 * mpmath.mpf(float(w_hi[0]))))
    assert 0 < abs(truth) < 1e-15

    def run() -> float:
        s, c = np.empty((3, 1), np.float32), np.empty((3, 0), np.float32)
        fill_sincos(s, c, p0 - 1, w_hi, w_lo)
        return float(s[1, 0])

    assert run() == np.float32(truth)
    monkeypatch.setattr(fp, "TINY", 0.0)  # without the fix-up: far more than 1 ulp off
    assert worst(np.array([run()]), np.array([truth]), np.float32) > 100


def test_values_near_zero_inside_a_batch_of_blocks_are_recomputed_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same near-zero sine in the interleaved float32 layout, where whole blocks go through one
    multiply (``_BATCH_PAIRS``): the fix-up runs over the batch, and finds it mid-batch."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 60
    p0 = 1_000_003
    w_hi, w_lo = np.array([0.5 / p0]), np.array([0.0])
    truth = float(mpmath.sin(2 * mpmath.pi * p0 * mpmath.mpf(float(w_hi[0]))))
    runs: list[int] = []
    real = fp._full_blocks

    def spy(*args: int) -> int:
        runs.append(real(*args))
        return runs[-1]

    monkeypatch.setattr(fp, "_full_blocks", spy)
    first = p0 - 5 * fp.block_rows(1) - 17  # p0 in the sixth whole block of the batch

    def run() -> float:
        out = np.empty((20 * fp.block_rows(1), 2), np.float32)
        fill_sincos(out[:, 0::2], out[:, 1::2], first, w_hi, w_lo, threads=1)
        return float(out[p0 - first, 0])

    assert run() == np.float32(truth)
    assert max(runs) >= 6  # the blocks around p0 went through one multiply
    monkeypatch.setattr(fp, "TINY", 0.0)  # without the fix-up: far more than 1 ulp off
    assert worst(np.array([run()]), np.array([truth]), np.float32) > 100


def test_float32_against_mpmath_at_large_positions() -> None:
    """Positions up to 2²⁴, every frequency of a 128-wide table, sin and cos, against mpmath."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    rng = np.random.default_rng(7)
    positions = sorted({2**24 - 1, 2**24 - 256, 2**23 + 1, *rng.integers(2**20, 2**24, 12).tolist()})
    dim = 128
    omegas = [mpmath.power(10000, mpmath.mpf(-2 * i) / dim) for i in range(dim // 2)]
    most = 0.0
    for p in positions:
        s, c, _, _ = fill("interleaved", np.float32, p, 1, dim // 2, dim // 2, dim)
        ref_s = np.array([float(mpmath.sin(p * w)) for w in omegas])
        ref_c = np.array([float(mpmath.cos(p * w)) for w in omegas])
        most = max(most, worst(s[0], ref_s, np.float32), worst(c[0], ref_c, np.float32))
    print(f"float32 max ulp vs mpmath, positions up to 2**24: {most:.4f}")
    assert most <= 0.5 + 1e-6  # correctly rounded in every case here


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork")
def test_threads_work_in_a_forked_child(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    monkeypatch.setattr(fp, "_THREAD_CELLS", 64)
    expected = fill("split", np.float32, 5, 400, 9, 8, 17, threads=2)[0]  # the parent's pool exists now
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through its exit status
        import signal

        signal.alarm(20)  # a pool that never runs the task would hang: die instead
        ok = np.array_equal(fill("split", np.float32, 5, 400, 9, 8, 17, threads=2)[0], expected)
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_arguments_are_checked() -> None:
    s, c = np.empty((2, 3), np.float32), np.empty((2, 4), np.float32)
    with pytest.raises(ValueError, match="do not fit"):
        fill_sincos(s, c, 0, np.zeros(4), np.zeros(4))
    with pytest.raises(ValueError, match="outside"):
        fill_sincos(s, c[:, :3], 2**53, np.zeros(3), np.zeros(3))
    fill_sincos(s[:0], c[:0, :3], 0, np.zeros(3), np.zeros(3))  # no rows: nothing to do


def test_prefetch_keeps_order_raises_and_stops() -> None:
    assert list(prefetch(iter(range(100)))) == list(range(100))

    def failing():  # type: ignore[no-untyped-def]
        yield 1
        raise KeyError("boom")

    it = prefetch(failing())
    assert next(it) == 1
    with pytest.raises(KeyError, match="boom"):
        next(it)
    produced: list[int] = []

    def counting():  # type: ignore[no-untyped-def]
        for k in range(10**6):
            produced.append(k)
            yield k

    it = prefetch(counting())
    assert next(it) == 0
    it.close()  # the producer stops after at most a few items
    assert len(produced) <= 4


# ---------------------------------------------------------------------------------- CSV text
def python_rows(block: np.ndarray, digits: int, sep: str) -> bytes:
    row = sep.join([f"%.{digits}g"] * block.shape[1]) + "\n"
    return "".join(row % tuple(r) for r in block.tolist()).encode()


SPECIAL = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    1e-4,
    9.99995e-5,
    1e-5,
    9.9999999995,
    10.0,
    1e300,
    5e-324,
    math.nan,
    math.inf,
    -math.inf,
]


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from([np.float16, np.float32, np.float64]),
    st.integers(1, 17),
    st.sampled_from([",", "\t"]),
    st.integers(1, 9),
    st.lists(st.one_of(st.integers(0, 2**64 - 1), st.sampled_from(SPECIAL)), min_size=1, max_size=90),
)
def test_format_rows_is_pythons_percent_g(dtype: type, digits: int, sep: str, cols: int, raw: list) -> None:
    bits = {np.float16: np.uint16, np.float32: np.uint32, np.float64: np.uint64}[dtype]
    with np.errstate(over="ignore"):  # 1e300 as float16/32 is inf, on purpose
        values = [
            np.array(x, dtype=np.uint64).astype(bits).view(dtype) if isinstance(x, int) else dtype(x) for x in raw
        ]
    flat = np.array(values, dtype=dtype)
    block = np.resize(flat, (-(-len(flat) // cols), cols))
    expected = python_rows(block, digits, sep)
    assert format_rows(block, digits, sep) == expected
    assert format_rows(block, digits, sep, shared=True) == expected  # squeezed by NumPy: the same bytes


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_format_rows_on_tables_round_trips_bit_exactly(dtype: str) -> None:
    from pecli import Sinusoidal

    table = Sinusoidal(300, 64, start=70_000, dtype=dtype).build()
    digits = {"float16": 5, "float32": 9}[dtype]
    text = format_rows(table, digits)
    assert text == python_rows(table, digits, ",")
    back = np.array([[float(x) for x in line.split(",")] for line in text.decode().splitlines()]).astype(dtype)
    assert back.tobytes() == table.tobytes()


def test_a_table_written_block_by_block_asks_for_the_compiled_kernel_by_its_whole_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A writer asks for 4 MB row blocks; whether loading numba pays is decided on the whole table.
    from pecli import Sinusoidal

    asked: list[int] = []
    monkeypatch.setattr(fp, "exact_sincos", lambda pairs: asked.append(pairs))
    Sinusoidal(70000, 1024, dtype="float64").rows(0, 10)
    Sinusoidal(70000, 1024).rows(0, 10)  # float32: the rotation, never the float64 kernel
    assert asked == [70000 * 512]


def test_a_table_too_short_to_pay_for_its_rotations_takes_the_exact_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whether a table is rotated is decided on the whole table (``table_rows``), never on the
    rows asked for: a short table (at most ``B + G`` rows) is the exact kernel's values rounded
    once, and a few rows of a long one are rotated as the whole is."""
    calls: list[int] = []
    real = fp._fill_rotated

    def spy(s: np.ndarray, *args: object) -> None:
        calls.append(s.shape[0])
        real(s, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(fp, "_fill_rotated", spy)
    n_sin = 40
    limit = fp.block_rows(n_sin) + fp._GROUP
    s, c, w_hi, w_lo = fill("split", np.float32, 1000, 5, n_sin, n_sin, 2 * n_sin, table_rows=limit)
    es, ec = exact(1000, 5, n_sin, n_sin, w_hi, w_lo)
    assert calls == [] and np.array_equal(s, es.astype(np.float32)) and np.array_equal(c, ec.astype(np.float32))
    fill("split", np.float32, 1000, 5, n_sin, n_sin, 2 * n_sin, table_rows=limit + 1)
    fill("split", np.float32, 1000, 5, n_sin, n_sin, 2 * n_sin)  # rows not known: the width decides
    assert calls == [5, 5]
