"""The report's opening verdicts: one sentence per method, comparison and threshold, written
from results/report/verdicts.csv (metrics/verdicts/equivalence.py). Every number in a sentence is a
cell of that table, formatted as the report's tables are; methods are never pooled."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from themesim.metrics.verdicts.equivalence import VERDICT_COLUMNS
from themesim.report.answer import SENSITIVITY_HEADERS, generators, sensitivity
from themesim.report.format import as_text, fmt, fmt_int, fmt_threshold, is_missing
from themesim.report.tables import read_table

VERDICT_TEXT_COLUMNS = ("method", "set_a", "set_b", "op", "role", "second_analyst", "metric")
VERDICT_TEXT_COLUMNS += ("verdict", "ci_method", "evidence", "margin_source", "generator_runs")
VERDICT_TEXT_COLUMNS += ("covers", "leads", "settle_verdict", "analysis", "withheld", "primary")


def _interval(lo, hi) -> str:
    return "" if is_missing(lo) or is_missing(hi) else f", 95 % CI {fmt(lo)}–{fmt(hi)}"


# pooled κ of the coder against an analyst's own coding below which the segments route is
# said to measure the coder ("moderate", Landis and Koch 1977; docs/grounding.md's target)
CODER_TRUSTED = 0.4
ROUTE_TEXT = {
    "strength": "the similarity of each theme's best partner",
    "matched": "the share of themes with a partner at the threshold",
    "segments": (
        "the coding agreement (κ over the transcript segments, both sets applied by the "
        "automatic coder) of each theme with its best partner"
    ),
}
ESTIMAND = (
    "Each verdict compares a generator (an LLM configuration, over its runs) with human "
    "analysts: its mean agreement with each analyst minus the analysts' mean agreement with "
    "each other, on the study's own transcripts. The agreement of two sets is the mean, over "
    "both sets' themes, of the evidence each theme's best partner among k themes of the other "
    "set would give, k the smallest set of the comparison, so a set that writes more themes "
    "gets no more chances. The interval carries the themes, and the runs (from 3 runs) and "
    "analysts (from 3 analysts) as its row says; one comparison per generator, fixed before "
    "the data, is the primary one, the others sensitivity analyses (docs/verdicts.md)."
)


def _outcome(r) -> str:
    """The word, with what it means; worse and better say when the interval also lies
    beyond the margin."""
    m = fmt(r["margin"])
    lo, hi = float(r["difference_ci_low"]), float(r["difference_ci_high"])
    word = r["verdict"]
    if word == "equivalent":
        side = " (and wholly above 0)" if lo > 0 else " (and wholly below 0)" if hi < 0 else ""
        return f"equivalent: the whole interval lies within ±{m}{side}"
    if word == "better":
        beyond = f", and above +{m} too" if lo > float(r["margin"]) else ""
        return f"better: the whole interval lies above 0{beyond}"
    if word == "worse":
        beyond = f", and below −{m} too" if hi < -float(r["margin"]) else ""
        return f"worse: the whole interval lies below 0{beyond}"
    if word == "non-inferior":
        return f"non-inferior: the interval lies above −{m}"
    if float(r["margin"]) == 0:
        return "inconclusive: the interval reaches both below and above 0"
    return f"inconclusive: the interval reaches both below −{m} and above 0"


def _difference(r) -> str:
    level = f"{float(r['difference_ci_level']) * 100:g} % CI"
    return (
        f"Difference {fmt(r['difference'])} [{fmt(r['difference_ci_low'])}, "
        f"{fmt(r['difference_ci_high'])}] ({level})"
    )


def generator_sentence(r) -> str:
    """The sentence of one generator row (role "generator") of verdicts.csv."""
    runs = int(r["n_runs"])
    who = f"{r['set_b']} ({runs} run{'s' if runs != 1 else ''})"
    route = ROUTE_TEXT.get(r["evidence"], r["evidence"])
    if r["evidence"] == "strength" and r.get("metric") == "p_match":
        route = "calibrated P(match) of the one-to-one partner of each reference theme"
    k = int(r["n_analysts"])
    names = ", ".join(x for x in (r["set_a"], as_text(r["second_analyst"])) if x)
    analysts = f"{fmt_int(k)} analyst{'s' if k != 1 else ''} ({names})"
    head = f"{who} against {analysts}"
    evidence = (
        f"Evidence at θ {fmt_threshold(r['threshold'], r['op'])}: {route}, read at "
        f"{fmt_int(r.get('common_size'))} themes a set ({fmt(r.get('n_themes_generator'))} "
        f"a run, {fmt(r.get('n_themes_analysts'))} an analyst)."
    )
    if k < 2 and not is_missing(r.get("agreement")):
        second = r.get("second_analyst_power", float("nan"))
        plan = (
            ""
            if is_missing(second)
            else f" A second analyst's coding of as many themes would call a generator as "
            f"good as an analyst equivalent, non-inferior or better with probability "
            f"{fmt(second)}."
        )
        return (
            f"{head}: agreement {fmt(r['agreement'])} [{fmt(r['agreement_ci_low'])}, "
            f"{fmt(r['agreement_ci_high'])}]; no verdict: one analyst, so no human–human "
            f"agreement to compare with.{plan} {evidence}"
        )
    if not as_text(r["verdict"]):
        why = as_text(r.get("withheld", "")) or "a comparison it needs was not made by this method"
        return f"{head}: no verdict, {why}. {evidence}"
    spread = [f"generator {fmt(r['agreement'])}, human–human {fmt(r['human_human'])}"]
    if not is_missing(r["run_sd"]):
        spread.append(f"run-to-run SD {fmt(r['run_sd'])}")
    if not is_missing(r["analyst_sd"]):
        spread.append(f"analyst-to-analyst SD {fmt(r['analyst_sd'])}")
    margin = _margin(r)
    outcome = _outcome(r)
    if as_text(r.get("withheld", "")):
        outcome = f"inconclusive: the word is withheld ({r['withheld']})"
    return (
        f"{_difference(r)}, {head}: {outcome}.{_settle(r)}{_reach(r)} {evidence} The interval "
        f"covers {r['covers']}; {'; '.join(spread)}; {margin}."
    )


def _reach(r) -> str:
    """What the design could reach (the primary row's power columns), or ''."""
    eq, ni = r.get("power_equivalent", float("nan")), r.get("power_non_inferior", float("nan"))
    if is_missing(eq) or is_missing(ni):
        return ""
    text = (
        f" At this design a generator as good as the analysts would be called equivalent "
        f"with probability {fmt(eq)}, and equivalent, non-inferior or better with {fmt(ni)}"
    )
    if r["verdict"] == "inconclusive" and float(ni) < 0.8:
        text += ": an inconclusive here says this design could not tell"
    return text + "."


def _margin(r) -> str:
    """Where the row's margin comes from, with the analysts' own spread where it is known."""
    spread, low = r.get("margin_analysts", float("nan")), r.get("margin_analysts_low", float("nan"))
    level = f"{(1 - float(r['alpha'])) * 100:g} %"
    if as_text(r["margin_source"]).startswith("analysts"):
        return (
            f"equivalent means the difference is below the analysts' own spread (estimated "
            f"{fmt(spread)} over {fmt_int(r['n_analysts'])} analysts, its lower {level} bound "
            f"{fmt(low)})"
        )
    text = f"margin ±{fmt(r['margin'])}, the study's choice"
    if not is_missing(spread):
        text += f" (the analysts' own spread: {fmt(spread)}, lower {level} bound {fmt(low)})"
    return text


def _settle(r) -> str:
    """What would settle an open verdict (settle_verdict, settle_themes, settle_runs), or ''."""
    aim = as_text(r.get("settle_verdict", ""))
    if not aim:
        return ""
    ways = []
    if not is_missing(r["settle_themes"]):
        ways.append(f"about {fmt_int(r['settle_themes'])} reference themes per analyst")
    if not is_missing(r["settle_runs"]):
        ways.append(f"about {fmt_int(r['settle_runs'])} runs")
    if not ways:
        return f" No number of themes or of runs alone would make it {aim} at this difference."
    return f" {aim.capitalize()} at this difference would need {' or '.join(ways)}."


def verdict_sentence(r) -> str:
    """The sentence of one row of verdicts.csv."""
    if as_text(r.get("role", "")) == "generator":
        return generator_sentence(r)
    head = (
        f"θ {fmt_threshold(r['threshold'], r['op'])}: {r['set_b']} matches "
        f"{fmt_int(r['n_matched'])} of {fmt_int(r['n_a'])} {r['set_a']} themes one-to-one "
        f"({fmt(r['agreement'])}{_interval(r['agreement_ci_low'], r['agreement_ci_high'])}; "
        f"Hungarian F1 {fmt(r['hungarian_f1'])})"
    )
    analyst = as_text(r["second_analyst"])
    if not analyst:
        if r["role"] != "compared":
            return f"{head}; {r['set_b']} is a second analyst of the reference group."
        return f"{head}."
    if is_missing(r["human_human"]):
        return (
            f"{head}; this method did not compare {r['set_a']} with the second analyst "
            f"{analyst} (its comparisons: setting), so there is no verdict."
        )
    human = (
        f"the second analyst {analyst} matches {fmt_int(r['human_n_matched'])} "
        f"({fmt(r['human_human'])}{_interval(r['human_human_ci_low'], r['human_human_ci_high'])})"
    )
    if not as_text(r["verdict"]):
        return f"{head}; {human}; no paired difference: a comparison has no per-theme rows."
    return f"{_difference(r)}: {_outcome(r)}. {head}; {human}."


def coder_note(r, coder) -> str:
    """For a segments-route row: how far the automatic coder agrees with the analysts' own
    coding (coder_agreement.csv's checked overall rows), and, below CODER_TRUSTED on any
    of them, that this κ measures the coder as much as the themes. '' for other routes."""
    if r.get("evidence") != "segments" or not as_text(r.get("verdict", "")):
        return ""
    sets = [r["set_a"]] + [s.strip() for s in str(r["second_analyst"]).split(",") if s.strip()]
    mine = None if coder is None else coder[coder["method"] == r["method"]]
    mine = None if mine is None else mine[mine["set"].astype(str).isin(sets)]
    if mine is None or mine.empty:
        return (
            " The automatic coder was not checked against any analyst's own coding (no coded "
            "segments), so how far this κ measures the coder rather than the themes is unknown."
        )

    def one(x) -> str:
        lo, hi = x.get("pooled_kappa_ci_low"), x.get("pooled_kappa_ci_high")
        ci = "" if is_missing(lo) or is_missing(hi) else f" [{fmt(lo)}, {fmt(hi)}]"
        return f"{x['set']} {fmt(x['pooled_kappa'])}{ci}"

    each = ", ".join(one(x) for x in mine.to_dict("records"))
    text = f" The automatic coder agrees with the analysts' own coding at pooled κ {each}"
    low = [x for x in mine.to_dict("records") if float(x["pooled_kappa"]) < CODER_TRUSTED]
    if low:
        return (
            f"{text}: below the moderate {CODER_TRUSTED:g} on {', '.join(x['set'] for x in low)},"
            " so this κ measures the coder as much as the themes; read the leading route."
        )
    return f"{text}."


def verdict_view(path, coder=None) -> dict | None:
    """{"methods": [{"name", "sentences", "detail"}], "grouped", "estimand"} from
    verdicts.csv, or None when the report was not given one. A method leads with its
    generators' verdicts on the leading route; the other route and every set against each
    single analyst are its detail. coder: coder_agreement.csv's checked overall rows (the
    segments route says how far its coder agrees with the analysts' own coding)."""
    if path is None or str(path) == "" or not Path(path).is_file():
        return None
    df = read_verdicts(path)
    methods = []
    for method in dict.fromkeys(df["method"]):
        mine = df[df["method"] == method]
        gen = mine[mine["role"] == "generator"]
        lead = gen[gen["leads"].astype(str).str.lower() == "true"]
        compared = mine[mine["role"] == "compared"]
        if not lead.empty:
            first, rest = lead, pd.concat([gen.drop(lead.index), compared])
        else:
            # a method that ran only the human-human comparison still says what it found
            first, rest = (compared if not compared.empty else mine), mine.iloc[0:0]
        methods.append(
            {
                "name": method,
                "sentences": [
                    verdict_sentence(r) + coder_note(r, coder) for r in first.to_dict("records")
                ],
                "detail": [
                    verdict_sentence(r) + coder_note(r, coder) for r in rest.to_dict("records")
                ],
            }
        )
    grouped = bool((df["second_analyst"].astype(str) != "").any())
    return {"methods": methods, "grouped": grouped, "estimand": ESTIMAND}


def read_verdicts(path) -> pd.DataFrame:
    """verdicts.csv with its text columns as text (theme set names like "NA" stay names)."""
    return read_table(path, "verdicts CSV", VERDICT_COLUMNS, VERDICT_TEXT_COLUMNS)


def short_sentence(r) -> str:
    """A generator row in at most 40 words: which analysis, its word, the difference with
    its interval, the two agreements; the full sentence is one click away."""
    theta = fmt_threshold(r["threshold"], r["op"])
    head = f"{str(r.get('analysis') or '').capitalize() or 'Analysis'} ({r['method']} {theta}, "
    head += f"route {r['evidence']})"
    word = as_text(r.get("verdict"))
    if not word:
        why = "one analyst" if int(r["n_analysts"]) < 2 else "withheld"
        agreement = ""
        if not is_missing(r.get("agreement")):
            agreement = (
                f"; agreement {fmt(r['agreement'])} [{fmt(r['agreement_ci_low'])}, "
                f"{fmt(r['agreement_ci_high'])}]"
            )
        return f"{head}: no word ({why}){agreement}."
    level = f"{float(r['difference_ci_level']) * 100:g} %"
    return (
        f"{head}: {word}; difference {fmt(r['difference'])} [{fmt(r['difference_ci_low'])}, "
        f"{fmt(r['difference_ci_high'])}] ({level}), agreement {fmt(r['agreement'])} against "
        f"the analysts' {fmt(r['human_human'])}; margin ±{fmt(r['margin'])}."
    )


def generators_view(df: pd.DataFrame, coder=None, flags_of=None) -> dict:
    """Per generator its primary analysis (a short bullet, the full sentence one click
    away, its flags) and its sensitivity analyses as a table; the rows of one set against
    one analyst (descriptions, no word) after them. flags_of(generator entry) -> flags."""
    out = []
    for g in generators(df):
        bullets = []
        if g["primary"] is not None:
            r = g["primary"]
            bullets.append(
                {
                    "short": short_sentence(r),
                    "full": verdict_sentence(r) + coder_note(r, coder),
                    "flags": flags_of(g) if flags_of else [],
                }
            )
        sens = sensitivity(g["others"], g["primary"] or {})
        out.append(
            {
                "name": g["name"],
                "anchor": "verdict-" + _slug(g["name"]),
                "bullets": bullets,
                "sensitivity": sens["rows"],
                "n_differ": len(sens["differ"]),
                "differ": sens["differ"],
            }
        )
    detail = df[df["role"] == "compared"]  # a set of the group is its yardstick, not a row
    return {
        "generators": out,
        "detail": [verdict_sentence(r) + coder_note(r, coder) for r in detail.to_dict("records")],
        "sensitivity_headers": SENSITIVITY_HEADERS,
    }


def _slug(text) -> str:
    return re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-") or "x"
