"""Explicit positions (``--positions``, ``--token-ids``): rows of any positions, in any order,
for every kind whose rows are positions, shown and written in every format.

Truth: the published formula in float64 (``tests.helpers.reference``), fairseq's ``make_positions``
rule worked by hand, and the rows of the contiguous table (a position's row never depends on
which other rows are asked for).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pecli
from pecli import open_table
from pecli.formats import FORMATS
from pecli.kinds import kinds
from pecli.positions import fairseq_positions, parse_ids
from pecli.presets import get_preset
from pecli.sources import parse_recipe
from pecli.table import Table
from tests.helpers import reference, reference_tolerance


def test_a_list_of_ranges_and_single_positions() -> None:
    assert parse_ids("0:3, 10 ,2:4", "--positions").tolist() == [0, 1, 2, 10, 2, 3]


def test_fairseq_positions_worked_by_hand() -> None:
    # fairseq's make_positions, padding_idx 1: tokens numbered 2, 3, … along each sequence,
    # padding tokens (id 1) at 1, whether the padding is on the right or on the left.
    ids = np.array([[0, 9, 9, 2, 1, 1], [1, 1, 0, 9, 2, 2]])
    assert fairseq_positions(ids, 1).tolist() == [[2, 3, 4, 5, 1, 1], [1, 1, 2, 3, 4, 5]]


def test_positions_are_the_published_formula_at_those_positions(run, tmp_path: Path) -> None:
    positions = [0, 1, 2, 0, 1, 500, 7, 7]
    r = run(
        "generate",
        "--len",
        "512",
        "--dim",
        "16",
        "--dtype",
        "float64",
        "--positions",
        "0:3,0:2,500,7,7",
        "-o",
        tmp_path / "p.npy",
    )
    assert r.exit_code == 0, r.output
    got = np.load(tmp_path / "p.npy")
    want = reference(512, 16)[positions]
    assert np.max(np.abs(got - want)) <= reference_tolerance(0, 512)


@pytest.mark.parametrize("kind", [k for k, cls in kinds().items() if cls.row_label == "pos"])
def test_every_kind_with_positions_gives_the_rows_of_its_whole_table(kind: str) -> None:
    import shlex

    example = shlex.split(kinds()[kind].example)
    pairs, i = [], 0
    while i < len(example):
        name = example[i].lstrip("-")
        if name != "kind":
            pairs.append(f"{name.replace('-', '_')}={example[i + 1]}")
        i += 2
    recipe = parse_recipe(f"{kind}:" + ",".join(pairs))
    n = recipe.shape[0]
    rng = np.random.default_rng(0)
    positions = np.r_[rng.integers(0, n, 40), np.arange(min(n, 30)), [n - 1, 0, n - 1]] + recipe.start
    table = Table.from_recipe(recipe).gather(positions)
    whole = recipe.build()
    assert np.array_equal(table.rows(0, table.shape[0]), whole[positions - recipe.start])
    assert [table.position_of(r) for r in range(3)] == positions[:3].tolist()


def test_positions_count_from_the_recipes_start(run, tmp_path: Path) -> None:
    r = run(
        "generate", "--len", "8", "--dim", "4", "--start", "100", "--positions", "107,100", "-o", tmp_path / "s.npy"
    )
    assert r.exit_code == 0, r.output
    whole = parse_recipe("sinusoidal:len=8,dim=4,start=100").build()
    assert np.array_equal(np.load(tmp_path / "s.npy"), whole[[7, 0]])


def test_the_terminal_view_labels_rows_with_their_positions(run) -> None:
    r = run("generate", "--len", "600", "--dim", "4", "--positions", "3,599,0")
    assert r.exit_code == 0
    lines = r.output.splitlines()
    assert lines[0].endswith("(3, 4) float32  at the positions given")
    assert [line.split()[0] for line in lines[3:6]] == ["3", "599", "0"]


@pytest.mark.parametrize(
    "fmt", [f for f in FORMATS.values() if f.read is not None and f.write is not None], ids=lambda f: f.name
)
def test_token_ids_from_a_file_stream_into_every_format(run, tmp_path: Path, fmt) -> None:
    if fmt.requires:
        pytest.importorskip(fmt.requires)
    ids = np.array([[0, 17, 23, 2, 1, 1], [1, 0, 5, 5, 5, 2]])
    np.save(tmp_path / "ids.npy", ids)
    out = tmp_path / f"pe{fmt.extensions[0]}"
    r = run(
        "generate",
        "--preset",
        "fairseq",
        "--len",
        "32",
        "--dim",
        "8",
        "--token-ids",
        f"@{tmp_path / 'ids.npy'}",
        "-o",
        out,
    )
    assert r.exit_code == 0, r.output
    whole = parse_recipe("fairseq:len=32,dim=8").build()
    with open_table(out) as t:
        assert t.shape == (12, 8) and t.recipe is None  # rows at positions are not what the recipe builds
        assert np.array_equal(t.rows(0, 12), whole[fairseq_positions(ids, 1).reshape(-1)])


def test_ids_from_text_and_json_files(tmp_path: Path) -> None:
    (tmp_path / "ids.txt").write_text("5 6 7\n5 1 1\n")
    (tmp_path / "ids.json").write_text("[3, 2, 1]")
    assert parse_ids(f"@{tmp_path / 'ids.txt'}", "--token-ids").tolist() == [[5, 6, 7], [5, 1, 1]]
    assert parse_ids(f"@{tmp_path / 'ids.json'}", "--positions").tolist() == [3, 2, 1]


def test_export_of_a_file_at_positions(run, tmp_path: Path) -> None:
    table = parse_recipe("sinusoidal:len=64,dim=8").build()
    np.save(tmp_path / "pe.npy", table)
    r = run("export", tmp_path / "pe.npy", "--positions", "63,0:2", "-o", tmp_path / "few.csv")
    assert r.exit_code == 0, r.output
    with open_table(tmp_path / "few.csv") as t:
        assert np.array_equal(t.rows(0, 3), table[[63, 0, 1]])


def test_the_library_takes_positions_as_an_array_and_as_text() -> None:
    """``pecli.positions.rows_at_positions`` is what --positions runs, callable with a script's own ids."""
    import pecli
    from pecli.positions import rows_at_positions

    table = pecli.Table.from_recipe(pecli.Sinusoidal(64, 8, dtype="float64"))
    ids = np.array([5, 0, 5, 63])
    got = rows_at_positions(table, ids)
    # Each row is the table's row at that position, labelled with it.
    np.testing.assert_array_equal(got.rows(0, 4), np.concatenate([table.rows(i, i + 1) for i in ids]))
    assert [got.position_of(r) for r in range(4)] == [5, 0, 5, 63]
    np.testing.assert_array_equal(rows_at_positions(table, "5,0,5,63").rows(0, 4), got.rows(0, 4))
    # A rotary cache's rows are whole positions (a sinusoid's formula takes real ones: below).
    with pytest.raises(
        pecli.PecliInputError, match=r"fractional positions \(e.g. 0.5\), and a rope table.s rows are whole"
    ):
        rows_at_positions(pecli.Table.from_recipe(pecli.Rope(length=64, dim=8)), [0.5])


