"""Rotary caches that hold the cos and the sin table together, against the code that builds them:
torchtune 0.6.1's own modules (``Qwen2RotaryPositionalEmbeddings``: ``[cos | sin]`` of the
rotate_half tables; ``RotaryPositionalEmbeddings`` and ``Llama3ScaledRoPE``: ``(cos, sin)`` per
frequency), vLLM's ``cos_sin_cache`` and Meta's ``precompute_freqs_cis`` as their published code
computes them (vLLM has no CPU build to install here; Meta's ``llama`` is no package).

Each table must be reproduced within the float32-pipeline bound ``4·2⁻²⁴·max(1, p)`` (p the last
position: torch's float32 cos and sin are not correctly rounded), and ``identify`` must prove a
recipe on it whose table is the framework's within the same bound, naming the preset where the
table is one (no false MATCH).  Run with ``-s`` for max |Δ| and the share of identical values.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import references as ref

from pecli.identification import identify
from pecli.kinds.rope import Rope
from pecli.table import Table

pytestmark = [pytest.mark.conformance, pytest.mark.slow]

TORCH = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
TORCHTUNE = pytest.mark.skipif(importlib.util.find_spec("torchtune") is None, reason="torchtune is not installed")
_LLAMA31 = {
    "scaling": "llama3",
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192,
}


def _case(name: str, build: Callable[[], Any], recipe: dict[str, Any], preset: str | None, mark: Any) -> Any:
    return pytest.param(build, recipe, preset, marks=mark, id=name)


CASES = [
    _case(
        "vllm-llama2",
        lambda: ref.vllm_cos_sin_cache(128, 4096, 10000),
        {"length": 4096, "dim": 128, "layout": "once", "part": "cos-sin"},
        "vllm-cos-sin",
        TORCH,
    ),
    _case(
        "vllm-llama3-head64",
        lambda: ref.vllm_cos_sin_cache(64, 8192, 500000),
        {"length": 8192, "dim": 64, "base": 500000.0, "layout": "once", "part": "cos-sin"},
        None,
        TORCH,
    ),
    _case(
        "vllm-qwen-rotary80",
        lambda: ref.vllm_cos_sin_cache(80, 3000, 1000000),
        {"length": 3000, "dim": 80, "base": 1e6, "layout": "once", "part": "cos-sin"},
        None,
        TORCH,
    ),
    _case(
        "vllm-small",
        lambda: ref.vllm_cos_sin_cache(32, 257, 10000),
        {"length": 257, "dim": 32, "layout": "once", "part": "cos-sin"},
        None,
        TORCH,
    ),
    _case(
        "torchtune-qwen2",
        lambda: ref.torchtune_qwen2_cache(128, 4096, 1e6),
        {"length": 4096, "dim": 128, "base": 1e6, "part": "cos-sin"},
        "torchtune-qwen2",
        TORCHTUNE,
    ),
    _case(
        "torchtune-qwen2-64",
        lambda: ref.torchtune_qwen2_cache(64, 32768, 1e6),
        {"length": 32768, "dim": 64, "base": 1e6, "part": "cos-sin"},
        None,
        TORCHTUNE,
    ),
    _case(
        "torchtune-qwen2-theta1e4",
        lambda: ref.torchtune_qwen2_cache(96, 2048, 10000.0),
        {"length": 2048, "dim": 96, "part": "cos-sin"},
        None,
        TORCHTUNE,
    ),
    _case(
        "torchtune-llama2",
        lambda: ref.torchtune_rope_cache(128, 4096, 10000),
        {"length": 4096, "dim": 128, "layout": "once", "part": "cis"},
        "torchtune-llama2",
        TORCHTUNE,
    ),
    _case(
        "torchtune-rope-64-500k",
        lambda: ref.torchtune_rope_cache(64, 2048, 500000),
        {"length": 2048, "dim": 64, "base": 500000.0, "layout": "once", "part": "cis"},
        None,
        TORCHTUNE,
    ),
    _case(
        "torchtune-llama31",
        lambda: ref.torchtune_llama31_cache(128, 16384, 500000),
        {"length": 16384, "dim": 128, "base": 500000.0, "layout": "once", "part": "cis", **_LLAMA31},
        "torchtune-llama3",
        TORCHTUNE,
    ),
    _case(
        "torchtune-llama31-64",
        lambda: ref.torchtune_llama31_cache(64, 4096, 500000),
        {"length": 4096, "dim": 64, "base": 500000.0, "layout": "once", "part": "cis", **_LLAMA31},
        None,
        TORCHTUNE,
    ),
    _case(
        "meta-llama2-freqs-cis",
        lambda: ref.meta_freqs_cis(128, 8192, 10000.0),
        {"length": 8192, "dim": 128, "layout": "once", "part": "cis"},
        "meta-freqs-cis",
        TORCH,
    ),
    _case(
        "meta-llama3-freqs-cis",
        lambda: ref.meta_freqs_cis(128, 4096, 500000.0),
        {"length": 4096, "dim": 128, "base": 500000.0, "layout": "once", "part": "cis"},
        None,
        TORCH,
    ),
    _case(
        "meta-small-freqs-cis",
        lambda: ref.meta_freqs_cis(16, 100, 10000.0),
        {"length": 100, "dim": 16, "layout": "once", "part": "cis"},
        None,
        TORCH,
    ),
]


def _bound(n: int) -> float:
    """torch's float32 pipeline against the exact value rounded once, at positions below ``n``."""
    return 4 * 2.0**-24 * max(1, n - 1)


