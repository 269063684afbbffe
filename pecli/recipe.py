"""What every kind shares: the :class:`Recipe` base class and its validation helpers.

A kind is one module of :mod:`pecli.kinds` holding one frozen dataclass that subclasses
:class:`Recipe`.  It owns every fact about itself: its parameters and their checks, the row
builder (:meth:`Recipe.rows`), its facts (``required``, ``example``, :meth:`Recipe.wavelengths`,
:meth:`Recipe.column_meaning`) and its inverse (:meth:`Recipe.fit`: recipes of this kind that a
table's data suggest).  Callers ask the kind; they never branch on its name.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any, ClassVar, get_args, get_type_hints

from pecli.dtypes import DTYPES, numpy_dtype
from pecli.errors import RecipeError
from pecli.lists import list_difference, listed, short_list
from pecli.params import spell, spell_param
from pecli.precision import PIPELINES
from pecli.resources import CHECK_WORK_ABOVE

if TYPE_CHECKING:
    import numpy as np

    from pecli.dtypes import Arr, Ids
    from pecli.fitting import Sample

#: Version of the metadata schema written next to every table (see ``to_metadata``).
SCHEMA = "pecli/1"

#: float64 temporaries a kernel holds per cell of the row block it works on (measured: the exact
#: kernel peaks at ~130 bytes per cell of a one-row block, the float32/float64 pipelines at ~70).
SCRATCH_BYTES_PER_CELL = 160


def refuse_unknown(cls: type[Recipe], params: Iterable[str], what: str) -> None:
    """A :class:`RecipeError` for parameters ``cls`` lacks; ``what`` names the recipe (``a rope recipe``)."""
    names = [f.name for f in fields(cls)]  # type: ignore[arg-type]
    extra = [n for n in params if n not in names]
    if extra:
        raise RecipeError(
            f"{what} has no {', '.join(map(spell_param, extra))}: it takes {', '.join(map(spell_param, names))}"
        )


@dataclass(frozen=True)
class Mistake:
    """A wrong build of a kind's table that no parameter expresses (see :meth:`Recipe.mistakes`):
    its name, what it means in the kind's words, and its rows ``[r0, r1)`` (float64)."""

    name: str
    detail: str
    rows: Callable[[int, int], np.ndarray]


