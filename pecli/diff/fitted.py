"""Causes as the difference of two recipes: each table's recipe, found by its own kind, and the
parameters that had to change, said in the kind's words (:meth:`Recipe.changes`).

1. **Which recipes are known.**  A side's recipe (a recipe SOURCE, or the recipe stored in a
   file) counts only when its rows agree with the table's on the sampled rows: a sidecar that
   lies is not evidence.
2. **Fitting the other side, starting from the known recipe.**  The candidates are the recipe's
   neighbours (:meth:`Recipe.neighbours`, two steps deep: another layout, part, order, slope
   form, the scaling block dropped…), the kind's own fit of the other table
   (:meth:`Recipe.fit`: another base, scaling, start…), one real parameter refitted (on the
   recipe and on each neighbour), one item of a list refitted (on the recipe: LongRoPE's
   ``short_factor`` in a cache too short for the kind's fit to measure every frequency) and the
   kind's well-known wrong builds (:meth:`Recipe.mistakes`).
   Each is built on the sampled rows (a few head and tail rows first, so a candidate that does
   not fit costs almost nothing) and must meet the same criteria as every other cause
   (:class:`~pecli.diff.evidence.Criteria`), better than the known recipe itself does.  The one
   with the fewest changed parameters wins, round numbers before fitted ones; the cause is its
   :meth:`Recipe.changes` against the known recipe.
3. **A side without a recipe**: identified (:func:`pecli.identification.identify`, proved on
   every row), then fitted from or compared (:func:`identified_causes`, :class:`Known`).

Nothing here knows a kind: it asks the recipes.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from pecli.diff.evidence import Criteria, Explanation, relative_rms, screen_rows, worst_gap
from pecli.lists import list_difference, numbers_of
from pecli.recipe import Recipe
from pecli.table import Table

if TYPE_CHECKING:
    from pecli.dtypes import Arr

Rows = Callable[[int, int], np.ndarray]

#: Widest table whose recipe's neighbours also get a real parameter refitted (cost grows with width).
NUMERIC_NEIGHBOURS_WIDTH = 128
#: Largest table (rows × columns) a side without a recipe is identified at, for its recipe: identify
#: proves its candidates on every row (two tables of 2**27 cells took 20 s more than the diff).
IDENTIFY_CELLS = 1 << 22
#: Candidates of the kind's own fit tried at most (a RoPE fit proposes scalings × lengths × starts).
MAX_FITTED = 400


@dataclass(frozen=True)
class Candidate:
    """A recipe (or a kind's wrong build) for the target table, and its score on the sample."""

    label: str  # what it changes, in the kind's words
    spec: str  # how to rebuild it ('' for a wrong build)
    changes: int
    level: int | None  # Criteria level on the whole sample (None: does not fit)
    residual: float  # largest |target − candidate| over the rows it was scored on
    rows: int
    long_numbers: int = 0  # parameters fitted to many digits (a round recipe explains more)
    rel_rms: float = math.inf  # RMS of target − candidate over the target's RMS, on the same rows
    recipe: Recipe | None = None  # the candidate itself (None for a wrong build)

    @classmethod
    def of(
        cls, recipe: Recipe, words: list[str], level: int | None, residual: float, rows: int, rel: float = math.inf
    ) -> Candidate:
        """A recipe that changes ``words`` from the reference, scored."""

        spec = recipe.spec()
        return cls("; ".join(words), spec, len(words), level, residual, rows, recipe.long_numbers(), rel, recipe)


#: Values a list parameter may show in a nearest recipe before it is said by its length.
_BRIEF_VALUES = 4


def nearest_words(spec: str, rel_rms: float, max_abs: float, rows: int) -> str:
    """The nearest recipe, briefly: its SOURCE with long lists cut to their first values (a LongRoPE
    with 64 fitted factors is one line, not 1,500 characters) and how near it is."""

    def cut(m: re.Match[str]) -> str:
        values = m.group(2).split(";")
        if len(values) <= _BRIEF_VALUES:
            return m.group(0)
        return f"{m.group(1)}={';'.join(values[:3])};…({len(values)} values)"

    brief = re.sub(r"([a-z_]+)=([^,]*;[^,]*)", cut, spec)
    return f"{brief} (relative RMS {rel_rms:.2g}, max |Δ| {max_abs:.3g} on {rows} sampled rows)"


@dataclass(frozen=True)
class Fit:
    """What fitting found: the explanations (empty when nothing fits) and, when nothing does,
    the nearest recipe tried for A (its spec and largest difference on the rows scored)."""

    found: list[Explanation]
    nearest: str = ""
    #: How many sides were identified as learned tables (no formula): two compare statistics.
    learned: int = 0


def _runs(idx: NDArray[np.intp]) -> list[tuple[int, int, int]]:
    """``(position in idx, first row, count)`` of each run of consecutive rows."""
    if idx.size == 0:
        return []
    breaks = np.flatnonzero(np.diff(idx) != 1) + 1
    starts = np.r_[0, breaks]
    ends = np.r_[breaks, idx.size]
    return [(int(s), int(idx[s]), int(e - s)) for s, e in zip(starts, ends, strict=True)]


def rows_at(rows: Rows, idx: NDArray[np.intp], width: int) -> Arr:
    """A recipe's rows ``idx`` (any increasing row numbers) as float64, built run by run."""
    out = np.empty((idx.size, width))
    for at, r0, count in _runs(idx):
        out[at : at + count] = np.asarray(rows(r0, r0 + count), dtype=np.float64)
    return out


def _score(
    rows: Rows, target: Arr, idx: NDArray[np.intp], pos: Arr, crit: Criteria
) -> tuple[int | None, float, int, float]:
    """``(level, residual, rows scored, relative RMS)`` of ``rows`` against the target: the screen
    rows first, the whole sample only when they fit."""
    n, d = target.shape
    pick = screen_rows(n)
    try:
        screen = rows_at(rows, idx[pick], d)
    except Exception:  # a candidate that cannot be built here (any kind's refusal) is no cause
        return None, math.inf, 0, math.inf
    level = crit.level(target[pick], screen, pos[pick])
    if level is None or pick.size == n:
        return level, worst_gap(target[pick], screen), pick.size, relative_rms(target[pick], screen)
    try:
        built = rows_at(rows, idx, d)
    except Exception:
        return None, math.inf, 0, math.inf
    return crit.level(target, built, pos), worst_gap(target, built), n, relative_rms(target, built)


def confirmed(recipe: Recipe | None, target: Arr, idx: NDArray[np.intp], pos: Arr, crit: Criteria) -> int | None:
    """The criteria level at which ``recipe``'s rows agree with the table's sampled rows (``None``:
    no recipe, another shape, or the data does not agree with it)."""
    if recipe is None:
        return None
    return _score(recipe.rows, target, idx, pos, crit)[0]


def at_shape(recipe: Recipe, target: Table) -> Recipe:
    """``recipe`` resized to the target table's shape by its kind (:meth:`Recipe.sizes`: another
    length, grid or cell count), or ``recipe`` itself when it has that shape or no size gives it."""
    if recipe.shape == target.shape:
        return recipe
    from pecli.fitting import Sample

    try:
        for size in type(recipe).sizes(recipe.params(everything=True), Sample.read(target)):
            resized = recipe.with_params(**size)
            if resized.shape == target.shape:
                return resized
    except Exception:  # a kind that cannot size itself to this table: the neighbours may
        pass
    return recipe


def _proposals(reference: Recipe, target: Table, shape: tuple[int, int]) -> Iterator[Recipe]:
    """The reference's neighbours two steps deep and its slips one step away, then its kind's fit
    of the target table."""
    seen = {reference}
    first = [r for r in reference.neighbours() if r.shape == shape and r not in seen]
    for r in [*first, *reference.slips()]:
        if r not in seen and r.shape == shape:
            seen.add(r)
            yield r
    for r in first:
        for s in r.neighbours():
            if s not in seen and s.shape == shape:
                seen.add(s)
                yield s
    from pecli.fitting import Sample

    try:
        sample = Sample.read(target)
        fitted = type(reference).fit(sample)
        for count, r in enumerate(fitted):
            if count >= MAX_FITTED:
                break
            if r not in seen and r.shape == shape:
                seen.add(r)
                yield r
    except Exception:  # a fitter that fails on odd data is no cause, never a crash
        return


def fit_from(
    reference: Recipe,
    target: Table,
    rows: Arr,
    idx: NDArray[np.intp],
    pos: Arr,
    crit: Criteria,
    target_is_a: bool,
    *,
    items: bool = True,
) -> Fit:
    """The recipe of the reference's kind closest to ``reference`` that rebuilds the target's
    sampled rows, as a cause in the kind's words (A is always the first table of the phrase).
    ``items=False``: no item of a list refitted (the target's own recipe, confirmed, says its
    lists as written: ``1.2500000000000002``, not the ``1.25`` that builds the same bits)."""

    # Tables of different lengths or grids: candidates start from the reference at the target's
    # size (a recipe that cannot take that size offers its neighbours), and their changes are said
    # against the reference as given: a length is no cause, another grid is.
    given_recipe, reference = reference, at_shape(reference, target)

    def changes(recipe: Recipe) -> list[str]:
        return recipe.changes(given_recipe) if target_is_a else given_recipe.changes(recipe)

    side = "A" if target_is_a else "B"
    best: Candidate | None = None
    base_level, residual, scored, rel = _score(reference.rows, rows, idx, pos, crit)
    if base_level == 0:
        # The reference already fits the sample: the difference lies elsewhere, or in its size.
        resized = changes(reference)
        if not resized:
            return Fit([])
        detail = f"{'; '.join(resized)}; {side}'s rows fit {reference.spec()}"
        return Fit([Explanation("recipe", detail, residual, fitted=(side, reference))])
    # A candidate must fit better than the reference itself: when the reference is within the
    # float32 envelope, only a candidate within rounding says more than "float32 angles".
    need = 0 if base_level is not None else 1
    nearest = Candidate("", reference.spec(), 0, base_level, residual, scored, rel_rms=rel)
    n = rows.shape[0]
    pick = screen_rows(n)
    try:
        own: Arr | None = rows_at(reference.rows, idx[pick], rows.shape[1])
    except Exception:  # the reference does not reach the target's rows (a shorter table)
        own = None
    for recipe in _proposals(reference, target, target.shape):
        words = changes(recipe)
        if not words:
            continue  # the same recipe under another name: no cause
        level, residual, scored, rel = _score(recipe.rows, rows, idx, pos, crit)
        cand = Candidate.of(recipe, words, level, residual, scored, rel)
        if (rel, cand.changes) < (nearest.rel_rms, nearest.changes):  # nearest by relative RMS, not size
            nearest = cand
        if level is None or level > need or (best is not None and not _better(cand, best)):
            continue
        if _same_rows(recipe, idx[pick], own):
            continue  # another name for the reference's own table (freq=half is paper's at even d)
        best = cand
    if best is None or best.level or best.changes > 1:  # one refitted number may say it in fewer words
        for series in _numeric_candidates(reference, rows, idx, pos, items):
            # A refitted real number must rebuild the rows within rounding, not merely within the
            # float32 envelope: a free parameter can soak up an edit that the envelope hides.  Of
            # its roundest writings, the first that rebuilds them exactly, else the first within
            # rounding (3.19 rebuilds a table bit for bit where 3.2 leaves 34 values a rounding off).
            chosen: Candidate | None = None
            for recipe in series:
                level, residual, scored, _ = _score(recipe.rows, rows, idx, pos, crit)
                words = changes(recipe)
                if level == 0 and words:
                    cand = Candidate.of(recipe, words, level, residual, scored)
                    chosen = cand if chosen is None or residual == 0 else chosen
                    if residual == 0:
                        break
            if chosen is not None:
                if best is None or _better(chosen, best):
                    best = chosen
                break
    for mistake in reference.mistakes():
        level, residual, scored, _ = _score(mistake.rows, rows, idx, pos, crit)
        if level is not None and level <= need:
            cand = Candidate(f"{mistake.name}: {mistake.detail}", "", 1, level, residual, scored)
            if best is None or _better(cand, best):
                best = cand
    if best is None:
        return Fit(
            [], nearest_words(nearest.spec, nearest.rel_rms, nearest.residual, nearest.rows) if target_is_a else ""
        )
    best = _plainest(best, reference, changes, rows, idx, pos, crit)
    detail = best.label + (f"; {side}'s rows fit {best.spec}" if best.spec else "")
    fitted = (side, best.recipe) if best.recipe is not None else None
    return Fit([Explanation("recipe", detail, best.residual, fitted=fitted)])


def _plainest(
    best: Candidate,
    reference: Recipe,
    changes: Callable[[Recipe], list[str]],
    rows: Arr,
    idx: NDArray[np.intp],
    pos: Arr,
    crit: Criteria,
) -> Candidate:
    """``best`` with each changed parameter, and each changed item of a list, that the rows do not
    need set back to the reference's: a kind's fit proposes whole parameter sets (LongRoPE's lists
    rounded to 4 digits, the long list equal to the short one), whose other differences build the
    same rows (a long list a cache below the original length never reads; ``1.25`` for
    ``1.2500000000000002``, the same float32) and are no cause.  A parameter at a time, then the
    differing items of a list the cause says item by item, by halves, while the rows fit as well."""
    if best.recipe is None:
        return best
    given = reference.params(everything=True)
    current, recipe = best, best.recipe

    def as_well(plainer: Recipe) -> Candidate | None:
        words = changes(plainer)
        if not words:
            return None
        level, residual, scored, rel = _score(plainer.rows, rows, idx, pos, crit)
        if level is None or level > (current.level or 0):
            return None
        return Candidate.of(plainer, words, level, residual, scored, rel)

    while current.changes > 1:
        for name, value in recipe.params(everything=True).items():
            if name in recipe.sizing or name not in given or given[name] == value:
                continue
            try:
                plainer = recipe.with_params(**{name: given[name]})
            except Exception:  # the parameter set back breaks another's constraint
                continue
            if len(changes(plainer)) < current.changes and (cand := as_well(plainer)) is not None:
                current, recipe = cand, plainer
                break
        else:
            break
    for name, value in recipe.params(everything=True).items():
        mine, theirs = numbers_of(value), numbers_of(given.get(name))
        if name in recipe.sizing or mine is None or theirs is None or len(mine) != len(theirs):
            continue
        kept = {i for i, (x, y) in enumerate(zip(mine, theirs, strict=True)) if float(x) != float(y)}
        # Only a list the cause says item by item ("41 of 48 values differ"): a kind's own phrase
        # for it ("long factors (A) vs short (B)") is a slip the halving would turn into a list no
        # one wrote (two of Phi-3's long factors are its short ones in float32).
        said = list_difference(value, given[name])  # "41 of 48 values differ: …", as changes() says it
        said_by_items = said is not None and said.split(":")[0] in current.label
        pending = [sorted(kept)] if len(kept) > 1 and said_by_items else []
        while pending:  # halving: a differing item the rows need stays A's, the others go back
            group = pending.pop()
            trial = kept - set(group)
            items = [mine[i] if i in trial else theirs[i] for i in range(len(mine))]
            try:
                halved: Recipe | None = recipe.with_params(**{name: ";".join(items)})
            except Exception:
                halved = None
            if halved is not None and (cand := as_well(halved)) is not None:
                current, recipe, kept = cand, halved, trial
            elif len(group) > 1:
                pending += [group[len(group) // 2 :], group[: len(group) // 2]]
    return current


def _numeric_candidates(
    reference: Recipe, rows: Arr, idx: NDArray[np.intp], pos: Arr, items: bool
) -> Iterator[list[Recipe]]:
    """A real-valued parameter refitted on the reference (or, ``items``, an item of its lists),
    then on each of its neighbours (one choice changed and one number: a sin cache of another base):
    each refit's value written to 1, 2, … 9 significant digits."""
    if rows.shape[1] > NUMERIC_NEIGHBOURS_WIDTH:
        return  # each scan builds ~110 screens: only where a screen is cheap (the kinds' fits measure bases)
    yield from numeric_proposals(reference, rows, idx, pos, items=items)
    for near in reference.neighbours():
        if near.shape == reference.shape:
            yield from numeric_proposals(near, rows, idx, pos, helps_alone=False)


def _real_parameters(recipe: Recipe) -> list[str]:
    """The recipe's real-valued, positive parameters that shape its values, in declaration order."""
    return [
        name
        for name, value in recipe.params(everything=True).items()
        if name not in recipe.sizing and isinstance(value, float) and value > 0
    ]


def _scan_twin(recipe: Recipe) -> Recipe:
    """A float64 pipeline of ``recipe`` when its kind has one: the same values to well within
    the float32 envelope at a fraction of the exact kernel's cost, good enough to locate a
    parameter (every value proposed is then scored with the recipe itself)."""
    return next((p for p in recipe.pipelines() if p.pipeline().startswith("float64")), recipe)


def numeric_proposals(
    reference: Recipe,
    target: Arr,
    idx: NDArray[np.intp],
    pos: Arr,
    helps_alone: bool = True,
    *,
    items: bool = True,
) -> Iterator[list[Recipe]]:
    """The reference with one real-valued parameter refitted (a base, a scale, a factor the
    kind's own fit does not measure): a coarse scan over four decades either side on the screen
    rows, a golden-section refinement, then the value written to 1, 2, … 9 significant digits
    (one list a refit, roundest first).

    On the reference itself (``helps_alone`` and ``items``), also one item of a list of numbers (LongRoPE's
    ``short_factor``): an item whose change moves the column where the screen rows differ most
    (a short cache measures too few of its frequencies for the kind's fit to propose the list)."""
    n, d = target.shape
    pick = screen_rows(n)
    screened, screen_idx = target[pick], idx[pick]
    scanned = _scan_twin(reference)

    def rows_of(params: dict[str, Any]) -> Arr:
        return rows_at(scanned.with_params(**params).rows, screen_idx, d)

    def residual(params: dict[str, Any]) -> float:
        try:
            return worst_gap(screened, rows_of(params))
        except Exception:
            return math.inf

    values = reference.params(everything=True)
    setters: Iterator[tuple[Callable[[float], dict[str, Any]], float, bool]] = (
        (functools.partial(_set_value, name), values[name], False) for name in _real_parameters(reference)
    )
    if helps_alone and items:
        setters = itertools.chain(
            setters,
            (
                (functools.partial(_set_item, name, k, listed), float(listed[k]), True)
                for name, k, listed in _list_items(reference, screened, rows_of)
            ),
        )
    for setter, value, near in setters:
        found = _refit(lambda x: residual(setter(x)), value, helps_alone, near)  # noqa: B023 (_refit calls it at once)
        if found is not None:
            yield _roundest(reference, found, setter, near)


def _set_value(name: str, x: float) -> dict[str, Any]:
    return {name: x}


def _set_item(name: str, k: int, listed: list[str], x: float) -> dict[str, Any]:
    return {name: ";".join([*listed[:k], repr(x), *listed[k + 1 :]])}


def _refit(residual: Callable[[float], float], value: float, helps_alone: bool, near: bool = False) -> float | None:
    """The value of one positive number that brings ``residual`` lowest: a scan a quarter decade
    apart over four decades either side of ``value`` (``near``: and 0.5 % apart from half to twice
    it), then a golden-section refinement (None: no value builds, or, when not ``helps_alone``, none
    halves the residual at ``value`` in 10 steps).

    ``near`` is for a list's item, whose column may be a fast one: 64 rows at ~1 radian a row
    leave a basin about 1.6 % wide around the true factor, which the coarse scan steps over."""
    # A quarter decade apart over four decades either side (the grid holds the value itself).
    grid = np.log(value) + np.linspace(-4, 4, 33) * math.log(10)
    if near:
        grid = np.union1d(grid, np.log(value) + np.linspace(-math.log(2), math.log(2), 141))
    scores = [residual(math.exp(float(g))) for g in grid]
    middle = int(np.searchsorted(grid, np.log(value)))  # the value itself
    k = int(np.argmin(scores))
    if not math.isfinite(scores[k]):
        return None
    lo, hi = float(grid[max(0, k - 1)]), float(grid[min(len(grid) - 1, k + 1)])
    # Golden section, one new point a step: the bracket shrinks 0.618× (40 steps: ~1e-9).
    ratio = (math.sqrt(5) - 1) / 2
    m1, m2 = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    f1, f2 = residual(math.exp(m1)), residual(math.exp(m2))
    for step in range(40):
        # On a neighbour (another part, layout, …) a number is refined on only while it clearly
        # helps: after 10 steps it must have halved what is left at its own value (a parameter the
        # table does not depend on then costs 45 builds, not 75).
        if step == 10 and not helps_alone and min(f1, f2) > 0.5 * scores[middle]:
            return None
        if f1 <= f2:
            hi, m2, f2 = m2, m1, f1
            m1 = hi - ratio * (hi - lo)
            f1 = residual(math.exp(m1))
        else:
            lo, m1, f1 = m1, m2, f2
            m2 = lo + ratio * (hi - lo)
            f2 = residual(math.exp(m2))
    return math.exp((lo + hi) / 2)


def _roundest(
    reference: Recipe, found: float, params: Callable[[float], dict[str, Any]], near: bool = False
) -> list[Recipe]:
    """The reference with ``found`` written to 1, 2, … 9 significant digits (``near``: each with its
    five neighbours either side in the last digit up to 5 digits: rows in float32 stay the same over
    a range of a factor, where the refinement stops anywhere, 2.5803 for an edit to 2.585)."""
    values: list[float] = []
    for digits in range(1, 10):
        written = float(f"{found:.{digits}g}")
        values.append(written)
        if near and digits <= 5 and written > 0:
            unit = 10.0 ** (math.floor(math.log10(written)) - digits + 1)
            values += [float(f"{written + k * unit:.{digits}g}") for k in (1, -1, 2, -2, 3, -3, 4, -4, 5, -5)]
    out = []
    for value in dict.fromkeys(v for v in values if v > 0):
        try:
            out.append(reference.with_params(**params(value)))
        except Exception:
            continue
    return out


def _list_items(
    reference: Recipe, screened: Arr, rows_of: Callable[[dict[str, Any]], Arr]
) -> Iterator[tuple[str, int, list[str]]]:
    """``(parameter, index, items)`` of each positive item of a list of numbers whose change (1 %)
    moves the screen rows' column that differs most from the reference's: the item an edit of one
    number would be (an item the table does not use, a long factor below the original length, moves
    nothing)."""
    try:
        own = rows_of({})
    except Exception:
        return
    gap = np.abs(screened - own)
    gap[~np.isfinite(gap)] = 0.0
    worst = int(np.argmax(gap.max(axis=0)))
    column = np.sort(screened[:, worst][np.isfinite(screened[:, worst])])
    if column.size == 0 or 1 + np.count_nonzero(np.diff(column)) < 3:
        return  # a value to fit the item to and its row 0: any edit of it "fits" (two rows of a cache)
    for name, value in reference.params(everything=True).items():
        items = numbers_of(value)
        if name in reference.sizing or items is None:
            continue
        for k, text in enumerate(items):
            if float(text) <= 0:
                continue
            try:
                changed = rows_of(_set_item(name, k, items, float(text) * 1.01))[:, worst]
            except Exception:
                continue
            if not np.array_equal(changed, own[:, worst], equal_nan=True):
                yield name, k, items


def statistics_cause(rows_a: Arr, rows_b: Arr, changes: list[str] | None = None) -> Explanation:
    """Learned tables have no formula: compare what their values look like (and, when both are
    pecli's own draws, the parameters of the two draws)."""

    def stats(x: Arr) -> str:
        finite = x[np.isfinite(x)]
        if not finite.size:
            return "no finite values"
        return (
            f"mean {float(finite.mean()):.4g}, std {float(finite.std()):.4g}, max |x| {float(np.abs(finite).max()):.4g}"
        )

    seen = f"A has {stats(rows_a)}; B has {stats(rows_b)}"
    if changes:
        detail = f"{'; '.join(changes)}: two random draws, each rebuilt by its recipe; {seen}"
    else:
        detail = f"learned tables have no formula for a parameter to explain, so their statistics are compared: {seen}"
    return Explanation("learned", detail, worst_gap(rows_a, rows_b))


def _same_rows(recipe: Recipe, idx: NDArray[np.intp], own: Arr | None) -> bool:
    """Whether ``recipe`` builds exactly the reference's rows ``own`` at ``idx``."""
    if own is None:
        return False
    try:
        return bool(np.array_equal(rows_at(recipe.rows, idx, own.shape[1]), own, equal_nan=True))
    except Exception:
        return False


def _better(x: Candidate, y: Candidate) -> bool:
    """Fewer changes first, then round numbers before fitted ones (a named scaling before the
    17-digit base that reproduces it at this length), then within tolerance before within the
    float32 envelope, then closer."""
    return (x.changes, x.long_numbers, x.level or 0, x.residual) < (y.changes, y.long_numbers, y.level or 0, y.residual)


@dataclass(frozen=True)
class Known:
    """A side's recipe and how it is known: ``how`` for the report; ``tight`` when the table is
    that recipe to the rounding of its values (given and confirmed, or identified bit for bit or
    within rounding), so the other side may be fitted from it.  A match only within a float32
    pipeline's envelope (2e-3 at 16,384 positions) names the table's kind, never a cause within
    that envelope: it would also "match" a float16 copy."""

    recipe: Recipe
    how: str
    tight: bool
    proved: bool


def identified_causes(
    a: Table | None, b: Table | None, gap: float = math.inf
) -> tuple[Fit, Known | None, Known | None]:
    """Identify the sides given (each proved on every row; tables over :data:`IDENTIFY_CELLS`
    cells are not).  Returns what each side was proved to be (``None`` where identify found no
    recipe, or the side was not given) and, in the :class:`Fit`, how many sides are learned
    tables and A's nearest recipe when A has none."""
    from pecli.identification import Identification, identify

    found: list[Identification | None] = []
    for t in (a, b):
        if t is None or t.shape[0] * t.shape[1] > IDENTIFY_CELLS:
            found.append(None)
            continue
        try:
            found.append(identify(t, nearest=1))
        except Exception:  # an empty or odd table identifies as nothing
            found.append(None)
    known = [
        Known(f.best.recipe, f"identified on every row, {f.best.how_close()}", _tight(f.best, gap), True)
        if f is not None and f.best is not None and f.verdict == "match"
        else None
        for f in found
    ]
    # A random draw: recognised as one, or rebuilt by a recipe without a formula.
    learned = sum(
        f is not None and (f.verdict == "learned" or (k is not None and not k.recipe.formula))
        for f, k in zip(found, known, strict=True)
    )
    near = ""
    ida = found[0]
    if ida is not None and known[0] is None and ida.nearest:
        c = ida.nearest[0]
        near = nearest_words(c.spec, c.rel_rms, c.max_abs, c.rows)
    return Fit([], near, learned), known[0], known[1]


def _tight(best: Any, gap: float) -> bool:
    """Whether identify's best candidate is close enough to its table to fit the other table from."""
    v = best.verification
    missed = v.max_abs if v is not None else best.max_abs
    return bool(best.within_rounding or 8 * missed <= gap)


def given(recipe: Recipe) -> Known:
    """A side's own recipe, confirmed on the sampled rows."""
    return Known(recipe, "its own recipe, on the sampled rows", True, False)


#: Cells up to which two pipeline names of one recipe are compared on every value.
_TWIN_CELLS = 1 << 20


def _twin_of(ra: Recipe, rb: Recipe) -> Recipe:
    """``ra``, or the pipeline of it (:meth:`Recipe.pipelines`) nearest in words to ``rb`` that
    builds the same values on every row: identify names a bit-identical table by one
    of its pipelines, and two such names are no difference ("compute exact (A) vs float64 (B)")."""
    n, d = ra.shape
    if ra.kind != rb.kind or n * d > _TWIN_CELLS:  # a twin is proved on every row, so only small tables
        return ra
    own = ra.build()
    best = ra
    for twin in ra.pipelines():
        if len(twin.changes(rb)) < len(best.changes(rb)):
            try:
                same = np.array_equal(twin.build(), own)
            except Exception:  # a pipeline that cannot build this shape is no twin
                same = False
            best = twin if same else best
    return best


def recipes_compared(ka: Known, kb: Known) -> Fit:
    """Two recipes, each agreeing with its own table, compared parameter by parameter: the
    parameters only when both are known to rounding; else only a difference of kind."""

    ra, rb = ka.recipe, kb.recipe
    if not (ka.tight and kb.tight) and ra.kind == rb.kind:
        return Fit([])
    ra = _twin_of(ra, rb)
    words = ra.changes(rb)
    if not words:
        return Fit([])
    detail = f"{'; '.join(words)}; A is {ra.spec()} ({ka.how}), B is {rb.spec()} ({kb.how})"
    return Fit([Explanation("recipe", detail, math.nan, proved=ka.proved and kb.proved)])


__all__ = [
    "Candidate",
    "Fit",
    "Known",
    "at_shape",
    "confirmed",
    "fit_from",
    "given",
    "identified_causes",
    "numeric_proposals",
    "recipes_compared",
    "rows_at",
    "statistics_cause",
]
