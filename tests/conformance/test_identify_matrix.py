"""Conformance matrix for ``pecli identify``: tables built by the frameworks' own code, judged through the CLI.

Every case builds one table with a framework (``references.py``: transformers, timm, positional-encodings,
rotary-embedding-torch, diffusers; never pecli), saves it with ``np.save`` exactly as the framework returns it
(dtype kept, batch dims of size 1 dropped, N-D grids and 1-D vectors left N-D/1-D) and runs
``pecli identify FILE --json`` in-process.  The JSON contract judged here::

    {"verdict": "match"|"close"|"unknown"|"learned", "kind": <kind or null>, "names": [every tie],
     "best": null | {"name", "names": [...], "spec": <SOURCE that rebuilds it>, "atol": <float>,
                     "recipe": {"kind": ..., <every parameter>}}}

A case is RIGHT when: expected kind ``None`` → verdict ``unknown``; expected ``learned`` → verdict ``learned``
and top-level kind ``learned``; otherwise verdict ``match``, ``best.recipe.kind`` = the expected kind, every
expected recipe parameter agrees (floats to rel 1e-6) and the expected preset (if any) is reported as a proved
match: among ``names`` (every name that builds the same table, bit for bit) or an alternative's names.
A FALSE MATCH is a ``match`` whose ``pecli diff FILE <best.spec> --atol <best.atol>`` does not exit 0, a match
of the wrong kind, or a match on a case that expects ``unknown``.

Run the matrix and print its table::

    cd /work/main && /work/venv/bin/python -m pytest tests/conformance/test_identify_matrix.py -q -s -p no:cacheprovider

``test_matrix_summary`` (last in the file) prints one line per case and asserts ≥ 95 % right and no false
match; cases whose framework is not installed are skipped (and left out of the percentage).
"""

from __future__ import annotations

import importlib.util
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import references as ref
from click.testing import CliRunner

from pecli.cli import cli

pytestmark = [pytest.mark.conformance, pytest.mark.slow]

VERDICTS = ("match", "close", "unknown", "learned")
RIGHT_SHARE = 0.95
SUSPICIOUS_ATOL = 1e-3
REL = 1e-6

HF = ("torch", "transformers")
PE = ("torch", "positional_encodings")
TIMM = ("torch", "timm")
RET = ("torch", "rotary_embedding_torch")
DIFFUSERS = ("torch", "diffusers")
NUMPY: tuple[str, ...] = ()


@dataclass(frozen=True)
class Case:
    """One framework table and what ``identify`` must say about it."""

    id: str
    build: Callable[[], np.ndarray]
    kind: str | None  # "sinusoidal", "sincos2d", "rope", "alibi", "learned"; None = must be "unknown"
    preset: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    needs: tuple[str, ...] = HF

    @property
    def expected(self) -> str:
        if self.kind is None:
            return "unknown"
        return self.kind + (f"/{self.preset}" if self.preset else "")


def C(
    id: str,
    build: Callable[[], np.ndarray],
    kind: str | None,
    preset: str | None = None,
    needs: tuple[str, ...] = HF,
    **params: Any,
) -> Case:
    return Case(id, build, kind, preset, params, needs)


# ===================================================================================== builders


def _key(fn: Callable[..., dict[str, np.ndarray]], key: str, *args: Any, **kwargs: Any) -> Callable[[], np.ndarray]:
    return lambda: fn(*args, **kwargs)[key]


def _t(fn: Callable[..., dict[str, np.ndarray]], *args: Any, **kwargs: Any) -> Callable[[], np.ndarray]:
    return _key(fn, "table", *args, **kwargs)


def _llama(
    part: str, rope: dict[str, Any], positions: Sequence[int], head_dim: int = 128, max_pos: int = 2048
) -> Callable[[], np.ndarray]:
    """A part ("cos", "sin", "angle", "emb", "inv_freq") of transformers' LlamaRotaryEmbedding forward."""
    params = {"rope_type": "default", "rope_theta": 10000.0, **rope}
    return lambda: ref.hf_llama_rope(params, np.asarray(positions), head_dim, max_pos)[part]


def _neox(part: str, positions: Sequence[int], **config: Any) -> Callable[[], np.ndarray]:
    return lambda: ref.hf_gpt_neox_rope(np.asarray(positions), **config)[part]


def _bloom(heads: int, length: int) -> Callable[[], np.ndarray]:
    """Bloom's (batch*heads, 1, len) ALiBi for one unpadded sequence, as (heads, len)."""
    return lambda: ref.hf_bloom_alibi(np.ones((1, length), dtype=np.int64), heads)["alibi"].reshape(heads, length)


def _bloom_slopes(heads: int) -> Callable[[], np.ndarray]:
    return lambda: ref.hf_bloom_alibi(np.ones((1, 2), dtype=np.int64), heads)["slopes"]


def _mpt(heads: int, length: int) -> Callable[[], np.ndarray]:
    """MPT's (heads, 1, len) ALiBi as (heads, len)."""
    return lambda: ref.hf_mpt_alibi(heads, length)["alibi"].reshape(heads, length)


def _reshape(build: Callable[[], np.ndarray], *shape: int) -> Callable[[], np.ndarray]:
    return lambda: build().reshape(*shape)


def _llama3_inv_freq(factor: float = 8.0) -> np.ndarray:
    """transformers' llama3 inv_freq (head_dim 128, θ 500000): bit-identical to Meta's apply_scaling."""
    rope = {**LLAMA31, "factor": factor}
    return ref.hf_llama_rope(rope, np.arange(2), 128, 131072)["inv_freq"]


def _meta_llama3(part: str, seq_len: int) -> Callable[[], np.ndarray]:
    """Meta's precompute_freqs_cis(use_scaled=True) as a real table: rotary-embedding-torch's pairs-layout
    cos/sin with HF's llama3 frequencies as custom_freqs."""
    return lambda: ref.rotary_embedding_torch_cos_sin(128, seq_len, custom_freqs=_llama3_inv_freq())[part]


