"""Presets of learned tables at initialisation: BERT, GPT-2, RoBERTa, BART, ViT.

Listed by :mod:`pecli.presets`, which says what a preset is and how exact each kind of preset is.
"""

from __future__ import annotations

from pecli.presets.base import Preset

_L = "learned"

PRESETS = [
    Preset(
        name="bert",
        kind=_L,
        params={"init": "truncated-normal"},
        size={"length": 512, "dim": 768},
        framework="google-research/bert (BERT-Base)",
        source="modeling.py::embedding_postprocessor (truncated_normal_initializer(0.02))",
        summary="N(0, 0.02²) truncated at ±2σ and redrawn (TF), seeded draw",
    ),
    Preset(
        name="hf-bert",
        kind=_L,
        params={},
        size={"length": 512, "dim": 768},
        framework="transformers 5.23 (bert-base config)",
        source="models/bert/modeling_bert.py::BertPreTrainedModel._init_weights",
        summary="normal_(0, initializer_range=0.02), seeded draw",
    ),
    Preset(
        name="gpt2",
        kind=_L,
        params={},
        size={"length": 1024, "dim": 768},
        framework="transformers 5.23 (gpt2 config)",
        source="models/gpt2/modeling_gpt2.py::GPT2PreTrainedModel._init_weights",
        summary="wpe: normal_(0, 0.02) (OpenAI's TF code used 0.01: --std 0.01), seeded draw",
    ),
    Preset(
        name="roberta",
        kind=_L,
        params={"padding_idx": 1},
        size={"length": 512, "dim": 768},
        framework="transformers 5.23 (roberta-base config)",
        source="models/roberta/modeling_roberta.py::RobertaEmbeddings",
        summary="normal_(0, 0.02) with the padding row zeroed, seeded draw",
        offsets="rows = len + 2; row 1 zero; first token row 2",
    ),
    Preset(
        name="bart",
        kind=_L,
        params={"offset": 2},
        size={"length": 1024, "dim": 768},
        framework="transformers 5.23 (facebook/bart-base config)",
        source="models/bart/modeling_bart.py::BartLearnedPositionalEmbedding",
        summary="normal_(0, 0.02), seeded draw (OPT and BioGPT use the same offset)",
        offsets="rows = len + 2; first token row 2 (rows 0-1 drawn, never used)",
    ),
    Preset(
        name="vit",
        kind=_L,
        params={"offset": 1},
        size={"length": 196, "dim": 768},
        framework="timm 1.0 / transformers 5.23 (ViT-B/16 at 224)",
        source="timm/models/vision_transformer.py::VisionTransformer.init_weights (trunc_normal_(pos_embed, std=.02))",
        summary="trunc_normal_ bounds ±2 absolute = ±100σ: effectively N(0, 0.02²), seeded draw",
        offsets="row 0 = class token, then 14×14 patches",
    ),
]
