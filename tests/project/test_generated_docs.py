"""Generated documentation is up to date: the preset table of docs/presets.md is cog output of
docs/gen_presets.py (built from ``pecli.presets.PRESETS``); a registry change without
``cog -r docs/presets.md`` fails here."""

from __future__ import annotations

import io
import sys
from pathlib import Path

from cogapp import Cog

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "presets.md"
STALE = "docs/presets.md is stale: run `cog -r docs/presets.md`"
TABLE_HEADER = "| preset | reproduces |"
START = "<!-- [[[cog from docs.gen_presets import table; cog.out(table()) ]]] -->\n"
END = "<!-- [[[end]]] -->\n"


def forget_generator() -> None:
    """Drop docs.gen_presets from sys.modules (the namespace package "docs" is this repo's)."""
    for name in [n for n in sys.modules if n == "docs" or n.startswith("docs.")]:
        del sys.modules[name]


def cog_check(path: Path) -> tuple[int, str]:
    """``cog --check --diff path`` in-process: exit status and what cog printed."""
    out = io.StringIO()
    cog = Cog()
    cog.set_output(stdout=out, stderr=out)
    try:
        status = cog.main(["cog", "--check", "--diff", "-I", str(ROOT), f"--check-fail-msg={STALE}", str(path)])
    finally:
        forget_generator()
    return status, out.getvalue()


def test_preset_table_is_generated() -> None:
    status, output = cog_check(PAGE)
    assert status == 0, f"{STALE}\n{output}"


def test_pipeline_table_is_generated_from_the_registry() -> None:
    # docs/pipelines.md's table is pecli.precision.PIPELINES and the kinds that compute each one.
    status, output = cog_check(ROOT / "docs" / "pipelines.md")
    assert status == 0, f"docs/pipelines.md is stale: run `cog -r -I . docs/pipelines.md`\n{output}"
    from pecli.precision import PIPELINES

    text = (ROOT / "docs" / "pipelines.md").read_text(encoding="utf-8")
    assert all(f"| `{name}` |" in text for name in PIPELINES)


def test_option_table_is_generated_from_the_commands() -> None:
    page = ROOT / "docs" / "options.md"
    out = io.StringIO()
    cog = Cog()
    cog.set_output(stdout=out, stderr=out)
    stale = "docs/options.md is stale: run `cog -r -I . docs/options.md`"
    try:
        status = cog.main(["cog", "--check", "--diff", "-I", str(ROOT), f"--check-fail-msg={stale}", str(page)])
    finally:
        forget_generator()
    assert status == 0, f"{stale}\n{out.getvalue()}"
    assert "| `--to` |" in page.read_text(encoding="utf-8")


def test_preset_table_is_inside_the_cog_block() -> None:
    sys.path.insert(0, str(ROOT))
    try:
        from docs.gen_presets import table
    finally:
        sys.path.remove(str(ROOT))
        forget_generator()
    page = PAGE.read_text(encoding="utf-8")
    assert page.count(START) == 1 and page.count(END) == 1, "docs/presets.md lost its preset-table cog markers"
    block = page.split(START, 1)[1].split(END, 1)[0]
    assert block == table(), STALE
    assert page.count(TABLE_HEADER) == 1, "a second, hand-written preset table in docs/presets.md"
    others = [ROOT / "README.md", *(p for p in (ROOT / "docs").glob("*.md") if p != PAGE)]
    copies = [p.name for p in others if TABLE_HEADER in p.read_text(encoding="utf-8")]
    assert not copies, f"a hand-written copy of the preset table in {copies}: link to docs/presets.md instead"


def test_stale_table_fails_the_check(tmp_path: Path) -> None:
    page = PAGE.read_text(encoding="utf-8")
    stale = tmp_path / "presets.md"
    stale.write_text(page.replace("| `vaswani` | Vaswani et al.", "| `vaswani` | Vaswani and al."), encoding="utf-8")
    status, output = cog_check(stale)
    assert status == 5 and STALE in output and "Vaswani and al." in output


def test_every_source_path_the_docs_name_exists() -> None:
    """A how-to that points at `pecli/cli/options.py` after the options moved sends a newcomer to a
    file that is not there (issue 26): every `pecli/…` path in the README and the pages exists."""
    import re

    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    missing = []
    for page in pages:
        if page.name == "changelog.md":  # history names files as they were
            continue
        for path in re.findall(r"`(pecli/[\w/]+(?:\.py)?)`", page.read_text(encoding="utf-8")):
            if not (ROOT / path).exists():
                missing.append(f"{page.name}: {path}")
    assert not missing, missing


def test_the_commands_page_lists_every_command() -> None:
    """docs/commands.md's table is written by hand: every registered command must have its row."""
    from pecli.cli import cli

    page = (Path(__file__).resolve().parents[2] / "docs" / "commands.md").read_text(encoding="utf-8")
    missing = [name for name in cli.commands if name != "help" and f"| `pecli {name}` |" not in page]
    assert not missing, f"docs/commands.md has no row for {missing}"
