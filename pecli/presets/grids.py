"""Presets of 2-D and 3-D sin-cos grids: MAE, timm, HF ViTMAE, positional-encodings, MoCo-v3, diffusers.

Listed by :mod:`pecli.presets`, which says what a preset is and how exact each kind of preset is.
"""

from __future__ import annotations

from pecli.presets.base import Preset

_G = "sincos2d"

PRESETS = [
    Preset(
        name="positional-encodings-2d",
        kind=_G,
        params={"order": "tatp", "compute": "float32"},
        size={"grid": "16x16", "dim": 64},
        framework="positional-encodings 6.0",
        source="positional_encodings/torch_encodings.py::PositionalEncoding2D",
        summary="per axis C = 2⌈d/4⌉ interleaved columns, [x | y], truncated to d, rows x-major, float32",
    ),
    Preset(
        name="positional-encodings-3d",
        kind=_G,
        params={"order": "tatp", "compute": "float32"},
        size={"grid": "8x8x8", "dim": 96},
        framework="positional-encodings 6.0",
        source="positional_encodings/torch_encodings.py::PositionalEncoding3D",
        summary="per axis C = 2⌈d/6⌉ interleaved columns, [x | y | z], truncated to d, rows x-major, float32",
    ),
    Preset(
        name="mae",
        kind=_G,
        params={"order": "mae", "cls": True, "compute": "float64"},
        size={"grid": "14x14", "dim": 768},
        framework="facebookresearch/mae (be47fef)",
        source="util/pos_embed.py::get_2d_sincos_pos_embed(cls_token=True)",
        summary="[sin w | cos w | sin h | cos h], 10000^(−k/(d/4)), rows h-major, float64 then float32",
        offsets="row 0 = zero cls token",
    ),
    Preset(
        name="hf-vitmae",
        kind=_G,
        params={"order": "mae", "cls": True, "compute": "float64"},
        size={"grid": "14x14", "dim": 768},
        framework="transformers 5.23",
        source="models/vit_mae/modeling_vit_mae.py::ViTMAEEmbeddings.initialize_weights",
        summary="MAE's table (HF builds [h|w] in float64 and swaps the halves)",
        offsets="row 0 = zero cls token",
    ),
    Preset(
        name="hf-sincos2d",
        kind=_G,
        params={"order": "timm-interleave", "compute": "float64"},
        size={"grid": "20x20", "dim": 256},
        framework="transformers 5.23",
        source="models/vit_mae/modeling_vit_mae.py::build_2d_sinusoidal_position_embedding",
        summary="[sin h | cos h | sin w | cos w], rows h-major, float64 then float32 (RT-DETR, D-FINE)",
    ),
    Preset(
        name="timm-sincos2d",
        kind=_G,
        params={"order": "timm", "compute": "float32"},
        size={"grid": "14x14", "dim": 768},
        framework="timm 1.0",
        source="timm/layers/pos_embed_sincos.py::build_sincos2d_pos_embed",
        summary="[sin h | sin w | cos h | cos w], rows h-major, float32",
    ),
    Preset(
        name="timm-sincos2d-interleave",
        kind=_G,
        params={"order": "timm-interleave", "compute": "float32"},
        size={"grid": "14x14", "dim": 768},
        framework="timm 1.0",
        source="timm/layers/pos_embed_sincos.py::build_sincos2d_pos_embed(interleave_sin_cos=True)",
        summary="[sin h | cos h | sin w | cos w], rows h-major, float32",
    ),
    Preset(
        name="timm-sincos2d-reverse",
        kind=_G,
        params={"order": "timm-reverse", "compute": "float32"},
        size={"grid": "14x14", "dim": 768},
        framework="timm 1.0",
        source="timm/layers/pos_embed_sincos.py::build_sincos2d_pos_embed(reverse_coord=True)",
        summary="[sin w | sin h | cos w | cos h], rows w-major, float32",
    ),
    Preset(
        name="moco-v3",
        kind=_G,
        params={"order": "timm-reverse-interleave", "cls": True, "compute": "float32"},
        size={"grid": "14x14", "dim": 768},
        framework="facebookresearch/moco-v3",
        source="vits.py::VisionTransformerMoCo.build_2d_sincos_position_embedding",
        summary="[sin w | cos w | sin h | cos h], rows w-major, float32",
        offsets="row 0 = zero cls token",
    ),
    Preset(
        name="sd3",
        kind=_G,
        params={"order": "mae", "compute": "float64", "base_size": 64, "max_size": 192},
        size={"grid": "64x64", "dim": 1536},
        framework="diffusers 0.42.1 (SD3-medium config: sample_size 128, patch_size 2, 24×64 wide, "
        "pos_embed_max_size 192)",
        source="models/embeddings.py::PatchEmbed.cropped_pos_embed",
        summary="MAE's [w | h] on a 192x192 grid of coordinates c/3 (base_size 64), the centred HxW crop, float64",
    ),
    Preset(
        name="pixart-alpha",
        kind=_G,
        params={"order": "mae", "compute": "float64", "base_size": 64, "interpolation_scale": 2.0},
        size={"grid": "64x64", "dim": 1152},
        framework="diffusers 0.42.1 (PixArtTransformer2DModel defaults: sample_size 128, patch_size 2, 16×72 wide)",
        source="models/embeddings.py::PatchEmbed(interpolation_scale=max(sample_size // 64, 1))",
        summary="MAE's [w | h], coordinates c / (m/64) / 2 (PixArt-α/Σ 1024), float64",
    ),
    Preset(
        name="dit",
        kind=_G,
        params={"order": "mae", "compute": "float64", "base_size": 16},
        size={"grid": "16x16", "dim": 1152},
        framework="diffusers 0.42.1 (DiTTransformer2DModel defaults: sample_size 32, patch_size 2, 16×72 wide)",
        source="models/embeddings.py::PatchEmbed",
        summary="MAE's [w | h], coordinates c / (m/16) (DiT-XL-2-256), float64",
    ),
    Preset(
        name="cogvideox",
        kind=_G,
        params={"order": "cogvideox", "compute": "float64", "interpolation_scale": 1.875},
        size={"grid": "13x30x45", "dim": 1920},
        framework="diffusers 0.42.1 (CogVideoXTransformer3DModel defaults: 49 frames / 4, 60x90 latents / 2, 30×64 "
        "wide)",
        source="models/embeddings.py::get_3d_sincos_pos_embed (CogVideoXPatchEmbed)",
        summary="[sin t | cos t] (d/4), then MAE's [w | h] (3d/4) of coordinates c/1.875, rows t-major, float64",
        offsets="the video tokens (CogVideoXPatchEmbed puts 226 zero text rows in front)",
    ),
]
