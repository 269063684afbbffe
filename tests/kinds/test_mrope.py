"""The mrope kind (multimodal RoPE of Qwen2-VL and Qwen2.5-VL): its ids, its table, its errors and
its inverse.

Golden values come from outside pecli: the worked example in the docstring of transformers 5.23's
``get_rope_index`` (Qwen2.5-VL: 3 temporal patches of 2×2, fps 1, tokens_per_second 25,
temporal_patch_size 2, so temporal ids 25·2/1 = 50 apart), the Qwen2-VL paper's rule worked by hand
(Wang et al. 2024 §2.1: text ids count on, a grid's ids start at the next position, the next
modality starts at the largest id plus one) and the float64 closed form ``cos(id_k(i)·θ^(−2i/d))``.
The conformance group (tests/conformance/test_mrope_vs_transformers.py) checks transformers' own code.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pecli.identification import identify
from pecli.kinds.mrope import Mrope, position_ids, sequence_of
from pecli.kinds.rope import Rope
from pecli.presets import get_preset
from pecli.sources import parse_recipe
from pecli.table import Table

f32 = np.float32


def test_the_worked_example_of_get_rope_index() -> None:
    # transformers 5.23, Qwen2_5_VLModel.get_rope_index's docstring: second_per_grid_t = 2/1 s.
    ids = position_ids("video=3x2x2@2", tokens_per_second=25)
    assert ids.tolist() == [
        [0, 0, 0, 0, 50, 50, 50, 50, 100, 100, 100, 100],
        [0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1],
        [0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1],
    ]
    # Qwen2-VL's rule (no tokens_per_second): the same grid, frames one position apart.
    assert position_ids("video=3x2x2")[0].tolist() == [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]


def test_text_counts_on_after_an_image_as_the_paper_says() -> None:
    # 2 text tokens (ids 0, 1); a 2×3 image from id 2 (h 2..3, w 2..4); text from max id 4 + 1 = 5.
    assert position_ids("text=2;image=1x2x3;text=2").tolist() == [
        [0, 1, 2, 2, 2, 2, 2, 2, 5, 6],
        [0, 1, 2, 2, 2, 3, 3, 3, 5, 6],
        [0, 1, 2, 3, 4, 2, 3, 4, 5, 6],
    ]


def test_after_a_video_with_more_frames_than_rows_text_starts_where_transformers_523_does() -> None:
    # The paper (and transformers up to 5.2) start the text at the largest id + 1 = 5; 5.23 at
    # start + max(h, w) = 1 + 2 = 3, inside the frames' temporal ids (docs/recipes.md says so).
    assert position_ids("text=1;video=4x1x2;text=1").tolist() == [
        [0, 1, 1, 2, 2, 3, 3, 4, 4, 3],
        [0, 1, 1, 1, 1, 1, 1, 1, 1, 3],
        [0, 1, 2, 1, 2, 1, 2, 1, 2, 3],
    ]


def test_fractional_seconds_space_frames_as_torch_truncates_a_float32_product() -> None:
    # 3 fps: second_per_grid_t = 2/3 (float32 0.6666667); 2 × that = 1.3333334; ids trunc(f·1.3333334).
    assert position_ids("video=5x1x1@0.6666667", tokens_per_second=2)[0].tolist() == [0, 1, 2, 4, 5]


def test_a_text_only_sequence_is_the_plain_rope_table() -> None:
    assert np.array_equal(position_ids("text=5"), np.tile(np.arange(5), (3, 1)))
    for compute in ("float32", "exact"):
        for part in ("cos", "sin", "angle", "inv_freq"):
            ours = Mrope(64, "text=300", 10000.0, "8;12;12", part=part, compute=compute).build()  # type: ignore[arg-type]
            assert np.array_equal(ours, Rope(300, 64, 10000.0, part=part, compute=compute).build()), (part, compute)  # type: ignore[arg-type]


def closed_form(
    dim: int, sequence: str, base: float, sections: list[int], part: str, tps: float | None = None
) -> np.ndarray:
    """cos/sin of ``id_k(i)·base^(−2i/dim)`` in float64, section k's frequencies on id row k, twice."""
    ids = position_ids(sequence, tokens_per_second=tps).astype(np.float64)
    axis = np.repeat(np.arange(3), sections)
    angle = ids[axis].T * base ** (-np.arange(0, dim, 2) / dim)
    half = np.cos(angle) if part == "cos" else np.sin(angle)
    return np.concatenate([half, half], axis=1)


