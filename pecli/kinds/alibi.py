"""The alibi kind: ALiBi's per-head slopes and the bias table frameworks add to attention scores.

"Train Short, Test Long: Attention with Linear Biases" (Press et al. 2022) and its framework
forms: ofirpress's ``get_slopes`` list, HF Bloom's ``build_alibi_tensor`` (float32 ``pow``) and
MPT's ``build_mpt_alibi_tensor`` (reciprocals).  Builds any row range and recognises slopes and
bias tables in every convention.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, get_args

import numpy as np

from pecli.dtypes import DType
from pecli.errors import RecipeError
from pecli.fitting import Sample
from pecli.kernels.exact import frequencies, row_blocks
from pecli.kernels.pipelines import f32
from pecli.kernels.threads import run_blocks
from pecli.params import choice, int_param
from pecli.recipe import Pipelined, Recipe
from pecli.resources import check_row_range

AlibiPart = Literal["slopes", "bias", "matrix"]
AlibiOrigin = Literal["first", "last"]
AlibiForm = Literal["list", "pow", "recip"]
AlibiCompute = Literal["float32", "exact"]
#: How the slopes of a head count that is not a power of two are taken: ofirpress's closest-power
#: interleave (``get_slopes``: the ``c = 2^⌊log2 n⌋`` slopes, then every other slope of ``2c``), or
#: one geometric series ``2^(−8k/n)`` over all ``n`` heads (what implementations that skip the
#: closest-power step compute).  The same slopes for a power of two.
AlibiSeries = Literal["interleave", "geometric"]
#: Key distances that float32 still represents exactly.
F32_EXACT = 2**24


#: Keys per pass of a bias row block when it is computed in another dtype than it is stored in
#: (its float64 scratch: 2 MB a row).
_PASS = 1 << 18
#: Cells per row block of a bias (a single pass writes each cell once, so a block need not stay in
#: the cache).  Large because each NumPy call re-takes the GIL: on 16 cores, threads of calls
#: writing ~128 kB each stopped at ~4 GB/s together, calls of 2 MB reached 19 GB/s
#: (``benchmarks/write_path.py --cases gil``).  Kernels that write a block in several passes
#: (grids, 2-D RoPE) keep ``BLOCK_CELLS``: with 4× larger blocks they ran at half the speed here.
_BIAS_BLOCK_CELLS = 1 << 20


@dataclass(frozen=True, slots=True)
class Alibi(Pipelined):
    """ALiBi: head ``k`` of ``n`` gets the slope ``2^(−8(k+1)/n)`` (``n`` a power of two;
    otherwise the first ``c = 2^⌊log2 n⌋`` slopes of ``c`` heads, then every other slope of
    ``2c`` heads: ofirpress's ``get_slopes``, which Bloom, MPT and GPT-NeoX reproduce).

    ``part``: ``slopes`` (one row of ``heads``) or ``bias``, the ``(heads, length)`` table the
    frameworks add to the attention scores of every query: ``origin=first`` is Bloom's and
    ofirpress's ``slope·j`` for key ``j = 0..length−1``; ``origin=last`` is MPT's
    ``slope·(j − length + 1)`` (≤ 0).  Both equal ``−slope·distance`` up to a per-row constant,
    which softmax ignores.  ``matrix`` is the whole ``(heads, queries, keys)`` bias with its first
    two axes as rows (``heads·length`` rows of ``length`` keys; query ``i`` of head ``h`` is row
    ``h·length + i``): ``−|j − i|·slope``, x-transformers' ``AlibiPositionalBias`` (its last query's
    rows are ``origin=last``'s bias).  ``compute``: ``float32`` is the frameworks' pipeline (float32 slopes,
    float32 ``slope·j``), with the slopes from ``form``: ``list`` (ofirpress/GPT-NeoX: the
    float64 Python list cast to float32), ``pow`` (Bloom: ``float32(2^(−8/c))`` to the power k
    in float32) or ``recip`` (MPT: ``1/2^(8k/n2)`` in float32, ``n2 = 2^⌈log2 n⌉``);
    ``exact``: slopes and bias rounded once from the exact values.  ``bias_max``: the ``8`` of
    ``2^(−8k/n)``, MPT's ``alibi_bias_max`` (``form=recip`` or ``exact``).  ``total_heads``:
    heads after the ``heads`` ALiBi ones get no bias, rows (slopes) of zeros up to this count
    (x-transformers' ``alibi_num_heads`` below ``heads``: ``AlibiPositionalBias(heads, total_heads)``).
    ``slope_series``: ``interleave`` (ofirpress's closest-power interleave, above) or ``geometric``
    (``2^(−8k/n)``, ``k = 1..n``, for any ``n``; with ``form=list`` or ``exact``).  ``query``: the
    bias row of the query at position ``q``, ``slope·(j − q)`` (a decoding step's row, relative to
    the query: each head's row shifted by ``−q·slope``, which softmax ignores); ``origin=first`` is
    query 0, ``last`` query ``length − 1``.
    """

    heads: int
    length: int | None = None
    part: AlibiPart = "slopes"
    origin: AlibiOrigin = "first"
    compute: AlibiCompute = "float32"
    form: AlibiForm = "list"
    dtype: DType = "float32"
    bias_max: int = 8
    total_heads: int | None = None
    slope_series: AlibiSeries = "interleave"
    query: int | None = None

    kind: ClassVar[str] = "alibi"
    #: bias: one row per head; slopes: one row holding every head's slope.
    row_label: ClassVar[str] = "head"
    core: ClassVar[tuple[str, ...]] = ("heads", "part", "dtype")
    required: ClassVar[tuple[str, ...]] = ("heads",)
    example: ClassVar[str] = "--kind alibi --heads 16"

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "heads", int_param("heads", self.heads, 1, "give the number of attention heads, e.g. --heads 16"))
        for name, literal in (
            ("part", AlibiPart),
            ("origin", AlibiOrigin),
            ("compute", AlibiCompute),
            ("form", AlibiForm),
            ("dtype", DType),
            ("slope_series", AlibiSeries),
        ):
            choice(name, getattr(self, name), get_args(literal))
        if self.slope_series == "geometric" and self.form != "list":
            raise RecipeError(
                f"slope_series=geometric is one series 2^(−8k/n); form={self.form} is a framework's own interleave: "
                "use --form list (or --compute exact), or drop --slope-series"
            )
        if self.heads > 2**20:
            raise RecipeError(f"heads must be at most 2**20, got {self.heads}: slopes 2^(−8k/n) underflow beyond")
        if self.part != "slopes":
            if self.length is None:
                raise RecipeError(f"part={self.part} needs the number of key positions: give --len, e.g. --len 2048")
            set_(self, "length", int_param("length", self.length, 1, "the number of key positions, e.g. --len 2048"))
            if self.compute == "float32" and self.length > F32_EXACT:
                raise RecipeError(
                    f"length {self.length} is beyond 2**24, where float32 distances stop being exact: "
                    "use compute=exact or a smaller --len"
                )
        elif self.length is not None:
            raise RecipeError("length only applies to part=bias or matrix: drop --len, or add --part bias")
        if self.origin != "first" and self.part != "bias":
            raise RecipeError("origin only applies to part=bias: drop --origin, or add --part bias")
        if self.query is not None:
            set_(self, "query", int_param("query", self.query, 0, "the query position of the bias row, e.g. --query 5"))
            if self.part != "bias" or self.origin != "first":
                raise RecipeError(
                    "query places the bias row of one query (part=bias, slope·(j − q)): use --part bias without "
                    "--origin (--origin last is query len − 1)"
                )
            if self.compute == "float32" and self.query > F32_EXACT:
                raise RecipeError(f"query {self.query} is beyond 2**24, where float32 distances stop being exact")
        if self.compute == "exact" and self.form != "list":
            raise RecipeError(f"form={self.form} is a float32 pipeline: use compute=float32, or drop --form")
        set_(self, "bias_max", int_param("bias_max", self.bias_max, 1, "MPT's alibi_bias_max, 8 by default"))
        if self.bias_max != 8 and self.compute == "float32" and self.form != "recip":
            raise RecipeError(
                f"bias_max {self.bias_max} is MPT's alibi_bias_max, which the {self.form} form does not have: "
                "use --form recip (MPT) or --compute exact, or drop --bias-max"
            )
        if self.total_heads is not None:
            hint = f"at least the {self.heads} ALiBi heads, e.g. --total-heads {2 * self.heads}"
            set_(self, "total_heads", int_param("total_heads", self.total_heads, self.heads, hint))

    @property
    def query_position(self) -> int:
        """The query whose bias row this is: ``query``, or the origin's (first 0, last ``length − 1``)."""
        if self.query is not None:
            return self.query
        return (self.length or 1) - 1 if self.origin == "last" else 0

    @property
    def rows_of_heads(self) -> int:
        """Heads in the table: the ALiBi ones, then those without a bias (``total_heads``)."""
        return self.total_heads or self.heads

    @property
    def shape(self) -> tuple[int, int]:
        if self.part == "slopes":
            return (1, self.rows_of_heads)
        assert self.length is not None
        queries = self.length if self.part == "matrix" else 1
        return (self.rows_of_heads * queries, self.length)

    def slopes(self) -> np.ndarray:
        """The ``heads`` slopes: float32 (``compute="float32"``) or float64 (exact, correctly
        rounded), then a zero for each head without a bias (``total_heads``)."""
        slopes = _alibi_slopes(self)
        return np.concatenate([slopes, np.zeros(self.rows_of_heads - self.heads, slopes.dtype)])

    def rows(self, r0: int, r1: int) -> np.ndarray:
        """Rows ``[r0, r1)`` of the table (heads, for ``part=bias``), built directly."""
        check_row_range(self.shape[0], r0, r1)
        slopes = self.slopes()
        if self.part == "slopes":
            return np.asarray(slopes[None, :], dtype=self.dtype)[r0:r1]
        assert self.length is not None
        length = self.length
        dt: Any = np.float32 if self.compute == "float32" else np.float64
        keys = (np.arange(length) - self.query_position).astype(dt)
        slopes = slopes.astype(dt)
        if self.part == "matrix":
            return self._matrix_rows(r0, r1, slopes, dt)
        out = np.empty((r1 - r0, length), dtype=self.dtype)
        # float32: the frameworks' float32 product slope·j (one rounding each), then .to(dtype).
        # Row blocks on every core, in passes of _PASS keys (a scratch in the cache, not the table).

        def block(a: int, b: int) -> None:
            if r0 + b > self.heads:  # heads without a bias: rows of +0 (a zero slope times a key < 0 is −0)
                out[max(a, self.heads - r0) : b] = 0
                b = max(a, self.heads - r0)
            scratch = None if out.dtype == dt else np.empty((b - a, min(_PASS, length)), dtype=dt)
            step = length if scratch is None else _PASS  # the same dtype: one multiply into the table
            for c in range(0, length, step):
                cols = slice(c, c + step)
                if scratch is None:
                    np.multiply(slopes[r0 + a : r0 + b, None], keys[None, cols], out=out[a:b, cols])
                else:
                    part = scratch[:, : len(keys[cols])]
                    np.multiply(slopes[r0 + a : r0 + b, None], keys[None, cols], out=part)
                    out[a:b, cols] = part  # the one cast to dtype

        run_blocks(block, row_blocks(r1 - r0, length, _BIAS_BLOCK_CELLS))
        return out

    def _matrix_rows(self, r0: int, r1: int, slopes: np.ndarray, dt: Any) -> np.ndarray:
        """Rows ``h·length + i`` of the ``(heads, queries, keys)`` bias: ``−|j − i|`` (exact in
        float32 below 2²⁴) times head ``h``'s slope, one rounding; heads without a bias are +0."""
        length = self.length
        assert length is not None
        out = np.empty((r1 - r0, length), dtype=self.dtype)
        keys = np.arange(length)

        def block(a: int, b: int) -> None:
            head, query = np.divmod(np.arange(r0 + a, r0 + b), length)
            distance = (-np.abs(keys[None, :] - query[:, None])).astype(dt)  # negated as integers: +0 on the diagonal
            product = slopes[head][:, None] * distance
            product[head >= self.heads] = 0  # +0, as torch's pad writes it (0·(−d) is −0)
            out[a:b] = product  # the one cast to dtype

        run_blocks(block, row_blocks(r1 - r0, length))
        return out

    def max_position(self) -> float:
        return float(self.length or 1)

    def changes(self, other: Recipe) -> list[str]:
        """The slope series in its own words (``slopes geometric 2^(−8k/12) (A) vs closest-power
        interleave (B)``), the rest parameter by parameter."""
        if not isinstance(other, Alibi):
            return Recipe.changes(self, other)
        if self.part == other.part == "bias" and {self.query, other.query} != {None}:
            qa, qb = self.query_position, other.query_position
            if qa != qb:  # in the kind's words: a bias row is a query's, its keys the columns
                shift = qb - qa  # A − B = slope·(qb − qa) on every key
                sign = "−" if shift < 0 else "+"
                moved = f"A = B {sign} {abs(shift)}·slope on each head's row, a constant softmax ignores"
                return [
                    f"bias row of query {qa} (A) vs {qb} (B): {moved}",
                    *self.parameter_changes(other, ["query", "origin"]),
                ]
        if self.slope_series == other.slope_series:
            return Recipe.changes(self, other)

        def said(a: Alibi) -> str:
            return (
                f"geometric 2^(−{a.bias_max}k/{a.heads})"
                if a.slope_series == "geometric"
                else "closest-power interleave"
            )

        return [f"slopes {said(self)} (A) vs {said(other)} (B)", *self.parameter_changes(other, ["slope_series"])]

    def pipeline(self) -> str:
        return self.compute if self.compute == "exact" else f"float32 {self.form}"

    def exactness(self) -> str:
        if self.compute == "float32":
            return "float32 pipeline: bit-exact (Bloom: 1 ulp where torch's pow is off)"
        return Pipelined.exactness(self)  # (slots: no zero-argument super())

    # -- the inverse -------------------------------------------------------------------------
    @classmethod
    def sizes(cls, params: dict[str, Any], sample: Sample) -> Iterator[dict[str, Any]]:
        """Slopes are one row of ``heads``; a bias table is ``(heads, length)``."""
        if sample.n == 1:
            yield {"heads": sample.d, "dtype": sample.dtype}
        yield {"heads": sample.n, "length": sample.d, "part": "bias", "dtype": sample.dtype}
        if sample.d > 1 and sample.n % sample.d == 0:
            yield {"heads": sample.n // sample.d, "length": sample.d, "part": "matrix", "dtype": sample.dtype}

    @classmethod
    def fit(cls, sample: Sample) -> Iterator[Recipe]:
        """Slopes (one row of falling powers of two) or a bias table (rows linear in the key,
        zero at the first or the last key), in every slope convention; trailing heads without a
        bias (zeros) are ``total_heads``, and the slopes' exponent says ``bias_max``."""
        n, d = sample.n, sample.d
        if n == 1:
            values = sample.values[0]
            heads = _biased(values)
            if heads and np.all(values[:heads] > 0) and np.all(values <= 1):
                params = _fitted_heads(sample, values[:heads], d)
                if params is not None:
                    sample.clue(f"the row holds the {heads} ALiBi slopes 2^(−{params.get('bias_max', 8)}k/{heads})")
                    yield from _conventions(sample, params)
            return
        if n > 64:
            yield from _fit_matrix(sample)
            return
        rows = sample.rows(0, n)
        heads = _biased(np.abs(rows).max(axis=1))
        if heads == 0 or d < 2:
            return
        # Each row is slope·(j − q): its step from key to key is the slope, and it is zero at the query.
        step = rows[:heads, 1].astype(np.float64) - rows[:heads, 0]
        if not (np.all(step > 0) and np.all(np.isfinite(rows[:heads, :2]))):  # (−inf, 0: no slope)
            return
        q = round(float(-rows[0, 0] / step[0]))
        params = _fitted_heads(sample, step, n)
        if params is None or q < 0:
            return
        where = {0: {"origin": "first"}, d - 1: {"origin": "last"}}.get(q, {"query": q})
        said = f"the {where['origin']} key" if "origin" in where else f"key {q} (the bias row of query {q})"
        sample.clue(f"each row is a head's ALiBi slope times the key distance, zero at {said}")
        yield from _conventions(sample, {**params, "length": d, "part": "bias", **where})


def _fit_matrix(sample: Sample) -> Iterator[Alibi]:
    """A ``(heads, queries, keys)`` bias read as rows: each head's first query row is ``−j·slope``."""
    n, d = sample.n, sample.d
    if d < 2 or n % d or not 1 <= n // d <= 64:
        return
    firsts = np.array([sample.rows(h * d, h * d + 1)[0] for h in range(n // d)])
    if np.any(firsts[:, 0] != 0) or np.any(firsts > 0):
        return
    heads = _biased(np.abs(firsts).max(axis=1))
    params = _fitted_heads(sample, -firsts[:heads, 1], n // d) if heads else None
    if params is not None:
        sample.clue("each row is a head's ALiBi slope times −|key − query|, the (heads, queries, keys) bias")
        yield from _conventions(sample, {**params, "length": d, "part": "matrix"})


def _biased(values: np.ndarray) -> int:
    """Heads before the trailing zeros (heads without a bias)."""
    nonzero = np.flatnonzero(values)
    return int(nonzero[-1]) + 1 if nonzero.size else 0


def _fitted_heads(sample: Sample, slopes: np.ndarray, total: int) -> dict[str, Any] | None:
    """``heads``, ``bias_max``, ``total_heads`` and the slope series whose exact slopes the measured
    ones are, or None."""
    heads = len(slopes)
    params: dict[str, Any] = {"heads": heads}
    tries: tuple[tuple[AlibiSeries, int], ...] = (("interleave", 1 << (heads.bit_length() - 1)), ("geometric", heads))
    for series, c in tries:
        # the first slope is 2^(−bias_max/c)
        bias_max = round(-math.log2(slopes[0]) * c) if 0 < slopes[0] < 1 else 0
        if bias_max >= 1 and np.allclose(
            slopes, Alibi(heads, compute="exact", bias_max=bias_max, slope_series=series).slopes(), rtol=1e-5
        ):
            break
    else:
        return None
    if series == "geometric" and heads & (heads - 1):
        params["slope_series"] = series
    if bias_max != 8:
        params["bias_max"] = bias_max
    if total != heads:
        params["total_heads"] = total
    return params


def _conventions(sample: Sample, params: dict[str, Any]) -> Iterator[Alibi]:
    """The recipe in each slope convention (ofirpress list, Bloom pow, MPT reciprocal) and exact
    (a geometric series: the list and exact only)."""
    for compute, form in (("float32", "list"), ("float32", "pow"), ("float32", "recip"), ("exact", "list")):
        try:
            yield Alibi(**params, compute=compute, form=form, dtype=sample.dtype)  # type: ignore[arg-type]
        except RecipeError:
            continue


def slope_exponents(n: int, series: str = "interleave") -> list[tuple[int, int]]:
    """``(k, m)`` per head, the slope being ``2^(−8k/m)``: ofirpress's ``get_slopes`` order (or one
    geometric series)."""
    if n & (n - 1) == 0 or series == "geometric":
        return [(k + 1, n) for k in range(n)]
    c = 1 << (n.bit_length() - 1)
    return slope_exponents(c) + slope_exponents(2 * c)[0::2][: n - c]


def _ofirpress_slopes(n: int) -> list[float]:
    # attention_with_linear_biases fairseq/models/transformer.py::get_slopes, in Python floats.
    def power_of_2(m: int) -> list[float]:
        start = 2 ** (-(2 ** -(math.log2(m) - 3)))
        return [start * start**i for i in range(m)]

    if math.log2(n).is_integer():
        return power_of_2(n)
    c = 2 ** math.floor(math.log2(n))
    return power_of_2(c) + _ofirpress_slopes(2 * c)[0::2][: n - c]


def _alibi_slopes(a: Alibi) -> np.ndarray:
    n = a.heads
    if a.compute == "exact":
        exponents = slope_exponents(n, a.slope_series)
        return np.array(frequencies(2.0, 1.0, tuple((a.bias_max * k, m) for k, m in exponents))[0])
    if a.form == "list" and a.slope_series == "geometric":  # [2 ** (-8 * k / n) for k in 1..n], then float32
        return np.array([2 ** (-8 * k / n) for k in range(1, n + 1)], dtype=f32)
    if a.form == "list":
        return np.array(_ofirpress_slopes(n), dtype=f32)
    if a.form == "pow":  # HF bloom _get_alibi_slopes: torch.pow(float32 base, int32 powers)
        c = 2 ** math.floor(math.log2(n))

        def powers(m: int, ks: Any) -> Any:
            base = np.float64(f32(2 ** (-(2 ** -(math.log2(m) - 3)))))
            return np.power(base, ks.astype(np.float64)).astype(f32)

        parts = [powers(c, np.arange(1, 1 + c))]
        if c != n:
            parts.append(powers(2 * c, np.arange(1, 1 + 2 * min(c, n - c), 2)))
        return np.concatenate(parts)
    # recip: HF mpt build_mpt_alibi_tensor(alibi_bias_max), llm-foundry's gen_slopes
    n2 = 2 ** math.ceil(math.log2(n))
    x = np.arange(1, n2 + 1).astype(f32) * f32(a.bias_max / n2)
    slopes = f32(1) / np.power(2.0, x.astype(np.float64)).astype(f32)
    if n2 != n:
        slopes = np.concatenate([slopes[1::2], slopes[::2]])[:n]
    return slopes


__all__ = ["Alibi", "AlibiCompute", "AlibiForm", "AlibiOrigin", "AlibiPart", "AlibiSeries", "DType", "slope_exponents"]
