"""The command line against a hostile environment: closed pipes, control characters in names
read from files, C keywords as array names, dangling symlinks, an ASCII-only terminal."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

from pecli import Sinusoidal
from pecli.formats.cheader import MATH_NAMES, RESERVED_WORDS
from pecli.views.console import visible

PECLI = [sys.executable, "-m", "pecli"]
#: What must never reach a terminal from a file: C0 controls but the newline, DEL, C1 controls.
CONTROLS = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def one_error_line(r) -> str:
    assert r.exit_code == 2, (r.exit_code, r.output)
    assert r.stdout == ""
    assert r.stderr.startswith("Error: ") and r.stderr.count("\n") == 1, r.stderr
    assert "Traceback" not in r.stderr
    return r.stderr


# ------------------------------------------------------------------------- 1. closed pipes
@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("pipes")
    table = Sinusoidal(2000, 64).build()
    np.save(d / "a.npy", table)
    with h5py.File(d / "multi.h5", "w") as f:
        f["a"] = table[:16]
        f["b"] = table[:16]
    return d


PIPED = [
    ["diff", "a.npy", "a.npy"],
    ["diff", "a.npy", "sinusoidal:len=2000,dim=64,base=500"],  # exit 1 when the pipe stays open
    ["generate", "--len", "2000", "--dim", "64", "--rows", "0:2000"],
    ["generate", "--len", "3", "--dim", "4"],
    ["presets"],
    ["presets", "fairseq"],
    ["identify", "a.npy"],
    ["inspect", "a.npy"],
    ["inspect", "a.npy", "--pos", "3"],
    ["inspect", "a.npy", "--json"],
    ["inspect", "multi.h5"],
    ["inspect", "--len", "64", "--dim", "16", "--heatmap"],
    ["analyze", "--len", "64", "--dim", "16"],
    ["--help"],
    ["--version"],
    ["generate", "--help"],
]


@pytest.mark.slow  # a subprocess per command; test_process.py closes one pipe by default
@pytest.mark.parametrize("args", PIPED, ids=[" ".join(a) for a in PIPED])
def test_closed_pipe_exits_141_silently(files: Path, args: list[str]) -> None:
    """The reader is gone before pecli writes a byte (deterministic, unlike `| head`)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        r = subprocess.run([*PECLI, *args], stdout=write_end, stderr=subprocess.PIPE, cwd=files, timeout=120)
    finally:
        os.close(write_end)
    assert (r.returncode, r.stderr.decode()) == (141, "")


@pytest.mark.parametrize(
    ("command", "first"),
    [
        # 2000 lines of 80 columns: more than a pipe buffer holds, so the pipe closes mid-table.
        ("generate --len 2000 --dim 64 --rows 0:2000", "sinusoidal (2000, 64) float32"),
        ("inspect --len 2000 --dim 64 --rows 0:2000", "source "),
    ],
)
def test_head_on_a_terminal_view(command: str, first: str) -> None:
    cmd = f"{sys.executable} -m pecli {command} | head -1"
    r = subprocess.run(["bash", "-c", f"set -o pipefail; {cmd}"], capture_output=True, text=True, check=False)
    assert r.stdout.startswith(first)
    assert r.stdout.count("\n") == 1
    assert (r.returncode, r.stderr) == (141, "")


# ----------------------------------------------------------- 2. control characters from files
OSC = "pe\x1b]0;pwned\x07"
RED = "\x1b[31mred"


def assert_inert(text: str) -> None:
    assert not CONTROLS.search(text), repr(text)


def test_visible_escapes_c0_del_c1() -> None:
    assert visible(OSC) == "pe\\x1b]0;pwned\\x07"
    assert visible("a\nb\tc\rd\x00\x7f\x9b\x85") == "a\\nb\\tc\\rd\\x00\\x7f\\x9b\\x85"
    assert visible("plain ≠ ümlaut […] \\x") == "plain ≠ ümlaut […] \\x"


def test_dataset_names_are_escaped_in_listings_and_errors(run, tmp_path: Path) -> None:
    table = Sinusoidal(16, 4).build()
    with h5py.File(tmp_path / "evil.h5", "w") as f:
        f[OSC] = table
        f[RED] = table
    r = run("inspect", tmp_path / "evil.h5")
    assert r.exit_code == 0, r.output
    assert_inert(r.stdout)
    keys = [line.split("  ")[0] for line in r.stdout.splitlines()[3:]]
    assert keys == ["\\x1b[31mred", "pe\\x1b]0;pwned\\x07"]
    r = run("inspect", f"{tmp_path / 'evil.h5'}:nope")
    assert "its datasets are \\x1b[31mred, pe\\x1b]0;pwned\\x07" in one_error_line(r)
    assert_inert(r.stderr)
    r = run("inspect", f"{tmp_path / 'evil.h5'}:nope", "--json")
    assert_inert(one_error_line(r))


