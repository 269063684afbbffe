"""The learned kind: a learned position table at initialisation (BERT, GPT-2, RoBERTa, BART, ViT).

The frameworks draw ``nn.Embedding``/``nn.Parameter`` weights from a normal (or truncated normal)
distribution; this kind draws the same distribution, reproducibly and cell by cell
(:mod:`pecli.kernels.draws`), and recognises a table that looks like such a draw (it cannot
rebuild torch's numbers).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, get_args

import numpy as np

from pecli.dtypes import DType, numpy_dtype
from pecli.errors import RecipeError
from pecli.fitting import Sample, median
from pecli.kernels.draws import fill_normal, normal_at
from pecli.kernels.splitmix import COLUMN_BITS
from pecli.params import choice, int_param, positive_float, round_number
from pecli.recipe import Recipe
from pecli.resources import check_row_range

Init = Literal["normal", "truncated-normal"]
#: The seeds :meth:`Learned.fit` tries: 0 to 15 and the round ones people pick.  A table pecli drew
#: with another seed is described (:meth:`Learned.recognise`), not rebuilt (docs/limits.md).
FIT_SEEDS = (*range(16), 42, 123, 1234, 12345, 2024, 31337)


def seeds_said() -> str:
    """:data:`FIT_SEEDS` in words, runs as ranges: ``0–15, 42, 123, 1234, 12345, 2024 or 31337``."""
    runs: list[list[int]] = []
    for seed in FIT_SEEDS:
        if runs and seed == runs[-1][-1] + 1:
            runs[-1].append(seed)
        else:
            runs.append([seed])
    words = [f"{r[0]}–{r[-1]}" if len(r) > 2 else ", ".join(map(str, r)) for r in runs]
    return ", ".join(words[:-1]) + f" or {words[-1]}" if len(words) > 1 else words[0]


#: Columns of one row compared with each seed's draw.
_FIT_COLUMNS = 64
Rng = Literal["splitmix", "pcg64"]
#: TF's truncated normal redraws values beyond 2 standard deviations.
TRUNCATION = 2.0


@dataclass(frozen=True, slots=True)
class Learned(Recipe):
    """A learned position table at initialisation: ``length`` rows of ``dim`` values drawn from
    ``N(0, std²)`` (``init=normal``: HF BERT/GPT-2/RoBERTa/BART ``normal_(0, 0.02)``) or the
    normal truncated at ±2·std and redrawn (``truncated-normal``: TF's
    ``truncated_normal_initializer``, original BERT).  timm/HF ViT's ``trunc_normal_(std=.02)``
    truncates at ±2 *absolute* (±100 std), so it is ``normal`` here.

    ``rng=splitmix`` (the default): value ``(r, j)`` is a standard normal drawn from the
    SplitMix64 word of cell ``r·2³² + j`` under a key from ``SeedSequence(seed)`` (Marsaglia and
    Tsang's ziggurat; :mod:`pecli.kernels.draws`), so any row range is computed directly, on every
    core, and row ``r``'s first ``j`` values do not depend on ``length`` or ``dim``.  ``rng=pcg64``:
    pecli 0.1–0.2's draw, row ``r`` from NumPy's PCG64 stream ``SeedSequence(seed).spawn(r+1)[r]``
    (about ten times slower; rebuilds the tables those versions wrote).  Either way the
    framework's distribution, not torch's random numbers; drawn in float64, scaled by ``std`` in
    float64 and rounded once.  ``padding_idx = k`` puts ``k + 1`` rows in front and zeroes row
    ``k`` (RoBERTa: 514 = 512 + 2 rows, row 1 zero); ``offset = k`` puts ``k`` drawn rows in front
    (BART/OPT: 2).
    """

    length: int
    dim: int
    std: float = 0.02
    init: Init = "normal"
    seed: int = 0
    rng: Rng = "splitmix"
    padding_idx: int | None = None
    offset: int = 0
    dtype: DType = "float32"

    kind: ClassVar[str] = "learned"
    core: ClassVar[tuple[str, ...]] = ("length", "dim", "std", "init", "seed", "rng", "dtype")
    example: ClassVar[str] = "--kind learned --len 512 --dim 768"
    absent_means: ClassVar[dict[str, Any]] = {"rng": "pcg64"}  # files of pecli 0.1-0.2
    formula: ClassVar[bool] = False

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "length", int_param("length", self.length, 1, "give the number of positions, e.g. --len 512"))
        set_(self, "dim", int_param("dim", self.dim, 1, "give the hidden size, e.g. --dim 768"))
        set_(self, "std", positive_float("std", self.std, "BERT and GPT-2 use --std 0.02"))
        set_(self, "seed", int_param("seed", self.seed, 0, "any whole number ≥ 0, e.g. --seed 0"))
        set_(self, "offset", int_param("offset", self.offset, 0, "BART and OPT use --offset 2"))
        choice("init", self.init, get_args(Init))
        choice("rng", self.rng, get_args(Rng))
        choice("dtype", self.dtype, get_args(DType))
        if self.padding_idx is not None:
            set_(self, "padding_idx", int_param("padding_idx", self.padding_idx, 0, "RoBERTa uses 1"))
            if self.offset:
                raise RecipeError(
                    "give padding_idx (rows in front with a zero row, RoBERTa) or offset (drawn rows in front, "
                    "BART), not both"
                )
        if max(self.shape) >= 2**COLUMN_BITS:  # cell r·2³² + j names one value: no cell twice
            raise RecipeError(
                f"a learned table has fewer than 2**{COLUMN_BITS} rows and columns, not {self.shape[0]}×{self.dim}: "
                "give a smaller --len or --dim"
            )

    @property
    def front(self) -> int:
        """Rows before the first position."""
        return self.offset if self.padding_idx is None else self.padding_idx + 1

    @property
    def shape(self) -> tuple[int, int]:
        return (self.length + self.front, self.dim)

    def rows(self, r0: int, r1: int) -> np.ndarray:
        """Rows ``[r0, r1)``, on every core (the same values whatever the split)."""
        check_row_range(self.shape[0], r0, r1)
        out = np.empty((r1 - r0, self.dim), dtype=self.dtype)
        bound = TRUNCATION if self.init == "truncated-normal" else math.inf
        if self.rng == "splitmix":
            cells = self.shape[0] * self.dim  # whether compiling pays is decided on the whole table
            fill_normal(out, self.seed, r0, self.std, bound, table_cells=cells)
        else:  # one row at a time, as those versions did (threads only fight over the GIL here)
            for r in range(r0, r1):
                out[r - r0] = self._pcg64_row(r, bound)
        if self.padding_idx is not None and r0 <= self.padding_idx < r1:
            out[self.padding_idx - r0] = 0
        return out

    @property
    def padding_row(self) -> int | None:
        return self.padding_idx

    def columns_at(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray | None:
        """Rows × columns, each cell its own draw (``rng=splitmix``: the values :meth:`rows` gives,
        without the rest of the row); a ``pcg64`` row is one stream, drawn whole (``None``)."""
        if self.rng != "splitmix":
            return None
        check_row_range(self.shape[0], int(rows.min(initial=0)), int(rows.max(initial=-1)) + 1)
        bound = TRUNCATION if self.init == "truncated-normal" else math.inf
        cells = (rows.astype(np.uint64)[:, None] << np.uint64(COLUMN_BITS)) + cols.astype(np.uint64)[None, :]
        out = (normal_at(self.seed, cells, bound) * self.std).astype(numpy_dtype(self.dtype))  # one rounding
        if self.padding_idx is not None:
            out[rows == self.padding_idx] = 0
        return out

    def _pcg64_row(self, r: int, bound: float) -> np.ndarray:
        """Row ``r`` as pecli 0.1–0.2 drew it: its own PCG64 stream, values beyond ``bound`` re-picked."""
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(self.seed, spawn_key=(r,))))
        z = rng.standard_normal(self.dim)
        bad = np.abs(z) > bound
        while bad.any():  # TF: values beyond 2 std are dropped and re-picked
            z[bad] = rng.standard_normal(int(bad.sum()))
            bad = np.abs(z) > bound
        return z * self.std

    def scratch_bytes(self, rows: int) -> int:
        """The default's row-block temporaries, plus the list of cells the ziggurat's proposal
        cannot settle (about 1 in 140, two int64 copies): 1 byte per 8 cells covers it."""
        return Recipe.scratch_bytes(self, rows) + max(0, min(rows, self.shape[0])) * self.dim // 8

    def pipeline(self) -> str:
        return "random"

    def exactness(self) -> str:
        return "random: the framework's distribution, pecli's numbers"

    # -- the inverse -------------------------------------------------------------------------
    @classmethod
    def fit(cls, sample: Sample) -> Iterator[Recipe]:
        """pecli's own draws back: the seed (of :data:`FIT_SEEDS`) and generator whose standard
        normals, times one ``std``, are the first drawn row's values (the truncated normal redraws
        only values beyond 2σ, so most of a row agrees with the normal's), a zero row in front as
        ``padding_idx``.  Each (seed, generator) costs one row of 64 draws; the proof decides."""
        big = sample.n - len(sample.zero_rows) >= 8 and sample.d >= 8  # enough values for recognise to speak
        if big and sample.memo(("learned", "recognised"), lambda: cls.recognise(sample)) is None:
            return  # no random draw to look for (a formula's table: no 44 draws for every table identified)
        zeros = sample.zero_rows
        padding = zeros[0] if len(zeros) == 1 else None
        probe = next((r for r in range(min(sample.n, 16)) if r not in zeros), None)
        if probe is None or sample.d < 2:
            return
        k = min(sample.d, _FIT_COLUMNS)
        row = np.asarray(sample.rows(probe, probe + 1)[0, :k], dtype=np.float64)
        if not np.all(np.isfinite(row)) or not np.any(row):
            return
        slack = 8 * sample.eps
        for seed, rng in itertools.product(FIT_SEEDS, get_args(Rng)):
            unit = cls(probe + 1, k, std=1.0, seed=seed, rng=rng, dtype="float64").rows(probe, probe + 1)[0]
            ratio = row / unit
            std = median(ratio)
            if not std > 0 or np.count_nonzero(np.abs(ratio - std) <= slack * std) * 2 < k:
                continue
            std = round_number(std)
            length = sample.n - (padding + 1 if padding is not None else 0)
            sample.clue(f"row {probe} is seed {seed}'s {rng} draw times σ = {std:g}")
            for init in get_args(Init):
                try:
                    yield cls(length, sample.d, std, init, seed, rng, padding, dtype=sample.dtype)  # type: ignore[arg-type]
                except RecipeError:
                    continue

    @classmethod
    def recognise(cls, sample: Sample) -> str | None:
        """A sentence when the table looks like a learned table at initialisation, else ``None``.

        No formula rebuilds torch's random numbers, so this is a description, not a match: the
        values look like independent draws (neighbouring rows uncorrelated, mean near 0), and
        their spread, range and zero rows say which initialisation they fit.
        """
        values = sample.values
        kept = np.any(values != 0, axis=1)
        nonzero = values if kept.all() else values[kept]  # (a copy only when there are zero rows)
        if nonzero.shape[0] < 8 or sample.d < 8:
            return None
        std = float(nonzero.std())
        mean = float(nonzero.mean())
        if std == 0 or abs(mean) > 4 * std / math.sqrt(nonzero.size):
            return None
        # Neighbouring rows' correlation and the moments from dot products: no copies of the sample
        # (np.corrcoef stacked both, 64 MB for a 64×65536 table); the mean is near 0 (above).
        a, b = nonzero[:-1].ravel(), nonzero[1:].ravel()
        ma, mb = float(a.mean()), float(b.mean())
        cov = float(np.dot(a, b)) / a.size - ma * mb
        spread = (float(np.dot(a, a)) / a.size - ma * ma) * (float(np.dot(b, b)) / b.size - mb * mb)
        correlation = cov / math.sqrt(spread) if spread > 0 else math.nan
        if not abs(correlation) < 0.2:
            return None
        centred = (nonzero - mean).ravel()
        peak = float(np.abs(centred).max())
        squared = np.square(centred, out=centred)
        kurtosis = float(np.dot(squared, squared)) / squared.size / std**4
        # A normal's kurtosis is 3, one truncated at ±2σ about 2.4; a uniform's 1.8.
        if not 2.2 <= kurtosis <= 3.6:
            return None
        z = peak / (std / 0.8796) if kurtosis < 2.7 else math.inf
        init = "a normal truncated at ±2σ" if z <= 2.0001 else "a normal"
        zeros = sample.zero_rows
        text = (
            f"a learned table at initialisation: values look like independent draws from {init} "
            f"with σ = {std:.4g} (mean {mean:.2g}, over {sample.describe()})"
        )
        if zeros:
            text += f"; row {zeros[0]} is zero (a padding row, like RoBERTa's)"
        return text + (
            f". No formula rebuilds random numbers (nor pecli's own draw with a seed of {seeds_said()}): "
            "compare distributions, not values"
        )


__all__ = ["TRUNCATION", "DType", "Init", "Learned", "Rng"]
