"""Format registry: one entry per file format, each a reader and a writer over row blocks.

Every format stores the same metadata (``table_metadata``): inline where the format has room
(HDF5 attributes, npz entry, safetensors ``__metadata__``, JSON field, .pt dict entry, C comment),
otherwise in a ``FILE.json`` sidecar (.npy, .csv, .tsv).  Adding a format is one module with a
``Format`` entry (every fact of the format is a field there), named in ``BUILT_IN`` below, plus
its tests; another package adds one through the entry-point group ``pecli.formats``.

A stream (standard input, a pipe) is read through a temporary copy (:mod:`pecli.streams`) in
the formats whose entry says ``streamable``, named by the caller or told by its first bytes.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import warnings
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from pathlib import Path
from typing import IO, Any

from pecli.atomic import atomic_paths, is_special, name_max
from pecli.dtypes import COMPLEX
from pecli.errors import FormatError, OutputError, PecliInputError, TableTooLargeError
from pecli.formats._common import DEFAULT_KEY, ArrayInfo, Format, WriteOptions, choose_key
from pecli.formats.cheader import CHEADER
from pecli.formats.gguf import GGUF
from pecli.formats.hdf5 import H5
from pecli.formats.kept import KeptFiles, kept_open
from pecli.formats.metadata import is_foreign_file, is_pecli_sidecar, sidecar_text
from pecli.formats.npy import NPY, NPZ
from pecli.formats.safetensors import SAFETENSORS
from pecli.formats.text import CSV, JSON, TSV
from pecli.formats.torch import TORCH
from pecli.resources import human_bytes
from pecli.streams import STDIN, is_stream, stream_copy
from pecli.table import Progress, Table

__all__ = [
    "DEFAULT_KEY",
    "FORMATS",
    "ArrayInfo",
    "Format",
    "KeptFiles",
    "WriteOptions",
    "choose_key",
    "formats",
    "kept_open",
    "list_arrays",
    "open_stream",
    "open_table",
    "resolve_format",
    "sniff_format",
    "streamable",
    "write_table",
]

#: pecli's own formats, in the order lists show them.
BUILT_IN: dict[str, Format] = {f.name: f for f in (NPY, NPZ, H5, CSV, TSV, JSON, SAFETENSORS, TORCH, CHEADER, GGUF)}
_every: dict[str, Format] = {}


def formats() -> dict[str, Format]:
    """Every format by name (also ``FORMATS``): pecli's own, then those other packages register
    under the entry-point group ``pecli.formats`` (:mod:`pecli.plugins`), read on first call."""
    if not _every:
        from pecli import plugins

        # pecli's own first: a plugin that reads the registry while it loads finds them (no reload).
        _every.update(BUILT_IN)
        found = plugins.load(
            plugins.FORMATS_GROUP, lambda v: isinstance(v, Format), "a pecli.formats.Format", set(BUILT_IN)
        )
        # The entry point's name is the format's (as a kind's is the kind's); its functions run
        # inside a boundary (plugins.guarded): a plugin's failure is one line, never pecli's exit.
        _every.update({name: _guarded(replace(f, name=name) if f.name != name else f) for name, f in found.items()})
    return _every


def _guarded(f: Format) -> Format:
    """A plugin's format whose every function fails in one line (:func:`pecli.plugins.guarded`)."""
    import math

    from pecli.plugins import guarded

    what = f"plugin format {f.name!r}"

    def wrap(fn: Any, check: Any = None, wanted: str = "") -> Any:
        return None if fn is None else guarded(fn, what, check, wanted)

    return replace(
        f,
        write=wrap(f.write),
        read=wrap(f.read, lambda t: isinstance(t, Table), "a pecli Table"),
        list_keys=wrap(f.list_keys, lambda keys: isinstance(keys, list), "a list of arrays"),
        sniff=wrap(f.sniff),
        begins=wrap(f.begins),
        bytes_per_value=wrap(
            f.bytes_per_value,
            lambda v: isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and v >= 0,
            "a finite number of bytes ≥ 0",
        ),
    )


