"""Memory and size guards: refuse early, before anything is allocated or written."""

from __future__ import annotations

import os

from pecli.errors import TableTooLargeError


def human_bytes(n: float) -> str:
    """``1234567`` → ``'1.2 MB'`` (decimal units, as disk tools print them)."""
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if n < 1000:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} PB"


def available_memory() -> int | None:
    """Bytes of memory available now (Linux ``MemAvailable``), or None when unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fp:
            for line in fp:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def ensure_fits_in_memory(nbytes: int, what: str) -> None:
    """Raise :class:`TableTooLargeError` if ``nbytes`` exceeds the memory available now."""
    available = available_memory()
    if available is not None and nbytes > available:
        raise TableTooLargeError(
            f"{what} needs {human_bytes(nbytes)} but only {human_bytes(available)} of memory is available: "
            "write it to a file with -o instead, which streams it in blocks"
        )
