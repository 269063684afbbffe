"""The rotation itself (issue 42, item 3): ``pecli rotation BEFORE AFTER`` reads the pairing, the
partial width and the cache back from activations.

AFTER is made by independent NumPy code: transformers' ``LlamaRotaryEmbedding`` + ``apply_rotary_pos_emb``
(``rotate_half``) and GPT-J's ``rotate_every_two`` transcribed, in float32 as they compute; the
conformance group checks the same against transformers' own functions.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pecli.errors import PecliInputError
from pecli.rotation import apply_rotary, rotation_of
from tests.helpers import f32_step

N, HEADS, D = 64, 4, 128


def rotated(q: np.ndarray, width: int, base: float, layout: str) -> np.ndarray:
    """q rotated on its first ``width`` dims, in float32 as transformers (half) or GPT-J (pairs) do it."""
    exponents = np.arange(0, width, 2, dtype=np.int64).astype(np.float32) / np.float32(width)
    inv_freq = (np.float32(1) / f32_step(np.power, np.float32(base), exponents)).astype(np.float32)
    freqs = np.outer(np.arange(q.shape[0], dtype=np.float32), inv_freq).astype(np.float32)
    emb = np.concatenate([freqs, freqs], axis=1) if layout == "half" else np.repeat(freqs, 2, axis=1)
    # torch's float32 cos/sin, the same bits on every CPU (NumPy's own float32 sin differs between them)
    cos, sin = f32_step(np.cos, emb)[:, None, :], f32_step(np.sin, emb)[:, None, :]
    part = q[..., :width]
    if layout == "half":
        turned = np.concatenate([-part[..., width // 2 :], part[..., : width // 2]], axis=-1)
    else:
        turned = np.stack([-part[..., 1::2], part[..., 0::2]], axis=-1).reshape(part.shape)
    return np.concatenate([(part * cos + turned * sin).astype(np.float32), q[..., width:]], axis=-1)


@pytest.fixture(scope="module")
def q() -> np.ndarray:
    return np.random.default_rng(0).standard_normal((N, HEADS, D)).astype(np.float32)


@pytest.mark.parametrize(
    ("width", "base", "layout"),
    [(128, 10000.0, "half"), (32, 10000.0, "pairs"), (64, 500000.0, "half"), (128, 1e6, "pairs")],
)
def test_the_pairing_width_and_cache_are_read_back(q: np.ndarray, width: int, base: float, layout: str) -> None:
    found = rotation_of(q, rotated(q, width, base, layout))
    assert (found.width, found.pairing) == (width, layout)
    assert found.recipe is not None
    params = found.recipe.params(everything=True)
    assert (params["dim"], params["base"], params["layout"], params["scaling"]) == (width, base, layout, "default")
    assert found.max_abs <= found.tolerance


def test_the_reference_rotation_is_transformers_and_gptj(q: np.ndarray) -> None:
    import pecli

    for layout in ("half", "pairs"):
        recipe = pecli.Rope(length=N, dim=32, layout=layout)
        cos, sin = recipe.build(), pecli.Rope(length=N, dim=32, layout=layout, part="sin").build()
        ours = apply_rotary(q, cos, sin, layout)
        np.testing.assert_allclose(ours, rotated(q, 32, 10000.0, layout), rtol=0, atol=4e-6)
        np.testing.assert_array_equal(ours[..., 32:], q[..., 32:])


def test_what_is_no_rotation_says_so_with_the_evidence(q: np.ndarray) -> None:
    with pytest.raises(PecliInputError, match=r"not a rotation: .* squared lengths change by up to 0\.0"):
        rotation_of(q, q * np.float32(1.01))
    with pytest.raises(PecliInputError, match="not a rotation: before has shape"):
        rotation_of(q, q[:, :, :64])
    with pytest.raises(PecliInputError, match="after equals before on every dim"):
        rotation_of(q, q)


def test_the_command_names_the_cache_and_how_it_differs_from_the_expected(run, tmp_path: Path, q: np.ndarray) -> None:
    np.save(tmp_path / "q.npy", q)
    np.save(tmp_path / "q_rot.npy", rotated(q, 32, 10000.0, "pairs"))  # GPT-J pairs on a quarter: a port's slip
    r = run("rotation", tmp_path / "q.npy", tmp_path / "q_rot.npy", "--expected", f"rope:len={N},dim={D}")
    assert r.exit_code == 1, r.output
    assert "AFTER is BEFORE rotated on dims 0–31, paired pairs (2k with 2k+1); dims 32–127 unrotated" in r.output
    assert "cache            rope:len=64,dim=32,base=10000,layout=pairs,part=cos" in r.output
    assert "vs expected      pairs (A) vs half (B) on dims 0–31; rotary on 32 of 128 dims (A) vs 128 (B)" in r.output
    np.save(tmp_path / "llama.npy", rotated(q, D, 500000.0, "half"))
    r = run("rotation", tmp_path / "q.npy", tmp_path / "llama.npy", "--expected", f"rope:len={N},dim={D}", "--json")
    assert r.exit_code == 1, r.output
    assert json.loads(r.output)["differences"] == ["base 500000 (A) vs 10000 (B)"]
    r = run("rotation", tmp_path / "q.npy", tmp_path / "llama.npy", "--expected", f"rope:len={N},dim={D},base=500000")
    assert r.exit_code == 0 and "the same rotation" in r.output
    r = run("rotation", tmp_path / "q.npy", tmp_path / "q.npy")
    assert r.exit_code == 2 and "not a rotation" in r.output
