"""Krippendorff's unitizing α family for coders who mark stretches of a continuum (characters of
transcripts) with codes.

Every coding here is a set of half-open intervals [start, end) per coder, never a characters ×
codes matrix: memory grows with the number of selections, not the length of the text.

Two definitions, both per code and for two or more coders:

- ``u_alpha_2004``: Krippendorff's unitizing α of one category (Krippendorff 1995, "On the
  reliability of unitizing continuous data", Sociological Methodology 25; in the corrected form
  of Content Analysis, 2nd ed. 2004, pp. 251-256). Disagreement is positional: two overlapping
  units differ by the squares of their start and end offsets, a unit inside the other coder's
  gap by its squared length. This is DKPro Agreement's ``KrippendorffAlphaUnitizingAgreement``.
- the 2016 family (Krippendorff, Mathet, Bouvry & Widlöcher, "On the reliability of unitizing
  textual continua: further developments", Quality & Quantity 50, 2016; Krippendorff 2019,
  Content Analysis, 4th ed.), built on coincidences of lengths: ``u_alpha`` (uα, units
  and codes together), ``u_alpha_binary`` (|uα, coded against uncoded matter), ``cu_alpha``
  (cuα, the codes of stretches the coders both coded) and, with codes grouped in domains,
  ``cu_alpha_domains`` (Cuα; ATLAS.ti's name, not checked against ATLAS.ti). uα and cuα need
  each coder's codes to be mutually exclusive; where they overlap they are NaN.

A document list is one continuum of the documents laid end to end; no unit or gap crosses a
document's boundary.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from themesim.io.codings import Intervals, merge


def total(iv: Intervals) -> int:
    return int((iv[:, 1] - iv[:, 0]).sum()) if len(iv) else 0


def intersect(a: Intervals, b: Intervals) -> Intervals:
    """The intersection of two sets of sorted disjoint intervals."""
    if not len(a) or not len(b):
        return np.zeros((0, 2), dtype=np.int64)
    # each pair (i, j) that overlaps; the candidates of a[i] form a contiguous run of b
    lo = np.searchsorted(b[:, 1], a[:, 0], side="right")
    hi = np.searchsorted(b[:, 0], a[:, 1], side="left")
    n = np.maximum(hi - lo, 0)
    ia = np.repeat(np.arange(len(a)), n)
    jb = np.concatenate([np.arange(x, y) for x, y in zip(lo, hi, strict=True)] or [[]])
    jb = jb.astype(np.int64)
    s = np.maximum(a[ia, 0], b[jb, 0])
    e = np.minimum(a[ia, 1], b[jb, 1])
    keep = e > s
    return np.column_stack([s[keep], e[keep]])


def sections(units: Intervals, length: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(starts, ends, coded) of a coder's continuum [0, length): its units and the gaps between
    them, in order."""
    bounds = np.r_[0, units.ravel(), length] if len(units) else np.array([0, length])
    starts, ends = bounds[:-1], bounds[1:]
    coded = np.zeros(len(starts), dtype=bool)
    coded[1:-1:2] = True
    keep = ends > starts
    return starts[keep], ends[keep], coded[keep]


# ---------------------------------------------------------------- 1995/2004 form (one code)


def _pair_distance_sum(ua: Intervals, ub: Intervals, length: int) -> float:
    """Σ δ² over the overlapping sections of two coders (Krippendorff 2004, p. 252): two units
    that overlap differ by (Δstart)² + (Δend)²; a unit that lies inside the other's gap by its
    squared length; all else by 0."""
    sa, ea, ca = sections(ua, length)
    sb, eb, cb = sections(ub, length)
    # every overlapping pair of sections meets on one elementary stretch of the continuum
    bounds = np.unique(np.r_[sa, ea, sb, eb])
    mid = bounds[:-1]
    ia = np.searchsorted(sa, mid, side="right") - 1
    ib = np.searchsorted(sb, mid, side="right") - 1
    pair = np.unique(np.column_stack([ia, ib]), axis=0)
    ia, ib = pair[:, 0], pair[:, 1]
    la, lb = (ea - sa)[ia].astype(float), (eb - sb)[ib].astype(float)
    both = ca[ia] & cb[ib]
    ds, de = (sa[ia] - sb[ib]).astype(float), (ea[ia] - eb[ib]).astype(float)
    d = np.where(both, ds**2 + de**2, 0.0)
    a_in_gap = ca[ia] & ~cb[ib] & (sb[ib] <= sa[ia]) & (ea[ia] <= eb[ib])
    b_in_gap = cb[ib] & ~ca[ia] & (sa[ia] <= sb[ib]) & (eb[ib] <= ea[ia])
    d = d + np.where(a_in_gap, la**2, 0.0) + np.where(b_in_gap, lb**2, 0.0)
    return float(d.sum())


