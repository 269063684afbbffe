"""A model's own ``config.json`` as a recipe: the cos/sin cache transformers would build, without torch.

Hugging Face ``config.json`` files say a model's positions in several dialects: transformers 5's
``rope_parameters`` (``rope_type``, ``rope_theta``, the scaling's keys), 4.x's ``rope_scaling``
(with ``type`` or ``rope_type``) next to a top-level ``rope_theta``, GPT-NeoX's ``rotary_pct``
and ``rotary_emb_base``, ``partial_rotary_factor``, ``head_dim`` or ``hidden_size /
num_attention_heads``, and ``original_max_position_embeddings`` either inside the scaling or
beside it (Phi-3).  :func:`recipe_from_config` reads them the way transformers 5.23's
``RotaryEmbeddingConfigMixin.standardize_rope_params`` and ``modeling_rope_utils.py``'s
``_compute_*_parameters`` do, into a ``rope`` recipe (rotate-half layout, HF's float32 pipeline)
of ``max_position_embeddings`` positions.  Models with a fixed sinusoidal table (M2M100, Marian,
Pegasus, XGLM, Speech2Text, FSMT, Whisper's encoder) give their preset's recipe at the config's size.

What a config leaves out, transformers fills from the model class's own defaults, which differ
from model to model (Gemma's ``head_dim`` is 256, not ``hidden_size / heads``; Phi's rotary
fraction 0.5, GPT-NeoX's 0.25).  pecli knows those of the model types in :data:`DEFAULTS`
(checked against each class in the conformance tests).  For any other model type, where
transformers is installed, its own config class completes the config (offline, without torch:
DeepSeek-V3's ``qk_rope_head_dim``, Gemma 3's per-layer-type RoPE from ``rope_local_base_freq``);
without it, pecli refuses to guess and the error names the key to add.  A model whose layer
types rotate differently (Gemma 3's sliding and full attention) is read one layer type at a
time: ``config.json:full_attention``.  A key pecli does not know inside the RoPE settings, or two
keys that say different things, is refused with its name.
"""

from __future__ import annotations

import re
import stat
from pathlib import Path
from typing import Any, cast

from pecli.errors import PecliInputError, RecipeError
from pecli.kernels.rope_scaling import SCALINGS, scaling_named
from pecli.recipe import Recipe

#: What transformers 5.23's config classes use when ``config.json`` leaves a key out, per
#: ``model_type``: ``head_dim`` (None: ``hidden_size // num_attention_heads``), ``rope_theta``
#: and ``partial_rotary_factor``.
DEFAULTS: dict[str, dict[str, Any]] = {
    model_type: {"head_dim": head_dim, "rope_theta": theta, "partial_rotary_factor": partial}
    for model_type, head_dim, theta, partial in (
        ("llama", None, 10000.0, 1.0),
        ("mistral", None, 10000.0, 1.0),
        ("mixtral", None, 1e6, 1.0),
        ("qwen2", None, 10000.0, 1.0),
        ("qwen2_moe", None, 10000.0, 1.0),
        ("qwen3", 128, 10000.0, 1.0),
        ("gemma", 256, 10000.0, 1.0),
        ("phi3", None, 10000.0, 1.0),
        ("phi", None, 10000.0, 0.5),
        ("gpt_neox", None, 10000.0, 0.25),
        ("stablelm", None, 10000.0, 0.25),
        ("olmo", None, 10000.0, 1.0),
        ("olmo2", None, 10000.0, 1.0),
        ("starcoder2", None, 10000.0, 1.0),
        ("granite", None, 10000.0, 1.0),
        ("cohere", None, 500000.0, 1.0),
        ("falcon", None, 10000.0, 1.0),
        ("qwen2_vl", None, 1e6, 1.0),
        ("qwen2_5_vl", None, 1e6, 1.0),
        ("qwen3_vl", 128, 500000.0, 1.0),
        ("qwen3_vl_moe", 128, 500000.0, 1.0),
    )
}
#: Models whose rotary class is multimodal (M-RoPE) and its sections when the config gives none
#: (``Qwen2VLRotaryEmbedding``: ``rope_parameters.get("mrope_section", [16, 24, 24])``).
MROPE_MODELS = {
    "qwen2_vl": [16, 24, 24],
    "qwen2_5_vl": [16, 24, 24],
    "qwen3_vl": [24, 20, 20],
    "qwen3_vl_moe": [24, 20, 20],
}
#: Those whose rotary class interleaves the sections (``Qwen3VLTextRotaryEmbedding.recomposition_frequencies``:
#: always, whatever the config's ``mrope_interleaved`` says).
MROPE_INTERLEAVED = frozenset({"qwen3_vl", "qwen3_vl_moe"})

