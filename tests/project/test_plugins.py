"""Kinds and formats from another package (entry-point groups ``pecli.kinds`` and
``pecli.formats``): a tiny plugin is installed as pip would leave it (the package beside its
``.dist-info`` with ``entry_points.txt``, on the path) and used from the command line."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

PLUGIN = '''
"""A kind and a format that live outside pecli."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np

from pecli import Table
from pecli.formats import Format
from pecli.kinds.base import Recipe  # the path a plugin written against 0.2 takes
from pecli.params import int_param


@dataclass(frozen=True)
class Ramp(Recipe):
    """A ramp: value (start + p) * slope / (c + 1) at position p, column c."""

    length: int
    dim: int
    slope: float = 1.0
    start: int = 0
    dtype: Literal["float32", "float64"] = "float32"

    kind: ClassVar[str] = "ramp"
    core: ClassVar[tuple[str, ...]] = ("length", "dim", "slope", "dtype")
    example: ClassVar[str] = "--kind ramp --len 8 --dim 4"

    def __post_init__(self) -> None:
        int_param("length", self.length, 1, "--len 8")
        int_param("dim", self.dim, 1, "--dim 4")
        object.__setattr__(self, "slope", float(self.slope))

    @property
    def shape(self) -> tuple[int, int]:
        return self.length, self.dim

    def rows(self, r0: int, r1: int) -> np.ndarray:
        p = np.arange(self.start + r0, self.start + r1, dtype=np.float64)[:, None]
        return (p * self.slope / np.arange(1, self.dim + 1)).astype(self.dtype)


def _write(table: Table, fp: Any, options: Any, progress: Any) -> None:
    n, d = table.shape
    fp.write(f"ROWS {n} {d} {table.dtype.name}\\n".encode())
    for block in table.blocks(progress):
        for row in block:
            fp.write((" ".join(repr(float(v)) for v in row) + "\\n").encode())


def _read(path: Any, key: Any, stack: Any) -> Table:
    lines = path.read_text().splitlines()
    _, n, d, dtype = lines[0].split()
    values = np.array([[float(v) for v in line.split()] for line in lines[1:]], dtype=dtype)
    return Table.from_array(values.reshape(int(n), int(d)), name=str(path))


ROWS = Format(
    "rows",
    (".rows",),
    "plain rows of text under a ROWS n d dtype line",
    "stream",
    _write,
    _read,
    "none",
    lambda dt: 8.0,
    sniff=lambda head: head.startswith(b"ROWS "),
    streamable=True,
)
NOT_A_FORMAT = 42


def _exits(*args: Any) -> Any:
    import sys

    sys.exit(0)


def _raises(*args: Any) -> Any:
    raise ValueError("the plugin's own bug")


def _not_a_table(*args: Any) -> Any:
    return 42


def _format(name: str, write: Any, read: Any, per_value: Any = lambda dt: 8.0) -> Format:
    return Format(name, ("." + name,), "a broken plugin format", "stream", write, read, "none", per_value)


