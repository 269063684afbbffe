"""rope, alibi and learned kinds against independent truths: the NumPy reference snippets of
../shared/reference/dialects.md §6 and §8 written out here, HF transformers' scaling formulas
re-derived in float64 (Meta's Llama 3.1 loop for llama3), the paper constants dialects.md
reports, and distribution facts for the learned tables."""

from __future__ import annotations

import math
import subprocess
import sys
from collections.abc import Callable

import numpy as np
import pytest

from pecli.errors import RecipeError
from pecli.kinds.alibi import Alibi
from pecli.kinds.learned import Learned
from pecli.kinds.rope import Rope

f32 = np.float32
HEADS = [8, 12, 16, 20, 32, 40, 64, 112]


# ------------------------------------------------ dialects.md §0/§6 snippets (f64-evaluate, round)
def POW(b: float, x: np.ndarray) -> np.ndarray:
    return np.power(np.float64(f32(b)), x.astype(np.float64)).astype(f32)


def COS(a: np.ndarray) -> np.ndarray:
    return np.cos(a.astype(np.float64)).astype(f32)


def SIN(a: np.ndarray) -> np.ndarray:
    return np.sin(a.astype(np.float64)).astype(f32)


def inv_freq(dim: int, base: float = 1e4) -> np.ndarray:  # torch order: base->f32, pow, then f32 reciprocal
    return f32(1) / POW(base, np.arange(0, dim, 2).astype(f32) / f32(dim))


