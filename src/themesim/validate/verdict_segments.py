"""The verdicts area's segments route (validate/verdict_suite.py runs it): the generator's κ with
each reference theme over coded segments against the analysts', transcripts as clusters."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from themesim.metrics.kappa import kappa_counts_array
from themesim.metrics.verdicts.difference import VERDICTS, Study, difference, verdict
from themesim.validate.core import Scope, row
from themesim.validate.verdicts import ALPHA, AREA, MARGIN

# --- The segments route: κ over coded segments, transcripts as clusters -------------------
#
# Each transcript is a run of `segments` passages whose ideas follow a Markov chain (the
# idea stays with probability `stay`, else one of n ideas or none is drawn afresh: topic
# blocks, serial dependence). Every coder (analyst or run) applies theme i to a passage on
# idea i with probability expit(mu + a_coder + u_i + c_t) and to any other passage with
# probability `false_positive`; u_i (the idea's findability) and c_t (the transcript's
# clarity) are shared by every coder. Each set's theme i pairs with theme i. The generator
# is one fixed coder (a = 0: the verdict is about this generator), its runs alike; the
# analysts' a are drawn with SD sd_coder. With sd_coder 0 the generator is one more coder of
# the analysts' kind, so D = 0 whatever the transcripts (the null); with a spread the truth
# (over analysts, themes and transcripts) is the mean of D over the draws. `shift` lowers
# the generator's mu (power).


@dataclass(frozen=True)
class SegmentDesign:
    transcripts: int = 12
    segments: int = 20
    themes: int = 10
    runs: int = 1
    analysts: int = 3
    stay: float = 0.5
    sd_coder: float = 0.0  # analyst-to-analyst (and generator) sensitivity, logit scale
    sd_transcript: float = 0.5
    sd_theme: float = 0.8
    mu: float = 1.0
    false_positive: float = 0.05
    p_none: float = 0.3
    shift: float = 0.0  # the generator's mu minus the analysts' (0: the null)

    def name(self) -> str:
        return (
            f"segments:T={self.transcripts},S={self.segments},n={self.themes},R={self.runs},"
            f"K={self.analysts},stay={self.stay:g},sd_coder={self.sd_coder:g},"
            f"shift={self.shift:+g}"
        )


def _topics(d: SegmentDesign, rng) -> np.ndarray:
    """(transcripts, segments) idea per passage (-1: none), a Markov chain per transcript."""
    z = np.empty((d.transcripts, d.segments), dtype=np.int64)
    weights = np.r_[d.p_none, np.full(d.themes, (1 - d.p_none) / d.themes)]
    fresh = rng.choice(np.arange(-1, d.themes), size=z.shape, p=weights)
    stays = rng.random(z.shape) < d.stay
    z[:, 0] = fresh[:, 0]
    for s in range(1, d.segments):
        z[:, s] = np.where(stays[:, s], z[:, s - 1], fresh[:, s])
    return z


def draw_segments(d: SegmentDesign, rng) -> Study:
    """One simulated study on the segments route: every theme pair's κ over the coded
    segments of all transcripts (metrics.verdicts.difference.Study); theme i of every set is
    written on idea i, so it names its partner in every other set."""
    z = _topics(d, rng)
    u = rng.normal(0, d.sd_theme, d.themes)
    c = rng.normal(0, d.sd_transcript, d.transcripts)
    k, runs = d.analysts, d.runs
    a = np.r_[rng.normal(0, d.sd_coder, k), 0.0]  # the analysts', then the generator's
    on = z[..., None] == np.arange(d.themes)  # (T, S, n)

    def code(effect):
        p = expit(d.mu + effect + u[None, None, :] + c[:, None, None])
        hit = rng.random(on.shape) < np.where(on, p, d.false_positive)
        return hit.reshape(-1, d.themes).astype(np.float64)  # (segments, n)

    analysts = {f"analyst{j + 1}": code(a[j]) for j in range(k)}
    gens = {f"run{j + 1}": code(a[k] + d.shift) for j in range(runs)}
    n_seg = d.transcripts * d.segments
    order = np.eye(d.themes)  # theme i's text partner is theme i

    def kappas(x, y):
        both = x.T @ y  # (n, n) segments coded with both
        with np.errstate(invalid="ignore", divide="ignore"):
            kk = kappa_counts_array(both, x.sum(axis=0)[:, None], y.sum(axis=0)[None, :], n_seg)
        return np.nan_to_num(kk, nan=0.0)

    names = list(analysts)
    tables = {(r, g): (kappas(analysts[r], gens[g]), order) for r in names for g in gens}
    tables |= {(x, y): (kappas(analysts[x], analysts[y]), order)
               for i, x in enumerate(names) for y in names[i + 1 :]}  # fmt: skip
    return Study(names, list(gens), tables)


def simulate_segments(d: SegmentDesign, draws: int, rng, margin=MARGIN, alpha=ALPHA) -> dict:
    """P(each verdict) of the segments route, and the coverage of the truth: 0 under the
    null (sd_coder 0, shift 0), else the mean of D over the draws."""
    counts = dict.fromkeys(VERDICTS, 0)
    ends, estimates = [], []
    for _ in range(draws):
        res = difference(draw_segments(d, rng), alpha, margin)
        counts[verdict(res.ci_low, res.ci_high, margin)] += 1
        ends.append((res.ci_low, res.ci_high))
        estimates.append(res.difference)
    null = d.sd_coder == 0 and d.shift == 0
    truth = 0.0 if null else float(np.mean(estimates))
    lo, hi = np.array(ends).T
    out = {f"p_{k}": v / draws for k, v in counts.items()}
    return out | {
        "truth": truth,
        "coverage": float(np.mean((lo <= truth) & (truth <= hi))),
        "mean_width": float(np.mean(hi - lo)),
        "draws": draws,
    }


def segment_rows(d: SegmentDesign, sim: dict) -> list[dict]:
    procedure = "random-effects moments (themes), segments"
    at = Scope(AREA, d.name(), n_a=d.themes)
    out = []
    if d.shift == 0 and d.sd_coder == 0:  # the null: D = 0 exactly
        for w in ("worse", "better"):
            out.append(row(at, f"verdict {w}", procedure, "type1_error",
                           sim[f"p_{w}"], sim["draws"], nominal=ALPHA))  # fmt: skip
    if d.shift < 0:
        out.append(row(at, "verdict worse", procedure, "power", sim["p_worse"],
                       sim["draws"]))  # fmt: skip
    out.append(row(at, "difference", procedure, "coverage_tost_level",
                   sim["coverage"], sim["draws"], nominal=1 - 2 * ALPHA))  # fmt: skip
    return out
