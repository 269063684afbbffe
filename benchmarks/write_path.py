"""The main job end to end, and how it scales with threads (issue 25), side by side in one run.

    python benchmarks/write_path.py                       # 1 GB to /dev/shm, threads 1..cpus
    python benchmarks/write_path.py --gb 4 --disk /var/tmp --cases e2e,split,ingest,handoff,gil,scaling

Cases, each timed alternately with its baseline (medians of ``--repeat``):

- e2e: ``pecli generate --len N --dim 1024 -o DIR/t.EXT -q`` (a child process, start-up
  included) for .npy, .safetensors and .h5, against a child that holds a ready float32 array of
  the same bytes and times ``np.save`` of it alone (its building is not counted).  ratio =
  np.save's time / pecli's: ≥ 1 means pecli builds and writes faster than NumPy only writes.
  With ``--disk DIR`` also a .npy on that file system with pecli's fsync, against a plain
  ``dd``-style write of the same bytes in 16 MB blocks and an fsync.
- split: in this process, the same table built in memory, its row blocks computed and dropped
  (``Table.blocks``), ``write_table`` to DIR in each streamed binary format (.npy, stored .npz,
  .safetensors, .h5), and ``np.save`` of the built array: where the end-to-end time goes.
- ingest: how fast the file system takes the bytes, whoever makes them (no pecli table): 4 MB
  writes from one buffer rewritten each time (hot in the writer's cache: the best any writer
  does), from eight buffers in turn (made elsewhere, as pecli's blocks are: made on other cores),
  against ``np.save`` of a ready array.  With ``--disk DIR``: 4 MB writes and an fsync with and
  without pecli's early writeback (``pecli.writeback``), against the ``dd``-style write and fsync.
- handoff: who should write a block (no pecli table; 4 MB blocks to DIR, made by ``--threads``
  workers with two NumPy passes each): the main thread writing each block a worker made (pecli's
  streaming before ``pecli.formats.rawbytes``; still its text, ``.npz`` and ``.pt`` writers), each
  worker writing its own block where it belongs (``os.pwrite``, the block still in that core's
  cache: pecli's ``.npy``, ``.safetensors`` and ``.h5``), and the main thread rewriting one hot
  buffer (the ceiling).
- csv: CSV at its own formatting speed: the float32 table (a sixteenth of ``--gb``'s rows) formatted
  in memory on one thread (``pecli.formats.percentg``, the text dropped), against ``write_table`` of the
  computed table to DIR as a CSV at each ``--threads`` count: ≥ 1 means the write path keeps up
  with formatting; above 1 with threads, the blocks are formatted on the threads that computed them.
- gil: threads that each run NumPy calls writing S pairs (inputs in the cache; a multiply and the
  rotation's tiny-value check), GB/s together: how large a call must be for threads to scale (each
  call re-takes the GIL); and 512 MB filled by the threads, fresh or already touched (page faults).
- scaling: every kind of ``benchmarks/every_kind.py``'s table (``--cells`` cells each, in
  memory) at 1, 2, … threads (``--threads``; the ``--threads`` option's ``set_threads``; the
  counts in turn, best of ``--repeat`` (at least 5) builds each), with and
  without the compiled kernels (the ``fast`` extra; ``PECLI_COMPILED``) in child processes:
  GB/s and the parallel efficiency t₁ / (n · tₙ).  Its first row, "memory fill (ceiling)", is
  no kind: a fresh table of as many float32 cells set to 1.0 by the same threads in the same row
  blocks, the page faults and memory writes alone: a kind whose speed is its output's memory
  cannot scale better than it.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _harness import cli_env, pecli_cmd, warm_memory  # noqa: E402

DIM = 1024


def timed_child(cmd: list[str], env: dict[str, str] | None = None) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, check=True, env=env or cli_env(), stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


_SAVE = """
import sys, time, numpy as np
n, path = int(sys.argv[1]), sys.argv[2]
a = np.empty((n, {dim}), np.float32); a[:] = 0.5
t = time.perf_counter(); np.save(path, a); print(time.perf_counter() - t)
"""

_DD = """
import os, sys, time, numpy as np
n, path = int(sys.argv[1]), sys.argv[2]
a = np.empty((n, {dim}), np.float32); a[:] = 0.5
view = memoryview(a.reshape(-1).view(np.uint8)); step = 16 << 20
t = time.perf_counter()
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
for k in range(0, len(view), step):
    os.write(fd, view[k:k + step])
