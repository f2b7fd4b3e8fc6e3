"""The report's first screen: per generator the word on the primary comparison, its
difference with the interval and what it means in plain words, with every flag that another
figure raises on that row; then where each generator differs from the reference, by name
(the reference themes it missed, the themes it added, the pairs it shares), each theme with
one passage where the coding exists.

Every number is a cell of verdicts.csv or of the primary method's themes.csv and
decision_changes.csv; nothing here is computed that a table does not hold.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd

from themesim.report.format import as_text, fmt, fmt_int, fmt_threshold, is_missing

# Names shown per list on the first screen; the rest are on the comparison's page.
SHOWN = 6
SHOWN_SHARED = 4
EXCERPT_CHARS = 150


def _true(x) -> bool:
    return str(x).strip().lower() == "true"


def meaning(r: dict) -> str:
    """The word of a primary row in plain words (≤ 30 words)."""
    m = fmt(r.get("margin"))
    word = as_text(r.get("verdict"))
    if word == "equivalent":
        return (
            f"Agrees with the analysts as well as they agree with each other, to within "
            f"{m} (one theme in {round(1 / float(r['margin'])) if _pos(r) else '–'})."
        )
    if word == "better":
        return "Agrees with the analysts more than they agree with each other."
    if word == "worse":
        hi = float(r["difference_ci_high"])
        far = f", by more than the margin {m}" if hi < -float(r["margin"]) else ""
        return f"Agrees with the analysts less than they agree with each other{far}."
    if word == "non-inferior":
        return f"Not worse than the analysts by {m} or more; it may be a little worse or better."
    if word == "inconclusive":
        text = (
            f"It may be worse than the analysts by more than {m}, or as good: the data cannot tell."
        )
        ni = r.get("power_non_inferior")
        if not is_missing(ni) and float(ni) < 0.8:
            text = (
                f"It may be worse by more than {m}, or as good: this design could not tell "
                f"(a generator as good as the analysts gets a word with probability {fmt(ni, 2)})."
            )
        return text
    return ""


def _pos(r) -> bool:
    try:
        return float(r["margin"]) > 0
    except (TypeError, ValueError, KeyError):
        return False


def _difference(r: dict) -> str:
    if is_missing(r.get("difference")):
        return "–"
    return f"{fmt(r['difference'])} [{fmt(r['difference_ci_low'])}, {fmt(r['difference_ci_high'])}]"


def _level(r: dict) -> str:
    try:
        return f"{float(r['difference_ci_level']) * 100:g} %"
    except (TypeError, ValueError, KeyError):
        return "90 %"


def _route(r: dict) -> str:
    return as_text(r.get("evidence")) or "matched"


def primary_line(r: dict) -> dict:
    """What the primary comparison is, in words and parts (the answer's first sentence)."""
    return {
        "method": r["method"],
        "theta": fmt_threshold(r["threshold"], as_text(r.get("op")) or None),
        "route": _route(r),
        "margin": fmt(r.get("margin")),
        "level": _level(r),
        "analysts": [x for x in [r["set_a"], *as_text(r.get("second_analyst")).split(", ")] if x],
        "human_human": fmt(r.get("human_human")),
    }


def sensitivity(rows: pd.DataFrame, primary: dict) -> dict:
    """The generator's other analyses: a table (method, θ, route, word, difference) and
    the flag when their words differ from the primary's."""
    table, differ, words = [], [], []
    word = as_text(primary.get("verdict"))
    for r in rows.to_dict("records"):
        w = as_text(r.get("verdict")) or ("no word" if as_text(r.get("withheld")) else "–")
        table.append(
            [
                r["method"],
                fmt_threshold(r["threshold"], as_text(r.get("op")) or None),
                _route(r),
                w,
                _difference(r),
                fmt(r.get("agreement")),
                fmt(r.get("human_human")),
            ]
        )
        if word and as_text(r.get("verdict")) and as_text(r["verdict"]) != word:
            differ.append(f"{w} under {r['method']} {table[-1][1]} ({_route(r)})")
            words.append(w)
    return {"rows": table, "differ": differ, "n": len(table), "words": words}


SENSITIVITY_HEADERS = ["Method", "θ", "Route", "Verdict", "Difference", "Agreement",
                       "Analysts' agreement"]  # fmt: skip


def generators(df: pd.DataFrame) -> list[dict]:
    """One entry per generator: its primary row (or None), its runs and its other rows."""
    gen = df[df["role"] == "generator"]
    out = []
    for name in dict.fromkeys(gen["set_b"]):
        mine = gen[gen["set_b"] == name]
        prim = mine[mine["primary"].map(_true)]
        first = prim.iloc[0].to_dict() if len(prim) else None
        runs = as_text((first or mine.iloc[0].to_dict()).get("generator_runs")).split(", ")
        out.append(
            {
                "name": name,
                "runs": [r for r in runs if r] or [name],
                "primary": first,
                "others": mine.drop(prim.index),
            }
        )
    return out


class ThemeLists:
    """Missed, added and shared themes of one method's comparisons at one threshold, read
    from its themes.csv; z-rejected pairs from its decision_changes.csv."""

    def __init__(self, themes: pd.DataFrame, threshold: float, op: str, decisions=None):
        # themes.csv holds each theme once per comparison (best match and one-to-one partner
        # do not depend on θ): the threshold decides which of them match
        self.t = themes
        self.threshold, self.op = threshold, op
        self.rejected: dict = {}
        if decisions is not None and len(decisions):
            d = decisions[
                [
                    math.isclose(float(x), threshold, rel_tol=1e-9)
                    for x in decisions["raw_threshold"]
                ]
            ]
            for r in d.to_dict("records"):
                pairs = {tuple(p.split(":", 1)) for p in as_text(r["only_raw_pairs"]).split("; ")}
                self.rejected[(r["set_a"], r["set_b"])] = {p for p in pairs if len(p) == 2}

    def _meets(self, s) -> bool:
        if is_missing(s) or (isinstance(s, str) and not s.strip()):
            return False
        s = float(s)
        return s >= self.threshold if self.op == "ge" else s > self.threshold

    def side(self, a: str, b: str, side: str) -> pd.DataFrame:
        return self.t[(self.t["set_a"] == a) & (self.t["set_b"] == b) & (self.t["side"] == side)]

    def unmatched(self, a: str, b: str, side: str) -> list[tuple[str, str]]:
        """(id, name) of one side's themes that no theme of the other side reaches θ with."""
        rows = self.side(a, b, side)
        return [
            (r["theme_id"], r["theme_name"])
            for r in rows.to_dict("records")
            if not self._meets(r["best_similarity"])
        ]

    def missed(self, a: str, b: str) -> list[tuple[str, str]]:
        """(id, name) of a's themes no theme of b reaches θ with."""
        return self.unmatched(a, b, "a")

    def added(self, a: str, b: str) -> list[tuple[str, str]]:
        """(id, name) of b's themes no theme of a reaches θ with."""
        return self.unmatched(a, b, "b")

    def shared(self, a: str, b: str) -> list[dict]:
        """The one-to-one pairs reaching θ, each saying whether the z rule keeps it."""
        rows = self.side(a, b, "a")
        out = []
        for r in rows.to_dict("records"):
            if not as_text(r["hungarian_partner_id"]) or not self._meets(r["hungarian_similarity"]):
                continue
            out.append(
                {
                    "a_id": r["theme_id"],
                    "a": r["theme_name"],
                    "b_id": r["hungarian_partner_id"],
                    "b": r["hungarian_partner_name"],
                    "rejected": (r["theme_id"], r["hungarian_partner_id"])
                    in self.rejected.get((a, b), set()),
                }
            )
        return out

    def has(self, a: str, b: str) -> bool:
        return not self.side(a, b, "a").empty


class Passages:
    """One passage per theme, from the coding where it exists: a set's own coding (coded
    segments, matched quotes) first, else the automatic coder's assignment."""

    def __init__(self, segments_dir, segments_parquet, withhold: bool = False):
        self.dir = Path(segments_dir) if segments_dir else None
        self.withhold = withhold
        self.text = None
        if not withhold and segments_parquet and Path(segments_parquet).is_file():
            seg = pd.read_parquet(segments_parquet, columns=["transcript", "segment", "text"])
            self.text = {
                (t, int(s)): x
                for t, s, x in zip(seg["transcript"], seg["segment"], seg["text"], strict=True)
            }
        self.labels: dict = {}

    @property
    def available(self) -> bool:
        return self.dir is not None and self.text is not None

    def _labels(self, s: str):
        if s not in self.labels:
            p = None if self.dir is None else self.dir / f"{s}.parquet"
            self.labels[s] = pd.read_parquet(p) if p is not None and p.is_file() else None
        return self.labels[s]

    def of(self, s: str, theme_id: str) -> dict | None:
        """{"text", "where", "who"} of one passage the set's theme labels, or None."""
        if not self.available:
            return None
        lab = self._labels(s)
        if lab is None or lab.empty:
            return None
        mine = lab[lab["theme_id"] == theme_id]
        own = mine[mine["source"].isin(["coded", "quote"])]
        pick, who = (own, "the analyst's coding") if len(own) else (mine, "the automatic coder")
        if pick.empty:
            return None
        pick = pick.sort_values(["score", "transcript", "segment"], ascending=[False, True, True])
        r = pick.iloc[0]
        text = self.text.get((r["transcript"], int(r["segment"])))
        if text is None:
            return None
        text = " ".join(str(text).split())
        if len(text) > EXCERPT_CHARS:
            text = text[: EXCERPT_CHARS - 1].rstrip() + "…"
        return {"text": text, "where": f"{r['transcript']} #{int(r['segment'])}", "who": who}


def differ_view(gen: dict, reference: str, lists: ThemeLists, passages: Passages, page) -> dict:
    """Where one generator differs from the reference, by name."""
    runs = [r for r in gen["runs"] if lists.has(reference, r)]
    n = len(runs)
    missed: dict = {}
    for run in runs:
        for tid, name in lists.missed(reference, run):
            missed.setdefault((tid, name), 0)
            missed[(tid, name)] += 1
    order = sorted(missed.items(), key=lambda kv: -kv[1])
    missed_items = [
        {
            "id": tid,
            "name": name,
            "count": f"{k}/{n} runs" if n > 1 else "",
            "passage": passages.of(reference, tid),
        }
        for (tid, name), k in order
    ]
    added_items = []
    for run in runs:
        for tid, name in lists.added(reference, run):
            added_items.append(
                {
                    "id": tid,
                    "name": name,
                    "count": run if n > 1 else "",
                    "passage": passages.of(run, tid),
                }
            )
    shared: dict = {}
    for run in runs:
        for p in lists.shared(reference, run):
            key = (p["a_id"], p["a"])
            e = shared.setdefault(key, {"k": 0, "rejected": 0, "b": p["b"]})
            e["k"] += 1
            e["rejected"] += p["rejected"]
    shared_items = [
        {
            "name": a if n > 1 else f"{a} ↔ {e['b']}",
            "count": f"{e['k']}/{n} runs" if n > 1 else "",
            "rejected": e["rejected"] > 0,
        }
        for (_, a), e in shared.items()
    ]
    n_rejected = sum(1 for s in shared_items if s["rejected"])
    return {
        "name": gen["name"],
        "anchor": "differ-" + _slug(gen["name"]),
        "runs": runs,
        "missed": missed_items,
        "added": added_items,
        "shared": shared_items,
        "n_rejected": n_rejected,
        "missed_text": _names(missed_items),
        "added_text": _names(added_items, by_run=n > 1),
        "shared_text": _names(shared_items, shown=SHOWN_SHARED),
        "pages": [page(reference, r) for r in runs],
        "passages": [
            {"kind": kind, "name": x["name"], **x["passage"]}
            for kind, items in (("missed", missed_items), ("added", added_items))
            for x in items
            if x.get("passage")
        ],
    }


def _names(items: list[dict], by_run: bool = False, shown: int = SHOWN) -> str:
    if not items:
        return "none"
    limit, shown = shown, items[:shown]
    parts = []
    for x in shown:
        extra = x.get("count") or ""
        mark = " †" if x.get("rejected") else ""
        if by_run:
            parts.append(f"{x['name']} ({extra}){mark}")
        else:
            parts.append(f"{x['name']}{f' ({extra})' if extra else ''}{mark}")
    more = f"; and {len(items) - limit} more" if len(items) > limit else ""
    return "; ".join(parts) + more


def _slug(text) -> str:
    return re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-") or "x"


def answer_rows(gens: list[dict], flags_of) -> list[dict]:
    """The answer table's rows: generator, word, difference, meaning, flags."""
    out = []
    for g in gens:
        r = g["primary"]
        runs = len(g["runs"])
        who = f"{g['name']} ({runs} runs)" if runs > 1 else g["name"]
        if r is None:
            out.append({"generator": who, "word": "–", "difference": "–",
                        "meaning": "No primary comparison for this generator.",
                        "flags": flags_of(g), "anchor": "answer-" + _slug(g["name"])})  # fmt: skip
            continue
        word = as_text(r.get("verdict"))
        one = int(float(r.get("n_analysts") or 0)) < 2
        if not word:
            why = as_text(r.get("withheld"))
            agreement = (
                f"{fmt(r.get('agreement'))} [{fmt(r.get('agreement_ci_low'))}, "
                f"{fmt(r.get('agreement_ci_high'))}]"
            )
            text = (
                "No word: one analyst, so no human–human agreement to compare with."
                if one
                else f"No word: {why.split('(')[0].strip() or 'withheld'}."
            )
            power = r.get("second_analyst_power")
            if one and not is_missing(power):
                text += (
                    " A second analyst's coding of as many themes would give a word with "
                    f"probability {fmt(power, 2)}."
                )
            out.append({"generator": who, "word": "no word", "difference": "–",
                        "agreement": agreement, "meaning": text, "flags": flags_of(g),
                        "anchor": "answer-" + _slug(g["name"])})  # fmt: skip
            continue
        out.append(
            {
                "generator": who,
                "word": word,
                "difference": _difference(r),
                "meaning": meaning(r),
                "flags": flags_of(g),
                "anchor": "answer-" + _slug(g["name"]),
                "agreement": fmt(r.get("agreement")),
            }
        )
    return out


def sizes_note(r: dict) -> str:
    """How many themes the agreement was read at (common_size), with the sets' sizes."""
    k = r.get("common_size")
    if is_missing(k):
        return ""
    return (
        f"read at {fmt_int(k)} themes a set ({fmt(r.get('n_themes_generator'), 1)} a run, "
        f"{fmt(r.get('n_themes_analysts'), 1)} an analyst)"
    )
