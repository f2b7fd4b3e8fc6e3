"""The set_quality rule: sets.csv (seed 001) per method."""

from __future__ import annotations

import numpy as np
import pandas as pd

from themesim.embed.vectors import read_embeddings, read_vector_table
from themesim.io.files import write_csv
from themesim.io.themes import read_themes_parquet
from themesim.kinds import get as get_kind
from themesim.metrics.sets.quality import (
    SET_QUALITY_KEYS,
    KeywordDocuments,
    QualitySettings,
    npmi_keywords,
    semantic_distinctiveness,
    set_quality,
    theme_keywords,
)
from themesim.similarity import read_similarity
from themesim.steps.job import Job


def set_quality_table(job: Job) -> None:
    """sets.csv: SC, SD, SemDiv and NPMI per theme set (seed 001), on this method's vectors,
    and sets_themes.csv, per theme (inputs.metrics.set_quality_job).

    SC and SemDiv need embeddings; for other kinds only SD (from the within-set matrix) and
    NPMI (keyword co-occurrence in transcript segments) are defined, the rest is NaN.
    """
    method, kind, settings = job.params["method"], job.params["kind"], job.params["settings"]
    within, embeddings, keyword_embeddings = (
        job.params["within"],
        job.input["embeddings"],
        job.input["keywords"],
    )
    seg = pd.read_parquet(job.input["segments"])
    docs = KeywordDocuments(seg["text"].tolist())  # searched once per keyword for every set
    segment_embeddings = job.one("segment_embeddings")
    seg_emb = read_vector_table(segment_embeddings)[1] if segment_embeddings else None
    rows, theme_frames = [], []
    for s, path in job.input["themes"].items():
        t = read_themes_parquet(path)
        if get_kind(kind).own_embeddings:  # keyword and segment embeddings exist
            kw_cols, kw_emb, _ = read_vector_table(keyword_embeddings[s])
            # The keywords the embedding job derived (same top_k): no TF-IDF refit here.
            rows_of = [(kw_cols["theme_id"] == i).to_numpy() for i in t["theme_id"]]
            keywords = [kw_cols["keyword"][r].tolist() for r in rows_of]
            per_theme = [kw_emb[r] for r in rows_of]
            emb = read_embeddings(embeddings[s])[1]
            quality, qt = set_quality(
                keywords,
                per_theme,
                emb,
                seg_emb if seg_emb is not None and len(seg) else np.zeros((0, emb.shape[1])),
                docs,
                theme_names=t["theme_id"].tolist(),
                settings=QualitySettings(alpha=settings["alpha"], beta=settings["beta"]),
            )
            theme_frames.append(qt.rename(columns={"theme": "theme_id"}).assign(set=s))
        else:
            keywords = theme_keywords(t, settings["keywords_top_k"])
            quality = dict.fromkeys(SET_QUALITY_KEYS, np.nan) | {"n_themes": len(t)}
            if s in within:
                W = read_similarity(within[s], t["theme_id"], t["theme_id"])
                quality["sd_mean"] = semantic_distinctiveness(W)[1]
            npmi = [npmi_keywords(k, docs) for k in keywords]
            quality["npmi_mean"] = float(np.nanmean(npmi)) if not np.isnan(npmi).all() else np.nan
        rows.append({"method": method, "set": s} | quality)
    write_csv(pd.DataFrame(rows), job.output["sets"])
    cols = ["method", "set", "theme_id", "n_keywords", "sc", "npmi", "n_segments"]
    frames = [f.assign(method=method) for f in theme_frames]
    write_csv(
        pd.concat(frames, ignore_index=True)[cols] if frames else pd.DataFrame(columns=cols),
        job.output["themes"],
    )
