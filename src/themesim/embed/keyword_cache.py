"""TF-IDF keywords of a theme set, kept in the vector cache's folder by their inputs' content.

The keyword fallback (embed.texts.top_tfidf_terms) needs scikit-learn, whose import costs
more than the rest of a fully cached embedding job (0.6 s) and, kept in the process, 90 MB
of the cold job's peak memory beside the model. Its result depends only on the set's texts,
k and scikit-learn's version, so a JSON file under `<cache>/keywords/`, named by the sha256
of those, gives a rerun the same terms without the import; the embedding job computes the
missing ones in a short child process (run this module), which exits before the model loads.
Files are themesim.store.ContentFiles, like the vectors: written to a temporary name and
renamed, so parallel jobs writing the same key write the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import themesim
from themesim.embed.texts import top_tfidf_terms
from themesim.store import ContentFiles

log = logging.getLogger("themesim")

# Bump when top_tfidf_terms changes what it returns for the same inputs.
SCHEME = "tfidf-english-stopwords-alpha-ties/1"


def keyword_key(texts: list[str], k: int) -> str:
    try:
        sklearn = metadata.version("scikit-learn")
    except metadata.PackageNotFoundError:
        sklearn = None
    about = {"scheme": SCHEME, "k": int(k), "scikit-learn": sklearn, "texts": list(texts)}
    return hashlib.sha256(json.dumps(about, sort_keys=True).encode()).hexdigest()


def keyword_files(root) -> ContentFiles:
    return ContentFiles(Path(root) / "keywords", ".json")


def keyword_path(root, texts: list[str], k: int) -> Path:
    return keyword_files(root).path(keyword_key(texts, k))


def _read(root, texts: list[str], k: int) -> list[list[str]] | None:
    """The stored terms, or None (a miss) when the file is missing or not n lists of str;
    a damaged file is dropped so that the fresh terms are written in its place."""
    files, key = keyword_files(root), keyword_key(texts, k)
    data = files.read(key)
    if data is None:
        return None
    try:
        terms = json.loads(data)
    except ValueError:
        terms = None
    ok = (
        isinstance(terms, list)
        and len(terms) == len(texts)
        and all(isinstance(t, list) and all(isinstance(w, str) for w in t) for t in terms)
    )
    if not ok:
        files.drop(key)
    return terms if ok else None


def tfidf_terms_apart(text_sets: list[list[str]], k: int) -> list[list[list[str]]]:
    """top_tfidf_terms of each list of texts, computed in a child process so that this one
    never imports scikit-learn; in this process if the child fails (logged)."""
    # The child imports the same themesim: a source tree first on its path (an installed
    # package is found there anyway; its site-packages first could shadow the stdlib).
    src = Path(themesim.__file__).resolve().parents[1]
    env = dict(os.environ)
    if src.name not in ("site-packages", "dist-packages"):
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(src), env.get("PYTHONPATH")) if p)
    proc = subprocess.run(
        [sys.executable, "-m", "themesim.embed.keyword_cache"],
        input=json.dumps({"k": int(k), "sets": text_sets}),
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        check=False,
    )
    if proc.returncode == 0:
        terms = json.loads(proc.stdout)
        if isinstance(terms, list) and len(terms) == len(text_sets):
            return terms
    log.warning("TF-IDF keywords computed in this process: the child failed (%s)",
                proc.stderr.strip().splitlines()[-1:] or proc.returncode)  # fmt: skip

    return [top_tfidf_terms(texts, k=k) for texts in text_sets]


def sets_keywords(tables: dict, top_k: int, root=None) -> dict:
    """embed.texts.theme_keywords of every theme table (set -> a DataFrame or embed.columns'
    column lists) without importing
    scikit-learn here: TF-IDF terms from `<root>/keywords/`, the missing ones computed apart
    (and stored when there is a root)."""
    given = {s: [list(k) for k in t["keywords"]] for s, t in tables.items()}
    need = {s: list(t["text"]) for s, t in tables.items() if not all(given[s])}
    found = {}
    for s, texts in need.items():
        terms = _read(root, texts, top_k) if root else None
        if terms is not None:
            found[s] = terms
    missing = [s for s in need if s not in found]
    if missing:
        fresh = tfidf_terms_apart([need[s] for s in missing], top_k)
        for s, terms in zip(missing, fresh, strict=True):
            found[s] = terms
            if root:
                data = json.dumps(terms, ensure_ascii=False).encode("utf-8")
                keyword_files(root).write(keyword_key(need[s], top_k), data)
    return {
        s: [g or f for g, f in zip(given[s], found[s], strict=True)] if s in found else given[s]
        for s in tables
    }


if __name__ == "__main__":  # the child of tfidf_terms_apart: JSON in, JSON out
    from themesim.embed.texts import top_tfidf_terms

    job = json.load(sys.stdin)
    json.dump([top_tfidf_terms(texts, k=job["k"]) for texts in job["sets"]], sys.stdout)
