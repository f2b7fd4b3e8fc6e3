"""The report answers on its first screen and never disowns its own headline: per generator
the primary word, its difference and what it means, every flag on its own row; where each
generator differs by name with a passage each; what text was compared; what each interval
assumes; the workbook in the report's names; and, in a real browser at 1280 px, the first
three screens hold the words and the missed themes."""

from __future__ import annotations

import json
import re
import shutil
from html import unescape

import pandas as pd
import pytest
from helpers import comparison_row, run_session, write_study, write_thresholds

from themesim.metrics.verdicts.equivalence import VERDICT_COLUMNS
from themesim.report.summary import link_terms
from themesim.report.tables import COMPARISON_COLUMNS, THEME_COLUMNS

REF = ["Juggling paid work", "Own health", "Navigating services", "Guilt", "Money worries"]
RUNS = {  # each generator run's themes: (name, the reference theme it matches or None)
    "g1": [("Work and care", 0), ("Health strain", 1), ("Family dynamics", None)],
    "g2": [("Work pressure", 0), ("Personal challenges", None)],
    "llm": [("Balancing a job", 0), ("Exhaustion", 1), ("Services", 2), ("Duty", 3)],
    "human_b": [("Earning less", 0), ("Running on empty", 1), ("Joined-up care", 2)],
}


def _themes_rows(method: str, run: str) -> list[list]:
    """themes.csv of human vs run: a theme matches its partner at 0.8, else its best is 0.3."""
    rows, partner = [], {ref: (f"{run}{j}", name) for j, (name, ref) in enumerate(RUNS[run])}
    for i, name in enumerate(REF):
        hit = partner.get(i)
        p = hit or ("", "")
        best = hit or (f"{run}0", RUNS[run][0][0])
        sim = 0.8 if hit else 0.3
        rows.append([method, "human", run, "a", f"H{i}", name, *best, sim, 0.2, *p,
                     sim if hit else ""])  # fmt: skip
    for j, (name, ref) in enumerate(RUNS[run]):
        p = (f"H{ref}", REF[ref]) if ref is not None else ("", "")
        best = p if ref is not None else ("H0", REF[0])
        sim = 0.8 if ref is not None else 0.3
        rows.append([method, "human", run, "b", f"{run}{j}", name, *best, sim, 0.2, *p,
                     sim if ref is not None else ""])  # fmt: skip
    return rows


def _verdict(set_b, runs, word, **values):
    row = dict.fromkeys(VERDICT_COLUMNS, "")
    row |= {
        "method": "minilm", "set_a": "human", "set_b": set_b, "threshold": 0.5, "op": "ge",
        "role": "generator", "second_analyst": "human_b", "metric": "matched", "n_a": 5,
        "agreement": 0.5, "agreement_ci_low": 0.3, "agreement_ci_high": 0.7,
        "human_human": 0.7, "difference": -0.2, "difference_ci_low": -0.45,
        "difference_ci_high": 0.05, "difference_ci_level": 0.9, "margin": 0.1, "alpha": 0.05,
        "verdict": word, "ci_method": "dyadic", "n_runs": len(runs), "n_analysts": 2,
        "evidence": "matched", "margin_source": "config", "leads": True,
        "generator_runs": ", ".join(runs), "covers": "themes", "primary": True,
        "analysis": "primary", "common_size": 3, "n_themes_generator": 2.5,
        "n_themes_analysts": 4, "power_equivalent": 0.1, "power_non_inferior": 0.3,
    }  # fmt: skip
    return row | values


