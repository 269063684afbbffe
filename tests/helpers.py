"""The tests' one helper module: float64 truths of the published formula, ulp distances, and the
command line's contract.

:func:`reference` writes the paper's table element by element in float64 (the truth many tests
compare against), :func:`ulp_distance` counts ulps against an exact value, :func:`f32_step` evaluates one
step of a "user's float32 code" the same way on every CPU and :func:`fast_math` a float32 sin
that is not correctly rounded.  :func:`rows_to_interrupt` sizes a write that a signal can catch.

The command line's contract, checked on any one run (issue 27), and a way to run pecli in-process
with the standard streams a real process would have.

:func:`call` runs ``pecli ARGS`` in this process with descriptors 0, 1 and 2 set up as a shell
would: stdout a file, ``/dev/full`` or closed (``>&-``), stderr a file, stdin a file or closed.
:func:`violations` lists what a run broke: an exit status outside {0, 1, 2, 129, 130, 141, 143},
an exception that escaped, ``Traceback`` or ``Exception ignored`` on stderr, more than one
``Error:`` line, or a file changed other than the one asked for.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pecli.cli.app import cli

#: The terminal width the CLI runs at in tests (the ``run`` fixture, the README's examples).
WIDTH = "80"
EXIT_STATUSES = {0, 1, 2, 129, 130, 141, 143}


@dataclass
class Run:
    args: list[str]
    code: int | None
    stderr: str
    escaped: BaseException | None = None
    changed: list[str] = field(default_factory=list)


def snapshot(folder: Path) -> dict[str, str]:
    """Every entry under ``folder``: its kind and, for a regular file, a hash of its bytes."""
    seen: dict[str, str] = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(root, name)
            rel = str(path.relative_to(folder))
            try:
                st = path.lstat()
            except OSError:
                continue
            if path.is_symlink() or not path.is_file():
                seen[rel] = f"special {st.st_mode:o}"
            else:
                seen[rel] = hashlib.sha1(path.read_bytes()).hexdigest()
    return seen


def call(args: list[str], *, stdout: str = "file", stdin: bytes | None = None, folder: Path | None = None) -> Run:
    """Run ``pecli ARGS`` here, with stdout ``"file"``, ``"full"`` (``/dev/full``) or ``"closed"``."""
    saved = {fd: os.dup(fd) for fd in (0, 1, 2)}
    streams = sys.stdin, sys.stdout, sys.stderr
    err = tempfile.TemporaryFile()
    inp = tempfile.TemporaryFile()
    out = tempfile.TemporaryFile()
    before = snapshot(folder) if folder is not None else {}
    code: int | None = None
    escaped: BaseException | None = None
    try:
        inp.write(stdin or b"")
        inp.seek(0)
        os.dup2(inp.fileno(), 0)
        os.dup2(err.fileno(), 2)
        if stdout == "full":
            full = os.open("/dev/full", os.O_WRONLY)
            os.dup2(full, 1)
            os.close(full)
        elif stdout == "closed":
            os.close(1)
        else:
            os.dup2(out.fileno(), 1)
        sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)))
        sys.stderr = io.TextIOWrapper(io.BufferedWriter(io.FileIO(2, "w", closefd=False)), line_buffering=True)
        sys.stdout = (
            None  # type: ignore[assignment]
            if stdout == "closed"
            else io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)))
        )
        try:
            cli.main(args, prog_name="pecli")
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException as exc:  # what would have been a traceback
            escaped = exc
        for stream in (sys.stdout, sys.stderr):
            try:
                if stream is not None:
                    stream.flush()  # what Python does at exit: a failure here is an "Exception ignored"
            except Exception as exc:
                escaped = escaped or exc
    finally:
        sys.stdin, sys.stdout, sys.stderr = streams
        for fd, dup in saved.items():
            os.dup2(dup, fd)
            os.close(dup)
        inp.close()
        out.close()
    err.seek(0)
    text = err.read().decode("utf-8", "replace")
    err.close()
    changed = []
    if folder is not None:
        after = snapshot(folder)
        changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    return Run(args, code, text, escaped, changed)


def violations(run: Run, allowed: frozenset[str] | set[str] = frozenset()) -> list[str]:
    """What ``run`` broke of the contract; ``allowed``: the paths (relative) it may change."""
    found = []
    if run.escaped is not None:
        found.append(f"an exception escaped: {type(run.escaped).__name__}: {run.escaped}")
    elif run.code not in EXIT_STATUSES:
        found.append(f"exit status {run.code}")
    if "Traceback" in run.stderr or "Exception ignored" in run.stderr:
        found.append("a traceback on stderr")
    errors = [line for line in run.stderr.splitlines() if line.startswith("Error:")]
    if len(errors) > 1:
        found.append(f"{len(errors)} Error: lines")
    if run.code == 2 and len(errors) != 1 and "Usage:" not in run.stderr:
        found.append("exit 2 without its one Error: line")
    stray = [p for p in run.changed if p not in allowed and not any(p.startswith(a + "/") for a in allowed)]
    if stray:
        found.append(f"changed files not asked for: {stray}")
    return found


def reference(length: int, dim: int, base: float = 10000.0, layout: str = "interleaved", start: int = 0) -> np.ndarray:
    """Float64 table written from the published formula, element by element in plain Python.

    HuggingFace (`SinusoidalPositionalEmbedding`): angle = pos / base^(2·(j//2)/d); even j → sin, odd j → cos;
    interleaved keeps that order, split puts all sin columns (⌈d/2⌉ of them) first.
    """
    angles = [[pos / base ** (2 * (j // 2) / dim) for j in range(dim)] for pos in range(start, start + length)]
    enc = np.array(angles, dtype=np.float64).reshape(length, dim)
    out = np.empty((length, dim))
    if layout == "interleaved":
        out[:, 0::2] = np.sin(enc[:, 0::2])
        out[:, 1::2] = np.cos(enc[:, 1::2])
    else:
        sentinel = dim // 2 if dim % 2 == 0 else dim // 2 + 1
        out[:, :sentinel] = np.sin(enc[:, 0::2])
        out[:, sentinel:] = np.cos(enc[:, 1::2])
    return out


def reference_tolerance(start: int, length: int) -> float:
    """Error bound of ``reference``: its float64 angle is off by a few ulp of the angle."""
    return 8 * np.finfo(np.float64).eps * max(1.0, float(start + length))


def f32_step(fn: Any, *args: Any) -> np.ndarray:
    """``fn(*args)`` as one float32 step of a user's code, the same bits on every CPU: evaluated in
    float64 and rounded once to float32 (a correctly rounded float32 op, but in the rare value within
    a float64 ulp of a float32 rounding midpoint).

    NumPy's own float32 ``sin``, ``cos``, ``exp`` and ``power`` take another code path on a CPU with
    AVX-512 than on one without (NumPy's dispatch, not the formula), so a test table built with them
    differs from machine to machine, and so could a verdict about it (issue 40).  pecli's float32
    pipelines round every step once, exactly like this (pecli/kernels/pipelines.py)."""
    return np.asarray(fn(*(np.asarray(a, dtype=np.float64) for a in args))).astype(np.float32)


def fast_math(angle: np.ndarray) -> np.ndarray:
    """float32 angles reduced modulo float32(2π) in float32, as a fast-math float32 sin (CUDA's
    ``__sinf``) reduces them first: ``f32_step(np.sin, fast_math(a))`` is a float32 sin off by ~p·2⁻²³ at
    angle p, the same on every CPU, that none of pecli's pipelines emulates."""
    two_pi = np.float32(2 * np.pi)
    angle = np.asarray(angle, dtype=np.float32)
    return angle - np.rint(angle / two_pi) * two_pi


def load_script(name: str) -> Any:
    """``scripts/NAME.py`` as a module (the scripts are run by hand and by the tests)."""
    import importlib.util

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location(f"pecli_scripts_{name}", root / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def ulp_distance(value: np.ndarray, exact: np.ndarray, dtype: type) -> np.ndarray:
    """|value − exact| in units of the spacing of ``dtype`` at ``exact``."""
    spacing = np.spacing(np.abs(exact).astype(dtype)).astype(np.float64)
    tiny = float(np.finfo(dtype).smallest_subnormal)
    return np.abs(value.astype(np.float64) - exact) / np.maximum(spacing, tiny)


__all__ = [
    "EXIT_STATUSES",
    "WIDTH",
    "Run",
    "call",
    "f32_step",
    "fast_math",
    "load_script",
    "reference",
    "reference_tolerance",
    "snapshot",
    "ulp_distance",
    "violations",
    "write_gguf",
]


def write_gguf(path: Path, arch: str, keys: dict[str, Any], tensors: dict[str, Any]) -> Path:
    """A GGUF file as llama.cpp's own writer makes it (pecli reads GGUF but does not write it):
    ``keys`` are values (``{arch}`` in a name is the architecture; a list is an array, text a
    string, an int a uint32, a float a float32), ``tensors`` arrays (or ``(bytes, type)`` for
    quantized and bfloat16 ones)."""
    import pytest

    gguf = pytest.importorskip("gguf")
    writer = gguf.GGUFWriter(path, arch)
    for key, value in keys.items():
        name = key.format(arch=arch)
        if isinstance(value, list):
            writer.add_array(name, value)
        elif isinstance(value, str):
            writer.add_string(name, value)
        elif isinstance(value, int):
            writer.add_uint32(name, value)
        else:
            writer.add_float32(name, value)
    for name, value in tensors.items():
        if isinstance(value, tuple):
            writer.add_tensor(name, value[0], raw_dtype=value[1])
        else:
            writer.add_tensor(name, value)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def write_gguf_table(path: Path, table: np.ndarray, key: str = "pe") -> None:
    """A GGUF file holding ``table`` as tensor ``key`` (:func:`write_gguf`)."""
    write_gguf(path, "gpt2", {}, {key: table})


#: Writers of the formats pecli reads but does not write, each its own library's: ``(path, table)``.
READ_ONLY_WRITERS = {"gguf": write_gguf_table}


def identified_and_checked(path: Path, kind: str) -> dict[str, object]:
    """``pecli identify PATH --json`` for a table a framework wrote: asserts a MATCH of ``kind`` whose
    own check (``pecli diff PATH SPEC --atol ATOL``) exits 0, and returns the JSON document."""
    import json

    from click.testing import CliRunner

    runner = CliRunner()
    doc = json.loads(runner.invoke(cli, ["identify", str(path), "--json"]).stdout)
    assert doc["verdict"] == "match" and doc["kind"] == kind, doc.get("summary", doc)
    check = runner.invoke(cli, ["diff", str(path), doc["best"]["spec"], "--atol", str(doc["best"]["atol"])])
    assert check.exit_code == 0, check.output
    return dict(doc)


def pwrite_threads(monkeypatch: Any) -> list[Any]:
    """The thread of each ``os.pwrite`` call from now on (``monkeypatch``: pytest's), in order."""
    import threading

    threads: list[threading.Thread] = []
    pwrite = os.pwrite

    def spy(fd: int, data: memoryview, offset: int) -> int:
        threads.append(threading.current_thread())
        return pwrite(fd, data, offset)

    monkeypatch.setattr(os, "pwrite", spy)
    return threads


def rows_to_interrupt(where: Path, bytes_per_row: int) -> str:
    """A ``--len`` whose file takes seconds to write yet fits twice over in ``where``'s free space.

    pecli refuses a table the disk cannot hold (exit 2) before it writes a byte, so a fixed
    50 million rows failed the signal tests wherever less than ~25 GB was free (CI, stop 58)."""
    rows = min(50_000_000, shutil.disk_usage(where).free // (2 * bytes_per_row))
    if rows < 2_000_000:  # a shorter write may end before the signal arrives
        pytest.skip(f"needs {4 * bytes_per_row} MB free for a write long enough to interrupt")
    return str(rows)
