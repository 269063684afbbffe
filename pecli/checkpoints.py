"""A checkpoint as a whole: which of its arrays are positional tables, what made each, and two
checkpoints compared key by key.

    pecli identify model.safetensors               every positional array, its recipe or "learned"
    pecli diff old.safetensors new.safetensors      the positional arrays key by key, as h5diff does

A multi-array file (.safetensors, .npz, .h5, .pt, .gguf) named without ``:KEY`` is a checkpoint to
``identify`` and ``diff``.  Which of its arrays are positional (:func:`positional`) is told without
reading the others: a float array whose name says so (``pos``, ``position``, ``wpe``, ``rope``,
``rotary``, ``freqs``, ``inv_freq``, ``cos_cached``, ``alibi``, …), or whose first row is the row a
formula starts with (read alone): every value 0 or 1 with both present (a sinusoid at position 0,
sin 0 and cos 0), or every value 1 (a cos cache).  Integer arrays (``position_ids`` buffers) are
no tables.  Each positional array is then identified (proved on its every row) or compared, one at
a time, so memory holds one array's blocks, not the checkpoint.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from pecli.errors import PecliInputError

if TYPE_CHECKING:
    from pecli.diff import Comparison
    from pecli.formats import ArrayInfo
    from pecli.identification import Identification
    from pecli.table import Table

#: Words in an array's name that say it holds positions (matched as parts of the name).
_NAMED = re.compile(
    r"(^|[._/\-])(pos|position|positions|wpe|pe|rope|rotary|freqs?|inv_freq|freqs_cis|cos_cached|sin_cached"
    r"|cos|sin|alibi|slopes|relative_attention_bias|pos_embed|pos_embedding|position_embeddings?|rope_freqs)"
    r"([._/\-\d]|$)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Entry:
    """One array of a checkpoint: whether it is positional and why (``"name"``, ``"first row"``,
    or why not), and what was found: an :class:`~pecli.identification.Identification`, or the
    one-line error that stopped its reading (the scan goes on)."""

    key: str
    shape: tuple[int, ...]
    dtype: str
    why: str
    positional: bool
    found: Identification | None = None
    error: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "shape": list(self.shape),
            "dtype": self.dtype,
            "positional": self.positional,
            "why": self.why,
            "identification": self.found.to_dict() if self.found is not None else None,
            "error": self.error or None,
        }


def positional(info: ArrayInfo, first_row: Callable[[], np.ndarray]) -> tuple[bool, str]:
    """Whether the array ``info`` is a positional table, and why; ``first_row`` reads its first
    row (only called when the name does not tell)."""
    if not _floats(info.dtype):
        return False, f"{info.dtype} values"
    if int(np.prod(info.shape)) < 2:
        return False, "fewer than 2 values"
    if _NAMED.search(info.key):
        return True, "name"
    row = np.asarray(first_row(), dtype=np.float64).reshape(-1)
    if row.size >= 2 and np.all((row == 0) | (row == 1)) and (np.all(row == 1) or (row == 0).any()):
        return True, "first row"
    return False, "neither its name nor its first row says position"


def _probed(info: ArrayInfo, table: Table) -> tuple[bool, str]:
    return positional(info, lambda: _first_row(table))


def _first_row(table: Table) -> np.ndarray:
    """Row 0 of ``table``, as float64.  A memory-mapped array (safetensors, .npy) is read without
    the readahead around its page fault, which on a disk that reads ahead 8 MB took most of each
    skipped tensor: scanning a 1 GB checkpoint not in the page cache read all of it from disk
    (2.12 million sectors for 200 tensors; 40 probes alone read 265 MB)."""
    from pecli.libc import MADV_NORMAL, MADV_RANDOM, advise

    data = table.data
    mapped = isinstance(data, np.memmap) and data.size > 0
    if mapped:
        advise(data.ctypes.data, data.nbytes, MADV_RANDOM)
    try:
        return np.asarray(table.rows(0, 1), dtype=np.float64)
    finally:
        if mapped:  # a positional table is then read whole: readahead helps again
            advise(data.ctypes.data, data.nbytes, MADV_NORMAL)


def _floats(dtype: str) -> bool:
    """Whether a listing's dtype (NumPy's name, or a format's own: safetensors' ``i64``, ``bf16``) is a float.
    bfloat16 first: ml_dtypes' type, once loaded, is a NumPy dtype but no ``np.floating``."""
    if dtype.lower() in ("bfloat16", "bf16"):
        return True
    try:
        return bool(np.issubdtype(np.dtype(dtype), np.floating))
    except TypeError:
        return dtype.lower().startswith(("f16", "f32", "f64"))


