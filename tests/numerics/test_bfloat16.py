"""bfloat16 tables: rounded once from the exact table (or from a framework's float32 pipeline, as
torch casts), written by every format, read back exactly, and opened by the tools people use.

The truth for rounding is exact rational arithmetic (``fractions.Fraction``): a float64 value
rounded to 8 significant bits, ties to even, with bfloat16's exponent range (subnormals from
2⁻¹³³, the largest value (2 − 2⁻⁷)·2¹²⁷).  For float32 pipelines it is torch's own
``Tensor.to(torch.bfloat16)`` where torch is installed.
"""

from __future__ import annotations

import json
import math
import random
import shlex
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from pecli import open_table
from pecli.dtypes import DTYPES, round_to
from pecli.formats import FORMATS
from pecli.kinds import kinds
from pecli.sources import parse_recipe

ml_dtypes = pytest.importorskip("ml_dtypes")

BF16_MAX = Fraction(2**8 - 1, 2**7) * 2**127
BF16_TINY = Fraction(1, 2**133)  # the smallest subnormal


def exact_bfloat16(x: float) -> float:
    """``x`` rounded to bfloat16 (nearest, ties to even) in exact arithmetic."""
    if x == 0 or not math.isfinite(x):
        return x
    q = Fraction(x)
    exponent = max(math.frexp(x)[1] - 1, -126)  # subnormals share the smallest normal's spacing
    spacing = Fraction(2) ** (exponent - 7)
    r = round(q / spacing) * spacing  # round() of a Fraction: half to even
    if abs(r) > BF16_MAX:
        return math.copysign(math.inf, x)
    return math.copysign(float(r), x)  # a value rounded to zero keeps its sign


def as_float(a: np.ndarray) -> np.ndarray:
    return np.asarray(a).astype(np.float64)


def test_the_oracle_knows_a_double_rounding_case() -> None:
    # 1 + 2⁻⁸ + 2⁻³⁰: float32 keeps 1 + 2⁻⁸ (a bfloat16 midpoint), which then rounds to 1 (even);
    # rounded once it is above the midpoint: 1 + 2⁻⁷.
    x = 1 + 2**-8 + 2**-30
    assert exact_bfloat16(x) == 1 + 2**-7
    assert float(np.float32(x).astype(ml_dtypes.bfloat16)) == 1.0  # the double rounding round_to avoids


def _cases() -> np.ndarray:
    rng = random.Random(20261123)
    xs: list[float] = []
    for _ in range(3000):
        xs.append(rng.uniform(-1, 1))
        xs.append(math.ldexp(rng.uniform(0.5, 1), rng.randint(-140, 128)) * rng.choice((-1, 1)))
        # A bfloat16 midpoint nudged by less than float32 can see: where rounding through float32 fails.
        m = math.ldexp(rng.randint(2**8, 2**9 - 1) + 0.5, rng.randint(-120, 100))
        xs.extend([m, m + math.ldexp(m, -40), m - math.ldexp(m, -40), -m])
    xs += [0.0, -0.0, 2.0**-133, 2.0**-134, 2.0**-134 * 1.0000001, 2.0**-126, float(BF16_MAX), 3.4e38, 1e300]
    return np.array(xs, dtype=np.float64)


def test_round_to_bfloat16_is_the_correct_rounding_of_float64() -> None:
    xs = _cases()
    with np.errstate(over="ignore"):
        got = as_float(round_to(xs, "bfloat16"))
    want = np.array([exact_bfloat16(float(x)) for x in xs])
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, [(float(xs[i]).hex(), got[i], want[i]) for i in bad[:5]]
    assert np.array_equal(np.signbit(got), np.signbit(want))


def test_round_to_bfloat16_from_float32_is_one_rounding() -> None:
    xs = _cases()
    with np.errstate(over="ignore"):
        f32 = xs.astype(np.float32)
    got = as_float(round_to(f32, "bfloat16"))
    want = np.array([exact_bfloat16(float(x)) for x in f32.astype(np.float64)])
    assert np.array_equal(got, want)


def test_every_dtype_has_its_facts() -> None:
    for name, p in DTYPES.items():
        dt = p.numpy()
        assert dt.itemsize == p.itemsize and dt.name == name
        finfo = ml_dtypes.finfo(dt)
        assert float(finfo.max) == p.max and float(finfo.eps) == p.eps
        # p.digits significant digits round-trip every value: the spacing of the decimal grid
        # (10^(1-digits) relative) is under half the dtype's smallest relative spacing.
        assert 10.0 ** (1 - p.digits) < p.eps / 2 and 10.0 ** (2 - p.digits) >= p.eps / 2


