"""Citation clean-up: a report may cite only registered sources, and link only URLs we saw.

Runs in `finalize`: ids that resolve to no source are dropped, links and bare URLs that no search
returned are removed (those that were returned become citations), a sources list the writer
wrote itself is replaced, and the Sources section lists exactly the sources the text cites.
"""

from __future__ import annotations

import re

from state import CitationCheck, Source
from tools.sources import normalize_url

_FULLWIDTH_CITATION = re.compile(r"【\s*(\d+(?:\s*[,，、]\s*\d+)*)\s*】")
_CITATION = re.compile(r"[ \t]?\[(\s*\d+(?:\s*[,，、;]\s*\d+)*\s*)\](?!\()")
_LINK = re.compile(
    r"\[([^\]\n]*)\]\(\s*([a-zA-Z][\w+.-]*://[^)\s]+|www\.[^)\s]+)(?:\s+\"[^\"]*\")?\s*\)"
)
_BARE_URL = re.compile(r"(?<![\w/.])(?:(?:https?|file)://|www\.)[^\s)\]>，。]+")
_EMPTY_BRACKETS = re.compile(r"[ \t]?(?:\(\s*\)|<\s*>)")
_CODE = re.compile(r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)|`[^`\n]+`", re.DOTALL)
SOURCES_HEADING = re.compile(
    r"^(#{1,6})\s*\**(sources|references|bibliography|works cited|参考来源|参考资料|参考文献|"
    r"来源|引用来源|资料来源)\**\s*:?\s*$",
    re.IGNORECASE | re.MULTILINE,
)
CJK_LETTERS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"  # kana, Han, Hangul
_CJK = re.compile(f"[{CJK_LETTERS}]")


def is_cjk(text: str) -> bool:
    """True when the text is written in Chinese, Japanese or Korean."""
    return len(_CJK.findall(text)) >= max(1, len(text.strip()) // 10)


def _drop_own_sources(report: str) -> str:
    """The report without a sources/references section the writer added itself."""
    matches = list(SOURCES_HEADING.finditer(report))
    if not matches:
        return report
    match = matches[-1]
    level = len(match.group(1))
    rest = report[match.end() :]
    next_heading = re.search(rf"^#{{1,{level}}}\s", rest, re.MULTILINE)
    tail = rest[next_heading.start() :] if next_heading else ""
    return report[: match.start()].rstrip() + ("\n\n" + tail if tail else "")


def clean_citations(report: str, sources: list[Source]) -> tuple[str, list[int]]:
    """The report citing only `sources`, and the ids it cites in order of first appearance."""
    by_url = {normalize_url(s.url): s.id for s in sources}
    known = {s.id for s in sources}

    def link(match: re.Match) -> str:
        source_id = by_url.get(normalize_url(match.group(2)))
        return f"{match.group(1)} [{source_id}]" if source_id else match.group(1)

    def bare(match: re.Match) -> str:
        source_id = by_url.get(normalize_url(match.group(0).rstrip(".,;:")))
        return f"[{source_id}]" if source_id else ""

    def citation(match: re.Match) -> str:
        ids = [int(n) for n in re.split(r"[,，、;]", match.group(1))]
        kept = list(dict.fromkeys(i for i in ids if i in known))
        lead = match.group(0)[: len(match.group(0)) - len(match.group(0).lstrip())]
        return lead + "".join(f"[{i}]" for i in kept) if kept else ""

    def prose(part: str) -> str:
        part = _FULLWIDTH_CITATION.sub(lambda m: f"[{m.group(1)}]", part)
        part = _LINK.sub(link, part)
        part = _EMPTY_BRACKETS.sub("", _BARE_URL.sub(bare, part))
        return _CITATION.sub(citation, part)

    text = _outside_code(_drop_own_sources(report), prose)
    cited_text = _CODE.sub("", text)
    cited = list(dict.fromkeys(int(n) for n in re.findall(r"\[(\d+)\]", cited_text)))
    return text.strip(), [i for i in cited if i in known]


def _outside_code(text: str, change) -> str:
    """`change` applied to the prose only: code blocks and inline code are left as they are."""
    parts, last = [], 0
    for match in _CODE.finditer(text):
        parts += [change(text[last : match.start()]), match.group(0)]
        last = match.end()
    return "".join([*parts, change(text[last:])])


def sources_section(sources: list[Source], question: str) -> str:
    """The Markdown list of cited sources, headed in the question's language."""
    heading = "## 参考来源" if is_cjk(question) else "## Sources"
    lines = [
        f"- [{s.id}] {s.title or s.url} — {s.url}" for s in sorted(sources, key=lambda s: s.id)
    ]
    return heading + "\n\n" + "\n".join(lines)


def _cell(text: str, limit: int) -> str:
    """Text safe inside a Markdown table cell."""
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def evidence_table(checks: list[CitationCheck], report: str) -> str:
    """Every checked citation as a Markdown table: statement, source, verdict, quoted evidence."""
    heading = "## 引用核查" if is_cjk(report) else "## Citation evidence"
    if not checks:
        return f"{heading}\n\n(no cited statements were checked)\n"
    rows = ["| statement | source | verdict | evidence |", "| --- | --- | --- | --- |"]
    rows += [
        f"| {_cell(c.statement, 160)} | [{c.source_id}] | {c.verdict} | {_cell(c.evidence, 200)} |"
        for c in checks
    ]
    return heading + "\n\n" + "\n".join(rows) + "\n"
