"""Linux's C library functions that Python's ``os`` lacks (``madvise``, ``sync_file_range``),
through ctypes: each looked up once, ``None`` where the platform has none."""

from __future__ import annotations

import sys
from functools import cache
from typing import Any


@cache
def linux_function(name: str, argtypes: tuple[str, ...], restype: str = "c_int") -> Any:
    """libc's ``name`` with ctypes' ``argtypes`` and ``restype`` (given by their names in
    :mod:`ctypes`, e.g. ``"c_int"``), or ``None`` off Linux or where libc has no such function.
    It releases the GIL while it runs and sets ``errno``."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        fn = getattr(ctypes.CDLL(None, use_errno=True), name)
    except (OSError, AttributeError):
        return None
    fn.argtypes = [getattr(ctypes, t) for t in argtypes]
    fn.restype = getattr(ctypes, restype)
    return fn


#: ``madvise`` advice (Linux's values): no readahead around a page fault, and normal again.
MADV_NORMAL, MADV_RANDOM = 0, 1
#: Map every page of the range now (Linux ≥ 5.14; EINVAL before).
MADV_POPULATE_READ = 22


def advise(address: int, nbytes: int, advice: int) -> bool:
    """``madvise`` over the pages holding ``nbytes`` bytes from ``address`` (a memory-mapped
    array's ``ctypes.data``; the first page is rounded down): whether it was taken (False off
    Linux, or where the kernel refuses the advice)."""
    fn = linux_function("madvise", ("c_void_p", "c_size_t", "c_int"))
    if fn is None or nbytes <= 0:
        return False
    start = address & ~4095
    return bool(fn(start, address + nbytes - start, advice) == 0)
