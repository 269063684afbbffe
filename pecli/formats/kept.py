"""A file opened once for many reads: within :func:`kept_open`, a reader opens each file's container
(an ``.npz``'s zip, a ``.pt``'s tensors, a GGUF reader) and lists its arrays once, and every read
of an array of that file reuses them.

A checkpoint scan reads each of a file's N arrays; opening and listing the file on every read cost
N² (an ``.npz`` of 2,000 arrays took 187 s, a ``.pt`` 287 s: every read loaded the whole file).
Outside the scope a read opens what it needs and closes it when its table is done, as before.
What is kept is kept for the file as it is (its inode, size and modification time), and closed
when the scope ends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pecli.formats._common import ArrayInfo

T = TypeVar("T")


@dataclass(frozen=True)
class Listing:
    """A file's arrays, and their keys as a set: an array asked for by key is found at once
    (:func:`~pecli.formats._common.choose_key`'s ``names``)."""

    arrays: list[ArrayInfo]
    names: frozenset[str]

    @classmethod
    def of(cls, arrays: list[ArrayInfo]) -> Listing:
        return cls(arrays, frozenset(a.key for a in arrays))


@dataclass
class _Scope:
    stack: ExitStack
    opened: dict[tuple[str, Path, tuple[int, int, int]], Any] = field(default_factory=dict)


_SCOPE: ContextVar[_Scope | None] = ContextVar("pecli_kept_open", default=None)


def file_version(path: Path) -> tuple[int, int, int]:
    """The file as it is now: its inode, size and modification time (what is kept is kept for it)."""
    st = path.stat()
    return st.st_ino, st.st_size, st.st_mtime_ns


@contextmanager
def kept_open() -> Iterator[None]:
    """Within it, each file a reader opens stays open, listed once, until the scope ends."""
    with ExitStack() as stack:
        token = _SCOPE.set(_Scope(stack))
        try:
            yield
        finally:
            try:
                _SCOPE.reset(token)
            except ValueError:  # ended from another context (a generator closed elsewhere)
                _SCOPE.set(None)


def keeping() -> bool:
    """Whether a :func:`kept_open` scope is open (a reader may then prepare for many reads)."""
    return _SCOPE.get() is not None


def kept(path: Path, what: str, open_: Callable[[ExitStack], T], stack: ExitStack) -> T:
    """``open_(stack)``: what a reader opens of ``path`` (``what`` names it: ``"npz"``, ``"listing"``),
    its context entered in ``stack``; within :func:`kept_open`, the one opened there first."""
    scope = _SCOPE.get()
    if scope is None:
        return open_(stack)
    key = (what, path.resolve(), file_version(path))
    if key not in scope.opened:
        scope.opened[key] = open_(scope.stack)
    found: T = scope.opened[key]
    return found


__all__ = ["Listing", "file_version", "keeping", "kept", "kept_open"]
