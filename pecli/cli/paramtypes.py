"""Click parameter types of pecli's options: registry-backed choices, spans, lists, compression."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click


class LazyChoice(click.Choice):
    """A ``click.Choice`` whose names come from a registry, read on first use."""

    def __init__(self, load: Callable[[], tuple[str, ...]], case_sensitive: bool = True) -> None:
        self._load = load
        self._names: tuple[str, ...] | None = None
        self.case_sensitive = case_sensitive

    @property
    def choices(self) -> tuple[str, ...]:
        if self._names is None:
            self._names = self._load()
        return self._names

    @choices.setter
    def choices(self, value: tuple[str, ...]) -> None:
        self._names = tuple(value)


class SpanType(click.ParamType):
    """``A:B`` (half-open), ``A:``, ``:B`` or ``A`` (just A)."""

    name = "A:B"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, tuple):
            return value
        text = str(value).strip()
        try:
            if ":" not in text:
                a = int(text)
                return (a, a + 1)
            left, right = text.split(":", 1)
            return (int(left) if left.strip() else None, int(right) if right.strip() else None)
        except ValueError:
            self.fail(f"{value!r} is not a span like 10:20, 10: or :20", param, ctx)


class IntListType(click.ParamType):
    """``1,8,64``: whole numbers separated by commas."""

    name = "N,N,…"

    def __init__(self, example: str) -> None:
        self.example = example

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, list):
            return value
        try:
            return [int(x) for x in str(value).split(",") if x.strip()]
        except ValueError:
            self.fail(f"{value!r} is not a list of whole numbers like {self.example}", param, ctx)


class CompressType(click.ParamType):
    """``gzip`` or ``gzip:LEVEL`` (0-9)."""

    name = "gzip[:LEVEL]"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, tuple):
            return value
        method, _, level = str(value).partition(":")
        if method != "gzip" or (level and not (level.isdigit() and 0 <= int(level) <= 9)):
            self.fail(f"{value!r} is not gzip or gzip:LEVEL with LEVEL 0-9", param, ctx)
        return (method, int(level) if level else 4)


__all__ = ["CompressType", "IntListType", "LazyChoice", "SpanType"]
