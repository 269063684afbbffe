"""The xpos kind against torchscale 0.3.0's own ``XPOS`` (``component/xpos_relative_position.py``,
Microsoft's code for "A Length-Extrapolatable Transformer"): the tables it multiplies queries and
keys by, ``duplicate_interleave(cos · scale)`` and ``duplicate_interleave(sin · scale)``, read from
its ``forward`` on ``x = [1, 0, 1, 0, …]`` (``references.torchscale_xpos``).  pecli's
``--rotary cos|sin --center ceil`` within the float32 rotary bound ``4·2⁻²⁴·(1 + p)`` times the
scale at each value (torch's float32 ``pow``, ``sin`` and ``cos`` are not correctly rounded;
pecli's are); ``identify`` names the factor, the centre, the base and the part of each.  ``-s``
prints max |Δ|.
"""

from __future__ import annotations

import numpy as np
import pytest
import references as ref

from pecli.identification import identify
from pecli.kinds.xpos import Xpos
from pecli.table import Table

pytestmark = ref.marks("torchscale", "torch")

#: (length, head_dim, scale_base, downscale: the keys' table)
CASES = [
    (512, 64, 512, False),
    (511, 64, 512, True),
    (2048, 128, 512, False),
    (7, 8, 512, False),
    (1001, 32, 256, True),
]
IDS = [f"{n}x{d}-B{b}-{'k' if down else 'q'}" for n, d, b, down in CASES]


@pytest.fixture(scope="module")
def tables() -> dict[tuple[int, int, int, bool], dict[str, np.ndarray]]:
    return {case: ref.torchscale_xpos(*case) for case in CASES}


def _recipe(case: tuple[int, int, int, bool], rotary: str) -> Xpos:
    n, d, base, down = case
    return Xpos(n, d, float(base), part="k" if down else "q", rotary=rotary, center="ceil")  # type: ignore[arg-type]


@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.parametrize("rotary", ["cos", "sin"])
def test_the_tables_are_torchscales(tables: dict, case: tuple[int, int, int, bool], rotary: str) -> None:
    theirs = tables[case][rotary]
    ours = _recipe(case, rotary).build()
    assert ours.shape == theirs.shape and theirs.dtype == np.float32
    scale = _recipe(case, "none").build().astype(np.float64)
    rows = np.arange(case[0], dtype=np.float64)[:, None]
    delta = np.abs(ours.astype(np.float64) - theirs)
    print(f"\n{case} {rotary}: max |Δ| {delta.max():.3g}, {np.mean(ours == theirs):.4%} identical")
    assert np.all(delta <= 4 * 2.0**-24 * (1 + rows) * scale), float(delta.max())


@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.parametrize("rotary", ["cos", "sin"])
def test_identify_names_torchscales_tables(tables: dict, case: tuple[int, int, int, bool], rotary: str) -> None:
    found = identify(Table(tables[case][rotary], None, "torchscale"))
    print(f"\n{case} {rotary}: {found.verdict}: {found.summary}")
    assert found.verdict == "match" and found.best is not None, found.summary
    best = found.best.recipe
    expected = _recipe(case, rotary)
    assert isinstance(best, Xpos)
    assert (best.scale_base, best.part, best.rotary, best.center) == (
        expected.scale_base,
        expected.part,
        rotary,
        expected.center,
    ), best.describe()
