"""Heatmap sampling, decay, the relative-position residual and wavelengths, against float64
closed forms written here and the published claims (long-range decay, as blog walkthroughs of "Attention
Is All You Need" plot it; Vaswani et al. §3.5: PE(p+k) is linear in PE(p))."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from pecli import PecliInputError, Sinusoidal
from pecli.analysis import (
    decay,
    estimate_wavelengths,
    heatmap_sample,
    relative_residual,
    wavelengths,
)
from pecli.kinds.sincos2d import Sincos2d
from pecli.table import Table, read_rows, spread_windows


def closed_form(
    length: int, dim: int, base: float = 10000.0, layout: str = "interleaved", start: int = 0
) -> np.ndarray:
    """The paper's formula in float64: ω_i = base^(−2i/d); sin in column 2i, cos in 2i+1 (or split)."""
    p = np.arange(start, start + length, dtype=np.float64)[:, None]
    omega = base ** (-2.0 * np.arange((dim + 1) // 2) / dim)
    s, c = np.sin(p * omega), np.cos(p * omega[: dim // 2])
    if layout == "split":
        return np.concatenate([s, c], axis=1)
    out = np.empty((length, dim))
    out[:, 0::2], out[:, 1::2] = s, c
    return out


class Counting:
    """An array-like that records which rows were read (like a memmap or an h5py dataset)."""

    def __init__(self, data: np.ndarray) -> None:
        self.data, self.shape, self.dtype = data, data.shape, data.dtype
        self.read: set[int] = set()

    def __getitem__(self, key: slice) -> Any:
        self.read.update(range(*key.indices(self.shape[0])))
        return self.data[key]


def plain(x: np.ndarray) -> Table:
    return Table(x, None, "array")


# -- reading and heatmaps --------------------------------------------------------------------
def test_read_rows_reads_only_the_rows_asked_for_and_their_near_gaps() -> None:
    data = Counting(np.arange(1000.0).reshape(100, 10))
    rows = read_rows(Table(data, None, "x"), [0, 2, 50, 99], np.array([1, 3]))
    assert rows.tolist() == [[1, 3], [21, 23], [501, 503], [991, 993]]
    assert data.read == {0, 1, 2, 50, 99}


def test_spread_windows_cover_the_table_evenly() -> None:
    assert spread_windows(100, 4, 10) == [(0, 10), (30, 40), (60, 70), (90, 100)]
    assert spread_windows(30, 4, 10) == [(0, 30)]


def test_heatmap_sample_of_a_small_table_is_the_table() -> None:
    t = Table.from_recipe(Sinusoidal(32, 128, dtype="float64"))
    s = heatmap_sample(t, 512, 512)
    np.testing.assert_allclose(s.values, closed_form(32, 128), atol=1e-12)
    assert s.row_ids.tolist() == list(range(32)) and s.col_ids.tolist() == list(range(128))
    assert s.description == "all 32 positions, all 128 dims"


def test_heatmap_sample_strides_reads_only_sampled_rows_and_keeps_sin_and_cos() -> None:
    data = Counting(closed_form(4096, 1024))
    s = heatmap_sample(Table(data, None, "x"), 256, 256)
    # 4096/256 = 16 → every 16th row; 1024/256 = 4 is even, so 5 (odd) keeps sin and cos columns.
    assert s.row_ids.tolist() == list(range(0, 4096, 16))
    assert s.col_ids.tolist() == list(range(0, 1024, 5))
    assert s.description == "every 16th position (256 of 4096), every 5th dim (205 of 1024)"
    assert data.read == set(range(0, 4096, 16))
    np.testing.assert_array_equal(s.values, data.data[::16, ::5])
    assert set(s.values[0, 0::2]) == {0.0} and set(s.values[0, 1::2]) == {1.0}  # sin 0, cos 0


@pytest.mark.parametrize("bad", [0, -3, 2.5, True])
def test_heatmap_sample_rejects_bad_limits(bad: Any) -> None:
    with pytest.raises(PecliInputError, match="max_rows must be a whole number ≥ 1"):
        heatmap_sample(plain(np.zeros((4, 4))), bad, 4)


# -- decay (blog walkthroughs of "Attention Is All You Need") --------------------------------
def test_decay_equals_the_closed_form() -> None:
    # PE(p)·PE(p+k) = Σ_i sin(pω)sin((p+k)ω) + cos(pω)cos((p+k)ω) = Σ_i cos(kω_i), for every p.
    t = plain(closed_form(512, 128))
    result = decay(t, 64)
    omega = 10000.0 ** (-2.0 * np.arange(64) / 128)
    expected = np.cos(np.outer(np.arange(65), omega)).sum(axis=1)
    np.testing.assert_allclose(result.dot, expected, atol=1e-10)
    np.testing.assert_allclose(result.cosine, expected / 64, atol=1e-12)
    assert result.k.tolist() == list(range(65))
    assert result.pairs == 512 - 64 and result.sample == "every p in 0..447"


def test_cosine_similarity_decays_with_the_offset_on_average() -> None:
    """Long-range decay, as blog walkthroughs show it: nearby positions look alike, far ones less so (d = 128, small k)."""
    cos = decay(Table.from_recipe(Sinusoidal(512, 128)), 64).cosine
    means = [cos[a : a + 16].mean() for a in (1, 17, 33, 49)]
    assert cos[0] == pytest.approx(1.0)
    assert means == sorted(means, reverse=True)
    assert np.polyfit(np.arange(65), cos, 1)[0] < 0


def test_decay_samples_long_tables_in_windows_with_bounded_reads() -> None:
    data = Counting(closed_form(20000, 16))
    result = decay(Table(data, None, "x"), 8)
    assert result.pairs == 2048
    assert result.sample == "2048 of the 19992 positions p, in 8 windows of 256 spread over the table"
    assert len(data.read) <= 8 * (256 + 8)
    omega = 10000.0 ** (-2.0 * np.arange(8) / 16)
    np.testing.assert_allclose(result.dot, np.cos(np.outer(np.arange(9), omega)).sum(axis=1), atol=1e-9)


def test_decay_positions_and_zero_rows() -> None:
    x = closed_form(40, 8)
    x[5] = 0  # a padding row: its dot products count (as 0), its cosines are skipped
    result = decay(plain(x), 2, positions=[3, 4, 5])
    pairs = [[(x[p], x[p + k]) for p in (3, 4, 5)] for k in range(3)]
    np.testing.assert_allclose(result.dot, [np.mean([a @ b for a, b in ps]) for ps in pairs])
    cosines = [[a @ b / np.linalg.norm(a) / np.linalg.norm(b) for a, b in ps if a.any() and b.any()] for ps in pairs]
    np.testing.assert_allclose(result.cosine, [np.mean(c) for c in cosines])
    assert [len(c) for c in cosines] == [2, 1, 1]
    assert result.to_dict()["pairs"] == 3


def test_decay_errors() -> None:
    t = plain(np.ones((10, 4)))
    with pytest.raises(PecliInputError, match=r"k must be in 0\.\.9 for a table of 10 rows, got 10"):
        decay(t, 10)
    with pytest.raises(PecliInputError, match=r"positions must be rows 0\.\.6"):
        decay(t, 3, positions=[7])


# -- the relative-position residual (Vaswani et al. §3.5) -------------------------------------
@pytest.mark.parametrize("layout", ["interleaved", "split"])
def test_exact_sinusoids_are_linear_in_the_offset(layout: str) -> None:
    t = plain(closed_form(1024, 128, layout=layout))
    result = relative_residual(t, [1, 2, 5, 64, 300])
    assert result.k.tolist() == [1, 2, 5, 64, 300]
    assert np.all(result.residual < 1e-6), result.residual


def test_pecli_float64_tables_are_linear_to_machine_precision() -> None:
    result = relative_residual(Table.from_recipe(Sinusoidal(512, 128, dtype="float64")), [1, 16])
    assert np.all(result.residual < 1e-12)


def test_random_tables_are_not() -> None:
    t = plain(np.random.default_rng(2).normal(0, 0.02, (512, 64)))
    result = relative_residual(t, [1, 2, 8])
    assert np.all(result.residual > 0.1)
    # Least squares over m rows and d free coefficients leaves about √(1 − d/m) of a random target.
    assert result.residual[0] == pytest.approx(math.sqrt(1 - 64 / result.rows), abs=0.05)


def test_the_fitted_map_is_the_rotation_by_k_omega() -> None:
    result = relative_residual(plain(closed_form(200, 8)), [3], maps=True)
    assert result.maps is not None
    r = result.maps[0]
    expected = np.zeros((8, 8))
    for i in range(4):
        w = 3 * 10000.0 ** (-2.0 * i / 8)
        # sin((p+k)ω) = sin(pω)cos(kω) + cos(pω)sin(kω); cos((p+k)ω) = cos(pω)cos(kω) − sin(pω)sin(kω)
        expected[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [[math.cos(w), math.sin(w)], [-math.sin(w), math.cos(w)]]
    np.testing.assert_allclose(r, expected, atol=1e-6)


def test_too_few_rows_for_a_meaningful_fit_is_refused() -> None:
    with pytest.raises(PecliInputError, match="needs at least 2·dim = 1536 positions"):
        relative_residual(plain(np.zeros((512, 768))), [1])


# -- wavelengths -----------------------------------------------------------------------------
def test_wavelengths_of_recipes() -> None:
    expected = 2 * np.pi * 10000.0 ** (2.0 * (np.arange(8) // 2) / 8)
    np.testing.assert_allclose(wavelengths(Sinusoidal(10, 8)), expected, rtol=1e-15)
    # Split, odd: column j < 5 is sin of frequency j, then cos of frequency j − 5.
    split = wavelengths(Sinusoidal(10, 9, layout="split"))
    np.testing.assert_allclose(split, 2 * np.pi * 10000.0 ** (2.0 * np.r_[0:5, 0:4] / 9), rtol=1e-15)
    assert np.isnan(wavelengths(Sinusoidal(10, 9, layout="split", odd="zero"))[-1])
    grid = wavelengths(Sincos2d("4x4", 16))
    np.testing.assert_allclose(grid, 2 * np.pi * 10000.0 ** (np.tile(np.arange(4), 4) / 4), rtol=1e-15)


@pytest.mark.parametrize("layout", ["interleaved", "split"])
def test_estimated_wavelengths_of_a_plain_array(layout: str) -> None:
    found = estimate_wavelengths(plain(closed_form(3000, 16, layout=layout).astype(np.float32)))
    exact = wavelengths(Sinusoidal(3000, 16, layout=layout))  # type: ignore[arg-type]
    assert found.method == f"phase of sin/cos pairs ({layout} layout)"
    np.testing.assert_allclose(found.wavelength, exact, rtol=1e-4)


def test_estimated_wavelengths_by_zero_crossings() -> None:
    p = np.arange(1000.0)[:, None]
    x = np.sin(2 * np.pi * p / np.array([50.0, 125.0, 5000.0]))  # sin columns only: no pairs
    found = estimate_wavelengths(plain(x))
    assert found.method == "zero crossings"
    np.testing.assert_allclose(found.wavelength[:2], [50, 125], rtol=0.02)
    assert np.isnan(found.wavelength[2])  # longer than the table


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_sample_of_a_wide_table_computes_its_cells_alone_with_the_tables_bits(
    dtype: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`plot` of a 10⁹ × 10⁶ recipe built each sampled row whole (10⁹ values, 63 s) where the
    picture needs 1000 columns of it: a recipe that computes cells directly gives those cells, the
    same bits as its rows (float32 too wide to rotate: the exact kernel rounded once)."""
    from pecli.recipe import Recipe

    recipe = Sinusoidal(40, 70_001, dtype=dtype, start=10**9 - 40)
    assert recipe.direct_cells()
    table = Table.from_recipe(recipe)
    expected = recipe.rows(0, 40).astype(np.float64)
    built: list[tuple[int, int]] = []
    real_rows = Sinusoidal.rows

    def counted(self: Recipe, a: int, b: int) -> np.ndarray:
        built.append((a, b))
        return real_rows(self, a, b)

    monkeypatch.setattr(Sinusoidal, "rows", counted)
    sample = heatmap_sample(table, max_rows=10, max_cols=64)
    assert built == []  # no row was built for the picture
    assert np.array_equal(sample.values, expected[sample.row_ids][:, sample.col_ids])
    assert not Sinusoidal(1000, 512).direct_cells()  # rotated float32: rows are cheaper than cells
    assert Sinusoidal(8, 512).direct_cells()  # too short to rotate: the exact kernel, as the cells
