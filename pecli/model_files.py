"""A model's settings file as a SOURCE: the cache a ``config.json``, a model directory or a GGUF file implies.

    pecli diff model.gguf config.json             the caches the two files imply, key by key
    pecli diff my_cache.npy config.json            a cache against the one the model builds
    pecli inspect config.json:len=4096             at another length (any parameter of its recipe)
    pecli identify gemma3/config.json:full_attention   one layer type's (Gemma 3's sliding and full)

Which operand is such a file (the rest of the operand rules are :mod:`pecli.sources`'):

- a directory holding a ``config.json`` (as ``from_pretrained`` takes it);
- a ``.json`` file holding an object that is not a pecli table (no ``"data"`` list) and says what
  model it is (``model_type``, ``rope_theta``, ``rope_scaling``, ``rope_parameters``, …);
- a ``.gguf`` file that says how its model rotates (``{arch}.rope.*`` keys or a RoPE tensor), with
  no tensor named: ``model.gguf:token_embd.weight`` is that tensor, ``model.gguf`` the cache.

After a colon come the recipe's parameters (``len=4096,dtype=bfloat16``) and a layer type
(``full_attention``), in any order.  The recipe is read by :func:`pecli.hfconfig.recipe_from_config`
(``--hf-config`` reads the same files); each of its parameters is remembered with the key of the
file it came from (:func:`setting_keys`; ``info["keys"]``, which ``inspect`` shows), so that ``diff``
names the key that differs (``llama.rope.freq_base 10000 (A) vs rope_theta 1000000 (B)``).
"""

from __future__ import annotations

import stat
from collections.abc import Collection
from pathlib import Path
from typing import Any

from pecli.errors import PecliInputError, RecipeError
from pecli.hfconfig import MAX_CONFIG_BYTES, SINUSOIDAL_MODELS, read_config, recipe_from_config
from pecli.params import operand_params, spell_param
from pecli.recipe import Recipe, format_value, parameter_types
from pecli.table import Table

#: Keys of a config.json that say it describes a model (beside ``model_type``).
_MODEL_KEYS = frozenset(
    {"model_type", "rope_theta", "rope_scaling", "rope_parameters", "rotary_emb_base", "rotary_pct", "text_config"}
)
#: Where a rope recipe's parameters come from in a config.json (those inside the RoPE dict are
#: ``rope_parameters.NAME`` or ``rope_scaling.NAME``; the rest say themselves).
_CONFIG_KEYS = {
    "length": "max_position_embeddings",
    "dim": "head_dim × partial_rotary_factor",
}
#: GGUF's keys (after ``{arch}.``) or tensors for config.json's, as llama.cpp's
#: ``convert_hf_to_gguf.py`` writes them (:func:`pecli.formats.gguf.hf_config` reads them back).
_GGUF_KEYS = {
    "base": "rope.freq_base",
    "length": "context_length",
    "dim": "rope.dimension_count",
    "scaling": "rope.scaling.type",
    "factor": "rope.scaling.factor",
    "original_max_position_embeddings": "rope.scaling.original_context_length",
    "beta_fast": "rope.scaling.yarn_beta_fast",
    "beta_slow": "rope.scaling.yarn_beta_slow",
    "attention_factor": "rope.scaling.attn_factor",
}
_GGUF_TENSORS = {
    "low_freq_factor": "rope_freqs.weight",
    "high_freq_factor": "rope_freqs.weight",
    "long_factor": "rope_factors_long.weight",
    "short_factor": "rope_factors_short.weight",
}


def settings_file(path: str, key: str | None, fmt: str | None) -> bool:
    """Whether ``path`` (with ``key``, what followed its colon) names a model's settings, by the rules above."""
    p = Path(path)
    if key is not None and not all(_is_setting(item) for item in key.split(",")):
        return False  # a tensor's or dataset's name
    if p.is_dir():
        return fmt is None and (p / "config.json").is_file()
    suffix = p.suffix.lower() if fmt is None else f".{fmt}"
    if suffix == ".gguf":
        from pecli.formats.gguf import has_rope

        return p.is_file() and has_rope(p, key)
    return suffix == ".json" and _config_object(p) is not None


def _is_setting(item: str) -> bool:
    """``len=4096`` or ``full_attention``: a parameter or a layer type, never a tensor's name (``a.weight``)."""
    name = item.partition("=")[0].strip()
    return name.replace("-", "_").isidentifier()


