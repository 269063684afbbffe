"""The rope kind against litgpt 0.5.13's own ``build_rope_cache`` (``litgpt/model.py``): the default
cache, an odd ``n_elem`` (``--odd truncate``), its Llama 3.1 adjustment, its linear fallback, ``condense_ratio`` (positions divided, which
pecli's linear scaling matches within rounding), and its YaRN, whose ramp weighs the extrapolated
frequencies where transformers' weighs the interpolated ones and whose attention factor applies
only with ``mscale``: pecli's ``--scaling litgpt-yarn`` (transformers' ``yarn`` is 2.1 away).

Each table within the float32-pipeline bound ``4·2⁻²⁴·max(1, p)``; ``identify`` proves a recipe
whose table is litgpt's within that bound on every config (no false MATCH).  ``-s`` prints max |Δ|.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import references as ref

from pecli.identification import identify
from pecli.kinds.rope import Rope
from pecli.table import Table

pytestmark = ref.marks("litgpt", "torch")

_LLAMA31 = {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0}
_YARN = {"factor": 4.0, "beta_fast": 32.0, "beta_slow": 1.0}
#: (name, build_rope_cache arguments, pecli's recipe)
CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("default-128", {"seq_len": 2048, "n_elem": 128}, {"length": 2048, "dim": 128}),
    ("default-64-500k", {"seq_len": 4096, "n_elem": 64, "base": 500000}, {"length": 4096, "dim": 64, "base": 5e5}),
    (
        "llama31",
        {"seq_len": 16384, "n_elem": 128, "base": 500000, "extra_config": {**_LLAMA31, "original_max_seq_len": 8192}},
        {
            "length": 16384,
            "dim": 128,
            "base": 5e5,
            "scaling": "llama3",
            **_LLAMA31,
            "original_max_position_embeddings": 8192,
        },
    ),
    (
        "llama32",
        {
            "seq_len": 8192,
            "n_elem": 64,
            "base": 500000,
            "extra_config": {**_LLAMA31, "factor": 32.0, "original_max_seq_len": 8192},
        },
        {
            "length": 8192,
            "dim": 64,
            "base": 5e5,
            "scaling": "llama3",
            **_LLAMA31,
            "factor": 32.0,
            "original_max_position_embeddings": 8192,
        },
    ),
    # An odd n_elem (rotary_percentage × head_size): ⌈n/2⌉ frequencies, idx_theta.repeat(1, 2)[..., :n_elem].
    ("odd-33", {"seq_len": 2048, "n_elem": 33}, {"length": 2048, "dim": 33, "odd": "truncate"}),
    (
        "odd-7-500k",
        {"seq_len": 300, "n_elem": 7, "base": 500000},
        {"length": 300, "dim": 7, "base": 5e5, "odd": "truncate"},
    ),
    (
        "linear",
        {"seq_len": 2048, "n_elem": 64, "extra_config": {"factor": 2.0}},
        {"length": 2048, "dim": 64, "scaling": "linear", "factor": 2.0},
    ),
    (
        "condense-ratio-4",
        {"seq_len": 2048, "n_elem": 64, "condense_ratio": 4},
        {"length": 2048, "dim": 64, "scaling": "linear", "factor": 4.0},
    ),
    (
        "yarn",
        {"seq_len": 8192, "n_elem": 64, "extra_config": {**_YARN, "original_max_seq_len": 4096}},
        {"length": 8192, "dim": 64, "scaling": "litgpt-yarn", **_YARN, "original_max_position_embeddings": 4096},
    ),
    (
        "yarn-128-factor8",
        {"seq_len": 4096, "n_elem": 128, "extra_config": {**_YARN, "factor": 8.0, "original_max_seq_len": 2048}},
        {
            "length": 4096,
            "dim": 128,
            "scaling": "litgpt-yarn",
            **_YARN,
            "factor": 8.0,
            "original_max_position_embeddings": 2048,
        },
    ),
    (
        "yarn-mscale",
        {"seq_len": 8192, "n_elem": 64, "extra_config": {**_YARN, "original_max_seq_len": 4096, "mscale": 1.0}},
        {
            "length": 8192,
            "dim": 64,
            "scaling": "litgpt-yarn",
            **_YARN,
            "original_max_position_embeddings": 4096,
            "mscale": 1.0,
        },
    ),
    (
        "yarn-deepseek-mscale",
        {
            "seq_len": 4096,
            "n_elem": 64,
            "extra_config": {**_YARN, "original_max_seq_len": 4096, "mscale": 1.0, "mscale_all_dim": 0.707},
        },
        {
            "length": 4096,
            "dim": 64,
            "scaling": "litgpt-yarn",
            **_YARN,
            "original_max_position_embeddings": 4096,
            "mscale": 1.0,
            "mscale_all_dim": 0.707,
        },
    ),
]
IDS = [name for name, _, _ in CASES]


def _bound(length: int) -> float:
    return 4 * 2.0**-24 * max(1, length - 1)


@pytest.fixture(scope="module")
def tables() -> dict[str, dict[str, np.ndarray]]:
    return {name: ref.litgpt_rope_cache(**kwargs) for name, kwargs, _ in CASES}


@pytest.mark.parametrize("index", range(len(CASES)), ids=IDS)
@pytest.mark.parametrize("part", ["cos", "sin"])
def test_the_cache_is_litgpts(tables: dict[str, dict[str, np.ndarray]], index: int, part: str) -> None:
    name, _, recipe = CASES[index]
    theirs = tables[name][part]
    ours = Rope(**recipe, part=part).build()
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype == np.float32
    delta = float(np.max(np.abs(ours.astype(np.float64) - theirs)))
    print(f"\n{name} {part}: max |Δ| {delta:.3g}, {np.mean(ours == theirs):.4%} identical")
    assert delta <= _bound(recipe["length"]), delta


@pytest.mark.parametrize("index", range(len(CASES)), ids=IDS)
@pytest.mark.parametrize("part", ["cos", "sin"])
def test_identify_proves_a_recipe_that_rebuilds_litgpts_cache(
    tables: dict[str, dict[str, np.ndarray]], index: int, part: str
) -> None:
    name, _, recipe = CASES[index]
    theirs = tables[name][part]
    found = identify(Table(theirs, None, "litgpt"))
    print(f"\n{name}: {found.verdict}: {found.summary}")
    assert found.verdict == "match" and found.best is not None, found.summary
    rebuilt = found.best.recipe.build()
    assert float(np.max(np.abs(rebuilt.astype(np.float64) - theirs))) <= _bound(recipe["length"])
