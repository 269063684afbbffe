"""What a preset is: a kind plus parameters, the default size of the model it comes from, and
where the table comes from (see :mod:`pecli.presets`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pecli.kinds import get_kind
from pecli.recipe import Recipe, refuse_unknown


@dataclass(frozen=True)
class PerWidth:
    """A preset parameter that follows the table's width, ``dim ** power``: x-transformers'
    ``ScaledSinusoidalEmbedding`` starts its scale at ``dim ** -0.5`` whatever ``--dim`` is."""

    power: float

    def at(self, dim: int) -> float:
        return float(float(dim) ** self.power)

    def __str__(self) -> str:
        return f"dim^{self.power:g}"


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
        return cls(**self.defaults(**overrides))

    def defaults(self, **overrides: Any) -> dict[str, Any]:
        """The preset's size and parameters with ``overrides``, a :class:`PerWidth` one evaluated at
        the width they give (unless overridden itself)."""
        merged = {**self.size, **self.params, **overrides}
        return {k: v.at(merged["dim"]) if isinstance(v, PerWidth) else v for k, v in merged.items()}

    @property
    def exactness(self) -> str:
        """What the preset's values promise against the framework's (its kind says)."""
        return self.recipe().exactness()
