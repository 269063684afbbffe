"""The command line, through CliRunner: exact stdout, stderr and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import click
import numpy as np
import pytest

from pecli import Sinusoidal
from pecli.cli import cli

# The paper's formula for 3 positions and d_model = 4: the values PyTorch prints for a float32
# implementation of it, `[[0, 1, 0, 1], [0.8415, 0.5403, 0.0100, 0.9999], [0.9093, -0.4161, 0.0200, 0.9998]]`.
PAPER_TABLE_3X4 = """\
sinusoidal (3, 4) float32  base=10000 layout=interleaved start=0
pos       0        1       2       3
────────────────────────────────────
  0  0.0000   1.0000  0.0000  1.0000
  1  0.8415   0.5403  0.0100  0.9999
  2  0.9093  -0.4161  0.0200  0.9998
"""


def test_generate_prints_the_papers_3x4_table_with_pytorchs_printed_values(run) -> None:
    r = run("generate", "--len", 3, "--dim", 4)
    assert (r.exit_code, r.stdout, r.stderr) == (0, PAPER_TABLE_3X4, "")


def test_generate_shows_the_blog_walkthroughs_worked_example_row_2(run) -> None:
    r = run("generate", "--len", 120, "--dim", 8)
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    assert lines[0] == "sinusoidal (120, 8) float32  base=10000 layout=interleaved start=0"
    # 120 × 8 = 960 values is under NumPy's summary threshold of 1000: every row is shown.
    assert len(lines) == 3 + 120
    assert lines[3 + 2].split() == [
        "2",
        "0.9093",
        "-0.4161",
        "0.1987",
        "0.9801",
        "0.0200",
        "0.9998",
        "0.0020",
        "1.0000",
    ]


def test_large_table_is_summarised_to_the_terminal_width(run) -> None:
    r = run("generate", "--len", 1000, "--dim", 64)
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines)
    assert [line.split()[0] for line in lines[3:10]] == ["0", "1", "2", "…", "997", "998", "999"]
    assert lines[1].split()[:5] == ["pos", "0", "1", "2", "3"]
    assert lines[1].split()[-4:] == ["60", "61", "62", "63"]
    assert "…" in lines[1]
    assert lines[-1] == "showing 6 of 1000 rows, 8 of 64 columns: --rows A:B / --cols C:D pick a window"


def test_rows_cols_precision_window(run) -> None:
    r = run("generate", "--len", 1000, "--dim", 64, "--rows", "5:7", "--cols", "62:", "--decimals", 6)
    assert r.exit_code == 0
    assert r.stdout.splitlines()[1:] == [
        "pos        62        63",
        "───────────────────────",
        "  5  0.000667  1.000000",
        "  6  0.000800  1.000000",
    ]


def test_rows_are_positions_with_start(run) -> None:
    r = run("generate", "--len", 10, "--dim", 2, "--start", 100, "--rows", "105:107")
    assert [line.split()[0] for line in r.stdout.splitlines()[3:]] == ["105", "106"]


def test_inspect_recipe_position(run) -> None:
    r = run("inspect", "--len", 120, "--dim", 8, "--pos", 2)
    assert r.exit_code == 0, r.stderr
    assert (
        r.stdout
        == """\
sinusoidal (120, 8) float32  base=10000 layout=interleaved start=0  position 2
col  i  fn     ω_i  wavelength  angle (rad)    value
────────────────────────────────────────────────────
  0  0  sin      1     6.28319            2   0.9093
  1  0  cos      1     6.28319            2  -0.4161
  2  1  sin    0.1     62.8319          0.2   0.1987
  3  1  cos    0.1     62.8319          0.2   0.9801
  4  2  sin   0.01     628.319         0.02   0.0200
  5  2  cos   0.01     628.319         0.02   0.9998
  6  3  sin  0.001     6283.19        0.002   0.0020
  7  3  cos  0.001     6283.19        0.002   1.0000
