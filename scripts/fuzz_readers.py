"""Fuzz every pecli reader: whatever the bytes, reading a file succeeds or raises a clean error.

What it proves: for N inputs per reader (npy, npz, h5, csv, tsv, json, safetensors, and pt when
PyTorch is installed), reading the file the way pecli's commands do (``list_arrays``, then
``open_table`` for the default array and each listed key, then every row) either succeeds or raises
:class:`pecli.errors.PecliInputError`: never another exception, never a hang, never a crash of the
interpreter, never more than 1 GiB of memory for one input.  The inputs are random bytes, random
bytes behind the format's magic, mutations of valid files pecli wrote (bit flips, truncation,
insertions, deletions, overwrites with boundary values, duplicated chunks) and structural edits
(npy header dicts, the safetensors header length and JSON, npz entries, JSON documents, CSV cells,
HDF5 objects, .pt objects, stored recipe metadata and sidecars).  Input ``i`` of reader ``R`` comes
from ``random.Random(f"{seed}:{R}:{i}")``, so every finding replays.

Run from the repository root::

    PYTHONPATH=. python scripts/fuzz_readers.py                      # 100,000 inputs per reader
    PYTHONPATH=. python scripts/fuzz_readers.py --count 2000         # CI-sized: well under a minute
    PYTHONPATH=. python scripts/fuzz_readers.py --seconds 600 --readers npz,json
    PYTHONPATH=. python scripts/fuzz_readers.py --replay /tmp/pecli-fuzz-crashes/npz-000017-KeyError.npz

Each reader runs in its own worker process, so a segfault or a hang inside a C library (HDF5,
zlib, PyTorch) is caught, reported and skipped instead of ending the run.  The table goes to
stdout; each uncaught finding's first inputs are saved under ``--crashes DIR``.  Exit status 1
if any input raised anything but a clean error.  ``tests/formats/test_fuzz.py`` runs the same generators
under Hypothesis in the default test suite.
"""

from __future__ import annotations

import argparse
import contextlib
import faulthandler
import importlib.util
import io
import json
import os
import random
import resource
import selectors
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import warnings
import zipfile
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import pecli
from pecli.errors import PecliInputError
from pecli.formats import FORMATS, WriteOptions, list_arrays, write_table
from pecli.formats.metadata import META_KEY, SIDECAR_SCHEMA
from pecli.hfconfig import recipe_from_config
from pecli.kinds.sinusoidal import Sinusoidal
from pecli.table import Table

ROOT = Path(__file__).resolve().parent.parent

#: Every readable format and its first extension, from the registry.
EXTENSIONS = {name: f.extensions[0] for name, f in FORMATS.items() if f.read is not None}
#: Readers whose recipe lives in a ``FILE.json`` sidecar, which is fuzzed too.
SIDECAR_READERS = ("npy", "csv", "tsv")
#: The first bytes of a well-formed file, so random tails get past the first check.
MAGIC = {
    "npy": b"\x93NUMPY\x01\x00",
    "npz": b"PK\x03\x04",
    "h5": b"\x89HDF\r\n\x1a\n",
    "csv": b"d0,d1\n",
    "tsv": b"d0\td1\n",
    "json": b'{"format": "pecli/1", "data": [',
    "safetensors": struct.pack("<Q", 64) + b'{"pe": {"dtype": "F32", ',
    "pt": b"PK\x03\x04",
    "gguf": b"GGUF\x03\x00\x00\x00",
}
#: Tables larger than this are read at their first and last row only (see ``read_everything``).
MAX_READ_BYTES = 256 << 20
#: Keys of a multi-array file opened one by one, at most.
MAX_KEYS = 4
#: Growth of the process's peak memory during one input that counts as a finding.
MEMORY_LIMIT = 1 << 30
#: pecli-written tables the mutations start from: every dtype, both layouts, odd widths, a start offset.
SEED_RECIPES = (
    Sinusoidal(5, 6),
    Sinusoidal(3, 4, layout="split", start=7, dtype="float16"),
    Sinusoidal(4, 3, base=100.0, dtype="float64"),
)

# Boundary values: what makes size arithmetic, parsers and casts misbehave.
BIG_INTS = (0, 1, 2, 3, 7, 64, 255, 2**16, 2**31 - 1, 2**31, 2**32, 10**12, 2**53, 2**63 - 1, 2**63, 2**64 - 1)
WILD_INTS = (*BIG_INTS, 2**64, 10**30, 10**400, -1, -(2**63))
FLOATS = (0.0, -0.0, 0.5, 1.5, 10000.0, 5e-324, 1e-300, 1e308, float("inf"), float("-inf"), float("nan"))
STRINGS = ("", "pe", "pecli/1", "sinusoidal", "float32", "float16", "F32", "split", "NaN", "Infinity", "x" * 300)
TOKENS = (
    *(b"\x00", b"\xff", b"\x7f", b"\x80", b"\x00" * 4, b"\xff" * 4, b"\xff" * 8, struct.pack("<Q", 2**63)),
    *(b"-1", b"9" * 20, b"1e999", b"nan", b'"', b"[", b"{", b"}", b",", b"\n", b"\t", b"\r", b" ", b"\xc3"),
)


@dataclass
class Sample:
    """One fuzz input: the file's bytes and, for sidecar formats, an optional ``FILE.json``."""

    data: bytes
    sidecar: bytes | None = None


class ReaderHang(BaseException):
    """Raised inside a reader that ran too long (a BaseException, so no ``except Exception`` swallows it)."""


