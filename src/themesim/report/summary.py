"""The summary report: one self-contained HTML file and one Markdown file.

Everything shown is prepared as display-ready strings (the page context in ``context``;
per-method views in ``views``, number and Markdown formatting in ``format``, the metric CSVs
read in ``tables``); the Jinja2 templates in ``templates/`` only lay it out. No timestamps are
written, so two runs on the same inputs give byte-identical files.
"""

from __future__ import annotations

from pathlib import Path

import jinja2

from themesim.report.context import build_context
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
    env.globals["md_table"] = md_table
    env.globals["md_fence"] = md_fence
    env.filters["mdlink"] = md_link_target
    env.globals["term"] = term_key
    env.tests["numeric"] = lambda v: bool(NUMERIC.fullmatch(str(v)))
    return env


def write_report(
    *,
    out_html,
    out_md,
    study: dict,
    methods: dict[str, dict],
    inputs: list[dict],
    transcripts: dict,
    provenance: dict,
    config: dict,
) -> None:
    """Write the HTML (self-contained) and Markdown summary reports.

    Raises FileNotFoundError naming the path when a method's comparisons or
    themes CSV is missing; missing figures are noted in the report instead.
    """
    out_html, out_md = Path(out_html), Path(out_md)
    ctx = build_context(
        study, methods, inputs, transcripts, provenance, config, out_html.parent, out_md.parent
    )
    html = _env(autoescape=True).get_template("summary.html.j2").render(**ctx)
    md = _env(autoescape=False).get_template("summary.md.j2").render(**ctx)
    write_text(out_html, defang_urls(html))
    write_text(out_md, md)
