"""pecli as a real process: the console entry point, signals and pipes."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from tests.helpers import rows_to_interrupt

PECLI = [sys.executable, "-m", "pecli"]


def test_module_entry_point_prints_the_blog_walkthroughs_worked_example() -> None:
    r = subprocess.run(
        [*PECLI, "generate", "--len", "120", "--dim", "8"],
        capture_output=True,
        text=True,
        env={"COLUMNS": "80", "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert r.returncode == 0, r.stderr
    row2 = next(line for line in r.stdout.splitlines() if line.split()[:1] == ["2"])
    assert row2.split()[1:] == ["0.9093", "-0.4161", "0.1987", "0.9801", "0.0200", "0.9998", "0.0020", "1.0000"]


def test_error_exit_code_and_one_line() -> None:
    r = subprocess.run([*PECLI, "generate", "--len", "0", "--dim", "8"], capture_output=True, text=True, check=False)
    assert r.returncode == 2
    assert r.stderr.splitlines() == [
        "Error: length must be at least 1, got 0: give the number of positions, e.g. --len 120"
    ]


def test_sigterm_during_export_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "big.npy"
    rows = rows_to_interrupt(tmp_path, 64 * 8)  # float32 is 256 bytes a row; a margin for float64
    proc = subprocess.Popen(
        [*PECLI, "generate", "--len", rows, "--dim", "64", "-o", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not any(tmp_path.iterdir()) and time.monotonic() < deadline:  # wait until writing has begun
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143  # 128 + SIGTERM's 15, as a shell reports a process the signal killed
    assert err.splitlines() == ["Interrupted: nothing was written."]
    assert list(tmp_path.iterdir()) == []


def test_existing_file_survives_sigint(tmp_path: Path) -> None:
    out = tmp_path / "t.csv"
    out.write_text("keep me\n")
    rows = rows_to_interrupt(tmp_path, 64 * 16)  # a CSV row of 64 values is ~800 bytes
    proc = subprocess.Popen(
        [*PECLI, "generate", "--len", rows, "--dim", "64", "-o", str(out), "--force"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while len(list(tmp_path.iterdir())) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
    finally:  # never leave a long writer behind (a shell that ignores SIGINT, a timeout)
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130
    assert out.read_text() == "keep me\n"
    assert [p.name for p in tmp_path.iterdir()] == ["t.csv"]


def test_broken_pipe_is_quiet() -> None:
    cmd = f"{sys.executable} -m pecli generate --len 1000000 --dim 64 -o - --to csv | head -c 100"
    r = subprocess.run(["bash", "-c", f"set -o pipefail; {cmd}"], capture_output=True, text=True, check=False)
    assert r.stdout.startswith("d0,d1,d2")
    assert r.stderr == ""
    assert r.returncode == 141


def test_npy_through_a_pipe_is_loadable(tmp_path: Path) -> None:
    r = subprocess.run(
        [*PECLI, "generate", "--len", "30", "--dim", "6", "-o", "-", "--to", "npy"], capture_output=True, check=True
    )
    (tmp_path / "p.npy").write_bytes(r.stdout)
    assert np.load(tmp_path / "p.npy").shape == (30, 6)
