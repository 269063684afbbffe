"""Presets of diffusion transformers' per-axis rotary embeddings (diffusers' ``FluxPosEmbed``).

Listed by :mod:`pecli.presets`, which says what a preset is and how exact each kind of preset is.
FLUX.1-dev's transformer config has ``axes_dims_rope`` [16, 56, 56] (attention_head_dim 128) and
θ 10000 (``FluxTransformer2DModel``); ``FluxPipeline`` gives the 512 T5 text tokens all-zero ids
and the packed latent of a 1024×1024 image (128×128 latents, 2×2 patches: a 64×64 grid) the ids
``(0, row, col)``; ``FluxPosEmbed`` computes in float64 on CPU and returns float32.  Krea2's
transformer copies ``FluxPosEmbed`` (``Krea2RotaryPosEmbed``) with its defaults ``axes_dims_rope``
[32, 48, 48] and ``rope_theta`` 1000, and ``Krea2Pipeline.prepare_position_ids`` gives the same ids
(1024×1024 pixels: a 64×64 grid after its 8× VAE and 2×2 patches; the text length is the prompt's).
CogVideoX-5b's ``get_3d_rotary_pos_embed`` is the same per-axis table over a video's ``(frame, row,
col)`` ids, axes ``dim/4 | 3·dim/8 | 3·dim/8`` in float32, at its base size (``sample_height`` 60 and
``sample_width`` 90 latents in 2×2 patches; 49 frames are 13 latent frames).
"""

from __future__ import annotations

from pecli.presets.base import Preset

_ROWS = "rows = tokens of --tokens"

PRESETS = [
    Preset(
        name="flux",
        kind="axial",
        params={"axes_dim": "16;56;56", "base": 10000.0},
        size={"tokens": "text=512;image=64x64"},
        framework="diffusers 0.42.1 (FLUX.1-dev transformer config)",
        source="models/transformers/transformer_flux.py::FluxPosEmbed + FluxPipeline._prepare_latent_image_ids",
        summary="per-axis RoPE cos: axes 16|56|56 of ids (0, row, col), 1/10000^(2i/a), [c0, c0, c1, c1, …], "
        "float64 then float32",
        offsets=_ROWS,
    ),
    Preset(
        name="krea2",
        kind="axial",
        params={"axes_dim": "32;48;48", "base": 1000.0},
        size={"tokens": "text=512;image=64x64"},
        framework="diffusers 0.42.1 (Krea2Transformer2DModel defaults)",
        source="models/transformers/transformer_krea2.py::Krea2RotaryPosEmbed + Krea2Pipeline.prepare_position_ids",
        summary="Flux's per-axis RoPE cos with axes 32|48|48 and θ 1000: ids (0, row, col), [c0, c0, c1, c1, …], "
        "float64 then float32",
        offsets=_ROWS,
    ),
    Preset(
        name="cogvideox-5b-rope",
        kind="axial",
        params={"axes_dim": "16;24;24", "base": 10000.0, "compute": "float32", "base_grid": "30x45"},
        size={"tokens": "video=13x30x45"},
        framework="diffusers 0.42.1 (CogVideoX-5b: attention_head_dim 64, 49 frames → 13 latent, 720×480 → 30×45 "
        "patches)",
        source="models/embeddings.py::get_3d_rotary_pos_embed "
        "(CogVideoXPipeline._prepare_rotary_positional_embeddings)",
        summary="3-D RoPE cos of ids (frame, row, col): axes t 16 | h 24 | w 24 (dim/4, 3·dim/8), 1/10000^(2i/a), "
        "[c0, c0, c1, c1, …], float32; another grid (--tokens video=TxHxW) takes the fractional rows and columns "
        "of its crop into the 30x45 base (--base-grid)",
        offsets="row = token (frame, row, col) in C order",
    ),
]
