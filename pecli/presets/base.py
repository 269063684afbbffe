"""What a preset is: a kind plus parameters, the default size of the model it comes from, and
where the table comes from (see :mod:`pecli.presets`)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from pecli.kinds import get_kind
from pecli.kinds.base import Recipe, refuse_unknown


@dataclass(frozen=True)
class Preset:
    name: str
    kind: str
    params: dict[str, Any]
    #: Default size: the model the preset is named after.
    size: dict[str, Any]
    framework: str
    source: str
    summary: str
    offsets: str = "first position 0"
    aliases: tuple[str, ...] = field(default=())

    def recipe(self, **overrides: Any) -> Recipe:
        """The preset's recipe, with ``overrides`` (e.g. ``length=2048``) applied."""
        cls = get_kind(self.kind)
        refuse_unknown(cls, overrides, f"preset {self.name} is a {self.kind} recipe, which")
        return cls(**{**self.size, **self.params, **overrides})

    @property
    def exactness(self) -> str:
        if self.kind == "learned":
            return "random: the framework's distribution, pecli's numbers"
        default = {f.name: f.default for f in fields(get_kind(self.kind))}.get("compute", "exact")  # type: ignore[arg-type]
        compute = self.params.get("compute", default)
        if self.kind == "alibi" and compute == "float32":
            return "float32 pipeline: bit-exact (Bloom: 1 ulp where torch's pow is off)"
        return {
            "exact": "exact, rounded once",
            "float64": "float64 pipeline: bit-exact",
            "float32": "float32 pipeline: ≈ ulp(angle)",
        }[compute]
