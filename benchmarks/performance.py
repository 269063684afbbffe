"""pecli against its baselines, side by side in one run: generation, CSV, streaming, start-up.

    python benchmarks/performance.py            # quick: 2 GB stream, 3 repeats (~2 min)
    python benchmarks/performance.py --stream-gb 16 --repeat 5     # the full run (~10 min)

Cases, each timed alternately with its baselines in this process (medians of ``--repeat``):

- generate: ``Sinusoidal(rows, dim).build()`` (float32, in memory) against the textbook
  NumPy function and the textbook torch code (the usual tutorial formulations, reimplemented below);
  float64 (the exact kernel) against the NumPy one too.
- csv: pecli's CSV writer against ``np.savetxt(fmt="%.9g")`` on the same float32 array, both to
  a file.  ``%.9g`` is the shortest printf format that round-trips every float32 (9 significant
  digits); it is also what pecli writes, so the two files are byte-identical (checked).
- stream: ``pecli generate --len N --dim D -o DIR/big.npy -q`` in a child process against a raw
  sequential write of the same number of bytes from a preallocated buffer to a file in the same
  directory (pecli does not fsync, so neither does the baseline); before each run, dirty pages are
  flushed and the VM given ``--settle`` seconds, so that both sides start from the same memory.
- kinds (not in the default ``--cases``): one table, a row per kind and per preset family, each
  ~512 MB (``--quick``: 32 MB): in-memory GB/s, pecli's time over the framework's own code, peak
  RSS of ``pecli generate -o`` and of a build, max ulp against the exact table
  (benchmarks/every_kind.py, which also runs alone).
- start-up: ``pecli --help`` against ``python -c "import click"`` and ``pecli generate --len 120
  --dim 8`` against ``python -c "import click, numpy, rich"``, medians of ``--startup-runs``.

Peak RSS is each side's own process (a child per implementation, ``getrusage``/``wait4``).
The machine's other load shows up as noise: compare ratios, and repeat.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve()


# ----------------------------------------------------------------------------------- baselines
def numpy_textbook(seq_len: int, d_model: int) -> np.ndarray:
    """The textbook NumPy function (``np.power(10000, 2i/d)`` denominators; float64 output)."""
    position = np.arange(seq_len)[:, np.newaxis]
    div_term = np.power(10000, (2 * (np.arange(d_model // 2)) / np.float32(d_model)))
    pe = np.zeros((seq_len, d_model))
    pe[:, 0::2] = np.sin(position / div_term)
    pe[:, 1::2] = np.cos(position / div_term)
    return pe


def torch_textbook(seq_len: int, d_model: int) -> Any:
    """The textbook torch code (``torch.pow`` denominators; float32 output)."""
    import torch

    if d_model % 2 != 0:
        raise ValueError("d_model must be even")
    pos = torch.arange(0, seq_len).unsqueeze(1).float()
    i = torch.arange(0, d_model // 2).float()
    denom = torch.pow(10000, 2 * i / d_model)
    angle = pos / denom
    pe = torch.zeros(seq_len, d_model)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return pe


def pecli_build(rows: int, dim: int, dtype: str = "float32") -> np.ndarray:
    from pecli import Sinusoidal

    return Sinusoidal(rows, dim, dtype=dtype).build()  # type: ignore[arg-type]


GENERATORS: dict[str, Callable[..., Any]] = {
    "pecli": pecli_build,
    "pecli-f64": lambda n, d: pecli_build(n, d, "float64"),
    "numpy_textbook": numpy_textbook,
    "torch_textbook": torch_textbook,
}


def have_torch() -> bool:
    import importlib.util

    return importlib.util.find_spec("torch") is not None


# ------------------------------------------------------------------------------------- helpers
def timed(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    result = fn()
    dt = time.perf_counter() - t0
    del result
    return dt


def warm_memory(nbytes: int) -> None:
    """Touch and free ``nbytes``, so that the next allocation gets memory the VM has backed.

    On this kind of VM, memory freed for a couple of seconds is handed back to the host, and
    touching it again runs at ~0.5 GB/s instead of >10 GB/s: whichever side ran after a pause
    would pay for it.  Every timed call starts from the same warm state instead.
    """
    if nbytes > 0:
        scratch = np.empty(nbytes, dtype=np.uint8)
        scratch[::4096] = 1
        del scratch


def alternate(fns: dict[str, Callable[[], Any]], repeat: int, warm: int = 0) -> dict[str, float]:
    """Median seconds of each function, run in turn ``repeat`` times (the load hits all alike)."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            warm_memory(warm)
            times[name].append(timed(fn))
    return {k: statistics.median(v) for k, v in times.items()}


