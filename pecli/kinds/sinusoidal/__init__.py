"""The sinusoidal kind: the 1-D table of "Attention Is All You Need" (§3.5) and its framework dialects.

``PE(p, 2i) = sin(p·ω_i)``, ``PE(p, 2i+1) = cos(p·ω_i)``, ``ω_i = base^(−2i/d)``, and the variants
frameworks use: the frequency rule, the layout of the columns, the odd-width policy, a padding
row, and the float32/float64 pipeline they compute it with.  This module builds any row range
(:meth:`Sinusoidal.rows`) and fits a table back to its parameters (:meth:`Sinusoidal.fit`).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar, Literal, get_args

import numpy as np

from pecli.dtypes import DType, numpy_dtype, round_to
from pecli.errors import RecipeError
from pecli.kernels.compiled import flat_sincos, pipeline32
from pecli.kernels.exact import BLOCK_CELLS, frequencies, row_blocks, sincos_pairs
from pecli.kernels.pipelines import compute_dtype, rounded, sin_cos_rounded
from pecli.kernels.rotation import fill_sincos, rotates
from pecli.kernels.threads import cpu_threads, run_blocks
from pecli.params import choice, int_param, positive_float
from pecli.recipe import SCRATCH_BYTES_PER_CELL, Mistake, Pipelined, Recipe, built_from_float32
from pecli.resources import check_row_range

if TYPE_CHECKING:
    from pecli.dtypes import Ids

if TYPE_CHECKING:  # the inverse direction (identify) loads pecli.fitting when it runs
    from pecli.fitting import Sample

Layout = Literal["interleaved", "split", "cos-first"]
Freq = Literal["paper", "t2t", "half"]
Odd = Literal["sin", "zero", "truncate", "error"]
Compute = Literal["exact", "float64", "float32", "bfloat16"]
Form = Literal["exp", "pow", "div", "exp-div", "inv-pow", "neg-pow"]
#: Bytes the rotation kernel keeps per frequency of a rotated table, whatever its rows: the cached
#: rotations of the first block and of 64 block offsets (complex128) and their exact evaluation.
#: Measured (tracemalloc, 2 threads): 2.3 kB a frequency for 4 rows, 4.5 kB for 2000 rows.
ROTATION_BYTES = 4096
#: And per thread: its coarse rotations, the block's rotations and a complex scratch.
ROTATION_BYTES_PER_THREAD = 768
#: Bytes a frequency costs while the table is built: ω and its double-double ``ω/2π`` (24) and its
#: exponent fraction in the cache key of :func:`pecli.kernels.exact.frequencies` (a tuple of two
#: ints, ~104): 128 measured alone at 10⁷ frequencies, but the whole command there peaked at ~190 a
#: frequency beyond its rows (the decimal arithmetic's freed memory is not handed back).
FREQUENCY_BYTES = 224

#: What each layout means, in diff's words.
_LAYOUT_WORDS = {
    "interleaved": "(sin, cos, sin, …)",
    "split": "([sin…|cos…])",
    "cos-first": "([cos…|sin…])",
}


def _rule(freq: str, width: int) -> tuple[int, int]:
    """``(step, denominator)``: frequency rule ``freq``'s ``e_i = step·i / denominator``."""
    if freq == "paper":
        return 2, width
    if freq == "t2t":
        return 1, max(width // 2 - 1, 1)
    return 1, width // 2


def exponent_of(freq: str, width: int, i: int) -> tuple[int, int]:
    """``e_i`` of frequency rule ``freq`` for a table whose frequency width is ``width``, as a fraction."""
    step, den = _rule(freq, width)
    return step * i, den


@functools.lru_cache(maxsize=64)
def _exponents(freq: str, width: int, count: int) -> tuple[tuple[int, int], ...]:
    """:func:`exponent_of` of the first ``count`` frequencies, over the denominator ``width`` where
    the rule's divides it (the same fractions: ``half``'s ``i/(d/2)`` is the paper's ``2i/d``, so
    both rules, which identify proves one after the other, share one cached computation of
    :func:`pecli.kernels.exact.frequencies`: 0.15 s at 65536 columns)."""
    step, den = _rule_over_width(freq, width)
    # built in C: a Python loop took 2.5 s for 1.5·10⁶ frequencies
    return tuple(zip(range(0, step * count, step), itertools.repeat(den, count), strict=True))


def _rule_over_width(freq: str, width: int) -> tuple[int, int]:
    """:func:`_rule` over the denominator ``width`` where the rule's divides it (:func:`_exponents`)."""
    step, den = _rule(freq, width)
    return (step * (width // den), width) if width % den == 0 else (step, den)


@functools.lru_cache(maxsize=64)
def _numerators(freq: str, width: int, count: int) -> np.ndarray:
    """The numerators of :func:`_exponents` as an array (read-only)."""
    out = np.arange(count, dtype=np.int64) * _rule(freq, width)[0]
    out.flags.writeable = False
    return out


@dataclass(frozen=True, slots=True)
class Sinusoidal(Pipelined):
    """A 1-D sinusoidal table: row ``r`` holds position ``start + r``.

    Frequencies ``ω_i = m · (base/m)^(−e_i)``, ``m = min_timescale`` (1: ``base^(−e_i)``), with
    ``e_i = 2i/d`` (``freq="paper"``), ``i/(half−1)`` (``"t2t"``: tensor2tensor, fairseq,
    Whisper) or ``i/half`` (``"half"``).
    Layouts: ``interleaved`` (sin, cos, sin, …), ``split`` (all sin, then all cos),
    ``cos-first`` (all cos, then all sin).  Odd ``dim``: ``sin`` gives the extra column to one
    more sin (HuggingFace), ``zero`` appends a zero column (fairseq, tensor2tensor), ``truncate``
    builds ``dim + 1`` columns and drops the last (positional-encodings), ``error`` refuses.
    ``padding_idx = k`` puts ``k + 1`` rows in front of the ``length`` positions and zeroes row
    ``k`` (fairseq: the first token is row ``k + 1``).  ``compute``: ``exact`` (one rounding from
    the exact value), or the framework's own ``float64``/``float32`` pipeline, evaluating the
    frequencies in the ``form`` it uses (``exp``, ``pow`` or ``div``; ``exp-div``:
    ``exp((−ln base·k)/n)``, the product then the division, as diffusers' ``get_timestep_embedding``;
    ``inv-pow``: ``(1/base)^(k/n)`` in one pow, ``1/base`` rounded first, as keras-hub's
    ``SinePositionEncoding``; ``neg-pow``: ``base^(−k/n)`` in one pow, as x-transformers'
    ``ScaledSinusoidalEmbedding``).  ``scale``: every value times it (that class's
    ``dim ** -0.5``), in the pipeline's dtype, or exactly before the one rounding.
    ``compute="bfloat16"``: that pipeline with every step rounded to bfloat16, positions too
    (keras' ``SinePositionEncoding(dtype="bfloat16")``: positions past 256 share rows).
    """

    length: int
    dim: int
    base: float = 10000.0
    layout: Layout = "interleaved"
    start: int = 0
    dtype: DType = "float32"
    freq: Freq = "paper"
    min_timescale: float = 1.0
    odd: Odd = "sin"
    padding_idx: int | None = None
    compute: Compute = "exact"
    form: Form = "exp"
    scale: float = 1.0

    kind: ClassVar[str] = "sinusoidal"
    core: ClassVar[tuple[str, ...]] = ("length", "dim", "base", "layout", "start", "dtype")
    example: ClassVar[str] = "--len 120 --dim 8"

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "length", int_param("length", self.length, 1, "give the number of positions, e.g. --len 120"))
        set_(self, "dim", int_param("dim", self.dim, 1, "give the model width d_model, e.g. --dim 8"))
        set_(self, "start", int_param("start", self.start, 0, "positions count from 0 or more"))
        set_(self, "base", positive_float("base", self.base, "the paper uses --base 10000", not_one=True))
        set_(self, "min_timescale", positive_float("min_timescale", self.min_timescale, "usually 1"))
        hint = "e.g. --scale 0.0442 (512^-0.5); 1 leaves the values as they are"
        set_(self, "scale", positive_float("scale", self.scale, hint))
        for name, literal in (
            ("layout", Layout),
            ("dtype", DType),
            ("freq", Freq),
            ("odd", Odd),
            ("compute", Compute),
            ("form", Form),
        ):
            choice(name, getattr(self, name), get_args(literal))
        if self.padding_idx is not None:
            set_(self, "padding_idx", int_param("padding_idx", self.padding_idx, 0, "fairseq uses 1"))
        if self.dim % 2 and self.odd == "error":
            raise RecipeError(
                f"dim {self.dim} is odd and this recipe needs an even width (odd=error): use an even --dim"
            )
        if self.freq != "paper" and self.frequency_half < 1:
            raise RecipeError(f"freq={self.freq} needs dim ≥ 2, got {self.dim}")
        if self.form == "div" and (self.compute == "exact" or self.freq != "paper" or self.min_timescale != 1):
            raise RecipeError(
                "form=div (angle = p / base^(2i/d), XLM/Marian) goes with freq=paper and a float pipeline"
            )
        if self.form != "exp" and self.compute == "exact":  # the header would name a form the table lacks
            raise RecipeError(
                f"form={self.form} is how a float pipeline rounds its frequencies: it goes with --compute "
                "float32 or float64 (the exact table has no rounding to choose)"
            )
        last = self.start + self.shape[0] - 1
        if last >= 2**53:
            raise RecipeError(
                f"positions must stay below 2**53 to be exact, but the last position is {last}: "
                "use a smaller --start or --len"
            )
        # With base < 1 the frequencies grow past 1 rad/position; keep the angle (in turns) below
        # 2**53 where the double-double product still resolves its fraction.
        # In logarithms: base**(-x) overflows float64 for tiny bases.
        log_max_omega = math.log(self.min_timescale) - self.exponent_max() * (
            math.log(self.base) - math.log(self.min_timescale)
        )
        if log_max_omega + math.log(max(last, 1)) > 53 * math.log(2):
            raise RecipeError(
                f"base {self.base!r} makes angles too large to compute accurately (ω_max·p_max ≈ "
                f"e^{log_max_omega + math.log(max(last, 1)):.1f}): use a base > 1, e.g. --base 10000"
            )

    # -- shape -----------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, int]:
        pad = 0 if self.padding_idx is None else self.padding_idx + 1
        return (self.length + pad, self.dim)

    @property
    def frequency_width(self) -> int:
        """The width the frequency rule sees: ``dim``, or ``dim + 1`` when odd and truncated."""
        return self.dim + 1 if self.dim % 2 and self.odd == "truncate" else self.dim

    @property
    def frequency_half(self) -> int:
        return self.frequency_width // 2

    @property
    def sin_columns(self) -> int:
        """Number of sin columns (also the number of distinct frequencies)."""
        return self.dim // 2 if self.odd == "zero" else (self.dim + 1) // 2

    @property
    def cos_columns(self) -> int:
        return self.dim // 2

    def exponent(self, i: int) -> tuple[int, int]:
        """``e_i`` as a fraction ``(numerator, denominator)`` of the frequency rule."""
        return exponent_of(self.freq, self.frequency_width, i)

    def exponent_values(self, count: int) -> np.ndarray:
        """``e_i`` of the first ``count`` frequencies as float64 ``num / den``, each as
        :meth:`exponent`'s fraction divides (a Python loop over them took 0.15 s at 65536 columns)."""
        return _numerators(self.freq, self.frequency_width, count) / _rule(self.freq, self.frequency_width)[1]

    def exponent_max(self) -> float:
        """The largest frequency exponent ``n/d`` (the slowest column's: ``ω = base^(−n/d)``)."""
        num, den = self.exponent(self.sin_columns - 1)
        return num / den

    def column(self, j: int) -> tuple[int, str]:
        """``(i, "sin" | "cos" | "zero")`` for column ``j``: which frequency and which function."""
        if not 0 <= j < self.dim:
            raise RecipeError(f"column {j} is outside 0..{self.dim - 1}")
        n_sin, n_cos = self.sin_columns, self.cos_columns
        if j >= n_sin + n_cos:
            return -1, "zero"
        if self.layout == "interleaved":
            return j // 2, ("sin" if j % 2 == 0 else "cos")
        first, second = ("sin", "cos") if self.layout == "split" else ("cos", "sin")
        head = n_sin if first == "sin" else n_cos
        return (j, first) if j < head else (j - head, second)

    def exponents(self) -> tuple[tuple[int, int], ...]:
        """``e_i`` of every frequency, as fractions (cached: a 16-bit table asks once for each row
        it rebuilds in float64, and 512 fractions took longer than the row)."""
        return _exponents(self.freq, self.frequency_width, self.sin_columns)

    def omega(self) -> np.ndarray:
        """``ω_i`` of every frequency, as float64 (correctly rounded)."""
        return frequencies(self.base, self.min_timescale, self.exponents())[0]

    def column_frequencies(self, cols: Ids) -> tuple[Ids, np.ndarray]:
        """:meth:`column` of each of ``cols`` at once: its frequency (−1: an odd width's zero
        column) and whether it is a cos column (every column of a 3·10⁶-wide table took 22 ms for
        each candidate identify screens on 1024 of them)."""
        j = np.asarray(cols, dtype=np.intp)
        if self.layout == "interleaved":
            frequency, is_cos = j // 2, j % 2 == 1
        else:
            head = self.sin_columns if self.layout == "split" else self.cos_columns
            first = j < head
            frequency, is_cos = np.where(first, j, j - head), (~first if self.layout == "split" else first)
        zero = j >= self.sin_columns + self.cos_columns
        return np.where(zero, -1, frequency), is_cos & ~zero

    def pairs(self) -> tuple[Ids, Ids]:
        """The sin and the cos column of every frequency that has both, as this layout places them
        (:meth:`_placed` on the column numbers: views of one array, where :meth:`column` for every
        column took 900,000 calls at 300,000 columns, and column numbers matched by a sort 150 MB
        at 3·10⁶)."""
        sin_at, cos_at = self._placed(np.arange(self.dim, dtype=np.intp))  # the column of each frequency's sin, cos
        k = min(sin_at.size, cos_at.size)
        return sin_at[:k], cos_at[:k]

    @property
    def padding_row(self) -> int | None:
        return self.padding_idx

    def paired_columns(self) -> bool:
        """interleaved holds each frequency's (sin, cos) side by side."""
        return self.layout == "interleaved"

    def wavelengths(self) -> np.ndarray:
        out = np.full(self.dim, np.nan)
        omega = self.omega()
        for j in range(self.dim):
            i, fn = self.column(j)
            if fn != "zero":
                out[j] = 2 * math.pi / omega[i]
        return out

    def column_meaning(self, row: int) -> Callable[[int], dict[str, Any]]:
        if self.padding_idx == row:
            return super().column_meaning(row)
        omega = self.omega()
        pos = self.start + row

        def explain(j: int) -> dict[str, Any]:
            i, fn = self.column(j)
            if fn == "zero":
                return {"fn": "zero"}
            w = float(omega[i])
            return {"i": i, "fn": fn, "omega": w, "wavelength": 2 * math.pi / w, "angle": pos * w}

        return explain

    # -- building ----------------------------------------------------------------------------
    def canonical(self) -> Sinusoidal:
        """The odd-width policy set to ``sin`` on an even dim (it only reads ``dim % 2``), and
        ``freq=half`` to ``paper`` on an even frequency width: ``i/(w/2)`` and ``2i/w`` are one
        real number, and every pipeline's steps scale both by powers of 2 (exact, so rounded
        alike: ``2i·fl(c/w)`` is ``i·fl(c/(w/2))``) or divide them exactly once (the same rounding)."""
        freq = "paper" if self.freq == "half" and self.frequency_width % 2 == 0 else self.freq
        odd = "sin" if self.dim % 2 == 0 else self.odd
        return self if (freq, odd) == (self.freq, self.odd) else replace(self, freq=freq, odd=odd)

    def scratch_bytes(self, rows: int) -> int:
        """An exact table's temporaries, from its kernels (see :mod:`pecli.kernels.rotation`): a
        rotated float32/float16 table's fixed cost per frequency (the cached rotations and their
        exact evaluation) and each thread's rotations; any other exact table's row pieces of at
        most ``BLOCK_CELLS`` cells per thread, however wide.  Both count the frequencies
        themselves (their double-double values and the exponents they are cached under).
        Pipelines: the default estimate."""
        if self.compute != "exact" or built_from_float32(self):
            return Recipe.scratch_bytes(self, rows)
        n, d = self.shape
        rows = max(1, min(rows, n))
        threads = max(1, min(cpu_threads(), rows))
        frequencies = FREQUENCY_BYTES * self.sin_columns
        if rotates(numpy_dtype(self.dtype), self.sin_columns, n):
            return frequencies + (ROTATION_BYTES + ROTATION_BYTES_PER_THREAD * threads) * self.sin_columns
        return frequencies + SCRATCH_BYTES_PER_CELL * min(rows * d, BLOCK_CELLS) * threads

    def rows(self, r0: int, r1: int) -> np.ndarray:
        """Rows ``[r0, r1)``: ``compute="exact"`` rounds each value once from the exact value;
        otherwise the framework's float64 or float32 pipeline, step by step (:meth:`pipeline_values`)."""
        check_row_range(self.shape[0], r0, r1)
        if self.compute == "exact" and self.scale != 1:  # the exact values scaled, then the one rounding
            return round_to(replace(self, scale=1.0, dtype="float64").rows(r0, r1) * self.scale, self.dtype)
        n_sin, n_cos = self.sin_columns, self.cos_columns
        out = np.empty((r1 - r0, self.dim), dtype=self.dtype)
        sin_cols, cos_cols = self._placed(out)
        first = self.start + r0  # with a padding row too: fairseq's row r is sin/cos(r·ω)
        if self.compute == "exact":
            _, w_hi, w_lo = frequencies(self.base, self.min_timescale, self.exponents())
            fill_sincos(sin_cols, cos_cols, first, w_hi, w_lo, table_rows=self.shape[0])
        else:
            # float32 pipelines' sin/cos: compiled when numba is there and the table is large (the
            # same bits); a float32 table of the exp or pow form in one compiled pass.
            size = self.shape[0] * n_sin
            kernel = flat_sincos(size) if self.compute == "float32" else None
            fused = kernel is not None and self.form != "div" and self.dtype == "float32" and self.scale == 1
            inv = self.pipeline_frequencies() if fused else None
            whole = pipeline32(size) if fused else None

            def block(a: int, b: int) -> None:
                if whole is not None:
                    whole(np.arange(first + a, first + b).astype(np.float32), inv, sin_cols[a:b], cos_cols[a:b])
                    return
                s, c = self.pipeline_values(np.arange(first + a, first + b), kernel)
                sin_cols[a:b] = s
                cos_cols[a:b] = c[:, :n_cos]

            run_blocks(block, row_blocks(r1 - r0, n_sin))
        if self.padding_idx is not None and r0 <= self.padding_idx < r1:
            out[self.padding_idx - r0] = 0
        return out

    def _placed(self, out: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The sin and cos columns of ``out`` as views, in the layout (the trailing zero column of
        an odd width is set here)."""
        n_sin, n_cos = self.sin_columns, self.cos_columns
        out[..., n_sin + n_cos :] = 0  # odd=zero: the trailing zero column
        if self.layout == "interleaved":
            return out[..., 0 : 2 * n_sin : 2], out[..., 1 : 2 * n_cos : 2]
        if self.layout == "split":
            return out[..., :n_sin], out[..., n_sin : n_sin + n_cos]
        cos_cols, sin_cols = out[..., :n_cos], out[..., n_cos : n_cos + n_sin]  # cos-first
        return sin_cols, cos_cols

    def direct_cells(self) -> bool:
        """Exact float64 tables, and exact float32 ones not rotated (too wide, or too short): their
        rows are the exact kernel's values rounded once, which :meth:`cells` computes cell by cell."""
        return self.compute == "exact" and (
            self.dtype == "float64"
            or (self.dtype == "float32" and not rotates(np.float32, self.sin_columns, self.shape[0]))
        )

    def cells(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """The cells of a :meth:`direct_cells` recipe each from its own (position, frequency)
        pair: the bits :meth:`rows` gives, ~50 ns a cell (a 16-bit table's doubtful values, a
        picture of a table 10⁶ columns wide); others build rows."""
        if not self.direct_cells():
            return Recipe.cells(self, rows, cols)  # (slots: no zero-argument super())
        check_row_range(self.shape[0], int(rows.min(initial=0)), int(rows.max(initial=-1)) + 1)
        f, is_cos = self.column_frequencies(cols)
        _, w_hi, w_lo = frequencies(self.base, self.min_timescale, self.exponents())
        s, c = sincos_pairs((self.start + rows).astype(np.float64), w_hi[f], w_lo[f])
        values = np.where(is_cos, c, s)
        values *= self.scale  # (1: unchanged) the exact values scaled, as rows() does, then one rounding
        values[f < 0] = 0.0  # an odd width's zero column
        if self.padding_idx is not None:
            values[rows == self.padding_idx] = 0.0
        return values.astype(self.dtype, copy=False)  # float32: the one rounding, as rows() does

    def columns_at(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray | None:
        """Rows × columns from the frequencies of those columns alone (an exact table's values
        rounded once; a pipeline's steps on those frequencies: elementwise, the same bits); float32
        and float64 tables (of any pipeline, bfloat16's too), not 16-bit ones (``None``)."""
        if self.dtype not in ("float32", "float64"):
            return None
        check_row_range(self.shape[0], int(rows.min(initial=0)), int(rows.max(initial=-1)) + 1)
        f, is_cos = self.column_frequencies(cols)
        used = np.unique(f[f >= 0])
        at = np.searchsorted(used, np.maximum(f, 0)).clip(max=max(used.size - 1, 0))
        positions = (self.start + rows).astype(np.float64)
        if self.compute == "exact":
            step, den = _rule_over_width(self.freq, self.frequency_width)  # the fractions exponents() gives
            _, w_hi, w_lo = frequencies(self.base, self.min_timescale, tuple((step * int(i), den) for i in used))
            k = used.size
            s, c = sincos_pairs(np.repeat(positions, k), np.tile(w_hi, rows.size), np.tile(w_lo, rows.size))
            s, c = s.reshape(rows.size, k) * self.scale, c.reshape(rows.size, k) * self.scale
        else:
            s, c = self.pipeline_values(positions, frequency_ids=used)
        values = np.where(is_cos, c[:, at], s[:, at]) if used.size else np.zeros((rows.size, cols.size))
        values[:, f < 0] = 0.0  # an odd width's zero column
        if self.padding_idx is not None:
            values[rows == self.padding_idx] = 0.0
        return round_to(values, self.dtype) if self.compute == "exact" else values.astype(self.dtype)

    def rows_at_real(self, positions: np.ndarray) -> np.ndarray:
        """Rows at real positions ``p`` (diffusers' float timesteps, keras' float positions):
        ``exact``: sin and cos of ``p·ω`` rounded once (the kernel takes any float64 ``p``
        exactly); a pipeline: its own steps on ``p`` cast to its dtype (torch's
        ``timesteps.float()``).  A padding row is a whole position's: refused."""
        if self.padding_idx is not None:
            raise RecipeError(
                f"padding_idx {self.padding_idx} puts a zero row at a whole position: fractional positions "
                "need a table without one (drop --padding-idx, or give whole positions)"
            )
        p = np.asarray(positions, dtype=np.float64).reshape(-1)
        out = np.empty((p.size, self.dim), dtype=numpy_dtype(self.dtype))
        sin_cols, cos_cols = self._placed(out)
        n_sin, n_cos = self.sin_columns, self.cos_columns
        if self.compute == "exact":
            _, w_hi, w_lo = frequencies(self.base, self.min_timescale, self.exponents())
            at = np.repeat(p, n_sin)
            s, c = sincos_pairs(at, np.tile(w_hi[:n_sin], p.size), np.tile(w_lo[:n_sin], p.size))
            sin_cols[...] = round_to(s.reshape(p.size, n_sin) * self.scale, self.dtype)
            cos_cols[...] = round_to(c.reshape(p.size, n_sin)[:, :n_cos] * self.scale, self.dtype)
        else:
            s, c = self.pipeline_values(p)
            sin_cols[...] = s
            cos_cols[...] = c[:, :n_cos]
        return out

    def pipeline_values(
        self, positions: np.ndarray, kernel: Callable[..., None] | None = None, frequency_ids: Ids | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """sin and cos (positions × frequencies) the way a framework's own pipeline computes them.

        float32: every step in float32 in the framework's order; Python scalars rounded to float32
        before use (as torch does); exp/pow/sin/cos evaluated in float64 and rounded to float32.
        float64: the same formula in float64 NumPy (bit-exact with frameworks that do just that).
        ``kernel``: the compiled exact kernel for the float32 sin/cos (the same bits).
        ``frequency_ids``: those frequencies' columns only (every step is elementwise: the same bits).
        """
        dt: Any = compute_dtype(self.compute)
        numerators = _numerators(self.freq, self.frequency_width, self.sin_columns)
        if frequency_ids is not None:
            numerators = numerators[frequency_ids]
        num: Any = numerators.astype(dt)
        den = _rule(self.freq, self.frequency_width)[1]  # one denominator per rule
        p: Any = positions.astype(dt)[:, None]
        if self.form == "div":  # XLM/Marian: angle = p / base^(2(j//2)/d)
            e = numerators / den if dt is np.float64 else num / dt(den)  # float64: Python's n / den, each
            s, c = sin_cos_rounded(p / rounded(np.power, dt, dt(self.base), e), dt, kernel)
        else:
            s, c = sin_cos_rounded(p * self.pipeline_frequencies(frequency_ids)[None, :], dt, kernel)
        if self.scale != 1:  # x-transformers: emb * self.scale, a float32 parameter
            s, c = s * dt(self.scale), c * dt(self.scale)
        return s, c

    def pipeline_frequencies(self, frequency_ids: Ids | None = None) -> np.ndarray:
        """The inverse frequencies of every form but ``div`` (``exp``, ``exp-div``, ``pow``,
        ``inv-pow``, ``neg-pow``), in the pipeline's dtype and steps; ``frequency_ids``: those
        alone (each step is elementwise: the same bits; all of a 3·10⁶-wide table's took 20 ms
        for each candidate identify screens on 1024 columns)."""
        dt: Any = compute_dtype(self.compute)
        numerators = _numerators(self.freq, self.frequency_width, self.sin_columns)
        num: Any = (numerators if frequency_ids is None else numerators[frequency_ids]).astype(dt)
        den = _rule(self.freq, self.frequency_width)[1]
        if self.form == "exp":  # fairseq / t2t / Whisper / PyTorch tutorial: exp(k · (−ln(base)/den))
            inv = rounded(np.exp, dt, num * dt(-math.log(self.base / self.min_timescale) / den))
        elif self.form == "exp-div":  # diffusers' timesteps: exp((−ln(max_period) · k) / (half − shift))
            inv = rounded(np.exp, dt, (dt(-math.log(self.base / self.min_timescale)) * num) / dt(den))
        elif self.form == "neg-pow":  # x-transformers' ScaledSinusoidalEmbedding: base^(−k/den) in one pow
            inv = rounded(np.power, dt, dt(self.base), -(num / dt(den)))
        elif self.form == "inv-pow":  # keras-hub's SinePositionEncoding: (1/base)^(k/den), 1/base rounded first
            inv = rounded(np.power, dt, dt(1 / self.base), num / dt(den))
        else:  # pow: 1 / base^(k/den) (positional-encodings, timm, HF RoPE, GPT-J)
            inv = dt(1) / rounded(np.power, dt, dt(self.base), num / dt(den))
        if self.min_timescale != 1:
            inv = dt(self.min_timescale) * inv
        return np.asarray(inv)

    # -- diff's vocabulary ---------------------------------------------------------------------
    def pipelines(self) -> list[Recipe]:
        """The other pipelines; the bfloat16 ones only for a table of bfloat16 values (nothing else they build)."""
        others = Pipelined.pipelines(self)  # (slots: no zero-argument super())
        reduced = "bfloat16" in (self.dtype, self.compute)
        return [r for r in others if reduced or not r.pipeline().startswith("bfloat16")]

    def value_words(self, name: str, value: Any) -> str:
        """Layouts with the column order they mean."""
        if name == "layout":
            return f"{value} {_LAYOUT_WORDS[value]}"
        return Recipe.value_words(self, name, value)

    def mistakes(self) -> list[Mistake]:
        """The column index in the exponent (``pos / 10000 ** (j / d)``): column ``j`` is
        sin/cos(p / base^(j/d)) instead of p / base^(2⌊j/2⌋/d), so every cos column runs at a
        frequency between its pair's and the next (interleaved, paper frequencies only)."""
        if self.layout != "interleaved" or self.freq != "paper" or self.padding_idx is not None:
            return []
        d, base, start, scale = self.dim, self.base, self.start, self.scale

        def rows(r0: int, r1: int) -> np.ndarray:
            p = np.arange(start + r0, start + r1, dtype=np.float64)[:, None]
            angle = p * np.power(base, -np.arange(d) / d)[None, :]
            return np.where(np.arange(d) % 2 == 0, np.sin(angle), np.cos(angle)) * scale

        detail = (
            f"A puts the column index in the exponent: its column j is sin/cos(p / {base:g}^(j/{d})) where B's "
            f"is p / {base:g}^(2⌊j/2⌋/{d}) — the `pos / 10000 ** (j / d)` bug: every cos column runs at a "
            "frequency between its pair's and the next"
        )
        return [Mistake("column-index", detail, rows)]

    # -- the inverse (pecli.kinds.sinusoidal.fit) ---------------------------------------------
    @classmethod
    def fit(cls, sample: Sample) -> Iterator[Recipe]:
        """Recipes whose sin/cos phases the table follows (:func:`pecli.kinds.sinusoidal.fit.fit_sinusoid`)."""
        from pecli.kinds.sinusoidal.fit import fit_sinusoid

        yield from fit_sinusoid(cls, sample)


__all__ = ["Compute", "DType", "Form", "Freq", "Layout", "Odd", "Sinusoidal"]
