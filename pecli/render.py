"""The reports' human views, built with Rich: ``inspect``'s description and heat map, the arrays of
a file, the presets, a checkpoint scan, ``identify``'s report and ``analyze``'s.  Their pieces and
the values view are in :mod:`pecli.views`.  Machine output never passes through here."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from pecli.resources import human_bytes
from pecli.views.console import Grid, fmt_value, literal_line, visible
from pecli.views.table import title

if TYPE_CHECKING:
    from rich.console import RenderableType

    from pecli.analysis import Decay, HeatmapSample, Residuals
    from pecli.checkpoints import Entry
    from pecli.diff.statistics import Element
    from pecli.dtypes import Arr
    from pecli.formats import ArrayInfo
    from pecli.identification import Identification
    from pecli.presets import Preset
    from pecli.table import Table


def _stored_recipe_line(meta: dict[str, Any]) -> str:
    """The stored recipe as ``describe()`` words it (changed parameters only); raw if unreadable."""
    from pecli.kinds import recipe_from_metadata
    from pecli.recipe import format_value

    recipe = recipe_from_metadata(meta)
    if recipe is not None:
        return recipe.describe()
    params = " ".join(f"{k}={format_value(v)}" for k, v in meta.items() if k not in ("schema", "kind", "pecli_version"))
    return f"{meta.get('kind')} {params}"


def describe_view(desc: dict[str, Any], precision: int) -> list[RenderableType]:
    """``h5dump -H``-style header lines, then a one-row statistics table."""
    from rich.text import Text

    lines: list[tuple[str, str]] = [
        ("source", str(desc["source"])),
        ("shape", f"({', '.join(map(str, desc['shape']))})"),
        ("dtype", f"{desc['dtype']}, {desc['byte_order']}"),
        ("data", human_bytes(desc["nbytes"])),
    ]
    lines += [(k, human_bytes(v) if k.endswith("size") else str(v)) for k, v in desc["storage"].items()]
    recipe = desc["recipe"]
    if recipe is not None:
        lines.append(("recipe", _stored_recipe_line(recipe)))
        lines.append(("written by", f"pecli {recipe.get('pecli_version', '?')} (schema {recipe.get('schema')})"))
    elif "recipe" not in desc["storage"]:  # else the storage lines said why a stored one is ignored
        lines.append(("recipe", "none stored"))
    lines += [(k.replace("_", " "), str(v)) for k, v in desc.get("provenance", {}).items()]
    lines = [(visible(k), visible(v)) for k, v in lines]
    width = max(len(k) for k, _ in lines) + 2
    out: list[RenderableType] = [Text.assemble((k.ljust(width), "bold"), v) for k, v in lines]
    stats = desc["stats"]
    keys = {
        "min": "min",
        "max": "max",
        "mean": "mean",
        "std": "std",
        "row_norm_min": "row norm min",
        "row_norm_max": "row norm max",
    }
    st = Grid(list(keys.values()), [["—" if stats[k] is None else fmt_value(stats[k], precision) for k in keys]])
    out += [Text(""), st]
    if stats.get("skipped"):
        out.append(Text(str(stats["skipped"]), "dim"))
    if stats["nonfinite"]:
        out.append(Text(f"{stats['nonfinite']} values are NaN or infinite (left out of the statistics)", "yellow"))
    return out


def arrays_view(source: str, arrays: list[ArrayInfo]) -> list[RenderableType]:
    """The arrays inside a multi-array file, one line each, and how to pick one."""
    from rich.text import Text

    rows = [("key", "shape", "dtype")] + [
        (visible(a.key), "(" + ", ".join(map(str, a.shape)) + ")", visible(a.dtype)) for a in arrays
    ]
    w0, w1 = (max(len(r[k]) for r in rows) for k in (0, 1))
    lines = [f"{k:<{w0}}  {shape:<{w1}}  {dtype}" for k, shape, dtype in rows]
    lines.insert(1, "─" * max(len(line) for line in lines))
    return [
        literal_line(f"{source} holds {len(arrays)} arrays; pick one as {source}:KEY"),
        *(Text(line) for line in lines),
    ]


def short_number(x: float | None, digits: int = 4) -> str:
    """A number in a report: 4 significant digits, ``—`` for none."""
    return "—" if x is None else f"{x:.{digits}g}"


def element_at(e: Element) -> str:
    """Where an element of a report is, with both tables' values."""
    return f"at position {e.position}, dim {e.dim}: a = {e.a:.9g}, b = {e.b:.9g}"


