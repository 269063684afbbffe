"""Kinds and formats from other packages, found through entry points (PEP 621's
``[project.entry-points]``), as pytest finds its plugins.

A package adds a kind by naming its :class:`~pecli.recipe.Recipe` subclass in the group
``pecli.kinds``, and a format by naming its :class:`~pecli.formats.Format` entry in the group
``pecli.formats``::

    [project.entry-points."pecli.kinds"]
    ramp = "pecli_ramp:Ramp"
    [project.entry-points."pecli.formats"]
    npy-text = "pecli_ramp:TEXT_FORMAT"

The entry's name is the kind's (or the format's) name.  They are read only when a registry is
needed whole, or a name is not one of pecli's own: ``pecli generate --len 120 --dim 8`` reads no
package metadata.  A plugin that fails to load, is not what its group holds, or takes a name pecli
already has, is left out with a :class:`~pecli.errors.PluginWarning` naming it; pecli goes on.
Failing includes ``sys.exit()`` and a ``KeyboardInterrupt`` of the plugin's own: only a signal
pecli's handler recorded (:func:`pecli.interruption.abandoned`) stops the command.  A format's
functions run inside :func:`guarded`: whatever they raise or return wrongly is one line.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

from pecli.errors import PluginWarning

T = TypeVar("T")

#: The entry-point groups pecli reads.
KINDS_GROUP, FORMATS_GROUP = "pecli.kinds", "pecli.formats"


def load(group: str, accepts: Callable[[Any], bool], what: str, taken: set[str]) -> dict[str, Any]:
    """``{name: object}`` of the entry points of ``group`` whose object ``accepts``; ``what`` names
    that in a warning, ``taken`` the names that are pecli's own."""
    found: dict[str, Any] = {}
    if not may_declare(group):
        return found
    from importlib.metadata import entry_points

    for ep in sorted(entry_points(group=group), key=lambda e: e.name):
        source = f"plugin {ep.name!r} ({ep.value}" + (f", from {ep.dist.name}" if ep.dist is not None else "") + ")"
        if ep.name in taken or ep.name in found:
            warnings.warn(f"{source} is left out: the name {ep.name!r} is taken", PluginWarning, stacklevel=2)
            continue
        try:
            value = ep.load()
        except BaseException as exc:  # a broken plugin must not break pecli, nor exit it
            if interrupted(exc):
                raise
            message = f"{source} is left out: loading it raised {type(exc).__name__}: {exc}"
            warnings.warn(message, PluginWarning, stacklevel=2)
            continue
        if not accepts(value):
            warnings.warn(f"{source} is left out: it is not {what}", PluginWarning, stacklevel=2)
            continue
        found[ep.name] = value
    return found


def may_declare(group: str) -> bool:
    """Whether an installed distribution may declare entry points of ``group``: False only when
    every one ``importlib.metadata`` would find (the ``*.dist-info`` and ``*.egg-info`` folders of
    the directories on ``sys.path``) has an ``entry_points.txt`` that never names the group, or none.

    A look at those files before ``importlib.metadata`` is imported: with no plugin installed,
    that import (it loads ``email``, ``zipfile`` and ``csv``) was 25 ms of every ``identify`` and
    ``diff``, a tenth of a small table's.  Whatever the look cannot read as importlib.metadata
    does (an import hook that lists distributions, a zip or ``.egg`` on the path) answers True,
    and importlib.metadata decides (an ``.egg`` on the path, its folder or a zip, holds its own
    ``EGG-INFO``)."""
    import importlib.machinery

    if any(f is not importlib.machinery.PathFinder and hasattr(f, "find_distributions") for f in sys.meta_path):
        return True
    needle = group.encode()
    for entry in sys.path:
        root = entry or "."
        if os.path.basename(os.path.normpath(root)).lower().endswith(".egg"):  # an egg is its own EGG-INFO
            return True
        try:
            with os.scandir(root) as children:
                names = [child.name for child in children]
        except NotADirectoryError:  # a zip on the path
            return True
        except OSError:  # not there: nothing found in it either way
            continue
        for name in names:
            low = name.lower()
            if low.endswith(".egg"):
                return True
            if low.endswith((".dist-info", ".egg-info")):
                try:
                    with open(os.path.join(root, name, "entry_points.txt"), "rb") as fp:
                        if needle in fp.read():
                            return True
                except OSError:  # none (or an egg-info file): it declares no entry point
                    continue
    return False


def interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` is the user's interruption (a signal pecli's handler recorded), which must
    go on up, rather than a plugin's own ``SystemExit`` or ``KeyboardInterrupt``."""
    from pecli.interruption import abandoned

    return abandoned() is not None and not isinstance(exc, Exception)


def guarded(
    fn: Callable[..., T], what: str, check: Callable[[T], bool] | None = None, wanted: str = ""
) -> Callable[..., T]:
    """``fn`` (a plugin's) as a function whose failure is one line: anything it raises but pecli's
    own one-line errors and the system's (:class:`OSError`, :class:`MemoryError`, which pecli's
    boundary words), and a result ``check`` refuses, become a :class:`~pecli.errors.FormatError`
    naming ``what`` (``plugin format 'rows' (pecli_ramp:ROWS)``)."""
    from pecli.errors import FormatError, PecliInputError

    def call(*args: Any, **kwargs: Any) -> T:
        try:
            result = fn(*args, **kwargs)
        except (PecliInputError, OSError, MemoryError):
            raise
        except BaseException as exc:
            if interrupted(exc):
                raise
            text = (str(exc).strip().splitlines() or [""])[0][:200]
            raise FormatError(f"{what} failed: {type(exc).__name__}{': ' + text if text else ''}") from None
        if check is not None and not check(result):
            raise FormatError(f"{what} returned {type(result).__name__} {result!r:.60}, not {wanted}")
        return result

    return call


__all__ = ["FORMATS_GROUP", "KINDS_GROUP", "guarded", "interrupted", "load"]