@pytest.mark.parametrize("part", ["cos", "sin"])
def test_each_section_takes_its_own_axis(part: str) -> None:
    seq, sections = "text=3;image=1x3x4;text=2;video=3x2x2@0.5;text=2", [3, 4, 5]
    want = closed_form(24, seq, 1e6, sections, part, tps=2.0)
    exact = Mrope(24, seq, 1e6, "3;4;5", 2.0, part, compute="exact").build()  # type: ignore[arg-type]
    assert np.all(np.abs(exact - want) <= np.spacing(np.abs(want).astype(f32)))  # within 1 float32 ulp
    pipeline = Mrope(24, seq, 1e6, "3;4;5", 2.0, part).build()  # type: ignore[arg-type]
    assert np.abs(pipeline - want).max() <= 4 * 2.0**-24 * 12


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("compute", ["float32", "exact"])
@pytest.mark.parametrize("part", ["cos", "sin", "angle"])
def test_any_row_range_is_the_whole_tables_rows(part: str, compute: str, dtype: str) -> None:
    recipe = Mrope(32, "text=7;image=1x5x6;text=4;video=3x3x2@1.5;text=9", 1e6, "4;6;6", 2.0, part, compute, dtype)  # type: ignore[arg-type]
    whole = recipe.build()
    n = whole.shape[0]
    assert n == 7 + 30 + 4 + 18 + 9
    for a, b in [(0, 1), (5, 9), (8, 40), (36, 59), (58, n), (0, n), (n, n)]:
        assert np.array_equal(recipe.rows(a, b), whole[a:b]), (a, b)


@pytest.mark.parametrize(
    ("sequence", "tps"),
    [
        ("text=16;image=1x8x8;text=8", None),
        ("image=1x4x6;text=3;video=5x2x3;text=1", None),
        ("text=2;video=4x3x3@0.5;text=2;image=1x1x5;text=1", 2.0),
        ("text=4;video=3x2x2@2;text=3", 25.0),
    ],
)
def test_ids_give_their_sequence_back(sequence: str, tps: float | None) -> None:
    ids = position_ids(sequence, tokens_per_second=tps)
    assert sequence_of(ids, tps) == sequence
    assert sequence_of(ids[:2], tps) == sequence  # temporal and height alone say the grids
    assert sequence_of(ids[::-1]) is None  # not Qwen's rule


def test_the_operand_and_metadata_keep_the_sequence_whole() -> None:
    recipe = get_preset("qwen2.5-vl").recipe(part="sin")
    assert parse_recipe(recipe.spec()) == recipe  # ";" inside KIND:NAME=VALUE,...
    assert Mrope(128, "text=2, image=1x2x2 ,text=1", mrope_section=[16, 24, 24]).sequence == "text=2;image=1x2x2;text=1"


def test_the_presets() -> None:
    assert get_preset("qwen2-vl").recipe().shape == (88, 128)
    assert get_preset("qwen2.5-vl").recipe().shape == (128, 128)
    # The image-only default is the same table whichever model's rule: 2.5 only spaces video frames.
    assert np.array_equal(
        get_preset("qwen2.5-vl").recipe(sequence="text=16;image=1x8x8;text=8").build(),
        get_preset("qwen2-vl").recipe().build(),
    )


BAD = [
    (
        ["--dim", "128", "--mrope-section", "16;24;20"],
        "mrope_section 16;24;20 covers 60 frequencies but a rotary dim of 128 has dim/2 = 64: give sections summing to 64, e.g. --mrope-section '16;24;24'",
    ),
    (["--dim", "128", "--mrope-section", "32;32"], "mrope_section must be three whole numbers ≥ 1"),
    (
        ["--dim", "128", "--sequence", "text=4,picture=1x2x2"],
        "sequence segment 'picture=1x2x2' is not text=N, image=TxHxW or video=TxHxW[@S]: give e.g. --sequence text=16,image=1x8x8,text=8",
    ),
    (["--dim", "128", "--sequence", "text=4,image=1x2"], "sequence segment 'image=1x2' is not text=N"),
    (
        ["--dim", "128", "--sequence", "text=4,image=1x0x6"],
        "sequence segment 'image=1x0x6' has a zero size: every count is at least 1",
    ),
    (["--dim", "128", "--sequence", "text=0"], "sequence segment 'text=0' has a zero size"),
    (
        ["--dim", "128", "--sequence", ""],
        "sequence is empty: give its segments, e.g. --sequence text=16,image=1x8x8,text=8",
    ),
    (
        ["--dim", "128", "--sequence", "image=1x2x2,image=1x2x2"],
        "has two image segments in a row, which transformers' get_rope_index groups into one",
    ),
    (
        ["--dim", "128", "--sequence", "video=2x2x2@2"],
        "seconds per frame space a video's frames with --tokens-per-second (Qwen2.5-VL: 2)",
    ),
    (
        ["--dim", "128", "--sequence", "video=2x2x2@0", "--tokens-per-second", "2"],
        "the seconds per frame after @ must be a number > 0",
    ),
    (["--dim", "127", "--sequence", "text=3"], "dim 127 is odd"),
    (
        ["--dim", "128"],
        "a mrope recipe needs sequence, e.g. --kind mrope --dim 128 --sequence text=16;image=1x8x8;text=8",
    ),
]