os.fsync(fd); os.close(fd); print(time.perf_counter() - t)
"""


def child_seconds(script: str, rows: int, path: Path) -> float:
    out = subprocess.run(
        [sys.executable, "-c", script.format(dim=DIM), str(rows), str(path)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return float(out.strip().splitlines()[-1])


def clean(*paths: Path) -> None:
    for p in paths:
        for q in (p, Path(str(p) + ".json")):
            q.unlink(missing_ok=True)


def case_e2e(rows: int, where: Path, disk: Path | None, repeat: int) -> list[str]:
    lines = []
    nbytes = rows * DIM * 4
    targets = [(where, ext, "") for ext in ("npy", "safetensors", "h5")]
    if disk is not None:
        targets.append((disk, "npy", "fsync"))
    for folder, ext, sync in targets:
        out, ref = folder / f"pe-bench.{ext}", folder / "pe-bench-ref.npy"
        env = cli_env()
        if not sync:
            env["PECLI_NO_FSYNC"] = "1"  # /dev/shm: np.save does not fsync either
        cmd = [*pecli_cmd(), "generate", "--len", str(rows), "--dim", str(DIM), "-o", str(out), "-q", "--force"]
        mine, theirs = [], []
        for _ in range(repeat):
            clean(out, ref)
            warm_memory(nbytes)
            mine.append(timed_child(cmd, env))
            clean(out, ref)
            warm_memory(nbytes)
            theirs.append(child_seconds(_DD if sync else _SAVE, rows, ref))
        clean(out, ref)
        m, t = statistics.median(mine), statistics.median(theirs)
        base = "dd + fsync" if sync else "np.save"
        lines.append(
            f"e2e {ext:<11} {folder}  {nbytes / 1e9:.2f} GB: pecli {m:.3f} s ({nbytes / m / 1e9:.2f} GB/s), "
            f"{base} {t:.3f} s; ratio {t / m:.2f}"
        )
        print(lines[-1], flush=True)
    return lines


def case_split(rows: int, where: Path, repeat: int) -> list[str]:
    from pecli.formats import write_table
    from pecli.sources import parse_recipe
    from pecli.table import Table

    recipe = parse_recipe(f"sinusoidal:len={rows},dim={DIM}")
    table = Table.from_recipe(recipe)
    formats = ("npy", "npz", "safetensors", "h5")
    outs, ref = [where / f"pe-split.{ext}" for ext in formats], where / "pe-split-ref.npy"
    os.environ["PECLI_NO_FSYNC"] = "1"
    times: dict[str, list[float]] = {"build": [], "blocks": [], **{f"write {e}": [] for e in formats}, "np.save": []}
    for _ in range(repeat):
        clean(*outs, ref)
        t = time.perf_counter()
        built = recipe.build()
        times["build"].append(time.perf_counter() - t)
        t = time.perf_counter()
        for _block in table.blocks():
            pass
        times["blocks"].append(time.perf_counter() - t)
        for ext, out in zip(formats, outs, strict=True):
            t = time.perf_counter()
            write_table(table, out, force=True)
            times[f"write {ext}"].append(time.perf_counter() - t)
            clean(out)
        t = time.perf_counter()
        np.save(ref, built)
        times["np.save"].append(time.perf_counter() - t)
        del built
    clean(*outs, ref)
    line = "split " + ", ".join(f"{k} {statistics.median(v):.3f} s" for k, v in times.items())
    print(line, flush=True)
    return [line]


def case_csv(rows: int, where: Path, counts: list[int], repeat: int) -> list[str]:
    """CSV at its own formatting speed: ``block_text`` over the ready float32 table on one thread
    (the text dropped: what formatting alone costs) against ``write_table`` of the computed table
    to a CSV in ``where`` at each thread count, the cases in turn in each round (medians)."""
    from pecli.formats import write_table
    from pecli.formats.percentg import block_text
    from pecli.kernels.threads import set_threads
    from pecli.sources import parse_recipe
    from pecli.table import Table

    recipe = parse_recipe(f"sinusoidal:len={rows},dim={DIM}")
    ready, out, step = recipe.build(), where / "pe-csv.csv", 1024  # rows: a 4 MB block
    os.environ["PECLI_NO_FSYNC"] = "1"

    def formatting() -> None:
        for a in range(0, rows, step):
            block_text(ready[a : a + step], 9, ",")  # one thread: as pecli formats alone

    def writing(n: int) -> None:
        set_threads(n)
        write_table(Table.from_recipe(recipe), out, force=True, sidecar=False)

    cases: dict[str, Callable[[], None]] = {"formatting, one thread (baseline)": formatting}
    cases |= {f"generate -o .csv, {n} thread{'s' * (n > 1)}": functools.partial(writing, n) for n in counts}
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(repeat):
        for name, run in cases.items():
            t = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - t)
    set_threads(None)
    size = out.stat().st_size
    clean(out)
    base = statistics.median(times["formatting, one thread (baseline)"])
    lines = []
    for name, ts in times.items():
        m = statistics.median(ts)
        line = f"csv {rows}x{DIM} ({size / 1e6:.0f} MB): {name:<36} {m:.3f} s; baseline / this {base / m:.2f}"
        lines.append(line)
        print(line, flush=True)
    return lines


def _write_blocks(path: Path, total: int, buffers: list[np.ndarray], sync: bool, early: bool) -> float:
    from pecli.writeback import EarlyWriteback

    views = [memoryview(b) for b in buffers]
    t = time.perf_counter()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        with EarlyWriteback(path) if early else _nothing():
            for k in range(-(-total // len(views[0]))):
                os.write(fd, views[k % len(views)])
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)
    return time.perf_counter() - t


def _write_ready(path: Path, ready: np.ndarray, sync: bool) -> float:
    """``np.save`` of a ready array; with ``sync``, a ``dd``-style write in 16 MB blocks and an fsync."""
    t = time.perf_counter()
    if not sync:
        np.save(path, ready)
        return time.perf_counter() - t
    view, step = memoryview(ready), 16 << 20
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        for k in range(0, len(view), step):
            os.write(fd, view[k : k + step])
        os.fsync(fd)
    finally:
        os.close(fd)
    return time.perf_counter() - t


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def case_ingest(nbytes: int, where: Path, disk: Path | None, repeat: int) -> list[str]:
    lines = []
    block = 4 << 20
    ready = np.full(nbytes, 7, np.uint8)
    buffers = [np.full(block, k + 1, np.uint8) for k in range(8)]
    targets = [(where, False)] + ([(disk, True)] if disk is not None else [])
    for folder, sync in targets:
        path = folder / "pe-ingest.npy"
        cases: dict[str, Callable[[Path], float]] = {}
        if sync:
            cases["dd + fsync (baseline)"] = lambda p: _write_ready(p, ready, True)
            cases["4 MB writes + fsync"] = lambda p: _write_blocks(p, nbytes, buffers[:1], True, False)
            cases["same, early writeback"] = lambda p: _write_blocks(p, nbytes, buffers[:1], True, True)
        else:
            cases["np.save (baseline)"] = lambda p: _write_ready(p, ready, False)
            cases["4 MB writes, one hot buffer"] = lambda p: _write_blocks(p, nbytes, buffers[:1], False, False)
            cases["4 MB writes, 8 buffers in turn"] = lambda p: _write_blocks(p, nbytes, buffers, False, False)
        medians = _alternately(
            {name: functools.partial(run, path) for name, run in cases.items()}, path, nbytes, repeat
        )
        base = next(iter(medians.values()))
        for name, m in medians.items():
            lines.append(
                f"ingest {folder} {nbytes / 1e9:.2f} GB: {name:<32} {m:.3f} s ({nbytes / m / 1e9:.2f} GB/s); "
                f"baseline / this {base / m:.2f}"
            )
            print(lines[-1], flush=True)
    return lines


def _alternately(cases: dict[str, Callable[[], float]], path: Path, nbytes: int, repeat: int) -> dict[str, float]:
    """Each case's median time over ``repeat`` rounds, the cases in turn within a round (so the
    machine's drift hits each alike), ``path`` removed and memory warmed before each."""
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(repeat):
        for name, run in cases.items():
            clean(path)
            warm_memory(nbytes)
            times[name].append(run())
    clean(path)
    return {name: statistics.median(ts) for name, ts in times.items()}


