"""Two pecli processes writing the same ``-o`` at once, with --force and different recipes.

Whatever the interleaving, the file left behind is one writer's whole table, and the recipe
stored with it (inline, or in the NAME.json sidecar) is that table's recipe.  A sidecar written by
one writer may end up beside the other writer's data (the renames of the two files interleave):
its fingerprint then does not match and the file reads with no recipe, never the wrong one.

The writers are real processes running ``pecli generate`` from the command line, forked by one
helper that has already imported pecli (and torch), so 20 pairs per format take seconds rather
than minutes of interpreter start-ups.  The pairs run one after the other; both writers of a pair
are released at the same instant, the second up to 2 ms later or earlier from pair to pair, so
that their renames interleave (before the directory lock in ``pecli.atomic``, about one pair in
twenty left one writer's sidecar beside the other's data, and one in thirty failed with "cannot
write ...: No such file or directory" when both removed the old sidecar).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from pecli import Sinusoidal
from pecli.formats import open_table
from pecli.table import Table

pytestmark = pytest.mark.slow  # real processes racing, pair after pair

PAIRS = 20
LENGTH, DIM = 1024, 32
BASES = (10000.0, 500000.0)  # the two writers' recipes
OLD_BASE = 100.0  # the file both replace
SIDECAR_FORMATS = ("npy", "csv", "tsv")
PECLI = [sys.executable, "-m", "pecli"]


def _formats() -> list[str]:
    formats = ["npy", "npz", "h5", "csv", "tsv", "json", "safetensors"]
    try:
        import torch  # noqa: F401
    except Exception:  # not installed, or broken: .pt is optional
        return formats
    return [*formats, "pt"]


FORMATS = _formats()

# Runs in a fresh interpreter: imports everything, writes the old files, then forks the pairs.
HELPER = r"""
import json, os, sys, time
spec = json.loads(sys.argv[1])
from pecli import Sinusoidal
from pecli.cli import cli
from pecli.formats import write_table
from pecli.table import Table
import h5py  # noqa: F401  (imported before the forks, as pecli would import it)
if "pt" in spec["formats"]:
    import torch  # noqa: F401
base_dir = spec["dir"]
old = Table.from_recipe(Sinusoidal(spec["length"], spec["dim"], base=spec["old_base"]))
jobs = []
for i in range(spec["pairs"]):
    for fmt in spec["formats"]:
        d = os.path.join(base_dir, f"{fmt}-{i:02d}")
        os.mkdir(d)
        out = os.path.join(d, f"t.{fmt}")
        write_table(old, out, force=True)
        jobs.append((i, fmt, d, out))


def child(i, who, out, d, gate, delay):
    os.read(gate, 1)  # returns when the helper closes the gate: every writer of the round starts now
    time.sleep(delay)
    err = os.open(os.path.join(d, f"stderr-{who}"), os.O_WRONLY | os.O_CREAT, 0o644)
    os.dup2(err, 1)
    os.dup2(err, 2)
    base = str(spec["bases"][who])
    args = ["generate", "--len", str(spec["length"]), "--dim", str(spec["dim"]), "--base", base, "-o", out, "--force"]
    code = 3
    try:
        cli.main(args, prog_name="pecli")
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        import traceback
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


status = {}
for i, fmt, d, out in jobs:  # one pair at a time: its two writers have the CPUs to themselves
    r, w = os.pipe()
    # Pair i: writer 1 starts 0, 0.5, 1, 1.5 or 2 ms after writer 0; in odd pairs before it.
    lag = (i % 5) * 0.0005
    pids = {}
    for who, delay in ((0, lag if i % 2 else 0.0), (1, 0.0 if i % 2 else lag)):
        pid = os.fork()
        if pid == 0:
            os.close(w)
            child(i, who, out, d, r, delay)
        pids[pid] = f"{fmt}-{i:02d}-{who}"
    os.close(r)
    os.close(w)  # open the gate
    for pid, name in pids.items():
        _, st = os.waitpid(pid, 0)
        status[name] = os.waitstatus_to_exitcode(st)
