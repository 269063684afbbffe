"""The checks every kind's parameters pass, and how a parameter is spelled to users: each check
is one :class:`~pecli.errors.RecipeError` naming the parameter and the fix."""

from __future__ import annotations

import math
from typing import Any

from pecli.errors import RecipeError


def spell(name: str) -> str:
    """A parameter as users type it on the command line: ``length`` → ``--len``."""
    return "--len" if name == "length" else "--" + name.replace("_", "-")


def spell_param(name: str) -> str:
    """A parameter as users type it in a recipe operand: ``length`` → ``len``, ``padding_idx`` → ``padding-idx``."""
    return spell(name)[2:]


def round_number(x: float, digits: int = 4) -> float:
    """``x`` to ``digits`` significant digits: a fitted base, factor or temperature is spelled as
    the round number models write (10000, not 10000.0000003)."""
    return float(f"{x:.{digits}g}") if math.isfinite(x) and x != 0 else x


def int_param(name: str, value: object, minimum: int, hint: str) -> int:
    """``value`` as a whole number ≥ ``minimum``, or a :class:`RecipeError` naming ``hint``."""
    # bool is an int subclass; True as a length is a bug, not a 1.
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise RecipeError(f"{name} must be a whole number, got {value!r}: {hint}")
    if value < minimum:
        raise RecipeError(f"{name} must be at least {minimum}, got {value}: {hint}")
    return value


def positive_float(name: str, value: object, hint: str, *, not_one: bool = False) -> float:
    """``value`` as a finite float > 0 (and ≠ 1 with ``not_one``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RecipeError(f"{name} must be a number, got {value!r}: {hint}")
    try:
        x = float(value)
    except OverflowError:  # an int like 10**400
        x = math.inf
    if not math.isfinite(x) or x <= 0 or (not_one and x == 1):
        rule = "a finite number > 0 and ≠ 1" if not_one else "a finite number > 0"
        raise RecipeError(f"{name} must be {rule}, got {value!r}: {hint}")
    return x


def optional_float(name: str, value: object, hint: str, *, positive: bool = True) -> float | None:
    """``None``, or ``value`` as a finite float (> 0 with ``positive``)."""
    if value is None:
        return None
    if positive:
        return positive_float(name, value, hint)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(float(value)):
        raise RecipeError(f"{name} must be a finite number, got {value!r}: {hint}")
    return float(value)


#: Operand parameter names → recipe field names (the options' spellings).
ALIASES = {"len": "length"}


def operand_params(kind: str, types: dict[str, str], items: list[str], spec: str) -> dict[str, Any]:
    """``PARAM=VALUE`` items of an operand (``len=120``, ``layout=split``) as recipe parameters of
    ``kind``, whose parameter types are ``types`` (:func:`pecli.recipe.parameter_types`)."""
    names = ", ".join("len" if n == "length" else n for n in types)
    params: dict[str, Any] = {}
    for item in filter(None, (p.strip() for p in items)):
        name, eq, value = item.partition("=")
        name = ALIASES.get(name.strip(), name.strip().replace("-", "_"))
        if not eq or name not in types:
            raise RecipeError(f"unknown parameter {item!r} in {spec!r}: {kind} takes {names}")
        if name in params:
            raise RecipeError(f"parameter {name!r} is given twice in {spec!r}")
        params[name] = _convert(name, value.strip(), types[name], spec)
    return params


def _convert(name: str, value: str, type_name: str, spec: str) -> Any:
    if type_name == "bool":
        if value.lower() in ("1", "true", "yes"):
            return True
        if value.lower() in ("0", "false", "no"):
            return False
        raise RecipeError(f"{name}={value!r} in {spec!r} is not true or false")
    if type_name.endswith("?") and value.lower() == "none":
        return None
    try:
        if type_name in ("int", "int?"):
            return int(value)
        if type_name in ("float", "float?"):
            return float(value)
    except ValueError:
        what = "number" if type_name == "float" else "whole number"
        raise RecipeError(f"{name}={value!r} in {spec!r} is not a {what}") from None
    return value


def choice(name: str, value: object, choices: tuple[str, ...]) -> None:
    """Refuse a ``value`` that is not one of ``choices``."""
    if value not in choices:
        raise RecipeError(f"unknown {name} {value!r}: choose one of {', '.join(choices)}")


def flag(name: str, value: object) -> bool:
    """``value`` as a bool (``0``/``1`` accepted, as stored metadata may have them)."""
    if value not in (True, False, 0, 1):
        raise RecipeError(f"{name} must be true or false, got {value!r}")
    return bool(value)


__all__ = [
    "ALIASES",
    "choice",
    "flag",
    "int_param",
    "operand_params",
    "optional_float",
    "positive_float",
    "round_number",
    "spell",
    "spell_param",
]
