"""The axial kind against diffusers 0.42.1's own per-axis rotary embeddings.

Flux tables come from ``FluxPosEmbed(theta, axes_dim)`` on the ids ``FluxPipeline`` makes (text all
zero, the packed latent grid ``(0, row, col)``; ``references.diffusers_flux_pos_embed``); one-axis
tables from ``get_1d_rotary_pos_embed(..., use_real=True)`` with its ``linear_factor``,
``ntk_factor``, ``repeat_interleave_real`` and ``freqs_dtype``.  Expected (dialects.md §0): the
float64 pipeline (FluxPosEmbed on CPU) within one float32 ulp of each value plus
``4·2⁻⁵³·max(1, p)``; the float32 pipeline within ``4·2⁻²⁴·max(1, p)``, p the largest id.  Run
with ``-s`` to print max |Δ| and the share of bit-identical values per table.
"""

from __future__ import annotations

import importlib.util
import json
import shlex
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import references as ref
from click.testing import CliRunner

from pecli.cli import cli
from pecli.kinds.axial import Axial, token_ids
from pecli.presets import get_preset

pytestmark = [
    pytest.mark.conformance,
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("diffusers") is None, reason="diffusers is not installed"),
]

#: name, text tokens, latent grid height, width, theta, axes_dim.
FLUX: list[tuple[str, int, int, int, int, tuple[int, ...]]] = [
    ("flux-1024px", 512, 64, 64, 10000, (16, 56, 56)),
    ("flux-768x1280", 256, 48, 80, 10000, (16, 56, 56)),
    ("flux-small", 77, 16, 16, 10000, (16, 56, 56)),
    ("flux-one-token", 1, 1, 1, 10000, (16, 56, 56)),
    ("axes-8-12-12", 9, 3, 5, 1000, (8, 12, 12)),
]
#: name, dim, positions, theta, linear_factor, ntk_factor, repeat_interleave_real, freqs_dtype.
ONE_AXIS: list[tuple[str, int, int, float, float, float, bool, str]] = [
    ("1d-f32-pairs", 64, 4096, 10000.0, 1.0, 1.0, True, "float32"),
    ("1d-f32-half", 64, 4096, 10000.0, 1.0, 1.0, False, "float32"),
    ("1d-f64-pairs", 64, 4096, 10000.0, 1.0, 1.0, True, "float64"),
    ("1d-f64-half", 128, 2048, 500000.0, 1.0, 1.0, False, "float64"),
    ("1d-linear-2", 64, 4096, 10000.0, 2.0, 1.0, True, "float32"),
    ("1d-ntk-3-f64", 64, 4096, 10000.0, 1.0, 3.0, False, "float64"),
    ("1d-linear-ntk-f32", 96, 8192, 10000.0, 1.5, 2.0, False, "float32"),
    ("1d-linear-ntk-f64", 32, 1000, 10000.0, 4.0, 8.0, True, "float64"),
]

RESULTS: list[tuple[str, str, str, float, float]] = []


def _check(name: str, part: str, ours: np.ndarray, theirs: np.ndarray, p_max: int, compute: str) -> None:
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype == np.float32
    delta = np.abs(ours.astype(np.float64) - theirs)
    diff, same = float(delta.max()), float(np.mean(ours == theirs))
    RESULTS.append((name, part, "x".join(map(str, ours.shape)), diff, same))
    print(
        f"\n{name:20s} {part} {ours.shape[0]}x{ours.shape[1]} (p ≤ {p_max}): max|Δ| {diff:.3g}, {same:.4%} bit-identical"
    )
    if compute == "float64":
        bound = np.spacing(np.abs(theirs)).astype(np.float64) + 4 * 2.0**-53 * max(1, p_max)
        assert np.all(delta <= bound), (name, part, diff)
    else:
        assert diff <= 4 * 2.0**-24 * max(1, p_max), (name, part, diff)


def flux_recipe(case: tuple[Any, ...], part: str = "cos") -> Axial:
    _, text, h, w, theta, axes = case
    return Axial(";".join(map(str, axes)), f"text={text};image={h}x{w}", base=theta, part=part)  # type: ignore[arg-type]


