"""What each metric of comparisons.csv is: its column, its one label, its interval, the
report's tables it is shown in, and whether it is at a glance (headline.csv).

The metrics job writes the coverage and one-to-one columns in the order of `METRICS`
(metrics/columns.py); the report's tables, figures and glossary links read labels and
sections from here. No imports: the report's jobs read it without the metric families.
"""

from __future__ import annotations

from dataclasses import dataclass

CLOPPER_PEARSON = "clopper-pearson"
JACKKNIFE = "two-sample jackknife-t with the matched share's reach"
ORDER_STATISTICS = "order statistics"


@dataclass(frozen=True)
class Metric:
    """One column of comparisons.csv. family: the code that writes it ("coverage" and
    "one_to_one": metrics/sets/coverage.py, in this order; others add their own columns);
    interval: how its `_ci_low`/`_ci_high` are computed (metrics/intervals/intervals.py), None for
    no interval; label: its name in the report's tables (None: not shown); term: the glossary
    entry that label links to; definition: that entry's text, for a metric with an entry of
    its own (report/glossary.py lists it); legend: its name in figures, where they spell
    it out."""

    column: str
    family: str
    interval: str | None = CLOPPER_PEARSON
    label: str | None = None
    term: str | None = None
    definition: str | None = None
    legend: str | None = None

    @property
    def glance(self) -> bool:
        return self.column in AT_A_GLANCE


METRICS = (
    Metric("n_a", "coverage", None),
    Metric("n_b", "coverage", None),
    Metric("n_match_pairs", "coverage"),
    Metric("raza_jaccard", "coverage", label="Raza Jaccard (for comparison)",
           term="raza-jaccard"),
    Metric("hit_rate", "coverage", label="Coverage A (hit rate)", term="coverage",
           legend="Hit rate (A covered)"),
    Metric("recall", "coverage", legend="Recall (A covered)"),
    Metric("precision", "coverage", label="Coverage B (precision)", term="coverage",
           legend="Precision (B covered)"),
    Metric("f1", "coverage", label="Coverage F1", term="coverage-f1"),
    Metric("bidir_max_sim_a", "coverage", JACKKNIFE),
    Metric("bidir_max_sim_b", "coverage", JACKKNIFE),
    Metric("similarity_f1", "coverage", "harmonic mean of two such intervals at 97.5 %",
           legend="Similarity F1"),
    Metric("hungarian_n_matched", "one_to_one", label="One-to-one pairs",
           term="one-to-one-pairs"),
    Metric("hungarian_coverage_a", "one_to_one", label="One-to-one share A",
           term="one-to-one-share"),
    Metric("hungarian_coverage_b", "one_to_one", label="One-to-one share B",
           term="one-to-one-share"),
    Metric("hungarian_f1", "one_to_one", label="Hungarian F1", term="hungarian-f1",
           legend="Hungarian F1 (one-to-one)"),
    Metric("true_jaccard", "one_to_one", label="True Jaccard", term="true-jaccard"),
    Metric("matched_sim_min", "one_to_one", ORDER_STATISTICS),
    Metric("matched_sim_q1", "one_to_one", ORDER_STATISTICS),
    Metric("matched_sim_median", "one_to_one", ORDER_STATISTICS, label="Matched sim. median",
           term="matched-sim"),
    Metric("matched_sim_q3", "one_to_one", ORDER_STATISTICS),
    Metric("matched_sim_max", "one_to_one", ORDER_STATISTICS),
    Metric("maxcard_n_matched", "one_to_one"),
    Metric("maxcard_coverage_a", "one_to_one"),
    Metric("maxcard_coverage_b", "one_to_one"),
    Metric("maxcard_f1", "one_to_one", label="Max-card. F1", term="maxcard-f1",
           legend="Max-cardinality F1"),
    Metric("maxcard_true_jaccard", "one_to_one"),
    # the null model's (metrics/sets/nulls.py), put in by metrics/comparison.py
    Metric("significant_match_rate", "nulls", label="Significant match rate",
           term="significant-match-rate"),
    # the paraphrase ceiling's (metrics/sets/ceiling.py), when it ran
    Metric("ceiling_median", "ceiling", None, label="Ceiling median", term="ceiling"),
    Metric("matched_sim_pct_of_ceiling", "ceiling", None, label="Matched sim. % of ceiling",
           term="ceiling"),
    Metric("normalised_alignment", "ceiling", None, label="Normalised alignment",
           term="ceiling"),
)  # fmt: skip

BY_COLUMN = {m.column: m for m in METRICS}

# The report's metric tables, each its columns in the order shown.
SECTIONS = {
    # the per-method table (after θ and the set sizes): few enough columns for a phone
    "method_table": (
        "hungarian_n_matched", "hungarian_f1", "true_jaccard", "f1", "hit_rate", "precision",
        "maxcard_f1", "raza_jaccard",
    ),
    # "What changed across thresholds", read from the sweep
    "threshold_changes": (
        "hungarian_f1", "f1", "true_jaccard", "hit_rate", "precision", "raza_jaccard",
    ),
}  # fmt: skip

# At a glance: headline.csv's metric columns (after the pair, θ and op), in its order; the
# report's at-a-glance table and headline.tex show the same numbers.
AT_A_GLANCE = (
    "hungarian_f1", "f1", "matched_sim_median", "matched_sim_q1", "matched_sim_q3",
    "hungarian_coverage_a", "hungarian_coverage_b", "raza_jaccard", "hungarian_f1_ci_low",
    "hungarian_f1_ci_high", "significant_match_rate",
)  # fmt: skip


def family_columns(family: str) -> list[str]:
    """The columns one family writes, in comparisons.csv's order."""
    return [m.column for m in METRICS if m.family == family]


def label(column: str) -> str:
    """A metric's name in the report's tables."""
    return BY_COLUMN[column].label or column


def legend(column: str) -> str:
    """A metric's name in figures: its legend where one is given, else its label."""
    m = BY_COLUMN.get(column)
    return column if m is None else m.legend or m.label or column


def section(name: str) -> list[tuple[str, str]]:
    """(label, column) of one report table's metrics, in the order shown."""
    return [(label(c), c) for c in SECTIONS[name]]


def header_terms() -> dict[str, str]:
    """Each metric label -> the glossary entry it links to."""
    return {m.label: m.term for m in METRICS if m.label and m.term}


def glossary_entries() -> list[tuple[str, str, str]]:
    """(key, term, definition) of the metrics that bring a glossary entry of their own."""
    return [(m.term, m.label, m.definition) for m in METRICS if m.definition]
