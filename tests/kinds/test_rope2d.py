"""The rope2d kind (timm's 2-D and rotary-embedding-torch's axial rotary embeddings): the float64
closed form (sin, cos and angles, 2 and 3 axes), row order and ranges, bad input.

timm's own tables are in tests/conformance/test_rope2d_vs_timm.py, rotary-embedding-torch's in
tests/conformance/test_rope2d_vs_lucidrains.py.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from pecli.cli import cli
from pecli.errors import RecipeError
from pecli.kinds.rope2d import Rope2d
from pecli.presets import get_preset


def closed_angles(
    sizes: tuple[int, ...],
    dim: int,
    bands: str,
    *,
    base: float = 10000.0,
    max_res: int = 224,
    linear: bool = False,
    ref: tuple[int, ...] | None = None,
) -> np.ndarray:
    """Angles coordinate·band ``(cells, n·dim/2)`` in float64, cells in C order, each band twice,
    written from timm's (and rotary-embedding-torch's) definition (independent of pecli)."""
    q = dim // 4
    k = np.arange(q)
    if bands == "lang":
        omega = 1.0 / base ** (k / q)
        axes = [np.arange(s, dtype=np.float64) for s in sizes]
    else:
        t = k / (q - 1) if q > 1 else k * 0.0
        omega = math.pi * (1 + t * (max_res / 2 - 1)) if linear else math.pi * 2.0 ** (t * (math.log2(max_res) - 1))
        axes = [np.linspace(-1.0, 1.0, s) for s in sizes]
    if ref is not None:
        axes = [a / s * r for a, s, r in zip(axes, sizes, ref, strict=True)]
    grids = np.meshgrid(*axes, indexing="ij")
    angle = np.concatenate([g.reshape(-1, 1) * omega for g in grids], axis=1)
    return np.repeat(angle, 2, axis=1)


def closed_form(sizes: tuple[int, ...], dim: int, bands: str, **kw: Any) -> tuple[np.ndarray, np.ndarray]:
    """sin and cos of :func:`closed_angles`."""
    angle = closed_angles(sizes, dim, bands, **kw)
    return np.sin(angle), np.cos(angle)


CASES = [
    ("lang", (4, 6), 16, {}),
    ("lang", (5, 3), 32, {"base": 100.0, "ref": (16, 16)}),
    ("pixel", (7, 7), 64, {}),
    ("pixel", (3, 9), 32, {"linear": True, "max_res": 384}),
    ("pixel", (6, 4), 16, {"ref": (14, 14)}),
    ("lang", (2, 3, 4), 8, {"base": 100.0}),
    ("pixel", (3, 5, 7), 32, {"linear": True, "max_res": 256}),
    ("pixel", (2, 4, 3), 16, {"ref": (4, 4, 4)}),
    ("lang", (5, 3, 2), 24, {"ref": (8, 8, 8)}),
]
IDS = [f"{c[0]}-{'x'.join(map(str, c[1]))}-{c[2]}" for c in CASES]


def _recipe(bands: str, sizes: tuple[int, ...], dim: int, kw: dict[str, Any], **more: object) -> Rope2d:
    ref = kw.get("ref")
    ref_shape = None if ref is None else "x".join(map(str, ref))
    args = (kw.get("base", 10000.0), kw.get("max_res", 224), kw.get("linear", False), ref_shape)
    return Rope2d("x".join(map(str, sizes)), dim, bands, *args, **more)  # type: ignore[arg-type]


@pytest.mark.parametrize(("bands", "sizes", "dim", "kw"), CASES, ids=IDS)
def test_the_float64_closed_form(bands: str, sizes: tuple[int, ...], dim: int, kw: dict[str, Any]) -> None:
    sin, cos = closed_form(sizes, dim, bands, **kw)
    exact = _recipe(bands, sizes, dim, kw, part="cat", compute="exact", dtype="float64").build()
    # Both are float64 evaluations of angles up to ~10³: they may differ by a few ulps of the angle.
    np.testing.assert_allclose(exact, np.concatenate([sin, cos], axis=1), rtol=0, atol=1e-12)
    for part, want in (("sin", sin), ("cos", cos)):
        f32 = _recipe(bands, sizes, dim, kw, part=part).build()
        assert f32.dtype == np.float32 and f32.shape == want.shape
        p = max(*sizes, 1) * (1.0 if bands == "lang" else math.pi * kw.get("max_res", 224) / 2)
        assert np.max(np.abs(f32 - want)) <= 4 * 2.0**-24 * max(1.0, p)


@pytest.mark.parametrize(("bands", "sizes", "dim", "kw"), CASES, ids=IDS)
def test_blocks_of_whole_lines_and_any_row_range_are_the_closed_form(
    bands: str, sizes: tuple[int, ...], dim: int, kw: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whole lines of the grid are placed line by line (broadcast), partial ones cell by cell:
    blocks of two lines, three threads, ranges from and to mid-line, and a class token's row first
    or last, all the closed form (float64 exact: within the closed form's own rounding)."""
    import pecli.kernels.exact as exact_kernel
    from pecli.kernels.threads import set_threads

    sin, cos = closed_form(sizes, dim, bands, **kw)
    want = np.concatenate([sin, cos], axis=1)
    monkeypatch.setattr(exact_kernel, "BLOCK_CELLS", 2 * sizes[-1] * want.shape[1])
    set_threads(3)
    try:
        zero = np.concatenate([np.zeros(want.shape[1] // 2), np.ones(want.shape[1] // 2)])[None]  # angle 0
        for cls_row in ("none", "first", "last"):
            table = {"first": np.concatenate([zero, want]), "last": np.concatenate([want, zero])}.get(cls_row, want)
            recipe = _recipe(bands, sizes, dim, kw, part="cat", compute="exact", dtype="float64", cls_row=cls_row)
            np.testing.assert_allclose(recipe.build(), table, rtol=0, atol=1e-12)
            n = len(table)
            for a, b in [(0, 1), (1, n), (n // 3, n - 1), (sizes[-1] // 2, sizes[-1] * 2 + 1)]:
                if a < b <= n:
                    np.testing.assert_allclose(recipe.rows(a, b), table[a:b], rtol=0, atol=1e-12, err_msg=f"{a}..{b}")
    finally:
        set_threads(None)


@pytest.mark.parametrize(
    ("bands", "sizes", "cls_row"),
    [
        ("lang", (2, 700), "none"),
        ("pixel", (700, 2), "first"),
        ("lang", (1, 900), "last"),
        ("pixel", (3, 2, 300), "first"),
    ],
)
def test_a_long_axis_is_built_for_the_cells_a_row_range_touches(
    bands: str, sizes: tuple[int, ...], cls_row: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A block of a long grid (a streamed file, ``diff`` reading one) computes its own cells'
    sines, not its axes' every one (each block used to build the whole axis: a 1×400000 grid's
    blocks took 23× its build): ranges inside a line, across a line's end (the coordinates
    wrap) and over whole lines are the closed form, and no table is longer than the range."""
    import pecli.kinds.rope2d as rope2d_kind

    built: list[int] = []
    real = rope2d_kind.sin_cos_rounded

    def counted(angle: np.ndarray, dtype: Any) -> Any:
        built.append(len(angle))
        return real(angle, dtype)

    monkeypatch.setattr(rope2d_kind, "sin_cos_rounded", counted)
    sin, cos = closed_form(sizes, 16, bands)
    want = np.concatenate([sin, cos], axis=1)
    zero = np.concatenate([np.zeros(want.shape[1] // 2), np.ones(want.shape[1] // 2)])[None]  # angle 0
    table = {"first": np.concatenate([zero, want]), "last": np.concatenate([want, zero])}.get(cls_row, want)
    recipe = _recipe(bands, sizes, 16, {}, part="cat", compute="exact", dtype="float64", cls_row=cls_row)
    n = len(table)
    for a, b in [(0, 1), (1, 40), (650, 760), (1, n), (n - 3, n), (n // 2, n // 2 + 1)]:
        built.clear()
        np.testing.assert_allclose(recipe.rows(a, b), table[a:b], rtol=0, atol=1e-12, err_msg=f"{a}..{b}")
        assert max(built, default=0) <= b - a + 1, (a, b, built)


@pytest.mark.parametrize(("bands", "sizes", "dim", "kw"), CASES, ids=IDS)
def test_the_angle_part_is_coordinate_times_band(
    bands: str, sizes: tuple[int, ...], dim: int, kw: dict[str, Any]
) -> None:
    want = closed_angles(sizes, dim, bands, **kw)
    p = float(np.max(np.abs(want)))  # the largest angle
    exact = _recipe(bands, sizes, dim, kw, part="angle", compute="exact", dtype="float64").build()
    assert exact.shape == want.shape == (math.prod(sizes), len(sizes) * dim // 2)
    np.testing.assert_allclose(exact, want, rtol=0, atol=4 * 2.0**-53 * max(1.0, p))
    f32 = _recipe(bands, sizes, dim, kw, part="angle").build()
    assert f32.dtype == np.float32 and np.max(np.abs(f32 - want)) <= 4 * 2.0**-24 * max(1.0, p)
    if bands == "lang":
        assert not np.any(f32[0])  # cell (0, …, 0): a zero row


def test_three_axes_run_in_c_order() -> None:
    recipe = Rope2d("2x3x4", 8, "lang", part="angle")
    assert recipe.shape == (24, 12) and recipe.axes == (2, 3, 4)
    table = recipe.build()
    # Band 0 is 1: columns 0, 4 and 8 are the cell's (t, h, w), the first axis slowest.
    assert np.array_equal(table[:, [0, 4, 8]], np.array(list(np.ndindex(2, 3, 4)), dtype=np.float32))
    assert np.array_equal(table[:, 0::2], table[:, 1::2])
    assert Rope2d("2x3x4", 8, "lang", part="cat").shape == (24, 24)
    assert Rope2d("2x3x4", 8, "lang").wavelengths().shape == (24,)


@pytest.mark.parametrize("part", ["cat", "sin", "cos", "angle"])
@pytest.mark.parametrize("compute", ["float32", "exact"])
@pytest.mark.parametrize(("grid", "ref"), [("5x7", "4x4"), ("3x4x5", "4x6x2")])
def test_row_ranges_equal_the_whole_tables_rows(part: str, compute: str, grid: str, ref: str) -> None:
    recipe = Rope2d(grid, 24, "pixel", ref_feat_shape=ref, part=part, compute=compute)  # type: ignore[arg-type]
    whole = recipe.build()
    n = whole.shape[0]
    for a, b in ((0, 1), (3, 11), (n - 1, n), (0, n), (12, 12)):
        assert np.array_equal(recipe.rows(a, b), whole[a:b])
    assert get_preset("eva02").recipe().rows(200, 256).shape == (56, 128)
    assert get_preset("lucidrains-axial").recipe().rows(16000, 16384).shape == (384, 48)


BAD = [
    (
        ["--feat-shape", "16", "--dim", "64", "--bands", "lang"],
        "feat_shape must look like HxW or TxHxW with sizes ≥ 1, got '16'",
    ),
    (["--feat-shape", "0x4", "--dim", "64", "--bands", "lang"], "give e.g. --feat-shape 16x16"),
    (["--feat-shape", "4x4", "--dim", "30", "--bands", "lang"], "dim 30 must be a multiple of 4"),
    (["--feat-shape", "4x4", "--dim", "2", "--bands", "lang"], "dim must be at least 4, got 2"),
    (
        ["--feat-shape", "4x4", "--dim", "8", "--bands", "lang", "--base", "1"],
        "base must be a finite number > 0 and ≠ 1",
    ),
    (["--feat-shape", "4x4", "--dim", "8", "--bands", "pixel", "--max-res", "1"], "max_res must be at least 2, got 1"),
    (
        ["--feat-shape", "4x4", "--dim", "8", "--bands", "lang", "--ref-feat-shape", "16by16"],
        "give e.g. --ref-feat-shape 16x16",
    ),
    (["--feat-shape", "4x4", "--dim", "8"], "a rope2d recipe needs bands, e.g. --kind rope2d --feat-shape 16x16"),
    (
        ["--feat-shape", "8x16x16", "--dim", "8", "--bands", "lang", "--ref-feat-shape", "16x16"],
        "ref_feat_shape 16x16 has 2 axes but feat_shape 8x16x16 has 3: give as many, e.g. --ref-feat-shape 16x16x16",
    ),
    (["--feat-shape", "2x3x4x5", "--dim", "8", "--bands", "lang"], "got '2x3x4x5': give e.g. --feat-shape 16x16"),
    (["--feat-shape", "1x0", "--dim", "8", "--bands", "lang"], "got '1x0': give e.g. --feat-shape 16x16"),
    (["--feat-shape", "4x4x0", "--dim", "8", "--bands", "lang"], "with sizes ≥ 1, got '4x4x0'"),
]


@pytest.mark.parametrize(("args", "message"), BAD, ids=[str(i) for i in range(len(BAD))])
def test_bad_recipes_are_one_line_errors_with_exit_2(run, args: list[str], message: str) -> None:
    r = run("generate", "--kind", "rope2d", *args)
    assert r.exit_code == 2 and r.stdout == "", (r.exit_code, r.output)
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert r.stderr.startswith("Error:")


@pytest.mark.parametrize(("option", "value"), [("--bands", "words"), ("--part", "tan")])
def test_bad_choices_are_refused(run, option: str, value: str) -> None:
    r = run("generate", "--kind", "rope2d", "--feat-shape", "4x4", "--dim", "8", "--bands", "lang", option, value)
    assert r.exit_code == 2 and r.stdout == "" and "Traceback" not in r.stderr


def test_generate_a_3_axis_angle_table(run) -> None:
    r = run("generate", "--kind", "rope2d", "--feat-shape", "2x3x4", "--dim", "8", "--bands", "lang", "--part", "angle")
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("rope2d (24, 12) float32  feat_shape=2x3x4 bands=lang part=angle")


def test_identify_names_lucidrains_axial_on_another_grid(tmp_path: Path) -> None:
    """The preset's recipe on a 3x4x5 grid (no stored recipe): the grid is read from the rows."""
    path = tmp_path / "axial.npy"
    np.save(path, get_preset("lucidrains-axial").recipe(feat_shape="3x4x5").build())
    doc = json.loads(CliRunner().invoke(cli, ["identify", str(path), "--json"]).stdout)
    assert doc["verdict"] == "match" and doc["best"]["name"] == "lucidrains-axial", doc
    assert doc["best"]["recipe"]["feat_shape"] == "3x4x5" and doc["best"]["recipe"]["part"] == "angle"


def test_identify_reads_a_lang_angle_table_with_its_zero_row(tmp_path: Path) -> None:
    path = tmp_path / "lang.npy"
    np.save(path, Rope2d("4x8x8", 32, "lang", part="angle").build())
    with np.errstate(all="raise"):
        r = CliRunner().invoke(cli, ["identify", str(path), "--json"])
    assert r.exit_code == 0 and r.exception is None, r.output
    assert json.loads(r.stdout)["verdict"] in ("unknown", "close", "match")


def _closed_form(h: int, w: int, dim: int, base: float, layout: str, indexing: str) -> np.ndarray:
    """sin of every cell's per-axis angles ``c·base^(−k/q)`` in float64, arranged as timm's
    ``_rope_layout`` does: the axes' bands (``xy``: width's first), then each twice in place
    (``pairs``) or the whole run twice (``half``)."""
    q = dim // 4
    bands = base ** (-np.arange(q) / q)
    rows, cols = np.divmod(np.arange(h * w), w)
    blocks = [np.sin(rows[:, None] * bands), np.sin(cols[:, None] * bands)]
    if indexing == "xy":
        blocks.reverse()
    x = np.concatenate(blocks, axis=1)
    return np.repeat(x, 2, axis=1) if layout == "pairs" else np.concatenate([x, x], axis=1)


@pytest.mark.parametrize("layout", ["pairs", "half"])
@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_layouts_and_column_orders_are_the_closed_form(layout: str, indexing: str) -> None:
    truth = _closed_form(5, 7, 16, 100.0, layout, indexing)
    ours = Rope2d("5x7", 16, "lang", 100.0, part="sin", compute="exact", layout=layout, grid_indexing=indexing).build()
    np.testing.assert_allclose(ours, truth, rtol=0, atol=2.0**-24)  # float64 sin, rounded once to float32


@pytest.mark.parametrize(
    "params",
    [
        {"feat_shape": "12x20", "dim": 64, "layout": "half"},
        {"feat_shape": "12x20", "dim": 64, "grid_indexing": "xy", "part": "cos"},
        {"feat_shape": "9x16", "dim": 32, "layout": "half", "grid_indexing": "xy", "base": 100.0},
        {"feat_shape": "3x4x6", "dim": 32, "grid_indexing": "xy", "part": "cat"},
        {"feat_shape": "12x20", "dim": 64, "bands": "pixel", "max_res": 448, "layout": "half"},
    ],
)
def test_identify_reads_layout_column_order_and_bands_without_a_preset(params: dict) -> None:
    from pecli.identification import identify

    recipe = Rope2d(**{"bands": "lang", "part": "sin", **params})
    found = identify(recipe.build())
    assert found.verdict == "match" and found.best is not None, found.summary
    assert found.best.recipe == recipe


def test_a_layout_rope2d_does_not_have_is_refused() -> None:
    with pytest.raises(RecipeError, match=r"unknown layout 'once': choose one of pairs, half"):
        Rope2d("4x4", 16, "lang", layout="once")  # type: ignore[arg-type]


def test_alternate_bands_are_pixtrals_closed_form() -> None:
    # transformers' PixtralVisionRotaryEmbedding: inv_freq = θ^(−2i/dim); height the even i, width the odd,
    # [h | w] twice; rows h-major cells.  Written here in float64 from that description.
    h, w, dim, theta = 3, 5, 16, 100.0
    inv = theta ** (-np.arange(0, dim, 2) / dim)
    cells = [(r, c) for r in range(h) for c in range(w)]
    angles = np.array([np.concatenate([r * inv[0::2], c * inv[1::2]]) for r, c in cells])
    for part, fn in (("cos", np.cos), ("sin", np.sin)):
        ours = Rope2d(f"{h}x{w}", dim, "lang", theta, part=part, layout="half", axis_bands="alternate",
                      compute="exact", dtype="float64").build()  # fmt: skip
        np.testing.assert_allclose(ours, np.hstack([fn(angles), fn(angles)]), rtol=0, atol=1e-15)
    # a user's own table: that closed form on a 6x8 grid, cast once to float32
    h, w, theta = 6, 8, 10000.0
    inv = theta ** (-np.arange(0, dim, 2) / dim)
    angles = np.array([np.concatenate([r * inv[0::2], c * inv[1::2]]) for r in range(h) for c in range(w)])
    recipe = identified(np.hstack([np.cos(angles), np.cos(angles)]).astype(np.float32))
    assert (recipe.feat_shape, recipe.axis_bands, recipe.layout, recipe.base) == ("6x8", "alternate", "half", theta)


def identified(table: np.ndarray) -> Rope2d:
    """identify's MATCH on a user's NumPy table, as a rope2d recipe that rebuilds it within float32 rounding."""
    from pecli.identification import identify
    from pecli.table import Table

    found = identify(Table(table, None, "mine"))
    assert found.verdict == "match" and found.best is not None, found.summary
    assert isinstance(found.best.recipe, Rope2d), found.best.recipe.describe()
    assert np.abs(found.best.recipe.build().astype(np.float64) - table).max() <= 2.0**-23
    return found.best.recipe


def test_alternate_bands_need_language_bands() -> None:
    with pytest.raises(RecipeError, match=r"axis_bands=alternate .* give bands=lang"):
        Rope2d("4x4", 16, "pixel", axis_bands="alternate")


def test_cis_pairs_from_index_1_with_a_last_class_row_are_torchtunes_closed_form() -> None:
    # torchtune's VisionRotaryPositionalEmbeddings(dim=D): θ_k = base^(−2k/D), k < D/2; a patch at
    # (y, x) of a P×P tile has [x+1, y+1]·θ, each (cos, sin) in turn; the CLS row last, angle 0.
    p, d_t, base = 3, 8, 10000.0
    theta = base ** (-np.arange(0, d_t, 2) / d_t)
    rows = [np.concatenate([(x + 1) * theta, (y + 1) * theta]) for y in range(p) for x in range(p)]
    angles = np.array([*rows, np.zeros(d_t)])
    expected = np.stack([np.cos(angles), np.sin(angles)], axis=-1).reshape(len(angles), -1)
    ours = Rope2d(f"{p}x{p}", 2 * d_t, "lang", base, part="cis", grid_indexing="xy", first_index=1, cls_row="last",
                  compute="exact", dtype="float64").build()  # fmt: skip
    np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-15)
    recipe = identified(expected.astype(np.float32))
    assert (recipe.part, recipe.first_index, recipe.cls_row, recipe.grid_indexing) == ("cis", 1, "last", "xy")
    first = Rope2d(f"{p}x{p}", 2 * d_t, "lang", base, part="cis", grid_indexing="xy", first_index=1, cls_row="first")
    assert np.array_equal(first.build()[0], np.tile([1.0, 0.0], d_t)) and first.rows(1, 10).shape == (9, 2 * d_t)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"bands": "pixel", "first_index": 1}, "first_index moves the cell indices of language bands"),
        ({"bands": "lang", "part": "cis", "layout": "half"}, "part=cis holds each band's (cos, sin) in turn"),
        ({"bands": "lang", "cls_row": "middle"}, "cls_row"),
    ],
)
def test_cis_and_class_rows_refuse_what_they_cannot_build(params: dict[str, Any], message: str) -> None:
    with pytest.raises(RecipeError, match=re.escape(message)):
        Rope2d("4x4", 16, **params)


