"""llama.cpp's GGUF (read only, with the ``gguf`` package): one tensor as a table, and the model's
RoPE settings for ``--hf-config`` (:func:`rope_settings`).

A GGUF file holds a model's tensors (``position_embd.weight``: GPT-2's learned positions;
``rope_freqs.weight``: Llama 3.1's per-frequency divisors) and its settings as key-value pairs
(``llama.rope.freq_base``, ``llama.rope.scaling.type``, …), specified in
https://github.com/ggml-org/ggml/blob/master/docs/gguf.md.  ``gguf.GGUFReader`` (llama.cpp's own
reader) maps the file; a tensor's dimensions are stored fastest first (ggml's ``ne``) and read in
NumPy's order.  F32, F16 and F64 are read as they are, BF16 as float32 (exactly), a quantized
tensor dequantized to float32 by ``gguf.quants`` (said in ``inspect``).
"""

from __future__ import annotations

import sys
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from pecli.errors import FormatError
from pecli.formats._common import ArrayInfo, Format, choose_key, first_line
from pecli.formats.arrays import Bfloat16Rows, array_table
from pecli.formats.kept import Listing, kept
from pecli.resources import ensure_fits_in_memory
from pecli.table import Table

if TYPE_CHECKING:
    from pecli.kernels.rope_scaling import ScalingType

#: The first bytes of every GGUF file.
GGUF_MAGIC = b"GGUF"

#: transformers' RoPE keys and the GGUF keys (after ``{arch}.rope.scaling.``) that hold them.
_SCALING_KEYS = {
    "factor": "factor",
    "original_max_position_embeddings": "original_context_length",
    "beta_fast": "yarn_beta_fast",
    "beta_slow": "yarn_beta_slow",
}
#: llama.cpp's scaling keys with no transformers counterpart, and the value that changes nothing.
_OWN_KNOBS = {"attn_factor": 1.0, "yarn_attn_factor": 1.0, "yarn_ext_factor": 1.0, "yarn_log_multiplier": 0.0}
#: ggml's float types and the dtype pecli reads each as (BF16: float32, exactly).
_FLOATS = {"F32": "float32", "F16": "float16", "F64": "float64", "BF16": "bfloat16"}


def _gguf() -> Any:
    try:
        import gguf
    except ImportError:
        raise FormatError("reading .gguf needs the gguf package (llama.cpp's): pip install gguf") from None
    return gguf


#: GGUF metadata value types (the spec's ``gguf_metadata_value_type``) and their fixed sizes in bytes;
#: 8 is a string (a u64 length, then the bytes), 9 an array (a u32 type, a u64 count, the items).
_VALUE_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_STRING, _ARRAY = 8, 9
#: Dimensions a ggml tensor may have (GGML_MAX_DIMS).
_MAX_DIMS = 4


def check_header(path: Path) -> None:
    """Walk the header of ``path`` as the spec lays it out and refuse, in one line, any count or
    length that the file's own size cannot hold (a 173-byte file declaring a 2⁴⁰-value array),
    before ``gguf.GGUFReader``, which allocates what the header declares, is given it."""
    import struct

    size = path.stat().st_size
    with open(path, "rb") as f:
        head = f.read(min(size, 1 << 26))  # the header's bytes (a header past 64 MB is refused below)
    at = 0

    def take(n: int, what: str) -> bytes:
        nonlocal at
        if n < 0 or at + n > len(head):
            raise FormatError(
                f"{path} is not a readable GGUF file: {what} declares {n} bytes past its end ({size} bytes in all)"
            )
        out = head[at : at + n]
        at += n
        return out

    def number(fmt: str, what: str) -> int:
        value: int = struct.unpack("<" + fmt, take(struct.calcsize(fmt), what))[0]
        return value

    def value(kind: int, what: str) -> None:
        if kind == _STRING:
            take(number("Q", what), what)
        elif kind == _ARRAY:
            item, count = number("I", what), number("Q", what)
            if item in _VALUE_SIZES:
                take(count * _VALUE_SIZES[item], f"{what} ({count} values)")
            elif item == _STRING and count <= len(head) // 8:
                for _ in range(count):
                    value(_STRING, what)
            else:
                take(count * 8 if item == _STRING else -1, f"{what} ({count} items of type {item})")
        elif kind in _VALUE_SIZES:
            take(_VALUE_SIZES[kind], what)
        else:
            raise FormatError(f"{path} is not a readable GGUF file: {what} has an unknown value type {kind}")

    take(8, "the header")  # magic, version
    tensors, keys = number("Q", "the tensor count"), number("Q", "the key count")
    for count, what in ((tensors, "tensors"), (keys, "keys")):
        if count > size // 8:
            raise FormatError(f"{path} is not a readable GGUF file: it declares {count} {what} in {size} bytes")
    for i in range(keys):
        take(number("Q", f"key {i}'s name"), f"key {i}'s name")
        value(number("I", f"key {i}"), f"key {i}'s value")
    for i in range(tensors):
        take(number("Q", f"tensor {i}'s name"), f"tensor {i}'s name")
        dims = number("I", f"tensor {i}")
        if dims > _MAX_DIMS:
            raise FormatError(f"{path} is not a readable GGUF file: tensor {i} declares {dims} dimensions")
        take(8 * dims + 12, f"tensor {i}'s shape")


