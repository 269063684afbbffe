"""Would building a .npy straight into a shared mapping of the output beat ``np.save``? (issue 25)

    python benchmarks/mapped_write.py               # 4 GB to /dev/shm, 3 rounds
    python benchmarks/mapped_write.py --gb 1 --rounds 1

A prototype of the write path issue 25 asked about: the file is sized with ``ftruncate``, mapped
``MAP_SHARED``, and each 4 MB row block of the float32 sinusoid is computed on a worker thread
and copied into its place in the mapping, so the page faults (allocation and zeroing of the
tmpfs pages) happen on every core instead of in one ``write()``.  Printed side by side in each
round: ``np.save`` of a ready array of the same bytes, ``pecli generate -o`` end to end (a child
process, start-up included), and the prototype in this process at 1, 4, 8 and 16 threads, each
as the ratio np.save's time / its time (≥ 1: faster than NumPy only writing).  Last, whether the
prototype's file equals pecli's.

Measured on a 16-core machine (Linux tmpfs, 4 GB, 3 rounds): np.save 1.26–1.80 s; pecli
0.57–0.87×; the prototype 0.27–0.37× at 1 thread and 0.57–0.84× at 4 to 16, flat from 4 threads
on: the faults into one tmpfs file do not run in parallel there, so mapping the output is no way
past np.save; the kernel's page allocation for the file is the limit of both.
"""

from __future__ import annotations

import argparse
import io
import mmap
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pecli.kernels.threads import threads_at_most
from pecli.kinds.sinusoidal import Sinusoidal

DIM = 1024
BLOCK_BYTES = 4 << 20


def mapped(path: Path, n: int, threads: int) -> float:
    """The prototype: the table's row blocks computed on ``threads`` workers into the mapping."""
    t = time.perf_counter()
    recipe = Sinusoidal(n, DIM)
    head = io.BytesIO()
    np.lib.format.write_array_header_1_0(head, {"descr": "<f4", "fortran_order": False, "shape": (n, DIM)})
    header = head.getvalue()
    row_bytes = DIM * 4
    total = len(header) + n * row_bytes
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.ftruncate(fd, total)
        os.pwrite(fd, header, 0)
        step = BLOCK_BYTES // row_bytes
        spans = [(a, min(n, a + step)) for a in range(0, n, step)]
        with mmap.mmap(fd, total, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE) as mm:
            views = [np.frombuffer(mm, dtype=np.uint8)]  # released before the mapping closes

            def work(span: tuple[int, int]) -> None:
                a, z = span
                with threads_at_most(1):
                    rows = recipe.rows(a, z)
                offset = len(header) + a * row_bytes
                views[0][offset : offset + (z - a) * row_bytes] = rows.view(np.uint8).ravel()

            with ThreadPoolExecutor(threads) as pool:
                list(pool.map(work, spans))
            views.clear()
    finally:
        os.close(fd)
    return time.perf_counter() - t


def saved(path: Path, n: int) -> float:
    a = np.empty((n, DIM), np.float32)
    a[:] = 0.5
    t = time.perf_counter()
    np.save(path, a)
    return time.perf_counter() - t


def generated(path: Path, n: int) -> float:
    cmd = [sys.executable, "-m", "pecli", "generate", "--len", str(n), "--dim", str(DIM), "-o", str(path)]
    t = time.perf_counter()
    subprocess.run([*cmd, "--force", "-q"], check=True, env={**os.environ, "PECLI_NO_FSYNC": "1"})
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gb", type=float, default=4.0)
    ap.add_argument("--dir", type=Path, default=Path("/dev/shm"))
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    n = int(args.gb * 1e9) // (DIM * 4)
    proto, ref, out = (args.dir / f"pecli-mapped-{name}.npy" for name in ("proto", "ref", "out"))

    def clean() -> None:
        for p in (proto, ref, out, Path(str(out) + ".json")):
            p.unlink(missing_ok=True)

    try:
        mapped(proto, min(n, 1 << 16), os.cpu_count() or 1)  # warm: numba's cache, the pool
        clean()
        for _ in range(args.rounds):
            s = saved(ref, n)
            clean()
            e = generated(out, n)
            clean()
            times = {k: mapped(proto, n, k) for k in (1, 4, 8, 16)}
            clean()
            cells = " ".join(f"{k} thr {v:.3f} s ({s / v:.2f}x)" for k, v in times.items())
            print(f"np.save {s:.3f} s | pecli generate -o {e:.3f} s ({s / e:.2f}x) | mapped {cells}", flush=True)
        mapped(proto, n, os.cpu_count() or 1)
        generated(out, n)
        a, b = np.load(proto, mmap_mode="r"), np.load(out, mmap_mode="r")
        print("the same table:", bool(np.array_equal(a[::997], b[::997]) and np.array_equal(a[-5:], b[-5:])))
    finally:
        clean()


if __name__ == "__main__":
    main()
