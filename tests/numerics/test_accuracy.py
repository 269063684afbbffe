"""Accuracy against mpmath (exact to 60 digits) on sampled rows up to position 2**31."""

from __future__ import annotations

import numpy as np
import pytest

from pecli import Sinusoidal
from tests.helpers import ulp_distance

mpmath = pytest.importorskip("mpmath")

# Positions: small ones, a random sample up to 10**6, and the far end of the promise.
rng = np.random.default_rng(20261121)
POSITIONS = sorted({0, 1, 2, 3, 999_999, 10**6, 2**24, 2**31 - 1, *rng.integers(0, 10**6, 40).tolist()})
CASES = [(64, 10000.0, "interleaved"), (33, 10000.0, "split"), (128, 500000.0, "interleaved")]


def exact_rows(dim: int, base: float, layout: str, positions: list[int]) -> np.ndarray:
    mpmath.mp.dps = 60
    recipe = Sinusoidal(1, dim, base=base, layout=layout)
    out = np.empty((len(positions), dim))
    omegas = [mpmath.power(mpmath.mpf(base), mpmath.mpf(-2 * i) / dim) for i in range(recipe.sin_columns)]
    for a, p in enumerate(positions):
        for j in range(dim):
            i, fn = recipe.column(j)
            angle = mpmath.mpf(p) * omegas[i]
            out[a, j] = float(mpmath.sin(angle) if fn == "sin" else mpmath.cos(angle))
    return out


def built_rows(dim: int, base: float, layout: str, positions: list[int], dtype: str) -> np.ndarray:
    return np.stack([Sinusoidal(1, dim, base=base, layout=layout, start=p, dtype=dtype).build()[0] for p in positions])


@pytest.mark.parametrize(("dim", "base", "layout"), CASES)
def test_float32_within_one_ulp_of_exact(dim: int, base: float, layout: str) -> None:
    exact = exact_rows(dim, base, layout, POSITIONS)
    ulps = ulp_distance(built_rows(dim, base, layout, POSITIONS, "float32"), exact, np.float32)
    # Correct rounding means ≤ 0.5 ulp; the promise is 1 ulp, and the max seen is printed.
    print(f"float32 max ulp error d={dim} base={base} {layout}: {ulps.max():.4f}")
    assert ulps.max() <= 1.0


@pytest.mark.parametrize(("dim", "base", "layout"), CASES)
def test_float64_within_one_ulp_of_exact(dim: int, base: float, layout: str) -> None:
    exact = exact_rows(dim, base, layout, POSITIONS)
    ulps = ulp_distance(built_rows(dim, base, layout, POSITIONS, "float64"), exact, np.float64)
    print(f"float64 max ulp error d={dim} base={base} {layout}: {ulps.max():.4f}")
    assert ulps.max() <= 1.0


def test_float32_angle_arithmetic_would_fail_this_bar() -> None:
    # The bar is not trivial: float32 angles (as PyTorch code like the tutorial's PositionalEncoding forms
    # them) are off by far more.
    positions = [10**6 - k for k in range(8)]
    exact = exact_rows(64, 10000.0, "interleaved", positions)
    p = np.array(positions, dtype=np.float32)[:, None]
    omega = np.power(np.float32(10000), -np.arange(0, 64, 2, dtype=np.float32) / np.float32(64))
    naive = np.empty((len(positions), 64), dtype=np.float32)
    naive[:, 0::2], naive[:, 1::2] = np.sin(p * omega), np.cos(p * omega)
    assert np.abs(naive - exact).max() > 1e-3


