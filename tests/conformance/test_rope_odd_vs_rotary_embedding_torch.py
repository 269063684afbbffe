"""Odd rotary widths against rotary-embedding-torch's own ``RotaryEmbedding(dim)`` (0.9.1), the one
framework that builds them: ``dim // 2`` frequencies ``θ^(−2i/dim)`` (its ``arange(0, dim, 2)[:(dim // 2)]``),
``dim − 1`` columns in the pairs layout, and ``rotate_queries_or_keys`` leaves the last feature as it is.

Truth: the module's own ``forward`` angles and their torch ``cos``/``sin``, within the float32 bound of
the modern-encodings issue, 4·2⁻²⁴·max(1, p) (torch's float32 ``pow`` is not correctly rounded, pecli's
is: an inverse frequency may differ in its last bit, as at even widths), and its
rotation of a query, which pecli's cos and sin tables reproduce; ``identify`` names each table with
its odd dim.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pecli import Rope
from tests.helpers import identified_and_checked

pytestmark = [
    pytest.mark.conformance,
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("rotary_embedding_torch") is None, reason="rotary-embedding-torch is not installed"
    ),
]

#: (dim, θ, positions, offset)
CASES = [(3, 10000.0, 64, 0), (5, 10000.0, 300, 0), (7, 10000.0, 512, 0), (9, 500000.0, 300, 0), (33, 10000.0, 1024, 0)]
CASES += [(65, 10000.0, 2048, 0), (127, 1000000.0, 512, 0), (7, 10000.0, 256, 100)]


def _theirs(dim: int, theta: float, n: int, offset: int) -> dict[str, np.ndarray]:
    import torch
    from rotary_embedding_torch import RotaryEmbedding

    with torch.no_grad():
        module = RotaryEmbedding(dim, theta=theta, cache_if_possible=False)
        angles = module(module.get_seq_pos(n, dtype=torch.float32, offset=offset))
        query = torch.randn(1, n, dim, generator=torch.Generator().manual_seed(dim))
        rotated = module.rotate_queries_or_keys(query, offset=offset)
        return {
            "angle": angles.numpy().copy(),
            "cos": angles.cos().numpy().copy(),
            "sin": angles.sin().numpy().copy(),
            "query": query[0].numpy().copy(),
            "rotated": rotated[0].numpy().copy(),
        }


def _ours(dim: int, theta: float, n: int, offset: int, part: str) -> np.ndarray:
    return Rope(n, dim, theta, start=offset, layout="pairs", part=part).build()  # type: ignore[arg-type]


@pytest.mark.parametrize(("dim", "theta", "n", "offset"), CASES)
def test_odd_widths_are_rotary_embedding_torchs(dim: int, theta: float, n: int, offset: int) -> None:
    theirs = _theirs(dim, theta, n, offset)
    assert theirs["angle"].shape == (n, dim - 1)
    bound = 4 * 2.0**-24 * max(1, offset + n - 1)
    for part in ("angle", "cos", "sin"):
        ours = _ours(dim, theta, n, offset, part)
        assert ours.shape == theirs[part].shape and ours.dtype == theirs[part].dtype
        diff = float(np.abs(ours.astype(np.float64) - theirs[part]).max())
        print(f"\nodd rope dim {dim} θ {theta:g} {n} rows from {offset} {part}: max|Δ| {diff:.3g}")
        assert diff <= bound


@pytest.mark.parametrize(("dim", "theta", "n", "offset"), CASES[:4])
def test_the_tables_rotate_a_query_as_rotate_queries_or_keys_does(dim: int, theta: float, n: int, offset: int) -> None:
    """x·cos + rotate_every_two(x)·sin on the first dim − 1 features, the last one unchanged."""
    theirs = _theirs(dim, theta, n, offset)
    cos, sin = (_ours(dim, theta, n, offset, part).astype(np.float64) for part in ("cos", "sin"))
    q = theirs["query"].astype(np.float64)
    head = q[:, : dim - 1]
    turned = np.empty_like(head)
    turned[:, 0::2], turned[:, 1::2] = -head[:, 1::2], head[:, 0::2]
    rotated = np.concatenate([head * cos + turned * sin, q[:, dim - 1 :]], axis=1)
    assert np.array_equal(theirs["rotated"][:, -1], theirs["query"][:, -1])
    assert np.abs(rotated - theirs["rotated"]).max() <= 8 * 2.0**-24 * max(1.0, float(np.abs(q).max())) * 2


@pytest.mark.parametrize(("dim", "theta", "n", "offset"), CASES[1:])  # dim 3: one frequency, θ^0, any θ
def test_identify_names_the_odd_dim(tmp_path: Path, dim: int, theta: float, n: int, offset: int) -> None:
    path = tmp_path / "cos.npy"
    np.save(path, _theirs(dim, theta, n, offset)["cos"])
    doc: Any = identified_and_checked(path, "rope")
    recipe = doc["best"]["recipe"]
    assert (recipe["dim"], recipe["base"], recipe["layout"], recipe["start"]) == (dim, theta, "pairs", offset)
