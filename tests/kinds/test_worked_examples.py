"""Published worked examples, as printed where they appear: the d_model = 8 row that blog walkthroughs
of "Attention Is All You Need" compute, the (3, 4) table PyTorch prints for the paper's formula, and
HuggingFace's `SinusoidalPositionalEmbedding` (split layout, odd d) with positions counted from 1."""

from __future__ import annotations

import numpy as np
import pytest

from pecli import Sinusoidal
from tests.helpers import reference

# Blog walkthroughs of "Attention Is All You Need": d_model = 8, seq_len = 120, pos = 2, 4 decimals.
WORKED_EXAMPLE_ROW_2 = [0.9093, -0.4161, 0.1987, 0.9801, 0.0200, 0.9998, 0.0020, 0.9999]
# The paper's formula for seq_len = 3, d_model = 4, as PyTorch prints a float32 tensor (4 decimals).
PYTORCH_PRINTED_3X4 = [[0, 1, 0, 1], [0.8415, 0.5403, 0.0100, 0.9999], [0.9093, -0.4161, 0.0200, 0.9998]]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_row_2_matches_the_blog_walkthroughs_worked_example(dtype: str) -> None:
    table = Sinusoidal(length=120, dim=8, dtype=dtype).build()
    assert table.shape == (120, 8)
    assert table.dtype == np.dtype(dtype)
    # The worked example prints 4 decimals and truncates cos(0.002) = 0.999998 to 0.9999, hence 1e-4.
    np.testing.assert_allclose(table[2], WORKED_EXAMPLE_ROW_2, atol=1e-4 if dtype != "float16" else 1e-3)


def test_3x4_table_matches_the_pytorch_printout() -> None:
    table = Sinusoidal(length=3, dim=4).build()
    np.testing.assert_allclose(table, PYTORCH_PRINTED_3X4, atol=1e-4)


def test_3x4_exact_values_round_where_the_pytorch_printout_truncates() -> None:
    # cos(0.01) = 0.99995 and cos(0.02) = 0.9998000: the PyTorch printout shows 0.9999, the truth is above.
    table = Sinusoidal(length=3, dim=4, dtype="float64").build()
    assert table[1, 3] == pytest.approx(np.cos(0.01), abs=1e-16)
    assert table[2, 3] == pytest.approx(np.cos(0.02), abs=1e-16)


@pytest.mark.parametrize("dim", [8, 9, 128, 129])
def test_huggingface_split_layout_counts_from_1(dim: int) -> None:
    # Positions k = 1..L, in HuggingFace's `SinusoidalPositionalEmbedding` layout: sin columns first
    # (sentinel = ⌈d/2⌉).
    got = Sinusoidal(length=32, dim=dim, layout="split", start=1, dtype="float64").build()
    np.testing.assert_allclose(got, reference(32, dim, layout="split", start=1), rtol=0, atol=1e-13)


def test_huggingface_odd_dim_extra_sin_column() -> None:
    r = Sinusoidal(length=4, dim=5, layout="split")
    assert [r.column(j) for j in range(5)] == [(0, "sin"), (1, "sin"), (2, "sin"), (0, "cos"), (1, "cos")]
    r = Sinusoidal(length=4, dim=5, layout="interleaved")
    assert [r.column(j) for j in range(5)] == [(0, "sin"), (0, "cos"), (1, "sin"), (1, "cos"), (2, "sin")]
