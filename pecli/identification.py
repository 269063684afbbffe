"""Which recipe made this table?  Sample, propose, score, then prove on the whole table.

1. **Sample** (:class:`pecli.fitting.Sample`): a head window, a tail window and windows between.
2. **Propose.**  Every preset, sized to the table by its kind (:meth:`Recipe.sizes`); the recipe
   stored with the table; and each kind's inverse (:meth:`Recipe.fit`: sinusoidal layouts and
   bases, grids, rotary caches with their θ and scaling, ALiBi slopes and bias).
3. **Score** each candidate on the sampled rows (a screen on a few head and tail rows first).
   Candidates whose sampled rows are bit-identical are one table with several names.
4. **Prove.**  The candidates that match the sample are compared with the *whole* table, streamed
   block by block with ``pecli diff``'s test (``|a − b| ≤ atol``, NaNs in the same place equal).
   A MATCH is printed only when that holds, and the SOURCE it prints with ``--atol`` (0 when the
   table is bit-identical) makes ``pecli diff FILE SOURCE --atol X`` exit 0.  The stored recipe
   comes first when the data agrees with it, then a bit-identical rebuild, then the closest.
5. **Decide.**  *match*: proved within :func:`tolerances`; *close*: within the envelope any
   float32 pipeline stays in, ``2⁻²²·(1 + p)`` (the table cannot tell its pipeline); *learned*: no
   formula fits and the values look like a random initialisation (a description, not a rebuild);
   else *unknown*, with the nearest candidates.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING

import numpy as np

from pecli.errors import PecliInputError, RecipeError
from pecli.fitting import Sample
from pecli.identified import Candidate, Identification, Verdict
from pecli.kinds import kinds
from pecli.precision import untold
from pecli.presets import PRESETS, Preset
from pecli.proof import Verification, round_up, tolerances, verify_all
from pecli.recipe import Recipe
from pecli.table import Progress, Table, TableLike, as_table, spread_indices
from pecli.transposition import channels_first_note, transposed_note

if TYPE_CHECKING:
    from pecli.dtypes import Arr, Ids

#: Candidates matching the sample that are compared with the whole table, at most.
VERIFY_MAX = 8
#: Widest table identify takes: its fits still read every column, about 75 MB a million columns
#: (a random 1 × 4,194,304 row: 2.1 s and 315 MB; an 8 × 300,000 ALiBi bias: 0.8 s); twice the
#: widest bias a long-context model's cache has (2²¹ keys).
IDENTIFY_MAX_COLUMNS = 1 << 22
#: A table wider than this has its candidates screened on this many columns spread over it, by
#: the kinds that compute columns on their own (:meth:`Recipe.columns_at`): a candidate then costs
#: the same whatever the width; only those that pass (or nearly do) are built whole on the sample.
SCREEN_COLUMNS = 1024
#: A table wider than this has its candidates scored on the sample's rows at this many columns
#: spread over it (and the one reported proved on every value): 14 float32 pipelines of a
#: 64×65536 sinusoid scored on every column took 1.7 s.
SAMPLE_COLUMNS = 4096
#: Relative RMS under which an unmatched candidate is tried in its kind's other pipelines.
_NEAR_MISS = 1e-2
_STORED = "stored recipe"


# -- proposals -------------------------------------------------------------------------------
def preset_recipes(preset: Preset, sample: Sample) -> Iterator[Recipe]:
    """The preset's recipe at each size its kind proposes that gives the table's shape."""
    cls = kinds()[preset.kind]
    for size in cls.sizes(preset.defaults(), sample):
        try:
            recipe = preset.recipe(**size)
        except RecipeError:
            continue
        if recipe.shape == sample.table.shape:
            yield recipe


@dataclass
class _Scored:
    recipe: Recipe
    names: list[str]
    rank: int  # proposal order: presets first, in registry order
    max_abs: float = math.inf
    rel_rms: float = math.inf
    rows: int = 0
    digest: str = ""
    narrow: bool = False  # scored on part of a wide table's screen: its columns (SCREEN_COLUMNS), or a row a span


class _Proposals:
    """The candidates, each recipe once with every name that proposed it (presets first)."""

    def __init__(self) -> None:
        self.found: dict[Recipe, _Scored] = {}

    def add(self, recipe: Recipe, name: str | None) -> _Scored:
        entry = self.found.setdefault(recipe, _Scored(recipe, [], len(self.found)))
        if name is not None and name not in entry.names:
            entry.names.append(name)
        return entry


def _proposals(sample: Sample, presets: list[tuple[Preset, Recipe]]) -> _Proposals:
    out = _Proposals()
    for preset, recipe in presets:
        out.add(recipe, preset.name)
    stored = sample.table.recipe
    if stored is not None and stored.shape == sample.table.shape:
        out.add(stored, _STORED)
    for cls in kinds().values():
        for recipe in cls.fit(sample):
            out.add(recipe, None)
    return out


def _started_presets(sample: Sample, found: _Proposals, presets: list[tuple[Preset, Recipe]], screen: _Screen) -> None:
    """A preset read from row ``start`` on (HF's past_key_values_length): presets fix no start, so
    each start that a fitted recipe showed *and that fits the screen rows* is tried on every preset
    of the same kind that has one.  When no candidate fits, each preset is also tried at the starts
    its own frequencies read from row 0 (:meth:`Recipe.starts_in`: Phi-3 past 4096 positions, on
    its long factors, turns its slow frequencies too little for any fit), and kept only if it fits
    the screen (any table's row 0 gives some phases: a learned table's "nearest" must not become a
    rotary cache at position 69232)."""

    def fits(p: _Scored) -> bool:
        return bool(p.digest) and p.max_abs <= tolerances(p.recipe, sample)[1]

    def started(recipe: Recipe, start: int) -> Recipe | None:
        has_start = "start" in {f.name for f in fields(recipe)}  # type: ignore[arg-type]
        if not has_start or recipe.padding_row is not None:
            return None
        try:
            return replace(recipe, start=start)  # type: ignore[type-var]
        except RecipeError:
            return None

    starts = {(p.recipe.kind, p.recipe.start) for p in found.found.values() if p.recipe.start and fits(p)}
    for (preset, recipe), (kind, start) in itertools.product(presets, sorted(starts)):
        if kind == recipe.kind and (moved := started(recipe, start)) is not None:
            entry = found.add(moved, preset.name)
            if not entry.digest:
                _screen(entry, screen)
    if any(fits(p) for p in found.found.values()):
        return
    for preset, recipe in presets:
        try:
            starts_read = recipe.starts_in(sample)
        except Exception:  # as _try_build: one kind's bug must not stop the others
            continue
        for start in starts_read:
            moved = started(recipe, start)
            if moved is None:
                continue
            if moved in found.found:  # another preset's table at that start: one more name for it
                found.add(moved, preset.name)
                continue
            probe = _Scored(moved, [], len(found.found))
            _screen(probe, screen)
            if fits(probe):
                _screen(found.add(moved, preset.name), screen)  # the screen's score is kept: no rebuild


# -- scoring ---------------------------------------------------------------------------------
def _try_build(recipe: Recipe, spans: list[tuple[int, int]], dtype: type | None = None) -> Arr | None:
    """The candidate's rows at ``spans`` (in its own dtype, or ``dtype``); ``None`` if it cannot be
    built at this shape."""
    try:
        return np.concatenate([np.asarray(recipe.rows(a, b), dtype=dtype) for a, b in spans])
    except Exception:  # a candidate that fails to build (any kind's bug) must not stop the others
        return None


class _Tally:
    """A candidate's score (:func:`_score`) summed over pieces of its rows, so that no more than a
    piece is held at once; the digest is the whole rows' (hashed piece by piece, the same bytes)."""

    def __init__(self, hashed: bool = True) -> None:  # hashed=False: no digest (a screen's part)
        self.max_abs, self.squares, self.norm_squares, self.rows = 0.0, 0.0, 0.0, 0
        self.hash = hashlib.blake2b(digest_size=16) if hashed else None

    def add(self, table_rows: Arr, rows: Arr) -> None:
        """Rows of the candidate in its own dtype (hashed so: half the bytes of float64 for a
        float32 table, whose hashing was a fifth of a wide table's identify), beside the table's."""
        native = np.ascontiguousarray(rows)
        if self.hash is not None:
            if self.rows == 0:  # one table in two dtypes is two digests
                self.hash.update(native.dtype.name.encode())
            self.hash.update(native.reshape(-1).view(np.uint8).data)
        built = native.astype(np.float64, copy=False)
        with np.errstate(invalid="ignore", over="ignore"):
            diff = table_rows - built
            if diff.size and np.isfinite(diff).all():  # both finite: the same sums as below, fewer passes
                self.max_abs = max(self.max_abs, float(diff.max()), -float(diff.min()))
                flat, values = diff.ravel(), built.ravel()
                self.squares += float(np.dot(flat, flat))
                self.norm_squares += float(np.dot(values, values))
            elif diff.size:
                same = (table_rows == built) | (np.isnan(table_rows) & np.isnan(built))
                diff = np.where(same, 0.0, np.abs(diff))
                diff[~np.isfinite(diff)] = np.inf
                self.max_abs = max(self.max_abs, float(diff.max()))
                self.norm_squares += float(np.sum(np.where(np.isfinite(built), built, 0.0) ** 2))
                self.squares += float(np.sum(diff * diff))
        self.rows += built.shape[0]

    def score(self) -> _Score:
        rms, norm = math.sqrt(self.squares), math.sqrt(self.norm_squares)
        digest = self.hash.hexdigest() if self.hash is not None else ""
        return self.max_abs, rms / norm if norm > 0 else (0.0 if rms == 0 else math.inf), self.rows, digest


#: A candidate's score: its largest difference, relative RMS, rows scored and digest.
_Score = tuple[float, float, int, str]


def _take(s: _Scored, score: _Score) -> None:
    s.max_abs, s.rel_rms, s.rows, s.digest = score


def _score(table_rows: Arr, built: Arr, hashed: bool = True) -> _Score:
    """``built`` scored against ``table_rows``: its largest difference, relative RMS, rows and
    digest (``hashed=False``: none, the caller gives it one)."""
    tally = _Tally(hashed)
    tally.add(table_rows, built)
    return tally.score()


#: Cells of a candidate's rows built and scored at once on the sample (8 MB of float64).
_SCORE_CELLS = 1 << 20


def _score_rows(s: _Scored, sample: Sample) -> bool:
    """``s`` scored on the whole sample (:func:`_rows_score`), once for every recipe that builds
    the same bits (:meth:`~pecli.recipe.Recipe.canonical`); False if it cannot be built."""
    score = sample.memo(("identify's score of", s.recipe.canonical()), lambda: _rows_score(s.recipe, sample))
    if score is None:
        return False
    _take(s, score)
    return True


def _rows_score(recipe: Recipe, sample: Sample) -> _Score | None:
    """``recipe`` scored on the whole sample (at :func:`_sample_columns` of a wide table), its rows
    built a piece at a time (a 64×65536 sample is 32 MB of float64, and its differences and
    squares as much again each); None if it cannot be built."""
    scored = _sample_columns(sample)
    cols, values = scored if scored is not None else (None, sample.values)
    tally, at = _Tally(), 0
    step = max(1, _SCORE_CELLS // (sample.d if cols is None else cols.size))
    try:
        for a, b in sample.spans:
            for c0 in range(a, b, step):
                c1 = min(b, c0 + step)
                built = None if cols is None else recipe.columns_at(np.arange(c0, c1), cols)
                if built is None:  # every column (a kind that builds whole rows: those columns of them)
                    built = np.asarray(recipe.rows(c0, c1))
                    built = built if cols is None else built[:, cols]
                tally.add(values[at : at + c1 - c0], np.asarray(built))
                at += c1 - c0
    except Exception:  # as _try_build: one kind's bug must not stop the others
        return None
    return tally.score()


def _sample_columns(sample: Sample) -> tuple[Ids, Arr] | None:
    """The columns a wide table's candidates are scored on (:data:`SAMPLE_COLUMNS`, spread over
    it, both ends kept) and the sample's values there; None: every column."""
    if sample.d <= SAMPLE_COLUMNS:
        return None

    def read() -> tuple[Ids, Arr]:
        cols = spread_indices(sample.d, SAMPLE_COLUMNS)
        return cols, np.ascontiguousarray(sample.values[:, cols])

    return sample.memo(("identify's sample columns",), read)


def _sample_columns_words(sample: Sample) -> str:
    """:func:`_sample_columns` in words (nothing when the sample has every column)."""
    scored = _sample_columns(sample)
    return "" if scored is None else f" at {scored[0].size} of its {sample.d} columns"


@dataclass(frozen=True)
class _Screen:
    """A few head and tail rows (the whole table when it is short), their values, and the columns
    a wide table's candidates are screened on (None: every column)."""

    spans: list[tuple[int, int]]
    values: Arr
    columns: Ids | None = None
    row_ids: Ids | None = None  # the spans' rows, and their values at the columns
    narrow_values: Arr | None = None
    #: What :func:`_screen_score` gave each canonical recipe (:func:`_screen`).
    scores: dict[Recipe, tuple[_Score, bool] | None] = field(default_factory=dict, compare=False)

    @classmethod
    def of(cls, sample: Sample, rows: int = 8) -> _Screen:
        n, d = sample.n, sample.d
        spans = [(0, n)] if n <= 2 * rows else [(0, rows), (n - rows, n)]
        values = np.concatenate([sample.rows(a, b) for a, b in spans])
        if d <= SCREEN_COLUMNS:
            return cls(spans, values)
        columns = spread_indices(d, SCREEN_COLUMNS)
        row_ids = np.concatenate([np.arange(a, b) for a, b in spans])
        return cls(spans, values, columns, row_ids, values[:, columns])

    @property
    def thin_spans(self) -> list[tuple[int, int]]:
        """The first row of each span: what a wide table's candidates that cannot compute a few
        columns alone are screened on (whole rows: 16 of a 65536-wide table took 16 ms each)."""
        return [(a, a + 1) for a, _ in self.spans]

    @functools.cached_property
    def thin_values(self) -> Arr:
        """The table's values at :attr:`thin_spans` (copied once: 70 ms of a 3·10⁶-wide row's identify
        when each candidate took its own copy)."""
        at = np.cumsum([0] + [b - a for a, b in self.spans[:-1]])
        out: Arr = self.values[at]
        return out

    def describe(self, d: int) -> str:
        """The screen's columns in words (nothing when it reads every column)."""
        if self.columns is None:
            return ""
        rows = [a for a, _ in self.thin_spans]
        whole = f"row {rows[0]}" if len(rows) == 1 else f"rows {rows[0]} and {rows[1]}"
        return f", candidates screened on {self.columns.size} of its {d} columns (or whole, on {whole})"


def _screen(p: _Scored, screen: _Screen) -> None:
    """``p`` scored on the screen (:func:`_screen_score`), once for every recipe that builds the
    same bits (:meth:`~pecli.recipe.Recipe.canonical`: a sinusoid's odd-width policy on an even
    dim, or its ``freq=half``; 8 of the 25 sinusoids a 2048×1024 paper table is screened on, and
    7 of the 14 candidates scored on its sample)."""
    key = p.recipe.canonical()
    if key not in screen.scores:
        screen.scores[key] = _screen_score(p.recipe, screen)
    found = screen.scores[key]
    if found is None:  # it cannot be built
        return
    score, narrow = found
    _take(p, score)
    if narrow:
        # Part of the screen alike says nothing of the rest: no two such candidates are one table
        # (each its own digest, nothing hashed: a 3·10⁶-wide row's hashing took 17 ms a candidate).
        p.digest, p.narrow = f"part of the screen:{p.rank}", True


def _screen_score(recipe: Recipe, screen: _Screen) -> tuple[_Score, bool] | None:
    """``recipe`` scored on the screen's rows, and whether on part of them only (a wide table's
    columns, or a row a span); None if it cannot be built."""
    if screen.columns is not None and screen.row_ids is not None and screen.narrow_values is not None:
        try:
            narrow = recipe.columns_at(screen.row_ids, screen.columns)
        except Exception:  # as _try_build: one kind's bug must not stop the others
            return None
        if narrow is not None:
            return _score(screen.narrow_values, np.asarray(narrow), hashed=False), True
        built = _try_build(recipe, screen.thin_spans)  # a kind that builds whole rows: one row a span
        return None if built is None else (_score(screen.thin_values, built, hashed=False), True)
    built = _try_build(recipe, screen.spans)
    return None if built is None else (_score(screen.values, built), False)


def _score_sample(sample: Sample, proposals: list[_Scored], nearest: int) -> None:
    """The promising proposals, and the best few whatever they score, on the whole sample; a
    candidate screened on a few columns only if it passed or nearly did (its relative RMS within
    :data:`_NEAR_MISS`): the others' scores rest on those columns (a full row of a 3·10⁶-wide
    table costs seconds)."""
    for i, p in enumerate(sorted(proposals, key=lambda p: (p.max_abs, p.rank))):
        within = p.max_abs <= tolerances(p.recipe, sample)[1]
        if p.digest and (within or (p.rel_rms <= _NEAR_MISS if p.narrow else i < nearest)):
            if _score_rows(p, sample):  # scored, not kept: a 64×65536 sample is 32 MB a candidate
                p.narrow = False


def _groups(proposals: list[_Scored]) -> list[list[_Scored]]:
    """Proposals grouped by their sampled rows: one group per distinct table, preset-named first."""
    groups: dict[tuple[str, int], list[_Scored]] = {}
    for p in proposals:
        if p.digest:
            groups.setdefault((p.digest, p.rows), []).append(p)
    out = list(groups.values())
    for members in out:
        members.sort(key=lambda p: (_STORED not in p.names, not any(x in PRESETS for x in p.names), p.rank))
    out.sort(key=lambda g: (g[0].max_abs, not any(x in PRESETS for x in g[0].names), g[0].rank))
    return out


def _candidate(group: list[_Scored], sample: Sample) -> Candidate:
    head = group[0]
    names = tuple(dict.fromkeys(x for m in group for x in m.names))
    match, close = tolerances(head.recipe, sample)
    rounding = 4 * sample.eps * sample.scale
    return Candidate(
        head.recipe,
        names,
        head.max_abs,
        head.rel_rms,
        match,
        close,
        head.rows,
        rounding=rounding,
        held_in=sample.dtype,
        scored_on="screen" if head.narrow else "sample",
    )


# -- proof on the whole table (pecli.proof) ---------------------------------------------------
class _Passes:
    """The proof's progress: every pass reads each row of the table, so a pass after the first
    starts the count again (a negative count, :data:`pecli.table.Progress`) where the bar went on
    past 100 % (up to four passes: two stages, a second settling with other pipelines)."""

    def __init__(self, progress: Progress) -> None:
        self.progress, self.done = progress, 0

    def __call__(self, rows: int) -> None:
        self.done += rows
        self.progress(rows)

    def next_pass(self) -> None:
        if self.done:
            self.progress(-self.done)
            self.done = 0


#: The digest of a rebuild that departs from the table nowhere.
_NO_DEPARTURE = hashlib.blake2b(digest_size=16).hexdigest()


def _prove(
    table: Table, sample: Sample, cands: list[Candidate], atols: list[float], progress: _Passes | None
) -> list[Candidate]:
    """The candidates with their :class:`Verification` on the whole table (one pass for all)."""
    whole = sum(b - a for a, b in sample.spans) == sample.n and _sample_columns(sample) is None
    todo = [i for i, c in enumerate(cands) if not (whole and c.max_abs == 0)]
    checks = [(cands[i].recipe, atols[i]) for i in todo]
    if progress is not None and todo:
        progress.next_pass()
    found = verify_all(table, checks, progress, sample.dtype, sample.scale) if todo else []
    results = {i: v for i, v in zip(todo, found, strict=True)}
    out = []
    for i, c in enumerate(cands):
        # The sample was the whole table and the rebuild equals it: it departs nowhere.
        v = results.get(
            i,
            Verification(sample.n, 0.0, 0, 0.0, digest=_NO_DEPARTURE, max_ulps=0.0, ulps_past_slack=0.0),
        )
        if v.holds:  # the tightest tolerance a user can type under which diff passes (0: bit-identical)
            v = replace(v, atol=round_up(v.max_abs))
        out.append(replace(c, verification=v))
    return out


def _prove_staged(table: Table, sample: Sample, chosen: list[Candidate], progress: _Passes | None) -> list[Candidate]:
    """:func:`_prove` in two passes: first the stored recipe and the candidates the sample rebuilds
    bit for bit (the score order puts them first).  The one of them reported (:func:`_preference`)
    is then known, and a candidate left whose sampled rows are already further from the table than
    that one's tolerance can be no alternative to it ("also matches"), nor reported instead of it
    unless the best it could prove to be (:func:`_preference_at_best`) is preferred: those are not
    proved.  Each would cost a full rebuild: a 4096×4096 sinusoid had five float32 pipelines, two
    thirds of identify's time; a 2048×1024 one whose paper recipe departs from it in one value
    (within float32's rounding) five more, 0.45 of 0.85 s."""
    split = next((i for i, c in enumerate(chosen) if c.max_abs != 0 and _STORED not in c.names), len(chosen))
    first = _prove(table, sample, chosen[:split], [c.tolerance for c in chosen[:split]], progress)
    rest = chosen[split:]
    proved = [c for c in first if c.proved]
    if proved:
        winner = min(proved, key=_preference)
        reach, rank = winner.tolerance, _preference(winner)
        rest = [c for c in rest if c.max_abs <= reach or _preference_at_best(c) < rank]
    return first + (_prove(table, sample, rest, [c.tolerance for c in rest], progress) if rest else [])


# -- identify ----------------------------------------------------------------------------------
def identify(
    table: TableLike, *, nearest: int = 5, progress: Progress | None = None, flip: bool = True
) -> Identification:
    """Which recipe (preset or fitted parameters) made ``table``, proved on the whole table (``flip``:
    an unknown table is also tried transposed, and a 3-D one read channels-first:
    :func:`pecli.transposition.transposed_note`, :func:`~pecli.transposition.channels_first_note`)."""
    table = as_table(table, "the array")
    passes = _Passes(progress) if progress is not None else None
    n, d = table.shape
    table.check_stored("identify", "look at its rows with pecli inspect --rows A:B")
    if n == 0 or d == 0:
        raise PecliInputError(f"{table.source} is empty ({n}×{d}): there is nothing to identify")
    if d > IDENTIFY_MAX_COLUMNS:
        raise PecliInputError(
            f"{table.source} has {d} columns, more than the {IDENTIFY_MAX_COLUMNS} identify tries recipes at "
            "(its fits read every column: about 75 MB a million): "
            "compare it with the recipe you expect instead (pecli diff SOURCE RECIPE)"
        )
    sample = Sample.read(table)
    sample.notes += sample.reading_notes()
    presets = [(p, r) for p in PRESETS.values() for r in preset_recipes(p, sample)]
    found = _proposals(sample, presets)
    screen = _Screen.of(sample)
    for p in found.found.values():
        _screen(p, screen)
    _started_presets(sample, found, presets, screen)

    def settle() -> tuple[list[list[_Scored]], list[Candidate], tuple[Verdict, Candidate | None, list[Candidate]]]:
        proposals = list(found.found.values())
        _score_sample(sample, proposals, nearest)
        groups = _groups(proposals)
        candidates = [_candidate(g, sample) for g in groups]
        return groups, candidates, _decide(table, sample, groups, candidates, passes)

    groups, candidates, (verdict, best, alternatives) = settle()
    # Matched only within a pipeline's envelope, or missed by a hair: another pipeline may rebuild it
    # (a float64 table computed in float64 "matches" the float32 pipeline's envelope; it is float64's;
    # a bfloat16 table off keras' inv-pow by a bfloat16 ulp was computed in another form).
    near = [best] if verdict == "match" and best is not None and not best.within_rounding else []
    near += [c for c in candidates if verdict != "match" and c.recipe.formula and c.rel_rms <= _NEAR_MISS][:2]
    extra = [v for c in near for v in c.recipe.pipelines() if v not in found.found]
    for v in extra:
        _screen(found.add(v, None), screen)
    if extra:
        groups, candidates, (verdict, best, alternatives) = settle()
    confidence = _confidence(best, groups, candidates, sample) if best is not None else 0.0
    kind: str | None = best.recipe.kind if best is not None else None
    if verdict == "unknown":
        for cls in kinds().values():
            if (described := cls.recognise(sample)) is not None:
                verdict, kind = "learned", cls.kind
                sample.notes.insert(0, described)
                break
    if verdict == "unknown" and flip:
        note = transposed_note(table, identify) or channels_first_note(table, identify)
        if note is not None:
            sample.notes.insert(0, note)
    if verdict == "match" and best is not None:  # a reduced pipeline whose tell lies past the table's rows
        sample.notes += untold(best.recipe)
    winners = {best.recipe, *(a.recipe for a in alternatives)} if best is not None else set()
    clues = [text for text, recipes in sample.clues.items() if not winners or recipes & winners]
    return Identification(
        source=table.source,
        shape=(n, d),
        dtype=table.dtype_name,
        verdict=verdict,
        kind=kind,
        best=best,
        confidence=confidence,
        alternatives=alternatives,
        nearest=_nearest(candidates, verdict)[:nearest],
        names=_tie_names(best, alternatives),
        notes=list(dict.fromkeys(clues + sample.notes)),  # a second settle() says its notes again
        sample=sample.describe() + _sample_columns_words(sample) + screen.describe(d),
        candidates_tried=len(found.found),
    )


def _decide(
    table: Table, sample: Sample, groups: list[list[_Scored]], candidates: list[Candidate], progress: _Passes | None
) -> tuple[Verdict, Candidate | None, list[Candidate]]:
    """Prove the candidates that match the sample on the whole table; pick the one to report.

    A group (bit-identical on the sample) can hold recipes that differ elsewhere, so its members
    are proved one by one, in one pass over the table: the stored recipe first, then in score
    order, :data:`VERIFY_MAX` at most.
    """
    members = [
        (i, replace(c, recipe=m.recipe, names=tuple(m.names) or (m.recipe.kind,)))
        for i, (g, c) in enumerate(zip(groups, candidates, strict=True))
        if c.matches
        for m in g
    ]
    members.sort(key=lambda ic: _STORED not in ic[1].names)
    chosen = [c for _, c in members[:VERIFY_MAX]]
    tried = _prove_staged(table, sample, chosen, progress)
    proved = [c for c in tried if c.proved]
    for c in tried:
        v = c.verification
        if v is not None and not v.holds:
            where = f", first at row {v.first_beyond_row}" if v.first_beyond_row is not None else ""
            sample.notes.append(
                f"{c.name} matched the sampled rows but not the whole table ({v.beyond} element"
                f"{'s' if v.beyond != 1 else ''} beyond {c.tolerance:.3g}{where}): not reported as a match"
            )
    stored_given = any(_STORED in m.names for g in groups for m in g)
    if proved:
        best = min(proved, key=_preference)
        if _STORED in best.names:
            sample.notes.append("the data agrees with the recipe stored in the file")
        elif stored_given:
            sample.notes.append("the data does NOT match the recipe stored in the file")
        others = [c for c in proved if c is not best and c.verification and c.verification.max_abs <= best.tolerance]
        return "match", best, _fold(others)
    if stored_given:
        sample.notes.append("the data does NOT match the recipe stored in the file")
    close = [c for c in candidates if c.max_abs <= c.close_tolerance][:1]
    if close:
        c = _prove(table, sample, close, [close[0].close_tolerance], progress)[0]
        v = c.verification
        if v is not None and v.holds:
            short = (
                f"not within {c.tolerance:.3g}"
                if v.max_abs > c.tolerance or v.ulps_past_slack is None
                else f"within {c.tolerance:.3g}, but a value is {v.ulps_past_slack:.3g} of its own ulps off (a match "
                "holds every value to 1)"
            )
            sample.notes.append(
                f"within the rounding envelope of a float32 pipeline (max |Δ| {v.max_abs:.3g} over the "
                f"whole table), {short}: the pipeline that made it is not one pecli emulates"
            )
            return "close", c, []
    return "unknown", None, []


def _nearest(candidates: list[Candidate], verdict: Verdict) -> list[Candidate]:
    """The candidates closest to the table, closest first by their relative RMS difference over the
    rows compared (not the largest one: a sinusoid times 0.088 is within 1.08 of any cos cache, yet
    13.9 times its own size away); a random draw (a kind without a formula) is no nearer recipe
    for a table that is not itself a random draw: a sinusoid with its columns swapped is 1.04 from
    a learned table of std 0.02 and 1.41 from the paper's, yet the learned table explains nothing of it."""
    drawn = verdict == "learned"
    return sorted(candidates, key=lambda c: (c.recipe.formula == drawn, c.rel_rms))


def _fold(candidates: list[Candidate]) -> list[Candidate]:
    """One candidate per distinct rebuilt table (its digest), carrying every name that builds it."""
    by_table: dict[str, Candidate] = {}
    for c in candidates:
        key = c.verification.digest if c.verification is not None else c.spec
        first = by_table.setdefault(key, c)
        if first is not c:
            by_table[key] = replace(first, names=tuple(dict.fromkeys(first.names + c.names)))
    return list(by_table.values())


def _preference(c: Candidate) -> tuple[bool, bool, bool, bool, bool]:
    """The order proved candidates are reported in: the stored recipe, a bit-exact rebuild, a
    rebuild within the rounding of the values' dtype (before one only within a pipeline's
    envelope, even a preset's), round parameters (a fitted base of 17 digits explains less than
    θ = 10000 with a named scaling), a preset's name; ties keep the score order (``min`` is stable)."""
    return _ranked(c, c.atol != 0, not c.within_rounding)


def _preference_at_best(c: Candidate) -> tuple[bool, bool, bool, bool, bool]:
    """The best :func:`_preference` a candidate not yet proved can earn when its sampled rows
    already depart from the table: no bit-exact rebuild, at best within rounding."""
    return _ranked(c, True, False)


def _ranked(c: Candidate, inexact: bool, beyond_rounding: bool) -> tuple[bool, bool, bool, bool, bool]:
    long_numbers = c.recipe.long_numbers() > 0
    named = any(n in PRESETS for n in c.names)
    return (_STORED not in c.names, inexact, beyond_rounding, long_numbers, not named)


def _tie_names(best: Candidate | None, alternatives: list[Candidate]) -> tuple[str, ...]:
    """The best's names, plus those of alternatives whose rebuild is bit for bit the best's."""
    if best is None or best.verification is None:
        return () if best is None else best.names
    names = list(best.names)
    for a in alternatives:
        v = a.verification
        if v is not None and (v.digest == best.verification.digest or best.atol == a.atol == 0):
            names += a.names
    return tuple(n for n in dict.fromkeys(names) if n != _STORED or n in best.names)


def _on_sample(p: _Scored, sample: Sample) -> bool:
    """Whether ``p``'s score is on the whole sample (a screen's rows or columns are part of it)."""
    return not p.narrow and p.rows == sum(b - a for a, b in sample.spans)


def _confidence(best: Candidate, groups: list[list[_Scored]], candidates: list[Candidate], sample: Sample) -> float:
    """``1 − tolerance / (score of the nearest different table)``: near 1 when every other table
    is far off.  Candidates within rounding of the best one (another pipeline of the same recipe)
    are not doubt about the recipe.

    How far another candidate is from the best on the sample is bounded by their distances to the
    table, ``|a − b| ≤ max|other − table| ± max|best − table|`` (the best one's 0 when it rebuilds
    the sample bit for bit: the distance is then the other's score); only when the bounds fall
    on both sides of the close tolerance are the two rebuilt and compared."""
    index = next((i for i, g in enumerate(groups) if any(m.recipe == best.recipe for m in g)), None)
    if index is None:
        return 0.0
    head, own = groups[index][0], candidates[index].max_abs
    built: list[Arr | None] = []  # the best one's rows, once rebuilt
    runner = math.inf
    for i, (g, c) in enumerate(zip(groups, candidates, strict=True)):
        if i == index:
            continue
        if not (_on_sample(head, sample) and _on_sample(g[0], sample)):  # a screen's score bounds nothing elsewhere
            far = True
        elif abs(c.max_abs - own) > best.close_tolerance or c.max_abs + own <= best.close_tolerance:
            far = abs(c.max_abs - own) > best.close_tolerance
        else:
            if not built:
                built.append(_try_build(head.recipe, sample.spans, np.float64))
            other = _try_build(g[0].recipe, sample.spans, np.float64)
            far = built[0] is None or other is None or float(np.nanmax(np.abs(built[0] - other))) > best.close_tolerance
        if far:
            runner = min(runner, c.max_abs)
    bound = best.tolerance if best.proved else best.close_tolerance
    confidence = max(0.0, 1.0 - bound / runner) if runner > 0 else 0.0
    return confidence if best.proved else min(confidence, 0.49)


__all__ = ["VERIFY_MAX", "Candidate", "Identification", "identify", "preset_recipes", "tolerances"]
