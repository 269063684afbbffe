"""Formats beyond the basics, FILE:KEY and recipe operands, and the export command."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
from pathlib import Path

import h5py
import numpy as np
import pytest

from pecli import FormatError, RecipeError, Sinusoidal, open_table, write_table
from pecli.formats import WriteOptions, list_arrays
from pecli.sources import open_source, parse_recipe, split_file_key
from pecli.table import Table


def bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).tobytes()


# ------------------------------------------------------------------------- recipe operands
def test_recipe_operand_round_trips() -> None:
    r = Sinusoidal(120, 9, base=500000.0, layout="split", start=3, dtype="float64")
    assert r.spec() == "sinusoidal:len=120,dim=9,base=500000,layout=split,start=3,dtype=float64"
    assert parse_recipe(r.spec()) == r
    assert parse_recipe("sinusoidal:len=120,dim=8") == Sinusoidal(120, 8)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("sinusoidal:len=5", "needs dim"),
        ("sinusoidal:len=5,dim=4,colour=red", "unknown parameter 'colour=red'"),
        ("sinusoidal:len=5,dim=x", "dim='x' in 'sinusoidal:len=5,dim=x' is not a whole number"),
        ("sinusoidal:len=5,dim=4,len=6", "given twice"),
        ("sinusoidal:len=5,dim=4,layout=diagonal", "unknown layout 'diagonal'"),
    ],
)
def test_bad_recipe_operands(spec: str, message: str) -> None:
    with pytest.raises(RecipeError, match=message):
        parse_recipe(spec)


def test_file_key_split_handles_colons_in_keys(tmp_path: Path) -> None:
    path = tmp_path / "model.h5"
    path.write_bytes(b"x")
    assert split_file_key(f"{path}:model_weights/pos/embeddings:0") == (str(path), "model_weights/pos/embeddings:0")
    assert split_file_key(str(path)) == (str(path), None)
    assert split_file_key("missing.h5:a") == ("missing.h5:a", None)


# --------------------------------------------------------------------------- checkpoints
def test_safetensors_written_by_the_library_is_read(tmp_path: Path) -> None:
    st = pytest.importorskip("safetensors.numpy")
    rng = np.random.default_rng(1)
    pos = rng.normal(0, 0.02, (514, 16)).astype(np.float32)
    word = rng.normal(size=(30, 16)).astype(np.float32)
    path = tmp_path / "model.safetensors"
    st.save_file(
        {"embeddings.position_embeddings.weight": pos, "embeddings.word_embeddings.weight": word},
        str(path),
        metadata={"format": "pt"},
    )
    keys = {a.key: a.shape for a in list_arrays(path) or []}
    assert keys == {"embeddings.position_embeddings.weight": (514, 16), "embeddings.word_embeddings.weight": (30, 16)}
    with open_source(f"{path}:embeddings.position_embeddings.weight") as t:
        assert t.recipe is None and bits(t.rows(0, 514)) == bits(pos)


def test_pecli_safetensors_is_read_by_the_library(tmp_path: Path) -> None:
    st = pytest.importorskip("safetensors.numpy")
    from safetensors import safe_open

    r = Sinusoidal(64, 12, dtype="float16")
    path = tmp_path / "pe.safetensors"
    write_table(Table.from_recipe(r), path, options=WriteOptions(key="pos_embed"))
    loaded = st.load_file(str(path))
    assert list(loaded) == ["pos_embed"] and bits(loaded["pos_embed"]) == bits(r.build())
    with safe_open(str(path), framework="np") as f:
        meta = f.metadata()
    assert (
        meta["kind"] == "sinusoidal" and meta["dim"] == "12" and json.loads(meta["pecli_recipe"])["dtype"] == "float16"
    )


def test_bfloat16_tensor_reads_exactly_as_float32(tmp_path: Path) -> None:
    values = np.array([[1.0, -2.5], [0.15625, 2.0**100]], dtype=np.float32)
    raw = (values.view(np.uint32) >> 16).astype("<u2")  # these values are exact in bfloat16
    header = json.dumps({"t": {"dtype": "BF16", "shape": [2, 2], "data_offsets": [0, 8]}}).encode()
    path = tmp_path / "bf.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header + raw.tobytes())
    with open_table(path) as t:
        assert t.dtype == np.dtype(np.float32) and bits(t.rows(0, 2)) == bits(values)


@pytest.mark.parametrize(
    ("header", "message"),
    [
        (b'{"t": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 999]}}', "points outside the file"),
        (b'{"t": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 16]}}', "declares 6 values but 16 bytes"),
        (b'{"t": {"dtype": "Q99", "shape": [2, 2], "data_offsets": [0, 16]}}', "malformed entry"),
        (b"[1, 2]", "header is not a JSON object"),
        (b"{not json", "header is not JSON"),
    ],
)
def test_hostile_safetensors_headers(tmp_path: Path, header: bytes, message: str) -> None:
    path = tmp_path / "bad.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * 16)
    with pytest.raises(FormatError, match=message), open_table(path):
        pass


def test_safetensors_huge_declared_header_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "huge.safetensors"
    path.write_bytes(struct.pack("<Q", 10**12) + b"{}")
    with pytest.raises(FormatError, match="header length 1000000000000 does not fit the file"), open_table(path):
        pass


def test_keras_like_h5_checkpoint(tmp_path: Path) -> None:
    table = np.random.default_rng(2).normal(size=(512, 32)).astype(np.float32)
    path = tmp_path / "model.weights.h5"
    with h5py.File(path, "w") as f:
        g = f.create_group("model_weights/position_embedding")
        g.attrs["weight_names"] = [b"position_embedding/embeddings:0"]
        g["position_embedding/embeddings:0"] = table
        f["model_weights/dense/kernel:0"] = np.zeros((32, 8), np.float32)
    key = "model_weights/position_embedding/position_embedding/embeddings:0"
    assert {a.key for a in list_arrays(path) or []} == {key, "model_weights/dense/kernel:0"}
    with open_source(f"{path}:{key}") as t:
        assert bits(t.rows(0, 512)) == bits(table)
    with pytest.raises(FormatError, match="has no dataset 'nope'"), open_source(f"{path}:nope"):
        pass


def test_h5_external_link_is_not_followed(tmp_path: Path) -> None:
    other = tmp_path / "other.h5"
    with h5py.File(other, "w") as f:
        f["secret"] = np.ones((2, 2))
    path = tmp_path / "link.h5"
    with h5py.File(path, "w") as f:
        f["pe"] = h5py.ExternalLink(str(other), "/secret")
    assert list_arrays(path) == []
    with pytest.raises(FormatError, match=r"is an external link to .*other\.h5: pecli does not follow links"):
        with open_source(f"{path}:pe"):
            pass


def test_h5_gzip_compression(tmp_path: Path) -> None:
    r = Sinusoidal(3000, 64)
    path = tmp_path / "z.h5"
    write_table(Table.from_recipe(r), path, options=WriteOptions(compress=("gzip", 6)))
    with open_table(path) as t:
        assert t.info["compression"] == "gzip (level 6)" and t.info["layout"].startswith("chunked")
        assert bits(t.rows(0, 3000)) == bits(r.build())


def test_npz_is_plain_numpy(tmp_path: Path) -> None:
    r = Sinusoidal(40, 6, layout="split")
    path = tmp_path / "pe.npz"
    write_table(Table.from_recipe(r), path, options=WriteOptions(key="table"))
    with np.load(path, allow_pickle=False) as z:
        assert sorted(z.files) == ["pecli_recipe", "table"]
        assert bits(z["table"]) == bits(r.build())
        assert json.loads(str(z["pecli_recipe"]))["layout"] == "split"
    with open_source(str(path)) as t:
        assert t.recipe == r


def test_json_nonfinite_policy_is_lossless(tmp_path: Path) -> None:
    arr = np.array([[np.nan, np.inf], [-np.inf, 0.1]], dtype=np.float32)
    path = tmp_path / "t.json"
    write_table(Table(arr, None, "x"), path)
    doc = json.loads(path.read_text())  # strict JSON: no bare NaN
    assert doc["data"] == [["NaN", "Infinity"], ["-Infinity", float(f"{np.float32(0.1):.9g}")]]
    assert doc["dtype"] == "float32" and np.float32(doc["data"][1][1]) == np.float32(0.1)
    with open_table(path) as t:
        assert bits(t.rows(0, 2)) == bits(arr)


def test_digits_override_for_text(tmp_path: Path) -> None:
    path = tmp_path / "short.csv"
    write_table(Table.from_recipe(Sinusoidal(3, 2)), path, options=WriteOptions(digits=3))
    assert path.read_text().splitlines() == ["d0,d1", "0,1", "0.841,0.54", "0.909,-0.416"]


# ------------------------------------------------------------------------------ C header
@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_c_header_compiles_to_the_same_bits(tmp_path: Path, dtype: str) -> None:
    r = Sinusoidal(50, 7, start=1000, dtype=dtype)
    header = tmp_path / "pe_table.h"
    write_table(Table.from_recipe(r), header, options=WriteOptions(key="pe_table"))
    ctype = "double" if dtype == "float64" else "float"
    (tmp_path / "dump.c").write_text(
        '#include <stdio.h>\n#include "pe_table.h"\n'
        "int main(void) { fwrite(pe_table, sizeof(pe_table), 1, stdout);"
        ' fprintf(stderr, "%d %d", PE_TABLE_ROWS, PE_TABLE_COLS); return 0; }\n'
    )
    subprocess.run(["cc", "-std=c99", "-o", str(tmp_path / "dump"), str(tmp_path / "dump.c")], check=True)
    out = subprocess.run([str(tmp_path / "dump")], capture_output=True, check=True)
    assert out.stderr == b"50 7"
    expected = r.build().astype(np.float32 if ctype == "float" else np.float64)
    assert out.stdout == bits(expected)


def test_c_header_is_write_only(tmp_path: Path) -> None:
    path = tmp_path / "t.h"
    write_table(Table.from_recipe(Sinusoidal(2, 2)), path)
    with pytest.raises(FormatError, match="write-only format"), open_table(path):
        pass


# ---------------------------------------------------------------------------- export CLI
@pytest.mark.parametrize("src_ext", [".h5", ".npy", ".safetensors", ".json"])
@pytest.mark.parametrize("dst_ext", [".npz", ".csv", ".safetensors", ".h5"])
def test_export_converts_bit_exactly_and_keeps_the_recipe(run, tmp_path: Path, src_ext: str, dst_ext: str) -> None:
    src, dst = tmp_path / f"a{src_ext}", tmp_path / f"b{dst_ext}"
    assert (
        run(
            "generate", "--len", 33, "--dim", 10, "--layout", "split", "--start", 2, "--dtype", "float64", "-o", src
        ).exit_code
        == 0
    )
    r = run("export", src, "-o", dst)
    assert (r.exit_code, r.stdout, r.stderr) == (0, "", "")
    with open_table(dst) as t:
        assert t.recipe == Sinusoidal(33, 10, layout="split", start=2, dtype="float64")
        assert bits(t.rows(0, 33)) == bits(t.recipe.build())


def test_export_from_recipe_options_and_operand(run, tmp_path: Path) -> None:
    assert run("export", "--len", 20, "--dim", 4, "-o", tmp_path / "a.npy").exit_code == 0
    assert run("export", "sinusoidal:len=20,dim=4", "-o", tmp_path / "b.npy").exit_code == 0
    assert (tmp_path / "a.npy").read_bytes() == (tmp_path / "b.npy").read_bytes()


def test_export_dtype_conversion_records_provenance(run, tmp_path: Path) -> None:
    src = tmp_path / "a.h5"
    run("generate", "--len", 30, "--dim", 6, "--dtype", "float64", "-o", src)
    assert run("export", src, "-o", tmp_path / "b.safetensors", "--dtype", "float16").exit_code == 0
    with open_table(tmp_path / "b.safetensors") as t:
        assert t.dtype == np.float16 and t.provenance == {"converted_from": "float64"}
        assert t.recipe == Sinusoidal(30, 6, dtype="float16")
        assert bits(t.rows(0, 30)) == bits(Sinusoidal(30, 6, dtype="float64").build().astype(np.float16))


def test_export_key_of_checkpoint_to_stdout(run, tmp_path: Path) -> None:
    st = pytest.importorskip("safetensors.numpy")
    wpe = np.random.default_rng(3).normal(size=(8, 4)).astype(np.float32)
    path = tmp_path / "gpt2.safetensors"
    st.save_file({"wpe.weight": wpe, "wte.weight": np.zeros((5, 4), np.float32)}, str(path))
    r = run("export", f"{path}:wpe.weight", "-o", "-", "--to", "csv")
    assert r.exit_code == 0
    assert np.array_equal(np.loadtxt(r.stdout.splitlines()[1:], delimiter=",", dtype=np.float32), wpe)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["export", "--len", "5", "--dim", "4"], "Missing option -o/--output"),
        (["export", "x.npy", "-o", "y.npy"], "x.npy does not exist"),
        (["export", "--len", "5", "--dim", "4", "-o", "t.xls"], "cannot tell the format of 't.xls'"),
        (
            ["export", "--len", "5", "--dim", "4", "-o", "t.npy", "--compress", "gzip"],
            "--compress applies to HDF5 output only",
        ),
        (
            ["export", "--len", "5", "--dim", "4", "-o", "t.h5", "--compress", "zstd"],
            "'zstd' is not gzip or gzip:LEVEL",
        ),
        (["export", "--len", "5", "--dim", "4", "-o", "-", "--to", "h5"], "h5 cannot be written to a stream"),
        (
            ["export", "--len", "5", "--dim", "4", "-o", "t.npz", "--key", "pecli_recipe"],
            "reserved for pecli's metadata",
        ),
        (
            ["export", "sinusoidal:len=5,dim=4", "--base", "2", "-o", "t.npy"],
            "give a SOURCE or recipe options, not both (--base given",
        ),
        (["inspect", "sinusoidal:len=5"], "'sinusoidal:len=5' needs dim"),
    ],
)
def test_export_errors(run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], message: str) -> None:
    monkeypatch.chdir(tmp_path)
    r = run(*args)
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and message in r.stderr, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_inspect_lists_arrays_of_a_checkpoint(run, tmp_path: Path) -> None:
    path = tmp_path / "m.h5"
    with h5py.File(path, "w") as f:
        f["a"] = np.zeros((4, 2), np.float32)
        f["b/c"] = np.ones((3, 5), np.float64)
    r = run("inspect", path)
    assert r.exit_code == 0
    assert r.stdout.splitlines() == [
        f"{path} holds 2 arrays; pick one as {path}:KEY",
        "key  shape   dtype",
        "────────────────────",
        "a    (4, 2)  float32",
        "b/c  (3, 5)  float64",
    ]
    r = run("inspect", f"{path}:b/c", "--pos", 1)
    assert r.exit_code == 0 and r.stdout.splitlines()[-1].split() == ["4", "1.0000"]


def test_inspect_recipe_operand(run) -> None:
    assert (
        run("inspect", "sinusoidal:len=120,dim=8", "--pos", 2).stdout
        == run("inspect", "--len", 120, "--dim", 8, "--pos", 2).stdout
    )


# ----------------------------------------------------------------------------- PyTorch .pt
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_pt_round_trip_with_recipe(tmp_path: Path, dtype: str) -> None:
    pytest.importorskip("torch")
    r = Sinusoidal(50, 9, layout="split", dtype=dtype)  # type: ignore[arg-type]
    path = tmp_path / "pe.pt"
    write_table(Table.from_recipe(r), path)
    with open_table(path) as t:
        assert t.recipe == r and bits(t.rows(0, 50)) == bits(r.build())


def test_pt_state_dict_checkpoint(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    model = torch.nn.Module()
    model.wpe = torch.nn.Embedding(16, 8)
    model.wte = torch.nn.Embedding(30, 8)
    path = tmp_path / "model.pt"
    torch.save(model.state_dict(), path)
    with open_source(f"{path}:wpe.weight") as t:
        assert bits(t.rows(0, 16)) == bits(model.wpe.weight.detach().numpy())


class _Evil:
    def __reduce__(self) -> tuple[object, tuple[str]]:
        import os

        return (os.system, ("touch pwned",))


def test_pt_never_runs_pickled_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    import pickle

    monkeypatch.chdir(tmp_path)
    (tmp_path / "evil.pt").write_bytes(pickle.dumps({"pe": _Evil()}))
    with pytest.raises(FormatError, match=r"not a \.pt file pecli can load safely"), open_table(tmp_path / "evil.pt"):
        pass
    assert not (tmp_path / "pwned").exists()


def test_pt_without_torch_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "torch", None)  # import torch now raises ImportError
    with pytest.raises(FormatError, match=r"the \.pt format needs PyTorch: pip install torch"):
        write_table(Table.from_recipe(Sinusoidal(2, 2)), tmp_path / "t.pt")
    assert list(tmp_path.iterdir()) == []


def test_inspect_checkpoint_position_from_the_cli(run, tmp_path: Path) -> None:
    st = pytest.importorskip("safetensors.numpy")
    pos = np.random.default_rng(4).normal(0, 0.02, (512, 6)).astype(np.float32)
    path = tmp_path / "model.safetensors"
    st.save_file(
        {"embeddings.position_embeddings.weight": pos, "embeddings.word_embeddings.weight": pos[:10]}, str(path)
    )
    r = run("inspect", f"{path}:embeddings.position_embeddings.weight", "--pos", 0, "--decimals", 6)
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == f"{path}:embeddings.position_embeddings.weight  (512, 6) float32  position 0"
    assert [float(line.split()[1]) for line in lines[3:]] == [round(float(v), 6) for v in pos[0]]


def test_stored_recipe_labels_only_its_own_array(tmp_path: Path) -> None:
    r = Sinusoidal(8, 4)
    path = tmp_path / "two.safetensors"
    write_table(Table.from_recipe(r), path)
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    data = raw[8 + n :]
    header["other"] = {"dtype": "F32", "shape": [8, 4], "data_offsets": [len(data), 2 * len(data)]}
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + data + data)
    with open_source(f"{path}:pe") as t:
        assert t.recipe == r
    with open_source(f"{path}:other") as t:
        assert t.recipe is None and bits(t.rows(0, 8)) == bits(r.build())
