"""The pipeline table of docs/pipelines.md, generated from :data:`pecli.precision.PIPELINES` and the
kinds that compute each one; regenerate with ``cog -r -I . docs/pipelines.md``
(tests/project/test_generated_docs.py checks it is current)."""

from __future__ import annotations

from typing import get_args, get_type_hints

from pecli.kinds import kinds
from pecli.precision import PIPELINES

HEADER = (
    "| `--compute` | positions | inv_freq | angle p·ω | cos/sin | what diff says | kinds "
    "| where frameworks compute so |\n|---|---|---|---|---|---|---|---|\n"
)


def _kinds_of(name: str) -> list[str]:
    out = []
    for kind, cls in kinds().items():
        hint = get_type_hints(cls).get("compute")
        if hint is not None and name in get_args(hint):
            out.append(kind)
    return out


def table() -> str:
    rows = [
        f"| `{p.name}` | {p.positions} | {p.frequencies} | {p.angle} | {p.trig} | {p.words} | "
        f"{', '.join(_kinds_of(p.name)) or '—'} | {p.source} |\n"
        for p in PIPELINES.values()
    ]
    return HEADER + "".join(rows)