def rope_half(pos: np.ndarray, inv: np.ndarray, att: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    fr = np.asarray(pos, f32)[:, None] * inv
    e = np.concatenate([fr, fr], -1)
    return COS(e) * f32(att), SIN(e) * f32(att)


def rope_interleaved(pos: np.ndarray, inv: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    fr = np.asarray(pos, f32)[:, None] * inv
    return np.repeat(COS(fr), 2, -1), np.repeat(SIN(fr), 2, -1)


def slopes(n: int) -> list[float]:  # dialects.md §8
    def p2(m: int) -> list[float]:
        return [2 ** (-8 * (k + 1) / m) for k in range(m)]

    if math.log2(n).is_integer():
        return p2(n)
    c = 2 ** math.floor(math.log2(n))
    return p2(c) + slopes(2 * c)[0::2][: n - c]


def ulps(a: np.ndarray, b: np.ndarray) -> int:
    a32, b32 = np.asarray(a, f32), np.asarray(b, f32)
    return int(np.abs(a32.view(np.int32).astype(np.int64) - b32.view(np.int32).astype(np.int64)).max())


# ------------------------------------------------------------------------------------ RoPE
@pytest.mark.parametrize(("dim", "base", "start"), [(128, 1e4, 0), (64, 5e5, 1000), (96, 1e4, 0), (8, 10.0, 7)])
def test_rope_float32_is_the_dialect_snippet(dim: int, base: float, start: int) -> None:
    n = 300
    pos = np.arange(start, start + n)
    inv = inv_freq(dim, base)
    cos_h, sin_h = rope_half(pos, inv)
    cos_p, sin_p = rope_interleaved(pos, inv)
    kw = {"length": n, "dim": dim, "base": base, "start": start}
    np.testing.assert_array_equal(Rope(**kw).inv_freq(), inv)
    np.testing.assert_array_equal(Rope(**kw, part="inv_freq").build(), inv[None])
    np.testing.assert_array_equal(Rope(**kw).build(), cos_h)
    np.testing.assert_array_equal(Rope(**kw, part="sin").build(), sin_h)
    np.testing.assert_array_equal(Rope(**kw, layout="pairs").build(), cos_p)
    np.testing.assert_array_equal(Rope(**kw, layout="pairs", part="sin").build(), sin_p)
    angle = np.asarray(pos, f32)[:, None] * inv
    np.testing.assert_array_equal(Rope(**kw, part="angle").build(), np.concatenate([angle, angle], -1))


def test_rope_exact_is_the_float64_closed_form() -> None:
    dim, n, start = 64, 500, 3000
    pos = np.arange(start, start + n, dtype=np.float64)
    inv = 10000.0 ** (-np.arange(0, dim, 2) / dim)
    angle = pos[:, None] * inv
    want = np.cos(np.concatenate([angle, angle], -1))
    got = Rope(length=n, dim=dim, start=start, compute="exact", dtype="float64").build()
    # float64 closed form: angle off by a few ulp of p·ω
    assert np.abs(got - want).max() < 8 * np.finfo(np.float64).eps * (start + n)
    got32 = Rope(length=n, dim=dim, start=start, compute="exact").build()
    assert ulps(got32, want) <= 1
    # the float32 pipeline is another table: its error grows with the position
    assert np.abs(Rope(length=n, dim=dim, start=start).build() - want).max() > 1e-5


def hf_scaled_inv_freq(dim: int, base: float, scaling: str, seq_len: int = 0, **p: float) -> tuple[np.ndarray, float]:
    """HF transformers 5.23 modeling_rope_utils, re-derived in float64."""
    i = np.arange(0, dim, 2)
    inv = 1.0 / base ** (i / dim)
    f = p.get("factor", 1.0)
    orig = p.get("orig", 0)
    if scaling == "linear":
        return inv / f, 1.0
    if scaling == "dynamic":
        b = base * ((f * max(seq_len, orig) / orig) - (f - 1)) ** (dim / (dim - 2))
        return 1.0 / b ** (i / dim), 1.0
    if scaling == "yarn":

        def corr(rot: float) -> float:
            return dim * math.log(orig / (rot * 2 * math.pi)) / (2 * math.log(base))

        lo, hi = max(math.floor(corr(32)), 0), min(math.ceil(corr(1)), dim - 1)
        ramp = np.clip((np.arange(dim // 2) - lo) / (hi - lo), 0, 1)
        return inv / f * ramp + inv * (1 - ramp), 0.1 * math.log(f) + 1
    if scaling == "longrope":
        ext = p["long"] if seq_len > orig else p["short"]
        return inv / np.asarray(ext), math.sqrt(1 + math.log(f) / math.log(orig))
    raise AssertionError(scaling)


def meta_apply_scaling(freqs: np.ndarray, factor: float, low: float, high: float, orig: int) -> np.ndarray:
    """llama-models apply_scaling (the 2024-07 Python loop), in float64."""
    out = []
    for freq in freqs:
        wavelen = 2 * math.pi / freq
        if wavelen < orig / high:
            out.append(freq)
        elif wavelen > orig / low:
            out.append(freq / factor)
        else:
            smooth = (orig / wavelen - low) / (high - low)
            out.append((1 - smooth) * freq / factor + smooth * freq)
    return np.array(out)


def _both(r: Rope) -> tuple[np.ndarray, np.ndarray]:
    exact = Rope(**{**r.params(everything=True), "compute": "exact"})
    return r.inv_freq(), exact.inv_freq()


def check_inv(r: Rope, want: np.ndarray) -> None:
    got32, got64 = _both(r)
    np.testing.assert_allclose(got64, want, rtol=1e-13)
    np.testing.assert_allclose(got32, want, rtol=4e-7)  # a float32 pipeline: a few roundings


def test_linear_and_dynamic_scaling() -> None:
    want, _ = hf_scaled_inv_freq(128, 1e4, "linear", factor=4.0)
    check_inv(Rope(length=16384, dim=128, scaling="linear", factor=4.0), want)
    dyn = {"dim": 128, "scaling": "dynamic", "factor": 2.0, "original_max_position_embeddings": 4096}
    # within the trained length: the default frequencies
    np.testing.assert_array_equal(Rope(length=4096, **dyn).inv_freq(), inv_freq(128))
    for length, start in ((9000, 0), (1000, 8000)):
        want, _ = hf_scaled_inv_freq(128, 1e4, "dynamic", seq_len=length + start, factor=2.0, orig=4096)
        check_inv(Rope(length=length, start=start, **dyn), want)
    assert Rope(length=9000, **dyn).inv_freq()[1] < inv_freq(128)[1]


def test_yarn_scaling_and_attention_factor() -> None:
    r = Rope(length=4096, dim=128, scaling="yarn", factor=4.0, original_max_position_embeddings=4096)
    want, att = hf_scaled_inv_freq(128, 1e4, "yarn", factor=4.0, orig=4096)
    check_inv(r, want)
    assert r.attention_scaling() == pytest.approx(att) == pytest.approx(1.138629, abs=5e-7)
    np.testing.assert_array_equal(r.build(), rope_half(np.arange(4096), r.inv_freq(), att)[0])
    exact = Rope(**{**r.params(everything=True), "compute": "exact", "dtype": "float64"})
    np.testing.assert_allclose(exact.build()[:, :64], np.cos(np.arange(4096)[:, None] * want) * att, atol=1e-11)
    # the high frequencies are kept, the low ones interpolated by the factor
    inv = r.inv_freq()
    assert inv[0] == inv_freq(128)[0] and inv[-1] == pytest.approx(inv_freq(128)[-1] / 4, rel=1e-6)
    # truncate=False (gpt-oss) moves the ramp's ends off the integers
    loose = Rope(**{**r.params(everything=True), "truncate": False})
    assert not np.array_equal(loose.inv_freq(), inv)
    # mscale/mscale_all_dim (DeepSeek): attention factor (0.1·m·ln f + 1)/(0.1·m'·ln f + 1)
    ds = Rope(
        length=8,
        dim=64,
        scaling="yarn",
        factor=40.0,
        original_max_position_embeddings=4096,
        mscale=1.0,
        mscale_all_dim=0.707,
    )
    assert ds.attention_scaling() == pytest.approx((0.1 * math.log(40) + 1) / (0.1 * 0.707 * math.log(40) + 1))


def test_longrope_switches_factors_at_the_original_length() -> None:
    short = [1.0 + 0.02 * k for k in range(48)]
    long = [1.0 + 0.15 * k for k in range(48)]
    kw = {
        "dim": 96,
        "scaling": "longrope",
        "factor": 32.0,
        "original_max_position_embeddings": 4096,
        "short_factor": ",".join(map(str, short)),
        "long_factor": " ".join(map(str, long)),
    }
    for length, start in ((4096, 0), (4097, 0), (100, 60000)):
        seq = length + start
        r = Rope(length=length, start=start, **kw)
        want, att = hf_scaled_inv_freq(96, 1e4, "longrope", seq_len=seq, factor=32.0, orig=4096, short=short, long=long)
        check_inv(r, want)
        assert r.attention_scaling() == pytest.approx(att) == pytest.approx(1.190238, abs=5e-7)
    assert Rope(length=10, **kw).short_factor == ";".join(map(repr, short))


def test_llama3_scaling_is_metas_apply_scaling() -> None:
    p = {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}
    r = Rope(length=8192, dim=128, base=5e5, scaling="llama3", **p)
    want = meta_apply_scaling(5e5 ** (-np.arange(0, 128, 2) / 128), 8.0, 1.0, 4.0, 8192)
    check_inv(r, want)
    inv, base = r.inv_freq(), inv_freq(128, 5e5)
    wavelen = 2 * np.pi / base.astype(np.float64)
    assert np.array_equal(inv[wavelen < 2048], base[wavelen < 2048])
    np.testing.assert_allclose(inv[wavelen > 8192], base[wavelen > 8192] / 8, rtol=1e-7)
    assert r.attention_scaling() == 1.0


@pytest.mark.parametrize(
    "recipe",
    [
        Rope(length=97, dim=16, start=5),
        Rope(length=97, dim=16, layout="pairs", part="sin", compute="exact"),
        Rope(length=97, dim=32, scaling="dynamic", factor=2.0, original_max_position_embeddings=50),
        Alibi(heads=12, part="bias", length=97),
        Alibi(heads=20, part="bias", length=50, origin="last", compute="exact", dtype="float64"),
        Learned(length=97, dim=8, padding_idx=1),
        Learned(length=97, dim=8, init="truncated-normal", seed=5, dtype="float16"),
    ],
    ids=lambda r: r.describe(),
)
def test_any_row_range_is_the_same_rows_of_the_whole_table(recipe: Rope | Alibi | Learned) -> None:
    whole = recipe.build()
    assert whole.shape == recipe.shape and whole.dtype == np.dtype(recipe.dtype)
    n = whole.shape[0]
    for r0, r1 in ((0, 1), (3, 17), (n - 5, n), (n, n)):
        r0, r1 = min(r0, n), min(r1, n)
        assert recipe.rows(r0, r1).tobytes() == whole[r0:r1].tobytes()


# ----------------------------------------------------------------------------------- ALiBi
@pytest.mark.parametrize("n", HEADS)
def test_alibi_slopes_are_get_slopes(n: int) -> None:
    want = np.array(slopes(n))
    np.testing.assert_array_equal(Alibi(heads=n).build(), want[None].astype(f32))
    np.testing.assert_array_equal(Alibi(heads=n, compute="exact").build(), want[None].astype(f32))
    np.testing.assert_allclose(Alibi(heads=n, compute="exact", dtype="float64").build()[0], want, rtol=4e-16)
    # Bloom: float32 base to the k-th power; MPT: 1/2^(8k/n2) in float32, reordered
    assert ulps(Alibi(heads=n, form="pow").build()[0], want) <= 8
    assert ulps(Alibi(heads=n, form="recip").build()[0], want) <= 1


def test_alibi_bias_tables() -> None:
    n, length = 12, 300
    s = np.array(slopes(n)).astype(f32)
    bloom = Alibi(heads=n, part="bias", length=length).build()
    assert bloom.shape == (n, length)
    np.testing.assert_array_equal(bloom, s[:, None] * np.arange(length, dtype=f32)[None])
    mpt = Alibi(heads=n, part="bias", length=length, origin="last").build()
    np.testing.assert_array_equal(mpt, s[:, None] * np.arange(1 - length, 1, dtype=f32)[None])
    # both are −slope·distance up to a per-row constant
    np.testing.assert_allclose(bloom - mpt, (s * (length - 1))[:, None] * np.ones((1, length)), rtol=1e-6)
    exact = Alibi(heads=n, part="bias", length=length, compute="exact", dtype="float64").build()
    np.testing.assert_allclose(exact, np.array(slopes(n))[:, None] * np.arange(length), rtol=4e-16)


def test_bloom_float32_slopes_differ_from_the_float64_list() -> None:
    # Bloom's torch.pow(float32 base, k) drifts from 2^(−8k/n) (dialects.md §8 calls them equal)
    n = 112
    base = f32(2 ** (-(2 ** -(math.log2(64) - 3))))
    first = [f32(float(base) ** k) for k in range(1, 65)]
    np.testing.assert_array_equal(Alibi(heads=n, form="pow").build()[0, :64], first)
    assert 1 <= ulps(first, np.array(slopes(n))[:64]) <= 8


# --------------------------------------------------------------------------------- learned
def test_learned_normal_and_truncated_normal() -> None:
    table = Learned(length=512, dim=768).build()
    assert table.shape == (512, 768) and table.dtype == f32
    assert abs(float(table.std()) - 0.02) < 0.05 * 0.02
    assert abs(float(table.mean())) < 1e-3
    trunc = Learned(length=512, dim=768, init="truncated-normal").build()
    assert np.abs(trunc).max() <= f32(2 * 0.02)
    # TF's stddev is the underlying normal's: a ±2σ truncation keeps 0.8796 of it
    assert abs(float(trunc.std()) - 0.8796 * 0.02) < 0.05 * 0.02
    assert np.abs(table).max() > 0.08  # untruncated: 4σ values occur in 393k draws


def test_learned_seeds_padding_and_offset() -> None:
    a = Learned(length=64, dim=16, seed=7).build()
    assert np.array_equal(a, Learned(length=64, dim=16, seed=7).build())
    assert not np.array_equal(a, Learned(length=64, dim=16, seed=8).build())
    # row r is drawn from its own stream: growing the table keeps the rows it had
    assert np.array_equal(Learned(length=100, dim=16, seed=7).build()[:64], a)
    roberta = Learned(length=512, dim=768, padding_idx=1)
    t = roberta.build()
    assert t.shape == (514, 768) and not t[1].any() and t[0].any() and t[2].any()
    bart = Learned(length=1024, dim=768, offset=2)
    assert bart.shape == (1026, 768) and bart.rows(0, 2).all()
    ss = np.random.SeedSequence(3).spawn(6)[5]
    row = np.random.Generator(np.random.PCG64(ss)).standard_normal(16) * 0.02
    np.testing.assert_array_equal(Learned(length=6, dim=16, seed=3, rng="pcg64").rows(5, 6)[0], row.astype(f32))


# ------------------------------------------------------------------------------ validation
@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: Rope(length=10, dim=127, scaling="linear", factor=2.0),
            "dim 127 is odd, which only rotary-embedding-torch",
        ),
        (lambda: Rope(length=10, dim=8, scaling="ntk"), "unknown scaling 'ntk'"),
        (
            lambda: Rope(length=10, dim=8, layout="interleaved"),
            "unknown layout 'interleaved': choose one of half, pairs",
        ),
        (lambda: Rope(length=10, dim=8, scaling="yarn", original_max_position_embeddings=64), "needs factor="),
        (lambda: Rope(length=10, dim=8, scaling="linear"), "scaling=linear needs factor="),
        (
            lambda: Rope(length=10, dim=8, scaling="llama3", factor=8, original_max_position_embeddings=8192),
            "needs low_freq_factor= and high_freq_factor=",
        ),
        (lambda: Rope(length=10, dim=8, factor=4.0), "scaling=default does not use factor="),
        (lambda: Rope(length=10, dim=8, scaling="linear", factor=0), "factor must be a finite number > 0"),
        (
            lambda: Rope(
                length=10,
                dim=8,
                scaling="longrope",
                factor=2,
                original_max_position_embeddings=4,
                short_factor="1,1",
                long_factor="1,1,1,1",
            ),
            "short_factor has 2 numbers but a rotary dim of 8 needs dim/2 = 4",
        ),
        (
            lambda: Rope(
                length=10,
                dim=4,
                scaling="llama3",
                factor=8,
                original_max_position_embeddings=8192,
                low_freq_factor=4,
                high_freq_factor=1,
            ),
            "high_freq_factor (1.0) must be greater than low_freq_factor (4.0)",
        ),
        (lambda: Alibi(heads=0), "heads must be at least 1"),
        (lambda: Alibi(heads=8, part="bias"), "part=bias needs the number of key positions"),
        (lambda: Alibi(heads=8, length=10), "length only applies to part=bias"),
        (lambda: Alibi(heads=8, compute="exact", form="pow"), "form=pow is a float32 pipeline"),
        (lambda: Learned(length=10, dim=4, std=0), "std must be a finite number > 0"),
        (lambda: Learned(length=10, dim=4, seed=-1), "seed must be at least 0"),
        (lambda: Learned(length=10, dim=4, init="uniform"), "unknown init 'uniform'"),
        (lambda: Learned(length=10, dim=4, padding_idx=1, offset=2), "not both"),
        (lambda: Learned(length=2**32 - 2, dim=4, offset=2), "fewer than 2**32 rows and columns"),
    ],
)
def test_bad_parameters_name_the_problem_and_the_fix(make: Callable[[], object], message: str) -> None:
    with pytest.raises(RecipeError) as info:
        make()
    assert message in str(info.value)


def test_recipes_round_trip_through_their_parameters() -> None:
    for r in (
        Rope(length=8, dim=4, scaling="yarn", factor=4.0, original_max_position_embeddings=64, truncate=False),
        Alibi(heads=6, part="bias", length=9, origin="last"),
        Learned(length=3, dim=2, padding_idx=0),
    ):
        assert type(r)(**r.params(everything=True)) == r
        assert r.to_metadata()["kind"] == r.kind
    assert (
        Rope(length=8, dim=4).describe()
        == "rope length=8 dim=4 base=10000 layout=half part=cos scaling=default dtype=float32"
    )


def test_options_and_the_kind_base_import_without_numpy() -> None:
    # Kind modules own their NumPy builders and fitters; what --help reads must stay NumPy-free.
    code = "import sys, pecli, pecli.cli.options, pecli.recipe; assert 'numpy' not in sys.modules, sorted(sys.modules)"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_dynamic_scaling_needs_dim_4() -> None:
    from pecli.errors import RecipeError
    from pecli.kinds.rope import Rope

    with pytest.raises(RecipeError, match="dim ≥ 4"):
        Rope(8, 2, scaling="dynamic", factor=2.0, original_max_position_embeddings=4)


@pytest.mark.parametrize(("heads", "bias_max"), [(8, 16), (16, 4), (12, 12), (1, 8)])
def test_alibi_bias_max_is_the_exponent_of_the_slopes(heads: int, bias_max: int) -> None:
    # Float64 closed form: ofirpress's order (the first c = 2^⌊log2 n⌋ heads 2^(−B·k/c), then
    # every other slope of 2c heads), B = MPT's alibi_bias_max.
    c = 1 << (heads.bit_length() - 1)
    first = [2.0 ** (-bias_max * k / c) for k in range(1, c + 1)]
    rest = [2.0 ** (-bias_max * k / (2 * c)) for k in range(1, 2 * c + 1, 2)][: heads - c]
    truth = np.array(first + rest)
    exact = Alibi(heads, compute="exact", bias_max=bias_max).slopes()
    np.testing.assert_allclose(exact, truth, rtol=2**-52)
    # MPT's float32 reciprocals: within a float32 rounding or two of the truth.
    recip = Alibi(heads, form="recip", bias_max=bias_max).slopes()
    np.testing.assert_allclose(recip, truth, rtol=2**-22)


def test_alibi_heads_without_a_bias_are_rows_of_plus_zero() -> None:
    table = Alibi(4, length=6, part="bias", origin="last", total_heads=7).build()
    assert table.shape == (7, 6)
    np.testing.assert_array_equal(table[:4], Alibi(4, length=6, part="bias", origin="last").build())
    assert not table[4:].any() and not np.signbit(table[4:]).any()
    # any row range is the same bits as the whole table
    np.testing.assert_array_equal(Alibi(4, length=6, part="bias", total_heads=7).rows(3, 6)[1:], np.zeros((2, 6)))
    slopes = Alibi(4, total_heads=6).build()
    np.testing.assert_array_equal(slopes[0, 4:], [0, 0])


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"bias_max": 16}, "the list form does not have"),
        ({"bias_max": 16, "form": "pow"}, "the pow form does not have"),
        ({"bias_max": 0, "form": "recip"}, "bias_max must be"),
        ({"total_heads": 3}, "total_heads must be at least 4"),
    ],
)
def test_alibi_refuses_what_no_framework_builds(params: dict[str, object], message: str) -> None:
    with pytest.raises(RecipeError, match=message):
        Alibi(4, **params)  # type: ignore[arg-type]


