"""No traceback, ever (issue 27): the operating system's failures, hostile names and inputs,
degenerate tables and signals each end in one ``Error:`` line (or the signal's status), and a
property test draws commands, options, inputs and standard streams and checks the contract on
every draw (:mod:`tests.helpers`).

Each case of the issue's list is here; every one of them ended in a traceback (or, for the
swallowed signal, a replaced file and exit 0) on the code before the fix.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import call, rows_to_interrupt, violations

ROOT = Path(__file__).resolve().parents[2]
PECLI = [sys.executable, "-m", "pecli"]


@pytest.fixture(autouse=True)
def _plain(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)


@pytest.fixture
def table(tmp_path: Path) -> Path:
    path = tmp_path / "t.npy"
    np.save(path, np.sin(np.arange(64 * 8, dtype=np.float64)).reshape(64, 8).astype(np.float32))
    return path


def one_error(run_stderr: str) -> str:
    lines = [line for line in run_stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), run_stderr
    assert "Traceback" not in run_stderr
    return lines[0]


# -- standard output that fails ----------------------------------------------------------------
FULL_STDOUT = [
    ["generate", "--len", "10", "--dim", "4"],
    ["inspect", "{t}"],
    ["inspect", "{t}", "--heatmap"],
    ["inspect", "{t}", "--json"],
    ["diff", "{t}", "{t}"],
    ["identify", "{t}"],
    ["analyze", "--len", "64", "--dim", "8"],
    ["presets"],
    ["--help"],
    ["generate", "--help"],
    *(["generate", "--len", "10", "--dim", "4", "-o", "-", "--to", f] for f in ("npy", "npz", "csv", "tsv", "json")),
    *(["generate", "--len", "10", "--dim", "4", "-o", "-", "--to", f] for f in ("safetensors", "h")),
]


@pytest.mark.parametrize("args", FULL_STDOUT, ids=lambda a: " ".join(a))
def test_a_full_disk_under_stdout_is_one_error_line(table: Path, args: list[str]) -> None:
    r = call([a.format(t=table) for a in args], stdout="full")
    assert r.escaped is None, r.escaped
    assert r.code == 2
    assert one_error(r.stderr) == (
        "Error: cannot write standard output: no space left on device (ENOSPC): free some space or send the output elsewhere"
    )


def test_pt_to_a_full_stdout(table: Path) -> None:
    pytest.importorskip("torch")
    r = call(["generate", "--len", "10", "--dim", "4", "-o", "-", "--to", "pt"], stdout="full")
    assert (r.escaped, r.code) == (None, 2)
    assert "no space left on device" in one_error(r.stderr)


def test_a_closed_stdout_is_an_error_only_where_it_is_written(tmp_path: Path) -> None:
    r = call(["generate", "--len", "10", "--dim", "4"], stdout="closed")
    assert (r.escaped, r.code) == (None, 2)
    assert one_error(r.stderr).startswith("Error: cannot write standard output: bad file descriptor (EBADF)")
    r = call(["generate", "--len", "10", "--dim", "4", "-o", str(tmp_path / "t.npy")], stdout="closed")
    assert (r.escaped, r.code, r.stderr) == (None, 0, "")
    assert np.load(tmp_path / "t.npy").shape == (10, 4)


def test_a_real_process_with_stdout_on_dev_full_and_closed() -> None:
    """The same, in a real process: Python's own flush at exit must not fail a second time."""
    for redirect in ("> /dev/full", ">&-"):
        cmd = f"{sys.executable} -m pecli generate --len 10 --dim 4 {redirect}"
        done = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=60)
        assert done.returncode == 2, done.stderr
        one_error(done.stderr)


