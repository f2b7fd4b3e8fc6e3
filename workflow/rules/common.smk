import re
from pathlib import Path

from themesim.coder.settings import describe, set_coder
from themesim.config import generated_csv, pair_name, prepare
from themesim.deps import CodeDeps
from themesim import kinds
from themesim.errors import exit_on_error
from themesim.io.manifest import MANIFEST, missing
from themesim.metrics.settings import gamma_for
from themesim.provenance import git_commit
from themesim.similarity import tfidf_options

STUDY = exit_on_error(prepare, config)  # one line, no Snakemake stack
CODE_VERSION = git_commit(workflow.basedir)  # recorded in the report
SRC = Path(workflow.basedir) / "src" / "themesim"
# Kept between runs in the working directory, recomputed when a package file changes.
CODE_DEPS = CodeDeps(
    Path(workflow.basedir) / "scripts", SRC, ".snakemake/themesim/code-deps.json"
)
NOTHING = "(?!x)x"  # a wildcard pattern that matches no method
JUDGE_CACHE = "results/cache/judge.sqlite"  # accumulating: an input of no rule
# Jobs that may start a local llama.cpp server (the judge's similarity and calibration, theme
# generation, paraphrases) hold one llm_server each: one server (and model in memory) at a
# time, unless `--resources llm_server=N` says otherwise. Local scope: each cluster job has
# its own node, so a cluster run does not serialise them.
LLM_SERVER = "llm_server"
if LLM_SERVER not in workflow.global_resources:
    workflow.register_resource(LLM_SERVER, 1)


resource_scopes:
    llm_server="local",


wildcard_constraints:
    set=r"[A-Za-z0-9][A-Za-z0-9_.-]*",


def code(script):
    """The package files a rule's script runs, derived from its imports (themesim.deps):
    Snakemake cannot see an edit to an imported module, so they are inputs of the rule.
    """
    return CODE_DEPS.files(script)


def regex_of(methods):
    return "|".join(re.escape(m) for m in methods) or NOTHING


def methods_with(capability):
    """Wildcard pattern of the methods whose kind has a capability (themesim.kinds.Kind)."""
    return regex_of(STUDY.methods_with(capability))


def similarity_methods(rule):
    """Wildcard pattern of the methods whose kind writes its similarity files by that rule."""
    return regex_of(rule_methods(rule))


def rule_methods(rule):
    """The methods whose kind writes its similarity files by that rule."""
    return [m for m in STUDY.methods if kind_of(m).similarity_rule == rule]


def pair_names(pairs):
    return [pair_name(a, b) for a, b in pairs]


def pair_variants(methods):
    """(rule name suffix, method pattern, pairs) per group of methods that run the same
    comparisons: a rule declares one fixed list of per-pair outputs, so a method whose
    `comparisons:` restricts them gets a copy of the rule with its own list. The first
    entry (suffix "") holds the methods that run every comparison."""
    methods = list(methods)
    groups = {}
    for m in methods:
        if m in STUDY.restricted:
            groups.setdefault(tuple(STUDY.restricted[m]), []).append(m)
    full = [m for m in methods if m not in STUDY.restricted]
    out = [("", regex_of(full), STUDY.pairs)]
    for i, (pairs, group) in enumerate(groups.items(), start=1):
        out.append((f"_restricted{i}", regex_of(group), list(pairs)))
    return out


def share_cluster_settings(rule, suffix):
    """Give a copy of a rule the --set-resources and --set-threads (a cluster profile,
    profiles/slurm) given to the rule it copies (they name rules; a copy has its own name).
    """
    if not suffix:
        return
    settings = workflow.resource_settings
    for given in (
        settings._parsed_overwrite_resources,
        settings._parsed_overwrite_threads,
    ):
        if given.get(rule) is not None:
            given.setdefault(rule + suffix, given[rule])


def within_of(sets):
    return [(s, s) for s in sets]


def sets_of(pairs):
    """The sets those pairs compare, in the study's set order."""
    used = {s for p in pairs for s in p}
    return [s for s in STUDY.sets if s in used]


def method_themes(method):
    """Theme tables of the sets of a method's comparisons (its per-set work)."""
    return [f"results/themes/{s}.parquet" for s in STUDY.sets_for(method)]


GONE = {}  # manifest -> pair names it lists that are not on disk (declared_pairs)


