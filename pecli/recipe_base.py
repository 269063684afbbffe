"""What every recipe kind shares: validation helpers and the ``_Recipe`` base class.

A module of its own so that kinds defined elsewhere (``pecli.kinds_extra``) can subclass it
without importing ``pecli.recipe``, which registers them (no import cycle, whichever comes first).
"""

from __future__ import annotations

import math
from dataclasses import fields
from typing import TYPE_CHECKING, Any, ClassVar

from pecli.errors import RecipeError

if TYPE_CHECKING:
    import numpy as np

    from pecli.choices import DType

#: Version of the metadata schema written next to every table (see ``to_metadata``).
SCHEMA = "pecli/1"
_ITEMSIZE = {"float16": 2, "float32": 4, "float64": 8}


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


def _positive_float(name: str, value: object, hint: str, *, not_one: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RecipeError(f"{name} must be a number, got {value!r}: {hint}")
    try:
        x = float(value)
    except OverflowError:  # an int like 10**400
        x = math.inf
    if not math.isfinite(x) or x <= 0 or (not_one and x == 1):
        rule = "a finite number > 0 and ≠ 1" if not_one else "a finite number > 0"
        raise RecipeError(f"{name} must be {rule}, got {value!r}: {hint}")
    return x


def _choice(name: str, value: object, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise RecipeError(f"unknown {name} {value!r}: choose one of {', '.join(choices)}")


class _Recipe:
    """What every kind shares: shape, bytes, building, metadata and a one-line description."""

    kind: ClassVar[str]
    #: Fields shown even at their default value (the rest only when changed).
    core: ClassVar[tuple[str, ...]]
    dtype: DType

    @property
    def shape(self) -> tuple[int, int]:
        raise NotImplementedError

    @property
    def start(self) -> int:
        """Position of row 0 (0 for kinds whose rows are not positions)."""
        return 0

    @property
    def nbytes(self) -> int:
        n, d = self.shape
        return n * d * _ITEMSIZE[self.dtype]

    def rows(self, r0: int, r1: int) -> np.ndarray:
        """Rows ``[r0, r1)`` of the table, built directly."""
        from pecli.core import build_rows

        return build_rows(self, r0, r1)  # type: ignore[arg-type]

    def build(self) -> np.ndarray:
        """The whole table as a 2-D array of ``dtype`` (refused if it cannot fit in memory)."""
        from pecli.resources import ensure_fits_in_memory

        n, d = self.shape
        ensure_fits_in_memory(self.nbytes, f"a {n}×{d} {self.dtype} table")
        return self.rows(0, n)

    def params(self, everything: bool = False) -> dict[str, Any]:
        """The parameters: all of them, or the core ones plus those that differ from the default."""
        out: dict[str, Any] = {}
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if everything or f.name in self.core or value != f.default:
                out[f.name] = value
        return out

    def to_metadata(self) -> dict[str, Any]:
        """The recipe as a flat mapping of JSON scalars (the one schema every format stores).

        Parameters that are ``None`` are left out (HDF5 attributes cannot hold a null).
        """
        from pecli._version import __version__

        params = {k: v for k, v in self.params(everything=True).items() if v is not None}
        return {"schema": SCHEMA, "kind": self.kind, **params, "pecli_version": __version__}

    def describe(self, short: bool = False) -> str:
        """One line with the kind and its parameters (``short``: without kind, shape and dtype)."""
        skip = ("length", "dim", "dtype", "grid") if short else ()
        text = " ".join(f"{k}={_fmt(v)}" for k, v in self.params().items() if k not in skip)
        return text if short else f"{self.kind} {text}"


def _fmt(v: object) -> str:
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e16:
        return str(int(v))
    if isinstance(v, bool):
        return str(v).lower()
    return str(v)