json.dump(status, sys.stdout)
"""


def _reference(base: float) -> np.ndarray:
    return np.asarray(Sinusoidal(LENGTH, DIM, base=base).build())


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the helper forks the writers (POSIX only)")
def test_concurrent_writers_leave_a_whole_file_and_its_own_recipe(tmp_path: Path) -> None:
    spec = {
        "dir": str(tmp_path),
        "formats": FORMATS,
        "pairs": PAIRS,
        "length": LENGTH,
        "dim": DIM,
        "bases": BASES,
        "old_base": OLD_BASE,
    }
    r = subprocess.run(
        [sys.executable, "-c", HELPER, json.dumps(spec)], capture_output=True, text=True, timeout=300, check=False
    )
    assert r.returncode == 0, r.stderr
    status = json.loads(r.stdout)
    failed = {
        name: (code, (tmp_path / name[:-2] / f"stderr-{name[-1]}").read_text()) for name, code in status.items() if code
    }
    assert not failed, failed

    wanted = {base: _reference(base) for base in BASES}
    unlabelled: list[str] = []
    for fmt in FORMATS:
        for i in range(PAIRS):
            d = tmp_path / f"{fmt}-{i:02d}"
            out = d / f"t.{fmt}"
            for who in (0, 1):
                assert (d / f"stderr-{who}").read_text() == "", (fmt, i, who)
            left = sorted(p.name for p in d.iterdir() if not p.name.startswith("stderr-"))
            assert left == sorted([out.name] + ([f"{out.name}.json"] if fmt in SIDECAR_FORMATS else [])), left
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                with open_table(out) as table:
                    data = np.asarray(table.rows(0, table.shape[0]))
                    recipe, info = table.recipe, dict(table.info)
            # Whole, and one of the two writers' tables bit for bit (not the old one, not a mix).
            winners = [
                base for base, ref in wanted.items() if data.dtype == ref.dtype and data.tobytes() == ref.tobytes()
            ]
            assert len(winners) == 1, (fmt, i, data.shape, data.dtype)
            if recipe is None:
                # Only a sidecar can be the other writer's, and then it is known to be, and ignored.
                assert fmt in SIDECAR_FORMATS, (fmt, i, info)
                assert "fingerprint does not match" in info.get("note", ""), (fmt, i, info)
                assert caught, (fmt, i)
                unlabelled.append(f"{fmt}-{i:02d}")
                continue
            rebuilt = np.asarray(Table.from_recipe(recipe).rows(0, LENGTH))
            assert rebuilt.dtype == data.dtype and rebuilt.tobytes() == data.tobytes(), (fmt, i, recipe)
            assert getattr(recipe, "base", None) == winners[0], (fmt, i, recipe)
    # How often the sidecar of one writer ended beside the other's data (read with no recipe).
    print(f"{len(unlabelled)} of {PAIRS * len(FORMATS)} files read with no recipe: {unlabelled}")


@pytest.mark.parametrize("fmt", SIDECAR_FORMATS)
def test_a_sidecar_beside_the_other_writers_data_is_ignored(tmp_path: Path, fmt: str) -> None:
    """Where the renames could still interleave (no directory lock): no recipe, never the wrong one."""
    mine, theirs = tmp_path / f"t.{fmt}", tmp_path / f"u.{fmt}"
    for path, base in ((mine, BASES[0]), (theirs, BASES[1])):
        r = subprocess.run(
            [*PECLI, "generate", "--len", "64", "--dim", "8", "--base", str(base), "-o", str(path)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert r.returncode == 0, r.stderr
    Path(f"{mine}.json").write_bytes(Path(f"{theirs}.json").read_bytes())  # same shape, dtype, schema
    r = subprocess.run([*PECLI, "inspect", str(mine), "--json"], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["recipe"] is None
    assert "fingerprint does not match" in doc["storage"]["note"]
    assert r.stderr.startswith("note: ") and "recipe ignored" in r.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="flock: POSIX only")
def test_renames_wait_for_the_directory_lock(tmp_path: Path) -> None:
    """A writer holding the directory lock keeps a second one from renaming its file and sidecar."""
    import fcntl
    import time

    out = tmp_path / "t.npy"
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        proc = subprocess.Popen(
            [*PECLI, "generate", "--len", "64", "--dim", "8", "-o", str(out)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 30
        while not any(tmp_path.glob(".t.npy.*.part")) and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(1.0)  # ample to write a 2 kB table: it is written, and waits for the lock
        assert proc.poll() is None
        assert not out.exists() and [p.name for p in tmp_path.iterdir() if p.name.endswith(".part")]
    finally:
        os.close(fd)  # releases the lock
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.npy", "t.npy.json"]