def __getattr__(name: str) -> dict[str, Format]:
    # ``FORMATS``: the whole registry, plugins included (see :func:`formats`).
    if name == "FORMATS":
        return formats()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _find(test: Callable[[Format], bool]) -> Format | None:
    """The first format that passes ``test``: pecli's own first, other packages' only when none does."""
    found = next((f for f in BUILT_IN.values() if test(f)), None)
    if found is None:  # only now read other packages' metadata (~30 ms and more with many installed)
        found = next((f for f in formats().values() if test(f)), None)
    return found


def resolve_format(path: str, name: str | None, option: str = "--from") -> Format:
    """The format named (by ``--from`` for an input, ``--to`` for an output), else the one the
    path's extension says; ``option`` is the name the error tells the user to give."""
    if name is not None:
        wanted = name.lower()
        named = _find(lambda f: wanted == f.name or wanted in f.aliases)
        if named is None:
            raise FormatError(f"unknown format {name!r}: choose one of {', '.join(formats())}")
        return named
    lower = Path(path).name.lower()
    found = _find(lambda f: any(lower.endswith(ext) for ext in f.extensions))
    if found is not None:
        return found
    # An output's formats are those that write, an input's those that read (.gguf is read only).
    able = [f for f in formats().values() if (f.write if option == "--to" else f.read) is not None]
    known = ", ".join(e for f in able for e in f.extensions)
    raise FormatError(f"cannot tell the format of {path!r} from its extension: use one of {known} or {option}")


def _check_readable(p: Path) -> None:
    if not p.exists():
        raise FormatError(f"{p} does not exist: check the path")
    if p.is_dir():
        raise FormatError(f"{p} is a directory: give a table file (or a model directory, which holds a config.json)")
    if not os.access(p, os.R_OK):
        raise FormatError(f"cannot read {p} (permission denied)")
    if p.stat().st_size == 0:
        raise FormatError(f"{p} is empty")


def _reader(p: Path, fmt: str | None) -> Format:
    f = resolve_format(str(p), fmt)
    if f.read is None:
        raise FormatError(f"{f.name} is a write-only format: pecli cannot read {p}")
    return f


@contextmanager
def open_table(path: str | Path, fmt: str | None = None, key: str | None = None) -> Iterator[Table]:
    """Open one table of a file for reading (lazily where the format allows); closes it on exit.

    A pipe, FIFO or terminal (``/dev/stdin``) is read as a stream (:func:`open_stream`).
    """
    p = Path(path)
    if is_stream(p):
        with open_stream(p, fmt, key) as table:
            yield table
        return
    _check_readable(p)
    f = _reader(p, fmt)
    assert f.read is not None
    with ExitStack() as stack:
        try:
            table = f.read(p, key, stack)
        except OSError as exc:
            raise FormatError(f"cannot read {p}: {exc.strerror or exc}") from exc
        yield table


def streamable() -> tuple[str, ...]:
    """The formats read from a stream: their readers need the bytes in order, nothing more."""
    return tuple(f.name for f in formats().values() if f.streamable and f.read is not None)


def sniff_format(head: bytes) -> str | None:
    """The format the first bytes of a table show, by its name in ``FORMATS`` (each format's own
    ``sniff``); None when they show none.  Text is CSV, or TSV when its first line holds a tab.

    >>> sniff_format(b"\\x93NUMPY\\x01\\x00"), sniff_format(b"d0\\td1\\n0\\t1\\n"), sniff_format(b"\\x00\\x01")
    ('npy', 'tsv', None)
    """

    def candidates() -> Iterator[Format]:
        # Signatures first, pecli's own then other packages'; text, which any text passes, last.
        yield from (f for f in BUILT_IN.values() if not f.text)
        yield from (f for name, f in formats().items() if name not in BUILT_IN)
        yield from (f for f in BUILT_IN.values() if f.text)

    def shows(f: Format) -> bool:
        if f.sniff is None:
            return False
        if f.name in BUILT_IN:
            return f.sniff(head)
        try:
            return bool(f.sniff(head))
        except Exception:  # another package's sniff must not break pecli: it shows nothing
            return False

    return next((f.name for f in candidates() if shows(f)), None)


def _check_stream_start(head: bytes, f: Format, words: str) -> None:
    """Refuse a stream whose first bytes cannot begin a file of format ``f`` before copying any of
    it (``/dev/zero`` read with ``--from npy`` would otherwise be copied for ever)."""
    if f.could_begin(head):
        return
    seen = sniff_format(head)
    why = "it is not UTF-8 text" if f.text else f"it looks like {seen}" if seen else f"no {f.name} signature"
    raise FormatError(f"{words} does not begin like {f.name} data ({why}): check --from, or pipe in the file itself")


