"""Recipes: frozen, validated descriptions of a table.  No NumPy here, so the CLI starts fast."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import TYPE_CHECKING, Any, ClassVar, Literal, get_args

from pecli.errors import RecipeError

if TYPE_CHECKING:
    import numpy as np

Layout = Literal["interleaved", "split"]
DType = Literal["float16", "float32", "float64"]
LAYOUTS: tuple[str, ...] = get_args(Layout)
DTYPES: tuple[str, ...] = get_args(DType)

#: Version of the metadata schema written next to every table (see ``to_metadata``).
SCHEMA = "pecli/1"


def _int_param(name: str, value: object, minimum: int, hint: str) -> int:
    # bool is an int subclass; True as a length is a bug, not a 1.
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise RecipeError(f"{name} must be a whole number, got {value!r}: {hint}")
    if value < minimum:
        raise RecipeError(f"{name} must be at least {minimum}, got {value}: {hint}")
    return value


@dataclass(frozen=True, slots=True)
class Sinusoidal:
    """The sinusoidal table of "Attention Is All You Need".

    Column ``j`` uses frequency index ``i = ⌊j/2⌋`` (interleaved) and ``ω_i = base^(−2i/dim)``;
    row ``r`` holds position ``start + r``.  Odd ``dim`` follows HuggingFace's rule: the extra
    column is one more sin column (interleaved: the last column; split: the sin block has
    ⌈dim/2⌉ columns).
    """

    length: int
    dim: int
    base: float = 10000.0
    layout: Layout = "interleaved"
    start: int = 0
    dtype: DType = "float32"

    kind: ClassVar[str] = "sinusoidal"

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "length", _int_param("length", self.length, 1, "give the number of positions, e.g. --len 120"))
        set_(self, "dim", _int_param("dim", self.dim, 1, "give the model width d_model, e.g. --dim 8"))
        set_(self, "start", _int_param("start", self.start, 0, "positions count from 0 or more"))
        base = self.base
        if isinstance(base, bool) or not isinstance(base, (int, float)):
            raise RecipeError(f"base must be a number, got {base!r}: e.g. --base 10000")
        try:
            base = float(base)
        except OverflowError:  # an int like 10**400
            base = math.inf
        if not math.isfinite(base) or base <= 0 or base == 1:
            raise RecipeError(
                f"base must be a finite number > 0 and ≠ 1, got {self.base!r}: the paper uses --base 10000"
            )
        set_(self, "base", base)
        if self.layout not in LAYOUTS:
            raise RecipeError(f"unknown layout {self.layout!r}: choose one of {', '.join(LAYOUTS)}")
        if self.dtype not in DTYPES:
            raise RecipeError(f"unknown dtype {self.dtype!r}: choose one of {', '.join(DTYPES)}")
        last = self.start + self.length - 1
        if last >= 2**53:
            raise RecipeError(
                f"positions must stay below 2**53 to be exact, but start + length - 1 = {last}: "
                "use a smaller --start or --len"
            )
        # With base < 1 the frequencies grow past 1 rad/position; keep the angle (in turns) below
        # 2**53 where the double-double product still resolves its fraction.
        # In logarithms: base**(-x) overflows float64 for tiny bases.
        log_max_omega = -2 * ((self.dim - 1) // 2) / self.dim * math.log(base)
        if log_max_omega + math.log(max(last, 1)) > 53 * math.log(2):
            raise RecipeError(
                f"base {base!r} makes angles too large to compute accurately (ω_max·p_max ≈ "
                f"e^{log_max_omega + math.log(max(last, 1)):.1f}): use a base > 1, e.g. --base 10000"
            )

    # -- shape -----------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, int]:
        return (self.length, self.dim)

    @property
    def nbytes(self) -> int:
        return self.length * self.dim * {"float16": 2, "float32": 4, "float64": 8}[self.dtype]

    @property
    def sin_columns(self) -> int:
        """Number of sin columns, ⌈dim/2⌉ (also the number of distinct frequencies)."""
        return (self.dim + 1) // 2

    def column(self, j: int) -> tuple[int, str]:
        """``(i, "sin" | "cos")`` for column ``j``: which frequency and which function."""
        if not 0 <= j < self.dim:
            raise RecipeError(f"column {j} is outside 0..{self.dim - 1}")
        if self.layout == "interleaved":
            return j // 2, ("sin" if j % 2 == 0 else "cos")
        s = self.sin_columns
        return (j, "sin") if j < s else (j - s, "cos")

    # -- building --------------------------------------------------------------------------
    def rows(self, r0: int, r1: int) -> np.ndarray:
        """Rows ``[r0, r1)`` of the table (positions ``start + r0 …``), built directly."""
        from pecli.core import build_sinusoidal_rows

        return build_sinusoidal_rows(self, r0, r1)

    def build(self) -> np.ndarray:
        """The whole table as a ``(length, dim)`` array of ``dtype`` (refused if it cannot fit)."""
        from pecli.resources import ensure_fits_in_memory

        ensure_fits_in_memory(self.nbytes, f"a {self.length}×{self.dim} {self.dtype} table")
        return self.rows(0, self.length)

    # -- metadata --------------------------------------------------------------------------
    def to_metadata(self) -> dict[str, Any]:
        """The recipe as a flat mapping of JSON scalars (the one schema every format stores)."""
        from pecli._version import __version__

        return {"schema": SCHEMA, "kind": self.kind, **asdict(self), "pecli_version": __version__}

    def describe(self, short: bool = False) -> str:
        """One line with the kind and every parameter (``short``: without kind, shape and dtype)."""
        skip = ("length", "dim", "dtype") if short else ()
        params = " ".join(f"{k}={_fmt(v)}" for k, v in asdict(self).items() if k not in skip)
        return params if short else f"{self.kind} {params}"


def _fmt(v: object) -> str:
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e16:
        return str(int(v))
    return str(v)


KINDS: dict[str, type[Sinusoidal]] = {Sinusoidal.kind: Sinusoidal}


def recipe_from_metadata(meta: dict[str, Any]) -> Sinusoidal | None:
    """Rebuild a recipe from stored metadata; ``None`` when the metadata holds no pecli recipe.

    Metadata written by a newer schema or an unknown kind is not guessed at: ``None``.
    """
    kind = meta.get("kind")
    if meta.get("schema") != SCHEMA or not isinstance(kind, str) or kind not in KINDS:
        return None
    cls = KINDS[kind]
    names = {f.name for f in fields(cls)}
    try:
        return cls(**{k: _from_stored(v) for k, v in meta.items() if k in names})
    except (RecipeError, TypeError):
        return None


def _from_stored(v: Any) -> Any:
    # HDF5 attributes come back as NumPy scalars; recipes want Python scalars.
    item = getattr(v, "item", None)
    return item() if callable(item) else v