@pytest.fixture
def study(tmp_path):
    out = tmp_path / "out"
    d = out / "minilm"
    d.mkdir(parents=True)
    rows = []
    for run in RUNS:
        k = sum(ref is not None for _, ref in RUNS[run])
        n_b = len(RUNS[run])
        rows.append(
            comparison_row(
                "minilm", "human", run, 0.5, n_a=5, n_b=n_b, hungarian_n_matched=k,
                hungarian_f1=2 * k / (5 + n_b), hungarian_f1_ci_low=0.05,
                hungarian_f1_ci_high=0.9, ci_method="themes independent: clopper-pearson",
            )
        )  # fmt: skip
    # 11 of 12 one-to-one, its interval widened by the matches' clusters
    rows.append(
        comparison_row(
            "minilm", "human_b", "llm", 0.5, n_a=12, n_b=12, hungarian_n_matched=11,
            hungarian_f1=11 / 12, hungarian_f1_ci_low=0.04, hungarian_f1_ci_high=1.0,
            ci_method="themes independent but for the match clusters seen: clopper-pearson",
        )
    )  # fmt: skip
    pd.DataFrame(rows, columns=list(dict.fromkeys(COMPARISON_COLUMNS + list(rows[0])))).to_csv(
        d / "comparisons.csv", index=False
    )
    pd.DataFrame(rows, columns=COMPARISON_COLUMNS).to_csv(d / "sweep.csv", index=False)
    themes = [r for run in RUNS for r in _themes_rows("minilm", run)]
    pd.DataFrame(themes, columns=THEME_COLUMNS).to_csv(d / "themes.csv", index=False)
    write_thresholds(d / "thresholds.csv", "minilm", [0.5])
    # every raw match of human vs g1 fails the z rule; of human vs llm one of four
    pd.DataFrame(
        [
            ["minilm", "human", "g1", 0.5, 2.0, 2, 0, 0, 2, 0, 1.0, "H0:g10; H1:g11", "", ""],
            ["minilm", "human", "llm", 0.5, 2.0, 4, 3, 3, 1, 0, 0.25, "H3:llm3", "", ""],
        ],
        columns=["method", "set_a", "set_b", "raw_threshold", "z_threshold", "n_raw", "n_z",
                 "n_both", "n_only_raw", "n_only_z", "share_changed", "only_raw_pairs",
                 "only_z_pairs", "z_flag"],
    ).to_csv(d / "decision_changes.csv", index=False)  # fmt: skip
    # passages: the transcripts' segments, the reference's own coding, the coder's labels
    seg = out / "segments.parquet"
    pd.DataFrame(
        {
            "transcript": ["t1"] * 4,
            "segment": [0, 1, 2, 3],
            "speaker": ["P"] * 4,
            "text": ["I lost my job", "The money ran out by March", "My sister never helps",
                     "We argue about who visits"],
        }
    ).to_parquet(seg)  # fmt: skip
    labels = out / "segments" / "minilm"
    labels.mkdir(parents=True)
    pd.DataFrame(
        {"transcript": ["t1", "t1"], "segment": [1, 0], "theme_id": ["H4", "H4"],
         "source": ["coded", "assigned"], "score": [1.0, 0.9]}
    ).to_parquet(labels / "human.parquet")  # fmt: skip
    pd.DataFrame(
        {"transcript": ["t1"], "segment": [3], "theme_id": ["g12"], "source": ["assigned"],
         "score": [0.4]}
    ).to_parquet(labels / "g1.parquet")  # fmt: skip
    # what each set was scored from: the reference's names only, the others' descriptions
    tables = {}
    for s, names in [("human", REF)] + [(r, [n for n, _ in RUNS[r]]) for r in RUNS]:
        described = s != "human"
        tables[s] = out / "themes" / f"{s}.parquet"
        tables[s].parent.mkdir(exist_ok=True)
        pd.DataFrame(
            {
                "name": names,
                "description": [("a long description " * 8).strip() if described else ""]
                * len(names),
                "text": [f"{n}: " + "a long description " * 8 if described else n for n in names],
            }
        ).to_parquet(tables[s])
    verdicts = out / "report" / "verdicts.csv"
    verdicts.parent.mkdir(parents=True)
    pd.DataFrame(
        [
            _verdict("gpt", ["g1", "g2"], "inconclusive"),
            _verdict("llm", ["llm"], "equivalent", difference=0.02, difference_ci_low=-0.05,
                     difference_ci_high=0.08),
            _verdict("llm", ["llm"], "better", method="tfidf", threshold=0.2, primary=False,
                     analysis="sensitivity", leads=False),
        ],
        columns=VERDICT_COLUMNS,
    ).to_csv(verdicts, index=False)  # fmt: skip
    spec = {
        "description": "minilm",
        "kind": "sentence_transformer",
        "reference": "human",
        "comparisons_csv": str(d / "comparisons.csv"),
        "thresholds_csv": str(d / "thresholds.csv"),
        "themes_csv": str(d / "themes.csv"),
        "sweep_csv": str(d / "sweep.csv"),
        "decisions_csv": str(d / "decision_changes.csv"),
        "heatmaps": {},
        "segments_dir": str(labels),
        "segments_parquet": str(seg),
    }
    return {
        "out_html": out / "report" / "summary.html",
        "out_md": out / "report" / "summary.md",
        "study": {
            "name": "Answer",
            "description": "",
            "reference": "human",
            "verdicts_csv": verdicts,
            "theme_tables": tables,
        },
        "methods": {"minilm": spec},
        "inputs": [],
        "transcripts": {"n_transcripts": 1, "n_segments": 4, "per_transcript": []},
        "provenance": {},
        "config": {"reference_group": ["human", "human_b"], "run_groups": {"gpt": ["g1", "g2"]}},
    }