# Formats whose functions misbehave (issue 40): each must fail in one line, exit 2, nothing written.
EXIT_WRITER = _format("exitw", _exits, _read)
RAISING_READER = _format("raiser", _write, _raises)
NOT_A_TABLE_READER = _format("notable", _write, _not_a_table)
NAN_SIZE = _format("nansize", _write, _read, lambda dt: float("nan"))
RAISING_SIZE = _format("raisesize", _write, _read, _raises)
'''

#: Plugins that end the process or raise Ctrl-C's exception as they are imported.
EXITING_MODULE = "import sys\nsys.exit(0)\n"
CTRL_C_MODULE = "raise KeyboardInterrupt\n"

ENTRY_POINTS = """
[pecli.kinds]
ramp = pecli_ramp:Ramp
sinusoidal = pecli_ramp:Ramp

[pecli.formats]
rows = pecli_ramp:ROWS
broken = pecli_ramp:NOT_A_FORMAT
missing = pecli_ramp_missing:ANYTHING
exits = pecli_exits:ANYTHING
ctrlc = pecli_ctrlc:ANYTHING
exitw = pecli_ramp:EXIT_WRITER
raiser = pecli_ramp:RAISING_READER
notable = pecli_ramp:NOT_A_TABLE_READER
nansize = pecli_ramp:NAN_SIZE
raisesize = pecli_ramp:RAISING_SIZE
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("site")
    (root / "pecli_ramp.py").write_text(textwrap.dedent(PLUGIN), encoding="utf-8")
    (root / "pecli_exits.py").write_text(EXITING_MODULE, encoding="utf-8")
    (root / "pecli_ctrlc.py").write_text(CTRL_C_MODULE, encoding="utf-8")
    info = root / "pecli_ramp-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pecli-ramp\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(ENTRY_POINTS, encoding="utf-8")
    return root


def pecli(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])])}
    return subprocess.run(
        [sys.executable, "-m", "pecli", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def test_a_plugin_kind_builds_and_writes_its_table(site: Path, tmp_path: Path) -> None:
    r = pecli(site, tmp_path, "export", "ramp:len=5,dim=3,slope=2", "-o", "r.npy")
    assert r.returncode == 0, r.stderr
    expected = (np.arange(5.0)[:, None] * 2 / np.array([1.0, 2.0, 3.0])).astype(np.float32)
    np.testing.assert_array_equal(np.load(tmp_path / "r.npy"), expected)
    # The stored recipe is read back by the plugin's kind: inspect names it.
    r = pecli(site, tmp_path, "inspect", "r.npy", "--json")
    assert r.returncode == 0, r.stderr
    assert '"kind": "ramp"' in r.stdout and '"slope": 2.0' in r.stdout


def test_a_plugin_kind_is_a_choice_of_kind_and_in_help(site: Path, tmp_path: Path) -> None:
    r = pecli(site, tmp_path, "generate", "--kind", "ramp", "--len", "3", "--dim", "2", "--decimals", "2")
    assert r.returncode == 0, r.stderr
    assert "1.00" in r.stdout and "0.50" in r.stdout
    r = pecli(site, tmp_path, "help", "recipes", "ramp")
    assert r.returncode == 0 and "A ramp" in r.stdout, r.stderr


def test_a_plugin_format_writes_and_reads_from_the_command_line(site: Path, tmp_path: Path) -> None:
    r = pecli(site, tmp_path, "generate", "--len", "4", "--dim", "2", "-o", "t.rows")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "t.rows").read_text().startswith("ROWS 4 2 float32\n")
    r = pecli(site, tmp_path, "diff", "t.rows", "sinusoidal:len=4,dim=2")
    assert r.returncode == 0, r.stdout + r.stderr
    r = pecli(site, tmp_path, "generate", "--len", "4", "--dim", "2", "-o", "-", "--to", "rows")
    assert r.returncode == 0 and r.stdout.startswith("ROWS 4 2"), r.stderr
    # Its sniff tells a stream's format, like pecli's own formats'.
    piped = (tmp_path / "t.rows").read_bytes()
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run(
        [sys.executable, "-m", "pecli", "inspect", "-", "--json"],
        input=piped,
        env=env,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert b'"shape": [\n    4,\n    2\n  ]' in done.stdout or b'"shape": [4, 2]' in done.stdout


def test_broken_or_clashing_plugins_are_left_out_with_a_note(site: Path, tmp_path: Path) -> None:
    r = pecli(site, tmp_path, "generate", "--len", "2", "--dim", "2", "-o", "t.rows")
    assert r.returncode == 0, r.stderr
    notes = r.stderr.splitlines()
    assert any("'broken'" in n and "is not a pecli.formats.Format" in n for n in notes), r.stderr
    assert any("'missing'" in n and "ModuleNotFoundError" in n for n in notes), r.stderr
    # sys.exit() or Ctrl-C's exception raised by a plugin as it loads is that plugin's failure (issue 40)
    assert any("'exits'" in n and "SystemExit" in n for n in notes), r.stderr
    assert any("'ctrlc'" in n and "KeyboardInterrupt" in n for n in notes), r.stderr
    # The good ones are not left out, though they read the registries as they load.
    assert not any("'ramp'" in n or "'rows'" in n for n in notes), r.stderr
    # A plugin cannot take the name of pecli's own kind: the sinusoid is still pecli's.
    r = pecli(site, tmp_path, "help", "recipes", "sinusoidal")
    assert "'sinusoidal'" in r.stderr and "taken" in r.stderr
    assert "A ramp" not in r.stdout


def test_the_look_before_importlib_metadata_never_misses_what_it_finds(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """plugins.may_declare says False only where importlib.metadata finds no entry point of the
    group: this environment's groups, the plugin site's, an egg-info's, an upper-case folder's; a
    zip or an .egg on the path, or an import hook that lists distributions, hands over to it."""
    import importlib.metadata as metadata

    from pecli.plugins import FORMATS_GROUP, KINDS_GROUP, may_declare

    egg_info = tmp_path / "eggs" / "Other.EGG-INFO"
    egg_info.mkdir(parents=True)
    (egg_info / "PKG-INFO").write_text("Metadata-Version: 1.1\nName: other\nVersion: 1\n", encoding="utf-8")
    (egg_info / "entry_points.txt").write_text("[other.group]\nx = other:X\n", encoding="utf-8")
    groups = [KINDS_GROUP, FORMATS_GROUP, "console_scripts", "pytest11", "other.group", "no.such.group"]
    for path in ([], [str(site)], [str(tmp_path / "eggs")], [str(site), str(tmp_path / "missing")]):
        monkeypatch.setattr(sys, "path", [*path, *sys.path])
        for group in groups:
            if metadata.entry_points(group=group):
                assert may_declare(group), (path, group)
        monkeypatch.undo()
    monkeypatch.setattr(sys, "path", [str(site), *sys.path])
    assert may_declare(KINDS_GROUP) and may_declare(FORMATS_GROUP)
    monkeypatch.undo()
    assert not may_declare("no.such.group")  # this environment: the look answers alone
    zipped = tmp_path / "lib.zip"
    zipped.write_bytes(b"PK\x05\x06" + bytes(18))  # an empty zip
    for hand_over in ([str(zipped)], [str(tmp_path / "eggs")]):
        (tmp_path / "eggs" / "x.egg").touch()
        monkeypatch.setattr(sys, "path", [*hand_over, *sys.path])
        assert may_declare("no.such.group"), hand_over
        monkeypatch.undo()

    # An unpacked egg on the path is its own distribution: EGG-INFO inside it (found by review).
    egg = tmp_path / "myplug-1.0-py3.11.egg"
    (egg / "EGG-INFO").mkdir(parents=True)
    (egg / "EGG-INFO" / "PKG-INFO").write_text("Metadata-Version: 1.1\nName: myplug\nVersion: 1.0\n", encoding="utf-8")
    (egg / "EGG-INFO" / "entry_points.txt").write_text("[egg.group]\nramp = myplug:Ramp\n", encoding="utf-8")
    monkeypatch.setattr(sys, "path", [str(egg), *sys.path])
    assert metadata.entry_points(group="egg.group") and may_declare("egg.group")
    monkeypatch.undo()

    class Lister:
        def find_distributions(self, *args: object, **kwargs: object) -> list[object]:
            return []

    monkeypatch.setattr(sys, "meta_path", [Lister(), *sys.meta_path])
    assert may_declare("no.such.group")


def test_identify_without_plugins_reads_no_package_metadata() -> None:
    """With no package declaring pecli's groups, ``identify`` (which needs every kind) finds that
    out without importing importlib.metadata (25 ms of its start-up)."""
    code = (
        "import sys\nfrom pecli import Sinusoidal, identify\n"
        "identify(Sinusoidal(64, 16).build())\n"
        "print('importlib.metadata' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "False", done.stderr


@pytest.mark.parametrize("out", [None, "pe.npy", "pe.h5"])
def test_the_main_job_reads_no_plugin_metadata(site: Path, tmp_path: Path, out: str | None) -> None:
    # pecli generate --len 120 --dim 8 needs one kind and, with -o FILE, one of pecli's own formats:
    # importlib.metadata (~30 ms, more with many packages installed) stays unloaded.
    argv = ["pecli", "generate", "--len", "120", "--dim", "8"] + ([] if out is None else ["-o", str(tmp_path / out)])
    code = (
        f"import sys, runpy; sys.argv = {argv!r};\n"
        "try:\n    runpy.run_module('pecli', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "print('importlib.metadata' in sys.modules, file=sys.stderr)"
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.stderr.strip().splitlines()[-1] == "False", done.stderr
    assert out is None or (tmp_path / out).stat().st_size > 120 * 8 * 4


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["generate", "--len", "2", "--dim", "2", "-o", "t.exitw"], "plugin format 'exitw' failed: SystemExit"),
        (
            ["generate", "--len", "2", "--dim", "2", "-o", "t.nansize"],
            "plugin format 'nansize' returned float nan, not a finite number of bytes",
        ),
        (
            ["generate", "--len", "2", "--dim", "2", "-o", "t.raisesize"],
            "plugin format 'raisesize' failed: ValueError: the plugin's own bug",
        ),
        (["inspect", "in.raiser"], "plugin format 'raiser' failed: ValueError: the plugin's own bug"),
        (["inspect", "in.notable"], "plugin format 'notable' returned int 42, not a pecli Table"),
    ],
)
def test_a_plugin_formats_failure_is_one_line_and_exit_2(
    site: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    for name in ("in.raiser", "in.notable"):
        (tmp_path / name).write_text("ROWS 1 1 float32\n0.0\n")
    before = sorted(p.name for p in tmp_path.iterdir())
    r = pecli(site, tmp_path, *args)
    errors = [line for line in r.stderr.splitlines() if line.startswith("Error:")]
    assert r.returncode == 2, r.stderr
    assert len(errors) == 1 and message in errors[0], r.stderr
    assert "Traceback" not in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written, no temporary left
