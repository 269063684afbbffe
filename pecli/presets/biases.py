"""Presets of ALiBi slopes and biases: ofirpress, Bloom, MPT.

Listed by :mod:`pecli.presets`, which says what a preset is and how exact each kind of preset is.
"""

from __future__ import annotations

from pecli.presets.base import Preset

_A = "alibi"

PRESETS = [
    Preset(
        name="alibi",
        kind=_A,
        params={},
        size={"heads": 8},
        framework="ofirpress/attention_with_linear_biases (fairseq transformer_lm_wiki103)",
        source="fairseq/models/transformer.py::get_slopes",
        summary="slopes 2^(−8k/n), Python float64 list cast to float32",
        offsets="one row: a slope per head",
    ),
    Preset(
        name="bloom-alibi",
        kind=_A,
        params={"part": "bias", "form": "pow"},
        size={"heads": 112, "length": 2048},
        framework="transformers 5.23 (BLOOM 176B: 112 heads)",
        source="models/bloom/modeling_bloom.py::build_alibi_tensor",
        summary="bias slope·j, j = 0..len−1, slopes float32(2^(−8/c))^k in float32",
        offsets="rows = heads, columns = key positions",
    ),
    Preset(
        name="mpt-alibi",
        kind=_A,
        params={"part": "bias", "form": "recip", "origin": "last"},
        size={"heads": 32, "length": 2048},
        framework="transformers 5.23 (MPT-7B: 32 heads, alibi_bias_max 8)",
        source="models/mpt/modeling_mpt.py::build_mpt_alibi_tensor",
        summary="bias slope·(j − len + 1) ≤ 0, slopes 1/2^(8k/n2) in float32",
        offsets="rows = heads, columns = key positions",
    ),
]