def _html(study) -> str:
    write_study(study)
    return study["out_html"].read_text(encoding="utf-8")


def _text(html: str) -> str:
    return unescape(re.sub(r"<[^>]+>", "", html))


def _rows(part: str) -> list[str]:
    return [_text(r) for r in re.findall(r"<tr>(.*?)</tr>", part, re.S)][1:]


def test_the_answer_gives_each_generator_its_word_difference_meaning_and_flags(study):
    html = _html(study)
    answer = html[html.index('id="answer"') : html.index('id="differ"')]
    gpt, llm = _rows(answer)
    assert gpt.startswith("gpt (2 runs)inconclusive-0.200 [-0.450, 0.050]")
    assert "this design could not tell" in gpt  # power_non_inferior 0.3 < 0.8
    # the z rule's verdict on its own row, with the reconciled figure, and the texts' kinds
    assert "z rule keeps 0 of 2 (g1)" in gpt and "texts differ in kind" in gpt
    assert llm.startswith("llmequivalent0.020 [-0.050, 0.080]")
    assert "Agrees with the analysts as well as they agree with each other" in llm
    assert "1 of 1 other analyses: better ×1" in llm  # another method, another word
    # every flag lands on the caution that explains it
    ids = set(re.findall(r'id="([^"]+)"', html))
    flags = re.findall(r'<a class="flag" href="#([^"]+)"', answer)
    assert flags and set(flags) <= ids and "flag-sens-llm" in flags


def test_no_figure_is_disowned_later_without_its_flag_on_its_row(study):
    html = _html(study)
    cautions = html[html.index('id="cautions"') : html.index('id="verdicts"')]
    assert 'id="flag-z-method-minilm"' in cautions and "human vs g1 (2)" in cautions
    glance = html[html.index('id="at-a-glance"') : html.index('id="side-by-side"')]
    for row in re.findall(r"<tr>(.*?)</tr>", glance, re.S):
        cells = _text(row)
        if cells.startswith("minilmhuman vs g1"):
            assert '<a class="flag" href="#flag-z-method-minilm">' in row
            assert "z rule keeps 0 of 2" in cells
        elif cells.startswith("minilmhuman vs llm"):  # the z rule keeps some: no caution
            assert "z rule" not in cells
    # the verdicts in full carry the same flags as the answer
    verdicts = html[html.index('id="verdicts"') : html.index('id="compared"')]
    assert verdicts.count('href="#flag-z-method-minilm"') == 1


def test_each_caution_leads_with_at_most_40_words_and_folds_the_rest(study):
    html = _html(study)
    cautions = html[html.index('id="cautions"') : html.index('id="verdicts"')]
    boxes = re.findall(r'<div class="caution"[^>]*>(.*?)</div>', cautions, re.S)
    assert len(boxes) >= 2  # the z rule's and the other analyses'
    for box in boxes:
        lead, _, rest = box.partition('<details class="more">')
        assert len(_text(lead).split()) <= 40, _text(lead)
        assert len(_text(rest).split()) > len(_text(lead).split())  # the full text, folded
    assert "human vs g1 (2)" in cautions  # the detail is still there, one click away


