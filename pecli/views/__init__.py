"""Human views for the terminal and for notebooks, built with Rich.  Machine output never passes
through here.

``console`` holds the pieces every view is made of (lines, grids, escapes, HTML and text export);
``table`` the view of a table's values (what ``generate`` and ``inspect`` print, and what a notebook
shows of a :class:`~pecli.table.Table` or a recipe).  The other reports are in :mod:`pecli.render`.
Nothing here imports a table, a kind or a format at run time: a table and a recipe can show
themselves (``_repr_html_``) without an import cycle.
"""
