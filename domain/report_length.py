"""How long a report is: sections and words from the `report_length` setting and the evidence.

The setting names a target (brief / standard / long, or words) for the first draft; the
evidence can only lower it: a section gets words for the sources it draws on, never padding. A
later round's revision keeps what a section says and adds room for each source it gains, so
that no finding is cut to fit the first draft's share. The writer's reply cap is set per
section from its words, under the `writer_max_tokens` setting.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from deep_research.domain.language import CJK_CHARACTERS
from deep_research.settings import ReportLength

NAMED_WORDS: dict[str, int] = {"brief": 600, "standard": 1_500, "long": 4_000}
"""The target in words of each named length."""
WORDS_PER_SECTION = 500  # a named target is split into sections of about this many words
MAX_SECTIONS = 12
WORDS_PER_SOURCE = 180  # what one source can carry in a section, at most
SECTION_BASE_WORDS = 120  # a section's framing (its opening and closing sentences)
TOKENS_PER_WORD = 2.0  # generous: citations, Markdown, tables, CJK text
TOKEN_MARGIN = 300  # room for the heading and a sentence past the target


@dataclass(frozen=True)
class LengthPlan:
    """What the outline and the section writers are asked for."""

    target_words: int
    min_sections: int
    max_sections: int


def length_plan(setting: ReportLength | int, sources: int) -> LengthPlan:
    """Sections for a target, at most one per two sources (at least one section)."""
    words = NAMED_WORDS[setting] if isinstance(setting, str) else setting
    most = max(2, min(MAX_SECTIONS, round(words / WORDS_PER_SECTION)))
    most = max(1, min(most, math.ceil(sources / 2)))
    return LengthPlan(target_words=words, min_sections=max(1, most - 2), max_sections=most)


def section_words(plan: LengthPlan, sections: int, sources: int) -> int:
    """Words one section is asked for: its share of the target, within what its sources carry."""
    share = plan.target_words // max(1, sections)
    return max(80, min(share, SECTION_BASE_WORDS + WORDS_PER_SOURCE * max(1, sources)))


def section_tokens(words: int, writer_max_tokens: int) -> int:
    """The reply cap of one section's call: its words with room to finish, under the setting."""
    return min(writer_max_tokens, math.ceil(words * TOKENS_PER_WORD) + TOKEN_MARGIN)


def text_words(text: str) -> int:
    """Words in `text`, a CJK character counting as one (as a Chinese word count does)."""
    cjk = len(re.findall(f"[{CJK_CHARACTERS}]", text))
    return cjk + len(re.sub(f"[{CJK_CHARACTERS}]", " ", text).split())


def revision_words(current: str, added_sources: int) -> int:
    """Words a revised section is asked for: what it already says, plus what each source it
    gains can carry (a later round's findings are never cut to fit the first draft's share)."""
    return text_words(current) + WORDS_PER_SOURCE * max(0, added_sources)