def declared_pairs(pairs, manifests):
    """Pair files a job declares one by one, the reference pairs' and within-set ones, plus
    any the manifests list that is gone, so Snakemake reruns the job (a declared output is
    missing). The other pairs of `comparisons.all_pairs` are written beside them and listed
    only in the job's manifest (themesim.io.manifest): pairs-squared declared files made
    the dry run of 200 sets take minutes."""
    names = pair_names(pairs)
    listed = set(names)
    declared = [n for (a, b), n in zip(pairs, names) if a in (STUDY.reference, b)]
    for m in manifests:
        GONE[m] = [n for n in (Path(f).stem for f in missing(m)) if n in listed]
        declared += GONE[m]
    return list(dict.fromkeys(declared))


def gone_files(manifest):
    """A manifest's pair files that went missing: `all` asks for them, since Snakemake
    checks only the outputs a job is asked for, so the job that writes them reruns."""
    folder = Path(manifest).parent.as_posix()
    return [f"{folder}/{n}.parquet" for n in GONE.get(manifest, [])]


def rule_pairs(rule, pairs, study_pairs=None):
    """Pair names a similarity rule declares (none when no method uses it); with
    study_pairs, those of the copy for the methods that run them (pair_variants)."""
    methods = [
        m
        for m in rule_methods(rule)
        if study_pairs is None or STUDY.pairs_for(m) == list(study_pairs)
    ]
    return (
        declared_pairs(pairs, [similarity_manifest(m) for m in methods])
        if methods
        else []
    )


def similarity_manifest(method):
    return f"results/similarity/{method}/{MANIFEST}"


def transport_manifest(method):
    return f"results/metrics/{method}/transport/{MANIFEST}"


def transport_files(method):
    return [
        f"results/metrics/{method}/transport/{p}.parquet"
        for p in pair_names(STUDY.pairs_for(method))
    ]


def variant_manifests(pairs, manifest):
    """manifest(m) of the methods that run exactly those comparisons (a rule copy's)."""
    return [manifest(m) for m in STUDY.methods if STUDY.pairs_for(m) == list(pairs)]


def theme_parquets():
    return [f"results/themes/{s}.parquet" for s in STUDY.sets]


def similarity_files(method, pairs=None):
    pairs = STUDY.pairs_for(method) if pairs is None else pairs
    return [f"results/similarity/{method}/{p}.parquet" for p in pair_names(pairs)]


def method_op(method):
    return STUDY.methods[method].get("op", STUDY.op)


def embed_settings(method):
    """The settings that change embeddings; thresholds are not among them."""
    spec = STUDY.methods[method]
    return {k: spec.get(k) for k in ("model", "path", "batch_size", "device", "dtype")}


def method_gpus(method):
    """GPUs an embedding job asks a cluster for: one when the method runs on cuda."""
    return int(str(STUDY.methods[method].get("device") or "cpu").startswith("cuda"))


def embed_mem_mb(method):
    """Host memory of an embedding job; a GPU model (sentence-T5-xxl: 4.9e9 parameters,
    9.7 GB in float16) passes its weights through host memory while loading."""
    return 32000 if method_gpus(method) else 4000


def embedding_cache():
    """The vector cache folder setting (null = $THEMESIM_EMBED_CACHE or ~/.cache/...)."""
    return config.get("embedding_cache")


def llm_server_of(method):
    """1 when a method's similarity or calibration job may start a local LLM server."""
    return int(kind_of(method).starts_llm_server(STUDY.methods[method]))


def llm_server_for(settings):
    """1 when LLM calls with these settings (generation, paraphrases) start a local server."""
    return int(settings.get("base_url") is None)


def kind(method):
    return STUDY.methods[method]["kind"]


def kind_of(method):
    """What the method's kind does (themesim.kinds): its capabilities and settings."""
    return kinds.get(kind(method))


def within_sets(method):
    """Sets whose within-set matrix the method has (the sets of its comparisons)."""
    return STUDY.sets_for(method) if kind_of(method).within_set_matrices else []


def matrix_files(method, pairs):
    """Score matrices made elsewhere that the method reads for those pairs."""
    return kind_of(method).matrix_files(STUDY.methods[method], pairs)


def similarity_spec(method):
    """What the similarity step reads of the method; thresholds never re-score."""
    return kind_of(method).similarity_spec(STUDY.methods[method])


def similarity_done(method):
    """The manifest of a method's similarity job; consumers depend on it and get every
    pair's path as a param. Thousands of per-pair inputs (all pairs of 200 sets) would make
    the DAG build grow with pairs squared: each lookup scans all of the rule's outputs.
    """
    return [similarity_manifest(method)]


