"""Every reader reads a file or refuses it with a PecliInputError: never another exception (issue 7).

Hypothesis drives the input generators of ``scripts/fuzz_readers.py``, which runs the same property
at 100,000 inputs per reader: random bytes (behind the format's magic or not), mutations of files
pecli wrote (bit flips, truncation, insertions, deletions, boundary overwrites), and structural
edits (npy header dicts, the safetensors header length and JSON, npz entries, JSON documents, CSV
cells, HDF5 objects, .pt objects, stored metadata, sidecars).  "Reads" means what the commands do:
``list_arrays``, ``open_table`` for the default array and each listed key, then every row.

Below the properties: tiny files that declare 10**12 values, which must be refused rather than
allocated, and one minimal input per bug the fuzzing found, so each stays fixed.
"""

from __future__ import annotations

import base64
import contextlib
import faulthandler
import importlib.util
import io
import json
import os
import resource
import signal
import struct
import subprocess
import sys
import time
import warnings
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, currently_in_test_context, given, note, settings
from hypothesis import strategies as st

import pecli
from pecli.errors import PecliInputError, TableTooLargeError
from pecli.formats.metadata import META_KEY, SIDECAR_SCHEMA
from pecli.kinds import recipe_from_metadata
from pecli.kinds.sinusoidal import Sinusoidal
from tests.helpers import load_script

ROOT = Path(__file__).resolve().parents[2]


fuzz = load_script("fuzz_readers")
Sample = fuzz.Sample

# torch.load warns about its own storage classes while pecli reads some of the fuzzed .pt files.
pytestmark = pytest.mark.filterwarnings("ignore:TypedStorage is deprecated:UserWarning")

HAS_TORCH = importlib.util.find_spec("torch") is not None
NEEDS_TORCH = pytest.mark.skipif(not HAS_TORCH, reason="the .pt reader needs PyTorch")
READERS = [pytest.param(r, marks=NEEDS_TORCH) if r == "pt" else r for r in fuzz.EXTENSIONS]
#: Seconds one read may take before it counts as a hang.
LIMIT = 10
FUZZ = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@pytest.fixture(scope="module")
def seeds(workdir: Path) -> Callable[[str], list[Any]]:
    """Valid files pecli wrote, per reader (built once, on first use)."""
    cache: dict[str, list[Any]] = {}

    def get(reader: str) -> list[Any]:
        if reader == "pt":
            pytest.importorskip("torch")
        if reader not in cache:
            cache[reader] = fuzz.seed_samples(reader, workdir / "seeds" / reader)
        return cache[reader]

    return get


@contextlib.contextmanager
def address_space_cap(extra: int = 8 << 30) -> Iterator[None]:
    """Cap this process's address space at its current size + ``extra`` while the block runs.

    On a machine that overcommits memory without limit, a missing size check would otherwise
    start filling terabytes; with the cap it fails at once with MemoryError.
    """
    try:
        with open("/proc/self/statm", encoding="ascii") as fp:
            size = int(fp.read().split()[0]) * resource.getpagesize()
    except OSError:
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = size + extra if hard == resource.RLIM_INFINITY else min(hard, size + extra)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def check(reader: str, sample: Any, directory: Path) -> None:
    """Read ``sample`` as a ``reader`` file: success or PecliInputError, within LIMIT s and 1 GiB.

    A hang inside C code cannot be interrupted; faulthandler then ends the run with a traceback
    instead of letting it hang for ever.  The memory check sees growth of the process's peak, so
    it catches the first such input of a session (the tests below use a child process each).
    """
    path = directory / f"input{fuzz.EXTENSIONS[reader]}"
    fuzz.write_sample(sample, path)
    if currently_in_test_context():  # Hypothesis prints these with a falsifying example
        note(f"{reader} input, {len(sample.data)} bytes: {sample.data[:160]!r}")
        if sample.sidecar is not None:
            note(f"sidecar: {sample.sidecar[:160]!r}")
    before = fuzz.peak_rss()
    faulthandler.dump_traceback_later(LIMIT * 3, exit=True)
    try:
        with address_space_cap(), fuzz.h5_probe_limit(LIMIT), fuzz.time_limit(LIMIT):
            fuzz.read_everything(path)  # PecliInputError is swallowed there; anything else fails here
    except fuzz.ReaderHang:
        raise AssertionError(f"reading the {reader} input took over {LIMIT} s") from None
    finally:
        faulthandler.cancel_dump_traceback_later()
    grown = fuzz.peak_rss() - before
    assert grown <= fuzz.MEMORY_LIMIT, f"reading the {reader} input took {grown >> 20} MiB more memory"


# ------------------------------------------------------------------------------------ properties
@pytest.mark.slow
@pytest.mark.parametrize("reader", READERS)
@FUZZ
@given(magic=st.booleans(), data=st.binary(max_size=2048))
def test_random_bytes(reader: str, magic: bool, data: bytes, workdir: Path, seeds: Callable[[str], list[Any]]) -> None:
    seeds(reader)  # skips pt when torch is installed but does not import
    check(reader, Sample((fuzz.MAGIC[reader] if magic else b"") + data), workdir)


