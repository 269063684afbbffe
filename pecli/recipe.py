"""Recipes: frozen, validated descriptions of a table.  No NumPy here, so the CLI starts fast.

Two kinds so far, each a dataclass registered in ``KINDS``:

- ``sinusoidal``: the 1-D table of "Attention Is All You Need" and its framework dialects
  (frequency rule, layout, odd-width policy, padding row, compute pipeline);
- ``sincos2d``: the 2-D (or 3-D) grid tables of MAE, timm, MoCo-v3, HF ViTMAE and
  positional-encodings.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import TYPE_CHECKING, Any, ClassVar, Union

from pecli.choices import (
    COMPUTES,
    DTYPES,
    FORMS,
    FREQS,
    LAYOUTS,
    ODDS,
    ORDERS,
    Compute,
    DType,
    Form,
    Freq,
    Layout,
    Odd,
    Order,
)
from pecli.errors import RecipeError
from pecli.recipe_base import SCHEMA, _choice, _int_param, _positive_float, _Recipe

if TYPE_CHECKING:
    pass


@dataclass(frozen=True, slots=True)
class Sinusoidal(_Recipe):
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
    frequencies in the ``form`` it uses (``exp``, ``pow`` or ``div``).
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

    kind: ClassVar[str] = "sinusoidal"
    core: ClassVar[tuple[str, ...]] = ("length", "dim", "base", "layout", "start", "dtype")

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "length", _int_param("length", self.length, 1, "give the number of positions, e.g. --len 120"))
        set_(self, "dim", _int_param("dim", self.dim, 1, "give the model width d_model, e.g. --dim 8"))
        set_(self, "start", _int_param("start", self.start, 0, "positions count from 0 or more"))
        set_(self, "base", _positive_float("base", self.base, "the paper uses --base 10000", not_one=True))
        set_(self, "min_timescale", _positive_float("min_timescale", self.min_timescale, "usually 1"))
        for name, choices in (("layout", LAYOUTS), ("dtype", DTYPES), ("freq", FREQS), ("odd", ODDS)):
            _choice(name, getattr(self, name), choices)
        _choice("compute", self.compute, COMPUTES)
        _choice("form", self.form, FORMS)
        if self.padding_idx is not None:
            set_(self, "padding_idx", _int_param("padding_idx", self.padding_idx, 0, "fairseq uses 1"))
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
        last = self.start + self.shape[0] - 1
        if last >= 2**53:
            raise RecipeError(
                f"positions must stay below 2**53 to be exact, but the last position is {last}: "
                "use a smaller --start or --len"
            )
        # With base < 1 the frequencies grow past 1 rad/position; keep the angle (in turns) below
        # 2**53 where the double-double product still resolves its fraction.
        # In logarithms: base**(-x) overflows float64 for tiny bases.
        log_max_omega = math.log(self.min_timescale) - self.exponent_max() * math.log(self.base / self.min_timescale)
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
        if self.freq == "paper":
            return 2 * i, self.frequency_width
        if self.freq == "t2t":
            return i, max(self.frequency_half - 1, 1)
        return i, self.frequency_half

    def exponent_max(self) -> float:
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


@dataclass(frozen=True, slots=True)
class Sincos2d(_Recipe):
    """A 2-D (or 3-D) grid table: one row per grid cell, per-axis sinusoids side by side.

    ``grid`` is ``HxW`` (or ``XxYxZ`` for ``order=tatp``).  Each axis gets ``q`` frequencies
    ``ω_k = base^(−k/q)`` (``base`` is the temperature).  ``order`` fixes rows and columns:

    - ``mae``: rows h-major; columns ``[sin w | cos w | sin h | cos h]`` (MAE's ``emb_h`` is w);
    - ``timm``: rows h-major; ``[sin h | sin w | cos h | cos w]``;
    - ``timm-interleave``: rows h-major; ``[sin h | cos h | sin w | cos w]`` (HF ViTMAE raw);
    - ``timm-reverse``: rows w-major; ``[sin w | sin h | cos w | cos h]``;
    - ``timm-reverse-interleave``: rows w-major; ``[sin w | cos w | sin h | cos h]`` (MoCo-v3);
    - ``tatp``: positional-encodings 2D/3D: rows first-axis-major; per axis ``C = 2⌈dim/(2n)⌉``
      columns interleaved ``sin, cos, …``; axes side by side; truncated to ``dim``.

    ``cls`` puts one zero row in front (the class token).
    """

    grid: str
    dim: int
    base: float = 10000.0
    order: Order = "mae"
    cls: bool = False
    dtype: DType = "float32"
    compute: Compute = "exact"

    kind: ClassVar[str] = "sincos2d"
    core: ClassVar[tuple[str, ...]] = ("grid", "dim", "base", "order", "dtype")

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "dim", _int_param("dim", self.dim, 1, "give the embedding width, e.g. --dim 768"))
        set_(self, "base", _positive_float("base", self.base, "the temperature, usually 10000", not_one=True))
        _choice("order", self.order, ORDERS)
        _choice("dtype", self.dtype, DTYPES)
        _choice("compute", self.compute, COMPUTES)
        if self.cls not in (True, False, 0, 1):
            raise RecipeError(f"cls must be true or false, got {self.cls!r}")
        set_(self, "cls", bool(self.cls))
        axes = self.axes
        if len(axes) == 3 and self.order != "tatp":
            raise RecipeError(f"a 3-D grid {self.grid} needs order=tatp (positional-encodings 3D)")
        if self.order != "tatp" and self.dim % 4:
            raise RecipeError(f"dim {self.dim} must be a multiple of 4 for order={self.order}: four blocks of dim/4")
        if self.shape[0] >= 2**53:
            raise RecipeError(f"grid {self.grid} has too many cells")

    @property
    def axes(self) -> tuple[int, ...]:
        """The grid's sizes, e.g. ``(14, 14)`` for ``14x14``."""
        parts = str(self.grid).lower().replace("×", "x").split("x")
        try:
            sizes = tuple(int(p) for p in parts)
        except ValueError:
            sizes = ()
        if len(sizes) not in (2, 3) or min(sizes) < 1:
            raise RecipeError(f"grid must look like HxW (e.g. 14x14) or XxYxZ, got {self.grid!r}")
        return sizes

    @property
    def shape(self) -> tuple[int, int]:
        return (math.prod(self.axes) + int(self.cls), self.dim)

    @property
    def per_axis(self) -> int:
        """Frequencies per axis ``q``."""
        if self.order == "tatp":
            return math.ceil(self.dim / (2 * len(self.axes)))
        return self.dim // 4


# rope, alibi and learned subclass _Recipe, so they are imported once it exists.  Safe in any
# import order: importing pecli.kinds_extra runs pecli/__init__, which imports this module first.
from pecli.kinds_extra import Alibi, Learned, Rope  # noqa: E402

Recipe = Union[Sinusoidal, Sincos2d, Rope, Alibi, Learned]  # noqa: UP007
KINDS: dict[str, type[Recipe]] = {c.kind: c for c in (Sinusoidal, Sincos2d, Rope, Alibi, Learned)}


def recipe_from_metadata(meta: dict[str, Any]) -> Recipe | None:
    """Rebuild a recipe from stored metadata; ``None`` when the metadata holds no pecli recipe.

    Metadata written by a newer schema or an unknown kind is not guessed at: ``None``.
    Parameters missing from older files take their defaults.
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


def parameter_types(cls: type[_Recipe]) -> dict[str, str]:
    """Field name → ``"int" | "float" | "bool" | "str"``, with ``?`` when it may be ``None``
    (for parsing operands)."""
    out: dict[str, str] = {}
    for f in fields(cls):  # type: ignore[arg-type]
        t = str(f.type)
        base = t.replace("| None", "").strip()
        name = base if base in ("int", "float", "bool") else "str"
        out[f.name] = name + "?" if "None" in t else name
    return out


__all__ = [
    "COMPUTES",
    "DTYPES",
    "FORMS",
    "FREQS",
    "KINDS",
    "LAYOUTS",
    "ODDS",
    "ORDERS",
    "SCHEMA",
    "Alibi",
    "Compute",
    "DType",
    "Form",
    "Freq",
    "Layout",
    "Learned",
    "Odd",
    "Order",
    "Recipe",
    "Rope",
    "Sincos2d",
    "Sinusoidal",
    "asdict",
    "recipe_from_metadata",
]