def within_files(method):
    return similarity_files(method, [(s, s) for s in within_sets(method)])


def null_sets(method):
    """B sets with embedded word-salad pools (others build theirs in the metrics job)."""
    has_null = (
        kind_of(method).nulls == "embedded" and STUDY.metrics["null_model"]["pool"] > 0
    )
    return b_sets(method) if has_null else []


def b_sets(method):
    """Sets that appear as B in the method's comparisons."""
    return list(dict.fromkeys(b for _, b in STUDY.pairs_for(method)))


def null_files(method):
    return [f"results/nulls/{method}/{s}.parquet" for s in null_sets(method)]


def reference_sides(method=None):
    """Sets that appear as A in a comparison (of the method, when one is given)."""
    pairs = STUDY.pairs if method is None else STUDY.pairs_for(method)
    return list(dict.fromkeys(a for a, _ in pairs))


def embedded_sets(method, sets):
    return list(sets) if kind_of(method).own_embeddings else []


def embedding_files(method, sets):
    return [
        f"results/embeddings/{method}/{s}.parquet" for s in embedded_sets(method, sets)
    ]


def keyword_files(method):
    return [
        f"results/keyword_embeddings/{method}/{s}.parquet"
        for s in embedded_sets(method, STUDY.sets_for(method))
    ]


def segment_embedding_files(method):
    has = kind_of(method).own_embeddings and STUDY.transcripts
    return [f"results/segment_embeddings/{method}.parquet"] if has else []


def embedded_null_sets(pairs=None):
    """B sets whose word-salad pools the embedding job writes (null_sets of its methods):
    of the study's comparisons, or of `pairs` (a restricted method's)."""
    b = STUDY.b_sets if pairs is None else list(dict.fromkeys(b for _, b in pairs))
    return b if STUDY.metrics["null_model"]["pool"] > 0 else []


def segment_parquets():
    return ["results/transcripts/segments.parquet"] if STUDY.transcripts else []


def segment_outputs():
    return ["results/segment_embeddings/{method}.parquet"] if STUDY.transcripts else []


def given_cores():
    """The cores Snakemake was given (--cores), else this machine's CPUs."""
    try:
        cores = workflow.cores
    except Exception:  # no --cores (--unlock, --report, a cluster executor)
        cores = None
    if isinstance(cores, int) and 0 < cores < 1 << 16:
        return cores
    import os

    return os.cpu_count() or 1


def embed_threads():
    """An embedding job claims every core Snakemake was given, so nothing runs beside it;
    torch uses at most the CPUs the process may use (themesim.embed.encode.set_threads):
    --cores 8 on a 2-core machine runs one job with 2 threads, not four."""
    return given_cores()


