"""``pecli.testing.assert_table`` and the library's array protocols (issue 42, items 4 and 5).

The truth is transformers' ``LlamaRotaryEmbedding`` transcribed in NumPy (``hf_rope``, float32 as it
computes), and the report ``pecli diff`` prints for the same two tables.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pecli
from pecli.testing import assert_table
from tests.diff.test_diff_kinds import hf_rope


def test_assert_table_passes_on_the_same_table_from_any_side() -> None:
    cache = hf_rope(64, 128, 500000.0)
    assert_table(cache, pecli.Rope(length=64, dim=128, base=500000))
    assert_table(cache, "rope:len=64,dim=128,base=500000")
    assert_table(pecli.Table.from_array(cache), np.asarray(cache, dtype=np.float32))


def test_assert_table_fails_with_the_cause_in_its_message() -> None:
    with pytest.raises(AssertionError) as failed:
        assert_table(hf_rope(64, 128, 500000.0), "rope:len=64,dim=128,base=10000")
    message = str(failed.value)
    assert "DIFFERENT:" in message
    assert "likely cause: base 500000 (A) vs 10000 (B)" in message
    with pytest.raises(AssertionError, match="shape"):
        assert_table(hf_rope(64, 128), hf_rope(32, 128))


def test_assert_table_takes_ulps_and_tolerances() -> None:
    cache = hf_rope(16, 64)
    nudged = np.nextafter(cache, np.float32(2))  # every value one float32 ulp up
    with pytest.raises(AssertionError):
        assert_table(nudged, cache)
    assert_table(nudged, cache, ulps=1)
    assert_table(nudged, cache, atol=float(np.max(np.abs(nudged - cache))))


def test_str_of_a_comparison_is_the_report_diff_prints(run, tmp_path: Path) -> None:
    mine = tmp_path / "mine.npy"
    np.save(mine, hf_rope(64, 128, 500000.0))
    spec = "rope:len=64,dim=128,base=10000"
    printed = run("diff", mine, spec, "-n", "3").output
    with pecli.open_table(mine) as table:
        comparison = pecli.compare(table, pecli.Rope(length=64, dim=128), top=3)
    # the same report past its B line (the CLI names B by its operand, the library by "recipe")
    assert str(comparison).splitlines()[3:] == printed.splitlines()[3:]
    assert "Comparison(" not in str(comparison)


def test_a_table_is_an_array_to_numpy_and_dlpack() -> None:
    recipe = pecli.Sinusoidal(length=12, dim=8)
    table = pecli.Table.from_recipe(recipe)
    np.testing.assert_array_equal(np.asarray(table), recipe.build())
    assert np.asarray(table, dtype=np.float64).dtype == np.float64
    np.testing.assert_array_equal(np.from_dlpack(table), recipe.build())
    with pytest.raises(ValueError, match="makes a new array"):
        np.asarray(table, copy=False)


def test_a_bfloat16_tensor_on_the_cpu_is_read_exactly() -> None:
    """It was refused ("Unsupported dtype in DLTensor"); torch's own ``.float()`` is the truth."""
    torch = pytest.importorskip("torch")
    tensor = torch.tensor(hf_rope(16, 64)).to(torch.bfloat16)
    table = pecli.Table.from_array(tensor[:, :48])  # a strided view, too
    assert table.storage == "bfloat16"
    np.testing.assert_array_equal(np.asarray(table), tensor[:, :48].float().numpy())
    with pytest.raises(AssertionError, match="DIFFERENT"):
        assert_table(tensor, hf_rope(16, 64))  # bfloat16 rounding is a difference at ulps=0
