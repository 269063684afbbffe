"""The sinusoidal kind against keras-hub 0.32.0's own ``SinePositionEncoding`` layer (torch backend),
in float32 and in bfloat16 (``dtype="bfloat16"``: every step in bfloat16, positions too).

keras-hub takes ``(1/max_wavelength)^(2⌊j/2⌋/d)`` in one pow of the rounded ``1/max_wavelength``
(``--form inv-pow``), interleaved.  float32 tables are within the float32-pipeline bound
``4·2⁻²⁴·max(1, p)``; bfloat16 ones within one bfloat16 ulp plus that bound (torch's float32
``pow`` and ``sin`` are not always correctly rounded; pecli's are).  ``identify`` proves a recipe
on every float32 table and on the bfloat16 ones that start at position 0 (its fitter reads
angle steps, which bfloat16 positions past 256 do not keep), with no false MATCH.  ``-s``
prints max |Δ| and how many values are bit-identical.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import references as ref

from pecli.identification import identify
from pecli.kinds.sinusoidal import Sinusoidal
from pecli.table import Table

pytestmark = ref.marks("keras_hub", "torch")

#: (length, dim, start_index, SinePositionEncoding's arguments, pecli's recipe parameters)
CASES: list[tuple[int, int, int, dict[str, Any], dict[str, Any]]] = [
    (512, 768, 0, {}, {}),
    (2048, 128, 0, {}, {}),
    (1000, 64, 5, {}, {"start": 5}),
    (300, 63, 0, {}, {}),
    (4096, 512, 100, {}, {"start": 100}),
    (256, 32, 0, {"max_wavelength": 500}, {"base": 500.0}),
    # Windows whose positions bfloat16 holds exactly (below 256): identify names them too.
    (64, 32, 100, {}, {"start": 100}),
    (120, 48, 136, {}, {"start": 136}),
]
DTYPES = ["float32", "bfloat16"]
IDS = [f"{n}x{d}-start{s}" + (f"-base{k['max_wavelength']}" if k else "") for n, d, s, k, _ in CASES]
#: keras' ``positions=`` argument: real positions (pecli's ``--positions``, rows_at_real).
REAL = [0.0, 0.5, 1.5, 2.25, 99.75, 255.5]


def _bound(last: float, dtype: str, theirs: np.ndarray) -> np.ndarray:
    bound = 4 * 2.0**-24 * max(1.0, last)
    if dtype == "bfloat16":  # one bfloat16 ulp of each value (8 significant bits), plus the float32 bound
        return bound + np.ldexp(1.0, np.frexp(np.abs(theirs))[1] - 8)
    return np.full(theirs.shape, bound)


def _recipe(n: int, d: int, dtype: str, params: dict[str, Any]) -> Sinusoidal:
    return Sinusoidal(n, d, form="inv-pow", compute=dtype, dtype=dtype, **params)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def tables() -> dict[tuple[int, str], np.ndarray]:
    return {
        (i, dt): ref.keras_hub_sine(n, d, s, dtype=dt, **kwargs)["table"]
        for i, (n, d, s, kwargs, _) in enumerate(CASES)
        for dt in DTYPES
    }


@pytest.mark.parametrize("index", range(len(CASES)), ids=IDS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_the_table_is_keras_hubs(tables: dict[tuple[int, str], np.ndarray], index: int, dtype: str) -> None:
    n, d, start, _, params = CASES[index]
    theirs = tables[index, dtype]
    ours = _recipe(n, d, dtype, params).build()
    assert ours.shape == theirs.shape and str(ours.dtype) == dtype
    delta = np.abs(ours.astype(np.float64) - theirs)
    print(f"\n{IDS[index]} {dtype}: max |Δ| {delta.max():.3g}, {np.mean(delta == 0):.4%} identical")
    assert np.all(delta <= _bound(start + n - 1, dtype, theirs))


@pytest.mark.parametrize("dtype", DTYPES)
def test_real_positions_are_keras_hubs(dtype: str) -> None:
    theirs = ref.keras_hub_sine(len(REAL), 64, dtype=dtype, positions=REAL)["table"]
    ours = _recipe(256, 64, dtype, {}).rows_at_real(np.array(REAL))
    delta = np.abs(ours.astype(np.float64) - theirs)
    print(f"\nreal positions {dtype}: max |Δ| {delta.max():.3g}, {np.mean(delta == 0):.4%} identical")
    assert np.all(delta <= _bound(max(REAL), dtype, theirs))


@pytest.mark.parametrize("index", range(len(CASES)), ids=IDS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_identify_proves_a_recipe_that_rebuilds_keras_hubs_table(
    tables: dict[tuple[int, str], np.ndarray], index: int, dtype: str
) -> None:
    n, _, start, _, _ = CASES[index]
    theirs = tables[index, dtype]
    data = theirs.astype(_recipe(1, 2, dtype, {}).build().dtype)  # bfloat16 data as keras hands it back
    found = identify(Table(data, None, "keras-hub"))
    print(f"\n{IDS[index]} {dtype}: {found.verdict}: {found.summary}")
    if found.verdict == "match":  # never a false MATCH: the recipe it names rebuilds the table
        assert found.best is not None
        rebuilt = found.best.recipe.build().astype(np.float64)
        assert np.all(np.abs(rebuilt - theirs) <= _bound(start + n - 1, dtype, theirs))
    # bfloat16 positions past 256 are rounded to even ones and worse (rows repeat): not fitted
    if dtype == "float32" or (start == 0 and n <= 2048) or start + n <= 256:
        assert found.verdict == "match", found.summary
