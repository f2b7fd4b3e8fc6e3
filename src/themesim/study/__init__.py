"""The parts of a config's study that themesim.config.prepare checks and works out, one
concern per module: names, theme sets, groups of sets, methods."""