#: Runs a command as its grandchild and reports its wall time and peak RSS.  A child forked
#: from this (large) process would inherit its high-water mark; the launcher's is ~10 MB.
_LAUNCH = """
import json, os, sys, time
t0 = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - t0
rusage = {"rss": usage.ru_maxrss * 1024, "disk": usage.ru_inblock * 512}
print(json.dumps({"rc": os.waitstatus_to_exitcode(status), "wall": wall, **rusage}))
"""


def launch(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, int]:
    """Wall seconds and peak RSS (bytes) of ``cmd`` run in a fresh process."""
    wall, rss, _ = launch_reading(cmd, env)
    return wall, rss


def launch_reading(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, int, int]:
    """:func:`launch`, and the bytes the process read from disk (``ru_inblock``: not what the
    page cache served)."""
    out = subprocess.run([sys.executable, "-c", _LAUNCH, *cmd], capture_output=True, text=True, env=env)
    report = json.loads(out.stdout.strip().splitlines()[-1])
    if report["rc"]:
        raise RuntimeError(f"{' '.join(cmd)} failed (exit {report['rc']}): {out.stderr.strip()[-500:]}")
    return float(report["wall"]), int(report["rss"]), int(report["disk"])


def child_rss(*args: str) -> int:
    """Peak RSS (bytes) of this script run as ``--child ARGS`` in a fresh process."""
    return launch([sys.executable, str(HERE), "--child", *args])[1]


def run_child(args: list[str]) -> None:
    kind = args[0]
    if kind == "generate":
        name, rows, dim = args[1], int(args[2]), int(args[3])
        GENERATORS[name](rows, dim)


def spawn(cmd: list[str], env: dict[str, str] | None = None) -> float:
    """Wall seconds of a command (start-up timings: no launcher in between)."""
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True)
    return time.perf_counter() - t0


def settle(seconds: float) -> None:
    """Flush dirty pages, then wait: on this kind of VM, freed memory is handed back to the host
    after a couple of seconds and the page cache of the next write must be backed again (at
    ~0.5 GB/s).  Whichever side ran first after a delete would otherwise get warm pages."""
    os.sync()
    time.sleep(seconds)


def mb(n: float) -> str:
    return f"{n / 1e6:,.0f} MB" if n < 1e9 else f"{n / 1e9:.1f} GB"


ROWS: list[list[str]] = []


def row(
    case: str, pecli: str, baseline: str, base: str, ratio: str, target: str, ok: bool | None, gbs: str, rss: str
) -> None:
    mark = "" if ok is None else ("yes" if ok else "NO")
    ROWS.append([case, pecli, baseline, base, ratio, target, mark, gbs, rss])
    print("  " + " | ".join(ROWS[-1]), file=sys.stderr, flush=True)  # progress while it runs


def print_table() -> None:
    heads = ["case", "pecli", "baseline", "baseline time", "ratio", "target", "met", "pecli GB/s", "peak RSS"]
    widths = [max(len(h), *(len(r[j]) for r in ROWS)) for j, h in enumerate(heads)]
    line = "  ".join(h.ljust(w) for h, w in zip(heads, widths, strict=True))
    print(line)
    print("-" * len(line))
    for r in ROWS:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))


