"""Presets of 2-D and 3-D sin-cos grids: MAE, timm, HF ViTMAE, positional-encodings, MoCo-v3, diffusers.

Listed by :mod:`pecli.presets`, which says what a preset is and how exact each kind of preset is.
"""

from __future__ import annotations

from pecli.presets.base import Preset

_p = Preset  # one call per preset, positionally: name, kind, params, size, framework, source, summary
_G = "sincos2d"

PRESETS = [
    _p(
        "positional-encodings-2d",
        _G,
        {"order": "tatp", "compute": "float32"},
        {"grid": "16x16", "dim": 64},
        "positional-encodings 6.0",
        "positional_encodings/torch_encodings.py::PositionalEncoding2D",
        "per axis C = 2⌈d/4⌉ interleaved columns, [x | y], truncated to d, rows x-major, float32",
    ),
    _p(
        "positional-encodings-3d",
        _G,
        {"order": "tatp", "compute": "float32"},
        {"grid": "8x8x8", "dim": 96},
        "positional-encodings 6.0",
        "positional_encodings/torch_encodings.py::PositionalEncoding3D",
        "per axis C = 2⌈d/6⌉ interleaved columns, [x | y | z], truncated to d, rows x-major, float32",
    ),
    _p(
        "mae",
        _G,
        {"order": "mae", "cls": True, "compute": "float64"},
        {"grid": "14x14", "dim": 768},
        "facebookresearch/mae (be47fef)",
        "util/pos_embed.py::get_2d_sincos_pos_embed(cls_token=True)",
        "[sin w | cos w | sin h | cos h], 10000^(−k/(d/4)), rows h-major, float64 then float32",
        "row 0 = zero cls token",
    ),
    _p(
        "hf-vitmae",
        _G,
        {"order": "mae", "cls": True, "compute": "float64"},
        {"grid": "14x14", "dim": 768},
        "transformers 5.23",
        "models/vit_mae/modeling_vit_mae.py::ViTMAEEmbeddings.initialize_weights",
        "MAE's table (HF builds [h|w] in float64 and swaps the halves)",
        "row 0 = zero cls token",
    ),
    _p(
        "hf-sincos2d",
        _G,
        {"order": "timm-interleave", "compute": "float64"},
        {"grid": "20x20", "dim": 256},
        "transformers 5.23",
        "models/vit_mae/modeling_vit_mae.py::build_2d_sinusoidal_position_embedding",
        "[sin h | cos h | sin w | cos w], rows h-major, float64 then float32 (RT-DETR, D-FINE)",
    ),
    _p(
        "timm-sincos2d",
        _G,
        {"order": "timm", "compute": "float32"},
        {"grid": "14x14", "dim": 768},
        "timm 1.0",
        "timm/layers/pos_embed_sincos.py::build_sincos2d_pos_embed",
        "[sin h | sin w | cos h | cos w], rows h-major, float32",
    ),
    _p(
        "timm-sincos2d-interleave",
        _G,
        {"order": "timm-interleave", "compute": "float32"},
        {"grid": "14x14", "dim": 768},
        "timm 1.0",
        "timm/layers/pos_embed_sincos.py::build_sincos2d_pos_embed(interleave_sin_cos=True)",
        "[sin h | cos h | sin w | cos w], rows h-major, float32",
    ),
    _p(
        "timm-sincos2d-reverse",
        _G,
        {"order": "timm-reverse", "compute": "float32"},
        {"grid": "14x14", "dim": 768},
        "timm 1.0",
        "timm/layers/pos_embed_sincos.py::build_sincos2d_pos_embed(reverse_coord=True)",
        "[sin w | sin h | cos w | cos h], rows w-major, float32",
    ),
    _p(
        "moco-v3",
        _G,
        {"order": "timm-reverse-interleave", "cls": True, "compute": "float32"},
        {"grid": "14x14", "dim": 768},
        "facebookresearch/moco-v3",
        "vits.py::VisionTransformerMoCo.build_2d_sincos_position_embedding",
        "[sin w | cos w | sin h | cos h], rows w-major, float32",
        "row 0 = zero cls token",
    ),
    _p(
        "sd3",
        _G,
        {"order": "mae", "compute": "float64", "base_size": 64, "max_size": 192},
        {"grid": "64x64", "dim": 1536},
        "diffusers 0.42.1 (SD3-medium config: sample_size 128, patch_size 2, 24×64 wide, pos_embed_max_size 192)",
        "models/embeddings.py::PatchEmbed.cropped_pos_embed",
        "MAE's [w | h] on a 192x192 grid of coordinates c/3 (base_size 64), the centred HxW crop, float64",
    ),
    _p(
        "pixart-alpha",
        _G,
        {"order": "mae", "compute": "float64", "base_size": 64, "interpolation_scale": 2.0},
        {"grid": "64x64", "dim": 1152},
        "diffusers 0.42.1 (PixArtTransformer2DModel defaults: sample_size 128, patch_size 2, 16×72 wide)",
        "models/embeddings.py::PatchEmbed(interpolation_scale=max(sample_size // 64, 1))",
        "MAE's [w | h], coordinates c / (m/64) / 2 (PixArt-α/Σ 1024), float64",
    ),
    _p(
        "dit",
        _G,
        {"order": "mae", "compute": "float64", "base_size": 16},
        {"grid": "16x16", "dim": 1152},
        "diffusers 0.42.1 (DiTTransformer2DModel defaults: sample_size 32, patch_size 2, 16×72 wide)",
        "models/embeddings.py::PatchEmbed",
        "MAE's [w | h], coordinates c / (m/16) (DiT-XL-2-256), float64",
    ),
    _p(
        "cogvideox",
        _G,
        {"order": "cogvideox", "compute": "float64", "interpolation_scale": 1.875},
        {"grid": "13x30x45", "dim": 1920},
        "diffusers 0.42.1 (CogVideoXTransformer3DModel defaults: 49 frames / 4, 60x90 latents / 2, 30×64 wide)",
        "models/embeddings.py::get_3d_sincos_pos_embed (CogVideoXPatchEmbed)",
        "[sin t | cos t] (d/4), then MAE's [w | h] (3d/4) of coordinates c/1.875, rows t-major, float64",
        "the video tokens (CogVideoXPatchEmbed puts 226 zero text rows in front)",
    ),
]