@pytest.mark.parametrize("layout", ["interleaved", "split", "cos-first"])
def test_real_positions_are_the_closed_form_rounded_once(layout: str) -> None:
    # Fractional positions (diffusion timesteps such as 0.5): sin and cos of p·base^(−2i/d) in
    # float64, rounded once to float32 (|Δ| ≤ half a float32 ulp of values ≤ 1: 2⁻²⁴).
    from pecli.positions import rows_at_positions

    p = np.array([0.5, 1.25, 7.0, 99.999, 3e-7])
    table = rows_at_positions(pecli.Table.from_recipe(pecli.Sinusoidal(length=100, dim=10, layout=layout)), p)
    ours = table.rows(0, len(p))
    omega = 10000.0 ** (-np.arange(0, 10, 2) / 10)
    s, c = np.sin(p[:, None] * omega), np.cos(p[:, None] * omega)
    truth = {
        "interleaved": np.stack([s, c], axis=2).reshape(len(p), 10),
        "split": np.concatenate([s, c], axis=1),
        "cos-first": np.concatenate([c, s], axis=1),
    }[layout]
    assert np.all(np.abs(ours.astype(np.float64) - truth) <= 2.0**-24)
    assert table.recipe is None and [table.position_of(r) for r in range(3)] == [0.5, 1.25, 7]
    # whole positions given as floats are the table's own rows, bit for bit
    whole = rows_at_positions(pecli.Table.from_recipe(pecli.Sinusoidal(length=100, dim=10, layout=layout)), "3,7.0")
    np.testing.assert_array_equal(whole.rows(0, 2), pecli.Sinusoidal(length=100, dim=10, layout=layout).build()[[3, 7]])


