"""pecli: positional-encoding tables — generate, inspect, compare and export them.

The library is the product; the ``pecli`` command is wiring around it::

    >>> import pecli
    >>> table = pecli.Sinusoidal(length=120, dim=8).build()   # (120, 8) float32

Heavy modules load on first use, so importing pecli (and running ``pecli --help``) stays fast.

The public API is the names in ``pecli.__all__`` (``dir(pecli)`` lists them), reached as
``pecli.NAME`` or ``from pecli import NAME``.  The submodules are internal: their contents may
change between releases.  No exported name is also a submodule's name, so ``pecli.compare`` is
always the function, whatever has been imported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pecli._version import __version__
from pecli.errors import FormatError, OutputError, PecliInputError, RecipeError, TableTooLargeError

if TYPE_CHECKING:
    from pecli.analysis import decay, heatmap_sample, relative_residual, wavelengths
    from pecli.diff import Comparison, compare, explain
    from pecli.formats import open_table, write_table
    from pecli.hfconfig import recipe_from_config
    from pecli.identification import Identification, identify
    from pecli.inspection import describe, row_details
    from pecli.kinds import recipe_from_metadata
    from pecli.kinds.alibi import Alibi
    from pecli.kinds.axial import Axial
    from pecli.kinds.learned import Learned
    from pecli.kinds.mrope import Mrope
    from pecli.kinds.rope import Rope
    from pecli.kinds.rope2d import Rope2d
    from pecli.kinds.sincos2d import Sincos2d
    from pecli.kinds.sinusoidal import Sinusoidal
    from pecli.kinds.xpos import Xpos
    from pecli.making import make_recipe
    from pecli.presets import PRESETS, get_preset
    from pecli.recipe import Recipe
    from pecli.rotation import Rotation, apply_rotary, rotation_of
    from pecli.table import Table

__all__ = [
    "PRESETS",
    "Alibi",
    "Axial",
    "Comparison",
    "FormatError",
    "Identification",
    "Learned",
    "Mrope",
    "OutputError",
    "PecliInputError",
    "Recipe",
    "RecipeError",
    "Rope",
    "Rope2d",
    "Rotation",
    "Sincos2d",
    "Sinusoidal",
    "Table",
    "TableTooLargeError",
    "Xpos",
    "__version__",
    "apply_rotary",
    "compare",
    "decay",
    "describe",
    "explain",
    "get_preset",
    "heatmap_sample",
    "identify",
    "make_recipe",
    "open_table",
    "recipe_from_config",
    "recipe_from_metadata",
    "relative_residual",
    "rotation_of",
    "row_details",
    "wavelengths",
    "write_table",
]

# Everything loads on first use: `pecli --help` imports this package and none of these.
_LAZY = {
    "Alibi": "pecli.kinds.alibi",
    "Axial": "pecli.kinds.axial",
    "Learned": "pecli.kinds.learned",
    "Mrope": "pecli.kinds.mrope",
    "Rope": "pecli.kinds.rope",
    "Rope2d": "pecli.kinds.rope2d",
    "Sincos2d": "pecli.kinds.sincos2d",
    "Sinusoidal": "pecli.kinds.sinusoidal",
    "Xpos": "pecli.kinds.xpos",
    "recipe_from_metadata": "pecli.kinds",
    "recipe_from_config": "pecli.hfconfig",
    **dict.fromkeys(("PRESETS", "get_preset"), "pecli.presets"),
    "make_recipe": "pecli.making",
    "identify": "pecli.identification",
    "Identification": "pecli.identification",
    "decay": "pecli.analysis",
    "heatmap_sample": "pecli.analysis",
    "relative_residual": "pecli.analysis",
    "wavelengths": "pecli.analysis",
    "compare": "pecli.diff",
    "explain": "pecli.diff",
    "Comparison": "pecli.diff",
    "describe": "pecli.inspection",
    "row_details": "pecli.inspection",
    "open_table": "pecli.formats",
    "write_table": "pecli.formats",
    "Table": "pecli.table",
    "Recipe": "pecli.recipe",
    **dict.fromkeys(("Rotation", "apply_rotary", "rotation_of"), "pecli.rotation"),
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pecli' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