class Parts2004:
    """The additive pieces of :func:`u_alpha_2004_parts` of documents: summing two documents'
    pieces gives the pieces of both, so pooling and the transcript jackknife reuse them."""

    def __init__(self, m: int, L: float = 0.0, obs: float = 0.0, units=(), gaps=()):
        self.m, self.L, self.obs = m, L, obs
        self.units = np.asarray(units, dtype=float)
        self.gaps = np.asarray(gaps, dtype=float)

    @classmethod
    def of(cls, length: int, coders: Sequence[Intervals]) -> Parts2004:
        m = len(coders)
        obs = 0.0
        units, gaps = [], []
        for i in range(m):
            for j in range(i + 1, m):
                obs += 2 * _pair_distance_sum(coders[i], coders[j], length)
            s, e, c = sections(coders[i], length)
            units.append((e - s)[c])
            gaps.append((e - s)[~c])
        return cls(m, float(length), obs, np.concatenate(units), np.concatenate(gaps))

    def __add__(self, other: Parts2004) -> Parts2004:
        return Parts2004(self.m, self.L + other.L, self.obs + other.obs,
                         np.r_[self.units, other.units], np.r_[self.gaps, other.gaps])  # fmt: skip

    def disagreements(self) -> tuple[float, float]:
        m, L = self.m, self.L
        if m < 2 or L <= 0:
            return math.nan, math.nan
        d_o = self.obs / (m * (m - 1) * L * L)
        ls, gs = self.units, np.sort(self.gaps)
        N = len(ls)
        # Σ_{g ≥ l} (g − l + 1) for every unit length l, by prefix sums over the sorted gaps
        tail_sum = np.r_[np.cumsum(gs[::-1])[::-1], 0.0]
        k = np.searchsorted(gs, ls, side="left")
        fit = tail_sum[k] - (ls - 1) * (len(gs) - k)
        num = ((N - 1) * (2 * ls**3 - 3 * ls**2 + ls) / 3 + ls**2 * fit).sum()
        den = m * L * (m * L - 1) - (ls * (ls - 1)).sum()
        return d_o, (2 / L * num / den if den > 0 else math.nan)

    def alpha(self) -> float:
        """1 − D_o / D_e; NaN when D_e is 0 (no unit anywhere)."""
        d_o, d_e = self.disagreements()
        if not (math.isfinite(d_e) and d_e > 0):
            return math.nan
        return 1 - d_o / d_e


def sum_parts(parts):
    """The sum of additive pieces (Parts2004 or Coincidences) of several documents."""
    out = parts[0]
    for p in parts[1:]:
        out = out + p
    return out


def u_alpha_2004_parts(docs: Sequence[tuple[int, Sequence[Intervals]]]) -> tuple[float, float]:
    """(D_o, D_e) of one code over documents, each (length, [units of coder 1, ..., m]).

    D_o = Σ_{i≠j} Σ δ² / (m (m − 1) L²);
    D_e = 2/L · Σ_units [(N − 1)(2l³ − 3l² + l)/3 + l² Σ_{gaps g ≥ l} (g − l + 1)]
          / (m L (m L − 1) − Σ_units l (l − 1)),
    with L the total length, N the number of units of all coders."""
    if not docs:
        return math.nan, math.nan
    return sum_parts([Parts2004.of(n, coders) for n, coders in docs]).disagreements()


def u_alpha_2004(docs) -> float:
    """1 − D_o / D_e of :func:`u_alpha_2004_parts`; NaN when D_e is 0 (no unit anywhere)."""
    if not docs:
        return math.nan
    return sum_parts([Parts2004.of(n, coders) for n, coders in docs]).alpha()


