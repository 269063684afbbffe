"""The rope2d kind (timm's 2-D rotary embeddings): the float64 closed form, row ranges, bad input.

timm's own tables are in tests/conformance/test_rope2d_vs_timm.py.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from pecli.kinds.rope2d import Rope2d
from pecli.presets import get_preset


def closed_form(
    h: int,
    w: int,
    dim: int,
    bands: str,
    *,
    base: float = 10000.0,
    max_res: int = 224,
    linear: bool = False,
    ref: tuple[int, int] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """sin and cos ``(h·w, dim)`` in float64, written from timm's definition (independent of pecli)."""
    q = dim // 4
    k = np.arange(q)
    if bands == "lang":
        omega = 1.0 / base ** (k / q)
        axes = [np.arange(s, dtype=np.float64) for s in (h, w)]
    else:
        t = k / (q - 1) if q > 1 else k * 0.0
        omega = math.pi * (1 + t * (max_res / 2 - 1)) if linear else math.pi * 2.0 ** (t * (math.log2(max_res) - 1))
        axes = [np.linspace(-1.0, 1.0, s) for s in (h, w)]
    if ref is not None:
        axes = [a / s * r for a, s, r in zip(axes, (h, w), ref, strict=True)]
    hh, ww = np.meshgrid(axes[0], axes[1], indexing="ij")
    angle = np.concatenate([hh.reshape(-1, 1) * omega, ww.reshape(-1, 1) * omega], axis=1)
    return np.repeat(np.sin(angle), 2, axis=1), np.repeat(np.cos(angle), 2, axis=1)


CASES = [
    ("lang", 4, 6, 16, {}),
    ("lang", 5, 3, 32, {"base": 100.0, "ref": (16, 16)}),
    ("pixel", 7, 7, 64, {}),
    ("pixel", 3, 9, 32, {"linear": True, "max_res": 384}),
    ("pixel", 6, 4, 16, {"ref": (14, 14)}),
]


def _recipe(bands: str, h: int, w: int, dim: int, kw: dict[str, Any], **more: object) -> Rope2d:
    ref = kw.get("ref")
    ref_shape = None if ref is None else f"{ref[0]}x{ref[1]}"
    args = (kw.get("base", 10000.0), kw.get("max_res", 224), kw.get("linear", False), ref_shape)
    return Rope2d(f"{h}x{w}", dim, bands, *args, **more)  # type: ignore[arg-type]


@pytest.mark.parametrize(("bands", "h", "w", "dim", "kw"), CASES)
def test_the_float64_closed_form(bands: str, h: int, w: int, dim: int, kw: dict[str, Any]) -> None:
    sin, cos = closed_form(h, w, dim, bands, **kw)
    exact = _recipe(bands, h, w, dim, kw, part="cat", compute="exact", dtype="float64").build()
    # Both are float64 evaluations of angles up to ~10³: they may differ by a few ulps of the angle.
    np.testing.assert_allclose(exact, np.concatenate([sin, cos], axis=1), rtol=0, atol=1e-12)
    for part, want in (("sin", sin), ("cos", cos)):
        f32 = _recipe(bands, h, w, dim, kw, part=part).build()
        assert f32.dtype == np.float32 and f32.shape == want.shape
        p = max(abs(a) for a in (h, w, 1)) * (1.0 if bands == "lang" else math.pi * kw.get("max_res", 224) / 2)
        assert np.max(np.abs(f32 - want)) <= 4 * 2.0**-24 * max(1.0, p)


@pytest.mark.parametrize("part", ["cat", "sin", "cos"])
@pytest.mark.parametrize("compute", ["float32", "exact"])
def test_row_ranges_equal_the_whole_tables_rows(part: str, compute: str) -> None:
    recipe = Rope2d("5x7", 24, "pixel", ref_feat_shape="4x4", part=part, compute=compute)  # type: ignore[arg-type]
    whole = recipe.build()
    for a, b in ((0, 1), (3, 11), (34, 35), (0, 35), (12, 12)):
        assert np.array_equal(recipe.rows(a, b), whole[a:b])
    assert get_preset("eva02").recipe().rows(200, 256).shape == (56, 128)


BAD = [
    (
        ["--feat-shape", "16", "--dim", "64", "--bands", "lang"],
        "feat_shape must look like HxW with sizes ≥ 1, got '16'",
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
