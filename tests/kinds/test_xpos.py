"""The xpos kind: xPos scales (Sun et al. 2022) against their float64 closed form written here,
row ranges, identify, and bad input through the CLI.  rotary-embedding-torch's own code is the
judge in tests/conformance/test_xpos_vs_rotary_embedding_torch.py."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pecli.kinds.xpos import Xpos
from tests.helpers import f32_step


def closed_form(n: int, d: int, base: float, part: str) -> np.ndarray:
    """ζ_i^(±(p − ⌊n/2⌋)/B), ζ_i = (2i + 0.4d)/(1.4d), each value twice (the paper's eq. and
    rotary-embedding-torch's ``get_scale``), element by element in float64."""
    out = np.empty((n, d))
    for p in range(n):
        for j in range(d):
            zeta = (2 * (j // 2) + 0.4 * d) / (1.4 * d)
            power = (p - n // 2) / base
            out[p, j] = zeta ** (power if part == "q" else -power)
    return out


@pytest.mark.parametrize("part", ["q", "k"])
@pytest.mark.parametrize(("n", "d", "base"), [(9, 8, 512.0), (100, 16, 256.0), (1, 2, 512.0)])
def test_float64_is_the_closed_form(n: int, d: int, base: float, part: str) -> None:
    want = closed_form(n, d, base, part)
    got = Xpos(n, d, base, part, "float64", "float64").build()  # type: ignore[arg-type]
    assert np.max(np.abs(got / want - 1)) <= 4 * 2.0**-53 * max(1.0, n / base)
    f32 = Xpos(n, d, base, part).build()  # type: ignore[arg-type]
    # the float32 pipeline: ζ and the power in float32, so within a few float32 ulps
    assert np.max(np.abs(f32 / want - 1)) <= 8 * 2.0**-24 * max(1.0, n / base)


def test_queries_times_keys_is_one_and_the_middle_row_is_one() -> None:
    q = Xpos(64, 16, 512.0, "q", "float64", "float64").build()
    k = Xpos(64, 16, 512.0, "k", "float64", "float64").build()
    assert np.allclose(q * k, 1.0, rtol=1e-15, atol=0) and np.all(q[32] == 1.0)


def test_row_ranges_equal_the_whole_tables_rows() -> None:
    for compute in ("float32", "float64"):
        r = Xpos(1000, 32, 512.0, "k", compute)  # type: ignore[arg-type]
        whole = r.build()
        for a, b in ((0, 1), (499, 501), (990, 1000)):
            assert np.array_equal(r.rows(a, b), whole[a:b])


@pytest.mark.parametrize(("part", "base"), [("q", 512.0), ("k", 256.0)])
def test_identify_finds_the_base_and_the_part(run, tmp_path: Path, part: str, base: float) -> None:
    np.save(tmp_path / "x.npy", Xpos(300, 32, base, part).build())  # type: ignore[arg-type]
    doc = json.loads(run("identify", tmp_path / "x.npy", "--json").stdout)
    assert doc["verdict"] == "match" and doc["kind"] == "xpos"
    assert f"scale_base={base:g}" in doc["check"] and f"part={part}" in doc["check"] and "--atol" not in doc["check"]


def palm_rlhf_scale(seq_len: int, dim: int, scale_base: float = 512.0) -> np.ndarray:
    """lucidrains' PaLM-rlhf-pytorch ``RotaryEmbedding.forward`` (palm_rlhf_pytorch/palm.py), one
    float32 step at a time: ``scale = (arange(0, dim, 2) + 0.4 * dim) / (1.4 * dim)``, ``power =
    (t - seq_len // 2) / scale_base`` on a float32 ``t``, ``scale ** power``, then ``torch.cat((scale,
    scale), dim = -1)``: the half layout."""
    zeta = f32_step(np.divide, f32_step(np.add, np.arange(0, dim, 2), np.float32(0.4 * dim)), np.float32(1.4 * dim))
    t = np.arange(seq_len, dtype=np.float32)
    power = f32_step(np.divide, f32_step(np.subtract, t, np.float32(seq_len // 2)), np.float32(scale_base))
    scale = f32_step(np.power, zeta[None, :], power[:, None])
    return np.concatenate([scale, scale], axis=1)


@pytest.mark.parametrize(("n", "d", "base"), [(300, 64, 512.0), (7, 8, 256.0)])
def test_the_half_layout_is_palm_rlhf_s_cat_and_is_read_back(run, tmp_path: Path, n: int, d: int, base: float) -> None:
    want = palm_rlhf_scale(n, d, base)
    got = Xpos(n, d, base, layout="half").build()
    assert got.dtype == np.float32 and np.array_equal(got, want)
    np.save(tmp_path / "x.npy", want)
    doc = json.loads(run("identify", tmp_path / "x.npy", "--json").stdout)
    assert doc["verdict"] == "match" and "layout=half" in doc["check"] and "--atol" not in doc["check"]
    # A port that pairs these scales with a rotate_every_two cache: diff names the layout.
    r = run("diff", tmp_path / "x.npy", f"xpos:len={n},dim={d},scale_base={base:g}")
    assert r.exit_code == 1 and "likely cause: layout half (A) vs pairs (B)" in r.stdout, r.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--dim", "7"], "dim 7 is odd, but xPos scales pairs of rotary dims"),
        (["--dim", "8", "--scale-base", "0"], "scale_base must be a finite number > 0"),
        (["--dim", "8", "--part", "cos"], "unknown part 'cos'"),
        (["--dim", "8", "--layout", "once"], "unknown layout 'once': choose one of pairs, half"),
    ],
)
def test_bad_xpos_recipes(run, tmp_path: Path, args: list[str], message: str) -> None:
    r = run("generate", "--kind", "xpos", "--len", "16", *args, "-o", tmp_path / "x.npy")
    assert r.exit_code == 2 and r.stderr.startswith("Error: ") and r.stderr.count("\n") == 1, r.output
    assert message in r.stderr, r.stderr
    assert not (tmp_path / "x.npy").exists()
