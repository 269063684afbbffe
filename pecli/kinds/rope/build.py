"""How a rotary table's values are computed: rows (:func:`rope_rows`, what :meth:`Rope.rows`
builds) or a few columns alone (:func:`rope_columns`, identify's screen of a wide table), both
from :class:`Waves`, one part's values at any positions in the recipe's pipeline.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from pecli.kernels.exact import row_blocks, sincos, turns
from pecli.kernels.pipelines import f32, rotary32, rounded32
from pecli.kernels.threads import run_blocks
from pecli.precision import held, pipeline_of

if TYPE_CHECKING:
    from pecli.kinds.rope import Rope, RopePart

#: The parts that hold the cos table and the sin table together, and where each goes.
BOTH_PARTS = ("cos-sin", "cis")


class Waves:
    """The values of one part (cos, sin or angle) of a recipe's table at any positions and for
    the frequencies ``inv`` (all of them, or some: every step is elementwise, so a column costs
    the same alone as among all of them), as the recipe's pipeline computes them."""

    def __init__(self, r: Rope, inv: np.ndarray) -> None:
        self.r, self.inv = r, inv
        self.att = r.attention_scaling()
        self.steps = pipeline_of(r.compute)
        if r.compute == "exact" and r.part != "angle":
            self.w_hi, self.w_lo = turns(inv)
        # The whole table's pairs, so every row range (and column) has the whole's bits.
        self.pairs = r.shape[0] * r.frequency_count

    def values(self, positions: Any, into: np.ndarray | None = None) -> Any:
        """``(len(positions), len(inv))`` values (written into ``into`` and returned when the
        compiled float32 pipeline can)."""
        r, inv, att, steps = self.r, self.inv, self.att, self.steps
        values: Any
        if steps.positions != "float32" and r.compute != "exact":  # position ids held in 16 bits
            positions = held(positions.astype(f32), steps.positions)
        if steps.angle != "float32" and r.compute != "exact":  # the product and cos/sin held in 16 bits too
            angle = held(positions.astype(f32)[:, None] * inv[None, :], steps.angle)
            if r.part != "angle":
                (values,) = rounded32(angle, (r.part,), None)
                values = held(values, steps.trig)
                if att != 1.0:
                    values = held(values * f32(att), steps.trig)
            else:
                values = angle
        elif r.compute != "exact" and r.part != "angle":  # freqs.cos() * attention_scaling, in float32
            values = rotary32(positions, inv, r.part, self.pairs, into=into)
            if att != 1.0:
                values *= f32(att)
        elif r.compute != "exact":
            values = positions.astype(f32)[:, None] * inv[None, :]  # position_ids.float() * inv_freq
        elif r.part == "angle":
            values = positions.astype(np.float64)[:, None] * inv[None, :]
        else:
            s, c = sincos(positions.astype(np.float64), self.w_hi, self.w_lo)
            values = (c if r.part == "cos" else s) * att
        return values


def rope_columns(r: Rope, rows: np.ndarray, cols: np.ndarray) -> np.ndarray | None:
    """:meth:`Rope.columns_at`."""
    if r.part == "inv_freq":  # its one row is the frequencies, cast as rope_rows casts them
        return np.asarray(r.inv_freq_at(cols)[None, :], dtype=r.dtype)[np.zeros(rows.size, dtype=np.intp)]
    if r.dtype not in ("float32", "float64"):
        return None  # 16-bit rows are rounded from float32 ones with care
    if r.part in BOTH_PARTS:
        # cos-sin: the cos table's columns, then the sin table's; cis: cos and sin in turn.
        width = r.shape[1] // 2
        cos_part = cols < width if r.part == "cos-sin" else cols % 2 == 0
        inner = np.where(cos_part, cols, cols - width) if r.part == "cos-sin" else cols // 2
        out = np.empty((rows.size, cols.size), dtype=r.dtype)
        halves: tuple[tuple[RopePart, np.ndarray], ...] = (("cos", cos_part), ("sin", ~cos_part))
        for part, where in halves:
            if where.any():
                got = rope_columns(replace(r, part=part), rows, inner[where])
                if got is None:
                    return None
                out[:, where] = got
        return out
    half = r.frequency_count
    frequency = {"half": np.where(cols < half, cols, cols - half), "pairs": cols // 2, "once": cols}[r.layout]
    used, at = np.unique(frequency, return_inverse=True)
    inv = r.inv_freq_at(used)
    values = Waves(r, inv).values(r.start + rows)
    out = np.empty((rows.size, cols.size), dtype=r.dtype)
    out[...] = values[:, at]  # cast to the output dtype as rows() assigns
    return out


def rope_rows(r: Rope, r0: int, r1: int) -> np.ndarray:
    if r.part in BOTH_PARTS:
        # The cos table and the sin table, each as the framework builds it, put side by side or in turn.
        cos, sin = (rope_rows(replace(r, part=part), r0, r1) for part in ("cos", "sin"))
        out = np.empty((r1 - r0, r.shape[1]), dtype=r.dtype)
        width = cos.shape[1]
        if r.part == "cos-sin":
            out[:, :width], out[:, width:] = cos, sin
        else:
            out[:, 0::2], out[:, 1::2] = cos, sin
        return out
    inv = r.inv_freq()
    half = r.frequency_count
    if r.part == "inv_freq":
        return np.asarray(inv[None, :], dtype=r.dtype)[r0:r1]
    out = np.empty((r1 - r0, r.shape[1]), dtype=r.dtype)
    # Column views for the dim/2 distinct values: the layout is only where they go.
    views = {"half": (out[:, :half], out[:, half:]), "pairs": (out[:, 0::2], out[:, 1::2]), "once": (out,)}
    placed = views[r.layout]
    wave = Waves(r, inv)

    def block(a: int, b: int) -> None:
        targets = [view[a:b] for view in placed]
        values = wave.values(np.arange(r.start + r0 + a, r.start + r0 + b), into=targets[0])
        if values is targets[0]:  # written in place by the compiled pipeline
            targets = targets[1:]
        # Assignment casts to the output dtype: float32 values as HF's ``.to(x.dtype)``,
        # float64 (exact) values rounded once.
        for target in targets:
            target[...] = values[:, : target.shape[1]]  # an odd dim truncated: the last copy is one short

    run_blocks(block, row_blocks(r1 - r0, half))
    return out


__all__ = ["BOTH_PARTS", "Waves", "rope_columns", "rope_rows"]
