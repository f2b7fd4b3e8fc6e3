"""The columns of the metric tables: written by the metrics job (steps/metrics.py,
metrics/coverage.py), read by the report (report/tables.py). One list each, here, with no
imports: the report's jobs read them without importing the metric families.
"""

from __future__ import annotations

# The coverage family's columns, one value per comparison and threshold (metrics/coverage.py).
COVERAGE_COLUMNS = [
    "n_a",
    "n_b",
    "n_match_pairs",
    "raza_jaccard",
    "hit_rate",
    "recall",
    "precision",
    "f1",
    "bidir_max_sim_a",
    "bidir_max_sim_b",
    "similarity_f1",
]
ONE_TO_ONE_COLUMNS = [
    "hungarian_n_matched",
    "hungarian_coverage_a",
    "hungarian_coverage_b",
    "hungarian_f1",
    "true_jaccard",
    "matched_sim_min",
    "matched_sim_q1",
    "matched_sim_median",
    "matched_sim_q3",
    "matched_sim_max",
    "maxcard_n_matched",
    "maxcard_coverage_a",
    "maxcard_coverage_b",
    "maxcard_f1",
    "maxcard_true_jaccard",
]
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
