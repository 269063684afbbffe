"""Integer arrays as tables (issue 24): position ids as a framework returns them.

``get_rope_index`` returns int64 ids and users keep their ids as integers; pecli reads every integer
dtype as float64.  The truth is the integers themselves, written by each format's own library
(numpy, h5py, safetensors, torch): every value read back equals them exactly, and a 64-bit value
float64 cannot hold (beyond 2⁵³) is refused rather than rounded.
"""

from __future__ import annotations

import json
from pathlib import Path

import h5py
import numpy as np
import pytest
from click.testing import CliRunner

from pecli import open_table
from pecli.cli import cli
from pecli.table import Table

INTEGER_DTYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]


def ids_of(dtype: str) -> np.ndarray:
    """A (6, 3) table of ids spanning the dtype: its extremes where float64 holds them, 2⁵³ for 64 bits."""
    info = np.iinfo(dtype)
    top = min(int(info.max), 2**53)
    low = max(int(info.min), -(2**53))
    values = [low, top, 0, 1, top - 1, low + 1, 7, 100 % (top + 1), 3, 2, top // 2, low // 2]
    return np.array((values + values)[:18], dtype=dtype).reshape(6, 3)


def write_natively(path: Path, x: np.ndarray) -> None:
    """``x`` written by the format's own library (no pecli code)."""
    if path.suffix == ".npy":
        np.save(path, x)
    elif path.suffix == ".npz":
        np.savez(path, pe=x)
    elif path.suffix == ".h5":
        with h5py.File(path, "w") as f:
            f["pe"] = x
    elif path.suffix == ".safetensors":
        from safetensors.numpy import save_file

        save_file({"pe": x}, str(path))
    else:
        torch = pytest.importorskip("torch")
        torch.save({"pe": torch.from_numpy(x.astype(x.dtype.newbyteorder("=")))}, path)


@pytest.mark.parametrize("dtype", INTEGER_DTYPES)
@pytest.mark.parametrize("ext", [".npy", ".npz", ".h5", ".safetensors", ".pt"])
def test_every_integer_dtype_is_read_exactly(tmp_path: Path, dtype: str, ext: str) -> None:
    if ext == ".pt" and dtype in ("uint16", "uint32", "uint64"):
        pytest.skip("torch.save has no unsigned 16/32/64-bit tensors to write")
    x = ids_of(dtype)
    path = tmp_path / f"ids{ext}"
    write_natively(path, x)
    with open_table(path) as table:
        got = table.rows(0, table.shape[0])
        assert table.shape == x.shape and got.dtype == np.float64
        assert [int(v) for v in got.ravel()] == [int(v) for v in x.ravel()]  # exact, as Python integers
        assert table.info["note"] == f"{dtype} values are shown as float64 (exactly)"


@pytest.mark.parametrize("value", [2**53 + 1, -(2**53) - 1, 2**63 - 1, -(2**63)])
def test_a_64_bit_integer_float64_cannot_hold_is_refused_not_rounded(tmp_path: Path, value: int) -> None:
    big, out = str(tmp_path / "big.npy"), tmp_path / "out.npy"
    np.save(big, np.array([[0, value]], np.int64))
    for command in (["inspect", big], ["diff", big, big], ["export", big, "-o", str(out)]):
        result = CliRunner().invoke(cli, command)
        assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.output
        assert "holds int64 values beyond 2^53, which float64 cannot hold exactly" in result.stderr
        assert not out.exists()


def test_the_largest_exact_integers_are_kept() -> None:
    x = np.array([[2**53, -(2**53)], [2**53 - 1, 0]], np.int64)
    table = Table.from_array(x, "ids")
    assert [int(v) for v in table.rows(0, 2).ravel()] == [2**53, -(2**53), 2**53 - 1, 0]
    assert table.info["stored dtype"] == "int64"


def test_an_int64_ids_file_diffs_against_the_ids_pecli_writes(tmp_path: Path) -> None:
    """The user's int64 ids (here: the closed form of a text run then one 1×2×3 image, as
    get_rope_index numbers it: text 0..3, then (4, 4+r, 4+c), then text from 4 + 3 = 7) and pecli's
    float32 ``--part ids``: the same numbers, SAME."""
    text = [[p, p, p] for p in range(4)]
    image = [[4, 4 + r, 4 + c] for r in range(2) for c in range(3)]
    tail = [[p, p, p] for p in range(7, 9)]
    np.save(tmp_path / "ids.npy", np.array(text + image + tail, np.int64))
    spec = "mrope:dim=16,mrope_section=2;3;3,sequence=text=4;image=1x2x3;text=2,part=ids"
    result = CliRunner().invoke(cli, ["diff", str(tmp_path / "ids.npy"), spec])
    assert result.exit_code == 0 and result.stdout.startswith("SAME"), result.output


def test_identify_reads_the_sequence_back_from_int64_ids(tmp_path: Path) -> None:
    """The same closed-form ids: identify names the mrope ids of that sequence, proved on every row."""
    text = [[p, p, p] for p in range(3)]
    video = [[3 + f, 3 + r, 3 + c] for f in range(2) for r in range(2) for c in range(2)]
    np.save(tmp_path / "ids.npy", np.array(text + video + [[5, 5, 5]], np.int64))
    result = CliRunner().invoke(cli, ["identify", str(tmp_path / "ids.npy"), "--json"])
    doc = json.loads(result.stdout)
    assert doc["verdict"] == "match" and doc["best"]["recipe"]["part"] == "ids", result.output
    assert doc["best"]["recipe"]["sequence"] == "text=3;video=2x2x2;text=1"
    assert doc["best"]["verified"]["rows"] == 12
