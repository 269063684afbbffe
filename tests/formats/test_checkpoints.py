"""Whole checkpoints (issue 42, item 2): ``pecli identify ckpt`` finds the positional arrays among
the rest and names each; ``pecli diff a b`` compares them key by key.

The checkpoints are written by the ``safetensors`` library; their tables by independent NumPy code:
the paper's sinusoid in float64 cast once to float32, transformers' ``inv_freq`` in float32
(``1 / base ** (arange(0, d, 2) / d)``), a learned table drawn like GPT-2's (normal, std 0.02).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.helpers import f32_step, write_gguf

safetensors_numpy = pytest.importorskip("safetensors.numpy")


def paper(n: int, d: int, base: float = 10000.0) -> np.ndarray:
    pos = np.arange(n, dtype=np.float64)[:, None]
    div = np.exp(np.arange(0, d, 2) * (-np.log(base) / d))
    pe = np.zeros((n, d))
    pe[:, 0::2], pe[:, 1::2] = np.sin(pos * div), np.cos(pos * div)
    return pe.astype(np.float32)


def checkpoint(path: Path, base: float = 10000.0) -> Path:
    """50 weight matrices, a position_ids buffer, and 3 positional arrays (one named by nothing)."""
    safetensors_numpy.save_file(tensors_of(base), str(path))
    return path


def tensors_of(base: float = 10000.0, weights: int = 50) -> dict[str, np.ndarray]:
    """:func:`checkpoint`'s arrays: ``weights`` weight matrices, position_ids and 3 positional arrays."""
    rng = np.random.default_rng(0)
    tensors = {f"layers.{i}.mlp.weight": rng.standard_normal((16, 24)).astype(np.float32) for i in range(weights)}
    tensors["position_ids"] = np.arange(128, dtype=np.int64)[None, :]
    tensors["wpe.weight"] = (rng.standard_normal((128, 64)) * 0.02).astype(np.float32)
    exponents = np.arange(0, 64, 2, dtype=np.int64).astype(np.float32) / np.float32(64)
    powers = f32_step(np.power, np.float32(10000.0), exponents)  # the same bits on every CPU
    tensors["layers.0.attn.rotary_emb.inv_freq"] = (np.float32(1) / powers).astype(np.float32)
    tensors["encoder.table"] = paper(128, 64, base)
    return tensors


def test_identify_of_a_checkpoint_finds_its_positional_arrays(run, tmp_path: Path) -> None:
    ckpt = checkpoint(tmp_path / "model.safetensors")
    r = run("identify", ckpt, "--json")
    assert r.exit_code == 0, r.output
    arrays = {a["key"]: a for a in json.loads(r.output)["arrays"]}
    assert len(arrays) == 54
    found = {k for k, a in arrays.items() if a["positional"]}
    assert found == {"wpe.weight", "layers.0.attn.rotary_emb.inv_freq", "encoder.table"}
    assert arrays["encoder.table"]["why"] == "first row"  # its name says nothing
    assert arrays["position_ids"]["why"] == "i64 values"  # as safetensors names its dtype: ids, no table
    verdicts = {k: arrays[k]["identification"]["verdict"] for k in found}
    assert verdicts == {"wpe.weight": "learned", "layers.0.attn.rotary_emb.inv_freq": "match", "encoder.table": "match"}
    assert arrays["layers.0.attn.rotary_emb.inv_freq"]["identification"]["best"]["recipe"]["part"] == "inv_freq"
    r = run("identify", ckpt)
    assert r.output.splitlines()[0].endswith("54 arrays, 3 positional")
    assert "encoder.table  (128, 64) float32  MATCH" in r.output
    # The rest one line a reason (keys as the file lists them), not 51 lines of the same words.
    skipped = sorted(x for x in r.output.splitlines() if x.startswith("skipped"))
    assert skipped == [
        "skipped layers.0.mlp.weight, layers.1.mlp.weight, layers.10.mlp.weight and 47 more: neither its name "
        "nor its first row says position (--json lists each)",
        "skipped position_ids: i64 values",
    ]