def test_real_positions_of_a_bfloat16_table_are_the_closed_form_rounded_to_bfloat16() -> None:
    # bfloat16 has 8 significant bits: the float64 closed form rounded to bfloat16 is within half a
    # bfloat16 ulp (2⁻⁹ for values ≤ 1) of it, and these values are far from bfloat16 midpoints.
    from pecli.positions import rows_at_positions

    p = np.array([0.5, 1.25, 99.75])
    table = rows_at_positions(pecli.Table.from_recipe(pecli.Sinusoidal(length=100, dim=6, dtype="bfloat16")), p)
    ours = table.rows(0, len(p))
    assert str(ours.dtype) == "bfloat16"
    omega = 10000.0 ** (-np.arange(0, 6, 2) / 6)
    truth = np.stack([np.sin(p[:, None] * omega), np.cos(p[:, None] * omega)], axis=2).reshape(len(p), 6)
    assert np.all(np.abs(ours.astype(np.float64) - truth) <= 2.0**-9)


def test_real_positions_on_the_command_line_and_from_a_file(run, tmp_path: Path) -> None:
    (tmp_path / "t.txt").write_text("0.5\n999.5\n")
    out = tmp_path / "t.npy"
    r = run("generate", "--preset", "sd3-timesteps", "--positions", f"@{tmp_path / 't.txt'}", "-o", out)
    assert r.exit_code == 0, r.output
    rows = np.load(out)
    assert rows.shape == (2, 256) and not (tmp_path / "t.npy.json").exists()  # rows at positions: no recipe
    direct = pecli.Sinusoidal(**get_preset("sd3-timesteps").recipe().params()).rows_at_real(np.array([0.5, 999.5]))
    np.testing.assert_array_equal(rows, direct)
    r = run("generate", "--len", "8", "--dim", "4", "--positions", "0.5,2", "--decimals", "3")
    assert r.exit_code == 0 and [line.split()[0] for line in r.output.splitlines()[3:5]] == ["0.5", "2"], r.output


def espnet_rel_pe(length: int, d: int) -> np.ndarray:
    """ESPnet's ``RelPositionalEncoding.extend_pe`` in NumPy (each float32 step rounded once): sin/cos
    of ``p·div_term`` interleaved for ``p = length−1 … 0`` (``pe_positive`` flipped), then ``−1 … −(length−1)``."""
    from tests.helpers import f32_step

    f32 = np.float32
    div = f32_step(np.exp, np.arange(0, d, 2).astype(f32) * f32(-(np.log(10000.0) / d)))
    position = np.arange(0, length, dtype=f32)[:, None]

    def pe(p: np.ndarray) -> np.ndarray:
        out = np.zeros((p.shape[0], d), dtype=f32)
        angle = (p * div[None, :]).astype(f32)
        out[:, 0::2], out[:, 1::2] = f32_step(np.sin, angle), f32_step(np.cos, angle)
        return out

    return np.concatenate([pe(position)[::-1], pe(f32(-1) * position)[1:]])


def test_signed_relative_positions_are_espnets_table(run, tmp_path: Path) -> None:
    # issue 41: --positions takes negative distances for a sinusoid (ESPnet, Transformer-XL), counted
    # down with a step; the table reaches −(len−1)…len−1, as RelPositionalEncoding(max_len) does.
    out = tmp_path / "rel.npy"
    r = run(
        "generate", "--kind", "sinusoidal", "--len", "50", "--dim", "64", "--layout", "interleaved",
        "--compute", "float32", "--form", "exp", "--positions=49:-50:-1", "-o", str(out),
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    np.testing.assert_array_equal(np.load(out), espnet_rel_pe(50, 64))
    assert parse_ids("3:-2:-1,-7", "--positions", signed=True).tolist() == [3, 2, 1, 0, -1, -7]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--kind", "rope", "--len", "8", "--dim", "8", "--positions=-1:2"], "negative positions (e.g. -1)"),
        (["--len", "4", "--dim", "8", "--positions=-5"], "outside the table's span 0..4 (−3..4 for relative"),
        (["--len", "4", "--dim", "8", "--positions=3:0"], "or A:B:-1 to count down"),
        (["--len", "4", "--dim", "8", "--positions=0:4:0"], "has a step of 0"),
    ],
)
def test_signed_positions_where_they_cannot_be_are_one_line(run, tmp_path: Path, args: list[str], says: str) -> None:
    r = run("generate", *args, "-o", str(tmp_path / "x.npy"))
    assert r.exit_code == 2 and says in r.output and len(r.output.strip().splitlines()) == 1, r.output
    assert not (tmp_path / "x.npy").exists()