@pytest.mark.parametrize(("args", "message"), BAD, ids=[str(i) for i in range(len(BAD))])
def test_bad_recipes_are_one_line_errors_with_exit_2(run, args: list[str], message: str) -> None:
    if "--sequence" not in args and "needs sequence" not in message:
        args = [*args, "--sequence", "text=3"]
    r = run("generate", "--kind", "mrope", *args)
    assert r.exit_code == 2 and r.stdout == "", (r.exit_code, r.output)
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_the_sequence_alone_implies_the_kind(run) -> None:
    r = run("generate", "--sequence", "text=2,image=1x2x2", "--dim", "12", "--mrope-section", "2;2;2", "--cols", "0:1")
    assert r.exit_code == 0 and r.stdout.startswith("mrope (6, 12) float32"), r.output
    assert run("help", "recipes", "mrope").exit_code == 0


def test_identify_names_the_preset_of_a_table_with_a_video(tmp_path: Path) -> None:
    table = get_preset("qwen2.5-vl").recipe().build()
    result = identify(Table(table, None, "cache"))
    assert result.verdict == "match" and result.kind == "mrope" and result.names == ("qwen2.5-vl",)
    assert result.best is not None and result.best.atol == 0


def test_identify_finds_sequence_theta_and_sections(tmp_path: Path) -> None:
    recipe = Mrope(48, "text=5;image=1x6x9;text=4;video=4x2x4;text=6", 10000.0, "6;9;9", part="sin")
    result = identify(Table(recipe.build(), None, "cache"))
    assert result.verdict == "match" and result.best is not None and result.best.recipe == recipe


def test_a_text_only_table_is_named_rope(tmp_path: Path) -> None:
    # The same table as rope's: identify reports the simpler kind (docs/recipes.md).
    result = identify(Table(Mrope(128, "text=200").build(), None, "cache"))
    assert result.verdict == "match" and result.kind == "rope"


# -- explicit position ids (--positions) -------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float64"])
@pytest.mark.parametrize("compute", ["float32", "exact"])
@pytest.mark.parametrize("part", ["cos", "sin", "angle"])
def test_rows_at_ids_are_the_rows_of_the_tokens_with_those_ids(part: str, compute: str, dtype: str) -> None:
    recipe = Mrope(32, "text=7;image=1x5x6;text=4;video=3x3x2@1.5;text=9", 1e6, "4;6;6", 2.0, part, compute, dtype)  # type: ignore[arg-type]
    ids = position_ids(recipe.sequence, tokens_per_second=2.0)
    whole = recipe.build()
    assert recipe.rows_at(ids).tobytes() == whole.tobytes()
    order = np.array([40, 3, 3, 0, 67, 12])  # any tokens, any order, repeats
    assert recipe.rows_at(ids[:, order]).tobytes() == whole[order].tobytes()
    assert recipe.recipe_at(ids) == recipe and recipe.recipe_at(ids[:, order]) is None


def test_a_padded_batch_of_ids_from_a_file(run, tmp_path: Path) -> None:
    # The (3, batch, tokens) shape get_rope_index returns; 5.23 leaves padding tokens at id 0.
    a = position_ids("text=3;image=1x2x2;text=1")
    b = np.zeros_like(a)
    b[:, 3:] = position_ids("text=2;image=1x1x3")
    np.save(tmp_path / "ids.npy", np.stack([a, b], axis=1))
    r = run(
        "generate",
        "--kind",
        "mrope",
        "--dim",
        "12",
        "--mrope-section",
        "2;2;2",
        "--positions",
        f"@{tmp_path / 'ids.npy'}",
        "-o",
        tmp_path / "out.npy",
    )
    assert r.exit_code == 0, r.output
    want = closed_form(12, "text=3;image=1x2x2;text=1", 1e6, [2, 2, 2], "cos")
    out = np.load(tmp_path / "out.npy")
    assert out.shape == (16, 12) and not (tmp_path / "out.npy.json").exists()  # no sequence, no recipe
    assert np.abs(out[:8] - want).max() <= 4 * 2.0**-24 * 4
    assert np.array_equal(out[8:11], np.tile(out[:1], (3, 1)))  # padding: all ids 0, the first row


