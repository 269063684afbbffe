"""Every format round-trips bit-exactly with its recipe; failures never leave partial files."""

from __future__ import annotations

import errno
import io
import json
import os
from pathlib import Path

import h5py
import numpy as np
import pytest

from pecli import FormatError, OutputError, Sinusoidal, TableTooLargeError, open_table, write_table
from pecli.formats import FORMATS
from pecli.table import Table
from tests.helpers import READ_ONLY_WRITERS

DTYPES = ["float16", "float32", "float64"]
#: Every extension of every format that both reads and writes with pecli's own dependencies.
EXTS = [e for f in FORMATS.values() if f.read is not None and f.requires is None for e in f.extensions]


def recipe(dtype: str = "float32", **kw: object) -> Sinusoidal:
    return Sinusoidal(**{"length": 37, "dim": 11, "layout": "split", "start": 5, "dtype": dtype, **kw})  # type: ignore[arg-type]


def bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).tobytes()


@pytest.mark.parametrize("name", [n for f in FORMATS.values() if f.read is not None for n in (f.name, *f.aliases)])
def test_every_format_name_and_alias_is_accepted_by_format(tmp_path: Path, name: str) -> None:
    from click.testing import CliRunner

    from pecli.cli import cli

    fmt = next(f for f in FORMATS.values() if name in (f.name, *f.aliases))
    if fmt.requires is not None:
        pytest.importorskip(fmt.requires)
    path = tmp_path / "table.bin"  # no extension: --from/--to alone says what it is
    if fmt.write is None:  # a format pecli only reads: its own library writes the file
        READ_ONLY_WRITERS[fmt.name](path, np.ones((4, 2), np.float32))
    else:
        written = CliRunner().invoke(cli, ["export", "--len", "4", "--dim", "2", "-o", str(path), "--to", name])
        assert written.exit_code == 0, written.output
    read = CliRunner().invoke(cli, ["inspect", str(path), "--from", name.upper()])
    assert read.exit_code == 0, read.output


@pytest.mark.parametrize("ext", EXTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trip_bit_exact_with_recipe(tmp_path: Path, ext: str, dtype: str) -> None:
    r = recipe(dtype)
    path = tmp_path / f"t{ext}"
    write_table(Table.from_recipe(r), path)
    with open_table(path) as t:
        assert t.recipe == r
        assert t.dtype == np.dtype(dtype)
        assert bits(t.rows(0, t.shape[0])) == bits(r.build())


@pytest.mark.parametrize("ext", EXTS)
def test_plain_arrays_round_trip_without_recipe(tmp_path: Path, ext: str) -> None:
    arr = np.random.default_rng(0).normal(size=(9, 4)).astype(np.float64)
    arr[3, 1] = np.nan
    arr[4, 2] = -np.inf
    path = tmp_path / f"plain{ext}"
    write_table(Table(arr, None, "array"), path)
    assert not Path(str(path) + ".json").exists() or ext == ".json"
    with open_table(path) as t:
        assert t.recipe is None
        assert bits(t.rows(0, 9)) == bits(arr)


def test_h5_stores_recipe_as_attributes_for_other_tools(tmp_path: Path) -> None:
    path = tmp_path / "t.h5"
    write_table(Table.from_recipe(recipe()), path)
    with h5py.File(path, "r") as f:
        attrs = dict(f["pe"].attrs)
    assert attrs["kind"] == "sinusoidal" and attrs["base"] == 10000.0 and attrs["layout"] == "split"
    assert json.loads(attrs["pecli_recipe"])["start"] == 5


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "bfloat16", ">f8"])
def test_h5_values_go_straight_to_the_bytes_libhdf5_placed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dtype: str
) -> None:
    """An uncompressed table is written into its contiguous dataset's place in the file, in row
    blocks, in the type the dataset declares: libhdf5 reads back every value (bfloat16 converted by
    libhdf5 itself from its own type), and the bytes at the dataset's offset are the table's."""
    import pecli.table

    monkeypatch.setattr(pecli.table, "BLOCK_BYTES", 7 * 24 * 8)  # 7-row blocks of float64: many
    built = recipe("float64" if dtype == ">f8" else dtype, length=100, dim=24).build()
    # A big-endian table read from a file keeps its byte order in the dataset's type.
    table = (
        Table(built.astype(">f8"), None, "array")
        if dtype == ">f8"
        else Table.from_recipe(recipe(dtype, length=100, dim=24))
    )
    path = tmp_path / "t.h5"
    write_table(table, path)
    with h5py.File(path, "r") as f:
        ds = f["pe"]
        assert ds.chunks is None and ds.compression is None
        got, offset, nbytes = ds[...], ds.id.get_offset(), ds.id.get_storage_size()
    assert np.array_equal(got, built.astype(np.float32) if dtype == "bfloat16" else built)
    raw = np.fromfile(path, dtype=np.uint8, count=nbytes, offset=offset)
    want = built.astype(">f8") if dtype == ">f8" else built
    assert raw.tobytes() == want.tobytes()


