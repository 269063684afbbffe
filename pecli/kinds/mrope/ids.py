"""Qwen2-VL's position ids: a sequence of text, image and video segments ↔ its (temporal, height,
width) ids, by transformers 5.23's ``Qwen2VLModel.get_rope_index`` (Qwen2.5-VL's spacing of video
frames with ``tokens_per_second``).  The rule of the :mod:`pecli.kinds.mrope` kind, both ways.

>>> position_ids("text=2;image=1x2x3;text=1").tolist()
[[0, 1, 2, 2, 2, 2, 2, 2, 5], [0, 1, 2, 2, 2, 3, 3, 3, 5], [0, 1, 2, 3, 4, 2, 3, 4, 5]]
>>> sequence_of(position_ids("text=2;video=2x1x2;text=1"))
'text=2;video=2x1x2;text=1'
"""

from __future__ import annotations

import bisect
import functools
import math
import re
from typing import NamedTuple

import numpy as np

from pecli.errors import RecipeError
from pecli.kernels.pipelines import f32
from pecli.recipe import format_value
from pecli.resources import check_row_range

_EXAMPLE = "text=16,image=1x8x8,text=8"
_ITEM = re.compile(r"(text|image|video)\s*=\s*(.*)")
_GRID = re.compile(r"(\d+)\s*[x×]\s*(\d+)\s*[x×]\s*(\d+)\s*(?:@\s*(\S+))?")
AXES = ("temporal", "height", "width")


class Segment(NamedTuple):
    """A run of tokens: ``text`` (``width`` tokens) or an ``image``/``video`` grid of ``frames×height×width``
    merged tokens, frames ``step`` positions apart (a video's ``seconds``: second_per_grid_t) from
    token (row) ``first`` and position ``start`` on."""

    kind: str
    frames: int
    height: int
    width: int
    seconds: float
    step: float
    first: int
    start: int

    @property
    def tokens(self) -> int:
        return self.frames * self.height * self.width

    def text(self) -> str:
        if self.kind == "text":
            return f"text={self.width}"
        seconds = "" if self.seconds == 1 else f"@{format_value(self.seconds)}"
        return f"{self.kind}={self.frames}x{self.height}x{self.width}{seconds}"

    def last_position(self) -> int:
        if self.kind == "text":
            return self.start + self.width - 1
        t = int(frame_offsets(self.frames, self.step)[-1])
        return self.start + max(t, self.height - 1, self.width - 1)


def frame_interval(tokens_per_second: float | None, seconds: float) -> float:
    """Qwen2.5-VL's ``time_interval = tokens_per_second * second_per_grid_t`` (a float32 tensor
    product unless both are whole numbers); Qwen2-VL's is 1."""
    if tokens_per_second is None:
        return 1.0
    product = tokens_per_second * seconds
    exact = float(tokens_per_second).is_integer() and float(seconds).is_integer()
    return float(product) if exact else float(f32(tokens_per_second) * f32(seconds))


def frame_offsets(frames: int | np.ndarray, step: float) -> np.ndarray:
    """``(arange(T) * time_interval).long()``: torch multiplies in float32 and truncates."""
    f = np.arange(int(frames)) if isinstance(frames, int) else np.asarray(frames)
    if float(step).is_integer():
        return (f * int(step)).astype(np.int64)
    return (f.astype(f32) * f32(step)).astype(np.int64)


def segments(value: str, tokens_per_second: float | None) -> tuple[Segment, ...]:
    """The segments of a sequence description, positions assigned by transformers 5.23's rule."""
    if not isinstance(value, str):
        raise RecipeError(f"sequence must be text like {_EXAMPLE!r}, got {value!r}")
    items = [s.strip() for s in value.replace(";", ",").split(",") if s.strip()]
    if not items:
        raise RecipeError(f"sequence is empty: give its segments, e.g. --sequence {_EXAMPLE}")
    out: list[Segment] = []
    first = position = 0
    for item in items:
        m = _ITEM.fullmatch(item)
        kind = m.group(1) if m else ""
        grid = _GRID.fullmatch(m.group(2).strip()) if m and kind != "text" else None
        if m is None or (kind == "text" and not m.group(2).strip().isdigit()) or (kind != "text" and not grid):
            raise RecipeError(
                f"sequence segment {item!r} is not text=N, image=TxHxW or video=TxHxW[@S]: give e.g. "
                f"--sequence {_EXAMPLE}"
            )
        if grid is None:
            sizes, seconds = (1, 1, int(m.group(2))), 1.0
        else:
            sizes, seconds = (
                (int(grid.group(1)), int(grid.group(2)), int(grid.group(3))),
                seconds_of(item, grid.group(4)),
            )
        if min(sizes) < 1:
            raise RecipeError(
                f"sequence segment {item!r} has a zero size: every count is at least 1 (grids count merged "
                "tokens, e.g. image=1x4x6)"
            )
        if seconds != 1 and (kind == "image" or tokens_per_second is None):
            raise RecipeError(
                f"sequence segment {item!r}: frames are 1 position apart in images and in Qwen2-VL; seconds per "
                "frame space a video's frames with --tokens-per-second (Qwen2.5-VL: 2)"
            )
        if out and kind != "text" and out[-1].kind == kind:
            raise RecipeError(
                f"sequence {value!r} has two {kind} segments in a row, which transformers' get_rope_index groups "
                "into one and fails on: put text between them (Qwen's template has <|vision_end|><|vision_start|>)"
            )
        step = frame_interval(tokens_per_second, seconds) if kind == "video" else 1.0
        seg = Segment(kind, *sizes, seconds, step, first, position)
        out.append(seg)
        first += seg.tokens
        # get_rope_index: text advances by its length, a grid by max(h, w) (after spatial merging).
        position += seg.width if kind == "text" else max(seg.height, seg.width)
    return tuple(out)


