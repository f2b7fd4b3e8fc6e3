"""Every results path of a study, once: wildcard patterns ({set}, {method}, {pair}) and the
fixed files. The rules and themesim.plan read them from here; nothing here imports anything.
"""

# A comparison's name in its files' names: "a__vs__b".
PAIR_SEP = "__vs__"


def pair_name(a: str, b: str) -> str:
    return f"{a}{PAIR_SEP}{b}"


MANIFEST = "manifest.csv"  # beside a job's per-pair files, listing them (io/manifest.py)

# Wildcard patterns of the per-set, per-method and per-pair files.
THEMES = "results/themes/{set}.parquet"
SEGMENTS = "results/transcripts/segments.parquet"
EMBEDDINGS = "results/embeddings/{method}/{set}.parquet"
KEYWORDS = "results/keyword_embeddings/{method}/{set}.parquet"
NULLS_DIR = "results/nulls/{method}"  # the word-salad pools of a method's B sets
NULLS = f"{NULLS_DIR}/{{set}}.parquet"
SEGMENT_EMBEDDINGS = "results/segment_embeddings/{method}.parquet"
SIMILARITY = "results/similarity/{method}"  # {pair}.parquet and the manifest
METRICS = "results/metrics/{method}"
# Each method's thresholds and scale as its metrics job resolved them (metrics.thresholds):
# what the plots, grounding and report read, never the config's thresholds.
THRESHOLDS = f"{METRICS}/thresholds.csv"
PLOTS = "results/plots/{method}"
LABELS = "results/segments/{method}"
LABEL = f"{LABELS}/{{set}}.parquet"
QUOTES = f"{LABELS}/{{set}}.quotes.csv"
CALIBRATION = "results/calibration/{method}"  # .csv beside the folder
CEILING = "results/ceiling/{method}.parquet"
PARAPHRASES = "results/ceiling/paraphrases.csv"
LLM_SCORES = "results/coder/llm/{set}.parquet"
CODER_AGREEMENT = "results/grounding/coder_agreement.csv"
# The report's tables and the figures of metric tables (report_parts, summary_report).
HEADLINE = {
    "csv": "results/report/headline.csv",
    "tex": "results/report/headline.tex",
    "png": "results/report/headline_intervals.png",
    "svg": "results/report/headline_intervals.svg",
}
VERDICTS = "results/report/verdicts.csv"  # each set against the reference and a 2nd analyst
WORKBOOK = "results/report/tables.xlsx"
SIDE_BY_SIDE = {
    "png": "results/plots/methods_side_by_side.png",
    "svg": "results/plots/methods_side_by_side.svg",
}
SUMMARY = {"html": "results/report/summary.html", "md": "results/report/summary.md"}
# Accumulating caches of LLM calls: inputs of no rule, so a failed job never deletes them.
CACHES = {
    "judge": "results/cache/judge.sqlite",
    "generate": "results/cache/generate.sqlite",
    "paraphrase": "results/cache/paraphrase.sqlite",
    "coder": "results/cache/coder.sqlite",
}

# The files of each method's folders: each file name once.
COMPARISONS = f"{METRICS}/comparisons.csv"
THEME_TABLE = f"{METRICS}/themes.csv"
SWEEP = f"{METRICS}/sweep.csv"
SETS = f"{METRICS}/sets.csv"
SETS_THEMES = f"{METRICS}/sets_themes.csv"
DECISIONS = f"{METRICS}/decision_changes.csv"
TRANSPORT = f"{METRICS}/transport"  # {pair}.parquet and the manifest
TRANSPORT_PAIR = f"{TRANSPORT}/{{pair}}.parquet"
TRANSPORT_MANIFEST = f"{TRANSPORT}/{MANIFEST}"
SPLITS_JOINS = f"{TRANSPORT}/splits_joins.csv"
RUNS = f"{METRICS}/runs.csv"
RUNS_MATRIX = f"{METRICS}/runs_matrix.parquet"
GROUNDING = f"{METRICS}/grounding.csv"
GROUNDING_PAIRS = f"{METRICS}/grounding_pairs.csv"
GROUNDING_TRANSCRIPTS = f"{METRICS}/grounding_pairs_transcripts.parquet"
GROUNDING_LONG = f"{METRICS}/grounding"  # {pair}.parquet
GROUNDING_PAIR = f"{GROUNDING_LONG}/{{pair}}.parquet"
SIMILARITY_PAIR = f"{SIMILARITY}/{{pair}}.parquet"
SIMILARITY_MANIFEST = f"{SIMILARITY}/{MANIFEST}"
CALIBRATION_TABLE = f"{CALIBRATION}.csv"
ISOTONIC = f"{CALIBRATION}/isotonic.csv"
CALIBRATION_SCORES = f"{CALIBRATION}/scores.csv"
CROSSFIT = f"{CALIBRATION}/crossfit.csv"
# Each method's metric tables that `all` asks for.
METRIC_TABLES = (COMPARISONS, THEME_TABLE, SWEEP, SETS, THRESHOLDS)
# Figures without their extension (.png, and .svg beside it).
CALIBRATION_PLOT = f"{CALIBRATION}/calibration"
RUNS_PLOT = f"{PLOTS}/run_consistency"
HEATMAP = f"{PLOTS}/{{pair}}_heatmap"  # the reference's pairs; the others' under HEATMAPS
HEATMAPS = f"{PLOTS}/heatmaps"
OTHER_HEATMAP = f"{HEATMAPS}/{{pair}}_heatmap"
OVERVIEW = f"{HEATMAPS}/overview"
GROUNDING_PLOTS = f"{PLOTS}/grounding"  # the grounding job's figures
GROUNDING_IOU = f"{GROUNDING_PLOTS}/{{pair}}_iou"
GROUNDING_SCATTER = f"{GROUNDING_PLOTS}/text_vs_data"
