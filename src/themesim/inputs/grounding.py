"""Agreement grounded in the transcripts: the labels, the coder and the grounding files."""

from __future__ import annotations

from themesim.coder.settings import describe, set_coder
from themesim.inputs import Setup, at, methods, pair_names
from themesim.paths import (
    CODER_AGREEMENT,
    GROUNDING,
    GROUNDING_IOU,
    GROUNDING_LONG,
    GROUNDING_PAIR,
    GROUNDING_PAIRS,
    GROUNDING_PLOTS,
    GROUNDING_SCATTER,
    GROUNDING_TRANSCRIPTS,
    LABEL,
    LABELS,
    LLM_SCORES,
    QUOTES,
    SEGMENTS,
)


def grounded_methods(setup: Setup) -> list[str]:
    """The methods with grounding tables: every method when grounding runs."""
    return list(setup.study.methods) if has_grounding(setup) else []


def has_grounding(setup: Setup) -> bool:
    return bool(setup.study.grounding["active"] and setup.study.transcripts)


def assign_threshold(setup: Setup, method: str):
    """Theme-segment similarity at which a segment gets a theme; None: never assigns."""
    if setup.study.grounding["assign"] == "never":
        return None
    return methods.spec(setup, method).get("assign_threshold")  # a kind's default, or absent


def coder_of(setup: Setup, method: str, set_name: str) -> str:
    return set_coder(setup.study.grounding["coder"], method, set_name)


def assigns(setup: Setup, method: str, set_name: str) -> bool:
    """Does the set get coder labels from the method's vectors (so it needs embeddings)?"""
    if assign_threshold(setup, method) is None:
        return False
    return coder_of(setup, method, set_name) != "llm"


def llm_coded(setup: Setup, method: str, set_name: str) -> bool:
    return setup.study.grounding["assign"] != "never" and coder_of(setup, method, set_name) == "llm"


def coder_sets(setup: Setup, method: str) -> list[str]:
    """The method's sets its coder labels (grounding.coder): by the LLM or by vectors."""
    if setup.study.grounding["assign"] == "never":
        return []
    return [
        s
        for s in setup.study.sets_for(method)
        if assigns(setup, method, s) or llm_coded(setup, method, s)
    ]


def llm_coded_sets(setup: Setup, method: str | None = None) -> list[str]:
    """Sets the LLM codes under `method` (None: under any method with grounding)."""
    study = setup.study
    chosen = [method] if method else (list(study.methods) if has_grounding(setup) else [])
    return [
        s
        for s in study.sets
        if any(llm_coded(setup, m, s) for m in chosen if s in study.sets_for(m))
    ]


def llm_score_files(setup: Setup, sets) -> list[str]:
    return [at(LLM_SCORES, set=s) for s in sets]


def llm_score_map(setup: Setup, sets) -> dict[str, str]:
    """Set -> the LLM coder's scores of it (rule coder_llm)."""
    return dict(zip(sets, llm_score_files(setup, sets), strict=True))


def coder_descriptions(setup: Setup, method: str) -> dict[str, str]:
    """Set -> one line naming the coder that labels it under the method."""
    coder, threshold = setup.study.grounding["coder"], assign_threshold(setup, method)
    return {
        s: describe(coder, coder_of(setup, method, s), threshold) for s in coder_sets(setup, method)
    }


def coded_sets(setup: Setup, method: str) -> list[str]:
    """The method's sets with a coded-segments file, in set order."""
    return [s for s in setup.study.sets_for(method) if s in setup.study.segments]


def assigned_sets(setup: Setup, method: str) -> list[str]:
    """The method's sets that get coder labels from its vectors (assigns), in set order."""
    return [s for s in setup.study.sets_for(method) if assigns(setup, method, s)]


def settings(setup: Setup) -> dict:
    """What the grounding metrics read: `grounding:`'s interval and test settings."""
    g = setup.study.grounding
    return {
        "min_iou": g["min_iou"],
        "seed": g["seed"],
        "intervals": g["intervals"],
        "bootstrap": {"n": g["bootstrap"]},
        "permutations": g["permutations"],
    }


def label_files(setup: Setup, method: str, sets=None) -> list[str]:
    sets = setup.study.sets_for(method) if sets is None else sets
    return [at(LABEL, method=method, set=s) for s in sets]


def quote_files(setup: Setup, method: str, sets=None) -> list[str]:
    sets = setup.study.sets_for(method) if sets is None else sets
    return [at(QUOTES, method=method, set=s) for s in sets]


def label_folder(setup: Setup, method: str) -> str:
    """The labels job's folder: label_files and quote_files of the method's sets."""
    return at(LABELS, method=method)


def long_files(setup: Setup, method: str) -> list[str]:
    """Each comparison's long table, in the grounding job's folder (GROUNDING_LONG)."""
    pairs = pair_names(setup.study.pairs_for(method))
    return [at(GROUNDING_PAIR, method=method, pair=p) for p in pairs]


def heatmaps(setup: Setup, method: str) -> list[str]:
    """Each comparison's IoU heatmap (PNG, an SVG beside it), in GROUNDING_PLOTS."""
    return [iou(setup, method, p) for p in pair_names(setup.study.pairs_for(method))]


def coder_agreement_files(setup: Setup) -> list[str]:
    return [CODER_AGREEMENT] if has_grounding(setup) else []


def iou(setup: Setup, method: str, pair: str, ext: str = "png") -> str:
    return f"{at(GROUNDING_IOU, method=method, pair=pair)}.{ext}"


def scatter(setup: Setup, method: str, ext: str = "png") -> str:
    return f"{at(GROUNDING_SCATTER, method=method)}.{ext}"


def tables(setup: Setup, method: str) -> list[str]:
    return [at(GROUNDING, method=method), at(GROUNDING_PAIRS, method=method)]


def transcripts(setup: Setup, method: str) -> str:
    """The coder basis's theme-pair counts per transcript (the verdicts' segments route)."""
    return at(GROUNDING_TRANSCRIPTS, method=method)


def outputs(setup: Setup, method: str) -> list[str]:
    if not has_grounding(setup):
        return []
    # the folder of the figures: each comparison's IoU heatmap, and the scatter
    figures = [at(GROUNDING_PLOTS, method=method)]
    scatters = [scatter(setup, method, ext) for ext in ("png", "svg")]
    csvs = tables(setup, method) + [transcripts(setup, method)]
    return csvs + figures + scatters


def report_files(setup: Setup, method: str) -> dict:
    """What the report's grounding section reads of a method (none without grounding)."""
    if not has_grounding(setup):
        return {}
    return {
        "grounding_csv": tables(setup, method)[0],
        "grounding_dir": at(GROUNDING_LONG, method=method),
        "segments_dir": label_folder(setup, method),
        "segments_parquet": SEGMENTS,
        "grounding_heatmaps": dict(
            zip(
                pair_names(setup.study.pairs_for(method)),
                heatmaps(setup, method),
                strict=True,
            )
        ),
        "grounding_scatter_png": scatter(setup, method),
        "coder_agreement_csv": CODER_AGREEMENT,
    }