def presets_view(presets: list[Preset], detail: bool) -> list[RenderableType]:
    """The preset registry: one line each, or every field of the presets asked for."""
    from rich import box
    from rich.table import Table as RichTable
    from rich.text import Text

    if detail:
        out: list[RenderableType] = []
        for p in presets:
            recipe = p.recipe()
            n, d = recipe.shape
            lines = [
                ("preset", p.name),
                ("reproduces", f"{p.framework}: {p.source}"),
                ("formula", p.summary),
                ("offsets", p.offsets),
                ("precision", p.exactness),
                ("default", f"({n}, {d})  {recipe.describe()}"),
            ]
            width = max(len(k) for k, _ in lines) + 2
            out += [Text.assemble((k.ljust(width), "bold"), v) for k, v in lines]
        return out
    grid = RichTable(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True)
    name_width = max(len(p.name) for p in presets)
    grid.add_column("preset", no_wrap=True, style="bold", min_width=name_width)
    grid.add_column("shape", no_wrap=True, justify="right", min_width=9)
    grid.add_column("values", no_wrap=True, min_width=7)
    # Wrapped at word boundaries; a class name longer than the column ends in "…" (never broken mid-word).
    grid.add_column("reproduces", overflow="ellipsis", ratio=1, min_width=24)
    for p in presets:
        n, d = p.recipe().shape
        what = p.source.split("::")[-1].split("(")[0].split(".")[0]
        grid.add_row(p.name, f"{n}×{d}", p.params.get("compute", "exact"), f"{what} ({p.framework})")
    return [grid, "pecli presets NAME shows one in full; pecli generate --preset NAME builds it."]


#: Shades from −1 to 1, so the picture survives without colour (NO_COLOR, pipes, the docs).
_SHADES = " ░▒▓█"


