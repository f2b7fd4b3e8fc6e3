"""What each method's metrics jobs read and write, and the settings they read."""

from __future__ import annotations

from themesim import kinds
from themesim.inputs import Setup, at, methods, pair_names
from themesim.metrics.settings import gamma_for
from themesim.paths import METRIC_TABLES, THRESHOLDS, TRANSPORT_MANIFEST, TRANSPORT_PAIR


def thresholds(setup: Setup, method: str) -> str:
    """The method's thresholds and scale as its metrics job resolved them: what the plots,
    grounding and report read (metrics.thresholds)."""
    return at(THRESHOLDS, method=method)


def tables(setup: Setup, method: str) -> list[str]:
    return [at(t, method=method) for t in METRIC_TABLES]


def transport_manifest(setup: Setup, method: str) -> str:
    return at(TRANSPORT_MANIFEST, method=method)


def transport_files(setup: Setup, method: str) -> list[str]:
    pairs = pair_names(setup.study.pairs_for(method))
    return [at(TRANSPORT_PAIR, method=method, pair=p) for p in pairs]


def family_settings(setup: Setup, method: str) -> dict:
    """What the metric families of one method read: thresholds, op, scale and `metrics:`."""
    spec, m = methods.spec(setup, method), setup.study.metrics
    scale = spec.get("scale", "cosine")
    return {
        "thresholds": setup.study.thresholds[method],
        "op": methods.op(setup, method),
        "gamma": gamma_for(m["gamma"], scale),
        "baseline_z": m["baseline_z"],
        "z_alpha": m["z_alpha"],
        "bootstrap": m["bootstrap"],
        "null_model": m["null_model"],
        "transport": m["transport"],
        "intervals": m["intervals"],
        "scale": scale,
        "clamp": bool(spec.get("clamp", False)),
    }


def decision_thresholds(setup: Setup, method: str) -> dict:
    """Thresholds of the raw-versus-z decision table (metrics.sets.scales.decision_changes):
    a z-scale method's own thresholds against raw_thresholds (default: its built-in ones),
    any other method's against metrics.baseline_z."""
    spec, given = methods.spec(setup, method), setup.study.thresholds[method]
    if spec.get("scale") == "z":
        raw = (
            spec.get("raw_thresholds")
            or kinds.method_defaults(method, {"kind": spec["kind"]})["thresholds"]
        )
        return {"raw": list(raw), "z": list(given)}
    return {"raw": list(given), "z": [setup.study.metrics["baseline_z"]]}


def has_runs(setup: Setup, method: str) -> bool:
    """Run consistency (seeds 002-004): kinds that have it, and a run group (config
    run_groups, or two or more generated runs) among the sets of its comparisons."""
    return methods.kind_of(setup, method).runs and bool(run_groups(setup, method))


def run_groups(setup: Setup, method: str) -> dict:
    """The run groups with two or more runs among the sets of the method's comparisons."""
    sets = set(setup.study.sets_for(method))
    groups = {g: [s for s in runs if s in sets] for g, runs in setup.study.run_groups.items()}
    return {g: runs for g, runs in groups.items() if len(runs) >= 2}


def method_runs(setup: Setup, method: str) -> list[str]:
    """Every set in one of the method's run groups, once, in group order."""
    return list(dict.fromkeys(s for g in run_groups(setup, method).values() for s in g))
