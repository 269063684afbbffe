"""Numeric kernels the kinds build their tables with.

- ``exact``: ``sin``/``cos`` of ``p·ω`` from a double-double angle, rounded once (the reference);
- ``rotation``: the same values at memory speed by exact block rotations (float32/float16);
- ``pipelines``: the steps of the frameworks' float32/float64 pipelines, for their emulations;
- ``threads``: row blocks over both cores, and overlapped producing/writing.
"""
