"""The axial kind (diffusers' per-axis rotary embeddings, Flux): its ids, its table, its errors and
its inverse.

Golden values come from outside pecli: Flux's ids as ``FluxPipeline._prepare_latent_image_ids``
defines them (text all zero, then ``(0, row, col)`` row by row) worked by hand, and the float64
closed form ``cos(id_k·(θ·ntk)^(−2i/a_k)/linear)`` written element by element below.  The
conformance group (tests/conformance/test_axial_vs_diffusers.py) checks diffusers' own code.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from pecli.errors import RecipeError
from pecli.identification import identify
from pecli.kinds.axial import Axial, token_ids
from pecli.presets import get_preset
from pecli.sources import parse_recipe
from pecli.table import Table


def closed_form(ids: list[tuple[int, ...]], axes: list[int], fn, layout: str = "pairs", theta: float = 10000.0,
                linear: float = 1.0, ntk: float = 1.0) -> np.ndarray:  # fmt: skip
    """Each token's row in plain Python float64: per axis ``fn(id·(θ·ntk)^(−2i/a)/linear)``."""
    rows = []
    for token in ids:
        row: list[float] = []
        for p, a in zip(token, axes, strict=True):
            values = [fn(p * (1 / (theta * ntk) ** (2 * i / a)) / linear) for i in range(a // 2)]
            row += [v for v in values for _ in (0, 1)] if layout == "pairs" else values + values
        rows.append(row)
    return np.array(rows)


def test_flux_ids_worked_by_hand() -> None:
    # Two text tokens, then a 2×3 latent grid read row by row: (0, row, col).
    assert token_ids("text=2;image=2x3", 3).T.tolist() == [
        [0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 1], [0, 0, 2], [0, 1, 0], [0, 1, 1], [0, 1, 2],
    ]  # fmt: skip


@pytest.mark.parametrize("part", ["cos", "sin"])
@pytest.mark.parametrize("layout", ["pairs", "half"])
def test_the_table_is_the_closed_form_per_axis(part: str, layout: str) -> None:
    recipe = Axial("4;6;8", "text=3;image=5x7", base=1000.0, layout=layout, part=part, dtype="float64")  # type: ignore[arg-type]
    ids = [tuple(t) for t in token_ids("text=3;image=5x7", 3).T.tolist()]
    expected = closed_form(ids, [4, 6, 8], math.cos if part == "cos" else math.sin, layout, 1000.0)
    assert recipe.shape == (38, 18)
    np.testing.assert_allclose(recipe.build(), expected, rtol=0, atol=1e-15)
    exact = Axial("4;6;8", "text=3;image=5x7", base=1000.0, layout=layout, part=part, compute="exact")  # type: ignore[arg-type]
    np.testing.assert_allclose(exact.build(), expected, rtol=0, atol=2**-24)


@pytest.mark.parametrize("compute", ["float64", "float32", "exact"])
def test_one_axis_is_get_1d_rotary_pos_embed_with_its_factors(compute: str) -> None:
    recipe = Axial("16", length=300, linear_factor=2.0, ntk_factor=4.0, layout="half", compute=compute)  # type: ignore[arg-type]
    expected = closed_form([(p,) for p in range(300)], [16], math.cos, "half", linear=2.0, ntk=4.0)
    tolerance = 4 * 2.0**-24 * 300 if compute == "float32" else 2.0**-24
    np.testing.assert_allclose(recipe.build(), expected, rtol=0, atol=tolerance)
    angle = Axial("16", length=300, linear_factor=2.0, ntk_factor=4.0, part="angle", dtype="float64").build()
    assert angle[7, 2] == 7 * (1.0 / 40000.0 ** (2 / 16)) / 2.0


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("compute", ["float64", "float32", "exact"])
@pytest.mark.parametrize("part", ["cos", "sin", "angle"])
def test_any_row_range_is_the_whole_tables_rows(part: str, compute: str, dtype: str) -> None:
    recipe = Axial("4;6;6", "text=7;image=5x6;text=4;image=3x2", part=part, compute=compute, dtype=dtype)  # type: ignore[arg-type]
    whole = recipe.build()
    n = whole.shape[0]
    assert n == 7 + 30 + 4 + 6
    for a, b in [(0, 1), (5, 9), (8, 40), (36, n), (0, n), (n, n)]:
        assert np.array_equal(recipe.rows(a, b), whole[a:b]), (a, b)


def test_the_flux_preset_and_its_operand() -> None:
    recipe = get_preset("flux").recipe()
    assert recipe.shape == (512 + 64 * 64, 128) and recipe.compute == "float64"
    assert np.all(recipe.rows(0, 513) == 1)  # text and the grid's (0, 0, 0) token: every angle 0
    assert parse_recipe(recipe.spec()) == recipe  # ";" and "=" inside KIND:NAME=VALUE,...
    assert Axial([16, 56, 56], "text=2, image=2x2").axes_dim == "16;56;56"  # type: ignore[arg-type]


BAD = [
    (["--axes-dim", "16;55;56", "--tokens", "text=2;image=2x2"], "axes_dim 16;55;56 has odd 55, but rotary"),
    (
        ["--axes-dim", "16;56;56", "--dim", "64", "--tokens", "text=2;image=2x2"],
        "axes_dim 16;56;56 sums to 128, but --dim is 64: give sizes summing to the head dim",
    ),
    (
        ["--axes-dim", "16;56", "--tokens", "image=2x2"],
        "image and video tokens have three ids (frame, row, col), but axes_dim 16;56 has 2 axes",
    ),
    (["--axes-dim", "16;56;56", "--len", "10"], "--len gives one axis of positions, but axes_dim 16;56;56 has 3"),
    (["--axes-dim", "x", "--len", "10"], "axes_dim must be whole numbers ≥ 2, one per axis"),
    (
        ["--axes-dim", "16;56;56", "--tokens", "text=2;picture=2x2"],
        "tokens segment 'picture=2x2' is not text=N, image=HxW or video=TxHxW: give e.g. --tokens text=512;image=64x64",
    ),
    (["--axes-dim", "16;56;56", "--tokens", "text=2;image=2"], "tokens segment 'image=2' is not text=N"),
    (["--axes-dim", "16;56;56", "--tokens", ";"], "no tokens given: give the segments"),
    (
        ["--axes-dim", "16;56;56", "--tokens", "text=2;image=0x4"],
        "tokens segment 'image=0x4' has a zero size: every count is at least 1",
    ),
    (["--axes-dim", "16;56;56", "--tokens", "text=0"], "tokens segment 'text=0' has a zero size"),
    (["--axes-dim", "16;56;56"], "an axial recipe needs --tokens (e.g. text=512;image=64x64) or --len"),
    (["--axes-dim", "8", "--len", "4", "--tokens", "text=4"], "give one of them, not both"),
    (["--axes-dim", "8", "--len", "4", "--ntk-factor", "0"], "ntk_factor must be a finite number > 0"),
    (["--len", "4"], "an axial recipe needs axes-dim, e.g. --kind axial --axes-dim 16;56;56"),
]


@pytest.mark.parametrize(("args", "message"), BAD, ids=[str(i) for i in range(len(BAD))])
def test_bad_recipes_are_one_line_errors_with_exit_2(run, args: list[str], message: str) -> None:
    r = run("generate", "--kind", "axial", *args)
    assert r.exit_code == 2 and r.stdout == "", (r.exit_code, r.output)
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_axes_dim_implies_the_kind(run) -> None:
    r = run("generate", "--axes-dim", "2;2;2", "--tokens", "text=1;image=2x2", "--cols", "0:1")
    assert r.exit_code == 0 and r.stdout.startswith("axial (5, 6) float32"), r.output
    assert run("help", "recipes", "axial").exit_code == 0


@pytest.mark.parametrize("part", ["cos", "sin"])
def test_identify_names_flux_over_the_tables_own_sequence(tmp_path: Path, part: str) -> None:
    table = get_preset("flux").recipe(tokens="text=40;image=12x20", part=part).build()
    result = identify(Table(table, None, "cache"))
    assert result.verdict == "match" and result.kind == "axial" and "flux" in result.names
    assert result.best is not None and result.best.recipe.tokens == "text=40;image=12x20"  # type: ignore[attr-defined]


def test_video_tokens_have_frame_row_col_ids_in_c_order() -> None:
    ids = token_ids("text=3;video=2x3x4", 3)
    frame, row, col = np.unravel_index(np.arange(24), (2, 3, 4))
    np.testing.assert_array_equal(ids[:, :3], np.zeros((3, 3)))
    np.testing.assert_array_equal(ids[:, 3:], np.stack([frame, row, col]))
    # any row range is the same ids as the whole sequence
    np.testing.assert_array_equal(token_ids("text=3;video=2x3x4", 3, 10, 20), ids[:, 10:20])


def test_a_video_table_is_each_axis_rotated_by_its_own_id() -> None:
    # Float64 closed form: token (t, h, w) → [cos(t·ω_t) pairs | cos(h·ω_h) pairs | cos(w·ω_w) pairs].
    table = Axial("4;6;6", tokens="video=2x3x4", compute="exact").build()
    frame, row, col = np.unravel_index(np.arange(24), (2, 3, 4))
    blocks = []
    for pos, a in ((frame, 4), (row, 6), (col, 6)):
        omega = 10000.0 ** (-np.arange(0, a, 2) / a)
        blocks.append(np.repeat(np.cos(pos[:, None] * omega), 2, axis=1))
    np.testing.assert_allclose(table, np.concatenate(blocks, axis=1), rtol=0, atol=2.0**-24)


@pytest.mark.parametrize(
    ("tokens", "axes", "message"),
    [
        ("video=2x3", "4;6;6", "is not text=N, image=HxW or video=TxHxW"),
        ("video=0x3x4", "4;6;6", "has a zero size"),
        ("video=2x3x4", "16", "image and video tokens have three ids (frame, row, col)"),
    ],
)
def test_bad_video_segments_are_refused(tokens: str, axes: str, message: str) -> None:
    with pytest.raises(RecipeError, match=re.escape(message)):
        Axial(axes, tokens=tokens)


def test_cogvideox_crop_positions_worked_by_hand() -> None:
    # 20×36 patches into CogVideoX's 30×45 base: r = 20/36 < 30/45, so the width fills 45 and the
    # height is round(45/36·20) = 25; top = round(2.5) = 2 (Python rounds half to even), left 0.
    # Rows: torch.linspace(2, 27·19/20, 20) = 2 + k·(23.65/19); columns 0 … 44 spaced 45/36·(35/35).
    from pecli.kinds.axial import crop_positions, segments

    rows, cols = crop_positions(segments("video=2x20x36")[0], "30x45")
    assert rows[0] == 2 and rows[-1] == np.float32(27 * 19 / 20) and len(rows) == 20
    np.testing.assert_allclose(np.diff(rows), 23.65 / 19, rtol=1e-6)
    assert cols[0] == 0 and cols[-1] == np.float32(45 * 35 / 36) and len(cols) == 36
    # at the base grid itself: whole positions, the table without --base-grid
    rows, cols = crop_positions(segments("video=1x30x45")[0], "30x45")
    np.testing.assert_array_equal(rows, np.arange(30)) and np.testing.assert_array_equal(cols, np.arange(45))
    at_base = Axial("16;24;24", tokens="video=2x30x45", compute="float32", base_grid="30x45").build()
    np.testing.assert_array_equal(at_base, Axial("16;24;24", tokens="video=2x30x45", compute="float32").build())


def test_crop_positions_are_torch_linspace_in_float32() -> None:
    torch = pytest.importorskip("torch")
    from pecli.kinds.axial import _linspace32

    for n in range(1, 120):
        for start, stop in ((0, n), (2, 27), (4, 55), (3, 47), (0, 1), (12, 32)):
            theirs = torch.linspace(start, stop * (n - 1) / n, n, dtype=torch.float32).numpy()
            np.testing.assert_array_equal(
                _linspace32(start, stop, n), theirs.astype(np.float64), err_msg=f"{n} {start}"
            )


def test_identify_reads_a_cropped_video_grid_that_starts_off_the_origin() -> None:
    # One frame whose first token is (0, 0, 3): no text-then-image sequence (it raised before), the preset's video.
    table = get_preset("cogvideox-5b-rope").recipe(tokens="video=1x7x9").build()
    found = identify(Table(table, None, "crop"))
    assert found.verdict == "match" and found.best is not None, found.summary
    assert found.best.recipe.tokens == "video=1x7x9" and found.best.recipe.base_grid == "30x45"


def test_base_grid_needs_a_video() -> None:
    with pytest.raises(RecipeError, match="base_grid places a video's rows and columns"):
        Axial("16;56;56", tokens="text=4;image=2x2", base_grid="30x45")
    with pytest.raises(RecipeError, match="is not HxW"):
        Axial("16;24;24", tokens="video=1x2x2", base_grid="30")


def test_part_ids_writes_fluxs_ids_one_token_per_row(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # FluxPipeline's txt_ids (zeros) then latent_image_ids (0, row, col), as the table --part ids writes.
    table = get_preset("flux").recipe(tokens="text=2;image=2x3", part="ids").build()
    assert table.dtype == np.float32 and table.tolist() == [
        [0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 1], [0, 0, 2], [0, 1, 0], [0, 1, 1], [0, 1, 2],
    ]  # fmt: skip
    r = run("generate", "--preset", "flux", "--tokens", "image=20x20", "--part", "ids", "--dtype", "float16")
    assert r.exit_code == 0, r.output  # ids up to 19: exact in float16
    r = run("generate", "--kind", "axial", "--axes-dim", "64", "--len", "300", "--part", "ids", "--dtype", "bfloat16")
    assert r.exit_code == 2 and "past the whole numbers bfloat16 holds exactly (2**8)" in r.stderr, r.output
