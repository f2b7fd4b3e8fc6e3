"""The set-level metrics of one comparison (coverage, one-to-one, scales, distinctiveness,
baselines, nulls, transport) and of one set or run group (quality, runs, the paraphrase
ceiling): docs/metrics.md."""
