"""Pictures of a table: the heatmap blog posts draw ("The Illustrated Transformer"), the
per-dimension curves ("The Annotated Transformer") and the long-range decay (TENER, Yan et al.
2019).  Written as PNG or SVG (chosen by the file's extension), atomically, never clobbering an
existing file without ``force``.

matplotlib is optional (``pip install matplotlib``, or the ``plot`` extra from a checkout) and
imported only inside these functions, always with the non-interactive Agg canvas: nothing here
opens a window or touches pyplot's global state.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from pecli.analysis import HeatmapSample, decay, default_max_k, heatmap_sample
from pecli.atomic import atomic_paths, check_destination
from pecli.errors import PecliInputError
from pecli.table import Table, read_rows

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: The message when matplotlib is missing (one line, with the fix).
NEEDS_MATPLOTLIB = "plots need matplotlib: pip install matplotlib (or, in pecli's checkout, pip install -e '.[plot]')"
FORMATS = {".png": "png", ".svg": "svg"}
DPI = 100
#: Positions a curves plot shows at most (the first ones; ``rows`` picks another span).
CURVE_ROWS = 4096


class MissingDependencyError(PecliInputError):
    """An optional dependency needed for this feature is not installed."""


@dataclass(frozen=True)
class Plot:
    """A written figure: where, its size in pixels (PNG at :data:`DPI`) and what it shows.

    ``data_box`` is the plotting area (the heatmap image, or the first axes) in pixels of the PNG,
    ``(left, top, right, bottom)`` from its top-left corner.
    """

    path: Path
    format: str
    size: tuple[int, int]
    data_box: tuple[float, float, float, float]
    description: str


def _matplotlib() -> Any:
    try:
        import matplotlib
        from matplotlib.backends import backend_agg
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingDependencyError(NEEDS_MATPLOTLIB) from None
    return matplotlib, backend_agg.FigureCanvasAgg, Figure


def _figure(width: float, height: float) -> Figure:
    _, canvas_class, figure_class = _matplotlib()
    fig: Figure = figure_class(figsize=(width, height), dpi=DPI, layout="constrained")
    canvas_class(fig)  # the Agg canvas, explicitly: no display, no pyplot state
    return fig


def _check(path: str | Path, force: bool) -> str:
    """The format the extension names; refuses (before any work) what could not be written."""
    check_destination(Path(path), force=force)
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise PecliInputError(
            f"plots are written as .png or .svg, not {suffix or 'a file without extension'!r}: e.g. -o fig.png"
        )
    return FORMATS[suffix]


def _save(fig: Figure, path: str | Path, fmt: str, ax: Axes, description: str, force: bool) -> Plot:
    target = Path(path)
    with atomic_paths(target, force=force) as temps:
        fig.savefig(temps[0], format=fmt, dpi=DPI)
    # After the save the layout is final: the axes' window extent is in PNG pixels (origin bottom-left).
    width, height = (round(float(v)) for v in fig.get_size_inches() * DPI)
    box = ax.get_window_extent()
    data_box = (float(box.x0), float(height - box.y1), float(box.x1), float(height - box.y0))
    return Plot(target, fmt, (width, height), data_box, description)


def title_of(table: Table) -> str:
    """What the table is: its recipe, else its source."""
    return table.recipe.describe() if table.recipe is not None else table.source


def heatmap(
    table: Table,
    path: str | Path,
    *,
    max_rows: int = 1000,
    max_cols: int = 1000,
    limits: tuple[float, float] | None = (-1.0, 1.0),
    title: str | None = None,
    force: bool = False,
) -> Plot:
    """The picture of "The Illustrated Transformer": positions down, dimensions across, −1 black, 0 grey, 1 white.

    Tables larger than ``max_rows`` × ``max_cols`` are shown by striding (see
    :func:`pecli.analysis.heatmap_sample`; the stride is written under the title).  ``limits``
    fixes the grey scale; ``None`` makes it symmetric around 0 at the largest ``|value|`` (for
    learned tables, whose values are far smaller than 1).  NaN is drawn red.
    """
    fmt = _check(path, force)
    _matplotlib()  # before any data is read
    sample = heatmap_sample(table, max_rows, max_cols)
    fig = _figure(10, _height(sample))
    ax = fig.add_subplot()
    image = draw_heatmap(ax, table, sample, limits)
    colorbar = fig.colorbar(image, ax=ax, fraction=0.04, pad=0.02)
    colorbar.set_label("value")
    _title(ax, title or title_of(table), sample.description)
    return _save(fig, path, fmt, ax, sample.description, force)


def _height(sample: HeatmapSample) -> float:
    rows, cols = sample.values.shape
    return float(min(8.0, max(3.0, 10.0 * rows / max(cols, 1))))


def draw_heatmap(ax: Axes, table: Table, sample: HeatmapSample, limits: tuple[float, float] | None) -> Any:
    """Draw ``sample`` on ``ax`` (one cell per sampled value, no interpolation); returns the image."""
    matplotlib = _matplotlib()[0]
    values = sample.values
    if limits is None:
        finite = np.abs(values[np.isfinite(values)])
        top = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
        limits = (-top, top)
    lo, hi = limits
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise PecliInputError(f"limits must be two finite numbers, low < high, got {limits!r}")
    cmap = matplotlib.colormaps["gray"].with_extremes(bad="red")
    rs = int(sample.row_ids[1] - sample.row_ids[0]) if sample.row_ids.size > 1 else 1
    cs = int(sample.col_ids[1] - sample.col_ids[0]) if sample.col_ids.size > 1 else 1
    first = table.start
    # Cell (i, j) covers its stride: columns j·cs − ½ … (j+1)·cs − ½, positions likewise.
    extent = (
        -0.5,
        sample.col_ids.size * cs - 0.5,
        first + sample.row_ids.size * rs - 0.5,
        first - 0.5,
    )
    image = ax.imshow(
        values,
        cmap=cmap,
        vmin=lo,
        vmax=hi,
        interpolation="nearest",
        aspect="auto",
        origin="upper",
        extent=extent,
    )
    ax.set_xlabel("dimension")
    ax.set_ylabel("position")
    return image


def _title(ax: Axes, title: str, note: str) -> None:
    ax.set_title(f"{title}\n{note}", fontsize=9, loc="left")


def default_dims(d: int) -> list[int]:
    """0, d/4 and d/2 (0, 32, 64 for d = 128); fewer for tiny d."""
    return sorted({0, d // 4, d // 2})


def curves(
    table: Table,
    path: str | Path,
    dims: Sequence[int] | None = None,
    *,
    rows: tuple[int, int] | None = None,
    title: str | None = None,
    force: bool = False,
) -> Plot:
    """ "The Annotated Transformer"'s figure: the value of each column in ``dims`` against the position.

    ``dims`` defaults to :func:`default_dims`; ``rows`` is a half-open span of row indices
    (default: the first :data:`CURVE_ROWS` rows; no striding, which would alias the fast columns).
    Columns of a sinusoidal recipe are labelled with their function and wavelength ``2π/ω``.
    """
    fmt = _check(path, force)
    n, d = table.shape
    cols = list(default_dims(d) if dims is None else dims)
    bad = [j for j in cols if isinstance(j, bool) or not isinstance(j, (int, np.integer)) or not 0 <= j < d]
    if not cols or bad:
        raise PecliInputError(
            f"dims must be columns 0..{d - 1}, got {', '.join(map(str, bad)) or 'none'}: e.g. --dims 0,{d // 4}"
        )
    r0, r1 = rows if rows is not None else (0, min(n, CURVE_ROWS))
    if not 0 <= r0 < r1 <= n:
        raise PecliInputError(f"rows {r0}:{r1} must be a non-empty span inside 0:{n}")
    _matplotlib()
    values = read_rows(table, np.arange(r0, r1), np.array(cols, dtype=np.intp))
    positions = table.start + np.arange(r0, r1)
    labels = _column_labels(table, cols)
    fig = _figure(10, 6)
    ax = fig.add_subplot()
    for k, label in enumerate(labels):
        ax.plot(positions, values[:, k], linewidth=1.0, label=label)
    ax.set_xlabel("position")
    ax.set_ylabel("value")
    ax.legend(loc="upper right", fontsize=8)
    shown = f"positions {positions[0]}..{positions[-1]}" + (f" of {n} rows" if r1 - r0 < n else "")
    _title(ax, title or title_of(table), shown)
    return _save(fig, path, fmt, ax, shown, force)


def _column_labels(table: Table, cols: list[int]) -> list[str]:
    recipe = table.recipe
    if recipe is None:
        return [f"dim {j}" for j in cols]
    explain = recipe.column_meaning(0)
    out = []
    for j in cols:
        meaning = explain(j)
        if "fn" in meaning and meaning["fn"] != "zero":
            out.append(f"dim {j}: {meaning['fn']}, i={meaning['i']}, wavelength {meaning['wavelength']:.4g}")
        else:
            out.append(f"dim {j}")
    return out


def decay_plot(
    table: Table, path: str | Path, max_k: int | None = None, *, title: str | None = None, force: bool = False
) -> Plot:
    """The long-range decay (TENER, Yan et al. 2019): mean ``PE(p)·PE(p+k)`` and mean cosine similarity against k
    (see :func:`pecli.analysis.decay`; ``max_k`` defaults to min(rows / 2, 512), so that every k
    is averaged over at least half the positions)."""
    fmt = _check(path, force)
    _matplotlib()
    n = table.shape[0]
    result = decay(table, default_max_k(n) if max_k is None else max_k)
    fig = _figure(10, 6)
    top, bottom = fig.subplots(2, 1, sharex=True)
    top.plot(result.k, result.dot, linewidth=1.0)
    top.set_ylabel("mean PE(p)·PE(p+k)")
    bottom.plot(result.k, result.cosine, linewidth=1.0)
    bottom.set_ylabel("mean cosine similarity")
    bottom.set_xlabel("offset k")
    _title(top, title or title_of(table), f"mean over {result.sample}")
    return _save(fig, path, fmt, top, result.sample, force)


__all__ = [
    "NEEDS_MATPLOTLIB",
    "MissingDependencyError",
    "Plot",
    "curves",
    "decay_plot",
    "default_dims",
    "draw_heatmap",
    "heatmap",
]