@contextmanager
def open_stream(path: str | Path | None = None, fmt: str | None = None, key: str | None = None) -> Iterator[Table]:
    """The table on standard input (``path`` None) or on the stream ``path`` names, in the format
    ``fmt``, else the one its first bytes show; ``key`` picks an npz entry or safetensors tensor.
    It is read from a temporary copy, deleted on exit; HDF5 and .pt, which need the file itself,
    are refused before anything is copied."""
    words = STDIN if path is None else str(path)
    label = "-" if path is None else str(path)  # as a SOURCE names it
    chosen = _streamable(resolve_format(label, fmt), words) if fmt is not None else None

    def suffix(head: bytes) -> str:
        nonlocal chosen
        if chosen is not None:
            _check_stream_start(head, chosen, words)
        if chosen is None:
            name = sniff_format(head)
            if name is None:
                raise FormatError(
                    f"cannot tell the format of {words} from its first bytes: pipe in "
                    f"{', '.join(streamable()[:-1])} or {streamable()[-1]} data"
                )
            chosen = _streamable(formats()[name], words)
        return chosen.extensions[0]

    with stream_copy(path, suffix) as copy, ExitStack() as stack:
        assert chosen is not None

        def relabel(text: str) -> str:
            # COPY:KEY names an array as a SOURCE does (-:KEY); the copy elsewhere is the stream.
            return re.sub(re.escape(str(copy)) + r":(?=\S)", f"{label}:", text).replace(str(copy), words)

        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                table = stack.enter_context(open_table(copy, chosen.name, key))
        except PecliInputError as exc:
            raise type(exc)(relabel(str(exc))) from exc
        for w in caught:
            warnings.warn(relabel(str(w.message)), w.category, stacklevel=3)
        info = {k: relabel(v) if isinstance(v, str) else v for k, v in table.info.items()}
        info["read_from"] = f"{words} (through a temporary copy)"
        yield replace(table, source=table.source.replace(str(copy), label), info=info)


def _streamable(f: Format, words: str) -> Format:
    if f.read is None:
        raise FormatError(f"{f.name} is a write-only format: pecli cannot read {words}")
    if f.name not in streamable():
        name, ext = f.called, f.extensions[0]
        raise FormatError(
            f"{name} needs a seekable file: save {words} to a file first, e.g. cat > t{ext}, and read t{ext}"
        )
    return f


def list_arrays(path: str | Path, fmt: str | None = None) -> list[ArrayInfo] | None:
    """The arrays inside a multi-array file (None for single-table formats, and for a stream,
    which could not be read again for its table)."""
    p = Path(path)
    if is_stream(p):
        return None
    _check_readable(p)
    f = _reader(p, fmt)
    if f.list_keys is None:
        return None
    try:
        return f.list_keys(p)
    except OSError as exc:
        raise FormatError(f"cannot read {p}: {exc.strerror or exc}") from exc