@pytest.mark.slow
@pytest.mark.parametrize("reader", READERS)
@FUZZ
@given(rng=st.randoms(use_true_random=False))
def test_mutated_pecli_files(reader: str, rng: Any, workdir: Path, seeds: Callable[[str], list[Any]]) -> None:
    """Bit flips, truncation, insertions, deletions, overwrites and duplicated chunks of valid files."""
    seed = rng.choice(seeds(reader))
    check(reader, Sample(fuzz.mutate(seed.data, rng), seed.sidecar), workdir)


@pytest.mark.slow
@pytest.mark.parametrize("reader", READERS)
@FUZZ
@given(rng=st.randoms(use_true_random=False))
def test_structural_edits(reader: str, rng: Any, workdir: Path, seeds: Callable[[str], list[Any]]) -> None:
    """Format-aware edits: npy header dicts, safetensors length field and header JSON, npz entries, …"""
    scratch = workdir / "build"
    scratch.mkdir(exist_ok=True)
    check(reader, fuzz.structured(reader, rng, seeds(reader), scratch), workdir)


@pytest.mark.slow
@FUZZ
@given(length=st.one_of(st.integers(0, 2**64 - 1), st.integers(0, 1024)))
def test_safetensors_header_length_field(length: int, workdir: Path, seeds: Callable[[str], list[Any]]) -> None:
    seed = seeds("safetensors")[0].data
    check("safetensors", Sample(struct.pack("<Q", length) + seed[8:]), workdir)


@pytest.mark.slow
@pytest.mark.parametrize("reader", fuzz.SIDECAR_READERS)
@FUZZ
@given(rng=st.randoms(use_true_random=False))
def test_sidecars(reader: str, rng: Any, workdir: Path, seeds: Callable[[str], list[Any]]) -> None:
    """A valid table beside any ``FILE.json``: a broken sidecar is ignored, never an error."""
    seed = rng.choice(seeds(reader))
    check(reader, Sample(seed.data, fuzz.sidecar_bytes(rng, (5, 6))), workdir)


@pytest.mark.slow
@FUZZ
@given(rng=st.randoms(use_true_random=False))
def test_recipe_from_any_stored_metadata(rng: Any) -> None:
    """Every reader trusts this to turn any stored metadata into a recipe or None, never an exception."""
    meta = fuzz.metadata_value(rng)
    note(repr(meta))
    assert recipe_from_metadata(meta) is None or isinstance(recipe_from_metadata(meta), Sinusoidal)


# ------------------------------------------------------------------- tiny files, 10**12 values
HUGE = (10**6, 10**6)  # 10**12 float32 values: 4 TB


def _npy(header: str, data: bytes = b"") -> bytes:
    """A version 1.0 .npy file with this exact header dict text."""
    raw = header.encode("latin1")
    raw += b" " * (-(10 + len(raw) + 1) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(raw)) + raw + data


def _zip(entries: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, body in entries.items():
            zf.writestr(name, body)
    return buf.getvalue()


def _safetensors(header: Any, data: bytes = b"") -> bytes:
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


def _h5(build: Callable[[Any], None]) -> bytes:
    import h5py

    buf = io.BytesIO()
    with h5py.File(buf, "w") as f:
        build(f)
    return buf.getvalue()


def _pt(make: Callable[[Any], Any]) -> bytes:
    torch = pytest.importorskip("torch")
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # quantized and sparse tensors warn that they are deprecated or beta
        torch.save(make(torch), buf)
    return buf.getvalue()


def _f4(f: Any, name: str = "pe") -> Any:
    return f.create_dataset(name, data=np.zeros((2, 2), "f4"))


HUGE_NPY = _npy(f"{{'descr': '<f4', 'fortran_order': False, 'shape': {HUGE}, }}", bytes(64))
TINY_HUGE: list[Any] = [
    pytest.param("npy", lambda: HUGE_NPY, id="npy"),
    pytest.param("npz", lambda: _zip({"pe.npy": HUGE_NPY}), id="npz"),
    pytest.param(
        "safetensors",
        lambda: _safetensors({"pe": {"dtype": "F32", "shape": list(HUGE), "data_offsets": [0, 4 * 10**12]}}, bytes(64)),
        id="safetensors",
    ),
    pytest.param("json", lambda: json.dumps({"shape": list(HUGE), "data": [[0.0]]}).encode(), id="json"),
    pytest.param(
        "h5", lambda: _h5(lambda f: f.create_dataset("pe", shape=HUGE, dtype="f4", chunks=(1, 1024))), id="h5-chunked"
    ),
    pytest.param("pt", lambda: _pt(lambda t: {"pe": t.empty(HUGE, device="meta")}), id="pt-meta", marks=NEEDS_TORCH),
]


@pytest.mark.parametrize(("reader", "build"), TINY_HUGE)
def test_tiny_file_declaring_10_to_the_12_values(reader: str, build: Callable[[], bytes], workdir: Path) -> None:
    """Opening it and reading all its rows gives a clean error (or works): never a MemoryError."""
    data = build()
    assert len(data) < 100_000
    path = workdir / f"huge{fuzz.EXTENSIONS[reader]}"
    path.write_bytes(data)
    check(reader, Sample(data), workdir)
    with address_space_cap(), contextlib.suppress(PecliInputError), pecli.open_table(path) as table:
        table.rows(0, table.shape[0])  # all rows at once: TableTooLargeError, not MemoryError


def test_inspect_of_a_tiny_h5_declaring_a_billion_rows_finishes(workdir: Path) -> None:
    """A 1.4 kB HDF5 file whose (10**9, 8) dataset was never written: `pecli inspect` must not read 32 GB.

    The statistics read every row, through 10**9 one-row chunk lookups of fill values: hours.
    The child runs under a 3 GiB address-space cap, so a regression fails fast instead of swapping.
    """
    import h5py

    path = workdir / "billion-rows.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("pe", shape=(10**9, 8), dtype="f4", chunks=(1, 8))
    assert path.stat().st_size < 10_000

    capped = (
        "import resource, runpy, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (3 << 30, resource.RLIM_INFINITY))\n"
        f"sys.argv = ['pecli', 'inspect', {str(path)!r}]\n"
        "runpy.run_module('pecli', run_name='__main__')\n"
    )
    try:
        done = subprocess.run([sys.executable, "-c", capped], capture_output=True, text=True, timeout=10, env=_env())
    except subprocess.TimeoutExpired:
        pytest.fail(f"pecli inspect {path.name} ({path.stat().st_size} bytes) ran over 10 s")
    assert done.returncode in (0, 2), done.stderr


# ------------------------------------------------------------------- bugs the fuzzing found
_OK_META = Sinusoidal(2, 2).to_metadata()
_DEEP = "[" * 100_000  # deeper than the json module's recursion limit
_HEADER_F4 = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 4), }"
_SIDECAR = json.dumps({"schema": SIDECAR_SCHEMA, "shape": 5, "recipe": {}}).encode()


