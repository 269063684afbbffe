"""identify's whole answer for a fixed set of tables, to compare two commits: a change meant to be
faster, not different, must leave every field of every answer as it was.

The tables: every preset and ``--draws`` recipes drawn as the round trip draws them
(``scripts/identify_roundtrip.py``), three users' tables at four sizes (the paper's formula in
float64 cast to float32, fairseq's float32 steps, transformers' float32 RoPE cos cache: the
``benchmarks/identify.py`` makers), two learned tables drawn N(0, 0.02), and the three positional
arrays of ``benchmarks/checkpoints.py``'s checkpoint.  Each answer is ``identify(table).to_dict()``.

Run each commit's code from its own checkout (a worktree for the old one), then compare::

    git worktree add /tmp/old HEAD~3
    (cd /tmp/old && PYTHONPATH=. python /path/to/scripts/identify_snapshot.py /tmp/old.json)
    PYTHONPATH=. python scripts/identify_snapshot.py /tmp/new.json
    python scripts/identify_snapshot.py --compare /tmp/old.json /tmp/new.json

Exit status 1 when any answer differs (``--compare``), naming the tables.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path.cwd()


def tables(draws: int) -> Iterator[tuple[str, Any]]:
    """``(label, recipe or array)`` of every table the snapshot answers for."""
    sys.path[:0] = [str(ROOT / "scripts"), str(ROOT / "benchmarks")]
    import identify as bench  # benchmarks/identify.py, of the checkout being measured
    import identify_roundtrip as roundtrip

    yield from roundtrip.presets()
    yield from roundtrip.draws(draws, 7)
    for name in ("paper-f64", "fairseq-f32", "hf-rope-cos"):
        for n, d in ((64, 128), (300, 64), (2, 32), (2048, 1024)):
            yield f"{name}-{n}x{d}", bench.maker(name)(n, d)
    rng = np.random.default_rng(5)
    yield "learned-1024x768", (rng.standard_normal((1024, 768)) * 0.02).astype(np.float32)
    yield "learned-64x32", (rng.standard_normal((64, 32)) * 0.02).astype(np.float32)
    yield "inv_freq-64", (1 / 10000.0 ** (np.arange(0, 128, 2) / 128)).astype(np.float32)  # rounded once


def snapshot(draws: int) -> dict[str, Any]:
    from pecli.identification import identify
    from pecli.table import Table

    out: dict[str, Any] = {}
    for label, made in tables(draws):
        try:
            values = made if isinstance(made, np.ndarray) else made.build()
            found = identify(Table(np.asarray(values), None, "t.npy"))
            out[label] = json.loads(json.dumps(found.to_dict(), default=str))
        except Exception as exc:  # the answer, whatever it is, is what is compared
            out[label] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", help="the JSON file to write")
    parser.add_argument("--draws", type=int, default=200, help="drawn recipes (default 200)")
    parser.add_argument("--compare", nargs=2, metavar=("OLD", "NEW"), help="compare two snapshots")
    args = parser.parse_args()
    if args.compare:
        old, new = (json.loads(Path(p).read_text(encoding="utf-8")) for p in args.compare)
        differ = [k for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]
        said = {0: "no answer differs", 1: "1 answer differs"}.get(len(differ), f"{len(differ)} answers differ")
        print(f"{len(old)} and {len(new)} tables; {said}" + (f": {', '.join(differ)}" if differ else ""))
        return 1 if differ else 0
    if args.out is None:
        parser.error("give the JSON file to write, or --compare OLD NEW")
    began = time.perf_counter()
    found = snapshot(args.draws)
    Path(args.out).write_text(json.dumps(found, indent=0, sort_keys=True), encoding="utf-8")
    print(f"{len(found)} tables in {time.perf_counter() - began:.1f} s -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