def test_ids_in_json_and_text_and_as_a_list(run, tmp_path: Path) -> None:
    ids = position_ids("text=2;image=1x2x3;text=1")
    (tmp_path / "ids.json").write_text(str(ids.tolist()))
    (tmp_path / "ids.txt").write_text("\n".join(" ".join(map(str, row)) for row in ids.tolist()))
    base = ["generate", "--kind", "mrope", "--dim", "12", "--mrope-section", "2;2;2"]
    want = run(*base, "--sequence", "text=2;image=1x2x3;text=1").stdout
    for name in ("ids.json", "ids.txt"):
        r = run(*base, "--positions", f"@{tmp_path / name}")
        assert r.exit_code == 0 and r.stdout == want, r.output  # the ids follow get_rope_index: the recipe
    # 1-D ids are text tokens: three equal ids each.
    r = run(*base, "--positions", "4:6", "--cols", "0:2")
    text = Mrope(12, "text=6", mrope_section="2;2;2").rows(4, 6)[:, :2]
    assert r.exit_code == 0 and f"{text[1, 1]:.4f}" in r.stdout


@pytest.mark.parametrize(
    ("ids", "option", "message"),
    [
        (
            np.zeros((2, 5), dtype=np.int64),
            "--positions",
            "M-RoPE position ids have 3 rows (temporal, height, width), got an array of shape (2, 5)",
        ),
        (
            np.zeros((3, 2, 2, 2), dtype=np.int64),
            "--positions",
            "holds an array of shape (3, 2, 2, 2): give a non-empty list of ids (1-D)",
        ),
        (np.full((3, 4), 0.5), "--positions", "holds float64 values that are not whole numbers"),
        (np.zeros((3, 4), dtype=np.int64), "--token-ids", "give this mrope table's ids with --positions"),
    ],
)
def test_bad_ids_are_one_line_errors_and_nothing_is_written(
    run, tmp_path: Path, ids: np.ndarray, option: str, message: str
) -> None:
    np.save(tmp_path / "ids.npy", ids)
    r = run("generate", "--preset", "qwen2-vl", option, f"@{tmp_path / 'ids.npy'}", "-o", tmp_path / "out.npy")
    assert r.exit_code == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.output
    assert not (tmp_path / "out.npy").exists()


def test_inv_freq_has_no_rows_for_ids(run) -> None:
    r = run("generate", "--preset", "qwen2-vl", "--part", "inv_freq", "--positions", "0:3")
    assert r.exit_code == 2 and "M-RoPE rows need 3 rows of position ids" in r.stderr, r.output


def test_part_ids_writes_get_rope_indexs_ids_one_token_per_row() -> None:
    # Worked by hand (get_rope_index): text 0, 1, 2; the 1×2×3 image starts at 3, (t, h, w) =
    # (3, 3 + row, 3 + col); the text after it starts past the largest id so far, 5 + 1 = 6.
    table = Mrope(128, "text=3;image=1x2x3;text=2", part="ids").build()
    assert table.shape == (11, 3) and table.tolist() == [
        [0, 0, 0], [1, 1, 1], [2, 2, 2],
        [3, 3, 3], [3, 3, 4], [3, 3, 5], [3, 4, 3], [3, 4, 4], [3, 4, 5],
        [6, 6, 6], [7, 7, 7],
    ]  # fmt: skip
    np.testing.assert_array_equal(table.T, position_ids("text=3;image=1x2x3;text=2"))
    from pecli.errors import RecipeError

    with pytest.raises(RecipeError, match=r"the position ids reach 299, past .* bfloat16 .* use dtype=float32"):
        Mrope(128, "text=300", part="ids", dtype="bfloat16")


def test_part_ids_at_given_ids_is_those_ids() -> None:
    # --positions @ids.npy with --part ids: the ids given, one token per row (not cos of them).
    ids = np.array([[0, 1, 2, 2, 2], [0, 1, 2, 3, 3], [0, 1, 2, 2, 3]])
    np.testing.assert_array_equal(Mrope(128, "text=1", part="ids").rows_at(ids), ids.T.astype(np.float32))
