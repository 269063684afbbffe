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
