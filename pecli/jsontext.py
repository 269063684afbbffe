"""JSON read from files and streams pecli did not write: parsed safely.

Pathological nesting or an integer of more digits than Python converts is invalid JSON (a
:class:`ValueError`), never a crash; the formats, the config reader and ``--positions @ids.json``
all read JSON through :func:`load_json`.
"""

from __future__ import annotations

import json
from typing import Any


class NumberTooLarge(ValueError):
    """A JSON integer with more digits than Python converts (a hostile file, not a table value)."""


def _parse_int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise NumberTooLarge(f"the integer {text[:8]}… has {len(text)} digits, too large to be a table value") from None


def load_json(text: str | bytes) -> Any:
    """``json.loads`` for untrusted text: pathological nesting or a huge integer is invalid JSON,
    not a crash."""
    try:
        return json.loads(text, parse_int=_parse_int)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


__all__ = ["NumberTooLarge", "load_json"]