def report_threads():
    """Half the cores: the report's figures are drawn that many at a time, and the other
    half stays free for the method's plots job, which becomes ready with it (on 2 cores the
    two run side by side: a 12 x 12 study's warm rerun is 1 s shorter than with 2)."""
    return max(1, given_cores() // 2)


def family_settings(method):
    """What the metric families of one method read: thresholds, op, scale and `metrics:`."""
    spec = STUDY.methods[method]
    m = STUDY.metrics
    scale = spec.get("scale", "cosine")
    return {
        "thresholds": spec["thresholds"],
        "op": method_op(method),
        "gamma": gamma_for(m["gamma"], scale),
        "baseline_z": m["baseline_z"],
        "z_alpha": m["z_alpha"],
        "bootstrap": m["bootstrap"],
        "null_model": m["null_model"],
        "transport": m["transport"],
        "scale": scale,
        "clamp": bool(spec.get("clamp", False)),
    }


def heatmap_scale(method):
    """What the heatmaps and grounding read to put scores on the method's scale
    (metrics.method_scale)."""
    s = family_settings(method)
    z = s["scale"] == "z"
    fit = calibration_files(method)[1:] if s["scale"] == "calibrated" else []
    return {
        "scale": s["scale"],
        "clamp": s["clamp"],
        "within": dict(zip(within_sets(method), within_files(method))) if z else {},
        "fit": fit[0] if fit else None,
    }


def reference_pairs(pairs=None):
    """Pairs with a heatmap file each (the plots rule): the reference vs each set, which is
    every pair of a study without `comparisons.all_pairs` (of `pairs`: a method's)."""
    pairs = STUDY.pairs if pairs is None else pairs
    return [p for p in pairs if p[0] == STUDY.reference]


def other_pairs(pairs=None):
    """The rest of all pairs: their heatmaps go to one folder output per method, so the
    DAG does not declare (and look up) pairs-squared files."""
    pairs = STUDY.pairs if pairs is None else pairs
    return [p for p in pairs if p[0] != STUDY.reference]


def decision_thresholds(method):
    """Thresholds of the raw-versus-z decision table (metrics.scales.decision_changes):
    a z-scale method's own thresholds against raw_thresholds (default: its built-in ones),
    any other method's against metrics.baseline_z."""
    spec = STUDY.methods[method]
    if spec.get("scale") == "z":
        raw = (
            spec.get("raw_thresholds")
            or kinds.method_defaults(method, {"kind": spec["kind"]})["thresholds"]
        )
        return {"raw": list(raw), "z": list(spec["thresholds"])}
    return {"raw": list(spec["thresholds"]), "z": [STUDY.metrics["baseline_z"]]}


def calibration_settings():
    """config `calibration:` with its defaults (metrics.settings, docs/thresholds.md)."""
    from themesim.metrics.settings import calibration_settings as merged

    return merged(config.get("calibration"))


def has_calibration(method):
    """Rated pairs are configured and the method's kind can score them (a kind that
    calibrates_on_request: only for a method that uses `calibrated`)."""
    k = kind_of(method)
    if not (calibration_settings()["pairs"] and k.calibrates):
        return False
    return uses_calibration(method) or not k.calibrates_on_request


def uses_calibration(method):
    spec = STUDY.methods[method]
    return "calibrated" in spec["thresholds"] or spec.get("scale") == "calibrated"


def calibration_files(method):
    """What the metrics rule reads to resolve `calibrated` (nothing when unused)."""
    if not uses_calibration(method):
        return []
    return [
        f"results/calibration/{method}.csv",
        f"results/calibration/{method}/isotonic.csv",
    ]


def calibration_spec(method):
    """The settings that make the pairs' scores: the model (an abtt variant's base) and d."""
    spec = STUDY.methods[method]
    k = kind_of(method)
    embed = embed_settings(k.embeddings_of(method, spec)) if k.reads_embeddings else {}
    return embed | k.similarity_spec(spec)


def calibration_embeddings(method):
    """A kind whose pair scores need the study's theme vectors (abtt's correction)."""
    if not kind_of(method).pairs_read_study_embeddings:
        return []
    return embedding_files(STUDY.embeddings_of(method), list(STUDY.sets))


def calibration_cache(method):
    """The judge's judgement cache (the one its similarity rule fills) for a kind that keeps
    one, else the embedding cache setting."""
    return JUDGE_CACHE if kind_of(method).judge_cache else embedding_cache()


def embeds_rated_pairs(method):
    """The embedding job of the method whose model scores this method's rated pairs puts
    their vectors in the cache (steps.embed.calibration_texts): no second model load."""
    k = kind_of(method)
    return has_calibration(method) and k.reads_embeddings and cache_on()


def cache_on():
    return embedding_cache() not in (False, "")


def embedded_rated_pairs(method):
    """The rated pairs an embedding job encodes (for every method scoring with its model).
    ancient: an edit of the file reruns the calibration jobs, which encode its new texts,
    not the embedding job and everything made from its files."""
    users = [
        m
        for m in STUDY.methods
        if embeds_rated_pairs(m)
        and kind_of(m).embeddings_of(m, STUDY.methods[m]) == method
    ]
    return [ancient(calibration_settings()["pairs"])] if users else []


def calibration_after_embed(method):
    """An embedding file of the model's job, so calibration runs after it fills the cache."""
    if not embeds_rated_pairs(method):
        return []
    base = kind_of(method).embeddings_of(method, STUDY.methods[method])
    return embedding_files(base, [STUDY.reference])


def judges_rated_pairs(method):
    """The method's similarity job judges its rated pairs into the judgement cache, so the
    calibration job finds them there and starts no second LLM server."""
    return has_calibration(method) and kind_of(method).judge_cache


def judged_rated_pairs(method):
    """The rated pairs the judge's similarity job judges. ancient: an edit of the file
    reruns the calibration job, which judges its new pairs, not the similarity job and
    everything made from its files."""
    if not judges_rated_pairs(method):
        return []
    return [ancient(calibration_settings()["pairs"])]


def calibration_after_judge(method):
    """The judge's similarity manifest, so calibration runs after it fills the cache."""
    return [similarity_manifest(method)] if judges_rated_pairs(method) else []


def calibration_mem_mb(method):
    """An embedding model or the local judge model is loaded, as in their own jobs."""
    k = kind_of(method)
    return (
        embed_mem_mb(k.embeddings_of(method, STUDY.methods[method]))
        if k.reads_embeddings
        else 4000
    )


def calibration_matrix_pairs(method):
    """The pairs whose score matrices (made elsewhere) may hold the rated pairs."""
    k = kind_of(method)
    if not k.reads_matrices:
        return []
    return STUDY.method_pairs(method)


def calibration_matrices(method):
    return matrix_files(method, calibration_matrix_pairs(method))


def calibration_sets(method):
    """Sets whose theme tables name the rows and columns of those matrices."""
    return STUDY.sets_for(method) if kind_of(method).reads_matrices else []


def calibration_themes(method):
    return [f"results/themes/{s}.parquet" for s in calibration_sets(method)]


def workbook_tables():
    """Sheet title -> metric table of results/report/tables.xlsx, one sheet each."""
    out = {"headline": "results/report/headline.csv", "verdicts": VERDICTS_CSV}
    for m in STUDY.methods:
        d = f"results/metrics/{m}"
        out |= {
            f"{m} comparisons": f"{d}/comparisons.csv",
            f"{m} themes": f"{d}/themes.csv",
            f"{m} sweep": f"{d}/sweep.csv",
            f"{m} sets": f"{d}/sets.csv",
            f"{m} decision changes": f"{d}/decision_changes.csv",
            f"{m} splits joins": f"{d}/transport/splits_joins.csv",
        }
        if has_runs(m):
            out[f"{m} runs"] = f"{d}/runs.csv"
        if has_calibration(m):
            out[f"{m} calibration"] = f"results/calibration/{m}.csv"
    if has_grounding():
        out["coder agreement"] = CODER_AGREEMENT
    return out


def heatmaps(method):
    return [
        f"results/plots/{method}/{p}_heatmap.png"
        for p in pair_names(reference_pairs(STUDY.pairs_for(method)))
    ]


def heatmap_folder(method):
    """The folder of the other pairs' heatmaps; none without `comparisons.all_pairs`."""
    return (
        [f"results/plots/{method}/heatmaps"]
        if other_pairs(STUDY.pairs_for(method))
        else []
    )


def max_pair_heatmaps():
    """plots.max_pair_heatmaps: default 200; null = no limit."""
    plots = config.get("plots") or {}
    return plots["max_pair_heatmaps"] if "max_pair_heatmaps" in plots else 200


def max_pair_panels():
    """plots.max_pair_panels: default 30; null = no limit."""
    plots = config.get("plots") or {}
    return plots["max_pair_panels"] if "max_pair_panels" in plots else 30


def pairs_overview_files(method):
    """The all-pairs overview the report shows when the folder holds one (report key)."""
    folder = heatmap_folder(method)
    return {"pairs_overview_png": f"{folder[0]}/overview.png"} if folder else {}


def heatmap_paths(method):
    """Every pair's heatmap PNG of the method, in STUDY.pairs order (what the report links)."""
    folder = f"results/plots/{method}/heatmaps"
    pairs = STUDY.pairs_for(method)
    return [
        (
            f"results/plots/{method}/{p}_heatmap.png"
            if a == STUDY.reference
            else f"{folder}/{p}_heatmap.png"
        )
        for (a, _), p in zip(pairs, pair_names(pairs))
    ]


def has_runs(method):
    """Run consistency (seeds 002-004): kinds that have it, and a run group (config
    run_groups, or two or more generated runs) among the sets of its comparisons."""
    return kind_of(method).runs and bool(run_groups(method))


def run_groups(method):
    """The run groups with two or more runs among the sets of the method's comparisons."""
    sets = set(STUDY.sets_for(method))
    groups = {g: [s for s in runs if s in sets] for g, runs in STUDY.run_groups.items()}
    return {g: runs for g, runs in groups.items() if len(runs) >= 2}


def method_runs(method):
    """Every set in one of the method's run groups, once, in group order."""
    return list(dict.fromkeys(s for g in run_groups(method).values() for s in g))


def has_ceiling(method):
    """A paraphrase ceiling for this method: active, a kind that can score paraphrases, and
    the reference among the sets of its comparisons (the ceiling is of the reference's themes).
    """
    return (
        bool(STUDY.ceiling.get("active"))
        and kind_of(method).ceiling
        and STUDY.reference in STUDY.sets_for(method)
    )


def ceiling_files(method):
    """The method's paraphrase similarities, an input of its metrics ([] when none)."""
    return [f"results/ceiling/{method}.parquet"] if has_ceiling(method) else []


def paraphrase_files():
    """The paraphrases and per-method paraphrase similarities, when some method has a ceiling
    (archived beside the metric tables they feed)."""
    methods = [m for m in STUDY.methods if has_ceiling(m)]
    if not methods:
        return []
    return ["results/ceiling/paraphrases.csv"] + [ceiling_files(m)[0] for m in methods]


def paraphrase_cache():
    """The paraphrase calls' cache when they run (kept like the judge's and generation's)."""
    return ["results/cache/paraphrase.sqlite"] if paraphrase_files() else []


def paraphrase_settings():
    """Settings of the paraphrase calls (themesim.llm.paraphrase.ParaphraseSettings)."""
    return {k: v for k, v in STUDY.ceiling.items() if k != "active" and v is not None}


def ceiling_spec(method):
    """What changes a method's paraphrase scores: its embedding or TF-IDF settings."""
    if kind_of(method).own_embeddings:
        return embed_settings(method)
    return tfidf_options(STUDY.methods[method])


def has_theme_map(method):
    """Methods with theme vectors for a 2-D map."""
    return kind_of(method).theme_vectors


def theme_map_embeddings(method):
    """Embedding files a method's similarity and theme map read (an abtt variant corrects
    its base's vectors); none for a kind that reads no embeddings."""
    return embedding_files(STUDY.embeddings_of(method), list(STUDY.sets))


def method_plot_files(method):
    """Every extra plot of a method, by name (PNG); each has an .svg beside it."""
    d = f"results/plots/{method}"
    files = {
        "distributions_png": f"{d}/distributions.png",
        "confidence_png": f"{d}/confidence.png",
    }
    if has_theme_map(method):
        files["theme_map_png"] = f"{d}/theme_map.png"
    if has_runs(method):
        files["runs_png"] = f"{d}/run_consistency.png"
    return files


# For report_parts (report.smk), the job of the report's tables and of the figures that read
# only metric tables; the paths are those of the five jobs it replaced.
HEADLINE_CSV = "results/report/headline.csv"
HEADLINE_FILES = {
    "csv": HEADLINE_CSV,
    "tex": "results/report/headline.tex",
    "png": "results/report/headline_intervals.png",
    "svg": "results/report/headline_intervals.svg",
}
# Each set's agreement with the reference beside a second analyst's, and the verdict.
VERDICTS_CSV = "results/report/verdicts.csv"
WORKBOOK = "results/report/tables.xlsx"
SIDE_BY_SIDE_FILES = {
    "png": "results/plots/methods_side_by_side.png",
    "svg": "results/plots/methods_side_by_side.svg",
}


def theme_map_methods():
    return [m for m in STUDY.methods if has_theme_map(m)]


def method_figure_files(method):
    """A method's figures drawn by report_parts: PNG and SVG by name (the theme map only for
    a kind with theme vectors)."""
    d = f"results/plots/{method}"
    names = ["distributions", "confidence"] + (
        ["theme_map"] if has_theme_map(method) else []
    )
    return {f"{n}_{ext}": f"{d}/{n}.{ext}" for n in names for ext in ("png", "svg")}


def report_parts_outputs():
    """report_parts' outputs but the workbook, the PNGs wrapped for `snakemake --report` as
    before."""
    h, sbs = HEADLINE_FILES, SIDE_BY_SIDE_FILES
    # Imported under another name: a line may not start with Snakemake's `report` keyword.
    from snakemake.io import report as in_report

    out = [
        in_report(h["csv"], caption="../report/headline.rst", category="Summary"),
        h["tex"],
        in_report(
            h["png"], caption="../report/headline_intervals.rst", category="Summary"
        ),
        h["svg"],
        in_report(
            sbs["png"],
            caption="../report/side_by_side.rst",
            category="Methods side by side",
        ),
        sbs["svg"],
    ]
    categories = {
        "distributions": "Distributions",
        "confidence": "Confidence profiles",
        "theme_map": "Theme maps",
    }
    for m in STUDY.methods:
        for name, path in method_figure_files(m).items():
            figure, ext = name.rsplit("_", 1)
            if ext == "png":
                path = in_report(
                    path,
                    caption=f"../report/{figure}.rst",
                    category=categories[figure],
                    subcategory=m,
                )
            out.append(path)
    return out


def precomputed_files():
    """Score matrices made elsewhere that methods read (hashed in the report's inputs)."""
    return [f for files in precomputed_inputs().values() for f in files]


def svg_of(png_files):
    return [re.sub(r"\.png$", ".svg", f) for f in png_files]


def get_final_output():
    out = [
        "results/transcripts/segments.parquet",
        "results/plots/methods_side_by_side.png",
        "results/plots/methods_side_by_side.svg",
        "results/report/headline.csv",
        "results/report/headline.tex",
        "results/report/headline_intervals.png",
        "results/report/headline_intervals.svg",
        "results/report/tables.xlsx",
    ]
    for m in STUDY.methods:
        out += similarity_done(m)
        out += gone_files(similarity_manifest(m)) + gone_files(transport_manifest(m))
        out += expand(
            "results/metrics/{method}/{table}.csv",
            method=m,
            table=["comparisons", "themes", "sweep", "sets"],
        )
        if has_runs(m):
            out.append(f"results/metrics/{m}/runs.csv")
        out += grounding_outputs(m)
        plots = heatmaps(m) + [f"results/plots/{m}/sweep.png"]
        plots += list(method_plot_files(m).values())
        out += plots + svg_of(plots) + heatmap_folder(m)
    out += ["results/report/summary.html", "results/report/summary.md"]
    for m in STUDY.methods:
        if has_calibration(m):
            out += [
                f"results/calibration/{m}.csv",
                f"results/calibration/{m}/calibration.png",
            ]
    return out


# Archive (`snakemake archive`): what goes into results/archive/{study}.zip.
def archive_settings():
    return {"confidential": False, "authors": []} | (config.get("archive") or {})


def archive_zip():
    from themesim.archive.build import archive_name

    return f"results/archive/{archive_name(STUDY.name)}.zip"


def archive_results():
    """The final outputs plus the side tables and theme embeddings their rules also write."""
    out = [f for f in get_final_output() if f.startswith("results/")]
    for m in STUDY.methods:
        # The archive packs every file a manifest lists (themesim.archive.build).
        out += [
            similarity_manifest(m),
            transport_manifest(m),
            f"results/metrics/{m}/sets_themes.csv",
            f"results/metrics/{m}/transport/splits_joins.csv",
            f"results/metrics/{m}/decision_changes.csv",
        ]
        if has_runs(m):
            out.append(f"results/metrics/{m}/runs_matrix.parquet")
        out += embedding_files(m, STUDY.sets)
    out += paraphrase_files()
    return list(dict.fromkeys(out))


def precomputed_inputs():
    """Per method that reads score matrices made elsewhere, the files it reads."""
    return {
        m: matrix_files(m, STUDY.method_pairs(m))
        for m in STUDY.methods_with("reads_matrices")
    }


def coded_inputs():
    """set -> its coded-segments file (`theme_sets[i].segments`), when that is not the set's
    own theme file (a .qdpx is both): an input the archive and the report's inputs hold.
    """
    return {s: p for s, p in STUDY.segments.items() if p != STUDY.sets.get(s)}


def judge_cache():
    """The judge's cache when a judge method runs (an accumulating file, not a rule output)."""
    return "results/cache/judge.sqlite" if STUDY.methods_with("judge_cache") else None


def generate_cache():
    """The theme generation's cache when runs are generated (kept like the judge's)."""
    return ["results/cache/generate.sqlite"] if STUDY.generated else []


def coder_cache():
    """The LLM coder's cache when some set is LLM-coded (kept like the judge's)."""
    return ["results/cache/coder.sqlite"] if llm_coded_sets() else []


def archive_code():
    """The workflow's own files by name in the archive, so the archive can be rerun."""
    from themesim.archive.build import code_files

    return {name: str(p) for name, p in code_files(workflow.basedir).items()}


def generated_files():
    """The CSVs of the LLM-generated runs (generate_themes), in run order."""
    return [generated_csv(run) for run in STUDY.generated]


def generate_prompt_files():
    from themesim.llm.prompts import prompt_paths

    return [
        str(p)
        for p in prompt_paths(STUDY.generate.get("prompt", "generate_v1")).values()
    ]


# Grounding (workflow/rules/grounding.smk): theme sets' labels on the transcript segments.
def has_grounding():
    return bool(STUDY.grounding.get("active", True) and STUDY.transcripts)


def grounding_pairs(pairs=None):
    """Pair names of the grounding rules' per-pair files; none when grounding is off, so
    an all-pairs study without transcripts declares no pairs-squared files it never makes.
    """
    return (
        pair_names(STUDY.pairs if pairs is None else pairs) if has_grounding() else []
    )


def assign_threshold(method):
    """Theme-segment similarity at which a segment gets a theme; None: the kind never assigns."""
    if STUDY.grounding["assign"] == "never":
        return None
    return STUDY.methods[method].get("assign_threshold")  # a kind's default, or absent


def assigns(method, set_name):
    """Does the set get coder labels from the method's vectors (so it needs embeddings)?"""
    if assign_threshold(method) is None:
        return False
    return set_coder(STUDY.grounding["coder"], method, set_name) != "llm"


def coder_sets(method):
    """The method's sets its coder labels (grounding.coder): by the LLM or by vectors."""
    if STUDY.grounding["assign"] == "never":
        return []
    return [
        s for s in STUDY.sets_for(method) if assigns(method, s) or llm_coded(method, s)
    ]


def llm_coded(method, set_name):
    return (
        STUDY.grounding["assign"] != "never"
        and set_coder(STUDY.grounding["coder"], method, set_name) == "llm"
    )


def llm_coded_sets(method=None):
    """Sets the LLM codes under `method` (None: under any method with grounding)."""
    methods = [method] if method else (list(STUDY.methods) if has_grounding() else [])
    return [
        s
        for s in STUDY.sets
        if any(llm_coded(m, s) for m in methods if s in STUDY.sets_for(m))
    ]


def llm_score_file(set_name):
    return f"results/coder/llm/{set_name}.parquet"


def coder_descriptions(method):
    """Set -> one line naming the coder that labels it under the method."""
    return {
        s: describe(
            STUDY.grounding["coder"],
            set_coder(STUDY.grounding["coder"], method, s),
            assign_threshold(method),
        )
        for s in coder_sets(method)
    }


def coded_sets(method):
    """The method's sets with a coded-segments file, in set order."""
    return [s for s in STUDY.sets_for(method) if s in STUDY.segments]


def assigned_sets(method):
    """The method's sets that get coder labels from its vectors (assigns), in set order."""
    return [s for s in STUDY.sets_for(method) if assigns(method, s)]


def variant_sets(pairs):
    """The sets of the comparisons a copy of a rule runs (pair_variants); every set for the
    first copy."""
    return list(STUDY.sets) if pairs == STUDY.pairs else sets_of(pairs)


def grounding_settings():
    """What the grounding metrics read: `grounding:`'s interval and test settings."""
    g = STUDY.grounding
    return {
        "min_iou": g["min_iou"],
        "seed": g["seed"],
        "intervals": g["intervals"],
        "bootstrap": {"n": g["bootstrap"]},
        "permutations": g["permutations"],
    }


CODER_AGREEMENT = "results/grounding/coder_agreement.csv"


def coder_agreement_files():
    return [CODER_AGREEMENT] if has_grounding() else []


def label_files(method):
    return [f"results/segments/{method}/{s}.parquet" for s in STUDY.sets_for(method)]


def quote_files(method):
    return [f"results/segments/{method}/{s}.quotes.csv" for s in STUDY.sets_for(method)]


def grounding_outputs(method):
    if not has_grounding():
        return []
    plots = [
        f"results/plots/{method}/grounding/{p}_iou"
        for p in pair_names(STUDY.pairs_for(method))
    ]
    plots.append(f"results/plots/{method}/grounding/text_vs_data")
    return (
        [
            f"results/metrics/{method}/grounding.csv",
            f"results/metrics/{method}/grounding_pairs.csv",
        ]
        + [f"{p}.{ext}" for p in plots for ext in ("png", "svg")]
        + coder_agreement_files()
    )


def grounding_report_files(method):
    """What the report's grounding section reads of a method (none without grounding)."""
    if not has_grounding():
        return {}
    return {
        "grounding_csv": f"results/metrics/{method}/grounding.csv",
        "grounding_dir": f"results/metrics/{method}/grounding",
        "segments_dir": f"results/segments/{method}",
        "segments_parquet": "results/transcripts/segments.parquet",
        "grounding_heatmaps": {
            p: f"results/plots/{method}/grounding/{p}_iou.png"
            for p in pair_names(STUDY.pairs_for(method))
        },
        "grounding_scatter_png": f"results/plots/{method}/grounding/text_vs_data.png",
        "coder_agreement_csv": CODER_AGREEMENT,
    }