def _npy_with_sidecar(sidecar: bytes) -> Any:
    return Sample(_npy(_HEADER_F4, bytes(16)), sidecar)


def _json_doc(data: Any, metadata: Any = None) -> bytes:
    return json.dumps({"data": data, **({"metadata": metadata} if metadata is not None else {})}).encode()


def _st_entry(**changes: Any) -> dict[str, Any]:
    return {"pe": {"dtype": "F32", "shape": [1, 1], "data_offsets": [0, 4], **changes}}


def _bad(reader: str, build: Callable[[], Any], id: str, *marks: Any) -> Any:
    return pytest.param(reader, build, id=id, marks=marks)


def _sample(data: bytes) -> Callable[[], Any]:
    return lambda: Sample(data)


# One minimal input per bug the fuzzing found; each id ends with what the reader raised instead of a
# PecliInputError when it was found.
FOUND: list[Any] = [
    # npy: NumPy's header parsing and memmap raise TokenError, SyntaxError, OverflowError, TypeError
    _bad("npy", _sample(_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, }")), "npy-header-TokenError"),
    _bad(
        "npy",
        _sample(_npy(f"{{'descr': '<f4', 'fortran_order': False, 'shape': ({2**64},), }}", bytes(16))),
        "npy-shape-2**64-OverflowError",
    ),
    _bad(
        "npy",
        _sample(_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (True, 4), }", bytes(16))),
        "npy-bool-dim-TypeError",
    ),
    _bad(
        "npy",
        _sample(_npy("{'descr': ',f4', 'fortran_order': False, 'shape': (1, 4), }", bytes(16))),
        "npy-descr-comma-SyntaxError",
    ),
    _bad(
        "npy",
        _sample(_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 4), b'x': 1, }", bytes(16))),
        "npy-bytes-key-TypeError",
    ),
    # sidecars: their JSON's nesting, shape and recipe fields
    _bad("npy", lambda: _npy_with_sidecar(_SIDECAR), "sidecar-shape-not-a-list-TypeError"),
    _bad("npy", lambda: _npy_with_sidecar(_DEEP.encode()), "sidecar-deep-json-RecursionError"),
    _bad("csv", lambda: Sample(b"d0\n1\n", _DEEP.encode()), "csv-sidecar-deep-json-RecursionError"),
    _bad(
        "csv",
        lambda: Sample(
            b"d0\n1\n", json.dumps({"schema": SIDECAR_SCHEMA, "shape": [1, 1], "recipe": {"dtype": {}}}).encode()
        ),
        "csv-sidecar-dtype-dict-TypeError",
    ),
    # npz: zip and .npy faults in the entry listing, the table entry and the metadata entry
    _bad("npz", _sample(_zip({"pe": _npy(_HEADER_F4, bytes(16))})), "npz-entry-without-.npy-KeyError"),
    _bad("npz", _sample(_zip({"pe.npy": b"not an npy file"})), "npz-entry-bad-magic-ValueError"),
    _bad("npz", _sample(_npy(_HEADER_F4, bytes(16))), "npz-that-is-an-npy-TypeError"),
    _bad("npz", _sample(_zip({"pe.npy": _npy(_HEADER_F4, bytes(16)), "pe": b"junk"})), "npz-raw-entry-AttributeError"),
    _bad(
        "npz",
        _sample(
            _zip(
                {
                    "pe.npy": _npy(_HEADER_F4, bytes(16)),
                    f"{META_KEY}.npy": _npy(f"{{'descr': '<U1', 'fortran_order': False, 'shape': {HUGE}, }}"),
                }
            )
        ),
        "npz-metadata-10**12-MemoryError",
    ),
    _bad(
        "npz",
        _sample(_zip({"pe.npy": _npy("{'descr': '<f4', 'fortran_order': 'no', 'shape': (1, 4), }", bytes(16))})),
        "npz-entry-bad-header-ValueError",
    ),
    _bad(
        "npz",
        _sample(_zip({"pe.npy": _npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, }")})),
        "npz-entry-header-TokenError",
    ),
    _bad("npz", lambda: Sample(_corrupt_npz_local_header()), "npz-local-header-BadZipFile"),
    _bad("npz", lambda: Sample(_npz_directory_edit(6, 148)), "npz-zip-version-NotImplementedError"),
    _bad("npz", lambda: Sample(_npz_directory_edit(10, 99)), "npz-compression-method-NotImplementedError"),
    _bad(
        "npz",
        _sample(
            _zip({"pe.npy": _npy(f"{{'descr': '<f4', 'fortran_order': False, 'shape': ({2**64},), }}", bytes(16))})
        ),
        "npz-shape-2**64-OverflowError",
    ),
    _bad(
        "npz",
        _sample(_zip({"pe.npy": _npy("{'descr': '<f4', 'fortran_order': False, 'shape': (True, 4), }", bytes(16))})),
        "npz-bool-dim-TypeError",
    ),
    _bad("npz", lambda: Sample(_corrupt_npz_crc("pe.npy")), "npz-entry-crc-BadZipFile"),
    _bad("npz", lambda: Sample(_corrupt_npz_crc(f"{META_KEY}.npy")), "npz-metadata-crc-BadZipFile"),
    _bad(
        "npz",
        _sample(_zip({"pe.npy": _npy(_HEADER_F4, bytes(16)), f"{META_KEY}.npy": b"junk"})),
        "npz-metadata-not-npy-AttributeError",
    ),
    _bad(
        "npz",
        lambda: Sample(_zip({"pe.npy": _npy(_HEADER_F4, bytes(16)), f"{META_KEY}.npy": _pickled_metadata()})),
        "npz-metadata-object-array-ValueError",
    ),
    # json: the parser's recursion limit, integers beyond float range, metadata that breaks the recipe
    _bad("json", _sample(_DEEP.encode()), "json-deep-RecursionError"),
    _bad("json", _sample(b'{"data": [[' + b"9" * 400 + b"]]}"), "json-400-digit-int-OverflowError"),
    _bad("json", _sample(_json_doc([[0.0]], {**_OK_META, "kind": ["sinusoidal"]})), "metadata-kind-list-TypeError"),
    _bad(
        "json",
        _sample(_json_doc([[0.0] * 200], {**_OK_META, "length": 1, "dim": 200, "base": 5e-324})),
        "metadata-tiny-base-OverflowError",
    ),
    _bad(
        "json",
        _sample(_json_doc([[0.0, 1.0], [0.8, 0.5]], {**_OK_META, "base": 10**400})),
        "metadata-huge-int-base-OverflowError",
    ),
    # safetensors: header JSON depth, and shapes the header check accepted but NumPy does not
    _bad(
        "safetensors", _sample(struct.pack("<Q", len(_DEEP)) + _DEEP.encode()), "safetensors-deep-header-RecursionError"
    ),
    _bad(
        "safetensors",
        _sample(_safetensors({"__metadata__": {META_KEY: _DEEP}, **_st_entry()}, bytes(4))),
        "safetensors-deep-metadata-RecursionError",
    ),
    _bad(
        "safetensors",
        _sample(_safetensors(_st_entry(shape=[10**30, 0], data_offsets=[0, 0]))),
        "safetensors-shape-10**30x0-ValueError",
    ),
    _bad("safetensors", _sample(_safetensors(_st_entry(shape=[1] * 65), bytes(4))), "safetensors-65-dims-ValueError"),
    _bad("safetensors", _sample(_safetensors(_st_entry(shape=[True, 1]), bytes(4))), "safetensors-bool-dim-TypeError"),
    # h5: h5py errors other than OSError from the link visit, attribute reads, storage size and data
    _bad("h5", lambda: Sample(_h5(lambda f: f.create_dataset("pe", data=_empty_f4()))), "h5-empty-dataset-SystemError"),
    _bad("h5", lambda: Sample(_corrupt_h5_link_heap()), "h5-corrupt-local-heap-RuntimeError"),
    _bad("h5", lambda: Sample(_corrupt_h5_attribute_version()), "h5-attribute-version-RuntimeError"),
    _bad("h5", lambda: Sample(_corrupt_h5_attribute_charset()), "h5-attribute-charset-TypeError"),
    _bad("h5", lambda: Sample(_corrupt_h5_chunk_index()), "h5-chunk-index-RuntimeError"),
    _bad("h5", lambda: Sample(_corrupt_h5_chunk_data()), "h5-gzip-chunk-rows-OSError"),
    _bad(
        "h5",
        lambda: Sample(_h5(lambda f: _f4(f).attrs.__setitem__(META_KEY, _DEEP))),
        "h5-deep-metadata-RecursionError",
    ),
    _bad(
        "h5",
        lambda: Sample(_h5(lambda f: _f4(f).attrs.__setitem__(META_KEY, json.dumps({**_OK_META, "kind": {}})))),
        "h5-metadata-kind-dict-TypeError",
    ),
    # pt: tensors torch.load(weights_only=True) accepts but .numpy() refuses
    _bad("pt", lambda: Sample(_pt(lambda t: {"pe": t.zeros(2, 2).to_sparse()})), "pt-sparse-TypeError", NEEDS_TORCH),
    _bad(
        "pt",
        lambda: Sample(_pt(lambda t: {"pe": t.quantize_per_tensor(t.zeros(2, 2), 0.1, 0, t.qint8)})),
        "pt-quantized-TypeError",
        NEEDS_TORCH,
    ),
    _bad(
        "pt",
        lambda: Sample(_pt(lambda t: {"pe": t.zeros(2, 2).to(t.float8_e4m3fn)})),
        "pt-float8-TypeError",
        NEEDS_TORCH,
    ),
    _bad(
        "pt",
        lambda: Sample(_pt(lambda t: {"pe": t.zeros(2, 2, dtype=t.complex64).conj()})),
        "pt-conjugate-RuntimeError",
        NEEDS_TORCH,
    ),
    _bad("pt", lambda: Sample(_pt(lambda t: {"pe": t.zeros(2, 2, device="meta")})), "pt-meta-TypeError", NEEDS_TORCH),
    _bad(
        "pt",
        lambda: Sample(_pt(lambda t: {"pe": t.zeros(2, 2), META_KEY: _DEEP})),
        "pt-deep-metadata-RecursionError",
        NEEDS_TORCH,
    ),
]


def _empty_f4() -> Any:
    import h5py

    return h5py.Empty("f4")


def _pickled_metadata() -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.array({"schema": "pecli/1"}, dtype=object), allow_pickle=True)
    return buf.getvalue()


def _corrupt_npz_local_header() -> bytes:
    """A valid two-entry npz whose second entry's local header signature is broken (the directory is fine)."""
    data = bytearray(_zip({"pe.npy": _npy(_HEADER_F4, bytes(16)), "x.npy": _npy(_HEADER_F4, bytes(16))}))
    at = data.index(b"PK\x03\x04", 4)
    data[at + 3] ^= 0xFF
    return bytes(data)


def _npz_directory_edit(offset: int, value: int) -> bytes:
    """A valid one-entry npz with one byte of its central directory record changed."""
    data = bytearray(_zip({"pe.npy": _npy(_HEADER_F4, bytes(16))}))
    data[data.index(b"PK\x01\x02") + offset] = value
    return bytes(data)


def _corrupt_npz_crc(name: str) -> bytes:
    """A valid npz (table + metadata) whose entry ``name`` has one flipped data byte: its CRC fails."""
    entries = {"pe.npy": _npy(_HEADER_F4, bytes(16))}
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.array(json.dumps({**Sinusoidal(1, 4).to_metadata(), "key": "pe"})))
    entries[f"{META_KEY}.npy"] = buf.getvalue()
    data = bytearray(_zip(entries))
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as zf:
        info = zf.getinfo(name)
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    data[start + info.file_size - 1] ^= 0x01  # the last byte: the header stays readable
    return bytes(data)


