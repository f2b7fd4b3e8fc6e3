"""Prompt files of the LLM steps, found by version name or by path, checked and hashed.

The judge has one file per version ({theme_a}, {theme_b}); theme generation a chunk and a merge
file per version ({text}, {max_themes}). Optional `system:`/`user:` sections split a file into
chat roles; the sha256 of the whole file goes into every cache key, so editing a prompt asks
the model again.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from themesim.errors import InputError
from themesim.llm import client as llm

PROMPT_DIR = Path(__file__).with_name("prompts")
STAGES = ("chunk", "merge")
SLOTS = ("{text}", "{max_themes}")  # of theme generation
JUDGE_SLOTS = ("{theme_a}", "{theme_b}")
SCORE_SCHEMA = {
    "type": "object",
    "properties": {"score": {"type": "number", "minimum": 0, "maximum": 1}},
    "required": ["score"],
}


def prompt_roles(lines: list[str], path: Path, slots) -> tuple[str, str | None]:
    """(user text, system text) of a prompt file's lines; every slot must be in the user text."""
    text, system = llm.split_roles(lines, path)
    for slot in slots:
        if slot not in text:
            raise InputError(str(path), f"the prompt has no {slot} slot", "Add it")
    return text, system


def chat_messages(system: str | None, user: str) -> list[dict]:
    """Chat messages: the system message when the prompt has one, then the user's."""
    msgs = [{"role": "system", "content": system}] if system else []
    return msgs + [{"role": "user", "content": user}]


def first_json(text: str | None):
    """The first JSON object or array in a model's answer (text around it ignored);
    ValueError when there is none or it does not parse."""
    text = text or ""
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        raise ValueError("no JSON in the answer")
    try:
        data, _ = json.JSONDecoder().raw_decode(text[min(starts) :])
    except json.JSONDecodeError as e:
        raise ValueError(f"invalid JSON ({e.msg} at char {e.pos})") from e
    return data


def text_sha256(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


# ---------------------------------------------------------------- the judge's


@dataclass
class JudgePrompt:
    version: str
    text: str  # the user message (the whole file for a prompt without headers)
    sha256: str  # of the whole file
    system: str | None = None  # the system message, if the file has a "system:" section
    scale: int = 1  # json mode: the model answers an integer 0..scale, divided by scale

    def messages(self, text_a: str, text_b: str) -> list[dict]:
        return chat_messages(
            self.system, self.text.replace("{theme_a}", text_a).replace("{theme_b}", text_b)
        )

    def schema(self) -> dict:
        if self.scale == 1:
            return SCORE_SCHEMA
        score = {"type": "integer", "minimum": 0, "maximum": self.scale}
        return {"type": "object", "properties": {"score": score}, "required": ["score"]}


def load_prompt(name: str, score_mode: str = "json") -> JudgePrompt:
    """A packaged prompt by version name ("judge_v1"), or a path to a .txt file."""
    if name.endswith(".txt") or os.sep in name:
        path = Path(name)
    else:
        path = PROMPT_DIR / (f"{name}_logprob.txt" if score_mode == "logprob" else f"{name}.txt")
    if not path.is_file():
        raise InputError(
            f"judge prompt {name!r}",
            f"{path} does not exist",
            f"Use one of {sorted(p.stem for p in PROMPT_DIR.glob('*.txt'))} "
            "or a path to a .txt prompt with {theme_a} and {theme_b}",
        )
    raw = path.read_text(encoding="utf-8")
    text, system, scale = _split_prompt(raw, path)
    return JudgePrompt(path.stem, text, text_sha256(raw), system, scale)


def _split_prompt(raw: str, path: Path) -> tuple[str, str | None, int]:
    """(user text, system text, scale) of a prompt file.

    Optional headers: a first line `score_scale: N` (json mode: the model answers an integer
    0..N, divided by N), then a line `system:` starting the system message and a line `user:`
    starting the user message. A file without them is one user message on a 0–1 scale.
    """
    lines = raw.split("\n")
    scale = 1
    m = re.fullmatch(r"score_scale:\s*(\d+)\s*", lines[0]) if lines else None
    if m:
        scale = int(m.group(1))
        lines = lines[1:]
        if scale < 1:
            raise InputError(str(path), "score_scale must be ≥ 1", "Fix the first line")
    text, system = prompt_roles(lines, path, JUDGE_SLOTS)
    return text, system, scale


# ---------------------------------------------------------------- theme generation's


@dataclass
class GeneratePrompt:
    version: str  # e.g. generate_v1
    stage: str  # chunk | merge
    text: str  # the user message, with {text} and {max_themes}
    system: str | None
    sha256: str  # of the file

    def messages(self, text: str, max_themes: int) -> list[dict]:
        user = self.text.replace("{max_themes}", str(max_themes)).replace("{text}", text)
        return chat_messages(self.system, user)


def prompt_paths(name: str) -> dict[str, Path]:
    """The chunk and merge prompt files of a version name, or of a path prefix."""
    base = Path(name) if os.sep in name else PROMPT_DIR / name
    return {stage: base.with_name(f"{base.name}_{stage}.txt") for stage in STAGES}


def load_prompts(name: str) -> dict[str, GeneratePrompt]:
    prompts = {}
    for stage, path in prompt_paths(name).items():
        if not path.is_file():
            versions = sorted({p.stem.rsplit("_", 1)[0] for p in PROMPT_DIR.glob("generate_*")})
            raise InputError(
                f"generate_themes prompt {name!r}",
                f"{path} does not exist",
                f"Use one of {versions}, or a path prefix P with files P_chunk.txt and "
                "P_merge.txt holding {text} and {max_themes}",
            )
        raw = path.read_text(encoding="utf-8")
        text, system = prompt_roles(raw.split("\n"), path, SLOTS)
        prompts[stage] = GeneratePrompt(Path(name).name, stage, text, system, text_sha256(raw))
    return prompts
