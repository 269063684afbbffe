"""``pecli diff A.npy B.npy`` against the issue's targets, side by side with what a user would write.

    python benchmarks/diff.py                      # two 512 MB float32 files, 2 cases, 3 runs (~1 min)
    python benchmarks/diff.py --rows 262144 --runs 5 --profile

Targets (the issue): "≥ 1 GB/s whole process on two 512 MB .npy files, at least as fast as
``np.load`` both + ``np.allclose`` measured side by side in ``benchmarks/``, and ≤ 256 MB
anonymous memory at any size."

- The files: A is a ``--rows``×``--dim`` sinusoid table made by independent NumPy code (the
  paper's formula in float64, cast to float32; 131072×1024 = 512 MiB), written in row blocks.
  Cases (``--cases``):

  - ``few``: B = A with a handful of elements moved one ulp (``np.nextafter``), the usual
    "are these the same table?" question;
  - ``all``: B = A rounded through float16, and where that leaves an element unchanged (0, ±1,
    ±0.5, ...) moved one ulp, so that *every* element differs: the worst case for the report
    (every element is a mismatch, ranked, and the causes are looked for);
  - ``same``: B = a byte copy of A (not in the default run).

- The sides, each a fresh process, exact comparison, alternated ``--runs`` times (medians of the
  wall times) after one untimed run of each (``.pyc`` files) and after every file has been read
  once (page cache): (a) ``pecli diff A B`` (the whole report, written to /dev/null);
  (b) ``python -c "import numpy as np; a=np.load(A); b=np.load(B); print(np.allclose(a, b, rtol=0,
  atol=0))"`` (``--atol X``: both sides with that tolerance, the issue's ``--atol 1e-6``).
  Before each run, memory is touched and freed (see performance.py's ``warm_memory``: on this VM
  memory idle for a couple of seconds goes back to the host, and touching it again runs at
  ~0.5 GB/s).
- GB/s = (bytes of A + bytes of B) / pecli's wall seconds (the whole process: start-up, both
  files read, the report computed).
- Memory: peak ``RssAnon`` of each process (``/proc/PID/status``, polled every ``--poll`` ms;
  a memory-mapped file's pages are file-backed and do not count: they are the page cache), and,
  for information, ``VmHWM`` (peak RSS, file-backed pages included) as last seen by the poll.

``--profile`` prints cProfile's top entries (cumulative) for one ``pecli diff`` process per case.
"""

from __future__ import annotations

import argparse
import os
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _harness import Report, cli_env, mb, pecli_cmd, profile_pecli, read_through, warm_memory

REPORT = Report("peak anon / VmHWM: pecli | baseline")

TARGET_GBS = 1.0
TARGET_ANON = 256e6  # "256 MB", read as performance.py reads it (decimal, the stricter)
BLOCK_ROWS = 8192

#: The baseline: what a user runs to check that two .npy files hold the same table.
_BASELINE = (
    "import sys, numpy as np; a=np.load(sys.argv[1]); b=np.load(sys.argv[2]); "
    "print(np.allclose(a, b, rtol=0, atol=float(sys.argv[3])))"
)

CASES = {
    "few": "{n} elements 1 ulp apart",
    "all": "every element differs (float16 round-trip)",
    "same": "byte copies",
}


# ------------------------------------------------------------------------------------- the files
def sinusoid_block(r0: int, r1: int, dim: int) -> np.ndarray:
    """Rows ``r0:r1`` of the paper's table, in float64 (written independently of pecli)."""
    pos = np.arange(r0, r1, dtype=np.float64)[:, None]
    div = np.power(10000.0, np.arange(0, dim, 2, dtype=np.float64) / dim)
    out = np.empty((r1 - r0, dim), dtype=np.float64)
    out[:, 0::2] = np.sin(pos / div)
    out[:, 1::2] = np.cos(pos / div)
    return out


def make_a(path: Path, rows: int, dim: int) -> None:
    a = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(rows, dim))
    for r0 in range(0, rows, BLOCK_ROWS):
        r1 = min(rows, r0 + BLOCK_ROWS)
        a[r0:r1] = sinusoid_block(r0, r1, dim).astype(np.float32)
    a.flush()
    del a