# ---------------------------------------------------------------- 2016 family (coincidences)


def _labelled(units: Sequence[Intervals], length: int):
    """One coder's continuum as (starts, ends, value, unit id): value 0 and id −1 for a gap,
    value v + 1 for a unit of code v; None when two codes overlap (the 2016 coefficients need
    exclusive codes)."""
    iv = np.concatenate([np.asarray(u, dtype=np.int64).reshape(-1, 2) for u in units] or
                        [np.zeros((0, 2), dtype=np.int64)])  # fmt: skip
    val = np.concatenate([np.full(len(u), v + 1) for v, u in enumerate(units)] or [[]])
    order = np.argsort(iv[:, 0], kind="stable")
    iv, val = iv[order], val[order].astype(np.int64)
    if (iv[1:, 0] < iv[:-1, 1]).any():
        return None
    gs, ge = np.r_[0, iv[:, 1]], np.r_[iv[:, 0], length]
    gap = ge > gs
    s = np.r_[iv[:, 0], gs[gap]]
    e = np.r_[iv[:, 1], ge[gap]]
    v = np.r_[val, np.zeros(gap.sum(), dtype=np.int64)]
    uid = np.r_[np.arange(len(iv)), np.full(gap.sum(), -1)]
    order = np.argsort(s, kind="stable")
    return s[order], e[order], v[order], uid[order]


class Coincidences:
    """The 2016 paper's observed and expected coincidence matrices (of lengths) of m coders'
    exclusive codings of documents; value 0 is the gap, v + 1 code v."""

    def __init__(self, docs, n_values: int):
        V = n_values + 1
        m = len(docs[0][1]) if docs else 0
        self.m, self.V = m, V
        self.o = np.zeros((V, V))
        self.ok = m >= 2
        n = 0
        star = np.zeros(V)  # Σ l² over units of each value, Σ l over gaps
        cu_star = np.zeros(V)  # Σ over units and other coders of (coded overlap)²
        self.n, self.star, self.cu_star = 0.0, star, cu_star
        for length, coders in docs:
            n += m * length
            lab = [_labelled(units, length) for units in coders]
            if any(x is None for x in lab):
                self.ok = False
                return
            bounds = np.unique(np.concatenate([np.r_[x[0], x[1]] for x in lab]))
            mid, w = bounds[:-1], np.diff(bounds).astype(float)
            vals = []
            for s, _e, v, _u in lab:
                vals.append(v[np.searchsorted(s, mid, side="right") - 1])
            for i in range(m):
                for j in range(m):
                    if i != j:
                        self.o += np.bincount(
                            vals[i] * V + vals[j], weights=w, minlength=V * V
                        ).reshape(V, V) / (m - 1)
            for i, (s, e, v, uid) in enumerate(lab):
                unit = uid >= 0
                ul = np.bincount(uid[unit], weights=(e - s)[unit]) if unit.any() else []
                uv = np.zeros(len(ul), dtype=np.int64)
                if unit.any():
                    uv[uid[unit]] = v[unit]
                np.add.at(star, uv, np.asarray(ul, dtype=float) ** 2)
                star[0] += float((e - s)[~unit].sum())
                # per unit of coder i, its length coded by each other coder
                piece = np.searchsorted(s, mid, side="right") - 1
                ui = uid[piece]
                for j in range(m):
                    if j == i:
                        continue
                    both = (ui >= 0) & (vals[j] > 0)
                    x = np.bincount(ui[both], weights=w[both], minlength=len(ul))
                    np.add.at(cu_star, uv, x**2)
        self.n = float(n)
        self.star, self.cu_star = star, cu_star

    def __add__(self, other: Coincidences) -> Coincidences:
        """The coincidences of both sets of documents (all sums)."""
        out = Coincidences([], self.V - 1)
        out.m, out.ok = self.m, self.ok and other.ok
        out.o, out.n = self.o + other.o, self.n + other.n
        out.star, out.cu_star = self.star + other.star, self.cu_star + other.cu_star
        return out

    def binary_alpha(self) -> float:
        """|uα: coded (any value) against uncoded matter, from the gap's row."""
        if not self.ok:
            return math.nan
        o, e = self.o, self.expected()
        d_e = e[0].sum() - e[0, 0]
        return float(1 - (o[0].sum() - o[0, 0]) / d_e) if d_e > 0 else math.nan

    def expected(self) -> np.ndarray:
        """e_ck = n (l_c l_k − [c = k] Σ l*_c) / (n² − Σ l*), l* = l² for units, l for gaps."""
        lc = self.o.sum(axis=1)
        den = self.n**2 - self.star.sum()
        return self.n * (np.outer(lc, lc) - np.diag(self.star)) / den

    def cu_expected(self) -> tuple[np.ndarray, np.ndarray]:
        """(observed, expected) coincidences of the codes of stretches both coders coded."""
        o = self.o[1:, 1:]
        lc = o.sum(axis=1)
        lt = lc.sum()
        if lt <= 0:
            return o, np.full_like(o, np.nan)
        den = lt - self.cu_star[1:].sum() / (lt * (self.m - 1))
        e = (np.outer(lc, lc) - np.diag(self.cu_star[1:] / (self.m - 1))) / den
        return o, e


