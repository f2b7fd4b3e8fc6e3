"""TF-IDF keywords of a theme set, kept in the vector cache's folder by their inputs' content.

The keyword fallback (embed.texts.top_tfidf_terms) needs scikit-learn, whose import costs
more than the rest of a fully cached embedding job. Its result depends only on the set's
texts, k and scikit-learn's version, so a JSON file under `<cache>/keywords/`, named by the
sha256 of those, gives a rerun the same terms without the import. Written to a temporary
name and renamed, like the vectors: parallel jobs writing the same key write the same bytes.
"""

from __future__ import annotations

import hashlib
import json
from importlib import metadata
from pathlib import Path

# Bump when top_tfidf_terms changes what it returns for the same inputs.
SCHEME = "tfidf-english-stopwords-alpha-ties/1"


def keyword_key(texts: list[str], k: int) -> str:
    try:
        sklearn = metadata.version("scikit-learn")
    except metadata.PackageNotFoundError:
        sklearn = None
    about = {"scheme": SCHEME, "k": int(k), "scikit-learn": sklearn, "texts": list(texts)}
    return hashlib.sha256(json.dumps(about, sort_keys=True).encode()).hexdigest()


def keyword_path(root, texts: list[str], k: int) -> Path:
    sha = keyword_key(texts, k)
    return Path(root) / "keywords" / sha[:2] / f"{sha}.json"


def _read(path: Path, n: int) -> list[list[str]] | None:
    """The stored terms, or None (a miss) when the file is missing or not n lists of str."""
    try:
        terms = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    ok = (
        isinstance(terms, list)
        and len(terms) == n
        and all(isinstance(t, list) and all(isinstance(w, str) for w in t) for t in terms)
    )
    return terms if ok else None


def cached_tfidf_terms(texts: list[str], k: int, root) -> list[list[str]]:
    """top_tfidf_terms(texts, k), from `<root>/keywords/` when computed before."""
    from themesim.embed.cache import EmbeddingCache

    texts = list(texts)
    path = keyword_path(root, texts, k)
    terms = _read(path, len(texts))
    if terms is None:
        from themesim.embed.texts import top_tfidf_terms

        terms = top_tfidf_terms(texts, k=k)
        path.parent.mkdir(parents=True, exist_ok=True)
        EmbeddingCache._write(path, json.dumps(terms, ensure_ascii=False).encode("utf-8"))
    return terms
