"""Presets of learned tables at initialisation: BERT, GPT-2, RoBERTa, BART, ViT.

Listed by :mod:`pecli.presets`, which says what a preset is and how exact each kind of preset is.
"""

from __future__ import annotations

from pecli.presets.base import Preset

_p = Preset  # one call per preset, positionally: name, kind, params, size, framework, source, summary
_L = "learned"

PRESETS = [
    _p(
        "bert",
        _L,
        {"init": "truncated-normal"},
        {"length": 512, "dim": 768},
        "google-research/bert (BERT-Base)",
        "modeling.py::embedding_postprocessor (truncated_normal_initializer(0.02))",
        "N(0, 0.02²) truncated at ±2σ and redrawn (TF), seeded draw",
    ),
    _p(
        "hf-bert",
        _L,
        {},
        {"length": 512, "dim": 768},
        "transformers 5.23 (bert-base config)",
        "models/bert/modeling_bert.py::BertPreTrainedModel._init_weights",
        "normal_(0, initializer_range=0.02), seeded draw",
    ),
    _p(
        "gpt2",
        _L,
        {},
        {"length": 1024, "dim": 768},
        "transformers 5.23 (gpt2 config)",
        "models/gpt2/modeling_gpt2.py::GPT2PreTrainedModel._init_weights",
        "wpe: normal_(0, 0.02) (OpenAI's TF code used 0.01: --std 0.01), seeded draw",
    ),
    _p(
        "roberta",
        _L,
        {"padding_idx": 1},
        {"length": 512, "dim": 768},
        "transformers 5.23 (roberta-base config)",
        "models/roberta/modeling_roberta.py::RobertaEmbeddings",
        "normal_(0, 0.02) with the padding row zeroed, seeded draw",
        "rows = len + 2; row 1 zero; first token row 2",
    ),
    _p(
        "bart",
        _L,
        {"offset": 2},
        {"length": 1024, "dim": 768},
        "transformers 5.23 (facebook/bart-base config)",
        "models/bart/modeling_bart.py::BartLearnedPositionalEmbedding",
        "normal_(0, 0.02), seeded draw (OPT and BioGPT use the same offset)",
        "rows = len + 2; first token row 2 (rows 0-1 drawn, never used)",
    ),
    _p(
        "vit",
        _L,
        {"offset": 1},
        {"length": 196, "dim": 768},
        "timm 1.0 / transformers 5.23 (ViT-B/16 at 224)",
        "timm/models/vision_transformer.py::VisionTransformer.init_weights (trunc_normal_(pos_embed, std=.02))",
        "trunc_normal_ bounds ±2 absolute = ±100σ: effectively N(0, 0.02²), seeded draw",
        "row 0 = class token, then 14×14 patches",
    ),
]
