"""Threads for NumPy work: a shared pool over row blocks, and a one-ahead producer for streaming.

NumPy releases the GIL inside its loops, so two threads over disjoint row blocks use two cores.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _forget_pool() -> None:
    # A forked child has none of the parent's threads: its copy of the pool would never run a task.
    global _pool, _pool_lock, _available
    _pool, _pool_lock, _available = None, threading.Lock(), None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)

T = TypeVar("T")


#: Environment variable setting how many threads pecli computes with (``--threads`` overrides it).
THREADS_ENV = "PECLI_THREADS"
_chosen: int | None = None


def set_threads(count: int | None) -> None:
    """Compute with ``count`` threads from now on (``None``: as :func:`cpu_threads` finds them);
    the ``--threads`` option.  The pool is made again at the next parallel call."""
    global _chosen, _pool
    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
        from pecli.errors import PecliInputError

        raise PecliInputError(f"threads must be a whole number ≥ 1, got {count!r}: e.g. --threads 4")
    with _pool_lock:
        old, _pool, _chosen = _pool, None, count
    if old is not None:
        old.shutdown(wait=False)


_local = threading.local()


def cpu_threads() -> int:
    """Threads pecli computes with: ``--threads`` (:func:`set_threads`), else ``PECLI_THREADS``,
    else the CPUs this process may use: its affinity mask, capped by a cgroup's CPU quota (a
    container given 2 of a machine's 64 CPUs runs 2 threads, not 64).  1 inside a block of
    :func:`ordered_blocks`."""
    cap = getattr(_local, "cap", 0)
    return min(cap, _all_threads()) if cap else _all_threads()


def _all_threads() -> int:
    if _chosen is not None:
        return _chosen
    text = os.environ.get(THREADS_ENV, "").strip()
    if text:
        try:
            count = int(text)
        except ValueError:
            count = 0
        if count < 1:
            from pecli.errors import PecliInputError

            raise PecliInputError(f"{THREADS_ENV}={text!r} is not a thread count: give a whole number ≥ 1, e.g. 4")
        return count
    return available_cpus()


_available: int | None = None


def available_cpus() -> int:
    """CPUs this process may run on: the affinity mask (or the machine's CPUs), capped by the
    cgroup's CPU quota, rounded up (cgroup v2 ``cpu.max``, v1 ``cpu.cfs_quota_us``).  Read once a
    process (every row block asks: reading the cgroup files each time cost a diff 0.9 s)."""
    global _available
    if _available is None:
        _available = _read_available_cpus()
    return _available


def _read_available_cpus() -> int:
    try:
        count = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        count = os.cpu_count() or 1
    quota = _cgroup_quota()
    return max(1, min(count, quota)) if quota is not None else max(1, count)


def _cgroup_quota(root: str = "/sys/fs/cgroup") -> int | None:
    """The CPUs a cgroup's quota allows (quota / period, rounded up), or None without a quota."""
    import math

    def read(name: str) -> str:
        with open(os.path.join(root, name), encoding="ascii") as fp:
            return fp.read().strip()

    def v2() -> list[str]:
        return read("cpu.max").split()[:2]

    def v1() -> list[str]:
        return [read(f"cpu/cpu.cfs_{w}_us") for w in ("quota", "period")]

    for quota_of in (v2, v1):
        try:
            quota, period = quota_of()
            if quota in ("max", "-1"):
                return None
            return max(1, math.ceil(int(quota) / int(period)))
        except (OSError, ValueError, ZeroDivisionError):
            continue
    return None


def run_parts(work: Callable[[int, int], None], parts: list[tuple[int, int]]) -> None:
    """``work(a, z)`` for every part; the calling thread does the first (NumPy releases the GIL)."""
    if len(parts) == 1:
        work(*parts[0])
        return
    pool = _executor()
    futures: list[Future[None]] = [pool.submit(work, a, z) for a, z in parts[1:]]
    try:
        work(*parts[0])
    finally:
        for f in futures:
            f.result()


def run_blocks(work: Callable[[int, int], None], blocks: Sequence[tuple[int, int]]) -> None:
    """``work(a, b)`` for every row block, the blocks shared out between the threads in contiguous
    runs (each block is written by exactly one call, so the bits do not depend on the threads)."""
    count = max(1, min(cpu_threads(), len(blocks)))
    if count == 1:
        for a, b in blocks:
            work(a, b)
        return
    cuts = [len(blocks) * t // count for t in range(count + 1)]

    def run(i: int, j: int) -> None:
        for a, b in blocks[i:j]:
            work(a, b)

    run_parts(run, list(itertools.pairwise(cuts)))


@contextmanager
def threads_at_most(count: int) -> Iterator[None]:
    """Within it, :func:`cpu_threads` is at most ``count`` in this thread (a block of
    :func:`ordered_blocks`)."""
    before = getattr(_local, "cap", 0)
    _local.cap = max(1, count)
    try:
        yield
    finally:
        _local.cap = before


def ordered_blocks(
    make: Callable[[int, int], T], spans: Iterable[tuple[int, int]], workers: int
) -> Generator[T, None, None]:
    """``make(a, z)`` for each span, in order, ``workers`` blocks at a time on the pool, each
    block on one thread (:func:`ordered_map`).  For streaming: a
    block split between many threads leaves each too little work to pay for its setup, and
    threads that mostly run short NumPy calls queue for the GIL (measured on 16 cores: a 2 GB
    table in 16 MB blocks split 16 ways took 2.6 s, 0.5 s built whole; in 4 MB blocks each on
    one thread, 16 at a time 1.1 s, 4 at a time 0.75 s)."""
    return ordered_map(lambda span: make(*span), spans, workers)


def ordered_map(fn: Callable[[Any], T], items: Iterable[Any], workers: int) -> Generator[T, None, None]:
    """``fn(item)`` for each item, in order, ``workers`` at a time on the pool, each on one thread
    (:func:`cpu_threads` is 1 inside it).  The items are drawn in the consumer's thread (a file
    read in order), as a result is taken.  At most ``workers`` results are held besides the one
    the consumer has; an exception is raised in the consumer; closing early cancels the rest."""
    from collections import deque

    def one(item: Any) -> T:
        with threads_at_most(1):
            return fn(item)

    pool = _executor()
    todo = iter(items)
    pending: deque[Future[T]] = deque(pool.submit(one, item) for item in itertools.islice(todo, workers))
    try:
        while pending:
            done = pending.popleft().result()
            item = next(todo, _DONE)
            if item is not _DONE:
                pending.append(pool.submit(one, item))
            yield done
    finally:
        for f in pending:
            f.cancel()


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            from concurrent.futures import ThreadPoolExecutor  # not at import: it pulls in logging

            # A worker for every thread, whatever this thread's cap (threads_at_most).
            _pool = ThreadPoolExecutor(max_workers=max(1, _all_threads()), thread_name_prefix="pecli-fill")
        return _pool


def touch(block: Any) -> None:
    """Map every memory page of ``block`` now: a memory-mapped file's pages are otherwise mapped
    one fault at a time on first use.  Done in a producer thread, it takes that work off the
    consumer.  Linux ≥ 5.14 maps the range in one call (``MADV_POPULATE_READ``); elsewhere one
    byte per page is read."""
    if not block.size or not block.flags.c_contiguous:
        return
    if not _populate(block.ctypes.data, block.nbytes):
        block.reshape(-1).view("u1")[::4096].max()


#: Whether ``MADV_POPULATE_READ`` works here (None: not tried yet).
_populates: bool | None = None


def _populate(address: int, nbytes: int) -> bool:
    global _populates
    if _populates is False:
        return False
    from pecli.libc import MADV_POPULATE_READ, advise

    _populates = advise(address, nbytes, MADV_POPULATE_READ)  # an older kernel: a byte per page from now on
    return _populates


_DONE = object()


def prefetch(items: Iterable[T], depth: int = 1) -> Generator[T, None, None]:
    """``items``, produced by a background thread up to ``depth`` ahead of the consumer.

    Streaming writers use it so that computing row block k+1 overlaps writing block k; at most
    ``depth + 2`` items exist at once.  An exception in the producer is raised in the consumer;
    closing the iterator early stops the producer after the item it is working on.
    """
    import queue

    q: queue.Queue[Any] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item: Any) -> bool:
        while not stop.is_set():
            try:
                q.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put((item, None)):
                    return
        except BaseException as exc:  # handed to the consumer, raised there
            put((_DONE, exc))
            return
        put((_DONE, None))

    worker = threading.Thread(target=produce, name="pecli-prefetch", daemon=True)
    worker.start()
    try:
        while True:
            item, exc = q.get()
            if item is _DONE:
                if exc is not None:
                    raise exc
                return
            yield item
    finally:
        stop.set()
        while worker.is_alive():  # unblock a producer waiting on a full queue
            try:
                q.get(timeout=0.05)
            except queue.Empty:
                pass
