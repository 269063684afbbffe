"""What ``identify`` found, as data: each candidate scored and proved (:class:`Candidate`), and the
verdict with the best candidate, its ties and the nearest others (:class:`Identification`).  The
search that finds them is :mod:`pecli.identification`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pecli.dtypes import json_number
from pecli.presets import PRESETS
from pecli.proof import Verification
from pecli.recipe import Recipe

Verdict = Literal["match", "close", "unknown", "learned"]


@dataclass(frozen=True)
class Candidate:
    """A recipe scored against the table.

    ``names``: every preset that builds this same table (first = the one reported), plus
    ``"stored recipe"`` when it is the recipe saved with the file.  ``max_abs``/``rel_rms`` are over
    the ``rows`` sampled rows (``scored_on`` ``"screen"``: a wide table's screen alone, a few rows
    at some of its columns); ``verification`` (when done) over the whole table.
    """

    recipe: Recipe
    names: tuple[str, ...]
    max_abs: float
    rel_rms: float
    tolerance: float
    close_tolerance: float
    rows: int
    verification: Verification | None = None
    #: ``|table − candidate|`` one rounding of the values' own dtype explains (4 ulps at the
    #: table's largest value), and that dtype: what "within rounding" means for this table.
    rounding: float = 0.0
    held_in: str = ""
    #: What ``max_abs`` and ``rel_rms`` were measured on: the sample, or only the screen.
    scored_on: Literal["sample", "screen"] = "sample"

    @property
    def within_rounding(self) -> bool:
        """Whether the table equals the rebuild to the rounding of its values' dtype (or exactly):
        on the whole table, every value within one ulp of that dtype at the value itself (not one
        ulp at the table's largest value: a bfloat16 grid 49 of its ulps off near 0 is no rounding)."""
        v = self.verification
        if v is not None and v.max_ulps is not None:
            return v.max_ulps <= 1.0
        return (v.max_abs if v is not None else self.max_abs) <= self.rounding

    def how_close(self) -> str:
        """How the whole table matches, in words: bit for bit, within the rounding of its dtype,
        or within the envelope of the candidate's pipeline (with the envelope's size)."""
        v = self.verification
        gap = v.max_abs if v is not None else self.max_abs
        if gap == 0:
            return "bit for bit"
        if self.within_rounding:
            return f"within the rounding of {self.held_in}, max |Δ| {gap:.3g}"
        pipeline = self.recipe.pipeline()
        which = f"the {pipeline} pipeline's" if pipeline != "exact" else "the angles'"
        return f"within {which} envelope of {self.tolerance:.2g}, max |Δ| {gap:.3g}"

    @property
    def name(self) -> str:
        """The first preset that builds this table, else the recipe's kind."""
        presets = [n for n in self.names if n in PRESETS]
        return presets[0] if presets else self.recipe.kind

    @property
    def spec(self) -> str:
        """The SOURCE operand that rebuilds the candidate (``sinusoidal:len=…,…``)."""
        return self.recipe.spec()

    @property
    def atol(self) -> float:
        """The ``--atol`` under which the whole table equals the rebuild (0: bit-identical)."""
        return self.verification.atol if self.verification is not None else self.tolerance

    @property
    def matches(self) -> bool:
        """Within rounding on the sampled rows."""
        return self.max_abs <= self.tolerance

    @property
    def proved(self) -> bool:
        """Within rounding on every row of the table: within the tolerance, and every value within one
        ulp of its own in the values' dtype past what the recipe's pipeline moves it by
        (:func:`pipeline_slack`): a table computed step by step in bfloat16 is 49 bfloat16 ulps off
        near 0, which one ulp at 1.0 for every value did not see."""
        v = self.verification
        return (
            v is not None
            and v.holds
            and v.max_abs <= self.tolerance
            and (v.ulps_past_slack is None or v.ulps_past_slack <= 1.0)
        )

    def check_command(self, source: str) -> str:
        """The ``pecli diff`` command that confirms the rebuild (exit status 0), as a shell reads
        it: a name starting with ``-`` is written ``./-name`` (not an option), one holding a
        newline or another control character in ``$'…'`` quotes (one line, the same bytes)."""
        tail = f" --atol {self.atol:g}" if self.atol else ""
        if source.startswith("-") and source != "-" and not source.startswith("-:"):
            source = "./" + source
        from pecli.sources import shell_word

        return f"pecli diff {shell_word(source)} {shell_word(self.spec)}{tail}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data: the recipe, its SOURCE, its scores on the sample and on the whole table."""
        v = self.verification
        return {
            "name": self.name,
            "names": list(self.names),
            "kind": self.recipe.kind,
            "recipe": self.recipe.to_metadata(),
            "spec": self.spec,
            "atol": self.atol,
            "max_abs": json_number(self.max_abs),
            "rel_rms": json_number(self.rel_rms),
            "tolerance": self.tolerance,
            "rows": self.rows,
            "scored_on": self.scored_on,
            "verified": None if v is None else {"rows": v.rows, "max_abs": json_number(v.max_abs), "beyond": v.beyond},
        }


@dataclass(frozen=True)
class Identification:
    """What :func:`identify` found.  ``best`` is ``None`` unless the verdict is match or close."""

    source: str
    shape: tuple[int, int]
    dtype: str
    verdict: Verdict
    #: The kind recognised (``None`` when unknown).
    kind: str | None
    best: Candidate | None
    confidence: float
    #: Other candidates proved on the whole table too (a different recipe, the same table here).
    alternatives: list[Candidate]
    #: The candidates closest to the table, best first.
    nearest: list[Candidate]
    #: Every name that builds this very table (bit for bit, on every row): ties included.
    names: tuple[str, ...]
    notes: list[str]
    sample: str
    candidates_tried: int

    def _repr_html_(self) -> str:
        """The report ``pecli identify`` prints, as HTML (a notebook shows it)."""
        from pecli.views.console import as_html
        from pecli.views.identify import identify_view

        return as_html(identify_view(self))

    def __str__(self) -> str:
        """The report ``pecli identify`` prints, as plain text (100 columns)."""
        from pecli.views.console import as_text
        from pecli.views.identify import identify_view

        return as_text(identify_view(self))

    @property
    def confidence_label(self) -> str:
        if self.verdict in ("unknown", "learned"):
            return "none"
        if self.verdict == "close" or self.confidence < 0.5:
            return "low"
        return "high" if self.confidence >= 0.9 else "medium"

    @property
    def summary(self) -> str:
        """One line: the verdict and the best candidate."""
        if self.best is None:
            if self.verdict == "learned":
                return "a learned table (no formula rebuilds it)"
            near = self.nearest[0] if self.nearest else None
            return "no known recipe" + (f"; nearest {near.name} (max |Δ| {near.max_abs:.3g})" if near else "")
        b = self.best
        v = b.verification
        where = f"whole table, {b.how_close()}" if v is not None else f"{b.rows} sampled rows, {b.how_close()}"
        how = "matches" if self.verdict == "match" else "is close to"
        return f"{how} {b.name}: {b.recipe.describe()} ({where}; confidence {self.confidence_label})"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data, as ``pecli identify --json`` prints it (the verdict, the best and other candidates)."""
        return {
            "source": self.source,
            "shape": list(self.shape),
            "dtype": self.dtype,
            "verdict": self.verdict,
            "kind": self.kind,
            "best": self.best.to_dict() if self.best is not None else None,
            "check": self.best.check_command(self.source) if self.best is not None else None,
            "confidence": self.confidence,
            "confidence_label": self.confidence_label,
            "alternatives": [c.to_dict() for c in self.alternatives],
            "nearest": [c.to_dict() for c in self.nearest],
            "names": list(self.names),
            "notes": list(self.notes),
            "sample": self.sample,
            "candidates_tried": self.candidates_tried,
        }


__all__ = ["Candidate", "Identification", "Verdict"]
