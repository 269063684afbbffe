"""The bits every seeded draw starts from: SplitMix64's constants and how a cell is numbered.

Shared by the NumPy draws (:mod:`pecli.kernels.draws`) and their compiled twin
(:mod:`pecli.kernels.jit_draws`), which must make the same bits; neither imports the other's
module for them (the compiled one is loaded by name when numba is there)."""

from __future__ import annotations

#: SplitMix64's increment (the golden ratio in 64 bits) and its two mixing multipliers (Vigna's
#: ``splitmix64.c``).
GAMMA, MIX1, MIX2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB
#: Bits per column index in a cell number: ``c = row·2³² + column``.
COLUMN_BITS = 32

__all__ = ["COLUMN_BITS", "GAMMA", "MIX1", "MIX2"]
