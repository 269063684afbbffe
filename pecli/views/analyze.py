"""``pecli analyze``'s human view: the decay, the relative-position residual and the wavelengths."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from pecli.views.console import literal_line
from pecli.views.table import title

if TYPE_CHECKING:
    from rich.console import RenderableType

    from pecli.analysis import Decay, Residuals
    from pecli.dtypes import Arr
    from pecli.table import Table


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
