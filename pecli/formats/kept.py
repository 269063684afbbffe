"""A file opened once for many reads: while a :class:`KeptFiles` is active, a reader opens each
file's container (an ``.npz``'s zip, a ``.pt``'s tensors, a GGUF reader, an HDF5 file) and lists
its arrays once, and every read of an array of that file reuses them.

A checkpoint scan reads each of a file's N arrays; opening and listing the file on every read cost
N² (an ``.npz`` of 2,000 arrays took 187 s, a ``.pt`` 287 s: every read loaded the whole file).
What is kept is kept for the file as it is (its inode, size and modification time), and closed
when the :class:`KeptFiles` closes.  Outside one a read opens what it needs and closes it when its
table is done, as before.

A :class:`KeptFiles` is active only inside :meth:`KeptFiles.active` blocks, never across a
``yield``: a scan that is a generator activates it around each array's reads, so that what its
consumer opens between two arrays, or a second scan interleaved with it, is never served from it.
:meth:`KeptFiles.active` ``(probing=True)`` also lets a reader read less than a whole array where
only its first row will be read (:func:`probing`: an ``.npz`` entry memory-mapped, its CRC-32
unchecked); an array then read for its values is read again outside that mode.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
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
class KeptFiles:
    """The files a scan keeps open, each opened and listed once (a context manager: closes them)."""

    stack: ExitStack = field(default_factory=ExitStack)
    opened: dict[tuple[str, Path, tuple[int, int, int]], Any] = field(default_factory=dict)

    def __enter__(self) -> KeptFiles:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.opened.clear()
        self.stack.close()

    @contextmanager
    def active(self, probing: bool = False) -> Iterator[None]:
        """Reads within the block use the kept files (``probing``: only first rows will be read)."""
        token = _ACTIVE.set((self, probing))
        try:
            yield
        finally:
            _ACTIVE.reset(token)


_ACTIVE: ContextVar[tuple[KeptFiles, bool] | None] = ContextVar("pecli_kept_files", default=None)


def file_version(path: Path) -> tuple[int, int, int]:
    """The file as it is now: its inode, size and modification time (what is kept is kept for it)."""
    st = path.stat()
    return st.st_ino, st.st_size, st.st_mtime_ns


@contextmanager
def kept_open(probing: bool = False) -> Iterator[KeptFiles]:
    """A :class:`KeptFiles` active for the block (not for a generator's block that yields: use
    :meth:`KeptFiles.active` around each step there)."""
    with KeptFiles() as files, files.active(probing):
        yield files


def keeping() -> bool:
    """Whether a :class:`KeptFiles` is active (a reader may then prepare for many reads)."""
    return _ACTIVE.get() is not None


def probing() -> bool:
    """Whether the active :class:`KeptFiles` reads only first rows (a reader may map rather than read)."""
    active = _ACTIVE.get()
    return active is not None and active[1]


def kept(path: Path, what: str, open_: Callable[[ExitStack], T], stack: ExitStack) -> T:
    """``open_(stack)``: what a reader opens of ``path`` (``what`` names it: ``"npz"``, ``"listing"``),
    its context entered in ``stack``; while a :class:`KeptFiles` is active, the one opened there first."""
    active = _ACTIVE.get()
    if active is None:
        return open_(stack)
    files = active[0]
    key = (what, path.resolve(), file_version(path))
    if key not in files.opened:
        files.opened[key] = open_(files.stack)
    found: T = files.opened[key]
    return found


__all__ = ["KeptFiles", "Listing", "file_version", "keeping", "kept", "kept_open", "probing"]
