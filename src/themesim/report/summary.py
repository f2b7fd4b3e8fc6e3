"""The summary report: one self-contained HTML file and one Markdown file.

Everything shown is prepared as display-ready strings (the page context in ``context``;
per-method views in ``views``, number and Markdown formatting in ``format``, the metric CSVs
read in ``tables``); the Jinja2 templates in ``templates/`` only lay it out. No timestamps are
written, so two runs on the same inputs give byte-identical files.
"""

from __future__ import annotations

import re
from pathlib import Path

import jinja2
import markupsafe

from themesim.report.context import ReportSources, build_context, comparison_context
from themesim.report.first_screen import PAGES_DIR
from themesim.report.format import (
    NUMERIC,
    defang_urls,
    md_fence,
    md_link_target,
    md_table,
    md_text,
)
from themesim.report.glossary import term_key
from themesim.report.tables import write_text

TEMPLATES = Path(__file__).parent / "templates"

# Words of the verdicts and flags -> their glossary entry: the first of each in a text links.
TERM_WORDS = {
    "calibrated P(match)": "calibrated-p",
    "Hungarian F1": "hungarian-f1",
    "non-inferior": "verdict",
    "inconclusive": "verdict",
    "equivalent": "verdict",
    "better": "verdict",
    "worse": "verdict",
    "margin": "margin",
    "route": "route",
    "generator": "generator",
    "analysts": "analysts",
    "analyst": "analysts",
    "primary": "primary",
    "sensitivity": "primary",
    "agreement": "agreement",
    "difference": "difference",
    "z rule": "within-set-z",
    "within-set z": "within-set-z",
    "θ": "theta",
    "κ": "kappa",
    "interval": "ci",
    "text_template": "text-compared",
    "flag": "flag",
    "missed": "missed-added",
    "coder": "coder",
}
_TERMS = re.compile(
    "|".join(
        (r"\b" + re.escape(t) + r"\b") if t[0].isalnum() and t[-1].isalnum() else re.escape(t)
        for t in sorted(TERM_WORDS, key=len, reverse=True)
    ),
    re.IGNORECASE,
)
_KEYS = {t.lower(): k for t, k in TERM_WORDS.items()}


def link_terms(text, prefix: str = "") -> markupsafe.Markup:
    """Text, escaped, with the first use of each glossary term linked to its entry."""
    seen: set = set()

    def link(m: re.Match) -> str:
        key = _KEYS[m.group(0).lower()]
        if key in seen:
            return m.group(0)
        seen.add(key)
        return f'<a class="term" href="{prefix}#g-{key}">{m.group(0)}</a>'

    return markupsafe.Markup(_TERMS.sub(link, str(markupsafe.escape(text))))


def _env(autoescape: bool) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=autoescape,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["mdtext"] = md_text
    env.filters["terms"] = link_terms if autoescape else md_text
    env.globals["md_table"] = md_table
    env.globals["md_fence"] = md_fence
    env.filters["mdlink"] = md_link_target
    env.globals["term"] = term_key
    env.tests["numeric"] = lambda v: bool(NUMERIC.fullmatch(str(v)))
    return env


def write_report(sources: ReportSources, *, out_html, out_md, out_pages=None) -> None:
    """Write the HTML (self-contained) and Markdown summary reports of ``sources`` (the
    study, its methods' tables, the inputs, transcripts, provenance and config).

    out_pages: the folder of each comparison's page (HTML and Markdown), by default
    `comparisons/` beside the HTML report.

    Raises FileNotFoundError naming the path when a method's comparisons or
    themes CSV is missing; missing figures are noted in the report instead.
    """
    out_html, out_md = Path(out_html), Path(out_md)
    pages_dir = Path(out_pages) if out_pages is not None else out_html.parent / PAGES_DIR
    ctx = build_context(sources, out_html.parent, out_md.parent, pages_dir)
    html_env, md_env = _env(autoescape=True), _env(autoescape=False)
    html = html_env.get_template("summary.html.j2").render(**ctx)
    md = md_env.get_template("summary.md.j2").render(**ctx)
    write_text(out_html, defang_urls(html))
    write_text(out_md, md)
    # each comparison's page: every method's detail of it, beside the summaries
    pages_dir.mkdir(parents=True, exist_ok=True)
    for page in ctx["pages"]:
        page_ctx = comparison_context(ctx, page, pages_dir, out_html, out_md)
        html = html_env.get_template("comparison.html.j2").render(**page_ctx)
        md = md_env.get_template("comparison.md.j2").render(**page_ctx)
        write_text(pages_dir / f"{page['name']}.html", defang_urls(html))
        write_text(pages_dir / f"{page['name']}.md", md)
