"""`pecli diff` end to end: verdicts, exit codes, explanations, JSON."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pecli import Sinusoidal
from tests.analysis.test_identify_far_start import phi3_cache
from tests.helpers import f32_step


def wrong_formula(length: int, dim: int) -> np.ndarray:
    """The common wrong formula: angle = (pos/10000) ** (2i/d), interleaved."""
    pos = np.arange(length, dtype=np.float64)[:, None]
    i = np.arange(0, dim, 2, dtype=np.float64)[None, :] / dim
    angle = (pos / 10000.0) ** i
    out = np.empty((length, dim), np.float32)
    out[:, 0::2], out[:, 1::2] = np.sin(angle), np.cos(angle)
    return out


@pytest.fixture
def files(run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    run("generate", "--len", 256, "--dim", 64, "-o", "paper.npy")
    run("generate", "--len", 256, "--dim", 64, "--layout", "split", "-o", "hf.safetensors")
    run("generate", "--len", 256, "--dim", 64, "--start", 2, "-o", "offset.h5")
    np.save("wrong_formula.npy", wrong_formula(256, 64))
    return tmp_path


def test_same_table_exit_0(run, files: Path) -> None:
    r = run("diff", "paper.npy", "sinusoidal:len=256,dim=64")
    assert r.exit_code == 0
    assert r.stdout.splitlines()[0] == "SAME: all 16384 elements within |a−b| ≤ 0 + 0·|b|"
    assert (
        r.stdout.splitlines()[2]
        == "B sinusoidal:len=256,dim=64,base=10000,layout=interleaved,start=0,dtype=float32  (256, 64) float32  (the reference)"
    )


def test_layout_only_difference_is_named(run, files: Path) -> None:
    r = run("diff", "hf.safetensors", "paper.npy")
    assert r.exit_code == 1
    out = r.stdout
    assert out.startswith("DIFFERENT: ")
    assert "metadata layout: 'split' vs 'interleaved'" in out
    assert "likely cause: layout split ([sin…|cos…]) (A) vs interleaved (sin, cos, sin, …) (B)" in out
    assert "no known cause fits" not in out


def test_offset_only_difference_is_named(run, files: Path) -> None:
    r = run("diff", "offset.h5", "paper.npy")
    assert r.exit_code == 1
    assert "likely cause: start 2 (A) vs 0 (B)" in r.stdout
    assert "metadata start: 2 vs 0" in r.stdout


def test_the_wrong_formula_is_a_real_difference(run, files: Path) -> None:
    r = run("diff", "wrong_formula.npy", "sinusoidal:len=256,dim=64")
    assert r.exit_code == 1
    assert "likely cause" not in r.stdout
    assert "no known cause fits" in r.stdout
    assert "worst elements" in r.stdout


def test_shape_mismatch_is_a_difference(run, files: Path) -> None:
    r = run("diff", "paper.npy", "sinusoidal:len=255,dim=64")
    assert r.exit_code == 1
    assert r.stdout.splitlines()[0] == "DIFFERENT: shapes differ, (256, 64) vs (255, 64); no elements compared"


def test_tolerance_turns_float32_noise_into_same(run, files: Path) -> None:
    run("generate", "--len", 256, "--dim", 64, "--dtype", "float64", "-o", "wide.npy")
    assert run("diff", "paper.npy", "wide.npy", "-s").exit_code == 1
    r = run("diff", "paper.npy", "wide.npy", "--rtol", "1e-7", "--atol", "1e-7")
    assert r.exit_code == 0, r.stdout
    assert "dtype differs: float32 vs float64" in r.stdout


def test_quiet_prints_nothing(run, files: Path) -> None:
    r = run("diff", "hf.safetensors", "paper.npy", "--brief")
    assert (r.exit_code, r.stdout, r.stderr) == (1, "", "")


def test_json_report(run, files: Path) -> None:
    r = run("diff", "hf.safetensors", "paper.npy", "--json", "-n", "3")
    assert r.exit_code == 1
    doc = json.loads(r.stdout)
    table = Sinusoidal(256, 64)
    split = Sinusoidal(256, 64, layout="split").build().astype(np.float64)
    diffs = np.abs(split - table.build().astype(np.float64))
    assert doc["same"] is False and doc["exit_code"] == 1
    assert doc["mismatched"] == int((diffs > 0).sum())
    assert doc["max_abs"] == pytest.approx(float(diffs.max()))
    assert len(doc["worst"]) == 3
    assert [x["name"] for x in doc["explanations"]] == ["recipe"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["diff", "paper.npy"], "Missing argument 'B'."),
        (["diff", "paper.npy", "nope.npy"], "nope.npy does not exist"),
        (["diff", "paper.npy", "paper.npy", "--atol", "-1"], "Invalid value for '--atol'"),
        (["diff", "paper.npy", "sinusoidal:len=0,dim=4"], "length must be at least 1"),
    ],
)
def test_diff_errors_exit_2(run, files: Path, args: list[str], message: str) -> None:
    r = run(*args)
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and message in r.stderr, r.stderr


def test_longrope_factors_are_said_by_where_they_differ(run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Phi-3's 48 factors were printed whole, twice, in every metadata and cause line: a thousand
    characters in which to find the one factor that differs."""
    monkeypatch.chdir(tmp_path)
    base = "rope:len=64,dim=16,scaling=longrope,factor=32,original-max-position-embeddings=4096,long-factor=2;2;2;2;2;2;2;2"
    factors = [1.0, 1.05, 1.1, 1.2500000000000002, 1.4, 1.5, 1.9, 2.0]
    run("export", f"{base},short-factor={';'.join(map(repr, factors))}", "-o", "a.npy")
    factors[3] = 1.3
    r = run("diff", "a.npy", f"{base},short-factor={';'.join(map(repr, factors))}")
    assert r.exit_code == 1
    lines = r.stdout.splitlines()
    assert "metadata short_factor: 1 of 8 values differs: [3] 1.2500000000000002 vs 1.3" in lines
    cause = next(line for line in lines if line.startswith("likely cause: "))
    assert cause.startswith("likely cause: short-factor: 1 of 8 values differs: [3] 1.2500000000000002 (A) vs 1.3 (B)")


