"""Memory and size guards: refuse early, before anything is allocated or written.

The memory pecli counts on is what the system says is available now (Linux ``MemAvailable``,
psutil's count elsewhere),
capped by the environment variable ``PECLI_MEMORY_LIMIT`` when it is set (bytes, or a size such
as ``512M`` or ``2G``): a shared machine's own budget, and how tests make the limit small.
"""

from __future__ import annotations

import os

from pecli.errors import PecliInputError, RecipeError, TableTooLargeError

#: Environment variable capping the memory pecli believes available.
MEMORY_LIMIT_ENV = "PECLI_MEMORY_LIMIT"
_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
#: Below this many bytes of work the available memory is not even asked (a /proc read per block).
CHECK_WORK_ABOVE = 64 << 20
#: What to do when a whole table is asked for in memory (the fix ``ensure_fits_in_memory`` names by default).
STREAM_FIX = "write it to a file with -o instead, which streams it in blocks"


def human_bytes(n: float) -> str:
    """``1234567`` → ``'1.2 MB'`` (decimal units, as disk tools print them)."""
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if n < 1000:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} PB"


def memory_limit() -> int | None:
    """``PECLI_MEMORY_LIMIT`` in bytes, or None when it is not set."""
    text = os.environ.get(MEMORY_LIMIT_ENV, "").strip()
    if not text:
        return None
    number, unit = text.rstrip("bB").rstrip(), ""
    if number[-1:].upper() in _UNITS and not number[-1:].isdigit():
        number, unit = number[:-1].strip(), number[-1].upper()
    try:
        value = float(number) * _UNITS[unit]
    except ValueError:
        value = -1.0
    if not 0 <= value < 2**63:
        raise PecliInputError(f"{MEMORY_LIMIT_ENV}={text!r} is not a size: give bytes or e.g. 512M, 2G")
    return int(value)


def system_available_memory() -> int | None:
    """Bytes of memory the system has available now, or None when unknown: Linux's
    ``MemAvailable``; elsewhere (macOS, Windows) psutil's ``virtual_memory().available``, which
    reads the platform's own counters (on macOS, free plus reclaimable pages from
    ``host_statistics64``; installed with pecli there); else POSIX's ``SC_AVPHYS_PAGES``."""
    meminfo = _first_number("/proc/meminfo", "MemAvailable:")
    if meminfo is not None:
        return meminfo * 1024
    try:
        import psutil
    except ImportError:
        pass
    else:
        try:
            return int(psutil.virtual_memory().available)
        except (OSError, RuntimeError, AttributeError):
            pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _first_number(path: str, prefix: str) -> int | None:
    """The number after ``prefix`` on the first line of ``path`` that starts with it (None if none)."""
    try:
        with open(path, encoding="ascii") as fp:
            for line in fp:
                if line.startswith(prefix):
                    word = line[len(prefix) :].split()
                    return int(word[0]) if word and word[0].isdigit() else None
    except (OSError, ValueError):
        pass
    return None


def address_space_left() -> int | None:
    """Bytes this process may still map under its address-space limit (``ulimit -v``): the limit
    less what it has mapped already (its libraries, thread stacks), or None when there is no limit."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    except (ImportError, OSError, ValueError):
        return None
    if soft == resource.RLIM_INFINITY:
        return None
    mapped = _first_number("/proc/self/status", "VmSize:")
    return max(0, soft - (mapped or 0) * 1024)


def process_memory_left() -> int | None:
    """What this process may still allocate under its own limits: the address-space limit
    (``ulimit -v``) less what it has mapped, and a cgroup v2 memory limit less its usage."""
    left: list[int] = []
    mappable = address_space_left()
    if mappable is not None:
        left.append(mappable)
    limit = _first_number("/sys/fs/cgroup/memory.max", "")
    used = _first_number("/sys/fs/cgroup/memory.current", "")
    if limit is not None and used is not None:
        left.append(limit - used)
    return max(0, min(left)) if left else None


def available_memory() -> int | None:
    """Bytes pecli may use now: the system's available memory, capped by this process's own
    limits (``ulimit -v``, a cgroup) and by ``PECLI_MEMORY_LIMIT``.

    None when none is known.  Every memory check asks this function (tests replace it).
    """
    known = [m for m in (system_available_memory(), process_memory_left(), memory_limit()) if m is not None]
    return min(known) if known else None


def ensure_fits_in_memory(nbytes: int, what: str, fix: str = STREAM_FIX) -> None:
    """Raise :class:`TableTooLargeError` if ``nbytes`` exceeds the memory available now.

    The message reads ``{what} needs {nbytes} but only {available} of memory is available: {fix}``.
    """
    available = available_memory()
    if available is not None and nbytes > available:
        raise TableTooLargeError(
            f"{what} needs {human_bytes(nbytes)} but only {human_bytes(available)} of memory is available: {fix}"
        )


def check_row_range(length: int, r0: int, r1: int) -> None:
    """Refuse rows ``[r0, r1)`` outside a table of ``length`` rows."""
    if not 0 <= r0 <= r1 <= length:
        raise RecipeError(f"row range [{r0}, {r1}) is outside the table's rows 0..{length}")
