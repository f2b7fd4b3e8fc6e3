"""The tables of `themesim agree`: two or more coders' codings of the same transcripts
(io/codings.Codings), per code and transcript and overall, at character level and as
units (Krippendorff's unitizing α), with jackknife intervals over transcripts.

Two coders: `codes by transcript` and `overall` as before (percent agreement, Cohen's κ, the
character-level nominal α now named `alpha_binary_char`), with Gwet's AC1, Brennan–Prediger
and the unitizing α family beside them. Three or more: the same per code from the m-coder
forms (Fleiss κ instead of Cohen's), and a `pairs` table of every pair of coders. With
`overlap`, a `segments` table: MAXQDA's segment criterion per pair of coders and code.
"""

from __future__ import annotations

import math
import warnings
from itertools import combinations

import numpy as np
import pandas as pd

from themesim.io.codings import coded_scope, intervals
from themesim.metrics.agreement.codebooks import codebook_alpha_interval, similarity_matrix
from themesim.metrics.agreement.intercoder import (
    ALL,
    CI_METHOD,
    COUNT_COLUMNS,
    SCOPES,
    code_table,
    jackknife_interval,
    overall_table,
)
from themesim.metrics.agreement.multicoder import (
    MULTI_STATS,
    histogram,
    multi_stats,
    segment_agreement,
)
from themesim.metrics.agreement.unitizing import (
    Coincidences,
    Parts2004,
    binary_parts,
    binary_u_alpha,
    family_alphas,
    family_parts,
    intersect,
    sum_parts,
    total,
    u_alpha_2004,
)

U_CODE = ["u_alpha_2004", "u_alpha_binary"]  # per code (scope `all` only)
U_OVERALL = ["u_alpha", "u_alpha_binary", "cu_alpha", "cu_alpha_domains", "median_u_alpha_2004"]
RENAME_2 = {  # the two-coder tables' α is the character-level nominal α
    "alpha": "alpha_binary_char",
    "median_alpha": "median_alpha_binary_char",
    "pooled_alpha": "pooled_alpha_binary_char",
    "median_alpha_ci_low": "median_alpha_binary_char_ci_low",
    "median_alpha_ci_high": "median_alpha_binary_char_ci_high",
    "pooled_alpha_ci_low": "pooled_alpha_binary_char_ci_low",
    "pooled_alpha_ci_high": "pooled_alpha_binary_char_ci_high",
}


def agreement_tables(c, level: float = 0.95, overlap: float | None = None, similarity=None) -> dict:
    """{table name: DataFrame} of `themesim agree` (see the module's docstring). Transcripts no
    coder coded are left out: CAQDAS tools compare the sources the coders coded.

    similarity: (code_a, code_b, s) triples between codes (metrics/agreement/codebooks.py); with
    them the overall table's `all` row gains cu_alpha_codebooks, agreement across codebooks."""
    iv = intervals(c)
    docs = sorted(iv)
    lengths = {d: len(c.texts[d]) for d in docs}
    m = len(c.coders)
    hists = _histograms(iv, lengths, len(c.codes))
    parts = _u_parts(iv, lengths, len(c.codes), docs)
    u_rows = _u_code_rows(parts, c.codes, docs, level)
    tables = {}
    if m == 2:
        counts = pd.DataFrame(_pair_counts(iv, lengths, c.codes, 0, 1), columns=COUNT_COLUMNS)
        codes = code_table(counts).rename(columns={"group": "transcript", **RENAME_2})
        keys = ["scope", "code", "transcript"]
        extra = _multi_code_rows(hists, c.codes, docs)[[*keys, "gwet_ac1", "brennan_prediger"]]
        codes = codes.merge(extra, on=keys, how="left")
        overall = overall_table(counts, level).rename(columns=RENAME_2)
    else:
        codes = _multi_code_rows(hists, c.codes, docs)
        overall = _multi_overall(hists, docs, level)
        tables_pairs = _pairs_table(iv, lengths, c)
    codes = codes.merge(u_rows, on=["scope", "code", "transcript"], how="left")
    tables["codes by transcript"] = codes
    tables["overall"] = _with_u_overall(overall, iv, lengths, c, docs, parts, level, similarity)
    if m > 2:
        tables["pairs"] = tables_pairs
    if overlap is not None:
        tables["segments"] = _segments_table(iv, c, overlap)
    return tables


