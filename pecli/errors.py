"""Library exceptions.  Each message names the problem and, where there is one, the fix.

The command line turns every :class:`PecliInputError` into one ``Error: …`` line and exit code 2.
"""

from __future__ import annotations


class PecliInputError(Exception):
    """Base of every error caused by what the user asked for (bad recipe, file, path...)."""


class RecipeError(PecliInputError, ValueError):
    """A recipe parameter is invalid."""


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