def test_csv_text_is_round_trip_precision(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    write_table(Table.from_recipe(Sinusoidal(3, 4)), path)
    assert path.read_text().splitlines()[:2] == ["d0,d1,d2,d3", "0,1,0,1"]
    # Readable by NumPy's own loader too, bit-exact after the cast.
    loaded = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.float64).astype(np.float32)
    assert bits(loaded) == bits(Sinusoidal(3, 4).build())


@pytest.mark.parametrize(("ext", "dtype", "digits"), [(".csv", "float32", 9), (".tsv", "float16", 5)])
def test_text_blocks_formatted_on_several_threads_are_pythons_text_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ext: str, dtype: str, digits: int
) -> None:
    """Each block is formatted by the thread that computed it, or a read table's blocks read in
    order and formatted on the threads (NumPy squeezes the padding, the GIL released); the file is
    Python's ``%g`` text of every row, in order, whatever the threads."""
    import pecli.table
    from pecli.kernels.threads import set_threads

    monkeypatch.setattr(pecli.table, "BLOCK_BYTES", 4096)  # a few rows a block: 100+ blocks
    table = recipe(dtype, length=600, dim=40, start=999_000)
    sep = "," if ext == ".csv" else "\t"
    values = table.build().astype(np.float64).tolist()
    expected = [sep.join(f"d{j}" for j in range(40))] + [sep.join(f"%.{digits}g" % v for v in row) for row in values]
    np.save(tmp_path / "read.npy", table.build())  # a table read from a file: read in order, formatted on threads
    rows: list[int] = []
    try:
        for threads in (3, 1):
            set_threads(threads)
            with open_table(tmp_path / "read.npy") as read:
                for name, source in (("computed", Table.from_recipe(table)), ("read", read)):
                    assert source.stream_workers(then=True) == threads
                    path = tmp_path / f"{name}{threads}{ext}"
                    write_table(source, path, progress=rows.append)
                    assert path.read_text().splitlines() == expected, (name, threads)
    finally:
        set_threads(None)
    assert sum(rows) == 4 * 600  # progress counts every row once


def test_text_of_a_reader_that_reuses_its_buffer_is_each_blocks_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader (a plugin's, a script's array-like) may hand out views of one buffer it refills:
    blocks read ahead while others are formatted must not change under them."""
    import pecli.table
    from pecli.kernels.threads import set_threads

    values = Sinusoidal(600, 40).build()

    class Reusing:
        shape, dtype = values.shape, values.dtype

        def __init__(self) -> None:
            self.buffer = np.empty_like(values)

        def __getitem__(self, key: slice) -> np.ndarray:
            a, z, _ = key.indices(len(values))
            self.buffer[: z - a] = values[a:z]
            return self.buffer[: z - a]

    monkeypatch.setattr(pecli.table, "BLOCK_BYTES", 4096)  # 100+ blocks
    expected = [",".join(f"d{j}" for j in range(40))]
    expected += [",".join(f"{v:.9g}" for v in row) for row in values.astype(np.float64).tolist()]
    try:
        set_threads(4)
        write_table(Table(Reusing(), None, "a reader"), tmp_path / "t.csv")
    finally:
        set_threads(None)
    assert (tmp_path / "t.csv").read_text().splitlines() == expected


def test_text_goes_to_a_stream_that_has_only_write(monkeypatch: pytest.MonkeyPatch) -> None:
    """A script's file-like may offer write() alone (Click's captured stdout copies only what
    write() is given): every block's text goes through it."""
    import pecli.table

    class Sink:
        def __init__(self) -> None:
            self.parts: list[bytes] = []

        def write(self, data: bytes) -> int:
            self.parts.append(bytes(data))
            return len(data)

    monkeypatch.setattr(pecli.table, "BLOCK_BYTES", 4096)  # several blocks
    sink, table = Sink(), Sinusoidal(300, 16).build()
    write_table(Table.from_recipe(Sinusoidal(300, 16)), sink, "csv")  # type: ignore[arg-type]
    lines = b"".join(sink.parts).decode().splitlines()
    assert lines[1:] == [",".join(f"{v:.9g}" for v in row) for row in table.astype(np.float64).tolist()]


