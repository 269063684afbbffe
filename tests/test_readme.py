"""The README is executable.  Walked top to bottom in one directory: console examples must
reproduce byte for byte, Python snippets run (skipped only when their framework is missing),
the C++ snippet is compiled and run."""

from __future__ import annotations

import importlib.util
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCK = re.compile(r"```(\w+)\n(.*?)```", flags=re.S)


def blocks(lang: str) -> list[str]:
    return [body for kind, body in BLOCK.findall(README) if kind == lang]


def console_examples(body: str) -> list[tuple[str, str]]:
    pairs = []
    for chunk in re.split(r"^\$ ", body, flags=re.M)[1:]:
        command, _, output = chunk.partition("\n")
        pairs.append((command, output))
    return pairs


def needs(snippet: str) -> list[str]:
    first = snippet.splitlines()[0]
    return [m.strip() for m in first.removeprefix("# needs:").split(",")] if first.startswith("# needs:") else []


def test_readme_has_examples() -> None:
    assert sum(len(console_examples(b)) for b in blocks("console")) >= 10
    assert len(blocks("python")) >= 5 and len(blocks("cpp")) == 1


def test_readme_walkthrough(run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    # Keras 3 defaults to TensorFlow, which CI does not install; the snippet runs on any backend.
    monkeypatch.setenv("KERAS_BACKEND", "torch" if importlib.util.find_spec("torch") else "jax")
    skipped = []
    for kind, body in BLOCK.findall(README):
        if kind == "console":
            for command, expected in console_examples(body):
                argv = shlex.split(command)
                assert argv[0] == "pecli"
                assert run(*argv[1:]).output == expected, f"README example differs: $ {command}"
        elif kind == "python":
            missing = [m for m in needs(body) if importlib.util.find_spec(m) is None]
            if missing:
                skipped.append(missing)
                continue
            exec(compile(body, "README.md", "exec"), {})
        elif kind == "cpp" and shutil.which("c++"):
            (tmp_path / "main.cpp").write_text(body)
            subprocess.run(["c++", "-o", "main", "main.cpp"], check=True)
            out = subprocess.run(["./main"], capture_output=True, text=True, check=True).stdout
            assert f"prints `{out.strip()}`" in README
    if skipped:
        print("README snippets skipped for missing frameworks:", skipped)


def test_ci_runs_the_quick_start_exactly() -> None:
    quick = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = blocks("sh")[:2]
    assert all(c.strip() in quick for c in commands)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for command in commands:
        assert command.strip() in ci, f".ci/run does not run the README command: {command.strip()}"
