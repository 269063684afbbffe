"""Atomic, durable, non-clobbering output: temporary files beside the target, renamed into place.

Each finished temporary is fsynced before its rename and the directory after it, so a power loss
leaves the previous file or the complete new one under the final name, never an empty or partial
one; while the data is written, its writeback is started a window at a time
(:mod:`pecli.writeback`), so the final fsync has little left.  ``PECLI_NO_FSYNC=1`` in the
environment skips all three (faster on slow disks; the rename is still atomic for a crash of
pecli alone, but not for a crash of the machine).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pecli.errors import OutputError
from pecli.interruption import Settling, abandoned
from pecli.writeback import EarlyWriteback


def is_special(path: Path) -> bool:
    """A device or FIFO (``/dev/null``, a named pipe): written in place, never replaced."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def check_destination(path: Path, *, force: bool) -> None:
    """Refuse what would lose data or cannot work, before any work is done."""
    if path.is_dir():
        raise OutputError(f"{path} is a directory: give a file name, e.g. -o {path / 'table.npy'}")
    if is_special(path):
        return
    # A symlink counts even when it dangles: the rename would replace the link itself.
    if (path.exists() or path.is_symlink()) and not force:
        raise OutputError(f"{path} already exists: pass --force to overwrite it")
    parent = path.parent
    if not parent.is_dir():
        raise OutputError(f"directory {parent} does not exist: create it first or choose another output path")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"cannot write in directory {parent} (permission denied): choose another output path")


def os_error_message(exc: OSError, path: Path) -> str:
    """One line for an OS-level write failure, naming the path and what to do."""
    if exc.errno == errno.ENOSPC:
        return f"no space left on device while writing {path}: free some space or write elsewhere"
    if exc.errno == errno.EDQUOT:
        return f"disk quota exceeded while writing {path}: free some space or write elsewhere"
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"cannot write {path} ({(exc.strerror or 'permission denied').lower()}): choose another output path"
    return f"cannot write {path}: {exc.strerror or exc}"


def _default_mode() -> int:
    # Temporaries are created 0600; a finished file should get the permissions open() would give it.
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


@contextmanager
def atomic_paths(*paths: Path, force: bool) -> Iterator[list[Path]]:
    """Yield temporary paths to write; on success fsync them, rename each onto its target, in
    order, and fsync the directory (unless ``PECLI_NO_FSYNC`` is set).

    On any failure (including Ctrl-C) the temporaries are removed and every target is left as
    it was.  Special files (devices, FIFOs) are handed out as themselves and written in place,
    never synced.
    """
    for p in paths:
        check_destination(p, force=force)
    temps: list[Path] = []
    sync = fsync_enabled()
    try:
        for p in paths:
            if is_special(p):
                temps.append(p)
                continue
            _new_temporary(p, temps)
        if sync and temps[0] != paths[0]:  # the disk writes the data while it is made
            with EarlyWriteback(temps[0]):
                yield temps
        else:
            yield temps
        stop = abandoned()
        if stop is not None:  # interrupted, and the exception was swallowed on its way up
            raise stop
        mode = _default_mode()
        if sync:  # the data must be on disk before a name points at it
            for tmp, p in zip(temps, paths, strict=True):
                if tmp != p:
                    _fsync_file(tmp)
        with Settling(), _renaming(paths):
            # Companions (a sidecar) describe the first target: remove the old ones before the data
            # is replaced, so a kill between renames leaves new data with no description, never
            # the old one.  (Another writer may have removed it a moment ago: that is no error.)
            for tmp, p in zip(temps[1:], paths[1:], strict=True):
                if tmp != p:
                    p.unlink(missing_ok=True)
            for tmp, p in zip(temps, paths, strict=True):
                if tmp == p:
                    continue
                os.chmod(tmp, mode)
                os.replace(tmp, p)
    except OSError as exc:
        _discard(temps, paths)
        raise OutputError(os_error_message(exc, paths[0])) from exc
    except BaseException:
        _discard(temps, paths)
        raise
    if sync:  # ... and the renames (and removals) on disk before pecli reports success
        for parent in dict.fromkeys(p.parent for tmp, p in zip(temps, paths, strict=True) if tmp != p):
            try:
                _fsync_directory(parent)
            except OSError as exc:  # the files are in place: say so rather than "cannot write"
                raise OutputError(
                    f"{paths[0]} was written but directory {parent} could not be synced to disk "
                    f"({(exc.strerror or str(exc)).lower()}): check the disk before relying on it"
                ) from exc


