"""Generated documentation is up to date: the README's preset table is cog output of
docs/gen_presets.py (built from ``pecli.presets.PRESETS``); a registry change without
``cog -r README.md`` fails here."""

from __future__ import annotations

import io
import sys
from pathlib import Path

from cogapp import Cog

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
STALE = "README.md is stale: run `cog -r README.md`"
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


def test_readme_preset_table_is_generated() -> None:
    status, output = cog_check(README)
    assert status == 0, f"{STALE}\n{output}"


def test_readme_preset_table_is_inside_the_cog_block() -> None:
    sys.path.insert(0, str(ROOT))
    try:
        from docs.gen_presets import table
    finally:
        sys.path.remove(str(ROOT))
        forget_generator()
    readme = README.read_text(encoding="utf-8")
    assert readme.count(START) == 1 and readme.count(END) == 1, "README.md lost its preset-table cog markers"
    block = readme.split(START, 1)[1].split(END, 1)[0]
    assert block == table(), STALE
    assert readme.count("| preset | reproduces |") == 1, "a second, hand-written preset table in README.md"


def test_stale_table_fails_the_check(tmp_path: Path) -> None:
    readme = README.read_text(encoding="utf-8")
    stale = tmp_path / "README.md"
    stale.write_text(readme.replace("| `vaswani` | Vaswani et al.", "| `vaswani` | Vaswani and al."), encoding="utf-8")
    status, output = cog_check(stale)
    assert status == 5 and STALE in output and "Vaswani and al." in output
