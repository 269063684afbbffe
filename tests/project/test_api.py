"""The public library surface and its start-up cost."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pecli
from pecli.kinds import KINDS


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
from pecli.kinds import KINDS
first = {name: getattr(pecli, name) for name in pecli.__all__}
for info in pkgutil.walk_packages(pecli.__path__, "pecli."):
    if not info.name.endswith("__main__"):
        try:
            importlib.import_module(info.name)
        except ModuleNotFoundError as exc:  # pecli.kernels.jit*: numba code (absent where numba has no wheel)
            if not (info.name.startswith("pecli.kernels.jit") and exc.name == "numba"):
                raise
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
    from pecli.cli.options import format_names, kind_names
    from pecli.formats import FORMATS
    from pecli.kinds import KINDS

    assert kind_names() == tuple(KINDS)
    assert set(format_names(readable=False)()) == {
        n for f in FORMATS.values() if f.write is not None for n in (f.name, *f.aliases)
    }
    assert set(format_names(readable=True)()) == {
        n for f in FORMATS.values() if f.read is not None for n in (f.name, *f.aliases)
    }


def test_help_imports_no_recipe_or_json() -> None:
    import subprocess
    import sys

    code = "import sys; from pecli.cli import cli; print(' '.join(sorted(sys.modules)))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    for heavy in ("numpy", "rich", "pecli.kinds", "pecli.presets", "dataclasses", "json"):
        assert heavy not in loaded, heavy


def _modules_after(code: str) -> tuple[str, set[str]]:
    """What ``code`` prints, and the modules loaded after it ran, in a fresh interpreter."""
    code += "\nimport sys; print(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    printed, _, modules = out.rstrip("\n").rpartition("\n")
    return printed, set(modules.split())


def test_generate_to_the_terminal_loads_only_its_command_and_its_kind() -> None:
    """Start-up: printing a table imports neither the other commands nor the other kinds, the
    formats, the comparison machinery or the frameworks; nor, where stdout is not a terminal (here
    a pipe), Rich's console or the presets' tables."""
    from pecli.cli import cli
    from pecli.kinds import DEFAULT_KIND, KINDS

    printed, loaded = _modules_after(
        "from pecli.cli import cli\n"
        "try:\n    cli.main(['generate', '--len', '4', '--dim', '4'], prog_name='pecli')\n"
        "except SystemExit:\n    pass"
    )
    assert printed.startswith("sinusoidal (4, 4)"), printed
    assert {"pecli.cli.generate", KINDS[DEFAULT_KIND].__module__, "pecli.views.table"} <= loaded
    unneeded = {cli.commands[name].callback.__module__ for name in cli.commands} - {"pecli.cli.generate"}  # type: ignore[union-attr]
    unneeded |= {cls.__module__ for kind, cls in KINDS.items() if kind != DEFAULT_KIND}
    unneeded |= {"pecli.formats", "pecli.sources", "pecli.diff", "pecli.identification"}
    unneeded |= {"pecli.analysis", "pecli.plot", "pecli.positions", "h5py", "safetensors", "torch"}
    unneeded |= {"rich.console", "pecli.presets", "pecli.fitting"}
    assert len(unneeded) > 10 and not unneeded & loaded, sorted(unneeded & loaded)


def test_a_checkpoint_scan_into_a_pipe_loads_no_rich_console_nor_masked_arrays(tmp_path: Path) -> None:
    """``pecli identify CHECKPOINT`` into a pipe, stderr a pipe too: its lines are written as they
    are, no progress bar is asked for, and neither Rich's console (15 ms) nor numpy.ma (13 ms) is
    imported (issue 42: a scan's start-up is most of its cost)."""
    from safetensors.numpy import save_file

    from pecli import Sinusoidal

    path = tmp_path / "ck.safetensors"
    save_file({"pe": Sinusoidal(64, 16).build(), "w": np.ones((8, 8), np.float32)}, str(path))
    printed, loaded = _modules_after(
        "from pecli.cli import cli\n"
        f"try:\n    cli.main(['identify', {str(path)!r}], prog_name='pecli')\n"
        "except SystemExit:\n    pass"
    )
    assert "pe  (64, 16) float32  MATCH vaswani" in printed, printed
    assert {"pecli.identification", "pecli.checkpoints"} <= loaded
    assert not {"rich.console", "rich.text", "numpy.ma"} & loaded, sorted({"rich.console", "numpy.ma"} & loaded)


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"TTY_COMPATIBLE": "1"},
        {"TTY_COMPATIBLE": "0", "FORCE_COLOR": "1"},
        {"FORCE_COLOR": ""},
        {"FORCE_COLOR": "1"},
    ],
)
def test_pecli_s_terminal_test_is_rich_s(env: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Whether a stream is a terminal, told without Rich's console, is what Rich's ``is_terminal``
    says, for a file, a StringIO (no real isatty) and a closed file, under each variable."""
    import io

    from rich.console import Console

    from pecli.cli.app import terminal

    for name in ("TTY_COMPATIBLE", "FORCE_COLOR", "TTY_INTERACTIVE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    closed = open(tmp_path / "f", "w")  # closed at once: its isatty() then raises
    closed.close()
    with open(tmp_path / "g", "w") as file:
        for stream in (file, io.StringIO(), closed):
            assert terminal(stream) == Console(file=stream).is_terminal, (env, stream)


def test_in_a_notebook_rich_decides_what_a_terminal_is(monkeypatch: pytest.MonkeyPatch) -> None:
    """In a Jupyter kernel Rich's console is no terminal whatever FORCE_COLOR says; ``terminal``
    asks Rich there (found by review: it answered FORCE_COLOR's True)."""
    import builtins
    import io
    import types

    from pecli.cli.app import terminal

    class ZMQInteractiveShell:  # the kernel's shell, as Rich recognises it
        pass

    monkeypatch.setenv("FORCE_COLOR", "1")
    assert terminal(io.StringIO())
    monkeypatch.setitem(sys.modules, "IPython", types.ModuleType("IPython"))
    monkeypatch.setattr(builtins, "get_ipython", ZMQInteractiveShell, raising=False)
    assert not terminal(io.StringIO())


def test_commands_are_listed_without_loading_and_load_under_their_own_names() -> None:
    from pecli.cli import cli

    printed, loaded = _modules_after("from pecli.cli import cli; print(' '.join(cli.commands))")
    assert printed.split() == list(cli.commands)
    # The group and the option machinery load; no command's module does.
    machinery = {"pecli.cli.app", "pecli.cli.stops", "pecli.cli.options", "pecli.cli.paramtypes"}
    assert len(cli.commands) == 10 and {m for m in loaded if m.startswith("pecli.cli.")} == machinery
    for name in cli.commands:
        assert cli.commands[name].name == name


def test_the_kind_parameters_imply_loads_only_what_it_must() -> None:
    """The default kind's own parameters imply it without loading the other kinds; the same
    parameters give the same kind once every kind is loaded."""
    cases = [
        ({}, "sinusoidal"),
        ({"length": 8, "dim": 4}, "sinusoidal"),
        ({"dim": 4, "layout": "split", "compute": "float32"}, "sinusoidal"),
        ({"dim": 4, "layout": "nonsense"}, "sinusoidal"),
        ({"dim": 4, "layout": "half"}, "rope"),
        ({"part": "cos"}, "rope"),
        ({"part": "bias"}, "alibi"),
        ({"heads": 8}, "alibi"),
        ({"grid": "2x2", "dim": 8}, "sincos2d"),
        ({"length": 8, "dim": 4, "std": 0.1}, "learned"),
    ]
    printed, loaded = _modules_after(
        "from pecli.kinds import get_kind, implied_kind\n"
        "print(implied_kind({'length': 8, 'dim': 4}), get_kind('sinusoidal').kind)"
    )
    assert printed == "sinusoidal sinusoidal"
    assert {m for m in loaded if m.startswith("pecli.kinds.")} == {"pecli.kinds.sinusoidal"}
    assert "pecli.recipe" in loaded
    code = f"from pecli.kinds import implied_kind, kinds\ncases = {cases!r}\n"
    code += "before = [implied_kind(p) for p, _ in cases]\nkinds()\nprint(before, [implied_kind(p) for p, _ in cases])"
    printed, _ = _modules_after(code)
    expected = [kind for _, kind in cases]
    assert printed == f"{expected} {expected}"


def test_every_kind_of_the_registry_is_exported_under_its_class_name() -> None:
    from pecli.kinds import kinds

    for cls in kinds().values():
        assert cls.__name__ in pecli.__all__, cls.__name__
        assert getattr(pecli, cls.__name__) is cls


def test_a_script_compares_identifies_and_describes_its_own_arrays() -> None:
    # The paper's table computed here in float64 (tests.helpers.reference), then cast once.
    from tests.helpers import reference

    mine = reference(64, 16).astype(np.float32)
    recipe = pecli.Sinusoidal(length=64, dim=16)
    assert pecli.compare(mine, pecli.Table.from_recipe(recipe)).same
    c = pecli.compare(mine[::-1].copy(), recipe.build())
    assert not c.same and c.source_a == "A" and c.exit_code == 1
    assert [x.text for x in c.explanations] == [
        "row-order: A's rows are B's in reverse order: A's row r is B's row 63−r"
    ]
    assert [x.name for x in pecli.explain(mine[::-1].copy(), recipe.build())] == ["row-order"]
    found = pecli.identify(mine)
    assert found.verdict == "match" and found.best is not None and found.best.recipe == recipe
    assert pecli.describe(mine)["shape"] == [64, 16]
    assert pecli.Table.from_array([[1.0, 2.0]], name="mine").shape == (1, 2)  # anything np.asarray takes
    assert pecli.Table.from_array(np.zeros(8, np.float64)).shape == (1, 8)  # a vector is one row


def test_a_tensor_goes_in_through_dlpack_and_a_bad_array_is_a_clear_error() -> None:
    torch = pytest.importorskip("torch")
    x = pecli.Sinusoidal(length=32, dim=8).build()
    t = torch.from_numpy(x)
    table = pecli.Table.from_array(t, name="t")
    assert table.shape == (32, 8) and np.asarray(table.rows(0, 32)).tobytes() == x.tobytes()
    assert pecli.compare(t, x).same
    # A bfloat16 tensor on the CPU is read exactly (issue 42: it was refused, "Unsupported dtype in
    # DLTensor"); a tensor NumPy cannot reach at all (on the meta device) is one clear error.
    assert pecli.Table.from_array(t.to(torch.bfloat16)).storage == "bfloat16"
    with pytest.raises(pecli.PecliInputError, match=r"cannot read A as a NumPy array .*float32 first"):
        pecli.compare(torch.empty(32, 8, device="meta"), x)
    with pytest.raises(pecli.PecliInputError, match="holds bool values: pecli reads numeric tables"):
        pecli.compare(np.ones((4, 4), bool), x)


@pytest.mark.parametrize(
    ("cls", "python", "text"),
    [
        (
            "Rope",
            {"short_factor": [1.0, 1.05, 1, 2], "long_factor": (1.5, 2.0, 2.5, 3.0)},
            {"short_factor": "1.0,1.05,1,2", "long_factor": "[1.5, 2.0, 2.5, 3.0]"},
        ),
        ("Sincos2d", {"grid": (4, 6)}, {"grid": "4x6"}),
        ("Rope2d", {"feat_shape": [8, 8]}, {"feat_shape": "8x8"}),
        ("Mrope", {"mrope_section": (16, 24, 24)}, {"mrope_section": "16,24,24"}),
        ("Axial", {"axes_dim": [16, 56, 56]}, {"axes_dim": "16;56;56"}),
    ],
)
def test_recipe_fields_take_python_values_as_well_as_the_clis_text(cls: str, python: dict, text: dict) -> None:
    """``Rope(short_factor=[1.0, 1.05])`` was refused with "must be text like '1.0,1.05'": a
    script passes lists, tuples or arrays and gets the recipe (and the table) the CLI text gives."""
    import numpy as np

    common = {
        "Rope": {"length": 8, "dim": 8, "scaling": "longrope", "factor": 2.0, "original_max_position_embeddings": 4},
        "Sincos2d": {"dim": 16},
        "Rope2d": {"dim": 32, "bands": "lang"},
        "Mrope": {"dim": 128, "sequence": "text=4"},
        "Axial": {"tokens": "text=8;image=4x4"},
    }[cls]
    kind = getattr(pecli, cls)
    from_python, from_text = kind(**common, **python), kind(**common, **text)
    assert from_python == from_text
    assert np.array_equal(from_python.build(), from_text.build())
    as_array = {k: np.asarray(v) for k, v in python.items()}
    assert kind(**common, **as_array) == from_text
    with pytest.raises(pecli.RecipeError, match=r"must (be|look like)"):
        kind(**common, **{k: [True, "x"] for k in python})


def test_a_notebook_shows_a_comparison_and_an_identification_as_the_cli_prints_them(run, tmp_path, monkeypatch) -> None:
    """``_repr_html_`` is the terminal's report as HTML: its text is, word for word, what
    ``pecli diff`` and ``pecli identify`` print for the same tables."""
    import html
    import re

    from pecli.views.console import as_html
    from pecli.views.diff import diff_view
    from pecli.views.identify import identify_view
    from tests.helpers import WIDTH

    def text(markup: str) -> list[str]:
        return html.unescape(re.sub(r"<[^>]+>", "", markup)).split()

    monkeypatch.chdir(tmp_path)
    for name, recipe in (("a.npy", pecli.Rope(length=64, dim=16)), ("b.npy", pecli.Rope(length=64, dim=16, base=5e5))):
        pecli.write_table(pecli.Table.from_recipe(recipe), name)
    with pecli.open_table("a.npy") as a, pecli.open_table("b.npy") as b:
        comparison = pecli.compare(a, b)
    assert comparison._repr_html_() == as_html(diff_view(comparison))
    printed = run("diff", "a.npy", "b.npy").stdout.split()
    assert "base" in printed
    assert text(as_html(diff_view(comparison), width=int(WIDTH))) == printed

    np.save("cache.npy", pecli.Rope(length=64, dim=16).build())
    with pecli.open_table("cache.npy") as cache:
        found = pecli.identify(cache)
    assert found._repr_html_() == as_html(identify_view(found))
    printed = run("identify", "cache.npy").stdout.split()
    assert "MATCH:" in printed
    assert text(as_html(identify_view(found), width=int(WIDTH))) == printed


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_notebook_shows_a_recipe_and_a_table_as_generate_prints_them(kind: str, tmp_path, monkeypatch) -> None:
    """``_repr_html_`` of a recipe, of its Table and of the file it was written to is, word for
    word, what ``pecli generate`` prints of the kind's example on a terminal as wide as a notebook
    (the file's title led by its name), but for how a reader picks another window (issue 42)."""
    import html
    import re

    from click.testing import CliRunner

    from pecli.cli import cli
    from pecli.views.console import NOTEBOOK_WIDTH
    from pecli.views.table import CLI_PICK, NOTEBOOK_PICK

    def text(markup: str) -> list[str]:
        return html.unescape(re.sub(r"<[^>]+>", "", markup)).split()

    monkeypatch.chdir(tmp_path)
    env = {"COLUMNS": str(NOTEBOOK_WIDTH), "NO_COLOR": "1", "TERM": "dumb"}
    words = KINDS[kind].example.split()
    printed = CliRunner().invoke(cli, ["generate", *words], env=env)
    assert printed.exit_code == 0, printed.output
    expected = printed.stdout.replace(CLI_PICK, NOTEBOOK_PICK).split()
    assert CliRunner().invoke(cli, ["generate", *words, "-o", "t.npy"]).exit_code == 0
    with pecli.open_table("t.npy") as stored:
        recipe = stored.recipe
        assert recipe is not None
        assert text(recipe._repr_html_()) == expected
        assert text(pecli.Table.from_recipe(recipe)._repr_html_()) == expected
        assert text(stored._repr_html_()) == ["t.npy", *expected]


def test_a_notebook_shows_a_table_of_no_recipe_and_says_how_to_pick_a_window() -> None:
    """An array's table: its name, shape and dtype, the edge rows NumPy-style, and the window hint
    in the library's words (the values checked against the array itself)."""
    import html
    import re

    values = np.arange(40 * 300, dtype=np.float32).reshape(40, 300) / 7
    shown = html.unescape(re.sub(r"<[^>]+>", "", pecli.Table.from_array(values, "x")._repr_html_()))
    shown = [line for line in shown.splitlines() if line.strip()]
    assert shown[0].split() == ["x", "(40,", "300)", "float32"]
    assert shown[1].split()[:3] == ["pos", "0", "1"]
    assert shown[3].split()[:3] == ["0", f"{values[0, 0]:.4f}", f"{values[0, 1]:.4f}"]
    assert shown[-2].split()[-1] == f"{values[39, 299]:.4f}"
    heads = shown[1].split()[1:]
    assert heads[len(heads) // 2] == "…" and heads[-1] == "299"
    columns = len(heads) - 1
    assert shown[-1] == f"showing 6 of 40 rows, {columns} of 300 columns: Table.section(r0, r1, c0, c1) picks a window"


def test_a_table_goes_out_as_a_torch_tensor_in_its_own_dtype(tmp_path) -> None:
    """``Table.to_torch``: float32 as float32, bfloat16 as torch.bfloat16 bit for bit (computed,
    or read back from a file that stores bfloat16), cast by torch when a dtype is asked."""
    torch = pytest.importorskip("torch")
    recipe = pecli.Rope(length=32, dim=16, dtype="bfloat16")
    tensor = pecli.Table.from_recipe(recipe).to_torch()
    assert tensor.dtype == torch.bfloat16 and tuple(tensor.shape) == (32, 16)
    assert np.array_equal(tensor.view(torch.int16).numpy(), recipe.build().view(np.int16))
    pecli.write_table(pecli.Table.from_recipe(recipe), tmp_path / "cache.safetensors")
    with pecli.open_table(tmp_path / "cache.safetensors") as stored:
        assert torch.equal(stored.to_torch(), tensor)
    exact = pecli.Sinusoidal(length=8, dim=8)
    as64 = pecli.Table.from_recipe(exact).to_torch(dtype=torch.float64)
    assert as64.dtype == torch.float64 and np.array_equal(as64.numpy(), exact.build().astype(np.float64))


def test_a_recipe_error_names_keywords_in_python_and_options_on_the_command_line(run) -> None:
    """``pecli.Rope(scaling="llama3")`` said "needs --low-freq-factor", an option Python has not (issue 42)."""
    with pytest.raises(pecli.RecipeError) as python:
        pecli.Rope(length=16, dim=8, scaling="llama3", factor=8.0, original_max_position_embeddings=8192)
    assert "needs low_freq_factor= and high_freq_factor=, e.g. low_freq_factor=1" in str(python.value)
    assert "--" not in str(python.value)
    args = ("--factor", "8", "--original-max-position-embeddings", "8192")
    printed = run("generate", "--kind", "rope", "--len", "16", "--dim", "8", "--scaling", "llama3", *args).output
    assert "needs --low-freq-factor and --high-freq-factor, e.g. --low-freq-factor 1" in printed
    with pytest.raises(pecli.RecipeError, match=r"e\.g\. length=4096"):  # the CLI's spelling ended with its run
        pecli.Rope(length=0, dim=8)


@pytest.mark.parametrize("name", pecli.__all__)
def test_every_export_and_its_public_methods_say_what_they_do(name: str) -> None:
    """``help(pecli.NAME)`` explains it (issue 42: ``get_preset`` had no docstring); an override
    shares its base's (``inspect.getdoc`` reads up the MRO), as ``help()`` does."""
    import inspect

    obj = getattr(pecli, name)
    if not callable(obj):
        return
    assert inspect.getdoc(obj), f"pecli.{name} has no docstring"
    if isinstance(obj, type):
        for member in dir(obj):
            value = getattr(obj, member)
            if not member.startswith("_") and callable(value):
                assert inspect.getdoc(value), f"pecli.{name}.{member} has no docstring"
