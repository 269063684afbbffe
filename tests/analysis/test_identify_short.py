"""identify on tables too short or too coarse to measure a frequency by (issue 41's round trip):
one or two rows (a decoding step's slice of a cache), an inverse-frequency row of an odd rotary
dim or cast to bfloat16, angles stored in float16.  Each table is written here from the
frameworks' code in NumPy, one float32 step at a time (``f32_step``: the same bits on every CPU),
and identify must name a recipe that rebuilds it on every value."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from pecli.identification import Identification, identify
from pecli.table import Table
from tests.helpers import f32_step, reference


def named(x: np.ndarray) -> Identification:
    result = identify(Table(np.asarray(x), None, "table.npy"))
    assert result.verdict == "match" and result.best is not None, result.notes
    assert result.best.verification is not None and result.best.verification.max_abs <= result.best.atol
    return result


def recipe_of(x: np.ndarray) -> Any:
    """The recipe identify names for ``x`` (a proved match)."""
    best: Any = named(x).best
    return best.recipe


def bfloat16(x: np.ndarray) -> np.ndarray:
    """float32 → bfloat16 (round to nearest, ties to even) as float32 values: torch's ``.bfloat16()``."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    kept = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return kept.astype(np.uint32).view(np.float32)


def hf_inv_freq(dim: int, base: float = 10000.0) -> np.ndarray:
    """HF's ``1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))``, each step in float32."""
    exponent = f32_step(np.divide, np.arange(0, dim, 2, dtype=np.float32), np.float32(dim))
    return f32_step(np.divide, 1.0, f32_step(np.power, np.float32(base), exponent))


def hf_rows(positions: np.ndarray, dim: int, part: str = "cos") -> np.ndarray:
    """``LlamaRotaryEmbedding``'s cos (or sin) of ``cat(freqs, freqs)`` for some positions."""
    freqs = f32_step(np.multiply, positions.astype(np.float32)[:, None], hf_inv_freq(dim)[None, :])
    return f32_step(np.cos if part == "cos" else np.sin, np.concatenate([freqs, freqs], axis=1))


# The quick suite keeps one case of each test; CI's full run takes the rest (issue 41's budget).
SLOW = pytest.mark.slow


@pytest.mark.parametrize(
    ("start", "layout"),
    [(1000, "interleaved"), pytest.param(5, "split", marks=SLOW), pytest.param(1, "interleaved", marks=SLOW)],
)
def test_one_row_of_the_paper_s_sinusoid_at_any_position(start: int, layout: str) -> None:
    row = reference(1, 64, layout=layout, start=start).astype(np.float32)
    recipe = recipe_of(row)
    assert (recipe.kind, recipe.start, recipe.base, recipe.layout) == ("sinusoidal", start, 10000.0, layout)


@pytest.mark.parametrize(
    ("positions", "part"),
    [([1000], "cos"), pytest.param([37], "sin", marks=SLOW), pytest.param([4095, 4096], "cos", marks=SLOW)],
)
def test_a_decoding_step_s_rows_of_a_rotary_cache(positions: list[int], part: str) -> None:
    recipe = recipe_of(hf_rows(np.array(positions), 128, part))
    assert (recipe.kind, recipe.start, recipe.base, recipe.layout, recipe.part) == (
        "rope",
        positions[0],
        10000.0,
        "half",
        part,
    )


def test_one_row_of_meta_s_freqs_cis_viewed_as_real() -> None:
    # Meta's precompute_freqs_cis: torch.polar(ones, outer(t, freqs)), torch.view_as_real → (cos, sin) pairs.
    angle = f32_step(np.multiply, np.float32(7), hf_inv_freq(64))
    row = np.empty((1, 64), dtype=np.float32)
    row[0, 0::2], row[0, 1::2] = f32_step(np.cos, angle), f32_step(np.sin, angle)
    recipe = recipe_of(row)
    assert (recipe.part, recipe.start, recipe.layout) == ("cis", 7, "once")


def test_an_odd_rotary_dim_s_inverse_frequencies() -> None:
    # rotary-embedding-torch's RotaryEmbedding(dim=33): 1 / theta ** (arange(0, 33, 2)[:16].float() / 33)
    exponent = f32_step(np.divide, np.arange(0, 33, 2, dtype=np.float32)[:16], np.float32(33))
    inv = f32_step(np.divide, 1.0, f32_step(np.power, np.float32(10000), exponent))
    recipe = recipe_of(inv[None, :])
    assert (recipe.part, recipe.dim, recipe.base) == ("inv_freq", 33, 10000.0)


def test_inverse_frequencies_cast_to_bfloat16() -> None:
    # The report's inv_freq.bfloat16() (huggingface/transformers#29496), saved as float32.
    # One row of frequencies cast to bfloat16 is the same bits as float32 ones stored in bfloat16:
    # either recipe rebuilds it, to the bit.
    table = bfloat16(hf_inv_freq(128))[None, :]
    result = named(table)
    best: Any = result.best
    recipe = best.recipe
    assert (recipe.part, recipe.base, best.max_abs) == ("inv_freq", 10000.0, 0.0)
    assert "bfloat16" in (recipe.compute, recipe.dtype)
    assert np.array_equal(np.asarray(recipe.build(), dtype=np.float32), table)


