"""Dialects and presets against the formulas of ../shared/reference/dialects.md, written out here
independently in plain NumPy (the frameworks' own code is checked in tests/conformance)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from pecli.errors import RecipeError
from pecli.kinds.sincos2d import Sincos2d
from pecli.kinds.sinusoidal import Sinusoidal
from pecli.making import make_recipe
from pecli.presets import PRESETS, get_preset
from pecli.sources import parse_recipe

f32 = np.float32


def EXP(x: np.ndarray) -> np.ndarray:
    return np.exp(x.astype(np.float64)).astype(f32)


def POW(b: float, x: np.ndarray) -> np.ndarray:
    return np.power(np.float64(b), x.astype(np.float64)).astype(f32)


def SIN(a: np.ndarray) -> np.ndarray:
    return np.sin(a.astype(np.float64)).astype(f32)


def COS(a: np.ndarray) -> np.ndarray:
    return np.cos(a.astype(np.float64)).astype(f32)


def fairseq_ref(n: int, d: int, padding_idx: int | None = None, cos_first: bool = False) -> np.ndarray:
    half = d // 2
    step = math.log(10000) / (half - 1)
    inv = EXP(np.arange(half, dtype=f32) * f32(-step))
    a = np.arange(n, dtype=f32)[:, None] * inv[None]
    e = np.concatenate([COS(a), SIN(a)] if cos_first else [SIN(a), COS(a)], 1)
    if d % 2:
        e = np.concatenate([e, np.zeros((n, 1), f32)], 1)
    if padding_idx is not None:
        e[padding_idx] = 0
    return e


def xlm_angles(n: int, d: int) -> np.ndarray:
    j = np.arange(d)
    return np.array([[pos / np.power(10000, 2 * (jj // 2) / d) for jj in j] for pos in range(n)])


def tatp_emb(n: int, c: int) -> np.ndarray:
    inv = f32(1) / POW(10000, np.arange(0, c, 2).astype(f32) / f32(c))
    a = np.arange(n, dtype=f32)[:, None] * inv[None]
    return np.stack([SIN(a), COS(a)], -1).reshape(n, -1)


def sc(pos: np.ndarray, q: int, t: float = 1e4, dt: type = np.float64) -> tuple[np.ndarray, np.ndarray]:
    om = dt(1) / (dt(t) ** (np.arange(q, dtype=dt) / dt(q)))
    if dt is f32:
        om = f32(1) / POW(t, np.arange(q, dtype=dt) / dt(q))
    a = pos.reshape(-1).astype(dt)[:, None] * om
    return (SIN(a), COS(a)) if dt is f32 else (np.sin(a), np.cos(a))


def mae_ref(d: int, g: int, cls: bool) -> np.ndarray:
    h, w = np.meshgrid(np.arange(g), np.arange(g), indexing="ij")
    sw, cw = sc(w, d // 4)
    sh, ch = sc(h, d // 4)
    e = np.concatenate([sw, cw, sh, ch], 1)
    return (np.concatenate([np.zeros((1, d)), e]) if cls else e).astype(f32)


def timm_ref(hh: int, ww: int, d: int, reverse: bool, interleave: bool) -> np.ndarray:
    s = (ww, hh) if reverse else (hh, ww)
    a0, a1 = np.meshgrid(np.arange(s[0]), np.arange(s[1]), indexing="ij")
    s0, c0 = sc(a0, d // 4, dt=f32)
    s1, c1 = sc(a1, d // 4, dt=f32)
    return np.concatenate([s0, c0, s1, c1] if interleave else [s0, s1, c0, c1], 1)


@pytest.mark.parametrize(("n", "d"), [(1026, 512), (100, 7), (40, 8)])
def test_fairseq_preset_is_the_fairseq_float32_pipeline(n: int, d: int) -> None:
    table = get_preset("fairseq").recipe(length=n - 2, dim=d).build()
    np.testing.assert_array_equal(table, fairseq_ref(n, d, padding_idx=1))
    assert not table[1].any() and table[2, d // 2] == COS(np.array([2.0]))[0]  # first token is row 2


def test_musicgen_is_cos_first_and_whisper_refuses_odd_widths() -> None:
    np.testing.assert_array_equal(
        get_preset("musicgen").recipe(length=300, dim=64).build(), fairseq_ref(300, 64, cos_first=True)
    )
    np.testing.assert_array_equal(get_preset("whisper").recipe(length=50, dim=64).build(), fairseq_ref(50, 64))
    with pytest.raises(RecipeError, match="odd"):
        get_preset("whisper").recipe(dim=65)


@pytest.mark.parametrize(("n", "d"), [(512, 512), (50, 7), (40, 9)])
def test_hf_float64_tables_are_bit_exact(n: int, d: int) -> None:
    a = xlm_angles(n, d)
    marian = np.empty((n, d), f32)
    s = (d + 1) // 2
    marian[:, :s], marian[:, s:] = np.sin(a[:, 0::2]), np.cos(a[:, 1::2])
    np.testing.assert_array_equal(get_preset("hf-marian").recipe(length=n, dim=d).build(), marian)
    xlm = np.empty((n, d), f32)
    xlm[:, 0::2], xlm[:, 1::2] = np.sin(a[:, 0::2]), np.cos(a[:, 1::2])
    np.testing.assert_array_equal(get_preset("hf-distilbert").recipe(length=n, dim=d).build(), xlm)


@pytest.mark.parametrize("ch", [64, 7, 10])
def test_positional_encodings_1d_truncates(ch: int) -> None:
    c = math.ceil(ch / 2) * 2
    np.testing.assert_array_equal(
        get_preset("positional-encodings-1d").recipe(length=30, dim=ch).build(), tatp_emb(30, c)[:, :ch]
    )


@pytest.mark.parametrize("ch", [64, 10, 6])
def test_positional_encodings_2d(ch: int) -> None:
    x, y = 5, 7
    c = int(np.ceil(ch / 4) * 2)
    e = np.zeros((x, y, 2 * c), f32)
    e[..., :c] = tatp_emb(x, c)[:, None]
    e[..., c:] = tatp_emb(y, c)[None]
    got = get_preset("positional-encodings-2d").recipe(grid=f"{x}x{y}", dim=ch).build()
    np.testing.assert_array_equal(got, e[..., :ch].reshape(x * y, ch))


def test_positional_encodings_3d() -> None:
    x, y, z, ch = 3, 4, 5, 10
    c = int(np.ceil(ch / 6) * 2)
    e = np.zeros((x, y, z, 3 * c), f32)
    e[..., :c] = tatp_emb(x, c)[:, None, None]
    e[..., c : 2 * c] = tatp_emb(y, c)[None, :, None]
    e[..., 2 * c :] = tatp_emb(z, c)[None, None]
    got = get_preset("positional-encodings-3d").recipe(grid=f"{x}x{y}x{z}", dim=ch).build()
    np.testing.assert_array_equal(got, e[..., :ch].reshape(-1, ch))


@pytest.mark.parametrize(("d", "g"), [(768, 14), (64, 16)])
def test_mae_is_bit_exact_and_has_a_zero_cls_row(d: int, g: int) -> None:
    got = get_preset("mae").recipe(grid=f"{g}x{g}", dim=d).build()
    np.testing.assert_array_equal(got, mae_ref(d, g, cls=True))
    assert got.shape == (1 + g * g, d) and not got[0].any()


@pytest.mark.parametrize(
    ("reverse", "interleave", "name"),
    [
        (False, False, "timm-sincos2d"),
        (False, True, "timm-sincos2d-interleave"),
        (True, False, "timm-sincos2d-reverse"),
    ],
)
def test_timm_orders(reverse: bool, interleave: bool, name: str) -> None:
    got = get_preset(name).recipe(grid="6x9", dim=64).build()
    np.testing.assert_array_equal(got, timm_ref(6, 9, 64, reverse, interleave))


@pytest.mark.parametrize(
    ("name", "grid", "reference"),
    [
        ("mae", "24x24", lambda: mae_ref(64, 24, cls=True)),
        ("timm-sincos2d", "20x17", lambda: timm_ref(20, 17, 64, False, False)),
        ("timm-sincos2d-reverse", "20x17", lambda: timm_ref(20, 17, 64, True, False)),
        ("moco-v3", "19x19", lambda: np.concatenate([np.zeros((1, 64), f32), timm_ref(19, 19, 64, True, True)])),
    ],
)
def test_grids_built_in_blocks_of_whole_lines_are_the_closed_form_in_any_row_range(
    name: str, grid: str, reference: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Blocks of whole grid lines are one broadcast copy per group, a range's partial lines are
    looked up cell by cell: small blocks (two lines of 17–24 cells), three threads, ranges that
    start and end mid-line, every one the closed form."""
    import pecli.kernels.exact as exact_kernel
    from pecli.kernels.threads import set_threads

    monkeypatch.setattr(exact_kernel, "BLOCK_CELLS", 64 * 48)
    recipe, expected = get_preset(name).recipe(grid=grid, dim=64), reference()
    set_threads(3)
    try:
        np.testing.assert_array_equal(recipe.build(), expected)
        for a, b in [(0, 1), (1, 2), (5, 77), (23, 300), (len(expected) - 30, len(expected))]:
            np.testing.assert_array_equal(recipe.rows(a, b), expected[a:b], err_msg=f"rows {a}..{b}")
    finally:
        set_threads(None)