def _corrupt_h5_link_heap() -> bytes:
    """A pecli-written HDF5 file whose root group's local heap signature is broken."""
    data = bytearray(_h5(_f4))
    at = data.find(b"HEAP")
    assert at > 0
    data[at : at + 4] = b"XXXX"
    return bytes(data)


def _env() -> dict[str, str]:
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path}


def _corrupt_h5_attribute_version() -> bytes:
    """The 'pecli_recipe' attribute message declares version 127."""
    return _pecli_recipe_attribute(lambda data, at: data.__setitem__(at - 8, 0x7F))


def _pecli_recipe_attribute(edit: Callable[[bytearray, int], None]) -> bytes:
    """A (2, 2) HDF5 dataset with a variable-length string 'pecli_recipe' attribute, edited in place.

    ``edit`` gets the file and the offset of the attribute's name in its v1 attribute message:
    version byte at -8, datatype at +16 (24 bytes), dataspace at +40, the value at +48 (for a
    variable-length string: length u32, global heap address u64, heap index u32).
    """
    data = bytearray(_h5(lambda f: _f4(f).attrs.__setitem__(META_KEY, "{}")))
    at = data.index(META_KEY.encode() + b"\x00")
    assert data[at - 8] == 1 and data[at + 16] == 0x19  # attribute message v1; datatype v1, variable-length
    edit(data, at)
    return bytes(data)


