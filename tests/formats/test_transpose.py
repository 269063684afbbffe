"""Transposed tables (issue 24): ``--transpose`` writes ``(columns, positions)``, and ``identify``
says when a table is the transpose of one it names.

Truth: the published sinusoid in float64 (``tests.helpers.reference``), transposed with NumPy, as
each format's own library reads it back; a user's transposed NumPy table for ``identify``.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import h5py
import numpy as np
import pytest
from click.testing import CliRunner

from pecli.cli import cli
from tests.helpers import reference, reference_tolerance

N, D = 48, 16
SPEC = f"sinusoidal:len={N},dim={D},dtype=float64"


def read_natively(path: Path) -> np.ndarray:
    if path.suffix == ".npy":
        return np.load(path)
    if path.suffix == ".npz":
        return np.load(path)["pe"]
    if path.suffix == ".h5":
        with h5py.File(path) as f:
            return np.asarray(f["pe"])
    if path.suffix == ".csv":
        return np.loadtxt(path, delimiter=",", skiprows=1)  # a header row of column names
    from safetensors.numpy import load_file

    return load_file(str(path))["pe"]


@pytest.mark.parametrize("ext", [".npy", ".npz", ".h5", ".safetensors", ".csv"])
def test_export_transpose_writes_positions_along_the_columns(tmp_path: Path, ext: str) -> None:
    out = tmp_path / f"t{ext}"
    result = CliRunner().invoke(cli, ["export", SPEC, "--transpose", "-o", str(out)])
    assert result.exit_code == 0, result.output
    got = read_natively(out)
    assert got.shape == (D, N)
    np.testing.assert_allclose(got, reference(N, D).T, rtol=0, atol=reference_tolerance(0, N))
    assert not Path(str(out) + ".json").exists()  # no recipe: its shape is the other one
    if ext == ".csv":  # the header names the columns: positions, not dims
        assert out.read_text().splitlines()[0] == ",".join(f"p{j}" for j in range(N))
    shown = CliRunner().invoke(cli, ["inspect", str(out)])
    assert "recipe none stored" in " ".join(shown.stdout.split()), shown.stdout


def test_a_transposed_csv_header_names_the_positions_its_columns_hold(tmp_path: Path) -> None:
    out = tmp_path / "t.csv"
    result = CliRunner().invoke(
        cli, ["generate", "--len", "3", "--dim", "2", "--start", "1000", "--transpose", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert out.read_text().splitlines()[0] == "p1000,p1001,p1002"


def test_generate_transpose_needs_a_file(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["generate", "--len", "4", "--dim", "4", "--transpose"])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "--transpose writes a file: add -o PATH" in result.stderr


def test_a_transpose_too_big_for_memory_is_refused_before_writing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PECLI_MEMORY_LIMIT", "100MB")
    out = tmp_path / "big.npy"  # 512 MB of float32 to hold at once
    result = CliRunner().invoke(cli, ["export", "sinusoidal:len=2000000,dim=64", "--transpose", "-o", str(out)])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.output
    assert "leave out --transpose" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_identify_notes_a_users_transposed_table_and_how_to_rebuild_it(tmp_path: Path) -> None:
    mine = tmp_path / "mine.npy"
    np.save(mine, reference(N, D).T.astype(np.float32))  # a user's table, saved (dim, positions)
    runner = CliRunner()
    result = runner.invoke(cli, ["identify", str(mine)])
    assert result.exit_code == 0, result.output
    assert "NO KNOWN RECIPE" in result.stdout  # no recipe builds the table as it is
    text = " ".join(result.stdout.split())
    assert f"its transpose ({N}×{D}, positions along the rows) matches sinusoidal" in text
    command = text.split("rebuild it with ")[1].split(" -o FILE")[0]
    rebuilt = tmp_path / "rebuilt.npy"
    done = runner.invoke(cli, [*shlex.split(command)[1:], "-o", str(rebuilt)])
    assert done.exit_code == 0, done.output
    np.testing.assert_array_equal(np.load(rebuilt), np.load(mine))
