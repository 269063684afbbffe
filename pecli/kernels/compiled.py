"""Whether a table's exact values come from the compiled kernel (numba, the ``fast`` extra).

:func:`exact_sincos` and :func:`flat_sincos` hand out :mod:`pecli.kernels.jit`'s loops when numba
is installed and the work is large enough to repay loading it, else ``None`` (the NumPy kernel
then runs, with the same bits).  Loading numba and the cached machine code costs about 0.6 s (1.5 s on the first run
after an install, which compiles it into numba's cache), so small tables never pay it:
``pecli generate --len 120 --dim 8`` does not import numba.

The numba modules are ``pecli.kernels.jit*`` (``jit``: the sinusoid kernels and the 16-bit
rounding; ``jit_draws``: the learned tables' draws); only this module imports them.

``PECLI_COMPILED=0`` turns the compiled kernel off, ``PECLI_COMPILED=1`` uses it at any size (tests,
benchmarks).
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
from collections.abc import Callable
from types import ModuleType

#: The numba modules, ``pecli.kernels.<name>``: the only modules loaded by name at run time here.
COMPILED_MODULES = ("jit", "jit_draws")
#: (position, frequency) pairs from which loading numba pays: the NumPy kernel takes ~1 s for
#: 2**25 pairs on two cores, the compiled one ~0.1 s after its ~0.6 s load.
MIN_PAIRS = 1 << 25


def exact_sincos(pairs: int) -> Callable[..., None] | None:
    """The compiled ``sincos_into(positions, w_hi, w_lo, sin_out, cos_out)`` for a job of ``pairs``
    (position, frequency) pairs, or ``None``: numba missing or broken, the job too small, or
    ``PECLI_COMPILED=0``."""
    jit = _wanted(pairs)
    return None if jit is None else jit.sincos_into


def flat_sincos(values: int) -> Callable[..., None] | None:
    """The compiled ``sincos_flat(x, w_hi, w_lo, sin_out, cos_out)`` (one frequency along
    contiguous arrays: a float32 pipeline's angles) for a job of ``values`` angles, or ``None``."""
    jit = _wanted(values)
    return None if jit is None else jit.sincos_flat


def pipeline32(values: int) -> Callable[..., None] | None:
    """The compiled ``pipeline32_into(positions, inv, sin_out, cos_out)`` (a float32 pipeline's
    sin and cos of ``position·inv_freq``, written as float32) for ``values`` angles, or ``None``."""
    jit = _wanted(values)
    return None if jit is None else jit.pipeline32_into


def rounding16(values: int) -> Callable[..., int] | None:
    """The compiled ``round16_into(bits, out, half, check, doubts)`` (float32 bits rounded to
    float16 or bfloat16 bits in one pass, listing the cells it cannot decide) for a table of
    ``values`` cells, or ``None``."""
    jit = _wanted(values)
    return None if jit is None else jit.round16_into


def compiled_module(name: str, values: int) -> ModuleType | None:
    """The numba module ``pecli.kernels.<name>`` for a job of ``values`` values, or ``None``: numba
    missing or broken, the job too small to repay loading it, or ``PECLI_COMPILED=0``."""
    if name not in COMPILED_MODULES:
        raise ValueError(f"no compiled module {name!r}: pecli has {', '.join(COMPILED_MODULES)}")
    wanted = os.environ.get("PECLI_COMPILED", "")
    if wanted == "0" or (wanted != "1" and values < MIN_PAIRS):
        return None
    return _load(name)


#: Address space that loading numba needs (LLVM, and the BLAS that numba loads through SciPy
#: when SciPy is installed: ~330 MB mapped on 2 cores, more with more BLAS threads).  Under a
#: tighter ``ulimit -v`` the load can fail inside the BLAS in a loop that never ends, so it is
#: not tried; the NumPy kernels give the same bits.
ADDRESS_SPACE_FOR_NUMBA = 1 << 30


def _wanted(pairs: int) -> ModuleType | None:
    return compiled_module("jit", pairs)


@functools.cache
def _load(name: str) -> ModuleType | None:
    from pecli.resources import address_space_left

    left = address_space_left()
    if left is not None and left < ADDRESS_SPACE_FOR_NUMBA and "numba" not in sys.modules:
        return None
    try:
        return importlib.import_module(f"pecli.kernels.{name}")
    except Exception:  # numba absent, or unable to compile here: the NumPy kernel gives the same bits
        return None


__all__ = ["MIN_PAIRS", "compiled_module", "exact_sincos", "flat_sincos", "pipeline32", "rounding16"]
