"""The README is executable: its console examples and Python snippet must reproduce exactly."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


def console_examples() -> list[tuple[str, str]]:
    """(command, expected terminal output) pairs, in README order."""
    pairs: list[tuple[str, str]] = []
    for block in blocks("console"):
        for chunk in re.split(r"^\$ ", block, flags=re.M)[1:]:
            command, _, output = chunk.partition("\n")
            pairs.append((command, output))
    return pairs


def test_readme_has_examples() -> None:
    assert len(console_examples()) >= 8


def test_console_examples_reproduce(run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # examples that write files share one directory, in order
    for command, expected in console_examples():
        argv = shlex.split(command)
        assert argv[0] == "pecli"
        result = run(*argv[1:])
        assert result.output == expected, f"README example differs: $ {command}"


def test_python_snippet_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (snippet,) = blocks("python")
    exec(compile(snippet, "README.md", "exec"), {})
    assert (tmp_path / "pe.h5").exists()


def test_ci_runs_the_quick_start_exactly() -> None:
    quick = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = blocks("sh")[:2]
    assert all(c.strip() in quick for c in commands)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for command in commands:
        assert command.strip() in ci, f".ci/run does not run the README command: {command.strip()}"