@pytest.mark.parametrize(("build", "recipe", "preset"), CASES)
def test_the_cache_is_the_frameworks(
    build: Callable[[], np.ndarray], recipe: dict[str, Any], preset: str | None
) -> None:
    theirs = build()["table"]
    ours = Rope(**recipe).build()
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype == np.float32
    delta = float(np.max(np.abs(ours.astype(np.float64) - theirs)))
    print(f"\n{recipe}: max |Δ| {delta:.3g}, {np.mean(ours == theirs):.4%} identical")
    assert delta <= _bound(theirs.shape[0]), delta


@pytest.mark.parametrize(("build", "recipe", "preset"), CASES)
def test_identify_proves_a_recipe_that_rebuilds_the_framework_table(
    build: Callable[[], np.ndarray], recipe: dict[str, Any], preset: str | None
) -> None:
    theirs = build()["table"]
    found = identify(Table(theirs, None, "framework"))
    print(f"\n{found.verdict}: {found.summary}")
    assert found.verdict == "match" and found.best is not None, found.summary
    rebuilt = found.best.recipe.build()
    assert rebuilt.shape == theirs.shape
    # No false MATCH: the recipe named rebuilds the framework's own table.
    assert float(np.max(np.abs(rebuilt.astype(np.float64) - theirs))) <= _bound(theirs.shape[0])
    if preset is not None:
        assert preset in found.best.names, (preset, found.best.names)


def test_meta_freqs_cis_viewed_as_real_is_its_complex_table() -> None:
    # What the cis part holds is the complex freqs_cis itself: real parts even, imaginary odd.
    pytest.importorskip("torch")
    out = ref.meta_freqs_cis(8, 10, 10000.0)
    np.testing.assert_array_equal(out["table"][:, 0::2], out["complex"].real)
    np.testing.assert_array_equal(out["table"][:, 1::2], out["complex"].imag)


@TORCH
@pytest.mark.parametrize(("dim", "end", "theta"), [(128, 4096, 500000.0), (64, 2048, 10000.0)])
def test_complex64_freqs_cis_file_is_metas_tensor(tmp_path: Any, dim: int, end: int, theta: float) -> None:
    # `--dtype complex64` writes freqs_cis itself: a torch.complex64 tensor of Meta's shape whose
    # every number is Meta's within the float32-pipeline bound, and whose parts are the cis table's bits.
    import torch

    from pecli.formats import write_table

    theirs = ref.meta_freqs_cis(dim, end, theta)["complex"]
    recipe = Rope(length=end, dim=dim, base=theta, layout="once", part="cis")
    write_table(Table.from_recipe(recipe).converted("complex64"), tmp_path / "freqs_cis.pt")
    mine = torch.load(tmp_path / "freqs_cis.pt", weights_only=True)["pe"]
    assert mine.dtype == torch.complex64 and tuple(mine.shape) == theirs.shape == (end, dim // 2)
    mine_np = mine.numpy()
    assert float(np.max(np.abs(mine_np.real - theirs.real))) <= _bound(end)
    assert float(np.max(np.abs(mine_np.imag - theirs.imag))) <= _bound(end)
    np.testing.assert_array_equal(mine_np.view(np.float32), recipe.build())


@TORCH
def test_identify_names_metas_complex_freqs_cis_as_it_stands() -> None:
    # A user's own freqs_cis (torch.polar's complex64, not pecli's): read as its (real, imaginary)
    # pairs, identify proves a recipe on every row, within the float32 bound, and says how to
    # write it as complex numbers again.
    theirs = ref.meta_freqs_cis(128, 2048, 500000.0)["complex"]
    found = identify(Table.from_array(theirs, name="freqs_cis"))
    assert found.verdict == "match" and found.best is not None, found.summary
    recipe = found.best.recipe
    assert (recipe.part, recipe.base) == ("cis", 500000.0)
    rebuilt = recipe.build().view(np.complex64)
    assert float(np.max(np.abs(rebuilt - theirs))) <= 2 * _bound(2048)  # real and imaginary parts each within it
    assert any("--dtype complex64" in note for note in found.notes)
