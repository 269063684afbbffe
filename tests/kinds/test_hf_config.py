"""``--hf-config``: a model's config.json read into a recipe (the keys' dialects, overrides), and
every config it cannot read refused with one line naming the key.  The tables themselves are
checked against transformers' own rotary classes in tests/conformance/test_hf_config_vs_transformers.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pecli.presets import get_preset


def write(tmp_path: Path, config: dict, name: str = "config.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(config))
    return path


LLAMA31 = {
    "model_type": "llama",
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "head_dim": 128,
    "max_position_embeddings": 131072,
    "rope_theta": 500000.0,
    "rope_scaling": {
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
        "rope_type": "llama3",
    },
}


def test_llama_31s_config_is_the_llama3_preset(run, tmp_path: Path) -> None:
    from pecli.hfconfig import read_config, recipe_from_config

    # the same file, in transformers 4 (rope_scaling + rope_theta) and 5 (rope_parameters) spelling
    v5 = {k: v for k, v in LLAMA31.items() if k not in ("rope_scaling", "rope_theta")}
    v5["rope_parameters"] = {**LLAMA31["rope_scaling"], "rope_theta": 500000.0}
    for config in (LLAMA31, v5):
        recipe = recipe_from_config(read_config(write(tmp_path, config)))
        assert recipe == get_preset("llama3").recipe()


def test_other_options_override_the_config(run, tmp_path: Path) -> None:
    path = write(tmp_path, LLAMA31)
    r = run(
        "generate",
        "--hf-config",
        tmp_path,
        "--len",
        "16",
        "--start",
        "8000",
        "--part",
        "sin",
        "--dtype",
        "bfloat16",
        "-o",
        tmp_path / "sin.safetensors",
    )
    assert r.exit_code == 0, r.output
    from pecli import open_table

    with open_table(tmp_path / "sin.safetensors") as t:
        want = get_preset("llama3").recipe(length=16, start=8000, part="sin", dtype="bfloat16")
        assert t.recipe == want
    assert path.exists()


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({**LLAMA31, "rope_scaling": {**LLAMA31["rope_scaling"], "foo": 1}}, "unknown RoPE key 'foo'"),
        (
            {**LLAMA31, "rope_parameters": {"rope_theta": 10000.0}},
            "rope_parameters.rope_theta is 10000.0 but rope_theta is 500000.0",
        ),
        (
            {**LLAMA31, "rope_scaling": {"rope_type": "linear", "type": "yarn", "factor": 2.0}},
            "rope_type is 'linear' but type is 'yarn'",
        ),
        (
            {**LLAMA31, "rope_scaling": {"rope_type": "linear", "factor": 2.0, "beta_fast": 32}},
            "does not use 'beta_fast'",
        ),
        (
            # (this was "proportional" until pecli built it: transformers 5.23 has no rope_type left unbuilt)
            {**LLAMA31, "rope_scaling": {"rope_type": "ntk-by-parts"}},
            "rope_type 'ntk-by-parts' is not one pecli builds",
        ),
        ({**LLAMA31, "rope_scaling": {"rope_type": "linear"}}, "scaling=linear needs"),
        (
            {**LLAMA31, "partial_rotary_factor": 0.5, "rotary_pct": 0.25},
            "partial_rotary_factor is 0.5 but rotary_pct is 0.25",
        ),
        (
            {k: v for k, v in LLAMA31.items() if k != "max_position_embeddings"},
            "max_position_embeddings must be a whole number",
        ),
        (
            {"model_type": "newmodel", "hidden_size": 64, "num_attention_heads": 4, "max_position_embeddings": 8},
            "has no RoPE settings (rope_parameters, rope_scaling, rope_theta) and is no model pecli knows",
        ),
        (
            {
                "model_type": "newmodel",
                "rope_scaling": {"rope_type": "linear", "factor": 2.0},
                "hidden_size": 64,
                "num_attention_heads": 4,
                "max_position_embeddings": 8,
            },
            "has no rope_theta, and transformers would take the default of model_type 'newmodel'",
        ),
        (
            {
                "model_type": "newmodel",
                "rope_theta": 1e4,
                "hidden_size": 64,
                "num_attention_heads": 4,
                "max_position_embeddings": 8,
            },
            "has no partial_rotary_factor",
        ),
        ({"model_type": "bert", "hidden_size": 768, "max_position_embeddings": 512}, "if they are learned weights"),
        (
            {
                **LLAMA31,
                "rope_scaling": None,
                "rope_parameters": {"full_attention": {"rope_theta": 1e6}, "sliding_attention": {"rope_theta": 1e4}},
            },
            "gives RoPE per layer type (full_attention, sliding_attention)",
        ),
        ({**LLAMA31, "head_dim": 127, "rope_scaling": None}, "dim 127 is odd"),
        (
            {"model_type": "m2m_100", "d_model": "big", "max_position_embeddings": 1024},
            "d_model must be a whole number",
        ),
        ([1, 2], "is not a JSON object"),
    ],
)
def test_a_config_pecli_cannot_read_is_one_line_naming_the_key(run, tmp_path: Path, config, message: str) -> None:
    path = write(tmp_path, config)
    before = sorted(tmp_path.iterdir())
    r = run("generate", "--hf-config", path, "-o", tmp_path / "out.npy")
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith("Error: ") and r.stderr.count("\n") == 1, r.stderr
    assert message in r.stderr, r.stderr
    assert sorted(tmp_path.iterdir()) == before  # nothing written


def test_an_option_the_configs_kind_does_not_have_is_named_with_what_it_takes(run, tmp_path: Path) -> None:
    r = run("generate", "--hf-config", write(tmp_path, LLAMA31), "--grid", "2x2")
    assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith(
        "Error: the model's config gives a rope recipe, which has no grid: it takes len, dim, base"
    )


def test_missing_and_unreadable_files(run, tmp_path: Path) -> None:
    r = run("generate", "--hf-config", tmp_path / "nope.json")
    assert r.exit_code == 2 and "does not exist: give a model's config.json" in r.stderr
    (tmp_path / "bad.json").write_text("{not json")
    r = run("generate", "--hf-config", tmp_path / "bad.json")
    assert r.exit_code == 2 and "is not readable JSON" in r.stderr
    r = run("generate", "--hf-config", tmp_path, "--preset", "llama")
    assert r.exit_code == 2 and "give --preset or --hf-config, not both" in r.stderr


def test_a_script_reads_a_config_by_its_path_or_its_directory(tmp_path: Path) -> None:
    """``pecli.recipe_from_config`` is exported and takes what ``--hf-config`` takes: the file,
    the model's directory, or the parsed dict; an error names the path."""
    import pecli

    path = write(tmp_path, LLAMA31)
    for given in (path, str(path), tmp_path, LLAMA31):
        assert pecli.recipe_from_config(given) == get_preset("llama3").recipe()
    with pytest.raises(pecli.PecliInputError, match=r"missing\.json does not exist"):
        pecli.recipe_from_config(tmp_path / "missing.json")