def _corrupt_h5_attribute_charset() -> bytes:
    """The attribute's string datatype declares character set 12 (0 and 1 are the defined ones)."""
    return _pecli_recipe_attribute(lambda data, at: data.__setitem__(at + 18, 12))


def _corrupt_h5_chunk_index() -> bytes:
    """A chunked HDF5 dataset whose chunk B-tree gives its first chunk a row offset of 3 (chunks are 4 rows)."""
    data = bytearray(_h5(lambda f: f.create_dataset("pe", data=np.zeros((8, 8), "f4"), chunks=(4, 8))))
    at = -1
    while (at := data.index(b"TREE", at + 1)) and data[at + 4] != 1:  # node type 1: raw data chunks
        pass
    data[at + 32] = 3  # signature, type, level, entries, 2 siblings (24 bytes), chunk size, filter mask: offset 0
    return bytes(data)


def _corrupt_h5_chunk_data() -> bytes:
    """A gzip-compressed HDF5 dataset whose only chunk is inverted: the metadata is intact, inflating fails."""
    import h5py

    buf = io.BytesIO()
    with h5py.File(buf, "w") as f:
        ds = f.create_dataset("pe", data=np.arange(64, dtype="f4").reshape(8, 8), compression="gzip", chunks=(8, 8))
        chunk = ds.id.get_chunk_info(0)
    data = bytearray(buf.getvalue())
    for i in range(chunk.byte_offset, chunk.byte_offset + chunk.size):
        data[i] ^= 0xFF
    return bytes(data)


