"""The report's glossary: every term a table header uses, defined once, in plain words.

`GLOSSARY` is the list the report shows (anchor ``g-<key>``); `HEADER_TERMS` maps each table
header the report writes to its entry, so every header links to its definition
(`term_key`). Formulas live in docs/metrics.md; these are the words a reader needs.
"""

from __future__ import annotations

from themesim.metrics.registry import glossary_entries, header_terms

# (key, term, definition), in reading order: the basics first, then each family.
GLOSSARY = [
    (
        "method",
        "Method",
        "One way of scoring how alike two themes are: an embedding model "
        "(MiniLM, mpnet), TF-IDF, an LLM judge or scores made elsewhere. Each method has its own "
        "scale, so its figures are read on their own and never averaged with another's.",
    ),
    (
        "comparison",
        "Comparison (A vs B)",
        "Two theme sets set side by side: A, the reference, "
        "gives the rows of every matrix; B is compared with it.",
    ),
    (
        "generator",
        "Generator",
        "The thing judged: an LLM configuration over its runs (a run group), or one theme set "
        "in no group. Its verdict pools its runs; each run is also compared on its own.",
    ),
    (
        "analysts",
        "Analysts",
        "The human analysts of the reference group (reference_group): their agreement with "
        "each other is the yardstick a generator is held to. With one analyst there is no "
        "yardstick, so no verdict word.",
    ),
    (
        "primary",
        "Primary comparison",
        "The one comparison per generator fixed in the config before the data "
        "(verdict.primary: a method, its threshold and a route) that the answer leads with. "
        "Every other method, threshold and route is a sensitivity analysis.",
    ),
    (
        "route",
        "Route",
        "What counts as two themes agreeing in a verdict: matched (a pair reaching θ; the "
        "default), strength (the similarity itself, or its calibrated P(match)) or segments "
        "(κ over the transcript passages both themes label).",
    ),
    (
        "agreement",
        "Agreement",
        "How far two theme sets agree, read from both sides at one set size: the mean over "
        "both sets' themes of the evidence (the route) each theme's best partner among k "
        "themes of the other set gives, k the smaller set, so a longer set gets no extra "
        "chances (docs/verdicts.md).",
    ),
    (
        "difference",
        "Difference",
        "The generator's mean agreement with the analysts minus the analysts' mean agreement "
        "with each other: 0 is as good as a human, below 0 worse. Shown with its 90 % "
        "interval (an equivalence test at α 0.05 on each side).",
    ),
    (
        "margin",
        "Margin",
        "The largest difference still called equivalent, fixed in the config before the data "
        "(equivalence.margin, default 0.10: one theme in ten), in the primary route's units.",
    ),
    (
        "verdict",
        "Verdict words",
        "Read off the difference's 90 % interval against the margin: equivalent (wholly "
        "within ±margin), better or worse (wholly above or below 0), non-inferior (wholly "
        "above −margin), inconclusive (none of these: the data cannot tell).",
    ),
    (
        "calibrated-p",
        "Calibrated P(match)",
        "A similarity turned into the chance that a person would call the pair the same "
        "idea, by an isotonic fit to rated pairs (calibration.pairs, docs/thresholds.md).",
    ),
    (
        "flag",
        "Flag ⚑",
        "Another figure of this report points another way on this row; the flag's note "
        "says which figure to trust, and its number is on the row.",
    ),
    (
        "missed-added",
        "Missed, added, shared",
        "Missed: a reference theme no theme of the set reaches θ with. Added: a theme of "
        "the set no reference theme reaches θ with. Shared: the one-to-one pairs reaching θ.",
    ),
    (
        "interval-assumes",
        "What an interval assumes",
        "Themes independent: each theme one unit, no groups declared (undeclared domains "
        "can make such an interval too narrow). Clusters seen: matches cluster, so the "
        "interval is widened by a design effect; the plain exact interval is shown beside "
        "it. Declared groups: clustered by the themes' groups.",
    ),
    (
        "text-compared",
        "Text compared",
        "What each theme is embedded or scored from (text_template): its name only, or "
        "its name and description. Sets compared in different kinds of text score lower "
        "for that alone.",
    ),
    (
        "theta",
        "Threshold θ",
        "The score a pair of themes needs to count as a match "
        "(S ≥ θ, or S > θ with op gt), one per method; figures are given at each configured θ.",
    ),
    (
        "similarity",
        "Similarity S",
        "A method's score of one theme of A against one theme of "
        "B: a cosine for embeddings and TF-IDF, the judge's 0–1 score for the LLM judge.",
    ),
    (
        "hungarian-f1",
        "Hungarian F1",
        "The headline figure. Themes are paired one to one (each "
        "theme at most one partner; the pairing with the largest total similarity, found by the "
        "Hungarian algorithm); k pairs reach θ. F1 = 2k / (n_A + n_B): 1 when every theme of both "
        "sets has a matching partner. With sets of different sizes it cannot reach 1: its most is "
        "2·min(n_A, n_B) / (n_A + n_B), 0.75 for 10 against 6 themes.",
    ),
    (
        "ci",
        "95 % CI (interval)",
        "The range the figure would plausibly take on another "
        "sample of themes; for Hungarian F1 an exact (Clopper–Pearson) interval on the matched "
        "pairs, widened where matches cluster. The verdicts use 90 % intervals (an equivalence "
        "test at α 0.05 on each side).",
    ),
    ("one-to-one-pairs", "One-to-one pairs", "k: the Hungarian pairs whose similarity reaches θ."),
    (
        "one-to-one-share",
        "One-to-one share A / B",
        "k / n_A and k / n_B: the share of A's (B's) "
        "themes that have a one-to-one partner reaching θ. Not a coverage: each theme counts with "
        "one partner at most.",
    ),
    (
        "true-jaccard",
        "True Jaccard",
        "k / (n_A + n_B − k): the one-to-one pairs over the themes of either set.",
    ),
    (
        "coverage",
        "Coverage A (hit rate), coverage B (precision)",
        "Coverage lets one theme "
        "match several: coverage A (the hit rate) is the share of A's themes with any B theme at "
        "or above θ; coverage B (precision) the share of B's themes with any A theme there. "
        "Coverage is used for this family only.",
    ),
    (
        "coverage-f1",
        "Coverage F1",
        "The harmonic mean of the hit rate and precision: higher "
        "than Hungarian F1 when one theme of a set matches several of the other.",
    ),
    (
        "maxcard-f1",
        "Max-card. F1",
        "Hungarian F1 with the one-to-one pairing that keeps the "
        "most pairs at or above θ (rather than the largest total similarity).",
    ),
    (
        "raza-jaccard",
        "Raza Jaccard",
        "Matched pairs / (n_A · n_B): the share of all theme pairs "
        "at or above θ, as Raza et al. (2025) report it. Shown for comparison only; it "
        "falls as sets grow even when they agree. Above 0.4 it says the method matches "
        "almost everything.",
    ),
    (
        "matched-sim",
        "Matched sim. median / IQR",
        "The median (and quartiles Q1–Q3) of the "
        "similarity of the one-to-one pairs that reach θ: how close the matches are.",
    ),
    (
        "significant-match-rate",
        "Significant match rate",
        "Share of A's themes whose best "
        "match beats a word-salad null (texts of the same words in random order) at a false "
        "discovery rate of 0.05 (docs/nulls.md).",
    ),
    (
        "gap",
        "Gap, category",
        "Gap: a theme's best similarity minus its second best; large "
        "when the match is clear. Category: confident unique (a match, clear), ambiguous (a match "
        "with a close second), clear but poor, no good match.",
    ),
    (
        "within-set-z",
        "Within-set z",
        "A pair's similarity measured against how alike each "
        "set's own themes are: z = (S − the theme's mean similarity to its own set's other "
        "themes) / their spread, the smaller of A's and B's. z ≥ 2 means the pair stands out "
        "against both sets' own spread (docs/thresholds.md).",
    ),
    (
        "z-theta",
        "z θ, raw θ",
        "The thresholds of the raw-versus-z table: raw θ on the "
        "method's scale, z θ (default 2) on the within-set z scale. Both, only raw, only z: the "
        "Hungarian pairs each rule keeps.",
    ),
    (
        "sc",
        "SC (coherence)",
        "Semantic coherence of a theme's keywords (0–1): how alike its "
        "keywords are, weighted by their centrality. High: the keywords say one thing.",
    ),
    (
        "sd",
        "SD (distinctiveness)",
        "Semantic distinctiveness of a set: the mean of "
        "(1 − cosine) / 2 over pairs of its themes. High: the themes differ from each other.",
    ),
    (
        "semdiv",
        "SemDiv",
        "Semantic diversity: half SD, half how evenly the transcript "
        "passages spread over the set's themes (normalised entropy).",
    ),
    (
        "npmi",
        "NPMI",
        "Normalised pointwise mutual information of a theme's keywords in the "
        "transcripts (−1 to 1): above 0 when its keywords occur together more often than "
        "chance.",
    ),
    (
        "ncs",
        "NCS, run consistency",
        "Run consistency: the mean similarity between repeated "
        "runs of one process (a run group). NCS: one run's mean similarity to the others, "
        "mapped to 0–1 ((mean + 1) / 2).",
    ),
    (
        "basis",
        "Basis coder / evidence",
        "Where the passages a theme labels come from. "
        "coder: one automatic coder labels both sets' themes on the transcripts (like with like). "
        "evidence: each set's own coding and quotes (only sets that have them).",
    ),
    (
        "grounded-f1",
        "Text / grounded Hungarian F1",
        "Text: Hungarian F1 on the theme texts, "
        "as above. Grounded: the same on the passages, pairing themes by segment IoU (a pair "
        "matches at IoU ≥ grounding.min_iou).",
    ),
    ("iou", "Segment IoU", "Of the passages either theme labels, the share both label."),
    (
        "ami",
        "AMI",
        "Adjusted mutual information of the two sets' codings of the passages: "
        "0 is chance, 1 the same partition. With few transcripts it runs high (docs/grounding.md).",
    ),
    (
        "kappa",
        "κ (Cohen's kappa), Krippendorff α",
        "Agreement of two codings of the same "
        "passages beyond chance: 0 is chance, 1 perfect; below about 0.4 is weak.",
    ),
    (
        "codebooks",
        "Agreement across codebooks",
        "Krippendorff's cuα of the two sets' top-1 codes of the passages, with partial credit "
        "for two different codes by their calibrated P(match): chance sits at or below 0, 1 is "
        'perfect; without rated pairs it is not computed (docs/metrics.md, "Agreement across '
        'codebooks").',
    ),
    (
        "rho",
        "Text–data ρ",
        "Spearman correlation, over every pair of themes, between their "
        "text similarity and their segment IoU: do themes that read alike also label the same "
        "passages?",
    ),
    (
        "passages",
        "Passages labelled A / B",
        "The share of the transcript segments with at least one label of the set.",
    ),
    (
        "coder",
        "Coder, prevalence",
        "The automatic coder that labels passages with themes. "
        "Its κ against a human coding of the same set bounds what the data figures can show. "
        "Prevalence: the share of passages a coding labels with a theme.",
    ),
    (
        "ceiling",
        "Paraphrase ceiling",
        "How close an LLM's paraphrases of a reference theme "
        "come to it on the method's scale; normalised alignment puts matched similarity between "
        "the word-salad null (0) and that ceiling (1).",
    ),
]