def test_sidecar_ignored_when_it_does_not_match(tmp_path: Path) -> None:
    path = tmp_path / "t.npy"
    write_table(Table.from_recipe(recipe()), path)
    np.save(path, np.zeros((2, 2), np.float32))  # replaced by another tool
    with open_table(path) as t:
        assert t.recipe is None
        assert "ignored" in t.info["note"]


def test_force_overwrite_drops_stale_sidecar(tmp_path: Path) -> None:
    path = tmp_path / "t.npy"
    write_table(Table.from_recipe(recipe()), path)
    write_table(Table(np.ones((2, 2)), None, "array"), path, force=True)
    assert not Path(str(path) + ".json").exists()


def test_no_sidecar_option(tmp_path: Path) -> None:
    path = tmp_path / "t.npy"
    write_table(Table.from_recipe(recipe()), path, sidecar=False)
    assert path.exists() and not Path(str(path) + ".json").exists()


def test_existing_file_refused_without_force_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "t.h5"
    path.write_bytes(b"precious")
    with pytest.raises(OutputError, match="already exists: pass --force to overwrite it"):
        write_table(Table.from_recipe(recipe()), path)
    assert path.read_bytes() == b"precious"
    write_table(Table.from_recipe(recipe()), path, force=True)
    with open_table(path) as t:
        assert t.recipe == recipe()


def test_existing_sidecar_is_not_clobbered(tmp_path: Path) -> None:
    # A user's own file there is named as such at once: --force would not replace it either (issue 40).
    (tmp_path / "t.npy.json").write_text("mine")
    with pytest.raises(OutputError, match=r"t\.npy\.json exists and is not a pecli sidecar"):
        write_table(Table.from_recipe(recipe()), tmp_path / "t.npy")
    assert not (tmp_path / "t.npy").exists()
    assert (tmp_path / "t.npy.json").read_text() == "mine"
    # pecli's own sidecar of an earlier table: --force replaces it, so that is the fix said
    write_table(Table.from_recipe(recipe()), tmp_path / "u.npy")
    (tmp_path / "u.npy").unlink()
    with pytest.raises(OutputError, match=r"u\.npy\.json already exists: pass --force"):
        write_table(Table.from_recipe(recipe()), tmp_path / "u.npy")


class Exploding(Table):
    """A table whose rows fail after the first block has been written."""

    def rows(self, r0: int, r1: int) -> np.ndarray:
        if r0 > 0:
            raise self.data  # type: ignore[misc]
        return np.zeros((r1 - r0, self.shape[1]), np.float32)

    @property
    def shape(self) -> tuple[int, int]:
        return (100_000, 64)

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(np.float32)


@pytest.mark.parametrize("ext", EXTS)
@pytest.mark.parametrize("exc", [KeyboardInterrupt(), OSError(errno.EIO, "I/O error"), RuntimeError("boom")])
def test_failure_mid_write_leaves_nothing_and_keeps_old_file(tmp_path: Path, ext: str, exc: BaseException) -> None:
    path = tmp_path / f"t{ext}"
    path.write_bytes(b"old")
    table = Exploding(exc, None, "x")
    with pytest.raises((type(exc), OutputError)):
        write_table(table, path, force=True)
    assert path.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"t{ext}"]  # no temporaries left


def test_disk_full_is_a_clean_error(tmp_path: Path) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    with pytest.raises(OutputError, match="no space left on device while writing /dev/full"):
        write_table(Table.from_recipe(Sinusoidal(100_000, 64)), "/dev/full", "npy")


def test_special_files_are_written_in_place(tmp_path: Path) -> None:
    write_table(Table.from_recipe(recipe()), "/dev/null", "npy")  # no --force, no sidecar, no rename
    assert Path("/dev/null").exists()


def test_missing_directory_and_directory_target(tmp_path: Path) -> None:
    with pytest.raises(OutputError, match="does not exist: create it first"):
        write_table(Table.from_recipe(recipe()), tmp_path / "nope" / "t.npy")
    with pytest.raises(OutputError, match="is a directory: give a file name"):
        write_table(Table.from_recipe(recipe()), tmp_path, "npy")


