"""`themesim agree`: two or more coders' agreement, its checks of the command line, the
--similarity file it reads, and its text and CSV forms."""

from __future__ import annotations

import io
import json
import math
import sys
import tempfile
from pathlib import Path

import pandas as pd

from themesim.cli_output import records
from themesim.cli_sizes import agree_cost, check_cost
from themesim.errors import InputError
from themesim.io.qdpx_export import check_reserved_names, write_qdpx
from themesim.io.two_codings import read_codings
from themesim.metrics.agreement.agree import agreement_tables
from themesim.metrics.agreement.codebooks import similarity_matrix
from themesim.report.workbook import frames_workbook


def _agree_text(c, tables) -> str:
    """The human-readable form of `themesim agree`: the overall figures, then per code."""
    m = len(c.coders)
    names = ", ".join(f"{chr(65 + k) if m <= 26 else k + 1} = {n}" for k, n in enumerate(c.coders))
    lines = [f"Coders: {names}; {len(c.codes)} codes, character level"]
    codes = tables["codes by transcript"]
    for r in tables["overall"].to_dict("records"):
        scope = "all text" if r["scope"] == "all" else "coded text only (uncoded left out)"
        lines += ["", f"Overall, {scope} ({r['n_groups']} transcripts):"]
        if r["n_groups"] < 3:
            lines.append("  (no intervals: they need 3 or more transcripts)")
        lines.append(f"  percent agreement {_num(r['percent_agreement'], 1)} %"
                     f"{_ci(r, 'percent_agreement', 1)}")  # fmt: skip
        if m == 2:
            lines += [
                f"  Cohen's kappa: median per code {_num(r['median_kappa'])}"
                f"{_ci(r, 'median_kappa')}, pooled {_num(r['pooled_kappa'])}"
                f"{_ci(r, 'pooled_kappa')}",
                f"  Krippendorff's alpha, every character a unit (alpha_binary_char): pooled "
                f"{_num(r['pooled_alpha_binary_char'])}{_ci(r, 'pooled_alpha_binary_char')}, "
                f"median per code {_num(r['median_alpha_binary_char'])}",
            ]
        else:
            lines += [
                f"  Fleiss' kappa: median per code {_num(r['median_fleiss_kappa'])}"
                f"{_ci(r, 'median_fleiss_kappa')}, pooled {_num(r['pooled_fleiss_kappa'])}"
                f"{_ci(r, 'pooled_fleiss_kappa')}",
                f"  Krippendorff's alpha, every character a unit (alpha_binary_char): pooled "
                f"{_num(r['pooled_alpha_binary_char'])}{_ci(r, 'pooled_alpha_binary_char')}",
                f"  Gwet's AC1 {_num(r['pooled_gwet_ac1'])}, Brennan-Prediger "
                f"{_num(r['pooled_brennan_prediger'])} (pooled)",
            ]
        if r["scope"] == "all":
            lines.append(
                "  Krippendorff's unitizing alpha: "
                + ", ".join(
                    f"{label} {_num(r[k])}{_ci(r, k)}"
                    for label, k in (
                        ("u-alpha", "u_alpha"),
                        ("|u-alpha", "u_alpha_binary"),
                        ("cu-alpha", "cu_alpha"),
                        ("Cu-alpha", "cu_alpha_domains"),
                        ("median per code (1995/2004 form)", "median_u_alpha_2004"),
                    )
                )
            )
            if "cu_alpha_codebooks" in r:
                lines.append(
                    "  Agreement across codebooks (cu-alpha, distance 1 - similarity): "
                    f"{_num(r['cu_alpha_codebooks'])}{_ci(r, 'cu_alpha_codebooks')}"
                )
        per = codes[(codes["scope"] == r["scope"]) & (codes["transcript"] == "(all)")]
        width = max([len(str(x)) for x in per["code"]] + [4])
        kappa = "kappa" if m == 2 else "fleiss_kappa"
        head = "kappa" if m == 2 else "Fleiss"
        lines.append(f"  {'code':<{width}}  agree %  {head:>6}  a-char  u-a2004  |u-a")
        for q in per.to_dict("records"):
            lines.append(
                f"  {q['code']:<{width}}  {_num(q['percent_agreement'], 1):>7}  "
                f"{_num(q[kappa]):>6}  {_num(q['alpha_binary_char']):>6}  "
                f"{_num(q.get('u_alpha_2004')):>7}  {_num(q.get('u_alpha_binary')):>5}"
            )
    for key, heading, figures in _PAIR_SECTIONS:  # the tables of two or more coders
        if key in tables:
            lines += ["", heading]
            for q in tables[key].to_dict("records"):
                lines.append(f"  {q['coder_a']} / {q['coder_b']}  {q['code']}: {figures(q)}")
    return "\n".join(lines) + "\n"


def _pair_figures(q: dict) -> str:
    return (
        f"kappa {_num(q['kappa'])}, agree {_num(q['percent_agreement'], 1)} %, "
        f"u-alpha (2004) {_num(q['u_alpha_2004'])}"
    )


