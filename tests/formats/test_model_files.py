"""A model's settings file as a SOURCE (issue 42, item 1): ``pecli diff model.gguf config.json``.

The GGUF files are written by ``gguf.GGUFWriter`` (llama.cpp's own writer), the config.json files as
transformers writes them; the truth for a table is transformers' ``LlamaRotaryEmbedding`` transcribed
in NumPy (``hf_rope``, float32 as it computes), and for the keys the files' own key names.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.diff.test_diff_kinds import hf_rope

LLAMA = {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 8192}


def config(path: Path, **keys: object) -> Path:
    path.write_text(json.dumps({**LLAMA, **keys}))
    return path


def gguf_file(path: Path, **keys: object) -> Path:
    from tests.helpers import write_gguf

    base = {"{arch}.context_length": 8192, "{arch}.embedding_length": 4096, "{arch}.attention.head_count": 32}
    return write_gguf(path, "llama", {**base, **{f"{{arch}}.{k}": v for k, v in keys.items()}}, {})


def test_a_config_is_the_cache_transformers_builds_from_it(run, tmp_path: Path) -> None:
    cfg = config(tmp_path / "config.json", rope_theta=500000.0)
    out = tmp_path / "cache.npy"
    r = run("export", f"{cfg}:len=64", "-o", out)
    assert r.exit_code == 0, r.output
    np.testing.assert_array_equal(np.load(out), hf_rope(64, 128, 500000.0))
    # a model directory, as from_pretrained takes it; its length is max_position_embeddings
    r = run("inspect", tmp_path, "--json")
    assert r.exit_code == 0, r.output
    head = json.loads(r.output)
    assert head["shape"] == [8192, 128]
    assert head["storage"]["keys"] == {
        "length": "max_position_embeddings",
        "dim": "head_dim × partial_rotary_factor",
        "base": "rope_theta",
    }


def test_diff_of_a_gguf_and_a_config_names_the_key_that_differs(run, tmp_path: Path) -> None:
    pytest.importorskip("gguf")
    model = gguf_file(tmp_path / "model.gguf", **{"rope.freq_base": 10000.0, "rope.dimension_count": 128})
    cfg = config(tmp_path / "config.json", rope_parameters={"rope_type": "default", "rope_theta": 1000000.0})
    r = run("diff", model, cfg)
    assert r.exit_code == 1, r.output
    assert "setting llama.rope.freq_base 10000 (A) vs rope_parameters.rope_theta 1000000 (B)" in r.output
    assert "likely cause: base 10000 (A) vs 1000000 (B)" in r.output
    # the two files agree once the config says what the GGUF says: SAME, exit 0
    same = config(tmp_path / "same.json", rope_theta=10000.0)
    r = run("diff", model, same)
    assert r.exit_code == 0, r.output
    # a tensor of the GGUF is still read as itself (FILE:KEY)
    table = np.arange(24, dtype=np.float32).reshape(4, 6)
    from tests.helpers import write_gguf

    with_tensor = write_gguf(
        tmp_path / "t.gguf", "llama", {"{arch}.context_length": 16, "{arch}.rope.dimension_count": 8}, {"pe": table}
    )
    r = run("inspect", f"{with_tensor}:pe", "--rows", "0:4", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["shape"] == [4, 6]
    r = run("inspect", with_tensor, "--json")  # the cache, and where its tensors are
    assert json.loads(r.output)["storage"]["tensors"] == f"1, read one as {with_tensor}:KEY (e.g. {with_tensor}:pe)"


def test_a_gguf_scaling_and_length_are_named_by_their_gguf_keys(run, tmp_path: Path) -> None:
    pytest.importorskip("gguf")
    linear = gguf_file(tmp_path / "a.gguf", **{"rope.scaling.type": "linear", "rope.scaling.factor": 4.0})
    plain = gguf_file(tmp_path / "b.gguf", **{"rope.freq_base": 10000.0})
    r = run("diff", f"{linear}:len=512", f"{plain}:len=512")
    assert r.exit_code == 1, r.output
    assert "setting llama.rope.scaling.type linear (A) vs default (B)" in r.output
    assert "setting llama.rope.scaling.factor 4 (A) vs not set (B)" in r.output


def test_a_cache_file_against_a_config_names_the_configs_key(run, tmp_path: Path) -> None:
    """A foreign .npy (no recipe stored): its rows are fitted, and B's key is named."""
    mine = tmp_path / "mine.npy"
    np.save(mine, hf_rope(256, 128, 1000000.0))
    cfg = config(tmp_path / "config.json", rope_theta=10000.0)
    r = run("diff", mine, f"{cfg}:len=256")
    assert r.exit_code == 1, r.output
    assert "setting base 1000000 (A) vs rope_theta 10000 (B)" in r.output
    # a whisper config: a sinusoid whose keys are its own
    whisper = tmp_path / "whisper.json"
    whisper.write_text(json.dumps({"model_type": "whisper", "d_model": 384, "max_source_positions": 1500}))
    r = run("inspect", whisper, "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["storage"]["keys"] == {"length": "max_source_positions", "dim": "d_model"}


@pytest.mark.parametrize(
    ("operand", "words"),
    [
        ("bert.json:len=8", "has no RoPE settings"),  # a model whose config implies no cache
        ("config.json:lenn=8", "unknown parameter 'lenn=8'"),
        ("config.json:full_attention,sliding_attention", "names 2 layer types"),
        ("config.json:len=0", "length must be at least 1"),
    ],
)
def test_a_settings_operand_that_implies_no_cache_is_one_line(run, tmp_path: Path, operand: str, words: str) -> None:
    config(tmp_path / "config.json", rope_theta=10000.0)
    (tmp_path / "bert.json").write_text(json.dumps({"model_type": "gpt2", "n_positions": 1024}))
    r = run("inspect", tmp_path / operand)
    assert r.exit_code == 2, r.output
    assert words in r.output
    assert "Traceback" not in r.output and len(r.output.strip().splitlines()) == 1


def test_a_json_object_that_is_no_config_is_still_refused_as_a_table(run, tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"hello": 1}))
    r = run("inspect", other)
    assert r.exit_code == 2
    assert "not a pecli table" in r.output
