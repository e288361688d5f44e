"""Keep API keys out of everything a run writes: errors quoted into state, logs and reports."""

from __future__ import annotations

import os

SECRET_VARIABLES = (
    "OPENAI_API_KEY",
    "TAVILY_API_KEY",
    "BOCHA_API_KEY",
    "DEEP_RESEARCH_JUDGE_API_KEY",
)
MIN_SECRET_LENGTH = 8  # shorter values are placeholders, and masking them would garble text


def redact(text: str) -> str:
    """The text with the value of every key variable replaced by `***`."""
    for name in SECRET_VARIABLES:
        value = os.environ.get(name, "").strip()
        if len(value) >= MIN_SECRET_LENGTH:
            text = text.replace(value, "***")
    return text
