"""``-`` as a SOURCE: standard input through real pipes and redirects (subprocesses), then the
command line through CliRunner and the stream rules of ``pecli.streams`` in-process."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from pecli import FormatError, Sinusoidal, open_table, write_table
from pecli.formats import FORMATS, list_arrays, sniff_format, streamable
from pecli.sources import open_source
from pecli.table import Table
from tests.helpers import READ_ONLY_WRITERS

PECLI = [sys.executable, "-m", "pecli"]
RECIPE = Sinusoidal(length=50, dim=8)
UNKNOWN = (
    "cannot tell the format of standard input from its first bytes: pipe in npy, npz, csv, tsv, json, safetensors "
    "or gguf data"
)


def bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).tobytes()


def table_bytes(fmt: str) -> bytes:
    buf = io.BytesIO()
    write_table(Table.from_recipe(RECIPE), buf, fmt)
    return buf.getvalue()


# -- real processes: pipes and redirects -------------------------------------------------------------
@pytest.fixture
def tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``t.FMT`` for every streamable format and HDF5, written by pecli; an empty TMPDIR beside them."""
    monkeypatch.setenv("PECLI_NO_FSYNC", "1")
    for name in (*streamable(), "h5"):
        path = tmp_path / f"t{FORMATS[name].extensions[0]}"
        if FORMATS[name].write is None:
            READ_ONLY_WRITERS[name](path, RECIPE.build())  # a format pecli only reads: its own library's writer
        else:
            write_table(Table.from_recipe(RECIPE), path)
    (tmp_path / "tmp").mkdir()
    return tmp_path


