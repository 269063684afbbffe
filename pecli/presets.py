"""Named recipes: the tables real frameworks build, as data.

Each preset is a kind plus parameters, the default size of the model it comes from, and where
the table comes from (framework, class or function, version read).  ``--len``/``--dim``/``--grid``
and any other recipe option override a preset's values.  No NumPy here (``--help`` stays fast).

How exact each one is (see docs/presets.md): ``float64`` presets reproduce the framework's
float64 pipeline and match it bit for bit; ``float32`` presets emulate the framework's float32
steps and match it to within its own exp/pow/sin rounding (a few float32 ulps of the angle, so
the difference grows with the position); ``exact`` presets are the mathematically exact table
rounded once (what the paper defines).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from pecli.errors import RecipeError
from pecli.kinds import get_kind, implied_kind
from pecli.kinds.base import Recipe, spell

#: The fairseq family: split [sin|cos], i/(half−1) frequencies, zero column for odd d, float32.
_FAIRSEQ = {"freq": "t2t", "layout": "split", "odd": "zero", "compute": "float32", "form": "exp"}
#: HF's float64 NumPy tables: angle = p / 10000^(2(j//2)/d), cast once to float32.
_XLM = {"freq": "paper", "compute": "float64", "form": "div"}


@dataclass(frozen=True)
class Preset:
    name: str
    kind: str
    params: dict[str, Any]
    #: Default size: the model the preset is named after.
    size: dict[str, Any]
    framework: str
    source: str
    summary: str
    offsets: str = "first position 0"
    aliases: tuple[str, ...] = field(default=())

    def recipe(self, **overrides: Any) -> Recipe:
        """The preset's recipe, with ``overrides`` (e.g. ``length=2048``) applied."""
        cls = get_kind(self.kind)
        known = [f.name for f in fields(cls)]  # type: ignore[arg-type]
        unknown = [n for n in overrides if n not in known]
        if unknown:
            raise RecipeError(
                f"preset {self.name} is a {self.kind} recipe, which has no {', '.join(map(_spell, unknown))}: "
                f"it takes {', '.join(map(_spell, known))}"
            )
        return cls(**{**self.size, **self.params, **overrides})

    @property
    def exactness(self) -> str:
        if self.kind == "learned":
            return "random: the framework's distribution, NumPy's numbers"
        default = {f.name: f.default for f in fields(get_kind(self.kind))}.get("compute", "exact")  # type: ignore[arg-type]
        compute = self.params.get("compute", default)
        if self.kind == "alibi" and compute == "float32":
            return "float32 pipeline: bit-exact (Bloom: 1 ulp where torch's pow is off)"
        return {
            "exact": "exact, rounded once",
            "float64": "float64 pipeline: bit-exact",
            "float32": "float32 pipeline: ≈ ulp(angle)",
        }[compute]


_p = Preset  # one call per preset, positionally: name, kind, params, size, framework, source, summary

