"""Rotary caches that hold the cos and the sin table together (issue 24): ``--part cos-sin``
(``[cos | sin]``: vLLM's ``cos_sin_cache``, torchtune's Qwen2 cache) and ``--part cis`` (each
frequency's ``(cos, sin)``: Meta's ``freqs_cis`` viewed as real, torchtune's pair cache).

Truth: the float64 formula written here, ``ω_i = θ^(−2i/d)`` and ``cos``/``sin`` of ``p·ω_i`` in
NumPy (within 1e-13 for positions below 100); the frameworks' own code is in
``tests/conformance/test_rope_caches_vs_engines.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from pecli.errors import RecipeError
from pecli.identification import identify
from pecli.kinds.rope import Rope
from pecli.table import Table


def _waves(n: int, dim: int, base: float = 10000.0) -> tuple[np.ndarray, np.ndarray]:
    omega = base ** (-np.arange(0, dim, 2) / dim)
    angles = np.arange(n, dtype=np.float64)[:, None] * omega[None, :]
    return np.cos(angles), np.sin(angles)


@pytest.mark.parametrize(
    ("layout", "arrange"),
    [
        ("once", lambda c, s: np.concatenate([c, s], 1)),
        ("half", lambda c, s: np.concatenate([c, c, s, s], 1)),
        ("pairs", lambda c, s: np.concatenate([np.repeat(c, 2, 1), np.repeat(s, 2, 1)], 1)),
    ],
)
def test_cos_sin_is_the_cos_table_beside_the_sin_table(layout: str, arrange: object) -> None:
    n, dim = 64, 16
    table = Rope(n, dim, layout=layout, part="cos-sin", compute="exact", dtype="float64").build()  # type: ignore[arg-type]
    expected = arrange(*_waves(n, dim))  # type: ignore[operator]
    assert table.shape == expected.shape
    np.testing.assert_allclose(table, expected, rtol=0, atol=1e-13)


def test_cis_is_each_frequencys_cos_then_sin() -> None:
    n, dim = 64, 16
    table = Rope(n, dim, layout="once", part="cis", compute="exact", dtype="float64").build()
    cos, sin = _waves(n, dim)
    assert table.shape == (n, dim)
    np.testing.assert_allclose(table[:, 0::2], cos, rtol=0, atol=1e-13)
    np.testing.assert_allclose(table[:, 1::2], sin, rtol=0, atol=1e-13)
    # As a complex table: exp(i·p·ω), what torch.polar(1, angles) holds.
    as_complex = table.view(np.complex128)
    np.testing.assert_allclose(
        as_complex, np.exp(1j * np.arange(n)[:, None] * 10000.0 ** (-np.arange(0, dim, 2) / dim)), atol=1e-13
    )


def test_both_parts_are_the_kinds_own_cos_and_sin_tables_bit_for_bit() -> None:
    # The float32 pipeline (HF's steps) and the attention factor apply to both tables alike.
    params = {"length": 300, "dim": 32, "base": 500000.0, "scaling": "yarn", "factor": 4.0}
    params["original_max_position_embeddings"] = 64
    cos = Rope(**params, part="cos", layout="once").build()  # type: ignore[arg-type]
    sin = Rope(**params, part="sin", layout="once").build()  # type: ignore[arg-type]
    np.testing.assert_array_equal(Rope(**params, part="cos-sin", layout="once").build(), np.concatenate([cos, sin], 1))  # type: ignore[arg-type]
    cis = Rope(**params, part="cis", layout="once").build()  # type: ignore[arg-type]
    np.testing.assert_array_equal(cis[:, 0::2], cos)
    np.testing.assert_array_equal(cis[:, 1::2], sin)
    # Row ranges are the whole table's rows.
    whole = Rope(**params, part="cis", layout="once")  # type: ignore[arg-type]
    np.testing.assert_array_equal(whole.rows(100, 117), cis[100:117])


def test_a_picture_keeps_cis_pairs_together() -> None:
    # The heatmap samples both columns of a pair or neither: (cos, sin) of one frequency are a pair.
    assert Rope(8, 8, part="cis", layout="once").paired_columns()
    assert not Rope(8, 8, part="cos-sin", layout="half").paired_columns()


def test_cis_picks_the_once_layout_and_refuses_pairs() -> None:
    """``Rope(part="cis")`` raised unless ``layout="once"`` was also given (issue 42): cis has one layout."""
    assert Rope(8, 8, part="cis") == Rope(8, 8, part="cis", layout="once")
    with pytest.raises(RecipeError, match="give layout=once"):
        Rope(8, 8, part="cis", layout="pairs")


def test_the_cli_refuses_cis_in_another_layout_with_one_line(run) -> None:  # type: ignore[no-untyped-def]
    assert run("generate", "--kind", "rope", "--part", "cis", "--len", "4", "--dim", "8").exit_code == 0
    result = run("generate", "--kind", "rope", "--part", "cis", "--layout", "pairs", "--len", "4", "--dim", "8")
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "Error: part=cis holds each frequency once, as its (cos, sin) pair: give --layout once (--part cos-sin puts "
        "a cos and a sin table of any layout side by side)"
    ]


@pytest.mark.parametrize(
    "params",
    [
        {"length": 200, "dim": 32, "layout": "half", "part": "cos-sin", "base": 20000.0},  # no preset has θ 20000
        {"length": 200, "dim": 32, "layout": "once", "part": "cis", "base": 500000.0},
    ],
)
def test_identify_names_the_part_that_holds_both(params: dict[str, object]) -> None:
    recipe = Rope(**params)  # type: ignore[arg-type]
    found = identify(Table.from_array(recipe.build()))  # the values alone, no recipe stored with them
    assert found.verdict == "match" and found.best is not None, found.summary
    np.testing.assert_array_equal(found.best.recipe.build(), recipe.build())
    assert found.best.recipe.kind == "rope" and found.best.recipe.part == params["part"]  # type: ignore[attr-defined]