def open_reader(path: Path) -> Any:
    """``gguf.GGUFReader`` of ``path`` (the file mapped, nothing read yet), or a one-line error;
    its header's counts are bounded by the file's size first (:func:`check_header`)."""
    gguf = _gguf()
    check_header(path)
    try:
        return gguf.GGUFReader(path, "r")
    except Exception as exc:  # a reader of untrusted bytes: ValueError, IndexError, struct errors…
        raise FormatError(f"{path} is not a readable GGUF file ({first_line(exc)})") from None


def _dtype_name(tensor: Any) -> str:
    name: str = tensor.tensor_type.name
    return _FLOATS.get(name, name.lower())


def _arrays(reader: Any) -> list[ArrayInfo]:
    return [
        ArrayInfo(t.name, tuple(int(n) for n in reversed(t.shape.tolist())), _dtype_name(t)) for t in reader.tensors
    ]


def _list(path: Path) -> list[ArrayInfo]:
    return _arrays(open_reader(path))


def _opened(path: Path) -> tuple[Any, Listing, dict[str, Any]]:
    """The file's reader, its listing and its tensors by name (the first of a name, as llama.cpp)."""
    reader = open_reader(path)
    return reader, Listing.of(_arrays(reader)), {t.name: t for t in reversed(reader.tensors)}


def _read(path: Path, key: str | None, stack: ExitStack) -> Table:
    reader, listing, by_name = kept(path, "gguf", lambda own: _opened(path), stack)
    name = choose_key(path, key, listing.arrays, listing.names)
    tensor = by_name[name]
    code = tensor.tensor_type.name
    shape = tuple(int(n) for n in reversed(tensor.shape.tolist()))
    info: dict[str, Any] = {"format": "gguf", "tensor": name, "stored dtype": code, "file_size": path.stat().st_size}
    storage = None
    data: Any = tensor.data
    if code == "BF16":  # gguf reads it as bytes: the 2-byte words are bfloat16's bits, in the file's order
        swapped = reader.byte_order == "S"  # the file's byte order is not this machine's
        order = ">" if swapped == (sys.byteorder == "little") else "<"
        words = np.asarray(tensor.data).view(f"{order}u2").reshape(shape).astype("<u2", copy=False)  # swapped
        data, storage = Bfloat16Rows(words), "bfloat16"
    elif code not in _FLOATS and not code.startswith(("I", "U")):  # quantized blocks
        ensure_fits_in_memory(4 * int(tensor.n_elements), f"dequantizing {path}:{name} ({code}) to float32")
        try:
            data = np.asarray(_gguf().quants.dequantize(tensor.data, tensor.tensor_type), dtype=np.float32)
        except (NotImplementedError, ValueError) as exc:
            raise FormatError(
                f"{path}:{name} holds {code} values, which gguf {getattr(_gguf(), '__version__', '')} cannot "
                f"dequantize ({first_line(exc)}): convert it to F32 with llama.cpp first"
            ) from None
        info["note"] = f"dequantized from {code} to float32 by gguf.quants"
    return array_table(data, f"{path}:{name}" if key else str(path), info, {}, storage=storage)


def _scaling_types() -> dict[str, str]:
    """GGUF's ``{arch}.rope.scaling.type`` values and the transformers ``rope_type`` each was
    converted from: the scaling registry's ``gguf`` names (imported here: a format's import stays
    light, for start-up)."""
    from pecli.kernels.rope_scaling import SCALINGS

    return {s.gguf: s.name for s in SCALINGS.values() if s.gguf is not None}


