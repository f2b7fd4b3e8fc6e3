"""scikit-learn's TF-IDF, the one place it is imported: the vectoriser, row normalisation and
the cosine of TF-IDF rows, for similarity.tfidf, the tfidf kind, the runs' TF-IDF and the
keyword fallback (embed.texts.top_tfidf_terms).

scikit-learn is imported when one of these is called, not with this module: the kinds'
registry reaches this module from the Snakefile's process and from every job, and importing
scikit-learn costs more than a second (the embedding job computes its keywords in a child
process for the same reason, embed.keyword_cache).
"""

from __future__ import annotations


def vectorizer(**options):
    """A TfidfVectorizer with these options."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(**options)


def normalize(X):
    """The rows of X scaled to unit L2 norm (sklearn.preprocessing.normalize)."""
    from sklearn.preprocessing import normalize

    return normalize(X)


def cosine_similarity(X):
    """sklearn.metrics.pairwise.cosine_similarity of the rows of X with each other."""
    from sklearn.metrics.pairwise import cosine_similarity

    return cosine_similarity(X)