# ------------------------------------------------------------------------------------ reading
def read_everything(path: Path) -> bool:
    """Read ``path`` as pecli's commands do; True if some table was read, False if all were refused.

    ``list_arrays``, then ``open_table`` for the default array and each listed key, then
    ``table.rows(0, n)``.  Clean refusals (:class:`PecliInputError`) are the expected outcome for
    bad input and are swallowed; anything else propagates.  A table over ``MAX_READ_BYTES`` can
    only come from a lazily declared array (an HDF5 dataset never written, which is valid and
    reads as fill values): only its first and last rows are read, and none if one row alone is
    over the limit.  ``test_fuzz.py`` checks separately that such tables refuse ``rows(0, n)``
    cleanly when they cannot fit in memory.
    """
    try:
        arrays = list_arrays(path)
    except PecliInputError:
        arrays = None
    accepted = False
    for key in [None, *[a.key for a in (arrays or [])[:MAX_KEYS]]]:
        try:
            with pecli.open_table(path, key=key) as table:
                n = table.shape[0]
                if table.nbytes <= MAX_READ_BYTES:
                    table.rows(0, n)
                elif table.nbytes // n <= MAX_READ_BYTES:
                    table.rows(0, 1)
                    table.rows(n - 1, n)
            accepted = True
        except PecliInputError:
            pass
    if path.suffix in CONFIG_SUFFIXES:  # also read as --hf-config reads a model's settings
        try:
            recipe = recipe_from_config(path)
            if recipe.shape[1] * 8 <= MAX_READ_BYTES:
                recipe.rows(0, min(1, recipe.shape[0]))
            accepted = True
        except PecliInputError:
            pass
    return accepted


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`ReaderHang` in the block after ``seconds`` (main thread only; else no limit).

    Python-level loops are interrupted; a hang inside C code is left to the worker's parent.
    """
    if threading.current_thread() is not threading.main_thread() or seconds <= 0:
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise ReaderHang(f"no result after {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def h5_probe_limit(budget: float) -> Iterator[None]:
    """Fit pecli's HDF5 structure probes (10 s each by default) into ``budget`` seconds per input.

    ``read_everything`` makes up to ``2 + MAX_KEYS`` probes; each gets its share, so an input on
    which libhdf5 hangs ends in pecli's own clean error before ``time_limit(budget)`` counts it as
    a hang.  A healthy probe takes milliseconds.
    """
    from pecli.formats import hdf5

    previous = hdf5.PROBE_SECONDS
    hdf5.PROBE_SECONDS = budget / (2 + MAX_KEYS)
    try:
        yield
    finally:
        hdf5.PROBE_SECONDS = previous


def write_sample(sample: Sample, path: Path) -> None:
    """Put ``sample`` at ``path`` (and its sidecar at ``path.json``, or none).

    Through a rename, so a reader's memory map of the previous input never sees a truncated file.
    """
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(sample.data)
    os.replace(tmp, path)
    sidecar = Path(str(path) + ".json")
    if sample.sidecar is None:
        sidecar.unlink(missing_ok=True)
    else:
        sidecar.write_bytes(sample.sidecar)


PACKAGE = Path(pecli.__file__).resolve().parent


def _frame(f: traceback.FrameSummary) -> str:
    path = Path(f.filename).resolve()
    name = f"pecli/{path.relative_to(PACKAGE)}" if path.is_relative_to(PACKAGE) else "/".join(path.parts[-2:])
    return f"{name}:{f.lineno} ({f.name})"


def where(exc: BaseException) -> str:
    """``"pecli frame <- innermost frame"`` of ``exc``: where the fix goes, and where it was raised."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return "?"
    ours = [f for f in frames if Path(f.filename).resolve().is_relative_to(PACKAGE)]
    if not ours or ours[-1] is frames[-1]:
        return _frame(frames[-1])
    return f"{_frame(ours[-1])} <- {_frame(frames[-1])}"


def one_line(exc: BaseException, limit: int = 160) -> str:
    text = (str(exc).strip().splitlines() or [""])[0]
    return text[:limit] + ("…" if len(text) > limit else "")


# ---------------------------------------------------------------------------------- mutation
def mutate(data: bytes, rng: random.Random) -> bytes:
    """1–6 byte-level edits: bit flip, truncation, insertion, deletion, boundary overwrite, duplication."""
    buf = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        pos = rng.randint(0, len(buf))
        if rng.random() < 0.5:  # headers live near the start: aim there half the time
            pos = min(pos, rng.randint(0, 300))
        op = rng.randrange(7)
        if op == 0 and buf:
            buf[pos % len(buf)] ^= 1 << rng.randrange(8)
        elif op == 1:
            del buf[pos:]
        elif op == 2:
            buf[pos:pos] = rng.randbytes(rng.randint(1, 16))
        elif op == 3:
            del buf[pos : pos + rng.randint(1, 64)]
        elif op == 4:
            token = rng.choice(TOKENS)
            buf[pos : pos + len(token)] = token
        elif op == 5 and buf:
            start = rng.randrange(len(buf))
            buf[pos:pos] = buf[start : start + rng.randint(1, 256)]
        elif buf:
            buf[pos % len(buf)] = rng.randrange(256)
    return bytes(buf)


def random_bytes(rng: random.Random) -> bytes:
    return rng.randbytes(rng.choice((rng.randint(0, 16), rng.randint(0, 512), rng.randint(0, 4096))))


