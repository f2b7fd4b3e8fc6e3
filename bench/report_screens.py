"""How long the summary report is, as a reader meets it: headless Chromium at 1280 px.

    python bench/report_screens.py [results/report/summary.html] [--width 1280]

Prints one JSON object: the folded and unfolded page heights (px, and screens of 800 px),
the words, tables, figures and theme-name hits in the first 3 screens (the top 2,700 px),
the HTML's bytes, and summary.md's lines and bytes beside it. Needs Debian's chromium
(`make browser`).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SCREEN = 800  # px: the browser tests' window height
FIRST = 2700  # px: "the first 3 screens" of the report's readers

PROBE = """<script>
const LIMIT = %d;
function visible(el) { return el.getClientRects().length > 0; }
function wordsAbove(limit) {
  let n = 0;
  const walker = document.createTreeWalker(document.querySelector('main') || document.body,
    NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const t = walker.currentNode, p = t.parentElement;
    if (!p || !visible(p) || ['SCRIPT', 'STYLE'].includes(p.tagName)) continue;
    const range = document.createRange();
    range.selectNodeContents(t);
    const r = range.getBoundingClientRect();
    if (r.height === 0 || r.top + window.scrollY >= limit) continue;
    n += (t.textContent.match(/\\S+/g) || []).length;
  }
  return n;
}
function countAbove(sel, limit) {
  return [...document.querySelectorAll(sel)].filter(
    e => visible(e) && e.getBoundingClientRect().top + window.scrollY < limit).length;
}
const out = {folded_px: document.documentElement.scrollHeight,
  words_first: wordsAbove(LIMIT), tables_first: countAbove("table", LIMIT),
  figures_first: countAbove("img", LIMIT), tables: document.querySelectorAll('table').length,
  figures: document.querySelectorAll('img').length,
  details: document.querySelectorAll('details').length,
  page_width: document.documentElement.clientWidth,
  scroll_width: document.documentElement.scrollWidth};
const textFirst = [];
for (const el of document.querySelectorAll('main *')) {
  if (!visible(el) || el.children.length) continue;
  if (el.getBoundingClientRect().top + window.scrollY < LIMIT) textFirst.push(el.textContent);
}
out.text_first = textFirst.join(' ');
for (const d of document.querySelectorAll('details')) d.open = true;
out.unfolded_px = document.documentElement.scrollHeight;
const pre = document.createElement('pre');
pre.id = 'probe-out';
pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
</script></body>"""


def measure(html: Path, width: int = 1280) -> dict:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        sys.exit("needs Chromium: `make browser` installs it")
    with tempfile.TemporaryDirectory() as tmp:
        page = html.with_name(".probe_screens.html")
        page.write_text(html.read_text(encoding="utf-8").replace("</body>", PROBE % FIRST))
        try:
            proc = subprocess.run(
                [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 f"--user-data-dir={tmp}", f"--window-size={width},{SCREEN}", "--dump-dom",
                 page.resolve().as_uri()],
                capture_output=True, text=True, timeout=300, check=False,
            )  # fmt: skip
        finally:
            page.unlink(missing_ok=True)
    found = re.search(r'<pre id="probe-out">(.*?)</pre>', proc.stdout, re.S)
    if not found:
        sys.exit(f"no measurement from Chromium: {proc.stderr[-2000:]}")
    raw = found.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">")
    out = json.loads(raw.replace("&amp;", "&"))
    out["folded_screens"] = round(out["folded_px"] / SCREEN, 1)
    out["unfolded_screens"] = round(out["unfolded_px"] / SCREEN, 1)
    out["html_bytes"] = html.stat().st_size
    md = html.with_suffix(".md")
    if md.is_file():
        text = md.read_text(encoding="utf-8")
        out["md_lines"], out["md_bytes"] = text.count("\n"), len(text.encode())
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("html", nargs="?", default="results/report/summary.html", type=Path)
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--text", action="store_true", help="also print the first screens' text")
    args = ap.parse_args(argv)
    out = measure(args.html, args.width)
    text = out.pop("text_first")
    print(json.dumps(out, indent=1))
    if args.text:
        print(text)


if __name__ == "__main__":
    main()
