"""Shorten a prompt the server rejected as too long, keeping its structure intact.

The packed material (search results, notes, a report under review) sits inside `<data>`
fences; cutting inside each fence keeps every label, instruction and closing tag. A prompt
with no fence has its longest message cut.
"""

from __future__ import annotations

import re

from langchain_core.messages import BaseMessage

from deep_research.domain.context import clip, estimate_tokens

SHRINK_TO = 0.6  # share of each fenced section kept
_FENCED = re.compile(r"(<data>\n)(.*?)(\n</data>)", re.S)


def _shrunk_text(text: str) -> str:
    """`text` with every fenced section cut to `SHRINK_TO` of its estimated tokens."""

    def cut(match: re.Match) -> str:
        """One fenced section, its body cut."""
        body = match.group(2)
        return match.group(1) + clip(body, int(estimate_tokens(body) * SHRINK_TO)) + match.group(3)

    return _FENCED.sub(cut, text)


def shrink(messages: list[BaseMessage]) -> list[BaseMessage]:
    """The conversation with its fenced material cut, or else its longest message."""
    shrunk = [m.model_copy(update={"content": _shrunk_text(m.text)}) for m in messages]
    if any(a.text != b.text for a, b in zip(shrunk, messages, strict=True)):
        return shrunk
    longest = max(range(len(messages)), key=lambda i: len(messages[i].text))
    text = messages[longest].text
    shrunk[longest] = messages[longest].model_copy(
        update={"content": clip(text, int(estimate_tokens(text) * SHRINK_TO))}
    )
    return shrunk
