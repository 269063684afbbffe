"""The mrope kind's inverse: a table's sequence, θ and sections read back from its rows
(:meth:`pecli.kinds.mrope.Mrope.fit` and ``sizes``).  The kind is passed in: its module imports
this one."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from pecli.errors import RecipeError
from pecli.fitting import Sample, cosine_frequencies, fit_base
from pecli.kernels.pipelines import f32
from pecli.kinds.mrope.ids import sequence_of
from pecli.params import round_number

if TYPE_CHECKING:
    from pecli.dtypes import Arr, DType
    from pecli.kinds.mrope import Mrope, MropePart

#: Tables with more rows are not fitted (the whole table is read to recover its sequence).
MAX_FIT_ROWS = 1 << 16
_COMMON_THETAS = (1000000.0, 10000.0, 500000.0, 100000.0)
#: Qwen2.5-VL's vision_config.tokens_per_second: the spacing tried when frames are not 1 apart.
_QWEN25_TPS = 2.0


def _ids_recipe(kind: type[Mrope], sample: Sample) -> Mrope | None:
    """``--part ids`` of the sequence whose position ids the table's three columns are (whole
    numbers, one token a row), with or without Qwen2.5-VL's tokens per second; ``None`` if none.
    Only the ids are fitted: θ, the sections and the width are the defaults, which ids do not show."""
    (n, d), x = sample.table.shape, sample.values
    if d != 3 or not 2 <= n <= MAX_FIT_ROWS or not np.all(np.isfinite(x)) or np.any(x != np.round(x)) or np.any(x < 0):
        return None
    ids = sample.rows(0, n).T
    if not np.all(np.isfinite(ids)) or np.any(ids != np.round(ids)) or np.any(ids < 0):
        return None
    for tps in (None, _QWEN25_TPS):
        sequence = sequence_of(ids, tps)
        if sequence is not None and not sequence.replace("text=", "").isdigit():
            return kind(128, sequence, tokens_per_second=tps, part="ids", dtype=sample.dtype)  # type: ignore[arg-type]
    return None


def _fit_angles(kind: type[Mrope], sample: Sample) -> Iterator[Mrope]:
    """``--part angle`` tables: each column is its section's position id times its frequency, so
    θ is read from row 1 (a text token at position 1), each row's ids are the angles over the
    frequencies (whole numbers), and the sections are where the columns' ids change (chunked) or
    Qwen3-VL's interleaved pattern, whichever assigns every column its id."""
    (n, d), x = sample.table.shape, sample.values
    h = d // 2
    if d % 2 or d < 6 or not 3 <= n <= MAX_FIT_ROWS or not np.array_equal(x[:, :h], x[:, h:]) or np.any(x[0] != 0):
        return
    x = np.asarray(sample.rows(0, n)[:, :h], dtype=np.float64)
    if not np.all(np.isfinite(x)) or np.any(x < 0) or not np.all(x[1] > 0):
        return
    estimate = fit_base(x[1], np.arange(h) * 2.0 / d)
    measured = [round_number(estimate, k) for k in range(1, 7)] if estimate is not None else []
    for theta in dict.fromkeys([*measured, *_COMMON_THETAS]):
        try:
            inv = np.asarray(kind(d, "text=1", theta).inv_freq(), dtype=np.float64)
        except RecipeError:
            continue
        ids = x / inv
        r = np.rint(ids)
        # float16 holds the slowest angles (1e-6 and less) as subnormals, each to 2⁻²⁴ absolute.
        below = 2.0**-24 / inv if sample.dtype == "float16" else 0.0
        if np.any(np.abs(ids - r) > np.maximum(0.02, 4 * sample.eps * ids) + below):
            continue
        moved = np.flatnonzero(np.any(r[:, 1:] != r[:, :-1], axis=0)) + 1
        guesses = [(f"{moved[0]};{moved[1] - moved[0]};{h - moved[1]}", False)] if moved.size == 2 else []
        guesses += [(f"{h - 2 * k};{k};{k}", True) for k in (round(h * 5 / 16), round(h * 5 / 16) - 1) if k >= 1]
        for sections, interleaved in guesses:
            try:
                axes = kind(d, "text=1", theta, sections, mrope_interleaved=interleaved).axes()
            except RecipeError:
                continue
            own = [r[:, int(np.flatnonzero(axes == k)[0])] for k in range(3)]
            if not all(np.array_equal(r[:, j], own[axes[j]]) for j in range(h)):
                continue
            for tps in (None, _QWEN25_TPS):
                sequence = sequence_of(np.stack(own), tps)
                if sequence is None or sequence.replace("text=", "").isdigit():
                    continue
                try:
                    recipe = kind(
                        d,
                        sequence,
                        theta,
                        sections,
                        tps,
                        "angle",
                        dtype=cast("DType", sample.dtype),
                        mrope_interleaved=interleaved,
                    )
                except RecipeError:
                    continue
                sample.clue(
                    f"the rows are angles: three position ids a token times θ = {theta:.10g}'s frequencies "
                    f"(M-RoPE sections {sections}{', interleaved' if interleaved else ''}) over {sequence}",
                    recipe,
                )
                yield from (recipe, replace(recipe, compute="exact"))
                return