def test_where_they_differ_names_the_themes_with_a_passage_each(study):
    html = _html(study)
    differ = html[html.index('id="differ"') : html.index("<nav")]
    gpt, llm = _rows(differ)
    # missed by the group: by how many of its runs; added: by run; shared: by how many runs
    assert "Own health (1/2 runs)" in gpt and "Navigating services (2/2 runs)" in gpt
    assert "Family dynamics (g1)" in gpt and "Personal challenges (g2)" in gpt
    assert "Juggling paid work (2/2 runs) †" in gpt  # g1's pair fails the z rule
    assert llm.startswith("llmMoney worries")
    assert "Guilt ↔ Duty †" in llm and "(1 not kept by the z rule: †)" in llm
    # a passage for a missed theme from the reference's own coding, for an added theme from
    # the coder; links to each comparison's page
    assert "“The money ran out by March” (t1 #1, the analyst&#39;s coding)" in differ
    assert "“We argue about who visits” (t1 #3, the automatic coder)" in differ
    assert 'href="comparisons/human__vs__g1.html"' in differ
    page = (study["out_html"].parent / "comparisons" / "human__vs__llm.html").read_text()
    assert "Money worries" in page and "The money ran out by March" in page
    md = study["out_md"].read_text(encoding="utf-8")
    assert "| gpt | Navigating services \\(2/2 runs\\)" in md
    # confidential: the passages are withheld, said so
    study["study"]["confidential"] = True
    html = _html(study)
    assert "The money ran out" not in html and "withheld (archive.confidential)" in html


def test_texts_of_different_kinds_are_said_with_the_line_that_aligns_them(study):
    html = _html(study)
    warn = _text(html[html.index('id="flag-texts"') :].split("</p>", 1)[0])
    assert "human is scored from name only (median 2 words a theme)" in warn
    assert "from name + description" in warn and 'set text_template: "{name}"' in warn
    compared = _text(html[html.index('id="compared"') : html.index('id="at-a-glance"')])
    assert "humanname only52" in compared and "g1name + description3" in compared
    # the same names on both sides: no warning, no flag
    for path in study["study"]["theme_tables"].values():
        t = pd.read_parquet(path)
        t.assign(text=t["name"], description="").to_parquet(path)
    html = _html(study)
    assert 'id="flag-texts"' not in html and "texts differ in kind" not in html


def test_each_interval_says_what_it_assumes_and_a_widened_one_shows_the_exact_one(study):
    from themesim.report.views import exact_f1_interval, interval_assumes

    r = {"hungarian_n_matched": 11, "n_a": 12, "n_b": 12}
    lo, hi = exact_f1_interval(r)
    assert (round(lo, 3), round(hi, 3)) == (0.615, 0.998)  # Clopper–Pearson of 11 of 12
    clusters = "themes independent but for the match clusters seen: x"
    widened = r | {"hungarian_f1_ci_low": 0.04, "hungarian_f1_ci_high": 1.0, "ci_method": clusters}
    assert interval_assumes(widened) == "widened (clusters); exact 0.615–0.998"
    same = widened | {"hungarian_f1_ci_low": lo, "hungarian_f1_ci_high": hi}
    assert interval_assumes(same) == "themes independent"
    assert interval_assumes(widened | {"ci_method": "themes independent: x"}) == (
        "themes independent"
    )
    assert interval_assumes(widened | {"ci_method": "clustered by declared group: x"}) == (
        "declared groups"
    )
    html = _html(study)
    glance = _text(html[html.index('id="at-a-glance"') : html.index('id="side-by-side"')])
    assert "widened (clusters); exact 0.615–0.998" in glance


def test_the_workbook_speaks_the_reports_names(tmp_path):
    from openpyxl import load_workbook

    from themesim.report.names import workbook_header
    from themesim.report.workbook import tables_workbook

    a = tmp_path / "a.csv"
    pd.DataFrame(
        {"method": ["m"], "hungarian_coverage_a": [0.5], "f1": [0.6], "f1_ci_low": [0.4],
         "odd": [1]}
    ).to_csv(a, index=False)  # fmt: skip
    tables_workbook(tables={"comparisons": a}, out=tmp_path / "t.xlsx")
    head = [c.value for c in load_workbook(tmp_path / "t.xlsx")["comparisons"][1]]
    assert head == [
        "Method (method)",
        "One-to-one share A (hungarian_coverage_a)",
        "Coverage F1 (f1)",
        "Coverage F1 95 % CI low (f1_ci_low)",
        "odd",  # no name in the report: the id alone
    ]
    assert workbook_header("verdict") == "Verdict (verdict)"


