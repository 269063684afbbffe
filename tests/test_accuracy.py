"""Accuracy against mpmath (exact to 60 digits) on sampled rows up to position 2**31."""

from __future__ import annotations

import numpy as np
import pytest

from pecli import Sinusoidal
from tests.conftest import ulp_distance

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
