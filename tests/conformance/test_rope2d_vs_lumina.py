"""rope2d's interleaved axes against diffusers 0.42.1's own ``get_2d_rotary_pos_embed_lumina``
(Lumina-Next): language bands ``θ^(−k/q)`` for both axes, each frequency's height rotation then its
width rotation, complex64 ``freqs_cis``.

Truth: the function's complex64 output (and its (real, imaginary) parts), within the float32 bound
of the modern-encodings issue (4·2⁻²⁴·max(1, p)); ``--dtype complex64`` writes the tensor itself;
``identify`` names the recipe from the complex file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import references as ref
from click.testing import CliRunner

from pecli.cli import cli
from pecli.kinds.rope2d import Rope2d
from tests.helpers import identified_and_checked

pytestmark = ref.marks("torch", "diffusers")

#: (embed_dim, H, W)
CASES = [(64, 4, 6), (96, 16, 16), (128, 8, 12), (32, 32, 32)]


def _ours(d: int, h: int, w: int) -> Rope2d:
    return Rope2d(f"{h}x{w}", d, "lang", 10000.0, part="cis", axis_columns="interleaved")


@pytest.mark.parametrize(("d", "h", "w"), CASES)
def test_interleaved_axes_are_luminas(tmp_path: Path, d: int, h: int, w: int) -> None:
    theirs = ref.diffusers_lumina_2d_rope(d, h, w)
    ours = _ours(d, h, w).build()
    bound = 4 * 2.0**-24 * max(1, h - 1, w - 1)
    delta = np.abs(ours.astype(np.float64) - theirs["table"])
    print(f"\nlumina {h}x{w} dim {d}: max|Δ| {delta.max():.3g}, {np.mean(delta == 0):.2%} identical")
    assert ours.shape == theirs["table"].shape and delta.max() <= bound
    out = tmp_path / "freqs_cis.npy"
    spec = f"rope2d:feat_shape={h}x{w},dim={d},bands=lang,part=cis,axis_columns=interleaved"
    result = CliRunner().invoke(cli, ["export", spec, "--dtype", "complex64", "-o", str(out)])
    assert result.exit_code == 0, result.output
    written = np.load(out)
    assert written.dtype == np.complex64 and written.shape == theirs["complex"].shape
    assert np.abs(written - theirs["complex"]).max() <= bound


@pytest.mark.parametrize(("d", "h", "w"), CASES)
def test_identify_names_luminas_freqs_cis(tmp_path: Path, d: int, h: int, w: int) -> None:
    path = tmp_path / "freqs_cis.npy"
    np.save(path, ref.diffusers_lumina_2d_rope(d, h, w)["complex"])
    doc: Any = identified_and_checked(path, "rope2d")
    recipe = doc["best"]["recipe"]
    assert (recipe["feat_shape"], recipe["dim"], recipe["base"]) == (f"{h}x{w}", d, 10000.0)
    assert (recipe["part"], recipe["axis_columns"], recipe["grid_indexing"]) == ("cis", "interleaved", "ij")