@contextmanager
def _renaming(paths: tuple[Path, ...]) -> Iterator[None]:
    """Hold an exclusive lock on the target's directory while a file and its companions are
    renamed into place, so that two pecli processes writing the same ``-o`` at once cannot
    interleave their renames and leave one's sidecar beside the other's data.

    A lone file needs no lock (its rename is atomic).  Best effort: where the directory cannot be
    locked (Windows, some network filesystems) the renames go ahead unlocked; a sidecar that then
    ends up beside the other writer's data does not match its fingerprint and is ignored on read.
    The lock is released when the descriptor is closed, by the kernel too if pecli is killed.
    """
    fd = -1
    if len(paths) > 1 and os.name != "nt":
        import fcntl

        try:
            fd = os.open(paths[0].parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            if fd >= 0:
                os.close(fd)
            fd = -1
    try:
        yield
    finally:
        if fd >= 0:
            os.close(fd)


def fsync_enabled() -> bool:
    """False when ``PECLI_NO_FSYNC`` is set (to anything but ``0`` or nothing)."""
    return os.environ.get("PECLI_NO_FSYNC", "").strip() in ("", "0")


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDWR)  # Windows' fsync (_commit) needs a writable descriptor
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_directory(path: Path) -> None:
    """Make a rename in ``path`` durable.  Windows cannot open a directory (and NTFS journals
    renames); some filesystems cannot sync one (EINVAL): nothing more can be done there."""
    if os.name == "nt":
        return
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
            raise
    finally:
        os.close(fd)


def _new_temporary(p: Path, temps: list[Path]) -> None:
    """Create an empty ``.NAME.XXXXXXXXXXXX.part`` beside ``p`` (0600, like ``mkstemp``'s), in ``temps``.

    The name joins ``temps`` before the file exists: a Ctrl-C or SIGTERM (raised between any two
    bytecodes) cannot land after the file is made and before it is known, and leave it behind.
    """
    longest = name_max(p.parent)
    while True:
        # 12 random hex digits, as secrets.token_hex(6) gives them, without that import (~7 ms).
        tmp = p.parent / _temporary_name(p.name, os.urandom(6).hex(), longest)
        temps.append(tmp)
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            return
        except FileExistsError:
            temps.pop()  # someone else's file: never remove it, try another name


def name_max(directory: Path) -> int:
    """The longest file name ``directory``'s file system takes, in bytes (255 on ext4, XFS,
    btrfs, tmpfs, APFS and NTFS; 255 where the system does not say)."""
    try:
        return int(os.pathconf(directory, "PC_NAME_MAX"))
    except (OSError, ValueError, AttributeError):
        return 255


def _temporary_name(name: str, token: str, longest: int) -> str:
    """``.NAME.TOKEN.part``, with NAME shortened (``~`` marks the cut) when the whole would be
    longer than ``longest`` bytes: a legal output name of 237 to 255 bytes is not refused
    because its temporary's name is longer."""
    room = longest - len(f"..{token}.part".encode())
    raw = name.encode(errors="surrogateescape")
    if len(raw) > room:
        name = raw[: room - 1].decode(errors="ignore") + "~"  # never half a UTF-8 character
    return f".{name}.{token}.part"


def _discard(temps: list[Path], paths: tuple[Path, ...]) -> None:
    # temps may be shorter than paths if creating one of them failed.
    for tmp, p in zip(temps, paths, strict=False):
        if tmp != p:
            try:
                tmp.unlink()
            except OSError:
                pass
