"""One option vocabulary: each option has one meaning on every command that has it; old names
work for one release with a note on stderr; global flags are accepted after the command; help
shows each kind's own defaults; writers honour --rows/--cols."""

from __future__ import annotations

import re
from pathlib import Path

import click
import numpy as np
import pytest
from click.testing import CliRunner

from pecli.cli import cli
from pecli.cli.options import AliasOption
from pecli.kinds.rope import Rope
from pecli.rotation import apply_rotary

CTX = click.Context(cli, info_name="pecli")
COMMANDS = {name: cli.get_command(CTX, name) for name in cli.list_commands(CTX)}
ALIASES = [
    (name, p)
    for name, command in COMMANDS.items()
    for p in (command.params if command is not None else [])
    if isinstance(p, AliasOption)
]


def run(*args: object) -> click.testing.Result:
    return CliRunner().invoke(cli, [str(a) for a in args], env={"COLUMNS": "80", "NO_COLOR": "1"})


def options_of(command: click.Command) -> dict[str, click.Option]:
    return {
        flag: p
        for p in command.params
        if isinstance(p, click.Option) and not isinstance(p, AliasOption)
        for flag in (*p.opts, *p.secondary_opts)
    }


def test_every_option_has_one_meaning_wherever_it_appears() -> None:
    meanings: dict[str, set[str]] = {}
    for command in COMMANDS.values():
        assert command is not None
        for flag, p in options_of(command).items():
            meanings.setdefault(flag, set()).add(p.help or "")
    assert {flag: texts for flag, texts in meanings.items() if len(texts) > 1} == {}


def test_the_vocabulary_page_lists_every_option_with_its_commands() -> None:
    r = run("help", "options")
    assert r.exit_code == 0, r.output
    assert (
        "--to  (export, generate)" in r.output
        and "--from  (analyze, diff, export, identify, inspect, plot, rotation)" in r.output
    )
    assert "-q / --quiet  (analyze, diff, export, generate, identify, inspect, plot, rotation)" in r.output
    assert "-n / --top  (diff, identify)" in r.output


@pytest.mark.parametrize(("command", "alias"), ALIASES, ids=[f"{c} {a.opts[0]}" for c, a in ALIASES])
def test_old_names_work_with_a_note_and_quietly_with_q(tmp_path: Path, command: str, alias: AliasOption) -> None:
    value = {"--format": "npy", "--precision": "3", "--nearest": "2"}[alias.opts[0]]
    table = tmp_path / "t.npy"
    np.save(table, paper(np.arange(32.0), 4).astype(np.float32))
    rotated = tmp_path / "r.npy"  # the table as activations, rotated by a rope cache (pecli rotation's input)
    cos, sin = (Rope(length=32, dim=4, part=part).build() for part in ("cos", "sin"))
    np.save(rotated, apply_rotary(np.load(table), cos, sin).astype(np.float32))

    def args(out: str) -> list[str]:
        if alias.opts[0] == "--precision":
            return ["generate", "--len", "3", "--dim", "4"] if command == "generate" else [command, str(table)]
        made = {
            "generate": ["generate", "--len", "3", "--dim", "4", "-o", str(tmp_path / f"{out}.bin")],
            "export": ["export", str(table), "-o", str(tmp_path / f"{out}.bin")],
            "plot": ["plot", str(table), "-o", str(tmp_path / f"{out}.png")],
            "rotation": ["rotation", str(table), str(rotated)],
        }
        return made.get(command, [command, str(table)])

    if command == "plot":
        pytest.importorskip("matplotlib")
    old = run(*args("old"), alias.opts[0], value)
    assert old.exit_code == 0, old.output
    note = f"warning: {alias.opts[0]} is now {alias.use} ({alias.opts[0]} goes in pecli 0.3)\n"
    assert old.stderr.startswith(note) and note not in old.stderr[len(note) :]
    new = run(*args("new"), alias.use, value)
    assert (new.exit_code, new.stdout.replace("new", "old")) == (0, old.stdout)
    assert run(*args("quiet"), alias.opts[0], value, "-q").stderr == ""