def users_longrope_cache(n: int, edited: float) -> tuple[np.ndarray, str]:
    """A cos cache made by a user's NumPy code (transformers' ``_compute_longrope_parameters`` in
    float32: ``inv_freq = 1 / (ext · base^(2i/d))``, cos of ``[p·inv_freq, p·inv_freq]`` times
    ``sqrt(1 + ln(factor)/ln(original))``) with short factor 3 set to ``edited``, and the recipe
    with the factors as published."""
    dim, factor, original = 16, 32.0, 4096
    short = [1.0, 1.05, 1.1, 1.25, 1.4, 1.5, 1.9, 2.0]
    mine = short.copy()
    mine[3] = edited
    ext = np.array(mine, dtype=np.float32)
    e = np.arange(0, dim, 2, dtype=np.float32) / np.float32(dim)
    inv = (np.float32(1.0) / (ext * np.float32(10000.0) ** e)).astype(np.float32)
    freqs = np.arange(n, dtype=np.float32)[:, None] * inv[None, :]
    scale = np.float32(np.sqrt(1 + np.log(factor) / np.log(original)))
    table = (f32_step(np.cos, np.concatenate([freqs, freqs], axis=1)) * scale).astype(np.float32)
    spec = (
        f"rope:len={n},dim={dim},scaling=longrope,factor=32,original-max-position-embeddings={original},"
        f"short-factor={';'.join(map(repr, short))},long-factor={';'.join(['2.0'] * 8)}"
    )
    return table, spec


