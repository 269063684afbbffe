"""Every kind and every preset family in one table (performance.py's ``kinds`` case).

    python benchmarks/performance.py --cases kinds --quick     # 32 MB tables (~2 min)
    python benchmarks/performance.py --cases kinds             # 512 MB tables (~25 min)
    python benchmarks/every_kind.py [--quick] [--only llama,fairseq] [--json out.json]

One row per kind default and per preset family (one representative preset each; the default
sinusoidal table in float32, float64 exact, bfloat16 and float16).  Each table is sized to
~512 MB in float32 (``--quick``: 32 MB) through the recipe's own size parameters (``--len``,
``--grid``, ``--tokens``, ``--sequence``, ``--feat-shape``, ``--heads``), and measured:

- GB/s: ``recipe.build()`` in memory, the table's bytes over the median of ``--repeat``.
- vs framework: pecli's time over the framework's own code (same output, torch's default threads,
  timed alternately in this process; "—" where no framework applies or it is not installed).  For
  tables a framework returns as a cos/sin pair (HF RoPE, diffusers Flux, timm's rotary grid), the
  pecli side builds both parts (``--part cos`` and ``--part sin``).  The framework calls follow
  tests/conformance/references.py; setup that a model does once (building a module, the ids) is
  outside the timed call.  float64 exact: against the textbook NumPy float64 formula (performance.py).
- RSS: peak RSS of ``pecli generate ... -o TMP/x.npy -q`` (streamed in row blocks), and of a child
  that calls ``recipe.build()`` (in memory: at least the table's bytes; not with ``--quick``).
- max ulp: against the exact table (the recipe with ``dtype=float64, compute=exact``, rounded once
  to the output dtype; a float pipeline's --form pow/div/recip reset to the default form), in ulps
  of the output dtype at the exact value, over three row blocks of
  ~2M values each (first, middle, last rows: pipeline errors grow with the position); "—" where the
  kind has no exact variant (learned, xpos).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parent))

#: Values (float32) of a full-size table: 512 MB.
FULL_CELLS = 128 << 20
#: ``--quick``: 32 MB.
QUICK_CELLS = 8 << 20
#: Fast builds are repeated until about this many seconds (at most MAX_REPEAT times).
MIN_SECONDS = 0.5
MAX_REPEAT = 11
#: A framework call slower than this (seconds) is timed once after its warm-up call.
SLOW = 4.0
#: Values per block of the ulp check (three blocks).
ULP_BLOCK_CELLS = 2 << 20

Thunk = Callable[[], Any]


@dataclass
class Case:
    name: str
    family: str
    size: Callable[[int], dict[str, Any]]  # cells → size overrides
    preset: str | None = None
    kind: str | None = None
    params: dict[str, Any] = field(default_factory=dict)  # kind params (without a preset) or extra overrides
    framework: str = "—"
    setup: Callable[[Any], Thunk] | None = None  # recipe → the framework's timed call
    pair: bool = False  # the framework returns cos and sin: pecli builds both for the ratio
    targets: tuple[str, ...] = ()  # "gbs" (≥ 1 GB/s), "fw" (≤ framework), "f64" (≥ 3x the textbook NumPy formula)
    fw_once: bool = False  # a pure-Python framework (minutes at 512 MB): one timed call, no warm-up

    def overrides(self, cells: int) -> dict[str, Any]:
        return {**self.params, **self.size(cells)}

    def recipe(self, cells: int) -> Any:
        from pecli.making import make_recipe

        return make_recipe(self.overrides(cells), preset=self.preset, kind=self.kind)

    def cli(self, cells: int) -> list[str]:
        from pecli.params import spell

        args = ["--preset", self.preset] if self.preset else ["--kind", str(self.kind)]
        for k, v in self.overrides(cells).items():
            args += [spell(k), str(v)]
        return args


# ------------------------------------------------------------------------------------- sizes
def rows_by(dim: int, extra: dict[str, Any] | None = None) -> Callable[[int], dict[str, Any]]:
    return lambda cells: {"length": max(1, cells // dim), "dim": dim, **(extra or {})}


def side(rows: int, multiple: int = 16) -> int:
    return max(multiple, int(math.sqrt(rows)) // multiple * multiple)


def grid(dim: int) -> Callable[[int], dict[str, Any]]:
    def size(cells: int) -> dict[str, Any]:
        s = side(cells // dim)
        return {"grid": f"{s}x{s}", "dim": dim}

    return size


def grid3(dim: int) -> Callable[[int], dict[str, Any]]:
    def size(cells: int) -> dict[str, Any]:  # CogVideoX: 13 latent frames, H:W = 2:3
        h = max(2, int(math.sqrt(cells // dim / 13 / 1.5)))
        return {"grid": f"13x{h}x{int(h * 1.5)}", "dim": dim}

    return size


def tokens(width: int, text: int = 512) -> Callable[[int], dict[str, Any]]:
    def size(cells: int) -> dict[str, Any]:
        s = side(cells // width)
        return {"tokens": f"text={text};image={s}x{s}"}

    return size


def sequence(dim: int) -> Callable[[int], dict[str, Any]]:
    def size(cells: int) -> dict[str, Any]:
        s = side(cells // dim)
        return {"sequence": f"text=16;image=1x{s}x{s};text=8", "dim": dim}

    return size


def feat(width: int, dim: int) -> Callable[[int], dict[str, Any]]:
    def size(cells: int) -> dict[str, Any]:
        s = side(cells // width)
        return {"feat_shape": f"{s}x{s}", "dim": dim}

    return size


def xpos_size(cells: int) -> dict[str, Any]:
    # xpos's scales overflow float32 beyond ~70,000 positions (scale_base 512): 65,536 rows, wider.
    return {"length": 65536, "dim": max(2, cells // 65536 // 2 * 2)}


def heads_by(heads: int) -> Callable[[int], dict[str, Any]]:
    return lambda cells: {"heads": heads, "length": max(2, cells // heads), "part": "bias"}


def dims_of(r: Any, key: str = "grid") -> list[int]:
    return [int(x) for x in str(getattr(r, key)).split("x")]


# -------------------------------------------------------------------------------- frameworks
# Each takes the (sized) recipe and returns the timed call; see tests/conformance/references.py.
def _nograd(fn: Thunk) -> Thunk:
    import torch

    def call() -> Any:
        with torch.no_grad():
            return fn()

    return call


def fw_numpy_textbook(r: Any) -> Thunk:
    from performance import numpy_textbook

    return lambda: numpy_textbook(r.shape[0], r.shape[1])


def fw_m2m100(r: Any) -> Thunk:
    from transformers.models.m2m_100.modeling_m2m_100 import M2M100SinusoidalPositionalEmbedding as M

    return _nograd(lambda: M.get_embedding(r.shape[0], r.dim, r.padding_idx))


def fw_whisper(r: Any) -> Thunk:
    from transformers.models.whisper.modeling_whisper import sinusoids

    return _nograd(lambda: sinusoids(r.length, r.dim))


def fw_marian(r: Any) -> Thunk:
    from transformers.models.marian.modeling_marian import MarianSinusoidalPositionalEmbedding

    module = MarianSinusoidalPositionalEmbedding(r.length, r.dim)
    return _nograd(module.create_weight)


def fw_gptj(r: Any) -> Thunk:
    from transformers.models.gptj.modeling_gptj import create_sinusoidal_positions

    return _nograd(lambda: create_sinusoidal_positions(r.length, r.dim))


def fw_tutorial(r: Any) -> Thunk:
    # transformers' SpeechT5ScaledPositionalEncoding: the PyTorch tutorial's __init__, line for line.
    from transformers.models.speecht5.modeling_speecht5 import SpeechT5ScaledPositionalEncoding

    return _nograd(lambda: SpeechT5ScaledPositionalEncoding(0.0, r.dim, r.length).pe)


def _uncached(enc: Any, x: Any) -> Any:
    enc.cached_penc = None  # it returns its last output for an input of the same shape
    return enc(x)


def fw_pe1d(r: Any) -> Thunk:
    import torch
    from positional_encodings.torch_encodings import PositionalEncoding1D

    enc, x = PositionalEncoding1D(r.dim), torch.zeros((1, r.length, r.dim))
    return _nograd(lambda: _uncached(enc, x))


def fw_pe2d(r: Any) -> Thunk:
    import torch
    from positional_encodings.torch_encodings import PositionalEncoding2D

    h, w = dims_of(r)
    enc, x = PositionalEncoding2D(r.dim), torch.zeros((1, h, w, r.dim))
    return _nograd(lambda: _uncached(enc, x))


def fw_timesteps(r: Any) -> Thunk:
    import torch
    from diffusers.models.embeddings import get_timestep_embedding

    t = torch.arange(r.length, dtype=torch.float32)
    return _nograd(lambda: get_timestep_embedding(t, r.dim, flip_sin_to_cos=True, downscale_freq_shift=0))


def fw_hf_sincos2d(r: Any) -> Thunk:
    from transformers.models.vit_mae.modeling_vit_mae import build_2d_sinusoidal_position_embedding as build

    h, w = dims_of(r)
    return _nograd(lambda: build(height=h, width=w, embed_dim=r.dim, temperature=r.base))


def fw_diffusers_2d(r: Any) -> Thunk:
    from diffusers.models.embeddings import get_2d_sincos_pos_embed

    h, w = dims_of(r)
    return _nograd(
        lambda: get_2d_sincos_pos_embed(
            r.dim, (h, w), base_size=r.base_size, interpolation_scale=r.interpolation_scale, output_type="pt"
        ).float()
    )


def fw_diffusers_3d(r: Any) -> Thunk:
    from diffusers.models.embeddings import get_3d_sincos_pos_embed

    t, h, w = dims_of(r)
    return _nograd(
        lambda: (
            get_3d_sincos_pos_embed(r.dim, (w, h), t, r.interpolation_scale, 1.0, output_type="pt")
            .flatten(0, 1)
            .float()
        )
    )


def _timm(name: str) -> Any:
    sys.path.insert(0, str(HERE.parents[1] / "tests" / "conformance"))
    import references  # the stand-in import of timm's layers without torchvision (read only)

    return references._timm_layers_module(name)


def fw_timm_sincos2d(r: Any) -> Thunk:
    module = _timm("pos_embed_sincos")
    return _nograd(lambda: module.build_sincos2d_pos_embed(dims_of(r), dim=r.dim, temperature=r.base))


def fw_llama(rope_parameters: dict[str, Any], max_positions: int = 2048) -> Callable[[Any], Thunk]:
    def setup(r: Any) -> Thunk:
        import torch
        from transformers import LlamaConfig
        from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

        config = LlamaConfig(
            vocab_size=8,
            hidden_size=r.dim,
            intermediate_size=4,
            num_hidden_layers=1,
            num_attention_heads=1,
            head_dim=r.dim,
            max_position_embeddings=max_positions,
            rope_parameters=dict(rope_parameters),
        )
        module = LlamaRotaryEmbedding(config)
        x, ids = torch.zeros(1), torch.arange(r.length).reshape(1, -1)
        return _nograd(lambda: module(x, ids))

    return setup


def fw_longrope(r: Any) -> Thunk:
    floats = lambda s: [float(x) for x in str(s).split(";")]  # noqa: E731
    params = {
        "rope_type": "longrope",
        "rope_theta": r.base,
        "factor": r.factor,
        "original_max_position_embeddings": r.original_max_position_embeddings,
        "short_factor": floats(r.short_factor),
        "long_factor": floats(r.long_factor),
    }
    return fw_llama(params, 131072)(r)


def fw_lucidrains_pairs(r: Any) -> Thunk:
    import torch
    from rotary_embedding_torch import RotaryEmbedding

    rope = RotaryEmbedding(r.dim, theta=r.base)

    def call() -> Any:
        angles = rope(rope.get_seq_pos(r.length, dtype=torch.float32))
        return angles.cos(), angles.sin()

    return _nograd(call)


def fw_xpos(r: Any) -> Thunk:
    import torch
    from rotary_embedding_torch import RotaryEmbedding

    module = RotaryEmbedding(r.dim, use_xpos=True, xpos_scale_base=r.scale_base)
    return _nograd(lambda: module.get_scale(module.get_seq_pos(r.length, dtype=torch.float32), seq_len=r.length))


def fw_qwen2_vl(r: Any) -> Thunk:
    import torch
    from transformers import Qwen2VLConfig
    from transformers.models.qwen2_vl.modeling_qwen2_vl import Qwen2VLModel

    text = {
        "vocab_size": 8,
        "hidden_size": r.dim,
        "intermediate_size": 4,
        "num_hidden_layers": 1,
        "num_attention_heads": 1,
        "num_key_value_heads": 1,
        "head_dim": r.dim,
        "rope_parameters": {
            "rope_type": "default",
            "rope_theta": r.base,
            "mrope_section": [int(x) for x in r.mrope_section.split(";")],
        },
    }
    vision = {"depth": 1, "embed_dim": 16, "num_heads": 1, "hidden_size": r.dim, "mlp_ratio": 1}
    config = Qwen2VLConfig(text_config=text, vision_config=vision, image_token_id=5, video_token_id=6)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        module = Qwen2VLModel(config).eval()
    # The sequence text=16;image=1xSxS;text=8 as the processor hands it over (raw grid: 2S x 2S).
    s = int(r.sequence.split("image=1x")[1].split("x")[0])
    types = torch.tensor([0] * 16 + [1] * (s * s) + [0] * 8).reshape(1, -1)
    input_ids = torch.where(types == 1, 5, 1)
    grid_thw = torch.tensor([[1, 2 * s, 2 * s]])
    x = torch.zeros(1)

    def call() -> Any:
        position_ids, _ = module.get_rope_index(input_ids, types, image_grid_thw=grid_thw)
        return module.language_model.rotary_emb(x, position_ids)

    return _nograd(call)


def fw_bloom(r: Any) -> Thunk:
    import torch
    from transformers.models.bloom.modeling_bloom import build_alibi_tensor

    mask = torch.ones(1, r.length, dtype=torch.int64)
    return _nograd(lambda: build_alibi_tensor(mask, r.heads, torch.float32))


def fw_mpt(r: Any) -> Thunk:
    from transformers.models.mpt.modeling_mpt import build_mpt_alibi_tensor

    return _nograd(lambda: build_mpt_alibi_tensor(r.heads, r.length, alibi_bias_max=8))


def fw_normal(r: Any) -> Thunk:
    import torch

    return _nograd(lambda: torch.empty(r.length, r.dim).normal_(mean=0.0, std=r.std))


def fw_trunc_normal_tf(r: Any) -> Thunk:
    import torch

    module = _timm("weight_init")
    return _nograd(lambda: module.trunc_normal_tf_(torch.empty(r.length, r.dim), std=r.std))


def fw_flux(r: Any) -> Thunk:
    from diffusers.models.transformers.transformer_flux import FluxPosEmbed

    sys.path.insert(0, str(HERE.parents[1] / "tests" / "conformance"))
    import references

    s = int(r.tokens.split("image=")[1].split("x")[0])
    ids = references.diffusers_flux_ids(512, s, s)
    embed = FluxPosEmbed(int(r.base), [int(x) for x in r.axes_dim.split(";")])
    return _nograd(lambda: embed(ids))


def fw_eva02(r: Any) -> Thunk:
    module = _timm("pos_embed_sincos")
    ref = None if r.ref_feat_shape is None else dims_of(r, "ref_feat_shape")
    shape = dims_of(r, "feat_shape")
    return _nograd(
        lambda: module.RotaryEmbeddingCat(
            r.dim, temperature=r.base, in_pixels=False, feat_shape=shape, ref_feat_shape=ref
        ).get_embed()
    )


def fw_timm_rope_pixel(r: Any) -> Thunk:
    module = _timm("pos_embed_sincos")
    shape = dims_of(r, "feat_shape")
    return _nograd(
        lambda: module.build_rotary_pos_embed(
            shape, dim=r.dim, max_res=r.max_res, temperature=r.base, linear_bands=r.linear_bands, in_pixels=True
        )
    )


# ------------------------------------------------------------------------------------- cases
G, FW, F64 = "gbs", "fw", "f64"

CASES: list[Case] = [
    # sinusoidal
    Case("sinusoidal f32", "sinusoidal default (exact)", rows_by(1024), kind="sinusoidal"),
    Case(
        "sinusoidal f64",
        "default, float64 exact",
        rows_by(1024),
        kind="sinusoidal",
        params={"dtype": "float64"},
        framework="textbook NumPy float64",
        setup=fw_numpy_textbook,
        targets=(F64,),
    ),
    Case(
        "sinusoidal bf16",
        "default, bfloat16",
        rows_by(1024),
        kind="sinusoidal",
        params={"dtype": "bfloat16"},
        targets=(G,),
    ),
    Case(
        "sinusoidal f16",
        "default, float16",
        rows_by(1024),
        kind="sinusoidal",
        params={"dtype": "float16"},
        targets=(G,),
    ),
    Case(
        "fairseq",
        "fairseq/HF t2t split f32 (m2m100 fsmt xglm s2t)",
        rows_by(1024),
        preset="fairseq",
        framework="HF M2M100 get_embedding",
        setup=fw_m2m100,
        targets=(FW,),
    ),
    Case(
        "whisper",
        "whisper sinusoids",
        rows_by(1024),
        preset="whisper",
        framework="HF whisper sinusoids",
        setup=fw_whisper,
        targets=(FW,),
    ),
    Case(
        "hf-marian",
        "HF float64 div (marian pegasus roformer xlm)",
        rows_by(1024),
        preset="hf-marian",
        framework="HF Marian create_weight",
        setup=fw_marian,
        targets=(FW,),
        fw_once=True,
    ),
    Case(
        "gpt-j",
        "float32 pow (gpt-j)",
        rows_by(64),
        preset="gpt-j",
        framework="HF create_sinusoidal_positions",
        setup=fw_gptj,
        targets=(FW,),
    ),
    Case(
        "pytorch-tutorial",
        "PyTorch tutorial f32 exp interleaved",
        rows_by(1024),
        preset="pytorch-tutorial",
        framework="HF SpeechT5 (tutorial code)",
        setup=fw_tutorial,
        targets=(FW,),
    ),
    Case(
        "positional-encodings-1d",
        "positional-encodings 1D",
        rows_by(64),
        preset="positional-encodings-1d",
        framework="PositionalEncoding1D",
        setup=fw_pe1d,
        targets=(FW,),
    ),
    Case(
        "sd3-timesteps",
        "diffusers timesteps (sd3 sd-unet dit ddpm)",
        rows_by(256),
        preset="sd3-timesteps",
        framework="diffusers get_timestep_embedding",
        setup=fw_timesteps,
        targets=(FW,),
    ),
    # sincos2d
    Case("sincos2d", "sincos2d default (mae order, exact)", grid(1024), kind="sincos2d", targets=(G,)),
    Case(
        "hf-sincos2d",
        "HF/MAE float64 (mae hf-vitmae hf-sincos2d)",
        grid(256),
        preset="hf-sincos2d",
        framework="HF build_2d_sinusoidal_pos_emb",
        setup=fw_hf_sincos2d,
        targets=(G, FW),
    ),
    Case(
        "dit",
        "diffusers 2D float64 (dit pixart sd3)",
        grid(1152),
        preset="dit",
        framework="diffusers get_2d_sincos_pos_embed",
        setup=fw_diffusers_2d,
        targets=(G, FW),
    ),
    Case(
        "cogvideox",
        "diffusers 3D float64 (cogvideox)",
        grid3(1920),
        preset="cogvideox",
        framework="diffusers get_3d_sincos_pos_embed",
        setup=fw_diffusers_3d,
        targets=(G, FW),
    ),
    Case(
        "timm-sincos2d",
        "timm float32 (timm-* moco-v3)",
        grid(768),
        preset="timm-sincos2d",
        framework="timm build_sincos2d_pos_embed",
        setup=fw_timm_sincos2d,
        targets=(G, FW),
    ),
    Case(
        "positional-encodings-2d",
        "positional-encodings 2D/3D",
        grid(64),
        preset="positional-encodings-2d",
        framework="PositionalEncoding2D",
        setup=fw_pe2d,
        targets=(G, FW),
    ),
    # rope
    Case(
        "llama",
        "rope default (llama gpt-neox pythia)",
        rows_by(128),
        preset="llama",
        framework="HF LlamaRotaryEmbedding",
        setup=fw_llama({"rope_type": "default", "rope_theta": 10000.0}),
        pair=True,
        targets=(G, FW),
    ),
    Case(
        "meta-llama",
        "rope pairs (meta-llama)",
        rows_by(128),
        preset="meta-llama",
        framework="rotary-embedding-torch cos/sin",
        setup=fw_lucidrains_pairs,
        pair=True,
        targets=(G, FW),
    ),
    Case(
        "vicuna-16k",
        "rope linear",
        rows_by(128),
        preset="vicuna-16k",
        framework="HF LlamaRotaryEmbedding",
        setup=fw_llama({"rope_type": "linear", "rope_theta": 10000.0, "factor": 4.0}),
        pair=True,
        targets=(G, FW),
    ),
    Case(
        "llama2-dynamic",
        "rope dynamic NTK",
        rows_by(128),
        preset="llama2-dynamic",
        framework="HF LlamaRotaryEmbedding",
        setup=fw_llama({"rope_type": "dynamic", "rope_theta": 10000.0, "factor": 2.0}, 4096),
        pair=True,
        targets=(G, FW),
    ),
    Case(
        "qwen3-yarn",
        "rope yarn (qwen3-yarn gpt-oss)",
        rows_by(128),
        preset="qwen3-yarn",
        framework="HF LlamaRotaryEmbedding",
        setup=fw_llama(
            {"rope_type": "yarn", "rope_theta": 1e6, "factor": 4.0, "original_max_position_embeddings": 32768}, 131072
        ),
        pair=True,
        targets=(G, FW),
    ),
    Case(
        "phi3-vision-128k",
        "rope longrope",
        rows_by(96),
        preset="phi3-vision-128k",
        framework="HF LlamaRotaryEmbedding",
        setup=fw_longrope,
        pair=True,
        targets=(G, FW),
    ),
    Case(
        "llama3",
        "rope llama3 (llama3 meta-llama3)",
        rows_by(128),
        preset="llama3",
        framework="HF LlamaRotaryEmbedding",
        setup=fw_llama(
            {
                "rope_type": "llama3",
                "rope_theta": 500000.0,
                "factor": 8.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": 8192,
            },
            131072,
        ),
        pair=True,
        targets=(G, FW),
    ),
    Case(
        "lucidrains-xpos",
        "xpos (default)",
        xpos_size,
        preset="lucidrains-xpos",
        framework="rotary-embedding-torch get_scale",
        setup=fw_xpos,
        targets=(G, FW),
    ),
    Case(
        "qwen2-vl",
        "mrope (default; qwen2-vl qwen2.5-vl)",
        sequence(128),
        preset="qwen2-vl",
        framework="HF Qwen2VL get_rope_index+rotary",
        setup=fw_qwen2_vl,
        pair=True,
        targets=(G, FW),
    ),
    # alibi
    Case("alibi", "alibi default (list slopes) as bias", heads_by(64), kind="alibi", targets=(G,)),
    Case(
        "bloom-alibi",
        "alibi bloom (pow)",
        heads_by(112),
        preset="bloom-alibi",
        framework="HF build_alibi_tensor",
        setup=fw_bloom,
        targets=(G, FW),
    ),
    Case(
        "mpt-alibi",
        "alibi mpt (recip, last)",
        heads_by(32),
        preset="mpt-alibi",
        framework="HF build_mpt_alibi_tensor",
        setup=fw_mpt,
        targets=(G, FW),
    ),
    # learned
    Case(
        "hf-bert",
        "learned normal (default; hf-bert gpt2 roberta bart vit)",
        rows_by(1024),
        preset="hf-bert",
        framework="torch normal_ (HF _init_weights)",
        setup=fw_normal,
        targets=(G, FW),
    ),
    Case(
        "bert",
        "learned truncated-normal (bert)",
        rows_by(1024),
        preset="bert",
        framework="timm trunc_normal_tf_",
        setup=fw_trunc_normal_tf,
        targets=(G, FW),
    ),
    # axial
    Case(
        "flux",
        "axial (default axes; flux krea2)",
        tokens(128),
        preset="flux",
        framework="diffusers FluxPosEmbed",
        setup=fw_flux,
        pair=True,
        targets=(G, FW),
    ),
    # rope2d
    Case(
        "eva02",
        "rope2d lang cat (eva02)",
        feat(128, 64),
        preset="eva02",
        framework="timm RotaryEmbeddingCat",
        setup=fw_eva02,
        targets=(G, FW),
    ),
    Case(
        "timm-rope-pixel",
        "rope2d pixel (default bands)",
        feat(64, 64),
        preset="timm-rope-pixel",
        framework="timm build_rotary_pos_embed",
        setup=fw_timm_rope_pixel,
        pair=True,
        targets=(G, FW),
    ),
]


# ----------------------------------------------------------------------------------- measures
def exact_of(r: Any) -> Any | None:
    """The float64 exact recipe of ``r``, or ``None`` when its kind has no exact variant."""
    from pecli.errors import RecipeError

    names = {f.name for f in fields(r)}
    if "compute" not in names:
        return None
    try:
        return replace(r, dtype="float64", compute="exact")
    except (RecipeError, TypeError, ValueError):
        pass
    if "form" not in names:
        return None
    # A pipeline's form (div, pow, recip) goes with a float pipeline only: the exact table of the
    # same recipe has the kind's default form (the same mathematical values).
    default = next(f.default for f in fields(r) if f.name == "form")
    try:
        return replace(r, dtype="float64", compute="exact", form=default)
    except (RecipeError, TypeError, ValueError):
        return None


def max_ulp(r: Any, table: np.ndarray) -> tuple[str, str]:
    """Max ulp and max absolute error of ``table`` against the exact table rounded to its dtype,
    over three row blocks."""
    from pecli.dtypes import round_to

    ref = exact_of(r)
    if ref is None:
        return "—", "—"
    if r.dtype == "float64" and getattr(r, "compute", None) == "exact":
        return "(reference)", "—"
    n, d = table.shape
    b = max(1, min(n, ULP_BLOCK_CELLS // max(d, 1)))
    worst = err = 0.0
    for r0 in sorted({0, max(0, n // 2 - b // 2), max(0, n - b)}):
        r1 = min(n, r0 + b)
        exact = round_to(ref.rows(r0, r1), r.dtype)
        ours = table[r0:r1]
        e64, o64 = exact.astype(np.float64), ours.astype(np.float64)
        if r.dtype == "bfloat16":
            ulp = np.spacing(np.abs(e64).astype(np.float32)).astype(np.float64) * 65536.0
        else:
            ulp = np.spacing(np.abs(exact)).astype(np.float64)
        diff = np.abs(o64 - e64)
        same = diff == 0
        if diff.size:
            worst = max(worst, float(np.max(np.where(same, 0.0, diff / ulp))))
            err = max(err, float(diff.max()))
    return (f"{worst:.3g}" if worst < 1e6 else f"{worst:.1e}"), f"{err:.1e}"


def run_case(case: Case, cells: int, repeat: int, where: Path, build_rss: bool = True) -> dict[str, Any]:
    from _harness import cold_build, pecli_cmd
    from performance import launch, timed, warm_memory

    started = time.perf_counter()
    r = case.recipe(cells)
    n, d = r.shape
    nbytes = r.nbytes
    out: dict[str, Any] = {"case": case.name, "family": case.family, "shape": f"{n}x{d}", "dtype": r.dtype}
    warm = 3 * n * d * 8
    warm_memory(warm)
    t_first = time.perf_counter()
    table = r.build()  # untimed: code paths and caches; the ulp check reads it
    t_first = time.perf_counter() - t_first
    out["max_ulp"], out["max_abs_err"] = max_ulp(r, table)
    del table
    parts = [r]
    if case.pair:
        parts = [replace(r, part="cos"), replace(r, part="sin")]
    fns: dict[str, Thunk] = {"pecli": lambda: cold_build(r)}
    if case.pair:
        fns["pecli pair"] = lambda: [cold_build(p) for p in parts]
    fw_error = None
    if case.setup is not None:
        try:
            fn = case.setup(r)
            first = math.inf
            if not case.fw_once:
                warm_memory(warm)
                first = timed(fn)  # untimed: imports, code paths
            fns["framework"] = fn
        except Exception as exc:  # a missing framework or a changed API: reported, not fatal
            fw_error = f"{type(exc).__name__}: {str(exc)[:60]}"
    # Tables built in milliseconds are timed more often (the machine's load is noise at that scale).
    repeat = max(repeat, min(MAX_REPEAT, math.ceil(MIN_SECONDS / max(t_first, 1e-3))))
    out["repeat"] = repeat
    times: dict[str, list[float]] = {k: [] for k in fns}
    for i in range(repeat):
        for k, fn in fns.items():
            if i and k == "framework" and first > SLOW:
                continue  # a framework over SLOW seconds a call (Marian's Python loops): timed once
            warm_memory(warm)
            times[k].append(timed(fn))
    med = {k: statistics.median(v) for k, v in times.items()}
    out["seconds"] = med["pecli"]
    out["gbs"] = nbytes / med["pecli"] / 1e9
    if "framework" in med:
        ours = med["pecli pair" if case.pair else "pecli"]
        out["framework"] = case.framework
        out["framework_seconds"] = med["framework"]
        out["ratio"] = ours / med["framework"]
    else:
        out["framework"] = case.framework if fw_error is None else f"{case.framework}: {fw_error}"
        out["ratio"] = None
    # Peak RSS: the CLI writing a .npy in row blocks, and an in-memory build().
    path = where / "x.npy"
    try:
        _, rss = launch([*pecli_cmd(), "generate", *case.cli(cells), "-o", str(path), "-q", "--force"])
        out["rss_stream"] = rss
    except RuntimeError as exc:
        out["rss_stream"] = None
        out["stream_error"] = str(exc)[-200:]
    path.unlink(missing_ok=True)
    Path(str(path) + ".json").unlink(missing_ok=True)
    out["rss_build"] = None
    if build_rss:
        _, out["rss_build"] = launch([sys.executable, str(HERE), "--child", case.name, str(cells)])
    out["elapsed"] = time.perf_counter() - started
    return out


def verdicts(case: Case, res: dict[str, Any]) -> list[str]:
    """The targets this row misses (empty: all met)."""
    miss = []
    if G in case.targets and res["gbs"] < 1.0:
        miss.append(f"{res['gbs']:.2f} GB/s < 1 GB/s in memory")
    if FW in case.targets and res["ratio"] is not None and res["ratio"] > 1.0:
        miss.append(f"{res['ratio']:.2f}x the framework's time (> 1)")
    if F64 in case.targets and res["ratio"] is not None and res["ratio"] > 1 / 3:
        speed = 1 / res["ratio"]
        said = f"{speed:.2f}x faster" if speed >= 1 else f"{res['ratio']:.2f}x slower"
        miss.append(f"{said} than the textbook NumPy float64 formula (target: 3x faster)")
    if res["rss_stream"] is None:
        miss.append(f"pecli generate -o failed: {res.get('stream_error')}")
    elif res["rss_stream"] > 256e6:
        miss.append(f"streamed peak RSS {res['rss_stream'] / 1e6:.0f} MB > 256 MB")
    return miss


def fmt_row(res: dict[str, Any]) -> list[str]:
    ratio = "—" if res["ratio"] is None else f"{res['ratio']:.2f}"
    fw = res["framework"]
    stream = "failed" if res["rss_stream"] is None else f"{res['rss_stream'] / 1e6:,.0f}"
    return [
        res["case"],
        res["family"],
        f"{res['shape']} {res['dtype']}",
        f"{res['gbs']:.2f}",
        ratio,
        fw,
        stream,
        "—" if res["rss_build"] is None else f"{res['rss_build'] / 1e6:,.0f}",
        res["max_ulp"],
        res["max_abs_err"],
    ]


HEADS = [
    "preset/kind",
    "family",
    "table",
    "GB/s",
    "pecli/fw",
    "framework",
    "RSS -o MB",
    "RSS build MB",
    "max ulp",
    "max |err|",
]


def print_table(rows: list[list[str]], file: Any = sys.stdout) -> None:
    widths = [max(len(h), *(len(r[j]) for r in rows)) for j, h in enumerate(HEADS)]
    line = "  ".join(h.ljust(w) for h, w in zip(HEADS, widths, strict=True))
    print(line.rstrip(), file=file)
    print("-" * len(line.rstrip()), file=file)
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip(), file=file)


def run(
    quick: bool, repeat: int, only: list[str] | None = None, json_path: str | None = None, where: str = "."
) -> list[dict[str, Any]]:
    cells = QUICK_CELLS if quick else FULL_CELLS
    cases = [c for c in CASES if not only or c.name in only]
    print(
        f"kinds: {len(cases)} rows, {cells * 4 >> 20} MB float32 tables, {repeat} repeats, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.2f}",
        file=sys.stderr,
        flush=True,
    )
    t0 = time.perf_counter()
    results, rows, misses = [], [], []
    with tempfile.TemporaryDirectory(dir=where, prefix=".pecli-kinds-") as tmp:
        for case in cases:
            res = run_case(case, cells, repeat, Path(tmp), build_rss=not quick)
            res["misses"] = verdicts(case, res)
            results.append(res)
            rows.append(fmt_row(res))
            print("  " + " | ".join(rows[-1]) + f" ({res['elapsed']:.0f} s)", file=sys.stderr, flush=True)
            misses += [f"{case.name}: {m}" for m in res["misses"]]
    print(f"kinds: {time.perf_counter() - t0:.0f} s, load average after {os.getloadavg()[0]:.2f}", file=sys.stderr)
    print_table(rows)
    print()
    print("max ulp: against the exact table rounded once to the output dtype, in ulps at the exact value (near-zero")
    print("values make float32 pipelines' counts huge; max |err| is the absolute error); 3 blocks of ~2M values.")
    print("pecli/fw: pecli's median time over the framework's (< 1: pecli faster; cos+sin pairs: both parts).")
    print("Targets: >= 1 GB/s in memory for RoPE, grids, ALiBi, learned, bf16/f16; framework presets")
    print("pecli/fw <= 1; float64 exact >= 3x the textbook NumPy formula (pecli/fw <= 0.33);")
    print("pecli generate -o peak RSS <= 256 MB.")
    if misses:
        print(f"Missed ({len(misses)}):")
        for m in misses:
            print(f"  - {m}")
    else:
        print("Missed: none")
    if json_path:
        Path(json_path).write_text(json.dumps(results, indent=1, default=str))
    return results


def run_child(name: str, cells: int) -> None:
    case = next(c for c in CASES if c.name == name)
    case.recipe(cells).build()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="32 MB tables instead of 512 MB, no build-RSS child")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default=None, help="comma-separated row names (preset/kind column)")
    ap.add_argument("--json", default=None, help="also write the results to this JSON file")
    ap.add_argument("--dir", default=".", help="where the streamed .npy goes")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        run_child(args.child[0], int(args.child[1]))
        return
    run(args.quick, args.repeat, args.only.split(",") if args.only else None, args.json, args.dir)


if __name__ == "__main__":
    main()
