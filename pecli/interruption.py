"""Interruptions that must win: a signal's exception can be swallowed on its way up.

A signal handler raises its exception wherever the program is, and inside a library's weakref
callback or finaliser (h5py closes files in one) Python prints and swallows it.  The command
line's handler therefore also records it here; writes in progress fail with it before their
rename (:func:`pecli.atomic.atomic_paths`), streams stop at their next block
(:meth:`pecli.table.Table.blocks`), and the command exits with its status.  A module of its own,
importing nothing: the command line's start-up reads it.
"""

from __future__ import annotations

#: Interruptions that arrived while a command ran (see :func:`abandon_writes`).
_abandoned: list[BaseException] = []
#: How many :class:`Deferred` blocks are running (the handler then records, and does not raise).
_deferring: list[int] = [0]
#: Whether a write's files are in place (:class:`Settling`): a signal then changes nothing.
_settled: list[bool] = [False]


def abandon_writes(reason: BaseException) -> None:
    """Record ``reason``: writes in progress fail with it before their rename, streams stop at
    their next block, whatever swallowed the exception the handler raised."""
    _abandoned.append(reason)


def abandoned() -> BaseException | None:
    """The first interruption given to :func:`abandon_writes` since :func:`forget_abandoned`, or None."""
    return _abandoned[0] if _abandoned else None


def forget_abandoned() -> None:
    """Start afresh (a command line run in a process that was interrupted before: tests, notebooks)."""
    _abandoned.clear()
    _settled[0] = False


def settled() -> bool:
    """Whether the command's output is in place (:class:`Settling` ended): a signal that arrives now
    has nothing left to stop, and the exit status must say the new file is there (0), not 129/130/143,
    which promise the previous one."""
    return _settled[0]


def deferring() -> bool:
    """Whether a signal's exception must wait for the end of a :class:`Deferred` block."""
    return _deferring[0] > 0


class Settling:
    """The renames that put a write's files in place.  A signal that arrives during them is held;
    when they end the files are the new ones, so the held signal is dropped and the command settles
    (:func:`settled`): it finishes and exits 0.  Before this block a signal leaves the previous files
    (129, 130, 143); after it, the new ones (0): the exit status tells which is in place."""

    def __enter__(self) -> None:
        self.before = len(_abandoned)
        _deferring[0] += 1

    def __exit__(self, *exc: object) -> None:
        _deferring[0] -= 1
        if exc[0] is None:
            del _abandoned[self.before :]
            _settled[0] = True


class Deferred:
    """A block a signal's exception must not be raised in: ``import torch`` runs Python code from
    C++ (pybind11), and an exception raised there aborts the process (``terminate called after
    throwing an instance of 'pybind11::error_already_set'``, status −6, no cleanup).  The handler
    records the interruption; it is raised when the block ends."""

    def __enter__(self) -> None:
        self.before = len(_abandoned)
        _deferring[0] += 1

    def __exit__(self, *exc: object) -> None:
        _deferring[0] -= 1
        if not _deferring[0] and len(_abandoned) > self.before and exc[0] is None:
            raise _abandoned[self.before]