class Recipe:
    """A kind's frozen, validated description of a table (subclasses are dataclasses)."""

    kind: ClassVar[str]
    #: What a row of the table is, as a column heading ("pos": one row per position).
    row_label: ClassVar[str] = "pos"
    #: Fields shown even at their default value (the rest only when changed).
    core: ClassVar[tuple[str, ...]]
    #: Parameters a recipe of this kind cannot be built without.
    required: ClassVar[tuple[str, ...]] = ("length", "dim")
    #: The options of a small example, as typed on the command line.
    example: ClassVar[str]
    #: A kind whose rows are tokens with ids of their own (M-RoPE's three per token) builds the rows
    #: ``--positions`` gives with ``rows_at(ids)``; the parameters those ids make unnecessary (the
    #: sequence they would be derived from) are listed here with a value that stands in for them.
    ids_stand_in: ClassVar[dict[str, Any]] = {}
    #: Parameters added after files were written without them, with the value those files meant
    #: (when it is not today's default): metadata that lacks one is read with this value.
    absent_means: ClassVar[dict[str, Any]] = {}
    #: A recipe is a table's row source whose rows are computed (:class:`pecli.rowsource.RowSource`).
    computed: ClassVar[bool] = True
    dtype: Any

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # Every kind's row builder is checked against the memory available before it allocates
        # anything: callers (writers, identify's candidates, diff's explanations) call it directly.
        super().__init_subclass__(**kwargs)
        rows = cls.__dict__.get("rows")
        if rows is not None and not getattr(rows, "_checks_memory", False):
            cls.rows = _checked_rows(rows)  # type: ignore[method-assign,assignment]

    @property
    def shape(self) -> tuple[int, int]:
        raise NotImplementedError

    @property
    def array_dtype(self) -> np.dtype[Any]:
        """The NumPy dtype of the rows (``dtype`` by name; bfloat16: ``ml_dtypes``')."""
        return numpy_dtype(self.dtype)

    @property
    def start(self) -> int:
        """Position of row 0 (0 for kinds whose rows are not positions)."""
        return 0

    @property
    def nbytes(self) -> int:
        n, d = self.shape
        return n * d * DTYPES[self.dtype].itemsize

    def rows(self, r0: int, r1: int) -> np.ndarray:
        """Rows ``[r0, r1)`` of the table, built directly (bit-identical to the whole table's)."""
        raise NotImplementedError

    def rows_at(self, ids: np.ndarray) -> np.ndarray:
        """The rows of tokens with these ids, for a kind whose tokens carry their own (:attr:`ids_stand_in`)."""
        raise NotImplementedError

    def rows_at_real(self, positions: np.ndarray) -> np.ndarray | None:
        """Rows at real (fractional) positions where the kind's formula takes them (sinusoids), else None."""
        return None

    @property
    def has_token_ids(self) -> bool:
        """Whether the kind's rows are tokens with ids of their own, built by :meth:`rows_at`."""
        return type(self).rows_at is not Recipe.rows_at

    @property
    def padding_row(self) -> int | None:
        """The padding index of the table's zero row (fairseq's ``padding_idx``: ``--token-ids``), or
        None (a kind with a ``padding_idx`` says)."""
        return None

    def recipe_at(self, ids: np.ndarray) -> Recipe | None:
        """The recipe whose rows are :meth:`rows_at` ``(ids)`` when the ids follow the kind's own rule, else None."""
        return None

    def direct_cells(self) -> bool:
        """Whether :meth:`cells` computes scattered cells without building their rows (a few columns cost those)."""
        return False

    def cells(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """The values at the cells ``(rows[j], cols[j])`` (in any order), as :meth:`rows`
        gives them.  This default builds each run of consecutive rows; a kind that computes
        scattered cells directly overrides it (a bfloat16 table asks for the float64 value of
        about one cell in 22,000, an exact float16 table of such a kind one in 2,700)."""
        import numpy as np

        out = np.empty(len(rows), dtype=numpy_dtype(self.dtype))
        for a, b in _runs(np.unique(rows)):
            block = self.rows(a, b)
            pick = (rows >= a) & (rows < b)
            out[pick] = block[rows[pick] - a, cols[pick]]
        return out

    def columns_at(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray | None:
        """The ``len(rows) × len(cols)`` block of the table at these rows and columns, computed
        without the other columns, as :meth:`rows` gives them (an exact kind's rows that take
        another route to the same rounding may differ by an ulp); ``None`` where the kind cannot
        (the default).  identify screens a wide table's candidates on a few columns with it, so
        that a candidate costs the same whatever the width."""
        return None

    def build(self) -> np.ndarray:
        """The whole table as a 2-D array of ``dtype`` (refused if it cannot fit in memory)."""
        from pecli.resources import ensure_fits_in_memory

        n, d = self.shape
        ensure_fits_in_memory(self.work_bytes(n), f"a {n}×{d} {self.dtype} table")
        return self.rows(0, n)

    # -- memory ------------------------------------------------------------------------------------
    def scratch_bytes(self, rows: int) -> int:
        """Bytes of temporaries that building ``rows`` rows at once needs besides the rows themselves.

        The default: float64 temporaries of each row block a thread works on (blocks of at most
        ``BLOCK_CELLS`` cells, but never less than a row).  A kind whose kernels cost otherwise
        (the sinusoidal kind's rotation) overrides this with its own.
        """
        from pecli.kernels.exact import BLOCK_CELLS
        from pecli.kernels.threads import cpu_threads

        n, d = self.shape
        rows = max(1, min(rows, n))
        if built_from_float32(self):
            # Built as float32 (see _rounded_rows): those rows and their scratch, the doubtful cells'
            # indices (rare: 8 bytes a cell bounds them), and a chunk of them computed in float64.
            from pecli.kernels.halves import exact_chunk

            f32 = replace(self, dtype="float32")  # type: ignore[type-var]
            doubtful = min(exact_chunk(d), rows * d)  # a chunk of them, never more than the rows have
            return f32.scratch_bytes(rows) + rows * d * 12 + (8 + SCRATCH_BYTES_PER_CELL) * doubtful
        block = max(d, min(rows * d, BLOCK_CELLS))
        threads = max(1, min(cpu_threads(), -(-rows * d // block)))
        return SCRATCH_BYTES_PER_CELL * block * threads

    def work_bytes(self, rows: int) -> int:
        """Peak bytes of building ``rows`` rows at once: the rows in ``dtype`` plus the scratch."""
        n, d = self.shape
        return max(0, min(rows, n)) * d * DTYPES[self.dtype].itemsize + self.scratch_bytes(rows)

    def wide_rows_fix(self) -> str:
        """What to do when even a few rows cannot fit in memory: a smaller width."""
        return f"use a smaller {self.width_option()}"

    def width_option(self) -> str:
        """The option that sets the table's width (``--dim`` for most kinds), for error messages."""
        d = self.shape[1]
        if getattr(self, "dim", None) == d:
            return "--dim"
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if isinstance(value, int) and not isinstance(value, bool) and value == d:
                return spell(f.name)
        return "--dim"

    def ensure_rows_fit(self, rows: int, fix: str | None = None) -> None:
        """Refuse, before anything is allocated, building ``rows`` rows that cannot fit in memory.

        Raises :class:`~pecli.errors.TableTooLargeError` naming the rows, their width and dtype,
        the output and scratch bytes, and ``fix`` (by default a smaller width, or fewer rows at once).
        """
        need = self.work_bytes(rows)
        if need <= CHECK_WORK_ABOVE:
            return
        from pecli.resources import ensure_fits_in_memory, human_bytes

        n, d = self.shape
        rows = max(1, min(rows, n))
        out = rows * d * DTYPES[self.dtype].itemsize
        what = "one row" if rows == 1 else f"{rows} rows"
        if fix is None:
            fix = f"use a smaller {self.width_option()}"
            if rows > 1 and self.work_bytes(1) <= CHECK_WORK_ABOVE:
                fix = "ask for fewer rows at once (--rows), or write the table with -o, which streams it in blocks"
        ensure_fits_in_memory(
            need,
            f"computing {what} of {d} {self.dtype} values ({human_bytes(out)}, plus "
            f"{human_bytes(need - out)} of float64 scratch)",
            fix,
        )

    # -- facts ---------------------------------------------------------------------------------
    def wavelengths(self) -> np.ndarray | None:
        """``2π/ω`` of every column (NaN where a column has none); ``None`` for kinds without."""
        return None

    def column_meaning(self, row: int) -> Callable[[int], dict[str, Any]]:
        """For ``inspect --pos``: what column ``j`` of row ``row`` computes (nothing by default)."""
        return lambda j: {}

    def paired_columns(self) -> bool:
        """Whether columns come in adjacent pairs of one frequency, which a picture keeps together."""
        return False

    def complex_pairs(self) -> bool:
        """Whether columns are (real, imaginary) pairs, which ``--dtype complex64`` stores as one number."""
        return False

    def check_complex_pairs(self, dtype: str) -> None:
        """Refuse storing this table as the complex ``dtype`` when its columns are not (real,
        imaginary) pairs (:meth:`complex_pairs`), saying how to get them: this kind's ``--part cis``
        where it has one, else a kind with one."""
        if self.complex_pairs():
            return
        from pecli.dtypes import COMPLEX

        has_cis = "cis" in get_args(get_type_hints(type(self)).get("part"))
        source = f"--part cis ({self.kind}: freqs_cis)" if has_cis else "a rotary kind's --part cis (freqs_cis)"
        fix = "--part cis" if has_cis else "a kind with --part cis (`pecli help recipes` lists each kind's parts)"
        raise RecipeError(
            f"a {self.kind} table's columns are not (real, imaginary) pairs: {dtype} stores the (cos, sin) pairs "
            f"of {source}; give {fix}, or --dtype {COMPLEX[dtype]}"
        )

    def max_position(self) -> float:
        """The largest position (angle multiplier) the table holds: what rounding grows with."""
        return float(self.start + self.shape[0])

    def row_positions(self, rows: Ids) -> Arr:
        """The largest angle multiplier in each of ``rows`` (what rounding there grows with)."""
        import numpy as np

        return np.full(len(rows), self.max_position())

    def carrier(self) -> str:
        """The dtype a 16-bit table is built in before its one rounding to 16 bits: float32 for a
        float32 pipeline (torch computes in float32 and casts, as ``LlamaRotaryEmbedding`` does for a
        bfloat16 input) or a reduced one, else float64 (exact, or a float64 pipeline, rounded once):
        the pipeline's own entry in :data:`pecli.precision.PIPELINES` says (a :class:`Pipelined`
        recipe's; the exact one's here)."""
        return PIPELINES["exact"].carrier

    def pipeline(self) -> str:
        """How the values are computed: ``exact`` or the framework pipeline's name."""
        return "exact"

    def exactness(self) -> str:
        """What the values promise against the framework's own, in a few words (``pecli presets``)."""
        return PIPELINES["exact"].exactness

    # -- the inverse: which recipes of this kind a table's data suggest ----------------------------
    @classmethod
    def fit(cls, sample: Sample) -> Iterator[Recipe]:
        """Recipes of this kind fitted to ``sample`` (candidates only: identify proves or drops them)."""
        return iter(())

    def starts_in(self, sample: Sample) -> list[int]:
        """Starts at which this recipe's rows would begin with the sample's first row (read from
        its phases, so a preset is tried at a table's start when no fitted recipe showed one);
        ``[]`` where the kind cannot tell (candidates only: identify proves or drops them)."""
        return []

    @classmethod
    def recognise(cls, sample: Sample) -> str | None:
        """A sentence naming this kind when the table is of it but no recipe can rebuild it
        (a random initialisation); ``None`` otherwise."""
        return None

    @classmethod
    def sizes(cls, params: dict[str, Any], sample: Sample) -> Iterator[dict[str, Any]]:
        """Sizes at which a preset of this kind (with ``params``) could give the table's shape."""
        names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
        if "length" in names:
            try:
                probe = cls(**{**params, **_fit_fields(cls, length=sample.n, dim=sample.d, dtype=sample.dtype)})
            except RecipeError:
                return
            extra = probe.shape[0] - sample.n
            if sample.n - extra >= 1:
                yield _fit_fields(cls, length=sample.n - extra, dim=sample.d, dtype=sample.dtype)

    # -- what a difference of two recipes means (diff asks; callers never probe fields) -----------
    #: Whether a formula makes the values (a learned table's are a random draw: diff compares
    #: their statistics instead of fitting parameters to them).
    formula: ClassVar[bool] = True
    #: Whether a choice value this kind shares with another (``--layout half``: rope's and xpos')
    #: implies this kind when no parameter of its own is given (:func:`pecli.kinds.implied_kind`).
    implied_by_shared: ClassVar[bool] = True
    #: Parameters that set the table's size or storage, not its values' formula: diff reports
    #: them as shape or dtype differences, never as a recipe's cause.
    sizing: ClassVar[tuple[str, ...]] = ("length", "dim", "dtype")

    def with_params(self, **changes: Any) -> Recipe:
        """This recipe with some parameters changed (validated like any recipe)."""
        return replace(self, **changes)  # type: ignore[type-var]

    def long_numbers(self) -> int:
        """How many parameters are numbers of more than 9 significant digits: fitted rather than
        chosen (θ = 31082.236667168814 explains less than θ = 10000 with a named scaling)."""
        return sum(
            isinstance(v, float) and len(repr(v).lstrip("-").replace(".", "")) > 9 for v in self.params().values()
        )

    def neighbours(self) -> Iterator[Recipe]:
        """Recipes one parameter away from this one, the mistakes ports make most: every other
        value of each choice parameter, each flag flipped, each optional parameter dropped.  diff
        tries them (two steps deep) beside the kind's :meth:`fit` to explain a table that differs
        from this recipe's.  A kind adds its own (RoPE: the whole scaling block dropped).  A reduced
        pipeline is no neighbour but a :meth:`slip`, tried one step away only."""
        hints = get_type_hints(type(self))
        for f in fields(self):  # type: ignore[arg-type]
            if f.name in self.sizing:
                continue
            value = getattr(self, f.name)
            allowed = get_args(hints.get(f.name))
            others: list[Any] = []
            if allowed and all(isinstance(a, str) for a in allowed):
                others = [a for a in allowed if a != value and not (f.name == "compute" and PIPELINES[a].reduced)]
            elif isinstance(value, bool):
                others = [not value]
            elif value is not None and f.default is None:
                others = [None]
            for other in others:
                try:
                    made = replace(self, **{f.name: other})  # type: ignore[type-var]
                except (RecipeError, TypeError, ValueError):
                    continue
                if made != self:  # a value the recipe has no use for (rope's odd on an even dim) is none
                    yield made

    def slips(self) -> Iterator[Recipe]:
        """The slips ports make, tried by diff one step from this recipe and never combined with
        its :meth:`neighbours`: a :class:`Pipelined` kind's reduced pipelines (:mod:`pecli.precision`);
        a kind adds its own (RoPE its scalings').  None here."""
        yield from ()

    def changes(self, other: Recipe) -> list[str]:
        """What differs from ``other``, this recipe being table A's and ``other`` B's: one phrase
        per parameter, in the kind's own words (``base 500000 (A) vs 10000 (B)``)."""
        if type(other) is not type(self):
            return [f"kind {self.kind} (A) vs {other.kind} (B)"]
        return self.parameter_changes(other)

    def parameter_changes(self, other: Recipe, skip: Iterable[str] = ()) -> list[str]:
        """:meth:`changes` parameter by parameter (a kind that says some of them together skips those)."""
        mine, theirs = self.params(everything=True), other.params(everything=True)
        left_out = {*self.sizing, *skip}
        return [
            self._change(name, mine[name], theirs.get(name))
            for name in mine
            if name not in left_out and mine[name] != theirs.get(name)
        ]

    def _change(self, name: str, mine: Any, theirs: Any) -> str:
        """One parameter's phrase; a long list of numbers by where it differs (:mod:`pecli.lists`)."""
        apart = list_difference(mine, theirs)
        if apart is not None:
            return f"{self.parameter_words(name)}: {apart}"
        return (
            f"{self.parameter_words(name)} {self.value_words(name, mine)} (A) vs {self.value_words(name, theirs)} (B)"
        )

    def parameter_words(self, name: str) -> str:
        """A parameter's name in :meth:`changes` (as typed in a recipe operand by default)."""
        return spell_param(name)

    def value_words(self, name: str, value: Any) -> str:
        """A parameter's value in :meth:`changes` (``none`` for an unset optional one)."""
        return "none" if value is None else format_value(value)

    def mistakes(self) -> list[Mistake]:
        """Well-known wrong builds of this recipe's table that no parameter expresses (a bug in
        the formula as people write it), for diff to recognise.  None by default."""
        return []

    def pipelines(self) -> list[Recipe]:
        """This recipe computed by each of its kind's other pipelines, for diff to find the one that
        reproduces a table bit for bit (a :class:`Pipelined` kind's).  None here."""
        return []

    def canonical(self) -> Recipe:
        """This recipe with the parameters that cannot change its values set alike (sinusoidal's
        odd-width policy on an even dim): recipes with equal ``canonical()`` build the same bits at
        every row, so identify builds, scores and proves them once.  Itself by default; a kind that
        overrides it proves the claim in its tests (``tests/kinds/test_canonical.py``)."""
        return self

    def exact_twin(self) -> Recipe | None:
        """The same recipe computed exactly (``compute=exact``; itself if it is), to tell which of
        two tables carries a pipeline's rounding; ``None`` when the kind has no exact pipeline."""
        return next((r for r in (self, *self.pipelines()) if r.pipeline() == "exact"), None)

    # -- parameters ------------------------------------------------------------------------------
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

    def spec(self) -> str:
        """The recipe operand that rebuilds this recipe (``sinusoidal:len=120,dim=8,…``: every
        parameter, as ``pecli.sources.parse_recipe`` and every SOURCE take it back)."""
        parts = [f"{'len' if k == 'length' else k}={format_value(v)}" for k, v in self.params().items()]
        return f"{self.kind}:{','.join(parts)}"

    def describe(self, short: bool = False) -> str:
        """One line with the kind and its parameters (``short``: without kind, shape and dtype)."""
        skip = ("length", "dim", "dtype", "grid") if short else ()
        text = " ".join(f"{k}={short_list(v) or format_value(v)}" for k, v in self.params().items() if k not in skip)
        return text if short else f"{self.kind} {text}"

    def _repr_html_(self) -> str:
        """The table this recipe computes as ``pecli generate`` prints it (its first and last rows,
        the columns that fit), in HTML: a notebook shows a recipe so.  Only the rows shown are computed."""
        from pecli.views.table import recipe_html

        return recipe_html(self)


class Pipelined(Recipe):
    """A kind whose values a named computation makes, as a framework's code does: its ``compute``
    field, ``exact`` or a framework's pipeline (:data:`pecli.precision.PIPELINES`), and where the kind
    writes its frequencies several ways (``pow``, ``neg-pow``, ``exp`` …) its ``form`` field, each a
    ``Literal`` of the names it takes.  Every kind but a learned table is one; the recipe base answers
    the same questions for a kind without (its values are exact)."""

    #: The pipeline's name: each kind declares the field with the ``Literal`` of its own.
    compute: str

    def _form(self) -> str | None:
        """The ``form`` field's value, for a kind that declares one."""
        kind: type = type(self)
        return str(getattr(self, "form")) if _declares(kind, "form") else None  # noqa: B009

    def carrier(self) -> str:
        return PIPELINES[self.compute].carrier

    def pipeline(self) -> str:
        form = self._form()
        return self.compute if self.compute == "exact" or form is None else f"{self.compute} {form}"

    def exactness(self) -> str:
        return PIPELINES[self.compute].exactness

    def slips(self) -> Iterator[Recipe]:
        """The kind's reduced pipelines (a framework holding its positions or frequencies in bfloat16)."""
        computes = get_args(get_type_hints(type(self)).get("compute"))
        for compute in (c for c in computes if PIPELINES[c].reduced and c != self.compute):
            try:
                yield replace(self, compute=compute)  # type: ignore[type-var]
            except (RecipeError, TypeError, ValueError):
                continue

    def pipelines(self) -> list[Recipe]:
        """This recipe computed by each of its kind's other pipelines (every ``compute`` and ``form``)."""
        from itertools import product

        hints = get_type_hints(type(self))
        forms = get_args(hints.get("form")) if self._form() is not None else (None,)
        out: list[Recipe] = []
        for compute, form in product(get_args(hints.get("compute")), forms):
            change = {"compute": compute, **({"form": form} if form is not None else {})}
            try:
                variant = replace(self, **change)  # type: ignore[type-var]
            except (RecipeError, TypeError):
                continue
            if variant != self and variant not in out:
                out.append(variant)
        return out


@functools.cache
def _declares(cls: type, name: str) -> bool:
    """Whether the class declares the field ``name`` (its type hints, its bases' with them)."""
    return name in get_type_hints(cls)


def _checked_rows(rows: Callable[[Any, int, int], np.ndarray]) -> Callable[[Any, int, int], np.ndarray]:
    """``rows`` preceded by :meth:`Recipe.ensure_rows_fit` (a range outside the table is left to
    ``rows``); a 16-bit recipe's rows are often its :meth:`Recipe.carrier` rows rounded once."""

    @functools.wraps(rows)
    def checked(self: Recipe, r0: int, r1: int) -> np.ndarray:
        try:
            count = int(min(r1, self.shape[0]) - r0) if 0 <= r0 < r1 else 0
        except TypeError:
            count = 0  # not row numbers: ``rows`` says what is wrong
        if count:
            self.ensure_rows_fit(count)
        if built_from_float32(self):
            return _rounded_rows(self, rows, r0, r1)
        return rows(self, r0, r1)

    checked._checks_memory = True  # type: ignore[attr-defined]
    return checked


#: Rows rebuilt in float64 at once by the default :meth:`Recipe.cells` (consecutive rows).
_REBUILT_ROWS = 16


def built_from_float32(recipe: Recipe) -> bool:
    """Whether the recipe's table is float32 rows rounded once to 16 bits (:mod:`pecli.kernels.halves`):
    every bfloat16 table; a float16 one when it reproduces a float32 pipeline (the float32 values,
    cast) or is exact with cells of its own to compute the few doubtful values from (correctly
    rounded then).  Other float16 tables are rounded from their float64 values by the kind."""
    if recipe.dtype == "bfloat16":
        return True
    if recipe.dtype != "float16":
        return False
    cheap = type(recipe).cells is not Recipe.cells and recipe.pipeline() == "exact"
    return recipe.carrier() == "float32" or cheap


def _rounded_rows(recipe: Recipe, rows: Callable[[Any, int, int], np.ndarray], r0: int, r1: int) -> np.ndarray:
    """Rows ``[r0, r1)`` of a 16-bit recipe, rounded once from its :meth:`Recipe.carrier` values:
    its float32 rows, with the cells they cannot decide computed in float64 (:meth:`Recipe.cells`)."""
    from pecli.kernels.halves import round_rows

    f32 = rows(replace(recipe, dtype="float32"), r0, r1)  # type: ignore[type-var]
    wide = replace(recipe, dtype="float64") if recipe.carrier() != "float32" else None  # type: ignore[type-var]
    exact = None if wide is None else lambda r, c: wide.cells(r0 + r, c)
    n, d = recipe.shape
    return round_rows(f32, recipe.dtype, exact, n * d)


def _runs(ids: np.ndarray) -> list[tuple[int, int]]:
    """Sorted row indices as ranges of consecutive rows ``[a, b)`` of at most ``_REBUILT_ROWS``."""
    runs: list[tuple[int, int]] = []
    for i in ids.tolist():
        if runs and runs[-1][1] == i and i - runs[-1][0] < _REBUILT_ROWS:
            runs[-1] = (runs[-1][0], i + 1)
        else:
            runs.append((i, i + 1))
    return runs


def _fit_fields(cls: type[Recipe], **values: Any) -> dict[str, Any]:
    """``values`` restricted to the fields ``cls`` has."""
    names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    return {k: v for k, v in values.items() if k in names}


def format_value(v: object) -> str:
    """A parameter's value as ``describe`` and recipe operands print it."""
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e16:
        return str(int(v))
    if isinstance(v, bool):
        return str(v).lower()
    return str(v)


def parameter_types(cls: type[Recipe]) -> dict[str, str]:
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
    "SCHEMA",
    "Mistake",
    "Pipelined",
    "Recipe",
    "format_value",
    "listed",
    "parameter_types",
    "refuse_unknown",
]