def test_alibi_bias_max_and_total_heads_on_the_command_line(run, tmp_path) -> None:
    out = tmp_path / "a.npy"
    r = run("generate", "--preset", "mpt-alibi", "--heads", "8", "--len", "16", "--bias-max", "16",
            "--total-heads", "12", "-o", out)  # fmt: skip
    assert r.exit_code == 0, r.output
    table = np.load(out)
    assert table.shape == (12, 16) and not table[8:].any()
    np.testing.assert_array_equal(-table[:8, -2], Alibi(8, form="recip", bias_max=16).slopes())
    r = run("identify", out)
    assert r.exit_code == 0 and "MATCH" in r.output and "bias_max=16" in r.output and "total_heads=12" in r.output


def test_alibi_matrix_is_minus_distance_times_slope() -> None:
    # Float64 closed form: head h, query i, key j → −|j − i|·2^(−8(h+1)/n), each a float32
    # product of two exact float32 numbers rounded once; heads past --heads are +0.
    heads, total, n = 4, 6, 7
    table = Alibi(heads, length=n, part="matrix", total_heads=total).build()
    assert table.shape == (total * n, n)
    h, i, j = np.meshgrid(np.arange(heads), np.arange(n), np.arange(n), indexing="ij")
    truth = -np.abs(j - i) * 2.0 ** (-8.0 * (h + 1) / heads)
    np.testing.assert_array_equal(table[: heads * n], truth.reshape(heads * n, n).astype(np.float32))
    assert not table[heads * n :].any()
    assert not np.signbit(table[: heads * n][truth.reshape(heads * n, n) == 0]).any()  # +0 on the diagonal
    assert not np.signbit(table[heads * n :]).any()
    # any row range is the same bits as the whole table
    np.testing.assert_array_equal(Alibi(heads, length=n, part="matrix", total_heads=total).rows(9, 30), table[9:30])


