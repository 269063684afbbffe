"""What the precision vocabulary of issue 41 costs ``diff`` and ``identify``, side by side in one process.

    python benchmarks/causes.py              # 6 cases, 5 alternated runs each (~1 min)
    python benchmarks/causes.py --runs 9

Issue 41 gave the rope kind four reduced pipelines (pecli.precision), the scalings' slips (YaRN's
swapped betas, LongRoPE's missed switch), a fit of other widths, and a proof that holds value by
value.  The target: ``diff`` and ``identify`` no slower than before on tables that need none of it.

- pecli: :func:`pecli.diff.compare` (the cause search included) and :func:`pecli.identify` as they are.
- baseline: the same calls with that vocabulary switched off in this process: no slips (the reduced
  pipelines and the scalings' slips diff tries one step from a recipe), no reduced pipelines in
  rope's fit, the proof without per-value ulps (what pecli searched before issue 41).  The two
  sides are alternated; medians are reported.

The tables are made by independent NumPy code (HF's float32 RoPE written out, the paper's formula
in float64 cast once) or by pecli's recipes where the case is a recipe changed in one parameter.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import time
import types
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from _harness import Report

import pecli.identification
import pecli.kinds.rope.fit as rope_fit
from pecli import Sinusoidal, compare, identify
from pecli.kinds.learned import Learned
from pecli.kinds.rope import Rope
from pecli.kinds.sincos2d import Sincos2d
from pecli.recipe import Recipe
from pecli.table import Table

REPORT = Report("")
TARGET = 1.10  # no slower, within this machine's noise


def hf_rope(n: int, d: int, theta: float = 10000.0) -> np.ndarray:
    """transformers' LlamaRotaryEmbedding cos cache in float32, written out in NumPy."""
    inv = (np.float32(1) / np.power(np.float64(theta), np.arange(0, d, 2) / d).astype(np.float32)).astype(np.float32)
    freqs = np.arange(n, dtype=np.float32)[:, None] * inv[None, :]
    return np.cos(np.concatenate([freqs, freqs], 1).astype(np.float64)).astype(np.float32)


def paper(n: int, d: int, start: int = 0) -> np.ndarray:
    p = np.arange(start, start + n)[:, None]
    angle = p / 10000 ** (2 * np.arange(d // 2) / d)
    out = np.empty((n, d))
    out[:, 0::2], out[:, 1::2] = np.sin(angle), np.cos(angle)
    return out.astype(np.float32)


LLAMA3 = {
    "scaling": "llama3",
    "factor": 8.0,
    "original_max_position_embeddings": 8192,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
}
#: name -> (table A, table B): none needs the new vocabulary.
CASES: dict[str, tuple[Callable[[], Any], Callable[[], Any]]] = {
    "rope base (HF code vs recipe)": (lambda: hf_rope(4096, 128, 500000.0), lambda: Rope(4096, 128)),
    "rope llama3 dropped": (lambda: Rope(4096, 128, base=5e5, **LLAMA3).build(), lambda: Rope(4096, 128, base=5e5)),  # type: ignore[arg-type]
    "rope noise, no cause": (
        lambda: hf_rope(2048, 64) + np.float32(1e-3) * np.sin(np.arange(2048 * 64, dtype=np.float32)).reshape(2048, 64),
        lambda: Rope(2048, 64),
    ),
    "sinusoid start 3 (paper code)": (lambda: paper(2000, 64, 3), lambda: Sinusoidal(2000, 64)),
    "two files, rope base": (lambda: hf_rope(2048, 64, 500000.0), lambda: hf_rope(2048, 64)),
    "identify-only: HF rope 8192x128": (lambda: hf_rope(8192, 128), lambda: None),
    "identify-only: MAE grid 14x14x768": (lambda: Sincos2d("14x14", 768).build(), lambda: None),
    "identify-only: a torch-like normal draw 512x768": (
        lambda: np.random.default_rng(0).normal(0, 0.02, (512, 768)).astype(np.float32),
        lambda: None,
    ),
}


@contextlib.contextmanager
def before_issue_41() -> Iterator[None]:
    """The vocabulary of issue 41 switched off: reduced pipelines, slips, per-value proofs, and the
    second session's reach (pecli's own learned draws, the note on what a short table cannot tell,
    near misses tried in their other pipelines, ramps' original lengths from the wide grid)."""
    saved_slips = Recipe.slips, Rope.slips
    saved_grid, saved_collapsed = rope_fit._grid_thetas, rope_fit._collapsed_computes
    saved_verify = pecli.identification.verify_all
    saved_reach = Learned.fit, pecli.identification.untold, pecli.identification._NEAR_MISS, rope_fit.functools
    Learned.fit = classmethod(lambda cls, sample: iter(()))  # type: ignore[assignment,method-assign]
    pecli.identification.untold = lambda recipe: []  # type: ignore[assignment]
    pecli.identification._NEAR_MISS = -1.0
    # rope's fit without a predicted inv_freq: the common original lengths, unchecked, as before
    rope_fit.functools = types.SimpleNamespace(partial=lambda *a, **k: None)  # type: ignore[assignment]

    def plain_verify(table: Any, checks: Any, progress: Any = None, *_: Any) -> Any:
        return saved_verify(table, checks, progress)

    Recipe.slips = Rope.slips = lambda self: iter(())  # type: ignore[method-assign]
    rope_fit._grid_thetas = lambda *a, **k: iter(())  # type: ignore[assignment]
    rope_fit._collapsed_computes = lambda *a, **k: ()  # type: ignore[assignment]
    pecli.identification.verify_all = plain_verify  # type: ignore[assignment]
    try:
        yield
    finally:
        Recipe.slips, Rope.slips = saved_slips  # type: ignore[method-assign]
        rope_fit._grid_thetas, rope_fit._collapsed_computes = saved_grid, saved_collapsed
        pecli.identification.verify_all = saved_verify
        Learned.fit, pecli.identification.untold, pecli.identification._NEAR_MISS, rope_fit.functools = saved_reach  # type: ignore[method-assign]


def one(a: Table, b: Any) -> None:
    if b is None:
        identify(a)
    else:
        compare(a, b)
        identify(a)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    for name, (make_a, make_b) in CASES.items():
        a = Table(make_a(), None, "a.npy")
        raw_b = make_b()
        b = None if raw_b is None else Table.from_recipe(raw_b) if isinstance(raw_b, Rope | Sinusoidal) else raw_b
        b = Table(b, None, "b.npy") if isinstance(b, np.ndarray) else b
        one(a, b)  # warm: imports, compiled kernels
        times: dict[str, list[float]] = {"pecli": [], "baseline": []}
        for _ in range(args.runs):
            for side in ("pecli", "baseline"):
                with before_issue_41() if side == "baseline" else contextlib.nullcontext():
                    t0 = time.perf_counter()
                    one(a, b)
                    times[side].append(time.perf_counter() - t0)
        ours, base = (statistics.median(times[k]) for k in ("pecli", "baseline"))
        REPORT.row(
            name, f"{ours:.3f} s", f"{base:.3f} s", f"{ours / base:.2f}", f"≤ {TARGET}", ours / base <= TARGET, ""
        )
    REPORT.print()


if __name__ == "__main__":
    main()