def case_handoff(nbytes: int, where: Path, workers: int, repeat: int) -> list[str]:
    import queue
    import threading

    block = 4 << 20
    n = nbytes // block
    source = np.random.default_rng(0).integers(0, 255, block, dtype=np.uint8)
    path = where / "pe-handoff.bin"

    def make(buf: np.ndarray) -> None:  # a block's compute: two passes, in this thread's cache
        np.copyto(buf, source)
        buf += 1

    def ceiling() -> float:
        buf = source.copy()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        t = time.perf_counter()
        for _ in range(n):
            os.write(fd, memoryview(buf))
        os.close(fd)
        return time.perf_counter() - t

    def handed() -> float:
        done: queue.Queue[tuple[int, np.ndarray]] = queue.Queue(maxsize=workers + 1)

        def work(w: int) -> None:
            for k in range(w, n, workers):
                buf = np.empty(block, np.uint8)
                make(buf)
                done.put((k, buf))

        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        t = time.perf_counter()
        threads = [threading.Thread(target=work, args=(w,)) for w in range(workers)]
        for th in threads:
            th.start()
        held: dict[int, np.ndarray] = {}
        for k in range(n):
            while k not in held:
                j, buf = done.get()
                held[j] = buf
            os.write(fd, memoryview(held.pop(k)))
        for th in threads:
            th.join()
        os.close(fd)
        return time.perf_counter() - t

    def own() -> float:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        t = time.perf_counter()

        def work(w: int) -> None:
            buf = np.empty(block, np.uint8)
            for k in range(w, n, workers):
                make(buf)
                os.pwrite(fd, memoryview(buf), k * block)

        threads = [threading.Thread(target=work, args=(w,)) for w in range(workers)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        os.close(fd)
        return time.perf_counter() - t

    cases = {"main thread writes": handed, "each worker writes its own (pecli)": own, "one hot buffer": ceiling}
    lines = []
    for name, m in _alternately(cases, path, nbytes, repeat).items():
        lines.append(
            f"handoff {where} {nbytes / 1e9:.2f} GB, {workers} workers: {name:<34} {m:.3f} s "
            f"({nbytes / m / 1e9:.2f} GB/s)"
        )
        print(lines[-1], flush=True)
    return lines


def case_gil(counts: list[int]) -> list[str]:
    import threading

    lines = []
    per_thread = 64 << 20  # bytes of complex64 output each thread writes
    for size in (16 << 10, 64 << 10, 256 << 10, 1 << 20):
        rates = []
        for n in counts:

            def work(size: int = size) -> None:
                a, r = np.ones(size, np.complex128), np.ones(size, np.complex128)
                out = np.empty(size, np.complex64)
                for _ in range(max(1, per_thread // (8 * size))):  # the rotation's multiply and tiny check
                    np.multiply(a, r, out=out, casting="same_kind")
                    np.abs(out.view(np.float32)).min()

            threads = [threading.Thread(target=work) for _ in range(n)]
            t = time.perf_counter()
            for th in threads:
                th.start()
            for th in threads:
                th.join()
            rates.append(n * per_thread / (time.perf_counter() - t) / 1e9)
        lines.append(
            f"gil: calls of {size * 8 >> 10:>5} kB out | "
            + " | ".join(f"{n} thr {g:6.2f} GB/s" for n, g in zip(counts, rates, strict=True))
        )
        print(lines[-1], flush=True)
    # Page faults: 512 MB filled by the threads, fresh (np.empty, first touch) and already touched.
    nbytes = 512 << 20
    touched = np.ones(nbytes // 4, np.float32)
    for n in counts:

        def fill(fresh: bool, n: int = n) -> float:
            arr = np.empty(nbytes // 4, np.float32) if fresh else touched
            cuts = [arr.size * t // n for t in range(n + 1)]
            threads = [threading.Thread(target=arr[a:b].fill, args=(1.5,)) for a, b in itertools.pairwise(cuts)]
            t = time.perf_counter()
            for th in threads:
                th.start()
            for th in threads:
                th.join()
            return nbytes / (time.perf_counter() - t) / 1e9

        lines.append(
            f"gil: first touch, 512 MB by {n} thr: fresh {max(fill(True) for _ in range(3)):6.2f} GB/s, "
            f"touched {max(fill(False) for _ in range(3)):6.2f} GB/s"
        )
        print(lines[-1], flush=True)
    return lines


_SCALE = """
import json, sys, time
sys.path.insert(0, {bench!r}); sys.path.insert(0, {root!r})
from every_kind import CASES
from pecli.kernels.threads import set_threads
cells, counts, names = int(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3].split(",") if sys.argv[3] else []
repeat = int(sys.argv[4])
import numpy as np
from pecli.kernels.exact import row_blocks
from pecli.kernels.threads import run_blocks


class Fill:
    # The machine's ceiling: a fresh float32 table of the same cells set to one value by the same
    # threads in the same blocks (the page faults and memory writes every kind pays, no arithmetic).

    nbytes = cells * 4

    def build(self):
        out = np.zeros((cells // 1024, 1024), np.float32)
        def fill(a, b):
            out[a:b] = 1.0
        run_blocks(fill, row_blocks(out.shape[0], 1024))
        return out


class Ceiling:
    name = "memory fill (ceiling)"
    recipe = staticmethod(lambda cells: Fill())


out = {{}}
for case in [Ceiling, *CASES]:
    if names and case.name not in names and case is not Ceiling:
        continue
    recipe = case.recipe(cells)
    recipe.build()  # warm: caches, compilation, pages
    best = {{n: float("inf") for n in counts}}
    for _ in range(repeat):  # the thread counts in turn, so the machine's drift hits each alike
        for n in counts:
            set_threads(n)
            best[n] = min(best[n], _time(recipe))
    out[case.name] = {{n: [best[n], recipe.nbytes] for n in counts}}
print(json.dumps(out))
"""

_TIME = """
def _time(recipe):
    from _harness import cold_build  # a fresh process's build: a grid's axis tables computed, as by one generate
    t = time.perf_counter(); cold_build(recipe); return time.perf_counter() - t
"""


def case_scaling(cells: int, counts: list[int], names: str, repeat: int) -> list[str]:
    lines = []
    script = _TIME + _SCALE.format(bench=str(HERE), root=str(HERE.parent))
    for compiled in ("0", "1"):
        env = {**os.environ, "PECLI_COMPILED": compiled}
        res = subprocess.run(
            [sys.executable, "-c", script, str(cells), json.dumps(counts), names, str(repeat)],
            check=True,
            capture_output=True,
            text=True,
            env=env,
        )
        data = json.loads(res.stdout.strip().splitlines()[-1])
        head = f"scaling, compiled={compiled}: kind | " + " | ".join(f"{n} thr GB/s" for n in counts)
        head += " | eff@" + " | eff@".join(str(n) for n in counts[1:])
        lines.append(head)
        print(head, flush=True)
        for name, row in data.items():
            t1 = row[str(counts[0])][0] * counts[0]
            gbs = [row[str(n)][1] / row[str(n)][0] / 1e9 for n in counts]
            eff = [t1 / (n * row[str(n)][0]) for n in counts[1:]]
            line = (
                f"  {name:<28} | " + " | ".join(f"{g:6.2f}" for g in gbs) + " | " + " | ".join(f"{e:4.0%}" for e in eff)
            )
            lines.append(line)
            print(line, flush=True)
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gb", type=float, default=1.0, help="table size for e2e and split (float32, 1024 wide)")
    ap.add_argument("--dir", type=Path, default=Path("/dev/shm"), help="where e2e and split write")
    ap.add_argument("--disk", type=Path, default=None, help="also write a .npy here with fsync, against dd + fsync")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cells", type=int, default=1 << 26, help="cells of each scaling table (default 2**26)")
    ap.add_argument("--threads", default="", help="thread counts for scaling (default 1,2,4,… up to the CPUs)")
    ap.add_argument("--kinds", default="", help="scaling: only these rows of every_kind.py (comma-separated names)")
    ap.add_argument("--cases", default="e2e,split,scaling")
    args = ap.parse_args()
    from pecli.kernels.threads import available_cpus

    cpus = available_cpus()
    counts = (
        [int(x) for x in args.threads.split(",")]
        if args.threads
        else sorted({1, 2, *[2**k for k in range(2, 8) if 2**k < cpus], cpus})
    )
    rows = int(args.gb * 1e9) // (DIM * 4)
    print(f"machine: {cpus} CPUs usable; numpy {np.__version__}; python {sys.version.split()[0]}", flush=True)
    cases = args.cases.split(",")
    if "e2e" in cases:
        case_e2e(rows, args.dir, args.disk, args.repeat)
    if "split" in cases:
        case_split(rows, args.dir, args.repeat)
    if "ingest" in cases:
        case_ingest(rows * DIM * 4, args.dir, args.disk, args.repeat)
    if "handoff" in cases:
        for n in counts:
            case_handoff(rows * DIM * 4, args.dir, n, args.repeat)
    if "gil" in cases:
        case_gil(counts)
    if "csv" in cases:
        case_csv(max(1, rows // 16), args.dir, counts, args.repeat)
    if "scaling" in cases:
        case_scaling(args.cells, counts, args.kinds, max(args.repeat, 5))


if __name__ == "__main__":
    main()
