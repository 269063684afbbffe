"""The learned kind's counter-based normal draws (``pecli.kernels.draws``) against independent truths.

SplitMix64 against Vigna's ``splitmix64.c`` written out with Python integers (and its published
first output for state 0); the ziggurat's tables against the equal-area property of Marsaglia and
Tsang's construction, with the normal tail from ``math.erfc``; the draws against the normal
distribution itself (``statistics.NormalDist``) by a chi-square test that includes the tails the
wedge and tail tests produce; the compiled loop against NumPy, bit for bit.
"""

from __future__ import annotations

import math
import os
from statistics import NormalDist

import numpy as np
import pytest

from pecli.kernels.draws import ZIGGURAT_R, ZIGGURAT_V, fill_normal, normal_at, splitmix, ziggurat
from pecli.kernels.splitmix import COLUMN_BITS
from pecli.kinds import recipe_from_metadata
from pecli.kinds.learned import Learned

MASK = (1 << 64) - 1


def splitmix64_reference(state: int, count: int) -> list[int]:
    """Vigna's splitmix64.c ``next()``, ``count`` times from ``state``."""
    out = []
    for _ in range(count):
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        out.append(z ^ (z >> 31))
    return out


@pytest.mark.parametrize("key", [0, 1, 0x0123456789ABCDEF, MASK])
def test_splitmix_words_are_splitmix64_outputs(key: int) -> None:
    cells = np.array([0, 1, 2, 999, 2**32 + 7], dtype=np.uint64)
    ref = splitmix64_reference(key, 1000)
    got = splitmix(key, cells[:4]).tolist()
    assert got == [ref[0], ref[1], ref[2], ref[999]]
    # cell c is the generator's c-th output: the state after c+1 steps, whatever c
    far = int(cells[4])
    assert splitmix(key, cells[4:]).tolist() == splitmix64_reference((key + far * 0x9E3779B97F4A7C15) & MASK, 1)
    if key == 0:
        assert got[0] == 0xE220A8397B1DCDAF  # splitmix64.c's first output from state 0


def test_ziggurat_layers_have_equal_areas() -> None:
    k, w, f = ziggurat()
    r, v = float(ZIGGURAT_R), float(ZIGGURAT_V)
    x = w * 2.0**52  # x[i]: the right edge of layer i (x[0]: the base strip's width v / f(r))
    assert x[255] == pytest.approx(r, rel=1e-15) and f[255] == pytest.approx(math.exp(-r * r / 2), rel=1e-15)
    # the base strip: rectangle r·f(r) plus the tail beyond r, area v
    tail = math.sqrt(math.pi / 2) * math.erfc(r / math.sqrt(2))
    assert r * f[255] + tail == pytest.approx(v, rel=1e-9)
    assert x[0] * f[255] == pytest.approx(v, rel=1e-14)
    # layers 1..255: x_i · (f(x_{i-1}) − f(x_i)) = v, with f(x_0) = 1 at the top
    for i in range(2, 256):
        assert x[i] * (f[i - 1] - f[i]) == pytest.approx(v, rel=1e-12)
    assert x[1] * (1.0 - f[1]) == pytest.approx(v, rel=1e-6)  # the top layer closes the ziggurat
    np.testing.assert_allclose(f[1:], np.exp(-0.5 * x[1:] ** 2), rtol=1e-15)
    # accept when the abscissa is inside the next layer up: k[i] = x_{i-1}/x_i · 2⁵²
    np.testing.assert_allclose(k[2:].astype(float), x[1:-1] / x[2:] * 2.0**52, rtol=1e-15)
    assert k[1] == 0 and k[0] == int(r / x[0] * 2**52)


def chi_square(z: np.ndarray, edges: np.ndarray, cdf: np.ndarray) -> tuple[float, int]:
    counts = np.histogram(z, bins=edges)[0]
    expected = np.diff(cdf) * z.size
    return float(((counts - expected) ** 2 / expected).sum()), edges.size - 2