def test_a_layer_type_is_picked_after_a_colon(run, tmp_path: Path) -> None:
    # transformers 5 writes per-layer-type RoPE as one dict per layer type (Gemma 3, Qwen3-Next):
    # CONFIG:LAYER builds that layer type's table, with its own θ and scaling.
    layered = {
        **{k: v for k, v in LLAMA31.items() if k != "rope_theta"},
        "rope_scaling": None,
        "rope_parameters": {
            "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1e6},
            "sliding_attention": {"rope_type": "default", "rope_theta": 1e4},
        },
    }
    path = write(tmp_path, layered)
    from pecli import recipe_from_config

    full = recipe_from_config(f"{path}:full_attention")
    assert (full.base, full.scaling, full.factor) == (1e6, "linear", 8.0)
    local = recipe_from_config(path, layer_type="sliding_attention")
    assert (local.base, local.scaling) == (1e4, "default")
    r = run(
        "generate", "--hf-config", f"{path}:sliding_attention", "--len", "4", "--part", "sin", "-o", tmp_path / "s.npy"
    )
    assert r.exit_code == 0, r.output
    for spec, message in (
        (f"{path}:global", "has no layer type 'global': its layer types are full_attention, sliding_attention"),
        (path, f"name the one to build, e.g. --hf-config {path}:full_attention"),
        (
            f"{write(tmp_path, LLAMA31, 'flat.json')}:full_attention",
            "gives one RoPE for every layer: drop ':full_attention'",
        ),
    ):
        r = run("generate", "--hf-config", spec, "--len", "4")
        assert r.exit_code == 2 and r.stderr.count("\n") == 1 and message in r.stderr, r.stderr


