"""Presets of rotary caches (RoPE) and their scaling: Llama, GPT-NeoX, Qwen, Phi-3, gpt-oss.

Listed by :mod:`pecli.presets`, which says what a preset is and how exact each kind of preset is.
"""

from __future__ import annotations

from pecli.presets.base import Preset

_R = "rope"
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

PRESETS = [
    Preset(
        name="llama",
        kind=_R,
        params={},
        size={"length": 4096, "dim": 128},
        framework="transformers 5.23 (Llama 2 7B config)",
        source="models/llama/modeling_llama.py::LlamaRotaryEmbedding (rope_type default)",
        summary="cos cache cat(f, f) (rotate_half), f = p/10000^(2i/128), float32; --part sin for the sin cache",
    ),
    Preset(
        name="llama3",
        kind=_R,
        params={**_LLAMA31},
        size={"length": 131072, "dim": 128},
        framework="transformers 5.23 (Llama 3.1 8B config)",
        source="modeling_rope_utils.py::_compute_llama3_parameters",
        summary="θ=500000, llama3 scaling (factor 8, low 1, high 4, original 8192), rotate_half, float32",
    ),
    Preset(
        name="meta-llama",
        kind=_R,
        params={"layout": "pairs"},
        size={"length": 4096, "dim": 128},
        framework="meta-llama/llama (Llama 2 reference code)",
        source="llama/model.py::precompute_freqs_cis",
        summary="complex64 polar(1, p·f): real part = cos, each value on the pair (2i, 2i+1), float32",
        offsets="rows = 2·max_seq_len (2048)",
    ),
    Preset(
        name="meta-llama3",
        kind=_R,
        params={**_LLAMA31, "layout": "pairs"},
        size={"length": 16384, "dim": 128},
        framework="meta-llama/llama-models (Llama 3.1, use_scaled_rope)",
        source="models/llama3/model.py::precompute_freqs_cis + apply_scaling",
        summary="θ=500000, apply_scaling(8, 1, 4, 8192) (== HF llama3), pairs layout, float32",
        offsets="rows = 2·max_seq_len (8192)",
    ),
    Preset(
        name="gpt-neox",
        kind=_R,
        params={},
        size={"length": 2048, "dim": 24},
        framework="transformers 5.23 (GPT-NeoX-20B: head 96, rotary_pct 0.25)",
        source="models/gpt_neox/modeling_gpt_neox.py::GPTNeoXRotaryEmbedding",
        summary="partial rotary: the first 24 of 96 head dims, 1/10000^(2i/24), rotate_half, float32",
    ),
    Preset(
        name="pythia",
        kind=_R,
        params={},
        size={"length": 2048, "dim": 32},
        framework="transformers 5.23 (Pythia-6.9B: head 128, rotary_pct 0.25)",
        source="models/gpt_neox/modeling_gpt_neox.py::GPTNeoXRotaryEmbedding",
        summary="partial rotary: the first 32 of 128 head dims, 1/10000^(2i/32), rotate_half, float32",
    ),
    Preset(
        name="vicuna-16k",
        kind=_R,
        params={"scaling": "linear", "factor": 4.0},
        size={"length": 16384, "dim": 128},
        framework="transformers 5.23 (lmsys/vicuna-7b-v1.5-16k config)",
        source="modeling_rope_utils.py::_compute_linear_scaling_rope_parameters",
        summary="linear (position interpolation) factor 4: inv_freq/4, rotate_half, float32",
    ),
    Preset(
        name="llama2-dynamic",
        kind=_R,
        params={"scaling": "dynamic", "factor": 2.0, "original_max_position_embeddings": 4096},
        size={"length": 8192, "dim": 128},
        framework="transformers 5.23 (Llama 2 7B + rope_scaling dynamic, factor 2)",
        source="modeling_rope_utils.py::_compute_dynamic_ntk_parameters",
        summary="dynamic NTK: base·((f·L/4096) − (f−1))^(d/(d−2)) once L = start + len > 4096, float32",
        offsets="L = start + len (one forward call)",
    ),
    Preset(
        name="qwen3-yarn",
        kind=_R,
        params={"base": 1000000.0, "scaling": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768},
        size={"length": 131072, "dim": 128},
        framework="transformers 5.23 (Qwen3-8B with the model card's YaRN rope_scaling)",
        source="modeling_rope_utils.py::_compute_yarn_parameters",
        summary="θ=1e6, YaRN factor 4 from 32768, ramp β 32/1, cos·(0.1·ln 4 + 1), float32",
    ),
    Preset(
        name="gpt-oss",
        kind=_R,
        params={
            "base": 150000.0,
            "scaling": "yarn",
            "factor": 32.0,
            "original_max_position_embeddings": 4096,
            "beta_fast": 32.0,
            "beta_slow": 1.0,
            "truncate": False,
        },
        size={"length": 131072, "dim": 64},
        framework="transformers 5.23 (openai/gpt-oss-20b config)",
        source="modeling_rope_utils.py::_compute_yarn_parameters",
        summary="θ=150000, YaRN factor 32 from 4096, untruncated ramp, cos·(0.1·ln 32 + 1), float32",
    ),
    Preset(
        name="phi3-vision-128k",
        kind=_R,
        params={
            "scaling": "longrope",
            "factor": 32.0,
            "original_max_position_embeddings": 4096,
            "short_factor": _PHI3_SHORT,
            "long_factor": _PHI3_LONG,
        },
        size={"length": 131072, "dim": 96},
        framework="transformers 5.23 (microsoft/Phi-3-vision-128k-instruct config)",
        source="modeling_rope_utils.py::_compute_longrope_parameters",
        summary="LongRoPE: inv_freq/long_factor once start + len > 4096 (else short_factor), cos·1.190238, float32",
        offsets="factors switch at start + len > 4096",
    ),
    Preset(
        name="vllm-cos-sin",
        kind=_R,
        params={"layout": "once", "part": "cos-sin"},
        size={"length": 4096, "dim": 128},
        framework="vLLM's formula (Llama 2 7B: rotary_dim 128, max_position 4096, base 10000)",
        source="vllm/model_executor/layers/rotary_embedding/base.py::RotaryEmbedding._compute_cos_sin_cache",
        summary="cos_sin_cache = cat(cos f, sin f), f = p/10000^(2i/128) once each, float32 (SGLang's is the same)",
    ),
    Preset(
        name="torchtune-qwen2",
        kind=_R,
        params={"base": 1000000.0, "part": "cos-sin"},
        size={"length": 4096, "dim": 128},
        framework="torchtune 0.6.1 (Qwen2RotaryPositionalEmbeddings(dim=128), max_seq_len 4096)",
        source="torchtune/models/qwen2/_positional_embeddings.py::Qwen2RotaryPositionalEmbeddings.build_rope_cache",
        summary="cache = cat(cos e, sin e), e = cat(f, f) (rotate_half), θ=1e6, float32: 2·dim columns",
    ),
    Preset(
        name="torchtune-llama2",
        kind=_R,
        params={"layout": "once", "part": "cis"},
        size={"length": 4096, "dim": 128},
        framework="torchtune 0.6.1 (RotaryPositionalEmbeddings(dim=128), max_seq_len 4096)",
        source="torchtune/modules/position_embeddings.py::RotaryPositionalEmbeddings.build_rope_cache",
        summary="cache = stack(cos f, sin f) (n, 64, 2) flattened: c0, s0, c1, s1, …, θ=10000, float32",
    ),
    Preset(
        name="torchtune-llama3",
        kind=_R,
        params={
            "base": 500000.0,
            "layout": "once",
            "part": "cis",
            "scaling": "llama3",
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192,
        },
        size={"length": 131072, "dim": 128},
        framework="torchtune 0.6.1 (llama3_1_8b: Llama3ScaledRoPE(dim=128, max_seq_len=131072, base=500000))",
        source="torchtune/models/llama3_1/_position_embeddings.py::Llama3ScaledRoPE.build_rope_cache",
        summary="cache = stack(cos f, sin f) of Llama 3.1's scaled f (n, 64, 2) flattened: c0, s0, …, θ=500000, "
        "float32",
    ),
    Preset(
        name="meta-freqs-cis",
        kind=_R,
        params={"layout": "once", "part": "cis"},
        size={"length": 4096, "dim": 128},
        framework="Meta's llama (precompute_freqs_cis(128, 2·2048)); torchtitan's is the same",
        source="llama/model.py::precompute_freqs_cis",
        summary="torch.view_as_real(freqs_cis): (cos f, sin f) per frequency, θ=10000, complex64 viewed as float32",
    ),
    Preset(
        name="keras-hub-rope",
        kind=_R,
        params={"form": "neg-pow"},
        size={"length": 4096, "dim": 128},
        framework="keras-hub 0.32.0 (RotaryEmbedding() on a (1, 4096, 128) input)",
        source="keras_hub/src/layers/modeling/rotary_embedding.py::RotaryEmbedding._compute_cos_sin_embedding",
        summary="cos of e = [f, f] (rotate_half), f = p·10000^(−2i/128) in one float32 pow, float32; "
        "rope_type linear/yarn as HF's, dynamic: --scaling keras-dynamic",
    ),
    Preset(
        name="lucidrains-xpos",
        kind="xpos",
        params={"scale_base": 512.0},
        size={"length": 4096, "dim": 64},
        framework="rotary-embedding-torch 0.9.1 (RotaryEmbedding(dim, use_xpos=True), xpos_scale_base 512)",
        source="rotary_embedding_torch.py::RotaryEmbedding.get_scale (as rotate_queries_and_keys calls it)",
        summary="xPos query scales ζ_i^((p − len/2)/512), ζ_i = (2i + 0.4d)/(1.4d), pairs, float32 (keys: part=k)",
        offsets="row p = position p of a sequence of len; 1 on row len//2",
    ),
]
