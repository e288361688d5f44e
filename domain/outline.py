"""A report's outline and sections, without I/O: outlines made safe, evidence placed, text put
together.

The writer plans sections (`ReportOutline`); this module keeps each section to registered
sources, gives evidence the outline left out to the section it fits best, places a gap round's
new results in the sections they touch (or new ones), and composes the report.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from deep_research.domain.lexical import support_score
from deep_research.domain.markup import ids_in, markers, strip_markers
from deep_research.domain.plain_text import one_line
from deep_research.state import (
    Conflict,
    OutlineSection,
    Quote,
    ReportOutline,
    ReportSection,
    WorkerResult,
)

TITLE_CHARS = 160  # a heading made from a subtask's description, at most
MIN_FIT = 0.25  # a new result belongs to an existing section above this overlap
HEADING_IN_TASK = 0.5  # ... or when most of a section's heading is in the result's task


def cited_ids(result: WorkerResult) -> list[int]:
    """The source ids a result's findings cite, in first-cited order."""
    seen: dict[int, None] = {}
    for finding in result.findings:
        seen.update(dict.fromkeys(finding.source_ids))
    return list(seen)


def section_of(result: WorkerResult) -> OutlineSection:
    """A section made from one worker's result: its subtask as the question."""
    title = one_line(result.description or "Findings", TITLE_CHARS)
    return OutlineSection(
        title=title, question=result.description or title, source_ids=cited_ids(result)
    )


def fallback_outline(question: str, results: list[WorkerResult]) -> ReportOutline:
    """The outline used when the writer gave none: one section per worker that found something."""
    sections = [section_of(r) for r in results if r.status != "failed" and cited_ids(r)]
    if not sections:
        sections = [
            OutlineSection(title=one_line(question, TITLE_CHARS), question=question, source_ids=[])
        ]
    return ReportOutline(sections=sections)


def _best_section(text: str, sections: list[OutlineSection]) -> tuple[int, float]:
    """The section whose heading and question share most of `text`'s content, and by how much."""
    scores = [support_score(text, f"{s.title} {s.question}") for s in sections]
    best = max(range(len(sections)), key=lambda i: scores[i])
    return best, scores[best]


def shaped_outline(
    question: str,
    outline: ReportOutline,
    results: list[WorkerResult],
    known: set[int],
    max_sections: int,
    evidence: Mapping[int, str] | None = None,
) -> ReportOutline:
    """The outline made safe: registered ids only, sections with evidence only, at most
    `max_sections`; a finding whose sources no section took goes to the section it fits best,
    and so does a source with evidence (`evidence`: its text by id) that no finding cites."""
    sections: list[OutlineSection] = []
    for section in outline.sections:
        ids = list(dict.fromkeys(i for i in section.source_ids if i in known))
        if ids and len(sections) < max_sections:
            sections.append(section.model_copy(update={"source_ids": ids}))
    if not sections:
        return fallback_outline(question, results)
    loose: list[tuple[str, list[int]]] = []
    for result in results:
        for finding in result.findings:
            loose.append((finding.claim, finding.source_ids))
    loose += [(text, [i]) for i, text in (evidence or {}).items() if i in known]
    for text, source_ids in loose:
        taken = {i for s in sections for i in s.source_ids}
        left = [i for i in source_ids if i not in taken]
        if left:
            index, _ = _best_section(text, sections)
            ids = sections[index].source_ids + left
            sections[index] = sections[index].model_copy(update={"source_ids": ids})
    return outline.model_copy(update={"sections": sections})


def fitting(sections: Sequence[OutlineSection], quote: Quote) -> int:
    """The section a piece of evidence belongs to: one that draws on its source, else the one
    whose heading and question share most of its words."""
    for index, section in enumerate(sections):
        if quote.source_id in section.source_ids:
            return index
    return _best_section(quote.text, list(sections))[0]


def holding(sections: Sequence[ReportSection], statement: str) -> int | None:
    """The section whose text holds `statement` (whitespace and citations aside), or the one
    that shares most of its words above `MIN_FIT`; None when none does."""
    wanted = " ".join(strip_markers(statement).split())
    for index, section in enumerate(sections):
        if wanted and wanted in " ".join(strip_markers(section.text).split()):
            return index
    if not sections:
        return None
    scores = [support_score(statement, section.text) for section in sections]
    best = max(range(len(sections)), key=lambda i: scores[i])
    return best if scores[best] >= MIN_FIT else None


_FIGURE = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")


def gives_a_side(conflict: Conflict, text: str) -> bool:
    """True when a section's text cites a side of a disagreement and writes a figure only that
    side gives (so it may state that side as settled)."""
    cited = set(ids_in(text))
    written = set(_FIGURE.findall(strip_markers(text)))
    figures = [set(_FIGURE.findall(q.text)) for q in conflict.quotes]
    for quote, own in zip(conflict.quotes, figures, strict=True):
        others = set().union(*(f for f in figures if f is not own))
        if quote.source_id in cited and (own - others) & written:
            return True
    return False


def stated(conflict: Conflict, text: str) -> bool:
    """True when a section's text cites every side of a disagreement (what stating it needs)."""
    return {q.source_id for q in conflict.quotes} <= set(ids_in(text))


def placed(
    sections: list[ReportSection], results: list[WorkerResult]
) -> tuple[dict[int, list[int]], list[OutlineSection]]:
    """Where a gap round's results go: new source ids per existing section index (the sections
    they touch), and new sections for results that fit none."""
    touched: dict[int, list[int]] = {}
    new: list[OutlineSection] = []
    for result in results:
        ids = cited_ids(result)
        if result.status == "failed" or not ids:
            continue
        text = " ".join([result.description, *(f.claim for f in result.findings)])
        index, fit = _best_section(text, sections) if sections else (0, 0.0)
        named = [support_score(f"{s.title} {s.question}", result.description) for s in sections]
        if named and max(named) >= HEADING_IN_TASK and fit < MIN_FIT:
            index, fit = named.index(max(named)), max(named)  # the task names that section
        if sections and fit >= MIN_FIT:
            touched[index] = list(dict.fromkeys(touched.get(index, []) + ids))
        else:
            new.append(section_of(result))
    return touched, new


def heading_of(text: str) -> str | None:
    """The words of the level-2 heading a section's text starts with (None without one)."""
    first = text.strip().split("\n", 1)[0]
    found = re.match(r"#{1,2}\s+(.+)", first)  # a level-1 heading is made level 2
    return (one_line(found[1].strip(" #"), TITLE_CHARS) or None) if found else None


def with_heading(text: str, title: str) -> str:
    """A section's text that starts with its level-2 heading (added when the writer left it out;
    a level-1 heading becomes level 2: the report has one title)."""
    body = text.strip()
    if body.startswith("# "):
        body = "#" + body
    return body if body.startswith("#") else f"## {title}\n\n{body}"


def notes_section(section: OutlineSection, results: list[WorkerResult]) -> str:
    """A section's findings as cited bullet points, for when its writer's reply was unusable."""
    ids = set(section.source_ids)
    lines = [
        f"- {f.claim} {markers([i for i in f.source_ids if i in ids])}"
        for r in results
        for f in r.findings
        if ids & set(f.source_ids)
    ]
    return f"## {section.title}\n\n" + "\n".join(lines)


def compose(title: str, summary: str, sections: list[ReportSection], conclusion: str) -> str:
    """The report: its title, the summary, the sections in order, and the conclusion."""
    parts = [f"# {title}", summary.strip(), *(s.text.strip() for s in sections), conclusion.strip()]
    return "\n\n".join(part for part in parts if part)