@pytest.mark.parametrize("case", FLUX, ids=[c[0] for c in FLUX])
def test_flux_pos_embed(case: tuple[Any, ...]) -> None:
    _, text, h, w, theta, axes = case
    theirs = ref.diffusers_flux_pos_embed(text, h, w, theta, axes)
    np.testing.assert_array_equal(token_ids(flux_recipe(case).tokens or "", 3).T, theirs["ids"])
    # --part ids writes FluxPipeline's ids themselves (float32, as it makes them)
    np.testing.assert_array_equal(flux_recipe(case, "ids").build(), theirs["ids"].astype(np.float32))
    for part in ("cos", "sin"):
        _check(case[0], part, flux_recipe(case, part).build(), theirs[part], max(h, w) - 1, "float64")


@pytest.mark.parametrize("case", ONE_AXIS, ids=[c[0] for c in ONE_AXIS])
def test_get_1d_rotary_pos_embed(case: tuple[Any, ...]) -> None:
    name, dim, n, theta, linear, ntk, interleave, freqs_dtype = case
    theirs = ref.diffusers_1d_rotary_pos_embed(dim, n, theta, linear, ntk, interleave, freqs_dtype)
    for part in ("cos", "sin"):
        ours = Axial(
            str(dim),
            length=n,
            base=theta,
            linear_factor=linear,
            ntk_factor=ntk,
            layout="pairs" if interleave else "half",
            part=part,  # type: ignore[arg-type]
            compute=freqs_dtype,  # type: ignore[arg-type]
        ).build()
        _check(name, part, ours, theirs[part], n - 1, freqs_dtype)


def test_the_flux_preset_is_flux_pos_embed_at_1024px() -> None:
    theirs = ref.diffusers_flux_pos_embed(512, 64, 64)
    ours = get_preset("flux").recipe()
    assert ours == flux_recipe(FLUX[0])
    assert np.array_equal(ours.build(), theirs["cos"])


@pytest.mark.parametrize("case", [FLUX[0], FLUX[1], FLUX[2]], ids=[c[0] for c in FLUX[:3]])
@pytest.mark.parametrize("part", ["cos", "sin"])
def test_identify_names_flux_for_a_table_diffusers_wrote(tmp_path: Path, case: tuple[Any, ...], part: str) -> None:
    """A table written by FluxPosEmbed: a whole-table MATCH naming the flux preset, and its check passes."""
    _, text, h, w, _, _ = case
    path = tmp_path / "flux.npy"
    np.save(path, ref.diffusers_flux_pos_embed(text, h, w)[part])
    runner = CliRunner()
    doc = json.loads(runner.invoke(cli, ["identify", str(path), "--json"]).stdout)
    print(f"\n{case[0]:20s} {part}: {doc['verdict']} {doc['names']} max|Δ| {doc['best']['verified']['max_abs']:.3g}")
    assert doc["verdict"] == "match" and doc["kind"] == "axial", doc.get("summary", doc)
    assert "flux" in doc["names"] and doc["best"]["verified"]["rows"] == doc["shape"][0]
    check = runner.invoke(cli, shlex.split(doc["check"])[1:])
    assert check.exit_code == 0, check.output


@pytest.mark.parametrize(("text", "h", "w"), [(512, 64, 64), (40, 24, 36)])
def test_the_krea2_preset_is_krea2_rotary_pos_embed(text: int, h: int, w: int) -> None:
    theirs = ref.diffusers_krea2_rotary_pos_embed(text, h, w)
    sequence = f"text={text};image={h}x{w}"
    np.testing.assert_array_equal(token_ids(sequence, 3).T, theirs["ids"])
    for part in ("cos", "sin"):
        ours = get_preset("krea2").recipe(tokens=sequence, part=part).build()
        _check(f"krea2-{h}x{w}", part, ours, theirs[part], max(h, w) - 1, "float64")


