"""Library exceptions.  Each message names the problem and, where there is one, the fix.

The command line turns every :class:`PecliInputError` into one ``Error: …`` line and exit code 2.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

#: How a :class:`RecipeError` names a recipe parameter: as a keyword (``length=4096``: Python's
#: ``pecli.Rope(…)``, the default) or as the command line's option (``--len 4096``, while
#: :func:`spelled_as_options` is in force, as ``pecli``'s commands are).
_OPTIONS: ContextVar[bool] = ContextVar("pecli_options", default=False)
#: ``--low-freq-factor 1`` in a message: an option and the value after it.
_OPTION = re.compile(
    r"(?<![\w-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)"
    r"(?: (?![-(]|(?:and|or|to|with|is|are|the|as|of|in|for|vs|when|only|too|alone)\b)([^\s,;:()]+))?"
)


@contextmanager
def spelled_as_options() -> Iterator[None]:
    """Within the block, recipe errors name the command line's options (``--len 4096``)."""
    token = _OPTIONS.set(True)
    try:
        yield
    finally:
        _OPTIONS.reset(token)


def as_keywords(message: str) -> str:
    """``needs --low-freq-factor, e.g. --len 4096`` → ``needs low_freq_factor=, e.g. length=4096``."""

    def keyword(m: re.Match[str]) -> str:
        name = "length" if m.group(1) == "len" else m.group(1).replace("-", "_")
        return f"{name}={m.group(2) or ''}"

    return _OPTION.sub(keyword, message)


def spelled(message: str) -> str:
    """``message`` (written with options) as its reader says it: options within
    :func:`spelled_as_options` (the command line), keywords elsewhere (a script)."""
    return message if _OPTIONS.get() else as_keywords(message)


class PecliInputError(Exception):
    """Base of every error caused by what the user asked for (bad recipe, file, path...)."""


class RecipeError(PecliInputError, ValueError):
    """A recipe parameter is invalid.  Its message names parameters as Python's keywords
    (``low_freq_factor=1``), or as options (``--low-freq-factor 1``) within :func:`spelled_as_options`."""

    def __init__(self, message: str = "", *args: object) -> None:
        super().__init__(spelled(message), *args)


class FormatError(PecliInputError):
    """A file cannot be read or written in the requested format."""


class OutputError(PecliInputError):
    """The destination cannot be written (exists, missing directory, no permission, disk full)."""


class TableTooLargeError(PecliInputError):
    """The request would need more memory, screen or disk than is reasonable."""


class PecliWarning(UserWarning):
    """Base of pecli's own warnings: the command line prints these, and only these, as
    ``note:`` lines (a NumPy RuntimeWarning about a NaN is no news to the user)."""


class StaleMetadataWarning(PecliWarning):
    """A recipe stored with a table no longer describes its data: it is ignored (the CLI prints
    this as a one-line note on stderr)."""


class PluginWarning(PecliWarning):
    """A kind or format from another package was left out (it failed to load, is not what its
    entry-point group holds, or takes a name pecli already has)."""
