"""Sinusoid dialects of other libraries (issue 24): keras-hub's ``--form inv-pow`` (``(1/B)^(2i/d)``,
one float32 pow of the rounded ``1/B``), x-transformers' ``--form neg-pow`` (``B^(−i/half)`` in one
pow) and its ``--scale`` (every value times the scale parameter), and the bfloat16 pipeline.

Truth: mpmath at 60 digits rounded once to float32 (a correctly rounded pow and sin); keras-hub's
and x-transformers' own code is in ``tests/conformance/test_sinusoid_vs_keras_hub.py`` and
``test_sinusoid_vs_x_transformers.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import mpmath
import numpy as np
import pytest

from pecli.identification import identify
from pecli.kinds.sinusoidal import Sinusoidal
from pecli.table import Table


@pytest.mark.parametrize(("dim", "base"), [(768, 10000.0), (64, 500.0), (30, 1e6)])
def test_inv_pow_and_neg_pow_are_one_rounding_of_their_power(dim: int, base: float) -> None:
    mpmath.mp.dps = 60
    e = (2 * (np.arange(dim) // 2))[::2].astype(np.float32) / np.float32(dim)  # keras: float32 2(j//2) / dim
    recip = np.float32(1 / base)  # keras casts 1 / max_wavelength to float32 first
    inv_pow = [np.float32(float(mpmath.power(mpmath.mpf(float(recip)), mpmath.mpf(float(x))))) for x in e]
    neg_pow = [np.float32(float(mpmath.power(mpmath.mpf(base), -mpmath.mpf(float(x))))) for x in e]
    got = {
        f: Sinusoidal(4, dim, base=base, compute="float32", form=f).pipeline_frequencies()
        for f in ("inv-pow", "neg-pow")
    }
    np.testing.assert_array_equal(got["inv-pow"], np.array(inv_pow))
    np.testing.assert_array_equal(got["neg-pow"], np.array(neg_pow))
    if dim == 768:  # 1/10000 rounded first: another table (for 1e6 the two happen to agree at d = 30)
        assert not np.array_equal(got["inv-pow"], got["neg-pow"])


def test_a_scaled_exact_table_is_the_scaled_exact_value_rounded_once() -> None:
    mpmath.mp.dps = 60
    scale = 768**-0.5
    ours = Sinusoidal(64, 8, base=10000.0, scale=scale).build()
    for p in (0, 1, 17, 63):
        for j in range(8):
            w = mpmath.power(10000, -mpmath.mpf(2 * (j // 2)) / 8)
            v = (mpmath.sin if j % 2 == 0 else mpmath.cos)(p * w) * mpmath.mpf(scale)
            # within half a float32 ulp of the exact scaled value, plus the float64 product's 2⁻⁵³
            assert abs(float(ours[p, j]) - float(v)) <= float(np.spacing(np.float32(abs(float(v))))) * (0.5 + 2**-20)
    wide = Sinusoidal(64, 8, scale=scale, dtype="float64")
    cells = wide.cells(np.repeat([3, 9], 8), np.tile(np.arange(8), 2))  # cell by cell, the same bits
    np.testing.assert_array_equal(wide.build()[[3, 9]].reshape(-1), cells)


def test_a_float32_pipeline_is_scaled_in_float32_after_sin_and_cos() -> None:
    # x-transformers: emb * self.scale, a float32 parameter times the float32 sin and cos.
    plain = Sinusoidal(100, 16, freq="half", layout="split", compute="float32", form="neg-pow").build()
    scaled = Sinusoidal(100, 16, freq="half", layout="split", compute="float32", form="neg-pow", scale=0.3).build()
    np.testing.assert_array_equal(scaled, plain * np.float32(0.3))


@pytest.mark.parametrize("scale", [0.125, 0.731, 2.5])
def test_identify_reads_the_scale_from_the_radius_of_the_pairs(scale: float) -> None:
    made = Sinusoidal(300, 64, base=10000.0, layout="split", scale=scale).build()
    found = identify(Table(made, None, "scaled"))
    assert found.verdict == "match" and found.best is not None, found.summary
    assert found.best.recipe.scale == pytest.approx(scale, rel=1e-6)
    np.testing.assert_allclose(found.best.recipe.build(), made, rtol=0, atol=4 * 2.0**-24 * 300 * scale)


def test_identify_names_a_scaled_numpy_table_by_its_scale() -> None:
    # A user's own table: the published formula in float64 (tests.helpers.reference) times 768^-0.5,
    # cast once to float32, as x-transformers' scale would leave it; identify proves it on every row.
    from tests.helpers import reference

    made = (reference(300, 768, layout="split") * 768**-0.5).astype(np.float32)
    found = identify(Table(made, None, "mine"))
    assert found.verdict == "match" and found.best is not None, found.summary
    assert found.best.recipe.scale == 768**-0.5 and found.best.recipe.layout == "split"
    rebuilt = found.best.recipe.build().astype(np.float64)
    assert np.max(np.abs(rebuilt - made)) <= 4 * 2.0**-24 * 300 * 768**-0.5


def test_bfloat16_positions_past_256_share_rows() -> None:
    # keras' dtype="bfloat16": the positions themselves are bfloat16 (8 significant bits).
    t = Sinusoidal(600, 16, compute="bfloat16", form="inv-pow", dtype="bfloat16").build()
    assert np.array_equal(t[256], t[257]) and np.array_equal(t[512], t[513]) and not np.array_equal(t[254], t[255])


@pytest.mark.parametrize(("start", "n"), [(100, 56), (136, 120), (37, 64)])
def test_identify_names_a_bfloat16_pipeline_window_that_starts_past_0(start: int, n: int) -> None:
    # A keras bfloat16 table from start_index > 0 (whole positions below 256: bfloat16 holds them):
    # each frequency is rounded to bfloat16 (0.7% off at 0.68), so the fit allows that much drift
    # and the start's phases that much error; the whole table then proves the recipe, bit for bit.
    made = Sinusoidal(n, 48, start=start, compute="bfloat16", form="inv-pow", dtype="bfloat16").build()
    found = identify(Table(made, None, "keras"))
    assert found.verdict == "match" and found.best is not None, found.summary
    recipe = found.best.recipe
    assert (recipe.start, recipe.compute, recipe.base) == (start, "bfloat16", 10000.0)
    assert recipe.build().tobytes() == made.tobytes()


def test_scale_on_the_command_line(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "t.npy"
    r = run("generate", "--preset", "x-transformers-scaled-sine", "--len", "16", "--dim", "64", "-o", out)
    assert r.exit_code == 0, r.output
    meta = json.loads((tmp_path / "t.npy.json").read_text())
    assert meta["recipe"]["scale"] == 64**-0.5  # the preset's dim^-0.5 follows --dim
    r = run("generate", "--len", "8", "--dim", "8", "--scale", "0", "-o", tmp_path / "z.npy")
    assert r.exit_code == 2 and "scale must be a finite number > 0" in r.output and not (tmp_path / "z.npy").exists()


@pytest.mark.parametrize("form", ["pow", "neg-pow", "inv-pow", "exp-div"])
def test_a_pipelines_form_with_the_exact_table_is_refused(run, tmp_path: Path, form: str) -> None:  # type: ignore[no-untyped-def]
    """The exact table has no rounding of its frequencies to choose: a form beside it would be
    written into the file's recipe and header though the values are not that pipeline's."""
    out = tmp_path / "t.npy"
    r = run("generate", "--len", "8", "--dim", "8", "--form", form, "--compute", "exact", "-o", out)
    assert r.exit_code == 2 and f"form={form} is how a float pipeline rounds" in r.output, r.output
    assert "Traceback" not in r.output and not out.exists()
    assert run("generate", "--len", "8", "--dim", "8", "--form", form, "--compute", "float64", "-o", out).exit_code == 0