_S, _G, _R, _A, _L = "sinusoidal", "sincos2d", "rope", "alibi", "learned"
#: Llama 3.1's rope_scaling (HF config.json; Meta's apply_scaling constants).
_LLAMA31 = {
    "base": 500000.0,
    "scaling": "llama3",
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192,
}
#: microsoft/Phi-3-vision-128k-instruct config.json rope_scaling (type "su" = longrope), 48 = 96/2 factors.
_PHI3_SHORT = (
    "1.05;1.05;1.05;1.1;1.1;1.1;1.2500000000000002;1.2500000000000002;1.4000000000000004;1.4500000000000004;"
    "1.5500000000000005;1.8500000000000008;1.9000000000000008;" + "2.000000000000001;" * 19 + "2.1000000000000005;"
    "2.1000000000000005;2.2;" + "2.3499999999999996;" * 4 + "2.3999999999999995;2.3999999999999995;2.6499999999999986;"
    "2.6999999999999984;2.8999999999999977;2.9499999999999975;3.049999999999997;3.049999999999997;3.049999999999997"
)
_PHI3_LONG = (
    "1.0299999713897705;1.0499999523162842;1.0499999523162842;1.0799999237060547;1.2299998998641968;"
    "1.2299998998641968;1.2999999523162842;1.4499999284744263;1.5999999046325684;1.6499998569488525;"
    "1.8999998569488525;2.859999895095825;3.68999981880188;5.419999599456787;5.489999771118164;5.489999771118164;"
    "9.09000015258789;11.579999923706055;15.65999984741211;15.769999504089355;15.789999961853027;"
    "18.360000610351562;21.989999771118164;23.079999923706055;30.009998321533203;32.35000228881836;"
    "32.590003967285156;35.56000518798828;39.95000457763672;53.840003967285156;56.20000457763672;"
    "57.95000457763672;59.29000473022461;59.77000427246094;59.920005798339844;61.190006256103516;"
    "61.96000671386719;62.50000762939453;63.3700065612793;63.48000717163086;63.48000717163086;63.66000747680664;"
    "63.850006103515625;64.08000946044922;64.760009765625;64.80001068115234;64.81001281738281;64.81001281738281"
)
_HF_ROPE = "models/llama/modeling_llama.py::LlamaRotaryEmbedding + modeling_rope_utils.py"
_PRESETS = [
    _p(
        "vaswani",
        _S,
        {},
        {"length": 512, "dim": 512},
        "Vaswani et al. 2017, §3.5",
        "the paper's formula",
        "sin/cos(p·10000^(−2i/d)) interleaved, exact",
    ),
    _p(
        "pytorch-tutorial",
        _S,
        {"odd": "error", "compute": "float32", "form": "exp"},
        {"length": 5000, "dim": 512},
        "PyTorch examples / Annotated Transformer",
        "word_language_model/model.py::PositionalEncoding",
        "exp(2i·(−ln 10000/d)) interleaved, float32; odd d crashes there, refused here",
    ),
    _p(
        "tensor2tensor",
        _S,
        {**_FAIRSEQ},
        {"length": 512, "dim": 512},
        "tensor2tensor (HEAD bafdc1b)",
        "layers/common_attention.py::get_timing_signal_1d",
        "min·(max/min)^(−i/(half−1)), split [sin|cos], zero column for odd d, float32",
    ),
    _p(
        "fairseq",
        _S,
        {**_FAIRSEQ, "padding_idx": 1},
        {"length": 1024, "dim": 512},
        "fairseq (HEAD 3d262bb)",
        "modules/sinusoidal_positional_embedding.py::SinusoidalPositionalEmbedding",
        "10000^(−i/(half−1)), split, float32; row 1 (padding_idx) zero",
        "rows = len + 2; first token row 2",
    ),
    _p(
        "hf-m2m100",
        _S,
        {**_FAIRSEQ, "padding_idx": 1},
        {"length": 1024, "dim": 1024},
        "transformers 5.23",
        "models/m2m_100/modeling_m2m_100.py::M2M100SinusoidalPositionalEmbedding (also NLLB)",
        "fairseq's table",
        "rows = max_position_embeddings + 2; first token row 2",
    ),
    _p(
        "hf-fsmt",
        _S,
        {**_FAIRSEQ, "padding_idx": 1},
        {"length": 1024, "dim": 1024},
        "transformers 5.23",
        "models/fsmt/modeling_fsmt.py::SinusoidalPositionalEmbedding",
        "fairseq's table",
        "rows = max_position_embeddings + 2; first token row 2",
    ),
    _p(
        "hf-xglm",
        _S,
        {**_FAIRSEQ, "padding_idx": 1},
        {"length": 2048, "dim": 1024},
        "transformers 5.23",
        "models/xglm/modeling_xglm.py::XGLMSinusoidalPositionalEmbedding",
        "fairseq's table",
        "rows = max_position_embeddings + 2; position_ids + 2",
    ),
    _p(
        "hf-speech2text",
        _S,
        {**_FAIRSEQ, "padding_idx": 1},
        {"length": 6000, "dim": 256},
        "transformers 5.23",
        "models/speech_to_text/modeling_speech_to_text.py::Speech2TextSinusoidalPositionalEmbedding",
        "fairseq's table",
        "rows = max_source_positions + 2; first token row 2",
    ),
    _p(
        "whisper",
        _S,
        {**_FAIRSEQ, "odd": "error"},
        {"length": 1500, "dim": 512},
        "openai-whisper / transformers 5.23",
        "whisper/model.py::sinusoids, models/whisper/modeling_whisper.py::sinusoids",
        "10000^(−i/(half−1)), split, float32 (encoder; the decoder's table is learned)",
    ),
    _p(
        "musicgen",
        _S,
        {**_FAIRSEQ, "layout": "cos-first"},
        {"length": 2048, "dim": 1024},
        "transformers 5.23",
        "models/musicgen/modeling_musicgen.py::MusicgenSinusoidalPositionalEmbedding",
        "fairseq's frequencies, [cos|sin] (cos first), float32",
    ),
    _p(
        "hf-marian",
        _S,
        {**_XLM, "layout": "split"},
        {"length": 512, "dim": 512},
        "transformers 5.23",
        "models/marian/modeling_marian.py::MarianSinusoidalPositionalEmbedding.create_weight",
        "p/10000^(2(j//2)/d) in float64, split (sin block ⌈d/2⌉ wide), cast once",
    ),
    _p(
        "hf-pegasus",
        _S,
        {**_XLM, "layout": "split"},
        {"length": 1024, "dim": 1024},
        "transformers 5.23",
        "models/pegasus/modeling_pegasus.py::PegasusSinusoidalPositionalEmbedding.create_weight",
        "Marian's table",
    ),
    _p(
        "hf-roformer",
        _S,
        {**_XLM, "layout": "split"},
        {"length": 1536, "dim": 64},
        "transformers 5.23",
        "models/roformer/modeling_roformer.py::RoFormerSinusoidalPositionalEmbedding",
        "Marian's table per head (applied as interleaved rotary)",
    ),
    _p(
        "hf-xlm",
        _S,
        {**_XLM},
        {"length": 512, "dim": 2048},
        "transformers 5.23",
        "models/xlm/modeling_xlm.py::create_sinusoidal_embeddings",
        "p/10000^(2(j//2)/d) in float64, interleaved, cast once",
    ),
    _p(
        "hf-distilbert",
        _S,
        {**_XLM},
        {"length": 512, "dim": 768},
        "transformers 5.23",
        "models/distilbert/modeling_distilbert.py::_create_sinusoidal_embeddings (sinusoidal_pos_embds=True)",
        "XLM's table",
    ),
    _p(
        "gpt-j",
        _S,
        {"layout": "split", "compute": "float32", "form": "pow"},
        {"length": 2048, "dim": 64},
        "transformers 5.23",
        "models/gptj/modeling_gptj.py::create_sinusoidal_positions",
        "1/10000^(2i/d) (pow), [sin|cos] of rotary_dim columns, float32 (applied interleaved)",
    ),
    _p(
        "positional-encodings-1d",
        _S,
        {"odd": "truncate", "compute": "float32", "form": "pow"},
        {"length": 128, "dim": 64},
        "positional-encodings 6.0",
        "positional_encodings/torch_encodings.py::PositionalEncoding1D",
        "1/10000^(2i/C), C = d rounded up to even, interleaved, truncated to d, float32",
    ),
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
        "llama",
        _R,
        {},
        {"length": 4096, "dim": 128},
        "transformers 5.23 (Llama 2 7B config)",
        "models/llama/modeling_llama.py::LlamaRotaryEmbedding (rope_type default)",
        "cos cache cat(f, f) (rotate_half), f = p/10000^(2i/128), float32; --part sin for the sin cache",
    ),
    _p(
        "llama3",
        _R,
        {**_LLAMA31},
        {"length": 131072, "dim": 128},
        "transformers 5.23 (Llama 3.1 8B config)",
        "modeling_rope_utils.py::_compute_llama3_parameters",
        "θ=500000, llama3 scaling (factor 8, low 1, high 4, original 8192), rotate_half, float32",
    ),
    _p(
        "meta-llama",
        _R,
        {"layout": "pairs"},
        {"length": 4096, "dim": 128},
        "meta-llama/llama (Llama 2 reference code)",
        "llama/model.py::precompute_freqs_cis",
        "complex64 polar(1, p·f): real part = cos, each value on the pair (2i, 2i+1), float32",
        "rows = 2·max_seq_len (2048)",
    ),
    _p(
        "meta-llama3",
        _R,
        {**_LLAMA31, "layout": "pairs"},
        {"length": 16384, "dim": 128},
        "meta-llama/llama-models (Llama 3.1, use_scaled_rope)",
        "models/llama3/model.py::precompute_freqs_cis + apply_scaling",
        "θ=500000, apply_scaling(8, 1, 4, 8192) (== HF llama3), pairs layout, float32",
        "rows = 2·max_seq_len (8192)",
    ),
    _p(
        "gpt-neox",
        _R,
        {},
        {"length": 2048, "dim": 24},
        "transformers 5.23 (GPT-NeoX-20B: head 96, rotary_pct 0.25)",
        "models/gpt_neox/modeling_gpt_neox.py::GPTNeoXRotaryEmbedding",
        "partial rotary: the first 24 of 96 head dims, 1/10000^(2i/24), rotate_half, float32",
    ),
    _p(
        "pythia",
        _R,
        {},
        {"length": 2048, "dim": 32},
        "transformers 5.23 (Pythia-6.9B: head 128, rotary_pct 0.25)",
        "models/gpt_neox/modeling_gpt_neox.py::GPTNeoXRotaryEmbedding",
        "partial rotary: the first 32 of 128 head dims, 1/10000^(2i/32), rotate_half, float32",
    ),
    _p(
        "vicuna-16k",
        _R,
        {"scaling": "linear", "factor": 4.0},
        {"length": 16384, "dim": 128},
        "transformers 5.23 (lmsys/vicuna-7b-v1.5-16k config)",
        "modeling_rope_utils.py::_compute_linear_scaling_rope_parameters",
        "linear (position interpolation) factor 4: inv_freq/4, rotate_half, float32",
    ),
    _p(
        "llama2-dynamic",
        _R,
        {"scaling": "dynamic", "factor": 2.0, "original_max_position_embeddings": 4096},
        {"length": 8192, "dim": 128},
        "transformers 5.23 (Llama 2 7B + rope_scaling dynamic, factor 2)",
        "modeling_rope_utils.py::_compute_dynamic_ntk_parameters",
        "dynamic NTK: base·((f·L/4096) − (f−1))^(d/(d−2)) once L = start + len > 4096, float32",
        "L = start + len (one forward call)",
    ),
    _p(
        "qwen3-yarn",
        _R,
        {"base": 1000000.0, "scaling": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768},
        {"length": 131072, "dim": 128},
        "transformers 5.23 (Qwen3-8B with the model card's YaRN rope_scaling)",
        "modeling_rope_utils.py::_compute_yarn_parameters",
        "θ=1e6, YaRN factor 4 from 32768, ramp β 32/1, cos·(0.1·ln 4 + 1), float32",
    ),
    _p(
        "gpt-oss",
        _R,
        {
            "base": 150000.0,
            "scaling": "yarn",
            "factor": 32.0,
            "original_max_position_embeddings": 4096,
            "beta_fast": 32.0,
            "beta_slow": 1.0,
            "truncate": False,
        },
        {"length": 131072, "dim": 64},
        "transformers 5.23 (openai/gpt-oss-20b config)",
        "modeling_rope_utils.py::_compute_yarn_parameters",
        "θ=150000, YaRN factor 32 from 4096, untruncated ramp, cos·(0.1·ln 32 + 1), float32",
    ),
    _p(
        "phi3-vision-128k",
        _R,
        {
            "scaling": "longrope",
            "factor": 32.0,
            "original_max_position_embeddings": 4096,
            "short_factor": _PHI3_SHORT,
            "long_factor": _PHI3_LONG,
        },
        {"length": 131072, "dim": 96},
        "transformers 5.23 (microsoft/Phi-3-vision-128k-instruct config)",
        "modeling_rope_utils.py::_compute_longrope_parameters",
        "LongRoPE: inv_freq/long_factor once start + len > 4096 (else short_factor), cos·1.190238, float32",
        "factors switch at start + len > 4096",
    ),
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
    _p(
        "bert",
        _L,
        {"init": "truncated-normal"},
        {"length": 512, "dim": 768},
        "google-research/bert (BERT-Base)",
        "modeling.py::embedding_postprocessor (truncated_normal_initializer(0.02))",
        "N(0, 0.02²) truncated at ±2σ and redrawn (TF), seeded NumPy draw",
    ),
    _p(
        "hf-bert",
        _L,
        {},
        {"length": 512, "dim": 768},
        "transformers 5.23 (bert-base config)",
        "models/bert/modeling_bert.py::BertPreTrainedModel._init_weights",
        "normal_(0, initializer_range=0.02), seeded NumPy draw",
    ),
    _p(
        "gpt2",
        _L,
        {},
        {"length": 1024, "dim": 768},
        "transformers 5.23 (gpt2 config)",
        "models/gpt2/modeling_gpt2.py::GPT2PreTrainedModel._init_weights",
        "wpe: normal_(0, 0.02) (OpenAI's TF code used 0.01: --std 0.01), seeded NumPy draw",
    ),
    _p(
        "roberta",
        _L,
        {"padding_idx": 1},
        {"length": 512, "dim": 768},
        "transformers 5.23 (roberta-base config)",
        "models/roberta/modeling_roberta.py::RobertaEmbeddings",
        "normal_(0, 0.02) with the padding row zeroed, seeded NumPy draw",
        "rows = len + 2; row 1 zero; first token row 2",
    ),
    _p(
        "bart",
        _L,
        {"offset": 2},
        {"length": 1024, "dim": 768},
        "transformers 5.23 (facebook/bart-base config)",
        "models/bart/modeling_bart.py::BartLearnedPositionalEmbedding",
        "normal_(0, 0.02), seeded NumPy draw (OPT and BioGPT use the same offset)",
        "rows = len + 2; first token row 2 (rows 0-1 drawn, never used)",
    ),
    _p(
        "vit",
        _L,
        {"offset": 1},
        {"length": 196, "dim": 768},
        "timm 1.0 / transformers 5.23 (ViT-B/16 at 224)",
        "timm/models/vision_transformer.py::VisionTransformer.init_weights (trunc_normal_(pos_embed, std=.02))",
        "trunc_normal_ bounds ±2 absolute = ±100σ: effectively N(0, 0.02²), seeded NumPy draw",
        "row 0 = class token, then 14×14 patches",
    ),
]

