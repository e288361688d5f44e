"""Citation clean-up: a report may cite only registered sources, and link only URLs we saw.

Runs in `finalize` (and before every check): ids that resolve to no source are dropped, links
and bare URLs that no search returned are removed (with link text that only said "source"),
those that were returned become citations, a sources list the writer wrote itself is replaced,
and the final report numbers its sources 1..N in order of first citation.
"""

from __future__ import annotations

import re

from deep_research.domain.addresses import keep_known_addresses
from deep_research.domain.labels import labels_for
from deep_research.domain.language import detect_language, words_for
from deep_research.domain.markup import (
    FULLWIDTH_MARKER,
    LINK,
    MARKER,
    code_spans,
    ids_in,
    markers,
    outside_code,
    rewrite_markers,
    sources_sections,
)
from deep_research.domain.plain_text import link_address, one_line
from deep_research.domain.sources import normalize_url
from deep_research.state import CitationCheck, Source

TITLE_CHARS = 200  # a source's title in the sources list, at most
_BARE_URL = re.compile(
    r"([ \t]*)(?<![\w/.])((?:(?:https?|file)://|www\.)[^\s)\]>，。]+)", re.IGNORECASE
)
_AUTOLINK = re.compile(r"<((?:https?|file)://[^\s<>]+)>", re.IGNORECASE)
_SPACED_MARKER = re.compile(rf"([ \t]*){MARKER.pattern}")
_EMPTY_BRACKETS = re.compile(r"[ \t]?(?:\(\s*\)|（\s*）|<\s*>|\[\s*\])")
_BRACKETED_MARKERS = re.compile(rf"[ \t]*[(（]\s*((?:{MARKER.pattern}\s*)+)[)）]")
# Link text that names no claim, only the link: dropped with a fabricated link.
_LINK_WORDS = re.compile(
    r"(?:source|sources|link|here|ref|reference|references|citation|cite|more|read more|"
    r"\d+|来源|來源|链接|鏈接|出处|出處|参考|參考|原文|出典|リンク|출처|링크|quelle|lien|fuente|"
    r"enlace|fonte|bron|источник|ссылка)",
    re.IGNORECASE,
)


def _drop_own_sources(report: str) -> str:
    """The report without the sources/references sections the writer added itself."""
    for start, end in reversed(sources_sections(report)):
        report = report[:start].rstrip() + ("\n\n" + report[end:] if report[end:] else "")
    return report


def clean_citations(report: str, sources: list[Source]) -> tuple[str, list[int]]:
    """The report citing only `sources`, and the ids it cites in order of first appearance."""
    by_url = {normalize_url(s.url): s.id for s in sources}
    known = {s.id for s in sources}

    def link(match: re.Match) -> str:
        lead, text = match.group(1), match.group(2).strip()
        source_id = by_url.get(normalize_url(match.group(3)))
        generic = not text or _LINK_WORDS.fullmatch(text)
        if source_id:
            return lead + (f"[{source_id}]" if generic else f"{text} [{source_id}]")
        return "" if generic else lead + text

    def bare(match: re.Match) -> str:
        url = match.group(2).rstrip(".,;:!?")
        tail = match.group(2)[len(url) :]  # the sentence's own punctuation
        source_id = by_url.get(normalize_url(url))
        return f"{match.group(1)}[{source_id}]{tail}" if source_id else tail

    def citation(match: re.Match) -> str:
        kept = [i for i in ids_in(match.group(0)) if i in known]
        return match.group(1) + markers(kept) if kept else ""

    def prose(part: str) -> str:
        part = FULLWIDTH_MARKER.sub(lambda m: f"[{m.group(1)}]", part)
        part = LINK.sub(link, _AUTOLINK.sub(r"\1", part))
        part = _BARE_URL.sub(bare, part)
        part = _SPACED_MARKER.sub(citation, part)
        part = _BRACKETED_MARKERS.sub(lambda m: " " + m.group(1).strip(), part)
        return _EMPTY_BRACKETS.sub("", part)

    text = keep_known_addresses(
        _drop_own_sources(report),
        [s.url for s in sources],
        label=lambda text: "" if _LINK_WORDS.fullmatch(text.strip()) else text,
    )
    text = outside_code(text, prose)
    return text.strip(), [i for i in cited_ids(text) if i in known]


def cited_ids(text: str) -> list[int]:
    """The ids that `text`'s markers cite outside code, in order of first citation."""
    spans, parts, last = code_spans(text), [], 0
    for start, end in spans:
        parts.append(text[last:start])
        last = end
    return ids_in(" ".join([*parts, text[last:]]))


def renumber(report: str, cited: list[int]) -> tuple[str, dict[int, int]]:
    """The report citing 1..N in order of first citation, and the map run-wide id -> number."""
    numbers = {source_id: n for n, source_id in enumerate(cited, 1)}
    text = rewrite_markers(report, lambda ids: sorted({numbers[i] for i in ids if i in numbers}))
    return text, numbers


def sources_section(sources: list[Source], language: str) -> str:
    """The Markdown list of cited sources by their number (with the date each was published
    or updated, when known), headed in the run's language."""
    lines = []
    for s in sorted(sources, key=lambda s: s.number or s.id):
        title = one_line(s.title, TITLE_CHARS)
        dated = f" ({one_line(s.published, 20)})" if s.published else ""
        lines.append(
            f"- [{s.number or s.id}] "
            + " — ".join(filter(None, [title, link_address(s.url)]))
            + dated
        )
    return f"## {words_for(language).sources}\n\n" + "\n".join(lines)


def evidence_table(
    checks: list[CitationCheck],
    report: str,
    sources: list[Source] | None = None,
    language: str | None = None,
) -> str:
    """Every checked citation as a Markdown table: statement, source, verdict, quoted evidence.

    The source column shows the number the report cites it by when `sources` gives it; the
    labels are in `language` (the run's), else in the report's.
    """
    language = language or detect_language(report[:2000])
    heading, words = "## " + words_for(language).evidence, labels_for(language)
    if not checks:
        return f"{heading}\n\n{words.none_checked}\n"
    numbers = {s.id: s.number or s.id for s in sources or []}
    columns = (words.statement, words.source, words.verdict, words.method, words.evidence)
    rows = ["| " + " | ".join(columns) + " |", "| --- | --- | --- | --- | --- |"]
    rows += [
        f"| {one_line(c.statement, 160)} | [{numbers.get(c.source_id, c.source_id)}] | "
        f"{words.verdict_name(c.verdict)}{f' ({words.rewrite})' if c.rewrite else ''} | "
        f"{words.method_name(c.method)} | {one_line(c.evidence, 200)} |"
        for c in checks
    ]
    return heading + "\n\n" + "\n".join(rows) + "\n"
