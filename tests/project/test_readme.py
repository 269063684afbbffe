"""The README and every docs page are executable.  Each page is walked top to bottom in a directory
of its own: console examples must reproduce byte for byte, Python snippets run (skipped only when
their framework is missing), the C++ snippet is compiled and run."""

from __future__ import annotations

import importlib.util
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
BLOCK = re.compile(r"```(\w+)\n(.*?)```", flags=re.S)
# A front page, not the manual: everything else lives in docs/.
README_MAX_BYTES = 20_000


def blocks(lang: str, text: str = README) -> list[str]:
    return [body for kind, body in BLOCK.findall(text) if kind == lang]


def docs_blocks(lang: str) -> list[str]:
    return [body for page in PAGES[1:] for body in blocks(lang, page.read_text(encoding="utf-8"))]


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
    examples = [(c, out) for b in blocks("console") for c, out in console_examples(b)]
    shown = [c.split()[1] for c, out in examples if out]
    assert len(shown) >= 5, "the README shows at least five examples with their output"
    assert {"generate", "inspect", "diff", "identify", "export"} <= set(shown)
    for picture in re.findall(r"!\[[^]]*\]\(([^)]+)\)", README):
        assert (ROOT / picture).is_file(), f"README picture {picture} is missing"


def test_docs_have_examples() -> None:
    assert sum(len(console_examples(b)) for b in docs_blocks("console")) >= 10
    assert len(docs_blocks("python")) >= 5 and len(docs_blocks("cpp")) == 1


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_walkthrough(page: Path, run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = page.read_text(encoding="utf-8")
    name = page.relative_to(ROOT).as_posix()
    monkeypatch.chdir(tmp_path)
    # Keras 3 defaults to TensorFlow, which CI does not install; the snippet runs on any backend.
    monkeypatch.setenv("KERAS_BACKEND", "torch" if importlib.util.find_spec("torch") else "jax")
    skipped = []
    for kind, body in BLOCK.findall(text):
        if kind == "console":
            for command, expected in console_examples(body):
                argv = shlex.split(command)
                assert argv[0] == "pecli"
                assert run(*argv[1:]).output == expected, f"{name} example differs: $ {command}"
        elif kind == "python":
            missing = [m for m in needs(body) if importlib.util.find_spec(m) is None]
            if missing:
                skipped.append(missing)
                continue
            exec(compile(body, name, "exec"), {})
        elif kind == "cpp" and shutil.which("c++"):
            (tmp_path / "main.cpp").write_text(body)
            subprocess.run(["c++", "-o", "main", "main.cpp"], check=True)
            out = subprocess.run(["./main"], capture_output=True, text=True, check=True).stdout
            assert f"prints `{out.strip()}`" in text
    if skipped:
        print(f"{name} snippets skipped for missing frameworks:", skipped)


def test_ci_runs_the_quick_start_exactly() -> None:
    quick = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = blocks("sh")[:2]
    assert all(c.strip() in quick for c in commands)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for command in commands:
        assert command.strip() in ci, f".ci/run does not run the README command: {command.strip()}"


def test_readme_is_a_front_page() -> None:
    size = len(README.encode("utf-8"))
    assert size < README_MAX_BYTES, f"README.md is {size} bytes: move sections to docs/ (limit {README_MAX_BYTES})"
    for target in re.findall(r"\]\(((?:docs/)?[\w./-]+\.(?:md|png))\)", README):
        assert (ROOT / target).is_file(), f"README links to {target}, which does not exist"


def test_every_docs_page_is_in_the_nav() -> None:
    nav = set(re.findall(r"^\s*- [^:\n]+: ([\w./-]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), re.M))
    pages = {p.name for p in PAGES[1:]}
    assert pages - nav == set(), "docs pages missing from the mkdocs.yml nav"
    assert nav - pages == set(), "mkdocs.yml names pages that do not exist"


def test_docs_cite_public_sources() -> None:
    for page in PAGES:
        found = re.findall(r"seed[ _]?0\d\d", page.read_text(encoding="utf-8"), flags=re.I)
        assert not found, f"{page.name} cites internal notes {found}: cite the paper, the framework's code or a post"