@pytest.mark.parametrize(("reader", "build"), FOUND)
def test_found_by_fuzzing(reader: str, build: Callable[[], Any], workdir: Path) -> None:
    check(reader, build(), workdir)


# A pecli-written float64 HDF5 file with 165 bytes of itself inserted at offset 2366 (fuzz seed 0,
# h5 input 896): libhdf5 loops for ever reading its 'pecli_recipe' attribute.
H5_ATTRIBUTE_HANG = """
eNrr9HBx4+WS4mIAAQ4OBhYGAQZk8B8KEiRQ+TD5BCjNCKU7oPQKJpg4I1gOqp1BEGo+urqQIFdXkOr/aABmjwELhOZgGAUjEXi4
OgaA6AgoH5ZKTzChqitIRU2PHhTaywi0iRHJQEYGDQjNBBGAJksGZiiNzmcGpnyQSkEFe2jadWAw4WYw+Q9VwAoUBckzMUEM5IDm
FGZGWFJPQHEPD1A/xB3sDCJAJcXJGam5iQwMkoyM4DARgDuVAyUc2EEmcSDCRgAaghWsUFvg4SiBNzyC/fxdQDkalg8VmEfTJjkA
EY+s4HjMzsxLAfEJxSMXUjwygc0xgKcHHqDanNS89JIMoH4OBnh6Q9bPArcfpo8FrC8lMxeSr3DoY4brs0Bxd1JiMTjH4UrfjCi+
jnRAT785iZX5pSWE/c2N5G9mFPezgd1fXJJYVILH/Zjhzga2P6WkElxkkJJ/WMDmeEDl+cDmFKQm52TGl6UWFWfm5xFhHiuSeawo
5vEimVeUmpwJKdEImbcEyTw2slPlB3sY6x0PZ3/I21f2PWxb+TW8Htq31K+btvjgcnu3LRdffZN4a89aFByutujW/p9zrI+K7d5u
H311W66FwCH7S09b97Gse7/fIb7wjtKRg/buzv4+jEgFNnJ4QsproD/1DRmYkNI3CBRn5pUW52emJOagpj9uKJ2ZV5JalJOaWJaa
gpKuYeam5eQnlpiZMLAihTe4HaFnqGeAFEZLoHS1EqQkVbJSUIK6SUlHQQmULUFCCOeARCGZDCg+JIoaE6CLgdkb6FxjIAuUYYFM
QwMDPQOQV8D5D+RFpBAF+RGcoYDiIEXgTAJSAw1VkDxKggfJgUNWqRbZ5g18owX9KBgFo2AUjIJRMApGwSgYBaNgFIyCwQMAWYm/
SQ==
"""


def _read_in_child(path: Path, seconds: float = 5) -> subprocess.CompletedProcess[str] | None:
    """Read ``path`` with the fuzz harness in a child process: None if it ran over ``seconds``.

    The child prints how much its peak memory grew while reading, in MiB.
    """
    code = (
        "import sys, importlib.util as u; from pathlib import Path\n"
        f"spec = u.spec_from_file_location('fz', {str(ROOT / 'scripts' / 'fuzz_readers.py')!r})\n"
        "m = u.module_from_spec(spec); sys.modules['fz'] = m; spec.loader.exec_module(m)\n"
        f"before = m.peak_rss(); m.read_everything(Path({str(path)!r})); print((m.peak_rss() - before) >> 20)\n"
    )
    try:
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=seconds, env=_env())
    except subprocess.TimeoutExpired:
        return None


def test_h5_corrupt_attribute_does_not_hang(workdir: Path) -> None:
    """libhdf5 spins for ever in ds.attrs['pecli_recipe'] on this file, so the read runs in a child."""
    path = workdir / "attribute-hang.h5"
    path.write_bytes(zlib.decompress(base64.b64decode("".join(H5_ATTRIBUTE_HANG.split()))))
    done = _read_in_child(path)
    assert done is not None, f"reading {path.name} did not finish in 5 s (libhdf5 loops in the attribute read)"
    assert done.returncode == 0, done.stderr