# -- names the file system refuses -------------------------------------------------------------
def test_names_too_long_for_the_file_system(run, tmp_path: Path, table: Path) -> None:
    long = "a" * 300
    cases = [
        (["generate", "--len", "4", "--dim", "4", "-o", str(tmp_path / ("b" * 252 + ".npy"))], "names has 256 bytes"),
        (["generate", "--len", "4", "--dim", "4", "-o", str(tmp_path / ("b" * 253 + ".npy")), "--no-sidecar"], None),
        (["inspect", str(tmp_path / long)], "names has 300 bytes"),
        (["inspect", "/".join(["a"] * 2500)], "it has 4999 bytes, and a path may have at most 4096"),
        (["plot", str(table), "-o", str(tmp_path / (long + ".png"))], None),
        (["generate", "--hf-config", str(tmp_path / (long + ".json"))], None),
        (["generate", "--len", "4", "--dim", "4", "--positions", "@" + str(tmp_path / long)], None),
    ]
    for args, size in cases:
        r = call(args, folder=tmp_path)
        assert (r.escaped, r.code, r.changed) == (None, 2, []), (args, r.stderr)
        line = one_error(r.stderr)
        assert "file name too long (ENAMETOOLONG): use a shorter name (" in line, line
        if size:
            assert size in line, line


def test_a_name_whose_sidecar_would_be_too_long_is_refused_before_writing(tmp_path: Path) -> None:
    name = "b" * 251 + ".npy"  # 255 bytes: legal, but NAME.json is 260
    r = call(["generate", "--len", "4", "--dim", "4", "-o", str(tmp_path / name)], folder=tmp_path)
    assert (r.escaped, r.code, r.changed) == (None, 2, [])
    assert one_error(r.stderr) == (
        f"Error: the recipe's sidecar {name}.json would be a 260-byte name, and a file name may have at most 255: "
        "choose an output name of at most 250 bytes, or write with --no-sidecar (the file then carries no recipe)"
    )
    r = call(["generate", "--len", "4", "--dim", "4", "-o", str(tmp_path / name), "--no-sidecar"])
    assert (r.code, r.stderr) == (0, "")
    assert np.load(tmp_path / name).shape == (4, 4)


