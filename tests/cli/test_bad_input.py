"""The bad-input matrix: every command, every kind of mistake.

Each case must end with exit status 2, exactly one line on stderr that names the problem, no
traceback, nothing on stdout, and the working directory byte-for-byte as it was (no partial
output, the existing file untouched)."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import re
import signal
import struct
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click
import h5py
import numpy as np
import pytest

from pecli import Sinusoidal

#: float128 exists (x86 Linux) where long double is wider than float64.
LONGDOUBLE = np.dtype(np.longdouble).itemsize > 8
HAS_FIFO = hasattr(os, "mkfifo")


def make_files(d: Path) -> None:
    """A directory of good and broken inputs, plus an existing output that must survive."""
    table = Sinusoidal(16, 4).build()
    np.save(d / "good.npy", table)
    (d / "truncated.npy").write_bytes((d / "good.npy").read_bytes()[:100])
    (d / "magic.npy").write_bytes(b"\x93NUMPX" + (d / "good.npy").read_bytes()[6:])
    np.save(d / "strings.npy", np.array([["a", "b"], ["c", "d"]]))
    np.save(d / "far_ids.npy", np.array([0, 2**60], dtype=np.int64))
    np.save(d / "scalar.npy", np.float64(3.0))  # (a cube (X, Y, C) is a grid now, read as rows)
    np.save(d / "objects.npy", np.array([None, 1], dtype=object), allow_pickle=True)
    np.savez(d / "good.npz", pe=table)
    (d / "truncated.npz").write_bytes((d / "good.npz").read_bytes()[:200])
    with h5py.File(d / "good.h5", "w") as f:
        f["pe"] = table
        f["other"] = table
    (d / "truncated.h5").write_bytes((d / "good.h5").read_bytes()[:300])
    with h5py.File(d / "multi.h5", "w") as f:
        f["a"] = table
        f["b"] = table
    header = b'{"pe": {"dtype": "F32", "shape": [16, 4], "data_offsets": [0, 256]}}'
    (d / "good.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + table.tobytes())
    (d / "truncated.safetensors").write_bytes((d / "good.safetensors").read_bytes()[:120])
    big = b'{"pe": {"dtype": "F32", "shape": [1000000, 1000000], "data_offsets": [0, 4000000000000]}}'
    (d / "huge.safetensors").write_bytes(struct.pack("<Q", len(big)) + big)
    with open(d / "huge.npy", "wb") as fp:  # a 128-byte file declaring 10**12 float32 values
        np.lib.format.write_array_header_1_0(fp, {"descr": "<f4", "fortran_order": False, "shape": (10**6, 10**6)})
    (d / "empty.csv").write_bytes(b"")
    (d / "ragged.csv").write_text("d0,d1\n1,2\n3\n")
    (d / "words.csv").write_text("d0,d1\n1,2\n3,four\n")
    (d / "blank.csv").write_text("d0,d1\n1,2\n\n3,4\n")
    (d / "broken.json").write_text('{"data": [[1, 2], [3')
    (d / "notable.json").write_text('{"rows": 3}')
    (d / "badvalue.json").write_text('{"dtype": "float32", "data": [[1, "x"]]}')
    (d / "pe.h").write_text("/* a header */\n")
    (d / "dir.npy").mkdir()
    (d / "existing.npy").write_bytes(b"precious")
    (d / "existing.png").write_bytes(b"precious picture")
    (d / "unknown.xyz").write_text("1,2\n")
    # hostile inputs fixed since: foreign, special and dangling files in the output's place
    (d / "foreign.npy.json").write_text('{"mine": true}\n')  # a user's own JSON, never replaced
    if HAS_FIFO:
        os.mkfifo(d / "fifo.npy.json")  # writing the recipe into it would block for ever
    (d / "sidedir.csv.json").mkdir()
    (d / "link.npy").symlink_to("nowhere.npy")
    (d / "dside.npy.json").symlink_to("nowhere.json")
    # ... and in the inputs
    if LONGDOUBLE:
        np.save(d / "ld.npy", np.zeros((4, 2), np.longdouble))
        np.savez(d / "ld.npz", pe=np.zeros((4, 2), np.longdouble))
        np.save(d / "cld.npy", np.zeros((4, 2), np.clongdouble))  # complex of two float128: none pecli reads
    np.save(d / "complex.npy", np.zeros((4, 2), np.complex64))
    np.save(d / "bools.npy", np.zeros((4, 2), bool))
    np.save(d / "bigints.npy", np.array([[0, 2**53 + 1]], np.int64))  # not a float64: refused, not rounded
    np.savez(d / "nothing.npz")
    with h5py.File(d / "nothing.h5", "w") as f:
        f.create_group("g")
    (d / "bigint.json").write_text('{"data": [[' + "1" * 5000 + ", 2]]}")
    (d / "deep.json").write_text("[" * 100000 + "]" * 100000)
    header = b'{"pe": {"dtype": "F32", "shape": [' + b"1" * 5000 + b', 2], "data_offsets": [0, 0]}}'
    (d / "bigint.safetensors").write_bytes(struct.pack("<Q", len(header)) + header)
    (d / "short.safetensors").write_bytes(struct.pack("<Q", 5000) + b"{}")
    (d / "notjson.safetensors").write_bytes(struct.pack("<Q", 4) + b"{{{{")
    header = b'{"pe": {"dtype": "Q99", "shape": [2, 2], "data_offsets": [0, 16]}}'
    (d / "dtype.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + bytes(16))
    with h5py.File(d / "secret.h5", "w") as f:
        f["pe"] = np.full((3, 2), 271828.5)
    with h5py.File(d / "evil.h5", "w") as f:  # links out of the file: never followed
        f["pe"] = h5py.ExternalLink("secret.h5", "/pe")
        f["g"] = h5py.ExternalLink("secret.h5", "/")
        f["via"] = h5py.SoftLink("/g/pe")
        f["a"] = h5py.SoftLink("/b")
        f["b"] = h5py.SoftLink("/a")
        f["mine"] = table
    (d / "bad.pt").write_bytes(pickle.dumps(np.zeros(3), protocol=4))  # not a torch.save file
    (d / "ragged.tsv").write_text("d0\td1\n1\t2\n3\n")


def _digest(p: Path) -> str:
    if p.is_symlink():
        return f"link to {os.readlink(p)}"
    if p.is_dir():
        return "dir"
    if not p.is_file():
        return "special"  # a FIFO: reading it would block
    return hashlib.sha256(p.read_bytes()).hexdigest()


def snapshot(d: Path) -> dict[str, str]:
    return {str(p.relative_to(d)): _digest(p) for p in sorted(d.rglob("*"))}


G = ["generate", "--len", "16", "--dim", "4"]
E = ["export", "--len", "16", "--dim", "4"]
CASES: list[tuple[list[str], str]] = [
    # an empty SOURCE or output path (Path("") is the working directory: never read as ".")
    (["inspect", ""], "the SOURCE is empty"),
    (["identify", ""], "the SOURCE is empty"),
    (["diff", "", "sinusoidal:len=4,dim=4"], "the SOURCE is empty"),
    (["export", "", "-o", "out.npy"], "the SOURCE is empty"),
    (["generate", "--len", "4", "--dim", "4", "-o", ""], "the output path is empty"),
    # sizes and recipe parameters
    (["generate", "--len", "0", "--dim", "4"], "length must be at least 1, got 0"),
    (["generate", "--len", "-5", "--dim", "4"], "length must be at least 1, got -5"),
    (["generate", "--len", "2.5", "--dim", "4"], "'2.5' is not a valid integer"),
    (["generate", "--len", "1e3", "--dim", "4"], "'1e3' is not a valid integer"),
    (["generate", "--len", "10**12", "--dim", "4"], "'10**12' is not a valid integer"),
    (["generate", "--len", "16", "--dim", "0"], "dim must be at least 1, got 0"),
    (["generate", "--len", "16", "--dim", "-1"], "dim must be at least 1, got -1"),
    (["generate", "--len", "16", "--dim", "x"], "'x' is not a valid integer"),
    (["generate", "--len", "16"], "Missing option --dim"),
    (["generate", "--dim", "4"], "Missing option --len"),
    ([*G, "--base", "1"], "base must be a finite number > 0 and ≠ 1"),
    ([*G, "--base", "0"], "base must be a finite number > 0 and ≠ 1"),
    ([*G, "--base", "-10000"], "base must be a finite number > 0 and ≠ 1"),
    ([*G, "--base", "inf"], "base must be a finite number > 0 and ≠ 1"),
    ([*G, "--base", "nan"], "base must be a finite number > 0 and ≠ 1"),
    ([*G, "--base", "1e-300"], "makes angles too large to compute accurately"),
    ([*G, "--start", "-1"], "start must be at least 0, got -1"),
    (["generate", "--len", str(2**53), "--dim", "4", "--start", "5"], "positions must stay below 2**53"),
    ([*G, "--layout", "diagonal"], "'diagonal' is not one of 'interleaved', 'split', 'cos-first'"),
    ([*G, "--dtype", "float8"], "'float8' is not one of"),
    ([*G, "--rows", "20:30"], "--rows 20:30 is outside 0:16 or empty"),
    ([*G, "--rows", "5:5"], "--rows 5:5 is outside 0:16 or empty"),
    ([*G, "--cols", "a:b"], "'a:b' is not a span"),
    ([*G, "--decimals", "-1"], "-1 is not in the range 0<=x<=17"),
    (["generate", "--len", "100000", "--dim", "4", "--rows", "0:50000"], "more than the 10000 a terminal view shows"),
    # outputs
    ([*G, "-o", "existing.npy"], "existing.npy already exists: pass --force to overwrite it"),
    ([*G, "-o", "missing/dir/t.npy"], "directory missing/dir does not exist"),
    ([*G, "-o", "dir.npy"], "dir.npy is a directory: give a file name"),
    ([*G, "-o", "t.docx"], "cannot tell the format of 't.docx'"),
    ([*G, "-o", "t.npy", "--to", "xlsx"], "'xlsx' is not one of"),
    ([*G, "-o", "-"], "writing to stdout needs --to"),
    ([*G, "-o", "-", "--to", "h5"], "h5 cannot be written to a stream"),
    ([*G, "-o", "t.csv", "--compress", "gzip"], "--compress applies to HDF5 output only"),
    ([*G, "-o", "t.h5", "--compress", "gzip:12"], "'gzip:12' is not gzip or gzip:LEVEL"),
    ([*G, "-o", "t.csv", "--digits", "0"], "0 is not in the range 1<=x<=17"),
    ([*G, "-o", "t.safetensors", "--key", "__metadata__"], "--key __metadata__ is reserved"),
    ([*G, "-o", "t.npz", "--key", "pecli_recipe"], "reserved for pecli's metadata"),
    (["generate", "--len", "1000000000000", "--dim", "8", "-o", "big.npy"], "would need at least 32.0 TB"),
    ([*E], "Missing option -o/--output"),
    ([*E, "-o", "existing.npy"], "already exists"),
    (["export", "good.npy", "--len", "5", "-o", "t.npy"], "give a SOURCE or recipe options, not both"),
    # sources
    (["inspect"], "give a SOURCE"),
    (["inspect", "nope.npy"], "nope.npy does not exist"),
    (["inspect", "dir.npy"], "dir.npy is a directory"),
    (["inspect", "empty.csv"], "empty.csv is empty"),
    (["inspect", "unknown.xyz"], "cannot tell the format of 'unknown.xyz'"),
    (["inspect", "truncated.npy"], "is not a readable .npy"),
    (["inspect", "magic.npy"], "is not a readable .npy"),
    (["inspect", "objects.npy"], "is not a readable .npy table"),
    (["inspect", "huge.npy"], "huge.npy is not a readable .npy"),
    (["diff", "huge.npy", "good.npy"], "huge.npy is not a readable .npy"),
    (["inspect", "strings.npy"], "holds <U1 values: pecli reads numeric tables"),
    (["inspect", "scalar.npy"], "holds a single number: expected a table"),
    (["inspect", "truncated.npz"], "is not a readable .npz file"),
    (["inspect", "truncated.h5"], "is not a readable HDF5 file"),
    (["inspect", "good.h5:missing"], "has no dataset 'missing'"),
    (["inspect", "multi.h5", "--pos", "1"], "holds several arrays (a, b): choose one as multi.h5:KEY"),
    (["inspect", "truncated.safetensors"], "tensor 'pe' points outside the file (offsets 0..256)"),
    (["inspect", "huge.safetensors"], "tensor 'pe' points outside the file"),
    (["inspect", "good.safetensors:nope"], "has no array 'nope'"),
    (["inspect", "ragged.csv"], "line 3 has 1 values, expected 2"),
    (["inspect", "words.csv"], "line 3 has a non-numeric value 'four'"),
    (["inspect", "blank.csv"], "line 3 is blank"),
    (["inspect", "broken.json"], "is not valid JSON"),
    (["inspect", "notable.json"], "is JSON but not a pecli table"),
    (["inspect", "badvalue.json"], "row 0 holds a value that is not a number"),
    (["inspect", "pe.h"], "h is a write-only format"),
    # explicit positions and token ids
    ([*G, "--positions", "0:4,16"], "position 16 is outside the table's positions 0..15: give a larger --len"),
    ([*G, "--positions", "3:3"], "--positions '3:3': the range 3:3 is empty"),
    # (a sinusoid takes negative positions, relative distances: a rotary cache's rows count from 0)
    ([*G, "--kind", "rope", "--positions", "0,-1"], "negative positions (e.g. -1), and a rope table's rows are"),
    ([*G, "--positions", "1.5:3"], "'1.5:3' is not a whole number or a range A:B[:S]"),
    (
        ["generate", "--preset", "llama", "--len", "8", "--positions", "1.5"],
        "fractional positions (e.g. 1.5), and a rope table's rows are whole positions",
    ),
    ([*G, "--positions", "0.5,16.5"], "position 16.5 is outside the table's span 0..16 (end excluded)"),
    (
        ["generate", "--preset", "fairseq", "--len", "8", "--dim", "4", "--positions", "2.5"],
        "fractional positions need a table without one",
    ),
    (
        ["export", "good.npy", "--positions", "0.5", "-o", "x.npy"],
        "fractional positions (e.g. 0.5), and a file's rows are whole positions",
    ),
    ([*G, "--positions", "@nope.npy"], "--positions @nope.npy: nope.npy does not exist"),
    ([*G, "--positions", "@"], "--positions @ needs a file name"),
    ([*G, "--positions", "@far_ids.npy"], "holds ids outside −2**53..2**53"),
    ([*G, "--token-ids", "@far_ids.npy", "--padding-idx", "1"], "holds ids outside 0..2**53: positions count from 0"),
    ([*G, "--positions", "@scalar.npy"], "holds an array of shape (): give a non-empty list of ids"),
    ([*G, "--positions", "@words.csv"], "cannot read ids from words.csv"),
    ([*G, "--token-ids", "5,6,1"], "--token-ids numbers tokens the fairseq way, from the table's padding index"),
    ([*G, "--positions", "1", "--token-ids", "1"], "give --positions or --token-ids, not both"),
    (
        ["generate", "--heads", "4", "--part", "bias", "--len", "8", "--positions", "0"],
        "--positions picks positions; the rows of this alibi table are heads",
    ),
    ([*E, "-o", "t.npy", "--positions", "99"], "position 99 is outside the table's positions 0..15"),
    (
        ["export", "good.npy", "-o", "t.npy", "--positions", "0:17"],
        "position 16 is outside the table's positions 0..15",
    ),
    (["inspect", "good.npy", "--pos", "16"], "--pos 16 is outside the table's positions 0..15"),
    (["inspect", "good.npy", "--pos", "-1"], "--pos -1 is outside the table's positions 0..15"),
    (["inspect", "good.npy", "--pos", "1", "--rows", "0:2"], "--rows and --pos exclude each other"),
    (["inspect", "good.npy:pe"], "is a .npy file with one array: drop ':pe'"),
    (["inspect", "spiral:len=8,dim=4"], "unknown kind 'spiral'"),
    (["inspect", "sinusoidal:len=8"], "needs dim"),
    (["inspect", "sinusoidal:len=8,dim=4,bogus=1"], "unknown parameter 'bogus=1'"),
    (["inspect", "sinusoidal:len=8,dim=four"], "is not a whole number"),
    (["inspect", "--from", "h", "good.npy"], "'h' is not one of"),
    # diff
    (["diff", "good.npy"], "Missing argument 'B'"),
    (["diff", "good.npy", "nope.npy"], "nope.npy does not exist"),
    (["diff", "good.npy", "good.npy", "--atol", "-1"], "Invalid value for '--atol'"),
    (["diff", "good.npy", "good.npy", "--rtol", "nan"], "rtol must be a finite number ≥ 0, got nan"),
    (["diff", "good.npy", "good.npy", "-n", "-2"], "Invalid value for '-n' / '--top'"),
    (["diff", "truncated.h5", "good.npy"], "is not a readable HDF5 file"),
    # dialects, kinds and presets
    (["generate", "--preset", "fairsek"], "unknown preset 'fairsek': did you mean fairseq?"),
    (["generate", "--preset", "mae", "--len", "5"], "preset mae is a sincos2d recipe, which has no len"),
    (["generate", "--preset", "whisper", "--dim", "65"], "dim 65 is odd"),
    ([*G, "--freq", "golden"], "'golden' is not one of 'paper', 't2t', 'half'"),
    ([*G, "--odd", "round"], "'round' is not one of"),
    ([*G, "--padding-idx", "-1"], "padding_idx must be at least 0, got -1"),
    ([*G, "--form", "div"], "form=div"),
    ([*G, "--min-timescale", "0"], "min_timescale must be a finite number > 0"),
    # base/min_timescale underflows to 0: the log of each, not of the quotient (hypothesis found it).
    ([*G, "--base", "5e-324", "--min-timescale", "2"], "base 5e-324 makes angles too large to compute accurately"),
    (["generate", "--grid", "14", "--dim", "768"], "grid must look like HxW"),
    (["generate", "--grid", "4x4", "--dim", "6"], "dim 6 must be a multiple of 4"),
    (["generate", "--grid", "2x2x2", "--dim", "8", "--order", "timm"], "needs order=mae (vit-pytorch 3D), tatp"),
    (
        ["generate", "--kind", "rope", "--len", "8", "--dim", "7", "--scaling", "linear", "--factor", "2"],
        "dim 7 is odd, which only rotary-embedding-torch and litgpt build, without a scaling",
    ),
    (["generate", "--kind", "rope", "--len", "8", "--dim", "8", "--scaling", "yarn"], "scaling=yarn needs"),
    (["generate", "--kind", "rope", "--len", "8", "--dim", "8", "--low-freq-factor", "1"], "does not use"),
    (["generate", "--kind", "alibi"], "an alibi recipe needs heads"),
    (["generate", "--kind", "alibi", "--heads", "0"], "heads must be at least 1, got 0"),
    (["generate", "--kind", "learned", "--len", "4", "--dim", "4", "--std", "-1"], "std"),
    (["inspect", "fairseq:len=8,dim=8,grid=2x2"], "unknown parameter 'grid=2x2'"),
    (["presets", "nope"], "unknown preset 'nope'"),
    # look at it: heatmap, identify, analyze, plot
    (["inspect", "good.npy", "--heatmap", "--pos", "1"], "--heatmap draws the whole table"),
    (["identify", "nope.npy"], "nope.npy does not exist"),
    (["identify", "truncated.npy"], "truncated"),
    (["identify"], "give a SOURCE"),
    (["analyze", "good.npy", "--ks", "1,x"], "is not a list of whole numbers"),
    (["analyze", "magic.npy"], "is not a readable .npy table"),
    (["plot", "good.npy"], "Missing option '-o'"),
    (["plot", "good.npy", "-o", "existing.png"], "already exists"),
    (["plot", "good.npy", "-o", "pic.gif"], ".gif"),
    (["plot", "good.npy", "-o", "nodir/pic.png"], "nodir"),
    (["plot", "good.npy", "--what", "curves", "--dims", "0,99", "-o", "c.png"], "99"),
    (["plot", "good.npy", "--dims", "a,b", "-o", "c.png"], "is not a list of whole numbers like 0,32,64"),
    # hostile things in the output's place: a user's own NAME.json, a FIFO, a directory, dangling links
    ([*G, "-o", "foreign.npy", "--force"], "foreign.npy.json exists and is not a pecli sidecar"),
    # not "pass --force", which would not help (issue 40)
    ([*G, "-o", "foreign.npy"], "foreign.npy.json exists and is not a pecli sidecar"),
    ([*E, "-o", "foreign.npy", "--force"], "pecli never replaces it, even with --force"),
    ([*G, "-o", "fifo.npy"], "fifo.npy.json exists and is not a regular file: pecli will not write the recipe"),
    ([*G, "-o", "fifo.npy", "--force"], "fifo.npy.json exists and is not a regular file"),
    ([*E, "-o", "fifo.npy"], "remove it or use --no-sidecar"),
    ([*G, "-o", "sidedir.csv"], "sidedir.csv.json exists and is not a regular file"),
    ([*G, "-o", "sidedir.csv", "--force"], "sidedir.csv.json exists and is not a regular file"),
    ([*G, "-o", "link.npy"], "link.npy already exists: pass --force to overwrite it"),
    (["export", "good.npy", "-o", "link.npy"], "link.npy already exists: pass --force to overwrite it"),
    ([*G, "-o", "dside.npy"], "dside.npy.json already exists: pass --force"),
    # C header array names
    ([*G, "-o", "t.h", "--key", "int"], "--key int is a reserved word of C or C++"),
    ([*G, "-o", "t.npy", "--to", "h", "--key", "int"], "--key int is a reserved word of C or C++"),
    ([*G, "-o", "t.hpp", "--key", "class"], "--key class is a reserved word of C or C++"),
    ([*G, "-o", "t.h", "--key", "sin"], "--key sin is already a name in <math.h>"),
    ([*G, "-o", "t.h", "--key", "linux"], "or a compiler macro"),
    ([*G, "-o", "t.h", "--key", "__x"], "--key __x is reserved for the C compiler"),
    ([*G, "-o", "-", "--to", "h", "--key", "1pe"], "--key '1pe' is not a C identifier"),
    (["export", "good.npy", "-o", "t.h", "--key", "a-b"], "--key 'a-b' is not a C identifier"),
    # more output mistakes
    ([*G, "-o", "t.npy", "--compress", "gzip"], "--compress applies to HDF5 output only"),
    ([*G, "-o", "t.h5", "--compress", "zstd"], "'zstd' is not gzip or gzip:LEVEL"),
    ([*G, "-o", "t.json", "--digits", "18"], "18 is not in the range 1<=x<=17"),
    (["export", "good.npy", "-o", "existing.npy"], "existing.npy already exists"),
    (["export", "good.npy", "-o", "dir.npy"], "dir.npy is a directory: give a file name"),
    (["export", "good.npy", "-o", "t.docx"], "cannot tell the format of 't.docx'"),
    (["export", "good.npy", "-o", "nodir/t.npy"], "directory nodir does not exist"),
    (["export", "good.npy", "-o", "-"], "writing to stdout needs --to"),
    (["export", "good.npy", "-o", "t.safetensors", "--key", "__metadata__"], "--key __metadata__ is reserved"),
    (["export", "good.npy", "-o", "t.csv", "--compress", "gzip"], "--compress applies to HDF5 output only"),
    (["export", "good.npy", "--dtype", "bf16", "-o", "t.npy"], "'bf16' is not one of"),
    (["export", "good.npy", "--base", "500", "-o", "t.npy"], "not both (--base given with good.npy)"),
    (["export", "good.npy"], "Missing option -o/--output"),
    # export from a bad source
    (["export", "nope.npy", "-o", "t.npy"], "nope.npy does not exist"),
    (["export", "truncated.h5", "-o", "t.npy"], "is not a readable HDF5 file"),
    (["export", "good.h5:nope", "-o", "t.npy"], "good.h5 has no dataset 'nope'"),
    (["export", "evil.h5:pe", "-o", "out.npy"], "pe is an external link to /pe in secret.h5"),
    (["export", "ld.npy", "-o", "out.safetensors"], "pecli reads float16, bfloat16, float32 and float64 tables"),
    (["export", "bigint.json", "-o", "t.npy"], "has 5000 digits, too large to be a table value"),
    (["export", "spiral:len=8,dim=4", "-o", "t.npy"], "unknown kind 'spiral'"),
    # unreadable values and files
    (["inspect", "ld.npy"], "ld.npy holds float128 values: pecli reads float16, bfloat16, float32 and float64"),
    (["inspect", "ld.npz"], "ld.npz:pe holds float128 values"),
    (["inspect", "cld.npy"], "cld.npy holds complex256 values: pecli reads numeric tables"),
    # complex numbers (read as their parts) where a format or a recipe has none
    (["export", "complex.npy", "-o", "c.csv"], ".csv holds no complex64 numbers: write the (real, imaginary) parts"),
    (["export", "complex.npy", "--to", "h", "-o", "-"], ".h holds no complex64 numbers"),
    (["export", "complex.npy", "--cols", "1:3", "-o", "c.npy"], "columns 1:3 would split one; give even bounds"),
    (
        ["generate", "--len", "8", "--dim", "8", "--dtype", "complex64", "-o", "c.npy"],
        "a sinusoidal table's columns are not (real, imaginary) pairs: complex64 stores the (cos, sin) pairs of a "
        "rotary kind's --part cis (freqs_cis); give a kind with --part cis",
    ),
    (
        [
            "generate",
            "--preset",
            "meta-freqs-cis",
            "--len",
            "8",
            "--dim",
            "8",
            "--dtype",
            "complex128",
            "-o",
            "c.safetensors",
        ],
        ".safetensors holds no complex128 numbers",
    ),
    (
        ["export", "rope:len=8,dim=6,part=cos", "--dtype", "complex64", "-o", "c.npy"],
        "a rope table's columns are not (real, imaginary) pairs",
    ),
    (
        ["export", "rope2d:feat_shape=4x4,dim=16,bands=lang,part=cos", "--dtype", "complex64", "-o", "c.npy"],
        "complex64 stores the (cos, sin) pairs of --part cis (rope2d: freqs_cis); give --part cis, or",
    ),
    (["inspect", "bools.npy"], "bools.npy holds bool values"),
    (["inspect", "bigints.npy"], "bigints.npy holds int64 values beyond 2^53"),
    (["inspect", "nothing.npz"], "nothing.npz holds no arrays"),
    (["inspect", "nothing.h5"], "nothing.h5 holds no arrays"),
    (["inspect", "bigint.json"], "bigint.json: the integer 11111111… has 5000 digits"),
    (["inspect", "deep.json"], "deep.json is not valid JSON (JSON nested too deeply)"),
    (["inspect", "bigint.safetensors"], "its header holds an integer too large to read"),
    (["inspect", "short.safetensors"], "declares a header longer than the file"),
    (["inspect", "notjson.safetensors"], "header is not JSON"),
    (["inspect", "dtype.safetensors"], "tensor 'pe' has a malformed entry in the header"),
    (["inspect", "bad.pt"], "bad.pt is not a .pt file pecli can load safely"),
    (["inspect", "ragged.tsv"], "ragged.tsv line 3 has 1 values, expected 2"),
    (["inspect", "good.npy", "--from", "csv"], "good.npy is not a text CSV file"),
    # HDF5 links out of the file, and link loops
    (["inspect", "evil.h5:pe"], "evil.h5:pe: pe is an external link to /pe in secret.h5"),
    (["inspect", "evil.h5:via"], "evil.h5:via: g is an external link to / in secret.h5"),
    (["inspect", "evil.h5:g/pe"], "pecli does not follow links out of the file"),
    (["inspect", "evil.h5:a"], "more than 16 soft links to follow (at a -> /b); the links loop"),
    (["inspect", "evil.h5:pe", "--json"], "pecli does not follow links out of the file"),
    # keys and views
    (["inspect", "good.h5:a\nb"], "good.h5 has no dataset 'a\\nb'"),
    (["inspect", "good.npy", "--rows", "3:1"], "--rows 3:1 is outside 0:16 or empty"),
    (["inspect", "good.npy", "--cols", "0:99"], "--cols 0:99 is outside 0:4 or empty"),
    (["inspect", "good.npy", "--heatmap", "--json"], "--heatmap draws the whole table"),
    (["inspect", "good.npy", "--pos", "x"], "'x' is not a valid integer"),
    (["inspect", "good.npy", "--len", "5"], "not both (--len given with good.npy)"),
    (["inspect", "good.npy", "good.npy"], "Got unexpected extra argument (good.npy)"),
    # recipes written as operands
    (
        ["inspect", "rope:len=8,dim=7,scaling=yarn,factor=4"],
        "dim 7 is odd, which only rotary-embedding-torch and litgpt build",
    ),
    (["inspect", "sinusoidal:len=0,dim=4"], "length must be at least 1, got 0"),
    (["inspect", "sinusoidal:len=8,dim=4,base=1"], "base must be a finite number > 0 and ≠ 1"),
    (["inspect", "alibi:heads=0"], "heads must be at least 1, got 0"),
    (["inspect", "fairseq:len=8,dim=8,nope=1"], "unknown parameter 'nope=1'"),
    # diff: tolerances and operands
    (["diff", "good.npy", "good.npy", "--ulps", "-1"], "-1 is not in the range x>=0"),
    (["diff", "good.npy", "good.npy", "--ulps", "x"], "Invalid value for '--ulps': 'x'"),
    (["diff", "good.npy", "good.npy", "--ulps", "1.5"], "Invalid value for '--ulps': '1.5'"),
    (["diff", "good.npy", "good.npy", "--atol", "x"], "Invalid value for '--atol': 'x'"),
    (["diff", "good.npy", "good.npy", "--atol", "inf"], "atol must be a finite number ≥ 0, got inf"),
    (["diff", "good.npy", "good.npy", "--rtol", "-1"], "Invalid value for '--rtol'"),
    (["diff", "good.npy", "spiral:len=16,dim=4"], "unknown kind 'spiral' in 'spiral:len=16,dim=4'"),
    (["diff", "spiral:len=16,dim=4", "good.npy"], "unknown kind 'spiral'"),
    (["diff", "good.npy", "sinusoidal:len=16"], "'sinusoidal:len=16' needs dim"),
    (["diff", "good.h5:a\nb", "good.npy"], "good.h5 has no dataset 'a\\nb'"),
    (["diff", "good.npy", "good.h5:a\nb"], "good.h5 has no dataset 'a\\nb'"),
    (["diff", "ld.npy", "ld.npy"], "holds float128 values"),
    (["diff", "good.npy", "ld.npy"], "ld.npy holds float128 values"),
    (["diff", "scalar.npy", "good.npy"], "scalar.npy holds a single number"),
    (["diff", "good.npy", "strings.npy"], "strings.npy holds <U1 values"),
    (["diff", "bigint.json", "good.npy"], "has 5000 digits"),
    (["diff", "good.npy", "deep.json"], "JSON nested too deeply"),
    (["diff", "evil.h5:pe", "good.npy"], "pecli does not follow links out of the file"),
    (["diff", "good.npy", "evil.h5:via"], "g is an external link to / in secret.h5"),
    (["diff", "good.npy", "multi.h5"], "multi.h5 holds several arrays (a, b)"),
    (["diff", "good.npy", "bad.pt"], "bad.pt is not a .pt file pecli can load safely"),
    (["diff", "good.npy", "good.npy", "good.npy"], "Got unexpected extra argument"),
    (["diff"], "Missing argument 'A'"),
    (["diff", "good.npy", "good.npy", "--bogus"], "No such option '--bogus'"),
    # identify and analyze: integer arrays, 0-d arrays and other non-tables
    (["identify", "strings.npy"], "strings.npy holds <U1 values: pecli reads numeric tables"),
    (["identify", "scalar.npy"], "scalar.npy holds a single number: expected a table"),
    (["identify", "ld.npy"], "ld.npy holds float128 values"),
    (["identify", "cld.npy"], "cld.npy holds complex256 values"),
    (["identify", "bigint.json"], "has 5000 digits"),
    (["identify", "evil.h5:pe"], "pecli does not follow links out of the file"),
    # a checkpoint without :KEY is scanned whole (issue 42: tests/formats/test_checkpoints.py); a key it lacks is one line
    (["identify", "multi.h5:c"], "multi.h5 has no dataset 'c': its datasets are a, b"),
    (["identify", "spiral:len=8,dim=4"], "unknown kind 'spiral'"),
    (["identify", "good.npy", "--top", "0"], "0 is not in the range 1<=x<=1000"),
    (["identify", "good.npy", "--len", "5"], "not both (--len given with good.npy)"),
    (["identify", "empty.csv"], "empty.csv is empty"),
    (["identify", "good.h5:a\nb"], "good.h5 has no dataset 'a\\nb'"),
    (["analyze", "strings.npy"], "strings.npy holds <U1 values"),
    (["analyze", "scalar.npy"], "scalar.npy holds a single number"),
    (["analyze", "ld.npy"], "ld.npy holds float128 values"),
    (["analyze", "nope.npy"], "nope.npy does not exist"),
    (["analyze"], "give a SOURCE"),
    (["analyze", "good.npy", "--max-k", "-1"], "-1 is not in the range x>=1"),
    (["analyze", "good.npy", "--max-k", "x"], "Invalid value for '--max-k'"),
    (["analyze", "good.npy", "--ks", ""], "give at least one k"),
    (["analyze", "sinusoidal:len=1,dim=4"], "the table has 1 row: the properties need at least 2 positions"),
    (["analyze", "spiral:len=8,dim=4"], "unknown kind 'spiral'"),
    (["analyze", "evil.h5:via"], "pecli does not follow links out of the file"),
    (["analyze", "multi.h5"], "multi.h5 holds several arrays"),
    # plot
    (["plot", "nope.npy", "-o", "p.png"], "nope.npy does not exist"),
    (["plot", "strings.npy", "-o", "p.png"], "strings.npy holds <U1 values"),
    (["plot", "scalar.npy", "-o", "p.png"], "scalar.npy holds a single number"),
    (["plot", "evil.h5:pe", "-o", "p.png"], "pecli does not follow links out of the file"),
    (["plot", "good.npy", "--what", "bars", "-o", "p.png"], "'bars' is not one of 'heatmap', 'curves', 'decay'"),
    (["plot", "good.npy", "-o", "dir.npy"], "dir.npy is a directory"),
    (["plot", "good.npy", "-o", "existing.npy"], "existing.npy already exists"),
    (["plot", "good.npy", "-o", "-"], "plots are written as .png or .svg"),
    (["plot", "good.npy", "-o", "p.png", "--max-k", "-1"], "-1 is not in the range x>=1"),
    (["plot", "good.npy", "--dims", "-1", "-o", "c.png", "--what", "curves"], "dims must be columns 0..3, got -1"),
    (["plot", "--len", "0", "--dim", "4", "-o", "p.png"], "length must be at least 1, got 0"),
    # presets
    (["presets", "fairsek"], "unknown preset 'fairsek': did you mean fairseq?"),
    (["presets", "fairseq:len=8"], "unknown preset 'fairseq:len=8'"),
    (["presets", "fairseq", "extra"], "unknown preset 'extra'"),
    (["presets", ""], "unknown preset ''"),
    (["presets", "--bogus"], "No such option '--bogus'"),
    # the command line itself
    (["frobnicate"], "No such command 'frobnicate'"),
    (["generate", "--bogus"], "No such option '--bogus'"),
    (["--bogus"], "No such option '--bogus'"),
    (["generate", "--len"], "Option '--len' requires an argument"),
    ([*G, "--dim"], "Option '--dim' requires an argument"),
    ([*G, "extra"], "Got unexpected extra argument (extra)"),
    (["inspect", "--pos"], "Option '--pos' requires an argument"),
]


def _unavailable(args: list[str]) -> str | None:
    """Why a case cannot run on this platform (its input cannot be made here), or None."""
    text = " ".join(args)
    if ("ld.npy" in text or "ld.npz" in text) and not LONGDOUBLE:  # cld.npy too
        return "long double is float64 here: no float128 file to refuse"
    if "fifo." in text and not HAS_FIFO:
        return "no FIFOs here"
    if "bad.pt" in text:
        try:
            import torch  # noqa: F401
        except Exception:
            return "reading .pt needs torch"
    return None


@pytest.mark.parametrize(("args", "message"), CASES, ids=[" ".join(a)[:60] for a, _ in CASES])
def test_bad_input(run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], message: str) -> None:
    reason = _unavailable(args)
    if reason is not None:
        pytest.skip(reason)
    monkeypatch.chdir(tmp_path)
    make_files(tmp_path)
    before = snapshot(tmp_path)
    with _deadline(60):  # a regression that opens the FIFO would block for ever
        r = run(*args)
    assert r.exit_code == 2, (r.exit_code, r.output, r.exception)
    assert r.stdout == ""
    assert r.stderr.startswith("Error: ") and r.stderr.count("\n") == 1, r.stderr
    assert message in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    assert snapshot(tmp_path) == before
    # A hint names only options this command has (the option it names is one the user can give).
    assert _named_options(r.stderr) <= _options_of(args[0]), sorted(_named_options(r.stderr) - _options_of(args[0]))


def _named_options(text: str) -> set[str]:
    """The ``--option`` names an error line tells the user to give (not quoted values or paths)."""
    line = re.sub(r"'[^']*'|\"[^\"]*\"", "", text.split(" (see 'pecli")[0])
    return set(re.findall(r"(?<![\w/.-])--[a-z][a-z0-9-]*", line))


def _options_of(command: str) -> set[str]:
    from pecli.cli import cli
    from pecli.cli.options import AliasOption

    ctx = click.Context(cli, info_name="pecli")
    cmd = cli.get_command(ctx, command) or cli  # not a command: the group's own options
    flags = {f for p in cmd.params if isinstance(p, click.Option) for f in (*p.opts, *p.secondary_opts)}
    hidden = {f for p in cmd.params if isinstance(p, AliasOption) for f in p.opts}
    return (flags - hidden) | {"--help", "--no-color", "--version"}


@contextmanager
def _deadline(seconds: int) -> Iterator[None]:
    """Raise TimeoutError in the test if the command takes longer (POSIX; elsewhere no limit)."""
    if not hasattr(signal, "SIGALRM"):
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise TimeoutError(f"the command did not finish in {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.skipif(not HAS_FIFO, reason="no FIFOs here")
@pytest.mark.parametrize("force", [[], ["--force"]], ids=["new", "force"])
def test_fifo_in_the_sidecar_slot_is_refused_not_opened(tmp_path: Path, force: list[str]) -> None:
    """A real process, with a timeout: writing the recipe into the FIFO used to block for ever."""
    os.mkfifo(tmp_path / "t.npy.json")
    cmd = [sys.executable, "-m", "pecli", "generate", "--len", "4", "--dim", "2", "-o", "t.npy", *force]
    r = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == (
        "Error: t.npy.json exists and is not a regular file: pecli will not write the recipe there; "
        "remove it or use --no-sidecar\n"
    )
    assert [p.name for p in tmp_path.iterdir()] == ["t.npy.json"]
    # ... and the way out the message names works, leaving the FIFO alone:
    r = subprocess.run([*cmd, "--no-sidecar"], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 0, r.stderr
    assert np.load(tmp_path / "t.npy").shape == (4, 2) and not (tmp_path / "t.npy.json").is_file()


def test_symlink_to_a_regular_sidecar_is_still_written_through(run, tmp_path: Path) -> None:
    """Only what is not a regular file is refused: a symlink to a pecli sidecar is replaced as before."""
    assert run("generate", "--len", "4", "--dim", "2", "-o", tmp_path / "a.npy").exit_code == 0
    (tmp_path / "t.npy.json").symlink_to("a.npy.json")
    r = run("generate", "--len", "4", "--dim", "2", "-o", tmp_path / "t.npy", "--force")
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "t.npy.json").read_text())["shape"] == [4, 2]


def test_matrix_is_big_enough() -> None:
    assert len(CASES) >= 160
    commands = {"generate", "export", "inspect", "diff", "identify", "analyze", "plot", "presets"}
    assert {a[0] for a, _ in CASES} >= commands
    assert len({" ".join(a) for a, _ in CASES}) == len(CASES)  # no case twice


def test_disk_full_from_the_cli(run, tmp_path: Path) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    r = run("generate", "--len", "200000", "--dim", "64", "-o", "/dev/full", "--to", "npy")
    assert r.exit_code == 2
    assert r.stderr == "Error: no space left on device while writing /dev/full: free some space or write elsewhere\n"


def test_huge_recipe_inspect_skips_statistics(run) -> None:
    r = run("inspect", "--len", "1000000000000", "--dim", "8", "--json")
    assert r.exit_code == 0
    assert "statistics skipped" in json.loads(r.stdout)["stats"]["skipped"]