@pytest.mark.parametrize("kind", list(kinds()))
def test_every_kind_in_bfloat16_is_its_carrier_rounded_once(run, tmp_path: Path, kind: str) -> None:
    """A kind's example in bfloat16 is the same recipe's exact table (float64) rounded once, or
    its float32 pipeline's values rounded once (the framework's way)."""
    example = shlex.split(kinds()[kind].example)
    recipe = parse_recipe(f"{kind}:" + ",".join(_pairs(example)))
    rows = ["--rows", f"0:{min(24, recipe.shape[0])}"]
    r = run("generate", *example, *rows, "--dtype", "bfloat16", "-o", tmp_path / "b.npy")
    assert r.exit_code == 0, r.output
    with open_table(tmp_path / "b.npy") as t:
        assert t.storage == "bfloat16"
        got = as_float(t.rows(0, t.shape[0]))
    carrier = "float32" if getattr(recipe, "compute", "exact") == "float32" else "float64"
    r = run("generate", *example, *rows, "--dtype", carrier, "-o", tmp_path / "c.npy")
    assert r.exit_code == 0, r.output
    wide = as_float(np.load(tmp_path / "c.npy"))
    want = np.vectorize(exact_bfloat16)(wide)
    assert np.array_equal(got, want)


def _pairs(example: list[str]) -> list[str]:
    """``--len 8 --dim 4`` → ``len=8``, ``dim=4`` (the kind's own option dropped)."""
    out, i = [], 0
    while i < len(example):
        name = example[i].lstrip("-")
        if name != "kind":
            out.append(f"{name.replace('-', '_') if name != 'len' else 'len'}={example[i + 1]}")
        i += 2
    return out


def _written(tmp_path: Path, run, ext: str) -> Path:
    path = tmp_path / f"t{ext}"
    r = run("generate", "--preset", "llama", "--len", "40", "--part", "cos", "--dtype", "bfloat16", "-o", path)
    assert r.exit_code == 0, r.output
    return path


@pytest.mark.parametrize(
    "fmt", [f for f in FORMATS.values() if f.read is not None and f.write is not None], ids=lambda f: f.name
)
def test_bfloat16_round_trips_in_every_format_pecli_reads_and_writes(run, tmp_path: Path, fmt) -> None:
    if fmt.requires:
        pytest.importorskip(fmt.requires)
    path = _written(tmp_path, run, fmt.extensions[0])
    expected = parse_recipe("llama:len=40,part=cos,dtype=bfloat16").build()
    with open_table(path) as t:
        assert t.storage == "bfloat16" and t.dtype == np.float32  # served exactly as float32
        assert t.recipe is not None and t.recipe.dtype == "bfloat16"
        assert np.array_equal(t.rows(0, 40), expected.astype(np.float32))
    # Exported again without --dtype: bfloat16 it stays, bit for bit.
    r = run("export", path, "-o", tmp_path / "again.safetensors")
    assert r.exit_code == 0, r.output
    raw = (tmp_path / "again.safetensors").read_bytes()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8 : 8 + n])
    assert header["pe"]["dtype"] == "BF16"
    assert raw[8 + n :] == expected.view(np.uint16).astype("<u2").tobytes()


def test_bfloat16_files_open_in_the_tools_people_use(run, tmp_path: Path) -> None:
    expected = parse_recipe("llama:len=40,part=cos,dtype=bfloat16").build()
    npy = np.load(_written(tmp_path, run, ".npy"))  # NumPy alone: 2-byte voids, jax.numpy.load's bfloat16
    assert npy.dtype == np.dtype("V2") and npy.view(ml_dtypes.bfloat16).tobytes() == expected.tobytes()
    import h5py

    with h5py.File(_written(tmp_path, run, ".h5")) as f:  # any HDF5 reader: a 2-byte float, read as float32
        assert f["pe"].dtype == np.float32 and np.array_equal(f["pe"][()], expected.astype(np.float32))
        t = f["pe"].id.get_type()
        assert (t.get_size(), t.get_fields(), t.get_ebias()) == (2, (15, 7, 8, 0, 7), 127)
    torch = pytest.importorskip("torch")
    pe = torch.load(_written(tmp_path, run, ".pt"))["pe"]
    assert pe.dtype == torch.bfloat16 and np.array_equal(pe.float().numpy(), expected.astype(np.float32))
    from safetensors.torch import load_file

    st = load_file(_written(tmp_path, run, ".safetensors"))["pe"]
    assert st.dtype == torch.bfloat16 and torch.equal(st, pe)


