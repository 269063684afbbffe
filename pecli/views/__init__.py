"""Human views for the terminal and for notebooks, built with Rich.  Machine output never passes
through here.

``console`` holds the pieces every view is made of (lines, grids, escapes, numbers, HTML and text
export); ``table`` the view of a table's values (what ``generate`` and ``inspect`` print, and what a
notebook shows of a :class:`~pecli.table.Table` or a recipe).  Those two import no table, kind or
format at run time: a table and a recipe can show themselves (``_repr_html_``) without an import
cycle.  Each other report has its module, taking the data its feature returns: ``inspect``,
``identify`` (an :class:`~pecli.identification.Identification`), ``diff`` (a
:class:`~pecli.diff.Comparison`), ``checkpoints`` (a whole checkpoint's scan and comparison),
``analyze`` and ``presets``.
"""
