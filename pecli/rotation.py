"""The rotation itself: which rotary cache turned activations ``before`` into ``after``.

A cos/sin cache can equal a framework's byte for byte and still be applied wrongly: dims paired as
``pairs`` (2k with 2k+1, GPT-J's ``rotate_every_two``) where the model pairs them ``half`` (k with
k + r/2, Llama's ``rotate_half``), or rotated on every dim where only the first r are (partial
rotary).  :func:`rotation_of` reads the rotation back from the activations before and after it, of
shape (positions, head_dim) or (positions, heads, head_dim), row p at position p:

1. the rotated dims are those ``after`` moves (the rest equal ``before``): their width r, even,
   is the partial rotary width;
2. the pairing is the one of ``half`` and ``pairs`` over those r dims under which every pair of
   values keeps its length (a rotation does; the evidence is the largest change of a pair's
   squared length, relative to the largest squared value);
3. each pair's angle at each position is ``atan2(Σ x_i·y_j − x_j·y_i, Σ x_i·y_i + x_j·y_j)`` over
   the heads (every head turns by the same angle);
4. the cache of those angles is named by :func:`pecli.identification.identify`, and a candidate
   is kept only when rotating ``before`` with its cos and sin (:func:`apply_rotary`) gives
   ``after`` within a few roundings of the activations' dtype: the proof is the rotation.

``apply_rotary`` is the reference rotation of each layout, as transformers' ``apply_rotary_pos_emb``
(``q·cos + rotate_half(q)·sin``) and GPT-J's ``rotate_every_two`` write it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal, get_args

import numpy as np

from pecli.errors import PecliInputError
from pecli.recipe import Recipe

Pairing = Literal["half", "pairs"]
#: How much a pair's squared length may change, relative to the largest squared value, for the
#: pairing to count as a rotation: float32 activations rotated in float32 move it by ~1e-7.
NORM_SLACK = 1e-4


def apply_rotary(x: Any, cos: Any, sin: Any, layout: Pairing = "half") -> np.ndarray:
    """``x`` (positions × dims, or positions × heads × dims) rotated by the tables ``cos`` and
    ``sin`` (positions × r, r ≤ dims, in ``layout``), in float64: ``x·cos + rotate(x)·sin`` on the
    first r dims, where ``rotate`` is ``rotate_half`` (``[−x₂, x₁]``) for ``half`` and
    ``rotate_every_two`` (``[−x₁, x₀, −x₃, x₂, …]``) for ``pairs``; dims past r pass unchanged."""
    x3 = _three_axes(np.asarray(x, dtype=np.float64), "x")
    c = np.asarray(cos, dtype=np.float64)[:, None, :]
    s = np.asarray(sin, dtype=np.float64)[:, None, :]
    r = c.shape[-1]
    if c.shape[0] != x3.shape[0] or r > x3.shape[-1] or r % 2:
        raise PecliInputError(
            f"cos/sin of shape {tuple(np.shape(cos))} cannot rotate x of shape {np.shape(x)}: "
            "give one row per position and an even width of at most the head's"
        )
    xr = x3[..., :r]
    if layout == "half":
        turned = np.concatenate([-xr[..., r // 2 :], xr[..., : r // 2]], axis=-1)
    else:
        turned = np.stack([-xr[..., 1::2], xr[..., 0::2]], axis=-1).reshape(xr.shape)
    out = np.concatenate([xr * c + turned * s, x3[..., r:]], axis=-1)
    return out.reshape(np.shape(x))


def _three_axes(a: np.ndarray, name: str) -> np.ndarray:
    if a.ndim == 2:
        return a[:, None, :]
    if a.ndim == 3:
        return a
    raise PecliInputError(f"{name} has shape {a.shape}: give (positions, head_dim) or (positions, heads, head_dim)")


@dataclass(frozen=True)
class Rotation:
    """What :func:`rotation_of` read back.  ``angles``: (positions × r/2) radians in (−π, π];
    ``norm_change``: the evidence that it is a rotation (see the module docstring); ``recipe``: the
    cache proved by rotating (None when no candidate rotates ``before`` into ``after``), with
    ``max_abs`` its largest difference from ``after`` and ``tolerance`` the bound it met."""

    width: int
    dims: int
    pairing: Pairing
    angles: np.ndarray
    norm_change: float
    recipe: Recipe | None
    max_abs: float
    tolerance: float

    def describe(self) -> str:
        """One line: which dims turn, how they pair, and which dims stay."""
        pairs = f"k with k+{self.width // 2}" if self.pairing == "half" else "2k with 2k+1"
        rest = f"; dims {self.width}–{self.dims - 1} unrotated" if self.width < self.dims else ""
        return f"rotated on dims 0–{self.width - 1}, paired {self.pairing} ({pairs}){rest}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data, as ``pecli rotation --json`` prints it (the angles left out)."""
        return {
            "width": self.width,
            "dims": self.dims,
            "pairing": self.pairing,
            "norm_change": self.norm_change,
            "recipe": self.recipe.spec() if self.recipe is not None else None,
            "max_abs": self.max_abs if self.recipe is not None else None,
            "tolerance": self.tolerance,
        }


