"""identify's round trip: every preset and hundreds of drawn recipes, built by pecli, named back.

What it measures (issue 41): for each table pecli builds, does ``identify`` name a recipe that
rebuilds it?  A table is NAMED when the verdict is MATCH and the named recipe, rebuilt, is within
the match's own ``atol`` on every element (checked here again with :func:`pecli.proof.verify`,
independently of identify's proof); a MATCH that fails that check is a FALSE MATCH.  Anything else
(CLOSE, NO KNOWN RECIPE, LEARNED for a formula) is a MISS, listed with the recipe.

The draws are deterministic (``--seed``): for each kind in turn, its example recipe
(:attr:`~pecli.recipe.Recipe.example`) with every choice and flag parameter drawn from its
allowed values and the sizes drawn from small, odd and large ones (length 1 to 3000, widths 4 to
384, a start of 0, 1, 5 or 1000); a draw the kind refuses is drawn again.

Run from the repository root::

    PYTHONPATH=. python scripts/identify_roundtrip.py                  # presets + 500 draws (~5 min)
    PYTHONPATH=. python scripts/identify_roundtrip.py --draws 100 --seed 3 --no-presets

Exit status 1 on any false match.  ``tests/analysis/test_identify_roundtrip.py`` runs it (slow group).
"""

from __future__ import annotations

import argparse
import random
import shlex
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, fields, replace
from typing import Any, get_args, get_type_hints

from pecli.errors import PecliInputError as PecliError
from pecli.identification import identify
from pecli.kinds import kinds
from pecli.presets import PRESETS
from pecli.proof import verify
from pecli.recipe import Recipe
from pecli.table import Table

LENGTHS = (1, 2, 7, 64, 300, 1000, 3000)
WIDTHS = (4, 6, 8, 16, 33, 64, 128, 384)
STARTS = (0, 0, 0, 1, 5, 1000)
#: Cells above which a draw is drawn again (keeps a run to minutes).
MAX_CELLS = 1 << 20


@dataclass
class Outcome:
    label: str
    recipe: Recipe
    verdict: str
    named: bool
    false_match: bool
    summary: str
    seconds: float


def example(cls: type[Recipe]) -> dict[str, Any]:
    """The kind's example recipe as parameters (``--kind rope --len 4096`` → ``{"length": 4096, …}``)."""
    words = shlex.split(cls.example)
    out: dict[str, Any] = {}
    names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    for flag, value in zip(words[::2], words[1::2], strict=False):
        name = "length" if flag == "--len" else flag[2:].replace("-", "_")
        if name in names:
            out[name] = value
    return out


def _typed(cls: type[Recipe], name: str, value: Any) -> Any:
    hint = str(get_type_hints(cls).get(name))
    if isinstance(value, str) and ("int" in hint and "float" not in hint):
        return int(value)
    if isinstance(value, str) and "float" in hint and value.replace(".", "", 1).isdigit():
        return float(value)
    return value


def draw(cls: type[Recipe], rng: random.Random) -> Recipe | None:
    """One recipe of ``cls``: the example's required values, everything else drawn."""
    hints = get_type_hints(cls)
    params = {k: _typed(cls, k, v) for k, v in example(cls).items()}
    for f in fields(cls):  # type: ignore[arg-type]
        allowed = get_args(hints.get(f.name))
        if allowed and all(isinstance(a, str) for a in allowed):
            params[f.name] = rng.choice(allowed)
        elif hints.get(f.name) is bool or str(hints.get(f.name)) == "bool":
            params[f.name] = rng.random() < 0.3
        elif f.name == "length" and "length" in params:
            params["length"] = rng.choice(LENGTHS)
        elif f.name == "dim" and "dim" in params:
            params["dim"] = rng.choice(WIDTHS)
        elif f.name == "start" and f.default == 0:
            params["start"] = rng.choice(STARTS)
    params = {k: v for k, v in params.items() if k in {f.name for f in fields(cls)}}  # type: ignore[arg-type]
    try:
        recipe = cls(**params)
        if recipe.shape[0] * recipe.shape[1] > MAX_CELLS or 0 in recipe.shape:
            return None
    except (PecliError, TypeError, ValueError):
        return None
    return recipe


def draws(count: int, seed: int, only: tuple[str, ...] = ()) -> Iterator[tuple[str, Recipe]]:
    rng = random.Random(seed)
    classes = [cls for name, cls in kinds().items() if not only or name in only]
    made = 0
    while made < count:
        cls = classes[made % len(classes)]
        for _ in range(200):
            recipe = draw(cls, rng)
            if recipe is not None:
                break
        else:
            made += 1
            continue
        made += 1
        yield f"draw {made}", recipe


def presets() -> Iterator[tuple[str, Recipe]]:
    for name, preset in PRESETS.items():
        recipe = preset.recipe()
        for size in ("length", "heads"):
            if getattr(recipe, size, None) is not None and recipe.shape[0] * recipe.shape[1] > MAX_CELLS:
                try:
                    recipe = replace(recipe, **{size: max(1, MAX_CELLS // (4 * recipe.shape[1]))})  # type: ignore[type-var]
                except (PecliError, TypeError, ValueError):
                    pass
        if recipe.shape[0] * recipe.shape[1] <= 4 * MAX_CELLS:
            yield f"preset {name}", recipe


def judge(label: str, recipe: Recipe) -> Outcome:
    table = recipe.build()
    t0 = time.perf_counter()
    found = identify(Table(table, None, "table.npy"))
    seconds = time.perf_counter() - t0
    named = false = False
    if found.verdict == "match" and found.best is not None:
        proof = verify(Table(table, None, "table.npy"), found.best.recipe, found.best.atol)
        named, false = proof.holds, not proof.holds
    return Outcome(label, recipe, found.verdict, named, false, found.summary, seconds)


def run(
    count: int, seed: int, with_presets: bool = True, out: Any = sys.stderr, only: tuple[str, ...] = ()
) -> list[Outcome]:
    cases = [*(presets() if with_presets else []), *draws(count, seed, only)]
    results = []
    for label, recipe in cases:
        result = judge(label, recipe)
        results.append(result)
        mark = "named" if result.named else "FALSE MATCH" if result.false_match else "miss"
        print(f"{mark:11s} {result.seconds:5.2f}s {label}: {recipe.describe(short=True)[:110]}", file=out, flush=True)
    return results


def summary(results: list[Outcome]) -> str:
    named = sum(r.named for r in results)
    false = [r for r in results if r.false_match]
    misses = [r for r in results if not r.named]
    by_kind: dict[str, list[int]] = {}
    for r in results:
        tally = by_kind.setdefault(r.recipe.kind, [0, 0])
        tally[0] += r.named
        tally[1] += 1
    lines = [
        f"named {named}/{len(results)} ({named / max(1, len(results)):.1%}); false matches {len(false)}",
        "per kind: " + ", ".join(f"{k} {a}/{b}" for k, (a, b) in sorted(by_kind.items())),
        "misses:",
        *(f"  {r.label} ({r.verdict}): {r.recipe.spec()}" for r in misses),
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=500)
    parser.add_argument("--seed", type=int, default=41)
    parser.add_argument("--no-presets", action="store_true")
    parser.add_argument("--kinds", default="", help="comma-separated kinds to draw (default: all)")
    args = parser.parse_args()
    only = tuple(k for k in args.kinds.split(",") if k)
    results = run(args.draws, args.seed, not args.no_presets, only=only)
    print(summary(results))
    sys.exit(1 if any(r.false_match for r in results) else 0)


if __name__ == "__main__":
    main()