# --------------------------------------------------------------------------------------- cases
def case_generate(rows: int, dim: int, repeat: int, float64: bool) -> None:
    fns = {"pecli": lambda: pecli_build(rows, dim), "numpy_textbook": lambda: numpy_textbook(rows, dim)}
    if have_torch():
        fns["torch_textbook"] = lambda: torch_textbook(rows, dim)
    warm = rows * dim * 8 * 3  # more than any side's peak (the NumPy formula: float64 table and temporaries)
    alternate(fns, 1, warm)  # untimed: code paths, pecli's frequency and Z0 caches
    t = alternate(fns, repeat, warm)
    nbytes = rows * dim * 4
    rss = {k: child_rss("generate", k, str(rows), str(dim)) for k in fns}
    case = f"generate {rows}x{dim} float32"
    gbs = f"{nbytes / t['pecli'] / 1e9:.2f}"
    for name, target in (("numpy_textbook", 13.0), ("torch_textbook", 5.0)):
        if name not in t:
            row(
                case,
                f"{t['pecli']:.3f} s",
                "textbook torch" if name == "torch_textbook" else "textbook NumPy",
                "—",
                "torch missing",
                f"≥ {target:g}x",
                None,
                gbs,
                "—",
            )
            continue
        ratio = t[name] / t["pecli"]
        row(
            case,
            f"{t['pecli']:.3f} s",
            "textbook torch" if name == "torch_textbook" else "textbook NumPy",
            f"{t[name]:.3f} s",
            f"{ratio:.1f}x faster",
            f"≥ {target:g}x",
            ratio >= target,
            gbs,
            f"{mb(rss['pecli'])} vs {mb(rss[name])}",
        )
    if float64:
        t64 = alternate(
            {
                "pecli-f64": lambda: pecli_build(rows, dim, "float64"),
                "numpy_textbook": lambda: numpy_textbook(rows, dim),
            },
            1,
        )
        rss64 = child_rss("generate", "pecli-f64", str(rows), str(dim))
        ratio = t64["numpy_textbook"] / t64["pecli-f64"]
        row(
            f"generate {rows}x{dim} float64 (exact)",
            f"{t64['pecli-f64']:.3f} s",
            "textbook NumPy",
            f"{t64['numpy_textbook']:.3f} s",
            f"{ratio:.2f}x faster",
            "(info)",
            None,
            f"{rows * dim * 8 / t64['pecli-f64'] / 1e9:.2f}",
            f"{mb(rss64)} vs {mb(rss['numpy_textbook'])}",
        )


def case_csv(rows: int, dim: int, repeat: int, where: Path) -> None:
    from pecli.formats import write_table
    from pecli.table import Table

    data = pecli_build(rows, dim)
    table = Table(data, None, "memory")
    ours, theirs = where / "pecli.csv", where / "savetxt.csv"

    def pecli_csv() -> None:
        write_table(table, ours, force=True, sidecar=False)

    def savetxt() -> None:
        np.savetxt(theirs, data, fmt="%.9g", delimiter=",")

    t = alternate({"pecli": pecli_csv, "savetxt": savetxt}, repeat, 4 * data.nbytes)
    body = ours.read_bytes().split(b"\n", 1)[1]
    same = body == theirs.read_bytes()
    back = np.loadtxt(ours, delimiter=",", skiprows=1, dtype=np.float64).astype(np.float32)
    exact = back.tobytes() == data.tobytes()
    size = ours.stat().st_size
    ours.unlink()
    theirs.unlink()
    ratio = t["savetxt"] / t["pecli"]
    row(
        f"csv {rows}x{dim} float32 ({mb(size)} text)",
        f"{t['pecli']:.3f} s",
        "np.savetxt %.9g",
        f"{t['savetxt']:.3f} s",
        f"{ratio:.1f}x faster",
        "≥ 3x",
        ratio >= 3 and same and exact,
        f"{data.nbytes / t['pecli'] / 1e9:.2f}",
        f"bytes same: {same}, read back bit-exact: {exact}",
    )