#: Keys a flat ``rope_parameters``/``rope_scaling`` dict may hold (transformers' ``RopeParameters``).
_ROPE_KEYS = frozenset(
    {
        "rope_type",
        "type",
        "rope_theta",
        "partial_rotary_factor",
        "factor",
        "original_max_position_embeddings",
        "attention_factor",
        "beta_fast",
        "beta_slow",
        "short_factor",
        "long_factor",
        "low_freq_factor",
        "high_freq_factor",
        "mscale",
        "mscale_all_dim",
        "truncate",
        "mrope_section",
        "mrope_interleaved",
    }
)
#: Models whose table is a fixed sinusoid: model_type → (preset, width key, positions key).
SINUSOIDAL_MODELS: dict[str, tuple[str, str, str]] = {
    "m2m_100": ("hf-m2m100", "d_model", "max_position_embeddings"),
    "fsmt": ("hf-fsmt", "d_model", "max_position_embeddings"),
    "xglm": ("hf-xglm", "d_model", "max_position_embeddings"),
    "speech_to_text": ("hf-speech2text", "d_model", "max_source_positions"),
    "marian": ("hf-marian", "d_model", "max_position_embeddings"),
    "pegasus": ("hf-pegasus", "d_model", "max_position_embeddings"),
    "whisper": ("whisper", "d_model", "max_source_positions"),
}


#: The largest config.json read (the largest on the Hub are a few hundred kB).
MAX_CONFIG_BYTES = 16 << 20


def read_config(path: str | Path) -> dict[str, Any]:
    """``config.json`` as a dict, or a one-line error."""
    from pecli.jsontext import load_json

    p = Path(path)
    if p.is_dir():
        p = p / "config.json"  # a model directory, as from_pretrained takes it
    if p.suffix.lower() == ".gguf" and p.is_file():  # llama.cpp's file: its settings, in config.json's keys
        from pecli.formats.gguf import hf_config

        return hf_config(p)
    try:
        st = p.stat()
        if not stat.S_ISREG(st.st_mode):  # a FIFO would block for ever, /dev/zero never end
            raise PecliInputError(f"--hf-config {path}: {p} is not a regular file: give a model's config.json")
        if st.st_size > MAX_CONFIG_BYTES:
            raise PecliInputError(
                f"--hf-config {path}: {p} is {st.st_size} bytes, more than a config.json's "
                f"{MAX_CONFIG_BYTES >> 20} MB at most: give a model's config.json"
            )
        with open(p, "rb") as fp:  # and read no more than that, whatever the size said
            doc = load_json(fp.read(MAX_CONFIG_BYTES + 1).decode("utf-8"))
    except FileNotFoundError:
        raise PecliInputError(f"--hf-config {path}: {p} does not exist: give a model's config.json") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise PecliInputError(f"--hf-config {path}: {p} is not readable JSON ({exc})") from exc
    if not isinstance(doc, dict):
        raise PecliInputError(f"--hf-config {path}: {p} is not a JSON object, as a transformers config.json is")
    return doc