def test_draws_follow_the_standard_normal_tails_included() -> None:
    z = normal_at(7, np.arange(2_000_000, dtype=np.uint64))
    normal = NormalDist()
    inner = [normal.inv_cdf(q) for q in np.linspace(0, 1, 201)[1:-1]]
    r = float(ZIGGURAT_R)
    edges = np.array([-np.inf, -4.5, -r, *inner, r, 4.5, np.inf])
    cdf = np.array([0.0, *(normal.cdf(e) for e in edges[1:-1]), 1.0])
    stat, dof = chi_square(z, edges, cdf)
    assert stat < dof + 6 * math.sqrt(2 * dof), (stat, dof)  # a wrong table or tail is off by thousands
    beyond = int((np.abs(z) > r).sum())  # the tail method's values: expected 2M · 2Φ(−r) ≈ 516
    assert abs(beyond - z.size * 2 * normal.cdf(-r)) < 5 * math.sqrt(z.size * 2 * normal.cdf(-r))
    assert abs(z.mean()) < 5 / math.sqrt(z.size) and abs(z.std() - 1) < 5 / math.sqrt(2 * z.size)


def test_truncated_draws_are_the_normal_within_two_sigma() -> None:
    z = normal_at(3, np.arange(1_000_000, dtype=np.uint64), bound=2.0)
    assert np.abs(z).max() <= 2.0
    normal = NormalDist()
    lo, hi = normal.cdf(-2.0), normal.cdf(2.0)
    edges = np.array([normal.inv_cdf(q) for q in np.linspace(lo, hi, 101)])
    edges[0], edges[-1] = -2.0, 2.0
    cdf = (np.array([normal.cdf(e) for e in edges]) - lo) / (hi - lo)
    stat, dof = chi_square(z, edges, cdf)
    assert stat < dof + 6 * math.sqrt(2 * dof), (stat, dof)


def test_a_learned_value_depends_on_its_cell_alone() -> None:
    small = Learned(length=10, dim=8, seed=5).build()
    big = Learned(length=40, dim=24, seed=5)
    np.testing.assert_array_equal(big.build()[:10, :8], small)
    np.testing.assert_array_equal(big.rows(13, 29), big.build()[13:29])
    cells = (np.arange(3, 5, dtype=np.uint64)[:, None] << np.uint64(COLUMN_BITS)) + np.arange(8, dtype=np.uint64)
    np.testing.assert_array_equal(small[3:5], (normal_at(5, cells) * 0.02).astype(np.float32))
    assert not np.array_equal(small, Learned(length=10, dim=8, seed=6).build())
    half = Learned(length=10, dim=8, seed=5, dtype="float16").build()  # rounded once from float64
    wide = Learned(length=10, dim=8, seed=5, dtype="float64").build()
    np.testing.assert_array_equal(half, wide.astype(np.float16))
    np.testing.assert_array_equal(small, wide.astype(np.float32))


def test_files_written_before_rng_existed_read_as_pcg64() -> None:
    stored = {"schema": "pecli/1", "kind": "learned", "length": 6, "dim": 16, "seed": 3, "std": 0.02}
    old = recipe_from_metadata(stored)
    assert isinstance(old, Learned) and old.rng == "pcg64"
    row = np.random.Generator(np.random.PCG64(np.random.SeedSequence(3).spawn(6)[5])).standard_normal(16)
    np.testing.assert_array_equal(old.rows(5, 6)[0], (row * 0.02).astype(np.float32))
    new = Learned(length=6, dim=16, seed=3)
    assert recipe_from_metadata(new.to_metadata()) == new


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("bound", "dim", "first"), [(math.inf, 1024, 0), (2.0, 7, 5), (0.5, 33, 2**31 - 40)])
def test_the_compiled_loop_gives_numpys_bits(dtype: str, bound: float, dim: int, first: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("numba")
    rows = max(1, 300_000 // dim)
    out = {}
    for switch in ("0", "1"):
        monkeypatch.setenv("PECLI_COMPILED", switch)
        out[switch] = np.empty((rows, dim), dtype=dtype)
        fill_normal(out[switch], 11, first, 0.02, bound)
    assert os.environ["PECLI_COMPILED"] == "1"
    np.testing.assert_array_equal(out["0"].view(f"u{out['0'].itemsize}"), out["1"].view(f"u{out['1'].itemsize}"))
