"""Named recipes: the tables real frameworks build, as data.

Each preset is a kind plus parameters, the default size of the model it comes from, and where
the table comes from (framework, class or function, version read).  ``--len``/``--dim``/``--grid``
and any other recipe option override a preset's values.  No NumPy here (``--help`` stays fast).

How exact each one is (see README "Presets"): ``float64`` presets reproduce the framework's
float64 pipeline and match it bit for bit; ``float32`` presets emulate the framework's float32
steps and match it to within its own exp/pow/sin rounding (a few float32 ulps of the angle, so
the difference grows with the position); ``exact`` presets are the mathematically exact table
rounded once (what the paper defines).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from pecli.errors import RecipeError
from pecli.recipe import KINDS, Recipe

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
        cls = KINDS[self.kind]
        known = [f.name for f in fields(cls)]
        unknown = [n for n in overrides if n not in known]
        if unknown:
            raise RecipeError(
                f"preset {self.name} is a {self.kind} recipe, which has no {', '.join(map(_spell, unknown))}: "
                f"it takes {', '.join(map(_spell, known))}"
            )
        return cls(**{**self.size, **self.params, **overrides})

    @property
    def exactness(self) -> str:
        compute = self.params.get("compute", "exact")
        return {
            "exact": "exact, rounded once",
            "float64": "float64 pipeline: bit-exact",
            "float32": "float32 pipeline: ≈ ulp(angle)",
        }[compute]


def _p(
    name: str,
    kind: str,
    params: dict[str, Any],
    size: dict[str, Any],
    framework: str,
    source: str,
    summary: str,
    offsets: str = "first position 0",
) -> Preset:
    return Preset(name, kind, params, size, framework, source, summary, offsets)


_S, _G = "sinusoidal", "sincos2d"
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


#: Parameters only grid recipes have: giving one implies ``kind="sincos2d"``.
_GRID_ONLY = frozenset({"grid", "order", "cls"})
#: What each kind cannot be built without.
REQUIRED = {"sinusoidal": ("length", "dim"), "sincos2d": ("grid", "dim")}


def make_recipe(params: dict[str, Any], preset: str | None = None, kind: str | None = None) -> Recipe:
    """A recipe from parameters, on top of a preset or of a kind's defaults.

    Without a preset or kind, grid parameters (``grid``, ``order``, ``cls``) mean ``sincos2d``,
    anything else ``sinusoidal``.  A parameter the kind does not have is an error, not ignored.
    """
    if preset is not None:
        p = get_preset(preset)
        if kind is not None and kind != p.kind:
            raise RecipeError(f"preset {p.name} is a {p.kind} recipe, not {kind}: drop --kind")
        return p.recipe(**params)
    if kind is None:
        kind = "sincos2d" if _GRID_ONLY & params.keys() else "sinusoidal"
    if kind not in KINDS:
        raise RecipeError(f"unknown kind {kind!r}: choose one of {', '.join(KINDS)}")
    cls = KINDS[kind]
    names = [f.name for f in fields(cls)]
    extra = [n for n in params if n not in names]
    if extra:
        raise RecipeError(
            f"{kind} recipes have no {', '.join(map(_spell, extra))}: they take {', '.join(map(_spell, names))}"
        )
    missing = [n for n in REQUIRED[kind] if params.get(n) is None]
    if missing:
        spelled = " and ".join(map(_spell, missing))
        raise RecipeError(f"a {kind} recipe needs {spelled}, e.g. {_EXAMPLE[kind]}")
    return cls(**params)


_EXAMPLE = {"sinusoidal": "--len 120 --dim 8", "sincos2d": "--grid 14x14 --dim 768"}


def _spell(name: str) -> str:
    """A parameter as users type it: ``length`` → ``len``, ``padding_idx`` → ``padding-idx``."""
    return "len" if name == "length" else name.replace("_", "-")