def test_interleaved_axes_are_luminas_closed_form() -> None:
    # diffusers' get_2d_rotary_pos_embed_lumina: ω_k = θ^(−k/q) on both axes; a cell (r, c) holds
    # e^{i·r·ω_k}, e^{i·c·ω_k} in turn for each k: (cos, sin) pairs [h0, w0, h1, w1, …].
    h, w, dim = 3, 4, 16
    q = dim // 4
    omega = 10000.0 ** (-np.arange(q) / q)
    angles = np.array([np.stack([r * omega, c * omega], axis=1).ravel() for r in range(h) for c in range(w)])
    expected = np.stack([np.cos(angles), np.sin(angles)], axis=-1).reshape(h * w, -1)
    recipe = Rope2d(f"{h}x{w}", dim, "lang", part="cis", axis_columns="interleaved", compute="exact", dtype="float64")
    np.testing.assert_allclose(recipe.build(), expected, rtol=0, atol=1e-15)
    assert identified(expected.astype(np.float32)).axis_columns == "interleaved"
    waves = 2 * np.pi / omega
    np.testing.assert_allclose(recipe.wavelengths(), np.repeat(np.repeat(waves, 2), 2), rtol=1e-15)
    assert recipe.complex_pairs() and not Rope2d(f"{h}x{w}", dim, "lang").complex_pairs()
