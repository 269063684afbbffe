"""The kinds of table pecli knows, one module each, found by looking (nothing to register by hand).

Every module of this package except ``base`` (the recipe base's address in pecli 0.2, kept for
plugins) defines one :class:`~pecli.recipe.Recipe` subclass; :func:`kinds` (also ``KINDS``) maps
each one's ``kind`` name to it, the default kind (``sinusoidal``) first.  A kind owns its
parameters, its row builder, its facts and its inverse (``fit``), like an einops backend: adding a
kind is adding a module here (plus, if it wants them, its command-line options in
``pecli/cli/recipe_options.py`` and its presets in ``pecli/presets/``).  Another package adds a kind
through the entry-point group ``pecli.kinds`` (:mod:`pecli.plugins`).
"""

from __future__ import annotations

import importlib
from dataclasses import fields
from types import ModuleType
from typing import Any, get_args, get_type_hints

from pecli.errors import RecipeError
from pecli.recipe import SCHEMA, Recipe

#: The kind a recipe is without ``--kind`` and without a parameter only another kind has.
DEFAULT_KIND = "sinusoidal"


def _discover() -> dict[str, type[Recipe]]:
    """pecli's own kinds, the default first."""
    import pkgutil

    found: dict[str, type[Recipe]] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: (m.name != DEFAULT_KIND, m.name)):
        if info.name == "base" or info.name.startswith("_"):
            continue
        for cls in _recipe_classes(importlib.import_module(f"{__name__}.{info.name}")):
            found[cls.kind] = cls
    return found


def _plugin_kinds(taken: set[str]) -> dict[str, type[Recipe]]:
    """Other packages' kinds (entry-point group ``pecli.kinds``), by their entry's name."""
    from pecli import plugins

    found: dict[str, type[Recipe]] = {}
    for name, cls in plugins.load(plugins.KINDS_GROUP, _is_kind, "a pecli.recipe.Recipe subclass", taken).items():
        if cls.kind != name:
            import warnings

            from pecli.errors import PluginWarning

            message = f"plugin {name!r} ({cls.__module__}.{cls.__qualname__}) is left out: its kind is {cls.kind!r}"
            warnings.warn(message, PluginWarning, stacklevel=2)
            continue
        found[name] = cls
    return found


def _is_kind(value: object) -> bool:
    return isinstance(value, type) and issubclass(value, Recipe) and value is not Recipe


def _recipe_classes(module: ModuleType) -> list[type[Recipe]]:
    return [
        value
        for value in vars(module).values()
        if isinstance(value, type) and issubclass(value, Recipe) and value.__module__ == module.__name__
    ]


def _kind_alone(name: str) -> type[Recipe] | None:
    """Kind ``name`` from the module of that name, without loading the others (``None``: no such
    module, or it does not hold that kind)."""
    if not name.isidentifier() or name == "base" or name.startswith("_"):
        return None
    try:
        module = importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
        return None
    return next((cls for cls in _recipe_classes(module) if cls.kind == name), None)


_found: dict[str, type[Recipe]] = {}


def kinds() -> dict[str, type[Recipe]]:
    """Kind name → recipe class, the default kind first (the kind modules load on first call, so
    that importing ``pecli.recipe`` alone never imports them)."""
    if not _found:
        _found.update(_discover())
        # After pecli's own are in: a plugin that reads KINDS while it loads finds them (no reload).
        _found.update(_plugin_kinds(set(_found)))
    return _found


def __getattr__(name: str) -> Any:
    # ``KINDS``: the registry, discovered on first use (see :func:`kinds`).
    if name == "KINDS":
        return kinds()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def get_kind(name: str) -> type[Recipe]:
    """The recipe class of kind ``name``, or a :class:`RecipeError` listing the kinds.

    Until the registry is needed whole, only the module named after the kind is loaded
    (``pecli generate --len 120 --dim 8`` needs one kind, and each costs milliseconds to load).
    """
    if not _found and (cls := _kind_alone(name)) is not None:
        return cls
    try:
        return kinds()[name]
    except KeyError:
        raise RecipeError(f"unknown kind {name!r}: choose one of {', '.join(kinds())}") from None


def field_names(kind: str | type[Recipe]) -> list[str]:
    """The parameters of a kind, in declaration order."""
    cls = get_kind(kind) if isinstance(kind, str) else kind
    return [f.name for f in fields(cls)]  # type: ignore[arg-type]


