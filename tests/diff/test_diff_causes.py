"""`pecli diff` names the causes users hit, each on a table written the way blog posts and
frameworks write the bug (independent NumPy code, not pecli): exact verdict line, cause, exit code."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from pecli.cli import cli


def paper(n: int, d: int, base: float = 10000.0, layout: str = "interleaved", start: int = 0) -> np.ndarray:
    """The paper's table in float64, cast once to float32, interleaved or split [sin | cos]."""
    p = np.arange(start, start + n, dtype=np.float64)[:, None]
    angle = p / base ** (2 * np.arange(d // 2) / d)
    out = np.empty((n, d))
    if layout == "interleaved":
        out[:, 0::2], out[:, 1::2] = np.sin(angle), np.cos(angle)
    else:
        out[:, : d // 2], out[:, d // 2 :] = np.sin(angle), np.cos(angle)
    return out.astype(np.float32)


def column_index_bug(n: int, d: int) -> np.ndarray:
    """for pos, for j: pe[pos, j] = sin(pos / 10000 ** (j / d)) if j even else cos(...)"""
    pe = np.zeros((n, d))
    for pos in range(n):
        for j in range(d):
            angle = pos / 10000 ** (j / d)
            pe[pos, j] = np.sin(angle) if j % 2 == 0 else np.cos(angle)
    return pe.astype(np.float32)


CASES = {
    "transposed": (
        lambda: paper(64, 32).T.copy(),
        "sinusoidal:len=64,dim=32",
        "transposed",
        "DIFFERENT: shapes differ, (32, 64) vs (64, 32); no elements compared",
    ),
    "transposed square": (
        lambda: paper(64, 64).T.copy(),
        "sinusoidal:len=64,dim=64",
        "transposed",
        "DIFFERENT: 4032 of 4096 elements (98.4%) outside |a−b| ≤ 0 + 0·|b|",
    ),
    "column index in the exponent": (
        lambda: column_index_bug(100, 64),
        "sinusoidal:len=100,dim=64",
        "column-index",
        "DIFFERENT: 3158 of 6400 elements (49.3%) outside |a−b| ≤ 0 + 0·|b|",
    ),
    "sin/cos swapped in pairs": (
        lambda: paper(100, 64)[:, [j ^ 1 for j in range(64)]],
        "sinusoidal:len=100,dim=64",
        "columns: each adjacent column pair of B (0 and 1, 2 and 3, …) is swapped in A",
        "DIFFERENT: 6400 of 6400 elements (100%) outside |a−b| ≤ 0 + 0·|b|",
    ),
    "one row too many": (
        lambda: paper(101, 64),
        "sinusoidal:len=100,dim=64",
        "length",
        "DIFFERENT: shapes differ, (101, 64) vs (100, 64); no elements compared",
    ),
    "layout and base": (
        lambda: paper(100, 64, base=500000.0, layout="split"),
        "sinusoidal:len=100,dim=64",
        "base 500000 (A) vs 10000 (B); layout split ([sin…|cos…]) (A) vs interleaved (sin, cos, sin, …) (B); A's rows fit",
        "DIFFERENT: 6266 of 6400 elements (97.9%) outside |a−b| ≤ 0 + 0·|b|",
    ),
    "layout and shift": (
        lambda: paper(100, 64, layout="split", start=3),
        "sinusoidal:len=100,dim=64",
        "layout split ([sin…|cos…]) (A) vs interleaved (sin, cos, sin, …) (B); start 3 (A) vs 0 (B); A's rows fit",
        "DIFFERENT: 6400 of 6400 elements (100%) outside |a−b| ≤ 0 + 0·|b|",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_cause_is_named(tmp_path: Path, case: str) -> None:
    build, spec, cause, verdict = CASES[case]
    np.save(tmp_path / "a.npy", build())
    result = CliRunner().invoke(cli, ["diff", str(tmp_path / "a.npy"), spec], env={"COLUMNS": "300"})
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0] == verdict
    causes = [line for line in lines if line.startswith("likely cause:")]
    # A transformation's name, then its detail; a recipe's changes in its kind's words.
    prefix = f"likely cause: {cause}" + ("" if " " in cause else ": ")
    assert len(causes) == 1 and causes[0].startswith(prefix), causes


def test_the_combined_causes_say_both_parts(tmp_path: Path) -> None:
    np.save(tmp_path / "a.npy", paper(100, 64, base=500000.0, layout="split"))
    out = (
        CliRunner()
        .invoke(cli, ["diff", str(tmp_path / "a.npy"), "sinusoidal:len=100,dim=64"], env={"COLUMNS": "400"})
        .stdout
    )
    cause = next(line for line in out.splitlines() if line.startswith("likely cause:"))
    assert cause.startswith(
        "likely cause: base 500000 (A) vs 10000 (B); layout split ([sin…|cos…]) (A) vs interleaved (sin, cos, sin, …) "
        "(B); A's rows fit sinusoidal:len=100,dim=64,base=500000,layout=split,start=0,dtype=float32 (largest |a−b| left: 0"
    )


def test_a_symmetric_table_is_not_called_transposed(tmp_path: Path) -> None:
    sym = np.add.outer(np.arange(8.0), np.arange(8.0)).astype(np.float32)
    np.save(tmp_path / "a.npy", sym + 1)
    np.save(tmp_path / "b.npy", sym)
    out = CliRunner().invoke(cli, ["diff", str(tmp_path / "a.npy"), str(tmp_path / "b.npy")]).stdout
    assert "transposed" not in out


def test_a_cause_found_on_a_sample_says_so(tmp_path: Path) -> None:
    # Counts and maxima cover every element; a likely cause is tested on sampled rows of a long table.
    np.save(tmp_path / "a.npy", paper(20000, 64, layout="split"))
    result = CliRunner().invoke(
        cli, ["diff", str(tmp_path / "a.npy"), "sinusoidal:len=20000,dim=64"], env={"COLUMNS": "300"}
    )
    cause = next(line for line in result.stdout.splitlines() if line.startswith("likely cause:"))
    assert cause.startswith("likely cause: layout split ([sin…|cos…]) (A) vs interleaved (sin, cos, sin, …) (B); ")
    assert cause.endswith("; checked on 4096 sampled rows of 20000)")
    short = CliRunner().invoke(cli, ["diff", str(tmp_path / "a.npy"), "sinusoidal:len=20000,dim=64", "--json"]).stdout
    assert '"causes_checked_on": "4096 sampled rows of 20000"' in short