def test_single_dataset_header_is_escaped(run, tmp_path: Path) -> None:
    with h5py.File(tmp_path / "one.h5", "w") as f:
        f[RED] = Sinusoidal(16, 4).build()
    r = run("inspect", tmp_path / "one.h5")
    assert r.exit_code == 0, r.output
    assert_inert(r.stdout)
    assert "/\\x1b[31mred" in r.stdout


def test_npz_keys_are_escaped(run, tmp_path: Path) -> None:
    np.savez(tmp_path / "z.npz", **{"q\x9bc": np.zeros((2, 2)), "a[/b]": np.zeros((2, 2))})
    r = run("inspect", tmp_path / "z.npz")
    assert r.exit_code == 0, r.output
    assert_inert(r.stdout)
    assert "q\\x9bc" in r.stdout and "a[/b]" in r.stdout


@pytest.mark.parametrize("command", ["inspect", "identify", "diff", "heatmap", "analyze", "pos"])
def test_file_names_are_escaped_and_not_markup(run, tmp_path: Path, command: str) -> None:
    name = "e\x1b[2J[bold]x\x9b.npy"
    path = tmp_path / name
    np.save(path, Sinusoidal(16, 4).build())
    args = {
        "inspect": ["inspect", path],
        "identify": ["identify", path],
        "diff": ["diff", path, path],
        "heatmap": ["inspect", path, "--heatmap"],
        "analyze": ["analyze", path],
        "pos": ["inspect", path, "--pos", "1"],
    }[command]
    r = run(*args)
    assert r.exit_code == 0, r.output
    assert_inert(r.stdout + r.stderr)
    assert "e\\x1b[2J[bold]x\\x9b.npy" in r.stdout  # markup-looking text printed as it is


def test_newline_in_a_path_keeps_the_error_on_one_line(run, tmp_path: Path) -> None:
    r = run("inspect", tmp_path / "a\nb\x1b.npy")
    assert "a\\nb\\x1b.npy does not exist" in one_error_line(r)
    r = run("generate", "--len", "3", "--dim", "4", "-o", tmp_path / "no\ndir" / "t.npy")
    assert "no\\ndir does not exist" in one_error_line(r)