def test_unwritable_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Root ignores permission bits, so the check is exercised through os.access.
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, m: False if Path(p) == tmp_path else real(p, m))
    with pytest.raises(OutputError, match=r"cannot write in directory .* \(permission denied\)"):
        write_table(Table.from_recipe(recipe()), tmp_path / "t.npy")


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere")
def test_read_only_directory_for_real(tmp_path: Path) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    with pytest.raises(OutputError, match="permission denied"):
        write_table(Table.from_recipe(recipe()), ro / "t.npy")


def test_table_larger_than_disk_is_refused_before_writing(tmp_path: Path) -> None:
    with pytest.raises(TableTooLargeError, match=r"would need at least 32\.0 TB"):
        write_table(Table.from_recipe(Sinusoidal(10**12, 8)), tmp_path / "big.npy")
    assert list(tmp_path.iterdir()) == []


def test_build_refuses_more_than_memory() -> None:
    with pytest.raises(TableTooLargeError, match="write it to a file with -o instead"):
        Sinusoidal(10**12, 8).build()


def test_stream_writes_npy_and_csv() -> None:
    buf = io.BytesIO()
    write_table(Table.from_recipe(recipe("float16")), buf, "npy")
    assert bits(np.load(io.BytesIO(buf.getvalue()))) == bits(recipe("float16").build())
    with pytest.raises(FormatError, match="needs a seekable file"):
        write_table(Table.from_recipe(recipe()), io.BytesIO(), "h5")


# ----------------------------------------------------------------------------- bad inputs
def write_bytes(tmp_path: Path, name: str, data: bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("e.npy", b"", "is empty"),
        ("bad.npy", b"not a numpy file at all", "is not a readable .npy"),
        ("bad.h5", b"\x89HDF\r\n\x1a\n" + b"\0" * 20, "is not a readable HDF5 file"),
        ("bad.h5", b"plain text", "is not a readable HDF5 file"),
        ("ragged.csv", b"d0,d1\n1,2\n3\n", "line 3 has 1 values, expected 2"),
        ("text.csv", b"d0,d1\n1,2\n3,x\n", "line 3 has a non-numeric value 'x'"),
        ("blank.csv", b"d0,d1\n1,2\n\n3,4\n", "line 3 is blank"),
        ("header.csv", b"d0,d1\n", "has a header but no rows"),
        ("binary.csv", b"\xff\xfe\x00", "is not a text CSV file"),
    ],
)
def test_unreadable_files_are_format_errors(tmp_path: Path, name: str, data: bytes, message: str) -> None:
    path = write_bytes(tmp_path, name, data)
    with pytest.raises(FormatError, match=message), open_table(path):
        pass


def test_truncated_npy(tmp_path: Path) -> None:
    path = tmp_path / "t.npy"
    np.save(path, np.ones((100, 8), np.float32))
    path.write_bytes(path.read_bytes()[:500])
    with pytest.raises(FormatError, match=r"not a readable \.npy"), open_table(path):
        pass