def case_stream(gb: float, dim: int, repeat: int, where: Path, formats: list[str], pause: float) -> None:
    row_bytes = dim * 4
    rows = math.ceil(gb * 1e9 / row_bytes)
    nbytes = rows * row_bytes
    need = 2.2 * nbytes
    if shutil.disk_usage(where).free < need:
        raise SystemExit(f"--stream-gb {gb}: {where} needs {mb(need)} free")
    pecli = shutil.which("pecli", path=str(Path(sys.executable).parent)) or "pecli"
    buf = np.frombuffer(pecli_build((8 << 20) // row_bytes, dim).tobytes(), dtype=np.uint8)  # 8 MiB of table

    def raw() -> float:
        path = where / "raw.bin"
        t0 = time.perf_counter()
        with open(path, "wb") as fp:
            left = nbytes
            while left:
                n = min(left, len(buf))
                fp.write(buf[:n].data)
                left -= n
        dt = time.perf_counter() - t0
        path.unlink()
        return dt

    for fmt in formats:
        out = where / f"big.{fmt}"
        times: dict[str, list[float]] = {"pecli": [], "raw": []}
        peak = 0
        for _ in range(repeat):
            settle(pause)
            dt, rss = launch([pecli, "generate", "--len", str(rows), "--dim", str(dim), "-o", str(out), "-q"])
            size = out.stat().st_size
            out.unlink()
            Path(str(out) + ".json").unlink(missing_ok=True)
            times["pecli"].append(dt)
            peak = max(peak, rss)
            settle(pause)
            times["raw"].append(raw())
            print(f"    stream .{fmt}: pecli {dt:.1f} s, raw {times['raw'][-1]:.1f} s", file=sys.stderr, flush=True)
        tp, tr = statistics.median(times["pecli"]), statistics.median(times["raw"])
        share = tr / tp  # throughput of the same table bytes, pecli over raw
        row(
            f"stream {mb(size)} .{fmt} (rows {rows}x{dim})",
            f"{tp:.1f} s",
            "raw write, same bytes",
            f"{tr:.1f} s",
            f"{share:.2f} of raw",
            "≥ 0.80" if fmt == "npy" else "(info)",
            (share >= 0.8 and peak <= 256e6) if fmt == "npy" else None,
            f"{size / tp / 1e9:.2f}",
            f"{mb(peak)} (≤ 256 MB)",
        )


def case_startup(runs: int) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(COLUMNS="80", NO_COLOR="1")
    py = sys.executable
    pecli = shutil.which("pecli", path=str(Path(py).parent)) or "pecli"
    cmds = {
        "click": [py, "-c", "import click"],
        "help": [pecli, "--help"],
        "cnr": [py, "-c", "import click, numpy, rich"],
        "generate": [pecli, "generate", "--len", "120", "--dim", "8"],
    }
    for cmd in cmds.values():  # writes any missing .pyc files, as an installed package has them
        spawn(cmd, env)
    times: dict[str, list[float]] = {k: [] for k in cmds}
    for _ in range(runs):
        for k, cmd in cmds.items():
            times[k].append(spawn(cmd, env))
    med = {k: statistics.median(v) for k, v in times.items()}
    for ours, theirs, label, base in (
        ("help", "click", "start-up pecli --help", 'python -c "import click"'),
        ("generate", "cnr", "start-up pecli generate --len 120 --dim 8", 'python -c "import click, numpy, rich"'),
    ):
        ratio = med[ours] / med[theirs]
        row(
            label,
            f"{med[ours] * 1e3:.1f} ms",
            base,
            f"{med[theirs] * 1e3:.1f} ms",
            f"{ratio:.2f}x",
            "≤ 1.3x",
            ratio <= 1.3,
            "—",
            "—",
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=131072, help="generate: table rows")
    ap.add_argument("--dim", type=int, default=1024, help="table width (all cases)")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per side (medians)")
    ap.add_argument("--csv-rows", type=int, default=8192)
    ap.add_argument("--stream-gb", type=float, default=2.0, help="stream case size; the full run uses 16")
    ap.add_argument("--stream-repeat", type=int, default=None, help="default: 1 above 4 GB, else --repeat")
    ap.add_argument("--stream-formats", default="npy", help="e.g. npy,h5,safetensors,npz (ratio target on npy)")
    ap.add_argument(
        "--settle", type=float, default=None, help="stream: seconds to wait after sync before each run (8 + 1.5/GB)"
    )
    ap.add_argument("--startup-runs", type=int, default=15)
    ap.add_argument("--float64", action="store_true", help="also time the float64 (exact kernel) build")
    ap.add_argument("--dir", default=".", help="where the stream and CSV files go")
    ap.add_argument("--cases", default="generate,csv,stream,startup", help="also: kinds")
    ap.add_argument("--quick", action="store_true", help="kinds: 32 MB tables instead of 512 MB (~3 min)")
    ap.add_argument("--kinds-only", default=None, help="kinds: comma-separated rows (e.g. llama,fairseq)")
    ap.add_argument("--kinds-json", default=None, help="kinds: also write the results to this JSON file")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        run_child(args.child)
        return
    cases = args.cases.split(",")
    print(f"pecli performance: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}", file=sys.stderr)
    with tempfile.TemporaryDirectory(dir=args.dir, prefix=".pecli-bench-") as tmp:
        where = Path(tmp)
        if "generate" in cases:
            case_generate(args.rows, args.dim, args.repeat, args.float64)
        if "csv" in cases:
            case_csv(args.csv_rows, args.dim, args.repeat, where)
        if "stream" in cases:
            repeat = args.stream_repeat or (1 if args.stream_gb > 4 else args.repeat)
            pause = args.settle if args.settle is not None else 8 + 1.5 * args.stream_gb
            case_stream(args.stream_gb, args.dim, repeat, where, args.stream_formats.split(","), pause)
        if "startup" in cases:
            case_startup(args.startup_runs)
        if "kinds" in cases:
            import every_kind

            only = args.kinds_only.split(",") if args.kinds_only else None
            every_kind.run(args.quick, args.repeat, only, args.kinds_json, str(where))
    print(f"load average after: {os.getloadavg()[0]:.2f}", file=sys.stderr)
    if ROWS:
        print_table()


if __name__ == "__main__":
    main()