def test_jax_reads_the_npy_as_bfloat16(run, tmp_path: Path) -> None:
    jnp = pytest.importorskip("jax.numpy")
    expected = parse_recipe("llama:len=40,part=cos,dtype=bfloat16").build()
    a = jnp.load(_written(tmp_path, run, ".npy"))
    assert str(a.dtype) == "bfloat16" and np.asarray(a).tobytes() == expected.tobytes()


def test_a_float32_pipeline_in_bfloat16_is_torchs_cast_of_its_float32_values() -> None:
    torch = pytest.importorskip("torch")
    for spec in ("llama:len=300,part=cos", "fairseq:len=300,dim=64", "bloom-alibi:heads=12,len=64"):
        f32 = parse_recipe(spec).build()
        assert f32.dtype == np.float32
        ours = parse_recipe(spec + ",dtype=bfloat16").build()
        theirs = torch.from_numpy(f32).to(torch.bfloat16).view(torch.int16).numpy()
        assert np.array_equal(ours.view(np.int16), theirs), spec


def test_export_dtype_float32_of_bfloat16_records_where_it_came_from(run, tmp_path: Path) -> None:
    src = _written(tmp_path, run, ".safetensors")
    r = run("export", src, "--dtype", "float32", "-o", tmp_path / "w.npz")
    assert r.exit_code == 0, r.output
    with open_table(tmp_path / "w.npz") as t:
        assert t.dtype == np.float32 and t.storage is None
        assert t.provenance["converted_from"] == "bfloat16"


def test_identify_and_diff_name_a_bfloat16_table(run, tmp_path: Path) -> None:
    path = tmp_path / "rope.safetensors"
    r = run("generate", "--preset", "llama", "--len", "96", "--part", "sin", "--dtype", "bfloat16", "-o", path)
    assert r.exit_code == 0
    bare = tmp_path / "bare.npy"  # no recipe stored: identify must find it from the values
    with open_table(path) as t:
        np.save(bare, t.rows(0, 96))  # float32 values that are all bfloat16 values
    doc = json.loads(run("identify", bare, "--json").stdout)
    assert doc["verdict"] == "match" and doc["kind"] == "rope"
    assert "dtype=bfloat16" in doc["check"] and "--atol" not in doc["check"]  # bit-identical rebuild
    r = run(*shlex.split(doc["check"])[1:])
    assert r.exit_code == 0 and r.output.startswith("SAME"), r.output


@pytest.mark.parametrize(
    ("spec", "doubtful"),
    [
        ("sinusoidal:len=3000,dim=512,start=100000", 10),
        ("rope:len=2048,dim=256,compute=exact,part=sin", 10),
        ("sincos2d:grid=48x48,dim=384", 0),  # 48 coordinates per axis: few distinct values
        ("hf-xlm:len=2048,dim=512", 10),  # a float64 pipeline
    ],
)
def test_bfloat16_from_float32_rows_equals_rounding_the_float64_table(spec: str, doubtful: int) -> None:
    """Exact recipes are built as float32 and only the rows with a value whose float32 is within
    one ulp of a bfloat16 midpoint are rebuilt in float64: the result must be the float64 table
    rounded once, on tables large enough to hold dozens of such values."""
    recipe = parse_recipe(spec + ",dtype=bfloat16")
    ours = recipe.build()
    wide = parse_recipe(spec + ",dtype=float64").build()
    f32 = parse_recipe(spec + ",dtype=float32").build()
    low = f32.view(np.uint32) & 0xFFFF
    assert np.count_nonzero((low >= 0x7FFF) & (low <= 0x8001)) >= doubtful  # the rebuilt rows are exercised
    assert np.array_equal(ours.view(np.uint16), round_to(wide, "bfloat16").view(np.uint16))
    # and a row range is the same rows of the whole table
    assert np.array_equal(recipe.rows(777, 1234).view(np.uint16), ours[777:1234].view(np.uint16))


@pytest.mark.parametrize(
    "spec",
    [
        "sinusoidal:len=700,dim=65,layout=cos-first,dtype=float64,start=99990",  # its own cells(): pair by pair
        "fairseq:len=300,dim=64,dtype=float64,compute=exact",  # with the zero padding row
        "llama:len=500,part=sin,dtype=float64,compute=exact",  # Recipe.cells: runs of rows
    ],
)
def test_cells_are_the_tables_values_at_those_cells(spec: str) -> None:
    # bfloat16 tables ask for the float64 value of the few cells the float32 rows cannot round.
    from pecli.sources import parse_recipe

    recipe = parse_recipe(spec)
    table = recipe.build()
    rng = np.random.default_rng(7)
    rows = rng.integers(0, table.shape[0], 3000)
    cols = rng.integers(0, table.shape[1], 3000)
    assert recipe.cells(rows, cols).tobytes() == table[rows, cols].tobytes()