def test_object_npy_is_refused_without_unpickling(tmp_path: Path) -> None:
    path = tmp_path / "o.npy"
    np.save(path, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(FormatError, match=r"not a readable \.npy table"), open_table(path):
        pass


def test_non_float_and_wrong_rank(tmp_path: Path) -> None:
    np.save(tmp_path / "b.npy", np.ones((3, 3), bool))
    with pytest.raises(FormatError, match="holds bool values"), open_table(tmp_path / "b.npy"):
        pass
    np.save(tmp_path / "s.npy", np.float32(3))
    with pytest.raises(FormatError, match=r"a single number: expected a table"), open_table(tmp_path / "s.npy"):
        pass


def test_a_vector_is_one_row(tmp_path: Path) -> None:
    # RoPE inv_freq and ALiBi slopes come as 1-D vectors.
    vec = np.linspace(1, 0.001, 64, dtype=np.float32)
    np.save(tmp_path / "v.npy", vec)
    with open_table(tmp_path / "v.npy") as t:
        assert t.shape == (1, 64) and t.info["reshaped"].startswith("(64,) → (1, 64)")
        assert bits(t.rows(0, 1)) == bits(vec[None, :])


@pytest.mark.parametrize("shape", [(4, 5, 8), (1, 4, 5, 8), (2, 3, 4, 6)])
def test_grids_read_their_leading_axes_as_rows(tmp_path: Path, shape: tuple[int, ...]) -> None:
    # positional-encodings returns (X, Y, C) and (X, Y, Z, C) grids; frameworks flatten them in C order.
    arr = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    flat = arr.reshape(-1, shape[-1])
    for ext in (".npy", ".h5"):
        path = tmp_path / f"g{ext}"
        if ext == ".npy":
            np.save(path, arr)
        else:
            with h5py.File(path, "w") as f:
                f["pe"] = arr
        with open_table(path) as t:
            assert t.shape == flat.shape
            for a, b in ((0, flat.shape[0]), (1, 3), (5, flat.shape[0] - 1), (2, 2)):
                assert bits(t.rows(a, b)) == bits(flat[a:b]), (ext, a, b)


def test_leading_unit_axes_are_squeezed(tmp_path: Path) -> None:
    # ViT-style pos_embed [1, N, D].
    arr = np.arange(12, dtype=np.float32).reshape(1, 3, 4)
    np.save(tmp_path / "vit.npy", arr)
    with open_table(tmp_path / "vit.npy") as t:
        assert t.shape == (3, 4)
        assert bits(t.rows(1, 3)) == bits(arr[0, 1:3])


def test_h5_dataset_choice(tmp_path: Path) -> None:
    path = tmp_path / "m.h5"
    with h5py.File(path, "w") as f:
        f["model/a"] = np.zeros((2, 2))
        f["model/b"] = np.ones((3, 2))
    with (
        pytest.raises(FormatError, match=r"several arrays \(model/a, model/b\): choose one as .*m\.h5:KEY"),
        open_table(path),
    ):
        pass
    with h5py.File(tmp_path / "one.h5", "w") as f:
        f["layer/weights"] = np.ones((3, 2), np.float32)
    with open_table(tmp_path / "one.h5") as t:
        assert t.info["dataset"] == "/layer/weights" and t.shape == (3, 2)


def test_missing_directory_and_unknown_extension_on_read(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="is a directory"), open_table(tmp_path):
        pass
    (tmp_path / "t.xyz").write_text("1")
    with pytest.raises(FormatError, match="cannot tell the format"), open_table(tmp_path / "t.xyz"):
        pass
    with open_table(write_bytes(tmp_path, "t.dat", b"0.5,1\n"), "csv") as t:  # --from overrides
        assert t.shape == (1, 2)


def test_h5_dataset_with_nothing_written_reads_as_its_fill_value(tmp_path: Path) -> None:
    """Rows of a chunked dataset none of whose chunks were written are the fill value, as h5py
    itself reads them (pecli answers without visiting each unwritten chunk)."""
    import h5py

    path = tmp_path / "empty.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("pe", shape=(1000, 4096), dtype="float32", chunks=(1, 8), fillvalue=0.25)
    with h5py.File(path, "r") as f:
        want = f["pe"][[0, 1, 999], :]
    with open_table(path) as t:
        got = np.concatenate([t.rows(0, 2), t.rows(999, 1000)])
        assert t.shape == (1000, 4096) and t.dtype == np.float32
    assert np.array_equal(got, want) and float(got[0, 0]) == 0.25


def test_a_broken_npz_is_refused_and_its_file_closed(tmp_path: Path) -> None:
    # np.load opens a path itself and leaves the file open when the zip inside is broken (NumPy
    # 2.4): a shell's completion or a checkpoint scan would leak one descriptor a broken file.
    import gc
    import warnings

    from pecli.errors import PecliInputError
    from pecli.formats import list_arrays

    broken = tmp_path / "broken.npz"
    broken.write_bytes(b"PK\x03\x04 not a zip")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        with pytest.raises(PecliInputError, match=r"broken\.npz"):
            list_arrays(broken, None)
        gc.collect()
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)]


def test_an_npy_named_npz_is_told_to_be_renamed_not_read_whole(tmp_path: Path) -> None:
    # np.load reads an .npy whole before it fails as an .npz ("'numpy.ndarray' object does not
    # support the context manager protocol"): the file's first bytes say what it is.
    from pecli.errors import PecliInputError
    from pecli.formats import list_arrays

    path = tmp_path / "pe.npz"
    np.save(tmp_path / "pe.npy", np.zeros((4, 8), np.float32))
    (tmp_path / "pe.npy").rename(path)
    with pytest.raises(
        PecliInputError,
        match=r"pe\.npz is not a readable \.npz file \(it holds one \.npy array, not a zip of them: name it \.npy\)",
    ):
        list_arrays(path, None)
    path.write_text("pe,0,1\n")
    with pytest.raises(PecliInputError, match=r"pe\.npz is not a readable \.npz file \(not a zip archive\)"):
        list_arrays(path, None)