# ---------------------------------------------------------------- counts


def _pair_counts(iv, lengths, codes, i: int, j: int) -> list[tuple]:
    """COUNT_COLUMNS rows of coders i and j per transcript, code and scope, from intervals."""
    rows = []
    for doc in sorted(iv):
        per = iv[doc]
        pair = [per[i], per[j]]
        n_all, n_coded = lengths[doc], total(coded_scope(pair))
        for scope, n in (("all", n_all), ("coded", n_coded)):
            for k, code in enumerate(codes):
                a, b = pair[0][k], pair[1][k]
                both = total(intersect(a, b))
                ca, cb = total(a), total(b)
                rows.append((doc, code, scope, n, both, ca - both, cb - both, n - ca - cb + both))
    return rows


def _histograms(iv, lengths, n_codes: int) -> dict:
    """{(scope, doc): array codes × (m + 1)}: characters coded by k of the m coders."""
    out = {}
    for doc, per in iv.items():
        m = len(per)
        h = np.array([histogram([per[i][k] for i in range(m)], lengths[doc])
                      for k in range(n_codes)]).reshape(n_codes, m + 1)  # fmt: skip
        out[("all", doc)] = h
        hc = h.copy()
        hc[:, 0] = total(coded_scope(per)) - h[:, 1:].sum(axis=1)
        out[("coded", doc)] = hc
    return out


def _multi_code_rows(hists, codes, docs) -> pd.DataFrame:
    rows = []
    for scope in SCOPES:
        pooled = sum(hists[(scope, d)] for d in docs)
        for group, H in [*((d, hists[(scope, d)]) for d in docs), (ALL, pooled)]:
            s = multi_stats(H)
            for k, code in enumerate(codes):
                m = H.shape[1] - 1
                rows.append(
                    {
                        "scope": scope,
                        "code": code,
                        "transcript": group,
                        "units": int(H[k].sum()),
                        "coded_any": int(H[k, 1:].sum()),
                        "coded_all": int(H[k, m]),
                        **{name: float(s[name][k]) for name in MULTI_STATS},
                    }
                )
    return pd.DataFrame(rows)


def _multi_overall_figures(hists, docs) -> dict:
    """Per scope: pooled figures over every (character, code) decision and median per-code
    Fleiss κ and α."""
    out = {}
    for scope in SCOPES:
        if not docs:
            out[scope] = {}
            continue
        H = sum(hists[(scope, d)] for d in docs)
        per = multi_stats(H)
        tot = multi_stats(H.sum(axis=0))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            fk, al = per["fleiss_kappa"], per["alpha_binary_char"]
            out[scope] = {
                "median_fleiss_kappa": float(np.nanmedian(fk)) if np.isfinite(fk).any()
                else math.nan,
                "median_alpha_binary_char": float(np.nanmedian(al)) if np.isfinite(al).any()
                else math.nan,
                "pooled_fleiss_kappa": float(tot["fleiss_kappa"]),
                "pooled_alpha_binary_char": float(tot["alpha_binary_char"]),
                "pooled_gwet_ac1": float(tot["gwet_ac1"]),
                "pooled_brennan_prediger": float(tot["brennan_prediger"]),
                "percent_agreement": float(tot["percent_agreement"]),
            }  # fmt: skip
    return out


MULTI_OVERALL = [
    "median_fleiss_kappa",
    "median_alpha_binary_char",
    "pooled_fleiss_kappa",
    "pooled_alpha_binary_char",
    "pooled_gwet_ac1",
    "pooled_brennan_prediger",
    "percent_agreement",
]


