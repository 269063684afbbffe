"""What pecli writes beside a table so that it reads the recipe back: the one metadata schema (the
recipe's parameters and what was done to the table since), the fingerprint that ties it to the data,
and the ``FILE.json`` sidecar of formats with no room for it."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import numpy as np

from pecli.dtypes import DTYPES
from pecli.jsontext import load_json
from pecli.recipe import SCHEMA
from pecli.table import Table

#: The schema of a FILE.json sidecar (formats with no room for metadata: .npy, text).
SIDECAR_SCHEMA = "pecli-sidecar/1"
#: Metadata that says what was done to a table after it was built (``export --dtype``,
#: ``--resample``), kept through reads and writes with or without a recipe.
PROVENANCE_KEYS = ("converted_from", "resampled_from", "resampled_with")
#: Entry/attribute holding the JSON metadata in formats that store it next to the data.
META_KEY = "pecli_recipe"


def table_metadata(table: Table) -> dict[str, Any]:
    """The one metadata schema: the recipe's parameters plus provenance notes (flat JSON scalars)."""
    if table.recipe is None and not table.provenance:
        return {}
    from pecli._version import __version__

    meta = table.recipe.to_metadata() if table.recipe is not None else {"schema": SCHEMA, "pecli_version": __version__}
    meta.update(table.provenance)
    meta["fingerprint"] = fingerprint(table)
    return meta


#: Rows a fingerprint hashes: this many windows of this many rows, spread through the table.
FINGERPRINT_WINDOWS, FINGERPRINT_ROWS = 8, 8


def fingerprint(table: Table) -> str:
    """What ties stored metadata to its data: the data's shape, dtype and bytes, and a hash of 64
    rows spread through it (head, tail and between; not every byte, so that writing and reading
    stay at disk speed).  Data rewritten by other code (``np.save`` over a pecli file) no longer
    matches, and its stored recipe is ignored."""
    import hashlib

    from pecli.table import spread_windows

    n, d = table.shape
    # bfloat16 read as float32 hashes as bfloat16; complex numbers as their parts (the recipe's dtype)
    name = table.storage if table.storage in DTYPES else table.dtype.name
    h = hashlib.blake2b(f"{n}x{d}:{name}".encode(), digest_size=12)
    step = table.block_rows()  # windows of wide rows (an ALiBi bias: 64 heads × 2M keys) a block at a time
    for a, b in spread_windows(n, FINGERPRINT_WINDOWS, FINGERPRINT_ROWS):
        for r in range(a, b, step):
            rows = np.ascontiguousarray(table.rows(r, min(b, r + step)))
            if name == "bfloat16":
                rows = (rows.view(np.uint32) >> 16).astype("<u2") if rows.dtype == np.float32 else rows.view("<u2")
            h.update(rows.astype(rows.dtype.newbyteorder("<"), copy=False).tobytes())
    itemsize = DTYPES[name].itemsize if name in DTYPES else table.dtype.itemsize
    return f"{n * d * itemsize}:{h.hexdigest()}"


def decode_metadata(text: Any, key: str | None = None) -> dict[str, Any]:
    """Parse stored JSON metadata; anything unreadable counts as none (never an error).

    ``key``: in a multi-array file the metadata names the array it describes; for any other
    array it is none.
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    try:
        meta = load_json(text)
    except (TypeError, ValueError):
        return {}
    if not isinstance(meta, dict) or (key is not None and meta.get("key", key) != key):
        return {}
    return meta


#: A sidecar is a few hundred bytes (a LongRoPE recipe a few kB): anything larger is not ours.
MAX_SIDECAR_BYTES = 64 << 10


def read_sidecar(sidecar: Path, shape: tuple[int, ...], info: dict[str, Any]) -> dict[str, Any]:
    try:
        st = sidecar.stat()
    except OSError:
        return {}
    if not stat.S_ISREG(st.st_mode):
        return {}  # a FIFO or a device in the sidecar slot would block or never end: not ours
    if st.st_size > MAX_SIDECAR_BYTES:
        info["note"] = f"{sidecar.name} is {st.st_size} bytes, too large for a pecli sidecar; ignored"
        return {}
    try:
        with open(sidecar, "rb") as fp:
            doc = load_json(fp.read(MAX_SIDECAR_BYTES + 1).decode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        info["note"] = f"sidecar {sidecar.name} is not valid JSON; ignored"
        return {}
    if not isinstance(doc, dict) or doc.get("schema") != SIDECAR_SCHEMA or not isinstance(doc.get("recipe"), dict):
        return {}
    if not isinstance(doc.get("shape"), list) or tuple(doc["shape"]) != shape:
        info["note"] = f"sidecar {sidecar.name} describes shape {doc.get('shape')}, not {shape}; ignored"
        return {}
    info["metadata"] = f"sidecar {sidecar.name}"
    recipe: dict[str, Any] = doc["recipe"]
    return recipe


def is_pecli_sidecar(path: Path) -> bool:
    """Whether ``path`` holds a pecli sidecar (a regular file, bounded, with the sidecar schema)."""
    return _sidecar_state(path) == "pecli"


def is_foreign_file(path: Path) -> bool:
    """Whether ``path`` holds something other than a pecli sidecar: a file pecli must not replace.

    A file that vanishes while being looked at is absent, not foreign: another pecli writing the
    same ``-o`` removed its old sidecar a moment ago (``pecli.atomic``), which is no reason to refuse.
    """
    return _sidecar_state(path) == "other"


def _sidecar_state(path: Path) -> str:
    """``"absent"``, ``"pecli"`` (a pecli sidecar) or ``"other"`` (anything else at ``path``)."""
    try:
        st = path.stat()
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_SIDECAR_BYTES:
            return "other"
        doc = load_json(path.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        return "absent"
    except (OSError, ValueError, UnicodeDecodeError):
        return "other"
    return "pecli" if isinstance(doc, dict) and doc.get("schema") == SIDECAR_SCHEMA else "other"


def sidecar_text(table: Table) -> str:
    doc = {
        "schema": SIDECAR_SCHEMA,
        "shape": list(table.shape),
        "dtype": table.dtype.name,
        "recipe": table_metadata(table),
    }
    return json.dumps(doc, indent=2) + "\n"
