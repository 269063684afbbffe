"""Complex tables (issue 24): rope's ``cis`` part stored as complex numbers, Meta's ``freqs_cis``.

The truth is what each format's own library reads back (numpy, h5py, safetensors, torch) and the
float64 closed form ``exp(i·p·θ^(−2k/d))``; a complex file read by pecli is its (real, imaginary)
parts in column pairs, the same bits.
"""

from __future__ import annotations

import json
from pathlib import Path

import h5py
import numpy as np
import pytest

from pecli import Rope, open_table, write_table
from pecli.errors import PecliInputError
from pecli.table import Table

N, D, THETA = 300, 16, 500000.0
FREQS_CIS = ["--preset", "meta-freqs-cis", "--len", str(N), "--dim", str(D), "--base", str(THETA)]
#: Every format that stores complex numbers, and the library that reads it back.
COMPLEX_FORMATS = ["npy", "npz", "h5", "safetensors", "pt"]


def closed_form(n: int, d: int, theta: float) -> np.ndarray:
    """``exp(i·p·ω_k)`` with ``ω_k = θ^(−2k/d)`` in float64: the rotation Meta's freqs_cis holds."""
    omega = theta ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    return np.exp(1j * np.outer(np.arange(n, dtype=np.float64), omega))


def read_natively(path: Path) -> np.ndarray:
    """The array as the format's own library reads it (no pecli code)."""
    ext = path.suffix
    if ext == ".npy":
        return np.load(path)
    if ext == ".npz":
        return np.load(path)["pe"]
    if ext == ".h5":
        with h5py.File(path) as f:
            return f["pe"][...]
    if ext == ".safetensors":
        from safetensors.numpy import load_file

        return load_file(path)["pe"]
    torch = pytest.importorskip("torch")
    tensor = torch.load(path, weights_only=True)["pe"]
    assert tensor.dtype == torch.complex64
    return tensor.numpy()