def _bounded(metric: str, lo: float, hi: float) -> tuple[float, float]:
    """An interval kept inside the figure's range: percent in [0, 100], κ and AC1 at most 1."""
    if metric == "percent_agreement":
        return max(lo, 0.0), min(hi, 100.0)
    return lo, min(hi, 1.0)


def _multi_overall(hists, docs, level: float) -> pd.DataFrame:
    full = _multi_overall_figures(hists, docs)
    loo = [_multi_overall_figures(hists, [d for d in docs if d != g]) for g in docs]
    rows = []
    for scope in SCOPES:
        row = {"scope": scope, "n_groups": len(docs),
               "n_codes": next(iter(hists.values())).shape[0] if hists else 0}  # fmt: skip
        row |= full[scope]
        for m in MULTI_OVERALL:
            lo, hi = jackknife_interval(full[scope][m], [r[scope].get(m) for r in loo], level)
            row[f"{m}_ci_low"], row[f"{m}_ci_high"] = _bounded(m, lo, hi)
        row["ci_method"] = CI_METHOD
        rows.append(row)
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- unitizing α


def _u_parts(iv, lengths, n_codes: int, docs):
    """Per code and transcript the additive pieces of u_alpha_2004 and |uα: pooling and the
    jackknife then only add them up."""
    p2004 = {(k, d): Parts2004.of(lengths[d], [coder[k] for coder in iv[d]])
             for k in range(n_codes) for d in docs}  # fmt: skip
    pbin = {(k, d): binary_parts(lengths[d], [coder[k] for coder in iv[d]])
            for k in range(n_codes) for d in docs}  # fmt: skip
    return p2004, pbin


def _from_parts(parts: dict, k: int, docs, how) -> float:
    return how(sum_parts([parts[(k, d)] for d in docs])) if docs else math.nan


def _u_code_rows(parts, codes, docs, level: float = 0.95) -> pd.DataFrame:
    """u_alpha_2004 and u_alpha_binary per code, per transcript and pooled (scope `all`); the
    pooled rows with jackknife intervals over transcripts."""
    p2004, pbin = parts
    fns = {
        "u_alpha_2004": (p2004, Parts2004.alpha),
        "u_alpha_binary": (pbin, Coincidences.binary_alpha),
    }
    rows = []
    for k, code in enumerate(codes):
        for d in docs:
            rows.append({"scope": "all", "code": code, "transcript": d}
                        | {name: how(pp[(k, d)]) for name, (pp, how) in fns.items()})  # fmt: skip
        row = {"scope": "all", "code": code, "transcript": ALL}
        for name, (pp, how) in fns.items():
            row[name] = _from_parts(pp, k, docs, how)
            loo = [_from_parts(pp, k, [d for d in docs if d != g], how) for g in docs]
            lo, hi = jackknife_interval(row[name], loo, level)
            row[f"{name}_ci_low"], row[f"{name}_ci_high"] = _bounded(name, lo, hi)
        rows.append(row)
    cis = [f"{n}_ci_{s}" for n in U_CODE for s in ("low", "high")]
    return pd.DataFrame(rows, columns=["scope", "code", "transcript", *U_CODE, *cis])


def _u_overall_figures(fam: dict, p2004: dict, n_codes: int, docs) -> dict:
    if not docs:
        return dict.fromkeys(U_OVERALL, math.nan)
    out = family_alphas([fam[d] for d in docs])
    per = np.array([_from_parts(p2004, k, docs, Parts2004.alpha) for k in range(n_codes)])
    out["median_u_alpha_2004"] = float(np.nanmedian(per)) if np.isfinite(per).any() else math.nan
    return out


