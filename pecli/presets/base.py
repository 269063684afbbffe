"""What a preset is: a kind plus parameters, the default size of the model it comes from, and
where the table comes from (see :mod:`pecli.presets`)."""

from __future__ import annotations

from dataclasses import dataclass, field
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
        """What the preset's values promise against the framework's (its kind says)."""
        return self.recipe().exactness()
