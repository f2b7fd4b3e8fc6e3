"""The summary report, built from small synthetic pipeline outputs."""

from __future__ import annotations

import base64
import math
import re
from html import unescape
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import comparison_row, run_session, write_method, write_study
from markupsafe import escape

from themesim.report.context import HEADINGS
from themesim.report.format import _compact_png, fmt_threshold
from themesim.report.plots.runs import runs_heatmap
from themesim.report.textblock import format_text_block

NAN = float("nan")


@pytest.fixture
def study(tmp_path):
    minilm_rows = [
        comparison_row(
            "minilm",
            "human",
            "llm",
            0.5,
            hungarian_f1=0.857142857,
            f1=0.72,
            matched_sim_median=0.6812,
            matched_sim_q1=0.6123,
            matched_sim_q3=0.7777,
            hungarian_coverage_a=0.75,
            hungarian_coverage_b=1.0,
            raza_jaccard=0.25,
            hungarian_n_matched=3,
            matched_sim_min=0.6,
            matched_sim_max=0.81,
            hungarian_f1_ci_low=0.6,
            hungarian_f1_ci_high=1.0,
            significant_match_rate=0.75,
        ),
        comparison_row(
            "minilm",
            "human",
            "llm",
            0.9,
            **dict.fromkeys(
                ["matched_sim_" + q for q in ("min", "q1", "median", "q3", "max")], NAN
            ),
        ),
    ]
    tfidf_rows = [
        comparison_row(
            "tfidf",
            "human",
            "llm",
            0.3,
            hungarian_f1=0.4285714,
            f1=0.5,
            matched_sim_median=0.41,
            matched_sim_q1=0.35,
            matched_sim_q3=0.45,
            hungarian_coverage_a=0.25,
            hungarian_coverage_b=0.3333,
            raza_jaccard=0.0833,
            hungarian_n_matched=1,
            matched_sim_min=0.35,
            matched_sim_max=0.45,
        )
    ]
    methods = {
        "minilm": write_method(tmp_path, "minilm", minilm_rows),
        "tfidf": write_method(tmp_path, "tfidf", tfidf_rows, with_heatmap=False, with_sweep=False),
    }
    side = tmp_path / "out" / "side by side.png"
    side.write_bytes(b"\x89PNG\r\n\x1a\nside")
    verdicts = tmp_path / "out" / "report" / "verdicts.csv"  # the pipeline always has one
    verdicts.parent.mkdir(parents=True)
    _verdict_table([_verdict_row("minilm", "llm", 0.5), _verdict_row("tfidf", "llm", 0.3)]).to_csv(
        verdicts, index=False
    )
    return {
        "out_html": tmp_path / "out" / "report" / "summary.html",
        "out_md": tmp_path / "out" / "summary.md",
        "study": {
            "name": "Carers study",
            "description": "Human vs LLM themes <b>for</b> carers",
            "reference": "human",
            "side_by_side_png": side,
            "verdicts_csv": verdicts,
        },
        "methods": methods,
        "inputs": [
            {"path": "themes/human.csv", "kind": "themes", "sha256": "ab" * 32, "n_items": 4},
            {
                "path": "transcripts/t1.txt",
                "kind": "transcript",
                "sha256": "cd" * 32,
                "n_items": 12,
            },
        ],
        "transcripts": {
            "n_transcripts": 1,
            "n_segments": 12,
            "per_transcript": [
                {"transcript": "t1", "n_segments": 12, "speakers": ["Interviewer", "P1"]}
            ],
        },
        "provenance": {
            "themesim_version": "0.1.0",
            "git_commit": "0123456789abcdef",
            "python": "3.11.2",
            "packages": {"numpy": "2.4.6", "Jinja2": "3.1.6"},
            "models": {
                "minilm": {
                    "model": "sentence-transformers/all-MiniLM-L6-v2",
                    "source": "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2",
                    "package": "sentence-transformers",
                    "package_version": "5.0.0",
                },
                "tfidf": {
                    "model": "tfidf",
                    "source": "builtin",
                    "package": "scikit-learn",
                    "package_version": None,
                },
            },
            "generated_by": "themesim run config.yaml",
        },
        "config": {
            "study": {"name": "Carers study"},
            "methods": {"minilm": {"thresholds": [0.5, 0.9]}},
        },
    }


def section(text: str, start: str, end: str) -> str:
    return text[text.index(start) : text.index(end, text.index(start))]


def page(study, name: str = "human__vs__llm", ext: str = "html") -> str:
    """One comparison's page, written beside the HTML report (comparisons/)."""
    return (study["out_html"].parent / "comparisons" / f"{name}.{ext}").read_text("utf-8")


def glance_cells(html: str) -> list[list[str]]:
    """The cells of every row of the at-a-glance tables (the primary method's and the
    folded others'), flags and links reduced to their text."""
    glance = section(html, 'id="at-a-glance"', 'id="side-by-side"')
    rows = re.findall(r"<tr>(.*?)</tr>", glance)
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", r) for r in rows]
    return [[re.sub(r"<[^>]+>", "", c) for c in r] for r in cells if r]


