"""A preset far into its cache: rows read from a start past 0 (HF's ``position_ids`` of a long
prompt's later chunk) whose slow frequencies barely turn in the table, so no fit measures them all.

Phi-3's LongRoPE cache past its original 4096 positions runs on the long factors (48 numbers like
``64.81001281738281``): the rope fit measures 36 of its 48 frequencies over 2048 rows and proposes
no factor list, so no fitted recipe showed the start and identify said "no known recipe".  Each
preset's own frequencies now read the start from row 0's phases (:meth:`Recipe.starts_in`)."""

from __future__ import annotations

import numpy as np
import pytest

from pecli.fitting import Sample
from pecli.identification import identify
from pecli.kinds.rope import Rope
from pecli.kinds.sinusoidal import Sinusoidal
from pecli.presets import PRESETS
from pecli.table import Table
from tests.helpers import f32_step


def phi3_cache(start: int, length: int, part: str) -> np.ndarray:
    """transformers' LongRoPE cache as its float32 code computes it (``_compute_longrope_parameters``
    and ``LlamaRotaryEmbedding.forward``), written here in NumPy, each step rounded once to float32:
    ``inv_freq = 1 / (ext · base^(2i/d))`` with the long factors past the original length, angles
    ``p · inv_freq``, ``cos`` (or ``sin``) of ``[angles, angles]`` times ``√(1 + ln 32 / ln 4096)``.
    The factor lists are Phi-3-vision-128k's config, as the preset holds them."""
    preset = PRESETS["phi3-vision-128k"].recipe()
    factors = preset.long_factor if start + length > 4096 else preset.short_factor
    ext = np.array([float(x) for x in factors.split(";")], dtype=np.float32)
    dim = 96
    powers = f32_step(np.power, np.float32(10000.0), np.arange(0, dim, 2, dtype=np.float32) / np.float32(dim))
    inv = f32_step(np.divide, 1.0, f32_step(np.multiply, ext, powers))
    angles = f32_step(np.multiply, np.arange(start, start + length, dtype=np.float32)[:, None], inv[None, :])
    wave = f32_step(np.cos if part == "cos" else np.sin, np.concatenate([angles, angles], axis=1))
    scale = np.float32(np.sqrt(1 + np.log(32.0) / np.log(4096.0)))
    return f32_step(np.multiply, wave, scale)


@pytest.mark.parametrize(("start", "part"), [(4096, "cos"), (6000, "sin"), (100, "cos")])
def test_phi3_past_its_original_length_is_its_preset_at_that_start(start: int, part: str) -> None:
    found = identify(Table(phi3_cache(start, 1024, part), None, "phi3.npy"))
    assert found.verdict == "match", found.summary
    assert found.best is not None and "phi3-vision-128k" in found.names
    assert (found.best.recipe.start, found.best.recipe.part, found.best.max_abs) == (start, part, 0.0)


@pytest.mark.parametrize("name", ["llama", "llama3", "phi3-vision-128k", "qwen3-yarn", "gpt-oss"])
@pytest.mark.parametrize("start", [1, 777, 5000, 40000])
def test_a_rope_preset_reads_its_own_start_from_row_0(name: str, start: int) -> None:
    recipe = PRESETS[name].recipe(length=64)
    table = Table(recipe.with_params(start=start).build(), None, "t.npy")
    assert start in recipe.starts_in(Sample.read(table))


def test_kinds_without_phases_to_read_propose_no_start() -> None:
    table = Table(Sinusoidal(64, 32, start=9).build(), None, "t.npy")
    assert Sinusoidal(64, 32).starts_in(Sample.read(table)) == []


def test_a_table_whose_rows_do_not_repeat_as_the_layout_does_gets_no_start() -> None:
    """Any row has phases; a learned table's would give starts to screen for nothing, and a
    "nearest" rotary cache at position 69232 (the gate: the layout's repeat)."""
    rng = np.random.default_rng(7)
    table = Table((rng.standard_normal((64, 96)) * 0.02).astype(np.float32), None, "wpe.npy")
    assert PRESETS["phi3-vision-128k"].recipe(length=64).starts_in(Sample.read(table)) == []
    assert identify(table).verdict == "learned"


def test_every_preset_that_builds_the_table_at_that_start_is_named() -> None:
    """gpt-neox, pythia and llama build one table at dim 128: each is named, as at start 0."""
    table = Table(PRESETS["gpt-neox"].recipe(length=3, dim=128).with_params(start=5).build(), None, "g.npy")
    found = identify(table)
    assert found.verdict == "match" and found.best is not None and found.best.recipe.start == 5
    assert {"llama", "gpt-neox", "pythia"} <= set(found.names)


@pytest.mark.parametrize("part", ["cos", "sin"])
def test_zero_frequencies_place_no_start(part: str) -> None:
    """Proportional RoPE's unturned columns (zero frequencies) are left out of the phases (they
    divided by zero)."""
    recipe = Rope(length=16, dim=64, start=5, part=part, scaling="proportional", partial_rotary_factor=0.25)
    table = Table(recipe.build(), None, "p.npy")
    assert 5 in recipe.with_params(start=0).starts_in(Sample.read(table))
