"""Whole checkpoints (issue 42, item 2): ``pecli identify ckpt`` finds the positional arrays among
the rest and names each; ``pecli diff a b`` compares them key by key.

The checkpoints are written by the ``safetensors`` library; their tables by independent NumPy code:
the paper's sinusoid in float64 cast once to float32, transformers' ``inv_freq`` in float32
(``1 / base ** (arange(0, d, 2) / d)``), a learned table drawn like GPT-2's (normal, std 0.02).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.helpers import f32_step

safetensors_numpy = pytest.importorskip("safetensors.numpy")


def paper(n: int, d: int, base: float = 10000.0) -> np.ndarray:
    pos = np.arange(n, dtype=np.float64)[:, None]
    div = np.exp(np.arange(0, d, 2) * (-np.log(base) / d))
    pe = np.zeros((n, d))
    pe[:, 0::2], pe[:, 1::2] = np.sin(pos * div), np.cos(pos * div)
    return pe.astype(np.float32)


def checkpoint(path: Path, base: float = 10000.0) -> Path:
    """50 weight matrices, a position_ids buffer, and 3 positional arrays (one named by nothing)."""
    rng = np.random.default_rng(0)
    tensors = {f"layers.{i}.mlp.weight": rng.standard_normal((16, 24)).astype(np.float32) for i in range(50)}
    tensors["position_ids"] = np.arange(128, dtype=np.int64)[None, :]
    tensors["wpe.weight"] = (rng.standard_normal((128, 64)) * 0.02).astype(np.float32)
    exponents = np.arange(0, 64, 2, dtype=np.int64).astype(np.float32) / np.float32(64)
    powers = f32_step(np.power, np.float32(10000.0), exponents)  # the same bits on every CPU
    tensors["layers.0.attn.rotary_emb.inv_freq"] = (np.float32(1) / powers).astype(np.float32)
    tensors["encoder.table"] = paper(128, 64, base)
    safetensors_numpy.save_file(tensors, str(path))
    return path


def test_identify_of_a_checkpoint_finds_its_positional_arrays(run, tmp_path: Path) -> None:
    ckpt = checkpoint(tmp_path / "model.safetensors")
    r = run("identify", ckpt, "--json")
    assert r.exit_code == 0, r.output
    arrays = {a["key"]: a for a in json.loads(r.output)["arrays"]}
    assert len(arrays) == 54
    found = {k for k, a in arrays.items() if a["positional"]}
    assert found == {"wpe.weight", "layers.0.attn.rotary_emb.inv_freq", "encoder.table"}
    assert arrays["encoder.table"]["why"] == "first row"  # its name says nothing
    assert arrays["position_ids"]["why"] == "i64 values"  # as safetensors names its dtype: ids, no table
    verdicts = {k: arrays[k]["identification"]["verdict"] for k in found}
    assert verdicts == {"wpe.weight": "learned", "layers.0.attn.rotary_emb.inv_freq": "match", "encoder.table": "match"}
    assert arrays["layers.0.attn.rotary_emb.inv_freq"]["identification"]["best"]["recipe"]["part"] == "inv_freq"
    r = run("identify", ckpt)
    assert r.output.splitlines()[0].endswith("54 arrays, 3 positional")
    assert "encoder.table  (128, 64) float32  MATCH" in r.output
    # The rest one line a reason (keys as the file lists them), not 51 lines of the same words.
    skipped = sorted(x for x in r.output.splitlines() if x.startswith("skipped"))
    assert skipped == [
        "skipped layers.0.mlp.weight, layers.1.mlp.weight, layers.10.mlp.weight and 47 more: neither its name "
        "nor its first row says position (--json lists each)",
        "skipped position_ids: i64 values",
    ]


def test_diff_of_two_checkpoints_compares_the_positional_arrays_key_by_key(run, tmp_path: Path) -> None:
    a = checkpoint(tmp_path / "a.safetensors")
    b = checkpoint(tmp_path / "b.safetensors", base=1000.0)
    r = run("diff", a, b)
    assert r.exit_code == 1, r.output
    lines = r.output.splitlines()
    assert lines[0].startswith("DIFFERENT: 1 of 3 positional arrays")
    assert "wpe.weight: same" in lines and "layers.0.attn.rotary_emb.inv_freq: same" in lines
    assert any(x.startswith("encoder.table: ") and "likely cause: base 10000 (A) vs 1000 (B)" in x for x in lines)
    assert not any("mlp" in x for x in lines)  # the rest are no positional tables
    r = run("diff", a, a, "--json")
    assert r.exit_code == 0
    assert json.loads(r.output)["same"] is True


def test_an_array_that_cannot_be_read_is_listed_and_the_scan_goes_on(run, tmp_path: Path) -> None:
    path = tmp_path / "mixed.npz"
    np.savez(path, pe=paper(32, 16), odd=np.array([{"a": 1}], dtype=object))
    r = run("identify", path)
    assert r.exit_code == 0, r.output
    assert "pe  (32, 16) float32  MATCH" in r.output
    assert "skipped odd:" in r.output
    only = tmp_path / "only.npz"
    np.savez(only, pe=paper(32, 16), w=np.ones((2, 3), dtype=np.float32) * 0.5)
    r = run("diff", only, path)  # odd, only in B, cannot even be probed: said so, and the exit status counts it
    assert r.exit_code == 1
    assert "pe: same" in r.output and "odd: unreadable:" in r.output