def kernel_errors(positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """|error| of the exact kernel's float64 sin and cos against mpmath's unrounded value: in ulps of
    that value, and absolute."""
    from pecli.kernels.exact import frequency_turns, sincos

    mpmath.mp.dps = 60
    d = 64
    _, w_hi, w_lo = frequency_turns(10000.0, d, d // 2)
    s, c = sincos(positions.astype(np.float64), w_hi, w_lo)
    omegas = [mpmath.power(10000, mpmath.mpf(-2 * i) / d) for i in range(d // 2)]
    ulps, absolute = [], []
    for a, p in enumerate(positions.tolist()):
        for i, omega in enumerate(omegas):
            angle = mpmath.mpf(int(p)) * omega
            for value, exact in ((s[a, i], mpmath.sin(angle)), (c[a, i], mpmath.cos(angle))):
                err = abs(mpmath.mpf(float(value)) - exact)
                ulps.append(float(err) / float(np.spacing(abs(float(exact)))))
                absolute.append(float(err))
    return np.array(ulps), np.array(absolute)


def test_the_exact_kernel_against_mpmath_in_fractions_of_an_ulp() -> None:
    """The double-double kernel's float64 sin and cos up to position 2⁴⁴: within one ulp (max 0.75
    seen), and correctly rounded for nearly all values (97%; libm's sin and cos of the reduced
    angle, used before fdlibm's kernels, gave 85% and up to 0.99 ulp)."""
    positions = np.concatenate([np.arange(40), rng.integers(0, 2**31, 40), rng.integers(2**40, 2**44, 20)])
    ulps, _ = kernel_errors(positions)
    print(f"exact kernel: max {ulps.max():.3f} ulp, {np.mean(ulps <= 0.5):.2%} correctly rounded of {ulps.size}")
    assert ulps.max() < 1.0 and np.mean(ulps <= 0.5) > 0.95


def test_the_exact_kernel_near_position_2_53_stays_within_2_52_absolutely() -> None:
    """Beyond 2⁴⁴ the frequency's own 2⁻¹⁰⁶ shows: p·ω·2⁻¹⁰⁵ rad, ~1e-16 at 2⁵³.  A value near a
    zero of sin or cos is then off by several of its own (small) ulps (32 seen), never by more than
    2⁻⁵² absolutely: the bound the docs give for such positions."""
    positions = np.concatenate([rng.integers(2**52, 2**53, 20), [2**53 - 1]])
    ulps, absolute = kernel_errors(positions)
    print(f"exact kernel near 2^53: max {ulps.max():.3f} ulp, max |error| {absolute.max():.3g}")
    assert absolute.max() < 2.0**-52


# ----------------------------------------------------- float32 sin/cos: libm, certified by the kernel
def kernel_rounded32(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The definition: the exact kernel's float64 sin and cos of the radians ``x``, rounded once."""
    from pecli.kernels.exact import sincos, turns

    with np.errstate(invalid="ignore"):  # non-finite or huge angles: the kernel's value, no warning
        s, c = sincos(np.asarray(x, dtype=np.float64).reshape(-1), *turns(np.array([1.0])))
    return s[:, 0].astype(np.float32), c[:, 0].astype(np.float32)


def certified_angles() -> np.ndarray:
    """float32 angles as the pipelines make them (position × inverse frequency, up to 2²⁴ rad), and
    the awkward ones: 0, tiny, negative, float32 subnormals, huge."""
    positions = rng.integers(0, 2**20, 2**16).astype(np.float32)
    inv = rng.random(2**16).astype(np.float32) * np.float32(16)
    edge = [0.0, -0.0, 1e-45, -1e-45, 2.0**-126, 1e-30, 2.0**-119, -3.0, 3.4e38, -3.4e38, np.pi, 2**24]
    return np.concatenate([positions * inv, np.array(edge, dtype=np.float32)])


def test_rounded32_with_numpys_sin_and_cos_is_the_kernel_rounded_bit_for_bit() -> None:
    from pecli.kernels.pipelines import rounded32

    x = certified_angles()
    s, c = rounded32(x, ("sin", "cos"))
    s0, c0 = kernel_rounded32(x)
    assert s.tobytes() == s0.tobytes() and c.tobytes() == c0.tobytes()
    (c1,) = rounded32(x[: 2**16].reshape(256, -1), ("cos",))  # any shape, one part
    assert c1.shape == (256, 256) and c1.tobytes() == c0[: 2**16].tobytes()


def test_numpys_float64_sin_and_cos_are_well_inside_the_certificates_margin() -> None:
    """rounded32 trusts NumPy's float64 sin/cos to within LIBM_MARGIN_ULPS of the exact value; on
    this machine they are within an ulp or two of the kernel (itself within 0.75 of mpmath)."""
    from pecli.kernels.exact import sincos, turns
    from pecli.kernels.pipelines import LIBM_MARGIN_ULPS

    x = certified_angles()[:-12].astype(np.float64)
    s, c = sincos(x, *turns(np.array([1.0])))
    worst = max(ulp_distance(np.sin(x), s[:, 0], np.float64).max(), ulp_distance(np.cos(x), c[:, 0], np.float64).max())
    print(f"numpy sin/cos against the kernel: max {worst} float64 ulps")
    assert worst <= 4 < LIBM_MARGIN_ULPS


@pytest.mark.slow
def test_a_libm_off_by_hundreds_of_ulps_near_midpoints_still_gives_the_kernels_bits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The certificate at work: a sin/cos that puts every value near a float32 rounding midpoint on
    the wrong side of it (by up to 1000 float64 ulps, inside the margin) changes no bit of the
    result, though rounding those values as given would."""
    from pecli.kernels import pipelines

    mask, mid = (1 << 29) - 1, 1 << 28

    def adversary(fn):  # type: ignore[no-untyped-def]
        def wrong(x: np.ndarray, out: np.ndarray) -> np.ndarray:
            fn(x, out=out)
            bits = out.view(np.uint64)
            low = (bits & np.uint64(mask)).astype(np.int64)
            near = np.abs(low - mid) <= 500
            bits[near] = (bits[near] & ~np.uint64(mask)) | (2 * mid - low[near]).astype(np.uint64)
            return out

        return wrong

    x = (rng.integers(0, 2**20, 2**22).astype(np.float32) * rng.random(2**22).astype(np.float32)).astype(np.float64)
    monkeypatch.setitem(pipelines.LIBM, "sin", adversary(np.sin))
    monkeypatch.setitem(pipelines.LIBM, "cos", adversary(np.cos))
    wrong_s = np.empty_like(x)
    pipelines.LIBM["sin"](x, wrong_s)
    s0, c0 = kernel_rounded32(x)
    flipped = int((wrong_s.astype(np.float32) != s0).sum())
    s, c = pipelines.rounded32(x, ("sin", "cos"))
    print(f"{flipped} of {x.size} sines rounded otherwise as given; after the certificate: 0")
    assert flipped > 0
    assert s.tobytes() == s0.tobytes() and c.tobytes() == c0.tobytes()


@pytest.mark.parametrize(
    ("base", "scale", "count", "den"), [(10000.0, 1.0, 9000, 18000), (1e4, 1.0, 5000, 4099), (1e4, 0.5, 6000, 5999)]
)
def test_frequencies_stepped_by_ratio_stay_within_2_104_of_exact(
    base: float, scale: float, count: int, den: int
) -> None:
    """ω/2π as double-double, for runs longer than RATIO_RUN (ratios multiplied, not exps):
    every frequency within 2⁻¹⁰⁴ relative of mpmath's, at 60 digits."""
    from pecli.kernels.exact import RATIO_RUN, frequencies

    assert count > RATIO_RUN
    mpmath.mp.dps = 60
    exponents = tuple((i, den) for i in range(count))
    omega, w_hi, w_lo = frequencies(base, scale, exponents)
    ln = mpmath.log(mpmath.mpf(base) / mpmath.mpf(scale))
    for i in [*range(0, count, 97), RATIO_RUN - 1, RATIO_RUN, RATIO_RUN + 1, count - 1]:
        om = mpmath.mpf(scale) * mpmath.exp(-ln * i / den)
        w = om / (2 * mpmath.pi)
        assert abs(mpmath.mpf(w_hi[i]) + mpmath.mpf(w_lo[i]) - w) <= w * mpmath.mpf(2) ** -104, i
        assert omega[i] == float(om), i


def test_a_table_too_wide_to_rotate_is_correctly_rounded_and_the_same_in_any_row_range() -> None:
    """Wider than ROTATE_MAX_FREQUENCIES (and than a block, in column pieces): the exact kernel,
    each float32 value the correct rounding of mpmath's, and rows built alone equal the table's."""
    from pecli.kernels.exact import BLOCK_CELLS
    from pecli.kernels.rotation import ROTATE_MAX_FREQUENCIES

    dim = 2 * BLOCK_CELLS + 6
    recipe = Sinusoidal(6, dim, start=999_990)
    assert recipe.sin_columns > ROTATE_MAX_FREQUENCIES
    table = recipe.rows(0, 6)
    assert np.array_equal(recipe.rows(4, 5)[0], table[4])
    mpmath.mp.dps = 60
    cols = sorted({0, 1, BLOCK_CELLS - 1, BLOCK_CELLS, BLOCK_CELLS + 1, dim - 1, *rng.integers(0, dim, 60).tolist()})
    for r in (0, 5):
        for j in cols:
            i, fn = recipe.column(j)
            angle = (999_990 + r) * mpmath.power(10000, mpmath.mpf(-2 * i) / dim)
            exact = mpmath.sin(angle) if fn == "sin" else mpmath.cos(angle)
            with mpmath.workprec(24):  # float32's 24 bits, rounded to nearest once
                rounded = float(+exact)
            assert table[r, j] == np.float32(rounded), (r, j)