def test_alibi_matrix_is_identified_from_a_3d_array(tmp_path) -> None:
    from pecli.identification import identify

    recipe = Alibi(8, length=24, part="matrix", form="recip", bias_max=16)
    found = identify(recipe.build().reshape(8, 24, 24))  # (heads, queries, keys), as torch returns it
    assert found.verdict == "match" and found.best is not None, found.summary
    np.testing.assert_array_equal(found.best.recipe.build(), recipe.build())


@pytest.mark.parametrize("dim", [3, 7, 33])
def test_an_odd_rotary_dim_has_dim_over_2_frequencies_over_dim(dim: int) -> None:
    # rotary-embedding-torch's RotaryEmbedding(dim=7): θ^(−2i/7) for i < 3, pairs, dim − 1 columns.
    n, half = 200, dim // 2
    angle = np.arange(n, dtype=np.float64)[:, None] * 10000.0 ** (-2.0 * np.arange(half) / dim)
    for part, fn in (("cos", np.cos), ("sin", np.sin)):
        table = Rope(n, dim, layout="pairs", part=part, compute="exact", dtype="float64").build()  # type: ignore[arg-type]
        assert table.shape == (n, dim - 1)
        np.testing.assert_allclose(table[:, 0::2], fn(angle), rtol=0, atol=1e-13)
        np.testing.assert_array_equal(table[:, 0::2], table[:, 1::2])
    assert Rope(n, dim, layout="once").shape == (n, half)
    assert Rope(n, dim).describe(short=True).startswith(f"dim={dim} ")
    if half >= 2:  # identify names the odd dim on a user's NumPy table (dim 3: one frequency, θ⁰, any θ)
        from pecli.identification import identify
        from pecli.table import Table

        mine = np.repeat(np.cos(angle), 2, axis=1).astype(np.float32)
        found = identify(Table(mine, None, "mine"))
        assert found.verdict == "match" and found.best is not None, found.summary
        assert isinstance(found.best.recipe, Rope) and (found.best.recipe.dim, found.best.recipe.base) == (dim, 10000.0)