PRESETS: dict[str, Preset] = {p.name: p for p in _PRESETS}


def get_preset(name: str) -> Preset:
    try:
        return PRESETS[name]
    except KeyError:
        import difflib

        close = difflib.get_close_matches(name, PRESETS, n=3)
        hint = f"did you mean {' or '.join(close)}?" if close else "see `pecli presets`"
        raise RecipeError(f"unknown preset {name!r}: {hint}") from None


def make_recipe(params: dict[str, Any], preset: str | None = None, kind: str | None = None) -> Recipe:
    """A recipe from parameters, on top of a preset or of a kind's defaults.

    Without a preset or kind, the parameters imply the kind (:func:`implied_kind`).  A parameter
    the kind does not have is an error, not ignored.
    """
    if preset is not None:
        p = get_preset(preset)
        if kind is not None and kind != p.kind:
            raise RecipeError(f"preset {p.name} is a {p.kind} recipe, not {kind}: drop --kind")
        return p.recipe(**params)
    cls = get_kind(kind if kind is not None else implied_kind(params))
    names = [f.name for f in fields(cls)]  # type: ignore[arg-type]
    extra = [n for n in params if n not in names]
    if extra:
        raise RecipeError(
            f"{cls.kind} recipes have no {', '.join(map(_spell, extra))}: they take {', '.join(map(_spell, names))}"
        )
    missing = [n for n in cls.required if params.get(n) is None]
    if missing:
        spelled = " and ".join(map(_spell, missing))
        article = "an" if cls.kind[0] in "aeiou" else "a"
        raise RecipeError(f"{article} {cls.kind} recipe needs {spelled}, e.g. {cls.example}")
    return cls(**params)


def _spell(name: str) -> str:
    """A parameter as users type it: ``length`` → ``len``, ``padding_idx`` → ``padding-idx``."""
    return spell(name)[2:]