def mae_rect(hh: int, ww: int, d: int) -> np.ndarray:
    """MAE's ``[sin w | cos w | sin h | cos h]`` rows h-major on an ``hh × ww`` grid, float64 rounded once."""
    h, w = np.meshgrid(np.arange(hh), np.arange(ww), indexing="ij")
    return np.concatenate([*sc(w, d // 4), *sc(h, d // 4)], 1).astype(f32)


@pytest.mark.parametrize(
    ("name", "grid", "reference"),
    [
        ("mae", "3x500", lambda: np.concatenate([np.zeros((1, 32), f32), mae_rect(3, 500, 32)])),
        ("timm-sincos2d", "2x700", lambda: timm_ref(2, 700, 32, False, False)),
        ("timm-sincos2d-interleave", "1x900", lambda: timm_ref(1, 900, 32, False, True)),
        ("timm-sincos2d-reverse", "700x2", lambda: timm_ref(700, 2, 32, True, False)),
        ("timm-sincos2d-reverse", "500x300", lambda: timm_ref(500, 300, 32, True, False)),
    ],
)
def test_a_long_axis_is_built_for_the_cells_a_row_range_touches(
    name: str, grid: str, reference: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A block of a long grid (a file streamed in row blocks, ``diff`` reading one) computes the
    sines of its own cells' coordinates, not its axes' every one (each block used to build the
    whole axis: a 1×200000 grid took 20 s to write): ranges inside a line, across a line's end
    (the coordinates wrap) and over whole lines are the closed form, and no axis table is longer
    than the range's cells."""
    import pecli.kinds.sincos2d as grid_kind

    built: list[int] = []
    real = grid_kind.axis_table

    def counted(base: float, compute: str, dtype: str, q: int, spacing: int, form: str, coords: np.ndarray) -> Any:
        built.append(len(coords))
        return real(base, compute, dtype, q, spacing, form, coords)

    monkeypatch.setattr(grid_kind, "KEPT_PAIRS", 16)  # every axis here counts as long
    monkeypatch.setattr(grid_kind, "axis_table", counted)
    recipe, expected = get_preset(name).recipe(grid=grid, dim=32), reference()
    n = len(expected)
    for a, b in [(0, 1), (1, 40), (650, 760), (1, n), (n - 3, n), (n // 2, n // 2 + 1)]:
        built.clear()
        np.testing.assert_array_equal(recipe.rows(a, b), expected[a:b], err_msg=f"rows {a}..{b}")
        assert max(built, default=0) <= b - a + 1, (a, b, built)
    np.testing.assert_array_equal(recipe.build(), expected)


@pytest.mark.parametrize(("order", "grid"), [("cogvideox", "3x2x400"), ("tatp", "2x300x3"), ("tatp", "400x2")])
def test_long_axes_of_3d_and_tatp_grids_give_the_whole_tables_rows(
    order: str, grid: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same for the 3-D orders (their whole tables are checked against closed forms in
    test_sincos_scales.py): any row range with every axis counted as long equals those rows of
    the table built with its axes whole."""
    import pecli.kinds.sincos2d as grid_kind

    recipe = Sincos2d(grid, 48, order=order, dtype="float64")  # type: ignore[arg-type]
    whole = recipe.build()
    monkeypatch.setattr(grid_kind, "KEPT_PAIRS", 16)
    n = len(whole)
    for a, b in [(0, 1), (399, 401), (5, min(900, n)), (n - 7, n), (0, n)]:
        np.testing.assert_array_equal(recipe.rows(a, b), whole[a:b], err_msg=f"rows {a}..{b}")


def test_a_small_axis_is_built_once_for_every_block() -> None:
    """Blocks of a square grid (a streamed file) reuse the axis table the first one built."""
    import pecli.kinds.sincos2d as grid_kind

    grid_kind.kept_axis_table.cache_clear()
    recipe = get_preset("mae").recipe(grid="24x24", dim=64)
    first = recipe.rows(0, 100)
    assert grid_kind.kept_axis_table.cache_info().misses == 1  # h and w share one table
    np.testing.assert_array_equal(recipe.rows(100, 577), mae_ref(64, 24, cls=True)[100:])
    np.testing.assert_array_equal(first, mae_ref(64, 24, cls=True)[:100])
    assert grid_kind.kept_axis_table.cache_info().misses == 1


def test_moco_is_timm_reverse_interleave_plus_a_zero_row_and_differs_from_mae() -> None:
    moco = get_preset("moco-v3").recipe(grid="8x8", dim=64).build()
    np.testing.assert_array_equal(moco[1:], timm_ref(8, 8, 64, reverse=True, interleave=True))
    assert not moco[0].any()
    mae = get_preset("mae").recipe(grid="8x8", dim=64).build()
    assert np.abs(moco - mae).max() > 1  # transposed token order


def test_exact_tables_are_within_one_float32_ulp_of_the_float64_pipelines() -> None:
    """Every layout/rule/odd policy: compute=exact against the float64 closed form."""
    for layout in ("interleaved", "split", "cos-first"):
        for freq in ("paper", "t2t", "half"):
            for odd, d in (("sin", 9), ("zero", 9), ("truncate", 9), ("sin", 8)):
                r = Sinusoidal(200, d, layout=layout, freq=freq, odd=odd, start=3, base=500.0)
                got = r.build().astype(np.float64)
                w = d + 1 if odd == "truncate" else d
                half = w // 2
                n_sin = d // 2 if odd == "zero" else (d + 1) // 2
                i = np.arange(n_sin)
                e = {"paper": 2 * i / w, "t2t": i / max(half - 1, 1), "half": i / half}[freq]
                ang = np.arange(3, 203)[:, None] * 500.0**-e
                s, c = np.sin(ang), np.cos(ang)[:, : d // 2]
                want = np.zeros((200, d))
                if layout == "interleaved":
                    want[:, 0 : 2 * n_sin : 2], want[:, 1 : 2 * (d // 2) : 2] = s, c
                elif layout == "split":
                    want[:, :n_sin], want[:, n_sin : n_sin + d // 2] = s, c
                else:
                    want[:, : d // 2], want[:, d // 2 : d // 2 + n_sin] = c, s
                np.testing.assert_allclose(got, want, rtol=0, atol=2e-7, err_msg=f"{layout} {freq} {odd} {d}")


def test_t2t_min_timescale_follows_tensor2tensor() -> None:
    r = Sinusoidal(200, 64, freq="t2t", layout="split", min_timescale=2.0, base=1000.0, odd="zero")
    n = 32
    inv = 2.0 * np.exp(-np.arange(n) * math.log(1000.0 / 2.0) / (n - 1))
    ang = np.arange(200)[:, None] * inv
    np.testing.assert_allclose(r.build(), np.concatenate([np.sin(ang), np.cos(ang)], 1), atol=2e-7, rtol=0)


def test_rows_of_every_preset_equal_the_same_rows_of_the_whole_table() -> None:
    for p in PRESETS.values():
        size: dict[str, object] = {
            "sinusoidal": {"length": 40, "dim": 10},
            "sincos2d": {
                "grid": "5x6" if p.params.get("order") != "tatp" or "3d" not in p.name else "3x3x4",
                "dim": 16,
            },
            "rope": {"length": 40},  # the preset's dim: longrope factors are dim/2 long
            "alibi": {"heads": 12, **({"length": 40} if p.params.get("part") == "bias" else {})},
            "learned": {"length": 40, "dim": 10},
            "mrope": {},  # the preset's own sequence: its rows are its tokens
            "xpos": {"length": 40},
            "axial": {"tokens": "video=2x5x6" if p.params.get("base_grid") else "text=7;image=5x6"},
            "rope2d": {"feat_shape": "5x6", "dim": 16},
        }[p.kind]
        r = p.recipe(**size)
        whole = r.build()
        n = whole.shape[0]
        for a, b in ((0, 1), (1, 3), (n - 5, n), (7, 8)) if n > 8 else ((0, n), (0, 1)):
            np.testing.assert_array_equal(r.rows(a, b), whole[a:b], err_msg=p.name)


def test_at_least_25_presets_each_naming_its_source() -> None:
    assert len(PRESETS) >= 25
    for p in PRESETS.values():
        assert (p.framework and "::" in p.source) or p.name == "vaswani"
        p.recipe()  # the default builds


def test_each_presets_precision_is_what_its_recipe_computes() -> None:
    # The kind says it: a random draw promises a distribution, a float32/float64 pipeline what it
    # reproduces, an exact recipe one rounding; Bloom's float32 pow is named where it is off.
    said = {p.name: p.exactness for p in PRESETS.values()}
    for p in PRESETS.values():
        r = p.recipe()
        compute = getattr(r, "compute", "exact")
        if r.kind == "learned":
            assert said[p.name].startswith("random: "), p.name
        elif compute in ("float32", "bfloat16"):
            assert said[p.name].startswith(f"{compute} pipeline: "), p.name
        else:
            assert said[p.name] == {"exact": "exact, rounded once", "float64": "float64 pipeline: bit-exact"}[compute]
    assert "Bloom: 1 ulp" in said["bloom-alibi"] and said["llama"] == "float32 pipeline: ≈ ulp(angle)"


def test_recipe_operands_round_trip_with_presets_and_new_parameters() -> None:
    r = parse_recipe("fairseq:len=10,dim=8")
    assert r == get_preset("fairseq").recipe(length=10, dim=8)
    assert parse_recipe(r.spec()) == r
    g = parse_recipe("sincos2d:grid=4x5,dim=8,order=timm,cls=true")
    assert isinstance(g, Sincos2d) and g.shape == (21, 8) and parse_recipe(g.spec()) == g
    assert parse_recipe("sinusoidal:len=4,dim=4,padding_idx=none").padding_idx is None


@pytest.mark.parametrize(
    ("kind", "params", "message"),
    [
        ("sinusoidal", {"length": 4, "dim": 4, "grid": "2x2"}, "a sinusoidal recipe has no grid: it takes len, dim"),
        (None, {"length": 4, "dim": 4, "grid": "2x2"}, "a sincos2d recipe has no len: it takes grid"),
        (None, {"grid": "2x2"}, "needs dim"),
        (None, {"grid": "2x2", "dim": 6}, "multiple of 4"),
        (None, {"grid": "2", "dim": 8}, "HxW"),
        (None, {"grid": "2x2x2", "dim": 8, "order": "timm"}, "needs order=mae"),
    ],
)
def test_bad_grid_recipes(kind: str | None, params: dict, message: str) -> None:
    with pytest.raises(RecipeError, match=message):
        make_recipe(params, kind=kind)
