"""The rope kind against keras-hub 0.32.0's own ``RotaryEmbedding`` layer (torch backend): the
cos and sin embeddings it rotates its input by, for its rope types ``linear``, ``dynamic`` (pecli's
``keras-dynamic``: every frequency divided by ``factor^(dim/(dim−2))``) and ``yarn``, with
``start_index``.  keras-hub takes ``base^(−2i/dim)`` in one float32 pow (``--form neg-pow``);
transformers' ``1 / base^(2i/dim)`` differs by its second rounding (7.6e-6 on a 512×64 table,
against 1.2e-7 with the right form).

Each table within the float32-pipeline bound ``4·2⁻²⁴·max(1, p)``; ``identify`` proves a recipe on
each whose table is keras-hub's within that bound (no false MATCH).  ``-s`` prints max |Δ|.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import references as ref

from pecli.identification import identify
from pecli.kinds.rope import Rope
from pecli.table import Table

pytestmark = ref.marks("keras_hub", "torch")

#: (dim, length, start_index, keras-hub's RotaryEmbedding arguments, pecli's recipe parameters)
CASES: list[tuple[int, int, int, dict[str, Any], dict[str, Any]]] = [
    (64, 512, 0, {}, {}),
    (128, 4096, 0, {}, {}),
    (256, 2048, 0, {}, {}),
    (128, 2048, 0, {"max_wavelength": 500000}, {"base": 500000.0}),
    (96, 1000, 0, {"max_wavelength": 1000000}, {"base": 1e6}),
    (64, 1024, 100, {}, {"start": 100}),
    (64, 2048, 0, {"rope_type": "linear", "scaling_factor": 4.0}, {"scaling": "linear", "factor": 4.0}),
    (128, 1024, 0, {"rope_type": "linear", "scaling_factor": 2.0}, {"scaling": "linear", "factor": 2.0}),
    (64, 2048, 0, {"rope_type": "dynamic", "scaling_factor": 4.0}, {"scaling": "keras-dynamic", "factor": 4.0}),
    (128, 1024, 0, {"rope_type": "dynamic", "scaling_factor": 2.0}, {"scaling": "keras-dynamic", "factor": 2.0}),
    (
        64,
        8192,
        0,
        {"rope_type": "yarn", "scaling_factor": 4.0, "original_max_position_embeddings": 2048},
        {"scaling": "yarn", "factor": 4.0, "original_max_position_embeddings": 2048},
    ),
    (
        128,
        4096,
        0,
        {"rope_type": "yarn", "scaling_factor": 8.0, "original_max_position_embeddings": 4096},
        {"scaling": "yarn", "factor": 8.0, "original_max_position_embeddings": 4096},
    ),
]
IDS = [f"{d}x{n}-start{s}-" + (str(k.get("rope_type", "default"))) + f"-{i}" for i, (d, n, s, k, _) in enumerate(CASES)]


def _bound(last: int) -> float:
    return 4 * 2.0**-24 * max(1, last)


@pytest.fixture(scope="module")
def tables() -> dict[int, dict[str, np.ndarray]]:
    return {i: ref.keras_hub_rope(dim, n, start, **kwargs) for i, (dim, n, start, kwargs, _) in enumerate(CASES)}


@pytest.mark.parametrize("index", range(len(CASES)), ids=IDS)
@pytest.mark.parametrize("part", ["cos", "sin"])
def test_the_table_is_keras_hubs(tables: dict[int, dict[str, np.ndarray]], index: int, part: str) -> None:
    dim, n, start, _, params = CASES[index]
    theirs = tables[index][part]
    ours = Rope(n, dim, part=part, form="neg-pow", **{"start": start, **params}).build()  # type: ignore[arg-type]
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype == np.float32
    delta = float(np.max(np.abs(ours.astype(np.float64) - theirs)))
    print(f"\n{IDS[index]} {part}: max |Δ| {delta:.3g}, {np.mean(ours == theirs):.4%} identical")
    assert delta <= _bound(start + n - 1), delta


@pytest.mark.parametrize("index", range(len(CASES)), ids=IDS)
@pytest.mark.parametrize("part", ["cos", "sin"])
def test_identify_proves_a_recipe_that_rebuilds_keras_hubs_table(
    tables: dict[int, dict[str, np.ndarray]], index: int, part: str
) -> None:
    _, n, start, _, _ = CASES[index]
    theirs = tables[index][part]
    found = identify(Table(theirs, None, "keras-hub"))
    print(f"\n{IDS[index]}: {found.verdict}: {found.summary}")
    assert found.verdict == "match" and found.best is not None, found.summary
    rebuilt = found.best.recipe.build()
    assert float(np.max(np.abs(rebuilt.astype(np.float64) - theirs))) <= _bound(start + n - 1)
