"""``pecli identify`` against the issue's targets, side by side with what a user would write.

    python benchmarks/identify.py                 # 4 tables 4096x1024, 256 MB verify, 5 runs (~2 min)
    python benchmarks/identify.py --runs 9 --size 1024 --profile
    python benchmarks/identify.py --cases sweep --runs 1   # widths 128-65536, 1-8192 rows, 1x3,000,000

Targets (the issue): "identify on a 4096×1024 .npy still takes < 2 s; the verification pass
streams at ≥ 1 GB/s".

- identify: ``pecli identify FILE`` in a fresh process (wall time, median of ``--runs``) on
  ``--rows``×``--dim`` float32 .npy files made by independent NumPy code, the way a user or a
  framework makes them (:data:`TABLES`: the paper's formula in float64 cast to float32, fairseq's
  split table in float32, HF's RoPE cos cache in float32, a random normal "learned" table).
  Baseline: a fresh ``python -c`` that checks *one* guess known in advance: ``np.load`` + the same
  NumPy code + ``np.allclose`` (what a user runs when they already know the answer).  The two are
  alternated.  The verdict pecli printed (``--json``, an untimed first run) is in the case name.
- verify: :func:`pecli.identification.verify` (the proof pass: every row of the table read, the
  candidate rebuilt, compared) on a ``--size`` MB .npy opened with :func:`pecli.formats.open_table`
  (memory-mapped), in GB/s of table bytes read, against (a) ``np.load(mmap_mode="r")`` + the same
  table rebuilt by the user's NumPy code + ``np.abs(a - b).max()`` in 4096-row blocks, and
  (b) ``np.load`` + ``np.array_equal`` against an array built beforehand (untimed).  The file is
  read once before timing (page cache), and memory is touched before each timed call (see
  performance.py's ``warm_memory``); the sides are alternated in this process (medians).

- sweep (issue 44): ``pecli identify FILE`` on a sinusoid, a RoPE cos cache and a random table
  at widths 128 to 65536 and 1 to 8192 rows (up to 64 MB), and a random 1×3,000,000 row, beside
  a fresh ``python -c`` that loads the file and makes one pass over it (``np.abs(a).max()``);
  goal: at most 2 s more than that pass, in at most 256 MB.

Peak RSS is each side's own fresh process (``wait4``); a memory-mapped file's pages count in RSS.
``--profile`` prints cProfile's top entries for one ``pecli identify`` process and one verify pass.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from _harness import Report, cli_env, mb, pecli_cmd, profile_pecli, read_through, warm_memory

REPORT = Report("peak RSS pecli / baseline")

HERE = Path(__file__).resolve()
TARGET_SECONDS = 2.0
TARGET_GBS = 1.0

# ------------------------------------------------------------------------ tables, as users make them
#: name -> (label, NumPy source defining ``make(n, d, r0=0, r1=None)``: rows r0..r1 of the table).
#: Independent of pecli: these are the formulas as the frameworks and tutorials write them.
TABLES: dict[str, tuple[str, str]] = {
    "paper-f64": (
        "paper formula f64→f32",
        """
def make(n, d, r0=0, r1=None):
    r1 = n if r1 is None else r1
    position = np.arange(r0, r1)[:, None]
    div_term = np.power(10000.0, np.arange(0, d, 2) / d)
    pe = np.zeros((r1 - r0, d))
    pe[:, 0::2] = np.sin(position / div_term)
    pe[:, 1::2] = np.cos(position / div_term)
    return pe.astype(np.float32)
""",
    ),
    "fairseq-f32": (
        "fairseq split f32, pad row 1",
        """
import math
def make(n, d, r0=0, r1=None):
    r1 = n if r1 is None else r1
    half = d // 2
    step = math.log(10000) / (half - 1)
    freq = np.exp(np.arange(half, dtype=np.float32) * np.float32(-step))
    angle = np.arange(r0, r1, dtype=np.float32)[:, None] * freq[None, :]
    emb = np.concatenate([np.sin(angle), np.cos(angle)], axis=1)
    if r0 <= 1 < r1:
        emb[1 - r0, :] = 0
    return emb
