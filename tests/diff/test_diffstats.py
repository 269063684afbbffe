"""diff's statistics on every route (mostly-equal gather, the fast same-dtype route, the general
float64 one), in chunks, in two merged halves, against whole-array NumPy written here: np.isclose
for the mismatch count, float64 |a − b| and |a − b|/|b| with NumPy's first-occurrence argmax, and
NumPy's own ulp ordering (``integer_repr``, what ``assert_array_max_ulp`` counts with; its
``nulp_diff`` rounds the count to the table's dtype, so the difference is taken here in int64)."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest
from numpy.testing._private.utils import integer_repr

import pecli.diff.statistics as diffstats
from pecli.diff.statistics import Accumulator, narrower_float


def truth(a: np.ndarray, b: np.ndarray, atol: float, rtol: float, ulps: int, top: int) -> dict[str, Any]:
    """The statistics of A against B, all elements at once, in float64 (finite tables)."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    diff = np.abs(a64 - b64)
    dtype = narrower_float(a.dtype, b.dtype)
    # In Python integers: float64 counts across zero pass 2⁶³ (reported as the nearest float).
    ra, rb = integer_repr(a.astype(dtype)).astype(object), integer_repr(b.astype(dtype)).astype(object)
    ulp = np.abs(ra - rb).astype(np.float64)
    close = np.isclose(a64, b64, rtol=rtol, atol=atol) | (ulp <= ulps if ulps else False)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        rel = np.where(b64 != 0, diff / np.abs(b64), -1.0)

    def first_max(x: np.ndarray) -> tuple[float, tuple[int, int] | None]:
        j = int(np.argmax(x))  # NumPy: the first occurrence
        v = float(x.reshape(-1)[j])
        return (v, divmod(j, a.shape[1])) if v > 0 else (0.0, None)

    flat = diff.reshape(-1)
    order = [int(i) for i in np.lexsort((np.arange(flat.size), -flat)) if flat[i] > 0][:top]
    row_max = diff.max(axis=1)
    rows = [int(r) for r in np.lexsort((np.arange(row_max.size), -row_max)) if row_max[r] > 0][:top]
    with np.errstate(over="ignore"):  # float64 differences near the largest finite square to inf
        rms = math.sqrt(float(np.mean(np.square(diff))))
    return {
        "mismatched": int((~close).sum()),
        "abs": first_max(diff),
        "rel": first_max(rel),
        "ulp": first_max(ulp),
        "rms": rms,
        "worst": [(i // a.shape[1], i % a.shape[1], float(flat[i])) for i in order],
        "worst_rows": [(r, float(row_max[r]), int((~close[r]).sum())) for r in rows],
    }


def measured(
    a: np.ndarray, b: np.ndarray, atol: float, rtol: float, ulps: int, top: int, halves: int
) -> dict[str, Any]:
    """pecli's accumulators over row blocks of 5 rows, the rows split in ``halves`` merged parts."""
    n = a.shape[0]
    accs = []
    bounds = np.linspace(0, n, halves + 1).astype(int)
    for lo, hi in itertools.pairwise(bounds):
        acc = Accumulator(top, atol, rtol, True, 0, narrower_float(a.dtype, b.dtype), ulps)
        for r0 in range(lo, hi, 5):
            acc.add(r0, a[r0 : min(hi, r0 + 5)], b[r0 : min(hi, r0 + 5)])
        accs.append(acc)
    for later in accs[1:]:
        accs[0].merge(later)
    got = accs[0].result()

    def at(key: str) -> tuple[float, tuple[int, int] | None]:
        e = got[f"{key}_at"]
        return (got[key], (e.position, e.dim) if e is not None else None)

    return {
        "mismatched": got["mismatched"],
        "abs": at("max_abs"),
        "rel": at("max_rel"),
        "ulp": at("max_ulp"),
        "rms": got["rms"],
        "worst": [(e.position, e.dim, e.abs) for e in got["worst"]],
        "worst_rows": [(r.position, r.max_abs, r.mismatched) for r in got["worst_rows"]],
    }


def tables(seed: int, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """A pair of finite tables with what trips up a fast path: zeros in either (sin 0), ±0
    against ∓0, opposite signs near zero, exact ties, one-ulp neighbours, whole rows equal, and
    (float32/float64) subnormals and values near the largest finite."""
    rng = np.random.default_rng(seed)
    shape = (int(rng.integers(1, 60)), int(rng.integers(1, 40)))
    t = np.dtype(dtype)
    b = rng.standard_normal(shape).astype(t)
    kind = seed % 4
    if kind == 0:  # a few ulps everywhere (a rounding difference)
        a = b.copy()
        for _ in range(3):
            a = np.where(
                rng.random(shape) < 0.7, np.nextafter(a, t.type(np.inf) * np.sign(rng.standard_normal(shape))), a
            )
    elif kind == 1:  # exact ties: differences in {0, 1/8, 1/2, 1}
        b = (rng.integers(-40, 40, size=shape) / 8.0).astype(t)
        a = (b + rng.choice([0.0, 0.125, 0.5, 1.0], size=shape)).astype(t)
    elif kind == 2:  # another table altogether
        a = rng.standard_normal(shape).astype(t)
    else:  # mostly equal, a handful moved
        a = b.copy()
        k = max(1, b.size // 10)
        idx = rng.choice(b.size, size=k, replace=False)
        a.reshape(-1)[idx] += t.type(rng.standard_normal(k).astype(t) * t.type(0.01))
    special = rng.random(shape)
    b[special < 0.05] = 0
    a[special < 0.03] = 0
    a[(special >= 0.05) & (special < 0.07)] = -b[(special >= 0.05) & (special < 0.07)]
    a[(special >= 0.07) & (special < 0.08)] = t.type(-0.0)
    if t.itemsize >= 4:
        tiny = np.finfo(t).smallest_subnormal
        b[(special >= 0.08) & (special < 0.09)] = tiny
        a[(special >= 0.09) & (special < 0.095)] = t.type(np.finfo(t).max / 4)
    if shape[0] > 2:
        a[1] = b[1]  # a whole row equal
    return a, b


CASES = [(seed, dtype) for dtype in ("float32", "float64", "float16") for seed in range(24)]


@pytest.mark.slow
@pytest.mark.parametrize(("seed", "dtype"), CASES)
@pytest.mark.parametrize(("atol", "rtol", "ulps"), [(0.0, 0.0, 0), (1e-3, 0.0, 0), (0.0, 1e-2, 2)])
def test_statistics_equal_whole_array_numpy(
    seed: int, dtype: str, atol: float, rtol: float, ulps: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = tables(seed, dtype)
    want = truth(a, b, atol, rtol, ulps, top=4)
    for chunk in (8, 1 << 19):  # many chunks per 5-row block, and one
        monkeypatch.setattr(diffstats, "CHUNK", chunk)
        for halves in (1, 2, 3):
            got = measured(a, b, atol, rtol, ulps, top=4, halves=halves)
            assert got.pop("rms") == pytest.approx(want["rms"], rel=1e-5)
            # Counts beyond 2⁵³ (float64 across zero) are rounded: equal to 1e-15, at the same element.
            (u, where), (wu, wwhere) = got.pop("ulp"), want["ulp"]
            assert (u == pytest.approx(wu, rel=1e-15), where) == (True, wwhere)
            assert got == {k: v for k, v in want.items() if k not in ("rms", "ulp")}, (chunk, halves)


def test_the_fast_route_is_taken_and_agrees_with_the_general_one(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every element differs: the fast route handles every chunk (counted), with the same result as
    # the general float64 route forced on the same data.
    rng = np.random.default_rng(5)
    b = rng.standard_normal((300, 64)).astype(np.float32)
    a = (b.astype(np.float16).astype(np.float32) + np.float32(1e-3)).astype(np.float32)
    calls: list[int] = []
    dense = Accumulator._dense

    def counting(self: Accumulator, *args: Any) -> None:
        calls.append(1)
        dense(self, *args)

    monkeypatch.setattr(Accumulator, "_dense", counting)
    fast = measured(a, b, 0.0, 0.0, 0, top=10, halves=2)
    assert len(calls) == 60  # every 5-row block
    monkeypatch.setattr(Accumulator, "_chunk", lambda self, r0, fa, fb, rows, d: self._general(r0, fa, fb, rows, d))
    general = measured(a, b, 0.0, 0.0, 0, top=10, halves=2)
    assert fast.pop("rms") == pytest.approx(general.pop("rms"), rel=1e-5)
    assert fast == general
    assert fast == {k: v for k, v in truth(a, b, 0.0, 0.0, 0, top=10).items() if k != "rms"}


def test_non_finite_values_take_the_general_route() -> None:
    b = np.ones((4, 3), np.float32)
    a = b + np.float32(0.5)
    a[2, 1], b[3, 0] = np.nan, np.inf
    got = measured(a, b, 0.0, 0.0, 0, top=3, halves=1)
    assert got["mismatched"] == 12
    assert got["abs"] == (math.inf, (2, 1))  # NaN against a number: an infinite difference, the first


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize(("atol", "rtol"), [(1e-6, 0.0), (0.0, 1e-3), (1e-4, 1e-2), (1e-300, 0.0)])
def test_a_tolerance_decides_the_elements_at_its_bound_as_float64_does(dtype: str, atol: float, rtol: float) -> None:
    # Every element differs from B by about the bound atol + rtol·|b| itself, a few ulps either
    # side: the chunk-dtype screen must hand each one it cannot decide to float64, so the count is
    # NumPy's isclose on the float64 values, element for element.
    t = np.dtype(dtype)
    rng = np.random.default_rng(11)
    b = rng.uniform(-2, 2, (200, 64)).astype(t)
    bound = atol + rtol * np.abs(b.astype(np.float64))
    a = (b.astype(np.float64) + np.sign(rng.standard_normal(b.shape)) * bound).astype(t)
    a = np.where(rng.random(b.shape) < 0.5, a, np.nextafter(a, rng.choice([-3.0, 3.0], b.shape).astype(t)))
    want = int(np.count_nonzero(~np.isclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol, atol=atol)))
    assert 0 < want < a.size  # both sides of the bound are present
    acc = Accumulator(0, atol, rtol, True, 0, narrower_float(a.dtype, b.dtype), 0)
    acc.add(0, a, b)
    assert acc.mismatched == want