def make_few(a_path: Path, path: Path, nudges: int) -> None:
    """B = A with ``nudges`` elements, spread over the table, moved one ulp up."""
    shutil.copyfile(a_path, path)
    b = np.lib.format.open_memmap(path, mode="r+")
    flat = b.reshape(-1)
    where = np.linspace(0, flat.size - 1, nudges).astype(np.int64)
    flat[where] = np.nextafter(flat[where], np.float32(np.inf))
    b.flush()
    del flat, b


def make_all(a_path: Path, path: Path) -> None:
    """B = A through float16 and back; elements that survive unchanged are moved one ulp up."""
    a = np.load(a_path, mmap_mode="r")
    b = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=a.shape)
    for r0 in range(0, a.shape[0], BLOCK_ROWS):
        r1 = min(a.shape[0], r0 + BLOCK_ROWS)
        x = np.asarray(a[r0:r1])
        y = x.astype(np.float16).astype(np.float32)
        same = y == x
        y[same] = np.nextafter(x[same], np.float32(np.inf))
        assert not (y == x).any()
        b[r0:r1] = y
    b.flush()
    del a, b


# ----------------------------------------------------------------------------- running a process
def _status_kb(pid: int, keys: tuple[str, ...]) -> dict[str, int]:
    found: dict[str, int] = {}
    try:
        with open(f"/proc/{pid}/status", "rb") as fp:
            for line in fp:
                key, _, value = line.partition(b":")
                k = key.decode()
                if k in keys:
                    found[k] = int(value.split()[0])
    except (FileNotFoundError, ProcessLookupError, ValueError, IndexError):
        pass
    return found


def launch(cmd: list[str], env: dict[str, str], poll: float) -> tuple[float, int, int, int]:
    """Run ``cmd`` in a fresh process: (wall seconds, exit code, peak RssAnon, last VmHWM), bytes.

    RssAnon is polled every ``poll`` seconds; the wait wakes as soon as the process exits
    (a pidfd), so the poll adds nothing to the wall time.
    """
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    pidfd = os.pidfd_open(proc.pid)
    anon = hwm = 0
    try:
        while True:
            st = _status_kb(proc.pid, ("RssAnon", "VmHWM"))
            anon = max(anon, st.get("RssAnon", 0))
            hwm = max(hwm, st.get("VmHWM", 0))
            ready, _, _ = select.select([pidfd], [], [], poll)
            if ready:
                break
        _, status = os.waitpid(proc.pid, 0)
        wall = time.perf_counter() - t0
    finally:
        os.close(pidfd)
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(cmd)} failed (exit {proc.returncode}): {err.strip()[-500:]}")
    return wall, proc.returncode, anon * 1024, hwm * 1024