def test_identify_names_krea2_for_a_table_diffusers_wrote(tmp_path: Path) -> None:
    path = tmp_path / "krea2.npy"
    np.save(path, ref.diffusers_krea2_rotary_pos_embed(100, 20, 30)["cos"])
    doc = json.loads(CliRunner().invoke(cli, ["identify", str(path), "--json"]).stdout)
    assert doc["verdict"] == "match" and doc["names"][0] == "krea2", doc.get("summary", doc)
    assert doc["best"]["verified"]["rows"] == doc["shape"][0]


@pytest.mark.parametrize(("dim", "frames", "h", "w"), [(64, 13, 30, 45), (64, 4, 6, 9), (128, 2, 5, 7)])
def test_cogvideox_3d_rotary_is_get_3d_rotary_pos_embed(dim: int, frames: int, h: int, w: int) -> None:
    # CogVideoX's 3-D RoPE at the model's base size: axes dim/4 | 3·dim/8 | 3·dim/8 over the
    # (frame, row, col) ids, float32 frequencies; identify reads the video grid back.
    from pecli.identification import identify

    theirs = ref.diffusers_3d_rotary(dim, frames, h, w)
    axes = f"{dim // 4};{dim // 8 * 3};{dim // 8 * 3}"
    for part in ("cos", "sin"):
        recipe = Axial(axes, tokens=f"video={frames}x{h}x{w}", compute="float32", part=part)  # type: ignore[arg-type]
        ours = recipe.build()
        diff = float(np.abs(ours.astype(np.float64) - theirs[part]).max())
        print(
            f"\ncogvideox {dim} {frames}x{h}x{w} {part}: max|Δ| {diff:.3g}, {np.mean(ours == theirs[part]):.2%} bit-identical"
        )
        assert diff <= 4 * 2.0**-24 * max(frames, h, w)
    if dim == 64:
        found = identify(theirs["cos"])
        assert found.verdict == "match" and found.best is not None, found.summary
        assert found.best.recipe.tokens == f"video={frames}x{h}x{w}"
        assert float(np.abs(found.best.recipe.build().astype(np.float64) - theirs["cos"]).max()) <= 4 * 2.0**-24 * 45


def test_the_cogvideox_preset_is_cogvideox_5b_at_its_base_size() -> None:
    theirs = ref.diffusers_3d_rotary(64, 13, 30, 45)["cos"]
    ours = get_preset("cogvideox-5b-rope").recipe().build()
    assert ours.shape == theirs.shape == (17550, 64)
    assert float(np.abs(ours.astype(np.float64) - theirs).max()) <= 4 * 2.0**-24 * 45


@pytest.mark.parametrize(
    ("frames", "h", "w"), [(13, 30, 45), (2, 20, 36), (3, 48, 84), (2, 45, 30), (4, 31, 44), (1, 7, 9)]
)
def test_cogvideox_at_other_sizes_takes_the_pipelines_cropped_positions(frames: int, h: int, w: int) -> None:
    # CogVideoXPipeline at a resolution other than 480×720: the grid's rows and columns are
    # fractional, torch.linspace over the crop into the 30×45 base grid (the preset's --base-grid).
    from pecli.identification import identify

    theirs = ref.diffusers_cogvideox_rotary(frames, h, w)
    _, (bottom, right) = theirs["crops"].tolist()
    bound = 4 * 2.0**-24 * max(frames, bottom, right)
    for part in ("cos", "sin"):
        ours = get_preset("cogvideox-5b-rope").recipe(tokens=f"video={frames}x{h}x{w}", part=part).build()
        diff = float(np.abs(ours.astype(np.float64) - theirs[part]).max())
        print(
            f"\ncogvideox {frames}x{h}x{w} crop {theirs['crops'].tolist()} {part}: max|Δ| {diff:.3g}, "
            f"{np.mean(ours == theirs[part]):.2%} bit-identical"
        )
        assert diff <= bound
    found = identify(theirs["cos"])
    print(f"identify: {found.verdict}: {found.summary}")
    if found.verdict == "match":  # never a false MATCH
        assert found.best is not None
        assert float(np.abs(found.best.recipe.build().astype(np.float64) - theirs["cos"]).max()) <= bound
    assert found.verdict == "match" and found.best is not None and found.best.recipe.tokens == f"video={frames}x{h}x{w}"
