"""The axial kind: diffusers' per-axis rotary embeddings (Flux and the models sharing its code).

diffusers 0.42.1 ``get_1d_rotary_pos_embed(dim, pos, theta, use_real=True, linear_factor,
ntk_factor, repeat_interleave_real)`` builds one axis: ``inv_freq_i = 1/(θ·ntk)^(2i/dim)/linear``,
``cos``/``sin`` of ``pos·inv_freq`` repeated ``[c0, c0, c1, c1, …]`` (``repeat_interleave_real``)
or ``[c0…, c0…]``.  ``FluxPosEmbed(theta, axes_dim)`` calls it once per axis of the token ids
``(N, n_axes)`` in float64 on CPU and concatenates the axes; ``FluxPipeline`` gives text tokens
all-zero ids and the packed latent grid's tokens ``(0, row, col)``.  This module turns a sequence
description into those ids (:func:`token_ids`), builds any row range (:meth:`Axial.rows`) and reads a
table's sequence back for identify (:meth:`Axial.sizes`, :meth:`Axial.fit`).

>>> token_ids("text=2;image=2x3", 3).tolist()
[[0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 1, 1, 1], [0, 0, 0, 1, 2, 0, 1, 2]]
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Literal, NamedTuple, get_args

import numpy as np

from pecli.dtypes import DTYPES, DType
from pecli.errors import RecipeError
from pecli.fitting import Sample
from pecli.kernels.compiled import flat_sincos
from pecli.kernels.exact import row_blocks, sincos, turns
from pecli.kernels.pipelines import f32, pow32, rounded32
from pecli.kernels.threads import run_blocks
from pecli.kinds.rope import Rope
from pecli.params import choice, int_param, positive_float
from pecli.recipe import Pipelined, Recipe, listed
from pecli.resources import check_row_range

AxialLayout = Literal["half", "pairs"]
AxialPart = Literal["cos", "sin", "angle", "ids"]
AxialCompute = Literal["float64", "float32", "exact"]

_EXAMPLE = "text=512;image=64x64"
_ITEM = re.compile(r"(text|image|video)\s*=\s*(.*)")
_GRID = re.compile(r"(\d+)\s*[x×]\s*(\d+)")
_VIDEO = re.compile(r"(\d+)\s*[x×]\s*(\d+)\s*[x×]\s*(\d+)")
#: Tables with more rows are not read back (identify reads the whole table to find its sequence).
MAX_FIT_ROWS = 1 << 17
#: Axes and θ tried by :meth:`Axial.fit`: Flux.1's, and CogVideoX's (head dim 64: t 16, h 24, w 24).
_COMMON = (("16;56;56", 10000.0), ("16;24;24", 10000.0))
#: The value an axis holds at id 0, by part (cos 1; sin, angle and ids 0).
_ZERO = {"cos": 1.0}


class Segment(NamedTuple):
    """A run of tokens from row ``first`` on: ``text`` (``width`` tokens, ids all zero), an
    ``image`` grid of ``height×width`` tokens with ids ``(0, row, col)``, or a ``video`` of
    ``frames×height×width`` tokens with ids ``(frame, row, col)`` (CogVideoX's 3-D rotary grid)."""

    kind: str
    height: int
    width: int
    first: int
    frames: int = 1

    @property
    def tokens(self) -> int:
        return self.frames * self.height * self.width

    def text(self) -> str:
        if self.kind == "video":
            return f"video={self.frames}x{self.height}x{self.width}"
        return f"text={self.width}" if self.kind == "text" else f"image={self.height}x{self.width}"


@functools.lru_cache(maxsize=64)
def segments(sequence: str) -> tuple[Segment, ...]:
    """The segments of a description like ``text=512;image=64x64`` (``;`` or ``,`` between them)."""
    if not isinstance(sequence, str):
        raise RecipeError(f"tokens must be text like {_EXAMPLE!r}, got {sequence!r}")
    items = [s.strip() for s in sequence.replace(";", ",").split(",") if s.strip()]
    if not items:
        raise RecipeError(f"no tokens given: give the segments, e.g. --tokens {_EXAMPLE}")
    out: list[Segment] = []
    first = 0
    for item in items:
        m = _ITEM.fullmatch(item)
        value = m.group(2).strip() if m else ""
        grid = _GRID.fullmatch(value) if m and m.group(1) == "image" else None
        video = _VIDEO.fullmatch(value) if m and m.group(1) == "video" else None
        if m is None or not (value.isdigit() if m.group(1) == "text" else (grid or video)):
            raise RecipeError(
                f"tokens segment {item!r} is not text=N, image=HxW or video=TxHxW: give e.g. --tokens {_EXAMPLE}"
            )
        if video is not None:
            frames, height, width = (int(g) for g in video.groups())
        elif grid is not None:
            frames, height, width = 1, int(grid.group(1)), int(grid.group(2))
        else:
            frames, height, width = 1, 1, int(value)
        if min(height, width, frames) < 1:
            raise RecipeError(
                f"tokens segment {item!r} has a zero size: every count is at least 1 (an image is its latent "
                "grid after packing, e.g. image=64x64 for 1024×1024 pixels)"
            )
        out.append(Segment(m.group(1), height, width, first, frames))
        first += frames * height * width
    return tuple(out)


def token_ids(sequence: str, axes: int, r0: int = 0, r1: int | None = None, base_grid: str | None = None) -> np.ndarray:
    """The ``(axes, r1 − r0)`` ids of tokens ``[r0, r1)``: text all zero, image ``(0, row, col)``
    (``FluxPipeline._prepare_latent_image_ids``); only the segments those tokens fall in are visited.
    ``base_grid``: a video's rows and columns at CogVideoX's positions (:func:`crop_positions`,
    float64 ids)."""
    segs = segments(sequence)
    total = segs[-1].first + segs[-1].tokens
    r1 = total if r1 is None else r1
    check_row_range(total, r0, r1)
    out = np.zeros((axes, r1 - r0), dtype=np.int64 if base_grid is None else np.float64)
    i = max(0, bisect.bisect_right([s.first for s in segs], r0) - 1)
    while i < len(segs) and segs[i].first < r1:
        s = segs[i]
        a, b = max(r0, s.first), min(r1, s.first + s.tokens)
        if s.kind != "text":
            j = np.arange(a - s.first, b - s.first)
            out[0, a - r0 : b - r0] = j // (s.height * s.width)  # the frame (0 for an image)
            row, col = (j // s.width) % s.height, j % s.width
            if base_grid is not None and s.kind == "video":
                rows, cols = crop_positions(s, base_grid)
                row, col = rows[row], cols[col]
            out[1, a - r0 : b - r0] = row
            out[2, a - r0 : b - r0] = col
        i += 1
    return out


def crop_positions(segment: Segment, base_grid: str) -> tuple[np.ndarray, np.ndarray]:
    """The row and column positions CogVideoX's pipeline gives a ``segment`` whose grid is not the
    ``base_grid`` it was trained at: ``get_resize_crop_region_for_grid`` (the grid fitted into the
    base, centered: Python's ``round``), then ``get_3d_rotary_pos_embed``'s ``torch.linspace(start,
    stop·(n−1)/n, n)`` in float32 (each position ``start + step·i`` rounded once, from the end after
    halfway, as torch's kernel computes it with an FMA).  At the base grid they are ``0 … n−1``."""
    base_h, base_w = (int(v) for v in base_grid.split("x"))
    h, w = segment.height, segment.width
    if h / w > base_h / base_w:
        resize_h, resize_w = base_h, round(base_h / h * w)
    else:
        resize_w, resize_h = base_w, round(base_w / w * h)
    top, left = round((base_h - resize_h) / 2.0), round((base_w - resize_w) / 2.0)
    return _linspace32(top, top + resize_h, h), _linspace32(left, left + resize_w, w)


def _linspace32(start: int, stop: int, n: int) -> np.ndarray:
    """``torch.linspace(start, stop·(n−1)/n, n, dtype=float32)`` (as float64 values)."""
    s, e = np.float64(f32(start)), np.float64(f32(stop * (n - 1) / n))
    if n == 1:
        return np.array([s])
    step = np.float64(f32(f32(e - s) / f32(n - 1)))
    i = np.arange(n, dtype=np.float64)
    # step·i (24 + 24 bits) and its sum with a grid position (integers below 2**24, steps near 1) are
    # exact in float64, so the one rounding to float32 is the FMA's.
    return np.where(i < n // 2, s + step * i, e - step * (n - 1 - i)).astype(f32).astype(np.float64)


def axes_list(value: object) -> str:
    """``axes_dim`` as ``"a;b;c"``: even whole numbers ≥ 2 (given as ``"16;56;56"``, ``"16,56,56"``,
    ``"[16, 56, 56]"`` or a list)."""
    text = listed(value, ";")
    items = str(text).strip().strip("[]()").replace(",", ";").replace(" ", ";").split(";")
    try:
        sizes = [int(s) for s in items if s.strip()]
    except ValueError:
        sizes = []
    if not isinstance(text, str) or not sizes or min(sizes) < 2:
        raise RecipeError(f"axes_dim must be whole numbers ≥ 2, one per axis, like 16;56;56 (Flux), got {value!r}")
    odd = [a for a in sizes if a % 2]
    if odd:
        raise RecipeError(
            f"axes_dim {';'.join(map(str, sizes))} has odd {', '.join(map(str, odd))}, but rotary embeddings rotate "
            "pairs: give even sizes, e.g. 16;56;56"
        )
    return ";".join(map(str, sizes))


@dataclass(frozen=True, slots=True)
class Axial(Pipelined):
    """Per-axis rotary embeddings (diffusers' ``FluxPosEmbed``): row ``r`` is token ``r``.

    Each token has one id per axis; axis ``k`` takes ``axes_dim[k]`` columns, the ``cos`` (or
    ``sin``, or ``angle`` = ``id·inv_freq``) of its id times ``inv_freq_i = 1/(base·ntk_factor)^(2i/a)
    / linear_factor`` (``i < a/2``), laid out ``pairs`` ``[c0, c0, c1, c1, …]``
    (``repeat_interleave_real=True``, Flux) or ``half`` ``[c0…, c0…]``; the axes are concatenated.
    Tokens: ``tokens`` (``text=N`` all-zero ids, ``image=HxW`` ids ``(0, row, col)``, three axes,
    as ``FluxPipeline`` makes them) or ``length`` (one axis, positions ``0…length−1``).  ``dim``, if
    given, is the head dim the axes must fill.  ``compute``: ``float64`` is FluxPosEmbed's CPU
    pipeline, ``float32`` ``get_1d_rotary_pos_embed``'s default ``freqs_dtype``, step by step;
    ``exact`` the same formula rounded once.
    """

    axes_dim: str
    tokens: str | None = None
    length: int | None = None
    dim: int | None = None
    base: float = 10000.0
    linear_factor: float = 1.0
    ntk_factor: float = 1.0
    layout: AxialLayout = "pairs"
    part: AxialPart = "cos"
    compute: AxialCompute = "float64"
    dtype: DType = "float32"
    base_grid: str | None = None

    kind: ClassVar[str] = "axial"
    row_label: ClassVar[str] = "token"
    core: ClassVar[tuple[str, ...]] = ("axes_dim", "base", "layout", "part", "dtype")
    required: ClassVar[tuple[str, ...]] = ("axes_dim",)
    example: ClassVar[str] = "--kind axial --axes-dim 16;56;56 --tokens text=8;image=4x4"

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "axes_dim", axes_list(self.axes_dim))
        set_(self, "base", positive_float("base", self.base, "θ, e.g. --base 10000 (Flux)"))
        for name in ("linear_factor", "ntk_factor"):
            set_(self, name, positive_float(name, getattr(self, name), "1 leaves the frequencies alone"))
        if self.base * self.ntk_factor == 1:
            raise RecipeError("base × ntk_factor is 1, which gives every frequency 1: use another --base")
        for name, literal in (
            ("layout", AxialLayout),
            ("part", AxialPart),
            ("compute", AxialCompute),
            ("dtype", DType),
        ):
            choice(name, getattr(self, name), get_args(literal))
        axes = self.axes()
        if (self.tokens is None) == (self.length is None):
            raise RecipeError(
                f"an axial recipe needs --tokens (e.g. {_EXAMPLE}) or --len (positions of one axis)"
                + (": give one of them, not both" if self.tokens is not None else "")
            )
        if self.length is not None:
            set_(self, "length", int_param("length", self.length, 1, "give the number of positions, e.g. --len 4096"))
            if len(axes) != 1:
                raise RecipeError(
                    f"--len gives one axis of positions, but axes_dim {self.axes_dim} has {len(axes)}: give one size "
                    "(e.g. --axes-dim 64), or the tokens with --tokens"
                )
        else:
            segs = segments(str(self.tokens))
            set_(self, "tokens", ";".join(s.text() for s in segs))
            if any(s.kind != "text" for s in segs) and len(axes) != 3:
                raise RecipeError(
                    f"image and video tokens have three ids (frame, row, col), but axes_dim {self.axes_dim} has "
                    f"{len(axes)} axes: give three sizes, e.g. --axes-dim 16;56;56"
                )
        if self.base_grid is not None:
            grid = _GRID.fullmatch(str(self.base_grid).strip())
            if grid is None or min(int(g) for g in grid.groups()) < 1:
                raise RecipeError(
                    f"base_grid {self.base_grid!r} is not HxW: give the grid the model was trained at, "
                    "e.g. --base-grid 30x45 (CogVideoX 1.0: 480×720 pixels)"
                )
            set_(self, "base_grid", f"{int(grid.group(1))}x{int(grid.group(2))}")
            if self.tokens is None or not any(s.kind == "video" for s in segments(str(self.tokens))):
                raise RecipeError(
                    "base_grid places a video's rows and columns (CogVideoX): give --tokens video=TxHxW, "
                    "or drop --base-grid"
                )
        if self.part == "ids":
            largest = self.length - 1 if self.length is not None else self.max_position()
            if self.base_grid is not None and self.dtype not in ("float32", "float64"):
                raise RecipeError("a base grid's positions are float32 numbers: give --dtype float32 or float64")
            DTYPES[self.dtype].check_whole(largest, "the token ids")
        if self.dim is not None:
            set_(self, "dim", int_param("dim", self.dim, 2, "the head dim the axes fill, e.g. --dim 128 (Flux)"))
            if sum(axes) != self.dim:
                raise RecipeError(
                    f"axes_dim {self.axes_dim} sums to {sum(axes)}, but --dim is {self.dim}: give sizes summing to "
                    f"the head dim (Flux: 16;56;56 = 128), or drop --dim"
                )

    def axes(self) -> list[int]:
        """The width of each axis."""
        return [int(a) for a in self.axes_dim.split(";")]

    @property
    def shape(self) -> tuple[int, int]:
        if self.length is not None:
            n = self.length
        else:
            last = segments(str(self.tokens))[-1]
            n = last.first + last.tokens
        return (n, len(self.axes()) if self.part == "ids" else sum(self.axes()))

    def ids(self, r0: int, r1: int) -> np.ndarray:
        """The ``(axes, r1 − r0)`` ids of rows ``[r0, r1)``."""
        if self.length is not None:
            return np.arange(r0, r1, dtype=np.int64)[None, :]
        return token_ids(str(self.tokens), len(self.axes()), r0, r1, self.base_grid)

    def inv_freq(self, axis: int) -> np.ndarray:
        """Axis ``axis``'s inverse frequencies as the pipeline computes them (float32 or float64)."""
        a, theta = self.axes()[axis], self.base * self.ntk_factor
        if self.compute == "float32":  # 1.0 / (theta ** (arange(0, a, 2, float32) / a)) / linear_factor
            return f32(1) / pow32(theta, np.arange(0, a, 2, dtype=f32) / f32(a)) / f32(self.linear_factor)
        if self.compute == "float64":
            return np.asarray(1.0 / np.power(theta, np.arange(0, a, 2, dtype=np.float64) / a) / self.linear_factor)
        return np.asarray(Rope(1, a, theta, compute="exact").inv_freq() / self.linear_factor)

    def rows(self, r0: int, r1: int) -> np.ndarray:
        """Rows ``[r0, r1)``: each token's ids come from the segment it falls in."""
        check_row_range(self.shape[0], r0, r1)
        if self.part == "ids":  # FluxPipeline's txt_ids and latent_image_ids, one token per row
            return self.ids(r0, r1).T.astype(self.dtype)
        out = np.empty((r1 - r0, self.shape[1]), dtype=self.dtype)
        axes = self.axes()
        offsets = np.cumsum([0, *axes])
        invs = [self.inv_freq(k) for k in range(len(axes))]
        exact = [turns(inv) for inv in invs] if self.compute == "exact" else []
        # A pipeline's cos rounded to float32 (its own dtype, or the table's) is the exact kernel's
        # rounded (pipelines.rounded32); compiled for a large table, the same bits.
        to32 = (
            self.compute != "exact"
            and self.part != "angle"
            and (self.dtype == "float32" or all(inv.dtype == f32 for inv in invs))
        )
        kernel = flat_sincos(self.shape[0] * self.shape[1] // 2) if to32 else None

        def block(a: int, b: int) -> None:
            ids = self.ids(r0 + a, r0 + b)
            for k, inv in enumerate(invs):
                pos = ids[k]
                values: Any
                if self.compute == "exact" and self.part != "angle":
                    s, c = sincos(pos.astype(np.float64), *exact[k])
                    values = c if self.part == "cos" else s
                else:  # torch.outer(pos, freqs), in the frequencies' dtype
                    values = pos.astype(inv.dtype)[:, None] * inv[None, :]
                    if to32:
                        (values,) = rounded32(values, (self.part,), kernel)
                    elif self.part != "angle":
                        fn = np.cos if self.part == "cos" else np.sin
                        values = fn(values.astype(np.float64)).astype(inv.dtype)
                o, h = int(offsets[k]), axes[k] // 2
                # The one cast to dtype (diffusers' .float() for float32 tables).
                if self.layout == "pairs":
                    out[a:b, o : o + 2 * h : 2] = values
                    out[a:b, o + 1 : o + 2 * h : 2] = out[a:b, o : o + 2 * h : 2]
                else:
                    out[a:b, o : o + h] = values
                    out[a:b, o + h : o + 2 * h] = out[a:b, o : o + h]

        run_blocks(block, row_blocks(r1 - r0, self.shape[1]))
        return out

    # -- facts -------------------------------------------------------------------------------
    def paired_columns(self) -> bool:
        """pairs repeats each frequency twice, side by side."""
        return self.layout == "pairs"

    def wavelengths(self) -> np.ndarray | None:
        """``2π/inv_freq`` of each column's frequency, in ids of its own axis."""
        if self.part == "ids":
            return None
        waves = []
        for k in range(len(self.axes())):
            w = 2 * math.pi / np.asarray(self.inv_freq(k), dtype=np.float64)
            waves.append(np.repeat(w, 2) if self.layout == "pairs" else np.tile(w, 2))
        return np.concatenate(waves)

    def pipeline(self) -> str:
        return self.compute

    def max_position(self) -> float:
        if self.length is not None:
            return float(self.length)
        segs = segments(str(self.tokens))
        if self.base_grid is not None:  # a video's rows and columns lie inside the base grid
            return float(max(max(s.frames, *map(int, self.base_grid.split("x"))) for s in segs))
        return float(max(max(s.frames, s.height, s.width) for s in segs))

    # -- the inverse -------------------------------------------------------------------------
    @classmethod
    def sizes(cls, params: dict[str, Any], sample: Sample) -> Iterator[dict[str, Any]]:
        """The preset's axes over the text-then-image sequence the table's rows follow."""
        try:
            axes = [int(a) for a in axes_list(params.get("axes_dim", "")).split(";")]
        except RecipeError:
            return
        if len(axes) == 3 and sum(axes) == sample.d and params.get("tokens") is not None:
            layout = params.get("layout", "pairs")
            video = str(params["tokens"]).startswith("video=")
            for part in ("cos", "sin"):
                if video:  # a base grid other than the video's starts it off the origin
                    found = video_of(sample, axes, part, layout, origin=params.get("base_grid") is None)
                else:
                    found = sequence_of(sample, axes, part, layout)
                if found is not None:
                    yield {"tokens": found, "part": part, "dtype": sample.dtype}

    @classmethod
    def fit(cls, sample: Sample) -> Iterator[Recipe]:
        """Flux-style tables (text then one image, or a video; three axes): the sequence read from
        the rows, in either layout, for each part (an ``ids`` table, three columns, is the ids
        themselves: any three axes and θ build it)."""
        tried: list[tuple[str, float, str, str]] = [
            (axes_dim, theta, part, layout)
            for axes_dim, theta in _COMMON
            if sum(int(a) for a in axes_dim.split(";")) == sample.d
            for part, layout in itertools.product(("cos", "sin", "angle"), get_args(AxialLayout))
        ]
        if sample.d == 3:
            tried.append((_COMMON[0][0], _COMMON[0][1], "ids", "ids"))
        for (axes_dim, theta, part, layout), read in itertools.product(tried, (sequence_of, video_of)):
            axes = [1, 1, 1] if part == "ids" else [int(a) for a in axes_dim.split(";")]
            found = read(sample, axes, part, layout)
            if found is None:
                continue
            shape = {"pairs": "repeat in pairs", "half": "repeat in halves", "ids": "are the ids"}[layout]
            ids = "(frame, row, col)" if found.startswith("video=") else "(0, row, col)"
            base = dict(layout=layout) if part != "ids" else {}
            recipe = cls(axes_dim, found, base=theta, part=part, dtype=sample.dtype, **base)  # type: ignore[arg-type]
            sample.clue(f"the columns {shape} over axes {axes_dim}; the rows follow ids {ids} over {found}", recipe)
            yield recipe
            for compute in ("exact", "float32") if part != "ids" else ():
                yield replace(recipe, compute=compute)


def sequence_of(sample: Sample, axes: list[int], part: str, layout: str) -> str | None:
    """The ``text=N;image=HxW`` (or ``image=HxW``, ``text=N``) sequence whose all-zero ids and
    ``(0, row, col)`` ids the table's rows follow (an axis holds id 0 where it is all 1 for cos, all 0
    for sin), or ``None``."""

    def read() -> str | None:
        n, d = sample.n, sample.d
        if sum(axes) != d or len(axes) != 3 or n > MAX_FIT_ROWS:
            return None
        zero = _ZERO.get(part, 0.0)
        if not np.all(sample.values[:, : axes[0]] == zero):
            return None  # the sample says no before the whole table is read
        x = sample.rows(0, n)
        o = np.cumsum([0, *axes])
        at_zero = [np.all(x[:, o[k] : o[k + 1]] == zero, axis=1) for k in range(3)]
        if not at_zero[0].all():
            return None
        both = at_zero[1] & at_zero[2]
        lead = int(np.argmin(both)) if not both.all() else n
        if lead == n:
            return f"text={n}"
        if lead == 0:
            return None  # token 0 is not at the origin: no text-then-image sequence
        start = lead - 1  # the image's first token, (0, 0, 0), ends the run
        later = np.flatnonzero(at_zero[2][start + 1 :])
        width = int(later[0]) + 1 if later.size else n - start
        if (n - start) % width:
            return None
        image = f"image={(n - start) // width}x{width}"
        return f"text={start};{image}" if start else image

    return sample.memo(("axial sequence", tuple(axes), part, layout), read)


def _repeats(head: np.ndarray, axes: list[int], layout: str) -> bool:
    """Whether each axis's columns repeat as ``layout`` lays them (``ids``: one column each)."""
    if layout == "pairs":
        return np.array_equal(head[:, 0::2], head[:, 1::2])
    if layout == "half":
        o = np.cumsum([0, *axes])
        h = [a // 2 for a in axes]
        return all(
            np.array_equal(head[:, o[k] : o[k] + h[k]], head[:, o[k] + h[k] : o[k + 1]]) for k in range(len(axes))
        )
    return True


def video_of(sample: Sample, axes: list[int], part: str, layout: str, origin: bool = True) -> str | None:
    """The ``video=TxHxW`` grid whose ``(frame, row, col)`` ids the table's rows follow (C order:
    the column id moves every row, the row id every ``W`` rows, the frame every ``H·W``), or
    ``None``: where each axis's columns first leave row 0's values is its stride.  ``origin``:
    token 0 has ids ``(0, 0, 0)`` (not so for a grid cropped into a base grid)."""

    def read() -> str | None:
        n, d = sample.n, sample.d
        if sum(axes) != d or len(axes) != 3 or n > MAX_FIT_ROWS or n < 2:
            return None
        zero = _ZERO.get(part, 0.0)
        head = sample.rows(0, min(n, sample.head_rows))
        if (origin and not np.all(head[0] == zero)) or not _repeats(head, axes, layout):
            return None  # token 0 has ids (0, 0, 0), and the columns repeat: else read no further
        x = sample.rows(0, n)
        o = np.cumsum([0, *axes])
        moved = [np.flatnonzero(np.any(x[:, o[k] : o[k + 1]] != x[0, o[k] : o[k + 1]], axis=1)) for k in range(3)]
        if not moved[2].size or moved[2][0] != 1:
            return None  # the column id moves from token 1 on
        width = int(moved[1][0]) if moved[1].size else n
        plane = int(moved[0][0]) if moved[0].size else n
        if plane % width or n % plane:
            return None
        return f"video={n // plane}x{plane // width}x{width}"

    return sample.memo(("axial video", tuple(axes), part, layout, origin), read)


__all__ = [
    "Axial",
    "AxialCompute",
    "AxialLayout",
    "AxialPart",
    "Segment",
    "axes_list",
    "crop_positions",
    "segments",
    "token_ids",
]
