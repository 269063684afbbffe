"""Small hostile cases: durable writes, 0-row tables, zip streams on devices, unsupported float
widths, torch's own warnings, oversized safetensors headers, recipe operands next to files named
like a kind, and integers too long for Python to parse.

Refused cases follow tests/cli/test_bad_input.py: exit 2, nothing on stdout, one ``Error:`` line, no
traceback, the directory byte for byte as it was."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import stat
import struct
import threading
from collections.abc import Callable
from pathlib import Path

import h5py
import numpy as np
import pytest
from click.testing import CliRunner, Result

from pecli.cli import cli


@pytest.fixture
def run() -> Callable[..., Result]:
    runner = CliRunner()

    def invoke(*args: str | Path) -> Result:
        return runner.invoke(cli, [str(a) for a in args], env={"COLUMNS": "80", "NO_COLOR": "1", "TERM": "dumb"})

    return invoke


def snapshot(d: Path) -> dict[str, str]:
    return {
        str(p.relative_to(d)): ("dir" if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest())
        for p in sorted(d.rglob("*"))
    }


def refused(run: Callable[..., Result], d: Path, *args: str, message: str) -> str:
    before = snapshot(d)
    r = run(*args)
    assert r.exit_code == 2, (r.exit_code, r.output)
    assert r.stdout == ""
    assert r.stderr.startswith("Error: ") and r.stderr.count("\n") == 1, r.stderr
    assert "Traceback" not in r.stderr
    assert message in r.stderr, r.stderr
    assert snapshot(d) == before
    return r.stderr


def safetensors_bytes(header: bytes, data: bytes = b"") -> bytes:
    return struct.pack("<Q", len(header)) + header + data


# ------------------------------------------------------------------------ 1. durable writes
@pytest.fixture
def fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int, bool]]:
    """Every os.fsync call, as the (device, inode, is-a-directory) of what it synced."""
    calls: list[tuple[int, int, bool]] = []

    def record(fd: int) -> None:
        st = os.fstat(fd)
        calls.append((st.st_dev, st.st_ino, stat.S_ISDIR(st.st_mode)))

    monkeypatch.setattr(os, "fsync", record)
    monkeypatch.delenv("PECLI_NO_FSYNC", raising=False)
    return calls


def identity(p: Path) -> tuple[int, int, bool]:
    st = p.stat()
    return st.st_dev, st.st_ino, stat.S_ISDIR(st.st_mode)


def test_outputs_and_their_directory_are_fsynced(run, tmp_path: Path, monkeypatch, fsyncs) -> None:
    monkeypatch.chdir(tmp_path)
    r = run("generate", "--len", "16", "--dim", "4", "-o", "t.npy", "-q")
    assert r.exit_code == 0, r.output
    table, sidecar = identity(tmp_path / "t.npy"), identity(tmp_path / "t.npy.json")
    # The renamed files keep their inodes: both temporaries were synced before their rename,
    # and the directory after (the sync of the directory comes last).
    assert table in fsyncs and sidecar in fsyncs
    assert fsyncs[-1] == identity(tmp_path)
    assert fsyncs.index(table) < fsyncs.index(identity(tmp_path))


def test_every_format_is_fsynced(run, tmp_path: Path, monkeypatch, fsyncs) -> None:
    monkeypatch.chdir(tmp_path)
    for ext in ("npz", "h5", "safetensors", "csv", "json", "h"):
        fsyncs.clear()
        r = run("generate", "--len", "8", "--dim", "4", "-o", f"t.{ext}", "-q")
        assert r.exit_code == 0, r.output
        assert identity(tmp_path / f"t.{ext}") in fsyncs, ext
        assert fsyncs[-1] == identity(tmp_path), ext


def test_pecli_no_fsync_skips_the_syncs(run, tmp_path: Path, monkeypatch, fsyncs) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PECLI_NO_FSYNC", "1")
    r = run("generate", "--len", "16", "--dim", "4", "-o", "t.npy", "-q")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "t.npy").exists() and fsyncs == []


@pytest.mark.skipif(not Path("/dev/null").exists(), reason="no /dev/null here")
def test_devices_are_written_in_place_and_not_synced(run, fsyncs) -> None:
    r = run("generate", "--len", "16", "--dim", "4", "-o", "/dev/null", "--to", "npy")
    assert r.exit_code == 0, r.output
    assert fsyncs == []


# ------------------------------------------------------------------------ 2. 0-row tables
@pytest.fixture
def empty_tables(tmp_path: Path) -> Path:
    empty = np.zeros((0, 8), np.float32)
    np.save(tmp_path / "z.npy", empty)
    np.savez(tmp_path / "z.npz", pe=empty)
    with h5py.File(tmp_path / "z.h5", "w") as f:
        f["pe"] = empty
    header = b'{"pe": {"dtype": "F32", "shape": [0, 8], "data_offsets": [0, 0]}}'
    (tmp_path / "z.safetensors").write_bytes(safetensors_bytes(header))
    return tmp_path


EMPTY = ["z.npy", "z.npz", "z.h5", "z.safetensors"]


@pytest.mark.parametrize("name", EMPTY)
def test_inspect_json_of_a_table_with_no_rows(run, empty_tables: Path, monkeypatch, name: str) -> None:
    monkeypatch.chdir(empty_tables)
    r = run("inspect", name, "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["shape"] == [0, 8]
    assert out["stats"]["skipped"] == "no statistics: the table has no rows"
    assert out["window"]["positions"] == [] and out["window"]["values"] == []


@pytest.mark.parametrize("name", EMPTY)
def test_inspect_of_a_table_with_no_rows(run, empty_tables: Path, monkeypatch, name: str) -> None:
    monkeypatch.chdir(empty_tables)
    r = run("inspect", name)
    assert r.exit_code == 0, r.output
    assert "the table has no rows" in r.stdout


@pytest.mark.parametrize("name", EMPTY)
def test_heatmap_of_a_table_with_no_rows(run, empty_tables: Path, monkeypatch, name: str) -> None:
    monkeypatch.chdir(empty_tables)
    r = run("inspect", name, "--heatmap")
    assert r.exit_code == 0, r.output
    assert "no rows" in r.stdout


# ------------------------------------------------------------------------ 3. npz on a device
@pytest.mark.skipif(not Path("/dev/null").exists(), reason="no /dev/null here")
def test_npz_to_dev_null(run) -> None:
    r = run("export", "--len", "4", "--dim", "2", "-o", "/dev/null", "--to", "npz")
    assert (r.exit_code, r.output) == (0, "")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_npz_through_a_fifo_is_a_valid_archive(run, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    r = run("export", "--len", "4", "--dim", "2", "-o", fifo, "--to", "npz")
    reader.join(30)
    assert r.exit_code == 0, r.output
    (tmp_path / "got.npz").write_bytes(received[0])
    with np.load(tmp_path / "got.npz") as z:
        assert z["pe"].shape == (4, 2)


# ------------------------------------------------------------------------ 4. float128
@pytest.mark.skipif(np.dtype(np.longdouble).itemsize <= 8, reason="longdouble is float64 here")
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["inspect", "ld.npy"], "ld.npy holds float128 values: pecli reads float16, bfloat16, float32 and float64"),
        (["inspect", "ld.npz"], "ld.npz:pe holds float128 values: pecli reads float16, bfloat16, float32 and float64"),
        (["export", "ld.npy", "-o", "out.safetensors"], "pecli reads float16, bfloat16, float32 and float64 tables"),
        (["diff", "ld.npy", "ld.npy"], "holds float128 values"),
    ],
)
def test_longdouble_is_refused_on_read(run, tmp_path: Path, monkeypatch, args: list[str], message: str) -> None:
    monkeypatch.chdir(tmp_path)
    data = np.zeros((4, 2), np.longdouble)
    np.save("ld.npy", data)
    np.savez("ld.npz", pe=data)
    refused(run, tmp_path, *args, message=message)


# ------------------------------------------------------------------------ 5. torch's warnings
def test_torch_warnings_do_not_precede_the_error(run, tmp_path: Path, monkeypatch) -> None:
    pytest.importorskip("torch")
    monkeypatch.chdir(tmp_path)
    # Protocol 4 makes torch warn ("Detected pickle protocol 4") before it refuses the ndarray.
    (tmp_path / "bad.pt").write_bytes(pickle.dumps(np.zeros(3), protocol=4))
    refused(run, tmp_path, "inspect", "bad.pt", message="bad.pt is not a .pt file pecli can load safely")


# ------------------------------------------------------------------------ 6. safetensors header sizes
def test_safetensors_header_over_100_mb(run, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    with open("big.safetensors", "wb") as fp:  # sparse: 200 MB declared and present
        fp.write(struct.pack("<Q", 200_000_000))
        fp.truncate(8 + 200_000_000)
    refused(
        run,
        tmp_path,
        "inspect",
        "big.safetensors",
        message="header of 200000000 bytes is larger than the 100 MB pecli accepts",
    )


@pytest.mark.parametrize("declared", [5000, 200_000_000, 2**64 - 1])
def test_safetensors_header_longer_than_the_file(run, tmp_path: Path, monkeypatch, declared: int) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "short.safetensors").write_bytes(struct.pack("<Q", declared) + b"{}")
    err = refused(run, tmp_path, "inspect", "short.safetensors", message="declares a header longer than the file")
    assert "100 MB" not in err


def test_safetensors_header_with_a_5000_digit_integer(run, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    header = b'{"pe": {"dtype": "F32", "shape": [' + b"1" * 5000 + b', 2], "data_offsets": [0, 0]}}'
    (tmp_path / "int.safetensors").write_bytes(safetensors_bytes(header))
    err = refused(run, tmp_path, "inspect", "int.safetensors", message="holds an integer too large to read")
    assert "set_int_max_str_digits" not in err


# ------------------------------------------------------------------------ 7. recipe or file
@pytest.mark.parametrize("what", ["file", "directory"])
@pytest.mark.parametrize("spec", ["rope:len=8,dim=8", "sinusoidal:len=8,dim=8", "fairseq:len=8,dim=8"])
def test_a_recipe_stays_a_recipe_next_to_a_file_named_like_its_kind(
    run, tmp_path: Path, monkeypatch, spec: str, what: str
) -> None:
    monkeypatch.chdir(tmp_path)
    name = spec.partition(":")[0]
    if what == "file":
        np.save(tmp_path / "t.npy", np.zeros((2, 2), np.float32))
        (tmp_path / "t.npy").rename(tmp_path / name)
    else:
        (tmp_path / name).mkdir()
    r = run("inspect", spec, "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)  # (fairseq's table has two padding rows more)
    assert out["recipe"]["kind"] in ("rope", "sinusoidal") and out["shape"][1] == 8


def test_dot_slash_makes_it_a_file_with_a_key(run, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    np.save(tmp_path / "t.npy", np.zeros((2, 2), np.float32))
    (tmp_path / "t.npy").rename(tmp_path / "rope")
    refused(run, tmp_path, "inspect", "--from", "npy", "./rope:len=8", message="drop ':len=8'")
    r = run("inspect", "--from", "npy", "./rope", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["shape"] == [2, 2]


def test_a_bad_recipe_next_to_a_file_says_how_to_read_the_file(run, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rope").write_bytes(b"x")
    refused(run, tmp_path, "inspect", "rope:pe", message="(to read the file rope here instead, write ./rope:pe)")


def test_is_recipe_spec_rules(tmp_path: Path, monkeypatch) -> None:
    from pecli.sources import is_recipe_spec

    monkeypatch.chdir(tmp_path)
    (tmp_path / "rope").mkdir()
    (tmp_path / "spiral").write_bytes(b"")
    assert is_recipe_spec("rope:len=8,dim=8") and is_recipe_spec("fairseq:") and is_recipe_spec("alibi:heads=8")
    assert not is_recipe_spec("./rope:len=8") and not is_recipe_spec("/tmp/rope:len=8")
    assert not is_recipe_spec("sub/rope:len=8") and not is_recipe_spec("rope")
    assert is_recipe_spec("galaxy:len=8")  # an unknown kind: told which kinds exist
    assert not is_recipe_spec("spiral:len=8")  # ... unless a file by that name claims it
    assert not is_recipe_spec("model.h5:layer/w")


# ------------------------------------------------------------------------ 8. 5000-digit integers
def test_json_table_with_a_5000_digit_integer(run, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "big.json").write_text('{"data": [[' + "1" * 5000 + ", 2]]}")
    err = refused(run, tmp_path, "inspect", "big.json", message="too large")
    assert "set_int_max_str_digits" not in err and "5000 digits" in err
