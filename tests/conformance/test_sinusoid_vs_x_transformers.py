"""The sinusoidal kind against x-transformers 2.31.10's own ``ScaledSinusoidalEmbedding``: ``[sin |
cos]`` of ``p·θ^(−i/half)`` (one float32 pow, ``--form neg-pow``) times its ``scale`` parameter,
``dim ** -0.5`` as built (preset ``x-transformers-scaled-sine``, which follows ``--dim``) or any
value a training left there (``--scale``).

Each table within the float32-pipeline bound ``4·2⁻²⁴·max(1, p)`` times the scale; ``identify``
proves a recipe on each (the fitter reads the scale as the radius the (sin, cos) pairs lie on),
with no false MATCH.  ``-s`` prints max |Δ| and the verdicts.
"""

from __future__ import annotations

import numpy as np
import pytest
import references as ref

from pecli.identification import identify
from pecli.presets import get_preset
from pecli.table import Table

pytestmark = ref.marks("x_transformers", "torch")

#: (dim, length, theta, offset, a trained scale or None for dim ** -0.5)
CASES: list[tuple[int, int, float, int, float | None]] = [
    (512, 1024, 10000, 0, None),
    (64, 4096, 10000, 0, None),
    (768, 2048, 10000, 10, None),
    (128, 512, 500, 0, None),
    (256, 1000, 10000, 0, 0.731),
    (1024, 300, 10000, 0, 2.5),
]
IDS = [f"d{d}-n{n}-theta{t:g}-offset{o}" + ("" if s is None else f"-scale{s}") for d, n, t, o, s in CASES]


@pytest.fixture(scope="module")
def tables() -> dict[int, dict[str, np.ndarray]]:
    return {i: ref.x_transformers_scaled_sine(d, n, t, o, s) for i, (d, n, t, o, s) in enumerate(CASES)}


def _bound(index: int, scale: float) -> float:
    _, n, _, offset, _ = CASES[index]
    return 4 * 2.0**-24 * max(1, offset + n - 1) * max(1.0, scale)


@pytest.mark.parametrize("index", range(len(CASES)), ids=IDS)
def test_the_table_is_x_transformers(tables: dict[int, dict[str, np.ndarray]], index: int) -> None:
    d, n, theta, offset, trained = CASES[index]
    theirs, scale = tables[index]["table"], float(tables[index]["scale"][0])
    params = {"length": n, "dim": d, "base": float(theta), "start": offset}
    ours = get_preset("x-transformers-scaled-sine").recipe(**params, **({} if trained is None else {"scale": trained}))
    assert np.float32(ours.scale) == np.float32(scale)  # dim ** -0.5 at this width, or the trained value
    built = ours.build()
    assert built.shape == theirs.shape and built.dtype == theirs.dtype == np.float32
    delta = np.abs(built.astype(np.float64) - theirs)
    print(f"\n{IDS[index]}: max |Δ| {delta.max():.3g}, {np.mean(delta == 0):.4%} identical")
    assert delta.max() <= _bound(index, scale)


@pytest.mark.parametrize("index", range(len(CASES)), ids=IDS)
def test_identify_proves_a_recipe_that_rebuilds_x_transformers_table(
    tables: dict[int, dict[str, np.ndarray]], index: int
) -> None:
    theirs, scale = tables[index]["table"], float(tables[index]["scale"][0])
    found = identify(Table(theirs, None, "x-transformers"))
    print(f"\n{IDS[index]}: {found.verdict}: {found.summary}")
    assert found.verdict == "match" and found.best is not None, found.summary
    rebuilt = found.best.recipe.build()
    assert float(np.max(np.abs(rebuilt.astype(np.float64) - theirs))) <= _bound(index, scale)