""",
    ),
    "hf-rope-cos": (
        "HF RoPE cos cache f32",
        """
def make(n, d, r0=0, r1=None):
    r1 = n if r1 is None else r1
    # transformers' float32 steps, each rounded once from float64 so the table is the same on every
    # CPU: NumPy's own float32 power and cos take Intel SVML on AVX-512 (up to 7e-6 off here) and
    # other code on AVX2. The power and the cos as a correctly rounding libm gives them.
    exponents = np.arange(0, d, 2).astype(np.float32) / np.float32(d)
    inv_freq = np.float32(1.0) / (np.float64(10000.0) ** exponents.astype(np.float64)).astype(np.float32)
    t = np.arange(r0, r1, dtype=np.float32)
    freqs = np.outer(t, inv_freq)
    emb = np.concatenate([freqs, freqs], axis=-1)
    return np.cos(emb.astype(np.float64)).astype(np.float32)
""",
    ),
    "learned": (
        "learned N(0, 0.02) f32",
        """
def make(n, d, r0=0, r1=None):
    r1 = n if r1 is None else r1
    return np.random.default_rng(0).normal(0.0, 0.02, (n, d)).astype(np.float32)[r0:r1]
""",
    ),
}


def maker(name: str) -> Callable[..., np.ndarray]:
    scope: dict[str, Any] = {"np": np}
    exec(TABLES[name][1], scope)
    return scope["make"]  # type: ignore[no-any-return]


#: The baseline of the identify case: a user checking one guess they already know.
_CHECK_ONE_GUESS = """
import sys
import numpy as np
exec(sys.argv[2])
a = np.load(sys.argv[1])
b = make(*a.shape)
print(np.allclose(a, b, rtol=0, atol=1e-6))
"""

# ------------------------------------------------------------------------------------- helpers
#: Runs a command as its grandchild and reports its wall time and peak RSS (performance.py's).
_LAUNCH = """
import json, os, sys, time
t0 = time.perf_counter()
pid = os.fork()
if pid == 0:
    fd = os.open(os.devnull, os.O_WRONLY)
    os.dup2(fd, 1)
    os.execvp(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - t0
print(json.dumps({"rc": os.waitstatus_to_exitcode(status), "rss": usage.ru_maxrss * 1024, "wall": wall}))
"""


def launch(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, int]:
    """Wall seconds and peak RSS (bytes) of ``cmd`` run in a fresh process (stdout discarded)."""
    out = subprocess.run([sys.executable, "-c", _LAUNCH, *cmd], capture_output=True, text=True, env=env)
    report = json.loads(out.stdout.strip().splitlines()[-1])
    if report["rc"]:
        raise RuntimeError(f"{' '.join(cmd)} failed (exit {report['rc']}): {out.stderr.strip()[-500:]}")
    return float(report["wall"]), int(report["rss"])


def side_by_side(
    ours: list[str], theirs: list[str], runs: int, env: dict[str, str], warm: int = 0
) -> tuple[float, float, dict[str, int]]:
    """Median wall seconds of ``ours`` and ``theirs``, each a fresh process, alternated ``runs``
    times, and each side's peak RSS (``warm``: memory backed before each, see warm_memory)."""
    times: dict[str, list[float]] = {"pecli": [], "base": []}
    rss = {"pecli": 0, "base": 0}
    for _ in range(runs):
        for side, cmd in (("pecli", ours), ("base", theirs)):
            if warm:
                warm_memory(warm)
            wall, peak = launch(cmd, env)
            times[side].append(wall)
            rss[side] = max(rss[side], peak)
    return statistics.median(times["pecli"]), statistics.median(times["base"]), rss


def alternate(fns: dict[str, Callable[[], Any]], repeat: int, warm: int) -> dict[str, float]:
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            warm_memory(warm)
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


# ------------------------------------------------------------------------------ verify, the sides
def pecli_verify(path: Path, checks: list[tuple[str, float]]) -> list[Any]:
    """pecli's proof pass: ``verify`` for one recipe, ``verify_all`` (one read) for several."""
    from pecli.formats import open_table
    from pecli.proof import verify, verify_all
    from pecli.sources import parse_recipe

    recipes = [(parse_recipe(spec), atol) for spec, atol in checks]
    with open_table(path) as table:
        if len(recipes) == 1:
            return [verify(table, *recipes[0])]
        return verify_all(table, recipes)


def user_blocks(path: Path, name: str, block: int = 4096) -> float:
    """What a user writes: mmap the file, rebuild the same table block by block, max |a − b|."""
    make = maker(name)
    a = np.load(path, mmap_mode="r")
    n, d = a.shape
    worst = 0.0
    for r0 in range(0, n, block):
        r1 = min(n, r0 + block)
        worst = max(worst, float(np.abs(a[r0:r1] - make(n, d, r0, r1)).max()))
    return worst


def user_array_equal(path: Path, prebuilt: np.ndarray) -> bool:
    return bool(np.array_equal(np.load(path), prebuilt))


def run_child(args: list[str]) -> None:
    """``--child KIND ...``: one side of the verify case in a fresh process (for its peak RSS)."""
    kind, path = args[0], Path(args[1])
    if kind == "pecli":
        checks = json.loads(args[2])
        assert all(v.holds for v in pecli_verify(path, [(c, float(a)) for c, a in checks]))
    elif kind == "blocks":
        user_blocks(path, args[2])
    elif kind == "equal":
        prebuilt = np.load(path)  # the user's array, already in memory (however they made it)
        assert user_array_equal(path, prebuilt)  # peak: the prebuilt array plus the full read


def child_rss(*args: str) -> int:
    return launch([sys.executable, str(HERE), "--child", *args])[1]


# --------------------------------------------------------------------------------------- cases
def case_identify(where: Path, rows: int, dim: int, runs: int, names: list[str]) -> dict[str, dict[str, Any]]:
    pecli = pecli_cmd()
    env = cli_env()
    found: dict[str, dict[str, Any]] = {}
    for name in names:
        label, source = TABLES[name]
        path = where / f"{name}.npy"
        np.save(path, maker(name)(rows, dim))
        read_through(path)
        out = subprocess.run([*pecli, "identify", str(path), "--json"], capture_output=True, text=True, env=env)
        if out.returncode not in (0, 1):
            raise RuntimeError(f"pecli identify {path} failed (exit {out.returncode}): {out.stderr[-500:]}")
        report = json.loads(out.stdout)
        found[name] = report
        best = report["best"]["name"] if report.get("best") else report.get("kind") or "-"
        verdict = f"{report['verdict']} {best}" if report["verdict"] in ("match", "close") else report["verdict"]
        ours = [*pecli, "identify", str(path)]
        theirs = [sys.executable, "-c", _CHECK_ONE_GUESS, str(path), source]
        launch(theirs, env)  # untimed: .pyc files, page cache
        tp, tb, rss = side_by_side(ours, theirs, runs, env, warm=512 << 20)
        REPORT.row(
            f"identify {rows}x{dim} {label} [{verdict}]",
            f"{tp:.2f} s",
            f"{tb:.2f} s",
            f"{tp / tb:.1f}x the 1-guess check",
            f"< {TARGET_SECONDS:g} s",
            tp < TARGET_SECONDS,
            f"{mb(rss['pecli'])} / {mb(rss['base'])}",
        )
    return found


#: The width sweep's tables (issue 44): a sinusoid, a RoPE cache and a random one.
SWEEP_TABLES = ("paper-f64", "hf-rope-cos", "learned")
SWEEP_WIDTHS = (128, 1024, 8192, 65536)
SWEEP_ROWS = (1, 64, 8192)
#: Tables of the sweep larger than this are left out (8192 × 65536 would be 2 GB).
SWEEP_MAX_BYTES = 64 << 20
#: identify's memory goal: the 256 MB streaming runs in.
SWEEP_RSS = 256 << 20

#: The sweep's baseline: the file loaded and one full pass over it (what any look at the table costs).
_ONE_PASS = """
import sys
import numpy as np
a = np.load(sys.argv[1])
print(float(np.abs(a).max()))
"""


def case_sweep(where: Path, runs: int) -> None:
    """identify's time and peak RSS across widths and lengths, beside ``np.load`` + one pass:
    the goal is at most 2 s more than that pass, within 256 MB, whatever the width."""
    pecli = pecli_cmd()
    env = cli_env()
    points = [(n, d) for d in SWEEP_WIDTHS for n in SWEEP_ROWS if n * d * 4 <= SWEEP_MAX_BYTES]
    cases = [(name, n, d) for name in SWEEP_TABLES for n, d in points] + [("learned", 1, 3_000_000)]
    for name, n, d in cases:
        path = where / f"sweep-{name}-{n}x{d}.npy"
        np.save(path, maker(name)(n, d))
        read_through(path)
        out = subprocess.run([*pecli, "identify", str(path), "--json"], capture_output=True, text=True, env=env)
        verdict = json.loads(out.stdout)["verdict"] if out.returncode in (0, 1) else f"exit {out.returncode}"
        ours = [*pecli, "identify", str(path)]
        theirs = [sys.executable, "-c", _ONE_PASS, str(path)]
        tp, tb, rss = side_by_side(ours, theirs, runs, env)
        REPORT.row(
            f"sweep {n}x{d} {TABLES[name][0]} [{verdict}]",
            f"{tp:.2f} s",
            f"{tb:.2f} s",
            f"+{tp - tb:.2f} s over load+1 pass",
            f"≤ +{TARGET_SECONDS:g} s, ≤ {mb(SWEEP_RSS)}",
            tp - tb <= TARGET_SECONDS and rss["pecli"] <= SWEEP_RSS,
            f"{mb(rss['pecli'])} / {mb(rss['base'])}",
        )
        path.unlink()


def case_verify(where: Path, size_mb: float, dim: int, runs: int, checks: list[tuple[str, str]], profile: bool) -> None:
    """``checks``: (name, spec at any length) of the candidates identify proved on the small table."""
    from dataclasses import replace

    from pecli.sources import parse_recipe

    name = "paper-f64"
    rows = max(1, int(size_mb * (1 << 20)) // (dim * 4))
    path = where / f"verify-{name}.npy"
    prebuilt = maker(name)(rows, dim)
    np.save(path, prebuilt)
    nbytes = prebuilt.nbytes
    read_through(path)
    # identify's proof tolerance for each candidate at this length (what _decide passes to verify_all)
    from pecli.fitting import Sample
    from pecli.formats import open_table
    from pecli.identification import tolerances

    with open_table(path) as table:
        sample = Sample.read(table)
        recipes = [(n, replace(parse_recipe(spec), length=rows)) for n, spec in checks]  # type: ignore[type-var]
        sized = [(n, r.spec(), tolerances(r, sample)[0]) for n, r in recipes]
    sets: dict[str, list[tuple[str, float]]] = {f"pecli {n}": [(spec, atol)] for n, spec, atol in sized}
    if len(sized) > 1:
        sets["pecli all"] = [(spec, atol) for _, spec, atol in sized]
    fns: dict[str, Callable[[], Any]] = {k: (lambda c=c: pecli_verify(path, c)) for k, c in sets.items()}
    fns["blocks"] = lambda: user_blocks(path, name)
    fns["equal"] = lambda: user_array_equal(path, prebuilt)
    for k, c in sets.items():  # untimed: code paths, caches; and the proof itself must hold
        found = pecli_verify(path, c)
        if not all(v.holds for v in found):
            raise RuntimeError(f"{k}: the proof does not hold on the {rows}-row table: {found}")
    assert fns["equal"]()
    t = alternate(fns, runs, 2 * nbytes)
    rss = {k: child_rss("pecli", str(path), json.dumps(c)) for k, c in sets.items()}
    rss["blocks"] = child_rss("blocks", str(path), name)
    rss["equal"] = child_rss("equal", str(path), name)
    gbs = {k: nbytes / v / 1e9 for k, v in t.items()}
    size = f"{rows}x{dim} ({mb(nbytes)})"
    lines: list[tuple[str, str, str]] = []
    for n, spec, atol in sized:
        print(f"    verify {n}: {spec} --atol {atol:.3g}", file=sys.stderr)
        lines.append((f"pecli {n}", f"verify {n} {size}", "blocks"))
    lines.insert(1, (f"pecli {sized[0][0]}", f"verify {sized[0][0]} {size}", "equal"))
    if len(sized) > 1:
        lines.append(("pecli all", f"verify_all {'+'.join(n for n, _, _ in sized)} {size}", "blocks"))
    for side, case, base in lines:
        what = "vs mmap+rebuild+max|a-b|" if base == "blocks" else "vs load+array_equal"
        REPORT.row(
            f"{case} {what}",
            f"{gbs[side]:.2f} GB/s",
            f"{gbs[base]:.2f} GB/s",
            f"{gbs[side] / gbs[base]:.2f}x",
            f"≥ {TARGET_GBS:g} GB/s",
            gbs[side] >= TARGET_GBS,
            f"{mb(rss[side])} / {mb(rss[base])}" + (" (+prebuilt)" if base == "equal" else ""),
        )
    if profile:
        for k, c in sets.items():
            prof = cProfile.Profile()
            prof.enable()
            pecli_verify(path, c)
            prof.disable()
            text = io.StringIO()
            pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(8)
            print(f"--- cProfile, one verify pass, {k}:", file=sys.stderr)
            print(text.getvalue(), file=sys.stderr)
    path.unlink()


def profile_identify(where: Path, name: str) -> None:
    profile_pecli(["identify", str(where / f"{name}.npy")], f"`pecli identify {name}.npy`")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5, help="timed runs per side (medians)")
    ap.add_argument("--rows", type=int, default=4096, help="identify: table rows")
    ap.add_argument("--dim", type=int, default=1024, help="table width (both cases)")
    ap.add_argument("--size", type=float, default=256, help="verify: table size in MiB (256: 65536x1024 float32)")
    ap.add_argument("--tables", default=",".join(TABLES), help=f"identify: some of {','.join(TABLES)}")
    ap.add_argument("--cases", default="identify,verify", help="identify, verify, sweep (widths)")
    ap.add_argument("--profile", action="store_true", help="cProfile one identify process and one verify pass")
    ap.add_argument("--dir", default=None, help="where the temporary .npy files go (default: the system's)")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        run_child(args.child)
        return
    cases = args.cases.split(",")
    names = args.tables.split(",")
    print(f"pecli identify benchmark: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}", file=sys.stderr)
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="pecli-bench-identify-") as tmp:
        where = Path(tmp)
        found: dict[str, dict[str, Any]] = {}
        if "identify" in cases:
            found = case_identify(where, args.rows, args.dim, args.runs, names)
            if args.profile:
                profile_identify(where, names[0])
        if "sweep" in cases:
            case_sweep(where, args.runs)
        if "verify" in cases:
            report = found.get("paper-f64")
            if report is None:  # identify not run: ask pecli once, in this process
                from pecli.identification import identify
                from pecli.table import Table

                small = maker("paper-f64")(args.rows, args.dim)
                report = identify(Table(small, None, "memory")).to_dict()
            # The candidates identify proved on the paper-formula table: the proof pass it ran.
            checks = [(c["name"], c["spec"]) for c in [report["best"], *report["alternatives"]]]
            case_verify(where, args.size, args.dim, args.runs, checks, args.profile)
    print(f"load average after: {os.getloadavg()[0]:.2f}", file=sys.stderr)
    REPORT.print()


if __name__ == "__main__":
    main()