"""
    )


def test_inspect_position_json_is_exact(run) -> None:
    r = run("inspect", "--len", 120, "--dim", 8, "--pos", 2, "--json")
    doc = json.loads(r.stdout)
    exact = Sinusoidal(120, 8).build()[2]
    assert [np.float32(c["value"]) for c in doc["columns"]] == exact.tolist()
    assert doc["columns"][3] == {
        "col": 3,
        "i": 1,
        "fn": "cos",
        "omega": 0.1,
        "wavelength": pytest.approx(62.83185307),
        "angle": pytest.approx(0.2),
        "value": 0.9800666,
    }
    assert doc["recipe"]["layout"] == "interleaved"


def test_inspect_file_without_recipe_shows_index_and_value(run, tmp_path: Path) -> None:
    path = tmp_path / "plain.npy"
    np.save(path, np.array([[1.5, -2.0], [0.25, 4.0]], dtype=np.float32))
    r = run("inspect", path, "--pos", 1)
    assert r.exit_code == 0, r.stderr
    assert r.stdout.splitlines()[1:] == ["col   value", "───────────", "  0  0.2500", "  1  4.0000"]


def test_inspect_file_header_stats_window(run, tmp_path: Path) -> None:
    path = tmp_path / "t.h5"
    assert run("generate", "--len", 120, "--dim", 8, "-o", path).exit_code == 0
    r = run("inspect", path)
    assert r.exit_code == 0, r.stderr
    out = r.stdout
    for line in (
        "shape       (120, 8)",
        "dtype       float32, little-endian",
        "dataset     /pe",
        "layout      contiguous",
        "compression none",
    ):
        assert line.replace(" ", "") in out.replace(" ", "")
    assert "recipe sinusoidal length=120 dim=8 base=10000 layout=interleaved start=0 dtype=float32" in " ".join(
        out.split()
    )
    stats_line = out.splitlines()[
        out.splitlines().index(next(s for s in out.splitlines() if s.strip().startswith("min"))) + 2
    ]
    table = Sinusoidal(120, 8).build().astype(np.float64)
    assert stats_line.split() == [
        f"{table.min():.4f}",
        f"{table.max():.4f}",
        f"{table.mean():.4f}",
        f"{table.std():.4f}",
        "2.0000",
        "2.0000",
    ]
    assert out.splitlines()[-1] == "showing 6 of 120 rows, 8 of 8 columns: --rows A:B / --cols C:D pick a window"


def test_inspect_file_json(run, tmp_path: Path) -> None:
    path = tmp_path / "t.npy"
    run("generate", "--len", 50, "--dim", 6, "--start", 3, "-o", path)
    doc = json.loads(run("inspect", path, "--json").stdout)
    table = Sinusoidal(50, 6, start=3).build()
    assert doc["shape"] == [50, 6] and doc["dtype"] == "float32"
    assert doc["recipe"]["start"] == 3
    assert doc["stats"]["max"] == pytest.approx(float(table.max()))
    assert doc["window"]["positions"] == [3, 4, 5, None, 50, 51, 52]
    assert doc["window"]["values"][0] == [float(str(v)) for v in table[0]]


def test_stdout_gets_data_only(run) -> None:
    r = run("generate", "--len", 3, "--dim", 4, "-o", "-", "--to", "csv")
    assert r.exit_code == 0 and r.stderr == ""
    assert r.stdout == (
        "d0,d1,d2,d3\n0,1,0,1\n0.841470957,0.540302277,0.00999983307,0.999949992\n"
        "0.909297407,-0.416146845,0.0199986659,0.999800026\n"
    )


def test_npy_to_stdout_is_a_valid_npy(run) -> None:
    import io

    r = run("generate", "--len", 7, "--dim", 5, "--dtype", "float64", "-o", "-", "--to", "npy")
    assert r.exit_code == 0
    got = np.load(io.BytesIO(r.stdout_bytes), allow_pickle=False)
    assert np.array_equal(got, Sinusoidal(7, 5, dtype="float64").build())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["generate", "--len", "0", "--dim", "8"],
            "length must be at least 1, got 0: give the number of positions, e.g. --len 120",
        ),
        (["generate", "--len", "-3", "--dim", "8"], "length must be at least 1, got -3"),
        (["generate", "--len", "1.5", "--dim", "8"], "Invalid value for '--len': '1.5' is not a valid integer."),
        (["generate", "--len", "abc", "--dim", "8"], "Invalid value for '--len': 'abc' is not a valid integer."),
        (
            ["generate", "--len", "5", "--dim", "0"],
            "dim must be at least 1, got 0: give the model width d_model, e.g. --dim 8",
        ),
        (["generate", "--len", "5"], "Missing option --dim: a recipe needs --len N and --dim D (or --preset NAME)."),
        (["generate", "--len", "5", "--dim", "4", "--base", "1"], "base must be a finite number > 0 and ≠ 1, got 1.0"),
        (["generate", "--len", "5", "--dim", "4", "--base", "0"], "base must be a finite number > 0 and ≠ 1, got 0.0"),
        (
            ["generate", "--len", "5", "--dim", "4", "--base", "-2"],
            "base must be a finite number > 0 and ≠ 1, got -2.0",
        ),
        (
            ["generate", "--len", "5", "--dim", "4", "--base", "inf"],
            "base must be a finite number > 0 and ≠ 1, got inf",
        ),
        (
            ["generate", "--len", "5", "--dim", "4", "--base", "nan"],
            "base must be a finite number > 0 and ≠ 1, got nan",
        ),
        (["generate", "--len", "5", "--dim", "4", "--start", "-1"], "start must be at least 0, got -1"),
        (
            ["generate", "--len", "5", "--dim", "4", "--layout", "diagonal"],
            "Invalid value for '--layout': 'diagonal' is not one of 'interleaved', 'split', 'cos-first', 'half', 'pairs', 'once'.",
        ),
        (
            ["generate", "--len", "5", "--dim", "4", "--dtype", "int8"],
            "Invalid value for '--dtype': 'int8' is not one of",
        ),
        (
            ["generate", "--len", "5", "--dim", "4", "-o", "x.npy", "--to", "xls"],
            "Invalid value for '--to': 'xls' is not one of",
        ),
        (
            ["generate", "--len", "5", "--dim", "4", "-o", "-"],
            "writing to stdout needs --to, e.g. --to npy or --to csv",
        ),
        (
            ["generate", "--len", "5", "--dim", "4", "-o", "-", "--to", "h5"],
            "h5 cannot be written to a stream (it needs a seekable file): give a file path",
        ),
        (["generate", "--len", "5", "--dim", "4", "--rows", "9:12"], "--rows 9:12 is outside 0:5 or empty"),
        (["generate", "--len", "5", "--dim", "4", "--rows", "x"], "'x' is not a span like 10:20, 10: or :20"),
        (["generate", "--len", "5", "--dim", "4", "--cols", "3:2"], "--cols 3:2 is outside 0:4 or empty"),
        (
            ["generate", "--len", "100000", "--dim", "4", "--rows", "0:20000"],
            "--rows asks for 20000 rows, more than the 10000 a terminal view shows",
        ),
        (
            ["generate", "--len", str(2**53), "--dim", "4", "--start", "1"],
            "positions must stay below 2**53 to be exact",
        ),
        (
            ["generate", "--len", "5", "--dim", "4", "--base", "1e-300"],
            "base 1e-300 makes angles too large to compute accurately",
        ),
        (
            ["generate", "--len", "5", "--dim", "4", "--decimals", "30"],
            "Invalid value for '--decimals': 30 is not in the range 0<=x<=17.",
        ),
        (["inspect", "--len", "5", "--dim", "4", "--pos", "5"], "--pos 5 is outside the table's positions 0..4"),
        (
            ["inspect", "--len", "5", "--dim", "4", "--start", "10", "--pos", "2"],
            "--pos 2 is outside the table's positions 10..14",
        ),
        (
            ["inspect"],
            "give a SOURCE (a file, FILE:KEY or sinusoidal:len=N,dim=D) or recipe options such as --len 120 --dim 8",
        ),
        (["inspect", "nope.npy"], "nope.npy does not exist: check the path"),
        (["inspect", "table.xyz"], "does not exist"),
        (["frobnicate"], "No such command 'frobnicate'."),
    ],
)
def test_bad_input_is_one_line_exit_2(run, args: list[str], message: str) -> None:
    r = run(*args)
    assert r.exit_code == 2, r.output
    assert r.stdout == ""
    assert r.stderr.count("\n") == 1, r.stderr  # exactly one line
    assert r.stderr.startswith("Error: ")
    assert message in r.stderr
    assert "Traceback" not in r.stderr


def test_file_and_recipe_together_is_refused(run, tmp_path: Path) -> None:
    path = tmp_path / "t.npy"
    run("generate", "--len", 5, "--dim", 4, "-o", path)
    r = run("inspect", path, "--len", 5)
    assert r.exit_code == 2
    assert (
        r.stderr
        == f"Error: give a SOURCE or recipe options, not both (--len given with {path}) (see 'pecli inspect --help')\n"
    )


def test_help_states_exit_codes(run) -> None:
    r = run("--help")
    assert r.exit_code == 0
    text = " ".join(r.stdout.split())
    assert "Exit status: 0 success; 1 tables differ ('diff'); 2 error" in text
    assert "130 interrupted" in text


def test_every_command_and_option_has_help(run) -> None:
    for name, command in cli.commands.items():
        assert command.help, f"{name} has no help text"
        for param in command.params:
            if isinstance(param, click.Option):
                assert param.help, f"{name} {param.opts} has no help"
        r = run(name, "--help")
        assert r.exit_code == 0 and "Exit status" in r.stdout


def test_version(run) -> None:
    from pecli import __version__

    r = run("--version")
    assert r.exit_code == 0
    assert r.stdout.startswith(f"pecli {__version__} (Python ")
    assert "numpy" in r.stdout and "h5py" in r.stdout


def test_no_args_shows_help_exit_2(run) -> None:
    r = run()
    assert r.exit_code == 2
    assert "Usage: pecli" in r.stderr


def test_inspect_position_columns_window(run) -> None:
    r = run("inspect", "--len", 4096, "--dim", 512, "--pos", 1000, "--cols", "2:4")
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.splitlines()
    assert [line.split()[:3] for line in lines[3:]] == [["2", "1", "sin"], ["3", "1", "cos"]]
    exact = Sinusoidal(4096, 512, dtype="float64").build()[1000, 2:4]
    assert [float(line.split()[-1]) for line in lines[3:]] == [round(float(v), 4) for v in exact]


def test_rows_with_pos_is_refused(run) -> None:
    r = run("inspect", "--len", 10, "--dim", 4, "--pos", 1, "--rows", "0:3")
    assert (r.exit_code, r.stderr) == (2, "Error: --rows and --pos exclude each other: --pos P explains one position\n")


def test_a_table_a_million_columns_wide_prints_its_edges(run, tmp_path) -> None:
    """Only the columns that can fit the terminal are formatted (before, every cell of every column
    was: minutes for this table)."""
    import numpy as np

    np.save(tmp_path / "wide.npy", np.zeros((2, 10**6), np.float32))
    r = run("inspect", str(tmp_path / "wide.npy"), "--rows", "0:2")
    assert r.exit_code == 0, r.output
    grid = r.stdout.splitlines()
    assert any(line.rstrip().endswith("999999") and "…" in line for line in grid), r.stdout
    assert max(len(line) for line in grid if "0.0000" in line or "999999" in line) <= 80


def test_hf_config_is_on_the_help_of_every_command_that_builds_a_recipe(run) -> None:
    """Where a recipe starts from (--preset, --hf-config, --kind) is no kind's parameter: each is
    on every page (--hf-config was hidden as an option "of fewer than two kinds")."""
    for command in ("generate", "export", "inspect", "identify", "analyze", "plot"):
        out = run(command, "--help").output
        assert all(opt in out for opt in ("--preset NAME", "--hf-config CONFIG", "--kind")), command


def test_recipe_options_with_a_source_are_spelled_as_typed(run, tmp_path) -> None:
    path = tmp_path / "t.npy"
    assert run("generate", "--len", "4", "--dim", "4", "-o", path).exit_code == 0
    r = run("inspect", path, "--padding-idx", "1")
    assert r.exit_code == 2
    assert f"(--padding-idx given with {path})" in r.output  # was --padding_idx


def test_help_options_keeps_bracketed_text(run) -> None:
    """`[f0, f0, f1, f1, …]` was read as Rich markup and dropped ("pairs =  (GPT-J")."""
    out = run("help", "options").output
    assert "pairs = [f0, f0, f1, f1, …] (GPT-J, lucidrains)" in out
    assert "half = [f0…f_{h−1}, f0…f_{h−1}] (HF rotate_half" in " ".join(out.split())