GEMMA3_TEXT = {
    "model_type": "gemma3_text",
    "hidden_size": 2560,
    "num_attention_heads": 8,
    "head_dim": 256,
    "max_position_embeddings": 131072,
    "rope_local_base_freq": 10000.0,
    "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
    "rope_theta": 1000000.0,
}


def test_a_model_type_without_defaults_needs_transformers_or_the_key(tmp_path: Path, monkeypatch) -> None:
    import importlib.util

    from pecli import recipe_from_config
    from pecli.errors import PecliInputError

    path = write(tmp_path, GEMMA3_TEXT)
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "transformers" else real(name, *a)
    )
    # Its layer types are read from rope_local_base_freq as Gemma3TextConfig reads them, but the
    # defaults of gemma3_text (its rotary fraction) are transformers' to give.
    with pytest.raises(PecliInputError, match=r"gives RoPE per layer type \(sliding_attention, full_attention\)"):
        recipe_from_config(path)
    with pytest.raises(PecliInputError, match="pip install transformers: its config class fills it in"):
        recipe_from_config(f"{path}:full_attention")
    monkeypatch.undo()
    pytest.importorskip("transformers")
    # With transformers, its Gemma3TextConfig turns rope_local_base_freq into the sliding layers' θ.
    full, local = (recipe_from_config(f"{path}:{layer}") for layer in ("full_attention", "sliding_attention"))
    assert (full.base, full.scaling, full.factor, full.dim) == (1e6, "linear", 8.0, 256)
    assert (local.base, local.scaling, local.dim) == (1e4, "default", 256)


def test_a_model_without_rope_read_through_transformers_is_named_not_crashed(run, tmp_path: Path) -> None:
    # MambaConfig has no attention heads and no RoPE settings: the own reader's message, no traceback.
    r = run("generate", "--hf-config", write(tmp_path, {"model_type": "mamba", "hidden_size": 768}), "--len", "2")
    assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "(model_type 'mamba') has no RoPE settings" in r.stderr


def test_make_recipe_is_the_door_a_script_and_the_command_line_share(run, tmp_path: Path) -> None:
    """``pecli.make_recipe(hf_config=…)`` is ``--hf-config``: the config's cache with the parameters
    on top, the same table from Python and from the command line; a preset and a config together,
    or a kind that is not the start's, are refused in the caller's words (keywords here)."""
    import numpy as np

    import pecli

    path = write(tmp_path, LLAMA31)
    made = pecli.make_recipe({"length": 64}, hf_config=path)
    assert made == get_preset("llama3").recipe(length=64)  # the preset checked against transformers
    r = run("generate", "--hf-config", path, "--len", "64", "-o", tmp_path / "cli.npy")
    assert r.exit_code == 0, r.output
    assert np.array_equal(np.load(tmp_path / "cli.npy"), made.build())
    with pytest.raises(pecli.RecipeError, match=r"^give preset= or hf_config=, not both$"):
        pecli.make_recipe({}, preset="llama3", hf_config=path)
    with pytest.raises(pecli.RecipeError, match=r"gives a rope recipe, not alibi: drop kind="):
        pecli.make_recipe({}, kind="alibi", hf_config=path)
    # Ids given row by row (--positions) stand in for the sequence M-RoPE derives them from.
    with pytest.raises(pecli.RecipeError, match="sequence"):
        pecli.make_recipe({"dim": 128}, kind="mrope")
    assert pecli.make_recipe({"dim": 128}, kind="mrope", ids_given=True).kind == "mrope"