@pytest.mark.parametrize("heads", [3, 5, 6, 12, 20, 40])
def test_geometric_slopes_are_one_series_over_every_head(heads: int) -> None:
    import mpmath

    from pecli.identification import identify
    from pecli.table import Table

    exact = Alibi(heads, compute="exact", dtype="float64", slope_series="geometric").slopes()
    with mpmath.workdps(40):
        truth = [float(mpmath.power(2, mpmath.mpf(-8 * k) / heads)) for k in range(1, heads + 1)]
    assert exact.tolist() == truth  # correctly rounded
    listed = Alibi(heads, slope_series="geometric").slopes()
    np.testing.assert_array_equal(listed, np.array([2 ** (-8 * k / heads) for k in range(1, heads + 1)], np.float32))
    assert not np.array_equal(listed, Alibi(heads).slopes())  # not a power of two: another table
    bias = Alibi(heads, length=48, part="bias", slope_series="geometric").build()
    found = identify(Table(bias, None, "bias.npy"))
    assert found.best is not None and getattr(found.best.recipe, "slope_series", None) == "geometric", found.summary
    ofirpress = identify(Table(Alibi(heads, length=48, part="bias").build(), None, "bias.npy"))
    assert ofirpress.best is not None and getattr(ofirpress.best.recipe, "slope_series", None) == "interleave"