def _config_object(p: Path) -> dict[str, Any] | None:
    """``p`` parsed when it is a small JSON object that describes a model (a table has ``"data"``)."""
    from pecli.jsontext import load_json

    try:
        st = p.stat()
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_CONFIG_BYTES:
            return None
        doc = load_json(p.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None  # the table reader says what is wrong with it
    if not isinstance(doc, dict) or "data" in doc or not _MODEL_KEYS & doc.keys():
        return None
    return doc


def settings_table(spec: str, path: str, key: str | None) -> Table:
    """The table of the cache the settings file ``path`` implies, with ``key``'s parameters and
    layer type; its ``info["settings"]`` maps each recipe parameter to the key it came from."""
    items = [item.strip() for item in (key or "").split(",") if item.strip()]
    layers = [item for item in items if "=" not in item]
    if len(layers) > 1:
        raise PecliInputError(f"{spec}: names {len(layers)} layer types ({', '.join(layers)}): give one")
    config = read_config(path)
    recipe = recipe_from_config(config, path, layers[0] if layers else None)
    given = [item for item in items if "=" in item]
    if given:
        from pecli.making import make_recipe

        try:
            changes = operand_params(recipe.kind, parameter_types(type(recipe)), given, spec)
            recipe = make_recipe(changes, base=recipe)
        except RecipeError as exc:
            raise PecliInputError(str(exc) if repr(spec) in str(exc) else f"{spec}: {exc}") from None
    else:
        changes = {}
    gguf = str(config.get("model_type", "")).startswith("gguf:")
    keys = setting_keys(config, recipe, set(changes))
    info: dict[str, Any] = {"format": "gguf" if gguf else "config.json", "keys": keys}
    if gguf:  # its tensors are still there to read, one at a time
        from pecli.formats import list_arrays

        tensors = list_arrays(path, "gguf") or []
        if tensors:
            info["tensors"] = f"{len(tensors)}, read one as {path}:KEY (e.g. {path}:{tensors[0].key})"
    return Table(recipe, recipe, spec, info)


class SettingKeys(dict[str, str]):
    """Recipe parameter → the key of the file that set it; said as ``base: rope_theta, …`` (``inspect``'s line)."""

    def __str__(self) -> str:
        return ", ".join(f"{spell_param(name)}: {key}" for name, key in self.items())


def setting_keys(config: dict[str, Any], recipe: Recipe, given: Collection[str] = ()) -> SettingKeys:
    """Each parameter of ``recipe`` that the file ``config`` (as :func:`pecli.hfconfig.read_config`
    reads it) set, and the key that set it: ``{"base": "rope_theta"}`` from a config.json,
    ``{"base": "llama.rope.freq_base"}`` from a GGUF file.  ``given``: parameters the operand set
    (``len=4096``), said as such."""
    model_type = str(config.get("model_type", ""))
    out = SettingKeys()
    for name in recipe.params(everything=True):
        key = _config_key(config, name)
        if name in given:
            out[name] = "the operand"
        elif key is None:
            continue
        elif model_type.startswith("gguf:"):
            arch = model_type.partition(":")[2]
            gguf = f"{arch}.{_GGUF_KEYS[name]}" if name in _GGUF_KEYS else _GGUF_TENSORS.get(name)
            if gguf is not None:
                out[name] = gguf
        else:
            out[name] = key
    return out


def _config_key(config: dict[str, Any], name: str) -> str | None:
    """The key of a config.json that set the recipe parameter ``name`` (None: none did)."""
    inner: dict[str, Any] = config["text_config"] if isinstance(config.get("text_config"), dict) else {}
    merged = {**config, **inner}
    where = next((d for d in ("rope_parameters", "rope_scaling") if isinstance(merged.get(d), dict)), None)
    rope = merged[where] if where else {}
    if merged.get("model_type") in SINUSOIDAL_MODELS:  # a fixed sinusoid: its width and positions keys
        _, width, positions = SINUSOIDAL_MODELS[merged["model_type"]]
        return {"length": positions, "dim": width}.get(
            name, "pad_token_id" if name == "padding_idx" and "pad_token_id" in merged else None
        )
    if name == "base":
        if "rope_theta" in rope:
            return f"{where}.rope_theta"
        return next((k for k in ("rope_theta", "rotary_emb_base") if k in merged), "rope_theta (the model's default)")
    if name == "scaling":
        return next((f"{where}.{k}" for k in ("rope_type", "type") if k in rope), None)
    if name in rope:
        return f"{where}.{name}"
    if name == "original_max_position_embeddings" and name in merged:
        return name
    return _CONFIG_KEYS.get(name)


def key_differences(a: Table, b: Table, ra: Recipe | None, rb: Recipe | None) -> list[str]:
    """The parameters where the recipes ``ra`` (table A's) and ``rb`` (B's) differ, each said with
    the key of the settings file it came from (``llama.rope.freq_base 10000 (A) vs rope_theta
    1000000 (B)``); empty unless a side is a settings file and both recipes are known and of one kind."""
    keys_a, keys_b = a.info.get("keys"), b.info.get("keys")
    if ra is None or rb is None or type(ra) is not type(rb) or not (keys_a or keys_b):
        return []
    pa, pb = ra.params(everything=True), rb.params(everything=True)
    out = []
    for name in pa:
        if pa[name] == pb.get(name):
            continue
        (key_a, said_a), (key_b, said_b) = _side(keys_a, name, pa[name]), _side(keys_b, name, pb.get(name))
        if key_b and key_b != key_a:
            said_b = f"{key_b} {said_b}"
        out.append(f"{key_a or key_b} {said_a} (A) vs {said_b} (B)")
    return out


def _side(keys: SettingKeys | None, name: str, value: Any) -> tuple[str, str]:
    """One side of a key difference: the key (the file's, or the parameter's name for a side that
    is no settings file; empty where the file left it out) and the value (``not set`` then)."""
    text = "none" if value is None else format_value(value)
    text = text if len(text) <= 40 else text[:37] + "…"
    if keys is None:
        return spell_param(name), text
    if name in keys:
        return keys[name], text
    return "", "not set" if value is None else f"{text} (not set: the default)"


__all__ = ["SettingKeys", "key_differences", "setting_keys", "settings_file", "settings_table"]
