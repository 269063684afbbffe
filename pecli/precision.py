"""Precision pipelines as recipe data: in which dtype each step of a table's computation is held.

A framework's positional table is ``f(p·ω)``: positions ``p``, inverse frequencies ``ω``, their
product (the angle), then ``sin``/``cos``.  What makes two frameworks' tables of one formula differ
is the dtype each of those steps is rounded to, and the reduced ones are the bug porting engineers
report most (EleutherAI/gpt-neox#1003, huggingface/transformers#25681 and #29496,
huggingface/candle#3520, sgl-project/sglang#33117, NVIDIA/Megatron-LM#744):

* ``inv_freq`` cast to float16 or bfloat16 with the model (``model.half()``, ``model.to(bfloat16)``
  cast every buffer; the forward's ``inv_freq.float()`` cannot undo it);
* positions held in bfloat16 (``torch.arange(seq_len, dtype=x.dtype)``): past 256 they round to
  even numbers, past 512 to multiples of 4, so rows repeat;
* every step in bfloat16 (the above with the product and ``cos`` in bfloat16 too, or HF's code run
  under ``torch.autocast(dtype=torch.bfloat16)`` without the ``enabled=False`` block transformers
  put around the product for that reason).

Each :class:`Pipeline` names the dtype of every step once; a kind lists the names it computes
(``Rope.computes``) and takes the steps from here, diff says a difference in the pipeline's own
words, and ``identify`` proposes a reduced pipeline only when the table shows its tell (repeated
rows, frequencies on a 16-bit grid).  Each step is emulated as torch computes it on the CPU: an
op of 16-bit inputs evaluated in float32 and rounded once to the 16-bit dtype, ``sin``/``cos``
correctly rounded in float32 (within an ulp of torch's).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

#: The dtype names a step may be held in ("exact": the real value, rounded once at the end).
STEP_DTYPES = ("exact", "float64", "float32", "float16", "bfloat16")


@dataclass(frozen=True)
class Pipeline:
    """One way a framework computes ``f(p·ω)``: the dtype each step is rounded to."""

    name: str
    #: The dtype the positions are held in.
    positions: str
    #: The dtype the inverse frequencies are held in (computed in float32 first, as HF does, then cast).
    frequencies: str
    #: The dtype the product ``p·ω`` is rounded to.
    angle: str
    #: The dtype ``sin``/``cos`` (and any attention factor) are rounded to.
    trig: str
    #: What diff says of a table computed so ("inv_freq rounded to float16").
    words: str
    #: What the values promise against the framework's own (``pecli presets``).
    exactness: str
    #: Where frameworks compute so, for the docs.
    source: str

    @property
    def reduced(self) -> bool:
        """Whether a step is held in a 16-bit dtype (a porting bug, proposed by identify only on its tell)."""
        return any(s in ("float16", "bfloat16") for s in (self.positions, self.frequencies, self.angle, self.trig))

    @property
    def carrier(self) -> str:
        """The dtype a 16-bit table is built in before its one rounding to 16 bits."""
        return "float64" if self.name in ("exact", "float64") else "float32"

    def steps(self) -> str:
        """The steps in a few words: ``positions bfloat16, inv_freq float32, angle float32, cos/sin float32``."""
        return f"positions {self.positions}, inv_freq {self.frequencies}, angle {self.angle}, cos/sin {self.trig}"


PIPELINES: dict[str, Pipeline] = {
    p.name: p
    for p in (
        Pipeline(
            "exact", "exact", "exact", "exact", "exact",
            "the exact values, rounded once",
            "exact, rounded once",
            "no framework: the reference (ω and p·ω carried in double-double, sin/cos correctly rounded)",
        ),
        Pipeline(
            "float64", "float64", "float64", "float64", "float64",
            "every step in float64",
            "float64 pipeline: bit-exact",
            "NumPy code, JAX with jax_enable_x64",
        ),
        Pipeline(
            "float32", "float32", "float32", "float32", "float32",
            "every step in float32",
            "float32 pipeline: ≈ ulp(angle)",
            "HF transformers' rotary classes (autocast disabled), vLLM, Meta's llama, torchtune",
        ),
        Pipeline(
            "inv-float16", "float32", "float16", "float32", "float32",
            "inv_freq rounded to float16",
            "float32 pipeline, inv_freq in float16: ≈ ulp(angle)",
            "model.half() casts the inv_freq buffer; the forward's inv_freq.float() cannot undo it",
        ),
        Pipeline(
            "inv-bfloat16", "float32", "bfloat16", "float32", "float32",
            "inv_freq rounded to bfloat16",
            "float32 pipeline, inv_freq in bfloat16: ≈ ulp(angle)",
            "model.to(torch.bfloat16) casts the inv_freq buffer the same way",
        ),
        Pipeline(
            "positions-bfloat16", "bfloat16", "float32", "float32", "float32",
            "positions held in bfloat16",
            "float32 pipeline, positions in bfloat16: ≈ ulp(angle)",
            "position ids made in the model's dtype (arange(seq_len, dtype=x.dtype)) before a float32 rotary",
        ),
        Pipeline(
            "bfloat16", "bfloat16", "bfloat16", "bfloat16", "bfloat16",
            "every step in bfloat16",
            "bfloat16 pipeline: each step rounded",
            "t = arange(seq_len, dtype=inv_freq.dtype) after model.to(bfloat16), or torch.autocast(bfloat16) "
            "around the product; keras' dtype='bfloat16'",
        ),
    )
}  # fmt: skip


def pipeline_of(compute: str) -> Pipeline:
    """The registry's entry for a kind's ``compute`` value."""
    return PIPELINES[compute]


def held(values: np.ndarray, dtype: str) -> np.ndarray:
    """``values`` (float32) rounded to ``dtype`` as torch's ``.to(dtype)`` does (to nearest, ties
    to even), returned as float32 holding them exactly; float32 and wider leave them as they are."""
    import numpy as np

    if dtype == "float16":
        return np.asarray(values, dtype=np.float32).astype(np.float16).astype(np.float32)
    if dtype == "bfloat16":
        from pecli.dtypes import DTYPES

        bf16: Any = DTYPES["bfloat16"].numpy()
        return np.asarray(values, dtype=np.float32).astype(bf16).astype(np.float32)
    return np.asarray(values, dtype=np.float32)


def collapsed_rows(start: int, length: int, dtype: str) -> tuple[int, int] | None:
    """The last run of rows whose positions ``start … start+length−1`` round to one value in
    ``dtype`` (``(first, last)`` row indices), or None when every position stays distinct.
    Rounding is monotone, so a run is found by bisection: no array of the positions is made."""
    import numpy as np

    if dtype not in ("float16", "bfloat16") or length < 2:
        return None

    def value(p: int) -> float:
        return float(held(np.array([p], dtype=np.float32), dtype)[0])

    def run_of(p: int) -> tuple[int, int]:
        """The rows whose positions round as position ``p`` does (``p`` the last of them in range)."""
        lo, hi = start, p  # the first position in [start, p] that rounds to value(p)
        while lo < hi:
            mid = (lo + hi) // 2
            lo, hi = (mid + 1, hi) if value(mid) < value(p) else (lo, mid)
        return lo - start, p - start

    last = start + length - 1
    for p in (last, last - 1):  # the run at the end may be one row: then the one before it
        first, end = run_of(p)
        if end > first:
            return first, end
    return None


#: Rows past a table's end searched for the first row a reduced pipeline changes (positions held in
#: bfloat16 repeat from row 257, in float16 from row 2049).
TELL_SEARCH_ROWS = 1 << 16
#: Tables up to this many cells are checked against their kind's reduced pipelines.
_TELL_CELLS = 1 << 20


def untold(recipe: Any) -> list[str]:
    """What ``recipe``'s table cannot tell: each reduced pipeline of its kind (:attr:`computes`) that
    builds the very same table, with the row from which a longer table would show it ("positions
    held in bfloat16 build the same 200 rows (a table cannot tell them apart before row 257)").  Empty for a
    table of another kind of recipe, a reduced one, or more than a million cells."""
    import numpy as np

    computes = getattr(type(recipe), "computes", ())
    n, d = recipe.shape
    compute = str(getattr(recipe, "compute", ""))
    if compute not in computes or getattr(recipe, "length", None) != n or n * d > _TELL_CELLS:
        return []
    if pipeline_of(compute).reduced:
        return []
    out: list[str] = []
    ends = [(0, min(n, 64)), (max(0, n - 8), n)]
    for compute in (c for c in computes if PIPELINES[c].reduced):
        try:
            twin = recipe.with_params(compute=compute)
            # The first and last rows first (a reduced pipeline's tell shows there), then every row.
            if not all(np.array_equal(twin.rows(a, b), recipe.rows(a, b)) for a, b in ends):
                continue
            if not np.array_equal(twin.build(), recipe.build()):
                continue
            row, step = n, max(256, n)
            while row < n + TELL_SEARCH_ROWS:  # longer tables, a block at a time, to the first row that parts
                a, b = recipe.with_params(length=row + step), twin.with_params(length=row + step)
                parted = np.flatnonzero(np.any(a.rows(row, row + step) != b.rows(row, row + step), axis=1))
                if parted.size:
                    out.append(
                        f"{PIPELINES[compute].words} build the same {n} rows (a table cannot tell them apart "
                        f"before row {row + int(parted[0])})"
                    )
                    break
                row += step
        except Exception:  # a pipeline this recipe cannot take says nothing here
            continue
    return out


__all__ = [
    "PIPELINES",
    "STEP_DTYPES",
    "TELL_SEARCH_ROWS",
    "Pipeline",
    "collapsed_rows",
    "held",
    "pipeline_of",
    "untold",
]
