"""Transcripts in chunks that fit the model's context, by an approximate token count."""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Protocol

import pandas as pd

from themesim.errors import InputError

if TYPE_CHECKING:
    from themesim.llm.prompts import GeneratePrompt


class Context(Protocol):
    """What the budget reads of the generation settings (themesim.llm.generate)."""

    n_ctx: int
    max_tokens: int
    chars_per_token: float


def approx_tokens(text: str, chars_per_token: float) -> int:
    return math.ceil(len(text) / chars_per_token)


def text_budget(prompt: GeneratePrompt, settings: Context, n_themes: int) -> int:
    """Tokens left for the {text} slot: n_ctx minus the prompt, the answer and a margin."""
    overhead = sum(
        approx_tokens(m["content"], settings.chars_per_token) + 8  # + role markup
        for m in prompt.messages("", n_themes)
    )
    budget = settings.n_ctx - overhead - settings.max_tokens - 32
    if budget < 64:
        raise InputError(
            "generate_themes settings",
            f"n_ctx={settings.n_ctx} leaves {budget} tokens for the text after the prompt "
            f"(~{overhead}) and the answer (max_tokens={settings.max_tokens})",
            "Raise n_ctx or lower max_tokens",
        )
    return budget


def _split_long(line: str, budget: int, cpt: float) -> list[str]:
    """Cut a line longer than the budget at sentence ends, else at spaces, else anywhere."""
    if approx_tokens(line, cpt) <= budget:
        return [line]
    max_chars = int(budget * cpt)
    parts: list[str] = []
    current = ""
    for piece in re.split(r"(?<=[.!?])\s+|\s+", line):
        while len(piece) > max_chars:  # a "word" longer than the budget
            if current:
                parts.append(current)
                current = ""
            parts.append(piece[:max_chars])
            piece = piece[max_chars:]
        joined = f"{current} {piece}" if current else piece
        if len(joined) <= max_chars:
            current = joined
        else:
            parts.append(current)
            current = piece
    if current:
        parts.append(current)
    return parts


def segment_lines(segments: pd.DataFrame) -> list[tuple[str, str]]:
    """(transcript, "Speaker: text") per segment, in transcript and segment order."""
    seg = segments.sort_values(["transcript", "segment"], kind="stable")
    out = []
    for transcript, speaker, text in zip(
        seg["transcript"], seg["speaker"], seg["text"], strict=True
    ):
        text = " ".join(str(text).split())
        if text:
            out.append((str(transcript), f"{speaker}: {text}" if speaker else text))
    return out


def chunk_transcripts(lines: list[tuple[str, str]], budget: int, chars_per_token: float):
    """Pack (transcript, line) pairs into texts of at most `budget` approximate tokens.

    Lines stay whole and in order unless one alone exceeds the budget; each chunk names the
    transcript its lines come from with a header line.
    """
    chunks: list[str] = []
    current: list[str] = []
    used, where = 0, None

    def size(s: str) -> int:
        return approx_tokens(s + "\n", chars_per_token)

    for transcript, line in lines:
        header = f"[Interview {transcript}]"
        header_cost = size(header) + 1  # + the blank line before a later header
        for piece in _split_long(line, budget - header_cost - 1, chars_per_token):
            need = size(piece) + (header_cost if transcript != where else 0)
            if current and used + need > budget:
                chunks.append("\n".join(current).strip())
                current, used, where = [], 0, None
                need = size(piece) + header_cost
            if transcript != where:
                current += ["", header] if current else [header]
                where = transcript
            current.append(piece)
            used += need
    if current:
        chunks.append("\n".join(current).strip())
    return chunks


def pack_lines(lines: list[str], budget: int, chars_per_token: float) -> list[list[str]]:
    """Consecutive groups of lines, each within the budget (a longer line goes alone)."""
    groups: list[list[str]] = []
    used = 0
    for line in lines:
        cost = approx_tokens(line + "\n", chars_per_token)
        if groups and used + cost <= budget:
            groups[-1].append(line)
            used += cost
        else:
            groups.append([line])
            used = cost
    return groups
