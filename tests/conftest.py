from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result

from pecli.cli import cli

WIDTH = "80"


@pytest.fixture
def run() -> Callable[..., Result]:
    """Invoke the CLI like a user would: fixed 80-column terminal, no colour."""
    runner = CliRunner()

    def invoke(*args: str | Path, input: bytes | str | None = None) -> Result:
        return runner.invoke(
            cli, [str(a) for a in args], input=input, env={"COLUMNS": WIDTH, "NO_COLOR": "1", "TERM": "dumb"}
        )

    return invoke


def reference(length: int, dim: int, base: float = 10000.0, layout: str = "interleaved", start: int = 0) -> np.ndarray:
    """Float64 table written from the published formula, element by element in plain Python.

    HuggingFace (`SinusoidalPositionalEmbedding`): angle = pos / base^(2·(j//2)/d); even j → sin, odd j → cos;
    interleaved keeps that order, split puts all sin columns (⌈d/2⌉ of them) first.
    """
    angles = [[pos / base ** (2 * (j // 2) / dim) for j in range(dim)] for pos in range(start, start + length)]
    enc = np.array(angles, dtype=np.float64).reshape(length, dim)
    out = np.empty((length, dim))
    if layout == "interleaved":
        out[:, 0::2] = np.sin(enc[:, 0::2])
        out[:, 1::2] = np.cos(enc[:, 1::2])
    else:
        sentinel = dim // 2 if dim % 2 == 0 else dim // 2 + 1
        out[:, :sentinel] = np.sin(enc[:, 0::2])
        out[:, sentinel:] = np.cos(enc[:, 1::2])
    return out


def reference_tolerance(start: int, length: int) -> float:
    """Error bound of ``reference``: its float64 angle is off by a few ulp of the angle."""
    return 8 * np.finfo(np.float64).eps * max(1.0, float(start + length))


def ulp_distance(value: np.ndarray, exact: np.ndarray, dtype: type) -> np.ndarray:
    """|value − exact| in units of the spacing of ``dtype`` at ``exact``."""
    spacing = np.spacing(np.abs(exact).astype(dtype)).astype(np.float64)
    tiny = float(np.finfo(dtype).smallest_subnormal)
    return np.abs(value.astype(np.float64) - exact) / np.maximum(spacing, tiny)


__all__ = ["math", "reference", "reference_tolerance", "ulp_distance"]
