"""The one front door to a recipe from what a user gives: parameters on top of a preset, of a
model's config, of a recipe already made, or of a kind's defaults.

The command line's recipe options (:mod:`pecli.cli.tables`), a recipe operand such as
``sinusoidal:len=8,dim=4`` (:mod:`pecli.sources`), a settings SOURCE's overrides such as
``config.json:rope_theta=1e6`` (:mod:`pecli.model_files`) and a script (``pecli.make_recipe``) all
come through :func:`make_recipe`, so which start wins and what a parameter may change is said once.
The starts themselves are their owners': a kind's defaults and required parameters
(:func:`pecli.kinds.kind_recipe`), a preset (:mod:`pecli.presets`), a config
(:func:`pecli.hfconfig.recipe_from_config`).  Presets and configs are imported only when asked for:
``pecli generate --len 120 --dim 8`` loads neither.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pecli.errors import RecipeError, spelled

if TYPE_CHECKING:
    from pecli.recipe import Recipe


def make_recipe(
    params: Mapping[str, Any] | None = None,
    preset: str | None = None,
    kind: str | None = None,
    base: Recipe | None = None,
    *,
    hf_config: dict[str, Any] | str | Path | None = None,
    ids_given: bool = False,
) -> Recipe:
    """A recipe from ``params`` on top of one start:

    - ``preset``: a framework's table by name (``pecli presets`` lists them);
    - ``hf_config``: a transformers model's ``config.json``, its directory, a llama.cpp ``.gguf``
      file or the parsed dict (``"config.json:full_attention"`` picks a layer type's RoPE): the
      cache transformers builds for it (``--hf-config``);
    - ``base``: a recipe already made;
    - else the defaults of ``kind``, or of the kind the parameters imply
      (:func:`pecli.kinds.implied_kind`: ``heads=8`` is ALiBi's).

    ``params`` override the start's values; a parameter the recipe does not take is refused, not
    ignored, and ``kind`` given with a preset or config must be theirs.  ``ids_given``: the rows'
    ids are given (``--positions``), so a kind whose tokens carry ids of their own (M-RoPE) needs
    no sequence to derive them from.  Every refusal is a :class:`~pecli.errors.RecipeError`
    naming the parameters as the caller spells them (keywords here, options on the command line).

        make_recipe({"length": 8192}, preset="llama3")
        make_recipe({"length": 512}, hf_config="Qwen2-7B/config.json")
        make_recipe({"length": 120, "dim": 8})
    """
    given = dict(params or {})
    if preset is not None and hf_config is not None:
        raise RecipeError("give --preset or --hf-config, not both")
    if base is not None and (preset is not None or hf_config is not None):
        raise RecipeError("give one start: a base recipe, --preset or --hf-config")
    if hf_config is not None:
        from pecli.hfconfig import recipe_from_config

        where = spelled(f"--hf-config {hf_config}") if isinstance(hf_config, (str, Path)) else None
        base = recipe_from_config(hf_config, where)
    if base is not None:
        return _on_base(base, given, kind)
    if preset is not None:
        from pecli.presets import get_preset

        p = get_preset(preset)
        if kind is not None and kind != p.kind:
            raise RecipeError(f"preset {p.name} is a {p.kind} recipe, not {kind}: drop --kind")
        return p.recipe(**given)
    from pecli.kinds import get_kind, implied_kind, kind_recipe

    if ids_given:
        given = {**get_kind(kind or implied_kind(given)).ids_stand_in, **given}
    return kind_recipe(given, kind)


def _on_base(base: Recipe, given: dict[str, Any], kind: str | None) -> Recipe:
    """``base`` (a model config's recipe, as a rule) with ``given`` changed; refused where it is
    not ``kind``'s or does not take one."""
    from pecli.recipe import refuse_unknown

    if kind is not None and kind != base.kind:
        raise RecipeError(f"the model's config gives a {base.kind} recipe, not {kind}: drop --kind")
    refuse_unknown(type(base), given, f"the model's config gives a {base.kind} recipe, which")
    return replace(base, **given)  # type: ignore[type-var]


__all__ = ["make_recipe"]
