"""The bad-input matrix: every command, every kind of mistake.

Each case must end with exit status 2, exactly one line on stderr that names the problem, no
traceback, nothing on stdout, and the working directory byte-for-byte as it was (no partial
output, the existing file untouched)."""

from __future__ import annotations

import hashlib
import struct
from pathlib import Path

import h5py
import numpy as np
import pytest

from pecli import Sinusoidal


def make_files(d: Path) -> None:
    """A directory of good and broken inputs, plus an existing output that must survive."""
    table = Sinusoidal(16, 4).build()
    np.save(d / "good.npy", table)
    (d / "truncated.npy").write_bytes((d / "good.npy").read_bytes()[:100])
    (d / "magic.npy").write_bytes(b"\x93NUMPX" + (d / "good.npy").read_bytes()[6:])
    np.save(d / "ints.npy", np.arange(12).reshape(3, 4))
    np.save(d / "scalar.npy", np.float64(3.0))  # (a cube (X, Y, C) is a grid now, read as rows)
    np.save(d / "objects.npy", np.array([None, 1], dtype=object), allow_pickle=True)
    np.savez(d / "good.npz", pe=table)
    (d / "truncated.npz").write_bytes((d / "good.npz").read_bytes()[:200])
    with h5py.File(d / "good.h5", "w") as f:
        f["pe"] = table
        f["other"] = table
    (d / "truncated.h5").write_bytes((d / "good.h5").read_bytes()[:300])
    with h5py.File(d / "multi.h5", "w") as f:
        f["a"] = table
        f["b"] = table
    header = b'{"pe": {"dtype": "F32", "shape": [16, 4], "data_offsets": [0, 256]}}'
    (d / "good.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + table.tobytes())
    (d / "truncated.safetensors").write_bytes((d / "good.safetensors").read_bytes()[:120])
    big = b'{"pe": {"dtype": "F32", "shape": [1000000, 1000000], "data_offsets": [0, 4000000000000]}}'
    (d / "huge.safetensors").write_bytes(struct.pack("<Q", len(big)) + big)
    with open(d / "huge.npy", "wb") as fp:  # a 128-byte file declaring 10**12 float32 values
        np.lib.format.write_array_header_1_0(fp, {"descr": "<f4", "fortran_order": False, "shape": (10**6, 10**6)})
    (d / "empty.csv").write_bytes(b"")
    (d / "ragged.csv").write_text("d0,d1\n1,2\n3\n")
    (d / "words.csv").write_text("d0,d1\n1,2\n3,four\n")
    (d / "blank.csv").write_text("d0,d1\n1,2\n\n3,4\n")
    (d / "broken.json").write_text('{"data": [[1, 2], [3')
    (d / "notable.json").write_text('{"rows": 3}')
    (d / "badvalue.json").write_text('{"dtype": "float32", "data": [[1, "x"]]}')
    (d / "pe.h").write_text("/* a header */\n")
    (d / "dir.npy").mkdir()
    (d / "existing.npy").write_bytes(b"precious")
    (d / "existing.png").write_bytes(b"precious picture")
    (d / "unknown.xyz").write_text("1,2\n")


def snapshot(d: Path) -> dict[str, str]:
    return {
        str(p.relative_to(d)): ("dir" if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest())
        for p in sorted(d.rglob("*"))
    }


G = ["generate", "--len", "16", "--dim", "4"]
E = ["export", "--len", "16", "--dim", "4"]
CASES: list[tuple[list[str], str]] = [
    # sizes and recipe parameters
    (["generate", "--len", "0", "--dim", "4"], "length must be at least 1, got 0"),
    (["generate", "--len", "-5", "--dim", "4"], "length must be at least 1, got -5"),
    (["generate", "--len", "2.5", "--dim", "4"], "'2.5' is not a valid integer"),
    (["generate", "--len", "1e3", "--dim", "4"], "'1e3' is not a valid integer"),
    (["generate", "--len", "10**12", "--dim", "4"], "'10**12' is not a valid integer"),
    (["generate", "--len", "16", "--dim", "0"], "dim must be at least 1, got 0"),
    (["generate", "--len", "16", "--dim", "-1"], "dim must be at least 1, got -1"),
    (["generate", "--len", "16", "--dim", "x"], "'x' is not a valid integer"),
    (["generate", "--len", "16"], "Missing option --dim"),
    (["generate", "--dim", "4"], "Missing option --len"),
    ([*G, "--base", "1"], "base must be a finite number > 0 and ≠ 1"),
    ([*G, "--base", "0"], "base must be a finite number > 0 and ≠ 1"),
    ([*G, "--base", "-10000"], "base must be a finite number > 0 and ≠ 1"),
    ([*G, "--base", "inf"], "base must be a finite number > 0 and ≠ 1"),
    ([*G, "--base", "nan"], "base must be a finite number > 0 and ≠ 1"),
    ([*G, "--base", "1e-300"], "makes angles too large to compute accurately"),
    ([*G, "--start", "-1"], "start must be at least 0, got -1"),
    (["generate", "--len", str(2**53), "--dim", "4", "--start", "5"], "positions must stay below 2**53"),
    ([*G, "--layout", "diagonal"], "'diagonal' is not one of 'interleaved', 'split', 'cos-first'"),
    ([*G, "--dtype", "bfloat16"], "'bfloat16' is not one of"),
    ([*G, "--rows", "20:30"], "--rows 20:30 is outside 0:16 or empty"),
    ([*G, "--rows", "5:5"], "--rows 5:5 is outside 0:16 or empty"),
    ([*G, "--cols", "a:b"], "'a:b' is not a span"),
    ([*G, "--precision", "-1"], "-1 is not in the range 0<=x<=17"),
    (["generate", "--len", "100000", "--dim", "4", "--rows", "0:50000"], "more than the 10000 a terminal view shows"),
    # outputs
    ([*G, "-o", "existing.npy"], "existing.npy already exists: pass --force to overwrite it"),
    ([*G, "-o", "missing/dir/t.npy"], "directory missing/dir does not exist"),
    ([*G, "-o", "dir.npy"], "dir.npy is a directory: give a file name"),
    ([*G, "-o", "t.docx"], "cannot tell the format of 't.docx'"),
    ([*G, "-o", "t.npy", "--format", "xlsx"], "'xlsx' is not one of"),
    ([*G, "-o", "-"], "writing to stdout needs --format"),
    ([*G, "-o", "-", "--format", "h5"], "h5 cannot be written to a stream"),
    ([*G, "-o", "t.csv", "--compress", "gzip"], "--compress applies to HDF5 output only"),
    ([*G, "-o", "t.h5", "--compress", "gzip:12"], "'gzip:12' is not gzip or gzip:LEVEL"),
    ([*G, "-o", "t.csv", "--digits", "0"], "0 is not in the range 1<=x<=17"),
    ([*G, "-o", "t.safetensors", "--key", "__metadata__"], "--key __metadata__ is reserved"),
    ([*G, "-o", "t.npz", "--key", "pecli_recipe"], "reserved for pecli's metadata"),
    (["generate", "--len", "1000000000000", "--dim", "8", "-o", "big.npy"], "would need at least 32.0 TB"),
    ([*E], "Missing option -o/--output"),
    ([*E, "-o", "existing.npy"], "already exists"),
    (["export", "good.npy", "--len", "5", "-o", "t.npy"], "give a SOURCE or recipe options, not both"),
    # sources
    (["inspect"], "give a SOURCE"),
    (["inspect", "nope.npy"], "nope.npy does not exist"),
    (["inspect", "dir.npy"], "dir.npy is a directory"),
    (["inspect", "empty.csv"], "empty.csv is empty"),
    (["inspect", "unknown.xyz"], "cannot tell the format of 'unknown.xyz'"),
    (["inspect", "truncated.npy"], "is not a readable .npy"),
    (["inspect", "magic.npy"], "is not a readable .npy"),
    (["inspect", "objects.npy"], "is not a readable .npy table"),
    (["inspect", "huge.npy"], "huge.npy is not a readable .npy"),
    (["diff", "huge.npy", "good.npy"], "huge.npy is not a readable .npy"),
    (["inspect", "ints.npy"], "holds int64 values: pecli reads floating-point tables"),
    (["inspect", "scalar.npy"], "holds a single number: expected a table"),
    (["inspect", "truncated.npz"], "is not a readable .npz file"),
    (["inspect", "truncated.h5"], "is not a readable HDF5 file"),
    (["inspect", "good.h5:missing"], "has no dataset 'missing'"),
    (["inspect", "multi.h5", "--pos", "1"], "holds several arrays (a, b): choose one as multi.h5:KEY"),
    (["inspect", "truncated.safetensors"], "tensor 'pe' points outside the file (offsets 0..256)"),
    (["inspect", "huge.safetensors"], "tensor 'pe' points outside the file"),
    (["inspect", "good.safetensors:nope"], "has no array 'nope'"),
    (["inspect", "ragged.csv"], "line 3 has 1 values, expected 2"),
    (["inspect", "words.csv"], "line 3 has a non-numeric value 'four'"),
    (["inspect", "blank.csv"], "line 3 is blank"),
    (["inspect", "broken.json"], "is not valid JSON"),
    (["inspect", "notable.json"], "is JSON but not a pecli table"),
    (["inspect", "badvalue.json"], "row 0 holds a value that is not a number"),
    (["inspect", "pe.h"], "h is a write-only format"),
    (["inspect", "good.npy", "--pos", "16"], "--pos 16 is outside the table's positions 0..15"),
    (["inspect", "good.npy", "--pos", "-1"], "--pos -1 is outside the table's positions 0..15"),
    (["inspect", "good.npy", "--pos", "1", "--rows", "0:2"], "--rows and --pos exclude each other"),
    (["inspect", "good.npy:pe"], "is a .npy file with one array: drop ':pe'"),
    (["inspect", "spiral:len=8,dim=4"], "unknown kind 'spiral'"),
    (["inspect", "sinusoidal:len=8"], "needs dim"),
    (["inspect", "sinusoidal:len=8,dim=4,bogus=1"], "unknown parameter 'bogus=1'"),
    (["inspect", "sinusoidal:len=8,dim=four"], "is not a whole number"),
    (["inspect", "--format", "h", "good.npy"], "'h' is not one of"),
    # diff
    (["diff", "good.npy"], "Missing argument 'B'"),
    (["diff", "good.npy", "nope.npy"], "nope.npy does not exist"),
    (["diff", "good.npy", "good.npy", "--atol", "-1"], "Invalid value for '--atol'"),
    (["diff", "good.npy", "good.npy", "--rtol", "nan"], "rtol must be a finite number ≥ 0, got nan"),
    (["diff", "good.npy", "good.npy", "-n", "-2"], "Invalid value for '-n' / '--top'"),
    (["diff", "truncated.h5", "good.npy"], "is not a readable HDF5 file"),
    # dialects, kinds and presets
    (["generate", "--preset", "fairsek"], "unknown preset 'fairsek': did you mean fairseq?"),
    (["generate", "--preset", "mae", "--len", "5"], "preset mae is a sincos2d recipe, which has no len"),
    (["generate", "--preset", "whisper", "--dim", "65"], "dim 65 is odd"),
    ([*G, "--freq", "golden"], "'golden' is not one of 'paper', 't2t', 'half'"),
    ([*G, "--odd", "round"], "'round' is not one of"),
    ([*G, "--padding-idx", "-1"], "padding_idx must be at least 0, got -1"),
    ([*G, "--form", "div"], "form=div"),
    ([*G, "--min-timescale", "0"], "min_timescale must be a finite number > 0"),
    (["generate", "--grid", "14", "--dim", "768"], "grid must look like HxW"),
    (["generate", "--grid", "4x4", "--dim", "6"], "dim 6 must be a multiple of 4"),
    (["generate", "--grid", "2x2x2", "--dim", "8"], "needs order=tatp"),
    (["generate", "--kind", "rope", "--len", "8", "--dim", "7"], "rotary embeddings rotate pairs of dims"),
    (["generate", "--kind", "rope", "--len", "8", "--dim", "8", "--scaling", "yarn"], "scaling=yarn needs"),
    (["generate", "--kind", "rope", "--len", "8", "--dim", "8", "--low-freq-factor", "1"], "does not use"),
    (["generate", "--kind", "alibi"], "an alibi recipe needs heads"),
    (["generate", "--kind", "alibi", "--heads", "0"], "heads must be at least 1, got 0"),
    (["generate", "--kind", "learned", "--len", "4", "--dim", "4", "--std", "-1"], "std"),
    (["inspect", "fairseq:len=8,dim=8,grid=2x2"], "unknown parameter 'grid=2x2'"),
    (["presets", "nope"], "unknown preset 'nope'"),
    # look at it: heatmap, identify, analyze, plot
    (["inspect", "good.npy", "--heatmap", "--pos", "1"], "--heatmap draws the whole table"),
    (["identify", "nope.npy"], "nope.npy does not exist"),
    (["identify", "truncated.npy"], "truncated"),
    (["identify"], "give a SOURCE"),
    (["analyze", "good.npy", "--ks", "1,x"], "is not a list of whole numbers"),
    (["analyze", "magic.npy"], "is not a readable .npy table"),
    (["plot", "good.npy"], "Missing option '-o'"),
    (["plot", "good.npy", "-o", "existing.png"], "already exists"),
    (["plot", "good.npy", "-o", "pic.gif"], ".gif"),
    (["plot", "good.npy", "-o", "nodir/pic.png"], "nodir"),
    (["plot", "good.npy", "--what", "curves", "--dims", "0,99", "-o", "c.png"], "99"),
    (["plot", "good.npy", "--dims", "a,b", "-o", "c.png"], "is not a list of whole numbers like 0,32,64"),
    # the command line itself
    (["frobnicate"], "No such command 'frobnicate'"),
    (["generate", "--bogus"], "No such option '--bogus'"),
]


@pytest.mark.parametrize(("args", "message"), CASES, ids=[" ".join(a)[:60] for a, _ in CASES])
def test_bad_input(run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], message: str) -> None:
    monkeypatch.chdir(tmp_path)
    make_files(tmp_path)
    before = snapshot(tmp_path)
    r = run(*args)
    assert r.exit_code == 2, (r.exit_code, r.output)
    assert r.stdout == ""
    assert r.stderr.startswith("Error: ") and r.stderr.count("\n") == 1, r.stderr
    assert message in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    assert snapshot(tmp_path) == before


def test_matrix_is_big_enough() -> None:
    assert len(CASES) >= 60
    assert {a[0] for a, _ in CASES} >= {"generate", "export", "inspect", "diff"}


def test_disk_full_from_the_cli(run, tmp_path: Path) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    r = run("generate", "--len", "200000", "--dim", "64", "-o", "/dev/full", "--format", "npy")
    assert r.exit_code == 2
    assert r.stderr == "Error: no space left on device while writing /dev/full: free some space or write elsewhere\n"


def test_huge_recipe_inspect_skips_statistics(run) -> None:
    r = run("inspect", "--len", "1000000000000", "--dim", "8", "--json")
    assert r.exit_code == 0
    import json

    assert "statistics skipped" in json.loads(r.stdout)["stats"]["skipped"]