def seconds_of(item: str, text: str | None) -> float:
    if text is None:
        return 1.0
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds <= 0:
        raise RecipeError(
            f"sequence segment {item!r}: the seconds per frame after @ must be a number > 0 (second_per_grid_t: "
            "temporal_patch_size / fps, e.g. @1 at 2 fps)"
        )
    return seconds


@functools.lru_cache(maxsize=64)
def plan(sequence: str, tokens_per_second: float | None) -> tuple[tuple[Segment, ...], list[int]]:
    segs = segments(sequence, tokens_per_second)
    return segs, [s.first for s in segs]


def position_ids(
    sequence: str, r0: int = 0, r1: int | None = None, tokens_per_second: float | None = None
) -> np.ndarray:
    """The ``(3, r1 − r0)`` position ids (temporal, height, width) of tokens ``[r0, r1)`` of a
    sequence like ``text=16;image=1x8x8;text=8``, as ``get_rope_index`` of transformers 5.23
    computes them (Qwen2-VL's; with ``tokens_per_second``, Qwen2.5-VL's); only the segments those
    tokens fall in are visited."""
    segments, firsts = plan(sequence, tokens_per_second)
    total = segments[-1].first + segments[-1].tokens
    r1 = total if r1 is None else r1
    check_row_range(total, r0, r1)
    out = np.empty((3, r1 - r0), dtype=np.int64)
    i = max(0, bisect.bisect_right(firsts, r0) - 1)
    while i < len(segments) and segments[i].first < r1:
        s = segments[i]
        a, b = max(r0, s.first), min(r1, s.first + s.tokens)
        j = np.arange(a - s.first, b - s.first)
        if s.kind == "text":
            out[:, a - r0 : b - r0] = s.start + j
        else:
            area = s.height * s.width
            out[0, a - r0 : b - r0] = s.start + frame_offsets(j // area, s.step)
            out[1, a - r0 : b - r0] = s.start + (j // s.width) % s.height
            out[2, a - r0 : b - r0] = s.start + j % s.width
        i += 1
    return out


def sequence_of(ids: np.ndarray, tokens_per_second: float | None = None) -> str | None:
    """The sequence whose :func:`position_ids` (with ``tokens_per_second``) are ``ids`` (rows
    temporal, height[, width]), or ``None`` when they do not follow that rule.  Grids are read from
    the temporal and height rows; a width row, if given, must agree.  A 1×1×1 grid is the text
    token it equals."""
    ids = np.asarray(ids, dtype=np.int64)
    t, h = ids[0].tolist(), ids[1].tolist()
    n, i, c, text = len(t), 0, 0, 0
    items: list[str] = []
    while i < n:
        if t[i] != c or h[i] != c:
            return None
        j = i + 1
        while j < n and t[j] == c and h[j] == c:
            j += 1
        width = j - i
        if width == 1 and (j == n or (t[j], h[j]) == (c + 1, c + 1)):
            text, c, i = text + 1, c + 1, i + 1
            continue
        if text:
            items.append(f"text={text}")
            text = 0
        height = 1
        while i + (height + 1) * width <= n and all(
            t[k] == c and h[k] == c + height for k in range(i + height * width, i + (height + 1) * width)
        ):
            height += 1
        area, pattern = height * width, [c + k // width for k in range(height * width)]
        frames = [c]
        while i + (len(frames) + 1) * area <= n:
            a = i + len(frames) * area
            if h[a : a + area] != pattern or len(set(t[a : a + area])) != 1 or t[a] < frames[-1]:
                break
            frames.append(t[a])
        seconds = fit_seconds([f - c for f in frames], tokens_per_second)
        if seconds is None:
            return None
        image = len(frames) == 1 and not (items and items[-1].startswith("image"))
        items.append(Segment("image" if image else "video", len(frames), height, width, seconds, 1, 0, c).text())
        c, i = c + max(height, width), i + len(frames) * area
    if text:
        items.append(f"text={text}")
    sequence = ";".join(items)
    try:
        same = ids.shape[0] < 3 or np.array_equal(position_ids(sequence, 0, n, tokens_per_second), ids[:3])
    except RecipeError:
        return None
    return sequence if same else None


def fit_seconds(offsets: list[int], tokens_per_second: float | None) -> float | None:
    """The roundest seconds per frame whose frames fall at these temporal offsets."""
    if offsets == list(range(len(offsets))) and (tokens_per_second is None or len(offsets) == 1):
        return 1.0
    if tokens_per_second is None:
        return None
    lo = max(d / k for k, d in enumerate(offsets) if k) / tokens_per_second
    hi = min((d + 1) / k for k, d in enumerate(offsets) if k) / tokens_per_second
    for decimals in range(7):
        x = max(math.ceil(lo * 10**decimals), 1) / 10**decimals
        if x < hi and frame_offsets(len(offsets), frame_interval(tokens_per_second, x)).tolist() == offsets:
            return float(x)
    return None


__all__ = [
    "AXES",
    "Segment",
    "fit_seconds",
    "frame_interval",
    "frame_offsets",
    "plan",
    "position_ids",
    "segments",
    "sequence_of",
]
