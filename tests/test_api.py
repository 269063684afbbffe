"""The public library surface and its start-up cost."""

from __future__ import annotations

import subprocess
import sys

import pecli


def test_public_names_resolve() -> None:
    for name in pecli.__all__:
        assert getattr(pecli, name) is not None, name


def test_lazy_functions_stay_functions_after_their_modules_load() -> None:
    import pecli.formats
    import pecli.inspection

    assert callable(pecli.describe) and pecli.describe.__module__ == "pecli.inspection"
    assert callable(pecli.write_table) and pecli.write_table.__module__ == "pecli.formats"


def test_every_exported_name_twice_both_ways_in_a_fresh_interpreter() -> None:
    """``pecli.NAME`` and ``from pecli import NAME`` give the same object, before and after every
    submodule has been imported, and no exported name is a module (a submodule of the same name
    would replace a lazy export once imported: pecli.compare was the function, then the module)."""
    code = """
import importlib, pkgutil, types
import pecli
first = {name: getattr(pecli, name) for name in pecli.__all__}
for info in pkgutil.walk_packages(pecli.__path__, "pecli."):
    if not info.name.endswith("__main__"):
        importlib.import_module(info.name)
for name in pecli.__all__:
    again = getattr(pecli, name)
    imported = getattr(importlib.import_module("pecli"), name)
    exec(f"from pecli import {name} as via_from", globals())
    assert again is first[name] is imported is via_from, name
    assert not isinstance(again, types.ModuleType), name
assert set(pecli.__all__) <= set(dir(pecli))
print("ok")
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


def test_help_imports_no_heavy_modules() -> None:
    code = (
        "import sys; from pecli.cli import cli\n"
        "try:\n    cli.main(['--help'], prog_name='pecli')\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('numpy', 'rich', 'h5py') if m in sys.modules))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip().splitlines()[-1] == "[]"


def test_choice_options_read_the_registries() -> None:
    """--kind, --from and --to list what the registries hold (read when a command first needs them)."""
    from pecli.formats import FORMATS
    from pecli.kinds import KINDS
    from pecli.options import format_names, kind_names

    assert kind_names() == tuple(KINDS)
    assert set(format_names(readable=False)()) == {n for f in FORMATS.values() for n in (f.name, *f.aliases)}


def test_help_imports_no_recipe_or_json() -> None:
    import subprocess
    import sys

    code = "import sys; from pecli.cli import cli; print(' '.join(sorted(sys.modules)))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    for heavy in ("numpy", "rich", "pecli.kinds", "pecli.presets", "dataclasses", "json"):
        assert heavy not in loaded, heavy