def test_npy_zero_size_dtype_does_not_crash_the_interpreter(workdir: Path) -> None:
    """descr [] (itemsize 0) with shape (-1,): np.load(mmap_mode='r') dies of SIGFPE inside NumPy."""
    path = workdir / "sigfpe.npy"
    path.write_bytes(_npy("{'descr': [], 'fortran_order': False, 'shape': (-1,), }"))
    done = _read_in_child(path)
    assert done is not None, f"reading {path.name} did not finish in 5 s"
    assert done.returncode == 0, f"exit status {done.returncode} (-8 is SIGFPE): {done.stderr[-2000:]}"


def test_h5_attribute_length_does_not_allocate_gigabytes(workdir: Path) -> None:
    """A 6 kB file whose 'pecli_recipe' string claims 1 GiB: libhdf5 allocates (and touches) all of it."""
    path = workdir / "attribute-1gib.h5"
    path.write_bytes(_pecli_recipe_attribute(lambda data, at: data.__setitem__(slice(at + 48, at + 52), b"\0\0\0\x40")))
    done = _read_in_child(path, seconds=60)
    assert done is not None, f"reading {path.name} did not finish in 60 s"
    assert done.returncode == 0, done.stderr
    grown = int(done.stdout.split()[-1])
    assert grown < 256, f"reading a {path.stat().st_size}-byte file took {grown} MiB"


# A pecli-written HDF5 file mutated by the fuzzer (seed 0, h5 input 3025): libhdf5 never returns from
# opening a corrupt object header (h5py Group.get inside visititems_links), deep in C code.
H5_OBJECT_HEADER_HANG = """
eNrtlM1O20AQx3fXDnJRQKFCInBoLYsDhxActaCqJ1AxzQHxjVQJITDx0liEJLJNFVRVvcJbcOxb9NpH4Non6AtUorvZWWJbkAMn
pM5PsmZndr2z3vl7ruura2OjM6NEYlnEJCWS5g4g5ZwPHIOlYK/A/mA6Tvtz8DqZgP3z6/Z2PE+uvsuh87imstnTIf8LdW9lS9pP
4Gs9/WLZdV2ubC+ny+Un5qXEUntQ7c8py1RAp3/MGuKkcuWE/ZooCdtkyiJT32G+IBQt55nBqJnKa0JeHbNA+aYhhqkvewmu9KZf
0bMieQf+GCmKuS5vtMKjiDdCdTMli8Aby5n7GYzKQ+9jd2NzlYqvg0MQ2xh+f/p/7RVQw1ldjQzVlXGvn8fsnOqrTG0h60pBKWsr
67tev6fue7q0BdATYyqBBXU2qO60LzLnK5L6vY4mH9DRNFW1LZFB3rSKbgch+BfKWPRnyMcPm+s09aPq+m3n20InafKo2lyUHdbI
NA5V4HT7YLl5Cs/v09m/uf54C/arEzea/Nx33ttOX2sLNacyaztnYTuQsThsX8SdMPBbTsV2Wrz9OWmK+KJwgvBcjJbE6MSPuRjW
XEHVlev8y85FIt8P2wmPWtz/wgO5QZz4kYzLRUFy2eXleuPPT7daq7pymveSSB7lYP5NxX57+E1/yM04KgZBEARBEARBEARBMvwD
8UN+CQ==
"""


@pytest.fixture
def header_hang(workdir: Path) -> Path:
    path = workdir / "object-header-hang.h5"
    path.write_bytes(zlib.decompress(base64.b64decode("".join(H5_OBJECT_HEADER_HANG.split()))))
    return path


def _pecli_with_probe_limit(seconds: float, *args: str) -> list[str]:
    """``python -m pecli ARGS`` with the HDF5 structure probe limited to ``seconds``."""
    code = (
        "import runpy, sys; import pecli.formats.hdf5 as h5\n"
        f"h5.PROBE_SECONDS = {seconds}; sys.argv = ['pecli', *{list(args)!r}]\n"
        "runpy.run_module('pecli', run_name='__main__')\n"
    )
    return [sys.executable, "-c", code]


@pytest.mark.slow  # waits out the 2 s probe limit in a subprocess per command
@pytest.mark.parametrize("command", ["inspect", "export"])
def test_h5_object_header_hang_is_a_clean_error(command: str, header_hang: Path, workdir: Path) -> None:
    """The structure is walked first in a forked child; when it does not come back, exit 2 with one line.

    stdin and stdout are pipes, and the child must not hold them open after the parent is done.
    """
    args = [command, str(header_hang)] + (["-o", str(workdir / "out.npy"), "--force"] if command == "export" else [])
    began = time.monotonic()
    done = subprocess.run(
        _pecli_with_probe_limit(2, *args), input="", capture_output=True, text=True, timeout=60, env=_env()
    )
    elapsed = time.monotonic() - began
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        f"Error: {header_hang}: libhdf5 did not finish reading its structure within 2 s; the file is corrupt or hostile"
    ]
    assert done.stdout == ""
    assert elapsed < 2 + 8, f"took {elapsed:.1f} s"
    assert not (workdir / "out.npy").exists()


