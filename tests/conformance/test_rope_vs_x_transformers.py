"""The rope and xpos kinds against x-transformers 2.31.10's own ``RotaryEmbedding``: the angles its
``forward`` returns (pairs layout, ``[f0, f0, f1, f1, …]``), their cos and sin as
``apply_rotary_pos_emb`` takes them, ``interpolation_factor`` (angles divided: pecli's linear
scaling, the same float32 values here), ``base_rescale_factor`` (θ·f^(d/(d−2)), NTK-aware) and the
xPos scales of ``use_xpos=True``.

Angles and their cos/sin within the float32-pipeline bound ``4·2⁻²⁴·max(1, p)``, xPos scales within
2 float32 ulps (torch's float32 pow is not correctly rounded, pecli's is); ``identify`` proves a
recipe on each rotary table whose rebuild is x-transformers' within the bound.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import references as ref

from pecli.identification import identify
from pecli.kinds.rope import Rope
from pecli.kinds.xpos import Xpos
from pecli.table import Table

pytestmark = ref.marks("x_transformers")

#: (name, RotaryEmbedding arguments with dim and seq_len, pecli's rope parameters)
CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("dim32", {"dim": 32, "seq_len": 1024}, {"length": 1024, "dim": 32}),
    ("dim64", {"dim": 64, "seq_len": 4096}, {"length": 4096, "dim": 64}),
    ("dim128", {"dim": 128, "seq_len": 2048}, {"length": 2048, "dim": 128}),
    (
        "interpolation-2",
        {"dim": 64, "seq_len": 2048, "interpolation_factor": 2.0},
        {"length": 2048, "dim": 64, "scaling": "linear", "factor": 2.0},
    ),
    (
        "interpolation-4",
        {"dim": 128, "seq_len": 4096, "interpolation_factor": 4.0},
        {"length": 4096, "dim": 128, "scaling": "linear", "factor": 4.0},
    ),
    (
        "base-rescale-2",
        {"dim": 64, "seq_len": 2048, "base_rescale_factor": 2.0},
        {"length": 2048, "dim": 64, "base": 10000 * 2.0 ** (64 / 62)},
    ),
    (
        "base-rescale-4",
        {"dim": 128, "seq_len": 1024, "base_rescale_factor": 4.0},
        {"length": 1024, "dim": 128, "base": 10000 * 4.0 ** (128 / 126)},
    ),
]
IDS = [name for name, _, _ in CASES]


def _bound(length: int) -> float:
    return 4 * 2.0**-24 * max(1, length - 1)


@pytest.fixture(scope="module")
def tables() -> dict[str, dict[str, np.ndarray]]:
    return {name: ref.x_transformers_rotary(**kwargs) for name, kwargs, _ in CASES}


@pytest.mark.parametrize("index", range(len(CASES)), ids=IDS)
@pytest.mark.parametrize(("part", "theirs_key"), [("angle", "angles"), ("cos", "cos"), ("sin", "sin")])
def test_the_table_is_x_transformers(
    tables: dict[str, dict[str, np.ndarray]], index: int, part: str, theirs_key: str
) -> None:
    name, _, recipe = CASES[index]
    theirs = tables[name][theirs_key]
    ours = Rope(**recipe, layout="pairs", part=part).build()
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype == np.float32
    delta = float(np.max(np.abs(ours.astype(np.float64) - theirs)))
    print(f"\n{name} {part}: max |Δ| {delta:.3g}, {np.mean(ours == theirs):.4%} identical")
    # An angle is p·ω itself: its bound is relative to the angle (the cos/sin bound is absolute).
    scale = float(np.abs(theirs).max()) if part == "angle" else 1.0
    assert delta <= _bound(recipe["length"]) * max(1.0, scale / max(1, recipe["length"] - 1)), delta


@pytest.mark.parametrize(("dim", "seq_len"), [(64, 2048), (128, 1024)])
def test_xpos_scales_are_x_transformers(dim: int, seq_len: int) -> None:
    theirs = ref.x_transformers_rotary(dim, seq_len, use_xpos=True)["scale"]
    ours = Xpos(seq_len, dim, 512.0, "q").build()
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    ulps = np.abs(ours.view(np.int32).astype(np.int64) - theirs.view(np.int32).astype(np.int64))
    print(f"\nxpos {seq_len}x{dim}: max {int(ulps.max())} ulp, {np.mean(ours == theirs):.4%} identical")
    assert int(ulps.max()) <= 2


@pytest.mark.parametrize("index", range(len(CASES)), ids=IDS)
@pytest.mark.parametrize("theirs_key", ["angles", "cos", "sin"])
def test_identify_proves_a_recipe_that_rebuilds_x_transformers_table(
    tables: dict[str, dict[str, np.ndarray]], index: int, theirs_key: str
) -> None:
    name, _, recipe = CASES[index]
    theirs = tables[name][theirs_key]
    found = identify(Table(theirs, None, "x-transformers"))
    print(f"\n{name} {theirs_key}: {found.verdict}: {found.summary}")
    assert found.verdict == "match" and found.best is not None, found.summary
    rebuilt = found.best.recipe.build().astype(np.float64)
    scale = float(np.abs(theirs).max()) if theirs_key == "angles" else 1.0
    assert float(np.max(np.abs(rebuilt - theirs))) <= _bound(recipe["length"]) * max(1.0, scale / recipe["length"])


@pytest.mark.parametrize(("dim", "seq_len"), [(64, 2048), (128, 1024)])
def test_identify_proves_the_xpos_scales(dim: int, seq_len: int) -> None:
    theirs = ref.x_transformers_rotary(dim, seq_len, use_xpos=True)["scale"]
    found = identify(Table(theirs, None, "x-transformers"))
    print(f"\nxpos {seq_len}x{dim}: {found.verdict}: {found.summary}")
    assert found.verdict == "match" and found.best is not None, found.summary
    assert found.best.recipe.kind == "xpos"
    ulps = np.abs(found.best.recipe.build().view(np.int32).astype(np.int64) - theirs.view(np.int32).astype(np.int64))
    assert int(ulps.max()) <= 2


@pytest.mark.parametrize(("heads", "total", "length"), [(4, 8, 33), (6, 8, 17), (8, 8, 40), (3, 12, 9)])
def test_alibi_with_heads_left_unbiased_is_x_transformers(heads: int, total: int, length: int) -> None:
    # AlibiPositionalBias(heads, total_heads): the last query's row of its (h, i, j) bias is the
    # origin=last bias with total_heads; every query's row is that one shifted (−|j − i|·slope).
    from pecli.kinds.alibi import Alibi

    theirs = ref.x_transformers_alibi(heads, total, length)
    recipe = Alibi(heads, length=length, part="bias", origin="last", total_heads=total)
    mine = recipe.build()
    np.testing.assert_array_equal(mine, theirs["last"])
    assert not np.signbit(mine[heads:]).any()  # +0 rows, as torch's pad writes them
    found = identify(theirs["last"])
    assert found.verdict == "match" and found.best is not None, found.summary
    np.testing.assert_array_equal(found.best.recipe.build(), theirs["last"])
    assert found.best.recipe.total_heads == (total if total != heads else None)


@pytest.mark.parametrize(("heads", "total", "length"), [(4, 8, 33), (6, 8, 17), (16, 16, 70), (3, 12, 9)])
def test_alibi_matrix_is_x_transformers_whole_bias(heads: int, total: int, length: int) -> None:
    # The whole (heads, queries, keys) bias AlibiPositionalBias returns, bit for bit (+0 included),
    # read with its leading axes as rows; identify names it from the 3-D array.
    from pecli.kinds.alibi import Alibi

    theirs = ref.x_transformers_alibi(heads, total, length)["bias"]
    mine = Alibi(heads, length=length, part="matrix", total_heads=total if total != heads else None).build()
    np.testing.assert_array_equal(mine.view(np.uint32), theirs.reshape(-1, length).view(np.uint32))
    found = identify(theirs)
    assert found.verdict == "match" and found.best is not None, found.summary
    np.testing.assert_array_equal(found.best.recipe.build(), mine)