def _pe_bug(length: int, dim: int) -> np.ndarray:
    """A classic bug: angle = (pos/10000)**(2i/d) instead of pos/10000**(2i/d), interleaved."""
    pos = np.arange(length, dtype=np.float64)[:, None]
    expo = (2 * (np.arange(dim) // 2) / dim)[None]
    angle = (pos / 10000.0) ** expo
    out = np.where(np.arange(dim) % 2 == 0, np.sin(angle), np.cos(angle))
    return out.astype(np.float32)


def _random_uniform(length: int, dim: int) -> np.ndarray:
    return np.random.default_rng(1234).uniform(-1.0, 1.0, (length, dim)).astype(np.float32)


def _random_freq_sinusoid(length: int, dim: int) -> np.ndarray:
    """sin/cos at random (log-uniform, unsorted) frequencies: sinusoid-like, but no recipe's."""
    freqs = np.exp(np.random.default_rng(99).uniform(math.log(1e-4), 0.0, dim // 2))
    angle = np.arange(length)[:, None] * freqs[None]
    out = np.empty((length, dim))
    out[:, 0::2], out[:, 1::2] = np.sin(angle), np.cos(angle)
    return out.astype(np.float32)


# ====================================================================================== constants

LLAMA31 = {
    "rope_type": "llama3",
    "rope_theta": 500000.0,
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192,
}
# microsoft/Phi-3-vision-128k-instruct config.json rope_scaling (type "su" = longrope), 48 = 96/2 factors.
PHI3_SHORT = [1.05, 1.05, 1.05, 1.1, 1.1, 1.1, 1.2500000000000002, 1.2500000000000002, 1.4000000000000004]
PHI3_SHORT += [1.4500000000000004, 1.5500000000000005, 1.8500000000000008, 1.9000000000000008]
PHI3_SHORT += [2.000000000000001] * 19 + [2.1000000000000005, 2.1000000000000005, 2.2] + [2.3499999999999996] * 4
PHI3_SHORT += [2.3999999999999995, 2.3999999999999995, 2.6499999999999986, 2.6999999999999984, 2.8999999999999977]
PHI3_SHORT += [2.9499999999999975, 3.049999999999997, 3.049999999999997, 3.049999999999997]
PHI3_LONG = [
    *(1.0299999713897705, 1.0499999523162842, 1.0499999523162842, 1.0799999237060547, 1.2299998998641968),
    *(1.2299998998641968, 1.2999999523162842, 1.4499999284744263, 1.5999999046325684, 1.6499998569488525),
    *(1.8999998569488525, 2.859999895095825, 3.68999981880188, 5.419999599456787, 5.489999771118164),
    *(5.489999771118164, 9.09000015258789, 11.579999923706055, 15.65999984741211, 15.769999504089355),
    *(15.789999961853027, 18.360000610351562, 21.989999771118164, 23.079999923706055, 30.009998321533203),
    *(32.35000228881836, 32.590003967285156, 35.56000518798828, 39.95000457763672, 53.840003967285156),
    *(56.20000457763672, 57.95000457763672, 59.29000473022461, 59.77000427246094, 59.920005798339844),
    *(61.190006256103516, 61.96000671386719, 62.50000762939453, 63.3700065612793, 63.48000717163086),
    *(63.48000717163086, 63.66000747680664, 63.850006103515625, 64.08000946044922, 64.760009765625),
    *(64.80001068115234, 64.81001281738281, 64.81001281738281),
]
PHI3 = {
    "rope_type": "longrope",
    "short_factor": PHI3_SHORT,
    "long_factor": PHI3_LONG,
    "original_max_position_embeddings": 4096,
}
# A made-up longrope model: head_dim 64 (32 factors), trained on 2048, max 8192 (factor 4).
LONGROPE_SHORT = [round(1.0 + 0.05 * i, 2) for i in range(32)]
LONGROPE_LONG = [round(1.0 + 1.5 * i, 1) for i in range(32)]
LONGROPE = {
    "rope_type": "longrope",
    "short_factor": LONGROPE_SHORT,
    "long_factor": LONGROPE_LONG,
    "original_max_position_embeddings": 2048,
}
QWEN3_YARN = {"rope_type": "yarn", "rope_theta": 1e6, "factor": 4.0, "original_max_position_embeddings": 32768}
GPT_OSS = {
    "rope_type": "yarn",
    "rope_theta": 150000.0,
    "factor": 32.0,
    "original_max_position_embeddings": 4096,
    "beta_fast": 32.0,
    "beta_slow": 1.0,
    "truncate": False,
}

_S, _G, _R, _A, _L = "sinusoidal", "sincos2d", "rope", "alibi", "learned"
FAIRSEQ = {"layout": "split", "freq": "t2t", "padding_idx": 1}
T2T = {"layout": "split", "freq": "t2t"}
XLM_SPLIT = {"layout": "split", "freq": "paper"}
XLM_INTER = {"layout": "interleaved", "freq": "paper"}
HALF = {"layout": "half"}
# A tuple of values = any of them is right (tables that several recipes build identically).
PLAIN = ("timm", "timm-reverse")
INTERLEAVED = ("timm-interleave", "timm-reverse-interleave")

# ========================================================================================= the cases

SINUSOIDAL = [
    # fairseq clones (split, i/(half-1), float32, padding row 1, offset rows)
    C("fairseq-m2m100-1026x512", _t(ref.hf_m2m100_sinusoidal, 1024, 512, 1), _S, "fairseq", **FAIRSEQ, dim=512),
    C("m2m100-202x256", _t(ref.hf_m2m100_sinusoidal, 200, 256, 1), _S, "hf-m2m100", **FAIRSEQ, dim=256),
    C("m2m100-odd-102x63", _t(ref.hf_m2m100_sinusoidal, 100, 63, 1), _S, "hf-m2m100", **FAIRSEQ, dim=63, odd="zero"),
    C("m2m100-nopad-66x128", _t(ref.hf_m2m100_sinusoidal, 64, 128), _S, None, **T2T, dim=128, padding_idx=None),
    C("m2m100-pad3-130x64", _t(ref.hf_m2m100_sinusoidal, 128, 64, 3), _S, None, **T2T, dim=64, padding_idx=3),
    C("fsmt-302x128", _t(ref.hf_fsmt_sinusoidal, 302, 128, 1), _S, "hf-fsmt", **FAIRSEQ, dim=128),
    C("fsmt-odd-52x33", _t(ref.hf_fsmt_sinusoidal, 52, 33, 1), _S, "hf-fsmt", **FAIRSEQ, dim=33, odd="zero"),
    C("xglm-202x96", _t(ref.hf_xglm_sinusoidal, 200, 96, 1), _S, "hf-xglm", **FAIRSEQ, dim=96),
    C("speech2text-1002x128", _t(ref.hf_speech2text_sinusoidal, 1000, 128, 1), _S, "hf-speech2text", **FAIRSEQ),
    # Whisper encoder at several widths
    C("whisper-1500x384", _t(ref.hf_whisper_sinusoids, 1500, 384), _S, "whisper", **T2T, dim=384, start=0),
    C("whisper-1500x512", _t(ref.hf_whisper_sinusoids, 1500, 512), _S, "whisper", **T2T, dim=512),
    C("whisper-750x768", _t(ref.hf_whisper_sinusoids, 750, 768), _S, "whisper", **T2T, dim=768),
    C("whisper-400x1024", _t(ref.hf_whisper_sinusoids, 400, 1024), _S, "whisper", **T2T, dim=1024),
    C("whisper-200x1280", _t(ref.hf_whisper_sinusoids, 200, 1280), _S, "whisper", **T2T, dim=1280),
    C("whisper-100x80", _t(ref.hf_whisper_sinusoids, 100, 80), _S, "whisper", **T2T, dim=80),
    C("whisper-timescale5000-300x64", _t(ref.hf_whisper_sinusoids, 300, 64, 5000), _S, None, layout="split", dim=64),
    # MusicGen: cos first
    C("musicgen-512x256", _t(ref.hf_musicgen_sinusoidal, 512, 256), _S, "musicgen", layout="cos-first", freq="t2t"),
    C("musicgen-odd-100x33", _t(ref.hf_musicgen_sinusoidal, 100, 33), _S, "musicgen", layout="cos-first", odd="zero"),
    # float64 NumPy tables, cast once
    C("marian-300x128", _t(ref.hf_marian_sinusoidal, 300, 128), _S, "hf-marian", **XLM_SPLIT, dim=128),
    C("marian-odd-50x7", _t(ref.hf_marian_sinusoidal, 50, 7), _S, "hf-marian", **XLM_SPLIT, dim=7, odd="sin"),
    C("pegasus-600x256", _t(ref.hf_pegasus_sinusoidal, 600, 256), _S, "hf-pegasus", **XLM_SPLIT, dim=256),
    C("roformer-512x32", _t(ref.hf_roformer_sinusoidal, 512, 32), _S, "hf-roformer", **XLM_SPLIT, dim=32),
    C("xlm-256x512", _t(ref.hf_xlm_sinusoidal, 256, 512), _S, "hf-xlm", **XLM_INTER, dim=512),
    C("xlm-odd-40x9", _t(ref.hf_xlm_sinusoidal, 40, 9), _S, "hf-xlm", **XLM_INTER, dim=9, odd="sin"),
    C("distilbert-128x256", _t(ref.hf_distilbert_sinusoidal, 128, 256), _S, "hf-distilbert", **XLM_INTER),
    C("vaswani-via-xlm-200x128", _t(ref.hf_xlm_sinusoidal, 200, 128), _S, "vaswani", **XLM_INTER, dim=128),
    # the PyTorch tutorial's PositionalEncoding (transformers' SpeechT5 copy)
    C("tutorial-speecht5-1000x256", _t(ref.hf_speecht5_scaled_positional_encoding, 1000, 256), _S, "pytorch-tutorial"),
    C("tutorial-speecht5-300x64", _t(ref.hf_speecht5_scaled_positional_encoding, 300, 64), _S, None, **XLM_INTER),
    # GPT-J's rotary table [sin | cos]
    C("gptj-1024x32", _t(ref.hf_gptj_sinusoidal_positions, 1024, 32), _S, "gpt-j", **XLM_SPLIT, dim=32),
    C("gptj-512x128", _t(ref.hf_gptj_sinusoidal_positions, 512, 128), _S, "gpt-j", **XLM_SPLIT, dim=128),
    # positional-encodings 1D (interleaved, odd channels truncated)
    C("pe1d-300x64", _t(ref.pe_positional_encoding_1d, 64, 300), _S, "positional-encodings-1d", needs=PE, **XLM_INTER),
    C(
        "pe1d-odd-100x7",
        _t(ref.pe_positional_encoding_1d, 7, 100),
        _S,
        "positional-encodings-1d",
        needs=PE,
        odd="truncate",
    ),
    C("pe1d-50x10", _t(ref.pe_positional_encoding_1d, 10, 50), _S, "positional-encodings-1d", needs=PE, dim=10),
    C("pe1d-odd-128x65", _t(ref.pe_positional_encoding_1d, 65, 128), _S, None, needs=PE, odd="truncate", dim=65),
    # diffusers get_timestep_embedding
    C(
        "diffusers-t2t-odd-256x129",
        _t(ref.diffusers_timestep_embedding, np.arange(256), 129),
        _S,
        "tensor2tensor",
        needs=DIFFUSERS,
        **T2T,
        odd="zero",
        dim=129,
    ),
    C(
        "diffusers-sd-1000x320",
        _t(ref.diffusers_timestep_embedding, np.arange(1000), 320, flip_sin_to_cos=True, downscale_freq_shift=0),
        _S,
        needs=DIFFUSERS,
        layout="cos-first",
        dim=320,
    ),
    C(
        "diffusers-start7-300x64",
        _t(ref.diffusers_timestep_embedding, np.arange(7, 307), 64),
        _S,
        needs=DIFFUSERS,
        **T2T,
        start=7,
    ),
    C(
        "diffusers-half-odd-256x65",
        _t(ref.diffusers_timestep_embedding, np.arange(256), 65, downscale_freq_shift=0),
        _S,
        needs=DIFFUSERS,
        layout="split",
        freq="half",
        odd="zero",
    ),
]

SINCOS2D = [
    # positional-encodings: N-D as returned (batch dropped), and flattened
    C(
        "pe2d-16x12x64",
        _t(ref.pe_positional_encoding_2d, 64, 16, 12),
        _G,
        "positional-encodings-2d",
        needs=PE,
        grid="16x12",
        order="tatp",
    ),
    C(
        "pe2d-odd-5x7x10",
        _t(ref.pe_positional_encoding_2d, 10, 5, 7),
        _G,
        "positional-encodings-2d",
        needs=PE,
        grid="5x7",
        dim=10,
    ),
    C(
        "pe2d-flat-108x32",
        _reshape(_t(ref.pe_positional_encoding_2d, 32, 12, 9), 108, 32),
        _G,
        needs=PE,
        grid="12x9",
        order="tatp",
    ),
    C(
        "pe3d-6x5x4x48",
        _t(ref.pe_positional_encoding_3d, 48, 6, 5, 4),
        _G,
        "positional-encodings-3d",
        needs=PE,
        grid="6x5x4",
    ),
    C(
        "pe3d-odd-3x4x5x7",
        _t(ref.pe_positional_encoding_3d, 7, 3, 4, 5),
        _G,
        "positional-encodings-3d",
        needs=PE,
        dim=7,
    ),
    C("pe3d-flat-60x24", _reshape(_t(ref.pe_positional_encoding_3d, 24, 4, 3, 5), 60, 24), _G, needs=PE, grid="4x3x5"),
    # MAE order (HF ViTMAE's initialize_weights: halves swapped, zero cls row, float64)
    C(
        "mae-via-vitmae-8x8-384",
        _t(ref.hf_vit_mae_initialized, 128, 16, 384),
        _G,
        "mae",
        grid="8x8",
        order="mae",
        cls=True,
    ),
    C("vitmae-8x8-256", _t(ref.hf_vit_mae_initialized, 64, 8, 256), _G, "hf-vitmae", grid="8x8", cls=True, dim=256),
    C("vitmae-14x14-768", _t(ref.hf_vit_mae_initialized, 224, 16, 768), _G, "hf-vitmae", grid="14x14", cls=True),
    # HF's canonical build_2d_sinusoidal_position_embedding (no swap).  timm's reverse_coord only swaps the
    # roles of the two axes: reverse on H×W is the plain order on W×H (and the same table on a square grid),
    # so the order is only pinned down up to "reverse", and the grid only on square grids.
    C("hf2d-12x12-128", _t(ref.hf_vit_mae_2d, 12, 12, 128), _G, "hf-sincos2d", grid="12x12", order=INTERLEAVED),
    C("hf2d-6x9-64", _t(ref.hf_vit_mae_2d, 6, 9, 64), _G, "hf-sincos2d", order=INTERLEAVED, dim=64),
    C("hf2d-cls-8x8-64", _t(ref.hf_vit_mae_2d, 8, 8, 64, cls_token=True), _G, grid="8x8", cls=True, order=INTERLEAVED),
    C("hf2d-temp100-8x8-64", _t(ref.hf_vit_mae_2d, 8, 8, 64, temperature=100.0), _G, grid="8x8", base=100.0),
    # timm build_sincos2d_pos_embed, every option
    C(
        "timm-10x10-256",
        _t(ref.timm_sincos2d, (10, 10), 256),
        _G,
        "timm-sincos2d",
        needs=TIMM,
        grid="10x10",
        order=PLAIN,
    ),
    C("timm-6x9-64", _t(ref.timm_sincos2d, (6, 9), 64), _G, "timm-sincos2d", needs=TIMM, order=PLAIN),
    C(
        "timm-interleave-8x8-128",
        _t(ref.timm_sincos2d, (8, 8), 128, interleave_sin_cos=True),
        _G,
        "timm-sincos2d-interleave",
        needs=TIMM,
        order=INTERLEAVED,
        grid="8x8",
    ),
    C(
        "timm-interleave-5x7-64",
        _t(ref.timm_sincos2d, (5, 7), 64, interleave_sin_cos=True),
        _G,
        "timm-sincos2d-interleave",
        needs=TIMM,
        order=INTERLEAVED,
    ),
    C(
        "timm-reverse-8x8-128",
        _t(ref.timm_sincos2d, (8, 8), 128, reverse_coord=True),
        _G,
        needs=TIMM,
        order=PLAIN,
        grid="8x8",
    ),
    C(
        "timm-reverse-6x9-64",
        _t(ref.timm_sincos2d, (6, 9), 64, reverse_coord=True),
        _G,
        "timm-sincos2d-reverse",
        needs=TIMM,
        order=PLAIN,
    ),
    C(
        "timm-reverse-interleave-7x5-64",
        _t(ref.timm_sincos2d, (7, 5), 64, reverse_coord=True, interleave_sin_cos=True),
        _G,
        needs=TIMM,
        order=INTERLEAVED,
    ),
    C(
        "timm-temp100-8x8-64",
        _t(ref.timm_sincos2d, (8, 8), 64, temperature=100.0),
        _G,
        needs=TIMM,
        order=PLAIN,
        base=100.0,
    ),
    # MoCo-v3 = timm(reverse, interleave) + zero cls row
    C("moco-v3-via-timm-8x8-256", _t(ref.timm_sincos2d_cls, (8, 8), 256), _G, "moco-v3", needs=TIMM, cls=True),
    C("moco-v3-via-timm-5x7-64", _t(ref.timm_sincos2d_cls, (5, 7), 64), _G, "moco-v3", needs=TIMM, cls=True, dim=64),
]

P1K, P2K, P4K = range(1024), range(2048), range(4096)
ROPE = [
    # Llama default, θ 10000: every part
    C("llama-cos-1024x128", _llama("cos", {}, P1K), _R, "llama", **HALF, base=10000.0, part="cos", dim=128),
    C("llama-sin-1024x128", _llama("sin", {}, P1K), _R, "llama", **HALF, base=10000.0, part="sin", scaling="default"),
    C("llama-angle-1024x64", _llama("angle", {}, P1K), _R, base=10000.0, part="angle"),
    C("llama-emb-512x128", _llama("emb", {}, range(512)), _R, **HALF, base=10000.0, part="angle", dim=128),
    C("llama-inv_freq-64", _llama("inv_freq", {}, range(2)), _R, base=10000.0, part="inv_freq"),
    C("llama-cos-start1000-1000x64", _llama("cos", {}, range(1000, 2000), 64), _R, base=10000.0, start=1000),
    # other θ
    C("rope-theta500000-cos-2048x128", _llama("cos", {"rope_theta": 500000.0}, P2K), _R, base=500000.0, part="cos"),
    C("rope-theta5e5-sin-1024x64", _llama("sin", {"rope_theta": 5e5}, P1K, 64), _R, base=5e5, part="sin", dim=64),
    C("rope-theta5e5-angle-1024x64", _llama("angle", {"rope_theta": 5e5}, P1K), _R, base=5e5, part="angle"),
    C("rope-theta5e5-inv_freq-64", _llama("inv_freq", {"rope_theta": 5e5}, range(2)), _R, base=5e5, part="inv_freq"),
    C("rope-theta1e6-cos-2048x128", _llama("cos", {"rope_theta": 1e6}, P2K), _R, **HALF, base=1e6, part="cos"),
    C("rope-theta1e6-sin-1024x64", _llama("sin", {"rope_theta": 1e6}, P1K, 64), _R, base=1e6, part="sin"),
    C("rope-theta150000-cos-1024x64", _llama("cos", {"rope_theta": 150000.0}, P1K, 64), _R, base=150000.0, part="cos"),
    C("rope-theta12345-cos-1024x64", _llama("cos", {"rope_theta": 12345.0}, P1K, 64), _R, base=12345.0, part="cos"),
    C("rope-theta12345-sin-512x32", _llama("sin", {"rope_theta": 12345.0}, range(512), 32), _R, base=12345.0, dim=32),
    # linear
    C(
        "vicuna16k-linear-cos-2048x128",
        _llama("cos", {"rope_type": "linear", "factor": 4.0}, P2K),
        _R,
        "vicuna-16k",
        scaling="linear",
        factor=4.0,
    ),
    C(
        "linear2-sin-1024x64",
        _llama("sin", {"rope_type": "linear", "factor": 2.0}, P1K, 64),
        _R,
        scaling="linear",
        factor=2.0,
        part="sin",
    ),
    # dynamic NTK: positions past max_position_embeddings
    C(
        "dynamic-cos-2048x64",
        _llama("cos", {"rope_type": "dynamic", "factor": 2.0}, P2K, 64, max_pos=1024),
        _R,
        scaling="dynamic",
        base=10000.0,
        part="cos",
    ),
    C(
        "llama2-dynamic-sin-start4096",
        _llama("sin", {"rope_type": "dynamic", "factor": 2.0}, range(4096, 8192), 128, max_pos=4096),
        _R,
        "llama2-dynamic",
        scaling="dynamic",
        factor=2.0,
        original_max_position_embeddings=4096,
        start=4096,
        part="sin",
    ),
    # dynamic within the original length: the default table (any scaling that rebuilds it is right)
    C(
        "dynamic-inside-cos-1024x64",
        _llama("cos", {"rope_type": "dynamic", "factor": 2.0}, P1K, 64, 4096),
        _R,
        base=10000.0,
    ),
    # yarn
    C(
        "qwen3-yarn-cos-4096x128",
        _llama("cos", QWEN3_YARN, P4K, 128, 131072),
        _R,
        "qwen3-yarn",
        scaling="yarn",
        factor=4.0,
        base=1e6,
    ),
    C(
        "qwen3-yarn-sin-1024x128",
        _llama("sin", QWEN3_YARN, P1K, 128, 131072),
        _R,
        "qwen3-yarn",
        scaling="yarn",
        factor=4.0,
        base=1e6,
        part="sin",
        original_max_position_embeddings=32768,
    ),
    C(
        "qwen3-yarn-inv_freq-64",
        _llama("inv_freq", QWEN3_YARN, range(2), 128, 131072),
        _R,
        scaling="yarn",
        part="inv_freq",
    ),
    C(
        "gpt-oss-yarn-cos-2048x64",
        _llama("cos", GPT_OSS, P2K, 64, 131072),
        _R,
        "gpt-oss",
        scaling="yarn",
        factor=32.0,
        base=150000.0,
        truncate=False,
    ),
    C(
        "yarn-attn1.5-cos-1024x64",
        _llama(
            "cos",
            {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 2048, "attention_factor": 1.5},
            P1K,
            64,
            16384,
        ),
        _R,
        scaling="yarn",
        factor=8.0,
        attention_factor=1.5,
    ),
    C(
        "yarn-mscale-sin-1024x64",
        _llama(
            "sin",
            {
                "rope_type": "yarn",
                "factor": 40.0,
                "original_max_position_embeddings": 4096,
                "mscale": 1.0,
                "mscale_all_dim": 1.0,
            },
            P1K,
            64,
            163840,
        ),
        _R,
        scaling="yarn",
        factor=40.0,
        part="sin",
    ),
    # longrope: short factors below the original length, long factors past it
    C(
        "phi3-longrope-short-cos-2048x96",
        _llama("cos", PHI3, P2K, 96, 131072),
        _R,
        "phi3-vision-128k",
        scaling="longrope",
    ),
    C(
        "phi3-longrope-long-cos-start4096",
        _llama("cos", PHI3, range(4096, 6144), 96, 131072),
        _R,
        "phi3-vision-128k",
        scaling="longrope",
        start=4096,
    ),
    C(
        "longrope-short-sin-1024x64",
        _llama("sin", LONGROPE, P1K, 64, 8192),
        _R,
        scaling="longrope",
        part="sin",
        factor=4.0,
        original_max_position_embeddings=2048,
    ),
    C(
        "longrope-long-sin-start2048",
        _llama("sin", LONGROPE, range(2048, 3072), 64, 8192),
        _R,
        scaling="longrope",
        start=2048,
    ),
    # llama3
    C(
        "llama3-cos-4096x128",
        _llama("cos", LLAMA31, P4K, 128, 131072),
        _R,
        "llama3",
        scaling="llama3",
        factor=8.0,
        base=500000.0,
    ),
    C(
        "llama3-factor32-sin-2048x128",
        _llama("sin", {**LLAMA31, "factor": 32.0}, P2K, 128, 131072),
        _R,
        scaling="llama3",
        factor=32.0,
        low_freq_factor=1.0,
        high_freq_factor=4.0,
        original_max_position_embeddings=8192,
        part="sin",
    ),
    C("llama3-inv_freq-64", _llama("inv_freq", LLAMA31, range(2), 128, 131072), _R, scaling="llama3", part="inv_freq"),
    # GPT-NeoX partial rotary
    C(
        "gpt-neox-cos-2048x24",
        _neox("cos", P2K, hidden_size=384, num_attention_heads=4, rotary_pct=0.25),
        _R,
        "gpt-neox",
        **HALF,
        dim=24,
        base=10000.0,
    ),
    C(
        "pythia-cos-1024x32",
        _neox("cos", P1K, hidden_size=512, num_attention_heads=4, rotary_pct=0.25),
        _R,
        "pythia",
        dim=32,
        part="cos",
    ),
    C(
        "neox-pct0.5-sin-1024x32",
        _neox("sin", P1K, hidden_size=256, num_attention_heads=4, rotary_pct=0.5),
        _R,
        dim=32,
        part="sin",
    ),
    C(
        "neox-base50000-cos-512x16",
        _neox("cos", range(512), hidden_size=256, num_attention_heads=4, rotary_pct=0.25, rotary_emb_base=50000),
        _R,
        base=50000.0,
        dim=16,
    ),
    # rotary-embedding-torch (pairs layout; its forward returns angles)
    C(
        "ret-angles-1024x64",
        _key(ref.rotary_embedding_torch_angles, "angles", 64, 1024),
        _R,
        needs=RET,
        layout="pairs",
        part="angle",
        base=10000.0,
    ),
    C(
        "ret-freqs-32",
        _key(ref.rotary_embedding_torch_angles, "freqs", 64, 4),
        _R,
        needs=RET,
        base=10000.0,
        part="inv_freq",
    ),
    C(
        "ret-interpolate2-angles-512x64",
        _key(ref.rotary_embedding_torch_angles, "angles", 64, 512, interpolate_factor=2.0),
        _R,
        needs=RET,
        layout="pairs",
        part="angle",
        scaling="linear",
        factor=2.0,
    ),
    C(
        "ret-rescale2-angles-512x64",
        _key(ref.rotary_embedding_torch_angles, "angles", 64, 512, theta_rescale_factor=2.0),
        _R,
        needs=RET,
        layout="pairs",
        base=10000.0 * 2.0 ** (64 / 62),
    ),
    C(
        "ret-offset10-angles-500x32",
        _key(ref.rotary_embedding_torch_angles, "angles", 32, 500, offset=10),
        _R,
        needs=RET,
        layout="pairs",
        start=10,
    ),
    C(
        "meta-llama-via-ret-cos-2048x128",
        _key(ref.rotary_embedding_torch_cos_sin, "cos", 128, 2048),
        _R,
        "meta-llama",
        needs=RET,
        layout="pairs",
        part="cos",
    ),
    C(
        "ret-theta5e5-sin-1024x64",
        _key(ref.rotary_embedding_torch_cos_sin, "sin", 64, 1024, theta=500000),
        _R,
        needs=RET,
        layout="pairs",
        part="sin",
        base=500000.0,
    ),
    C(
        "meta-llama3-via-ret-cos-2048x128",
        _meta_llama3("cos", 2048),
        _R,
        "meta-llama3",
        needs=(*HF, "rotary_embedding_torch"),
        layout="pairs",
        scaling="llama3",
    ),
]

ALIBI = [
    # Bloom build_alibi_tensor (slope·j, origin first), reshaped (heads, len)
    C("bloom-112h-256", _bloom(112, 256), _A, "bloom-alibi", heads=112, part="bias", origin="first", length=256),
    C("bloom-8h-128", _bloom(8, 128), _A, heads=8, part="bias", origin="first"),
    C("bloom-12h-64", _bloom(12, 64), _A, heads=12, part="bias"),
    C("bloom-16h-256", _bloom(16, 256), _A, heads=16, part="bias"),
    C("bloom-20h-100", _bloom(20, 100), _A, heads=20, part="bias", length=100),
    C("bloom-6h-50", _bloom(6, 50), _A, heads=6, part="bias"),
    # slopes, 1-D as the functions return them
    C("alibi-slopes-4h-via-bloom", _bloom_slopes(4), _A, "alibi", heads=4, part="slopes"),
    C("bloom-slopes-12h", _bloom_slopes(12), _A, heads=12, part="slopes"),
    C("bloom-slopes-112h", _bloom_slopes(112), _A, heads=112, part="slopes"),
    C("mpt-slopes-24h", _key(ref.hf_mpt_alibi, "slopes", 24, 8), _A, heads=24, part="slopes"),
    # MPT build_mpt_alibi_tensor (slope·(j−L+1), origin last)
    C("mpt-32h-256", _mpt(32, 256), _A, "mpt-alibi", heads=32, part="bias", origin="last"),
    C("mpt-8h-128", _mpt(8, 128), _A, heads=8, part="bias", origin="last", length=128),
    C("mpt-12h-64", _mpt(12, 64), _A, heads=12, origin="last"),
    C("mpt-7h-50", _mpt(7, 50), _A, heads=7, origin="last"),
    C("mpt-24h-80", _mpt(24, 80), _A, heads=24, origin="last"),
    C("mpt-48h-32", _mpt(48, 32), _A, heads=48, origin="last"),
]

LEARNED = [
    C("hf-bert-128x64", _t(ref.hf_bert_position_embeddings, 128, 64, seed=1), _L, "hf-bert"),
    C(
        "bert-tf-truncnormal-128x64",
        _t(ref.timm_trunc_normal_parameter, (128, 64), 0.02, seed=2, tf_style=True),
        _L,
        "bert",
        needs=TIMM,
    ),
    C("gpt2-256x64", _t(ref.hf_gpt2_wpe, 256, 64, seed=3), _L, "gpt2"),
    C("roberta-130x64", _t(ref.hf_roberta_position_embeddings, 130, 64, seed=4), _L, "roberta"),
    C("bart-130x64", _t(ref.hf_bart_learned_positional_embedding, 128, 64, seed=5), _L, "bart"),
    C("vit-hf-17x64", _t(ref.hf_vit_position_embeddings, 32, 8, 64, seed=6), _L, "vit"),
    C("vit-timm-65x128", _t(ref.timm_trunc_normal_parameter, (1, 65, 128), 0.02, seed=7), _L, "vit", needs=TIMM),
    C("distilbert-learned-128x64", _t(ref.hf_distilbert_position_embeddings, 128, 64, seed=8), _L),
    C("opt-130x64", _t(ref.hf_opt_embed_positions, 128, 64, seed=9), _L),
    C("whisper-decoder-448x64", _t(ref.hf_whisper_decoder_embed_positions, 448, 64, seed=10), _L),
]

NEGATIVE = [
    C("bug-pos-over-base-pow-256x64", lambda: _pe_bug(256, 64), None, needs=NUMPY),
    C("random-uniform-512x128", lambda: _random_uniform(512, 128), None, needs=NUMPY),
    C("random-freq-sinusoid-256x64", lambda: _random_freq_sinusoid(256, 64), None, needs=NUMPY),
]

CASES: list[Case] = [*SINUSOIDAL, *SINCOS2D, *ROPE, *ALIBI, *LEARNED, *NEGATIVE]
assert len({c.id for c in CASES}) == len(CASES), "case ids must be unique"


# ======================================================================================== judging


@dataclass
class Outcome:
    case: Case
    verdict: str | None = None
    kind: str | None = None  # best.recipe.kind for a match, else the top-level kind
    name: str | None = None
    names: list[str] = field(default_factory=list)
    spec: str | None = None
    atol: float | None = None
    max_abs: float | None = None
    right: bool = False
    false_match: bool | None = False  # None: a match that could not be checked (no spec or no atol)
    problems: list[str] = field(default_factory=list)

    def describe(self) -> str:
        head = f"{self.case.id}: expected {self.case.expected} {self.case.params or ''}; got verdict={self.verdict!r}"
        head += f" kind={self.kind!r} name={self.name!r} names={self.names} spec={self.spec!r} atol={self.atol!r}"
        return head + "".join(f"\n  - {p}" for p in self.problems)


RUNNER = CliRunner()


def _agree(expected: Any, got: Any) -> bool:
    if isinstance(expected, tuple):
        return any(_agree(e, got) for e in expected)
    if expected is None:
        return got is None
    if isinstance(expected, bool):
        return got is expected or got == expected
    if isinstance(expected, (int, float)):
        if isinstance(got, bool) or not isinstance(got, (int, float)):
            return False
        if isinstance(expected, int):
            return got == expected
        return math.isclose(float(got), expected, rel_tol=REL, abs_tol=0.0)
    return got == expected


def _missing(case: Case) -> str | None:
    for module in case.needs:
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed"
    return None


def judge(case: Case, workdir: Path) -> Outcome:
    """Build the table, run `pecli identify --json` on it, and judge the answer (and its diff, for a match)."""
    out = Outcome(case)
    try:
        table = case.build()
    except Exception as exc:  # a reference that cannot be built is a test bug: report it, don't hide it
        out.problems.append(f"building the reference failed: {type(exc).__name__}: {exc}")
        return out
    path = workdir / f"{case.id}.npy"
    np.save(path, table)
    res = RUNNER.invoke(cli, ["identify", str(path), "--json"])
    if res.exit_code != 0:
        out.problems.append(f"`identify --json` exited {res.exit_code}: {(res.stderr or res.output).strip()[-300:]}")
        return out
    try:
        data = json.loads(res.stdout)
    except json.JSONDecodeError as exc:
        out.problems.append(f"`identify --json` printed no JSON ({exc}): {res.stdout[:200]!r}")
        return out

    out.verdict = data.get("verdict")
    if out.verdict not in VERDICTS:
        out.problems.append(f"verdict {out.verdict!r} is not one of {VERDICTS}")
    if "kind" not in data:
        out.problems.append("contract: top-level 'kind' missing from identify --json")
    best = data.get("best") or {}
    recipe = best.get("recipe") or {}
    out.name = best.get("name")
    # Every name that builds this very table (ties included) is at the top level; best.names are the
    # best recipe's own.
    out.names = list(data.get("names") or best.get("names") or ([out.name] if out.name else []))
    out.spec = best.get("spec")
    out.atol = best.get("atol")
    out.kind = recipe.get("kind") if out.verdict == "match" else data.get("kind")

    if out.verdict == "match":
        _check_match(out, case, path, best, recipe)
    out.right = _is_right(out, case, data, recipe)
    return out


def _check_match(out: Outcome, case: Case, path: Path, best: dict[str, Any], recipe: dict[str, Any]) -> None:
    """Rule 3: a match is false when its spec does not rebuild the table within its atol, or its kind is wrong,
    or the case expects "unknown".  Without best.atol (pre-contract JSON) the diff runs with the legacy
    "tolerance" only to show max|Δ|, and the match stays unchecked (never silently passed)."""
    reasons = []
    if case.kind is None:
        reasons.append("a match on a table that no recipe makes (expected unknown)")
    if "kind" not in recipe:
        out.problems.append("contract: best.recipe.kind missing")
    elif recipe["kind"] != case.kind:
        reasons.append(f"matched kind {recipe['kind']!r}, the table is {case.kind!r}")
    atol = out.atol
    if atol is None:
        out.problems.append("contract: best.atol missing, cannot check the match with `pecli diff --atol`")
        atol = best.get("tolerance")  # the pre-contract field, only to show max|Δ|
    if not out.spec:
        out.problems.append("contract: best.spec missing, cannot rebuild the match")
    else:
        args = ["diff", str(path), out.spec, "--json"] + (["--atol", repr(float(atol))] if atol is not None else [])
        res = RUNNER.invoke(cli, args)
        try:
            out.max_abs = json.loads(res.stdout).get("max_abs")
        except (json.JSONDecodeError, AttributeError):
            out.max_abs = None
        if res.exit_code != 0:
            if out.max_abs is not None:
                why = f"max|Δ| {out.max_abs!r}"
            else:
                why = (res.stderr or res.output).strip()[-200:] or repr(res.exception)
            message = f"`pecli diff FILE <best.spec> --atol {atol!r}` exited {res.exit_code} ({why})"
            if out.atol is not None:
                reasons.append(message)
            else:
                out.problems.append(f"with the legacy tolerance: {message}")
    if reasons:
        out.false_match = True
        out.problems += [f"FALSE MATCH: {r}" for r in reasons]
    elif out.atol is None or not out.spec:
        out.false_match = None


def _is_right(out: Outcome, case: Case, data: dict[str, Any], recipe: dict[str, Any]) -> bool:
    if case.kind is None:
        ok = out.verdict == "unknown"
        if not ok:
            out.problems.append(f"expected verdict 'unknown', got {out.verdict!r}")
        return ok
    if case.kind == "learned":
        ok = out.verdict == "learned" and data.get("kind") == "learned"
        if not ok:
            out.problems.append(
                f"expected verdict 'learned' and kind 'learned', got {out.verdict!r}/{data.get('kind')!r}"
            )
        return ok
    if out.verdict != "match":
        out.problems.append(f"expected verdict 'match', got {out.verdict!r}")
        return False
    ok = True
    if recipe.get("kind") != case.kind:
        out.problems.append(f"expected kind {case.kind!r}, got {recipe.get('kind')!r}")
        ok = False
    for key, want in case.params.items():
        got = recipe.get(key)
        if not _agree(want, got):
            out.problems.append(
                f"recipe {key}: expected {want!r}, got {got!r}" + ("" if key in recipe else " (absent)")
            )
            ok = False
    # The preset must be reported as a proved match: the best's names and ties, or an "also matches".
    also = [n for alt in data.get("alternatives") or [] for n in alt.get("names") or []]
    if case.preset and case.preset not in out.names + also:
        out.problems.append(f"preset {case.preset!r} not among the names {out.names} nor also-matches {also}")
        ok = False
    return ok


# ========================================================================================== tests

_OUTCOMES: dict[str, Outcome] = {}


#: Cases identify does not get right yet, and why (each must still give no false match; the
#: summary counts them against the 95 % bar, and strict xfail flags the day one starts passing).
KNOWN_GAPS: dict[str, str] = {
    "pe3d-odd-3x4x5x7": "a 3-D grid truncated to an odd width leaves an axis without its cos column",
    "longrope-long-sin-start2048": "longrope factors that are not round numbers are not fitted, so no start is found",
}


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_identify_matrix(case: Case, tmp_path: Path) -> None:
    reason = _missing(case)
    if reason:
        pytest.skip(reason)
    out = judge(case, tmp_path)
    _OUTCOMES[case.id] = out
    assert out.false_match is False, f"false match or unverifiable match:\n{out.describe()}"
    if case.id in KNOWN_GAPS and not out.right:
        pytest.xfail(KNOWN_GAPS[case.id])
    assert out.right, f"not right:\n{out.describe()}"
    assert case.id not in KNOWN_GAPS, f"{case.id} is right now: remove it from KNOWN_GAPS"


def _fmt_delta(out: Outcome) -> str:
    if out.verdict != "match":
        return ""
    delta = "?" if out.max_abs is None else f"{out.max_abs:.1e}"
    atol = "no atol" if out.atol is None else f"{out.atol:.1e}"
    return f"{delta}/{atol}" + ("!" if _suspicious(out) else "")


def _suspicious(out: Outcome) -> bool:
    """A match whose atol is far above any float32 pipeline's rounding here (≤ ~3e-4 at 4096 positions):
    not a false match by the rules (the diff passes), but worth a look; flagged "!" in the summary."""
    return out.verdict == "match" and out.atol is not None and out.atol > SUSPICIOUS_ATOL


def test_matrix_summary(tmp_path: Path) -> None:
    """One line per case (`-s` shows it); ≥ 95 % right and no false match over the cases that ran."""
    rows: list[Outcome] = []
    skipped: list[str] = []
    for case in CASES:
        if _missing(case):
            skipped.append(case.id)
            continue
        rows.append(_OUTCOMES.get(case.id) or judge(case, tmp_path))
    if not rows:
        pytest.skip("no framework installed")
    widths = (36, 34, 8, 24, 17, 6)
    header = ("case", "expected", "verdict", "got name", "max|Δ|/atol", "right", "false match?")
    lines = ["", "  ".join(h.ljust(w) for h, w in zip(header, (*widths, 0), strict=True)).rstrip()]
    for out in rows:
        false = {True: "FALSE", False: "", None: "unchecked"}[out.false_match]
        cells = (out.case.id, out.case.expected, str(out.verdict), str(out.name or ""), _fmt_delta(out))
        cells += ("yes" if out.right else "NO", false)
        lines.append("  ".join(c[: w or None].ljust(w) for c, w in zip(cells, (*widths, 0), strict=True)).rstrip())
    right = sum(o.right for o in rows)
    false = [o for o in rows if o.false_match]
    unchecked = [o for o in rows if o.false_match is None]
    by_kind: dict[str, list[int]] = {}
    for o in rows:
        tally = by_kind.setdefault(o.case.kind or "unknown", [0, 0])
        tally[0] += o.right
        tally[1] += 1
    lines.append(
        f"right {right}/{len(rows)} ({right / len(rows):.1%}); false matches {len(false)}; unchecked matches "
        f'{len(unchecked)}; matches with atol > {SUSPICIOUS_ATOL:g} ("!"): {sum(map(_suspicious, rows))}; '
        f"skipped {len(skipped)}; per kind: " + ", ".join(f"{k} {r}/{n}" for k, (r, n) in by_kind.items())
    )
    print("\n".join(lines))
    assert not false, "false matches:\n" + "\n".join(o.describe() for o in false)
    assert not unchecked, "matches that could not be checked:\n" + "\n".join(o.describe() for o in unchecked)
    assert right >= RIGHT_SHARE * len(rows), f"only {right}/{len(rows)} right (need {RIGHT_SHARE:.0%})"
