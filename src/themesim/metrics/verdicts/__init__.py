"""The verdicts: a generator against the analysts, the human–human reference and
equivalence (docs/verdicts.md)."""
