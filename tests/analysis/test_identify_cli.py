"""`pecli identify` as a user runs it: the SOURCE it prints rebuilds the table, so that
`pecli diff FILE SOURCE --atol X` (the command it prints) exits 0, for every preset and every
kind; and the cases users reported: a NumPy float64 table cast to float32, a file whose stored
recipe is a tie (Whisper), N-D grids and 1-D vectors as the frameworks save them."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from pecli.cli import cli
from pecli.kinds import KINDS
from pecli.presets import PRESETS
from tests.helpers import f32_step, fast_math

f32 = np.float32


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def identify_json(path: Path) -> dict[str, Any]:
    result = run("identify", str(path), "--json")
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def check_passes(doc: dict[str, Any]) -> None:
    """The `check` command identify prints is `pecli diff FILE SOURCE [--atol X]`: it must exit 0."""
    words = shlex.split(doc["check"])
    assert words[:2] == ["pecli", "diff"] and words[3] == doc["best"]["spec"]
    result = run(*words[1:])
    assert result.exit_code == 0, (doc["check"], result.output)


def small(preset: str) -> Any:
    p = PRESETS[preset]
    size = {"length": min(p.size["length"], 48)} if "length" in p.size else {}
    if "heads" in p.size and "length" in p.size:
        size = {"length": min(p.size["length"], 48)}
    return p.recipe(**size)


@pytest.mark.slow  # every preset; each kind's example below runs by default
@pytest.mark.parametrize("preset", list(PRESETS))
def test_the_printed_source_rebuilds_every_preset(tmp_path: Path, preset: str) -> None:
    path = tmp_path / "table.npy"
    np.save(path, small(preset).build())  # data only: no sidecar, no stored recipe
    doc = identify_json(path)
    assert doc["verdict"] == "match" and preset in doc["names"], (preset, doc["names"], doc["notes"])
    assert doc["best"]["atol"] == 0 and doc["best"]["verified"]["rows"] == doc["shape"][0]
    check_passes(doc)


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_printed_source_rebuilds_each_kinds_example(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "table.npy"
    words = KINDS[kind].example.split()
    made = run("generate", *words, "-o", str(path), "--no-sidecar", "-q")
    assert made.exit_code == 0, made.output
    doc = identify_json(path)
    assert doc["verdict"] == "match" and doc["kind"] == kind, doc["summary"] if "summary" in doc else doc
    check_passes(doc)


def numpy_table(n: int, d: int) -> np.ndarray:
    """The paper's table as a careful NumPy user writes it: float64, then cast once to float32."""
    p = np.arange(n, dtype=np.float64)[:, None]
    angle = p / 10000.0 ** (2 * np.arange(d // 2) / d)
    out = np.empty((n, d))
    out[:, 0::2], out[:, 1::2] = np.sin(angle), np.cos(angle)
    return out.astype(f32)


def test_a_numpy_table_is_the_recipe_that_rebuilds_it_bit_for_bit(tmp_path: Path) -> None:
    # 1500×384: the exact table differs from this one by 1 ulp in one element; HF's XLM float64
    # pipeline (p / 10000^(2i/d), cast once) is bit-identical, so it is named first.
    path = tmp_path / "mine.npy"
    np.save(path, numpy_table(1500, 384))
    doc = identify_json(path)
    assert doc["verdict"] == "match" and doc["best"]["name"] == "hf-xlm" and doc["best"]["atol"] == 0
    assert "hf-distilbert" in doc["names"]
    check_passes(doc)
    text = run("identify", str(path)).stdout
    assert "MATCH: matches hf-xlm" in text and "(whole table, bit for bit;" in text
    assert f"check it with    pecli diff {path} sinusoidal:len=1500,dim=384" in text


def test_a_stored_recipe_that_the_data_agrees_with_is_named_first(tmp_path: Path) -> None:
    path = tmp_path / "w.npy"
    assert run("generate", "--preset", "whisper", "--len", "300", "-o", str(path), "-q").exit_code == 0
    doc = identify_json(path)
    assert doc["best"]["name"] == "whisper" and "stored recipe" in doc["best"]["names"]
    assert "tensor2tensor" in doc["names"]  # the tie is shown, after the stored recipe
    assert "the data agrees with the recipe stored in the file" in doc["notes"]
    text = run("identify", str(path)).stdout
    assert "MATCH: matches whisper" in text and "same table as    tensor2tensor" in text


def test_a_stale_stored_recipe_is_not_believed(tmp_path: Path) -> None:
    path = tmp_path / "s.npy"
    assert run("generate", "--len", "64", "--dim", "16", "--layout", "split", "-o", str(path), "-q").exit_code == 0
    np.save(path, numpy_table(64, 16))  # the same shape, interleaved: the sidecar is now stale
    doc = identify_json(path)
    assert doc["best"]["recipe"]["layout"] == "interleaved" and "stored recipe" not in doc["names"]
    # The sidecar's fingerprint no longer matches the data: its recipe is not even read.
    inspected = run("inspect", str(path), "--pos", "1")
    assert "0.5403" in inspected.stdout and "angle 0.1" not in inspected.stdout
    assert "fingerprint does not match" in inspected.stderr


def test_grids_and_vectors_as_frameworks_save_them(tmp_path: Path) -> None:
    # positional-encodings' (X, Y, C) grid and a RoPE inv_freq vector, saved as they come.
    from pecli.kinds.rope import Rope
    from pecli.kinds.sincos2d import Sincos2d

    grid = Sincos2d("6x5", 32, order="tatp", compute="float32").build().reshape(6, 5, 32)
    np.save(tmp_path / "grid.npy", grid)
    doc = identify_json(tmp_path / "grid.npy")
    assert doc["verdict"] == "match" and doc["best"]["recipe"]["grid"] == "6x5"
    check_passes(doc)
    inv = Rope(1, 128, base=500000.0, part="inv_freq").build()[0]
    np.save(tmp_path / "inv.npy", inv)
    doc = identify_json(tmp_path / "inv.npy")
    assert doc["verdict"] == "match" and doc["best"]["recipe"]["base"] == 500000.0
    assert doc["best"]["recipe"]["part"] == "inv_freq"
    check_passes(doc)


def test_a_table_no_kind_fits_says_so_with_what_was_fitted(tmp_path: Path) -> None:
    # The column-index exponent (pos/10000)^(2i/d), a bug seen in blog posts: no known recipe.
    p = np.arange(100, dtype=np.float64)[:, None]
    angle = (p / 10000.0) ** (2 * np.arange(256) / 512)
    table = np.empty((100, 512), dtype=f32)
    table[:, 0::2], table[:, 1::2] = np.sin(angle), np.cos(angle)
    np.save(tmp_path / "bug.npy", table)
    result = run("identify", str(tmp_path / "bug.npy"))
    assert result.exit_code == 0
    assert "NO KNOWN RECIPE: no known recipe; nearest" in result.stdout
    assert "follow no frequency rule" in result.stdout and "nearest candidates" in result.stdout


def test_an_array_identify_cannot_read_is_one_line_exit_2(tmp_path: Path) -> None:
    np.save(tmp_path / "bools.npy", np.ones((3, 4), bool))
    result = CliRunner().invoke(cli, ["identify", str(tmp_path / "bools.npy")])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "pecli reads numeric tables (float16/32/64;" in result.stderr


def test_a_match_says_whether_it_is_bit_for_bit_rounding_or_a_pipelines_envelope(tmp_path: Path) -> None:
    # The PyTorch-tutorial formulation in float32 (angles formed in float32), each step rounded once:
    # pecli's pytorch-tutorial pipeline, bit for bit.  The same with a fast-math float32 sin (not
    # correctly rounded): no recipe rebuilds it bit for bit, and 9.7e-5 is no rounding of float32. The
    # MATCH line must say it holds only within a float32 pipeline's envelope, and how wide that is.
    # (NumPy's own float32 exp and sin are neither: their bits depend on the CPU, issue 40.)
    pos = np.arange(1500, dtype=np.float32)[:, None]
    div = f32_step(np.exp, np.arange(0, 384, 2, dtype=np.float32) * np.float32(-np.log(10000.0) / 384))
    for name, angle, said in (
        (
            "rounded.npy",
            pos * div,
            "matches pytorch-tutorial: sinusoidal length=1500 dim=384 base=10000 layout=interleaved start=0 dtype=float32 odd=error compute=float32 (whole table, bit for bit;",
        ),
        (
            "tut.npy",
            fast_math(pos * div),
            "(whole table, within the float32 exp pipeline's envelope of 0.00018, max |Δ| 9.74e-05;",
        ),
    ):
        table = np.empty((1500, 384), np.float32)
        table[:, 0::2], table[:, 1::2] = f32_step(np.sin, angle), f32_step(np.cos, angle)
        np.save(tmp_path / name, table)
        line = next(x for x in run("identify", str(tmp_path / name)).stdout.splitlines() if x.startswith("MATCH"))
        assert said in line, line
    # One rounding of float32 away: "within the rounding of float32".
    np.save(tmp_path / "near.npy", np.nextafter(numpy_table(300, 64), np.float32(2)))
    near = next(x for x in run("identify", str(tmp_path / "near.npy")).stdout.splitlines() if x.startswith("MATCH"))
    assert "(whole table, within the rounding of float32, max |Δ| 1.19e-07;" in near