def _table(sample: Sample) -> Arr | None:
    """The table's distinct ``d/2`` columns (all rows), if it is a half-layout cos or sin table that
    fits and has tokens sharing a temporal id (a grid's; text ids all differ)."""

    def read() -> Arr | None:
        (n, d), h, x = sample.table.shape, sample.d // 2, sample.values
        if d % 2 or d < 6 or not 3 <= n <= MAX_FIT_ROWS or not np.array_equal(x[:, :h], x[:, h:]):
            return None  # the sample says no before the whole table is read
        if not (np.all(x[0] == 1) or np.all(x[0] == 0)):
            return None
        x = sample.rows(0, n)[:, :h]
        if not np.all(np.isfinite(x)) or np.abs(x).max() > 1 or not np.any(x[1:, 0] == x[:-1, 0]):
            return None
        return x

    return sample.memo(("mrope", "table"), read)


def _thetas(sample: Sample) -> list[float]:
    """θ from the head rows when they are text (plain rope waves), then the common ones."""
    x = _table(sample)
    if x is None:
        return []
    h = x.shape[1]
    e = np.arange(h) * 2.0 / (2 * h)
    found: list[float] = []
    for rows in (64, 32, 16, 8, 6):
        omega = cosine_frequencies(x[:rows]) if x.shape[0] >= rows else None
        if omega is None:
            continue
        count = int(np.argmin(np.isfinite(omega))) if not np.all(np.isfinite(omega)) else h
        estimate = fit_base(omega[:count], e[:count]) if count >= 2 else None
        if estimate is not None:  # the round numbers near it first (a short head measures θ roughly)
            found = [t for t in (round_number(estimate, k) for k in range(1, 7)) if abs(t / estimate - 1) < 1e-2]
            found.append(estimate)
        break
    return list(dict.fromkeys([*found, *_COMMON_THETAS]))