@pytest.mark.slow  # waits out the 1 s probe limit twice
def test_h5_object_header_hang_through_the_library(header_hang: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pecli.formats.hdf5, "PROBE_SECONDS", 1)
    for call in (lambda: pecli.formats.list_arrays(header_hang), lambda: pecli.open_table(header_hang).__enter__()):
        with pytest.raises(PecliInputError, match=r"libhdf5 did not finish reading its structure within 1 s"):
            call()


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(stat.parent.name))
    return found


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds the probe child through /proc")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_while_the_h5_probe_runs(signum: int, header_hang: Path) -> None:
    """Ctrl-C (or SIGTERM) while the child walks a hanging file: exit 130 (143) at once, the child killed."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "pecli", "inspect", str(header_hang)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    deadline = time.monotonic() + 30
    while not (children := _children(proc.pid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert children, "the probe child never started"
    time.sleep(0.3)  # inside libhdf5 by now
    began = time.monotonic()
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == (143 if signum == signal.SIGTERM else 130)
    assert err.splitlines() == ["Interrupted: nothing was written."]
    assert time.monotonic() - began < 5
    assert not [c for c in children if Path(f"/proc/{c}").exists()], "the probe child outlived pecli"


def test_h5_probe_passes_on_what_the_walk_found(tmp_path: Path) -> None:
    """Listing comes back from the child; clean errors come back as the same error and message."""
    import h5py

    path = tmp_path / "two.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("a", data=np.zeros((2, 3), "f4"))
        f.create_dataset("g/b", data=np.zeros((4, 5), "f8"))
    assert pecli.formats.list_arrays(path) == [
        pecli.formats.ArrayInfo("a", (2, 3), "float32"),
        pecli.formats.ArrayInfo("g/b", (4, 5), "float64"),
    ]
    with pytest.raises(PecliInputError) as caught, pecli.open_table(path):
        pass
    assert type(caught.value).__name__ == "FormatError"
    assert str(caught.value) == f"{path} holds several arrays (a, g/b): choose one as {path}:KEY"


def _die(signum: int) -> None:
    os.kill(os.getpid(), signum)


def _boom() -> None:
    raise ValueError("a bug, not the file")


def _too_large() -> None:
    raise TableTooLargeError("too large")


@pytest.mark.parametrize(
    ("walk", "raised", "message"),
    [
        (lambda: _die(signal.SIGSEGV), PecliInputError, "x.h5: libhdf5 died of SIGSEGV while reading its structure"),
        (
            lambda: bytearray(3 << 30),
            PecliInputError,
            "x.h5: libhdf5 needed over 2 GiB of memory to read its structure",
        ),
        (_too_large, TableTooLargeError, "too large"),
        (_boom, ValueError, "a bug, not the file"),  # raised again by the parent's own walk, with its traceback
    ],
    ids=["crash", "memory", "clean-error", "bug"],
)
def test_h5_probe_outcomes(walk: Callable[[], Any], raised: type[BaseException], message: str) -> None:
    from pecli.formats.hdf5 import _probe

    with pytest.raises(raised) as caught:
        _probe(Path("x.h5"), walk)
    assert str(caught.value).startswith(message)
    assert type(caught.value) is raised or raised is PecliInputError


# ------------------------------------------------------------------- statistics of sparse HDF5
def test_statistics_skip_a_mostly_unwritten_dataset(workdir: Path) -> None:
    import h5py

    path = workdir / "wide-unwritten.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("pe", shape=(4, 10**9), dtype="f4", chunks=(1, 1 << 20))
    with address_space_cap(2 << 30), pecli.open_table(path) as table:
        stats = pecli.describe(table)["stats"]
    assert stats["skipped"] == (
        "statistics skipped: 16.0 GB declared, 0 B stored — unwritten chunks read as the fill value; "
        "look at rows with --rows or --pos"
    )
    assert stats["min"] is None


def test_statistics_of_highly_compressed_data_are_computed(workdir: Path) -> None:
    """gzip -9 of all zeros is deflate at its best (about 1000:1): real data, so statistics as usual."""
    import h5py

    path = workdir / "zeros-gzip9.h5"
    with h5py.File(path, "w") as f:
        ds = f.create_dataset(
            "pe", data=np.zeros((1 << 16, 64), "f4"), compression="gzip", compression_opts=9, chunks=(4096, 64)
        )
        assert ds.id.get_storage_size() * 900 < ds.nbytes  # as compressed as deflate gets
    with pecli.open_table(path) as table:
        stats = pecli.describe(table)["stats"]
    assert "skipped" not in stats
    assert (stats["min"], stats["max"], stats["row_norm_max"]) == (0.0, 0.0, 0.0)


def test_statistics_skip_rows_wider_than_a_block_can_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    """Statistics read whole rows; a row over MAX_STATS_ROW_BYTES (64 MiB) is not read for them."""
    import pecli.inspection

    monkeypatch.setattr(pecli.inspection, "MAX_STATS_ROW_BYTES", 31)
    stats = pecli.describe(pecli.Table(np.zeros((3, 8), "f4")))["stats"]
    assert stats["skipped"] == "statistics skipped: one row is 32 B, and statistics read whole rows"