def recipe_from_config(
    config: dict[str, Any] | str | Path, where: str | None = None, layer_type: str | None = None
) -> Recipe:
    """The recipe of the table a transformers model's config describes (see the module
    docstring): ``config`` is the parsed dict, or the path of a ``config.json`` or of the model's
    directory (read with :func:`read_config`), which may end in ``:LAYER_TYPE``.  ``layer_type``
    picks one layer type's RoPE where they differ (Gemma 3: ``full_attention``,
    ``sliding_attention``).  ``where`` names it in errors."""
    if not isinstance(config, dict):
        where = where or str(config)
        path, layer = _layer_of(str(config))
        layer_type = layer_type or layer
        config = read_config(path)
    where = where or "config.json"
    model_type = config.get("model_type")
    if model_type is not None and not isinstance(model_type, str):
        raise PecliInputError(f'{where}: model_type must be text such as "llama", got {model_type!r}')
    if isinstance(config.get("text_config"), dict):  # a multimodal model: its language model's keys
        config = {**config, **config["text_config"], "model_type": model_type}
    if model_type in SINUSOIDAL_MODELS:
        return _sinusoidal(config, str(model_type), where)
    config = _completed(config, where) or config
    config = _one_layer_type(config, where, layer_type)
    rope_keys = ("rope_theta", "rotary_emb_base", "rotary_pct")
    if model_type not in DEFAULTS and not _rope_dict(config, where) and not any(k in config for k in rope_keys):
        from pecli.presets import PRESETS

        # A model whose positions are a formula of another kind (Bloom's and MPT's ALiBi): name its preset.
        own = [
            p for p in PRESETS.values() if f"models/{model_type}/" in p.source and getattr(p.recipe(), "formula", True)
        ]
        if own:
            raise PecliInputError(
                f"{where} (model_type {model_type!r}) has no rotary positions: its positions are "
                + " or ".join(f"--preset {p.name} ({p.kind})" for p in own)
                + f", e.g. pecli generate --preset {own[0].name}"
            )
        raise PecliInputError(
            f"{where} (model_type {model_type!r}) has no RoPE settings (rope_parameters, rope_scaling, rope_theta) "
            "and is no model pecli knows: if its positions are rotary, add rope_theta; if they are learned "
            "weights, read them from the checkpoint (pecli inspect model.safetensors)"
        )
    return _rope(config, model_type, where)


#: A recipe parameter and the config.json key a value of it came from (the others have one name).
CONFIG_KEY = {
    "base": "rope_theta",
    "length": "max_position_embeddings",
    "dim": "the rotary dim (head_dim × partial_rotary_factor)",
}


def in_config_words(exc: RecipeError) -> str:
    """A recipe's refusal of a value read from a config said in the config's words: the key it
    came from, not the recipe parameter, and no command-line option as the fix."""
    text = str(exc)
    name, _, rest = text.partition(" ")
    if name not in CONFIG_KEY and not name.replace("_", "").isalpha():
        return text
    said, _, hint = rest.rpartition(": ")
    # "…, got 0: RoPE's theta, e.g. --base 10000" (base=10000 from Python): the fix names no config key
    rest = said if said and re.search(r"--[a-z]|\b[a-z_]+=", hint) else rest
    return f"{CONFIG_KEY.get(name, name)} {rest}"


def _layer_of(spec: str) -> tuple[str, str | None]:
    """``DIR/config.json:full_attention`` → the path and the layer type (none where the whole
    text names a file or directory)."""
    head, sep, tail = spec.rpartition(":")
    if not sep or Path(spec).exists() or not head or not Path(head).exists() or "/" in tail:
        return spec, None
    return head, tail


