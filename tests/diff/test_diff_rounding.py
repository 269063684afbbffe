"""`pecli diff` never calls rounding "a real difference": a few ulps everywhere are rounding, the
recipe pipeline that reproduces A bit for bit is named (proved on every row), and `--ulps N`
accepts them.  Tables are written by independent NumPy code, not by pecli."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from pecli.cli import cli
from tests.helpers import f32_step, fast_math

SPEC = "sinusoidal:len=1500,dim=384"


def numpy_table(n: int = 1500, d: int = 384) -> np.ndarray:
    """The paper's table as a careful NumPy user writes it: float64, cast once to float32."""
    p = np.arange(n, dtype=np.float64)[:, None]
    angle = p / 10000.0 ** (2 * np.arange(d // 2) / d)
    out = np.empty((n, d))
    out[:, 0::2], out[:, 1::2] = np.sin(angle), np.cos(angle)
    return out.astype(np.float32)


def diff(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["diff", *args], env={"COLUMNS": "200"})
    return result.exit_code, result.stdout


def test_a_one_ulp_difference_is_rounding_and_the_reproducing_pipeline_is_named(tmp_path: Path) -> None:
    np.save(tmp_path / "mine.npy", numpy_table())
    code, out = diff(str(tmp_path / "mine.npy"), SPEC)
    assert code == 1  # exact by default: they do differ
    assert out.splitlines()[0] == "DIFFERENT: 1 of 576000 elements (0.000174%) outside |a−b| ≤ 0 + 0·|b|"
    assert "max ulp    1 (in float32)" in out
    cause = next(line for line in out.splitlines() if line.startswith("likely cause:"))
    assert cause.startswith(
        "likely cause: rounding: every difference is within 1 ulp of float32 (1 element): the same table, "
        "rounded differently; sinusoidal:len=1500,dim=384,base=10000,layout=interleaved,start=0,"
        "dtype=float32,compute=float64,form=div (hf-xlm, hf-distilbert) reproduces"
    )
    assert "a real difference" not in out


def test_ulps_accepts_rounding(tmp_path: Path) -> None:
    np.save(tmp_path / "mine.npy", numpy_table())
    code, out = diff(str(tmp_path / "mine.npy"), SPEC, "--ulps", "1")
    assert code == 0 and out.startswith("SAME: all 576000 elements within |a−b| ≤ 0 + 0·|b| or 1 ulp")
    code, out = diff(str(tmp_path / "mine.npy"), SPEC, "--ulps", "1", "--json")
    doc = json.loads(out)
    assert doc["same"] and doc["tolerance"]["ulps"] == 1 and doc["ulp_dtype"] == "float32"


def test_ulps_are_counted_in_the_narrower_dtype(tmp_path: Path) -> None:
    wide = numpy_table(64, 16).astype(np.float64)
    narrow = (wide.astype(np.float16)).astype(np.float16)
    np.save(tmp_path / "wide.npy", wide)
    np.save(tmp_path / "half.npy", narrow)
    code, out = diff(str(tmp_path / "half.npy"), str(tmp_path / "wide.npy"), "--json")
    doc = json.loads(out)
    assert code == 1 and doc["ulp_dtype"] == "float16" and doc["max_ulp"] == 0  # float16 rounding only
    code, out = diff(str(tmp_path / "half.npy"), str(tmp_path / "wide.npy"))
    assert "likely cause: precision: every difference is at most 0.000243, within the rounding of float16" in out, out
    # The bound is said in float16's own unit (2⁻¹⁰ at 1.0), not bfloat16's 2⁻⁸.
    assert "(0.0039 = 4 float16 ulps at 1)" in out, out
    code, out = diff(str(tmp_path / "half.npy"), str(tmp_path / "wide.npy"), "--ulps", "0")
    assert code == 1


def test_rounding_between_two_files_says_where_rounding_comes_from(tmp_path: Path) -> None:
    a = numpy_table(200, 32)
    b = a.copy()
    rng = np.random.default_rng(0)
    picks = rng.choice(a.size, 50, replace=False)
    flat = b.reshape(-1)
    flat[picks] = np.nextafter(flat[picks], np.float32(2), dtype=np.float32)  # 1 ulp up
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    code, out = diff(str(tmp_path / "a.npy"), str(tmp_path / "b.npy"))
    assert code == 1
    assert (
        "likely cause: rounding: every difference is within 1 ulp of float32 (50 elements): the same table, "
        "rounded differently (a float64 pipeline cast once, a division for a multiplication, a framework's "
        "float32 exp)"
    ) in out


def test_a_real_difference_is_still_one(tmp_path: Path) -> None:
    # The column-index exponent (pos/10000)^(2i/d), a bug seen in blog posts: far beyond rounding.
    p = np.arange(100, dtype=np.float64)[:, None]
    angle = (p / 10000.0) ** (2 * np.arange(64) / 128)
    table = np.empty((100, 128), dtype=np.float32)
    table[:, 0::2], table[:, 1::2] = np.sin(angle), np.cos(angle)
    np.save(tmp_path / "bug.npy", table)
    code, out = diff(str(tmp_path / "bug.npy"), "sinusoidal:len=100,dim=128")
    assert code == 1 and "likely cause" not in out and out.rstrip().count("a real difference") == 1


def test_a_text_table_without_its_sidecar_compares_by_value(tmp_path: Path) -> None:
    # np.savetxt with %.9g (what round-trips float32), no sidecar: read back as the float32 it was.
    table = numpy_table(64, 16)
    np.savetxt(
        tmp_path / "t.csv", table, fmt="%.9g", delimiter=",", header=",".join(f"d{j}" for j in range(16)), comments=""
    )
    code, out = diff(str(tmp_path / "t.csv"), "hf-xlm:len=64,dim=16")
    assert code == 0 and out.startswith("SAME: all 1024 elements")
    inspected = CliRunner().invoke(cli, ["inspect", str(tmp_path / "t.csv")]).stdout
    assert "read as    float32: every number round-trips through float32" in inspected
    # float64 numbers written with 17 digits stay float64.
    wide = np.random.default_rng(0).normal(size=(10, 4))
    np.savetxt(tmp_path / "w.csv", wide, fmt="%.17g", delimiter=",", header="d0,d1,d2,d3", comments="")
    inspected = CliRunner().invoke(cli, ["inspect", str(tmp_path / "w.csv"), "--json"]).stdout
    assert json.loads(inspected)["dtype"] == "float64" and "read as" not in json.loads(inspected)["storage"]


def to_bfloat16(x: np.ndarray) -> np.ndarray:
    """float32 rounded to bfloat16 (nearest, ties to even), kept as float32: what torch's .bfloat16() stores."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return rounded.astype(np.uint32).view(np.float32)


def fairseq_table(n: int, dim: int) -> np.ndarray:
    """fairseq's get_embedding in float32 (split [sin | cos], i/(half−1) frequencies), padding row 1 zeroed."""
    half = dim // 2
    freqs = np.exp(np.arange(half, dtype=np.float32) * np.float32(-np.log(10000) / (half - 1)))
    angle = np.arange(n, dtype=np.float32)[:, None] * freqs[None, :]
    table = np.concatenate([np.sin(angle.astype(np.float64)), np.cos(angle.astype(np.float64))], axis=1)
    table = table.astype(np.float32)
    table[1] = 0
    return table


def test_a_bfloat16_copy_is_storage_for_diff_and_identify(tmp_path: Path) -> None:
    exact = fairseq_table(258, 64)
    np.save(tmp_path / "f32.npy", exact)
    np.save(tmp_path / "bf16.npy", to_bfloat16(exact))
    code, out = diff(str(tmp_path / "bf16.npy"), str(tmp_path / "f32.npy"))
    assert code == 1
    assert (
        "likely cause: storage: within bfloat16 rounding of B: A holds bfloat16 values (read as float32); "
        "every element is within bfloat16 rounding of B's (largest"
    ) in out
    result = CliRunner().invoke(cli, ["identify", str(tmp_path / "bf16.npy"), "--json"])
    doc = json.loads(result.stdout)
    assert doc["verdict"] == "match" and "fairseq" in doc["names"], doc["notes"]
    # The candidates are built in bfloat16, so the rebuild it prints is a bfloat16 table.
    assert "the values are bfloat16 (read as float32): candidates are built in bfloat16" in doc["notes"]
    assert "dtype=bfloat16" in doc["check"]
    check = CliRunner().invoke(cli, doc["check"].split()[1:])
    assert check.exit_code == 0


def test_which_side_carries_float32_angles_is_measured(tmp_path: Path) -> None:
    # A is exact (float64 cast once); B is the PyTorch tutorial's float32 pipeline, a recipe.
    # The old wording assumed the recipe side was exact: "A was computed with float32 angles".
    np.save(tmp_path / "mine.npy", numpy_table(4096, 64))
    code, out = diff(str(tmp_path / "mine.npy"), "pytorch-tutorial:len=4096,dim=64")
    assert code == 1
    cause = next(line for line in out.splitlines() if line.startswith("likely cause:"))
    # The recipe side's kind names it: A is the exact table, B the float32 pipeline.
    assert cause.startswith("likely cause: compute exact (A) vs float32 (B); A's rows fit sinusoidal:len=4096,dim=64,")


def test_the_pytorch_tutorial_formulation_is_float32_angles_not_a_real_difference(tmp_path: Path) -> None:
    import math

    n, d = 5000, 512  # the tutorial's PositionalEncoding in float32, each step rounded once (tests.helpers.f32)
    position = np.arange(n, dtype=np.float32)[:, None]
    div_term = f32_step(np.exp, np.arange(0, d, 2, dtype=np.float32) * np.float32(-math.log(10000.0) / d))
    said = {
        # steps rounded once: the float32 pipeline itself
        False: "likely cause: compute float32 (A) vs exact (B); A's rows fit sinusoidal:len=5000,dim=512,base=10000,layout=interleaved,start=0,dtype=float32,compute=float32",
        # a fast-math sin: float32 angles, no pipeline of pecli's
        True: "likely cause: precision: A carries float32 angles (from the exact table: A 0.00067, B 0)",
    }
    for fast, cause_said in said.items():
        angle = fast_math(position * div_term) if fast else position * div_term
        pe = np.zeros((n, d), dtype=np.float32)
        pe[:, 0::2], pe[:, 1::2] = f32_step(np.sin, angle), f32_step(np.cos, angle)
        np.save(tmp_path / "tutorial.npy", pe)
        code, out = diff(str(tmp_path / "tutorial.npy"), "sinusoidal:len=5000,dim=512")
        assert code == 1 and "a real difference" not in out
        cause = next(line for line in out.splitlines() if line.startswith("likely cause:"))
        assert cause.startswith(cause_said), cause


def bf16_safetensors(path: Path, table: np.ndarray) -> None:
    """A BF16 safetensors file written by hand (the format's spec), independent of pecli and torch."""
    import struct

    payload = (to_bfloat16(table).view(np.uint32) >> 16).astype("<u2").tobytes()
    header = json.dumps({"pe": {"dtype": "BF16", "shape": list(table.shape), "data_offsets": [0, len(payload)]}})
    path.write_bytes(struct.pack("<Q", len(header)) + header.encode() + payload)


def test_a_fairseq_table_stored_as_bfloat16_in_safetensors(tmp_path: Path) -> None:
    bf16_safetensors(tmp_path / "pe.safetensors", fairseq_table(1026, 128))
    code, out = diff(str(tmp_path / "pe.safetensors"), "fairseq:len=1024,dim=128")
    assert code == 1
    cause = next(line for line in out.splitlines() if line.startswith("likely cause:"))
    assert cause.startswith("likely cause: storage: within bfloat16 rounding of B: A holds bfloat16 values")
    doc = json.loads(CliRunner().invoke(cli, ["identify", str(tmp_path / "pe.safetensors"), "--json"]).stdout)
    assert doc["verdict"] == "match" and "fairseq" in doc["names"]


def test_bfloat16_tables_one_ulp_apart_are_rounding_counted_in_bfloat16(tmp_path: Path) -> None:
    # torch's route to bfloat16 (float64 → float32 → bfloat16) rounds twice; pecli's bfloat16 recipe
    # rounds once: they differ by one bfloat16 ulp where the float32 value lands on a midpoint.
    wide = np.empty((1500, 384))
    p = np.arange(1500, dtype=np.float64)[:, None]
    angle = p / 10000.0 ** (2 * np.arange(192) / 384)
    wide[:, 0::2], wide[:, 1::2] = np.sin(angle), np.cos(angle)
    twice = to_bfloat16(wide.astype(np.float32))
    bf16_safetensors(tmp_path / "torch.safetensors", twice)
    spec = SPEC + ",dtype=bfloat16"
    code, out = diff(str(tmp_path / "torch.safetensors"), spec)
    lines = out.splitlines()
    assert code == 1 and lines[0].startswith("DIFFERENT: ")
    assert "max ulp    1 (in bfloat16)" in out  # not 65536 float32 ulps
    assert lines[1].endswith("(1500, 384) bfloat16") and "dtype differs" not in out
    cause = next(line for line in lines if line.startswith("likely cause:"))
    assert cause.startswith("likely cause: rounding: every difference is within 1 ulp of bfloat16 (")
    code, out = diff(str(tmp_path / "torch.safetensors"), spec, "--ulps", "1")
    assert code == 0 and out.startswith("SAME: all 576000 elements within |a−b| ≤ 0 + 0·|b| or 1 ulp")
    # Moved by two bfloat16 ulps in one element: two, not 131072.
    bits = twice.view(np.uint32).copy()
    bits[7, 5] += 2 << 16
    bf16_safetensors(tmp_path / "moved.safetensors", bits.view(np.float32))
    code, out = diff(str(tmp_path / "moved.safetensors"), str(tmp_path / "torch.safetensors"), "--json")
    doc = json.loads(out)
    assert doc["max_ulp"] == 2 and doc["ulp_dtype"] == "bfloat16" and doc["mismatched"] == 1
    # Every element one bfloat16 ulp up (the route for tables that mostly differ), one negated:
    # x against −x is twice x's bfloat16 bit pattern apart.
    bits = twice.view(np.uint32) + np.uint32(1 << 16)
    bits[3, 9] = twice.view(np.uint32)[3, 9] ^ np.uint32(1 << 31)
    bf16_safetensors(tmp_path / "all.safetensors", bits.view(np.float32))
    code, out = diff(str(tmp_path / "all.safetensors"), str(tmp_path / "torch.safetensors"), "--json")
    doc = json.loads(out)
    assert doc["max_ulp"] == 2 * int((twice.view(np.uint32)[3, 9] >> 16) & 0x7FFF) and doc["ulp_dtype"] == "bfloat16"
    bits[3, 9] = twice.view(np.uint32)[3, 9] + np.uint32(1 << 16)  # back to x, one ulp up
    bf16_safetensors(tmp_path / "all.safetensors", bits.view(np.float32))
    doc = json.loads(diff(str(tmp_path / "all.safetensors"), str(tmp_path / "torch.safetensors"), "--json")[1])
    assert doc["max_ulp"] == 1 and doc["mismatched"] == 576000


def test_a_bfloat16_table_of_another_base_is_named_by_its_base(tmp_path: Path) -> None:
    # The causes are fitted within the rounding of the dtype the values are held in: bfloat16's
    # for a bfloat16 file read as float32 (float32's slack was 2¹³ times too tight to fit a base).
    p = np.arange(512, dtype=np.float64)[:, None]
    angle = p / 20000.0 ** (2 * np.arange(32) / 64)
    wide = np.empty((512, 64))
    wide[:, 0::2], wide[:, 1::2] = np.sin(angle), np.cos(angle)
    bf16_safetensors(tmp_path / "b20k.safetensors", wide.astype(np.float32))
    for reference in ("sinusoidal:len=512,dim=64,dtype=bfloat16", "sinusoidal:len=512,dim=64"):
        code, out = diff(str(tmp_path / "b20k.safetensors"), reference)
        cause = next(line for line in out.splitlines() if line.startswith("likely cause:"))
        assert code == 1 and cause.startswith("likely cause: base 20000 (A) vs 10000 (B); A's rows fit"), out


def test_a_users_own_json_beside_the_table_is_never_replaced(tmp_path: Path) -> None:
    (tmp_path / "w.npy.json").write_text('{"mine": true}\n')
    for force in ([], ["--force"]):
        result = CliRunner().invoke(
            cli, ["generate", "--len", "4", "--dim", "2", "-o", str(tmp_path / "w.npy"), *force]
        )
        assert result.exit_code == 2 and result.stdout == ""
        assert (tmp_path / "w.npy.json").read_text() == '{"mine": true}\n' and not (tmp_path / "w.npy").exists()
    assert "is not a pecli sidecar: pecli never replaces it, even with --force" in result.stderr


def test_an_old_sidecar_removed_by_another_writer_mid_check_is_no_foreign_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two `pecli generate -o t.npy --force` at once: the other writer unlinks the old sidecar
    # between this one's stat and read of it (CI caught it once in 20 x 8 racing pairs).  Pinned
    # here: the file vanishing mid-check must read as absent, not as "not a pecli sidecar".
    out = tmp_path / "t.npy"
    assert CliRunner().invoke(cli, ["generate", "--len", "4", "--dim", "2", "-o", str(out)]).exit_code == 0
    sidecar = tmp_path / "t.npy.json"
    real_read = Path.read_bytes

    def read_after_the_other_writer(self: Path) -> bytes:
        if self == sidecar:
            self.unlink()
        return real_read(self)

    monkeypatch.setattr(Path, "read_bytes", read_after_the_other_writer)
    result = CliRunner().invoke(
        cli, ["generate", "--len", "4", "--dim", "2", "--base", "500", "-o", str(out), "--force"]
    )
    monkeypatch.undo()
    assert result.exit_code == 0, result.stderr
    assert json.loads(sidecar.read_text())["recipe"]["base"] == 500


def test_a_huge_sidecar_is_not_read(tmp_path: Path) -> None:
    np.save(tmp_path / "t.npy", numpy_table(8, 4))
    with open(tmp_path / "t.npy.json", "wb") as fp:  # 3 GB, sparse: reading it whole took 17 s and 6 GB
        fp.truncate(3 << 30)
    result = CliRunner().invoke(cli, ["inspect", str(tmp_path / "t.npy"), "--json"])
    assert result.exit_code == 0
    assert "too large for a pecli sidecar; ignored" in json.loads(result.stdout)["storage"]["note"]


def test_a_bfloat16_file_against_a_float32_recipe_counts_bfloat16_ulps(tmp_path: Path) -> None:
    # The values are held in bfloat16 on one side: --ulps counts in the coarser dtype, so a
    # bfloat16 copy of the float32 table (each value its float32 value rounded once, here by
    # ml_dtypes' cast of the float64 formula) is within 1 ulp, not 2**16 float32 ulps away.
    import ml_dtypes

    from pecli.formats import write_table
    from pecli.table import Table

    exact = numpy_table(256, 64).astype(np.float64)
    write_table(Table(exact.astype(ml_dtypes.bfloat16), None, "bf16"), tmp_path / "bf.safetensors", fmt="safetensors")
    code, out = diff(str(tmp_path / "bf.safetensors"), "sinusoidal:len=256,dim=64", "--json")
    doc = json.loads(out)
    assert code == 1 and doc["ulp_dtype"] == "bfloat16" and doc["max_ulp"] <= 1
    code, _ = diff(str(tmp_path / "bf.safetensors"), "sinusoidal:len=256,dim=64", "--ulps", "1")
    assert code == 0