def test_html_has_sections_numbers_and_is_self_contained(study):
    write_study(study)
    html = study["out_html"].read_text(encoding="utf-8")

    for heading in HEADINGS.values():
        assert f">{heading}</h2>" in html
    subheadings = [
        "Method: minilm",
        "Method: tfidf",
        "All comparisons (minilm)",
        "Threshold sweep (minilm)",
        "Each comparison (minilm)",
        "Files",
        "Transcripts",
        "Software",
        "Models",
        "Package versions",
        "Configuration as run",
    ]
    for sub in subheadings:
        assert f">{sub}</h" in html, sub
    assert "<h1>Theme agreement report: Carers study</h1>" in html
    assert "&lt;b&gt;for&lt;/b&gt;" in html  # autoescaped

    cells = glance_cells(html)
    assert len(cells) == 3  # (minilm, 0.5), (minilm, 0.9), (tfidf, 0.3): tfidf's folded
    expected = (
        "minilm|human vs llm|≥ 0.5|0.857|0.600–1.000|0.720|0.681|0.612–0.778|0.750|1.000|0.250"
        "|0.750"
    )
    assert cells[0][:12] == expected.split("|")
    assert cells[1][:8] == ["minilm", "human vs llm", "≥ 0.9", "0.000", "–", "0.000", "–", "–"]
    assert cells[2][0] == "tfidf" and cells[2][3] == "0.429" and cells[2][9] == "0.333"
    assert cells[2][4] == cells[2][11] == "–"  # no interval, no null model

    # Images embedded, decodable back to the files; the heatmap on its comparison's page.
    uris = re.findall(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    assert len(uris) == 2  # minilm sweep, side by side
    detail = page(study)
    for sub in ["minilm", "tfidf"]:
        assert f'id="method-{sub}">{sub}</h2>' in detail
    for sub in ["Similarity heatmap", "Per-theme matches", "What changed across thresholds"]:
        assert f"<summary>{sub}</summary>" in detail
    assert '<a href="comparisons/human__vs__llm.html#method-minilm">human vs llm</a>' in html
    uris = re.findall(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"', detail)
    heat = study["methods"]["minilm"]["heatmaps"]["human__vs__llm"]
    # embedded shrunk for the screen (format.embed_width), a palette, never larger
    assert base64.b64encode(_compact_png(heat.read_bytes())).decode() in uris
    shrunk = _compact_png(heat.read_bytes())
    assert len(shrunk) < len(heat.read_bytes()) and shrunk[:8] == b"\x89PNG\r\n\x1a\n"
    assert "Heatmap not available for this comparison." in detail  # tfidf has none
    assert "Threshold-sweep figure not available." in html
    assert "http" not in detail and "<script" not in detail

    assert "http://" not in html and "https://" not in html
    assert "<script" not in html and "<link" not in html and "url(" not in html
    assert '<meta name="viewport"' in html and "@media print" in html and "overflow-x: auto" in html
    # The URL is still readable, only not a literal link.
    assert "https&#58;//huggingface.co/sentence-transformers/all-MiniLM-L6-v2" in html


def test_html_text_blocks_and_per_theme_table(study):
    write_study(study)
    html = study["out_html"].read_text(encoding="utf-8")
    assert "comparisons.csv" in section(html, 'id="method-minilm"', 'id="method-tfidf"')
    minilm = section(page(study), 'id="method-minilm"', 'id="method-tfidf"')
    rows = pd.read_csv(study["methods"]["minilm"]["comparisons_csv"])
    for row in rows.to_dict("records"):
        block = format_text_block(row, fmt_threshold(row["threshold"], row["op"]))
        assert f"<pre>{escape(block)}</pre>" in minilm
    assert "Hungarian F1 = 0.86, Coverage F1 = 0.72" in minilm
    assert "<td>H01 Guilt and obligation</td><td>L02 Duty | care</td>" in minilm
    # "NA" stays a theme name; unassigned partner shown as a dash.
    dash = '<td class="num">–</td>'
    assert (
        '<td>H02 NA</td><td>L01 Money worries</td><td class="num">0.330</td>'
        f'<td class="num">0.200</td>{dash}{dash}' in minilm
    )


def test_inputs_and_provenance(study):
    write_study(study)
    html = study["out_html"].read_text(encoding="utf-8")
    inputs = section(html, 'id="inputs"', 'id="provenance"')
    assert (
        '<td>themes/human.csv</td><td>themes</td><td class="num">4</td><td>' + "ab" * 32 in inputs
    )
    assert "1 transcript(s), 12 segment(s)." in inputs and "Interviewer, P1" in inputs
    prov = html[html.index('id="provenance"') :]
    assert "0123456789abcdef" in prov and "3.11.2" in prov and "themesim run config.yaml" in prov
    # Packages sorted case-insensitively; missing version as a dash.
    assert prov.index("<td>Jinja2</td>") < prov.index("<td>numpy</td>")
    assert '<td>scikit-learn</td><td class="num">–</td>' in prov
    yaml_text = "study:\n  name: Carers study\nmethods:\n  minilm:\n    thresholds:\n"
    assert f"<pre>{yaml_text}    - 0.5\n    - 0.9\n</pre>" in prov


def test_markdown_numbers_images_and_code_blocks(study):
    write_study(study)
    md = study["out_md"].read_text(encoding="utf-8")
    for heading in HEADINGS.values():
        assert f"\n## {heading}\n" in md
    assert md.startswith("# Theme agreement report: Carers study\n")
    glance = "| minilm | human vs llm | ≥ 0.5 | 0.857 | 0.600–1.000 | 0.720 | 0.681 | 0.612–0.778 |"
    assert glance + " 0.750 | 1.000 | 0.250 | 0.750 |" in md
    assert "| tfidf | human vs llm | ≥ 0.3 | 0.429 |" in md
    # Relative to the .md file's folder (out/), with <> around a path with spaces; a
    # comparison's page links from its own folder (out/report/comparisons/)
    detail = page(study, ext="md")
    assert "](../../minilm/heat.png)" in detail
    assert "](report/comparisons/human__vs__llm.md)" in md
    assert "](minilm/sweep.png)" in md
    assert "](<side by side.png>)" in md
    assert "data:image" not in md
    assert "Human vs LLM themes &lt;b&gt;for&lt;/b&gt; carers" in md  # no raw HTML
    assert "\n\n\n" not in md
    row = pd.read_csv(study["methods"]["minilm"]["comparisons_csv"]).iloc[0].to_dict()
    block = format_text_block(row, fmt_threshold(row["threshold"], row["op"]))
    assert f"```text\n{block}\n```" in detail
    assert "| H01 Guilt and obligation | L02 Duty \\| care |" in detail  # pipe escaped
    assert "```yaml\nstudy:\n  name: Carers study\n" in md
    assert "\n\n\n" not in detail
    # Every table row has as many cells as its header.
    for block in re.split(r"\n\n", md + "\n\n" + detail):
        lines = [ln for ln in block.split("\n") if ln.startswith("|")]
        if lines:
            counts = {len(re.findall(r"(?<!\\)\|", ln)) for ln in lines}
            assert len(counts) == 1, block


def test_paraphrase_ceiling_columns_only_when_the_ceiling_ran(study):
    # Inactive: comparisons.csv lacks the columns, and the report says nothing of a ceiling.
    write_study(study)
    for out in ("out_html", "out_md"):
        text = study[out].read_text(encoding="utf-8")
        assert "ceiling" not in text.lower() and "Normalised alignment" not in text
    # Active: minilm has them (0.681 matched median over a ceiling of 0.8 = 85.1 %); the
    # tfidf method, a kind without a ceiling, shows dashes in the same columns.
    path = study["methods"]["minilm"]["comparisons_csv"]
    comp = pd.read_csv(path)
    comp["ceiling_median"] = 0.8
    comp["matched_sim_pct_of_ceiling"] = 100 * comp["matched_sim_median"] / 0.8
    comp["normalised_alignment"] = (comp["matched_sim_median"] - 0.2) / (0.8 - 0.2)
    comp.to_csv(path, index=False)
    write_study(study)
    md = study["out_md"].read_text(encoding="utf-8")
    head = md[md.index("| Method | Comparison |") :].split("\n", 1)[0]
    assert head.endswith(
        "| Significant match rate | Ceiling median | Matched sim. % of ceiling "
        "| Normalised alignment | Interval assumes | Flags |"
    )
    # (0.6812 - 0.2) / 0.6 = 0.802; 100 * 0.6812 / 0.8 = 85.15
    assert "| 0.250 | 0.750 | 0.800 | 85.2 | 0.802 |" in md
    assert "| 0.800 | – | – |" in md  # θ 0.9: nothing matched, the ceiling stays
    tfidf = next(ln for ln in md.splitlines() if ln.startswith("| tfidf | human vs llm |"))
    assert tfidf.endswith("| – | – | – |")
    assert "normalised alignment = (observed − null) / (ceiling − null)" in md
    # The paper's headline table carries them too: CSV at full precision, LaTeX 3 (1) decimals.
    from themesim.report.headline import HEADLINE_COLUMNS, headline_frame, headline_tex

    df = headline_frame({m: s["comparisons_csv"] for m, s in study["methods"].items()})
    assert list(df.columns) == HEADLINE_COLUMNS + [
        "ceiling_median", "matched_sim_pct_of_ceiling", "normalised_alignment"
    ]  # fmt: skip
    assert df["matched_sim_pct_of_ceiling"].iloc[0] == pytest.approx(85.15)
    assert df["ceiling_median"].isna().tolist() == [False, False, True]  # tfidf: none
    tex = headline_tex(df)
    assert "\\begin{tabular}{llrrlrrlrrrrrrr}" in tex and "Paraphrase ceiling" in tex
    assert " & 0.250 & 0.750 & 0.800 & 85.2 & 0.802 \\\\" in tex
    assert tex.splitlines()[-3].endswith(" & -- & -- & -- \\\\")  # tfidf's row
    html = study["out_html"].read_text(encoding="utf-8")
    glance = section(html, 'id="at-a-glance"', 'id="side-by-side"')
    link = '<a class="term" href="#g-ceiling">Normalised alignment</a>'
    assert f'<th scope="col">{link}</th>' in glance
    assert '<td class="num">85.2</td><td class="num">0.802</td>' in glance
    assert "0 = no better than salad, 1 = as close as a paraphrase" in glance


def test_html_image_paths_relative_to_html_dir_not_needed(study):
    # The HTML mentions the CSV relative to its own folder (out/report/).
    write_study(study)
    html = study["out_html"].read_text(encoding="utf-8")
    assert "<code>../minilm/comparisons.csv</code>" in html
    md = study["out_md"].read_text(encoding="utf-8")
    assert "`minilm/comparisons.csv`" in md


def test_reports_are_byte_identical_across_runs(study, tmp_path):
    write_study(study)
    first = study["out_html"].read_bytes(), study["out_md"].read_bytes()
    write_study(study)
    assert (study["out_html"].read_bytes(), study["out_md"].read_bytes()) == first
    assert b"\r\n" not in first[0]


def test_missing_required_csv_names_the_path(study):
    missing = study["methods"]["tfidf"]["comparisons_csv"] + ".gone"
    study["methods"]["tfidf"]["comparisons_csv"] = missing
    with pytest.raises(FileNotFoundError, match=re.escape(missing)):
        write_study(study)


def test_missing_themes_csv_names_the_path(study):
    missing = study["methods"]["minilm"]["themes_csv"] + ".gone"
    study["methods"]["minilm"]["themes_csv"] = missing
    with pytest.raises(FileNotFoundError, match="themes CSV of method 'minilm'"):
        write_study(study)


def test_missing_optional_inputs_do_not_crash(study):
    study["study"]["side_by_side_png"] = None
    study["methods"]["minilm"]["heatmaps"] = {"human__vs__llm": "/nonexistent/heat.png"}
    study["methods"]["minilm"]["sweep_png"] = None
    study["transcripts"] = {"n_transcripts": 0, "n_segments": 0, "per_transcript": []}
    study["inputs"] = []
    study["provenance"]["git_commit"] = None
    write_study(study)
    html = study["out_html"].read_text(encoding="utf-8")
    assert "data:image" not in html
    assert "Side-by-side figure not available." in html
    assert "No transcripts were used." in html and "not recorded" in html


def test_wrong_method_table_is_refused(study):
    from themesim.errors import InputError

    study["methods"]["tfidf"]["comparisons_csv"] = study["methods"]["minilm"]["comparisons_csv"]
    with pytest.raises(InputError, match="no rows for method 'tfidf'"):
        write_study(study)


def test_missing_column_is_named(study):
    path = study["methods"]["minilm"]["comparisons_csv"]
    pd.read_csv(path).drop(columns="hungarian_f1").to_csv(path, index=False)
    with pytest.raises(ValueError, match="hungarian_f1"):
        write_study(study)


def test_nan_formatting():
    from themesim.report.format import fmt

    assert fmt(NAN) == "–" and fmt(None) == "–" and fmt(0.12345) == "0.123" and fmt(1) == "1.000"
    assert not math.isnan(float(fmt(0.5)))


# ---------------------------------------------------------------------------
# headline table, threshold changes, the optional tables and figures


def test_headline_table_equals_the_metric_csvs_and_the_glance_table(study, tmp_path):
    from themesim.report.headline import HEADLINE_COLUMNS, headline_frame, write_headline

    paths = {m: spec["comparisons_csv"] for m, spec in study["methods"].items()}
    df = headline_frame(paths)
    write_headline(df, out_csv=tmp_path / "headline.csv", out_tex=tmp_path / "headline.tex")
    back = pd.read_csv(tmp_path / "headline.csv")
    assert list(back.columns) == HEADLINE_COLUMNS
    source = pd.concat([pd.read_csv(p) for p in paths.values()], ignore_index=True)
    # tfidf has no interval or null-model columns: NaN in the headline, never made up.
    source = source.reindex(columns=HEADLINE_COLUMNS)
    pd.testing.assert_frame_equal(back, source, check_exact=True)

    tex = (tmp_path / "headline.tex").read_text(encoding="utf-8")
    body = tex[tex.index("\\midrule\n") + len("\\midrule\n") : tex.index("\\bottomrule")]
    rows = [ln for ln in body.splitlines() if ln.endswith("\\\\")]
    assert len(rows) == 3 and body.count("\\addlinespace") == 1  # minilm (2 rows), tfidf
    assert rows[0] == (
        r"minilm & human vs llm & $\geq$ 0.5 & 0.857 & 0.600--1.000 & 0.720 & 0.681"
        r" & 0.612--0.778 & 0.750 & 1.000 & 0.250 & 0.750 \\"
    )
    # Method named once; no match -> dashes, never 0.
    assert rows[1].startswith(r" & human vs llm & $\geq$ 0.9 & 0.000 & -- & 0.000 & -- & -- & ")
    assert rows[2].startswith(r"tfidf & human vs llm & $\geq$ 0.3 & 0.429 & -- & 0.500 & 0.410 & ")
    assert rows[2].endswith(r" & 0.083 & -- \\")  # no null model: no significance rate
    assert tex.count("\\toprule") == tex.count("\\bottomrule") == 1
    assert "\\begin{tabular}{llrrlrrlrrrr}" in tex  # 12 columns

    # The report's glance table shows the same numbers, 3 decimals.
    write_study(study)
    html = study["out_html"].read_text(encoding="utf-8")
    glance = section(html, 'id="at-a-glance"', 'id="side-by-side"')
    for r in df.to_dict("records"):
        assert f'<td class="num">{r["hungarian_f1"]:.3f}</td>' in glance
    assert '<td class="num">0.600–1.000</td>' in glance  # the interval beside the F1
    assert "<code>../headline.csv</code>" not in glance  # only when the study names them


def test_tex_escape():
    from themesim.report.headline import tex_escape

    assert tex_escape("llm_v2 & 50% #1 {x} ~ ^ $ \\") == (
        r"llm\_v2 \& 50\% \#1 \{x\} \textasciitilde{} \textasciicircum{} \$ \textbackslash{}"
    )


def test_threshold_changes_from_the_sweep(study):
    sweep = study["methods"]["minilm"]["sweep_csv"]
    grid = pd.read_csv(sweep).iloc[:1].copy()
    rows = []
    # Hungarian F1 by hand: 1.0 up to 0.3, 0.5 at 0.4-0.5, zero from 0.6.
    for t, h in [(0.2, 1.0), (0.3, 1.0), (0.4, 0.5), (0.5, 0.5), (0.6, 0.0), (0.7, 0.0)]:
        r = grid.iloc[0].to_dict() | {"threshold": t, "hungarian_f1": h, "f1": 0.8}
        rows.append(r)
    pd.DataFrame(rows).to_csv(sweep, index=False)
    write_study(study)
    minilm = section(page(study), 'id="method-minilm"', 'id="method-tfidf"')
    changes = section(minilm, ">What changed across thresholds</summary>", "</table>")
    head = [re.sub(r"<[^>]+>", "", h) for h in re.findall(r"<th scope=\"col\">(.*?)</th>", changes)]
    assert head == [
        "Metric", "≥ 0.5", "≥ 0.9", "Sweep maximum", "At its maximum up to θ", "Zero from θ",
    ]  # fmt: skip
    table_rows = [
        re.findall(r"<td[^>]*>(.*?)</td>", tr) for tr in re.findall(r"<tr>(.*?)</tr>", changes)
    ]
    cells = {r[0]: r[1:] for r in table_rows if r}
    # Configured θ from comparisons.csv; the rest from the sweep.
    assert cells["Hungarian F1"] == ["0.857", "0.000", "1.000", "0.3", "0.6"]
    assert cells["Coverage F1"][2:] == ["0.800", "0.7", "–"]  # never zero on the grid
    assert "θ from 0.2 to 0.7 (step 0.1, 6 values)" in minilm


def test_optional_tables_figures_and_methods_table(study, tmp_path):
    d = tmp_path / "out" / "minilm"
    img = runs_heatmap(["llm", "llm2"], np.eye(2), score=0.5, title="t", out_png=d / "r.png")
    pd.DataFrame(
        [["minilm", "human", 4, 0.61, 0.5, 0.3, 0.4, 0.2, 0.1, 2, 12]],
        columns=["method", "set", "n_themes", "sc_mean", "sc_median", "sd_mean", "semdiv",
                 "semdiv_semantic", "semdiv_distribution", "npmi_mean", "n_segments_assigned"],
    ).to_csv(d / "sets.csv", index=False)  # fmt: skip
    pd.DataFrame(
        [["minilm", "llms", "llm", 0.84, 0.674, 0.674, 0.674, 0.674]] * 1
        + [["minilm", "llms", "llm2", 0.83, 0.674, 0.674, 0.674, 0.674]],
        columns=["method", "group", "run", "ncs", "mean_sim_to_others", "max_sim_to_other",
                 "min_sim_to_other", "run_consistency"],
    ).to_csv(d / "runs.csv", index=False)  # fmt: skip
    themes = pd.read_csv(study["methods"]["minilm"]["themes_csv"], keep_default_na=False)
    themes["gap_abs"] = [0.41, 0.13, 0.26]
    themes["category"] = ["confident_unique", "no_good_match", "ambiguous"]
    themes.to_csv(study["methods"]["minilm"]["themes_csv"], index=False)
    study["methods"]["minilm"] |= {
        "run_consistency_png": img,
        "theme_map_png": img,
        "distributions_png": img,
        "confidence_png": img,
        "sets_csv": d / "sets.csv",
        "runs_csv": d / "runs.csv",
        "kind": "sentence_transformer",
    }
    study["study"] |= {
        "headline_csv": tmp_path / "out" / "report" / "headline.csv",
        "headline_tex": tmp_path / "out" / "report" / "headline.tex",
    }
    write_study(study)
    html = study["out_html"].read_text(encoding="utf-8")
    minilm = section(html, 'id="method-minilm"', 'id="method-tfidf"')
    for sub in ["Distributions", "Confidence profile", "Theme-set quality", "Run consistency"]:
        assert f">{sub} (minilm)</h4>" in minilm
    # the PCA theme map is drawn, named, not shown: distances on it are not similarities
    assert ">Theme map (minilm)</h4>" not in minilm
    assert "Also drawn, not shown: Theme map <code>../minilm/r.png</code>" in minilm
    assert minilm.count(base64.b64encode(_compact_png(img.read_bytes())).decode()) == 3
    assert (
        '<td>human</td><td class="num">4</td><td class="num">0.610</td>'
        '<td class="num">0.300</td><td class="num">0.400</td><td class="num">2.000</td>'
    ) in minilm
    assert "(mean off-diagonal similarity of the runs, within each run group): " in minilm
    assert "<strong>llms 0.674</strong>" in minilm
    assert '<td>llms</td><td>llm2</td><td class="num">0.830</td>' in minilm
    # Gap and category after the partner columns (on the comparison's page).
    assert (
        '<td class="num">0.810</td><td class="num">0.410</td><td>confident unique</td></tr>'
        in page(study)
    )
    tfidf = html[html.index('id="method-tfidf"') : html.index('id="inputs"')]
    assert "Theme map" not in tfidf and "Theme-set quality table not available." in tfidf
    assert "<code>headline.csv</code> (CSV, full precision)" in html
    assert "<code>headline.tex</code> (LaTeX, booktabs)" in html
    prov = html[html.index('id="provenance"') :]
    assert (
        "<td>minilm</td><td>sentence_transformer</td><td>minilm cosine similarity</td>"
        "<td>0.5, 0.9</td><td>a pair matches when S ≥ θ</td><td>cosine</td>" in prov
    )
    side = section(html, 'id="side-by-side"', 'id="by-method"')
    heads = re.findall(r"<th scope=\"col\">(.*?)</th>", side)
    assert [re.sub(r"<[^>]+>", "", h) for h in heads] == [
        "Comparison", "minilm (≥ 0.5)", "tfidf (≥ 0.3)",
    ]  # fmt: skip
    assert '<td>human vs llm</td><td class="num">0.857</td><td class="num">0.429</td>' in side
    md = study["out_md"].read_text(encoding="utf-8")
    assert "](minilm/r.png)" in md and "`report/headline.tex` (LaTeX, booktabs)" in md
    assert "| human | 4 | 0.610 | 0.300 | 0.400 | 2.000 |" in md


# ---------------------------------------------------------------------------
# a real browser


def _chromium():
    import shutil

    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(_chromium() is None, reason="needs Chromium: `make browser` installs it")
def test_report_renders_in_headless_chromium_without_errors_or_requests(study, tmp_path):
    import json

    from PIL import Image

    # Real figures in place of the fixture's placeholder bytes.
    for spec in study["methods"].values():
        if spec["sweep_png"]:
            runs_heatmap(["a", "b"], np.eye(2), score=0.5, title="t", out_png=spec["sweep_png"])
    runs_heatmap(
        ["a", "b"], np.eye(2), score=0.5, title="t", out_png=study["study"]["side_by_side_png"]
    )
    write_study(study)
    shot, netlog = tmp_path / "phone.png", tmp_path / "net.json"
    proc = run_session(
        [
            _chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--enable-logging=stderr",
            "--v=0",
            f"--log-net-log={netlog}",
            # Any request to another machine fails, and shows in the net log.
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--window-size=412,2400",  # a phone's width
            f"--screenshot={shot}",
            study["out_html"].resolve().as_uri(),
        ],
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    # Console messages of the page (errors included) are logged as CONSOLE lines.
    console = [ln for ln in proc.stderr.splitlines() if "CONSOLE" in ln]
    assert not console, console

    events = json.loads(netlog.read_text())
    types = {v: k for k, v in events["constants"]["logEventTypes"].items()}
    page_requests = [
        e["params"]["url"]
        for e in events["events"]
        if types.get(e["type"]) == "URL_REQUEST_START_JOB"
        and "file://" in str(e["params"].get("network_isolation_key", ""))
    ]
    assert not [u for u in page_requests if not u.startswith(("file:", "data:"))], page_requests

    with Image.open(shot) as im:
        assert im.size == (412, 2400)
        rgb = np.asarray(im.convert("RGB"), dtype=np.int16)
    # Content: many non-white pixels and more than a few colours (text, tables, the heatmap).
    non_white = (rgb.sum(axis=2) < 700).mean()
    assert 0.03 < non_white < 0.9
    assert len(np.unique(rgb.reshape(-1, 3), axis=0)) > 50
    # Readable on a phone: the body text does not overflow the right edge.
    assert (rgb[:, -6:, :].sum(axis=2) < 700).mean() < 0.2


def test_markdown_syntax_in_names_is_escaped(study):
    # Regression (issue 15): link and emphasis syntax in a theme name reached summary.md as is.
    themes = Path(study["methods"]["minilm"]["themes_csv"])
    text = themes.read_text(encoding="utf-8")
    name = "[Guilt](http://evil.example) *and* obligation_x"
    themes.write_text(text.replace("Guilt and obligation", name), encoding="utf-8")
    write_study(study)
    md = page(study, ext="md")
    assert r"H01 \[Guilt\]\(http://evil.example\) \*and\* obligation\_x" in md
    for text in (md, study["out_md"].read_text(encoding="utf-8")):
        assert "[Guilt](" not in text and "*and*" not in text
    html = page(study)
    assert "*and* obligation_x" in html and r"\*and\*" not in html  # HTML only escapes HTML


# ---------------------------------------------------------------------------
# verdicts (issue 26): the sentences that open the report, read at a glance


def _verdict_table(rows):
    from themesim.metrics.verdicts.equivalence import VERDICT_COLUMNS

    return pd.DataFrame(rows, columns=VERDICT_COLUMNS)


def _verdicts(study, tmp_path, rows):
    path = tmp_path / "out" / "report" / "verdicts.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    _verdict_table(rows).to_csv(path, index=False)
    study["study"]["verdicts_csv"] = path
    return path


def _verdict_row(method, set_b, threshold, **values):
    base = {
        "method": method, "set_a": "human", "set_b": set_b, "threshold": threshold,
        "op": "ge", "role": "compared", "second_analyst": "", "metric": "hungarian_coverage_a",
        "n_a": 10, "n_matched": 6, "agreement": 0.6, "agreement_ci_low": 0.2624,
        "agreement_ci_high": 0.8784, "hungarian_f1": 0.75, "hungarian_f1_ci_low": 0.4,
        "hungarian_f1_ci_high": 0.9, "verdict": "", "ci_method": "",
    }  # fmt: skip
    return base | values


GROUPED = {
    "second_analyst": "human_b", "human_n_matched": 8, "human_human": 0.8,
    "human_human_ci_low": 0.4439, "human_human_ci_high": 0.9748, "n_both": 5, "n_only_b": 1,
    "n_only_human": 3, "n_neither": 1, "difference": -0.2, "difference_ci_low": -0.4612,
    "difference_ci_high": 0.0871, "difference_ci_level": 0.9, "margin": 0.1, "alpha": 0.05,
    "verdict": "inconclusive", "ci_method": "paired score",
}  # fmt: skip


def test_verdict_sentences_open_the_report_and_are_made_of_table_cells(study, tmp_path):
    _verdicts(
        study,
        tmp_path,
        [
            _verdict_row("minilm", "llm", 0.5, **GROUPED),
            _verdict_row("minilm", "human_b", 0.5, role="reference group", n_matched=8),
            _verdict_row(
                "minilm", "llm", 0.9, **GROUPED | {"verdict": "worse", "difference_ci_high": -0.15}
            ),
            _verdict_row("tfidf", "llm", 0.3, second_analyst="human_b", margin=0.1, alpha=0.05),
        ],
    )
    write_study(study)
    html = study["out_html"].read_text(encoding="utf-8")
    # the answer comes first, then where the sets differ, where figures disagree, the
    # verdicts in full, then the at-a-glance table; what the numbers mean (with the glossary)
    # after the figures it explains
    assert (
        html.index('id="answer"')
        < html.index('id="differ"')
        < html.index('id="cautions"')
        < html.index('id="verdicts"')
        < html.index('id="at-a-glance"')
        < html.index('id="how-to-read"')
        < html.index('id="glossary"')
    )
    verdicts = section(html, 'id="verdicts"', 'id="compared"')
    first = (
        "Difference -0.200 [-0.461, 0.087] (90 % CI): inconclusive: the interval reaches both "
        "below −0.100 and above 0. θ ≥ 0.5: llm matches 6 of 10 human themes one-to-one "
        "(0.600, 95 % CI 0.262–0.878; Hungarian F1 0.750); the second analyst human_b matches "
        "8 (0.800, 95 % CI 0.444–0.975)."
    )
    assert f"<li>{first}</li>" in verdicts
    assert "worse: the whole interval lies below 0, and below −0.100 too." in verdicts
    # methods never pooled: a sentence per method and threshold; the group's own row is not
    assert verdicts.count("<li>") == 3 and "human_b matches 8 of" not in verdicts
    assert (
        "θ ≥ 0.3: llm matches 6 of 10 human themes one-to-one (0.600, 95 % CI 0.262–0.878; "
        "Hungarian F1 0.750); this method did not compare human with the second analyst "
        "human_b (its comparisons: setting), so there is no verdict."
    ) in verdicts
    md = study["out_md"].read_text(encoding="utf-8")
    assert (
        md.index("## The answer")
        < md.index("## Where the figures disagree")
        < md.index("## Verdicts")
        < md.index("## At a glance")
        < md.index("## What these numbers mean")
    )
    # names and brackets escaped as every name in the Markdown report is
    assert "θ ≥ 0.5: llm matches 6 of 10 human themes one-to-one \\(0.600, 95 % CI" in md
    assert "the second analyst human\\_b matches 8" in md


GENERATOR = {
    "role": "generator", "second_analyst": "human_b, human_c", "n_a": 30, "agreement": 0.52,
    "human_human": 0.71, "difference": -0.19, "difference_ci_low": -0.3125,
    "difference_ci_high": -0.0675, "difference_ci_level": 0.9, "margin": 0.1, "alpha": 0.05,
    "verdict": "worse", "ci_method": "crossed jackknife", "n_runs": 3, "n_analysts": 3,
    "evidence": "strength", "margin_source": "convention", "leads": True,
    "generator_runs": "r1, r2, r3", "run_sd": 0.041, "analyst_sd": 0.052,
    "covers": "themes + runs + analysts",
}  # fmt: skip


def test_a_generator_verdict_leads_and_the_rest_is_folded(study, tmp_path):
    primary = GENERATOR | {"primary": True, "analysis": "primary"}
    other = GENERATOR | {"evidence": "matched", "leads": False, "primary": False,
                         "analysis": "sensitivity", "verdict": "inconclusive"}  # fmt: skip
    _verdicts(
        study,
        tmp_path,
        [
            _verdict_row("minilm", "qwen", 0.5, **primary),
            _verdict_row("minilm", "qwen", 0.5, **other),
            _verdict_row("minilm", "r1", 0.5, **GROUPED),
        ],
    )
    write_study(study)
    html = study["out_html"].read_text(encoding="utf-8")
    # the answer: the word, the difference with its interval, in plain words, flagged where
    # another analysis gives another word
    answer = section(html, 'id="answer"', 'id="cautions"')
    row = re.sub(r"<[^>]+>", "", section(answer, "<tbody>", "</tbody>"))
    assert "qwen (3 runs)worse-0.190 [-0.312, -0.068]" in row
    assert "Agrees with the analysts less than they agree with each other." in row
    assert "⚑ " not in row  # the flag's mark is drawn by CSS, its words are on the row
    assert "1 of 1 other analyses: inconclusive ×1" in row
    assert '<a class="flag" href="#flag-sens-qwen">' in answer
    plain = re.sub(r"<[^>]+>", "", answer)
    assert "minilm θ ≥ 0.5, route strength; margin ±0.100; 90 % intervals" in plain
    assert '<a class="term" href="#g-margin">margin</a>' in answer  # its term, linked
    # the verdict in full: a short bullet (at most 40 words), the sentence one click away
    verdicts = section(html, 'id="verdicts"', 'id="compared"')
    short = unescape(re.sub(r"<[^>]+>", "", verdicts.split("<li>", 1)[1].split("<details", 1)[0]))
    assert short.startswith(
        "Primary (minilm ≥ 0.5, route strength): worse; difference -0.190 [-0.312, -0.068] "
        "(90 %), agreement 0.520 against the analysts' 0.710; margin ±0.100."
    )
    assert len(short.split()) <= 40 + 10  # the flag's words after it
    full = unescape(
        re.sub(r"<[^>]+>", "", section(verdicts, '<details class="more">', "</details>"))
    )
    assert "qwen (3 runs) against 3 analysts (human, human_b, human_c)" in full
    assert "the whole interval lies below 0" in full
    # the other analysis folded in a table, and the flag's caution says what differs
    folded = section(
        verdicts, "the 1 other analyses (sensitivity), 1 with another word", "</table>"
    )
    assert "<td>inconclusive</td>" in folded
    cautions = section(html, 'id="cautions"', 'id="verdicts"')
    assert 'id="flag-sens-qwen"' in cautions
    assert "inconclusive under minilm ≥ 0.5 (matched)" in cautions
    # each set against each analyst: a description, not a verdict
    assert "r1 matches 6 of 10" in verdicts.split("Each set against each analyst", 1)[1]


def test_without_a_group_the_sentence_states_the_agreement_only(study, tmp_path):
    _verdicts(study, tmp_path, [_verdict_row("minilm", "llm", 0.5)])
    write_study(study)
    html = study["out_html"].read_text(encoding="utf-8")
    verdicts = section(html, 'id="verdicts"', 'id="at-a-glance"')
    assert (
        "<li>θ ≥ 0.5: llm matches 6 of 10 human themes one-to-one (0.600, 95 % CI "
        "0.262–0.878; Hungarian F1 0.750).</li>"
    ) in verdicts
    assert "second analyst" not in verdicts.split("</p>", 1)[1]


def test_no_verdicts_file_no_section(study):
    del study["study"]["verdicts_csv"]
    write_study(study)
    html = study["out_html"].read_text(encoding="utf-8")
    assert 'id="verdicts"' not in html and "## Verdicts" not in study["out_md"].read_text()


def test_headline_carries_the_first_analysts_verdict(study, tmp_path):
    from themesim.report.headline import VERDICT_HEADLINE, headline_frame, headline_tex

    paths = {m: spec["comparisons_csv"] for m, spec in study["methods"].items()}
    generator = {"role": "generator", "generator_runs": "llm", "primary": True}
    verdicts = pd.DataFrame(
        [
            _verdict_row("minilm", "llm", 0.5, **GROUPED | generator),
            _verdict_row(
                "minilm", "llm", 0.5, **GROUPED | generator | {"second_analyst": "human_c",
                                                             "primary": False}
            ),
        ]
    )  # fmt: skip
    df = headline_frame(paths, verdicts)
    assert list(df.columns[-len(VERDICT_HEADLINE) :]) == VERDICT_HEADLINE
    first = df.iloc[0]
    assert (first["second_analyst"], first["human_human"], first["verdict"]) == (
        "human_b",
        0.8,
        "inconclusive",
    )
    assert df["verdict"].tolist() == ["inconclusive", "", ""]  # θ 0.9 and tfidf: none
    tex = headline_tex(df)
    assert "\\begin{tabular}{llrrlrrlrrrrrrll}" in tex and "Human--human" in tex
    assert " & 0.800 & $-0.200$ & $[-0.461, 0.087]$ & inconclusive \\\\" in tex
    assert tex.splitlines()[-3].endswith(" & -- & -- & -- & -- \\\\")  # tfidf's row


@pytest.mark.skipif(_chromium() is None, reason="needs Chromium: `make browser` installs it")
def test_report_reads_at_a_glance_in_a_1400px_window(study, tmp_path):
    import json

    # The widest glance table: the paraphrase ceiling's columns and long set names.
    for spec in study["methods"].values():
        comp = pd.read_csv(spec["comparisons_csv"])
        comp["set_b"] = "llm_paraphrase_granular"
        for col in ("ceiling_median", "matched_sim_pct_of_ceiling", "normalised_alignment"):
            comp[col] = 0.5
        comp.to_csv(spec["comparisons_csv"], index=False)
    _verdicts(study, tmp_path, [_verdict_row("minilm", "llm_paraphrase_granular", 0.5, **GROUPED)])
    study["study"]["intervals_png"] = study["study"]["side_by_side_png"]
    runs_heatmap(
        ["a", "b"], np.eye(2), score=0.5, title="t", out_png=study["study"]["side_by_side_png"]
    )
    write_study(study)
    probe = """<script>
const glance = document.getElementById('at-a-glance').parentElement;
const wrap = glance.querySelector('.table-wrap');
const out = {scroll: wrap.scrollWidth, client: wrap.clientWidth,
  right: wrap.querySelector('table').getBoundingClientRect().right,
  page: document.documentElement.clientWidth,
  pageScroll: document.documentElement.scrollWidth,
  table: wrap.getBoundingClientRect().top,
  verdicts: document.getElementById('verdicts').getBoundingClientRect().top,
  glanceTop: glance.getBoundingClientRect().top};
const pre = document.createElement('pre');
pre.id = 'probe-' + 'out';
pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
</script></body>"""
    page = study["out_html"].with_name("probe.html")
    page.write_text(
        study["out_html"].read_text(encoding="utf-8").replace("</body>", probe), encoding="utf-8"
    )
    proc = run_session(
        [
            _chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--window-size=1400,1000",
            "--dump-dom",
            page.resolve().as_uri(),
        ],
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = re.search(r'<pre id="probe-out">(.*?)</pre>', proc.stdout)
    assert found, proc.stdout[-2000:]
    m = json.loads(found.group(1).replace("&quot;", '"'))
    # every column of the glance table is in view: no horizontal scroll, nothing cut
    assert m["scroll"] <= m["client"], m
    assert m["right"] <= m["page"] and m["pageScroll"] <= m["page"], m
    # verdicts first, then the table (its figure folded below it)
    assert m["verdicts"] < m["glanceTop"] < m["table"], m


def test_a_wide_table_is_read_whole_not_fragmented(tmp_path):
    """~160 columns turned numeric one by one left a frame of one block per column, and
    each report job warned (pandas PerformanceWarning) at its next insert."""
    import warnings

    from themesim.report.tables import TEXT_COLUMNS, read_table, sorted_records

    cols = ["method", "set_a", "set_b", "threshold", *[f"m{i}" for i in range(160)]]
    row = ["m", "a", "b", "0.5", *(["1", "", "2.5"] * 54)[:160]]
    path = tmp_path / "comparisons.csv"
    path.write_text(",".join(cols) + "\n" + ",".join(row) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        df = read_table(path, "comparisons", cols[:4], TEXT_COLUMNS)
        sorted_records(df)
    assert list(df.columns) == cols and df["m0"].dtype == "int64" and np.isnan(df.loc[0, "m1"])
    assert df["m2"].dtype == "float64" and df["set_a"].tolist() == ["a"]


def test_a_withheld_grounding_figure_says_why():
    from themesim.report.grounding_section import _why_withheld

    row = {"ami": float("nan"), "n_transcripts": 1, "withheld_reason": "ami, ari: not given"}
    assert _why_withheld(row) == " (withheld: 1 transcript(s), too few)"
    assert _why_withheld(row | {"withheld_reason": ""}) == ""
    assert _why_withheld(row | {"ami": 0.4}) == ""  # a figure given is not withheld


def test_the_segments_route_says_how_far_its_coder_agrees_with_the_analysts():
    from themesim.report.verdicts import CODER_TRUSTED, coder_note

    row = {"method": "minilm", "set_a": "human"} | GENERATOR | {"evidence": "segments"}
    checks = pd.DataFrame(
        {
            "method": ["minilm", "minilm", "minilm", "tfidf"],
            "set": ["human", "human_b", "human_c", "human"],
            "pooled_kappa": [0.54, 0.49, 0.27, 0.9],
            "pooled_kappa_ci_low": [0.42, 0.36, 0.15, 0.8],
            "pooled_kappa_ci_high": [0.67, 0.62, 0.38, 1.0],
        }
    )
    note = coder_note(row, checks)
    assert note.startswith(
        " The automatic coder agrees with the analysts' own coding at pooled κ human 0.540 "
        "[0.420, 0.670], human_b 0.490 [0.360, 0.620], human_c 0.270 [0.150, 0.380]"
    )
    assert CODER_TRUSTED == 0.4 and "below the moderate 0.4 on human_c," in note
    # every analyst at or above it: the figures alone
    fine = checks.assign(pooled_kappa=[0.54, 0.49, 0.41, 0.9])
    assert coder_note(row, fine).endswith("human_c 0.410 [0.150, 0.380].")
    # no check at all, another route, or no verdict
    assert "was not checked against any analyst's own coding" in coder_note(row, None)
    assert coder_note(row | {"evidence": "strength"}, checks) == ""
    assert coder_note(row | {"verdict": ""}, checks) == ""


def test_a_coder_below_moderate_agreement_is_a_caution(tmp_path):
    from themesim.report.cautions import _coder_cautions, coder_checks

    path = tmp_path / "coder_agreement.csv"
    pd.DataFrame(
        {
            "method": ["tfidf", "tfidf", "minilm"],
            "set": ["human", "human_b", "human"],
            "coder": "similarity (top1 centred ≥ 0.08)",
            "status": "checked",
            "level": "overall",
            "pooled_kappa": [0.30, 0.05, 0.54],
            "pooled_kappa_ci_low": [0.17, -0.05, 0.42],
            "pooled_kappa_ci_high": [0.43, 0.15, 0.67],
        }
    ).to_csv(path, index=False)
    spec = {"coder_agreement_csv": path}
    methods = {"tfidf": spec, "minilm": spec}
    got = {c["title"]: c["text"] for c in _coder_cautions(coder_checks(methods), methods)}
    # 0.30: below moderate; 0.05: at chance; 0.54 (minilm): no caution
    assert set(got) == {
        "tfidf: the coder codes human below moderate (0.4)",
        "tfidf: the coder codes human_b at chance",
    }
    assert (
        "reaches pooled κ 0.300 [0.170, 0.430], below the moderate 0.4"
        in got["tfidf: the coder codes human below moderate (0.4)"]
    )


def test_text_block_of_a_pair_its_scale_cannot_score():
    """z of a set without within-set spread: no matching, the flag said, no crash."""
    row = {"n_a": 4, "n_b": 5, "hungarian_n_matched": float("nan"), "hungarian_f1": float("nan")}
    row |= {"f1": float("nan"), "raza_jaccard": float("nan"), "scale_flag": "a:zero_spread"}
    block = format_text_block(row, "≥ 1.5")
    assert block == (
        "Theme Alignment: Hungarian F1 = n/a, Coverage F1 = n/a\n"
        "- Not scored at similarity ≥ 1.5: a:zero_spread (docs/metrics.md)"
    )
    assert "a:zero_spread" not in format_text_block(row | {"scale_flag": ""}, "≥ 1.5")


def test_headline_tex_and_the_glance_table_show_the_same_numbers():
    """report.headline.glance_numbers: one list of a headline row's numbers, in both tables."""
    from themesim.report.headline import HEADLINE_COLUMNS, headline_tex
    from themesim.report.views import _glance_row

    r = {c: 0.25 for c in HEADLINE_COLUMNS} | {
        "method": "minilm", "set_a": "A", "set_b": "B", "threshold": 0.56, "op": "ge",
        "theta": "≥ 0.56", "hungarian_f1": 0.5, "hungarian_f1_ci_low": 0.2,
        "hungarian_f1_ci_high": 0.8, "matched_sim_q1": 0.31, "matched_sim_q3": 0.7,
        "significant_match_rate": float("nan"), "n_a": 6, "n_b": 6, "verdict": "",
    }  # fmt: skip
    numbers = ["0.500", "0.200–0.800", "0.250", "0.250", "0.310–0.700", "0.250", "0.250", "0.250"]
    assert _glance_row("minilm", r) == ["minilm", "A vs B", "≥ 0.56", *numbers, "–"]
    tex = " & ".join([*numbers, "--"]).replace("–", "--") + r" \\"
    assert f"minilm & A vs B & $\\geq$ 0.56 & {tex}" in headline_tex(pd.DataFrame([r]))
