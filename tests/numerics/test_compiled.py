"""The compiled exact kernel (numba, the ``fast`` extra): the NumPy kernel's values, bit for bit.

Independent truth for the values themselves is tests/numerics/test_accuracy.py (mpmath); here the claim is
that the compiled loop is the same arithmetic, so every table is identical whichever kernel ran,
and that small tables never load numba.  Skipped without numba (the quick suite's install).
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from pecli import Sinusoidal
from pecli.kernels.compiled import MIN_PAIRS
from pecli.kernels.exact import frequencies, frequency_turns, sincos

pytestmark = pytest.mark.slow  # numba compiles the kernel on its first run (seconds)
numba = pytest.importorskip("numba")

rng = np.random.default_rng(20261123)


def compiled_kernel():  # type: ignore[no-untyped-def]
    from pecli.kernels.jit import sincos_into

    return sincos_into


@pytest.mark.parametrize(
    ("base", "dim", "positions"),
    [
        (10000.0, 1024, np.arange(300)),
        (500000.0, 128, rng.integers(0, 2**31, 300)),
        (10000.0, 64, rng.integers(2**44, 2**53, 300)),
        (1.5, 16, rng.integers(0, 2**40, 300)),  # frequencies above 1 rad: many turns dropped
    ],
)
def test_the_compiled_kernel_gives_the_numpy_kernels_bits(base: float, dim: int, positions: np.ndarray) -> None:
    _, w_hi, w_lo = frequency_turns(base, dim, dim // 2)
    p = positions.astype(np.float64)
    s, c = np.empty((len(p), dim // 2)), np.empty((len(p), dim // 2))
    compiled_kernel()(p, w_hi, w_lo, s, c)
    s0, c0 = sincos(p, w_hi, w_lo)
    assert s.tobytes() == s0.tobytes() and c.tobytes() == c0.tobytes()


def test_strided_outputs_and_fewer_cos_columns() -> None:
    # The sinusoidal table's views: sin in even columns, cos in odd ones, one cos column fewer (odd dim).
    _, w_hi, w_lo = frequencies(10000.0, 1.0, tuple((2 * i, 33) for i in range(17)))
    table = np.full((50, 33), np.nan)
    p = np.arange(1000, 1050, dtype=np.float64)
    compiled_kernel()(p, w_hi, w_lo, table[:, 0::2], table[:, 1::2])
    s, c = sincos(p, w_hi, w_lo)
    assert np.array_equal(table[:, 0::2], s) and np.array_equal(table[:, 1::2], c[:, :16])


@pytest.mark.parametrize(
    "params",
    [
        {"length": 2000, "dim": 512},
        {"length": 777, "dim": 333, "layout": "split", "start": 2**40},
        {"length": 600, "dim": 64, "base": 500000.0, "start": 2**53 - 600},
    ],
)
def test_float64_tables_are_the_same_whichever_kernel(
    params: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    recipe = Sinusoidal(dtype="float64", **params)  # type: ignore[arg-type]
    monkeypatch.setenv("PECLI_COMPILED", "0")
    numpy_table = recipe.build()
    monkeypatch.setenv("PECLI_COMPILED", "1")
    assert recipe.build().tobytes() == numpy_table.tobytes()
    assert recipe.rows(123, 456).tobytes() == numpy_table[123:456].tobytes()


def test_small_tables_do_not_load_numba() -> None:
    assert 120 * 4 < MIN_PAIRS
    code = (
        "import sys; from pecli.cli import cli\n"
        "try:\n    cli.main(['generate', '--len', '120', '--dim', '8', '--dtype', 'float64', '--to', 'npy', '-o', '/dev/null'])\n"
        "except SystemExit as exc:\n    assert exc.code == 0, exc.code\n"
        "print('numba' in sys.modules)"
    )
    env = {k: v for k, v in os.environ.items() if k != "PECLI_COMPILED"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip().splitlines()[-1] == "False"


@pytest.mark.parametrize(
    ("preset", "params"),
    [
        ("fairseq", {"length": 3000, "dim": 512}),  # exp form, float32: the fused pipeline loop
        ("tensor2tensor", {"length": 1000, "dim": 256, "dtype": "float16"}),  # float32 pipeline, float16 table
        ("whisper", {}),
        ("hf-xlm", {"length": 500, "dim": 64, "compute": "float32"}),  # the div form: angles, then the flat loop
    ],
)
def test_float32_pipelines_are_the_same_whichever_kernel(
    preset: str, params: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pecli.presets import get_preset

    recipe = get_preset(preset).recipe(**params)
    assert recipe.compute == "float32"
    monkeypatch.setenv("PECLI_COMPILED", "0")
    numpy_table = recipe.build()
    monkeypatch.setenv("PECLI_COMPILED", "1")
    assert recipe.build().tobytes() == numpy_table.tobytes()


def test_version_names_numba() -> None:
    from click.testing import CliRunner

    from pecli.cli import cli

    out = CliRunner().invoke(cli, ["--version"]).stdout
    assert f"numba {numba.__version__})" in out


@pytest.mark.parametrize(
    "spec",
    [
        "llama:len=3000,part=cos",  # the fused pipeline, straight into the half views
        "llama:len=3000,part=sin,start=100000",
        "qwen3-yarn:len=2000,part=cos,start=40000",  # attention scaling applied after
        "phi3-vision-128k:len=2000,part=sin",  # longrope
        "meta-llama:len=2000,part=cos",  # pairs layout
        "llama:len=2000,part=cos,dtype=bfloat16",  # float32 values, then bf16: the flat loop
        "qwen2-vl:part=cos",  # M-RoPE sections
        "qwen2.5-vl:part=sin",
        "flux:part=cos",  # a float64 pipeline rounded to float32
        "axial:axes-dim=16;56;56,tokens=text=8;image=32x32,part=sin,compute=float32",
        # 16-bit tables: float32 rows rounded by pecli.kernels.jit.round16_into or NumPy's passes
        "sinusoidal:len=2000,dim=384,start=12345,dtype=float16",  # a few cells computed in float64
        "sinusoidal:len=1500,dim=257,layout=split,dtype=bfloat16",
        "fairseq:len=1000,dim=256,dtype=float16",  # a float32 pipeline, cast
        "llama:len=1000,part=sin,compute=exact,dtype=bfloat16",  # doubtful rows rebuilt (Recipe.cells)
    ],
)
def test_rope_pipelines_are_the_same_whichever_kernel(spec: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from pecli.sources import parse_recipe

    recipe = parse_recipe(spec)
    monkeypatch.setenv("PECLI_COMPILED", "0")
    numpy_table = recipe.build()
    monkeypatch.setenv("PECLI_COMPILED", "1")
    assert recipe.build().tobytes() == numpy_table.tobytes()
    stop = min(300, recipe.shape[0])
    assert recipe.rows(7, stop).tobytes() == numpy_table[7:stop].tobytes()


def test_mrope_rows_at_ids_are_the_same_whichever_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    from pecli.sources import parse_recipe

    recipe = parse_recipe("qwen2-vl:part=cos")
    ids = np.stack([rng.integers(0, 5000, 700) for _ in range(3)])
    monkeypatch.setenv("PECLI_COMPILED", "0")
    numpy_rows = recipe.rows_at(ids)
    monkeypatch.setenv("PECLI_COMPILED", "1")
    assert recipe.rows_at(ids).tobytes() == numpy_rows.tobytes()
