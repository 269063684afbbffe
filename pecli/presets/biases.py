"""Presets of ALiBi slopes and biases: ofirpress, Bloom, MPT.

Listed by :mod:`pecli.presets`, which says what a preset is and how exact each kind of preset is.
"""

from __future__ import annotations

from pecli.presets.base import Preset

_p = Preset  # one call per preset, positionally: name, kind, params, size, framework, source, summary
_A = "alibi"

PRESETS = [
    _p(
        "alibi",
        _A,
        {},
        {"heads": 8},
        "ofirpress/attention_with_linear_biases (fairseq transformer_lm_wiki103)",
        "fairseq/models/transformer.py::get_slopes",
        "slopes 2^(−8k/n), Python float64 list cast to float32",
        "one row: a slope per head",
    ),
    _p(
        "bloom-alibi",
        _A,
        {"part": "bias", "form": "pow"},
        {"heads": 112, "length": 2048},
        "transformers 5.23 (BLOOM 176B: 112 heads)",
        "models/bloom/modeling_bloom.py::build_alibi_tensor",
        "bias slope·j, j = 0..len−1, slopes float32(2^(−8/c))^k in float32",
        "rows = heads, columns = key positions",
    ),
    _p(
        "mpt-alibi",
        _A,
        {"part": "bias", "form": "recip", "origin": "last"},
        {"heads": 32, "length": 2048},
        "transformers 5.23 (MPT-7B: 32 heads, alibi_bias_max 8)",
        "models/mpt/modeling_mpt.py::build_mpt_alibi_tensor",
        "bias slope·(j − len + 1) ≤ 0, slopes 1/2^(8k/n2) in float32",
        "rows = heads, columns = key positions",
    ),
]