def test_old_and_new_name_disagreeing_is_an_error() -> None:
    r = run("generate", "--len", "3", "--dim", "4", "--decimals", "2", "--precision", "5")
    assert r.exit_code == 2
    assert r.stderr.startswith("Error: --precision (an old name of --decimals) and --decimals disagree")


def test_no_color_is_accepted_after_the_command() -> None:
    r = run("inspect", "--len", "4", "--dim", "4", "--pos", "1", "--no-color")
    assert r.exit_code == 0 and "\x1b[" not in r.output


def test_diff_brief_prints_nothing_and_quiet_keeps_stdout(tmp_path: Path) -> None:
    np.save(tmp_path / "a.npy", np.zeros((2, 2), np.float32))
    np.save(tmp_path / "b.npy", np.ones((2, 2), np.float32))
    brief = run("diff", "-s", tmp_path / "a.npy", tmp_path / "b.npy")
    assert (brief.exit_code, brief.output) == (1, "")
    quiet = run("diff", "-q", tmp_path / "a.npy", tmp_path / "b.npy")
    assert quiet.exit_code == 1 and quiet.stdout.startswith("DIFFERENT: 4 of 4") and quiet.stderr == ""


def test_help_shows_each_kinds_default_and_lists_one_kind_options_apart() -> None:
    page = run("inspect", "--help").output
    flat = " ".join(page.split())
    assert (
        "[default: interleaved (sinusoidal), pairs (axial), half (rope), pairs (rope2d), pairs (xpos)]" in flat
    )  # --layout
    assert (
        "[default: exact (sinusoidal), float32 (alibi), float64 (axial), float32 (mrope), float32 (rope), float32 (rope2d), exact (sincos2d), float32 (xpos)]"
        in flat
    )  # --compute
    listed = set(re.findall(r"^  (--[a-z-]+)", page, flags=re.MULTILINE))
    assert "--layout" in listed and "--scaling" not in listed and "--heads" not in listed
    assert "pecli help recipes [KIND]" in flat
    rope = " ".join(run("help", "recipes", "rope").output.split())
    assert "--scaling" in rope and "[rope default: half]" in rope and "--heads" not in rope
    every = run("help", "recipes").output
    for flag in ("--scaling", "--heads", "--grid", "--std", "--freq", "--truncate / --no-truncate"):
        assert flag in every


def paper(positions: np.ndarray, d: int) -> np.ndarray:
    """The paper's table in float64 (independent of pecli)."""
    angle = positions[:, None] / np.power(10000.0, np.arange(0, d, 2) / d)[None, :]
    out = np.empty((positions.size, d))
    out[:, 0::2], out[:, 1::2] = np.sin(angle), np.cos(angle)
    return out


def test_generate_writes_only_the_rows_and_columns_asked_for(tmp_path: Path) -> None:
    r = run("generate", "--len", "100", "--dim", "16", "--rows", "10:20", "--cols", "4:10", "-o", tmp_path / "s.npy")
    assert r.exit_code == 0, r.output
    got = np.load(tmp_path / "s.npy")
    want = paper(np.arange(10, 20, dtype=np.float64), 16)[:, 4:10].astype(np.float32)
    assert got.shape == (10, 6) and np.array_equal(got, want)
    # A slice is not what the recipe builds: no recipe is stored with it.
    shown = run("inspect", tmp_path / "s.npy", "--json")
    assert '"recipe": null' in shown.output or '"recipe"' not in shown.output


def test_export_writes_a_slice_of_a_file(tmp_path: Path) -> None:
    data = np.arange(60, dtype=np.float64).reshape(10, 6)
    np.save(tmp_path / "t.npy", data)
    r = run("export", tmp_path / "t.npy", "--rows", "2:5", "--cols", ":3", "-o", tmp_path / "s.csv")
    assert r.exit_code == 0, r.output
    back = np.loadtxt(tmp_path / "s.csv", delimiter=",", skiprows=1)
    assert np.array_equal(back, data[2:5, :3])
    bad = run("export", tmp_path / "t.npy", "--rows", "8:20", "-o", tmp_path / "x.npy")
    assert bad.exit_code == 2 and "--rows 8:20 is outside 0:10" in bad.stderr and not (tmp_path / "x.npy").exists()