@pytest.mark.parametrize("size", [237, 245, 250, 255])
def test_legal_names_whose_temporary_would_be_too_long_are_written(tmp_path: Path, size: int) -> None:
    """The temporary ``.NAME.TOKEN.part`` is 19 bytes longer than NAME: it is shortened, the name is not."""
    name = "é" * ((size - 3) // 2) + "c" * ((size - 3) % 2) + ".h5"
    assert len(name.encode()) == size
    r = call(["generate", "--len", "4", "--dim", "4", "-o", str(tmp_path / name)])
    assert (r.escaped, r.code, r.stderr) == (None, 0, "")
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


# -- degenerate tables -------------------------------------------------------------------------
@pytest.mark.parametrize("fill", [np.nan, np.inf, -np.inf])
def test_analyze_of_a_table_that_is_not_numbers(tmp_path: Path, fill: float) -> None:
    path = tmp_path / "x.npy"
    np.save(path, np.full((50, 8), fill, np.float32))
    r = call(["analyze", str(path)])
    assert (r.escaped, r.code, r.stderr) == (None, 0, "")
    r = call(["analyze", str(path), "--json"])
    assert (r.escaped, r.code, r.stderr) == (None, 0, "")


def test_analyze_says_what_it_could_not_measure(run, tmp_path: Path) -> None:
    path = tmp_path / "x.npy"
    x = np.sin(np.arange(400.0)).reshape(50, 8)
    x[7, 3] = np.nan
    np.save(path, x)
    r = run("analyze", path)
    assert r.exit_code == 0
    assert "PE(p+k) is not measured: the rows hold NaN or Inf: no linear map can be fitted" in r.output
    doc = json.loads(run("analyze", path, "--json").output)
    assert doc["relative_residual"]["residual"] == [None] * 5
    assert doc["relative_residual"]["unfitted"] == "the rows hold NaN or Inf: no linear map can be fitted"


def test_analyze_of_zeros_claims_nothing(run, tmp_path: Path) -> None:
    """R_k·0 = 0 for any R_k: a zero table's residual is 0/0, not 0 ("the property holds" before)."""
    path = tmp_path / "z.npy"
    np.save(path, np.zeros((50, 8), np.float32))
    r = run("analyze", path)
    assert r.exit_code == 0
    assert "PE(p+k) is not measured: the rows are all zero: no linear map can be fitted" in r.output
    assert "holds" not in r.output


# -- memory estimates that missed --------------------------------------------------------------
def test_one_position_of_a_very_wide_table(run, tmp_path: Path) -> None:
    """2 × 5·10⁶: --pos listed every column (3.6 GB, 52 s); it asks for a window instead."""
    path = tmp_path / "wide.npy"
    np.save(path, np.zeros((2, 5_000_000), np.float32))
    r = run("inspect", path, "--pos", "1")
    assert r.exit_code == 2
    assert r.output.splitlines() == [
        "Error: position 1 has 5000000 columns, more than the 65536 --pos lists: "
        "pick some with --cols C:D (e.g. --cols 0:1024), or write the table with -o"
    ]
    r = run("inspect", path, "--pos", "1", "--cols", "4999998:5000000")
    assert r.exit_code == 0 and "4999999" in r.output
    doc = json.loads(run("inspect", path, "--json").output)  # every column's edge values took 1.9 GB
    assert (len(doc["window"]["columns"]), doc["window"]["columns_in_table"]) == (65536, 5_000_000)


@pytest.mark.parametrize("args", [["diff", "{x}", "{t}"], ["identify", "{x}"], ["diff", "{x}", "{x}"]])
def test_numpy_warnings_are_not_notes(tmp_path: Path, table: Path, args: list[str]) -> None:
    """ "All-NaN slice encountered" and its kind speak of NumPy's internals, not of the table."""
    x = tmp_path / "x.npy"
    np.save(x, np.full((64, 8), np.nan, np.float32))
    r = call([a.format(x=x, t=table) for a in args])
    assert r.escaped is None and r.code in (0, 1)
    assert "note:" not in r.stderr, r.stderr


def test_xpos_scales_that_overflow_are_refused(run) -> None:
    """float32 holds ζ_0^p up to e^88.7: scale_base 21 over 3000 rows reaches e^89.5 (written as inf before)."""
    r = run("generate", "--kind", "xpos", "--len", "3000", "--dim", "4", "--scale-base", "21")
    assert r.exit_code == 2
    assert "makes the scales overflow float32" in r.output and "--scale-base 22 or more" in r.output
    r = run("generate", "--kind", "xpos", "--len", "3000", "--dim", "4", "--scale-base", "22", "--json")
    assert r.exit_code == 0 or "no such option" in r.output.lower()


# -- tight address space -----------------------------------------------------------------------
@pytest.mark.slow  # writes a 1 GB table
def test_a_tight_address_space(tmp_path: Path) -> None:
    """``ulimit -v 400000``: the table streams to its file (numba is not loaded: under that limit
    its BLAS spins for ever), and a table too large to map is the memory's fault, not the file's."""
    out = tmp_path / "t.npy"
    limit = "ulimit -v 400000; "
    cmd = f"{limit}{sys.executable} -m pecli generate --len 1000000 --dim 128 --dtype float64 -o {out}"
    done = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=300)
    assert (done.returncode, done.stderr) == (0, "")
    assert out.stat().st_size == 1_000_000 * 128 * 8 + 128
    done = subprocess.run(
        ["bash", "-c", f"{limit}{sys.executable} -m pecli inspect {out} --json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode:
        assert one_error(done.stderr).startswith(f"Error: reading {out} needs more memory than this process may use")


# -- signals -----------------------------------------------------------------------------------
# h5py closes files in weakref callbacks; a signal handled inside one raises an exception that
# Python prints ("Exception ignored in …") and swallows, and the write went on to replace the file.
SIGNAL_IN_A_CALLBACK = """
import os, signal, sys, weakref
import pecli.formats as formats
from pecli.cli.app import main

signum = int(sys.argv[1])
write = formats.write_table

class Handle:
    pass

def write_table(*args, **kwargs):
    handle = Handle()
    weakref.finalize(handle, os.kill, os.getpid(), signum)  # the signal arrives inside a callback
    del handle
    return write(*args, **kwargs)

formats.write_table = write_table
sys.argv = ["pecli", *sys.argv[2:]]
main()
"""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_swallowed_by_a_library_callback_still_wins(tmp_path: Path, signum: int) -> None:
    out = tmp_path / "t.npy"
    out.write_bytes(b"previous")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [str(int(signum)), "generate", "--len", "10", "--dim", "4", "-o", str(out), "--force"]
    done = subprocess.run([sys.executable, "-c", SIGNAL_IN_A_CALLBACK, *argv], capture_output=True, text=True, env=env)
    assert done.returncode == 128 + signum, done.stderr
    assert out.read_bytes() == b"previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.npy"]
    assert "Exception ignored" not in done.stderr and "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1].startswith("Interrupted")


def test_a_swallowed_signal_stops_a_long_write_at_once(tmp_path: Path) -> None:
    """The write stops at the next block, not when the whole table is written (a 20-million-row
    CSV takes minutes): the test of issue 27's CI run that waited 60 s for a SIGINT."""
    out = tmp_path / "t.csv"
    out.write_text("keep me\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    rows = str(min(20_000_000, int(rows_to_interrupt(tmp_path, 64 * 16))))  # a CSV row is ~800 bytes
    argv = [str(int(signal.SIGINT)), "generate", "--len", rows, "--dim", "64", "-o", str(out), "--force"]
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", SIGNAL_IN_A_CALLBACK, *argv], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 130, done.stderr
    assert time.monotonic() - began < 30
    assert out.read_text() == "keep me\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv"]


def test_a_signal_during_torchs_import_waits_for_the_import_to_end() -> None:
    """``import torch`` runs Python from C++ (pybind11): the handler's exception raised there aborted
    the process (status −6, "terminate called after throwing an instance of
    'pybind11::error_already_set'": CI, SIGINT during a .pt write).  Inside :class:`Deferred` the
    handler records the signal, and the block's end raises it: exit 130, the write abandoned."""
    from pecli.cli.stops import Stop, on_signal
    from pecli.interruption import Deferred, abandoned, forget_abandoned

    forget_abandoned()
    reached_the_end = False
    try:
        with pytest.raises(Stop) as stop, Deferred():
            on_signal(signal.SIGINT, None)  # as if it arrived inside the import
            reached_the_end = True
        assert reached_the_end and stop.value.code == 130 and abandoned() is stop.value
    finally:
        forget_abandoned()


@pytest.mark.slow  # several large writes, each interrupted
@pytest.mark.parametrize("ext", [".h5", ".pt"])
def test_signals_while_writing_h5_and_pt(tmp_path: Path, ext: str) -> None:
    if ext == ".pt":
        pytest.importorskip("torch")
    out = tmp_path / f"t{ext}"
    subprocess.run([*PECLI, "generate", "--len", "8", "--dim", "4", "-o", str(out)], check=True)
    before = out.read_bytes()
    for i, signum in enumerate([signal.SIGINT, signal.SIGTERM, signal.SIGHUP] * 2):
        proc = subprocess.Popen(
            [*PECLI, "generate", "--len", "2000000", "--dim", "64", "-o", str(out), "--force"],
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 30
        while len(list(tmp_path.iterdir())) < 2 and time.monotonic() < deadline:  # its temporary exists
            time.sleep(0.01)
        time.sleep(0.1 * i)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=120)
        if proc.returncode == 0:  # it finished first: nothing tested this round
            subprocess.run([*PECLI, "generate", "--len", "8", "--dim", "4", "-o", str(out), "--force"], check=True)
            before = out.read_bytes()
            continue
        assert proc.returncode == 128 + signum, err
        assert out.read_bytes() == before
        assert "Traceback" not in err and "Exception ignored" not in err, err
        assert [p.name for p in tmp_path.iterdir() if p.suffix == ".part"] == []


# -- unbounded input ---------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["npy", "npz", "csv", "json", "safetensors"])
def test_an_endless_stream_of_zeros_is_refused_at_once(fmt: str) -> None:
    r = call(["inspect", "/dev/zero", "--from", fmt])
    assert (r.escaped, r.code) == (None, 2)
    assert one_error(r.stderr).startswith(f"Error: /dev/zero does not begin like {fmt} data")


def test_a_stream_longer_than_the_room_for_its_copy_stops(monkeypatch: pytest.MonkeyPatch) -> None:
    import pecli.streams as streams

    monkeypatch.setattr(streams, "_room", lambda folder: 1 << 20)
    text = b"a,b\n" + b"1,2\n" * 400_000  # 1.6 MB: as `yes 1,2 |` would be, cut
    r = call(["inspect", "-", "--from", "csv"], stdin=text)
    assert (r.escaped, r.code) == (None, 2)
    assert one_error(r.stderr).startswith("Error: standard input is longer than the 1 MB that may be copied to")


def test_one_fifo_named_twice_is_refused_without_waiting(tmp_path: Path, table: Path) -> None:
    """The second open() of a drained FIFO waits for a writer that never comes (the property
    test found `pecli diff FIFO FIFO` hanging): the stream is recognised before it is opened."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with _feeding(fifo, table.read_bytes()):
        r = call(["diff", str(fifo), str(fifo)])
    assert (r.escaped, r.code) == (None, 2)
    assert one_error(r.stderr) == (
        f"Error: {fifo} can be read only once: save it to a file first (e.g. cat > t.npy) and name the file twice"
    )


def test_a_config_that_is_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "config.json"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero")):
        r = call(["generate", "--hf-config", str(path)])
        assert (r.escaped, r.code) == (None, 2)
        assert (
            one_error(r.stderr)
            == f"Error: --hf-config {path}: {path} is not a regular file: give a model's config.json"
        )


LLAMA = {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 4096}


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"model_type": ["llama"]}, "model_type must be text"),
        ({"model_type": {"a": 1}}, "model_type must be text"),
        ({"rope_scaling": {"rope_type": [1], "factor": 2}}, "rope_type must be text"),
        ({"rope_scaling": {"type": {"a": 1}, "factor": 2}}, "type must be text"),
        (
            {
                "rope_scaling": {
                    "rope_type": "longrope",
                    "short_factor": ["a"],
                    "long_factor": [1.0],
                    "original_max_position_embeddings": 8192,
                }
            },
            "short_factor must be a list of numbers",
        ),
        # named by the config's key, not the recipe's parameter (issue 40)
        ({"rope_theta": 0}, "rope_theta must be a finite number > 0"),
        ({"rope_theta": [1, 2]}, "rope_theta must be a number"),
    ],
)
def test_malformed_config_values(tmp_path: Path, change: dict[str, object], says: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**LLAMA, **change}))
    r = call(["generate", "--hf-config", str(path), "--len", "8"])
    assert (r.escaped, r.code) == (None, 2)
    assert says in one_error(r.stderr)


def test_deeply_nested_positions(tmp_path: Path) -> None:
    path = tmp_path / "ids.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    r = call(["generate", "--len", "10", "--dim", "4", "--positions", f"@{path}"])
    assert (r.escaped, r.code) == (None, 2)
    assert "JSON nested too deeply" in one_error(r.stderr)


# -- the property: any command, any input, any stream --------------------------------------------
def _hostile_files(folder: Path) -> dict[str, str]:
    """Inputs a draw may name: good tables, degenerate ones, broken files, odd paths."""
    x = np.sin(np.arange(32 * 8, dtype=np.float64)).reshape(32, 8)
    files = {
        "good": x.astype(np.float32),
        "nan": np.full((32, 8), np.nan, np.float32),
        "inf": np.full((32, 8), np.inf, np.float64),
        "const": np.full((32, 8), 0.5, np.float32),
        "row": x[:1],
        "col": x[:, :1],
        "empty": np.zeros((0, 8), np.float32),
    }
    names: dict[str, str] = {}
    for key, arr in files.items():
        path = folder / f"{key}.npy"
        np.save(path, arr)
        names[key] = str(path)
    (folder / "bytes.npy").write_bytes(os.urandom(300))
    (folder / "cut.npy").write_bytes((folder / "good.npy").read_bytes()[:150])
    (folder / "text.csv").write_text("a,b\n1,x\n")
    (folder / "dir").mkdir()
    os.mkfifo(folder / "fifo")  # fed by a writer while a draw runs (see _feeding)
    readonly = folder / "ro"
    readonly.mkdir()
    readonly.chmod(0o500)
    names.update(
        bytes=str(folder / "bytes.npy"),
        cut=str(folder / "cut.npy"),
        text=str(folder / "text.csv"),
        dir=str(folder / "dir"),
        missing=str(folder / "missing.npy"),
        long=str(folder / ("n" * 300)),
        deep="/".join(["d"] * 2100),
        zero="/dev/zero",
        fifo=str(folder / "fifo"),
        null="/dev/null",
    )
    return names


OUTPUTS = [
    "new.npy",
    "new.csv",
    "new.h5",
    "new.safetensors",
    "new.json",
    "good.npy",
    "ro/x.npy",
    "dir",
    "-",
    "/dev/full",
]
OUTPUTS += ["nodir/x.npy", "o" * 252 + ".npy", "p" * 240 + ".h5", "bad.xyz"]

#: Output names of any length and characters (no "/" or NUL: one name in the folder), with a
#: table format's extension or none: newlines, escapes, leading dashes, 300-byte names.
NAMES = st.builds(
    lambda stem, ext: stem + ext,
    st.text(st.characters(blacklist_characters="/\x00", blacklist_categories=("Cs",)), min_size=1, max_size=140),
    st.sampled_from(["", ".npy", ".csv", ".h5", ".safetensors", ".json", ".h"]),
).filter(lambda name: name not in (".", "..", "fifo"))  # a FIFO output would wait for a reader, as in any shell


def _place(out: str, folder: Path) -> str:
    return out if out.startswith("/") or out == "-" else str(folder / out)


def _changes(out: str) -> set[str]:
    """What writing ``out`` may change in the folder: the file and its sidecar (a device or
    stdout: nothing there)."""
    return set() if out.startswith("/") or out == "-" else {out, out + ".json"}


@st.composite
def commands(draw: st.DrawFn, names: dict[str, str], folder: Path) -> tuple[list[str], set[str]]:
    """A command line and the paths (relative to ``folder``) it may change."""
    source = st.sampled_from(sorted(names)).map(names.__getitem__)
    recipe = st.lists(
        st.sampled_from(
            [
                ["--len", "16"],
                ["--len", "0"],
                ["--len", "-3"],
                ["--dim", "8"],
                ["--dim", "7"],
                ["--dim", "x"],
                ["--kind", "rope"],
                ["--kind", "alibi", "--heads", "4"],
                ["--kind", "xpos", "--scale-base", "1"],
                ["--base", "1e308"],
                ["--base", "nan"],
                ["--dtype", "float16"],
                ["--dtype", "bfloat16"],
                ["--positions", "@" + names["long"]],
                ["--positions", "@" + names["zero"]],
                ["--hf-config", names["zero"]],
                ["--hf-config", names["text"]],
                ["--preset", "vaswani"],
                ["--preset", "nope"],
            ]
        ),
        max_size=4,
    ).map(lambda parts: [a for p in parts for a in p])
    kind = draw(st.sampled_from(["generate", "inspect", "diff", "identify", "analyze", "export", "presets", "help"]))
    allowed: set[str] = set()
    if kind == "generate":
        args = ["generate", *draw(recipe)]
        if draw(st.booleans()):
            out = draw(st.one_of(st.sampled_from(OUTPUTS), NAMES))
            args += ["-o", _place(out, folder)]
            allowed |= _changes(out)
            if out == "-" or draw(st.booleans()):
                args += ["--to", draw(st.sampled_from(["npy", "csv", "json", "npz", "h", "safetensors", "h5", "nope"]))]
            if draw(st.booleans()):
                args.append("--force")
    elif kind == "inspect":
        args = ["inspect", draw(source)]
        args += draw(
            st.sampled_from([[], ["--json"], ["--heatmap"], ["--pos", "1"], ["--pos", "999"], ["--rows", "2:1"]])
        )
    elif kind == "diff":
        args = ["diff", draw(source), draw(source), *draw(st.sampled_from([[], ["--json"]]))]
    elif kind in ("identify", "analyze"):
        args = [kind, draw(source), *draw(st.sampled_from([[], ["--json"]]))]
    elif kind == "export":
        out = draw(st.one_of(st.sampled_from(OUTPUTS), NAMES))
        args = ["export", draw(source), "-o", _place(out, folder)]
        allowed |= _changes(out)
        if draw(st.booleans()):
            args.append("--force")
    elif kind == "presets":
        args = ["presets"]
    else:
        args = draw(st.sampled_from([["--help"], ["generate", "--help"], ["diff", "--help"], ["--version"], []]))
    if kind in ("generate", "inspect") and draw(st.booleans()):
        args.insert(0, "--no-color")
    return args, allowed


@contextlib.contextmanager
def _feeding(fifo: Path, data: bytes) -> Iterator[None]:
    """A writer on ``fifo`` while the block runs, as ``cmd > fifo`` would be: pecli may read it as
    a stream, or never open it (the writer is then released and the FIFO drained afterwards).

    The writer is another process: a thread's pending open() would take the lowest free
    descriptor, which is 1 while a draw runs with stdout closed."""
    writer = subprocess.Popen(
        [sys.executable, "-c", "import sys; open(sys.argv[1], 'wb').write(sys.stdin.buffer.read())", str(fifo)],
        stdin=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert writer.stdin is not None
    writer.stdin.write(data)
    writer.stdin.close()
    try:
        yield
    finally:
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # lets a still-waiting writer through
        try:
            deadline = time.monotonic() + 10
            while writer.poll() is None and time.monotonic() < deadline:
                try:
                    os.read(fd, 1 << 16)
                except BlockingIOError:
                    time.sleep(0.001)
        finally:
            os.close(fd)
        assert writer.wait(timeout=10) is not None, "the FIFO's writer is stuck"


def _property(folder: Path, draws: int) -> None:
    names = _hostile_files(folder)
    data = (folder / "good.npy").read_bytes()
    # The tables the draws read must not change: every draw is checked against this folder.
    failures: list[str] = []

    @settings(max_examples=draws, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(cmd=commands(names, folder), stdout=st.sampled_from(["file", "file", "full", "closed"]))
    def check(cmd: tuple[list[str], set[str]], stdout: str) -> None:
        args, allowed = cmd
        fifo = folder / "fifo"
        with _feeding(fifo, data) if str(fifo) in args else contextlib.nullcontext():
            r = call(args, stdout=stdout, folder=folder)
        broken = violations(r, allowed)
        if broken:
            failures.append(
                f"pecli {' '.join(a[:60] for a in args)} (stdout {stdout}): {broken}; stderr {r.stderr!r:.300}"
            )
        # Outputs a draw made are removed, so that the next draw finds the folder as it was.
        for rel in allowed - {"good.npy"}:
            try:
                (folder / rel).unlink()
            except OSError:  # never made, a directory, or a name too long to exist
                pass
        np.save(folder / "good.npy", np.sin(np.arange(32 * 8, dtype=np.float64)).reshape(32, 8).astype(np.float32))

    check()
    assert not failures, f"{len(failures)} of {draws} draws broke the contract:\n" + "\n".join(failures[:20])
    print(f"property over the CLI: {draws} draws, 0 violations")


def test_the_contract_holds_for_drawn_commands(tmp_path: Path) -> None:
    """A few seconds' worth in the quick suite; the slow run below draws 20,000."""
    _property(tmp_path, 40)


@pytest.mark.slow
def test_the_contract_holds_for_twenty_thousand_drawn_commands(tmp_path: Path) -> None:
    _property(tmp_path, int(os.environ.get("PECLI_CONTRACT_DRAWS", "20000")))


# -- honest messages ---------------------------------------------------------------------------
@pytest.mark.parametrize("code", ["F8_E4M3", "F8_E5M2"])
def test_valid_safetensors_of_8_bit_floats_are_named_not_malformed(run, tmp_path: Path, code: str) -> None:
    """The safetensors format lists F8_E4M3 and F8_E5M2 (1 byte each): "malformed entry" was wrong."""
    import struct

    header = json.dumps({"w": {"dtype": code, "shape": [4, 4], "data_offsets": [0, 16]}}).encode()
    path = tmp_path / "t.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header + bytes(16))
    r = run("inspect", path)
    assert r.exit_code == 2
    assert r.output.startswith(f"Error: {path}: tensor 'w' holds {code} values (8-bit floats): pecli reads")


def test_complex_safetensors_are_read_as_their_parts(run, tmp_path: Path) -> None:
    # A C64 tensor written by hand (the format's own bytes: real, imaginary float32 per number)
    # is read, not refused as malformed: its parts side by side, exactly.
    import struct

    values = np.array([[1 + 2j, -0.5 + 0.25j], [3 - 4j, 0 + 1j]], dtype=np.complex64)
    header = json.dumps({"w": {"dtype": "C64", "shape": [2, 2], "data_offsets": [0, 32]}}).encode()
    path = tmp_path / "t.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header + values.tobytes())
    r = run("inspect", path, "--json")
    assert r.exit_code == 0, r.output
    report = json.loads(r.output)
    assert report["dtype"] == "complex64"
    assert report["shape"] == [2, 4]
    assert report["window"]["values"] == [[1, 2, -0.5, 0.25], [3, -4, 0, 1]]


@pytest.mark.parametrize("name", ["-dash.npy", "new\nline.npy", "tab\tand 'quote'.npy"])
def test_the_check_command_runs_as_printed(run, tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """identify prints `check it with  pecli diff FILE SPEC`: pasted into bash it must be one
    command and exit 0 (a name starting with '-' was read as an option, a newline split it)."""
    monkeypatch.chdir(tmp_path)
    Path(name).write_bytes(b"")
    assert run("generate", "--len", "40", "--dim", "8", "-o", "./" + name, "--force", "--no-sidecar").exit_code == 0
    out = run("identify", "./" + name if name.startswith("-") else name).output
    line = next(line for line in out.splitlines() if line.startswith("check it with"))
    command = line.removeprefix("check it with").strip()
    assert "\n" not in command
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    script = f'pecli() {{ {sys.executable} -m pecli "$@"; }}; {command}'
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, (command, done.stdout, done.stderr)


def test_metadata_without_a_fingerprint_must_rebuild_the_data(run, tmp_path: Path) -> None:
    """A recipe stored without a fingerprint (by hand, by other code) was shown as "written by
    pecli" over any data; it is kept only where its own rows hash as the data's do."""
    import h5py

    from pecli.formats.metadata import META_KEY

    path = tmp_path / "t.h5"
    assert run("generate", "--len", "50", "--dim", "8", "-o", path).exit_code == 0
    with h5py.File(path, "r+") as f:
        (name,) = list(f)
        meta = json.loads(f[name].attrs[META_KEY])
        del meta["fingerprint"], f[name].attrs[META_KEY]
        f[name].attrs.create(META_KEY, np.bytes_(json.dumps(meta)))
    assert "written by    pecli" in run("inspect", path).output  # the data is what the recipe builds
    with h5py.File(path, "r+") as f:
        f[name][3, 3] = 0.5  # other data under the same metadata
    out = run("inspect", path).output
    assert "written by" not in out and "recipe        none stored" in out
    assert "(its recipe does not rebuild it): recipe ignored" in out


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"form": "pow", "compute": "exact"}, "form=pow is how a float pipeline rounds its frequencies"),
        ({"schema": 99}, "schema 99; this pecli reads schema"),
        ({"kind": "spiral"}, "kind 'spiral' is not one of this pecli's"),
    ],
)
def test_a_stored_recipe_this_pecli_cannot_rebuild_is_named_not_called_absent(
    run, tmp_path: Path, change: dict[str, object], why: str
) -> None:
    """A file whose stored recipe this pecli refuses (written by another version, or edited)
    was shown as "recipe none stored": inspect says it is stored and why it is ignored, and the
    table is still read as plain data."""
    path = tmp_path / "t.npy"
    assert run("generate", "--len", "16", "--dim", "8", "-o", path).exit_code == 0
    sidecar = tmp_path / "t.npy.json"
    meta = json.loads(sidecar.read_text())
    meta["recipe"].update(change)
    sidecar.write_text(json.dumps(meta))
    out = " ".join(run("inspect", path).output.split())
    assert f"recipe stored, not rebuilt by this pecli ({why}" in out and "): ignored" in out, out
    assert "none stored" not in out and "written by" not in out and "Traceback" not in out
    assert "MATCH" in run("identify", path).output
