"""``pecli diff`` as a library: compare two tables and say why they differ.

* :mod:`pecli.diff.statistics`: the element statistics, streamed block by block (exact, every row);
* :mod:`pecli.diff.report`: :class:`Comparison` and :func:`compare`, the report ``diff`` prints;
* :mod:`pecli.diff.causes`: the likely causes, tested on a sample of rows;
* :mod:`pecli.diff.fitted`: causes as the difference of two recipes, each table fitted by its kind;
* :mod:`pecli.diff.transforms`: the kind-independent transformations (columns permuted, rows
  shifted or padded, a grid or the table transposed, a constant multiplier, float32 rounding);
* :mod:`pecli.diff.evidence`: the sample the causes are tested on and the criteria they must meet.
"""

from __future__ import annotations

from pecli.diff.causes import explain
from pecli.diff.report import Comparison, compare

__all__ = ["Comparison", "compare", "explain"]
