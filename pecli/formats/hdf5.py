"""HDF5 through h5py: one dataset per table, the recipe as attributes on it.

libhdf5 can hang for ever, crash or allocate gigabytes on a corrupt object header, inside C code
that no signal interrupts.  So before pecli walks a file's structure it makes the same walk in a
forked child under a time and memory limit (:func:`_probe`), and walks it itself only after the
child came back.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import time
import warnings
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np

from pecli import errors
from pecli.errors import FormatError, PecliInputError
from pecli.formats._common import ArrayInfo, Format, WriteOptions, choose_key, first_line, unreadable
from pecli.formats.arrays import array_table
from pecli.formats.kept import keeping, kept, kept_open
from pecli.formats.metadata import META_KEY, decode_metadata
from pecli.formats.metadata import table_metadata as _table_metadata
from pecli.formats.rawbytes import write_rows
from pecli.table import Progress, Table

#: Rows per chunk aim for ~1 MiB chunks (h5py's guidance: 10 KiB–1 MiB).
_CHUNK_BYTES = 1 << 20
#: The signature an HDF5 file begins with (at offset 0: pecli writes no user block).
HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"


def _write_h5(table: Table, path: Path, options: WriteOptions, progress: Progress | None) -> None:
    import h5py

    n, d = table.file_shape  # a complex table's column pairs: one complex number each (h5py's compound)
    bf16 = table.dtype.name == "bfloat16"
    kwargs: dict[str, Any] = {}
    if options.compress is not None:
        name, level = options.compress
        rows = max(1, min(n, _CHUNK_BYTES // max(1, d * table.file_dtype.itemsize)))
        kwargs = {"compression": name, "compression_opts": level, "shuffle": True, "chunks": (rows, d)}
    elif not bf16 or sys.byteorder == "little":
        kwargs = {"dcpl": _placed_in_advance()}
    with h5py.File(path, "w") as f:
        try:
            dtype = h5py.Datatype(bfloat16_type()) if bf16 else table.file_dtype
            ds = f.create_dataset(options.key, shape=(n, d), dtype=dtype, **kwargs)
        except ValueError as exc:
            raise FormatError(f"cannot create dataset {options.key!r}: {first_line(exc)}") from exc
        meta = _table_metadata(table)
        for key, value in meta.items():
            ds.attrs[key] = value  # one attribute per parameter, for h5dump -A and h5ls -v
        if meta:
            # The one pecli reads back, as a fixed-length byte string: reading a variable-length
            # string from an untrusted file can make libhdf5 loop or allocate gigabytes.
            ds.attrs.create(META_KEY, np.bytes_(json.dumps(meta).encode()))
        offset = ds.id.get_offset() if "dcpl" in kwargs else None
        if offset is None:
            start = 0
            for block in table.blocks(progress):
                # bfloat16 goes in as float32, which holds every bfloat16 value: HDF5's conversion
                # to the file's bfloat16 type is then exact.
                ds[start : start + len(block)] = block.astype(np.float32) if bf16 else table.file_values(block)
                start += len(block)
    if offset is not None:
        # The dataset's bytes, in the type it was declared with, where libhdf5 placed them: large
        # writes straight from each block (no conversion, no lock held), as a .npy's are.
        with open(path, "r+b") as fp:
            fp.seek(offset)
            write_rows(table, fp, progress, lambda b: np.asarray(table.file_values(b), dtype=table.file_dtype))


def _placed_in_advance() -> Any:
    """A contiguous dataset's creation properties that place its data in the file at once and
    write nothing there (no fill value): the bytes written at its offset afterwards are its values."""
    import h5py

    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_layout(h5py.h5d.CONTIGUOUS)
    dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
    dcpl.set_fill_time(h5py.h5d.FILL_TIME_NEVER)
    return dcpl


def bfloat16_type() -> Any:
    """HDF5's description of bfloat16: a 2-byte little-endian IEEE-style float with 1 sign, 8
    exponent (bias 127) and 7 mantissa bits, the layout of HDF5 2.0's ``H5T_FLOAT_BFLOAT16LE``.
    Any HDF5 reader converts it to a standard float (h5py reads it as float32, exactly)."""
    import h5py

    t = h5py.h5t.IEEE_F32LE.copy()
    t.set_fields(15, 7, 8, 0, 7)  # sign bit, exponent at bit 7 (8 bits), mantissa at 0 (7 bits)
    t.set_size(2)
    t.set_ebias(127)
    return t


def _is_bfloat16(t: Any) -> bool:
    """Whether an HDF5 datatype is bfloat16 (:func:`bfloat16_type`'s layout, either byte order)."""
    import h5py

    return (
        isinstance(t, h5py.h5t.TypeFloatID)
        and t.get_size() == 2
        and t.get_fields() == (15, 7, 8, 0, 7)
        and t.get_ebias() == 127
    )


def _open(path: Path, stack: ExitStack) -> Any:
    import h5py

    def open_(own: ExitStack) -> Any:
        try:
            return own.enter_context(h5py.File(path, "r"))
        except OSError as exc:
            raise unreadable(path, "HDF5 file", exc) from exc

    return kept(path, "h5", open_, stack)


def _datasets(f: Any) -> list[ArrayInfo]:
    import h5py

    found: list[ArrayInfo] = []

    def visit(name: str, link: Any) -> None:
        # visititems_links sees links without following them, so external links are never opened.
        if isinstance(link, h5py.HardLink):
            obj = f.get(name)
            if isinstance(obj, h5py.Dataset):
                found.append(
                    ArrayInfo(name, tuple(obj.shape), obj.dtype.name if obj.dtype.kind in "fiub" else str(obj.dtype))
                )

    f.visititems_links(visit)
    return found


#: Soft links followed while resolving one key (libhdf5's own default limit is 16).
MAX_SOFT_LINKS = 16
_OUTSIDE = "pecli reads nothing outside the file"


def _resolve(f: Any, key: str, where: str) -> str | None:
    """The path of hard links inside ``f`` that ``key`` names, or None when there is no such object.

    libhdf5 follows soft and external links anywhere on a path it is given, so the key is walked
    one link at a time: hard links are taken, soft links resolved again (from the root, or from
    their group for a relative path) at most ``MAX_SOFT_LINKS`` times, and any other link (an
    external or user-defined one) is refused before it is followed.  Only the returned path, made
    of hard links alone, is ever opened.
    """
    import h5py

    pending = [c for c in key.split("/") if c not in ("", ".")]
    here: list[str] = []  # hard-link names from the root to the current group
    group = f
    hops = 0
    while pending:
        part = pending.pop(0)
        link_name = "/".join([*here, part])
        try:
            link = group.get(part, getlink=True)
        except TypeError:  # h5py's "Unknown link type": a user-defined link class
            raise FormatError(f"{where}: {link_name} is a user-defined link; pecli does not follow it") from None
        if link is None:
            return None
        if isinstance(link, h5py.ExternalLink):
            raise FormatError(
                f"{where}: {link_name} is an external link to {link.path} in {link.filename}: "
                "pecli does not follow links out of the file"
            )
        if isinstance(link, h5py.SoftLink):
            hops += 1
            if hops > MAX_SOFT_LINKS:
                raise FormatError(
                    f"{where}: more than {MAX_SOFT_LINKS} soft links to follow (at {link_name} -> {link.path});"
                    " the links loop"
                )
            target = [c for c in str(link.path).split("/") if c not in ("", ".")]
            if str(link.path).startswith("/"):
                here, group = [], f
            pending[:0] = target
            continue
        if not isinstance(link, h5py.HardLink):
            raise FormatError(f"{where}: {link_name} is a link of an unknown kind; pecli does not follow it")
        here.append(part)
        if pending:
            group = group.get(part)
            if not isinstance(group, h5py.Group):
                return None
    return "/" + "/".join(here)


def _check_stored_here(ds: Any, where: str) -> None:
    """Refuse a dataset whose data lives in other files: a virtual dataset, or external storage."""
    if ds.is_virtual:
        raise FormatError(f"{where} is a virtual dataset{_sources(ds)}; {_OUTSIDE}")
    if ds.id.get_create_plist().get_external_count() > 0:
        files = ", ".join(sorted({str(e[0]) for e in ds.external or ()}))
        raise FormatError(f"{where} keeps its data in external files ({files}); {_OUTSIDE}")


def _sources(ds: Any) -> str:
    try:
        files = sorted({m.file_name for m in ds.virtual_sources()})
    except Exception:  # the names only decorate the message
        return ""
    return f" (its data is in {', '.join(files)})" if files else ""


#: The largest metadata attribute pecli reads (a recipe is a few hundred bytes).
_MAX_META_BYTES = 1 << 16


def _stored_recipe(ds: Any, info: dict[str, Any]) -> dict[str, Any]:
    """The recipe attribute, read only when its header says it is a small fixed-length string.

    The type and size come from the attribute's header; its data is read only after they check
    out, so a corrupt variable-length string (libhdf5 can loop on one, or allocate gigabytes) is
    never touched.
    """
    if META_KEY not in ds.attrs:
        return {}
    attr = ds.attrs.get_id(META_KEY)
    dtype, shape = attr.dtype, attr.shape
    if dtype.kind != "S" or not 0 < dtype.itemsize <= _MAX_META_BYTES or shape not in ((), (1,)):
        info["note"] = f"attribute {META_KEY} is not a small fixed-length string; ignored"
        return {}
    return decode_metadata(ds.attrs[META_KEY])


#: Seconds the forked probe may take to walk a file's structure (a healthy file takes milliseconds).
PROBE_SECONDS = 10.0
#: Address space the probe may add to what pecli already uses (a structure is kilobytes).
PROBE_MEMORY = 2 << 30


def _probe(path: Path, walk: Callable[[], Any], extra_seconds: float = 0.0) -> Any:
    """Run ``walk`` in a forked child first, within ``PROBE_SECONDS`` (and ``extra_seconds``) and
    ``PROBE_MEMORY``: its result.

    A clean error in the child is raised here as the same error; a child that runs out of time
    or memory, or dies of a signal, is a :class:`FormatError`.  Where there is no fork (Windows)
    ``walk`` simply runs here.  Ctrl-C or SIGTERM while the child runs kill it on the way out.
    """
    if not hasattr(os, "fork"):
        return walk()
    import resource  # noqa: F401  (for the child, which should import nothing itself)

    read_end, write_end = os.pipe()
    try:
        with warnings.catch_warnings():
            # Python 3.12+ (and JAX, once imported) warn that a fork of a threaded process may
            # deadlock the child.  This child takes no lock another thread can hold: h5py holds
            # its lock across fork, and the child prints nothing and imports only loaded modules.
            warnings.simplefilter("ignore")
            pid = os.fork()
    except OSError as exc:
        os.close(read_end)
        os.close(write_end)
        raise FormatError(
            f"cannot check {path} before reading it: no process to do it in ({exc.strerror or exc})"
        ) from exc
    if pid == 0:  # the child: never returns into the caller, whatever happens
        code = 1
        try:
            os.close(read_end)
            _confine_child(PROBE_SECONDS + extra_seconds)
            with open(write_end, "wb") as fp:
                fp.write(json.dumps(_child_outcome(walk)).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    answer, finished = b"", False
    try:
        poller = select.poll()
        poller.register(read_end, select.POLLIN)
        seconds = PROBE_SECONDS + extra_seconds
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if poller.poll(left * 1000):
                chunk = os.read(read_end, 1 << 16)
                if not chunk:
                    finished = True
                    break
                answer += chunk
    finally:
        os.close(read_end)
        if not finished:
            os.kill(pid, signal.SIGKILL)
        try:
            code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        except ChildProcessError:  # SIGCHLD ignored: the child was reaped without a status
            code = 0
    problem = "the file is corrupt or hostile"
    if not finished:
        raise FormatError(f"{path}: libhdf5 did not finish reading its structure within {seconds:g} s; {problem}")
    if code < 0:
        raise FormatError(
            f"{path}: libhdf5 died of {signal.Signals(-code).name} while reading its structure; {problem}"
        )
    if code != 0 or not answer:
        raise FormatError(f"{path}: reading its structure failed without a message (exit status {code}); {problem}")
    outcome: dict[str, Any] = json.loads(answer)
    if "memory" in outcome:
        raise FormatError(
            f"{path}: libhdf5 needed over {PROBE_MEMORY >> 30} GiB of memory to read its structure; {problem}"
        )
    if "error" in outcome:
        kind = getattr(errors, str(outcome["error"]), None)
        if not (isinstance(kind, type) and issubclass(kind, PecliInputError)):
            kind = FormatError
        raise kind(outcome["message"])
    if "bug" in outcome:  # not the file's fault: pecli's own walk raises it again, with its traceback
        return walk()
    return outcome["result"]


def _confine_child(seconds: float) -> None:
    """Limit the probe child: address space, a wall-clock alarm that outlives a killed parent, no stdio."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the parent, which kills the child
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGALRM, signal.SIG_DFL)  # default action: the child dies even inside C code
    signal.setitimer(signal.ITIMER_REAL, seconds + 1)
    # The answer goes through the pipe; the parent says everything that needs saying.  A pipe on
    # stdin or stdout must not wait for the child to let go of it either.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    if (faulthandler := sys.modules.get("faulthandler")) is not None:
        faulthandler.disable()  # it may write to its own copy of stderr: a crash is the parent's to report
    import resource  # Unix only, like fork; already loaded by _probe

    try:
        fd = os.open("/proc/self/statm", os.O_RDONLY)
        try:
            size = int(os.read(fd, 200).split()[0]) * resource.getpagesize()
        finally:
            os.close(fd)
    except (OSError, ValueError, IndexError):
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = size + PROBE_MEMORY
    if soft != resource.RLIM_INFINITY:
        cap = min(cap, soft)
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def _child_outcome(walk: Callable[[], Any]) -> dict[str, Any]:
    try:
        # The child's own kept files: it reuses none of the parent's h5py objects (libhdf5 may still
        # share an open file's state with the parent, as for any probe forked while the file is open).
        with kept_open():
            return {"result": walk()}
    except MemoryError:
        return {"memory": True}
    except PecliInputError as exc:
        return {"error": type(exc).__name__, "message": str(exc)}
    except BaseException as exc:  # a bug in pecli, not in the file
        return {"bug": repr(exc)}


def _list_h5(path: Path) -> list[ArrayInfo]:
    import h5py  # noqa: F401  (here, before the fork: not once in the child and again after it)

    found = _probe(path, lambda: [[a.key, list(a.shape), a.dtype] for a in _list_h5_unprobed(path)])
    return [ArrayInfo(key, tuple(shape), dtype) for key, shape, dtype in found]


def _list_h5_unprobed(path: Path) -> list[ArrayInfo]:
    with ExitStack() as stack:
        f = _open(path, stack)
        try:
            return _datasets(f)
        except Exception as exc:  # libhdf5 reports corrupt files in many ways
            raise unreadable(path, "HDF5 file", exc) from exc


def _read_h5(path: Path, key: str | None, stack: ExitStack) -> Table:
    """The dataset ``key`` (or the file's one table), once a forked child has read it unharmed
    (:func:`_probe`).  While kept files are active (:mod:`pecli.formats.kept`: a checkpoint
    scan) one child reads every dataset first, and those it read are not probed again: a fork a
    dataset cost 10 ms each (19 s for 2,000)."""
    import h5py  # noqa: F401  (here, before the fork: not once in the child and again after it)

    if keeping() and key is not None and key in kept(path, "h5 proved", lambda own: _proved(path), stack):
        return _read_h5_unprobed(path, key, stack)

    def walk() -> None:
        with ExitStack() as own:
            _read_h5_unprobed(path, key, own)

    _probe(path, walk)
    return _read_h5_unprobed(path, key, stack)


#: Seconds the child that reads every dataset of a file may take, a dataset (a healthy one: ~1 ms).
PROBE_SECONDS_A_DATASET = 0.01


def _proved(path: Path) -> frozenset[str]:
    """The datasets one forked child read unharmed, all in turn; none when the child did not
    finish (each dataset is then probed alone, and the one at fault named)."""
    try:
        keys = [a.key for a in _list_h5(path)]

        def walk() -> list[str]:
            read = []
            for key in keys:  # in the child's own kept_open: the file opened once
                try:
                    with ExitStack() as own:
                        _read_h5_unprobed(path, key, own)
                    read.append(key)
                except PecliInputError:
                    continue
            return read

        return frozenset(_probe(path, walk, len(keys) * PROBE_SECONDS_A_DATASET))
    except PecliInputError:
        return frozenset()


def _read_h5_unprobed(path: Path, key: str | None, stack: ExitStack) -> Table:
    try:
        return _read_h5_unchecked(path, key, stack)
    except FormatError:
        raise
    except Exception as exc:  # libhdf5 reports corrupt files in many ways
        raise unreadable(path, "HDF5 file", exc) from exc


def _read_h5_unchecked(path: Path, key: str | None, stack: ExitStack) -> Table:
    import h5py

    f = _open(path, stack)
    if key is not None:
        name = key.strip("/")
        where = f"{path}:{name}"
        target = _resolve(f, name, where)
        if target is None or not isinstance(f.get(target), h5py.Dataset):
            names = ", ".join(a.key for a in _datasets(f)[:8]) or "none"
            raise FormatError(f"{path} has no dataset {key!r}: its datasets are {names}")
    else:
        name = choose_key(path, None, _datasets(f))
        where = f"{path}:{name}"
        target = _resolve(f, name, where)
        if target is None:  # choose_key names only datasets reached through hard links
            raise FormatError(f"{path} has no dataset {name!r}")
    ds = f[target]  # a path of hard links only: opening it follows nothing
    if not isinstance(ds, h5py.Dataset):
        raise FormatError(f"{path} has no dataset {name!r}")
    _check_stored_here(ds, where)
    info: dict[str, Any] = {}
    meta = _stored_recipe(ds, info)
    compression = ds.compression or "none"
    if ds.compression_opts is not None:
        compression += f" (level {ds.compression_opts})"
    stored = ds.id.get_storage_size()
    info |= {
        "format": "hdf5",
        "dataset": "/" + name,
        "layout": f"chunked {ds.chunks}" if ds.chunks else "contiguous",
        "compression": compression,
        "storage size": stored,
        "file_size": path.stat().st_size,
    }
    data: Any = ds
    if stored == 0 and ds.size:
        # Nothing written: every value is the fill value.  HDF5 would still visit each unwritten
        # chunk of a row to fill it (seconds for one row of a file declaring 10⁶ × 10⁶ in (1, 8)
        # chunks); a broadcast view answers at once, with no memory.
        data = np.broadcast_to(np.asarray(ds.fillvalue, dtype=ds.dtype), ds.shape)
    storage = "bfloat16" if _is_bfloat16(ds.id.get_type()) else None  # h5py reads it as float32
    return array_table(data, f"{path}:{name}" if key else str(path), info, meta, storage=storage)


H5 = Format(
    name="h5",
    extensions=(".h5", ".hdf5"),
    summary="HDF5 dataset (default /pe) with the recipe as attributes; --compress gzip",
    writes_to="path",
    write=_write_h5,
    read=_read_h5,
    metadata="inline",
    bytes_per_value=lambda dt: dt.itemsize,
    list_keys=_list_h5,
    aliases=("hdf5",),
    sniff=lambda head: head.startswith(HDF5_MAGIC),
    title="HDF5",
    compresses=True,
    complex_dtypes=("complex64", "complex128"),
)
