"""The report's name of each table column, for the workbook's headers ("Hungarian F1
(hungarian_f1)"): a reader of tables.xlsx meets the words of summary.html, with the column id
beside them. No imports beyond the registry: the report_parts job reads it."""

from __future__ import annotations

from themesim.metrics import registry

# Columns whose report name is not a metric label of the registry.
NAMES = {
    "method": "Method",
    "set_a": "A (reference)",
    "set_b": "B",
    "set": "Set",
    "threshold": "Threshold θ",
    "op": "Match rule",
    "n_a": "Themes in A",
    "n_b": "Themes in B",
    "n_themes": "Themes",
    "hungarian_f1_ci_low": "Hungarian F1 95 % CI low",
    "hungarian_f1_ci_high": "Hungarian F1 95 % CI high",
    "matched_sim_q1": "Matched sim. Q1",
    "matched_sim_q3": "Matched sim. Q3",
    "ci_method": "What the intervals assume",
    "contract": "Outside the validated design",
    # verdicts.csv and headline.csv's verdict columns
    "role": "Role",
    "second_analyst": "Other analysts",
    "agreement": "Agreement",
    "human_human": "Analysts' agreement (human–human)",
    "difference": "Difference (generator − analysts)",
    "difference_ci_low": "Difference interval low",
    "difference_ci_high": "Difference interval high",
    "difference_ci_level": "Difference interval level",
    "margin": "Margin",
    "verdict": "Verdict",
    "evidence": "Route",
    "primary": "Primary",
    "analysis": "Analysis",
    "generator_runs": "Generator's runs",
    "n_runs": "Runs",
    "n_analysts": "Analysts",
    "common_size": "Themes a set read at (k)",
    "n_themes_generator": "Themes a run",
    "n_themes_analysts": "Themes an analyst",
    "p_value": "p (its word's claim)",
    "p_adjusted": "p (Benjamini–Hochberg)",
    "withheld": "Why no word",
    "power_equivalent": "Power: equivalent",
    "power_non_inferior": "Power: equivalent, non-inferior or better",
    "second_analyst_power": "Power with a second analyst",
    # sets.csv, runs.csv, decision_changes.csv (the report's own tables' headers)
    "sc_mean": "Coherence SC (mean)",
    "sd_mean": "Distinctiveness SD (mean)",
    "semdiv": "SemDiv",
    "npmi_mean": "NPMI (mean)",
    "ncs": "NCS",
    "run_consistency": "Run consistency",
    "mean_sim_to_others": "Mean sim. to others",
    "raw_threshold": "Raw θ",
    "z_threshold": "z θ",
    "n_both": "Both",
    "n_only_raw": "Only raw",
    "n_only_z": "Only z",
    "only_raw_pairs": "Pairs only raw keeps",
    "only_z_pairs": "Pairs only z keeps",
    # themes.csv
    "theme_id": "Theme id",
    "theme_name": "Theme",
    "best_match_name": "Best match",
    "best_similarity": "Best",
    "second_similarity": "Second",
    "hungarian_partner_name": "Hungarian partner",
    "hungarian_similarity": "Partner sim.",
    "gap_abs": "Gap",
    "category": "Category",
    # grounding.csv
    "grounding_basis": "Basis",
    "text_hungarian_f1": "Text Hungarian F1",
    "grounded_hungarian_f1": "Grounded Hungarian F1",
    "ami": "AMI",
    "text_pairs_median_kappa": "Median κ (text pairs)",
    "text_pairs_krippendorff_alpha": "Krippendorff α (text pairs)",
    "cu_alpha_codebooks": "Agreement across codebooks",
    "text_data_spearman": "Text–data ρ",
    "data_coverage_a": "Passages labelled A",
    "data_coverage_b": "Passages labelled B",
    "pooled_kappa": "Pooled κ",
    "pooled_alpha": "Pooled α",
}
_ENDS = {
    "_ci_low": "95 % CI low",
    "_ci_high": "95 % CI high",
    "_icc_low": "ICC sensitivity low",
    "_icc_high": "ICC sensitivity high",
    "_bound_low": "worst-case bound low",
    "_bound_high": "worst-case bound high",
}


def report_name(column: str) -> str | None:
    """The report's name of a column id, or None where the report shows none."""
    if column in NAMES:
        return NAMES[column]
    m = registry.BY_COLUMN.get(column)
    if m is not None and m.label:
        return m.label
    for end, what in _ENDS.items():
        if column.endswith(end):
            base = report_name(column.removesuffix(end))
            return f"{base} {what}" if base else None
    return None


def workbook_header(column) -> str:
    """A workbook header: the report's name with the column id beside it, or the id alone."""
    column = str(column)
    name = report_name(column)
    return f"{name} ({column})" if name and name != column else column