def inv_freq(base: float = 10000.0, dim: int = 64) -> np.ndarray:
    """transformers' ``1 / base ** (arange(0, dim, 2) / dim)`` in float32 (the same bits on every CPU)."""
    exponents = np.arange(0, dim, 2, dtype=np.int64).astype(np.float32) / np.float32(dim)
    return (np.float32(1) / f32_step(np.power, np.float32(base), exponents)).astype(np.float32)


def test_arrays_of_the_same_bytes_are_identified_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every layer's inv_freq (GPT-NeoX, Pythia): identified once, each named as itself, and the
    report the same as identifying each one (the reuse off); another base is identified again.  A
    transposed sinusoid's note says what its transpose is, not where it is: reused too."""
    import pecli.checkpoints as checkpoints
    import pecli.identification as identification
    import pecli.repeats as repeats
    from pecli.formats import list_arrays

    tensors = {f"layers.{i}.attn.rotary_emb.inv_freq": inv_freq() for i in range(6)}
    tensors["layers.3.attn.rotary_emb.inv_freq"] = inv_freq(500000.0)
    tensors.update({f"enc.{i}.pos_table": np.ascontiguousarray(paper(96, 32).T) for i in range(2)})
    path = tmp_path / "neox.safetensors"
    safetensors_numpy.save_file(tensors, str(path))
    calls: list[str] = []
    real = identification.identify

    def counted(table, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(table.source.removeprefix(f"{path}:"))
        return real(table, **kwargs)

    monkeypatch.setattr(identification, "identify", counted)
    arrays = list_arrays(str(path), None)
    reused = [e.to_dict() for e in checkpoints.scan(str(path), None, arrays)]
    # enc.0 (and its transpose, which identify tries itself), base 10000 once, base 500000 once
    assert calls == [
        "enc.0.pos_table",
        "enc.0.pos_table transposed",
        *(f"layers.{i}.attn.rotary_emb.inv_freq" for i in (0, 3)),
    ]
    monkeypatch.setattr(repeats, "SAME_BYTES_AT_MOST", 0)
    calls.clear()
    assert reused == [e.to_dict() for e in checkpoints.scan(str(path), None, arrays)]
    assert len(calls) == 8 + 2
    by_key = {e["key"]: e["identification"] for e in reused}
    assert {by_key[k]["source"] for k in tensors} == {f"{path}:{k}" for k in tensors}
    assert by_key["layers.3.attn.rotary_emb.inv_freq"]["best"]["recipe"]["base"] == 500000.0
    assert by_key["layers.5.attn.rotary_emb.inv_freq"]["check"].startswith(f"pecli diff {path}:layers.5.")


def test_pairs_of_the_same_bytes_are_compared_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two GPT-NeoX checkpoints a base apart in every layer but one: each distinct pair compared
    once (a differing pair's causes are fitted: 0.24 s), each key's line named as itself, and the
    report the same as comparing each pair (the reuse off)."""
    import pecli.checkpoints as checkpoints
    import pecli.diff as diff
    import pecli.repeats as repeats
    from pecli.formats import list_arrays

    a = {f"layers.{i}.attn.rotary_emb.inv_freq": inv_freq() for i in range(6)}
    b = {k: inv_freq(500000.0) for k in a}
    b["layers.2.attn.rotary_emb.inv_freq"] = inv_freq()
    paths = tmp_path / "a.safetensors", tmp_path / "b.safetensors"
    for path, tensors in zip(paths, (a, b), strict=True):
        safetensors_numpy.save_file(tensors, str(path))
    calls: list[str] = []
    real = diff.compare

    def counted(ta, tb, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(ta.source)
        return real(ta, tb, **kwargs)

    monkeypatch.setattr(diff, "compare", counted)
    sides = (str(paths[0]), str(paths[1]))
    arrays = (list_arrays(sides[0], None), list_arrays(sides[1], None))

    def report() -> list[dict[str, Any]]:
        return [
            {"key": r.key, "note": r.note, **(r.comparison.to_dict() if r.comparison else {})}
            for r in checkpoints.compare_checkpoints(*sides, None, arrays)
        ]

    reused = report()
    assert [c.removeprefix(f"{sides[0]}:") for c in calls] == [f"layers.{i}.attn.rotary_emb.inv_freq" for i in (0, 2)]
    monkeypatch.setattr(repeats, "SAME_BYTES_AT_MOST", 0)
    calls.clear()
    assert reused == report() and len(calls) == 6
    for r in reused:
        assert (r["a"]["source"], r["b"]["source"]) == (f"{sides[0]}:{r['key']}", f"{sides[1]}:{r['key']}")
    assert [r["same"] for r in reused] == [i == 2 for i in range(6)]
    assert all("base 10000 (A) vs 500000 (B)" in str(r["explanations"]) for r in reused if not r["same"])


def test_a_comparison_that_names_its_arrays_is_not_given_to_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A comparison naming its arrays beyond its sides' sources (diff's "reproduces A bit for bit"
    cause does) would be wrong for another pair of the same bytes: each pair is compared afresh,
    also in a folder named é and under keys with a quote (found by review: the JSON escapes of é
    and " hid the names, and the second key's line named the first)."""
    from dataclasses import replace

    import pecli.checkpoints as checkpoints
    import pecli.diff as diff
    from pecli.formats import list_arrays

    folder = tmp_path / "é"
    folder.mkdir()
    sides = str(folder / "a.safetensors"), str(folder / "b.safetensors")
    for side, base in zip(sides, (10000.0, 500000.0), strict=True):
        safetensors_numpy.save_file({f'layer "{i}".rotary_emb.inv_freq': inv_freq(base) for i in range(3)}, side)
    real = diff.compare
    monkeypatch.setattr(
        diff, "compare", lambda ta, tb, **kw: replace(real(ta, tb, **kw), causes_checked_on=f"rows of {ta.source}")
    )
    arrays = (list_arrays(sides[0], None), list_arrays(sides[1], None))
    results = list(checkpoints.compare_checkpoints(*sides, None, arrays))
    assert [r.comparison.causes_checked_on for r in results if r.comparison is not None] == [
        f'rows of {sides[0]}:layer "{i}".rotary_emb.inv_freq' for i in range(3)
    ]


def test_only_arrays_that_look_alike_are_read_whole_to_be_told_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sinusoids of two bases share their first row, not their last: neither is read whole to be
    hashed (found by review: hashing every positional array read each once more, 1.75 s → 5.8 s
    for HDF5 datasets of small gzip chunks); a repeat is, and the array it repeats."""
    import pecli.repeats as repeats
    from pecli.checkpoints import scan
    from pecli.formats import list_arrays

    hashed: list[str] = []
    real = repeats.digest

    def counted(table):  # type: ignore[no-untyped-def]
        hashed.append(table.source.rsplit(":", 1)[1])
        return real(table)

    monkeypatch.setattr(repeats, "digest", counted)
    path = tmp_path / "two.safetensors"
    safetensors_numpy.save_file({"a.pos": paper(128, 64), "b.pos": paper(128, 64, base=500.0)}, str(path))
    assert [e.found.verdict for e in scan(str(path), None, list_arrays(str(path), None)) if e.found] == ["match"] * 2
    assert hashed == []
    safetensors_numpy.save_file({"a.pos": paper(128, 64), "b.pos": paper(128, 64)}, str(path))
    list(scan(str(path), None, list_arrays(str(path), None)))
    assert sorted(hashed) == ["a.pos", "b.pos"]


def test_an_unreadable_array_is_reported_as_before(run, tmp_path: Path) -> None:
    """A chunk that cannot be read in the middle of an array looked at for repeats: the error names
    the rows identify was reading, not a read of the whole array (found by review: ``rows 0..4096``
    where it said ``rows 2048..2049``)."""
    h5py = pytest.importorskip("h5py")
    path = tmp_path / "corrupt.h5"
    with h5py.File(path, "w") as f:
        for i in range(3):
            f.create_dataset(f"pos_emb{i}", data=paper(4096, 64), chunks=(64, 64), compression="gzip")
        offset = f["pos_emb1"].id.get_chunk_info_by_coord((2048, 0)).byte_offset
    with open(path, "r+b") as fp:
        fp.seek(offset + 10)
        fp.write(b"\xff" * 64)  # that chunk's deflate stream is broken
    r = run("identify", path, "--json")
    errors = {a["key"]: a["error"] for a in json.loads(r.output)["arrays"]}
    assert errors["pos_emb0"] is None and errors["pos_emb2"] is None
    assert "rows 2048.." in errors["pos_emb1"], errors["pos_emb1"]


def test_arrays_of_the_same_bytes_in_other_shapes_are_each_identified(tmp_path: Path) -> None:
    """DETR's channels-first map stored (64, 6, 10) and the same bytes stored (32, 12, 10): read as
    the same 384×10 rows, but only the first is that map read channels-first, and each says what
    it says alone (found by review: the second took the first one's note, in either order)."""
    from tests.kinds.test_sincos2d_detr import detr_map

    rows = np.ascontiguousarray(detr_map(6, 10, 32, "deformable").astype(np.float32).T)  # (64, 60)
    alone = {}
    for key, shape in (("pos_embed_a", (64, 6, 10)), ("pos_embed_b", (32, 12, 10))):
        np.savez(tmp_path / f"{key}.npz", **{key: rows.reshape(shape)})
        alone[key] = identified(tmp_path / f"{key}.npz")[key]
    assert "read channels-first" in " ".join(alone["pos_embed_a"]["notes"])
    assert "read channels-first" not in " ".join(alone["pos_embed_b"]["notes"])
    for order in (("pos_embed_a", "pos_embed_b"), ("pos_embed_b", "pos_embed_a")):
        path = tmp_path / f"both_{order[0]}.npz"
        np.savez(path, **{key: rows.reshape((64, 6, 10) if key.endswith("a") else (32, 12, 10)) for key in order})
        both = identified(path)
        for key in order:
            assert both[key]["notes"] == alone[key]["notes"], (order, key)


def identified(path: Path) -> dict[str, Any]:
    """``pecli identify PATH --json``'s identification of each positional array, by key."""
    from pecli.checkpoints import scan
    from pecli.formats import list_arrays

    arrays = list_arrays(str(path), None)
    return {e.key: e.to_dict()["identification"] for e in scan(str(path), None, arrays) if e.positional}


def test_a_mostly_unstored_array_is_refused_unread_in_a_scan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 4 MB HDF5 dataset of which one chunk is written: identify refuses it before reading it,
    and a scan does not read it whole to hash it first (found by review: its million chunks took
    17 s to read where the refusal took 0.3 s)."""
    h5py = pytest.importorskip("h5py")
    from pecli.checkpoints import scan
    from pecli.formats import list_arrays
    from pecli.table import Table

    path = tmp_path / "sparse.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("pos_embed", (1024, 1024), "f4", chunks=(1, 1))[0, 0] = 1
        f.create_dataset("wpe", data=(np.random.default_rng(0).standard_normal((64, 32)) * 0.02).astype(np.float32))
    read: list[tuple[str, int]] = []
    rows = Table.rows

    def counted(self: Table, r0: int, r1: int) -> Any:
        read.append((self.source, r1 - r0))
        return rows(self, r0, r1)

    monkeypatch.setattr(Table, "rows", counted)
    entries = {e.key: e for e in scan(str(path), None, list_arrays(str(path), None))}
    assert "declared" in entries["pos_embed"].error and "stored" in entries["pos_embed"].error
    assert sum(n for source, n in read if source.endswith(":pos_embed")) <= 1  # its first row, the probe
    assert entries["wpe"].found is not None and entries["wpe"].found.verdict == "learned"


def test_an_identification_that_names_its_array_is_not_given_to_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No identification names its own array beyond ``source`` today; one that did (a note, the
    sample's words) would be wrong for another array of the same bytes: it is identified afresh."""
    from dataclasses import replace

    import pecli.checkpoints as checkpoints
    import pecli.identification as identification
    from pecli.formats import list_arrays

    path = tmp_path / "layers.safetensors"
    safetensors_numpy.save_file({f"layers.{i}.rotary_emb.inv_freq": inv_freq() for i in range(3)}, str(path))
    real = identification.identify
    monkeypatch.setattr(
        identification, "identify", lambda table, **kw: replace(real(table, **kw), notes=[f"read from {table.source}"])
    )
    entries = list(checkpoints.scan(str(path), None, list_arrays(str(path), None)))
    assert [e.found.notes for e in entries if e.found is not None] == [
        [f"read from {path}:layers.{i}.rotary_emb.inv_freq"] for i in range(3)
    ]


def test_diff_of_two_checkpoints_compares_the_positional_arrays_key_by_key(run, tmp_path: Path) -> None:
    a = checkpoint(tmp_path / "a.safetensors")
    b = checkpoint(tmp_path / "b.safetensors", base=1000.0)
    r = run("diff", a, b)
    assert r.exit_code == 1, r.output
    lines = r.output.splitlines()
    assert lines[0].startswith("DIFFERENT: 1 of 3 positional arrays")
    assert "wpe.weight: same" in lines and "layers.0.attn.rotary_emb.inv_freq: same" in lines
    assert any(x.startswith("encoder.table: ") and "likely cause: base 10000 (A) vs 1000 (B)" in x for x in lines)
    assert not any("mlp" in x for x in lines)  # the rest are no positional tables
    r = run("diff", a, a, "--json")
    assert r.exit_code == 0
    assert json.loads(r.output)["same"] is True


def test_an_array_that_cannot_be_read_is_listed_and_the_scan_goes_on(run, tmp_path: Path) -> None:
    path = tmp_path / "mixed.npz"
    np.savez(path, pe=paper(32, 16), odd=np.array([{"a": 1}], dtype=object))
    r = run("identify", path)
    assert r.exit_code == 0, r.output
    assert "pe  (32, 16) float32  MATCH" in r.output
    assert "skipped odd:" in r.output
    only = tmp_path / "only.npz"
    np.savez(only, pe=paper(32, 16), w=np.ones((2, 3), dtype=np.float32) * 0.5)
    r = run("diff", only, path)  # odd, only in B, cannot even be probed: said so, and the exit status counts it
    assert r.exit_code == 1
    assert "pe: same" in r.output and "odd: unreadable:" in r.output


# -- each multi-array format, opened once for a scan (pecli.formats.kept) ------------------------------
def _write_npz(path: Path, tensors: dict[str, np.ndarray]) -> None:
    np.savez(path, **tensors)


def _write_h5(path: Path, tensors: dict[str, np.ndarray]) -> None:
    import h5py

    with h5py.File(path, "w") as f:
        for key, value in tensors.items():
            f[key] = value


def _write_gguf(path: Path, tensors: dict[str, np.ndarray]) -> None:
    write_gguf(path, "llama", {}, tensors)


def _write_pt(path: Path, tensors: dict[str, np.ndarray]) -> None:
    torch = pytest.importorskip("torch")
    torch.save({k: torch.from_numpy(v) for k, v in tensors.items()}, path)


def _write_safetensors(path: Path, tensors: dict[str, np.ndarray]) -> None:
    safetensors_numpy.save_file(tensors, str(path))


#: Each format's writer, and what its reader does once per opening of the file: the module and the
#: function a scan must not call once an array (the listing, the load, the forked probe).
WRITERS = {
    ".npz": (_write_npz, "pecli.formats.npy", "_npz_arrays"),
    ".h5": (_write_h5, "pecli.formats.hdf5", "_probe"),
    ".gguf": (_write_gguf, "pecli.formats.gguf", "open_reader"),
    ".pt": (_write_pt, "pecli.formats.torch", "_load"),
    ".safetensors": (_write_safetensors, "pecli.formats.safetensors", "_arrays"),
}


@pytest.mark.parametrize("ext", list(WRITERS))
def test_a_scan_opens_the_file_once_whatever_its_number_of_arrays(
    run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ext: str
) -> None:
    """Each reader opened and listed the whole file for every array it read: a scan of N arrays cost
    N² (an .npz of 2,000 arrays took 187 s, a .pt 287 s, loading the whole file each time).  Now the
    file is opened once per scan: the count is the same for 10 weight matrices as for 40."""
    import importlib

    write, module_name, function = WRITERS[ext]
    module = importlib.import_module(module_name)
    real = getattr(module, function)
    calls: list[int] = []

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, function, counted)
    counts = []
    for weights in (10, 40):
        path = tmp_path / f"w{weights}{ext}"
        write(path, tensors_of(weights=weights))
        calls.clear()
        r = run("identify", path, "--json")
        assert r.exit_code == 0, r.output
        arrays = {a["key"]: a for a in json.loads(r.output)["arrays"]}
        assert len(arrays) == weights + 4
        found = {k for k, a in arrays.items() if a["positional"]}
        assert found == {"wpe.weight", "layers.0.attn.rotary_emb.inv_freq", "encoder.table"}, ext
        counts.append(len(calls))
    assert counts[0] == counts[1] <= 3, counts


def test_a_dataset_libhdf5_cannot_read_is_probed_alone_and_listed(run, tmp_path: Path) -> None:
    """The scan's one forked child reads every dataset; one it cannot read (its data in a file that
    is not there) is probed on its own, said unreadable, and the scan goes on."""
    import h5py

    path = tmp_path / "mixed.h5"
    with h5py.File(path, "w") as f:
        f["pe"] = paper(32, 16)
        f.create_dataset("elsewhere", shape=(4, 4), dtype="f4", external=[("missing.bin", 0, 64)])
        f["w"] = np.full((2, 3), 0.5, dtype=np.float32)
    r = run("identify", path, "--json")
    assert r.exit_code == 0, r.output
    arrays = {a["key"]: a for a in json.loads(r.output)["arrays"]}
    assert arrays["pe"]["identification"]["verdict"] == "match"
    assert arrays["elsewhere"]["why"] == "unreadable" and arrays["elsewhere"]["error"]
    assert arrays["w"]["why"] != "unreadable"


def test_an_npz_entry_in_a_scan_is_mapped_and_reads_as_numpy_does(tmp_path: Path) -> None:
    """Probed in a scan, an entry ``np.savez`` stored uncompressed is memory-mapped where its data
    lies (a probe reads one row, not the whole entry); C and Fortran order and a big-endian dtype
    read as ``np.load`` reads them; a compressed entry, and any entry read for its values, is read
    whole, as before."""
    from pecli.formats import kept_open, open_table

    base = paper(16, 8)
    arrays = {"c": base, "f": np.asfortranarray(base), "big": base.astype(">f4"), "f64": base.astype(np.float64) / 3}
    np.savez(tmp_path / "stored.npz", **arrays)
    np.savez_compressed(tmp_path / "deflated.npz", **arrays)
    for name, probing, mapped in (
        ("stored.npz", True, True),
        ("deflated.npz", True, False),
        ("stored.npz", False, False),
    ):
        with kept_open(probing):
            for key, want in arrays.items():
                with open_table(tmp_path / name, None, key) as table:
                    np.testing.assert_array_equal(table.rows(0, 16), np.load(tmp_path / name)[key])
                    np.testing.assert_array_equal(table.rows(3, 5), want[3:5])
                    if key == "c":
                        assert isinstance(table.row_source.data, np.memmap) == mapped, (name, probing)  # type: ignore[attr-defined]


def test_a_positional_npz_entry_is_read_whole_and_its_crc_checked(run, tmp_path: Path) -> None:
    """A scan probes a stored entry through a memory map (its first row), but reads a positional
    one whole for its identification, so zipfile checks its CRC-32: a damaged byte in its last row
    makes it unreadable, as it was when every entry was read whole."""
    table = paper(2048, 64)
    path = tmp_path / "damaged.npz"
    np.savez(path, pe=table, w=np.full((4, 8), 0.5, dtype=np.float32))
    data = bytearray(path.read_bytes())
    at = data.find(table[-1].tobytes())
    assert at > 0
    data[at + 5] ^= 0x10
    path.write_bytes(bytes(data))
    r = run("identify", path, "--json")
    assert r.exit_code == 0, r.output
    arrays = {a["key"]: a for a in json.loads(r.output)["arrays"]}
    assert arrays["pe"]["why"] == "unreadable" and "CRC" in arrays["pe"]["error"]
    assert arrays["w"]["why"] != "unreadable"


def test_scans_interleaved_keep_their_files_to_themselves(tmp_path: Path) -> None:
    """Two scans stepped in turn (generators), and what their consumer opens between two steps:
    neither scan's kept files serve anything outside its own steps, and each scan's results are
    those of a scan alone (a scope set across a ``yield`` leaked into the consumer, and a scan
    that ended first left the other's consumer with closed files)."""
    from pecli.checkpoints import scan
    from pecli.formats import list_arrays, open_table
    from pecli.formats.kept import keeping

    a, b = tmp_path / "a.npz", tmp_path / "b.npz"
    np.savez(a, **tensors_of(weights=3))
    np.savez(b, **tensors_of(base=1000.0, weights=3))
    alone = [
        [(e.key, e.positional, e.found and e.found.verdict) for e in scan(str(p), None, list_arrays(p))] for p in (a, b)
    ]
    ga, gb = scan(str(a), None, list_arrays(a)), scan(str(b), None, list_arrays(b))
    first = [next(ga), next(gb)]
    assert not keeping()
    rest_a = list(ga)
    with open_table(a, None, "encoder.table") as table:  # b's scan still suspended
        assert not isinstance(table.row_source.data, np.memmap)  # type: ignore[attr-defined]
    rest_b = list(gb)
    with open_table(b, None, "encoder.table") as table:
        assert table.shape == (128, 64)
    got = [[first[0], *rest_a], [first[1], *rest_b]]
    assert [[(e.key, e.positional, e.found and e.found.verdict) for e in side] for side in got] == alone


def test_a_pt_file_whose_entries_were_compressed_is_read_whole(run, tmp_path: Path) -> None:
    """torch.save stores its entries uncompressed, and pecli maps them; a file re-zipped with
    compression cannot be mapped, and is loaded whole, as torch.load itself does."""
    import zipfile

    torch = pytest.importorskip("torch")
    plain, packed = tmp_path / "plain.pt", tmp_path / "packed.pt"
    torch.save({"pe": torch.from_numpy(paper(32, 16)), "w": torch.ones(2, 3)}, plain)
    with zipfile.ZipFile(plain) as src, zipfile.ZipFile(packed, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info.filename))
    assert torch.load(packed, weights_only=True)["pe"].shape == (32, 16)
    r = run("identify", packed)
    assert r.exit_code == 0, r.output
    assert "pe  (32, 16) float32  MATCH" in r.output


def test_a_bfloat16_table_in_a_checkpoint_is_scanned(run, tmp_path: Path) -> None:
    """A bfloat16 positional table is a float table: ml_dtypes' bfloat16 is no ``np.floating``, and
    NumPy saves it as 2-byte void entries (``|V2``), which the listing now names bfloat16 (the scan
    said ``skipped pe: void16 values`` though ``identify FILE:pe`` named it)."""
    import ml_dtypes

    path = tmp_path / "bf16.npz"
    np.savez(path, pe=paper(32, 16).astype(ml_dtypes.bfloat16), w=np.full((2, 3), 0.5, dtype=np.float32))
    r = run("identify", path, "--json")
    assert r.exit_code == 0, r.output
    arrays = {a["key"]: a for a in json.loads(r.output)["arrays"]}
    assert arrays["pe"]["dtype"] == "bfloat16" and arrays["pe"]["positional"], arrays["pe"]
    assert arrays["pe"]["identification"]["verdict"] == "match"
    single = json.loads(run("identify", f"{path}:pe", "--json").output)
    assert single["best"]["recipe"] == arrays["pe"]["identification"]["best"]["recipe"]


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts open files in /proc/self/fd (Linux)")
@pytest.mark.parametrize("broken", ["not a zip", "entries not arrays"])
def test_a_scan_closes_each_file_it_failed_to_open_at_once(tmp_path: Path, broken: str) -> None:
    # An .npz replaced by a broken one after it was listed (a re-download mid-scan): each array's
    # failed open closed its file then, not at the end of the scan (2,000 arrays would pass the
    # usual limit of 1,024 open files), whether NumPy refused the zip or pecli its entries.
    import os
    import zipfile

    from pecli.checkpoints import scan
    from pecli.formats import list_arrays

    path = tmp_path / "c.npz"
    np.savez(path, **{f"w{i}": np.zeros((2, 4), np.float32) for i in range(8)})
    arrays = list_arrays(path, None) or []
    if broken == "not a zip":
        path.write_bytes(b"PK\x03\x04 not a zip")
    else:
        with zipfile.ZipFile(path, "w") as z:
            for i in range(8):
                z.writestr(f"w{i}.npy", b"not an npy header")
    before = len(os.listdir("/proc/self/fd"))
    held = [len(os.listdir("/proc/self/fd")) - before for entry in scan(str(path), None, arrays)]
    assert len(held) == 8 and max(held) == 0