def hf_config(path: Path) -> dict[str, Any]:
    """The model's RoPE settings as the keys of the transformers ``config.json`` it was converted
    from, the way llama.cpp's ``convert_hf_to_gguf.py`` maps them: ``{arch}.rope.freq_base`` →
    ``rope_theta``, ``{arch}.rope.dimension_count`` → the rotary width, ``{arch}.context_length``
    → ``max_position_embeddings``, ``{arch}.rope.scaling.*`` → a linear or YaRN scaling, and a
    ``rope_freqs.weight`` tensor → the Llama 3.1 scaling whose factors it holds (found among
    the published ones; :func:`_from_divisors`), ``rope_factors_long``/``_short`` → Phi-3's
    LongRoPE (:func:`_per_frequency`)."""
    from pecli.kernels.rope_scaling import scaling_named  # here: a format's import stays light (start-up)

    reader = open_reader(path)

    def get(key: str) -> Any:
        found = reader.fields.get(key)
        try:
            return found.contents() if found is not None else None
        except (UnicodeDecodeError, ValueError, IndexError) as exc:  # an untrusted file's value
            raise FormatError(f"{path}: {key} cannot be read ({first_line(exc)})") from None

    def number(key: str, whole: bool = False) -> Any:
        """The value of ``key``, checked to be one finite number > 0 (a whole one), or None."""
        value = get(key)
        if value is None:
            return None
        kinds = int if whole else int | float
        if isinstance(value, bool) or not isinstance(value, kinds) or not (0 < value < float("inf")):
            what = "a whole number" if whole else "a number"
            raise FormatError(f"{path}: {key} must be {what} > 0, got {value!r:.60}")
        return value

    arch = get("general.architecture")
    if not isinstance(arch, str):
        raise FormatError(f"{path} has no general.architecture: it is no model llama.cpp converted")
    if not _rope_given(reader, arch):
        learned = (
            " (its learned positions: pecli inspect FILE:position_embd.weight)"
            if _has(reader, "position_embd.weight")
            else ""
        )
        raise FormatError(
            f"{path} has no {arch}.rope.* keys: llama.cpp's {arch} model has no rotary positions to build{learned}"
        )
    n_ctx, width = number(f"{arch}.context_length", True), number(f"{arch}.rope.dimension_count", True)
    heads, embedding = _one_value(get(f"{arch}.attention.head_count")), get(f"{arch}.embedding_length")
    if width is None:
        width = _one_value(get(f"{arch}.attention.key_length"))
    if width is None and isinstance(embedding, int) and isinstance(heads, int) and heads > 0:
        width = embedding // heads
    if not isinstance(n_ctx, int) or not isinstance(width, int):
        raise FormatError(f"{path} has no {arch}.context_length or {arch}.rope.dimension_count: no RoPE to read")
    base = float(number(f"{arch}.rope.freq_base") or 10000.0)  # llama.cpp's default
    kind = get(f"{arch}.rope.scaling.type") or "none"
    rope_type = _scaling_types().get(kind)
    if rope_type is None:
        known = ", ".join(_scaling_types())
        raise FormatError(f"{path}: {arch}.rope.scaling.type {kind!r} is not one pecli reads from GGUF ({known})")
    reads = scaling_named(rope_type).reads  # type: ignore[union-attr]  # every value of _scaling_types() is one
    lists = _lists_scaling()
    longrope = rope_type == lists.name or any(_has(reader, t) for t in lists.gguf_lists.values())
    for name, neutral in _OWN_KNOBS.items():
        value = get(f"{arch}.rope.scaling.{name}")
        if longrope and name == "attn_factor":
            continue  # LongRoPE's attention factor (_per_frequency)
        if value is not None and value != neutral:
            raise FormatError(
                f"{path}: {arch}.rope.scaling.{name} is {value}, llama.cpp's own knob with no transformers "
                "counterpart pecli builds"
            )
    rope: dict[str, Any] = {"rope_type": rope_type, "rope_theta": base, "partial_rotary_factor": 1.0}
    for key, name in _SCALING_KEYS.items():
        value = number(f"{arch}.rope.scaling.{name}", whole=key == "original_max_position_embeddings")
        if value is not None and key in reads:
            rope[key] = value
    factors = next((t for t in reader.tensors if t.name == "rope_freqs.weight"), None)
    if factors is not None:
        if rope["rope_type"] != "default":
            raise FormatError(f"{path} has both rope_freqs.weight and {arch}.rope.scaling.type {kind}: keep one")
        rope |= _from_divisors(np.asarray(factors.data, dtype=np.float32).reshape(-1), base, width, path)
    if longrope:
        if rope["rope_type"] not in ("default", lists.name):
            raise FormatError(f"{path} has LongRoPE factors and {arch}.rope.scaling.type {kind}: keep one")
        attn = number(f"{arch}.rope.scaling.attn_factor")
        original = number(f"{arch}.rope.scaling.original_context_length", whole=True)
        rope |= _per_frequency(lists, reader, original, attn, n_ctx, width, path)
    return {"model_type": f"gguf:{arch}", "max_position_embeddings": n_ctx, "head_dim": width, "rope_parameters": rope}


def _lists_scaling() -> ScalingType:
    """The scaling llama.cpp stores as per-frequency lists in tensors of their own (LongRoPE)."""
    from pecli.kernels.rope_scaling import SCALINGS

    return next(s for s in SCALINGS.values() if s.gguf_lists)


