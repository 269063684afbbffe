"""Numeric kernels the kinds build their tables with.

- ``exact``: ``sin``/``cos`` of ``p·ω`` from a double-double angle, rounded once (the reference);
- ``rotation``: the same values at memory speed by exact block rotations (float32/float16);
- ``pipelines``: the steps of the frameworks' float32/float64 pipelines, for their emulations;
- ``halves``: 16-bit tables (bfloat16, float16) rounded once from float32 rows, the few cells
  float32 cannot decide from float64;
- ``draws``: counter-based normal draws (SplitMix64 and a ziggurat), for learned tables;
- ``compiled``: whether a job uses the numba loops (``jit``, ``jit_draws``: the ``fast`` extra);
- ``threads``: row blocks over both cores, and overlapped producing/writing.
"""