def _completed(config: dict[str, Any], where: str) -> dict[str, Any] | None:
    """The RoPE settings transformers' own config class for ``model_type`` derives (defaults filled,
    old keys standardized into ``rope_parameters``), for model types pecli has no defaults of;
    None where transformers is not installed or does not know the model type.  Read offline
    (``from_dict`` of the parsed file), without torch."""
    import importlib.util
    from logging import ERROR

    model_type = config.get("model_type")
    if not isinstance(model_type, str) or model_type in DEFAULTS or model_type in MROPE_MODELS:
        return None
    if importlib.util.find_spec("transformers") is None:
        return None
    try:
        from transformers import CONFIG_MAPPING
        from transformers.utils import logging

        cls = CONFIG_MAPPING[model_type]
    except Exception:  # a model type this transformers does not know (KeyError), or a broken install
        return None
    verbosity = logging.get_verbosity()
    logging.set_verbosity(ERROR)  # its notes about unused keys are not ours to print
    try:
        text = cls.from_dict(dict(config)).get_text_config()
    except Exception as exc:
        line = (str(exc).strip() or type(exc).__name__).splitlines()[0]
        raise PecliInputError(f"{where}: transformers' {cls.__name__} cannot read it ({line})") from None
    finally:
        logging.set_verbosity(verbosity)
    fields = text.to_dict()

    def attr(name: str) -> Any:
        try:
            return getattr(text, name, None)
        except Exception:  # a config whose layers differ (Gemma 4's per_layer_config) refuses the attribute
            return fields.get(name)

    rope = attr("rope_parameters")
    heads, hidden = attr("num_attention_heads"), attr("hidden_size")
    head_dim = attr("head_dim") or (hidden // heads if hidden and heads else None)
    if not isinstance(rope, dict) or not head_dim:
        return None  # no RoPE settings (a Mamba, a BERT): the own reader says what is missing
    # The rotary classes take ``head_dim`` or ``hidden_size // num_attention_heads``, and the
    # rotary fraction from the settings (1 when absent): ``modeling_rope_utils.py``.
    if rope and all(isinstance(v, dict) for v in rope.values()):  # per layer type
        settings: dict[str, Any] = {k: {"partial_rotary_factor": 1.0, **v} for k, v in rope.items()}
    else:
        settings = {"partial_rotary_factor": 1.0, **rope}
    completed = {
        "model_type": model_type,
        "max_position_embeddings": attr("max_position_embeddings"),
        "head_dim": head_dim,
        "rope_parameters": settings,
    }
    # A layer type's own head_dim (Gemma 4's full-attention layers: per_layer_config, by layer index).
    if fields.get("per_layer_config"):
        completed.update(per_layer_config=fields["per_layer_config"], layer_types=fields.get("layer_types"))
    return completed


def _one_layer_type(config: dict[str, Any], where: str, layer_type: str | None) -> dict[str, Any]:
    """``config`` with the RoPE settings of ``layer_type`` where they are given per layer type."""
    rope = _rope_dict(config, where)
    local = config.get("rope_local_base_freq")
    if local is not None and not (rope and all(isinstance(v, dict) for v in rope.values())):
        # Gemma 3's 4.x keys (as Gemma3TextConfig reads them): local layers rotate at θ_local, unscaled.
        sliding = {"rope_type": "default", "rope_theta": local}
        rope = {"sliding_attention": sliding, "full_attention": {**rope, "rope_theta": config.get("rope_theta")}}
        config = {**config, "rope_theta": None}
    # One dict per layer type, and nothing else (a malformed value that is a dict is not a layer type).
    nested = list(rope) if rope and all(isinstance(v, dict) for v in rope.values()) else []
    if nested and layer_type is None:
        raise PecliInputError(
            f"{where} gives RoPE per layer type ({', '.join(nested)}): name the one to build, e.g. {where}:{nested[0]}"
        )
    if nested and layer_type not in nested:
        raise PecliInputError(f"{where} has no layer type {layer_type!r}: its layer types are {', '.join(nested)}")
    if layer_type is not None and not nested:
        raise PecliInputError(f"{where} gives one RoPE for every layer: drop ':{layer_type}'")
    if not nested:
        return config
    chosen = {k: v for k, v in rope[str(layer_type)].items() if v is not None}
    own = _layer_head_dim(config, str(layer_type), where)
    return {**config, "rope_parameters": chosen, "rope_scaling": None, **({"head_dim": own} if own else {})}


def _layer_head_dim(config: dict[str, Any], layer_type: str, where: str) -> int | None:
    """A layer type's own ``head_dim`` where it has one: transformers' ``per_layer_config``
    (``{"5": {"head_dim": 512}}``, by layer index, ``layer_types`` naming each layer's type), or
    Gemma 4's ``global_head_dim`` for its ``full_attention`` layers; None: the config's ``head_dim``."""
    per_layer, types = config.get("per_layer_config"), config.get("layer_types")
    if isinstance(per_layer, dict) and isinstance(types, list):
        dims = {
            v.get("head_dim")
            for k, v in per_layer.items()
            if isinstance(v, dict) and str(k).isdigit() and int(k) < len(types) and types[int(k)] == layer_type
        } - {None}
        if len(dims) > 1:
            raise PecliInputError(
                f"{where}: the {layer_type} layers have different head_dim in per_layer_config "
                f"({', '.join(map(str, sorted(dims, key=str)))}): pecli builds one cache per layer type"
            )
        if dims:
            return cast(int, dims.pop())
    if layer_type == "full_attention" and config.get("global_head_dim") is not None:
        return cast(int, config["global_head_dim"])
    return None


def _rope_dict(config: dict[str, Any], where: str) -> dict[str, Any]:
    """The RoPE dict: ``rope_parameters`` (5.x), else ``rope_scaling`` (4.x); both must agree."""
    params, scaling = config.get("rope_parameters"), config.get("rope_scaling")
    for name, value in (("rope_parameters", params), ("rope_scaling", scaling)):
        if value is not None and not isinstance(value, dict):
            raise PecliInputError(f"{where}: {name} is {type(value).__name__}, not an object of RoPE settings")
    if params and scaling:
        for key in params.keys() & scaling.keys():
            if params[key] != scaling[key]:
                raise PecliInputError(
                    f"{where}: {key} is {params[key]!r} in rope_parameters but {scaling[key]!r} in rope_scaling: "
                    "keep one"
                )
    return dict(params or scaling or {})


def _agree(where: str, key: str, *values: tuple[str, Any]) -> Any:
    """The one value several spellings of ``key`` give (None if none does); different ones are refused."""
    given = [(name, v) for name, v in values if v is not None]
    for name, v in given[1:]:
        if v != given[0][1]:
            raise PecliInputError(
                f"{where}: {given[0][0]} is {given[0][1]!r} but {name} is {v!r}: they say the same thing ({key}); "
                "keep one"
            )
    return given[0][1] if given else None


def _default(key: str, where: str, model_type: Any) -> Any:
    """What transformers' config class for ``model_type`` puts for a key the config leaves out."""
    import importlib.util

    if model_type in DEFAULTS:
        return DEFAULTS[str(model_type)][key]
    # Where transformers is installed, it completed the config if it knows the model type (_completed).
    hint = (
        ""
        if importlib.util.find_spec("transformers")
        else " (or pip install transformers: its config class fills it in)"
    )
    raise PecliInputError(
        f"{where} has no {key}, and transformers would take the default of model_type {model_type!r}, which pecli "
        f'does not know: add "{key}" to the config{hint}'
    )


def _rope(config: dict[str, Any], model_type: Any, where: str) -> Recipe:
    from pecli.kinds.rope import Rope

    rope = _rope_dict(config, where)
    unknown = sorted(set(rope) - _ROPE_KEYS)
    if unknown:
        raise PecliInputError(
            f"{where}: unknown RoPE key {unknown[0]!r} (transformers 5.23 knows {', '.join(sorted(_ROPE_KEYS))})"
        )
    for key in ("rope_type", "type"):
        if rope.get(key) is not None and not isinstance(rope[key], str):
            raise PecliInputError(f'{where}: {key} must be text such as "linear" or "yarn", got {rope[key]!r}')
    rope_type = (
        _agree(where, "rope type", ("rope_type", rope.get("rope_type")), ("type", rope.get("type"))) or "default"
    )
    scaling = scaling_named(rope_type)
    if scaling is None or not scaling.in_transformers:
        known = ", ".join(t.name for t in SCALINGS.values() if t.in_transformers)
        raise PecliInputError(f"{where}: rope_type {rope_type!r} is not one pecli builds: it builds {known}")
    rope_type = scaling.name
    theta = _agree(
        where,
        "rope_theta",
        ("rope_parameters.rope_theta", rope.get("rope_theta")),
        ("rope_theta", config.get("rope_theta")),
        ("rotary_emb_base", config.get("rotary_emb_base")),
    )
    if theta is None:
        theta = _default("rope_theta", where, model_type)
    partial = _agree(
        where,
        "partial_rotary_factor",
        ("rope_parameters.partial_rotary_factor", rope.get("partial_rotary_factor")),
        ("partial_rotary_factor", config.get("partial_rotary_factor")),
        ("rotary_pct", config.get("rotary_pct")),
    )
    if partial is None:
        partial = _default("partial_rotary_factor", where, model_type)
    heads, hidden = config.get("num_attention_heads"), config.get("hidden_size")
    head_dim = config.get("head_dim")
    if head_dim is None:
        head_dim = _default("head_dim", where, model_type)
    if head_dim is None:  # the class derives it
        for key, value in (("hidden_size", hidden), ("num_attention_heads", heads)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
                raise PecliInputError(f"{where}: {key} must be a whole number > 0, got {value!r:.60}")
        if not isinstance(heads, int) or not isinstance(hidden, int):
            raise PecliInputError(f"{where} has no head_dim, nor hidden_size and num_attention_heads to derive it")
        head_dim = hidden // heads
    if not isinstance(head_dim, int) or isinstance(head_dim, bool) or head_dim <= 0:
        raise PecliInputError(f"{where}: head_dim must be a whole number > 0, got {head_dim!r}")
    try:
        # A scaling that reads the share itself (proportional, Gemma 4) keeps the head's width and
        # zeroes the frequencies past it; elsewhere the share narrows the rotary dim.
        dim = head_dim if "partial_rotary_factor" in scaling.reads else int(head_dim * float(partial))
        float(partial)
    except (TypeError, ValueError):
        raise PecliInputError(f"{where}: partial_rotary_factor must be a number, got {partial!r}") from None
    max_pos = config.get("max_position_embeddings")
    if not isinstance(max_pos, int) or isinstance(max_pos, bool) or max_pos <= 0:
        raise PecliInputError(f"{where}: max_position_embeddings must be a whole number > 0, got {max_pos!r}")
    if "mrope_section" in rope or model_type in MROPE_MODELS:
        return _mrope(config, rope, rope_type, dim, theta, max_pos, where)
    if dim % 2:  # HF's inv_freq then has (dim + 1)/2 frequencies, a table no rotate_half can apply
        raise PecliInputError(
            f"{where}: rotary dim {dim} is odd (head_dim {head_dim} × partial_rotary_factor {partial}), which HF's "
            "rotary classes cannot apply: check head_dim and partial_rotary_factor"
        )
    params: dict[str, Any] = {"length": max_pos, "dim": dim, "base": theta, "scaling": rope_type}
    if "partial_rotary_factor" in scaling.reads:
        params["partial_rotary_factor"] = float(partial)
    for key in scaling.reads:
        if rope.get(key) is not None:
            params[key] = rope[key]
    ignored = sorted(
        k
        for k in rope
        if k not in scaling.reads and k not in ("rope_type", "type", "rope_theta", "partial_rotary_factor")
    )
    if ignored and rope_type != "default":
        raise PecliInputError(f"{where}: rope_type {rope_type} does not use {ignored[0]!r}: drop it, or fix rope_type")
    if scaling.original_from_config:
        # standardize_rope_params: a top-level original_max_position_embeddings (Phi-3) wins.
        params["original_max_position_embeddings"] = config.get(
            "original_max_position_embeddings", rope.get("original_max_position_embeddings", max_pos)
        )
    if scaling.factor_from_lengths and params.get("factor") is None:
        original = params["original_max_position_embeddings"]
        if not isinstance(original, int) or isinstance(original, bool) or original < 1:
            raise PecliInputError(
                f"{where}: original_max_position_embeddings must be a whole number ≥ 1 (the length the model was "
                f"trained on, e.g. 4096), got {original!r}"
            )
        params["factor"] = max_pos / original  # as _compute_*_parameters do
    if scaling.original_is_max_position:
        params["original_max_position_embeddings"] = max_pos  # HF's dynamic NTK rescales past it
    for key in ("short_factor", "long_factor"):
        if isinstance(params.get(key), list):
            if not all(isinstance(x, int | float) and not isinstance(x, bool) for x in params[key]):
                bad = next(x for x in params[key] if not isinstance(x, int | float) or isinstance(x, bool))
                raise PecliInputError(f"{where}: {key} must be a list of numbers, got {bad!r:.40} in it")
            params[key] = ";".join(repr(float(x)) for x in params[key])
    try:
        recipe = Rope(**params)
    except RecipeError as exc:
        raise PecliInputError(f"{where}: {in_config_words(exc)}") from None
    # A width read from a file is bounded before any row is built, and named by its keys, not --dim.
    recipe.ensure_rows_fit(1, f"check {where}: its head_dim {head_dim} × partial_rotary_factor {partial} is that width")
    return recipe


def _mrope(
    config: dict[str, Any], rope: dict[str, Any], rope_type: str, dim: int, theta: Any, max_pos: int, where: str
) -> Recipe:
    """Qwen2-VL / Qwen2.5-VL: the multimodal rope, its sequence text-only (``max_position_embeddings``
    tokens, the plain rope table) until ``--sequence`` names the images and videos."""
    from pecli.kinds.mrope import Mrope

    if rope_type != "default":
        raise PecliInputError(f"{where}: mrope_section with rope_type {rope_type!r}: transformers scales no M-RoPE")
    section = rope.get("mrope_section", MROPE_MODELS.get(str(config.get("model_type")), [16, 24, 24]))
    if not isinstance(section, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in section):
        raise PecliInputError(f"{where}: mrope_section must be a list of whole numbers, got {section!r}")
    vision: dict[str, Any] = config["vision_config"] if isinstance(config.get("vision_config"), dict) else {}
    tokens_per_second = vision.get("tokens_per_second") if config.get("model_type") == "qwen2_5_vl" else None
    interleaved = rope.get("mrope_interleaved", config.get("model_type") in MROPE_INTERLEAVED)
    if not isinstance(interleaved, bool):
        raise PecliInputError(f"{where}: mrope_interleaved must be true or false, got {interleaved!r}")
    try:
        return Mrope(
            dim=dim,
            sequence=f"text={max_pos}",
            base=theta,
            mrope_section=";".join(map(str, section)),
            tokens_per_second=tokens_per_second,
            mrope_interleaved=interleaved,
        )
    except RecipeError as exc:
        raise PecliInputError(f"{where}: {in_config_words(exc)}") from None


def _sinusoidal(config: dict[str, Any], model_type: str, where: str) -> Recipe:
    from pecli.presets import get_preset

    preset, width, positions = SINUSOIDAL_MODELS[model_type]
    d, n = config.get(width), config.get(positions)
    for key, value in ((width, d), (positions, n)):
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise PecliInputError(f"{where}: {key} must be a whole number > 0, got {value!r}")
    overrides: dict[str, Any] = {"length": n, "dim": d}
    pad = config.get("pad_token_id")
    recipe = get_preset(preset).recipe(**overrides)
    own_pad = recipe.params(everything=True).get("padding_idx")
    if own_pad is not None and isinstance(pad, int) and pad != own_pad:
        recipe = get_preset(preset).recipe(**overrides, padding_idx=pad)
    return recipe


__all__ = ["DEFAULTS", "MROPE_MODELS", "SINUSOIDAL_MODELS", "read_config", "recipe_from_config"]
