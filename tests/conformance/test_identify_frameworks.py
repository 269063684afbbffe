"""`identify` on tables made by the frameworks themselves (not by pecli): it must name their preset."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import references as ref

from pecli.identification import identify
from pecli.table import Table

pytestmark = [pytest.mark.conformance, pytest.mark.slow]


def _needs(module: str) -> Any:
    return pytest.mark.skipif(importlib.util.find_spec(module) is None, reason=f"{module} is not installed")


HF, PE, TIMM = _needs("transformers"), _needs("positional_encodings"), _needs("timm")
DIFFUSERS = _needs("diffusers")

CASES: list[Any] = [
    pytest.param("hf-m2m100", lambda: ref.hf_m2m100_sinusoidal(1024, 512, 1)["table"], marks=HF, id="m2m100"),
    pytest.param("hf-fsmt", lambda: ref.hf_fsmt_sinusoidal(2050, 1024, 1)["table"], marks=HF, id="fsmt"),
    pytest.param("whisper", lambda: ref.hf_whisper_sinusoids(1500, 384)["table"], marks=HF, id="whisper"),
    pytest.param("musicgen", lambda: ref.hf_musicgen_sinusoidal(2048, 512)["table"], marks=HF, id="musicgen"),
    pytest.param("hf-marian", lambda: ref.hf_marian_sinusoidal(512, 512)["table"], marks=HF, id="marian"),
    pytest.param("hf-distilbert", lambda: ref.hf_distilbert_sinusoidal(512, 768)["table"], marks=HF, id="distilbert"),
    pytest.param("gpt-j", lambda: ref.hf_gptj_sinusoidal_positions(2048, 64)["table"], marks=HF, id="gptj"),
    pytest.param("hf-vitmae", lambda: ref.hf_vit_mae_initialized(224, 16, 768)["table"], marks=HF, id="vitmae"),
    pytest.param("hf-sincos2d", lambda: ref.hf_vit_mae_2d(20, 20, 256)["table"], marks=HF, id="hf-2d"),
    pytest.param("timm-sincos2d", lambda: ref.timm_sincos2d((14, 14), 768)["table"], marks=TIMM, id="timm"),
    pytest.param(
        "timm-sincos2d-reverse",
        lambda: ref.timm_sincos2d((14, 14), 768, reverse_coord=True)["table"],
        marks=TIMM,
        id="timm-reverse",
    ),
    pytest.param(
        "positional-encodings-2d",
        lambda: ref.pe_positional_encoding_2d(64, 16, 16)["table"].reshape(256, 64),
        marks=PE,
        id="pe-2d",
    ),
    pytest.param(
        "positional-encodings-1d", lambda: ref.pe_positional_encoding_1d(64, 300)["table"], marks=PE, id="pe-1d"
    ),
    pytest.param(
        "llama",
        lambda: ref.hf_llama_rope({"rope_type": "default", "rope_theta": 10000.0}, np.arange(4096), 128)["cos"],
        marks=HF,
        id="llama-cos",
    ),
    pytest.param(
        "sd-unet-timesteps",
        lambda: ref.diffusers_unet2d_condition_time_proj(np.arange(1000))["table"],
        marks=DIFFUSERS,
        id="sd-unet-timesteps",
    ),
    pytest.param(
        "dit", lambda: ref.diffusers_patch_embed_pos_embed(32, 2, 1152)["table"], marks=DIFFUSERS, id="diffusers-dit"
    ),
    pytest.param(
        "pixart-alpha",
        lambda: ref.diffusers_patch_embed_pos_embed(128, 2, 1152, 2)["table"],
        marks=DIFFUSERS,
        id="diffusers-pixart",
    ),
    pytest.param(
        "pixart-alpha",
        lambda: ref.diffusers_2d_sincos_pos_embed(1152, (48, 64), 64, 2.0)["table"],
        marks=DIFFUSERS,
        id="diffusers-pixart-48x64",
    ),
    pytest.param(
        "sd3",
        lambda: ref.diffusers_patch_embed_pos_embed(128, 2, 1536, 1, 192)["table"],
        marks=DIFFUSERS,
        id="diffusers-sd3-crop",
    ),
    pytest.param(
        "cogvideox", lambda: ref.diffusers_cogvideox_patch_embed()["table"], marks=DIFFUSERS, id="diffusers-cogvideox"
    ),
]


@pytest.mark.parametrize(("expected", "build"), CASES)
def test_identify_names_the_framework(expected: str, build: Callable[[], np.ndarray]) -> None:
    found = identify(Table(build(), None, "framework"))
    names = [n for c in [found.best, *found.alternatives] if c is not None for n in c.names]
    print(f"\n{expected:24s} → {found.verdict}: {found.summary}")
    assert found.verdict in ("match", "close"), found.summary
    assert expected in names, (expected, names, found.summary)


@pytest.mark.parametrize("extra", [2, 4])
def test_identify_counts_diffusers_extra_tokens(extra: int) -> None:
    """get_2d_sincos_pos_embed(cls_token=True, extra_tokens=N): N zero rows, then the scaled grid."""
    pytest.importorskip("diffusers")
    theirs = ref.diffusers_2d_sincos_pos_embed(64, (12, 16), 8, 0.5, extra_tokens=extra)["table"]
    found = identify(Table(theirs, None, "framework"))
    assert found.verdict == "match" and found.best is not None, found.summary
    recipe = found.best.recipe
    assert (recipe.kind, recipe.grid, recipe.extra_tokens) == ("sincos2d", "12x16", extra), recipe.describe()
    assert recipe.build().tobytes() == theirs.tobytes()
