"""pecli: positional-encoding tables — generate, inspect, compare and export them.

The library is the product; the ``pecli`` command is wiring around it::

    >>> import pecli
    >>> table = pecli.Sinusoidal(length=120, dim=8).build()   # (120, 8) float32

Heavy modules load on first use, so importing pecli (and running ``pecli --help``) stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pecli._version import __version__
from pecli.errors import FormatError, OutputError, PecliInputError, RecipeError, TableTooLargeError
from pecli.recipe import Sinusoidal, recipe_from_metadata

if TYPE_CHECKING:
    from pecli.compare import Comparison, compare, explain
    from pecli.formats import open_table, write_table
    from pecli.inspection import describe, row_details
    from pecli.table import Table

__all__ = [
    "Comparison",
    "FormatError",
    "OutputError",
    "PecliInputError",
    "RecipeError",
    "Sinusoidal",
    "Table",
    "TableTooLargeError",
    "__version__",
    "compare",
    "describe",
    "explain",
    "open_table",
    "recipe_from_metadata",
    "row_details",
    "write_table",
]

_LAZY = {
    "compare": "pecli.compare",
    "explain": "pecli.compare",
    "Comparison": "pecli.compare",
    "describe": "pecli.inspection",
    "row_details": "pecli.inspection",
    "open_table": "pecli.formats",
    "write_table": "pecli.formats",
    "Table": "pecli.table",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pecli' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
