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
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pecli.errors import PecliInputError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import ArrayLike

    from pecli.recipe import Recipe
    from pecli.table import Table

#: ``A``, ``A:B`` (half-open, like --rows) or ``A:B:S`` (every S-th, as ``range``), separated by commas;
#: negative numbers only where signed ids are asked for (:func:`parse_ids`).
_ITEM = re.compile(r"\s*(-?\d+)\s*(?::\s*(-?\d+)\s*(?::\s*(-?\d+)\s*)?)?")
#: A real position (``--positions 0.5``: a diffusion timestep, a keras float position).
_REAL = re.compile(r"\s*(\d+\.\d*|\.\d+|\d+(?:\.\d*)?[eE][+-]?\d+)\s*")
#: More ids than this in a literal list are refused: write them to a file.
MAX_LITERAL_IDS = 1 << 20


def parse_ids(
    spec: str | ArrayLike, option: str, max_ndim: int = 2, whole: bool = True, signed: bool = False
) -> np.ndarray:
    """The ids a ``--positions``/``--token-ids`` value names: a comma list of ``A`` and ``A:B``
    (half-open ranges), or ``@FILE`` (one id per value: .npy of integers, or text/JSON numbers);
    or, from a script, the ids themselves (a list or an array of whole numbers).

    1-D for a list; a file may hold a 2-D batch (sequences × tokens), kept 2-D for
    :func:`fairseq_positions` (up to ``max_ndim`` axes: M-RoPE's ids are ``(3, batch, tokens)``).
    ``whole=False`` also takes real positions ≥ 0 (``0.5``; float64 when any is not whole);
    ``signed=True`` negative ones too (relative distances ``63:-64:-1``, ESPnet's and Transformer-XL's).
    """
    import numpy as np

    if not isinstance(spec, str):
        return _checked(spec, option, max_ndim, whole, signed)
    if spec.startswith("@"):
        return _read_ids(spec[1:], option, max_ndim, whole, signed)
    out: list[np.ndarray] = []
    total = 0
    for item in spec.split(","):
        m = _ITEM.fullmatch(item)
        real = None if whole or m is not None else _REAL.fullmatch(item)
        if real is not None:
            total += 1
            out.append(np.array([float(real.group(1))]))
            continue
        if m is None:
            raise PecliInputError(
                f"{option} {spec!r}: {item.strip()!r} is not a whole number or a range A:B[:S]: "
                f"give e.g. {option} 0:512,0:128 or {option} @ids.npy"
            )
        a = int(m.group(1))
        b = a + 1 if m.group(2) is None else int(m.group(2))
        step = 1 if m.group(3) is None else int(m.group(3))
        if step == 0:
            raise PecliInputError(f"{option} {spec!r}: the range {item.strip()} has a step of 0: give A:B:S with S ≠ 0")
        count = len(range(a, b, step))
        if count == 0:
            raise PecliInputError(
                f"{option} {spec!r}: the range {item.strip()} is empty: give A:B with A < B (B excluded), "
                "or A:B:-1 to count down"
            )
        total += count
        if total > MAX_LITERAL_IDS:
            raise PecliInputError(
                f"{option} names more than {MAX_LITERAL_IDS:,} ids: write them to a file and give {option} @FILE"
            )
        out.append(np.arange(a, b, step, dtype=np.int64))
    return _checked(np.concatenate(out), option, max_ndim, whole, signed)


def _read_ids(name: str, option: str, max_ndim: int, whole: bool = True, signed: bool = False) -> np.ndarray:
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
            if text.lstrip().startswith("["):  # JSON: nested lists keep their shape
                return _checked(_json_ids(text), f"{option} @{name}", max_ndim, whole, signed)
            values = re.split(r"[\s,\[\]]+", text.strip())
            ids = np.array([float(v) for v in values if v], dtype=np.float64)
            if "\n" in text.strip() and ids.size:
                rows = [r for r in text.strip().splitlines() if r.strip()]
                widths = {len([v for v in re.split(r"[\s,\[\]]+", r.strip()) if v]) for r in rows}
                if len(widths) == 1 and len(rows) > 1 and widths != {1}:
                    ids = ids.reshape(len(rows), -1)  # one sequence per line: a batch
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise PecliInputError(f"{option} @{name}: cannot read ids from {path} ({exc})") from exc
    return _checked(ids, f"{option} @{name}", max_ndim, whole, signed)


def _json_ids(text: str) -> Any:
    import numpy as np

    from pecli.jsontext import load_json  # guarded: nesting too deep is invalid JSON, not a crash

    try:
        return np.array(load_json(text), dtype=np.float64)
    except (ValueError, TypeError) as exc:  # not JSON, or ragged lists
        raise ValueError(f"not a JSON array of numbers with rows of equal length: {exc}") from exc


