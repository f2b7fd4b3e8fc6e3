"""Figures: similarity heatmaps, threshold sweeps, methods side by side, distributions,
the theme map, run consistency and the all-pairs overview; one module per figure family,
shared style in ``common``. Callers import from the module itself
(``from themesim.report.plots.heatmap import heatmap``): importing one family loads no other.

Uses the object-oriented matplotlib API with the Agg canvas only, so importing
this package never touches pyplot's global state or the user's backend.
Every ``*_figure`` function returns the :class:`~matplotlib.figure.Figure` (for
inspection in tests); the plain functions save it and return the PNG path.

A new figure family is a new module here (build the figure with ``common.new_figure`` and
save it with ``common.save_png``).
"""