# -------------------------------------------------------------------------- structured values
def json_value(rng: random.Random, depth: int = 0) -> Any:
    """A JSON-representable value biased towards what breaks readers: big ints, NaN, nesting."""
    kind = rng.randrange(8 if depth < 3 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.random() < 0.5
    if kind == 2:
        return rng.choice(WILD_INTS)
    if kind == 3:
        return rng.choice(FLOATS)
    if kind == 4:
        return rng.choice(STRINGS)
    if kind == 5:
        return rng.randint(-3, 9)
    if kind == 6:
        return [json_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice(STRINGS): json_value(rng, depth + 1) for _ in range(rng.randint(0, 3))}


def metadata_value(rng: random.Random) -> dict[str, Any]:
    """A recipe metadata dict with 1–3 fields replaced, deleted or added."""
    meta: dict[str, Any] = rng.choice(SEED_RECIPES).to_metadata()
    keys = [*meta, "key", "converted_from", "extra"]
    for _ in range(rng.randint(1, 3)):
        name = rng.choice(keys)
        if rng.random() < 0.15:
            meta.pop(name, None)
        elif name in ("base",) and rng.random() < 0.5:
            meta[name] = rng.choice(FLOATS)
        elif name in ("length", "dim", "start") and rng.random() < 0.5:
            meta[name] = rng.choice(WILD_INTS)
        else:
            meta[name] = json_value(rng)
    return meta


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def metadata_text(rng: random.Random) -> str:
    """Stored metadata as text: mostly JSON of a mangled recipe, sometimes deep, broken or not a dict."""
    roll = rng.random()
    if roll < 0.7:
        return json.dumps(metadata_value(rng))
    if roll < 0.8:
        return nested(rng.choice((100, 5000, 100_000)))
    if roll < 0.9:
        return mutate(json.dumps(metadata_value(rng)).encode(), rng).decode("utf-8", "replace")
    return json.dumps(json_value(rng))


def sidecar_bytes(rng: random.Random, shape: tuple[int, ...]) -> bytes:
    """A ``FILE.json`` sidecar: right or wrong schema, shape and recipe, or not JSON at all."""
    roll = rng.random()
    if roll < 0.1:
        return nested(rng.choice((1000, 100_000))).encode()
    if roll < 0.2:
        return random_bytes(rng)
    doc: dict[str, Any] = {
        "schema": SIDECAR_SCHEMA if rng.random() < 0.8 else json_value(rng),
        "shape": list(shape) if rng.random() < 0.6 else json_value(rng),
        "dtype": rng.choice(("float32", "float16", "float64", "int8")),
        "recipe": metadata_value(rng) if rng.random() < 0.8 else json_value(rng),
    }
    if rng.random() < 0.1:
        del doc[rng.choice(list(doc))]
    return json.dumps(doc).encode()


# ------------------------------------------------------------------------------------- seeds
def seed_samples(reader: str, directory: Path) -> list[Sample]:
    """Valid files pecli itself wrote, in ``reader``'s format (HDF5 also gzip-compressed)."""
    directory.mkdir(parents=True, exist_ok=True)
    ext = EXTENSIONS[reader]
    jobs: list[tuple[Sinusoidal, WriteOptions]] = [(r, WriteOptions()) for r in SEED_RECIPES]
    if reader == "h5":
        jobs.append((SEED_RECIPES[0], WriteOptions(compress=("gzip", 4))))
    if reader in ("npz", "safetensors", "pt", "h5"):
        jobs.append((SEED_RECIPES[1], WriteOptions(key="model/pos_embed")))
    samples = [Sample(json.dumps(c).encode()) for c in CONFIG_SEEDS] if reader == "json" else []
    if reader == "gguf":  # a Phi-3 LongRoPE and a YaRN model's settings as llama.cpp converts them
        samples += [Sample(gguf_model(directory / f"model{k}.gguf", k)) for k in range(2)]
    for k, (recipe, options) in enumerate(jobs):
        path = directory / f"seed{k}{ext}"
        if FORMATS[reader].write is None:  # a format pecli only reads: its own library writes the seed
            FOREIGN_WRITERS[reader](path, recipe.build())
        else:
            write_table(Table.from_recipe(recipe), path, options=options, force=True)
        sidecar = Path(str(path) + ".json")
        samples.append(Sample(path.read_bytes(), sidecar.read_bytes() if sidecar.exists() else None))
    return samples


#: Readers whose files are also read as a model's settings (``--hf-config``: config.json, GGUF).
CONFIG_SUFFIXES = (".json", ".gguf")
#: Models' config.json files as transformers writes them: the --hf-config reader's seeds (issue 40).
CONFIG_SEEDS: tuple[dict[str, Any], ...] = (
    {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "max_position_embeddings": 128,
     "rope_theta": 500000.0, "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                              "high_freq_factor": 4.0, "original_max_position_embeddings": 64}},
    {"model_type": "phi3", "hidden_size": 64, "num_attention_heads": 4, "max_position_embeddings": 256,
     "original_max_position_embeddings": 64, "rope_scaling": {"type": "longrope", "short_factor": [1.0] * 8,
                                                              "long_factor": [1.5] * 8}},
    {"model_type": "qwen2", "hidden_size": 64, "num_attention_heads": 4, "max_position_embeddings": 128,
     "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32}},
    {"model_type": "qwen3_vl", "text_config": {"head_dim": 16, "hidden_size": 64, "num_attention_heads": 4,
     "max_position_embeddings": 64, "rope_scaling": {"mrope_section": [4, 2, 2], "mrope_interleaved": True}}},
)  # fmt: skip


def gguf_model(path: Path, which: int) -> bytes:
    """A model's rope settings as llama.cpp's convert_hf_to_gguf.py writes them: Phi-3's LongRoPE
    (factor tensors, original length, attention factor) or YaRN's scaling keys."""
    import gguf

    writer = gguf.GGUFWriter(path, "llama")
    writer.add_context_length(256)
    writer.add_rope_freq_base(10000.0)
    writer.add_rope_dimension_count(16)
    if which == 0:
        writer.add_uint32("llama.rope.scaling.original_context_length", 64)
        writer.add_float32("llama.rope.scaling.attn_factor", 1.19)
        writer.add_tensor("rope_factors_long.weight", np.full(8, 1.5, np.float32))
        writer.add_tensor("rope_factors_short.weight", np.ones(8, np.float32))
    else:
        writer.add_string("llama.rope.scaling.type", "yarn")
        writer.add_float32("llama.rope.scaling.factor", 4.0)
        writer.add_uint32("llama.rope.scaling.original_context_length", 64)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path.read_bytes()


def gguf_write(path: Path, table: np.ndarray) -> None:
    """A GGUF file holding ``table`` as tensor ``pe`` and a few rope keys, by llama.cpp's writer."""
    import gguf

    writer = gguf.GGUFWriter(path, "llama")
    writer.add_context_length(int(table.shape[0]))
    writer.add_rope_freq_base(10000.0)
    writer.add_rope_dimension_count(int(table.shape[1]))
    writer.add_tensor("pe", np.ascontiguousarray(table, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


#: Writers of the formats pecli reads but does not write (their own libraries').
FOREIGN_WRITERS: dict[str, Callable[[Path, np.ndarray], None]] = {"gguf": gguf_write}


def gguf_edit(rng: random.Random, data: bytes) -> bytes:
    """A seed GGUF with header words overwritten: counts, lengths, dimensions, types and offsets
    (little-endian 4- and 8-byte words in the first kilobyte) set to edge values."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        width = rng.choice((4, 8))
        at = rng.randrange(4, max(5, min(len(out), 1024) - width))
        value = rng.choice((0, 1, 2, 31, 2**31 - 1, 2**32 - 1, 2**63 - 1, 2**64 - 1, rng.getrandbits(8 * width)))
        out[at : at + width] = (value % 2 ** (8 * width)).to_bytes(width, "little")
    return bytes(out)


# ------------------------------------------------------------------------- structural edits
DESCRS = (
    *("'<f4'", "'<f2'", "'>f8'", "'<f16'", "'<i4'", "'|b1'", "'<c8'", "'|O'", "'<U3'", "'|S4'", "'|V8'", "'<M8[s]'"),
    *("[('a', '<f4')]", "[('a', '<f4', (2,))]", "'<f0'", "',f4'", "'xyz'", "[]", "None", "1"),
)


def _npy_payload(npy: bytes) -> tuple[str, bytes]:
    """The header dict text and the data of a version 1.0 .npy file."""
    (n,) = struct.unpack("<H", npy[8:10])
    return npy[10 : 10 + n].decode("latin1"), npy[10 + n :]


def npy_edit(rng: random.Random, seed: bytes) -> bytes:
    """A .npy whose header dict has edited descr, fortran_order, shape, keys, version or length field."""
    _, payload = _npy_payload(seed)
    fields: dict[str, str] = {
        "descr": rng.choice(DESCRS),
        "fortran_order": rng.choice(("False", "True", "0", "None", "'no'")),
    }
    roll = rng.random()
    if roll < 0.7:
        dims = [rng.choice((*BIG_INTS[:6], 5, 6, 10**6, 10**12, 2**62, 2**64, -1)) for _ in range(rng.randint(0, 4))]
        fields["shape"] = "(" + ", ".join(map(str, dims)) + ("," if len(dims) == 1 else "") + ")"
    else:
        fields["shape"] = rng.choice(("(1, 2", "[1, 2]", "(1.5, 2)", "('a',)", "(True, 2)", "(" + "1, " * 70 + ")"))
    if rng.random() < 0.1:
        del fields[rng.choice(list(fields))]
    if rng.random() < 0.1:
        fields["extra"] = "1"
    text = "{" + ", ".join(f"'{k}': {v}" for k, v in fields.items()) + ", }"
    if rng.random() < 0.1:
        text = mutate(text.encode(), rng).decode("latin1")
    major = rng.choice((1, 1, 1, 2, 3, 0, 9))
    length_size = 2 if major == 1 else 4
    raw = text.encode("latin1")
    raw += b" " * (-(10 + len(raw) + 1) % 64) + b"\n"
    length = len(raw)
    if rng.random() < 0.1:  # the header-length field lies
        length = rng.choice(BIG_INTS) % 2 ** (8 * length_size)
    head = b"\x93NUMPY" + bytes((major, 0)) + length.to_bytes(length_size, "little")
    data = payload[: rng.randint(0, len(payload))] if rng.random() < 0.3 else payload
    if rng.random() < 0.1:
        data += rng.randbytes(rng.randint(1, 64))
    return head + raw + data


def _npy_of(array: np.ndarray, pickle: bool = False) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, array, allow_pickle=pickle)
    return buf.getvalue()


def npz_edit(rng: random.Random, seeds: list[Sample]) -> bytes:
    """A zip of 1–3 entries: odd names, headers edited, junk, metadata of every shape and kind."""
    names = ("pe.npy", "pe", "table.npy", f"{META_KEY}.npy", META_KEY, "a/b.npy", ".npy", "pe.npy.npy", "x" * 300)
    entries: list[tuple[str, bytes]] = []
    for _ in range(rng.randint(1, 3)):
        name = rng.choice(names)
        roll = rng.random()
        if roll < 0.3:
            body = _first_npy_entry(rng.choice(seeds).data)
        elif roll < 0.55:
            body = npy_edit(rng, _first_npy_entry(seeds[0].data))
        elif roll < 0.8:
            meta = rng.choice(
                (
                    lambda: _npy_of(np.array(metadata_text(rng))),
                    lambda: _npy_of(np.array([metadata_text(rng)])),
                    lambda: _npy_of(np.arange(3)),
                    lambda: _npy_of(np.array(metadata_value(rng), dtype=object), pickle=True),
                    lambda: metadata_text(rng).encode(),
                )
            )()
            name, body = rng.choice((f"{META_KEY}.npy", name)), meta
        else:
            body = mutate(_first_npy_entry(rng.choice(seeds).data), rng)
        entries.append((name, body))
    buf = io.BytesIO()
    method = rng.choice((zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # duplicate names are part of the point
        with zipfile.ZipFile(buf, "w", compression=method) as zf:
            for name, body in entries:
                zf.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), body)
    return buf.getvalue()


def _first_npy_entry(npz: bytes) -> bytes:
    with zipfile.ZipFile(io.BytesIO(npz)) as zf:
        return zf.read(zf.namelist()[0])


SF_DTYPES: tuple[Any, ...] = ("F16", "F32", "F64", "BF16", "I8", "U8", "I64", "BOOL", "F8_E4M3", "C64", "f32", "", 5)


def _weird_shape(rng: random.Random) -> Any:
    roll = rng.random()
    if roll < 0.6:
        return [rng.choice((*BIG_INTS[:6], 10**6, 10**12, 2**63, 10**30, -1)) for _ in range(rng.randint(0, 4))]
    if roll < 0.8:
        return [rng.choice((1.5, True, "2", None, [2], 2.0)) for _ in range(rng.randint(1, 3))]
    if roll < 0.9:
        return [1] * rng.choice((33, 64, 65, 100))
    return json_value(rng)


def safetensors_edit(rng: random.Random, seed: bytes) -> bytes:
    """Corrupt the 8-byte header length, or edit the header JSON (dtype, shape, offsets, metadata)."""
    (n,) = struct.unpack("<Q", seed[:8])
    header: dict[str, Any] = json.loads(seed[8 : 8 + n])
    payload = seed[8 + n :]
    roll = rng.random()
    if roll < 0.25:  # the length field itself
        size = len(seed) - 8
        value = rng.choice((0, 1, 2, 7, 8, n - 1, n + 1, size, size + 1, 100_000_000, 100_000_001, *BIG_INTS[9:]))
        return struct.pack("<Q", value % 2**64) + seed[8:]
    if roll < 0.35:
        text = mutate(seed[8 : 8 + n], rng)
    elif roll < 0.4:
        text = nested(rng.choice((1000, 100_000))).encode()
    else:
        tensors = [k for k in header if k != "__metadata__"]
        sizes = {k: header[k]["data_offsets"][1] for k in tensors}  # before any edit
        for _ in range(rng.randint(1, 3)):
            target = rng.choice(tensors)
            what = rng.randrange(6)
            entry = header[target]
            if not isinstance(entry, dict):
                continue
            if what == 0:
                entry["dtype"] = rng.choice(SF_DTYPES)
            elif what == 1:
                entry["shape"] = _weird_shape(rng)
            elif what == 2:
                nbytes = sizes[target]
                entry["data_offsets"] = rng.choice(
                    (
                        [0, nbytes + 1],
                        [nbytes, 0],
                        [-4, nbytes - 4],
                        [0.0, float(nbytes)],
                        [0],
                        [0, nbytes, 1],
                        "ab",
                        [2**64, 2**64 + nbytes],
                        [True, nbytes + 1],
                    )
                )
            elif what == 3:
                header[target] = json_value(rng)
            elif what == 4:
                header["__metadata__"] = rng.choice(
                    (
                        lambda: {META_KEY: metadata_text(rng)},
                        lambda: {META_KEY: json_value(rng)},
                        lambda: json_value(rng),
                    )
                )()
            else:
                header[rng.choice(("extra", "", "__metadata__x"))] = {
                    "dtype": rng.choice(SF_DTYPES),
                    "shape": _weird_shape(rng),
                    "data_offsets": [0, rng.choice((0, 4, len(payload)))],
                }
        text = json.dumps(header).encode()
    if rng.random() < 0.2:
        payload = payload[: rng.randint(0, len(payload))]
    return struct.pack("<Q", len(text)) + text + payload


CELLS = (
    *("", " ", "nan", "-inf", "Infinity", "1e400", "-1e400", "1e-400", "-0", "1_0", "0x10", "1,5", "1\t5", "true"),
    *("１", "٣", "∞", "\x00", "1e", ".", "+", "9" * 400, "0." + "0" * 5000 + "1", " 1 ", "\ufeff1", "d0"),
)


def delimited_edit(rng: random.Random, seed: bytes, sep: str) -> bytes:
    """CSV/TSV with cells, rows, headers, line endings or encoding edited."""
    lines = seed.decode().splitlines()
    for _ in range(rng.randint(1, 3)):
        if not lines:
            break
        k = rng.randrange(len(lines))
        cells = lines[k].split(sep)
        what = rng.randrange(7)
        if what == 0:
            cells[rng.randrange(len(cells))] = rng.choice(CELLS)
        elif what == 1:
            cells.pop(rng.randrange(len(cells)))
        elif what == 2:
            cells.append(rng.choice(CELLS))
        if what <= 2:
            lines[k] = sep.join(cells)
        elif what == 3:
            lines.insert(k, rng.choice(("", " ", "# comment", sep * 3, lines[0])))
        elif what == 4:
            del lines[k]
        elif what == 5:
            lines = lines[:1] if rng.random() < 0.5 else lines[1:]
        elif len(lines) < 100:
            lines = lines * rng.randint(2, 50)
    end = rng.choice(("\n", "\n", "\r\n", "\r", "\u2028", "\x0c", "\x1e"))
    text = end.join(lines) + rng.choice((end, "", end * 3))
    if rng.random() < 0.1:
        text = "\ufeff" + text
    encoding = rng.choice(("utf-8",) * 8 + ("utf-16", "latin-1"))
    return text.encode(encoding, "replace")


def json_edit(rng: random.Random, seed: bytes) -> bytes:
    """A pecli JSON document with fields replaced, rows made ragged or cells made odd."""
    if rng.random() < 0.05:
        return nested(rng.choice((1000, 100_000))).encode()
    doc: dict[str, Any] = json.loads(seed)
    for _ in range(rng.randint(1, 3)):
        what = rng.randrange(6)
        rows = doc.get("data")
        if what == 0:
            doc[rng.choice(("format", "metadata", "key", "dtype", "shape", "data"))] = json_value(rng)
        elif what == 1:
            doc["metadata"] = metadata_value(rng)
        elif what == 2:
            doc.pop(rng.choice(list(doc) or ["data"]), None)
        elif what == 3 and isinstance(rows, list) and rows and isinstance(rows[0], list) and rows[0]:
            row = rows[rng.randrange(len(rows))]
            if isinstance(row, list) and row:
                row[rng.randrange(len(row))] = rng.choice(
                    (None, True, "NaN", "nan", "-Infinity", "inf", "1.5", 10**400, 2**64, 1e308, [1.0], {}, -0.0)
                )
        elif what == 4 and isinstance(rows, list) and rows:
            row = rows[rng.randrange(len(rows))]
            if isinstance(row, list):
                if row and rng.random() < 0.5:
                    row.pop()
                else:
                    row.append(0.5)
        else:
            doc["shape"] = _weird_shape(rng)
    return json.dumps(doc).encode()


def h5_build(rng: random.Random, scratch: Path) -> bytes:
    """An HDF5 file made with h5py: odd dtypes and shapes, empty, links, filters, VDS, metadata."""
    import h5py

    path = scratch / "build.h5"
    with h5py.File(path, "w") as f:
        for _ in range(rng.randint(1, 3)):
            name = rng.choice(("pe", "x", "g/pe", META_KEY, "a:b", "deep/er/pe"))
            if name in f:
                continue
            what = rng.randrange(12)
            if what <= 3:
                dtype = rng.choice(("f2", "f4", "f8", ">f4", "i4", "u1", "S3", "c8", "?", [("a", "f4")]))
                shape = tuple(rng.choice((0, 1, 2, 3, 5)) for _ in range(rng.choice((0, 1, 2, 2, 2, 3))))
                kwargs: dict[str, Any] = {}
                if shape and 0 not in shape and rng.random() < 0.4:
                    kwargs = rng.choice(
                        (
                            {"compression": "gzip", "shuffle": True},
                            {"compression": "lzf"},
                            {"fletcher32": True},
                            {"scaleoffset": 3} if dtype in ("f4", "f8") else {},
                        )
                    )
                ds = f.create_dataset(name, shape=shape, dtype=dtype, **kwargs)
                if shape and 0 not in shape and np.dtype(dtype).kind in "fiu":
                    ds[...] = np.arange(int(np.prod(shape))).reshape(shape) % 7
            elif what == 4:
                ds = f.create_dataset(
                    name,
                    shape=rng.choice(((10**6, 10**6), (2**40, 8), (4, 10**9))),
                    dtype="f4",
                    chunks=(1, 8) if rng.random() < 0.5 else None,
                )
            elif what == 5:
                ds = f.create_dataset(name, data=h5py.Empty(rng.choice(("f4", "f8"))))
            elif what == 6:
                f[name] = h5py.SoftLink(rng.choice(("/nowhere", "/pe", "/x")))
                continue
            elif what == 7:
                f[name] = h5py.ExternalLink(rng.choice(("missing.h5", str(path))), "/pe")
                continue
            elif what == 8:
                f.create_group(name)
                continue
            elif what == 9:
                layout = h5py.VirtualLayout(shape=(2, 2), dtype="f4")
                layout[:] = h5py.VirtualSource("other.h5", "pe", shape=(2, 2))
                ds = f.create_virtual_dataset(name, layout, fillvalue=0)
            elif what == 10:
                ds = f.create_dataset(name, shape=(2, 2), dtype="f4", external=[("missing.bin", 0, 16)])
            else:
                ds = f.create_dataset(name, data=np.zeros((2, 3), "f4"))
            stored = rng.choice(
                (
                    lambda: metadata_text(rng).replace("\0", ""),  # h5py refuses NUL in strings
                    lambda: metadata_text(rng).replace("\0", "").encode(),
                    lambda: np.arange(3),
                    lambda: h5py.Empty("f4"),
                    lambda: rng.choice(WILD_INTS[:16]),
                    lambda: None,
                )
            )()
            if stored is not None:
                ds.attrs[META_KEY] = stored
    return path.read_bytes()


def pt_build(rng: random.Random) -> bytes:
    """A torch.save file: odd dtypes, layouts (sparse, quantized, conjugate), meta tensors, odd containers."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # quantized and sparse tensors warn that they are deprecated or beta
        return _pt_build(rng)


def _pt_build(rng: random.Random) -> bytes:
    import torch

    def tensor() -> Any:
        what = rng.randrange(10)
        base = torch.arange(12, dtype=torch.float32).reshape(3, 4) / 7
        if what == 0:
            return base.to(rng.choice((torch.float16, torch.float64, torch.bfloat16, torch.int64, torch.bool)))
        if what == 1:
            return base.to_sparse() if rng.random() < 0.5 else base.to_sparse_csr()
        if what == 2:
            return torch.quantize_per_tensor(base, 0.1, 0, torch.qint8)
        if what == 3:
            return base.to(torch.complex64).conj() if rng.random() < 0.5 else base.to(torch.complex64)
        if what == 4:
            return torch.empty(rng.choice(((10**6, 10**6), (3, 4))), device="meta")
        if what == 5:
            return base.to(torch.float8_e4m3fn)
        if what == 6:
            return base[:, ::2] if rng.random() < 0.5 else base.T
        if what == 7:
            return base.reshape(1, 1, 3, 4)
        if what == 8:
            return torch.zeros(rng.choice(((0, 4), (4, 0), (), (5,))))
        return base

    roll = rng.random()
    obj: Any
    if roll < 0.7:
        obj = {rng.choice(("pe", "w", "model.pos", "", META_KEY)): tensor() for _ in range(rng.randint(1, 3))}
        if rng.random() < 0.5:
            obj[META_KEY] = rng.choice((lambda: metadata_text(rng), lambda: json_value(rng), tensor))()
        if rng.random() < 0.1:
            obj = {"outer": obj}
    elif roll < 0.85:
        obj = tensor()
    else:
        obj = rng.choice(([tensor()], (tensor(),), 5, "pe", None))
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def structured(reader: str, rng: random.Random, seeds: list[Sample], scratch: Path) -> Sample:
    """A format-aware edit of a seed (or a freshly built file) for ``reader``."""
    seed = rng.choice(seeds)
    if reader == "npy":
        return Sample(npy_edit(rng, seed.data), seed.sidecar)
    if reader == "npz":
        return Sample(npz_edit(rng, seeds))
    if reader == "safetensors":
        return Sample(safetensors_edit(rng, seed.data))
    if reader in ("csv", "tsv"):
        return Sample(delimited_edit(rng, seed.data, "," if reader == "csv" else "\t"), seed.sidecar)
    if reader == "json":
        return Sample(json_edit(rng, seed.data))
    if reader == "h5":
        return Sample(h5_build(rng, scratch))
    if reader == "pt":
        return Sample(pt_build(rng))
    if reader == "gguf":
        return Sample(gguf_edit(rng, seed.data))
    raise ValueError(f"no structured generator for {reader!r}")


def generate(reader: str, rng: random.Random, seeds: list[Sample], scratch: Path) -> Sample:
    """Input for ``reader``: random bytes, magic + random, a mutated seed, or a structured edit."""
    roll = rng.random()
    if roll < 0.08:
        sample = Sample(random_bytes(rng))
    elif roll < 0.16:
        sample = Sample(MAGIC[reader] + random_bytes(rng))
    elif roll < 0.6:
        seed = rng.choice(seeds)
        sample = Sample(mutate(seed.data, rng), seed.sidecar)
    else:
        try:
            sample = structured(reader, rng, seeds, scratch)
        except Exception:  # a combination the writing library refuses: fall back to a mutation
            sample = Sample(mutate(rng.choice(seeds).data, rng))
        if rng.random() < 0.25:
            sample.data = mutate(sample.data, rng)
    if reader in SIDECAR_READERS and rng.random() < 0.15:
        sample.sidecar = sidecar_bytes(rng, (5, 6))
    return sample


# ------------------------------------------------------------------------------------ worker
def peak_rss() -> int:
    """The process's peak resident memory so far, in bytes."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def resident() -> int:
    """The process's resident memory now, in bytes (0 where /proc is missing)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as fp:
            return int(fp.read().split()[1]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        return 0


def release_memory() -> None:
    """Hand freed heap back to the system: libhdf5's free lists, then glibc's free pages.

    Reading one row of an HDF5 dataset split into 10**5 chunks leaves ~800 MiB of freed heap
    resident, and every HDF5 open forks pecli's structure probe, whose cost grows with the
    resident pages (8 ms at 40 MiB, 50 ms at 800 MiB): the worker would slow down sixfold.
    """
    import ctypes

    with contextlib.suppress(OSError, StopIteration), open("/proc/self/maps", encoding="ascii") as fp:
        hdf5 = next(line.split()[-1] for line in fp if "/libhdf5" in line and "libhdf5_hl" not in line)
        ctypes.CDLL(hdf5).H5garbage_collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def _emit(event: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def worker(args: argparse.Namespace) -> int:
    """Run inputs ``[start, stop)`` of one reader, reporting JSON lines on stdout."""
    warnings.simplefilter("ignore")
    reader: str = args.worker
    scratch = Path(args.workdir) / reader
    seeds = seed_samples(reader, scratch / "seeds")
    path = scratch / ("input" + EXTENSIONS[reader])
    crashes = Path(args.crashes)
    state = os.open(scratch / "current", os.O_RDWR | os.O_CREAT, 0o644)
    settled = resident()
    accepted = clean = 0
    saved: dict[str, int] = {}
    last = time.monotonic()
    i = args.start
    _emit({"event": "ready"})
    for i in range(args.start, args.stop):
        if args.until and time.time() > args.until:
            break
        rng = random.Random(f"{args.seed}:{reader}:{i}")
        sample = generate(reader, rng, seeds, scratch)
        write_sample(sample, path)
        # What the parent needs if this input kills the process: which input, and the unreported counts.
        os.pwrite(state, f"{i:20d} {accepted:20d} {clean:20d}".encode(), 0)
        before = peak_rss()
        failure: BaseException | None = None
        try:
            with h5_probe_limit(args.timeout), time_limit(args.timeout):
                ok = read_everything(path)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            failure = exc
        else:
            if peak_rss() - before > MEMORY_LIMIT:
                failure = MemoryError(f"peak memory grew by {(peak_rss() - before) >> 20} MiB reading one input")
            elif ok:
                accepted += 1
            else:
                clean += 1
        if failure is not None:
            kind = "hang" if isinstance(failure, ReaderHang) else type(failure).__name__
            signature = f"{kind} @ {where(failure)}"
            saved[signature] = saved.get(signature, 0) + 1
            stored = _save(path, sample, crashes, f"{reader}-{i:06d}-{kind}") if saved[signature] <= 2 else None
            _emit(
                {
                    "event": "uncaught",
                    "index": i,
                    "signature": signature,
                    "message": f"{type(failure).__name__}: {one_line(failure)}",
                    "file": stored,
                }
            )
        if resident() > settled + (128 << 20):
            release_memory()
        if time.monotonic() - last > 0.5:
            _emit({"event": "progress", "next": i + 1, "accepted": accepted, "clean": clean})
            accepted = clean = 0
            last = time.monotonic()
    else:
        i = args.stop
    _emit({"event": "done", "next": i, "accepted": accepted, "clean": clean})
    return 0


def _save(path: Path, sample: Sample, crashes: Path, stem: str) -> str:
    crashes.mkdir(parents=True, exist_ok=True)
    dest = crashes / (stem + path.suffix)
    dest.write_bytes(sample.data)
    if sample.sidecar is not None:
        Path(str(dest) + ".json").write_bytes(sample.sidecar)
    return str(dest)


# ------------------------------------------------------------------------------------ parent
@dataclass
class Finding:
    signature: str
    message: str
    count: int = 0
    files: list[str] = field(default_factory=list)


@dataclass
class ReaderResult:
    reader: str
    inputs: int = 0
    accepted: int = 0
    clean: int = 0
    uncaught: int = 0
    seconds: float = 0.0
    findings: dict[str, Finding] = field(default_factory=dict)

    def add(self, signature: str, message: str, file: str | None) -> None:
        found = self.findings.setdefault(signature, Finding(signature, message))
        found.count += 1
        self.uncaught += 1
        if file:
            found.files.append(file)


def run_reader(reader: str, args: argparse.Namespace, workdir: Path, log: Callable[[str], None]) -> ReaderResult:
    """Drive one reader's worker over all its inputs, restarting it after a crash or a hang."""
    result = ReaderResult(reader)
    began = time.monotonic()
    start, stop = 0, args.count
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    while start < stop:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", reader, "--seed", str(args.seed)]
        cmd += ["--start", str(start), "--stop", str(stop), "--until", str(args.until), "--workdir", str(workdir)]
        cmd += ["--crashes", str(args.crashes), "--timeout", str(args.timeout)]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, env=env)
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        sel = selectors.DefaultSelector()
        sel.register(fd, selectors.EVENT_READ)
        done_at: int | None = None
        hung = ready = False
        pending = b""
        while True:
            # A ready worker reports twice a second and stops a Python-level hang itself after --timeout;
            # silence beyond that is a hang in C code.  Starting (importing torch, h5py) may take longer.
            if not sel.select(timeout=args.timeout + 2 if ready else 120):
                hung = True
                proc.kill()  # then read what it wrote before, up to the end of the pipe
                continue
            chunk = os.read(fd, 1 << 16)  # unbuffered, so select() always sees what is left to read
            if not chunk:
                break
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                event = json.loads(line)
                ready = True
                if event["event"] in ("progress", "done"):
                    result.accepted += event["accepted"]
                    result.clean += event["clean"]
                    start = event["next"]
                    if event["event"] == "done":
                        done_at = event["next"]
                elif event["event"] == "uncaught":
                    result.add(event["signature"], event["message"], event["file"])
                    start = event["index"] + 1
        sel.close()
        proc.stdout.close()
        code = proc.wait()
        if done_at is not None:
            start = done_at
            if done_at < stop:
                break  # the --seconds budget ran out
            continue
        if not ready:
            result.add(f"worker for {reader} failed to start", f"exit status {code}", None)
            break
        # The worker died or hung on the input it was reading: record it and carry on after it.
        index, accepted, clean = map(int, (workdir / reader / "current").read_text().split())
        result.accepted += accepted
        result.clean += clean
        died = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"
        kind = "hang (worker killed)" if hung else f"crash ({died})"
        stem = f"{reader}-{index:06d}-{kind.split()[0]}"
        src = workdir / reader / ("input" + EXTENSIONS[reader])
        file = None
        if src.exists():
            sidecar = Path(str(src) + ".json")
            sample = Sample(src.read_bytes(), sidecar.read_bytes() if sidecar.exists() else None)
            file = _save(src, sample, Path(args.crashes), stem)
        result.add(f"{kind} in {reader} reader", f"{kind} while reading input {index}", file)
        log(f"{reader}: {kind} at input {index}; restarting after it")
        start = index + 1
    result.inputs = result.accepted + result.clean + result.uncaught
    result.seconds = time.monotonic() - began
    return result


def report(results: list[ReaderResult], crashes: str) -> str:
    """The summary table and, per reader, the first findings with their reproducers."""
    head = ("reader", "inputs", "accepted", "clean errors", "uncaught", "distinct", "inputs/s")
    rows: list[tuple[str, ...]] = [
        (
            r.reader,
            f"{r.inputs:,}",
            f"{r.accepted:,}",
            f"{r.clean:,}",
            f"{r.uncaught:,}",
            str(len(r.findings)),
            f"{r.inputs / r.seconds:,.0f}" if r.seconds else "-",
        )
        for r in results
    ]
    total = sum(r.inputs for r in results)
    rows.append(
        (
            "total",
            f"{total:,}",
            *(f"{sum(getattr(r, a) for r in results):,}" for a in ("accepted", "clean", "uncaught")),
            str(sum(len(r.findings) for r in results)),
            "",
        )
    )
    widths = [max(len(str(row[k])) for row in [head, *rows]) for k in range(len(head))]
    lines = [
        "  ".join(c.ljust(w) if k == 0 else c.rjust(w) for k, (c, w) in enumerate(zip(row, widths, strict=True)))
        for row in [head, *rows]
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines.insert(len(lines) - 1, "  ".join("-" * w for w in widths))
    for r in results:
        if not r.findings:
            continue
        lines.append(f"\n{r.reader}: {r.uncaught:,} uncaught, {len(r.findings)} distinct")
        for found in sorted(r.findings.values(), key=lambda f: -f.count)[:12]:
            lines.append(f"  {found.count:>7,} × {found.signature}")
            lines.append(f"            {found.message}")
            if found.files:
                lines.append(f"            reproducer: {found.files[0]}")
        if len(r.findings) > 12:
            lines.append(f"  … and {len(r.findings) - 12} more (reproducers in {crashes})")
    return "\n".join(lines)


def replay(file: Path) -> int:
    """Read one saved input with the fuzz harness and show the full traceback (or, for a crash, the stack)."""
    faulthandler.enable()
    try:
        ok = read_everything(file)
    except Exception:
        traceback.print_exc()
        return 1
    print(f"{file}: {'accepted' if ok else 'clean error'}")
    return 0


def available_readers() -> list[str]:
    """Every reader; pt only when PyTorch is installed."""

    # A format that needs an optional library (.pt needs torch) is fuzzed only where it is installed.
    def available(name: str) -> bool:
        needs = FORMATS[name].requires
        return needs is None or importlib.util.find_spec(needs) is not None

    return [r for r in EXTENSIONS if available(r)]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=100_000, help="inputs per reader (default 100000)")
    ap.add_argument("--seconds", type=float, default=0, help="stop every reader after this many seconds overall")
    ap.add_argument("--readers", default=",".join(available_readers()), help="comma-separated (default: all)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the input generator (default 0)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="readers fuzzed in parallel")
    ap.add_argument("--timeout", type=float, default=5.0, help="seconds one input may take (default 5)")
    ap.add_argument(
        "--crashes",
        default=str(Path(tempfile.gettempdir()) / "pecli-fuzz-crashes"),
        help="directory for reproducers of uncaught findings",
    )
    ap.add_argument("--replay", type=Path, help="read one saved input and print its traceback")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--start", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--stop", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--until", type=float, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--workdir", help=argparse.SUPPRESS)
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.replay is not None:
        return replay(args.replay)
    if args.worker:
        return worker(args)
    readers = [r.strip() for r in args.readers.split(",") if r.strip()]
    unknown = [r for r in readers if r not in EXTENSIONS]
    if unknown:
        print(f"unknown reader(s) {', '.join(unknown)}: choose from {', '.join(EXTENSIONS)}", file=sys.stderr)
        return 2
    args.until = time.time() + args.seconds if args.seconds else 0

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    shm = Path("/dev/shm")
    workdir = Path(tempfile.mkdtemp(prefix="pecli-fuzz-", dir=shm if shm.is_dir() else None))
    began = time.monotonic()
    log(f"fuzzing {', '.join(readers)}: {args.count:,} inputs each, seed {args.seed}, {args.jobs} in parallel")
    try:
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = [pool.submit(run_reader, r, args, workdir, log) for r in readers]
            results = []
            for future in futures:
                result = future.result()
                log(
                    f"{result.reader}: {result.inputs:,} inputs in {result.seconds:.0f} s, {result.uncaught:,} uncaught"
                )
                results.append(result)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(report(results, args.crashes))
    print(
        f"\n{time.monotonic() - began:.0f} s; seed {args.seed}; reproducers in {args.crashes}"
        if any(r.uncaught for r in results)
        else f"\n{time.monotonic() - began:.0f} s; seed {args.seed}"
    )
    return 1 if any(r.uncaught for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
