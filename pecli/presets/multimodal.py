"""Presets of multimodal rotary caches (M-RoPE): Qwen2-VL and Qwen2.5-VL.

Listed by :mod:`pecli.presets`, which says what a preset is and how exact each kind of preset is.
Both models have head_dim 128 (hidden 3584 / 28 heads), rope_theta 1e6 and mrope_section
[16, 24, 24] (Qwen2-VL-7B-Instruct and Qwen2.5-VL-7B-Instruct config.json); the default sequence is
a short prompt with one 224×224 image (a 16×16 patch grid, 8×8 tokens after the 2×2 merge), and
for Qwen2.5-VL (vision_config.tokens_per_second 2) a 4-frame video sampled at 2 fps: 2 temporal
patches of 2 frames, second_per_grid_t = 2/2 = 1 s, so its frames are 2 positions apart.
"""

from __future__ import annotations

from pecli.presets.base import Preset

_M = "mrope"
_QWEN = {"base": 1000000.0, "mrope_section": "16;24;24"}
_ROWS = "rows = tokens of --sequence"

PRESETS = [
    Preset(
        name="qwen2-vl",
        kind=_M,
        params={**_QWEN},
        size={"sequence": "text=16;image=1x8x8;text=8", "dim": 128},
        framework="transformers 5.23 (Qwen2-VL-7B-Instruct config)",
        source="models/qwen2_vl/modeling_qwen2_vl.py::Qwen2VLRotaryEmbedding + Qwen2VLModel.get_rope_index",
        summary="M-RoPE cos: inv_freq 1/1e6^(2i/128) in sections 16|24|24 taking the temporal|height|width id, "
        "cat(f, f), float32",
        offsets=_ROWS,
    ),
    Preset(
        name="qwen2.5-vl",
        kind=_M,
        params={**_QWEN, "tokens_per_second": 2.0},
        size={"sequence": "text=16;image=1x8x8;text=8;video=2x4x4;text=8", "dim": 128},
        framework="transformers 5.23 (Qwen2.5-VL-7B-Instruct config)",
        source="models/qwen2_5_vl/modeling_qwen2_5_vl.py::Qwen2_5_VLRotaryEmbedding + Qwen2_5_VLModel.get_rope_index",
        summary="Qwen2-VL's M-RoPE, video frames tokens_per_second·second_per_grid_t (2·1 s) positions apart, float32",
        offsets=_ROWS,
    ),
]
