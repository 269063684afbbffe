"""sincos2d's LoFTR order against kornia 0.9.0's own ``PositionEncodingSine``
(``feature/loftr/utils/position_encoding.py``, LoFTR's coarse-level encoding): its buffer ``pe``
``(1, d, H, W)``, channels ``[sin x_k, cos x_k, sin y_k, cos y_k]`` a frequency, cells counted from
1, ``temp_bug_fix=True`` (``ω_k = 10000^(−k/(d/4))``) and ``False`` (kornia's default for the
``outdoor`` and ``indoor`` weights: ``ω_k = e^(−2k)``, zju3dv/LoFTR#41).

Truth: the module's buffer, read as ``(H·W, d)`` rows; pecli's float32 pipeline (``exp`` of the
float32 product, as kornia takes it) within the float32 bound 4·2⁻²⁴·max(1, p); ``identify`` names
grid, order, coordinates and rule from the channels-first file the module's buffer is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import references as ref
from click.testing import CliRunner

from pecli.cli import cli
from pecli.kinds.sincos2d import Sincos2d
from tests.helpers import identified_and_checked

pytestmark = ref.marks("torch", "kornia")

#: (d_model, H, W): LoFTR's coarse width 256 at 1/8 of 480×640, and smaller ones.
CASES = [(256, 60, 80), (64, 7, 5), (8, 3, 4), (128, 32, 32)]


@pytest.mark.parametrize("temp_bug_fix", [True, False])
@pytest.mark.parametrize(("d", "h", "w"), CASES)
def test_the_loftr_map_is_kornias(d: int, h: int, w: int, temp_bug_fix: bool) -> None:
    theirs = ref.kornia_loftr_pe(d, h, w, temp_bug_fix)["table"].reshape(d, h * w).T
    freq = "paper" if temp_bug_fix else "loftr-bug"
    ours = Sincos2d(f"{h}x{w}", d, order="loftr", coords="count", compute="float32", freq=freq).build()  # type: ignore[arg-type]
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    delta = np.abs(ours.astype(np.float64) - theirs)
    print(f"\nkornia LoFTR d {d} {h}x{w} temp_bug_fix {temp_bug_fix}: max|Δ| {delta.max():.3g}, "
          f"{np.mean(delta == 0):.2%} identical")  # fmt: skip
    assert delta.max() <= 4 * 2.0**-24 * max(h, w)


@pytest.mark.parametrize("temp_bug_fix", [True, False])
@pytest.mark.parametrize(("d", "h", "w"), CASES[:2])
def test_identify_names_the_map_kornia_wrote(tmp_path: Path, d: int, h: int, w: int, temp_bug_fix: bool) -> None:
    rows = tmp_path / "rows.npy"
    np.save(rows, np.ascontiguousarray(ref.kornia_loftr_pe(d, h, w, temp_bug_fix)["table"].reshape(d, h * w).T))
    doc: Any = identified_and_checked(rows, "sincos2d")
    recipe = doc["best"]["recipe"]
    assert (recipe["grid"], recipe["order"], recipe["coords"]) == (f"{h}x{w}", "loftr", "count")
    assert recipe["freq"] == ("paper" if temp_bug_fix else "loftr-bug")
    # the buffer itself, (1, d, H, W): read channels-first in a note
    buffer = tmp_path / "pe.npy"
    np.save(buffer, ref.kornia_loftr_pe(d, h, w, temp_bug_fix)["table"][None])
    said = " ".join(CliRunner().invoke(cli, ["identify", str(buffer)]).output.split())
    assert f"read channels-first, ({d}, {h}, {w}) as {h * w}×{d}" in said and "order=loftr" in said, said