def test_a_users_longrope_cache_is_told_which_factor_differs(
    run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cause names the edited factor and both values, and not the long factors, which neither
    table of 2048 positions (below the original 4096) uses."""
    monkeypatch.chdir(tmp_path)
    table, spec = users_longrope_cache(2048, 1.3)
    np.save("mine.npy", table)
    r = run("diff", "mine.npy", spec)
    assert r.exit_code == 1
    cause = next(line for line in r.stdout.splitlines() if line.startswith("likely cause: "))
    assert cause.startswith(
        "likely cause: short-factor: 1 of 8 values differs: [3] 1.3 (A) vs 1.25 (B); A's rows fit rope:"
    ), cause
    assert "long-factor" not in cause


def test_a_short_users_longrope_cache_is_told_which_factor_differs(
    run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """64 rows measure too few of the frequencies for the rope fit to propose a factor list (the
    slowest turn by 0.01 rad): the one item whose change moves the most different column is
    refitted on the given recipe, and rebuilds every row."""
    monkeypatch.chdir(tmp_path)
    table, spec = users_longrope_cache(64, 1.3)
    np.save("mine.npy", table)
    r = run("diff", "mine.npy", spec)
    assert r.exit_code == 1
    cause = next(line for line in r.stdout.splitlines() if line.startswith("likely cause: "))
    assert cause.startswith("likely cause: short-factor: 1 of 8 values differs: [3] 1.3 (A) vs 1.25 (B); A's rows fit")
    assert cause.endswith("(largest |a−b| left: 0)"), cause


def test_a_far_start_is_said_without_the_factor_lists_that_build_the_same_rows(
    run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Phi-3's cache from position 4096 (identified: the preset at that start) against the preset
    from 0.  The rope fit of B proposes its factor lists rounded to 4 digits, the long list equal to
    the short one: the same rows, since 1.25 and 1.2500000000000002 are one float32 and B never
    reads its long list.  Only the start is a cause (it read "short-factor: 41 of 48 values differ"
    and "long-factor: 48 of 48" beside it)."""
    monkeypatch.chdir(tmp_path)
    np.save("phi3.npy", phi3_cache(4096, 2048, "cos"))
    r = run("diff", "phi3.npy", "phi3-vision-128k:len=2048")
    assert r.exit_code == 1
    cause = next(line for line in r.stdout.splitlines() if line.startswith("likely cause: "))
    assert cause.startswith("likely cause: start 4096 (A) vs 0 (B); B's rows fit rope:"), cause
    assert "factor:" not in cause


def phi3_with(length: int, start: int = 0, **items: float) -> tuple[np.ndarray, str]:
    """Phi-3-vision's cache built by pecli with short factors edited (``{"20": 2.3}``), and the
    preset's SOURCE at that length."""
    from pecli.presets import PRESETS

    recipe = PRESETS["phi3-vision-128k"].recipe(length=length)
    factors = recipe.short_factor.split(";")
    for k, v in items.items():
        factors[int(k)] = repr(v)
    table = recipe.with_params(start=start, short_factor=";".join(factors)).build()
    return table, f"phi3-vision-128k:len={length}"


def cause_of(run, table: np.ndarray, spec: str) -> str:  # type: ignore[no-untyped-def]
    np.save("a.npy", table)
    r = run("diff", "a.npy", spec)
    assert r.exit_code == 1
    return next((line for line in r.stdout.splitlines() if line.startswith("likely cause: ")), "")


@pytest.mark.parametrize(
    ("item", "value"),
    [("0", 1.155), ("3", 1.21), ("20", 2.3), ("37", 2.585), ("43", 3.19)],
)
def test_one_edited_factor_of_48_is_named_with_a_value_that_rebuilds_every_row(
    run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, item: str, value: float
) -> None:
    """A fast column (item 0: about a radian a row) as well as a slow one, and the value that
    rebuilds the rows bit for bit (3.19), not a rounder one within rounding (3.2 left 34 values a
    float32 rounding off)."""
    monkeypatch.chdir(tmp_path)
    cause = cause_of(run, *phi3_with(64, **{item: value}))
    assert cause.startswith(f"likely cause: short-factor: 1 of 48 values differs: [{item}] {value!r} (A) vs "), cause
    assert cause.endswith("(largest |a−b| left: 0)"), cause


def test_two_rows_are_too_few_to_refit_a_factor(run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Row 0 of a cache from 0 is its amplitude: two rows leave one value a column, which any
    factor in eight decades can be fitted to (it named 0.0164 for a column set to 0.3)."""
    monkeypatch.chdir(tmp_path)
    table, spec = phi3_with(2)
    table[1, 20] = table[1, 68] = 0.3
    assert cause_of(run, table, spec) == ""


def test_a_far_start_with_one_edited_factor_names_that_factor_alone(
    run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fit's rounded lists differ from the preset's in 41 items that build the same float32
    factors; only the edited one is a cause (it was said behind "…" among the 41)."""
    monkeypatch.chdir(tmp_path)
    cause = cause_of(run, *phi3_with(2048, **{"20": 2.3}))
    assert cause.startswith("likely cause: short-factor: 1 of 48 values differs: [20] 2.3 (A) vs 2.000000000000001 (B)")


def test_a_side_with_its_own_recipe_keeps_its_list_as_written(
    run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """B's sidecar recipe is confirmed: its item is said as written (2.000000000000001), both ways
    round, not as the 2.0 a refit would find."""
    monkeypatch.chdir(tmp_path)
    assert run("export", "phi3-vision-128k:len=64", "-o", "side.npy").exit_code == 0
    from pecli.presets import PRESETS

    edited = PRESETS["phi3-vision-128k"].recipe(length=64)
    factors = edited.short_factor.split(";")
    factors[20] = "2.3000000000000003"
    source = edited.with_params(short_factor=";".join(factors)).spec()
    for args, said in (
        ((source, "side.npy"), "[20] 2.3000000000000003 (A) vs 2.000000000000001 (B)"),
        (("side.npy", source), "[20] 2.000000000000001 (A) vs 2.3000000000000003 (B)"),
    ):
        r = run("diff", *args)
        cause = next(line for line in r.stdout.splitlines() if line.startswith("likely cause: "))
        assert cause.startswith(f"likely cause: short-factor: 1 of 48 values differs: {said}"), cause


@pytest.mark.parametrize(
    ("length", "said"),
    [
        (64, "long factors (A) vs short (B) below 4096 positions"),
        (2048, "long factors (A) vs short (B) below 4096 positions"),
        (8192, "short factors (A) vs long (B) past 4096 positions"),
    ],
)
def test_phi3_s_lists_swapped_stay_the_kinds_slip(
    run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, length: int, said: str
) -> None:
    """Phi-3's real lists: two of its long factors are its short ones in float32, so setting
    items back one by one would leave a list no one wrote; the slip is said in the kind's words."""
    from pecli.presets import PRESETS

    monkeypatch.chdir(tmp_path)
    preset = PRESETS["phi3-vision-128k"].recipe(length=length)
    short, long = preset.short_factor, preset.long_factor
    table = preset.with_params(short_factor=long, long_factor=short).build()
    assert cause_of(run, table, f"phi3-vision-128k:len={length}").startswith(f"likely cause: {said}")


def test_two_edited_factors_are_not_said_as_one(run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One item refitted cannot rebuild a cache whose recipe differs at two: no cause is claimed."""
    monkeypatch.chdir(tmp_path)
    table, spec = users_longrope_cache(64, 1.3)
    np.save("mine.npy", table)
    r = run("diff", "mine.npy", spec.replace("1.4;1.5", "1.45;1.5"))
    assert r.exit_code == 1
    assert not any(line.startswith("likely cause: ") for line in r.stdout.splitlines())
    assert any(line.startswith("no known cause fits") for line in r.stdout.splitlines())
