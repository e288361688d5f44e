"""The fence around untrusted text: what came from the web or from documents is data, never
instructions, and a page cannot close the fence early or open a fake one."""

from __future__ import annotations

import re

_FENCE_TAG = re.compile(r"<\s*(/?)\s*data\b[^>]*>", re.IGNORECASE)


def data_section(body: str) -> str:
    """Untrusted text, fenced so that the model can tell it from our instructions.

    Any `<data>`/`</data>` tag inside (any case or spacing) is defused, so the text cannot end
    the section early or open a fake one.
    """
    defused = _FENCE_TAG.sub(r"<\1 data>", body)
    return f"<data>\n{defused}\n</data>"


def without_fences(text: str) -> str:
    """A model's prose without any data-section tags it copied from its prompt."""
    return _FENCE_TAG.sub("", text).strip()
