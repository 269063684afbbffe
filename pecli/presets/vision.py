"""Presets of vision transformers' 2-D rotary embeddings (timm's ``build_rotary_pos_embed``).

Listed by :mod:`pecli.presets`, which says what a preset is and how exact each kind of preset is.
timm 1.0.31 ``models/eva.py::eva02_base_patch14_224`` has ``img_size=224``, ``patch_size=14``,
``embed_dim=768``, ``num_heads=12`` and ``ref_feat_shape=(16, 16)``; ``Eva`` builds
``RotaryEmbeddingCat(dim=768 // 12, in_pixels=False, feat_shape=(16, 16), ref_feat_shape=(16, 16))``
(``create_rope_embed(rope_type='cat')``, ``rope_temperature`` 10000): language bands on a
16×16 grid, ``[sin | cos]``.  ``layers/pos_embed_sincos.py::RotaryEmbedding(dim)`` defaults to pixel
bands (``in_pixels=True``, ``max_res=224``, ``linear_bands=False``) and returns ``(sin, cos)``.

rotary-embedding-torch 0.9.1 (lucidrains) ``rotary_embedding_torch.py::RotaryEmbedding(dim=D,
freqs_for='pixel', max_freq=M).get_axial_freqs(*dims)`` returns the angles of the same axial layout
(``D/2`` bands ``π·linspace(1, M/2, D/2)`` per axis on ``linspace(−1, 1, s)``, each twice): rope2d
with ``dim = 2·D``, ``linear_bands``, ``max_res = M`` and ``part='angle'``.  Its README (the wheel's
METADATA, "Axial Rotary Embeddings") shows ``RotaryEmbedding(dim=16, freqs_for='pixel',
max_freq=256).get_axial_freqs(8, 64, 32)``: a video of 8 frames of 64×32 patches, ``(8, 64, 32,
48)``; the preset is that call (``max_freq=256``, the README's, not the constructor's default 10).

transformers 5.23 ``models/pixtral/modeling_pixtral.py::PixtralVisionRotaryEmbedding`` takes
``inv_freq = 1/rope_theta^(arange(0, head_dim, 2)/head_dim)`` and gives the height ``inv_freq[0::2]``,
the width ``inv_freq[1::2]`` (``PixtralVisionConfig``: ``head_dim`` 64, ``image_size`` 1024,
``patch_size`` 16, ``rope_theta`` 10000: a 64×64 grid of patches), ``cat([h | w] twice)``: rope2d's
``axis_bands='alternate'`` with ``layout='half'``.
"""

from __future__ import annotations

from pecli.presets.base import Preset

_ROWS = "rows = grid cells, h-major (grid_indexing='ij')"
_ROWS_3D = "rows = grid cells, t-major (C order of (T, H, W))"

PRESETS = [
    Preset(
        name="eva02",
        kind="rope2d",
        params={"bands": "lang", "base": 10000.0, "ref_feat_shape": "16x16", "part": "cat", "compute": "float32"},
        size={"feat_shape": "16x16", "dim": 64},
        framework="timm 1.0.31 (eva02_base_patch14_224)",
        source="layers/pos_embed_sincos.py::RotaryEmbeddingCat(64, in_pixels=False, ref_feat_shape=(16, 16))",
        summary="2-D RoPE [sin | cos]: [h | w] bands 1/10000^(k/16) on cell indices, each twice, float32",
        offsets=_ROWS,
    ),
    Preset(
        name="timm-rope-pixel",
        kind="rope2d",
        params={"bands": "pixel", "max_res": 224, "linear_bands": False, "part": "cos", "compute": "float32"},
        size={"feat_shape": "14x14", "dim": 64},
        framework="timm 1.0.31 (RotaryEmbedding defaults)",
        source="layers/pos_embed_sincos.py::RotaryEmbedding(64, feat_shape=(14, 14)).get_embed()",
        summary="2-D RoPE cos (or sin): [h | w] bands π·2^linspace(0, log2 224 − 1, 16) on linspace(−1, 1), "
        "each twice, float32",
        offsets=_ROWS,
    ),
    Preset(
        name="pixtral",
        kind="rope2d",
        params={
            "bands": "lang",
            "base": 10000.0,
            "part": "cos",
            "layout": "half",
            "axis_bands": "alternate",
            "compute": "float32",
        },
        size={"feat_shape": "64x64", "dim": 64},
        framework="transformers 5.23 (PixtralVisionConfig defaults: head_dim 64, 1024 px in 16 px patches)",
        source="models/pixtral/modeling_pixtral.py::PixtralVisionRotaryEmbedding",
        summary="2-D RoPE cos (or sin): height takes the even frequencies 1/10000^(2i/64), width the odd, "
        "[h | w] twice (rotate_half), float32",
        offsets=_ROWS,
    ),
    Preset(
        name="lucidrains-axial",
        kind="rope2d",
        params={"bands": "pixel", "max_res": 256, "linear_bands": True, "part": "angle", "compute": "float32"},
        size={"feat_shape": "8x64x32", "dim": 32},
        framework="rotary-embedding-torch 0.9.1 (README's axial example)",
        source="rotary_embedding_torch.py::RotaryEmbedding(16, freqs_for='pixel', max_freq=256).get_axial_freqs(8, "
        "64, 32)",
        summary="axial RoPE angles (take .cos()/.sin() for --part cos/sin): [t | h | w] bands π·linspace(1, 128, 8) "
        "on linspace(−1, 1), each twice, float32",
        offsets=_ROWS_3D,
    ),
]
