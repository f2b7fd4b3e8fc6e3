"""Grounded agreement in the transcripts: a comparison's row, its statistics (IoU, κ, AMI,
ARI), their intervals and the shift test (docs/metrics.md, Grounding)."""
