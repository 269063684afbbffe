"""``--resample``: the filters of ``torch.nn.functional.interpolate`` that timm's
``resample_abs_pos_embed`` uses, on closed forms (a linear ramp survives bilinear resampling,
constants survive every filter), and its options' errors.  The full comparison with timm's own
code is tests/conformance/test_resample_vs_timm.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pecli import open_table
from pecli.resample import resample_table, weights
from pecli.table import Table


@pytest.mark.parametrize("mode", ["bicubic", "bilinear"])
@pytest.mark.parametrize("antialias", [True, False])
@pytest.mark.parametrize(("n_in", "n_out"), [(14, 16), (14, 7), (7, 40), (24, 24), (5, 1)])
def test_weights_keep_constants(mode: str, antialias: bool, n_in: int, n_out: int) -> None:
    w = weights(n_in, n_out, mode, antialias)  # type: ignore[arg-type]
    assert w.shape == (n_out, n_in) and np.allclose(w.sum(axis=1), 1.0, rtol=0, atol=1e-6)


def test_bilinear_without_antialias_is_linear_interpolation_at_half_pixel_centres() -> None:
    # align_corners=False: output pixel i samples the input at scale·(i + ½) − ½ (clamped at 0),
    # so a ramp x_k = k comes out as that position, clamped to [0, n_in − 1].
    n_in, n_out = 10, 23
    w = weights(n_in, n_out, "bilinear", False)
    src = np.clip((np.arange(n_out) + 0.5) * n_in / n_out - 0.5, 0, n_in - 1)
    assert np.allclose(w @ np.arange(n_in, dtype=float), src, rtol=0, atol=1e-6)


def test_prefix_rows_are_kept_and_the_grid_is_row_major(tmp_path: Path) -> None:
    grid = np.arange(2 * 3, dtype=np.float32).reshape(6, 1)  # 2x3, value = 3·row + col
    table = np.concatenate([[[-7.0]], grid]).astype(np.float32)
    out = resample_table(Table(table), (2, 3), (2, 3), 1)
    assert np.array_equal(out.rows(0, 7), table)  # the same grid: unchanged
    out = resample_table(Table(table), (4, 6), (2, 3), 1, "bilinear", False)
    got = out.rows(0, 25)
    assert got[0, 0] == -7.0 and got.shape == (25, 1)
    rows = np.clip((np.arange(4) + 0.5) / 2 - 0.5, 0, 1)
    cols = np.clip((np.arange(6) + 0.5) / 2 - 0.5, 0, 2)
    assert np.allclose(got[1:, 0].reshape(4, 6), 3 * rows[:, None] + cols[None, :], atol=1e-6)


def test_export_resamples_a_checkpoints_pos_embed(run, tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    np.save(tmp_path / "vit.npy", (rng.standard_normal((1, 197, 8)) * 0.02).astype(np.float32))
    r = run("export", tmp_path / "vit.npy", "--resample", "24x24", "-o", tmp_path / "vit384.safetensors")
    assert r.exit_code == 0, r.output
    with open_table(tmp_path / "vit384.safetensors") as t:
        assert t.shape == (1 + 24 * 24, 8) and t.recipe is None
        assert t.provenance["resampled_from"] == "14x14"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--resample", "0x3"], "--resample '0x3': give the grid as HxW with sides 1..16384"),
        (["--resample", "big"], "--resample 'big': give the grid as HxW"),
        (["--resample", "8", "--prefix-tokens", "2"], "the table's 197 rows are not 2 prefix rows and a square grid"),
        (["--resample", "8", "--resample-from", "10x10"], "--resample-from 10x10 leaves 97 of the table's 197 rows"),
        (
            ["--resample", "8", "--resample-from", "10x10", "--prefix-tokens", "1"],
            "--resample-from 10x10 with 1 prefix rows makes 101 rows, but the table has 197",
        ),
        (["--resample-from", "14x14"], "--resample-from and --prefix-tokens describe the table for --resample"),
        (["--resample", "8", "--interpolation", "nearest"], "'nearest' is not one of 'bicubic', 'bilinear'"),
    ],
)
def test_bad_resample_options(run, tmp_path: Path, args: list[str], message: str) -> None:
    np.save(tmp_path / "vit.npy", np.zeros((197, 4), np.float32))
    r = run("export", tmp_path / "vit.npy", *args, "-o", tmp_path / "out.npy")
    assert r.exit_code == 2 and r.stderr.startswith("Error: ") and r.stderr.count("\n") == 1, r.output
    assert message in r.stderr, r.stderr
    assert not (tmp_path / "out.npy").exists()
