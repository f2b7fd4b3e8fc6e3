"""themesim: how well two sets of qualitative themes agree."""

__version__ = "0.1.0"
