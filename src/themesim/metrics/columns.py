"""The columns of the metric tables: written by the metrics job (steps/metrics.py,
metrics/sets/coverage.py), read by the report (report/tables.py). One list each, here, importing
the registry alone: the report's jobs read them without importing the metric families.
"""

from __future__ import annotations

from themesim.metrics import registry

# The coverage family's columns, one value per comparison and threshold (metrics/sets/coverage.py),
# and the one-to-one family's: in the registry's order (metrics/registry.py).
COVERAGE_COLUMNS = registry.family_columns("coverage")
ONE_TO_ONE_COLUMNS = registry.family_columns("one_to_one")
METRIC_COLUMNS = COVERAGE_COLUMNS + ONE_TO_ONE_COLUMNS

# The columns every reader of themes.csv / the pair tables needs, even with no rows.
PAIR_COLUMNS = ["method", "set_a", "set_b", "threshold"]
# comparisons.csv and sweep.csv: the pair, the threshold and op, then the coverage family
# (the other families' columns follow; the report needs these).
COMPARISON_COLUMNS = [*PAIR_COLUMNS, "op", *METRIC_COLUMNS]
# themes.csv: each theme's best match and its one-to-one partner ...
THEME_COLUMNS = [
    "method", "set_a", "set_b", "side", "theme_id", "theme_name", "best_match_id",
    "best_match_name", "best_similarity", "second_similarity", "hungarian_partner_id",
    "hungarian_partner_name", "hungarian_similarity",
]  # fmt: skip
# ... and its match category (the metrics job writes them; the report recomputes them).
THEME_KEY_COLUMNS = [*THEME_COLUMNS, "category_threshold", "gap_abs", "category"]
