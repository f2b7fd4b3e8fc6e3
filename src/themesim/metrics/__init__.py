"""The metric families of docs/metrics.md, one family per module."""
