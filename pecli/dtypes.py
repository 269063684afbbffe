"""The dtypes pecli builds and writes tables in: one entry each, with every fact about it.

``float16``, ``float32`` and ``float64`` are NumPy's; ``bfloat16`` is the 16-bit float of TPUs
and of most current model weights and rotary caches (the top half of a float32: 8 exponent bits,
8 significant bits), from ``ml_dtypes``, imported only when a bfloat16 table is built or written.

Rounding: NumPy rounds a float64 value to float16 and float32 once (to nearest, ties to even).
``ml_dtypes`` converts float64 to bfloat16 *through float32*, which rounds twice and is off by one
bfloat16 ulp whenever the float32 value lands on a bfloat16 midpoint (``1 + 2⁻⁸ + 2⁻³⁰`` becomes
``1``, not ``1 + 2⁻⁷``).  :func:`round_to` rounds once: float64 to float32 *rounding to odd*
(truncate, then set the last bit when anything was cut off), then float32 to bfloat16 to nearest
even, which is the correct rounding of the float64 value because float32 has more than two bits
beyond bfloat16's 8 (Boldo and Melquiond, "Emulation of FMA and correctly rounded sums: proved
algorithms using rounding to odd", IEEE Trans. Computers, 2008).

>>> import numpy as np
>>> float(round_to(np.array([1 + 2**-8 + 2**-30]), "bfloat16")[0]) - 1 == 2**-7
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # NumPy is imported where it is used: the kinds' base class needs none at import
    import numpy as np
    from numpy.typing import NDArray

    #: The array types of annotations, defined once for the package: float64 values, row or column ids.
    Arr = NDArray[np.float64]
    Ids = NDArray[np.intp]

#: The names a recipe's ``dtype`` may take, narrowest first.
DType = Literal["float16", "bfloat16", "float32", "float64"]


@dataclass(frozen=True)
class Precision:
    """One output dtype: its size, its precision and what text needs to hold its values."""

    name: str
    itemsize: int
    #: Significant bits, the implicit one included (float32: 24).
    bits: int
    #: Significant decimal digits that round-trip every value (float32: 9).
    digits: int
    #: Largest finite value.
    max: float

    @property
    def eps(self) -> float:
        """The distance from 1 to the next value: 2^(1 − bits)."""
        return 2.0 ** (1 - self.bits)

    def spacing(self, values: Arr) -> Arr:
        """This dtype's ulp at each of ``values`` (float64): the gap to the next number of its
        magnitude, the subnormal spacing below the smallest normal."""
        import numpy as np

        emin = {"float16": -14, "bfloat16": -126, "float32": -126, "float64": -1022}[self.name]
        _, e = np.frexp(np.abs(values))
        e = np.where(values != 0, e, emin + 1)  # frexp(0) has exponent 0; 0's ulp is the subnormal one
        out: Arr = np.ldexp(1.0, np.maximum(e - 1, emin) - (self.bits - 1))
        return out

    def check_whole(self, largest: float, what: str) -> None:
        """Refuse to store whole numbers up to ``largest`` (position ids) where they are not exact."""
        if largest > 2.0**self.bits:
            from pecli.errors import RecipeError

            raise RecipeError(
                f"{what} reach {largest:g}, past the whole numbers {self.name} holds exactly (2**{self.bits}): "
                "use --dtype float32 or float64"
            )

    def numpy(self) -> np.dtype[Any]:
        """The NumPy dtype (``ml_dtypes.bfloat16`` for bfloat16, imported here)."""
        import numpy as np

        if self.name == "bfloat16":
            import ml_dtypes

            bf16: np.dtype[Any] = np.dtype(ml_dtypes.bfloat16)
            return bf16
        return np.dtype(self.name)


DTYPES: dict[str, Precision] = {
    p.name: p
    for p in (
        Precision("float16", 2, 11, 5, 65504.0),
        Precision("bfloat16", 2, 8, 4, float.fromhex("0x1.fep127")),
        Precision("float32", 4, 24, 9, float.fromhex("0x1.fffffep127")),
        Precision("float64", 8, 53, 17, float.fromhex("0x1.fffffffffffffp1023")),
    )
}


#: Complex dtypes a table may be stored in, each with the float dtype of its parts.  pecli
#: computes and compares the (real, imaginary) parts as column pairs ``[re0, im0, re1, im1, …]``
#: (Meta's ``freqs_cis`` viewed as real: ``--part cis``), exactly; the file holds one complex
#: number per pair (:attr:`pecli.table.Table.storage`).
COMPLEX: dict[str, str] = {"complex64": "float32", "complex128": "float64"}


def precision_of(dtype: Any) -> Precision | None:
    """The entry of a dtype or dtype name; None for anything pecli does not write (ints, float128)."""
    return DTYPES.get(_name(dtype))


def is_bfloat16(dtype: Any) -> bool:
    """Whether ``dtype`` (a NumPy dtype or a name) is bfloat16."""
    return _name(dtype) == "bfloat16"


def _name(dtype: Any) -> str:
    import numpy as np

    return dtype if isinstance(dtype, str) else np.dtype(dtype).name


def is_float(dtype: Any) -> bool:
    """Whether ``dtype`` holds floating-point values: NumPy's floats, and bfloat16 (whose NumPy
    ``kind`` is ``'V'``)."""
    import numpy as np

    dt = np.dtype(dtype)
    return bool(dt.kind == "f" or dt.name == "bfloat16")


def numpy_dtype(name: str) -> np.dtype[Any]:
    """The NumPy dtype of a name of :data:`DTYPES`."""
    return DTYPES[name].numpy()


def round_to(values: np.ndarray, name: str, out: np.ndarray | None = None) -> np.ndarray:
    """``values`` rounded once to ``name`` (to nearest, ties to even), into ``out`` if given.

    float16/32/64 are NumPy's own cast.  bfloat16 from float64 goes through float32 rounded to
    odd (see the module docstring); from float32 or narrower it is ``ml_dtypes``' cast, which is
    then a single rounding.
    """
    import numpy as np

    target = numpy_dtype(name)
    values = np.asarray(values)
    if name == "bfloat16" and values.dtype.itemsize > 4:
        values = _to_float32_odd(values.astype(np.float64, copy=False))
    if out is None:
        return values.astype(target)
    out[...] = values if out.dtype == target else values.astype(target)
    return out


def _to_float32_odd(x: np.ndarray) -> np.ndarray:
    """float64 → float32 rounded to odd: the float32 toward zero, its last bit set when inexact."""
    import numpy as np

    with np.errstate(over="ignore"):
        f = x.astype(np.float32)
    inexact = f.astype(np.float64) != x
    inexact &= ~np.isnan(x)
    if not inexact.any():
        return f
    bits = f.view(np.uint32)
    away = inexact & (np.abs(f.astype(np.float64)) > np.abs(x))  # the cast rounded away from zero
    bits[away] -= 1  # one float32 step toward zero (magnitude bits of a sign-magnitude number)
    bits[inexact] |= 1
    return f


def json_number(x: Any) -> float | int | None:
    """A number for JSON: the shortest text that round-trips in its own dtype (a NumPy float32
    ``0.9092974``, not ``0.90929740667…``); NaN, ±Inf and None → ``null``, which JSON has for
    them (documented in docs/inspect.md)."""
    import numpy as np

    if x is None:
        return None
    if isinstance(x, (int, np.integer)):
        return int(x)
    if not np.isfinite(x):
        return None
    # str() of a NumPy float32 is its shortest round-trip repr.
    return float(str(x)) if isinstance(x, np.floating) else float(x)


__all__ = [
    "COMPLEX",
    "DTYPES",
    "DType",
    "Precision",
    "is_bfloat16",
    "is_float",
    "json_number",
    "numpy_dtype",
    "precision_of",
    "round_to",
]


#: The largest integer magnitude below which every integer is a float64 (2⁵³).
EXACT_INTEGERS = 2**53


def is_integer_dtype(dtype: Any) -> bool:
    """Signed or unsigned integers (position ids, token ids): read as float64 (booleans are not)."""
    import numpy as np

    return np.dtype(dtype).kind in "iu"


def integers_note(dtype: Any) -> str:
    """What ``inspect`` says of a table of integers."""
    import numpy as np

    return f"{np.dtype(dtype).name} values are shown as float64 (exactly)"


def integers_as_float64(values: Any, source: str) -> Any:
    """Integers (``get_rope_index``'s int64 position ids) as float64, exactly: every integer of at
    most 32 bits is a float64, and 64-bit ones up to 2⁵³ are; a larger one is refused rather than
    rounded."""
    import numpy as np

    from pecli.errors import FormatError

    values = np.asarray(values)
    if values.dtype.itemsize == 8 and values.size:
        big = values.max() > EXACT_INTEGERS if values.dtype.kind == "u" else np.abs(values).max() > EXACT_INTEGERS
        if big or (values.dtype.kind == "i" and values.min() == np.iinfo(values.dtype).min):
            raise FormatError(
                f"{source} holds {values.dtype} values beyond 2^53, which float64 cannot hold exactly: "
                "pecli reads integer tables up to 2^53 in magnitude"
            )
    return values.astype(np.float64)
