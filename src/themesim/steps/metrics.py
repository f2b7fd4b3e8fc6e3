"""The metrics rule: comparisons.csv, themes.csv, sweep.csv and transport plans."""

from __future__ import annotations

import logging

import pandas as pd

from themesim.io.files import write_csv, write_parquet
from themesim.io.themes import read_themes_parquet
from themesim.kinds import get as get_kind

log = logging.getLogger("themesim")


def metric_tables(
    *,
    method: str,
    kind: str,
    pairs,
    themes: dict,
    similarities,
    within: dict,
    nulls: dict,
    embeddings: dict,
    settings: dict,
    sweep: dict,
    out_comparisons,
    out_themes,
    out_sweep,
    out_transport,
    out_splits,
    tfidf: dict | None = None,
    ceiling=None,
    reference: str | None = None,
) -> None:
    """comparisons.csv (configured thresholds), sweep.csv (grid), themes.csv, transport plans.

    tfidf: TfidfVectorizer options of a tfidf method, for its word-salad null model.
    ceiling: the method's paraphrase similarities (results/ceiling/{method}.parquet), which add
    the paraphrase-ceiling columns of themesim.metrics.ceiling against the reference's themes.
    """
    from themesim.embed.encode import read_embeddings
    from themesim.metrics.comparison import Settings, comparison_rows, on_scale, theme_rows
    from themesim.metrics.coverage import threshold_grid
    from themesim.metrics.transport import plan_long, splits_and_joins
    from themesim.similarity import read_similarity

    st = Settings(**settings)
    grid = threshold_grid(sweep["start"], sweep["stop"], sweep["step"])
    tables = {name: read_themes_parquet(p) for name, p in themes.items()}
    W = {
        s: on_scale(read_similarity(p, tables[s]["theme_id"], tables[s]["theme_id"]), st)
        for s, p in within.items()
    }
    comp, swp, per_theme, splits = [], [], [], []
    for (a, b), path, out_plan in zip(pairs, similarities, out_transport, strict=True):
        ta, tb = tables[a], tables[b]
        S = on_scale(read_similarity(path, ta["theme_id"], tb["theme_id"]), st)
        emb_a = read_embeddings(embeddings[a])[1] if a in embeddings else None
        null_pool = get_kind(kind).null_pool(
            ta,
            tb,
            nulls.get(b),
            st.null_model["pool"],
            st.null_model["seed"],
            lambda M: on_scale(M, st),
            emb_a,
            options=tfidf,
        )
        head = {"method": method, "set_a": a, "set_b": b}
        rows, extra = comparison_rows(S, st, W_a=W.get(a), W_b=W.get(b), null_pool=null_pool)
        comp.append(pd.concat([pd.DataFrame([head] * len(rows)), rows], axis=1))
        sw, _ = comparison_rows(S, st, thresholds=grid, with_bootstrap=False)
        swp.append(pd.concat([pd.DataFrame([head] * len(sw)), sw], axis=1))
        tt = theme_rows(S, st, ta, tb, W_a=W.get(a), W_b=W.get(b), null_pool=null_pool)
        per_theme.append(pd.concat([pd.DataFrame([head] * len(tt)), tt], axis=1))
        plan = extra["plan"]
        write_parquet(plan_long(plan, ta["theme_id"].tolist(), tb["theme_id"].tolist()), out_plan)
        sj = splits_and_joins(
            plan,
            ta["theme_id"].tolist(),
            tb["theme_id"].tolist(),
            min_share=st.transport["min_share"],
        )
        splits.append(pd.concat([pd.DataFrame([head] * len(sj)), sj], axis=1))
    if ceiling is not None:
        from themesim.metrics.ceiling import join_ceiling

        all_themes = pd.concat(per_theme, ignore_index=True)
        scale = lambda M: on_scale(M, st)  # noqa: E731
        comp = [
            join_ceiling(pd.concat(comp, ignore_index=True), all_themes, ceiling, reference, scale)
        ]
    for frames, out in (
        (comp, out_comparisons),
        (swp, out_sweep),
        (per_theme, out_themes),
        (splits, out_splits),
    ):
        df = pd.concat(frames, ignore_index=True)
        if "threshold" in df:
            df.insert(df.columns.get_loc("threshold") + 1, "op", st.op)
        write_csv(df, out)
    log.info("%s: metrics for %d comparisons", method, len(pairs))
