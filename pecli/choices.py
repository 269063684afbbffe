"""The names every choice option accepts, in one place that imports nothing heavy.

``pecli --help`` builds its option lists from these tuples without importing the recipe classes
(dataclasses, presets); ``pecli.recipe`` and ``pecli.kinds_extra`` type their fields with the
``Literal`` types.  A test keeps ``KIND_NAMES`` equal to ``pecli.recipe.KINDS``.
"""

from __future__ import annotations

from typing import Literal, get_args

KIND_NAMES = ("sinusoidal", "sincos2d", "rope", "alibi", "learned")

Layout = Literal["interleaved", "split", "cos-first"]
DType = Literal["float16", "float32", "float64"]
Freq = Literal["paper", "t2t", "half"]
Odd = Literal["sin", "zero", "truncate", "error"]
Compute = Literal["exact", "float64", "float32"]
Form = Literal["exp", "pow", "div"]
Order = Literal["mae", "timm", "timm-interleave", "timm-reverse", "timm-reverse-interleave", "tatp"]
LAYOUTS: tuple[str, ...] = get_args(Layout)
DTYPES: tuple[str, ...] = get_args(DType)
FREQS: tuple[str, ...] = get_args(Freq)
ODDS: tuple[str, ...] = get_args(Odd)
COMPUTES: tuple[str, ...] = get_args(Compute)
FORMS: tuple[str, ...] = get_args(Form)
ORDERS: tuple[str, ...] = get_args(Order)

RopeLayout = Literal["half", "pairs"]
RopePart = Literal["cos", "sin", "angle", "inv_freq"]
Scaling = Literal["default", "linear", "dynamic", "yarn", "longrope", "llama3"]
RopeCompute = Literal["float32", "exact"]
AlibiPart = Literal["slopes", "bias"]
AlibiOrigin = Literal["first", "last"]
AlibiForm = Literal["list", "pow", "recip"]
AlibiCompute = Literal["float32", "exact"]
Init = Literal["normal", "truncated-normal"]

ROPE_LAYOUTS: tuple[str, ...] = get_args(RopeLayout)
ROPE_PARTS: tuple[str, ...] = get_args(RopePart)
SCALINGS: tuple[str, ...] = get_args(Scaling)
ROPE_COMPUTES: tuple[str, ...] = get_args(RopeCompute)
ALIBI_PARTS: tuple[str, ...] = get_args(AlibiPart)
ALIBI_ORIGINS: tuple[str, ...] = get_args(AlibiOrigin)
ALIBI_FORMS: tuple[str, ...] = get_args(AlibiForm)
ALIBI_COMPUTES: tuple[str, ...] = get_args(AlibiCompute)
INITS: tuple[str, ...] = get_args(Init)