def test_geometric_slopes_go_with_the_list_form_and_a_power_of_two_is_either() -> None:
    with pytest.raises(RecipeError, match="slope_series=geometric is one series"):
        Alibi(12, form="pow", slope_series="geometric")
    np.testing.assert_array_equal(Alibi(16, slope_series="geometric").slopes(), Alibi(16).slopes())


def test_alibi_bias_of_a_query_at_an_offset() -> None:
    # slope·(j − q): a decoding step's row for the query at q; origin first is q = 0, last q = len − 1.
    slopes = np.array([2.0 ** (-8 * (k + 1) / 8) for k in range(8)], dtype=np.float32)
    want = (slopes[:, None] * (np.arange(32, dtype=np.float32) - np.float32(5))[None, :]).astype(np.float32)
    np.testing.assert_array_equal(Alibi(8, length=32, part="bias", query=5).build(), want)
    last = Alibi(8, length=32, part="bias", origin="last").build()
    np.testing.assert_array_equal(Alibi(8, length=32, part="bias", query=31).build(), last)
    for bad in ({"part": "slopes", "length": None}, {"origin": "last"}, {"query": -1}):
        with pytest.raises(RecipeError, match="query"):
            Alibi(8, **{"length": 32, "part": "bias", "query": 5, **bad})  # type: ignore[arg-type]
