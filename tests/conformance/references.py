"""Reference tables computed by the real frameworks' own code (conformance tests, reference side).

Every function here is a *thin wrapper*: it imports one framework lazily, calls that framework's own
class or function with the framework's native argument names, and returns a ``dict`` of NumPy arrays
(no formula is re-implemented here).  The arrays keep the dtype the framework produced (float32 for
every table below; integer offsets/flags are 0-d ``int64`` arrays; scalars such as RoPE's
``attention_scaling`` are 0-d ``float64`` arrays because the framework returns a Python float).

Conventions
-----------
* torch on CPU, under ``torch.no_grad()``; the global torch RNG is only touched inside
  ``torch.random.fork_rng()`` (learned tables), so calling a wrapper never changes a test's random state.
* Missing frameworks raise ``ImportError`` (``ModuleNotFoundError``) from the lazy import, so tests
  can guard with ``pytest.importorskip("transformers")`` etc.
* The main table is always under the key ``"table"`` (RoPE: ``"cos"``/``"sin"``; ALiBi: ``"alibi"``;
  rotary-embedding-torch: ``"angles"``), with the batch dimension dropped where the framework adds one.

Checked with (see tests/conformance/INSTALL.md): torch 2.13.0+cpu, transformers 5.23.0, timm 1.0.31
(installed ``--no-deps``: the one module needed is loaded without ``timm/__init__`` so torchvision is
not needed), positional-encodings 6.0.3, rotary-embedding-torch 0.9.1, diffusers 0.42.1.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import sys
import types
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

Arrays = dict[str, np.ndarray]

#: Versions every wrapper was written against and run with; ``framework_versions()`` reports the installed ones.
CHECKED_WITH = {
    "torch": "2.13.0",
    "transformers": "5.23.0",
    "timm": "1.0.31",
    "positional-encodings": "6.0.3",
    "rotary-embedding-torch": "0.9.1",
    "diffusers": "0.42.1",
    "torchtune": "0.6.1",
    "keras-hub": "0.32.0",
    "litgpt": "0.5.13",
    "x-transformers": "2.31.10",
    "vit-pytorch": "1.26.11",
    "torchscale": "0.3.0",
    "kornia": "0.9.0",
}


def framework_versions() -> dict[str, str | None]:
    """Installed version of each framework in ``CHECKED_WITH`` (``None`` when it is not installed)."""
    out: dict[str, str | None] = {}
    for dist in CHECKED_WITH:
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            out[dist] = None
    return out


# --------------------------------------------------------------------------------------------- helpers


def _torch() -> Any:
    import torch

    return torch


def marks(*modules: str) -> list[Any]:
    """A conformance module's ``pytestmark``: conformance, slow, and skipped unless every one of
    ``modules`` (the framework whose own code it runs, and torch where it needs it) imports."""
    import pytest

    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    reason = f"{', '.join(missing)} not installed (the conformance group: tests/conformance/INSTALL.md)"
    return [pytest.mark.conformance, pytest.mark.slow, pytest.mark.skipif(bool(missing), reason=reason)]


def _np(tensor: Any) -> np.ndarray:
    """A detached CPU copy of ``tensor`` as a NumPy array, dtype unchanged."""
    return tensor.detach().cpu().numpy().copy()


def _scalar(value: Any, dtype: Any = np.float64) -> np.ndarray:
    """A Python/torch scalar as a 0-d array (float64 by default: the frameworks hand back Python floats)."""
    if hasattr(value, "item"):
        value = value.item()
    return np.asarray(value, dtype=dtype)


def _position_ids(position_ids: Iterable[int] | np.ndarray) -> Any:
    """Positions as the ``(1, n)`` int64 tensor HF rotary modules expect."""
    torch = _torch()
    return torch.as_tensor(np.asarray(list(position_ids), dtype=np.int64)).reshape(1, -1)


# ===================================================================== transformers: fairseq-style clones


def hf_m2m100_sinusoidal(num_positions: int, embedding_dim: int, padding_idx: int | None = None) -> Arrays:
    """transformers ``models/m2m_100/modeling_m2m_100.py::M2M100SinusoidalPositionalEmbedding`` (checked: 5.23.0).

    Returns the module's full ``weights`` buffer as ``table``: ``num_positions + offset`` rows
    (``offset`` = 2, also returned), split ``[sin | cos]``, ``/(half-1)`` frequencies, float32
    (``torch.get_default_dtype()``), row ``padding_idx`` zero, odd width → trailing zero column.
    """
    torch = _torch()
    from transformers.models.m2m_100.modeling_m2m_100 import M2M100SinusoidalPositionalEmbedding

    with torch.no_grad():
        module = M2M100SinusoidalPositionalEmbedding(num_positions, embedding_dim, padding_idx)
        return {"table": _np(module.weights), "offset": _scalar(module.offset, np.int64)}


def hf_fsmt_sinusoidal(num_positions: int, embedding_dim: int, padding_idx: int) -> Arrays:
    """transformers ``models/fsmt/modeling_fsmt.py::SinusoidalPositionalEmbedding`` (checked: 5.23.0).

    An ``nn.Embedding`` subclass: its constructor alone leaves torch's *random* ``normal(0, 1)`` init in
    ``weight`` (the sinusoid is written by ``PretrainedFSMTModel._init_weights`` or by ``make_weight`` when
    forward grows the table), so this calls the class's own ``make_weight(num_positions, embedding_dim,
    padding_idx)``.  ``table`` has exactly ``num_positions`` rows (no offset added here: ``FSMTEncoder``
    passes ``max_position_embeddings + padding_idx + 1``), split ``[sin | cos]``, float32, row
    ``padding_idx`` zero.  ``padding_idx`` is required (``nn.Embedding`` accepts ``None`` but
    ``get_embedding`` then zeroes nothing).
    """
    torch = _torch()
    from transformers.models.fsmt.modeling_fsmt import SinusoidalPositionalEmbedding

    with torch.no_grad():
        module = SinusoidalPositionalEmbedding(num_positions, embedding_dim, padding_idx)
        module.make_weight(num_positions, embedding_dim, padding_idx)
        return {"table": _np(module.weight)}


def hf_xglm_sinusoidal(num_positions: int, embedding_dim: int, padding_idx: int | None = None) -> Arrays:
    """transformers ``models/xglm/modeling_xglm.py::XGLMSinusoidalPositionalEmbedding`` (checked: 5.23.0).

    Full ``weights`` buffer (``num_positions + 2`` rows, row ``padding_idx`` zero, split, float32) and
    ``offset`` (2).  XGLM's forward looks rows up at ``position_ids + offset`` regardless of ``padding_idx``.
    """
    torch = _torch()
    from transformers.models.xglm.modeling_xglm import XGLMSinusoidalPositionalEmbedding

    with torch.no_grad():
        module = XGLMSinusoidalPositionalEmbedding(num_positions, embedding_dim, padding_idx)
        return {"table": _np(module.weights), "offset": _scalar(module.offset, np.int64)}


def hf_speech2text_sinusoidal(num_positions: int, embedding_dim: int, padding_idx: int | None = None) -> Arrays:
    """transformers ``models/speech_to_text/modeling_speech_to_text.py::Speech2TextSinusoidalPositionalEmbedding``
    (checked: 5.23.0).

    Same table as M2M100: ``weights`` buffer with ``num_positions + 2`` rows, row ``padding_idx`` zero,
    split ``[sin | cos]``, float32; ``offset`` = 2.
    """
    torch = _torch()
    from transformers.models.speech_to_text.modeling_speech_to_text import Speech2TextSinusoidalPositionalEmbedding

    with torch.no_grad():
        module = Speech2TextSinusoidalPositionalEmbedding(num_positions, embedding_dim, padding_idx)
        return {"table": _np(module.weights), "offset": _scalar(module.offset, np.int64)}


def hf_musicgen_sinusoidal(num_positions: int, embedding_dim: int) -> Arrays:
    """transformers ``models/musicgen/modeling_musicgen.py::MusicgenSinusoidalPositionalEmbedding`` (checked: 5.23.0).

    The ``weights`` buffer = the table for positions ``0 .. num_positions-1``: fairseq frequencies
    (``/(half-1)``) but **cos first** ``[cos | sin]``, no padding row, no offset, float32.
    """
    torch = _torch()
    from transformers.models.musicgen.modeling_musicgen import MusicgenSinusoidalPositionalEmbedding

    with torch.no_grad():
        module = MusicgenSinusoidalPositionalEmbedding(num_positions, embedding_dim)
        return {"table": _np(module.weights)}


# ====================================================== transformers: XLM-style tables computed in float64


def _create_weight(cls: Any, num_positions: int, embedding_dim: int, padding_idx: int | None) -> Arrays:
    torch = _torch()
    with torch.no_grad():
        module = cls(num_positions, embedding_dim, padding_idx)
        return {"table": _np(module.create_weight())}


def hf_marian_sinusoidal(num_positions: int, embedding_dim: int, padding_idx: int | None = None) -> Arrays:
    """transformers ``models/marian/modeling_marian.py::MarianSinusoidalPositionalEmbedding.create_weight``
    (checked: 5.23.0).

    ``create_weight()`` of a module built with ``(num_positions, embedding_dim, padding_idx)``: float64
    NumPy angles ``pos / 10000**(2*(j//2)/dim)``, cast once to float32; split with the sin block
    ``ceil(dim/2)`` wide; positions ``0 .. num_positions-1``.  ``padding_idx`` is accepted and **ignored**
    (no zero row, no offset).  The module's own ``weight`` is random until ``_init_weights`` copies this in.
    """
    from transformers.models.marian.modeling_marian import MarianSinusoidalPositionalEmbedding

    return _create_weight(MarianSinusoidalPositionalEmbedding, num_positions, embedding_dim, padding_idx)


def hf_pegasus_sinusoidal(num_positions: int, embedding_dim: int, padding_idx: int | None = None) -> Arrays:
    """transformers ``models/pegasus/modeling_pegasus.py::PegasusSinusoidalPositionalEmbedding.create_weight``
    (checked: 5.23.0).  A verbatim copy of Marian's (float64 → float32, split, ``padding_idx`` ignored).
    """
    from transformers.models.pegasus.modeling_pegasus import PegasusSinusoidalPositionalEmbedding

    return _create_weight(PegasusSinusoidalPositionalEmbedding, num_positions, embedding_dim, padding_idx)


def hf_roformer_sinusoidal(num_positions: int, embedding_dim: int, padding_idx: int | None = None) -> Arrays:
    """transformers ``models/roformer/modeling_roformer.py::RoFormerSinusoidalPositionalEmbedding.create_weight``
    (checked: 5.23.0).  Marian's split float64 table; RoFormer builds it per head
    (``embedding_dim = hidden_size // num_attention_heads``) and applies it *interleaved*.
    """
    from transformers.models.roformer.modeling_roformer import RoFormerSinusoidalPositionalEmbedding

    return _create_weight(RoFormerSinusoidalPositionalEmbedding, num_positions, embedding_dim, padding_idx)


def _fill(fn: Any, n_pos: int, dim: int) -> Arrays:
    torch = _torch()
    with torch.no_grad():
        out = torch.empty(n_pos, dim, dtype=torch.float32)
        fn(n_pos=n_pos, dim=dim, out=out)
        return {"table": _np(out)}


def hf_xlm_sinusoidal(n_pos: int, dim: int) -> Arrays:
    """transformers ``models/xlm/modeling_xlm.py::create_sinusoidal_embeddings(n_pos, dim, out)`` (checked: 5.23.0).

    Fills a float32 ``out`` tensor (like ``XLMModel``'s ``position_embeddings.weight``) in place:
    **interleaved** (col ``2i`` sin, ``2i+1`` cos), float64 NumPy angles, one ``torch.FloatTensor`` cast.
    """
    from transformers.models.xlm.modeling_xlm import create_sinusoidal_embeddings

    return _fill(create_sinusoidal_embeddings, n_pos, dim)


def hf_distilbert_sinusoidal(n_pos: int, dim: int) -> Arrays:
    """transformers ``models/distilbert/modeling_distilbert.py::create_sinusoidal_embeddings(n_pos, dim, out)``
    (checked: 5.23.0).  Same as XLM (interleaved, float64 → float32); DistilBERT only uses it when
    ``config.sinusoidal_pos_embds=True`` (default False → learned table).
    """
    from transformers.models.distilbert.modeling_distilbert import create_sinusoidal_embeddings

    return _fill(create_sinusoidal_embeddings, n_pos, dim)


# ================================================================================= transformers: oddballs


def hf_whisper_sinusoids(length: int, channels: int, max_timescale: float = 10000) -> Arrays:
    """transformers ``models/whisper/modeling_whisper.py::sinusoids(length, channels, max_timescale=10000)``
    (checked: 5.23.0).  Encoder table, split ``[sin | cos]``, ``/(channels//2 - 1)``, positions 0-based,
    float32; odd ``channels`` → ``ValueError``.
    """
    torch = _torch()
    from transformers.models.whisper.modeling_whisper import sinusoids

    with torch.no_grad():
        return {"table": _np(sinusoids(length, channels, max_timescale))}


def hf_gptj_sinusoidal_positions(num_pos: int, dim: int) -> Arrays:
    """transformers ``models/gptj/modeling_gptj.py::create_sinusoidal_positions(num_pos, dim)`` (checked: 5.23.0).

    GPT-J's rotary table (``dim`` = ``rotary_dim``): ``[sin | cos]`` of ``dim/2`` frequencies
    ``1/10000**(arange(0, dim, 2)/dim)``, float32, ``num_pos`` rows; applied interleaved by the model.
    """
    torch = _torch()
    from transformers.models.gptj.modeling_gptj import create_sinusoidal_positions

    with torch.no_grad():
        return {"table": _np(create_sinusoidal_positions(num_pos, dim))}


def hf_speecht5_scaled_positional_encoding(max_len: int, dim: int) -> Arrays:
    """transformers ``models/speecht5/modeling_speecht5.py::SpeechT5ScaledPositionalEncoding(dropout, dim, max_len)``
    (checked: 5.23.0).  Its ``__init__`` is the PyTorch tutorial's ``PositionalEncoding`` line for line
    (``div_term = exp(arange(0, dim, 2) * -(ln 10000 / dim))``, ``pe[:, 0::2] = sin``, ``pe[:, 1::2] = cos``,
    float32, **interleaved**); ``table`` = the ``pe`` buffer ``(1, max_len, dim)`` without its batch dim.
    Odd ``dim`` → RuntimeError (size mismatch), as in the tutorial.
    """
    torch = _torch()
    from transformers.models.speecht5.modeling_speecht5 import SpeechT5ScaledPositionalEncoding

    with torch.no_grad():
        module = SpeechT5ScaledPositionalEncoding(0.0, dim, max_len)
        return {"table": _np(module.pe[0])}


def hf_vit_mae_2d(
    height: int, width: int, embed_dim: int = 256, temperature: float = 10000.0, cls_token: bool = False
) -> Arrays:
    """transformers ``models/vit_mae/modeling_vit_mae.py::build_2d_sinusoidal_position_embedding``
    (checked: 5.23.0).  The *raw* (canonical) table: ``[sin_h | cos_h | sin_w | cos_w]``, rows
    row-major (token = h*W + w), computed in float64 and cast to float32, optional leading zero cls row.
    ``embed_dim % 4 != 0`` → ``ValueError``.  See ``hf_vit_mae_initialized`` for the table the model uses.
    """
    torch = _torch()
    from transformers.models.vit_mae.modeling_vit_mae import build_2d_sinusoidal_position_embedding

    with torch.no_grad():
        table = build_2d_sinusoidal_position_embedding(
            height=height, width=width, embed_dim=embed_dim, temperature=temperature, cls_token=cls_token
        )
        return {"table": _np(table)}


def hf_vit_mae_initialized(image_size: int, patch_size: int, hidden_size: int) -> Arrays:
    """transformers ``models/vit_mae/modeling_vit_mae.py::ViTMAEEmbeddings.initialize_weights`` (checked: 5.23.0).

    Builds a tiny ``ViTMAEEmbeddings(ViTMAEConfig(image_size, patch_size, hidden_size, num_channels=1))``
    and runs its real ``initialize_weights()``, which calls ``build_2d_sinusoidal_position_embedding(grid,
    grid, hidden_size, cls_token=True)`` and then **swaps the two halves** (→ MAE's ``[w | h]`` order).
    ``table`` = ``position_embeddings[0]``: ``1 + grid**2`` rows (zero cls row first), float32.
    Square grids only (``grid = int(num_patches**0.5)``); the default temperature 10000 is fixed.
    """
    torch = _torch()
    from transformers import ViTMAEConfig
    from transformers.models.vit_mae.modeling_vit_mae import ViTMAEEmbeddings

    config = ViTMAEConfig(
        image_size=image_size,
        patch_size=patch_size,
        hidden_size=hidden_size,
        num_channels=1,
        num_attention_heads=1,
        num_hidden_layers=1,
        intermediate_size=4,
    )
    with torch.no_grad(), torch.random.fork_rng():
        torch.manual_seed(0)  # initialize_weights also draws cls_token / projection weights
        module = ViTMAEEmbeddings(config)
        module.initialize_weights()
        return {"table": _np(module.position_embeddings[0])}


# ======================================================================================= transformers: RoPE


def hf_llama_rope(
    rope_parameters: dict[str, Any],
    position_ids: Iterable[int] | np.ndarray,
    head_dim: int = 64,
    max_position_embeddings: int = 2048,
    x_dtype: str = "float32",
) -> Arrays:
    """transformers ``models/llama/modeling_llama.py::LlamaRotaryEmbedding`` (checked: 5.23.0).

    Builds ``LlamaConfig(head_dim=head_dim, hidden_size=head_dim, num_attention_heads=1,
    max_position_embeddings=..., rope_parameters=dict(rope_parameters))`` (v5 ``rope_parameters`` dict;
    keys per ``rope_type``: default ``{rope_theta}``; linear/dynamic ``{factor}``; yarn ``{factor,
    original_max_position_embeddings[, attention_factor, beta_fast, beta_slow, mscale, mscale_all_dim,
    truncate]}``; longrope ``{short_factor, long_factor, original_max_position_embeddings[, factor,
    attention_factor]}`` (lists of length ``dim/2``); llama3 ``{factor, low_freq_factor, high_freq_factor,
    original_max_position_embeddings, rope_theta}``), then calls the module's ``forward(x, position_ids)``
    once with all of ``position_ids`` (``x`` of ``x_dtype``: forward casts cos/sin to it, e.g. bfloat16;
    bfloat16 results are returned as float32, exactly).

    Returns ``cos``/``sin`` ``(n, head_dim)`` float32 (rotate_half layout ``[f0..f_{h-1}, f0..f_{h-1}]``,
    already multiplied by ``attention_scaling``), ``inv_freq`` *as used by that forward* (dynamic and
    longrope swap it there: dynamic recomputes when ``max(pos)+1 > max_position_embeddings``, longrope uses
    ``long_factor`` when ``max(pos)+1 > original_max_position_embeddings``), ``original_inv_freq`` (the one
    built at init) and ``attention_scaling`` (0-d float64).  A fresh module per call, so no state leaks.
    ``angle`` ``(n, head_dim/2)`` float32 is forward's own first line, ``freqs = position_ids[..., None].float()
    * inv_freq`` (no ``attention_scaling``), evaluated with the ``inv_freq`` that forward used; ``emb``
    ``(n, head_dim)`` is forward's ``cat((freqs, freqs), -1)`` (the angle in rotate_half layout).
    """
    torch = _torch()
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    config = LlamaConfig(
        vocab_size=8,
        hidden_size=head_dim,
        intermediate_size=4,
        num_hidden_layers=1,
        num_attention_heads=1,
        head_dim=head_dim,
        max_position_embeddings=max_position_embeddings,
        rope_parameters=dict(rope_parameters),
    )
    with torch.no_grad():
        module = LlamaRotaryEmbedding(config)
        x = torch.zeros(1, dtype=getattr(torch, x_dtype))
        ids = _position_ids(position_ids)
        cos, sin = module(x, ids)
        if cos.dtype == torch.bfloat16:  # NumPy has no bfloat16: float32 holds it exactly
            cos, sin = cos.float(), sin.float()
        freqs = ids[..., None].float() * module.inv_freq.to(dtype=torch.float)  # forward's own first line
        return {
            "cos": _np(cos[0]),
            "sin": _np(sin[0]),
            "angle": _np(freqs[0]),
            "emb": _np(torch.cat((freqs, freqs), dim=-1)[0]),
            "inv_freq": _np(module.inv_freq),
            "original_inv_freq": _np(module.original_inv_freq),
            "attention_scaling": _scalar(module.attention_scaling),
        }


def hf_gpt_neox_rope(
    position_ids: Iterable[int] | np.ndarray,
    hidden_size: int = 256,
    num_attention_heads: int = 4,
    rotary_pct: float = 0.25,
    rotary_emb_base: float = 10000,
    max_position_embeddings: int = 2048,
) -> Arrays:
    """transformers ``models/gpt_neox/modeling_gpt_neox.py::GPTNeoXRotaryEmbedding`` (checked: 5.23.0).

    ``GPTNeoXConfig`` takes the legacy ``rotary_pct`` / ``rotary_emb_base`` kwargs and stores them as
    ``rope_parameters["partial_rotary_factor"]`` / ``["rope_theta"]``.  Rotary width
    ``dim = int(head_dim * rotary_pct)`` with ``head_dim = hidden_size // num_attention_heads``;
    ``cos``/``sin`` are ``(n, dim)`` float32 in rotate_half layout (only the first ``dim`` dims of each
    head are rotated); ``inv_freq`` has ``dim/2`` entries; ``attention_scaling`` 1.0; ``angle`` ``(n, dim/2)``
    is forward's ``position_ids[..., None].float() * inv_freq``.
    """
    torch = _torch()
    from transformers import GPTNeoXConfig
    from transformers.models.gpt_neox.modeling_gpt_neox import GPTNeoXRotaryEmbedding

    config = GPTNeoXConfig(
        vocab_size=8,
        hidden_size=hidden_size,
        intermediate_size=4,
        num_hidden_layers=1,
        num_attention_heads=num_attention_heads,
        max_position_embeddings=max_position_embeddings,
        rotary_pct=rotary_pct,
        rotary_emb_base=rotary_emb_base,
    )
    with torch.no_grad():
        module = GPTNeoXRotaryEmbedding(config)
        ids = _position_ids(position_ids)
        cos, sin = module(torch.zeros(1, dtype=torch.float32), ids)
        freqs = ids[..., None].float() * module.inv_freq.to(dtype=torch.float)  # forward's own first line
        return {
            "cos": _np(cos[0]),
            "sin": _np(sin[0]),
            "angle": _np(freqs[0]),
            "inv_freq": _np(module.inv_freq),
            "attention_scaling": _scalar(module.attention_scaling),
        }


# ===================================================================================== transformers: ALiBi


def hf_bloom_alibi(attention_mask: Sequence[Sequence[int]] | np.ndarray, num_heads: int) -> Arrays:
    """transformers ``models/bloom/modeling_bloom.py::build_alibi_tensor(attention_mask, num_heads, dtype)``
    and ``_get_alibi_slopes(num_heads, device)`` (checked: 5.23.0).

    ``alibi``: ``(batch * num_heads, 1, seq)`` float32 = ``slope * ((cumsum(mask) - 1) * mask)`` (so
    **non-negative**, growing with the key position; left padding shifts it); ``slopes``: ``(num_heads,)``
    float32 (``torch.pow`` of a float32 base, powers ``1..c`` then odd powers of the ``2c`` base).
    """
    torch = _torch()
    from transformers.models.bloom.modeling_bloom import _get_alibi_slopes, build_alibi_tensor

    mask = torch.as_tensor(np.asarray(attention_mask), dtype=torch.int64)
    with torch.no_grad():
        alibi = build_alibi_tensor(mask, num_heads, torch.float32)
        slopes = _get_alibi_slopes(num_heads, torch.device("cpu"))
        return {"alibi": _np(alibi), "slopes": _np(slopes)}


def hf_mpt_alibi(num_heads: int, sequence_length: int, alibi_bias_max: int = 8) -> Arrays:
    """transformers ``models/mpt/modeling_mpt.py::build_mpt_alibi_tensor(num_heads, sequence_length,
    alibi_bias_max=8)`` (checked: 5.23.0).

    ``alibi``: ``(num_heads, 1, sequence_length)`` float32 = ``slope * arange(1 - L, 1)`` (**non-positive**,
    0 at the last key).  MPT has no separate slope function: ``slopes`` is read off the tensor as
    ``-alibi[:, 0, -2]`` (exact: int32 −1 times the float32 slope), so ``sequence_length >= 2``.
    """
    torch = _torch()
    from transformers.models.mpt.modeling_mpt import build_mpt_alibi_tensor

    if sequence_length < 2:
        raise ValueError("sequence_length must be >= 2 to read the slopes off the ALiBi tensor")
    with torch.no_grad():
        alibi = build_mpt_alibi_tensor(num_heads, sequence_length, alibi_bias_max=alibi_bias_max)
        return {"alibi": _np(alibi), "slopes": _np(-alibi[:, 0, -2])}


def x_transformers_alibi(heads: int, total_heads: int, length: int) -> Arrays:
    """x-transformers 2.31.10 ``x_transformers.py::AlibiPositionalBias(heads, total_heads)`` called for
    ``length`` queries and keys: ``bias`` ``(total_heads, length, length)`` float32 =
    ``−|j − i|·slope`` for the first ``heads`` heads (ofirpress's slopes, float32), zero rows after.
    ``last``: the last query's row, ``slope·(j − length + 1)``: MPT's origin, the heads padded."""
    torch = _torch()
    from x_transformers.x_transformers import AlibiPositionalBias

    with torch.no_grad():
        bias = AlibiPositionalBias(heads, total_heads)(length, length)
    return {"bias": _np(bias), "last": _np(bias[:, -1, :])}


def x_transformers_scaled_sine(
    dim: int, length: int, theta: float = 10000, offset: int = 0, scale: float | None = None
) -> Arrays:
    """x-transformers 2.31.10 ``x_transformers.py::ScaledSinusoidalEmbedding(dim, theta)`` called on a
    ``(1, length, dim)`` input with ``offset``: the ``(length, dim)`` float32 ``[sin | cos]`` times its
    ``scale`` parameter (``dim ** -0.5`` as built, or ``scale`` written into it, as after training)."""
    torch = _torch()
    from x_transformers.x_transformers import ScaledSinusoidalEmbedding

    with torch.no_grad():
        module = ScaledSinusoidalEmbedding(dim, theta=theta)
        if scale is not None:
            module.scale.fill_(scale)
        out = module(torch.zeros(1, length, dim), offset=offset)
    return {"table": _np(out), "scale": _np(module.scale)}


# ========================================================================= transformers: learned tables


def _learned(build: Any, seed: int) -> Any:
    """Build a tiny model under ``seed`` (``post_init`` runs the model's ``_init_weights``) without touching
    the caller's RNG state."""
    torch = _torch()
    with torch.no_grad(), torch.random.fork_rng():
        torch.manual_seed(seed)
        return build()


def hf_bert_position_embeddings(
    max_position_embeddings: int = 512, hidden_size: int = 768, initializer_range: float = 0.02, seed: int = 0
) -> Arrays:
    """transformers ``BertModel(...).embeddings.position_embeddings.weight`` (``models/bert/modeling_bert.py``
    ``BertEmbeddings``; checked: 5.23.0).  Tiny ``BertConfig`` (1 layer, 1 head), initialised by the model's
    own ``_init_weights`` (``normal_(0, initializer_range)``) under ``torch.manual_seed(seed)``.
    ``table``: ``(max_position_embeddings, hidden_size)`` float32, no padding row.
    """
    from transformers import BertConfig, BertModel

    def build() -> Any:
        config = BertConfig(
            vocab_size=8,
            hidden_size=hidden_size,
            num_hidden_layers=1,
            num_attention_heads=1,
            intermediate_size=4,
            max_position_embeddings=max_position_embeddings,
            initializer_range=initializer_range,
        )
        return BertModel(config, add_pooling_layer=False)

    model = _learned(build, seed)
    return {"table": _np(model.embeddings.position_embeddings.weight)}


def hf_gpt2_wpe(n_positions: int = 1024, n_embd: int = 768, initializer_range: float = 0.02, seed: int = 0) -> Arrays:
    """transformers ``GPT2Model(...).wpe.weight`` (``models/gpt2/modeling_gpt2.py``; checked: 5.23.0).
    Tiny ``GPT2Config`` (1 layer, 1 head), ``_init_weights`` = ``normal_(0, initializer_range)`` under
    ``torch.manual_seed(seed)``.  ``table``: ``(n_positions, n_embd)`` float32, no padding row.
    """
    from transformers import GPT2Config, GPT2Model

    def build() -> Any:
        config = GPT2Config(
            vocab_size=8,
            n_positions=n_positions,
            n_embd=n_embd,
            n_layer=1,
            n_head=1,
            n_inner=4,
            initializer_range=initializer_range,
            bos_token_id=0,
            eos_token_id=0,  # defaults (50256) exceed vocab
        )
        return GPT2Model(config)

    model = _learned(build, seed)
    return {"table": _np(model.wpe.weight)}


def hf_roberta_position_embeddings(
    max_position_embeddings: int = 514,
    hidden_size: int = 768,
    pad_token_id: int = 1,
    initializer_range: float = 0.02,
    seed: int = 0,
) -> Arrays:
    """transformers ``RobertaModel(...).embeddings.position_embeddings.weight`` (``models/roberta/modeling_roberta.py``
    ``RobertaEmbeddings``; checked: 5.23.0).  ``nn.Embedding(max_position_embeddings, hidden_size,
    padding_idx=pad_token_id)``; ``_init_weights`` draws ``normal_(0, initializer_range)`` then zeroes row
    ``pad_token_id``.  ``table``: ``(max_position_embeddings, hidden_size)`` float32 (514 rows for
    RoBERTa-base), first real token at row ``pad_token_id + 1``.
    """
    from transformers import RobertaConfig, RobertaModel

    def build() -> Any:
        config = RobertaConfig(
            vocab_size=8,
            hidden_size=hidden_size,
            num_hidden_layers=1,
            num_attention_heads=1,
            intermediate_size=4,
            max_position_embeddings=max_position_embeddings,
            pad_token_id=pad_token_id,
            initializer_range=initializer_range,
        )
        return RobertaModel(config, add_pooling_layer=False)

    model = _learned(build, seed)
    return {"table": _np(model.embeddings.position_embeddings.weight)}


def hf_bart_learned_positional_embedding(
    max_position_embeddings: int = 1024, d_model: int = 768, init_std: float = 0.02, seed: int = 0
) -> Arrays:
    """transformers ``BartModel(...).encoder.embed_positions.weight`` (``models/bart/modeling_bart.py``
    ``BartLearnedPositionalEmbedding``; checked: 5.23.0).  ``max_position_embeddings + offset`` rows
    (``offset`` = 2, also returned; BART-base 1026 × 768), ``_init_weights`` = ``normal_(0, init_std)``,
    **no** zero row (the module has no ``padding_idx``); positions are looked up at ``pos + 2``.
    """
    from transformers import BartConfig, BartModel

    def build() -> Any:
        config = BartConfig(
            vocab_size=8,
            d_model=d_model,
            encoder_layers=1,
            decoder_layers=1,
            encoder_attention_heads=1,
            decoder_attention_heads=1,
            encoder_ffn_dim=4,
            decoder_ffn_dim=4,
            max_position_embeddings=max_position_embeddings,
            init_std=init_std,
        )
        return BartModel(config)

    model = _learned(build, seed)
    embed = model.encoder.embed_positions
    return {"table": _np(embed.weight), "offset": _scalar(embed.offset, np.int64)}


def hf_distilbert_position_embeddings(
    max_position_embeddings: int = 512, dim: int = 768, initializer_range: float = 0.02, seed: int = 0
) -> Arrays:
    """transformers ``DistilBertModel(...).embeddings.position_embeddings.weight`` (``models/distilbert``;
    checked: 5.23.0) with the default ``sinusoidal_pos_embds=False``: a *learned* table, ``_init_weights`` =
    ``normal_(0, initializer_range)`` under ``torch.manual_seed(seed)``.  ``table``:
    ``(max_position_embeddings, dim)`` float32.
    """
    from transformers import DistilBertConfig, DistilBertModel

    def build() -> Any:
        config = DistilBertConfig(
            vocab_size=8,
            dim=dim,
            n_layers=1,
            n_heads=1,
            hidden_dim=4,
            max_position_embeddings=max_position_embeddings,
            initializer_range=initializer_range,
            sinusoidal_pos_embds=False,
        )
        return DistilBertModel(config)

    model = _learned(build, seed)
    return {"table": _np(model.embeddings.position_embeddings.weight)}


def hf_opt_embed_positions(
    max_position_embeddings: int = 2048, hidden_size: int = 768, init_std: float = 0.02, seed: int = 0
) -> Arrays:
    """transformers ``OPTModel(...).decoder.embed_positions.weight`` (``models/opt/modeling_opt.py``
    ``OPTLearnedPositionalEmbedding``; checked: 5.23.0): ``max_position_embeddings + 2`` rows (``offset`` = 2,
    also returned; positions ``cumsum(mask)·mask − 1`` are looked up at ``+ 2``), ``_init_weights`` =
    ``normal_(0, init_std)`` under ``torch.manual_seed(seed)``, no zero row.  float32.
    """
    from transformers import OPTConfig, OPTModel

    def build() -> Any:
        config = OPTConfig(
            vocab_size=8,
            hidden_size=hidden_size,
            word_embed_proj_dim=hidden_size,
            num_hidden_layers=1,
            num_attention_heads=1,
            ffn_dim=4,
            max_position_embeddings=max_position_embeddings,
            init_std=init_std,
            pad_token_id=1,
            bos_token_id=0,
            eos_token_id=0,
        )
        return OPTModel(config)

    model = _learned(build, seed)
    embed = model.decoder.embed_positions
    return {"table": _np(embed.weight), "offset": _scalar(embed.offset, np.int64)}


def hf_whisper_decoder_embed_positions(
    max_target_positions: int = 448, d_model: int = 384, init_std: float = 0.02, seed: int = 0
) -> Arrays:
    """transformers ``WhisperModel(...).decoder.embed_positions.weight`` (``models/whisper/modeling_whisper.py``
    ``WhisperPositionalEmbedding``; checked: 5.23.0): the decoder's *learned* ``(max_target_positions, d_model)``
    float32 table (the encoder's is the ``sinusoids`` one), ``_init_weights`` = ``normal_(0, init_std)`` under
    ``torch.manual_seed(seed)``.
    """
    from transformers import WhisperConfig, WhisperModel

    def build() -> Any:
        config = WhisperConfig(
            vocab_size=8,
            num_mel_bins=4,
            d_model=d_model,
            encoder_layers=1,
            decoder_layers=1,
            encoder_attention_heads=1,
            decoder_attention_heads=1,
            encoder_ffn_dim=4,
            decoder_ffn_dim=4,
            max_source_positions=4,
            max_target_positions=max_target_positions,
            init_std=init_std,
            pad_token_id=0,
            bos_token_id=0,
            eos_token_id=0,
            decoder_start_token_id=0,
        )
        return WhisperModel(config)

    model = _learned(build, seed)
    return {"table": _np(model.decoder.embed_positions.weight)}


def hf_vit_position_embeddings(
    image_size: int = 224, patch_size: int = 16, hidden_size: int = 768, initializer_range: float = 0.02, seed: int = 0
) -> Arrays:
    """transformers ``ViTModel(...).embeddings.position_embeddings`` (``models/vit/modeling_vit.py``; checked:
    5.23.0): ``nn.Parameter`` ``(1, 1 + (image_size/patch_size)**2, hidden_size)``, ``_init_weights`` =
    ``trunc_normal_(mean=0, std=initializer_range)`` with torch's default *absolute* bounds ±2 (so effectively
    untruncated at std 0.02), under ``torch.manual_seed(seed)``.  ``table``: the parameter without its batch
    dim, float32, class-token row first.
    """
    from transformers import ViTConfig, ViTModel

    def build() -> Any:
        config = ViTConfig(
            image_size=image_size,
            patch_size=patch_size,
            num_channels=1,
            hidden_size=hidden_size,
            num_hidden_layers=1,
            num_attention_heads=1,
            intermediate_size=4,
            initializer_range=initializer_range,
        )
        return ViTModel(config, add_pooling_layer=False)

    model = _learned(build, seed)
    return {"table": _np(model.embeddings.position_embeddings[0])}


# ================================================================================ positional-encodings


def _tatp(cls_name: str, channels: int, shape: tuple[int, ...]) -> Arrays:
    torch = _torch()
    module = importlib.import_module("positional_encodings.torch_encodings")  # torch twin only (no TF import)
    with torch.no_grad():
        enc = getattr(module, cls_name)(channels)
        out = enc(torch.zeros((1, *shape, channels), dtype=torch.float32))
        return {"table": _np(out[0])}


def pe_positional_encoding_1d(channels: int, x: int) -> Arrays:
    """positional-encodings ``positional_encodings/torch_encodings.py::PositionalEncoding1D(channels)``
    (checked: 6.0.3) applied to ``zeros(1, x, channels)``; ``table`` ``(x, channels)`` float32 (batch dropped).
    Per-axis interleaved ``sin f0, cos f0, …``; odd ``channels`` → computed for ``ceil(ch/2)*2`` then truncated.
    """
    return _tatp("PositionalEncoding1D", channels, (x,))


def pe_positional_encoding_2d(channels: int, x: int, y: int) -> Arrays:
    """positional-encodings ``PositionalEncoding2D(channels)`` (checked: 6.0.3) on ``zeros(1, x, y, channels)``;
    ``table`` ``(x, y, channels)`` float32: ``[x-block (C) | y-block (C)]``, ``C = ceil(ch/4)*2``, truncated."""
    return _tatp("PositionalEncoding2D", channels, (x, y))


def pe_positional_encoding_3d(channels: int, x: int, y: int, z: int) -> Arrays:
    """positional-encodings ``PositionalEncoding3D(channels)`` (checked: 6.0.3) on ``zeros(1, x, y, z, channels)``;
    ``table`` ``(x, y, z, channels)`` float32: ``[x | y | z]`` blocks of ``C = ceil(ch/6)*2``, truncated."""
    return _tatp("PositionalEncoding3D", channels, (x, y, z))


# ================================================================================================= timm


_TIMM_STUB = "_pecli_timm_layers"


def _timm_pos_embed_sincos() -> Any:
    """``timm.layers.pos_embed_sincos`` without importing ``timm/__init__`` / ``timm/layers/__init__``.

    Those package inits import torchvision (``timm.layers.create_norm``), which has no working CPU build
    for torch 2.13 here.  The module itself only needs its siblings ``_fx`` (torchvision optional),
    ``grid`` and ``trace_utils``, so it is loaded from its file inside a stand-in package that points at
    timm's ``layers`` folder (relative imports resolve there; no package ``__init__`` runs).
    """
    return _timm_layers_module("pos_embed_sincos")


def _timm_layers_module(name: str) -> Any:
    """``timm.layers.<name>`` (``pos_embed_sincos``, ``weight_init``), loaded as ``_timm_pos_embed_sincos`` explains."""
    full = f"{_TIMM_STUB}.{name}"
    if full in sys.modules:
        return sys.modules[full]
    if _TIMM_STUB not in sys.modules:  # the stand-in exists only once the real package import has failed
        try:
            return importlib.import_module(f"timm.layers.{name}")
        except Exception:  # ImportError without torchvision; a broken torchvision build can raise other errors
            pass
        spec = importlib.util.find_spec("timm")  # locates the distribution without executing timm/__init__.py
        if spec is None or not spec.submodule_search_locations:
            raise ModuleNotFoundError("No module named 'timm'", name="timm")
        stub = types.ModuleType(_TIMM_STUB)
        stub.__path__ = [str(Path(next(iter(spec.submodule_search_locations))) / "layers")]
        sys.modules[_TIMM_STUB] = stub
    return importlib.import_module(full)


def timm_sincos2d(
    feat_shape: Sequence[int],
    dim: int = 64,
    temperature: float = 10000.0,
    reverse_coord: bool = False,
    interleave_sin_cos: bool = False,
) -> Arrays:
    """timm ``timm/layers/pos_embed_sincos.py::build_sincos2d_pos_embed(feat_shape, dim, temperature,
    reverse_coord, interleave_sin_cos)`` (checked: 1.0.31).  ``table`` ``(H*W, dim)`` float32:
    default ``[sin h | sin w | cos h | cos w]``; ``interleave_sin_cos`` → ``[sin h | cos h | sin w | cos w]``;
    ``reverse_coord`` → w-major rows, w first.  ``dim % 4`` asserted (``AssertionError``).
    """
    torch = _torch()
    module = _timm_pos_embed_sincos()
    with torch.no_grad():
        table = module.build_sincos2d_pos_embed(
            list(feat_shape),
            dim=dim,
            temperature=temperature,
            reverse_coord=reverse_coord,
            interleave_sin_cos=interleave_sin_cos,
        )
        return {"table": _np(table)}


def timm_sincos2d_cls(feat_shape: Sequence[int], dim: int = 64, temperature: float = 10000.0) -> Arrays:
    """MoCo-v3's table (facebookresearch/moco-v3 ``vits.py::VisionTransformerMoCo.build_2d_sincos_position_embedding``,
    not pip-installable) from timm's own code: ``build_sincos2d_pos_embed(feat_shape, dim, temperature,
    reverse_coord=True, interleave_sin_cos=True)`` (rows **w-major**, columns ``[sin w | cos w | sin h | cos h]``;
    bit-identical to MoCo's function, dialects.md §5) with MoCo's zero ``pe_token`` row put first by
    ``torch.cat`` as MoCo does.  ``table`` ``(1 + H*W, dim)`` float32; ``feat_shape`` = ``(h, w)``.
    """
    torch = _torch()
    module = _timm_pos_embed_sincos()
    with torch.no_grad():
        pos_emb = module.build_sincos2d_pos_embed(
            list(feat_shape), dim=dim, temperature=temperature, reverse_coord=True, interleave_sin_cos=True
        )
        pe_token = torch.zeros([1, dim], dtype=torch.float32)
        return {"table": _np(torch.cat([pe_token, pos_emb], dim=0))}


def timm_trunc_normal_parameter(
    shape: Sequence[int], std: float = 0.02, seed: int = 0, tf_style: bool = False
) -> Arrays:
    """timm ``timm/layers/weight_init.py`` initialisers on a fresh float32 ``nn.Parameter`` (checked: 1.0.31),
    under ``torch.manual_seed(seed)`` inside ``fork_rng``.

    ``tf_style=False``: ``trunc_normal_(p, std=std)`` (what timm's ``VisionTransformer.init_weights`` does to
    ``pos_embed``; default *absolute* bounds ±2, so effectively untruncated).  ``tf_style=True``:
    ``trunc_normal_tf_(p, std=std)`` — bounds ±2 in *standard-normal* units, then scaled: TensorFlow's
    ``truncated_normal_initializer(stddev=std)`` as google-research/bert uses it (re-drawn beyond 2σ).
    ``table`` = the parameter with any leading batch dim of size 1 dropped.
    """
    torch = _torch()
    module = _timm_layers_module("weight_init")
    init = module.trunc_normal_tf_ if tf_style else module.trunc_normal_
    with torch.no_grad(), torch.random.fork_rng():
        torch.manual_seed(seed)
        param = torch.nn.Parameter(torch.empty(*shape, dtype=torch.float32))
        init(param, std=std)
        table = param[0] if len(shape) > 2 and shape[0] == 1 else param
        return {"table": _np(table)}


# ============================================================================== rotary-embedding-torch


def rotary_embedding_torch_angles(
    dim: int,
    seq_len: int,
    theta: float = 10000,
    interpolate_factor: float = 1.0,
    theta_rescale_factor: float = 1.0,
    offset: int = 0,
) -> Arrays:
    """rotary-embedding-torch ``rotary_embedding_torch/rotary_embedding_torch.py::RotaryEmbedding(dim, theta=...,
    interpolate_factor=..., theta_rescale_factor=...)`` (checked: 0.9.1), ``freqs_for='lang'``.

    ``positions`` = the module's own ``get_seq_pos(seq_len, dtype=float32, offset=offset)``
    (``(arange + offset) / interpolate_factor``); ``angles`` = ``forward(positions)``: ``(seq_len, dim)``
    float32 **angles** (not cos/sin) repeated interleaved ``[f0, f0, f1, f1, …]``; ``freqs`` = the
    ``freqs`` parameter ``(dim//2,)`` (``theta`` already multiplied by
    ``theta_rescale_factor ** (dim / (dim - 2))``).  ``interpolate_factor < 1`` → ``AssertionError``.
    """
    torch = _torch()
    from rotary_embedding_torch import RotaryEmbedding

    with torch.no_grad():
        rope = RotaryEmbedding(
            dim, theta=theta, interpolate_factor=interpolate_factor, theta_rescale_factor=theta_rescale_factor
        )
        positions = rope.get_seq_pos(seq_len, dtype=torch.float32, offset=offset)
        angles = rope(positions)
        return {"angles": _np(angles), "freqs": _np(rope.freqs), "positions": _np(positions)}


def rotary_embedding_torch_cos_sin(
    dim: int,
    seq_len: int,
    theta: float = 10000,
    custom_freqs: Sequence[float] | np.ndarray | None = None,
    offset: int = 0,
) -> Arrays:
    """rotary-embedding-torch ``RotaryEmbedding(dim, custom_freqs=..., theta=...)`` (checked: 0.9.1): the
    ``cos``/``sin`` tables its ``apply_rotary_emb`` multiplies by (``freqs.cos()``, ``freqs.sin()`` of the
    module's ``forward(get_seq_pos(seq_len, offset=offset))`` angles, scale 1): ``(seq_len, dim)`` float32,
    **pairs** layout ``[f0, f0, f1, f1, …]`` — the real-valued form of Meta's complex ``freqs_cis``
    (``(x[2i], x[2i+1])`` rotated by angle ``p·f_i``).  ``custom_freqs`` (a float32 tensor of ``dim/2``
    frequencies, e.g. HF's llama3 ``inv_freq``, which dialects.md §6 found bit-identical to Meta's
    ``apply_scaling``) replaces the ``1/theta**(arange(0, dim, 2)/dim)`` ones.
    """
    torch = _torch()
    from rotary_embedding_torch import RotaryEmbedding

    freqs = None if custom_freqs is None else torch.as_tensor(np.asarray(custom_freqs, dtype=np.float32))
    with torch.no_grad():
        rope = RotaryEmbedding(dim, custom_freqs=freqs, theta=theta)
        angles = rope(rope.get_seq_pos(seq_len, dtype=torch.float32, offset=offset))
        return {"cos": _np(angles.cos()), "sin": _np(angles.sin()), "freqs": _np(rope.freqs)}


def rotary_embedding_torch_axial_freqs(
    dim: int,
    feat_shape: Sequence[int],
    freqs_for: str = "lang",
    theta: float = 10000,
    max_freq: float = 10,
) -> Arrays:
    """rotary-embedding-torch ``rotary_embedding_torch/rotary_embedding_torch.py::RotaryEmbedding(dim,
    freqs_for=…, theta=…, max_freq=…).get_axial_freqs(*feat_shape)`` (checked: 0.9.1): ``angles``, the
    **angles** ``(*feat_shape, n·dim)`` float32 flattened to ``(cells, n·dim)`` (cells in C order, each
    axis's ``dim/2`` freqs repeated interleaved, axes concatenated); ``cos``/``sin`` = their own
    ``.cos()``/``.sin()`` (what ``apply_rotary_emb`` multiplies by); ``freqs`` = the ``freqs`` parameter."""
    torch = _torch()
    from rotary_embedding_torch import RotaryEmbedding

    with torch.no_grad():
        rope = RotaryEmbedding(dim, freqs_for=freqs_for, theta=theta, max_freq=max_freq)
        angles = rope.get_axial_freqs(*feat_shape)
        flat = angles.reshape(-1, angles.shape[-1])
        return {"angles": _np(flat), "cos": _np(flat.cos()), "sin": _np(flat.sin()), "freqs": _np(rope.freqs)}


# ============================================================================================ diffusers


def diffusers_timestep_embedding(
    timesteps: Sequence[float] | np.ndarray,
    embedding_dim: int,
    flip_sin_to_cos: bool = False,
    downscale_freq_shift: float = 1,
    scale: float = 1,
    max_period: int = 10000,
) -> Arrays:
    """diffusers ``diffusers/models/embeddings.py::get_timestep_embedding(timesteps, embedding_dim,
    flip_sin_to_cos, downscale_freq_shift, scale, max_period)`` (checked: 0.42.1).

    ``timesteps`` (1-D, may be fractional) are passed as a float32 tensor; ``table`` ``(len(timesteps),
    embedding_dim)`` float32: ``[sin | cos]`` (flip → ``[cos | sin]``), freqs
    ``exp(-ln(max_period) * i / (half - downscale_freq_shift))``, odd width → trailing zero column.
    """
    torch = _torch()
    from diffusers.models.embeddings import get_timestep_embedding

    t = torch.as_tensor(np.asarray(timesteps, dtype=np.float32))
    with torch.no_grad():
        table = get_timestep_embedding(
            t,
            embedding_dim,
            flip_sin_to_cos=flip_sin_to_cos,
            downscale_freq_shift=downscale_freq_shift,
            scale=scale,
            max_period=max_period,
        )
        return {"table": _np(table)}


def diffusers_time_proj(owner: str, timesteps: Sequence[float] | np.ndarray, *args: Any) -> Arrays:
    """The ``time_proj`` (a ``Timesteps`` module) of diffusers ``diffusers/models/embeddings.py::<owner>(*args)``
    (checked: 0.42.1), applied to ``timesteps`` (a float32 tensor).

    ``owner``: ``CombinedTimestepTextProjEmbeddings(embedding_dim, pooled_projection_dim)`` (SD3, Flux without
    guidance), ``CombinedTimestepGuidanceTextProjEmbeddings(embedding_dim, pooled_projection_dim)`` (Flux; the
    same module embeds the guidance), ``PixArtAlphaCombinedTimestepSizeEmbeddings(embedding_dim, size_emb_dim)``
    (PixArt's ``AdaLayerNormSingle``), ``CombinedTimestepLabelEmbeddings(num_classes, embedding_dim)`` (DiT's
    ``AdaLayerNormZero``).  Each builds its own ``Timesteps(256, flip_sin_to_cos, downscale_freq_shift)``
    whatever ``*args`` say (they size the MLPs after it only).  ``table`` ``(len(timesteps), 256)`` float32.
    """
    torch = _torch()
    embeddings = importlib.import_module("diffusers.models.embeddings")

    t = torch.as_tensor(np.asarray(timesteps, dtype=np.float32))
    with torch.no_grad():
        module = getattr(embeddings, owner)(*args)
        return {"table": _np(module.time_proj(t))}


def diffusers_unet2d_condition_time_proj(timesteps: Sequence[float] | np.ndarray, channels: int = 320) -> Arrays:
    """diffusers ``diffusers/models/unets/unet_2d_condition.py::UNet2DConditionModel(...).time_proj`` (checked:
    0.42.1): the model's ``Timesteps(block_out_channels[0], flip_sin_to_cos, freq_shift)`` with the class's
    defaults (``flip_sin_to_cos=True, freq_shift=0``, as Stable Diffusion's configs set them), applied to
    ``timesteps`` (a float32 tensor).  The UNet is built one block deep with ``block_out_channels=(channels,)``
    (SD 1.x/2.x, SDXL: 320) to stay small.  ``table`` ``(len(timesteps), channels)`` float32.
    """
    torch = _torch()
    from diffusers import UNet2DConditionModel

    t = torch.as_tensor(np.asarray(timesteps, dtype=np.float32))
    with torch.no_grad():
        unet = UNet2DConditionModel(
            block_out_channels=(channels,),
            down_block_types=("DownBlock2D",),
            up_block_types=("UpBlock2D",),
            mid_block_type=None,
            layers_per_block=1,
            cross_attention_dim=8,
        )
        return {"table": _np(unet.time_proj(t))}


def timm_resample_abs_pos_embed(
    posemb: np.ndarray,
    new_size: Sequence[int],
    old_size: Sequence[int] | None = None,
    num_prefix_tokens: int = 1,
    interpolation: str = "bicubic",
    antialias: bool = True,
) -> Arrays:
    """timm ``timm/layers/pos_embed.py::resample_abs_pos_embed`` (checked: 1.0.31) on a ``(N, C)``
    table (given to it as ``(1, N, C)``), loaded as ``_timm_pos_embed_sincos`` explains.  ``table``
    ``(prefix + h·w, C)`` in the input's dtype: prefix rows kept, the grid resized by
    ``F.interpolate(size, mode=interpolation, antialias=antialias)`` in float32."""
    torch = _torch()
    module = _timm_layers_module("pos_embed")
    with torch.no_grad():
        out = module.resample_abs_pos_embed(
            torch.from_numpy(np.ascontiguousarray(posemb))[None],
            list(new_size),
            None if old_size is None else list(old_size),
            num_prefix_tokens=num_prefix_tokens,
            interpolation=interpolation,
            antialias=antialias,
        )
        return {"table": _np(out[0])}


# ===================================================================== transformers: multimodal RoPE


def hf_qwen_vl_mrope(
    mm_token_type_ids: Sequence[int] | np.ndarray,
    image_grid_thw: Sequence[Sequence[int]] | None = None,
    video_grid_thw: Sequence[Sequence[int]] | None = None,
    second_per_grid_ts: Sequence[float] | None = None,
    model: str = "qwen2_vl",
    head_dim: int = 128,
    rope_theta: float = 1000000.0,
    mrope_section: Sequence[int] = (16, 24, 24),
    tokens_per_second: int = 2,
    x_dtype: str = "float32",
) -> Arrays:
    """transformers ``models/qwen2_vl/modeling_qwen2_vl.py::Qwen2VLModel.get_rope_index`` and
    ``Qwen2VLRotaryEmbedding`` (``model="qwen2_vl"``), or ``models/qwen2_5_vl/modeling_qwen2_5_vl.py``'s
    ``Qwen2_5_VLModel.get_rope_index`` and ``Qwen2_5_VLRotaryEmbedding`` (``model="qwen2_5_vl"``)
    (checked: 5.23.0).

    Builds the model on CPU from a tiny config (1 text layer of width ``head_dim`` with one head,
    ``rope_parameters={"rope_type": "default", "rope_theta", "mrope_section"}``; a 1-block vision
    tower with ``spatial_merge_size`` 2 and, for Qwen2.5-VL, ``tokens_per_second``), calls its
    ``get_rope_index(input_ids, mm_token_type_ids, image_grid_thw, video_grid_thw[,
    second_per_grid_ts])`` on one sequence (``mm_token_type_ids``: 0 text, 1 image, 2 video; the
    grids are raw, before the 2×2 merge; ``second_per_grid_ts`` a float32 tensor as the processor
    returns it, or ``None``), then the model's own rotary module on those ids.  Returns
    ``position_ids`` ``(3, n)`` int64, ``cos``/``sin`` ``(n, head_dim)`` (float32; bfloat16 results of
    a bfloat16 ``x`` returned as float32, exactly) and ``inv_freq``.
    """
    torch = _torch()
    module = _qwen_vl_module(model, head_dim, rope_theta, mrope_section, tokens_per_second)
    with torch.no_grad():
        types = torch.as_tensor(np.asarray(mm_token_type_ids, dtype=np.int64)).reshape(1, -1)
        input_ids = torch.where(types == 1, 5, torch.where(types == 2, 6, 1))
        kwargs: dict[str, Any] = {}
        if image_grid_thw is not None:
            kwargs["image_grid_thw"] = torch.as_tensor(np.asarray(image_grid_thw, dtype=np.int64))
        if video_grid_thw is not None:
            kwargs["video_grid_thw"] = torch.as_tensor(np.asarray(video_grid_thw, dtype=np.int64))
        if second_per_grid_ts is not None:
            kwargs["second_per_grid_ts"] = torch.as_tensor(np.asarray(second_per_grid_ts, dtype=np.float32))
        position_ids, _ = module.get_rope_index(input_ids, types, **kwargs)
        rotary = module.language_model.rotary_emb
        cos, sin = rotary(torch.zeros(1, dtype=getattr(torch, x_dtype)), position_ids)
        if cos.dtype == torch.bfloat16:  # NumPy has no bfloat16: float32 holds it exactly
            cos, sin = cos.float(), sin.float()
        return {
            "position_ids": _np(position_ids[:, 0]),
            "cos": _np(cos[0]),
            "sin": _np(sin[0]),
            "inv_freq": _np(rotary.inv_freq),
        }


def hf_qwen_vl_mrope_batch(
    mm_token_type_ids: np.ndarray,
    attention_mask: np.ndarray,
    image_grid_thw: Sequence[Sequence[int]] | None = None,
    model: str = "qwen2_vl",
    head_dim: int = 128,
    mrope_section: Sequence[int] = (16, 24, 24),
) -> Arrays:
    """A padded batch through the same model (:func:`hf_qwen_vl_mrope`): ``get_rope_index(input_ids,
    mm_token_type_ids, image_grid_thw, attention_mask=...)`` (padding tokens keep id 0) and the
    rotary module on those ids.  Returns ``position_ids`` ``(3, batch, n)`` and ``cos``/``sin``
    ``(batch, n, head_dim)``."""
    torch = _torch()
    module = _qwen_vl_module(model, head_dim, 1000000.0, mrope_section, 2)
    with torch.no_grad():
        types = torch.as_tensor(np.asarray(mm_token_type_ids, dtype=np.int64))
        input_ids = torch.where(types == 1, 5, torch.where(types == 2, 6, 1))
        grids = None if image_grid_thw is None else torch.as_tensor(np.asarray(image_grid_thw, dtype=np.int64))
        mask = torch.as_tensor(np.asarray(attention_mask, dtype=np.int64))
        position_ids, _ = module.get_rope_index(input_ids, types, image_grid_thw=grids, attention_mask=mask)
        cos, sin = module.language_model.rotary_emb(torch.zeros(1), position_ids)
        return {"position_ids": _np(position_ids), "cos": _np(cos), "sin": _np(sin)}


def _qwen_vl_module(
    model: str, head_dim: int, rope_theta: float, mrope_section: Sequence[int], tokens_per_second: int
) -> Any:
    torch = _torch()
    text = {
        "vocab_size": 8,
        "hidden_size": head_dim,
        "intermediate_size": 4,
        "num_hidden_layers": 1,
        "num_attention_heads": 1,
        "num_key_value_heads": 1,
        "head_dim": head_dim,
        "rope_parameters": {"rope_type": "default", "rope_theta": rope_theta, "mrope_section": list(mrope_section)},
    }
    if model == "qwen2_5_vl":
        from transformers import Qwen2_5_VLConfig
        from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import Qwen2_5_VLModel

        vision = {"depth": 1, "hidden_size": 16, "num_heads": 1, "intermediate_size": 8, "out_hidden_size": head_dim}
        vision |= {"tokens_per_second": tokens_per_second, "fullatt_block_indexes": [0]}
        config: Any = Qwen2_5_VLConfig(text_config=text, vision_config=vision, image_token_id=5, video_token_id=6)
        cls: Any = Qwen2_5_VLModel
    else:
        from transformers import Qwen2VLConfig
        from transformers.models.qwen2_vl.modeling_qwen2_vl import Qwen2VLModel

        vision = {"depth": 1, "embed_dim": 16, "num_heads": 1, "hidden_size": head_dim, "mlp_ratio": 1}
        config = Qwen2VLConfig(text_config=text, vision_config=vision, image_token_id=5, video_token_id=6)
        cls = Qwen2VLModel
    with torch.random.fork_rng():
        torch.manual_seed(0)  # the tiny model's weights are drawn (and never used)
        return cls(config).eval()


# ==================================================================== diffusers: per-axis rotary embeddings


def diffusers_flux_ids(text_tokens: int, height: int, width: int) -> Any:
    """Flux's ids as ``FluxPipeline`` builds them: text all zero (``text_ids = torch.zeros(n, 3)``),
    then ``FluxPipeline._prepare_latent_image_ids`` of the packed ``height × width`` latent grid;
    ``torch.cat((txt_ids, img_ids))`` as ``FluxTransformer2DModel.forward`` does."""
    torch = _torch()
    from diffusers.pipelines.flux.pipeline_flux import FluxPipeline

    img_ids = FluxPipeline._prepare_latent_image_ids(1, height, width, "cpu", torch.float32)
    return torch.cat((torch.zeros(text_tokens, 3), img_ids), dim=0)


def diffusers_flux_pos_embed(
    text_tokens: int, height: int, width: int, theta: int = 10000, axes_dim: Sequence[int] = (16, 56, 56)
) -> Arrays:
    """diffusers' ``FluxPosEmbed(theta, axes_dim)`` on Flux's ids (:func:`diffusers_flux_ids`):
    ``cos``/``sin`` ``(n, sum(axes_dim))`` float32 and the ``ids`` ``(n, 3)``."""
    torch = _torch()
    from diffusers.models.transformers.transformer_flux import FluxPosEmbed

    ids = diffusers_flux_ids(text_tokens, height, width)
    with torch.no_grad():
        cos, sin = FluxPosEmbed(theta, list(axes_dim))(ids)
    return {"cos": _np(cos), "sin": _np(sin), "ids": _np(ids)}


def diffusers_1d_rotary_pos_embed(
    dim: int,
    pos: int,
    theta: float = 10000.0,
    linear_factor: float = 1.0,
    ntk_factor: float = 1.0,
    repeat_interleave_real: bool = True,
    freqs_dtype: str = "float32",
) -> Arrays:
    """diffusers' ``get_1d_rotary_pos_embed(dim, pos, theta, use_real=True, linear_factor, ntk_factor,
    repeat_interleave_real, freqs_dtype)`` for positions ``0…pos−1``: ``cos``/``sin`` ``(pos, dim)``."""
    torch = _torch()
    from diffusers.models.embeddings import get_1d_rotary_pos_embed

    with torch.no_grad():
        cos, sin = get_1d_rotary_pos_embed(
            dim,
            pos,
            theta=theta,
            use_real=True,
            linear_factor=linear_factor,
            ntk_factor=ntk_factor,
            repeat_interleave_real=repeat_interleave_real,
            freqs_dtype=getattr(torch, freqs_dtype),
        )
    return {"cos": _np(cos), "sin": _np(sin)}


def diffusers_krea2_rotary_pos_embed(
    text_tokens: int, height: int, width: int, theta: float = 1000.0, axes_dim: Sequence[int] = (32, 48, 48)
) -> Arrays:
    """diffusers' ``Krea2RotaryPosEmbed(theta, axes_dim)`` (Krea2Transformer2DModel's defaults) on the
    ids of ``Krea2Pipeline.prepare_position_ids(text_tokens, height, width)``: ``cos``/``sin`` and ``ids``."""
    torch = _torch()
    from diffusers.models.transformers.transformer_krea2 import Krea2RotaryPosEmbed
    from diffusers.pipelines.krea2.pipeline_krea2 import Krea2Pipeline

    ids = Krea2Pipeline.prepare_position_ids(text_tokens, height, width, torch.device("cpu"))
    with torch.no_grad():
        cos, sin = Krea2RotaryPosEmbed(theta, list(axes_dim))(ids)
    return {"cos": _np(cos), "sin": _np(sin), "ids": _np(ids)}


def diffusers_2d_sincos_pos_embed(
    embed_dim: int,
    grid_size: int | tuple[int, int],
    base_size: int = 16,
    interpolation_scale: float = 1.0,
    extra_tokens: int = 0,
) -> Arrays:
    """diffusers' ``get_2d_sincos_pos_embed(embed_dim, grid_size, base_size=…, interpolation_scale=…)``
    (float64), cast to float32 as ``PatchEmbed`` registers it: ``table`` ``(H·W, embed_dim)``;
    ``extra_tokens`` N > 0: with ``cls_token=True, extra_tokens=N`` (N zero rows first)."""
    torch = _torch()
    from diffusers.models.embeddings import get_2d_sincos_pos_embed

    table = get_2d_sincos_pos_embed(
        embed_dim,
        grid_size,
        cls_token=extra_tokens > 0,
        extra_tokens=extra_tokens,
        base_size=base_size,
        interpolation_scale=interpolation_scale,
        output_type="pt",
    )
    return {"table": _np(torch.as_tensor(table).float())}


def diffusers_lumina_2d_rope(embed_dim: int, len_h: int, len_w: int) -> Arrays:
    """diffusers' ``get_2d_rotary_pos_embed_lumina(embed_dim, len_h, len_w)`` (Lumina-Next's): complex64
    ``freqs_cis`` ``(H, W, embed_dim/2)``, each frequency's height then width rotation, flattened to
    ``complex`` ``(H·W, embed_dim/2)`` and ``table``, its (real, imaginary) parts ``(H·W, embed_dim)``."""
    torch = _torch()
    from diffusers.models.embeddings import get_2d_rotary_pos_embed_lumina

    freqs_cis = get_2d_rotary_pos_embed_lumina(embed_dim, len_h, len_w).reshape(len_h * len_w, -1)
    return {"complex": _np(freqs_cis), "table": _np(torch.view_as_real(freqs_cis).flatten(1))}


def diffusers_patch_embed_pos_embed(
    sample_size: int,
    patch_size: int,
    embed_dim: int,
    interpolation_scale: float = 1,
    pos_embed_max_size: int | None = None,
    latent_size: int | None = None,
) -> Arrays:
    """The ``pos_embed`` buffer of diffusers' ``PatchEmbed(height=width=sample_size, patch_size,
    embed_dim, interpolation_scale, pos_embed_max_size)`` (``table`` float32); with
    ``pos_embed_max_size``, ``cropped_pos_embed(latent_size, latent_size)`` as SD3's forward takes it."""
    torch = _torch()
    from diffusers.models.embeddings import PatchEmbed

    with torch.no_grad():
        module = PatchEmbed(
            height=sample_size,
            width=sample_size,
            patch_size=patch_size,
            in_channels=4,
            embed_dim=embed_dim,
            interpolation_scale=interpolation_scale,
            pos_embed_max_size=pos_embed_max_size,
        )
        if pos_embed_max_size is None:
            return {"table": _np(module.pos_embed[0])}
        size = latent_size or sample_size
        return {"table": _np(module.cropped_pos_embed(size, size)[0])}


def diffusers_3d_sincos_pos_embed(
    embed_dim: int,
    spatial_size: tuple[int, int],
    temporal_size: int,
    spatial_interpolation_scale: float = 1.0,
    temporal_interpolation_scale: float = 1.0,
) -> Arrays:
    """diffusers' ``get_3d_sincos_pos_embed(embed_dim, (W, H), T, …)`` flattened to ``(T·H·W, embed_dim)``:
    ``table`` float32 (cast from its float64) and ``table64``."""
    from diffusers.models.embeddings import get_3d_sincos_pos_embed

    table = get_3d_sincos_pos_embed(
        embed_dim,
        spatial_size,
        temporal_size,
        spatial_interpolation_scale,
        temporal_interpolation_scale,
        output_type="pt",
    ).flatten(0, 1)
    return {"table": _np(table.float()), "table64": _np(table)}


def diffusers_cogvideox_patch_embed(embed_dim: int = 1920, **kwargs: Any) -> Arrays:
    """The ``pos_embedding`` buffer of diffusers' ``CogVideoXPatchEmbed(embed_dim=…, **kwargs)`` (its
    defaults are CogVideoX-2b's): ``table`` = the video rows after the ``max_text_seq_length`` zero
    text rows, float32 (cast from its float64), and ``text_rows``."""
    torch = _torch()
    from diffusers.models.embeddings import CogVideoXPatchEmbed

    with torch.no_grad():
        module = CogVideoXPatchEmbed(embed_dim=embed_dim, use_positional_embeddings=True, **kwargs)
    buffer = module.pos_embedding[0]
    text = module.max_text_seq_length
    return {"table": _np(buffer[text:].float()), "text_rows": _np(buffer[:text])}


def diffusers_3d_rotary(embed_dim: int, frames: int, height: int, width: int) -> Arrays:
    """diffusers ``models/embeddings.py::get_3d_rotary_pos_embed(embed_dim, crops_coords, grid_size,
    temporal_size)`` (checked: 0.42.1) as ``CogVideoXPipeline._prepare_rotary_positional_embeddings``
    calls it at the model's base size (the crop region is the whole grid): ``cos`` and ``sin``, each
    ``(frames·height·width, embed_dim)`` float32."""
    torch = _torch()
    from diffusers.models.embeddings import get_3d_rotary_pos_embed

    with torch.no_grad():
        cos, sin = get_3d_rotary_pos_embed(embed_dim, ((0, 0), (height, width)), (height, width), frames)
    return {"cos": _np(cos), "sin": _np(sin)}


def diffusers_cogvideox_rotary(frames: int, height: int, width: int, base: tuple[int, int] = (30, 45)) -> Arrays:
    """CogVideoX 1.0's rotary tables for a video grid ``height×width`` (patches) other than the model's
    ``base`` grid, as ``CogVideoXPipeline._prepare_rotary_positional_embeddings`` computes them
    (diffusers 0.42.1): ``get_resize_crop_region_for_grid((height, width), base_w, base_h)`` then
    ``get_3d_rotary_pos_embed(64, crops, (height, width), frames)``: ``cos``, ``sin`` float32."""
    torch = _torch()
    from diffusers.models.embeddings import get_3d_rotary_pos_embed
    from diffusers.pipelines.cogvideo.pipeline_cogvideox import get_resize_crop_region_for_grid

    crops = get_resize_crop_region_for_grid((height, width), base[1], base[0])
    with torch.no_grad():
        cos, sin = get_3d_rotary_pos_embed(64, crops, (height, width), frames)
    return {"cos": _np(cos), "sin": _np(sin), "crops": np.array(crops)}


# ============================================================================== timm 2-D rotary embeddings


def timm_rotary_pos_embed(
    feat_shape: Sequence[int],
    dim: int = 64,
    in_pixels: bool = True,
    max_res: int = 224,
    temperature: float = 10000.0,
    linear_bands: bool = False,
    ref_feat_shape: Sequence[int] | None = None,
    rotate_half: bool = False,
    grid_indexing: str = "ij",
) -> Arrays:
    """timm ``timm/layers/pos_embed_sincos.py::build_rotary_pos_embed(feat_shape, dim=…, max_res=…,
    temperature=…, linear_bands=…, in_pixels=…, ref_feat_shape=…, rotate_half=…, grid_indexing=…)``
    (checked: 1.0.31), its bands built by timm itself (``bands=None``): ``sin`` and ``cos``, each
    ``(H*W, dim)`` float32."""
    torch = _torch()
    module = _timm_layers_module("pos_embed_sincos")
    with torch.no_grad():
        sin, cos = module.build_rotary_pos_embed(
            list(feat_shape),
            dim=dim,
            max_res=max_res,
            temperature=temperature,
            linear_bands=linear_bands,
            in_pixels=in_pixels,
            ref_feat_shape=None if ref_feat_shape is None else list(ref_feat_shape),
            rotate_half=rotate_half,
            grid_indexing=grid_indexing,
        )
    return {"sin": _np(sin), "cos": _np(cos)}


def timm_rotary_embedding_cat(
    dim: int,
    feat_shape: Sequence[int],
    ref_feat_shape: Sequence[int] | None = None,
    in_pixels: bool = False,
    temperature: float = 10000.0,
) -> Arrays:
    """The cached table of timm ``timm/layers/pos_embed_sincos.py::RotaryEmbeddingCat(dim, temperature=…,
    in_pixels=…, feat_shape=…, ref_feat_shape=…)`` (checked: 1.0.31; EVA-02 builds it with ``dim //
    num_heads``, ``in_pixels=False``): ``table`` = ``get_embed()``, ``(H*W, 2*dim)`` float32 ``[sin | cos]``."""
    torch = _torch()
    module = _timm_layers_module("pos_embed_sincos")
    with torch.no_grad():
        rope = module.RotaryEmbeddingCat(
            dim,
            temperature=temperature,
            in_pixels=in_pixels,
            feat_shape=list(feat_shape),
            ref_feat_shape=None if ref_feat_shape is None else list(ref_feat_shape),
        )
        return {"table": _np(rope.get_embed())}


# ------------------------------------------------------- the engines' and training libraries' rotary caches


def _torchtune_module(relative: str) -> Any:
    """A module of torchtune (0.6.1) loaded from its file: the rotary modules import only torch,
    while ``import torchtune`` needs torchao and the datasets stack (installed ``--no-deps``)."""
    return _module_file("torchtune", relative)


def _module_file(package: str, relative: str) -> Any:
    """Module ``relative`` of ``package`` loaded from its file, without the package's ``__init__``
    (which imports what the module itself does not need)."""
    name = f"_pecli_{package}_" + relative.replace("/", "_").removesuffix(".py")
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(package)  # locates the distribution without running its __init__
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"No module named {package!r}", name=package)
    path = Path(next(iter(spec.submodule_search_locations))) / relative
    loader = importlib.util.spec_from_file_location(name, path)
    assert loader is not None and loader.loader is not None
    module = importlib.util.module_from_spec(loader)
    sys.modules[name] = module
    loader.loader.exec_module(module)
    return module


def torchtune_qwen2_cache(dim: int, max_seq_len: int, base: float) -> Arrays:
    """torchtune ``models/qwen2/_positional_embeddings.py::Qwen2RotaryPositionalEmbeddings(dim,
    max_seq_len, base).cache``: ``cat([cos e, sin e], -1)``, ``e = cat([f, f])``, ``(n, 2·dim)`` float32."""
    module = _torchtune_module("models/qwen2/_positional_embeddings.py")
    with _torch().no_grad():
        return {"table": _np(module.Qwen2RotaryPositionalEmbeddings(dim, max_seq_len, base).cache)}


def torchtune_rope_cache(dim: int, max_seq_len: int, base: int) -> Arrays:
    """torchtune ``modules/position_embeddings.py::RotaryPositionalEmbeddings(dim, max_seq_len,
    base).cache``, ``(n, dim/2, 2)`` of ``(cos, sin)``, flattened to ``(n, dim)`` float32."""
    module = _torchtune_module("modules/position_embeddings.py")
    with _torch().no_grad():
        cache = module.RotaryPositionalEmbeddings(dim, max_seq_len, base).cache
    return {"table": _np(cache.flatten(1))}


def torchtune_vision_rope_cache(patch_grid: int, dim: int, base: int = 10_000, append_cls_token: bool = True) -> Arrays:
    """torchtune ``modules/position_embeddings.py::VisionRotaryPositionalEmbeddings(patch_size=14,
    tile_size=14·patch_grid, max_num_tiles=1, dim, base, append_cls_token).cache``: ``(P² + 1, dim, 2)``
    of ``(cos, sin)`` (x positions' ``dim/2`` frequencies, then y's, each counted from 1; the CLS row
    all angle 0), flattened to ``(P² + 1, 2·dim)`` float32."""
    module = _torchtune_module("modules/position_embeddings.py")
    with _torch().no_grad():
        rope = module.VisionRotaryPositionalEmbeddings(14, 14 * patch_grid, 1, dim, base, append_cls_token)
        return {"table": _np(rope.cache.flatten(1))}


def torchtune_llama31_cache(dim: int, max_seq_len: int, base: int, scale_factor: int = 8) -> Arrays:
    """torchtune ``models/llama3_1/_position_embeddings.py::Llama3ScaledRoPE(dim, max_seq_len, base,
    scale_factor)`` (low 1, high 4, old context 8192: its defaults), cache flattened to ``(n, dim)``."""
    module = _torchtune_module("models/llama3_1/_position_embeddings.py")
    with _torch().no_grad():
        rope = module.Llama3ScaledRoPE(dim, max_seq_len, base, scale_factor=scale_factor)
        return {"table": _np(rope.cache.flatten(1))}


def vllm_cos_sin_cache(rotary_dim: int, max_position: int, base: float) -> Arrays:
    """vLLM's ``cos_sin_cache`` as ``vllm/model_executor/layers/rotary_embedding/base.py::RotaryEmbedding``
    computes it (vLLM cannot be installed without a GPU build here; the formula as published): inverse
    frequencies ``1 / base ** (arange(0, rotary_dim, 2, float) / rotary_dim)``, positions ``arange(n, float)``,
    their outer product by ``einsum``, then ``[cos | sin]``, all float32."""
    torch = _torch()
    exponents = torch.arange(0, rotary_dim, 2, dtype=torch.float) / rotary_dim
    inverse = 1.0 / (base**exponents)
    angles = torch.einsum("i,j -> ij", torch.arange(max_position, dtype=torch.float), inverse)
    return {"table": _np(torch.cat((angles.cos(), angles.sin()), dim=-1))}


def meta_freqs_cis(dim: int, end: int, theta: float) -> Arrays:
    """Meta's ``llama/model.py::precompute_freqs_cis(dim, end, theta)`` (torchtitan's is the same),
    as published: ``torch.polar`` of the float32 angles, complex64 ``(end, dim/2)``, viewed as real
    and flattened to ``(end, dim)``: ``c0, s0, c1, s1, …``."""
    torch = _torch()
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    angles = torch.outer(torch.arange(end, dtype=torch.float32), freqs)
    freqs_cis = torch.polar(torch.ones_like(angles), angles)
    return {"table": _np(torch.view_as_real(freqs_cis).flatten(1)), "complex": _np(freqs_cis)}


def keras_hub_rope(dim: int, length: int, start_index: int = 0, **kwargs: Any) -> Arrays:
    """keras-hub 0.32.0's ``keras_hub.layers.RotaryEmbedding(**kwargs)`` with the torch backend: the
    ``cos``/``sin`` embeddings its ``call`` rotates a ``(1, length, dim)`` input by, from its own
    ``_compute_cos_sin_embedding`` (the layer keeps no cache to read), ``(length, dim)`` float32."""
    import os

    os.environ.setdefault("KERAS_BACKEND", "torch")
    import keras

    assert keras.backend.backend() == "torch", keras.backend.backend()
    from keras_hub.layers import RotaryEmbedding

    layer = RotaryEmbedding(**kwargs)
    cos, sin = layer._compute_cos_sin_embedding(keras.ops.zeros((1, length, dim)), start_index)
    return {"cos": _np(cos[0]), "sin": _np(sin[0])}


def keras_hub_sine(
    length: int, dim: int, start_index: int = 0, dtype: str = "float32", positions: Any = None, **kwargs: Any
) -> Arrays:
    """keras-hub 0.32.0's ``keras_hub.layers.SinePositionEncoding(dtype=dtype, **kwargs)`` with the
    torch backend, called on a ``(1, length, dim)`` input with ``start_index`` (or ``positions``, a
    list of reals): the ``(length, dim)`` table it returns, in ``dtype`` (bfloat16 as its float32
    values)."""
    import os

    os.environ.setdefault("KERAS_BACKEND", "torch")
    import keras

    assert keras.backend.backend() == "torch", keras.backend.backend()
    from keras_hub.layers import SinePositionEncoding

    layer = SinePositionEncoding(dtype=dtype, **kwargs)
    inputs = keras.ops.zeros((1, length, dim), dtype=dtype)
    if positions is not None:
        out = layer(inputs, positions=keras.ops.convert_to_tensor(positions, dtype=dtype))
    else:
        out = layer(inputs, start_index=start_index)
    return {"table": _np(out[0].float()), "dtype": np.array(str(out.dtype))}


def _litgpt_model() -> Any:
    """litgpt 0.5.13's ``litgpt/model.py``, loaded from its file with its two litgpt imports
    (``Config``, ``qkv_reassemble``, used by the model classes only) stood in for: ``import litgpt``
    needs lightning and the training stack.  ``build_rope_cache`` runs as litgpt ships it."""
    name = "_pecli_litgpt_model"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec("litgpt")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("No module named 'litgpt'", name="litgpt")
    stubs = {
        n: types.ModuleType(n)
        for n in ("litgpt", "litgpt.config", "litgpt.scripts", "litgpt.scripts.convert_hf_checkpoint")
    }
    stubs["litgpt.config"].Config = object  # type: ignore[attr-defined]
    stubs["litgpt.scripts.convert_hf_checkpoint"].qkv_reassemble = None  # type: ignore[attr-defined]
    saved = {n: sys.modules.get(n) for n in stubs}
    sys.modules.update(stubs)
    try:
        loader = importlib.util.spec_from_file_location(
            name, Path(next(iter(spec.submodule_search_locations))) / "model.py"
        )
        assert loader is not None and loader.loader is not None
        module = importlib.util.module_from_spec(loader)
        loader.loader.exec_module(module)
    finally:
        for n, old in saved.items():
            if old is None:
                sys.modules.pop(n, None)
            else:
                sys.modules[n] = old
    sys.modules[name] = module
    return module


def litgpt_rope_cache(
    seq_len: int, n_elem: int, base: int = 10000, condense_ratio: int = 1, extra_config: dict[str, Any] | None = None
) -> Arrays:
    """litgpt ``model.py::build_rope_cache(seq_len, n_elem, base=…, condense_ratio=…, extra_config=…)``:
    ``cos``/``sin`` ``(seq_len, n_elem)`` float32 (rotate_half layout); ``extra_config`` is its
    ``rope_adjustments`` (llama3: factor, low/high_freq_factor, original_max_seq_len; YaRN: factor,
    beta_fast, beta_slow, original_max_seq_len, mscale, mscale_all_dim; else factor: linear)."""
    with _torch().no_grad():
        cos, sin = _litgpt_model().build_rope_cache(
            seq_len, n_elem, base=base, condense_ratio=condense_ratio, extra_config=extra_config
        )
    return {"cos": _np(cos), "sin": _np(sin)}


def x_transformers_rotary(
    dim: int, seq_len: int, interpolation_factor: float = 1.0, base_rescale_factor: float = 1.0, use_xpos: bool = False
) -> Arrays:
    """x-transformers 2.31.10 ``x_transformers.py::RotaryEmbedding(dim, use_xpos, interpolation_factor,
    base_rescale_factor).forward_from_seq_len(seq_len)``: the ``angles`` ``(seq_len, dim)`` float32 in
    pairs (``[f0, f0, f1, f1, …]``), their ``cos`` and ``sin`` as ``apply_rotary_pos_emb`` takes them,
    and with xPos the queries' ``scale``."""
    from x_transformers.x_transformers import RotaryEmbedding

    torch = _torch()
    with torch.no_grad():
        module = RotaryEmbedding(
            dim, use_xpos=use_xpos, interpolation_factor=interpolation_factor, base_rescale_factor=base_rescale_factor
        )
        angles, scale = module.forward_from_seq_len(seq_len)
    out = {"angles": _np(angles[0]), "cos": _np(angles[0].cos()), "sin": _np(angles[0].sin())}
    if use_xpos:
        out["scale"] = _np(scale[0])
    return out


def kornia_loftr_pe(d_model: int, h: int, w: int, temp_bug_fix: bool) -> Arrays:
    """kornia 0.9.0 ``feature/loftr/utils/position_encoding.py::PositionEncodingSine(d_model,
    max_shape=(h, w), temp_bug_fix)``'s buffer ``pe``: ``table`` ``(d_model, h, w)`` float32,
    channels ``[sin x_k, cos x_k, sin y_k, cos y_k]`` per frequency, cells counted from 1.  The module
    is loaded from its file: ``import kornia`` needs kornia_rs (installed ``--no-deps``)."""
    module = _module_file("kornia", "feature/loftr/utils/position_encoding.py")
    with _torch().no_grad():
        return {"table": _np(module.PositionEncodingSine(d_model, (h, w), temp_bug_fix=temp_bug_fix).pe[0])}


def vit_pytorch_posemb_2d(h: int, w: int, dim: int, temperature: int = 10000) -> Arrays:
    """vit-pytorch 1.26.11 ``simple_vit.py::posemb_sincos_2d(h, w, dim, temperature)``: ``table``
    ``(h·w, dim)`` float32, ``[sin x | cos x | sin y | cos y]``, ``omega = arange(dim // 4) / (dim // 4 − 1)``.
    The module is loaded from its file: ``import vit_pytorch`` needs torchvision (installed ``--no-deps``)."""
    module = _module_file("vit_pytorch", "simple_vit.py")
    with _torch().no_grad():
        return {"table": _np(module.posemb_sincos_2d(h, w, dim, temperature=temperature))}


def vit_pytorch_posemb_3d(f: int, h: int, w: int, dim: int, temperature: int = 10000) -> Arrays:
    """vit-pytorch 1.26.11 ``simple_vit_3d.py::posemb_sincos_3d(patches, temperature)`` of patches
    ``(1, f, h, w, dim)``: ``table`` ``(f·h·w, dim)`` float32, ``[sin x | cos x | sin y | cos y | sin z | cos z]``
    of ``dim // 6`` frequencies each, zero-padded to ``dim``."""
    module = _module_file("vit_pytorch", "simple_vit_3d.py")
    torch = _torch()
    with torch.no_grad():
        return {"table": _np(module.posemb_sincos_3d(torch.zeros(1, f, h, w, dim), temperature=temperature))}


def torchscale_xpos(length: int, head_dim: int, scale_base: int = 512, downscale: bool = False) -> Arrays:
    """torchscale 0.3.0 ``component/xpos_relative_position.py::XPOS(head_dim, scale_base)(x,
    downscale=…)`` on ``x = [1, 0, 1, 0, …]``: its even outputs are ``cos·scale`` and its odd ones
    ``sin·scale`` exactly (``x·cos + rotate_every_two(x)·sin`` with one of the two terms 0), returned
    as the ``(length, head_dim)`` float32 tables it multiplies by, ``duplicate_interleave(cos · scale)``
    (``cos``) and ``duplicate_interleave(sin · scale)`` (``sin``).  The module is loaded from its file."""
    module = _module_file("torchscale", "component/xpos_relative_position.py")
    torch = _torch()
    with torch.no_grad():
        x = torch.zeros(1, length, head_dim)
        x[..., 0::2] = 1.0
        out = _np(module.XPOS(head_dim, scale_base=scale_base)(x, downscale=downscale)[0])
    return {"cos": np.repeat(out[:, 0::2], 2, axis=1), "sin": np.repeat(out[:, 1::2], 2, axis=1)}