@pytest.mark.parametrize("ext", COMPLEX_FORMATS)
def test_freqs_cis_is_written_as_complex64_in_every_format_that_has_them(run, tmp_path: Path, ext: str) -> None:
    if ext == "pt":
        pytest.importorskip("torch")
    path = tmp_path / f"freqs_cis.{ext}"
    r = run("generate", *FREQS_CIS, "--dtype", "complex64", "-o", path)
    assert r.exit_code == 0, r.output
    values = read_natively(path)
    assert values.dtype == np.complex64 and values.shape == (N, D // 2)
    # The parts are rope's cos and sin tables of the same recipe, bit for bit: storing them as
    # complex numbers moves no bit and rounds nothing again.
    cos = Rope(length=N, dim=D, base=THETA, layout="once", part="cos").build()
    sin = Rope(length=N, dim=D, base=THETA, layout="once", part="sin").build()
    np.testing.assert_array_equal(values.real, cos)
    np.testing.assert_array_equal(values.imag, sin)
    # And they are the rotation itself, within the float32 pipeline's bound 4·2⁻²⁴·max(1, p).
    bound = 4 * 2.0**-24 * np.maximum(1, np.arange(N))[:, None]
    assert np.all(np.abs(values - closed_form(N, D, THETA)) <= bound)


@pytest.mark.parametrize("ext", COMPLEX_FORMATS)
def test_a_complex_file_reads_back_as_its_parts_with_its_recipe(run, tmp_path: Path, ext: str) -> None:
    if ext == "pt":
        pytest.importorskip("torch")
    path = tmp_path / f"freqs_cis.{ext}"
    assert run("generate", *FREQS_CIS, "--dtype", "complex64", "-o", path).exit_code == 0
    with open_table(path) as table:
        assert table.storage == "complex64" and table.shape == (N, D) and table.dtype == np.float32
        assert table.recipe is not None and table.recipe.part == "cis"  # the stored recipe is trusted
        pairs = table.rows(0, N)
    np.testing.assert_array_equal(pairs.view(np.complex64), read_natively(path))
    r = run("inspect", path, "--json")
    assert r.exit_code == 0, r.output
    report = json.loads(r.output)
    assert report["dtype"] == "complex64" and report["recipe"]["part"] == "cis"


def test_complex128_holds_the_float64_parts(run, tmp_path: Path) -> None:
    path = tmp_path / "f.npy"
    r = run("generate", "--kind", "rope", "--len", "64", "--dim", "8", "--part", "cis", "--layout", "once",
            "--compute", "exact", "--dtype", "complex128", "-o", path)  # fmt: skip
    assert r.exit_code == 0, r.output
    values = np.load(path)
    assert values.dtype == np.complex128 and values.shape == (64, 4)
    exact = Rope(length=64, dim=8, layout="once", part="cis", compute="exact", dtype="float64").build()
    np.testing.assert_array_equal(values.view(np.float64), exact)
    # The closed form rounds its angle p·ω (half an ulp of it) and exp: that is its distance.
    angles = np.outer(np.arange(64), 10000.0 ** (-np.arange(0, 8, 2) / 8))
    assert np.all(np.abs(values - closed_form(64, 8, 10000.0)) <= 2.0**-52 * (2 + angles))


def test_export_keeps_complex_and_converts_to_parts_on_request(run, tmp_path: Path) -> None:
    src = tmp_path / "f.h5"
    assert run("generate", *FREQS_CIS, "--dtype", "complex64", "-o", src).exit_code == 0
    kept = tmp_path / "kept.npz"
    assert run("export", src, "-o", kept).exit_code == 0
    np.testing.assert_array_equal(read_natively(kept), read_natively(src))
    parts = tmp_path / "parts.csv"
    r = run("export", src, "--dtype", "float32", "-o", parts)
    assert r.exit_code == 0, r.output
    text = np.loadtxt(parts, delimiter=",", dtype=np.float32, ndmin=2, skiprows=1)
    np.testing.assert_array_equal(text, read_natively(src).view(np.float32))
    with open_table(parts) as table:
        assert table.provenance.get("converted_from") == "complex64"
    # A table of (cos, sin) pairs becomes complex numbers again: the same bytes as the first file.
    again = tmp_path / "again.npy"
    assert run("export", parts, "--dtype", "complex64", "-o", again).exit_code == 0
    np.testing.assert_array_equal(np.load(again), read_natively(src))
    # Whole pairs of columns stay complex: --cols 2:6 is the numbers 1 and 2.
    cols = tmp_path / "cols.npy"
    assert run("export", src, "--cols", "2:6", "-o", cols).exit_code == 0
    np.testing.assert_array_equal(np.load(cols), read_natively(src)[:, 1:3])


def test_a_foreign_freqs_cis_is_identified_and_compared(run, tmp_path: Path) -> None:
    # A complex64 array saved by another program (no sidecar): pecli fits its parts.
    cis = Rope(length=N, dim=D, base=THETA, layout="once", part="cis").build()
    path = tmp_path / "theirs.npy"
    np.save(path, cis.view(np.complex64))
    r = run("identify", path)
    assert r.exit_code == 0, r.output
    assert r.output.startswith(f"{path}  ({N}, {D}) complex64\nMATCH")
    assert "base=500000" in r.output and "part=cis" in r.output
    assert "stored as complex64 numbers" in r.output and "--dtype complex64" in r.output
    r = run("diff", path, f"meta-freqs-cis:len={N},dim={D},base={THETA:g}")
    assert r.exit_code == 0 and r.output.startswith(f"SAME: all {N * D} elements within |a−b| ≤ 0"), r.output


def test_arrays_in_memory_and_torch_tensors() -> None:
    torch = pytest.importorskip("torch")
    numbers = closed_form(5, 6, 10000.0).astype(np.complex64)
    table = Table.from_array(numbers, name="freqs_cis")
    assert table.storage == "complex64" and table.shape == (5, 6)
    np.testing.assert_array_equal(table.rows(0, 5), numbers.view(np.float32))
    tensor = table.to_torch()
    assert tensor.dtype == torch.complex64
    np.testing.assert_array_equal(tensor.numpy(), numbers)
    # A torch complex tensor, through DLPack or NumPy: the same table.
    again = Table.from_array(torch.from_numpy(numbers))
    np.testing.assert_array_equal(again.rows(0, 5), table.rows(0, 5))


def test_library_conversion_refuses_what_has_no_pairs(tmp_path: Path) -> None:
    with pytest.raises(PecliInputError, match="columns are not \\(real, imaginary\\) pairs"):
        Table.from_recipe(Rope(length=4, dim=8, part="cos")).converted("complex64")
    with pytest.raises(PecliInputError, match="this table has 3"):
        Table.from_array(np.zeros((2, 3), np.float32)).converted("complex64")
    table = Table.from_recipe(Rope(length=4, dim=8, layout="once", part="cis")).converted("complex64")
    with pytest.raises(PecliInputError, match="would split one"):
        table.section(0, 4, 1, 5)
    write_table(table, tmp_path / "t.npy")
    assert np.load(tmp_path / "t.npy").dtype == np.complex64


def test_big_endian_complex_numbers_are_read_by_value(run, tmp_path: Path) -> None:
    numbers = (np.arange(6) * (1 + 2j)).reshape(2, 3)
    np.save(tmp_path / "be.npy", numbers.astype(">c8"))
    with h5py.File(tmp_path / "be.h5", "w") as f:
        f["pe"] = numbers.astype(">c16")
    for name, real in (("be.npy", np.float32), ("be.h5", np.float64)):
        with open_table(tmp_path / name) as table:
            assert table.info["byte order"] == "big-endian"
            np.testing.assert_array_equal(table.rows(0, 2), numbers.astype(np.complex128).view(np.float64).astype(real))
    r = run("export", tmp_path / "be.npy", "-o", tmp_path / "le.npy")
    assert r.exit_code == 0, r.output
    np.testing.assert_array_equal(np.load(tmp_path / "le.npy"), numbers.astype(np.complex64))


def test_a_single_complex_number_is_not_a_table(run, tmp_path: Path) -> None:
    np.save(tmp_path / "z.npy", np.array(1 + 2j, np.complex64))
    r = run("inspect", tmp_path / "z.npy")
    assert r.exit_code == 2 and "holds a single number" in r.stderr and r.stderr.count("\n") == 1, r.stderr
    with pytest.raises(PecliInputError, match="holds a single number"):
        Table.from_array(np.array(1 + 2j))