# a metric with an entry of its own brings it (metrics/registry.py)
GLOSSARY += glossary_entries()
GLOSSARY_KEYS = {k for k, _, _ in GLOSSARY}

# A table header (as the report writes it, before any method name in brackets) -> its entry;
# a metric's label links to the entry the registry names.
HEADER_TERMS = {
    **header_terms(),
    "Method": "method",
    "Comparison": "comparison",
    "θ": "theta",
    "Threshold(s) θ": "theta",
    "A / B themes": "comparison",
    "A": "comparison",
    "B": "comparison",
    "Hungarian F1 95 % CI": "ci",
    "Matched sim. IQR (Q1–Q3)": "matched-sim",
    "Theme": "comparison",
    "Best match": "similarity",
    "Best": "similarity",
    "Second": "gap",
    "Hungarian partner": "one-to-one-pairs",
    "Partner sim.": "similarity",
    "Gap": "gap",
    "Category": "gap",
    "Metric": "theta",
    "Sweep maximum": "theta",
    "At its maximum up to θ": "theta",
    "Zero from θ": "theta",
    "Set": "comparison",
    "Themes": "comparison",
    "Coherence SC (mean)": "sc",
    "Distinctiveness SD (mean)": "sd",
    "SemDiv": "semdiv",
    "NPMI (mean)": "npmi",
    "Raw θ": "z-theta",
    "z θ": "z-theta",
    "Both": "z-theta",
    "Only raw": "z-theta",
    "Only z": "z-theta",
    "Share changed": "z-theta",
    "Pairs only raw keeps": "z-theta",
    "Pairs only z keeps": "z-theta",
    "Group": "ncs",
    "Run": "ncs",
    "NCS": "ncs",
    "Mean sim. to others": "ncs",
    "Min": "ncs",
    "Max": "ncs",
    "Basis": "basis",
    "Text Hungarian F1": "grounded-f1",
    "Grounded Hungarian F1": "grounded-f1",
    "AMI": "ami",
    "Median κ (text pairs)": "kappa",
    "Krippendorff α (text pairs)": "kappa",
    "Agreement across codebooks": "codebooks",
    "Text–data ρ": "rho",
    "Passages labelled A / B": "passages",
    "Coder": "coder",
    "Median κ per theme [95 % CI]": "kappa",
    "Pooled κ": "kappa",
    "Pooled α [95 % CI]": "kappa",
    "Segments": "coder",
    "Prevalence human / coder": "coder",
    "Match rule": "theta",
    "Generator": "generator",
    "Verdict": "verdict",
    "Verdict (primary)": "verdict",
    "Difference": "difference",
    "Difference [90 % CI]": "difference",
    "Hungarian F1 [95 % CI]": "hungarian-f1",
    "Detail": "comparison",
    "What it means": "verdict",
    "Flags": "flag",
    "Route": "route",
    "Agreement": "agreement",
    "Analysts' agreement": "analysts",
    "Reference themes it missed": "missed-added",
    "Themes it added": "missed-added",
    "Pairs it shares": "missed-added",
    "Interval assumes": "interval-assumes",
    "Text compared": "text-compared",
    "Words a theme (median)": "text-compared",
    "Scale": "similarity",
    "Kind": "method",
    "What it is": "method",
}


class Header(str):
    """A header built from the data (a threshold, a method's name) that names its entry
    where it is built: "≥ 0.5" links to "theta", "minilm (≥ 0.56)" to "hungarian-f1"."""

    def __new__(cls, text: str, term: str):
        header = super().__new__(cls, text)
        header.term = term
        return header


def term_key(header) -> str | None:
    """The glossary entry a table header links to, or None (files, hashes, versions)."""
    return getattr(header, "term", None) or HEADER_TERMS.get(str(header))
