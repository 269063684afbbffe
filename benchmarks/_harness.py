"""What the benchmark scripts share: warming memory and the page cache, running pecli as a user
does, and the one results table each script prints (case | pecli | baseline | ratio | target |
met | memory).  Internal to ``benchmarks/``; run the scripts, not this module."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np


def warm_memory(nbytes: int) -> None:
    """Touch and free ``nbytes`` so the next allocation gets memory the VM has backed (see
    performance.py: memory idle for a few seconds is handed back to the host, and touching it
    again runs at ~0.5 GB/s, which would penalise whichever side ran after a pause)."""
    if nbytes > 0:
        scratch = np.empty(nbytes, dtype=np.uint8)
        scratch[::4096] = 1
        del scratch


def cold_build(recipe: Any) -> Any:
    """``recipe.build()`` as a fresh process makes it (one ``pecli generate``): the axis tables a
    grid keeps between calls (``pecli.kinds.sincos2d.kept_axis_table``, for the blocks of a
    streamed grid) are dropped first, so that repeated timings pay them as a user does."""
    from pecli.kinds.sincos2d import kept_axis_table

    kept_axis_table.cache_clear()
    return recipe.build()


def read_through(path: Path) -> None:
    """Read the file once so that every timed read comes from the page cache."""
    with open(path, "rb", buffering=0) as fp:
        while fp.read(16 << 20):
            pass


def pecli_cmd() -> list[str]:
    """The ``pecli`` of this interpreter's environment (or ``python -m pecli``)."""
    exe = shutil.which("pecli", path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, "-m", "pecli"]


def cli_env() -> dict[str, str]:
    """The environment a user's shell gives pecli, at a fixed width and without colour."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(COLUMNS="100", NO_COLOR="1")
    return env


def mb(n: float) -> str:
    return f"{n / 1e6:,.0f} MB" if n < 1e9 else f"{n / 1e9:.2f} GB"


class Report:
    """The rows of one results table, echoed to stderr as they come, printed whole at the end."""

    def __init__(self, memory_heading: str) -> None:
        self.heads = ["case", "pecli", "baseline", "ratio", "target", "met", memory_heading]
        self.rows: list[list[str]] = []

    def row(self, case: str, pecli: str, baseline: str, ratio: str, target: str, ok: bool | None, mem: str) -> None:
        mark = "" if ok is None else ("yes" if ok else "NO")
        self.rows.append([case, pecli, baseline, ratio, target, mark, mem])
        print("  " + " | ".join(self.rows[-1]), file=sys.stderr, flush=True)

    def print(self) -> None:
        widths = [max(len(h), *(len(r[j]) for r in self.rows)) for j, h in enumerate(self.heads)]
        line = "  ".join(h.ljust(w) for h, w in zip(self.heads, widths, strict=True))
        print(line.rstrip())
        print("-" * len(line))
        for r in self.rows:
            print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())


def profile_pecli(args: list[str], title: str) -> None:
    """cProfile's top entries (cumulative) for one ``pecli ARGS`` process, on stderr."""
    out = subprocess.run(
        [sys.executable, "-m", "cProfile", "-s", "cumulative", "-m", "pecli", *args],
        capture_output=True,
        text=True,
        env=cli_env(),
    )
    lines = out.stdout.splitlines()
    start = next((i for i, s in enumerate(lines) if "ncalls" in s), 0)
    print(f"--- cProfile, one {title} process (cumulative):", file=sys.stderr)
    print("\n".join(lines[max(0, start - 3) : start + 40]), file=sys.stderr)