def _checked(ids: Any, where: str, max_ndim: int = 2, whole: bool = True, signed: bool = False) -> np.ndarray:
    """``ids`` as int64, refused unless they are whole numbers ≥ 0 in 1 to ``max_ndim`` axes
    (``whole=False``: real numbers ≥ 0 too, float64 when any is not whole; ``signed``: below 0 too)."""
    import numpy as np

    arr = np.asarray(ids)
    if not 1 <= arr.ndim <= max_ndim or arr.size == 0:
        extra = ", or M-RoPE ids (3, batch, tokens)" if max_ndim > 2 else ""
        raise PecliInputError(
            f"{where} holds an array of shape {arr.shape}: give a non-empty list of ids (1-D), or a batch (2-D)" + extra
        )
    if arr.dtype.kind not in "iuf" or (arr.dtype.kind == "f" and not np.all(np.isfinite(arr))):
        raise PecliInputError(f"{where} holds {arr.dtype} values that are not finite numbers: give integer ids")
    fractional = arr.dtype.kind == "f" and not np.all(arr == np.rint(arr))
    if fractional and whole:
        raise PecliInputError(f"{where} holds {arr.dtype} values that are not whole numbers: give integer ids")
    if (np.any(arr < 0) and not signed) or np.any(np.abs(arr) > 2**53):
        span = "−2**53..2**53" if signed else "0..2**53: positions count from 0"
        raise PecliInputError(f"{where} holds ids outside {span}")
    return arr.astype(np.float64 if fractional else np.int64)


def fairseq_positions(token_ids: np.ndarray, padding_idx: int) -> np.ndarray:
    """fairseq's ``make_positions``: per sequence (last axis), non-padding tokens numbered from
    ``padding_idx + 1``, padding tokens at ``padding_idx``."""
    import numpy as np

    mask = token_ids != padding_idx
    out: np.ndarray = (np.cumsum(mask, axis=-1) * mask + padding_idx).astype(np.int64)
    return out


def resolve_positions(
    positions: str | ArrayLike | None, token_ids: str | ArrayLike | None, padding_idx: int | None
) -> np.ndarray | None:
    """The positions (1-D) ``--positions`` or ``--token-ids`` give, or None when neither is given
    (``--positions`` may be real numbers: float64 then)."""
    if positions is not None and token_ids is not None:
        raise PecliInputError("give --positions or --token-ids, not both")
    if positions is not None:
        return parse_ids(positions, "--positions", whole=False, signed=True).reshape(-1)
    if token_ids is None:
        return None
    if padding_idx is None:
        raise PecliInputError(
            "--token-ids numbers tokens the fairseq way, from the table's padding index: give a recipe "
            "with a padding row (--padding-idx 1, or a preset such as fairseq or hf-m2m100)"
        )
    return fairseq_positions(parse_ids(token_ids, "--token-ids"), padding_idx).reshape(-1)


def token_ids(spec: str | ArrayLike) -> np.ndarray:
    """``--positions`` for a table whose tokens carry three ids (M-RoPE): ``(3, tokens)``.

    1-D ids are text tokens (three equal ids); a file may hold ``(3, tokens)`` or
    ``(3, batch, tokens)``, the ``position_ids`` transformers' ``get_rope_index`` returns (a batch
    is written sequence after sequence)."""
    import numpy as np

    ids = parse_ids(spec, "--positions", max_ndim=3)
    if ids.ndim == 1:
        return np.broadcast_to(ids, (3, ids.size))
    if ids.shape[0] != 3:
        raise PecliInputError(
            f"--positions {_named(spec)}: M-RoPE position ids have 3 rows (temporal, height, width), got an array of "
            f"shape {ids.shape}: give (3, tokens) or (3, batch, tokens) as get_rope_index returns them, or 1-D ids of "
            "text tokens"
        )
    return ids.reshape(3, -1)


def _named(spec: str | ArrayLike) -> str:
    return spec if isinstance(spec, str) else "(ids given as an array)"


def ids_table(recipe: Recipe, spec: str | ArrayLike) -> Table:
    """The rows of the tokens whose ids ``--positions`` gives, for a kind that builds rows from its
    tokens' own ids (``Recipe.rows_at``).  When the ids are the ones the recipe's rule makes for some
    sequence (checked on every id), the table is that recipe's; otherwise it has no recipe."""
    from pecli.recipe import format_value
    from pecli.table import Table

    ids = token_ids(spec)
    recipe.rows_at(ids[:, :1])  # what the kind cannot build from ids is refused before anything is written
    same = recipe.recipe_at(ids)
    if same is not None:
        return Table.from_recipe(same)
    # The parameters the ids stand in for (mrope's sequence) describe other rows: not named.
    params = " ".join(
        f"{k}={format_value(v)}" for k, v in recipe.params().items() if k not in recipe.ids_stand_in and k != "dtype"
    )
    source = f"{recipe.kind} {params} at the position ids of {_named(spec)}"
    info = {"positions": f"{ids.shape[1]} tokens at the position ids of {_named(spec)}, of {recipe.kind}"}
    return Table(BuiltRows(recipe, ids, recipe.rows_at), None, source, info)