def _per_frequency(
    scaling: ScalingType, reader: Any, original: Any, attn: Any, n_ctx: int, width: int, path: Path
) -> dict[str, Any]:
    """Phi-3's LongRoPE as ``convert_hf_to_gguf.py``'s ``Phi3MiniModel`` stores it: the factors as
    float32 tensors ``rope_factors_long``/``_short`` (``dim/2`` each), the original length in
    ``rope.scaling.original_context_length`` and the attention factor in ``rope.scaling.attn_factor``
    (float32), left to transformers' default ``√(1 + ln s / ln original)`` when it is that one rounded."""
    import math

    if not isinstance(original, int):
        raise FormatError(
            f"{path} has LongRoPE factors but no rope.scaling.original_context_length: no LongRoPE to build"
        )
    out: dict[str, Any] = {"rope_type": scaling.name, "original_max_position_embeddings": original}
    for key, name in scaling.gguf_lists.items():
        tensor = next((t for t in reader.tensors if t.name == name), None)
        if tensor is None:
            raise FormatError(f"{path} has no {name}: LongRoPE needs both rope_factors_long and rope_factors_short")
        values = np.asarray(tensor.data, dtype=np.float32).reshape(-1)
        if len(values) != width // 2:
            raise FormatError(
                f"{path}: {name} holds {len(values)} factors, and a rotary width of {width} has {width // 2} "
                "frequencies: the file is inconsistent"
            )
        out[key] = [float(v) for v in values]
    scale = n_ctx / original
    default = math.sqrt(1 + math.log(scale) / math.log(original)) if scale > 1 else 1.0
    if attn is not None and np.float32(attn) != np.float32(default):
        out["attention_factor"] = float(attn)
    return out


def has_rope(path: Path, key: str | None = None) -> bool:
    """Whether the GGUF file ``path`` says how its model rotates (``{arch}.rope.*`` keys or a RoPE
    tensor) and ``key`` (what followed its colon) names none of its tensors: then
    :func:`hf_config` reads a cache from it (a file that is no GGUF says no)."""
    try:
        reader = open_reader(path)
    except FormatError:
        return False
    arch = reader.fields.get("general.architecture")
    try:
        name = arch.contents() if arch is not None else None
    except (UnicodeDecodeError, ValueError, IndexError):
        return False
    return isinstance(name, str) and _rope_given(reader, name) and (key is None or not _has(reader, key))


def _rope_given(reader: Any, arch: str) -> bool:
    rope_tensors = ("rope_freqs.weight", *_lists_scaling().gguf_lists.values())
    return any(key.startswith(f"{arch}.rope.") for key in reader.fields) or any(_has(reader, t) for t in rope_tensors)


def _has(reader: Any, tensor: str) -> bool:
    return any(t.name == tensor for t in reader.tensors)


def _one_value(value: Any) -> int | None:
    """A count, or one of a per-layer list whose layers all agree (else None)."""
    if isinstance(value, list):
        return value[0] if value and all(v == value[0] for v in value) and isinstance(value[0], int) else None
    return value if isinstance(value, int) else None


def _from_divisors(factors: np.ndarray, base: float, dim: int, path: Path) -> dict[str, Any]:
    """The scaling whose per-frequency divisors ``rope_freqs.weight`` holds (the registry's
    :attr:`~pecli.kernels.rope_scaling.ScalingType.gguf_divisors`: Llama 3.1's), as config keys."""
    from pecli.kernels.rope_scaling import SCALINGS

    scaling = next(s for s in SCALINGS.values() if s.gguf_divisors is not None)
    if len(factors) != dim // 2:
        raise FormatError(
            f"{path}: rope_freqs.weight holds {len(factors)} factors, and a rotary width of {dim} has {dim // 2} "
            "frequencies: the file is inconsistent"
        )
    found = scaling.gguf_divisors(factors, base, dim)  # type: ignore[misc]  # the one that has them
    if found is None:
        raise FormatError(
            f"{path}: rope_freqs.weight holds per-frequency factors that no Llama 3.1 scaling rebuilds "
            "(factor, low/high frequency factors and original length as published): pecli cannot name them"
        )
    return {"rope_type": scaling.name, **found}


GGUF = Format(
    name="gguf",
    extensions=(".gguf",),
    summary="llama.cpp's GGUF, read only (needs the gguf package): a tensor by --key or FILE:NAME",
    writes_to="path",
    write=None,
    read=_read,
    metadata="none",
    bytes_per_value=lambda dt: dt.itemsize,
    list_keys=_list,
    requires="gguf",
    sniff=lambda head: head.startswith(GGUF_MAGIC),
    streamable=True,
    title="GGUF",
)
