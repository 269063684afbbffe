"""Writes that cannot finish: a full disk, a hang-up.

Each ends with one ``Error:`` line (or the interrupted line) and a nonzero status, no ``.part``
temporary left behind, and the file that was at the target before (with its sidecar) untouched.

The full disk is a real one: a 2 MB tmpfs, mounted where the platform allows it (root on Linux,
with ``mount`` permitted: not in most unprivileged containers; skipped there with the reason).
"""

from __future__ import annotations

import hashlib
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from pecli.formats import FORMATS

pytestmark = pytest.mark.slow  # each case fills a real disk in a subprocess

PECLI = [sys.executable, "-m", "pecli"]
DIM = 256  # a row of float32 is 1 kB


def _formats() -> list[str]:
    names = [name for name, f in FORMATS.items() if name != "pt" and f.write is not None]  # formats pecli writes
    try:
        import torch  # noqa: F401
    except Exception:  # not installed, or broken: .pt is optional
        return names
    return [*names, "pt"]


def _mount_tmpfs(where: Path) -> str | None:
    """Mount a 2 MB tmpfs on ``where``; the reason it cannot be done, or None."""
    if not sys.platform.startswith("linux"):
        return f"mounting a tmpfs is a Linux test (this is {sys.platform})"
    import os

    if os.geteuid() != 0:
        return "mounting a 2 MB tmpfs needs root"
    if shutil.which("mount") is None:
        return "no mount command"
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(where)], capture_output=True, text=True, check=False
    )
    if r.returncode != 0:
        return f"mount -t tmpfs is not permitted here: {r.stderr.strip() or r.returncode}"
    return None


@pytest.fixture(scope="module")
def small_disk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    where = tmp_path_factory.mktemp("tmpfs")
    reason = _mount_tmpfs(where)
    if reason is not None:
        pytest.skip(reason)
    try:
        yield where
    finally:
        if subprocess.run(["umount", str(where)], capture_output=True, check=False).returncode != 0:
            subprocess.run(["umount", "-l", str(where)], capture_output=True, check=False)


@pytest.fixture
def disk(small_disk: Path) -> Path:
    """The tmpfs, emptied."""
    for p in small_disk.iterdir():
        p.unlink()
    return small_disk


def snapshot(d: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(d.iterdir())}


def pecli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PECLI, *map(str, args)], capture_output=True, text=True, timeout=120, check=False)


def _previous(disk: Path, fmt: str) -> Path:
    """A small table (and its sidecar) at the target, which the failed write must keep."""
    out = disk / f"t{FORMATS[fmt].extensions[0]}"
    r = pecli("generate", "--len", "64", "--dim", "8", "--base", "100", "-o", out)
    assert r.returncode == 0, r.stderr
    return out


def _refused(r: subprocess.CompletedProcess[str], message: str) -> None:
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert r.stdout == ""
    assert r.stderr.startswith("Error: ") and r.stderr.count("\n") == 1, r.stderr
    assert message in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("fmt", _formats())
def test_disk_fills_up_while_writing(disk: Path, fmt: str) -> None:
    """A table that passes the free-space estimate but does not fit: ENOSPC mid-write."""
    out = _previous(disk, fmt)
    before = snapshot(disk)
    free = shutil.disk_usage(disk).free
    rows = int(free // (DIM * FORMATS[fmt].bytes_per_value(np.dtype("float32"))))  # estimate == free
    r = pecli("generate", "--len", rows, "--dim", DIM, "-o", out, "--force")
    _refused(r, f"Error: no space left on device while writing {out}: free some space or write elsewhere")
    assert snapshot(disk) == before  # no .part, the previous file and its sidecar as they were


@pytest.mark.parametrize("fmt", _formats())
def test_table_larger_than_the_disk_is_refused_up_front(disk: Path, fmt: str) -> None:
    out = _previous(disk, fmt)
    before = snapshot(disk)
    r = pecli("generate", "--len", 4096, "--dim", DIM, "-o", out, "--force")  # 4 MB of float32
    _refused(r, f"{out} would need at least ")
    assert f"but {disk} has " in r.stderr and "free: choose a smaller table or another directory" in r.stderr
    assert snapshot(disk) == before


def test_the_sidecar_is_what_does_not_fit(disk: Path) -> None:
    """The data fills the last free page; writing the NAME.json beside it fails: neither is kept."""
    out = _previous(disk, "npy")
    before = snapshot(disk)
    rows = shutil.disk_usage(disk).free // (DIM * 4) - 1  # 128-byte header + data < free, no page left
    r = pecli("generate", "--len", rows, "--dim", DIM, "-o", out, "--force")
    _refused(r, f"Error: no space left on device while writing {out}")
    assert snapshot(disk) == before


def test_full_disk_without_a_previous_file(disk: Path) -> None:
    out = disk / "t.npz"
    rows = shutil.disk_usage(disk).free // (DIM * 4)
    r = pecli("generate", "--len", rows, "--dim", DIM, "-o", out)
    _refused(r, "no space left on device")
    assert list(disk.iterdir()) == []


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="no SIGHUP on this platform")
@pytest.mark.parametrize("previous", [False, True], ids=["new", "replacing"])
def test_sighup_during_a_large_export_leaves_nothing(tmp_path: Path, previous: bool) -> None:
    """The terminal closes (or ssh drops) mid-write: exit 129, the temporary removed."""
    out = tmp_path / "big.npy"
    if previous:
        r = pecli("generate", "--len", "64", "--dim", "8", "-o", out)
        assert r.returncode == 0, r.stderr
    before = snapshot(tmp_path)
    proc = subprocess.Popen(
        [*PECLI, "generate", "--len", "2000000", "--dim", "256", "-o", str(out), "--force"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not any(tmp_path.glob(".big.npy.*.part")) and time.monotonic() < deadline:  # writing has begun
        time.sleep(0.02)
    assert proc.poll() is None, proc.communicate()
    time.sleep(0.2)  # well into the 2 GB
    proc.send_signal(signal.SIGHUP)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 129, err
    assert err.splitlines() == ["Interrupted (hang-up): nothing was written."]
    assert snapshot(tmp_path) == before  # no .part, no partial big.npy; a previous one as it was


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="no SIGHUP on this platform")
def test_nohup_keeps_its_ignored_sighup(tmp_path: Path) -> None:
    """Under ``nohup`` (SIGHUP ignored) pecli does not take SIGHUP back: the write completes."""
    out = tmp_path / "t.npy"
    proc = subprocess.Popen(
        [*PECLI, "generate", "--len", "200000", "--dim", "64", "-o", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN),  # what nohup does
    )
    deadline = time.monotonic() + 30
    while not any(tmp_path.glob(".t.npy.*.part")) and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGHUP)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert np.load(out).shape == (200000, 64)
