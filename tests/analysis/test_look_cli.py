"""`pecli inspect --heatmap`, `identify`, `analyze` and `plot` from the command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from pecli.plot import NEEDS_MATPLOTLIB


def wrong_formula_table(n: int, d: int) -> np.ndarray:
    """The common wrong formula (pos/10000)^(2i/d) instead of pos/10000^(2i/d)."""
    pos = np.arange(n)[:, None]
    i = np.arange(0, d, 2)[None, :]
    a = (pos / 10000) ** (i / d)
    out = np.empty((n, d), np.float32)
    out[:, 0::2], out[:, 1::2] = np.sin(a), np.cos(a)
    return out


def test_heatmap_in_the_terminal_states_its_sampling(run) -> None:
    r = run("inspect", "--len", "32", "--dim", "128", "--start", "1", "--heatmap")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    # Interleaved: every 2nd (sin, cos) pair, the sin columns first, then the cos columns (an odd
    # column stride used to alternate between the two, which drew a striped picture).
    assert "every 2nd sin/cos pair (64 of 128 dims): its first columns, then its second" in lines[1]
    assert len(lines) == 2 + 32 and lines[2].startswith(" 1 ")
    # Position 1, from the paper's formula: shade = round(2·(v + 1)) of " ░▒▓█", one character each.
    omega = 10000.0 ** (-np.arange(0, 128, 4) / 128)
    values = np.concatenate([np.sin(omega), np.cos(omega)])
    assert lines[2][3:] == "".join(" ░▒▓█"[int(np.rint(2 * (v + 1)))] for v in values)


def test_heatmap_refuses_pos(run) -> None:
    r = run("inspect", "--len", "8", "--dim", "8", "--heatmap", "--pos", "1")
    assert r.exit_code == 2 and "--heatmap draws the whole table" in r.stderr


def test_identify_names_fairseq_and_refuses_the_wrong_formula(run, tmp_path: Path) -> None:
    r = run("identify", "fairseq:len=500,dim=64", "--json")
    assert r.exit_code == 0, r.output
    found = json.loads(r.stdout)
    assert found["verdict"] == "match" and "fairseq" in found["best"]["names"]
    np.save(tmp_path / "bad.npy", wrong_formula_table(256, 64))
    r = run("identify", str(tmp_path / "bad.npy"))
    assert r.exit_code == 0 and "NO KNOWN RECIPE" in r.stdout, r.stdout


def test_analyze_reports_decay_and_the_relative_position_residual(run, tmp_path: Path) -> None:
    r = run("analyze", "--len", "512", "--dim", "128", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["decay"]["cosine"][0] == pytest.approx(1.0)
    assert max(out["relative_residual"]["residual"]) < 1e-6  # float32 table: ~2e-8
    assert out["wavelengths"][0] == pytest.approx(2 * np.pi)
    rng = np.random.default_rng(0)
    np.save(tmp_path / "learned.npy", rng.normal(0, 0.02, (512, 64)).astype(np.float32))
    r = run("analyze", str(tmp_path / "learned.npy"))
    assert r.exit_code == 0 and "not a linear function of PE(p)" in r.stdout, r.output


def test_plot_writes_a_png_and_refuses_to_clobber(run, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "h.png"
    r = run("plot", "--len", "32", "--dim", "128", "-o", str(out))
    assert r.exit_code == 0, r.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and "wrote" in r.stderr
    before = out.read_bytes()
    r = run("plot", "--len", "16", "--dim", "16", "-o", str(out))
    assert r.exit_code == 2 and out.read_bytes() == before


def test_plot_without_matplotlib_says_how_to_install_it(run, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib → ImportError
    r = run("plot", "--len", "8", "--dim", "8", "-o", str(tmp_path / "x.png"))
    assert r.exit_code == 2
    assert r.stderr.strip() == f"Error: {NEEDS_MATPLOTLIB}"
    assert not (tmp_path / "x.png").exists()