def _segment_figures(q: dict) -> str:
    agree, of = q["agreeing_a"] + q["agreeing_b"], q["segments_a"] + q["segments_b"]
    return (
        f"{agree} of {of} segments agree ({_num(q['segment_agreement'], 1)} %) at "
        f"{100 * q['min_overlap']:g} % overlap"
    )


# The sections after the per-code table: each a heading, then a line per pair of coders and code.
_PAIR_SECTIONS = (
    (
        "pairs",
        "Pairs of coders, per code over all text (Cohen's kappa, unitizing alpha):",
        _pair_figures,
    ),
    (
        "segments",
        "Segments (a selection agrees when the other coder's covers enough of it):",
        _segment_figures,
    ),
)


def _num(x, digits: int = 2) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _ci(r: dict, m: str, digits: int = 2) -> str:
    lo, hi = r.get(f"{m}_ci_low", math.nan), r.get(f"{m}_ci_high", math.nan)
    if lo is None or math.isnan(lo):
        return ""  # said once per scope: under 3 transcripts give no interval
    return f" [{lo:.{digits}f}, {hi:.{digits}f}]"


def _agree_out(path: str | None, flag: str = "--out", example: str = "agree.txt") -> None:
    """--out must name a file whose folder exists: one line before any work, not a traceback."""
    if not path:
        return
    p = Path(path)
    if p.is_dir() or str(path).endswith(("/", "\\")):
        raise InputError(f"{flag} {path}", "is a folder", f"Give a file name, e.g. {example}.")
    if not p.parent.is_dir():
        raise InputError(
            f"{flag} {path}",
            f"its folder {str(p.parent)!r} does not exist",
            "Create the folder first, or write to an existing one.",
        )

    try:  # a folder that exists may still refuse files (/proc, read-only)
        with tempfile.TemporaryFile(dir=p.parent):
            pass
    except OSError as e:
        raise InputError(
            f"{flag} {path}",
            f"its folder {str(p.parent)!r} cannot be written ({e.strerror})",
            "Give a file in a folder you can write.",
        ) from None


def _check_agree_args(args) -> None:
    """The command line's files and options, before any codings are read."""
    _agree_out(args.out)
    _agree_out(args.export_qdpx, "--export-qdpx", "coding.qdpx")
    if args.export_qdpx and not args.export_qdpx.lower().endswith(".qdpx"):
        raise InputError(
            f"--export-qdpx {args.export_qdpx}",
            "does not end in .qdpx",
            "Give a file name ending in .qdpx: QDA software opens REFI-QDA projects by it.",
        )
    if args.export_qdpx:
        target = Path(args.export_qdpx).resolve()
        for given in [*args.codings, *([args.out] if args.out else [])]:
            if Path(given).resolve() == target:
                raise InputError(
                    f"--export-qdpx {args.export_qdpx}",
                    f"is {given}, which this command reads or writes",
                    "Give the export a new file name: it would overwrite the coders' project.",
                )
    if args.format == "xlsx" and not args.out:
        raise InputError("--format xlsx", "needs a file to write", "Give --out FILE.xlsx.")
    if args.overlap is not None and not 0 < args.overlap <= 1:
        raise InputError(
            f"--overlap {args.overlap:g}", "is not a share in (0, 1]", "Give e.g. 0.9 for 90 %."
        )


def cmd_agree(args) -> int:
    _check_agree_args(args)
    coders = [c.strip() for c in args.coders.split(",")] if args.coders else None
    c = read_codings(
        args.codings,
        args.transcripts or (),
        coders=coders,
        level=args.level,
        allow_unmatched=args.allow_unmatched_codes or bool(args.similarity),
    )
    if args.export_qdpx:  # before any figure: the export must not lose a coder or a code
        check_reserved_names(c.coders, c.codes, f"--export-qdpx {args.export_qdpx}")
    n_docs = c.spans["document"].nunique()
    need, seconds, how = agree_cost(len(c.coders), len(c.codes), n_docs)
    check_cost(
        f"{len(c.coders)} coders, {len(c.codes)} codes, {n_docs} transcripts",
        "computing their agreement",
        need,
        seconds,
        args.max_minutes,
        how,
        "Compare fewer coders at once (--coders A,B,C), or fewer codes or transcripts",
    )
    for note in c.notes:
        print(f"themesim agree: {note}.", file=sys.stderr)
    similarity = _agree_similarity(args.similarity, c) if args.similarity else None
    tables = agreement_tables(c, overlap=args.overlap, similarity=similarity)
    if args.export_qdpx:
        _export_qdpx(c, args.export_qdpx)
    if args.format == "xlsx":
        try:
            frames_workbook(tables, args.out)
        except OSError as e:
            raise InputError(f"--out {args.out}", f"cannot be written ({e.strerror})",
                             "Give a file in a folder you can write.") from None  # fmt: skip
        print(f"themesim agree: {len(tables)} tables written to {args.out}")
        return 0
    if args.format == "json":
        text = json.dumps(
            {"coders": list(c.coders)} | {k: records(v) for k, v in tables.items()}, indent=2
        )
        text += "\n"
    elif args.format == "csv":
        buf = io.StringIO()
        long = agree_long_table(tables)
        long.to_csv(buf, index=False, lineterminator="\n")
        text = buf.getvalue()
    else:
        text = _agree_text(c, tables)
    if args.out:
        try:
            Path(args.out).write_text(text, encoding="utf-8")
        except OSError as e:
            raise InputError(f"--out {args.out}", f"cannot be written ({e.strerror})",
                             "Give a file in a folder you can write.") from None  # fmt: skip
    else:
        sys.stdout.write(text)
    return 0