def write_table(
    table: Table,
    dest: str | Path | IO[bytes],
    fmt: str | None = None,
    *,
    options: WriteOptions | None = None,
    force: bool = False,
    sidecar: bool = True,
    progress: Progress | None = None,
) -> None:
    """Write ``table`` to a path (atomically) or a binary stream, in row blocks.

    A path is written through a temporary file beside it and renamed into place, so the target
    is either the previous file or the complete new one.  An existing file is refused unless
    ``force``.  Formats without room for metadata get a ``PATH.json`` sidecar with the recipe.
    """
    options = options or WriteOptions()
    table = table.as_stored()  # bfloat16 read as float32 is written as bfloat16
    if not isinstance(dest, (str, Path)):
        if fmt is None:
            raise FormatError("writing to a stream needs a format name")
        f = resolve_format("-", fmt)
        _check_writable(table, f)
        if f.writes_to != "stream":
            raise FormatError(f"{f.name} cannot be written to a stream (it needs a seekable file): give a file path")
        assert f.write is not None  # _check_writable
        f.write(table, dest, options, progress)
        return
    path = Path(dest)
    f = resolve_format(str(path), fmt, "--to")
    _check_writable(table, f)
    has_meta = table.recipe is not None or bool(table.provenance)
    want_sidecar = sidecar and f.metadata == "sidecar" and has_meta and not is_special(path)
    _check_free_space(table, path, f)
    targets = [path] + ([Path(str(path) + ".json")] if want_sidecar else [])
    if want_sidecar:
        _check_sidecar_name(targets[1])
        _check_sidecar_slot(targets[1])
    # A user's own file there: said at once, with or without --force (which would not help).  A
    # name the system cannot hold is not such a file: atomic_paths says why it cannot be written.
    if want_sidecar and os.path.lexists(targets[1]) and is_foreign_file(targets[1]):
        raise OutputError(
            f"{targets[1]} exists and is not a pecli sidecar: pecli never replaces it, even with --force; "
            "move it away, or write with --no-sidecar"
        )
    with atomic_paths(*targets, force=force) as temps:
        assert f.write is not None  # _check_writable
        if f.writes_to == "stream":
            with open(temps[0], "wb") as fp:
                f.write(table, fp, options, progress)
        else:
            f.write(table, temps[0], options, progress)
        if want_sidecar:
            temps[1].write_text(sidecar_text(table), encoding="utf-8")
    if not want_sidecar and f.metadata == "sidecar":
        _drop_stale_sidecar(Path(str(path) + ".json"))


def _check_writable(table: Table, f: Format) -> None:
    """Refuse, before anything is opened, a format pecli only reads and a complex table where the
    format has no such numbers."""
    if f.write is None:
        writable = " ".join(g.extensions[0] for g in formats().values() if g.write is not None)
        raise FormatError(f"pecli reads {f.called} files but does not write them: choose another format ({writable})")
    stored = table.storage if table.storage in COMPLEX else None
    if stored is None or stored in f.complex_dtypes:
        return
    able = [g.extensions[0] for g in BUILT_IN.values() if stored in g.complex_dtypes]
    raise FormatError(
        f"{f.title or f.extensions[0]} holds no {stored} numbers: write the (real, imaginary) parts as "
        f"column pairs with --dtype {COMPLEX[stored]}, or choose a format that stores {stored} ({', '.join(able)})"
    )


def _check_sidecar_name(sidecar: Path) -> None:
    """Refuse an output name whose sidecar's name the file system would refuse (a 252-byte
    ``t.npy`` has a 257-byte ``t.npy.json``), before anything is written."""
    longest = name_max(sidecar.parent)
    size = len(os.fsencode(sidecar.name))
    if longest < size <= longest + 5:  # the data's own name fits (else the system says it is too long)
        raise OutputError(
            f"the recipe's sidecar {sidecar.name} would be a {size}-byte name, and a file name may have "
            f"at most {longest}: choose an output name of at most {longest - 5} bytes, or write with "
            "--no-sidecar (the file then carries no recipe)"
        )


def _check_sidecar_slot(sidecar: Path) -> None:
    """Refuse a FIFO, a device or a directory where the sidecar goes: writing the recipe into a
    FIFO blocks until someone reads it (for ever, usually), into a device it is lost."""
    try:
        mode = sidecar.stat().st_mode  # follows a symlink: one to a regular file is fine
    except OSError:
        return  # absent (or a dangling symlink: check_destination judges it)
    if not stat.S_ISREG(mode):
        raise OutputError(
            f"{sidecar} exists and is not a regular file: pecli will not write the recipe there; "
            "remove it or use --no-sidecar"
        )


def _drop_stale_sidecar(sidecar: Path) -> None:
    # The data file was just replaced; a sidecar describing the old one would now lie.
    if is_pecli_sidecar(sidecar):
        sidecar.unlink(missing_ok=True)


def _check_free_space(table: Table, path: Path, f: Format) -> None:
    if is_special(path) or not path.parent.is_dir():
        return
    n, d = table.shape
    need = int(n * d * f.bytes_per_value(table.dtype))
    free = shutil.disk_usage(path.parent).free
    if need > free:
        raise TableTooLargeError(
            f"{path} would need at least {human_bytes(need)} but {path.parent} has {human_bytes(free)} free: "
            "choose a smaller table or another directory"
        )
