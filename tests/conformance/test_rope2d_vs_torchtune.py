"""rope2d's ``cis`` part, ``first_index`` and ``cls_row`` against torchtune 0.6.1's own
``VisionRotaryPositionalEmbeddings`` (``modules/position_embeddings.py``): x (width) frequencies then
y's, each band's ``(cos, sin)`` in turn, positions counted from 1, the CLS row all angle 0, last
(``append_cls_token=True``) or first.

Truth: the module's ``cache`` (flattened ``(P² + 1, dim, 2)``), within the float32 bound of the
modern-encodings issue (4·2⁻²⁴·max(1, p)); ``identify`` names the recipe from that cache and its own
check passes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import references as ref

from pecli.kinds.rope2d import Rope2d
from tests.helpers import identified_and_checked

pytestmark = ref.marks("torch", "torchtune")

#: (patches per side P, torchtune's dim (head_dim / 2), base, append_cls_token)
CASES = [(4, 16, 10_000, True), (10, 32, 10_000, True), (6, 64, 10_000, False), (40, 64, 10_000, True)]
CASES += [(16, 40, 500_000, True), (7, 32, 10_000, False)]


def _ours(p: int, dim: int, base: int, last: bool) -> Rope2d:
    return Rope2d(f"{p}x{p}", 2 * dim, "lang", float(base), part="cis", grid_indexing="xy", first_index=1,
                  cls_row="last" if last else "first")  # fmt: skip


@pytest.mark.parametrize(("p", "dim", "base", "last"), CASES)
def test_the_vision_cache_is_torchtunes(p: int, dim: int, base: int, last: bool) -> None:
    theirs = ref.torchtune_vision_rope_cache(p, dim, base, last)["table"]
    ours = _ours(p, dim, base, last).build()
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    delta = np.abs(ours.astype(np.float64) - theirs)
    print(f"\ntorchtune vision {p}x{p} dim {dim} base {base} cls {'last' if last else 'first'}: "
          f"max|Δ| {delta.max():.3g}, {np.mean(delta == 0):.2%} identical")  # fmt: skip
    assert delta.max() <= 4 * 2.0**-24 * p


@pytest.mark.parametrize(("p", "dim", "base", "last"), CASES)
def test_identify_names_the_vision_cache(tmp_path: Path, p: int, dim: int, base: int, last: bool) -> None:
    path = tmp_path / "cache.npy"
    np.save(path, ref.torchtune_vision_rope_cache(p, dim, base, last)["table"])
    doc: Any = identified_and_checked(path, "rope2d")
    recipe = doc["best"]["recipe"]
    assert (recipe["feat_shape"], recipe["dim"], recipe["base"], recipe["part"]) == (f"{p}x{p}", 2 * dim, base, "cis")
    assert (recipe["first_index"], recipe["cls_row"], recipe["grid_indexing"]) == (1, "last" if last else "first", "xy")
