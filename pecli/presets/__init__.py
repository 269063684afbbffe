"""Named recipes: the tables real frameworks build, as data (one module per family of kinds).

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

from pecli.errors import RecipeError
from pecli.presets import biases, diffusion, grids, learned, multimodal, rotary, sinusoids, vision
from pecli.presets.base import Preset

#: Every preset, in the order ``pecli presets`` lists them (and identify names ties).
_PRESETS = [
    *sinusoids.PRESETS,
    *grids.PRESETS,
    *rotary.PRESETS,
    *multimodal.PRESETS,
    *biases.PRESETS,
    *learned.PRESETS,
    *diffusion.PRESETS,
    *vision.PRESETS,
]

PRESETS: dict[str, Preset] = {p.name: p for p in _PRESETS}


def get_preset(name: str) -> Preset:
    """The preset named ``name`` (``pecli presets`` lists them): ``get_preset("llama3").recipe(length=8192)``
    is its recipe at another size.  An unknown name is a :class:`~pecli.errors.RecipeError` naming the nearest."""
    try:
        return PRESETS[name]
    except KeyError:
        import difflib

        close = difflib.get_close_matches(name, PRESETS, n=3)
        hint = f"did you mean {' or '.join(close)}?" if close else "see `pecli presets`"
        raise RecipeError(f"unknown preset {name!r}: {hint}") from None


__all__ = ["PRESETS", "Preset", "get_preset"]
