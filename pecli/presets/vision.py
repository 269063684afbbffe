"""Presets of vision transformers' 2-D rotary embeddings (timm's ``build_rotary_pos_embed``).

Listed by :mod:`pecli.presets`, which says what a preset is and how exact each kind of preset is.
timm 1.0.31 ``models/eva.py::eva02_base_patch14_224`` has ``img_size=224``, ``patch_size=14``,
``embed_dim=768``, ``num_heads=12`` and ``ref_feat_shape=(16, 16)``; ``Eva`` builds
``RotaryEmbeddingCat(dim=768 // 12, in_pixels=False, feat_shape=(16, 16), ref_feat_shape=(16, 16))``
(``create_rope_embed(rope_type='cat')``, ``rope_temperature`` 10000): language bands on a
16×16 grid, ``[sin | cos]``.  ``layers/pos_embed_sincos.py::RotaryEmbedding(dim)`` defaults to pixel
bands (``in_pixels=True``, ``max_res=224``, ``linear_bands=False``) and returns ``(sin, cos)``.
"""

from __future__ import annotations

from pecli.presets.base import Preset

_p = Preset  # one call per preset, positionally: name, kind, params, size, framework, source, summary
_ROWS = "rows = grid cells, h-major (grid_indexing='ij')"

PRESETS = [
    _p(
        "eva02",
        "rope2d",
        {"bands": "lang", "base": 10000.0, "ref_feat_shape": "16x16", "part": "cat", "compute": "float32"},
        {"feat_shape": "16x16", "dim": 64},
        "timm 1.0.31 (eva02_base_patch14_224)",
        "layers/pos_embed_sincos.py::RotaryEmbeddingCat(64, in_pixels=False, ref_feat_shape=(16, 16))",
        "2-D RoPE [sin | cos]: [h | w] bands 1/10000^(k/16) on cell indices, each twice, float32",
        _ROWS,
    ),
    _p(
        "timm-rope-pixel",
        "rope2d",
        {"bands": "pixel", "max_res": 224, "linear_bands": False, "part": "cos", "compute": "float32"},
        {"feat_shape": "14x14", "dim": 64},
        "timm 1.0.31 (RotaryEmbedding defaults)",
        "layers/pos_embed_sincos.py::RotaryEmbedding(64, feat_shape=(14, 14)).get_embed()",
        "2-D RoPE cos (or sin): [h | w] bands π·2^linspace(0, log2 224 − 1, 16) on linspace(−1, 1), "
        "each twice, float32",
        _ROWS,
    ),
]
