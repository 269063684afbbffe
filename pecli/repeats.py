"""Arrays a checkpoint repeats (each layer's ``inv_freq`` of a GPT-NeoX or Pythia checkpoint): the
result computed for an array, or for a pair of arrays, is given, renamed, to a later one of the
same bytes rather than computed again (:class:`Repeats`; :mod:`pecli.checkpoints` uses it for a
scan's identifications and a diff's comparisons).

Two arrays are the same to ``identify`` and ``diff`` when all they read of them is: the bytes,
the shape and dtype as read and as stored, the shape the file gave them (a 3-D map read as rows)
and the recipe stored with them.  All of that but the bytes, with the bytes of the first and
last rows, is an array's *look* (:func:`look`): two rows beside the probe's.  Only arrays that
look alike are read whole and hashed (:func:`digest`), the earlier one then too: hashing every
positional array read each one once more (HDF5 datasets of small gzip chunks: a scan of two took
1.75 s before, 5.8 s with it).  A result that names its array anywhere but its own source fields
is never given to another.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import numpy as np

from pecli.errors import PecliInputError

if TYPE_CHECKING:
    from pecli.table import Table

R = TypeVar("R")

#: Arrays at most this large are looked at for repeats (a layer's inv_freq is 256 bytes, a
#: learned table of 1024×1024 float32 4 MB); larger ones are each computed.
SAME_BYTES_AT_MOST = 1 << 22


def look(table: Table) -> tuple[Any, ...] | None:
    """What ``identify`` and ``diff`` read of ``table`` besides its values, and the bytes of its
    first and last rows; None for an array never reused: larger than :data:`SAME_BYTES_AT_MOST`, computed, its
    rows not positions 0, 1, … (``positions``), a model's settings (whose keys results name),
    one identify refuses unread (mostly unstored), or one whose first row cannot be read."""
    from pecli.transposition import stored_shape

    if table.positions is not None or table.computed or table.nbytes > SAME_BYTES_AT_MOST or table.info.get("keys"):
        return None
    if table.mostly_unstored() is not None:  # refused before any read: its rows would take seconds
        return None
    n = table.shape[0]
    try:  # the last row too: every sinusoid's row 0 is the same 0s and 1s, whatever its base
        ends = np.ascontiguousarray(np.concatenate([table.rows(0, 1), table.rows(n - 1, n)]))
    except (PecliInputError, OSError):  # the command reports it, in its own words
        return None
    return table.shape, stored_shape(table.info), ends.dtype.str, table.dtype_name, table.recipe, ends.tobytes()


def digest(table: Table) -> str | None:
    """The hash of every byte of ``table``'s values; None if a row cannot be read (the command
    then reads it, and reports that, in its own words)."""
    try:
        values = np.ascontiguousarray(table.rows(0, table.shape[0]))
    except (PecliInputError, OSError):
        return None
    return hashlib.blake2b(values.reshape(-1).view(np.uint8).data, digest_size=16).hexdigest()


def mentions(data: Any, names: Sequence[str]) -> bool:
    """Whether any string in ``data`` (a result's ``to_dict()``: dicts, lists, strings) holds one
    of ``names``: the strings themselves, not their JSON, whose escapes hide ``é`` and ``"``."""
    return any(name in text for text in _strings(data) for name in names)


def _strings(data: Any) -> Iterator[str]:
    if isinstance(data, str):
        yield data
    elif isinstance(data, dict):
        for k, v in data.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(data, (list, tuple)):
        for v in data:
            yield from _strings(v)


@dataclass
class _Earlier(Generic[R]):
    key: str
    result: R
    digests: tuple[str | None, ...] | None = None  # hashed once another array looks the same


class Repeats(Generic[R]):
    """Results by the arrays they were computed for (one table, or a pair), found again for arrays
    of the same bytes.

    ``reopen(key)`` opens the tables of an earlier key again (hashed only when another array
    looks like them); ``rename(result, sources)`` is the result under the new tables' sources;
    ``unnamed(result)`` is its ``to_dict()`` without its own source fields, in which the sources
    must appear nowhere for the result to be given to another."""

    def __init__(
        self,
        reopen: Callable[[str], AbstractContextManager[Sequence[Table]]],
        rename: Callable[[R, tuple[str, ...]], R],
        unnamed: Callable[[R], Any],
    ) -> None:
        self.reopen, self.rename, self.unnamed = reopen, rename, unnamed
        self.seen: dict[tuple[Any, ...], list[_Earlier[R]]] = {}

    def result(self, key: str, tables: Sequence[Table], compute: Callable[[], R]) -> R:
        """``compute()`` for ``tables``, or the result of an earlier key's tables of the same
        bytes, renamed to these."""
        looks = tuple(look(t) for t in tables)
        if any(x is None for x in looks):
            return compute()
        sources = tuple(t.source for t in tables)
        earlier = self.seen.setdefault(looks, [])
        digests = tuple(digest(t) for t in tables) if earlier else None
        if digests is not None and None not in digests:
            for e in earlier:
                if e.digests is None:
                    e.digests = self._digests_of(e.key)
                if e.digests == digests:
                    return self.rename(e.result, sources)
        found = compute()
        if not mentions(self.unnamed(found), sources):
            earlier.append(_Earlier(key, found, digests))
        return found

    def _digests_of(self, key: str) -> tuple[str | None, ...]:
        try:
            with self.reopen(key) as tables:
                return tuple(digest(t) for t in tables)
        except (PecliInputError, OSError):  # changed or gone since: it matches nothing
            return (None,)


__all__ = ["SAME_BYTES_AT_MOST", "Repeats", "digest", "look", "mentions"]