def scan(
    path: str, fmt: str | None, arrays: list[ArrayInfo], progress: Callable[[int], None] | None = None
) -> Iterator[Entry]:
    """Each array of the checkpoint ``path``: skipped, or identified when positional (one at a time).
    The file is opened and listed once for all of them (:class:`~pecli.formats.KeptFiles`); an
    array is probed as cheaply as its format allows (its first row), and a positional one read
    again, whole, for its identification.  An array with the bytes of one identified before (each
    layer's ``inv_freq`` of a GPT-NeoX or Pythia checkpoint: 65 ms each) takes its identification,
    renamed (:class:`pecli.repeats.Repeats`)."""
    from pecli.formats import KeptFiles, open_table
    from pecli.identification import identify
    from pecli.repeats import Repeats

    @contextmanager
    def reopen(key: str) -> Iterator[tuple[Table]]:
        with open_table(path, fmt, key) as table:
            yield (table,)

    identified: Repeats[Identification] = Repeats(
        reopen,
        lambda found, sources: replace(found, source=sources[0]),
        lambda found: {k: v for k, v in found.to_dict().items() if k not in ("source", "check")},
    )
    with KeptFiles() as files:
        for info in arrays:
            try:
                with files.active(probing=True), open_table(path, fmt, info.key) as table:
                    is_pe, why = _probed(info, table)
                found = None
                if is_pe:
                    with files.active(), open_table(path, fmt, info.key) as table:
                        found = identified.result(info.key, (table,), functools.partial(identify, table, nearest=1))
                entry = Entry(info.key, info.shape, info.dtype, why, is_pe, found)
            except PecliInputError as exc:  # an array that cannot be read is listed as such
                entry = Entry(info.key, info.shape, info.dtype, "unreadable", False, error=str(exc))
            yield entry  # outside files.active(): what the consumer opens meanwhile is its own
            if progress is not None:
                progress(1)


@dataclass(frozen=True)
class KeyComparison:
    """One key of two checkpoints: its comparison, or why there is none (only in A, not positional…)."""

    key: str
    comparison: Comparison | None
    note: str = ""

    @property
    def same(self) -> bool:
        return self.comparison is not None and self.comparison.same


def compare_checkpoints(
    a: str,
    b: str,
    fmt: str | None,
    arrays: tuple[list[ArrayInfo], list[ArrayInfo]],
    progress: Callable[[int], None] | None = None,
    **tolerances: Any,
) -> Iterator[KeyComparison]:
    """The positional arrays of checkpoints ``a`` and ``b`` (by name or first row, in either)
    compared key by key with :func:`pecli.diff.compare`; a key in one only is reported as such.
    A pair with the bytes of a pair compared before (each layer's ``inv_freq`` of two GPT-NeoX
    checkpoints: 0.24 s each, its causes fitted) takes that comparison, renamed
    (:class:`pecli.repeats.Repeats`)."""
    from pecli.diff import compare
    from pecli.formats import KeptFiles, open_table
    from pecli.repeats import Repeats

    @contextmanager
    def reopen(key: str) -> Iterator[tuple[Table, Table]]:
        with open_table(a, fmt, key) as ta, open_table(b, fmt, key) as tb:
            yield ta, tb

    def unnamed(found: Comparison) -> dict[str, Any]:
        data = found.to_dict()
        data["a"], data["b"] = ({k: v for k, v in data[side].items() if k != "source"} for side in "ab")
        return data

    def positional(files: KeptFiles, side: str, info: ArrayInfo, key: str) -> bool:
        with files.active(probing=True), open_table(side, fmt, key) as table:
            return _probed(info, table)[0]

    in_a, in_b = ({i.key: i for i in side} for side in arrays)
    compared: Repeats[Comparison] = Repeats(
        reopen, lambda found, sources: replace(found, source_a=sources[0], source_b=sources[1]), unnamed
    )
    with KeptFiles() as files:  # each file opened and listed once for all its keys
        for key in dict.fromkeys([*in_a, *in_b]):
            found: KeyComparison | None
            try:
                if key not in in_a or key not in in_b:
                    info = in_a.get(key) or in_b[key]
                    side = a if key in in_a else b
                    only = f"only in {'A' if key in in_a else 'B'}"
                    found = KeyComparison(key, None, only) if positional(files, side, info, key) else None
                elif positional(files, a, in_a[key], key) or positional(files, b, in_b[key], key):
                    with files.active(), open_table(a, fmt, key) as ta, open_table(b, fmt, key) as tb:
                        work = functools.partial(compare, ta, tb, top=0, **tolerances)
                        found = KeyComparison(key, compared.result(key, (ta, tb), work))
                else:
                    found = None
            except PecliInputError as exc:
                found = KeyComparison(key, None, f"unreadable: {exc}")
            if found is not None:
                yield found  # outside files.active(): what the consumer opens meanwhile is its own
            if progress is not None:
                progress(1)


def checkpoint_arrays(source: str, fmt: str | None) -> list[ArrayInfo] | None:
    """The arrays of ``source`` when it is a multi-array file named without ``:KEY`` (and not a
    model's settings file, :mod:`pecli.model_files`), else None."""
    from pecli.formats import list_arrays
    from pecli.model_files import settings_file
    from pecli.sources import is_recipe_spec, is_stdin, split_file_key

    if not source or is_recipe_spec(source) or is_stdin(source):
        return None
    path, key = split_file_key(source)
    if key is not None or not Path(path).exists() or settings_file(path, key, fmt):
        return None
    arrays = list_arrays(path, fmt)
    return arrays if arrays is not None and len(arrays) > 1 else None


__all__ = ["Entry", "KeyComparison", "checkpoint_arrays", "compare_checkpoints", "positional", "scan"]