# ------------------------------------------------------------------------------------------ cases
def case_diff(
    a: Path, b: Path, label: str, runs: int, warm: int, poll: float, profile: bool, atol: float = 0.0
) -> None:
    env = cli_env()
    tolerance = ["--atol", repr(atol)] if atol else []
    ours = [*pecli_cmd(), "diff", str(a), str(b), *tolerance]  # the whole report (to /dev/null)
    theirs = [sys.executable, "-c", _BASELINE, str(a), str(b), repr(atol)]
    if atol:
        label += f", --atol {atol:g}"
    # With a tolerance, a few ulps apart is the same table: the verdict is NumPy's allclose.
    expect = 0 if "copies" in label or (atol and "ulp apart" in label) else 1
    read_through(a)
    read_through(b)
    for cmd in (ours, theirs):  # untimed: .pyc files, code paths
        warm_memory(warm)
        launch(cmd, env, poll)
    times: dict[str, list[float]] = {"pecli": [], "base": []}
    anon = {"pecli": 0, "base": 0}
    hwm = {"pecli": 0, "base": 0}
    for i in range(runs):
        order = (("pecli", ours), ("base", theirs)) if i % 2 == 0 else (("base", theirs), ("pecli", ours))
        for side, cmd in order:
            warm_memory(warm)
            wall, rc, peak_anon, peak_hwm = launch(cmd, env, poll)
            if side == "pecli" and rc != expect:
                raise RuntimeError(f"pecli diff exited {rc}, expected {expect} ({label})")
            times[side].append(wall)
            anon[side] = max(anon[side], peak_anon)
            hwm[side] = max(hwm[side], peak_hwm)
        print(
            f"    {label}: run {i + 1}: pecli {times['pecli'][-1]:.2f} s, baseline {times['base'][-1]:.2f} s",
            file=sys.stderr,
            flush=True,
        )
    nbytes = a.stat().st_size + b.stat().st_size
    tp, tb = statistics.median(times["pecli"]), statistics.median(times["base"])
    mem = f"{mb(anon['pecli'])} / {mb(hwm['pecli'])} | {mb(anon['base'])} / {mb(hwm['base'])}"
    case = f"diff 2x{nbytes / 2 / 2**20:,.0f} MiB, {label}"
    REPORT.row(
        f"{case}: throughput",
        f"{nbytes / tp / 1e9:.2f} GB/s",
        f"{nbytes / tb / 1e9:.2f} GB/s",
        f"{tb / tp:.2f}x",
        f"≥ {TARGET_GBS:g} GB/s",
        nbytes / tp / 1e9 >= TARGET_GBS,
        mem,
    )
    REPORT.row(
        f"{case}: wall time",
        f"{tp:.2f} s",
        f"{tb:.2f} s",
        f"{tb / tp:.2f}x faster" if tp <= tb else f"{tp / tb:.2f}x slower",
        "≤ load+allclose",
        tp <= tb,
        "",
    )
    REPORT.row(
        f"{case}: anon memory",
        mb(anon["pecli"]),
        mb(anon["base"]),
        f"{anon['base'] / max(anon['pecli'], 1):.1f}x less",
        f"≤ {mb(TARGET_ANON)}",
        anon["pecli"] <= TARGET_ANON,
        "",
    )
    if profile:
        profile_pecli(["diff", str(a), str(b), *tolerance], f"`pecli diff`, {label}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=131072, help="table rows (131072x1024 float32: 512 MiB)")
    ap.add_argument("--dim", type=int, default=1024, help="table width")
    ap.add_argument("--runs", type=int, default=3, help="timed runs per side (medians)")
    ap.add_argument("--cases", default="few,all", help=f"some of {','.join(CASES)}")
    ap.add_argument("--nudges", type=int, default=5, help="few: elements moved one ulp")
    ap.add_argument("--poll", type=float, default=5.0, help="RssAnon poll interval, ms")
    ap.add_argument("--warm", type=float, default=None, help="GB touched before each run (default: 3x both files)")
    ap.add_argument("--profile", action="store_true", help="cProfile one pecli diff process per case")
    ap.add_argument("--dir", default=None, help="where the temporary .npy files go (default: the system's)")
    ap.add_argument("--atol", type=float, default=0.0, help="tolerance of both sides (pecli --atol, np.allclose atol)")
    args = ap.parse_args()
    cases = args.cases.split(",")
    if unknown := [c for c in cases if c not in CASES]:
        ap.error(f"unknown cases: {','.join(unknown)}")
    nbytes = args.rows * args.dim * 4
    warm = int(args.warm * 1e9) if args.warm is not None else 3 * 2 * nbytes  # > the baseline's peak
    print(f"pecli diff benchmark: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}", file=sys.stderr)
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="pecli-bench-diff-") as tmp:
        where = Path(tmp)
        a = where / "A.npy"
        make_a(a, args.rows, args.dim)
        for case in cases:
            b = where / f"B-{case}.npy"
            if case == "few":
                make_few(a, b, args.nudges)
            elif case == "all":
                make_all(a, b)
            else:
                shutil.copyfile(a, b)
            label = CASES[case].format(n=args.nudges)
            case_diff(a, b, label, args.runs, warm, args.poll / 1e3, args.profile, args.atol)
            b.unlink()
    print(f"load average after: {os.getloadavg()[0]:.2f}", file=sys.stderr)
    REPORT.print()


if __name__ == "__main__":
    main()
