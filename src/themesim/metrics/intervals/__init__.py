"""Set-level intervals that hold their level: the interval table, the counts at one
threshold, the units deleted one at a time (docs/metrics.md, Intervals)."""
