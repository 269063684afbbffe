"""Assertions for the tests of code that builds positional tables, as ``numpy.testing`` has for arrays.

``torch.allclose`` says *that* two caches differ; :func:`assert_table` says why, in the failure
message pytest shows: ``pecli diff``'s report (verdict, largest differences, the likely cause in the
words of the table's own kind)::

    from pecli.testing import assert_table

    def test_rotary_cache():
        cos = my_model.rotary.cos_cached[:4096]            # a tensor, an array, a pecli Table
        assert_table(cos, "llama3:len=4096")                # a preset, recipe or file (a SOURCE)
        assert_table(cos, pecli.Rope(length=4096, dim=128, base=500000), ulps=2)

This module is public API (``pecli.testing``), like the names in ``pecli.__all__``.
"""

from __future__ import annotations

from contextlib import ExitStack
from typing import Any

from pecli.table import Table, as_table


def assert_table(
    actual: Any,
    expected: Any,
    *,
    atol: float = 0.0,
    rtol: float = 0.0,
    ulps: int = 0,
    equal_nan: bool = True,
    top: int = 5,
) -> None:
    """Raise ``AssertionError`` unless ``actual`` equals ``expected`` within the tolerances, with
    ``pecli diff``'s report as the message (its ``top`` worst elements and rows).

    Each side is an array (NumPy, or a CPU tensor: torch, JAX; bfloat16 taken exactly), a
    :class:`~pecli.Table`, a recipe (``pecli.Rope(...)``) or a SOURCE string: a file, ``FILE:KEY``, a
    preset or recipe operand (``"llama3:len=4096"``), a model's ``config.json`` or GGUF file.
    An element matches when ``|a − b| ≤ atol + rtol·|b|`` (``expected`` is the reference), or when
    at most ``ulps`` values of the narrower dtype lie between them.  Shapes must agree.
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not this one
    from pecli.diff import compare

    with ExitStack() as stack:
        a = _table(actual, "actual", stack)
        b = _table(expected, "expected", stack)
        result = compare(a, b, atol=atol, rtol=rtol, ulps=ulps, equal_nan=equal_nan, top=top)
        if not result.same:
            raise AssertionError(f"\n{result}")


def _table(x: Any, name: str, stack: ExitStack) -> Table:
    if isinstance(x, str):
        from pecli.sources import open_source

        table: Table = stack.enter_context(open_source(x))
        return table
    return as_table(x, name)


__all__ = ["assert_table"]