def test_terms_link_once_and_stay_escaped():
    html = str(link_terms("the margin <b> and the margin; a route & θ, calibrated P(match)"))
    assert html.count('href="#g-margin"') == 1 and "&lt;b&gt;" in html and "&amp;" in html
    assert '<a class="term" href="#g-calibrated-p">calibrated P(match)</a>' in html
    assert '<a class="term" href="#g-theta">θ</a>' in html
    from themesim.report.glossary import GLOSSARY_KEYS
    from themesim.report.summary import TERM_WORDS

    assert set(TERM_WORDS.values()) <= GLOSSARY_KEYS
    assert {"route", "margin", "generator", "primary", "calibrated-p"} <= GLOSSARY_KEYS


def test_the_coders_own_trust_column_decides_its_flag(tmp_path):
    from themesim.report.cautions import _coder_cautions

    checks = pd.DataFrame(
        {
            "method": ["m", "m"],
            "set": ["human", "human_b"],
            "coder": "c",
            "pooled_kappa": [0.6, 0.3],
            "pooled_kappa_ci_low": [0.5, 0.2],
            "pooled_kappa_ci_high": [0.7, 0.4],
            "coder_trusted": [False, True],
            "coder_validation_kappa": [0.35, 0.8],
        }
    )
    got = _coder_cautions(checks, {"m": {}})
    assert [c["title"] for c in got] == ["m: the coder codes human below moderate (0.4)"]
    assert "The coder's validation: kappa 0.350." in got[0]["text"]
    assert len(_coder_cautions(checks.drop(columns="coder_trusted"), {"m": {}})) == 1


def test_summary_md_stays_short_and_each_comparison_has_its_page(study):
    write_study(study)
    md = study["out_md"].read_text(encoding="utf-8")
    pages = study["out_html"].parent / "comparisons"
    names = sorted(p.name for p in pages.iterdir())
    assert names == sorted(f"human{x}__vs__{r}.{e}" for x, r in
                           [("", "g1"), ("", "g2"), ("", "llm"), ("", "human_b"),
                            ("_b", "llm")] for e in ("html", "md"))  # fmt: skip
    assert md.count("\n") < 400
    page = (pages / "human__vs__g1.md").read_text(encoding="utf-8")
    assert page.startswith("# human vs g1\n") and "(../summary.md)" in page


# ---------------------------------------------------------------------------
# a real browser at 1280 px: the first three screens answer

PROBE = """<script>
const limit = 2700;
const first = [];
const walker = document.createTreeWalker(document.querySelector('main'), NodeFilter.SHOW_TEXT);
while (walker.nextNode()) {
  const t = walker.currentNode, p = t.parentElement;
  if (!p || p.getClientRects().length === 0) continue;
  const range = document.createRange();
  range.selectNodeContents(t);
  const r = range.getBoundingClientRect();
  if (r.height > 0 && r.top + window.scrollY < limit) first.push(t.textContent);
}
const ids = new Set([...document.querySelectorAll('[id]')].map(e => e.id));
const links = [...document.querySelectorAll('a[href^="#"]')].map(a => a.getAttribute('href'));
const out = {first: first.join(' '), folded: document.documentElement.scrollHeight,
  page: document.documentElement.clientWidth, scroll: document.documentElement.scrollWidth,
  broken: links.filter(h => !ids.has(h.slice(1))), n_links: links.length};
const pre = document.createElement('pre');
pre.id = 'probe-' + 'out';
pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
</script></body>"""