def _section_guesses(sample: Sample) -> list[str]:
    """Sections the table suggests: where consecutive tokens of a frame first differ (after a grid
    row: the height section's first column; inside one: about the width's); Qwen's 16;24;24 of 64."""
    x = _table(sample)
    if x is None:
        return []
    h = x.shape[1]
    same = x[1:] == x[:-1]
    first = np.argmin(same, axis=1)[~same.all(axis=1)]
    starts = sorted(set(first[first > 0].tolist()))
    a, b = max(1, h // 4), max(1, h // 4) + max(1, (h - h // 4) // 2)
    pairs = [(starts[0], w) for w in range(starts[1], starts[1] - 4, -1)] if len(starts) > 1 else []
    if starts:
        pairs += [(starts[0], b), (a, starts[0])]
    pairs.append((a, b))
    return [f"{p};{q - p};{h - q}" for p, q in dict.fromkeys(pairs) if 0 < p < q < h]


def _interleaved_guesses(sample: Sample) -> list[str]:
    """Interleaved sections (Qwen3-VL's 24;20;20 of 64): height and width alike, ``5/16`` of the
    frequencies each (or one fewer), the temporal the rest; only for tables :func:`_table` takes."""
    x = _table(sample)
    if x is None:
        return []
    h = x.shape[1]
    sizes = dict.fromkeys(k for k in (round(h * 5 / 16), round(h * 5 / 16) - 1) if k >= 1 and 3 * k - 1 <= h)
    return [f"{h - 2 * k};{k};{k}" for k in sizes if h - 2 * k >= k]


def _ids(
    kind: type[Mrope], sample: Sample, theta: float, sections: str, part: str, interleaved: bool = False
) -> tuple[np.ndarray, np.ndarray] | None:
    """The temporal and height ids of every row under these θ, sections and part (``None``: none fit)."""

    def decode() -> tuple[np.ndarray, np.ndarray] | None:
        x = _table(sample)
        if x is None or not (np.all(x[0] == 1) if part == "cos" else np.all(x[0] == 0)):
            return None
        try:
            probe = kind(2 * x.shape[1], "text=1", theta, sections, mrope_interleaved=interleaved)
        except RecipeError:
            return None
        inv = np.asarray(probe.inv_freq(), dtype=np.float64)
        t_cols, h_cols = probe.columns(0), probe.columns(1)
        n, tol = x.shape[0], 2 * sample.eps  # each value within its rounding (bfloat16: 2⁻⁹), twice over
        h_ids = _decode(x[:, h_cols], inv[h_cols], part, n + 1, tol)
        t_ids = _decode(x[:, t_cols], inv[t_cols], part, 64 * n + 4096, tol, h_ids) if h_ids is not None else None
        coarse = sample.eps >= 2.0**-11  # float16 or bfloat16 values
        if coarse and t_ids is not None and h_ids is not None and sequence_of(np.stack([t_ids, h_ids])) is None:
            # 16-bit values leave the height's slow columns ambiguous near 0 (bfloat16 cos of 0.03
            # and of 0.09 are one number): the temporal ids, which hold the fastest frequency,
            # first, and the height's from them (a text token's ids are all equal).
            t_first = _decode(x[:, t_cols], inv[t_cols], part, n + 1, tol)
            h_then = _decode(x[:, h_cols], inv[h_cols], part, n + 1, tol, t_first) if t_first is not None else None
            if t_first is not None and h_then is not None:
                t_ids, h_ids = t_first, h_then
        return None if t_ids is None or h_ids is None else (t_ids, h_ids)

    return sample.memo(("mrope ids", theta, sections, part, interleaved), decode)


def _decoded(
    kind: type[Mrope],
    sample: Sample,
    theta: float,
    sections: str,
    part: str,
    tps: float | None,
    interleaved: bool = False,
) -> tuple[Mrope, float] | None:
    """The recipe whose ids the table's rows follow, and its max |Δ| from the whole table; ``None``
    when there is none, or it holds no image or video (a rope table)."""

    def build() -> tuple[Mrope, float] | None:
        ids, x = _ids(kind, sample, theta, sections, part, interleaved), _table(sample)
        sequence = sequence_of(np.stack(ids), tps) if ids is not None else None
        if x is None or sequence is None or sequence.replace("text=", "").isdigit():
            return None
        try:
            recipe = kind(
                2 * x.shape[1],
                sequence,
                theta,
                sections,
                tps,
                cast("MropePart", part),
                dtype=cast("DType", sample.dtype),
                mrope_interleaved=interleaved,
            )
        except RecipeError:
            return None
        error = float(np.abs(recipe.rows(0, x.shape[0])[:, : x.shape[1]].astype(np.float64) - x).max())
        return (recipe, error) if error <= 4 * sample.eps + 1e-6 + recipe.max_position() * 2.0**-21 else None

    return sample.memo(("mrope", theta, sections, part, tps, interleaved), build)


def _decode(x: Arr, inv: Arr, part: str, limit: int, tol: float, guess: np.ndarray | None = None) -> np.ndarray | None:
    """The whole position of each row of one section's columns (``inv`` falling), below ``limit``.

    Rows equal to ``guess``'s prediction take it; the others (each distinct row once) are solved
    from the slowest column up: every turn count ``m`` the limit allows, refined column by column
    (the branch nearest the current estimate), rounded, and the candidate that predicts the row
    best is kept.  ``None`` if some row is not within ``tol + (1 + p)·2⁻²¹`` of any.
    """
    fn = np.cos if part == "cos" else np.sin
    out = np.zeros(x.shape[0], dtype=np.int64)
    todo = np.ones(x.shape[0], dtype=bool)
    if guess is not None:
        todo = _error(x, inv, guess, fn) > tol + (1 + guess) * 2.0**-21
        out[~todo] = guess[~todo]
    if not todo.any():
        return out
    rows, back = np.unique(x[todo], axis=0, return_inverse=True)
    slow = inv[-1]
    turns_ = np.arange(int(limit * slow / (2 * math.pi)) + 2)
    arc = np.arccos if part == "cos" else np.arcsin
    first = arc(np.clip(rows[:, -1], -1, 1))[:, None]
    branches = (first, -first) if part == "cos" else (first, math.pi - first)
    best = np.zeros(rows.shape[0], dtype=np.int64)
    error = np.full(rows.shape[0], np.inf)
    for branch in branches:
        p = (branch + 2 * math.pi * turns_[None, :]) / slow
        for j in range(rows.shape[1] - 2, -1, -1):
            base = arc(np.clip(rows[:, j], -1, 1))[:, None]
            target = p * inv[j]
            one, two = (
                b + 2 * math.pi * np.rint((target - b) / (2 * math.pi))
                for b in ((base, -base) if part == "cos" else (base, math.pi - base))
            )
            pick = np.where(np.abs(two - target) < np.abs(one - target), two, one)
            p = np.where(np.abs(pick - target) < 0.5, pick / inv[j], p)
        p = np.clip(np.rint(p), 0, limit).astype(np.int64)
        for k in range(p.shape[1]):
            e = _error(rows, inv, p[:, k], fn)
            better = e < error
            best, error = np.where(better, p[:, k], best), np.where(better, e, error)
    if np.any(error > tol + (1 + best) * 2.0**-21):
        return None
    out[todo] = best[back.reshape(-1)]
    return out


def _error(x: Arr, inv: Arr, p: np.ndarray, fn: Any) -> Arr:
    """Each row's largest distance from the float32 pipeline's values at position ``p``."""
    predicted = fn((p.astype(f32)[:, None] * inv.astype(f32)[None, :]).astype(np.float64))
    error: Arr = np.abs(predicted - x).max(axis=1)
    return error


def fit_mrope(kind: type[Mrope], sample: Sample) -> Iterator[Mrope]:
    """M-RoPE caches of a sequence with images or videos (text-only tables are rope's), and
    their position ids (``--part ids``: three whole numbers a token)."""
    ids = _ids_recipe(kind, sample)
    if ids is not None:
        sample.clue(
            f"three whole numbers a row: get_rope_index's position ids over {ids.sequence} "
            "(ids do not show θ, the sections or the width: the recipe has the defaults)",
            ids,
        )
        yield ids
        return
    yield from _fit_angles(kind, sample)
    best: tuple[Mrope, float] | None = None
    guesses = [(s, False) for s in _section_guesses(sample)] + [(s, True) for s in _interleaved_guesses(sample)]
    for theta, part, tps in itertools.product(_thetas(sample), ("cos", "sin"), (None, _QWEN25_TPS)):
        # Sections (or θ) that differ only where the table cannot tell them apart all fit: the closest,
        # the roundest first; one within a few ulps ends the search.
        for s, mixed in guesses:
            found = _decoded(kind, sample, theta, s, part, tps, mixed)
            best = found if found is not None and (best is None or found[1] < best[1]) else best
        if best is not None and best[1] <= 8 * sample.eps:
            break
    if best is not None:
        recipe = best[0]
        sample.clue(
            f"the {sample.d // 2} distinct columns repeat in the half layout; their rows follow three position ids "
            f"per token (M-RoPE sections {recipe.mrope_section}, θ = {recipe.base:.10g}) over {recipe.sequence}",
            recipe,
        )
        yield from (recipe, replace(recipe, compute="exact"))


def sizes_of(kind: type[Mrope], params: dict[str, Any], sample: Sample) -> Iterator[dict[str, Any]]:
    """The preset's θ and sections over the sequence the table's rows follow."""
    d = sample.d
    try:  # the kind says whether the preset's sections fit this width
        probe = kind(d, "text=1", params.get("base", 1000000.0), params.get("mrope_section", "16;24;24"))
    except RecipeError:
        return
    sections, theta = probe.mrope_section, probe.base
    for part in ("cos", "sin"):
        found = _decoded(kind, sample, theta, sections, part, params.get("tokens_per_second"))
        if found is not None:
            yield {"dim": d, "sequence": found[0].sequence, "part": part, "dtype": sample.dtype}


__all__ = ["fit_mrope", "sizes_of"]
