"""Prompt sizes: a conservative offline token estimate, and `assemble`, which builds every prompt
within a token budget.

No tokenizer is downloaded. Latin-script text is counted at 3 characters a token (English runs
near 4 with OpenAI's tokenizers, so this overestimates by about a third); each CJK character
counts 1.5 tokens (common tokenizers give 0.7-1.3). Overestimating is the safe side: a prompt we
think fits, fits.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from deep_research.domain.fences import data_section
from deep_research.domain.language import CJK_CHARACTERS, CJK_MARKS

# CJK letters, punctuation and full-width forms: each costs more than a Latin letter.
_CJK = re.compile(f"[{CJK_CHARACTERS}{CJK_MARKS}]")

CHARS_PER_TOKEN = 3
TOKENS_PER_CJK_CHAR = 1.5
REPLY_RESERVE = 4_096  # room left for the model's answer
FORMAT_RESERVE = 2_000  # room for the schema the prompt method adds to the system message
MESSAGE_OVERHEAD = 8  # per message: role and separators


def estimate_tokens(text: str) -> int:
    """An upper estimate of the tokens `text` takes."""
    cjk = len(_CJK.findall(text))
    return math.ceil((len(text) - cjk) / CHARS_PER_TOKEN + cjk * TOKENS_PER_CJK_CHAR)


def prompt_room(max_context_tokens: int, *fixed: str) -> int:
    """Tokens left for packed material once the reply, the format and the fixed text are counted.

    The reserves shrink with a small window (a local model's 8 k): a quarter for the reply, an
    eighth for the schema, at most `REPLY_RESERVE` and `FORMAT_RESERVE`.
    """
    used = sum(estimate_tokens(part) + MESSAGE_OVERHEAD for part in fixed)
    reserve = reply_reserve(max_context_tokens) + min(FORMAT_RESERVE, max_context_tokens // 8)
    return max(0, max_context_tokens - reserve - used)


def reply_reserve(max_context_tokens: int) -> int:
    """Room kept for the reply: a quarter of the window, at most `REPLY_RESERVE`."""
    return min(REPLY_RESERVE, max_context_tokens // 4)


def clip(text: str, limit: int) -> str:
    """The longest prefix of `text` within `limit` tokens, cut at a line or word when possible."""
    if estimate_tokens(text) <= limit:
        return text
    low, high = 0, len(text)
    while low < high:  # binary search on the prefix length; one token is kept for the " …"
        middle = (low + high + 1) // 2
        if estimate_tokens(text[:middle]) <= limit - 1:
            low = middle
        else:
            high = middle - 1
    cut = text[:low]
    for boundary in ("\n", " "):
        position = cut.rfind(boundary)
        if position > low * 0.8:
            return cut[:position] + " …"
    return cut[: max(0, low - 2)] + " …"


def pack(blocks: list[str], limit: int, separator: str = "\n\n") -> str:
    """Whole blocks in the order given (best first) within `limit` tokens: a block that does
    not fit is left out and the next ones are still tried."""
    chosen: list[str] = []
    used = 0
    for block in blocks:
        cost = estimate_tokens(block + separator)
        if used + cost > limit:
            continue
        chosen.append(block)
        used += cost
    return separator.join(chosen)


@dataclass(frozen=True)
class Material:
    """Text to pack into a prompt: blocks, best first, each cut to fit if it must.

    `share` is the part of the room still left when this section is reached; with `even`,
    every block gets an equal part of it before any gets more; `fenced` wraps the packed text
    as untrusted data (blocks that carry their own fences set it off).
    """

    blocks: Sequence[str]
    share: float = 1.0
    even: bool = False
    fenced: bool = True

    def fit(self, room: int) -> str:
        """As many blocks as fit in `room` tokens, each clipped to its part."""
        each = room // max(1, len(self.blocks)) if self.even else room
        return pack([clip(block, each) for block in self.blocks], room)


def assemble(
    limit: int | None, system: str, sections: Sequence[str | Material]
) -> list[BaseMessage]:
    """The system message and one user message: fixed text as is, materials in what is left.

    Every prompt is built here, so every prompt fits in `limit` tokens (None: nothing to pack),
    with room kept for the reply and for a schema the structured-output layer may add.
    """
    fixed = [section for section in sections if isinstance(section, str)]
    fences = sum(isinstance(s, Material) and s.fenced for s in sections)
    room = prompt_room(limit or 0, system, *fixed, data_section("") * fences)
    parts: list[str] = []
    for section in sections:
        if isinstance(section, str):
            parts.append(section)
            continue
        text = section.fit(int(room * section.share))
        room -= estimate_tokens(text)
        parts.append(data_section(text) if section.fenced else text)
    return [SystemMessage(system), HumanMessage("".join(parts))]