def _with_u_overall(overall: pd.DataFrame, iv, lengths, c, docs, parts, level, similarity=None):
    """The overall table with the unitizing figures on its `all` row (NaN on `coded`: they
    are defined on the whole continuum) and their jackknife intervals; with `similarity`,
    cu_alpha_codebooks too."""
    names = sorted(set(c.domains.get(code, code) for code in c.codes))
    dom = [names.index(c.domains.get(code, code)) for code in c.codes]
    dom = dom if len(names) < len(c.codes) else None
    fam = {d: family_parts(lengths[d], iv[d], len(c.codes), dom) for d in docs}
    p2004 = parts[0]
    n = len(c.codes)
    full = _u_overall_figures(fam, p2004, n, docs)
    loo = [_u_overall_figures(fam, p2004, n, [d for d in docs if d != g]) for g in docs]
    overall = overall.copy()
    ci = overall.pop("ci_method")
    for m in U_OVERALL:
        lo, hi = jackknife_interval(full[m], [r[m] for r in loo], level)
        lo, hi = _bounded(m, lo, hi)
        for col, v in ((m, full[m]), (f"{m}_ci_low", lo), (f"{m}_ci_high", hi)):
            overall[col] = np.where(overall["scope"] == "all", v, math.nan)
    if similarity is not None:
        s = similarity_matrix(c.codes, similarity)
        est, lo, hi = codebook_alpha_interval({d: fam[d][1] for d in docs}, s, level)
        for col, v in (("cu_alpha_codebooks", est), ("cu_alpha_codebooks_ci_low", lo),
                       ("cu_alpha_codebooks_ci_high", hi)):  # fmt: skip
            overall[col] = np.where(overall["scope"] == "all", v, math.nan)
    overall["n_coders"] = len(c.coders)
    overall["ci_method"] = ci
    return overall


# ---------------------------------------------------------------- pairs and segments


def _pairs_table(iv, lengths, c) -> pd.DataFrame:
    """Every pair of coders: per code pooled over transcripts (scope `all`), Cohen's κ,
    percent agreement, the character α and the unitizing α of the pair."""
    rows = []
    docs = sorted(iv)
    for i, j in combinations(range(len(c.coders)), 2):
        counts = pd.DataFrame(_pair_counts(iv, lengths, c.codes, i, j), columns=COUNT_COLUMNS)
        t = code_table(counts[counts["scope"] == "all"])
        t = t[t["group"] == ALL].set_index("code")
        for k, code in enumerate(c.codes):
            sub = [(lengths[d], [iv[d][i][k], iv[d][j][k]]) for d in docs]
            r = t.loc[code]
            rows.append(
                {
                    "coder_a": c.coders[i],
                    "coder_b": c.coders[j],
                    "code": code,
                    "units": int(r["units"]),
                    "coded_a": int(r["coded_a"]),
                    "coded_b": int(r["coded_b"]),
                    "both": int(r["both"]),
                    "percent_agreement": float(r["percent_agreement"]),
                    "kappa": float(r["kappa"]),
                    "alpha_binary_char": float(r["alpha"]),
                    "u_alpha_2004": u_alpha_2004(sub),
                    "u_alpha_binary": binary_u_alpha(sub),
                }
            )
    return pd.DataFrame(rows)


def _segments_table(iv, c, share: float) -> pd.DataFrame:
    """MAXQDA's segment criterion per pair of coders and code, pooled over transcripts: a
    segment (a coder's selection, overlapping ones joined) agrees when a segment of the other
    coder with the same code covers at least `share` of it."""
    rows = []
    for i, j in combinations(range(len(c.coders)), 2):
        for k, code in enumerate(c.codes):
            na = aa = nb = ab = 0
            for per in iv.values():
                x = segment_agreement(per[i][k], per[j][k], share)
                na, aa, nb, ab = na + x[0], aa + x[1], nb + x[2], ab + x[3]
            n = na + nb
            rows.append(
                {
                    "coder_a": c.coders[i],
                    "coder_b": c.coders[j],
                    "code": code,
                    "min_overlap": share,
                    "segments_a": na,
                    "agreeing_a": aa,
                    "segments_b": nb,
                    "agreeing_b": ab,
                    "segment_agreement": 100 * (aa + ab) / n if n else math.nan,
                }
            )
    return pd.DataFrame(rows)
