"""Where :class:`~pecli.recipe.Recipe` lived until pecli 0.2: a plugin written then imports it from
here (``from pecli.kinds.base import Recipe``), and still can.  New code imports :mod:`pecli.recipe`
(or ``pecli.Recipe``); the recipe base moved out of this package so that importing it never runs
the kinds' registry, which sits above every kind (issue 43)."""

from __future__ import annotations

from pecli.recipe import *  # noqa: F403  (the same names, for plugins written against 0.2)
from pecli.recipe import __all__ as __all__
