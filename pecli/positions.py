"""Explicit positions: the rows of a table for any list of positions, not only ``start … start+len−1``.

Packed sequences whose positions restart, a batch with padding, a KV cache read back in pieces:
frameworks look rows up by position ids.  ``--positions`` gives them as a list (``0:4,0:3``: two
packed sequences) or a file (``@ids.npy``); ``--token-ids`` gives token ids instead and computes
the positions the fairseq way (``fairseq.utils.make_positions``, also HuggingFace's M2M100,
XGLM and RoBERTa ``create_position_ids_from_input_ids``): each non-padding token is numbered from
``padding_idx + 1`` along its sequence, every padding token gets ``padding_idx`` (the table's
zero row).  A file's ids are read once (memory-mapped for .npy); the table is still built and
written in row blocks.

>>> parse_ids("0:3,7,2:4", "--positions").tolist()
[0, 1, 2, 7, 2, 3]
>>> import numpy as np
>>> fairseq_positions(np.array([[5, 6, 7], [5, 1, 1]]), padding_idx=1).tolist()
[[2, 3, 4], [2, 1, 1]]
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pecli.errors import PecliInputError

if TYPE_CHECKING:
    import numpy as np

#: ``A``, or ``A:B`` (half-open, like --rows), separated by commas.
_ITEM = re.compile(r"\s*(\d+)\s*(?::\s*(\d+)\s*)?")
#: More ids than this in a literal list are refused: write them to a file.
MAX_LITERAL_IDS = 1 << 20


def parse_ids(spec: str, option: str) -> np.ndarray:
    """The ids a ``--positions``/``--token-ids`` value names: a comma list of ``A`` and ``A:B``
    (half-open ranges), or ``@FILE`` (one id per value: .npy of integers, or text/JSON numbers).

    1-D for a list; a file may hold a 2-D batch (sequences × tokens), kept 2-D for
    :func:`fairseq_positions`.
    """
    import numpy as np

    if spec.startswith("@"):
        return _read_ids(spec[1:], option)
    out: list[np.ndarray] = []
    total = 0
    for item in spec.split(","):
        m = _ITEM.fullmatch(item)
        if m is None:
            raise PecliInputError(
                f"{option} {spec!r}: {item.strip()!r} is not a whole number ≥ 0 or a range A:B: "
                f"give e.g. {option} 0:512,0:128 or {option} @ids.npy"
            )
        a = int(m.group(1))
        b = a + 1 if m.group(2) is None else int(m.group(2))
        if b <= a:
            raise PecliInputError(f"{option} {spec!r}: the range {a}:{b} is empty: give A:B with A < B (B excluded)")
        total += b - a
        if total > MAX_LITERAL_IDS:
            raise PecliInputError(
                f"{option} names more than {MAX_LITERAL_IDS:,} ids: write them to a file and give {option} @FILE"
            )
        out.append(np.arange(a, b, dtype=np.int64))
    return np.concatenate(out)


def _read_ids(name: str, option: str) -> np.ndarray:
    import numpy as np

    path = Path(name)
    if not name:
        raise PecliInputError(f"{option} @ needs a file name: give {option} @ids.npy")
    if not path.is_file():
        what = "is not a file" if path.exists() else "does not exist"
        raise PecliInputError(f"{option} @{name}: {path} {what}: check the path")
    try:
        if path.suffix.lower() == ".npy":
            ids: Any = np.load(path, mmap_mode="r", allow_pickle=False)
        else:
            text = path.read_text(encoding="utf-8")
            values = re.split(r"[\s,\[\]]+", text.strip())
            ids = np.array([float(v) for v in values if v], dtype=np.float64)
            if "\n" in text.strip() and ids.size:
                rows = [r for r in text.strip().splitlines() if r.strip()]
                widths = {len([v for v in re.split(r"[\s,\[\]]+", r.strip()) if v]) for r in rows}
                if len(widths) == 1 and len(rows) > 1 and widths != {1}:
                    ids = ids.reshape(len(rows), -1)  # one sequence per line: a batch
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise PecliInputError(f"{option} @{name}: cannot read ids from {path} ({exc})") from exc
    return _checked(ids, f"{option} @{name}")


def _checked(ids: Any, where: str) -> np.ndarray:
    """``ids`` as int64, refused unless they are 1-D or 2-D whole numbers ≥ 0."""
    import numpy as np

    arr = np.asarray(ids)
    if arr.ndim not in (1, 2) or arr.size == 0:
        raise PecliInputError(
            f"{where} holds an array of shape {arr.shape}: give a non-empty list of ids (1-D), or a batch (2-D)"
        )
    if arr.dtype.kind not in "iuf" or (arr.dtype.kind == "f" and not np.all(np.isfinite(arr) & (arr == np.rint(arr)))):
        raise PecliInputError(f"{where} holds {arr.dtype} values that are not whole numbers: give integer ids")
    if np.any(arr < 0) or np.any(arr > 2**53):
        raise PecliInputError(f"{where} holds ids outside 0..2**53: positions count from 0")
    return arr.astype(np.int64)


def fairseq_positions(token_ids: np.ndarray, padding_idx: int) -> np.ndarray:
    """fairseq's ``make_positions``: per sequence (last axis), non-padding tokens numbered from
    ``padding_idx + 1``, padding tokens at ``padding_idx``."""
    import numpy as np

    mask = token_ids != padding_idx
    return (np.cumsum(mask, axis=-1) * mask + padding_idx).astype(np.int64)


def resolve_positions(positions: str | None, token_ids: str | None, padding_idx: int | None) -> np.ndarray | None:
    """The positions (1-D) ``--positions`` or ``--token-ids`` give, or None when neither is given."""
    if positions is not None and token_ids is not None:
        raise PecliInputError("give --positions or --token-ids, not both")
    if positions is not None:
        return parse_ids(positions, "--positions").reshape(-1)
    if token_ids is None:
        return None
    if padding_idx is None:
        raise PecliInputError(
            "--token-ids numbers tokens the fairseq way, from the table's padding index: give a recipe "
            "with a padding row (--padding-idx 1, or a preset such as fairseq or hf-m2m100)"
        )
    return fairseq_positions(parse_ids(token_ids, "--token-ids"), padding_idx).reshape(-1)


__all__ = ["MAX_LITERAL_IDS", "fairseq_positions", "parse_ids", "resolve_positions"]
