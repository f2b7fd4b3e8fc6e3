"""What each LLM judge method of a study will ask, worked out when the workflow is built: the
first lines of a run and of a dry run (`snakemake -n`) state its judgements to ask, those
cached and the expected time, and a method above its `max_pairs` stops the workflow there.

Only a study with a judge method reads this (workflow/rules/judge_plan.smk): it reads the
theme sets' texts (the ingested tables when they are up to date, else the theme files) and the
judge's cache. A set not made yet (a generated run) counts `generate_themes.max_themes`
themes, none of them cached: the figure is then an upper bound, and the job's own log gives
the exact one before its first request.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import pyarrow.parquet as pq

from themesim import paths
from themesim.defaults import section_defaults
from themesim.errors import ThemesimError
from themesim.inputs import Setup, calibration, methods
from themesim.kinds.llm_judge import JUDGE_KEYS, judge_stream
from themesim.llm.judge import plan
from themesim.llm.judge_settings import JudgeSettings
from themesim.steps.ingest import read_theme_set
from themesim.steps.similarity import rated_texts


@dataclass
class _Unknown:
    """A set whose texts are not known yet: only how many themes it may have."""

    n: int


def set_texts(setup: Setup, name: str) -> list[str] | _Unknown:
    """The judge's texts of one set: from its ingested table when that is newer than the
    file, else read from the file as the ingest job reads it; _Unknown for a set not made
    yet or a file the ingest job will refuse (it says why)."""
    study = setup.study
    src, table = Path(study.sets[name]), Path(paths.THEMES.format(set=name))
    if table.is_file() and (not src.is_file() or table.stat().st_mtime >= src.stat().st_mtime):
        return pq.read_table(table, columns=["text"]).column("text").to_pylist()
    if src.is_file():
        try:
            df = read_theme_set(
                src, set_name=name, template=study.template, level=study.levels.get(name, "all")
            )
            return df["text"].tolist()
        except ThemesimError:
            pass
    most = study.generate.get("max_themes") or section_defaults("generate_themes")["max_themes"]
    return _Unknown(int(most))


def method_plan(setup: Setup, method: str) -> str:
    """One line: the method's judgements to ask and the expected time. InputError (naming
    the method's max_pairs) when they are more than max_pairs."""
    spec = methods.spec(setup, method)
    settings = JudgeSettings(**{k: spec[k] for k in JUDGE_KEYS if spec.get(k) is not None})
    pairs = setup.study.pairs_for(method)
    texts = {s: set_texts(setup, s) for s in dict.fromkeys(x for p in pairs for x in p)}
    known = [p for p in pairs if not any(isinstance(texts[s], _Unknown) for s in p)]
    tables = {s: {"text": t} for s, t in texts.items() if not isinstance(t, _Unknown)}
    rated_files = calibration.judged_rated_pairs(setup, method)
    rated = rated_texts(rated_files[0]) if rated_files else ([], [])
    stream = judge_stream(settings, known, tables, rated)
    found = plan(stream, settings, methods.similarity_cache(setup, method))
    # The pairs of sets not made yet: every judgement counted, none cached.
    more = sum(_size(texts[a]) * _size(texts[b]) for a, b in pairs if (a, b) not in known)
    more *= 2 if settings.both_orders else 1
    found = replace(found, judgements=found.judgements + more)
    found.check(settings.max_pairs, f"config methods.{method}.max_pairs")
    bound = " at most (sets not made yet count their max_themes)" if more else ""
    return f"judge method {method}: {found}{bound}"


def _size(texts) -> int:
    return texts.n if isinstance(texts, _Unknown) else len(texts)


def plans(setup: Setup) -> list[str]:
    """method_plan of every judge method of the study."""
    return [method_plan(setup, m) for m in setup.study.methods_with("judge_cache")]
