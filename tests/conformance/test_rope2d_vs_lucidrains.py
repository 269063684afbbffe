"""The rope2d kind against rotary-embedding-torch 0.9.1's own axial rotary embeddings.

Tables come from ``RotaryEmbedding(D, freqs_for=…, theta=…, max_freq=…).get_axial_freqs(*feat_shape)``
(``references.rotary_embedding_torch_axial_freqs``): the angles themselves (``part='angle'``) and
their own ``.cos()``/``.sin()`` (``part='cos'``/``'sin'``), language and pixel bands, 2 and 3 axes.
rope2d builds them with ``dim = 2·D`` (``D/2`` bands per axis), ``base = theta`` (lang) or
``linear_bands`` with ``max_res = max_freq`` (pixel).  Expected (as for timm's, dialects.md §0): the
float32 pipeline within ``4·2⁻²⁴·max(1, p)``, p the largest angle ``|coordinate|·band`` of the
table; the angles themselves are one float32 product each, so bit-identical.  Run with ``-s`` to
print max |Δ| and the share of bit-identical values per table.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import references as ref
from click.testing import CliRunner

from pecli.cli import cli
from pecli.kinds.rope2d import Rope2d
from pecli.presets import get_preset

pytestmark = [
    pytest.mark.conformance,
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("rotary_embedding_torch") is None, reason="rotary-embedding-torch is not installed"
    ),
]

#: name, lucidrains' dim D, freqs_for, theta, max_freq, feat_shape.
CASES: list[tuple[str, int, str, float, int, tuple[int, ...]]] = [
    ("lang-16x16-D32", 32, "lang", 10000.0, 10, (16, 16)),
    ("lang-14x20-D64", 64, "lang", 10000.0, 10, (14, 20)),
    ("lang-t100-32x32-D16", 16, "lang", 100.0, 10, (32, 32)),
    ("lang-t1e6-24x24-D128", 128, "lang", 1e6, 10, (24, 24)),
    ("lang-8x16x16-D32", 32, "lang", 10000.0, 10, (8, 16, 16)),
    ("lang-t500-4x7x5-D48", 48, "lang", 500.0, 10, (4, 7, 5)),
    ("lang-16x8x8-D8", 8, "lang", 10000.0, 10, (16, 8, 8)),
    ("pixel-readme-8x64x32-D16", 16, "pixel", 10000.0, 256, (8, 64, 32)),
    ("pixel-mf10-14x14-D32", 32, "pixel", 10000.0, 10, (14, 14)),
    ("pixel-mf224-9x5-D64", 64, "pixel", 10000.0, 224, (9, 5)),
    ("pixel-mf256-64x64-D32", 32, "pixel", 10000.0, 256, (64, 64)),
    ("pixel-mf64-5x9x7-D24", 24, "pixel", 10000.0, 64, (5, 9, 7)),
    ("pixel-mf10-1x8-D16", 16, "pixel", 10000.0, 10, (1, 8)),
    ("pixel-mf512-3x1x6-D4", 4, "pixel", 10000.0, 512, (3, 1, 6)),
]

RESULTS: list[tuple[str, str, str, float, float]] = []


def _angle_bound(recipe: Rope2d) -> float:
    """p: the largest |coordinate·band| of the table, in float64."""
    bands = np.abs(recipe.band_values().astype(np.float64)).max()
    coords = max(np.abs(recipe.coordinates(a).astype(np.float64)).max() for a in range(len(recipe.axes)))
    return float(bands * coords)


def _recipe(case: tuple[Any, ...], part: str) -> Rope2d:
    _, dim, freqs_for, theta, max_freq, shape = case
    grid = "x".join(map(str, shape))
    pixel = freqs_for == "pixel"
    return Rope2d(grid, 2 * dim, freqs_for, theta, max_freq, pixel, part=part)  # type: ignore[arg-type]


def _check(name: str, part: str, recipe: Rope2d, theirs: np.ndarray) -> None:
    ours = recipe.build()
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype == np.float32
    delta = np.abs(ours.astype(np.float64) - theirs)
    diff, same, p = float(delta.max()), float(np.mean(ours == theirs)), _angle_bound(recipe)
    RESULTS.append((name, part, "x".join(map(str, ours.shape)), diff, same))
    print(
        f"\n{name:26s} {part:5s} {ours.shape[0]}x{ours.shape[1]} (p ≤ {p:.4g}): "
        f"max|Δ| {diff:.3g}, {same:.4%} bit-identical"
    )
    assert diff <= 4 * 2.0**-24 * max(1.0, p), (name, part, diff)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_get_axial_freqs(case: tuple[Any, ...]) -> None:
    name, dim, freqs_for, theta, max_freq, shape = case
    theirs = ref.rotary_embedding_torch_axial_freqs(dim, shape, freqs_for, theta, max_freq)
    # The bands are theirs (lang: 1/theta^(2k/D); pixel: π·linspace(1, max_freq/2, D/2)) to within an
    # ulp: torch's float32 pow is not always correctly rounded (theta 1e6: a few bands one ulp off).
    bands = _recipe(case, "angle").band_values()
    assert np.all(np.abs(bands - theirs["freqs"]) <= np.spacing(bands)), (name, bands - theirs["freqs"])
    for part, key in (("angle", "angles"), ("cos", "cos"), ("sin", "sin")):
        _check(name, part, _recipe(case, part), theirs[key])


def test_the_lucidrains_axial_preset_is_the_readme_example() -> None:
    ours = get_preset("lucidrains-axial").recipe()
    theirs = ref.rotary_embedding_torch_axial_freqs(16, (8, 64, 32), "pixel", max_freq=256)["angles"]
    assert ours == Rope2d("8x64x32", 32, "pixel", max_res=256, linear_bands=True, part="angle")
    assert ours.shape == theirs.shape == (8 * 64 * 32, 48)
    assert np.array_equal(ours.build(), theirs)


@pytest.mark.parametrize("shape", [(8, 64, 32), (4, 16, 16), (2, 9, 5), (16, 16), (24, 12)])
def test_identify_names_lucidrains_axial_for_a_table_lucidrains_wrote(tmp_path: Path, shape: tuple[int, ...]) -> None:
    """A table written by get_axial_freqs as the README calls it: a MATCH naming the preset, its grid
    (2 or 3 axes) read from the rows."""
    path = tmp_path / "axial.npy"
    np.save(path, ref.rotary_embedding_torch_axial_freqs(16, shape, "pixel", max_freq=256)["angles"])
    doc = json.loads(CliRunner().invoke(cli, ["identify", str(path), "--json"]).stdout)
    assert doc["verdict"] == "match" and doc["best"]["name"] == "lucidrains-axial", doc
    assert doc["best"]["recipe"]["feat_shape"] == "x".join(map(str, shape)) and doc["best"]["recipe"]["part"] == "angle"
    assert doc["best"]["verified"]["beyond"] == 0