def rows_at_positions(
    table: Table, positions: str | ArrayLike | None = None, token_ids: str | ArrayLike | None = None
) -> Table:
    """The rows of ``table`` at ``positions`` (in any order, repeats allowed), or of the tokens
    ``token_ids`` numbered fairseq's way from the table's padding row; the table itself when
    neither is given.  Each is an array of integers or text as ``--positions`` takes it
    (``"0:512,0:128"``, ``"@ids.npy"``).  A kind whose tokens carry ids of their own (M-RoPE)
    builds the rows of those ids instead of looking positions up."""
    if positions is None and token_ids is None:
        return table
    recipe = table.recipe
    if table.computed and recipe is not None and recipe.has_token_ids:
        if token_ids is not None:
            raise PecliInputError(
                f"--token-ids numbers tokens the fairseq way; give this {recipe.kind} table's ids with --positions"
            )
        assert positions is not None
        return ids_table(recipe, positions)
    ids = resolve_positions(positions, token_ids, recipe.padding_row if recipe is not None else None)
    if ids is None:
        return table
    if recipe is not None and recipe.row_label != "pos":
        option = "--positions" if positions is not None else "--token-ids"
        raise PecliInputError(f"{option} picks positions; the rows of this {recipe.kind} table are {recipe.row_label}s")
    if ids.dtype.kind == "f" or ids.min() < 0:  # fractional or signed: built from the formula, not looked up
        return real_positions_table(table, ids)
    return table.gather(ids)


def real_positions_table(table: Table, positions: np.ndarray) -> Table:
    """The rows at real (fractional) positions, for a recipe whose formula takes them
    (:meth:`Recipe.rows_at_real`); each must lie in the table's span ``[start, start + len)``.
    Written without the recipe, like any rows at positions given."""
    import numpy as np

    from pecli.table import Table

    recipe = table.recipe
    kind = recipe.kind if recipe is not None else None
    signed = bool(np.any(positions < 0))
    if not table.computed or recipe is None or recipe.rows_at_real(positions[:1]) is None:
        what = f"a {kind} table's rows are" if kind else "a file's rows are"
        if signed:
            given, rows = f"negative positions (e.g. {float(positions.min()):g})", "positions from 0: give numbers ≥ 0"
        else:
            given, rows = (
                f"fractional positions (e.g. {_first_fraction(positions)})",
                "whole positions: give whole numbers",
            )
        raise PecliInputError(
            f"--positions holds {given}, and {what} {rows}, or a sinusoidal recipe, whose formula takes any real "
            "position (timesteps, ESPnet's relative distances)"
        )
    first, n = table.start, table.shape[0]
    # A relative distance −p lies in a table that reaches p (ESPnet's RelPositionalEncoding(max_len)
    # covers −(max_len−1)…max_len−1).
    outside = (positions < first) & ~((positions < 0) & (-positions < first + n)) | (positions >= first + n)
    if outside.any():
        p = float(positions[int(outside.argmax())])
        reach = f"−{first + n - 1}..{first + n} for relative distances, " if signed else ""
        span = f"{first}..{first + n} ({reach}end excluded)"
        raise PecliInputError(f"position {p:g} is outside the table's span {span}: give a larger --len")
    positions = positions.astype(np.float64)
    source = f"{recipe.kind} {recipe.describe(short=True)}"
    info = {**table.info, "positions": f"{len(positions)} rows at the real positions given, of {source}"}
    built = BuiltRows(recipe, positions, recipe.rows_at_real)  # type: ignore[arg-type]  # checked: not None above
    return Table(built, None, source, info, dict(table.provenance), table.storage, positions)


def _first_fraction(positions: np.ndarray) -> str:
    import numpy as np

    return f"{float(positions[int(np.argmax(positions != np.rint(positions)))]):g}"


class BuiltRows:
    """An array-like of rows a recipe builds for given ids, a slice at a time: ``build(ids[..., a:b])``
    (``Recipe.rows_at`` of M-RoPE's ``(3, tokens)`` ids, ``Recipe.rows_at_real`` of real positions)."""

    def __init__(self, recipe: Recipe, ids: np.ndarray, build: Callable[[np.ndarray], np.ndarray]) -> None:
        from pecli.dtypes import numpy_dtype

        self.ids, self.build = ids, build
        self.shape = (int(ids.shape[-1]), recipe.shape[1])
        self.dtype = numpy_dtype(recipe.dtype)

    def __getitem__(self, key: slice) -> Any:
        import numpy as np

        start, stop, _ = key.indices(self.shape[0])
        return self.build(np.asarray(self.ids[..., start:stop]))


__all__ = [
    "MAX_LITERAL_IDS",
    "BuiltRows",
    "fairseq_positions",
    "ids_table",
    "parse_ids",
    "real_positions_table",
    "resolve_positions",
    "rows_at_positions",
    "token_ids",
]
