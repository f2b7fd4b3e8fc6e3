"""`grounding.coder` and `grounding.basis`: defaults and checks (docs/grounding.md)."""

from __future__ import annotations

from themesim.defaults import default, section_defaults
from themesim.errors import InputError

BASES = ("coder", "evidence", "mixed")
KINDS = ("similarity", "exemplar", "llm", "trained")
DEFAULT_RULE = {"similarity": "top1", "exemplar": "top1", "llm": "top1", "trained": "top1"}

# The defaults: the schema's grounding.basis, grounding.coder and grounding.coder.llm
# (what each setting means: its description there, and docs/grounding.md).
DEFAULT_BASES = default("grounding", "basis")
LLM_DEFAULTS = section_defaults("grounding", "coder", "llm")
CODER_DEFAULTS = section_defaults("grounding", "coder") | {"llm": LLM_DEFAULTS}


def coder_settings(grounding: dict | None) -> dict:
    """`grounding.coder` with every default filled in (the llm block too), checked."""
    given = dict((grounding or {}).get("coder") or {})
    llm = LLM_DEFAULTS | dict(given.pop("llm", None) or {})
    out = CODER_DEFAULTS | given | {"llm": llm}
    where = "config grounding.coder"
    if out["kind"] not in KINDS:
        raise InputError(
            f"{where}.kind", f"{out['kind']!r} is not a coder", f"Use one of {', '.join(KINDS)}."
        )
    if llm["fallback"] not in ("similarity", "exemplar"):
        raise InputError(
            f"{where}.llm.fallback",
            f"{llm['fallback']!r} is not a coder of embeddings",
            "Use similarity or exemplar.",
        )
    if out["kind"] == "llm" and llm["base_url"] and not llm["model"]:
        # As generate_themes: refused at parse time, not in the coder job after ingest.
        raise InputError(
            f"{where}.llm.model",
            f"base_url is set ({llm['base_url']}) but model is not",
            "Give the model name the endpoint expects (grounding.coder.llm.model), or remove "
            "base_url to use the packaged local model",
        )
    if out["rule"] not in (None, "top1", "all"):
        raise InputError(f"{where}.rule", f"{out['rule']!r} is unknown", "Use top1 or all.")
    return out


def bases(grounding: dict | None) -> list[str]:
    """`grounding.basis` as a list, checked."""
    b = (grounding or {}).get("basis", DEFAULT_BASES)
    b = [b] if isinstance(b, str) else list(b)
    bad = [x for x in b if x not in BASES]
    if bad or not b:
        raise InputError(
            "config grounding.basis",
            f"{bad or b!r} is not a list of {', '.join(BASES)}",
            "Write e.g. basis: [coder, evidence].",
        )
    return b


def rule_of(coder: dict, coding: str) -> str:
    return coder.get("rule") or DEFAULT_RULE[coding]


def set_coder(coder: dict, method: str, set_name: str) -> str:
    """The coder kind that labels `set_name` under `method`: llm only where its sets and
    methods lists allow, else the fallback."""
    if coder["kind"] != "llm":
        return coder["kind"]
    llm = coder["llm"]
    if (llm["sets"] is None or set_name in llm["sets"]) and (
        llm["methods"] is None or method in llm["methods"]
    ):
        return "llm"
    return llm["fallback"]


def describe(coder: dict, coding: str, threshold) -> str:
    """One line naming the coder (`coding`: its kind for this set), for the tables and the
    report."""
    if coding == "llm":
        llm = coder["llm"]
        model = llm["model"] or "packaged Qwen2.5-Coder-1.5B"
        return f"llm ({model}, {llm['score_mode']}, {_rule(coder, 'llm')} P ≥ {llm['threshold']:g})"
    if coding == "trained":
        return "trained (MiniLM + ArgKP LoRA adapter, top1, learned none)"
    extra = f", context {coder['context']:g}" if coder["context"] else ""
    extra += ", fitted thresholds" if coder["fit_thresholds"] else ""
    thr = "—" if threshold is None else f"{float(threshold):g}"
    return f"{coding} ({_rule(coder, coding)} ≥ {thr}{extra})"


def _rule(coder: dict, coding: str) -> str:
    rule = rule_of(coder, coding)
    return f"{rule} centred" if rule == "top1" and coder.get("center", True) else rule