def pecli(cwd: Path, *args: str, redirect: Path | None = None, pipe: bytes | None = None) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of pecli run with stdin redirected from a file or fed through a pipe."""
    env = {**os.environ, "TMPDIR": str(cwd / "tmp"), "PECLI_NO_FSYNC": "1", "NO_COLOR": "1", "COLUMNS": "80"}
    with open(redirect, "rb") if redirect is not None else open(os.devnull, "rb") as fp:
        r = subprocess.run(
            [*PECLI, *args],
            cwd=cwd,
            env=env,
            stdin=fp if pipe is None else None,
            input=pipe,
            capture_output=True,
            timeout=60,
            check=False,
        )
    return r.returncode, r.stdout.decode(), r.stderr.decode()


def assert_refused(result: tuple[int, str, str], cwd: Path, message: str) -> None:
    code, out, err = result
    assert (code, err) == (2, f"Error: {message}\n")
    assert "Traceback" not in out + err
    assert not list((cwd / "tmp").iterdir()), "the copy of standard input was left behind"
    assert not (cwd / "out.npy").exists()


@pytest.mark.parametrize("name", streamable())
def test_every_streamable_format_round_trips_through_a_pipe(tables: Path, name: str) -> None:
    f = FORMATS[name]
    code, _, err = pecli(tables, "export", "-", "-o", "out.npy", pipe=(tables / f"t{f.extensions[0]}").read_bytes())
    assert (code, err) == (0, "")
    out = np.load(tables / "out.npy")
    assert out.dtype == np.float32 and bits(out) == bits(RECIPE.build())
    # The recipe travels inside npz, safetensors and json; a .npy, .csv or .tsv keeps it in a
    # sidecar, which standard input does not have.
    assert (tables / "out.npy.json").exists() == (f.metadata == "inline")
    assert not list((tables / "tmp").iterdir())


def test_inspect_reads_a_redirected_file(tables: Path) -> None:
    code, out, err = pecli(tables, "inspect", "-", redirect=tables / "t.json")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].split() == ["source", "-"]
    assert any(line.endswith("  standard input (through a temporary copy)") for line in lines)
    assert any(line.startswith("recipe") and "sinusoidal length=50 dim=8" in line for line in lines)


def test_diff_stdin_against_a_file(tables: Path) -> None:
    code, out, err = pecli(tables, "diff", "-", "t.npy", pipe=(tables / "t.safetensors").read_bytes())
    assert (code, err) == (0, "")
    assert out.startswith("SAME")


def test_identify_stdin(tables: Path) -> None:
    code, out, err = pecli(tables, "identify", "-", pipe=(tables / "t.npz").read_bytes())
    assert (code, err) == (0, "")
    assert "MATCH" in out


def test_hdf5_on_stdin_is_refused(tables: Path) -> None:
    result = pecli(tables, "export", "-", "-o", "out.npy", redirect=tables / "t.h5")
    assert_refused(
        result,
        tables,
        "HDF5 needs a seekable file: save standard input to a file first, e.g. cat > t.h5, and read t.h5",
    )


def test_empty_stdin_is_refused(tables: Path) -> None:
    assert_refused(pecli(tables, "export", "-", "-o", "out.npy", pipe=b""), tables, "standard input is empty")


def test_stdin_twice_is_refused(tables: Path) -> None:
    result = pecli(tables, "diff", "-", "-", redirect=tables / "t.npy")
    message = "standard input can be read only once: save it to a file first (e.g. cat > t.npy) and name the file twice"
    assert_refused(result, tables, message)


def test_unknown_bytes_are_refused(tables: Path) -> None:
    assert_refused(pecli(tables, "export", "-", "-o", "out.npy", pipe=bytes(range(256))), tables, UNKNOWN)


# -- in-process --------------------------------------------------------------------------------------
@pytest.fixture
def feed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Callable[[bytes], None]]:
    """``feed(data)`` puts ``data`` on standard input; copies go to ``tmp_path/tmp``, empty afterwards."""
    spool = tmp_path / "tmp"
    spool.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spool))

    def put(data: bytes) -> None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))

    yield put
    assert not list(spool.iterdir()), "the copy of standard input was left behind"


def test_key_of_stdin_after_double_dash(run, feed, tmp_path: Path) -> None:
    a, b = np.zeros((3, 2), np.float32), np.arange(6, dtype=np.float64).reshape(3, 2)
    buf = io.BytesIO()
    np.savez(buf, a=a, b=b)
    r = run("export", "-o", tmp_path / "out.npy", "--", "-:b", input=buf.getvalue())
    assert (r.exit_code, r.stderr) == (0, "")
    assert bits(np.load(tmp_path / "out.npy")) == bits(b)


@pytest.mark.parametrize("where", ["first", "last"])
def test_key_of_stdin_is_an_operand_not_an_option(run, tmp_path: Path, where: str) -> None:
    """`-:KEY` needs no `--`: Click would read it as an unknown option; the operands keep their order."""
    b = np.arange(6, dtype=np.float64).reshape(3, 2)
    buf = io.BytesIO()
    np.savez(buf, a=np.zeros((3, 2), np.float32), b=b)
    np.save(tmp_path / "ref.npy", b + 1)
    args = ["-:b", str(tmp_path / "ref.npy")] if where == "first" else [str(tmp_path / "ref.npy"), "-:b"]
    r = run("diff", *args, "-n", "1", input=buf.getvalue())
    assert r.exit_code == 1 and r.stdout.startswith("DIFFERENT: 6 of 6"), r.output
    a_line = next(line for line in r.stdout.splitlines() if line.startswith("A "))
    assert a_line.startswith("A -:b" if where == "first" else f"A {tmp_path / 'ref.npy'}")
    r = run("export", "-:b", "-o", tmp_path / "out.npy", input=buf.getvalue())
    assert (r.exit_code, r.stderr) == (0, "")
    assert bits(np.load(tmp_path / "out.npy")) == bits(b)


def test_key_names_a_tensor_and_inline_metadata_is_read(feed) -> None:
    feed(table_bytes("safetensors"))
    with open_source("-:pe") as t:
        assert (t.source, t.recipe) == ("-:pe", RECIPE)
        assert bits(t.rows(0, 50)) == bits(RECIPE.build())


def test_messages_name_standard_input_not_the_copy(feed) -> None:
    buf = io.BytesIO()
    np.savez(buf, a=np.zeros((3, 2)), b=np.ones((3, 2)))
    feed(buf.getvalue())
    with pytest.raises(FormatError, match=r"^standard input holds several arrays \(a, b\): choose one as -:KEY$"):
        with open_source("-"):
            pass


def test_the_copy_goes_when_the_block_is_interrupted(feed, tmp_path: Path) -> None:
    feed(b"d0,d1\n0.5,1\n")
    with pytest.raises(KeyboardInterrupt):
        with open_source("-") as t:
            assert t.shape == (1, 2) and list((tmp_path / "tmp").iterdir())
            raise KeyboardInterrupt


def test_a_format_asked_for_is_refused_before_stdin_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    class Unread(io.RawIOBase):
        def readable(self) -> bool:
            return True

        def readinto(self, b: object) -> int:
            raise AssertionError("standard input was read")

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(Unread())))
    with pytest.raises(FormatError, match=r"^PyTorch \.pt needs a seekable file: .* cat > t\.pt, and read t\.pt$"):
        with open_source("-", "pt"):
            pass


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="no pseudo-terminals")
def test_a_terminal_is_refused(feed, monkeypatch: pytest.MonkeyPatch) -> None:
    controller, terminal = os.openpty()
    try:
        with open(terminal, "rb", closefd=False) as fp:
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(fp))
            message = "^standard input is a terminal: pipe a table in, e.g. pecli inspect - < pe.npy$"
            with pytest.raises(FormatError, match=message), open_source("-"):
                pass
        if Path("/dev/fd").is_dir():
            with (
                pytest.raises(FormatError, match=f"^/dev/fd/{terminal} is a terminal"),
                open_source(f"/dev/fd/{terminal}"),
            ):
                pass
    finally:
        os.close(controller)
        os.close(terminal)


@pytest.mark.skipif(not Path("/dev/fd").is_dir(), reason="no /dev/fd here")
def test_a_pipe_named_by_path_is_a_stream_not_an_empty_file(feed) -> None:
    r, w = os.pipe()
    data = table_bytes("tsv")
    writer = threading.Thread(target=lambda: (os.write(w, data), os.close(w)), daemon=True)
    writer.start()
    try:
        with open_source(f"/dev/fd/{r}") as t:
            assert t.source == f"/dev/fd/{r}"
            assert bits(t.rows(0, 50)) == bits(RECIPE.build())
    finally:
        writer.join(timeout=10)
        os.close(r)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_read_as_a_stream_and_not_listed(feed, tmp_path: Path) -> None:
    fifo = tmp_path / "pe.fifo"
    os.mkfifo(fifo)
    assert list_arrays(fifo) is None  # listing would drain it: it is not even opened
    writer = threading.Thread(target=fifo.write_bytes, args=(table_bytes("npz"),), daemon=True)
    writer.start()
    try:
        with open_table(f"{fifo}") as t:
            assert (t.source, t.recipe) == (f"{fifo}:pe", RECIPE)
            assert bits(t.rows(0, 50)) == bits(RECIPE.build())
    finally:
        writer.join(timeout=10)


@pytest.mark.parametrize("name", [*streamable(), "h5"])
def test_each_format_is_told_by_its_first_bytes(tmp_path: Path, name: str) -> None:
    path = tmp_path / f"t{FORMATS[name].extensions[0]}"
    if FORMATS[name].write is None:
        READ_ONLY_WRITERS[name](path, RECIPE.build())
    else:
        write_table(Table.from_recipe(RECIPE), path)
    assert sniff_format(path.read_bytes()[: 1 << 16]) == name


@pytest.mark.parametrize(
    ("head", "name"),
    [
        (b"  \n\t[[0.5, 1.0]]", "json"),
        (b"0.5\t1\n", "tsv"),
        (b"d0,d1\n0.5,1\n", "csv"),
        (b"d0,d1\n\xc3\xa9\xc3", "csv"),  # a character cut at the end of the head: still text
        (b"PK\x03\x04" + bytes(22) + b"\x10\x00\x00\x00archive/data.pkl", "pt"),  # torch.save's zip
        (b"\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8", "pt"),  # the legacy torch.save format: a pickle
        (b"\xff\xfe\x00", None),
        (b"d0,d1\x00", None),
    ],
)
def test_sniffing(head: bytes, name: str | None) -> None:
    assert sniff_format(head) == name