def heatmap_view(table: Table, sample: HeatmapSample, width: int = 80) -> list[RenderableType]:
    """The table as grey cells, −1 black, 0 grey, 1 white (the picture of "The Illustrated
    Transformer"), each sampled value as wide as the terminal allows (up to 4 characters: a
    narrow table is not 8 characters wide); each cell also carries a shade character for
    terminals without colour."""
    import numpy as np
    from rich.text import Text

    if not len(sample.row_ids):
        return [literal_line(title(table)), "the table has no rows: nothing to draw"]
    values = np.clip(np.nan_to_num(np.asarray(sample.values, dtype=np.float64), nan=0.0), -1.0, 1.0)
    grey = np.rint((values + 1.0) * 127.5).astype(int)
    shade = np.rint((values + 1.0) * 2.0).astype(int)
    label = max(len(str(table.position_of(int(r)))) for r in sample.row_ids)
    cell = max(1, min(4, (width - label - 1) // max(1, grey.shape[1])))
    lines: list[RenderableType] = [literal_line(title(table)), f"{sample.description}; −1 black … 0 grey … 1 white"]
    for r, row in enumerate(grey):
        line = Text(f"{table.position_of(int(sample.row_ids[r])):>{label}} ", style="bold")
        for g, s in zip(row, shade[r], strict=True):
            line.append(_SHADES[s] * cell, style=f"rgb({g},{g},{g}) on rgb({g},{g},{g})")
        lines.append(line)
    return lines


#: identify's verdicts as the reports say them.
VERDICTS = {"match": "MATCH", "close": "CLOSE", "unknown": "NO KNOWN RECIPE", "learned": "LEARNED"}


#: Arrays a checkpoint's report names for each reason it skipped them (then "and N more").
SKIPPED_NAMED = 3


def checkpoint_view(source: str, entries: list[Entry]) -> list[RenderableType]:
    """``identify`` of a whole checkpoint (:mod:`pecli.checkpoints`): each positional array's
    verdict and the SOURCE that rebuilds it, then what was skipped and why: each array that could
    not be read, the others one line a reason (the first :data:`SKIPPED_NAMED` named)."""
    found = [e for e in entries if e.positional]
    out: list[RenderableType] = [literal_line(f"{source}: {len(entries)} arrays, {len(found)} positional")]
    for e in found:
        f = e.found
        if f is None:  # a positional array is always identified (checkpoints.scan)
            continue
        name = f" {f.best.name}" if f.best is not None else ""
        out.append(literal_line(f"{e.key}  ({', '.join(map(str, e.shape))}) {e.dtype}  {VERDICTS[f.verdict]}{name}"))
        if f.best is not None:
            out.append(literal_line(f"  rebuild it with  {f.best.spec}"))
        elif f.verdict == "learned":
            out.append(literal_line("  a learned table (no formula rebuilds it)"))
    skipped = [e for e in entries if not e.positional]
    out += [literal_line(f"skipped {e.key}: {e.error}") for e in skipped if e.error]  # each one: it is a fault
    reasons: dict[str, list[str]] = {}
    for e in skipped:
        if not e.error:
            reasons.setdefault(e.why, []).append(e.key)
    for why, keys in reasons.items():  # a model's hundreds of weights in a line a reason
        more = f" and {len(keys) - SKIPPED_NAMED} more" if len(keys) > SKIPPED_NAMED + 1 else ""
        named = keys if not more else keys[:SKIPPED_NAMED]
        json_hint = " (--json lists each)" if more else ""
        out.append(literal_line(f"skipped {', '.join(named)}{more}: {why}{json_hint}"))
    return out


def identify_view(found: Identification) -> list[RenderableType]:
    """``identify``'s answer: the verdict, the recipe that rebuilds the table, notes, the nearest."""
    from rich import box
    from rich.table import Table as RichTable
    from rich.text import Text

    from pecli.presets import PRESETS

    n, d = found.shape
    out: list[RenderableType] = [Text(visible(f"{found.source}  ({n}, {d}) {found.dtype}"), style="bold")]
    verdict = VERDICTS[found.verdict]
    out.append(Text.assemble((verdict, "bold"), visible(f": {found.summary}")))
    best = found.best
    if best is not None:
        others = [n for n in found.names if n != best.name and n in PRESETS]
        if others:
            out.append(f"same table as    {', '.join(others)}")
        out.append(f"rebuild it with  {best.spec}")
        out.append(literal_line(f"check it with    {best.check_command(found.source)}"))
    # The best recipe computed by another of its kind's pipelines (``Recipe.pipelines``: exact or
    # float32, another form), named by no preset, is no other explanation of the table; --json
    # lists every alternative.
    twins = set(best.recipe.pipelines()) if best is not None else set()
    for c in found.alternatives:
        named = any(n in PRESETS for n in c.names)
        if c.atol and set(c.names) - set(found.names) and (named or c.recipe not in twins):
            names = ", ".join(n for n in c.names if n in PRESETS) or c.name
            out.append(f"also matches     {names}: {c.spec} (max |Δ| {short_number(c.atol, 3)})")
    out += [literal_line(f"note: {note}") for note in found.notes]
    proof = "compared with every row" if best is not None and best.verification is not None else "scored on the sample"
    out.append(f"sampled {found.sample}; {found.candidates_tried} candidates tried; the verdict {proof}")
    if found.nearest and found.verdict != "match":  # a proved match needs no runners-up (--json has them)
        grid = RichTable(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True)
        for head, justify in (
            ("candidate", "left"),
            ("max |Δ|", "right"),
            ("rel RMS", "right"),
            ("on", "left"),
            ("recipe", "left"),
        ):
            grid.add_column(head, justify=justify, no_wrap=head != "recipe")  # type: ignore[arg-type]
        for c in found.nearest:
            grid.add_row(
                c.name,
                short_number(c.max_abs, 3),
                short_number(c.rel_rms, 3),
                c.scored_on,
                c.recipe.describe(short=True),
            )
        out += ["", "nearest candidates", grid]
    return out


def analysis_view(table: Table, decay: Decay, residual: Residuals, waves: Arr) -> list[RenderableType]:
    """Decay (at k = 0, 1, 2, 4, …), the relative-position residual per k, and the wavelengths."""
    import numpy as np
    from rich import box
    from rich.table import Table as RichTable

    out: list[RenderableType] = [literal_line(title(table))]
    ks = sorted({0, *(2**e for e in range(0, 20) if 2**e <= int(decay.k[-1])), int(decay.k[-1])})
    grid = RichTable(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True)
    for head in ("k", "mean PE(p)·PE(p+k)", "mean cosine"):
        grid.add_column(head, justify="right")

    def number(x: float, spec: str) -> str:  # NaN and Inf are what could not be computed
        return format(x, spec) if math.isfinite(x) else "not a number"

    for k in ks:
        grid.add_row(str(k), number(decay.dot[k], ".4f"), number(decay.cosine[k], ".4f"))
    out += ["", f"decay ({decay.sample})", grid]
    grid = RichTable(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True)
    for head in ("k", "‖PE(p+k) − R_k·PE(p)‖ / ‖PE(p+k)‖"):
        grid.add_column(head, justify="right")
    for k, res in zip(residual.k, residual.residual, strict=True):
        grid.add_row(str(int(k)), number(res, ".3g") if math.isfinite(res) else "not computed")
    res = np.asarray(residual.residual, dtype=np.float64)
    if residual.unfitted or not res.size or not np.isfinite(res).all():
        verdict = f"not measured: {residual.unfitted or 'PE(p+k) holds NaN or Inf for some k'}"
    elif float(res.max()) < 1e-4:
        verdict = "a rotation of PE(p): the relative-position property holds"
    else:
        verdict = "not a linear function of PE(p)"
    out += [
        "",
        f"relative position: best linear map R_k ({residual.sample}; rank {residual.rank})",
        grid,
        f"PE(p+k) is {verdict}",
    ]
    w = np.asarray(waves, dtype=np.float64)
    finite = w[np.isfinite(w)]
    if finite.size:
        cols = " ".join(f"{x:.4g}" for x in w[: min(8, w.size)])
        out += [
            "",
            f"wavelengths 2π/ω (positions): {finite.min():.4g} … {finite.max():.4g}; columns 0..: {cols}"
            + (" …" if w.size > 8 else ""),
        ]
    return out