def _export_qdpx(c, path: str) -> None:
    """--export-qdpx: the codings as a REFI-QDA project, said on stderr."""
    try:
        n = write_qdpx(c, path)
    except OSError as e:
        raise InputError(
            f"--export-qdpx {path}",
            f"cannot be written ({e.strerror})",
            "Give a file in a folder you can write.",
        ) from None
    print(
        f"themesim agree: REFI-QDA project written to {path} ({n['coders']} "
        f"coders as users, {n['selections']} selections, {n['disagreements']} passages "
        f"where they differ under {n['disagreement_codes']} disagreement codes)",
        file=sys.stderr,
    )


def _agree_similarity(path: str, c) -> list[tuple[str, str, float]]:
    """The (code_a, code_b, similarity) rows of --similarity whose codes the codings use (a
    codebook's code nobody applied plays no part); checked by metrics/agreement/codebooks.py. Said
    on stderr when no pair within one coder's own codes is given: the figure then runs high."""
    flag = f"--similarity {path}"
    try:
        t = pd.read_csv(path, dtype={"code_a": str, "code_b": str})
    except (OSError, ValueError) as e:
        raise InputError(flag, f"cannot be read ({e})", "Give a CSV file.") from None
    need = ["code_a", "code_b", "similarity"]
    missing = [k for k in need if k not in t.columns]
    if missing:
        raise InputError(
            flag,
            f"has no column {', '.join(missing)}",
            "Give a CSV with columns code_a, code_b, similarity (in [0, 1]).",
        )
    sim = pd.to_numeric(t["similarity"], errors="coerce")
    if sim.isna().any():
        row = int(sim.isna().to_numpy().argmax()) + 2
        raise InputError(f"{flag}, line {row}", "has no numeric similarity", "Give a number.")
    codes = c.codes
    known = set(codes)
    keep = t["code_a"].isin(known) & t["code_b"].isin(known)
    if not keep.any():
        raise InputError(
            flag,
            "names none of the codes the coders applied",
            f"Name codes as the codings do, e.g. {', '.join(map(repr, codes[:3]))}.",
        )
    rows = list(zip(t.loc[keep, "code_a"], t.loc[keep, "code_b"], sim[keep], strict=True))
    try:
        similarity_matrix(codes, rows)
    except ValueError as e:
        raise InputError(flag, str(e), "Give one similarity in [0, 1] per pair.") from None
    used = [set(c.spans.loc[c.spans["coder"] == k, "code"]) for k in range(len(c.coders))]
    own = [u - set().union(*(v for v in used if v is not u)) for u in used]
    given = {frozenset((a, b)) for a, b, _ in rows}
    within = [frozenset((a, b)) for o in own for a in o for b in o if a < b]
    if within and not given.intersection(within):
        print(
            f"themesim agree: {path} gives no similarity between two codes of one coder's own "
            "codebook; they count as unrelated (0), which puts agreement across codebooks "
            "above its chance level (docs/validity.md): give every pair of codes",
            file=sys.stderr,
        )
    return rows


def agree_long_table(tables: dict):
    """One CSV of `themesim agree`: the per code × transcript rows, then one row per scope
    with the overall figures (code and transcript `(all)`, κ and α pooled over every code)."""
    codes = tables["codes by transcript"].assign(level="code")
    o = tables["overall"]
    pooled = {  # the overall row's figure in the per-code column of the same name
        k: o[f"pooled_{k}"] for k in ("kappa", "fleiss_kappa", "alpha_binary_char")
        if f"pooled_{k}" in o
    }  # fmt: skip
    overall = o.assign(level="overall", code="(all)", transcript="(all)", **pooled)
    extra = [  # every pair of coders (three or more), the segment criterion (--overlap)
        tables[name].assign(level=level, scope="all", transcript="(all)")
        for name, level in (("pairs", "pair"), ("segments", "segments"))
        if name in tables
    ]
    out = pd.concat([codes, overall, *extra], ignore_index=True)
    first = ["level", "scope", "code", "transcript"]
    return out[first + [c for c in out.columns if c not in first]]
