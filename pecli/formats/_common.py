"""What every format shares: the registry's record of a format (:class:`Format`), what a reader
lists (:class:`ArrayInfo`) and a writer is asked (:class:`WriteOptions`), choosing an array of a
multi-array file, and the errors of a file a reader cannot read.

The metadata pecli writes beside a table is :mod:`pecli.formats.metadata`; the adapter from a
reader's array to a :class:`~pecli.table.Table` is :mod:`pecli.formats.arrays`."""

from __future__ import annotations

import errno
from collections.abc import Callable, Collection
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

import numpy as np

from pecli.dtypes import DTYPES
from pecli.errors import FormatError, PecliInputError, TableTooLargeError
from pecli.formats.metadata import META_KEY
from pecli.table import Progress, Table

#: Name of the table inside multi-array files pecli writes (h5 dataset, npz entry, tensor name).
DEFAULT_KEY = "pe"
#: The first bytes of a zip archive (an .npz; torch.save writes zips too).
ZIP_MAGIC = b"PK\x03\x04"


@dataclass(frozen=True)
class ArrayInfo:
    """One array inside a multi-array file, as ``inspect`` lists it."""

    key: str
    shape: tuple[int, ...]
    dtype: str


@dataclass(frozen=True)
class WriteOptions:
    key: str = DEFAULT_KEY
    #: HDF5 only: None, or ("gzip", level).
    compress: tuple[str, int] | None = None
    #: Text formats: significant digits; None means enough to round-trip exactly.
    digits: int | None = None


Writer = Callable[[Table, Any, WriteOptions, Progress | None], None]


Reader = Callable[[Path, str | None, ExitStack], Table]


Lister = Callable[[Path], list[ArrayInfo]]


#: A test of a file's first bytes (at least its first 64 kB, fewer when the file is shorter).
Sniffer = Callable[[bytes], bool]


@dataclass(frozen=True)
class Format:
    """A file format: every fact pecli knows of it, on one entry of the registry
    (:data:`pecli.formats.FORMATS`, which finds the entries of other packages too)."""

    name: str
    extensions: tuple[str, ...]
    summary: str
    #: "stream": writes to any binary stream (stdout too); "path": needs a seekable file.
    writes_to: Literal["stream", "path"]
    #: None for read-only formats (GGUF).
    write: Writer | None
    #: None for write-only formats (C header).
    read: Reader | None
    #: Where the recipe goes: in the file, in a FILE.json sidecar, or nowhere.
    metadata: Literal["inline", "sidecar", "none"]
    #: Rough lower bound of bytes per value on disk, for the free-space check.
    bytes_per_value: Callable[[np.dtype[Any]], float]
    #: Lists the arrays of multi-array formats (h5, npz, safetensors, pt).
    list_keys: Lister | None = None
    #: A library this format needs beyond pecli's own dependencies.
    requires: str | None = None
    aliases: tuple[str, ...] = field(default_factory=tuple)
    #: Whether its first bytes say it is this format and no other (how an unnamed stream is told).
    sniff: Sniffer | None = None
    #: Whether bytes could begin a file of this format (``--from NAME`` on a stream is refused at
    #: once when they cannot); the same test as ``sniff`` unless given.
    begins: Sniffer | None = None
    #: Its reader needs the bytes in order only, so a stream is read through a temporary copy;
    #: False: it seeks (HDF5, torch's zip), so a stream is refused.
    streamable: bool = False
    #: What its messages call it (its name otherwise): "HDF5", "PyTorch .pt".
    title: str | None = None
    #: Whether ``--compress`` applies to it.
    compresses: bool = False
    #: A text format: UTF-8 numbers, written with ``--digits`` significant digits.
    text: bool = False
    #: The complex dtypes it stores (``--dtype complex64``: Meta's ``freqs_cis``); a complex
    #: table is refused by the others, which are told its (real, imaginary) parts instead.
    complex_dtypes: tuple[str, ...] = ()

    def could_begin(self, head: bytes) -> bool:
        """Whether ``head`` could begin this format: a format with no test of its bytes takes any."""
        test = self.begins or self.sniff
        return test is None or test(head)

    @property
    def called(self) -> str:
        return self.title or self.name


def text_start(head: bytes) -> str | None:
    """``head`` as text, or None when it is not UTF-8 text (a control byte, an invalid sequence)."""
    import codecs

    try:
        text = codecs.getincrementaldecoder("utf-8")().decode(head, final=False)  # a cut character is fine
    except UnicodeDecodeError:
        return None
    if any(c < " " and c not in "\t\r\n" for c in text):
        return None
    return text


def choose_key(path: Path, key: str | None, arrays: list[ArrayInfo], names: Collection[str] | None = None) -> str:
    """The array to read: the one asked for, else 'pe', else the file's only table.  ``names``:
    the arrays' keys as a set, where a reader keeps one (a checkpoint scan asks each of N keys)."""
    if key is not None and names is not None and key in names:
        return key
    names = [a.key for a in arrays]
    if key is not None:
        if key not in names:
            shown = ", ".join(names[:8]) + (", …" if len(names) > 8 else "") or "none"
            raise FormatError(f"{path} has no array {key!r}: its arrays are {shown}")
        return key
    if DEFAULT_KEY in names:
        return DEFAULT_KEY
    tables = [a.key for a in arrays if len([s for s in a.shape if s != 1]) <= 2 and a.key != META_KEY]
    if len(names) == 1:
        return names[0]
    if not names:
        raise FormatError(f"{path} holds no arrays")
    if len(tables) == 1:
        return tables[0]
    shown = ", ".join(names[:8]) + (", …" if len(names) > 8 else "")
    raise FormatError(f"{path} holds several arrays ({shown}): choose one as {path}:KEY")


def first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def unreadable(path: object, what: str, exc: BaseException) -> PecliInputError:
    """The error for a file a reader failed on: "PATH is not a readable WHAT (why)", except where
    the machine, not the file, is the cause: memory the process may not have (an address-space
    limit refusing the map, an allocation NumPy cannot make) is said to be that."""
    if isinstance(exc, MemoryError) or getattr(exc, "errno", None) == errno.ENOMEM:
        return TableTooLargeError(
            f"reading {path} needs more memory than this process may use ({first_line(exc)}): "
            "raise the limit (ulimit -v, the container's memory) or read a smaller file"
        )
    return FormatError(f"{path} is not a readable {what} ({first_line(exc)})")


def text_digits(table: Table, options: WriteOptions) -> int:
    if options.digits is not None:
        return options.digits
    precision = DTYPES.get(table.dtype.name)
    return precision.digits if precision is not None else 17


def write_all(fp: IO[bytes], chunks: Any) -> None:
    for chunk in chunks:
        fp.write(chunk)