def test_rotary_angles_stored_in_float16() -> None:
    # The angles p·inv_freq (positions 1…64) exported in float16: too coarse for the float32 test of
    # a straight line, measured by least squares and proved value by value.
    freqs = f32_step(np.multiply, np.arange(1, 65, dtype=np.float32)[:, None], hf_inv_freq(16)[None, :])
    recipe = recipe_of(np.concatenate([freqs, freqs], axis=1).astype(np.float16))
    assert (recipe.part, recipe.start, recipe.base, recipe.layout, recipe.dtype) == (
        "angle",
        1,
        10000.0,
        "half",
        "float16",
    )


def test_m_rope_angles_in_float16_with_subnormal_slow_columns() -> None:
    # Qwen2-VL's get_rope_index for text=2, a 2×2 image, text=1: t/h/w ids, then the sections
    # 16;24;24 of 64 frequencies (θ = 10⁶) pick an axis each; angles p·inv_freq saved in float16,
    # where the slowest (below 6.1e-5) are subnormal.
    t = [0, 1, 2, 2, 2, 2, 4]
    h = [0, 1, 2, 2, 3, 3, 4]
    w = [0, 1, 2, 3, 2, 3, 4]
    axis = np.repeat([0, 1, 2], [16, 24, 24])
    ids = np.array([t, h, w], dtype=np.float32)[axis].T  # (tokens, 64)
    angle = f32_step(np.multiply, ids, hf_inv_freq(128, 1e6)[None, :])
    table = np.concatenate([angle, angle], axis=1).astype(np.float16)
    assert np.any((table != 0) & (np.abs(table) < 2.0**-14))  # subnormal angles are there
    recipe = recipe_of(table)
    assert (recipe.kind, recipe.part, recipe.base) == ("mrope", "angle", 1e6)
    assert recipe.sequence == "text=2;image=1x2x2;text=1"


@pytest.mark.parametrize(
    ("start", "rows"), [(1001, 300), pytest.param(1000, 40, marks=SLOW), pytest.param(5000, 2, marks=SLOW)]
)
def test_positions_held_in_bfloat16_from_far_repeat_the_first_rows(start: int, rows: int) -> None:
    # flash-attn's rotary with position ids in bfloat16 (issue 41): from 1000 on, ids 4 or 8 apart
    # share a value, so the first rows repeat and no wave can be measured before the first repeat.
    # Row 0 is the held id; the start is the one whose first run of equal rows is the table's.
    positions = bfloat16(np.arange(start, start + rows, dtype=np.float32))
    cache = hf_rows(positions, 64)
    assert np.array_equal(cache[0], cache[1]) or start % 4 == 3  # the tell: row 0 repeated
    recipe = recipe_of(cache)
    assert (recipe.base, recipe.compute) == (10000.0, "positions-bfloat16"), recipe.describe()
    np.testing.assert_array_equal(recipe.build(), cache)
    if rows > 2:  # a long enough first run pins the start; two equal rows only its bfloat16 value
        assert recipe.start == start, recipe.describe()
    else:
        assert bfloat16(np.float32([recipe.start]))[0] == positions[0], recipe.describe()


@pytest.mark.parametrize(("dim", "part"), [(65536, "cos"), pytest.param(128, "sin", marks=SLOW)])
def test_row_0_of_a_rotary_cache_is_every_theta_s_and_is_proposed_once_per_layout(dim: int, part: str) -> None:
    """cos 0 = 1 and sin 0 = 0 at every θ, scaling, pipeline and form: the rope fit proposes each
    layout once (with a clue saying the row cannot tell θ apart), not ~1000 candidates built whole
    (a 65536-wide row of 1s took 18 s).  The verdict stands, and the table is rebuilt bit for bit."""
    from pecli.fitting import Sample
    from pecli.kinds.rope import Rope

    row = hf_rows(np.array([0]), dim, part)
    assert np.all(row == (1 if part == "cos" else 0))  # the independent truth: HF's steps at position 0
    sample = Sample.read(Table(row, None, "table.npy"))
    fitted = [r for r in Rope.fit(sample) if r.part == part]  # (cos-sin and cis proposals fail the screen)
    assert sorted(r.layout for r in fitted) == ["half", "once", "pairs"]
    for recipe in fitted:
        assert np.array_equal(recipe.build(), row)
    assert any("the row cannot tell them apart" in clue for clue in sample.clues)
    result = named(row)
    assert result.best is not None and result.best.verification is not None
    assert result.best.verification.max_abs == 0
    assert result.candidates_tried < 100, result.candidates_tried


def test_row_0_of_a_cos_sin_cache_is_still_named_cos_sin() -> None:
    """vLLM's ``[cos | sin]`` row at position 0 (1s, then 0s): the cos half fitted as above, then
    proposed with the part that puts the sin table beside it."""
    row = np.concatenate([np.ones((1, 64), np.float32), np.zeros((1, 64), np.float32)], axis=1)
    from pecli.fitting import Sample
    from pecli.kinds.rope import Rope

    fitted = list(Rope.fit(Sample.read(Table(row, None, "table.npy"))))
    assert any(r.part == "cos-sin" and np.array_equal(r.build(), row) for r in fitted)
    named(row)