def test_error_line_escapes_controls_in_a_real_terminal_stream(tmp_path: Path) -> None:
    """Outside CliRunner nothing strips ANSI codes: the escaping alone keeps stderr inert."""
    with h5py.File(tmp_path / "evil.h5", "w") as f:
        f[OSC] = np.zeros((2, 2))
        f["b"] = np.zeros((2, 2))
    r = subprocess.run([*PECLI, "inspect", "evil.h5:nope"], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "pe\\x1b]0;pwned\\x07" in r.stderr
    assert_inert(r.stderr)


# -------------------------------------------------------------------- 3. C header array names
@pytest.mark.parametrize(
    ("key", "rule"),
    [
        ("int", "reserved word of C or C++"),
        ("class", "reserved word of C or C++"),
        ("_Bool", "reserved word of C or C++"),
        ("nullptr", "reserved word of C or C++"),
        ("__x", "reserved for the C compiler"),
        ("_Pe", "reserved for the C compiler"),
        ("sin", "<math.h>"),
        ("NAN", "<math.h>"),
        ("linux", "compiler macro"),
        ("a-b", "is not a C identifier"),
        ("group/pe", "is not a C identifier"),
        ("1pe", "is not a C identifier"),
        ("pé", "is not a C identifier"),
        ("", "cannot be empty"),
    ],
)
@pytest.mark.parametrize("output", ["x.h", "x.hpp", "-"])
def test_c_header_refuses_names_that_do_not_compile(
    run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str, rule: str, output: str
) -> None:
    monkeypatch.chdir(tmp_path)
    extra = ["--to", "h"] if output == "-" else []
    r = run("generate", "--len", "3", "--dim", "4", "-o", output, *extra, "--key", key)
    assert rule in one_error_line(r)
    assert list(tmp_path.iterdir()) == []


def test_reserved_word_lists() -> None:
    assert {"int", "float", "static", "const", "restrict", "bool", "true", "template", "new", "this"} <= RESERVED_WORDS
    assert {"sin", "cosf", "powl", "NAN", "INFINITY", "isnan", "M_PI", "j0", "y1"} <= MATH_NAMES
    assert "pe" not in RESERVED_WORDS | MATH_NAMES


def test_default_c_header_unchanged(run, tmp_path: Path) -> None:
    assert run("generate", "--len", "2", "--dim", "2", "-o", tmp_path / "t.h").exit_code == 0
    text = (tmp_path / "t.h").read_text()
    assert "#define PE_ROWS 2\n#define PE_COLS 2\n" in text
    assert "static const float pe[PE_ROWS][PE_COLS] = {\n" in text


@pytest.mark.slow  # 21 compiler runs; the default run compiles headers in test_export.py
@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
@pytest.mark.parametrize("key", ["pe", "pos_embed", "_1x", "_pe", "Sin", "integer", "PE2"])
def test_accepted_names_compile(run, tmp_path: Path, key: str) -> None:
    header = tmp_path / "t.h"
    assert run("generate", "--len", "3", "--dim", "4", "-o", header, "--key", key).exit_code == 0
    (tmp_path / "m.c").write_text(f'#include "t.h"\nint main(void) {{ return {key}[2][3] > 1.0f; }}\n')
    compilers = [["cc", "-std=c99"], ["cc"]] + ([["c++", "-x", "c++"]] if shutil.which("c++") else [])
    for compiler in compilers:
        cmd = [*compiler, "-Wall", "-Werror", "-c", str(tmp_path / "m.c"), "-o", str(tmp_path / "m.o")]
        r = subprocess.run(cmd, capture_output=True, text=True, check=False)
        assert r.returncode == 0, (compiler, r.stderr)


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
@pytest.mark.parametrize("key", ["int", "sin", "NAN", "linux", "_Bool"])
def test_refused_names_really_break_the_header(tmp_path: Path, key: str) -> None:
    """The rule is not arbitrary: the header the old writer made for these failed to compile."""
    header = f"#include <math.h>\nstatic const float {key}[1][1] = {{{{0.0f}}}};\n"
    (tmp_path / "m.c").write_text(header + "int main(void) { return 0; }\n")
    r = subprocess.run(["cc", "-c", str(tmp_path / "m.c"), "-o", str(tmp_path / "m.o")], capture_output=True)
    assert r.returncode != 0


# -------------------------------------------------------------------- 4. dangling symlinks
def test_dangling_symlink_output_is_not_replaced(run, tmp_path: Path) -> None:
    link = tmp_path / "t.npy"
    link.symlink_to("nowhere.npy")
    r = run("generate", "--len", "3", "--dim", "4", "-o", link)
    assert "t.npy already exists: pass --force to overwrite it" in one_error_line(r)
    assert link.is_symlink() and os.readlink(link) == "nowhere.npy"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.npy"]
    r = run("generate", "--len", "3", "--dim", "4", "-o", link, "--force")
    assert r.exit_code == 0, r.output
    assert not link.is_symlink() and np.load(link).shape == (3, 4)


def test_dangling_symlink_sidecar_is_not_replaced(run, tmp_path: Path) -> None:
    side = tmp_path / "t.npy.json"
    side.symlink_to("nowhere.json")
    r = run("generate", "--len", "3", "--dim", "4", "-o", tmp_path / "t.npy")
    assert "t.npy.json already exists" in one_error_line(r)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.npy.json"] and side.is_symlink()


def test_interrupt_just_after_a_temporary_is_made_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A signal raises between any two bytecodes; one landing after the temporary file was
    created but before pecli knew its name used to leave a .part file behind."""
    from pecli.atomic import atomic_paths

    real_close = os.close

    def close_then_interrupt(fd: int) -> None:
        real_close(fd)
        monkeypatch.setattr(os, "close", real_close)
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "close", close_then_interrupt)
    with pytest.raises(KeyboardInterrupt), atomic_paths(tmp_path / "t.npy", tmp_path / "t.npy.json", force=False):
        pass
    assert list(tmp_path.iterdir()) == []


# ----------------------------------------------------------------- 5. an ASCII-only terminal
@pytest.mark.parametrize(
    "args",
    [
        ["generate", "--len", "3", "--dim", "4"],
        ["presets"],
        ["presets", "fairseq"],
        ["diff", "sinusoidal:len=8,dim=4", "sinusoidal:len=8,dim=4,base=500"],
        ["inspect", "--len", "8", "--dim", "4", "--pos", "1"],
    ],
)
def test_ascii_output_encoding_degrades_gracefully(args: list[str]) -> None:
    env = dict(os.environ, PYTHONIOENCODING="ascii", COLUMNS="80")
    env.pop("NO_COLOR", None)
    r = subprocess.run([*PECLI, *args], capture_output=True, env=env, check=False)
    assert r.returncode in (0, 1), r.stderr
    assert r.stderr == b""
    r.stdout.decode("ascii")  # every character it could not encode replaced
    assert len(r.stdout.splitlines()) >= 2


def test_ascii_output_generate_values() -> None:
    env = dict(os.environ, PYTHONIOENCODING="ascii", COLUMNS="80")
    r = subprocess.run([*PECLI, "generate", "--len", "3", "--dim", "4"], capture_output=True, env=env, check=False)
    assert r.returncode == 0
    assert r.stdout.decode("ascii").splitlines()[4].split() == ["1", "0.8415", "0.5403", "0.0100", "0.9999"]


def test_ascii_error_line_is_one_line() -> None:
    env = dict(os.environ, PYTHONIOENCODING="ascii")
    r = subprocess.run(
        [*PECLI, "generate", "--len", "3", "--dim", "4", "--base", "1"], capture_output=True, env=env, check=False
    )
    assert r.returncode == 2
    assert r.stdout == b""
    assert r.stderr.startswith(b"Error: base must be a finite number > 0") and r.stderr.count(b"\n") == 1