def _alpha(o: np.ndarray, e: np.ndarray) -> float:
    n = o.sum()
    d_o, d_e = n - np.trace(o), e.sum() - np.trace(e)
    if not (n > 0 and d_e > 0):
        return math.nan
    return float(1 - d_o / d_e)


def _union_of(units: Sequence[Intervals]) -> Intervals:
    parts = [np.asarray(u).reshape(-1, 2) for u in units if len(u)]
    if not parts:
        return np.zeros((0, 2), dtype=np.int64)
    allv = np.concatenate(parts)
    return merge(allv[:, 0], allv[:, 1])


FAMILY = ("u_alpha", "u_alpha_binary", "cu_alpha", "cu_alpha_domains")


def family_parts(length: int, coders, n_values: int, domains: Sequence[int] | None = None):
    """One document's additive pieces of :func:`u_alpha_family`: the coincidences of the codes
    joined (for |uα), of the codes, and of the domains (None without domains)."""
    union = Coincidences([(length, [[_union_of(u)] for u in coders])], 1)
    codes = Coincidences([(length, coders)], n_values)
    grouped = None
    if domains is not None and len(set(domains)) > 1:
        k = max(domains) + 1
        by_domain = [
            [_union_of([u[v] for v in range(n_values) if domains[v] == d]) for d in range(k)]
            for u in coders
        ]
        grouped = Coincidences([(length, by_domain)], k)
    return union, codes, grouped


def family_alphas(parts) -> dict:
    """uα, |uα, cuα and Cuα of documents from their :func:`family_parts`."""
    out = dict.fromkeys(FAMILY, math.nan)
    if not parts or parts[0][0].m < 2:
        return out
    union, codes, grouped = (sum_parts([p[i] for p in parts]) if parts[0][i] is not None else None
                             for i in range(3))  # fmt: skip
    out["u_alpha_binary"] = union.binary_alpha()
    if codes.ok:
        out["u_alpha"] = _alpha(codes.o, codes.expected())
        if codes.V > 2:
            out["cu_alpha"] = _alpha(*codes.cu_expected())
    if grouped is not None and grouped.ok:
        out["cu_alpha_domains"] = _alpha(*grouped.cu_expected())
    return out


def u_alpha_family(docs, n_values: int, domains: Sequence[int] | None = None) -> dict:
    """u_alpha (uα), u_alpha_binary (|uα), cu_alpha (cuα) and cu_alpha_domains (Cuα) of
    documents, each (length, [per coder: [intervals of code 0, ..., n_values − 1]]).

    domains: the domain (an int) of each code for Cuα; None leaves it NaN. uα and cuα are NaN
    when a coder's codes overlap; |uα is computed on the union of each coder's codes."""
    return family_alphas([family_parts(n, coders, n_values, domains) for n, coders in docs])


def binary_parts(length: int, coders: Sequence[Intervals]) -> Coincidences:
    """One document's additive pieces of |uα for one code (its units per coder)."""
    return Coincidences([(length, [[u] for u in coders])], 1)


def binary_u_alpha(docs) -> float:
    """|uα of one code: documents as (length, [units of coder 1, ..., m])."""
    if not docs:
        return math.nan
    return sum_parts([binary_parts(n, coders) for n, coders in docs]).binary_alpha()