def implied_kind(params: dict[str, Any]) -> str:
    """The kind parameters imply without ``--kind``: the one kind that owns the parameters only it
    has (``--grid`` sincos2d, ``--heads`` alibi, ``--scaling`` rope, ``--std`` learned); else the
    default kind when it takes them all, or the one kind whose choices the values are
    (``--layout half`` is rope's); else the default kind (whose error names what it lacks)."""
    default = get_kind(DEFAULT_KIND)
    if params.keys() <= {f.name for f in fields(default)} and _accepts_values(default, params):  # type: ignore[arg-type]
        # No other kind can own a parameter the default kind has, and the default kind takes
        # them all: the rule below would say the default kind, so the others need not load.
        return DEFAULT_KIND
    names = {k: {f.name for f in fields(cls)} for k, cls in kinds().items()}  # type: ignore[arg-type]
    owned = {next(iter(o)) for p in params if len(o := [k for k, n in names.items() if p in n]) == 1}
    if len(owned) == 1:
        return owned.pop()
    takes = [k for k, n in names.items() if params.keys() <= n]
    owners = [k for k in takes if _accepts_values(kinds()[k], params)]
    if len(owners) > 1:
        # A tie: drop the kinds that lack a required parameter no other kind has (mrope's --sequence).
        owners = [
            k
            for k in owners
            if all(r in params or any(r in n for o, n in names.items() if o != k) for r in kinds()[k].required)
        ]
    if len(owners) > 1:  # a value several kinds share (--layout half): the kinds it is the usual word of
        owners = [k for k in owners if kinds()[k].implied_by_shared] or owners
    return DEFAULT_KIND if DEFAULT_KIND in owners or len(owners) != 1 else owners[0]


def kind_recipe(params: dict[str, Any], kind: str | None = None) -> Recipe:
    """A recipe of ``kind`` (or the kind the parameters imply, :func:`implied_kind`) from its
    defaults and ``params``; a parameter the kind does not have, or a required one missing, is a
    :class:`RecipeError` that says what the kind takes.  (The front door: :func:`pecli.making.make_recipe`.)"""
    from pecli.params import spell_param
    from pecli.recipe import refuse_unknown

    cls = get_kind(kind if kind is not None else implied_kind(params))
    refuse_unknown(cls, params, f"a {cls.kind} recipe")
    missing = [n for n in cls.required if params.get(n) is None]
    if missing:
        spelled = " and ".join(map(spell_param, missing))
        article = "an" if cls.kind[0] in "aeiou" else "a"
        raise RecipeError(f"{article} {cls.kind} recipe needs {spelled}, e.g. {cls.example}")
    return cls(**params)


def _accepts_values(cls: type[Recipe], params: dict[str, Any]) -> bool:
    """Whether every choice-valued parameter is one of the kind's choices for it."""
    hints = get_type_hints(cls)
    for name, value in params.items():
        allowed = get_args(hints.get(name))
        if allowed and all(isinstance(a, str) for a in allowed) and value not in allowed:
            return False
    return True


def recipe_from_metadata(meta: dict[str, Any]) -> Recipe | None:
    """Rebuild a recipe from stored metadata; ``None`` when the metadata holds no pecli recipe
    this pecli can rebuild (:func:`read_recipe` says why)."""
    return read_recipe(meta)[0]


def read_recipe(meta: dict[str, Any]) -> tuple[Recipe | None, str | None]:
    """The recipe stored in ``meta``, and why not when metadata of pecli's names one that this
    pecli cannot rebuild (another schema, an unknown kind, parameters it refuses).

    Metadata written by a newer schema or an unknown kind is not guessed at.  Parameters missing
    from older files take their defaults, or the value they meant then
    (:attr:`Recipe.absent_means`: a learned table written before ``rng`` existed is ``pcg64``).
    """
    kind = meta.get("kind")
    if "schema" not in meta or not isinstance(kind, str):
        return None, None  # not pecli's metadata
    if meta.get("schema") != SCHEMA:
        return None, f"schema {meta.get('schema')!r}; this pecli reads schema {SCHEMA}"
    if kind not in kinds():
        return None, f"kind {kind!r} is not one of this pecli's"
    cls = kinds()[kind]
    names = set(field_names(cls))
    try:
        return cls(**{**cls.absent_means, **{k: _from_stored(v) for k, v in meta.items() if k in names}}), None
    except (RecipeError, TypeError) as exc:
        return None, str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _from_stored(v: Any) -> Any:
    # HDF5 attributes come back as NumPy scalars; recipes want Python scalars.
    item = getattr(v, "item", None)
    return item() if callable(item) else v


__all__ = [
    "DEFAULT_KIND",
    "KINDS",
    "Recipe",
    "field_names",
    "get_kind",
    "implied_kind",
    "kind_recipe",
    "kinds",
    "read_recipe",
    "recipe_from_metadata",
]
