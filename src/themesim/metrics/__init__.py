"""The metric families of docs/metrics.md, one subpackage per family (sets, intervals,
grounding, verdicts, agreement); beside them what every family shares: the registry and
column lists, settings, thresholds, calibration, run-time flags, the interval estimators,
and the two modules that assemble a comparison's rows and put a matrix on a method's scale."""