def rotation_of(before: Any, after: Any) -> Rotation:
    """The rotation that turned ``before`` into ``after`` (see the module docstring), or a
    :class:`~pecli.errors.PecliInputError` saying "not a rotation: …" with the measured evidence."""
    xa, ya = np.asarray(before), np.asarray(after)
    if xa.shape != ya.shape:
        raise PecliInputError(f"not a rotation: before has shape {xa.shape}, after {ya.shape}: they must be equal")
    x, y = _three_axes(xa.astype(np.float64), "before"), _three_axes(ya.astype(np.float64), "after")
    d = x.shape[-1]
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise PecliInputError("not a rotation: the activations hold NaN or infinite values")
    eps = float(np.finfo(ya.dtype if ya.dtype.kind == "f" else np.float64).eps)
    scale = float(max(np.abs(x).max(), np.abs(y).max(), np.finfo(np.float64).tiny))
    moved = np.flatnonzero(np.abs(y - x).max(axis=(0, 1)) > 8 * eps * scale)
    if moved.size == 0:
        raise PecliInputError("not a rotation: after equals before on every dim (position 0 only, or no rotary)")
    width = min(d, int(moved.max()) + 1 + (int(moved.max()) + 1) % 2)
    if width % 2:
        raise PecliInputError(f"not a rotation: {width} dims move, and a rotation turns dims in pairs")
    changes = {p: _norm_change(x, y, width, p) / scale**2 for p in get_args(Pairing)}
    pairing: Pairing = min(changes, key=lambda p: changes[p])
    if changes[pairing] > NORM_SLACK:
        raise PecliInputError(
            f"not a rotation: paired half or pairs over dims 0–{width - 1}, the pairs' squared lengths change "
            f"by up to {changes['half']:.3g} and {changes['pairs']:.3g} of the largest (a rotation keeps them)"
        )
    i, j = _pairs(width, pairing)
    angles = np.arctan2(
        (x[..., i] * y[..., j] - x[..., j] * y[..., i]).sum(axis=1),
        (x[..., i] * y[..., i] + x[..., j] * y[..., j]).sum(axis=1),
    )
    tolerance = 16 * eps * scale
    recipe, max_abs = _named(x, y, angles, width, pairing, tolerance)
    return Rotation(width, d, pairing, angles, changes[pairing], recipe, max_abs, tolerance)


def differences(found: Rotation, expected: Recipe) -> list[str]:
    """How the rotation read back (A) differs from the rope recipe ``expected`` (B), in the kind's
    words: the pairing, the rotated width, then the cache's own parameters (base, scaling…)."""
    from pecli.kinds.rope import Rope

    if not isinstance(expected, Rope):
        return [f"kind rope (A) vs {expected.kind} (B)"]
    out = []
    if expected.layout != found.pairing:
        out.append(f"{found.pairing} (A) vs {expected.layout} (B) on dims 0–{found.width - 1}")
    if expected.dim != found.width:
        out.append(f"rotary on {found.width} of {found.dims} dims (A) vs {expected.dim} (B)")
    if found.recipe is not None:
        try:
            same_shape = replace(
                expected, layout=found.pairing, dim=found.width, length=found.angles.shape[0], part="cos", start=0
            )
        except Exception:  # an expected recipe that cannot take the shape found: its parameters say nothing more
            return out
        fitted = replace(found.recipe, dtype=same_shape.dtype)  # type: ignore[type-var]
        out += [w for w in fitted.changes(same_shape) if not w.startswith(("layout", "dim", "len"))]
    return out


def _pairs(width: int, pairing: Pairing) -> tuple[np.ndarray, np.ndarray]:
    k = np.arange(width // 2)
    return (k, k + width // 2) if pairing == "half" else (2 * k, 2 * k + 1)


def _norm_change(x: np.ndarray, y: np.ndarray, width: int, pairing: Pairing) -> float:
    i, j = _pairs(width, pairing)
    before = x[..., i] ** 2 + x[..., j] ** 2
    return float(np.abs(y[..., i] ** 2 + y[..., j] ** 2 - before).max())


def _named(
    x: np.ndarray, y: np.ndarray, angles: np.ndarray, width: int, pairing: Pairing, tolerance: float
) -> tuple[Recipe | None, float]:
    """The rope recipe whose cache rotates ``x`` into ``y`` within ``tolerance``: identify's answer
    for the cos table of ``angles``, else its nearest candidates, each proved by rotating."""
    from pecli.identification import identify
    from pecli.kinds.rope import Rope

    half = np.cos(angles)
    cos = np.concatenate([half, half], axis=1) if pairing == "half" else np.repeat(half, 2, axis=1)
    found = identify(cos.astype(np.float32), nearest=5, flip=False)
    candidates = [c.recipe for c in ([found.best] if found.best is not None else []) + found.nearest]
    best: tuple[Recipe | None, float] = (None, float("inf"))
    for recipe in candidates:
        if not isinstance(recipe, Rope) or recipe.part != "cos" or recipe.shape != cos.shape:
            continue
        try:
            c, s = recipe.build(), replace(recipe, part="sin").build()
        except Exception:  # a candidate that cannot take part=sin is no cache
            continue
        gap = float(np.abs(apply_rotary(x, c, s, pairing) - y).max())
        if gap < best[1]:
            best = (recipe, gap)
    return best if best[1] <= tolerance else (None, best[1])


__all__ = ["NORM_SLACK", "Rotation", "apply_rotary", "differences", "rotation_of"]