def _probe(path, tmp_path) -> dict:
    page = path.with_name("probe.html")
    page.write_text(path.read_text(encoding="utf-8").replace("</body>", PROBE))
    proc = run_session(
        [shutil.which("chromium") or shutil.which("chromium-browser"), "--headless",
         "--no-sandbox", "--disable-gpu", "--no-first-run",
         f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1280,800", "--dump-dom",
         page.resolve().as_uri()],
        timeout=180,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = re.search(r'<pre id="probe-out">(.*?)</pre>', proc.stdout, re.S)
    assert found, proc.stdout[-2000:]
    return json.loads(unescape(found.group(1)))


@pytest.mark.skipif(
    not (shutil.which("chromium") or shutil.which("chromium-browser")),
    reason="needs Chromium: `make browser` installs it",
)
def test_the_first_three_screens_name_each_word_and_the_missed_themes(study, tmp_path):
    m = _probe(study["out_html"], tmp_path) if _html(study) else None
    first = m["first"]
    for word in ("gpt", "inconclusive", "llm", "equivalent"):
        assert word in first, word
    for missed in ("Own health", "Navigating services", "Money worries"):
        assert missed in first, missed
    assert not m["broken"] and m["n_links"] > 20, m["broken"]
    assert m["scroll"] <= m["page"], m
    assert m["folded"] <= 25 * 800
    # a comparison's page: nothing wider than the window, its links land
    page = _probe(study["out_html"].parent / "comparisons" / "human__vs__llm.html", tmp_path)
    assert not page["broken"] and page["scroll"] <= page["page"], page


# ---------------------------------------------------------------------------
# figures that show one thing each


def test_a_heatmap_names_its_sets_fits_its_colours_and_marks_what_the_z_rule_drops():
    import numpy as np

    from themesim.report.plots.heatmap import Cutoff, ThemeAxis, data_range, heatmap_figure

    S = np.array([[0.72, 0.30], [0.29, 0.60], [0.45, 0.33]])
    fig = heatmap_figure(
        S,
        ThemeAxis(["a", "b", "c"], name="human (rows)"),
        ThemeAxis(["x", "y"], name="qwen (columns)"),
        cutoff=Cutoff(0.5, "ge"),
        title="t",
        pairs=[(0, 0), (1, 1)],
        rejected=[(1, 1)],
    )
    ax = fig.axes[0]
    assert (ax.get_ylabel(), ax.get_xlabel()) == ("human (rows)", "qwen (columns)")
    assert ax.images[0].get_clim() == (0.29, 0.72)  # the data's range, not 0-1
    crosses = [ln for ln in ax.get_lines() if ln.get_marker() == "X"]
    assert len(crosses) == 1 and (crosses[0].get_xdata()[0], crosses[0].get_ydata()[0]) == (
        1.3,
        1.3,
    )
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "pair the within-set z rule does not keep" in labels
    assert data_range(np.full((2, 2), 0.4)) == (0.35000000000000003, 0.45)


def test_the_iou_heatmap_keeps_the_similarity_heatmaps_theme_order():
    from themesim.report.grounding_plots import iou_heatmap_figure, theme_order
    from themesim.report.plots.heatmap import diagonal_order

    # b2 is a1's partner and b1 a2's: the similarity heatmap puts them on the diagonal
    sim = {("a1", "b1"): 0.2, ("a1", "b2"): 0.9, ("a2", "b1"): 0.8, ("a2", "b2"): 0.1}
    long = pd.DataFrame(
        [{"a_id": a, "b_id": b, "similarity": s, "iou": s / 3, "text_pair": s > 0.5}
         for (a, b), s in sim.items()]
    )  # fmt: skip
    rows, cols = theme_order(long, ["a1", "a2"], ["b1", "b2"])
    assert (rows, cols) == (["a1", "a2"], ["b2", "b1"])
    assert diagonal_order([[0.2, 0.9], [0.8, 0.1]], [(0, 1), (1, 0)]) == ([0, 1], [1, 0])
    fig = iou_heatmap_figure(long, {}, {}, "t", "human (rows)", "llm (columns)")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["b2", "b1"]
    assert ax.get_xlabel() == "llm (columns)"
    assert ax.images[0].get_clim() == pytest.approx((0.1 / 3, 0.3))


def test_with_one_analyst_the_answer_gives_the_agreement_and_says_why_no_word(study):
    from themesim.metrics.verdicts.rows import ONE_ANALYST

    one = {"verdict": "", "n_analysts": 1, "second_analyst": "", "withheld": ONE_ANALYST,
           "human_human": float("nan"), "difference": float("nan")}  # fmt: skip
    pd.DataFrame(
        [_verdict("gpt", ["g1", "g2"], "", **one), _verdict("llm", ["llm"], "", **one)],
        columns=VERDICT_COLUMNS,
    ).to_csv(study["study"]["verdicts_csv"], index=False)
    html = _html(study)
    answer = html[html.index('id="answer"') : html.index('id="differ"')]
    assert "One analyst (human), so no generator gets a verdict word" in _text(answer)
    head = re.findall(r'<th scope="col">(.*?)</th>', answer)
    assert _text(head[2]) == "Agreement"
    gpt, llm = _rows(answer)
    assert gpt.startswith("gpt (2 runs)no word0.500 [0.300, 0.700]No word: one analyst")
