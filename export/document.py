"""A finished report as one structure every format renders: blocks, inlines, citations, sources.

Built from markdown-it-py's tokens (raw HTML off: a report's `<script>` is text). Each `[n]` of
the report becomes a `Citation` that knows its source and the check that kept it (the verdict and
the evidence quote), found by the statement it belongs to (`domain.statements`). The report's own
sources section is left out: the sources come from the run's output, with their evidence.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

from markdown_it import MarkdownIt
from markdown_it.token import Token

from deep_research.domain.labels import Labels, labels_for
from deep_research.domain.language import WORDS, detect_language
from deep_research.domain.markup import MARKER_RUN, body_end, code_spans, ids_in
from deep_research.domain.statements import CitedStatement, cited_statements
from deep_research.export.facts import RunFacts
from deep_research.state import CitationCheck, Source

_PARSER = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
_CITE, _CITE_END, _FLAG, _FLAG_END = "\ue000", "\ue001", "\ue002", "\ue003"
_SENTINELS = re.compile(f"{_CITE}(-?\\d+):([\\d,]+){_CITE_END}|{_FLAG}(\\d+){_FLAG_END}")
_PRIVATE = re.compile("[\ue000-\ue003]")
FlagKind = Literal["unsupported", "unchecked"]
_MARKS: list[tuple[str, FlagKind]] = sorted(
    {
        **{w.unsupported.strip(): "unsupported" for w in WORDS.values()},
        **{w.unchecked.strip(): "unchecked" for w in WORDS.values()},
    }.items(),
    key=lambda mark: -len(mark[0]),
)
"""The marks the citation check appends, in every language (longest first)."""


def safe_href(url: str) -> str | None:
    """The URL when it is an http(s) link with a host, else None (never javascript:, data:...)."""
    url = url.strip()
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme.lower() in ("http", "https") and parts.netloc and not re.search(r"\s", url):
        return url
    return None


# ---------------------------------------------------------------- inline


@dataclass(frozen=True)
class Citation:
    """One `[n]` in the report: the source it names and the check that kept it (None: none)."""

    key: int  # 1..K in reading order: the anchor of this occurrence
    number: int  # the number the report cites the source by
    source: Source | None  # None: the number names no listed source (shown, never linked)
    check: CitationCheck | None
    statement: str = ""  # the cited statement, without markers


@dataclass(frozen=True)
class Text:
    """Plain text."""

    text: str


@dataclass(frozen=True)
class Styled:
    """Strong, emphasised or struck-through inlines."""

    style: Literal["strong", "em", "s"]
    children: list[Inline]


@dataclass(frozen=True)
class Code:
    """Inline code."""

    text: str


@dataclass(frozen=True)
class Link:
    """A link the report made (only http(s) targets are kept)."""

    href: str | None  # None: not an http(s) link, shown as text only
    children: list[Inline]


@dataclass(frozen=True)
class Cite:
    """One citation marker, resolved."""

    citation: Citation


@dataclass(frozen=True)
class Flag:
    """The mark the citation check put on a statement no source supports, or none checked."""

    kind: FlagKind
    text: str


@dataclass(frozen=True)
class Break:
    """A hard line break."""


Inline = Text | Styled | Code | Link | Cite | Flag | Break

# ---------------------------------------------------------------- blocks


@dataclass(frozen=True)
class Heading:
    """A heading, with the anchor the table of contents links to."""

    level: int
    children: list[Inline]
    anchor: str


@dataclass(frozen=True)
class Paragraph:
    """A paragraph (or a tight list item's text)."""

    children: list[Inline]


@dataclass(frozen=True)
class ListBlock:
    """A bullet or numbered list; each item is a list of blocks."""

    ordered: bool
    start: int
    items: list[list[Block]]


@dataclass(frozen=True)
class Table:
    """A table: its header cells, body rows and column alignment."""

    head: list[list[Inline]]
    rows: list[list[list[Inline]]]
    align: list[str]  # "", "left", "center", "right" per column


@dataclass(frozen=True)
class CodeBlock:
    """A fenced or indented code block."""

    text: str


@dataclass(frozen=True)
class Quote:
    """A block quote."""

    blocks: list[Block]


@dataclass(frozen=True)
class Rule:
    """A thematic break."""


Block = Heading | Paragraph | ListBlock | Table | CodeBlock | Quote | Rule


def read_when(source: Source | None) -> str:
    """When the text a source's citations rest on was read, as `2026-12-05 03:26 UTC`; "" when
    unknown (a search snippet, or a run that kept no evidence)."""
    fetched = source.fetched if source else ""
    return fetched.replace("T", " ")[:16] + " UTC" if len(fetched) >= 16 else ""


def plain(inlines: list[Inline]) -> str:
    """The text of inlines, without citations and marks."""
    out = []
    for item in inlines:
        if isinstance(item, Text | Code):
            out.append(item.text)
        elif isinstance(item, Styled | Link):
            out.append(plain(item.children))
        elif isinstance(item, Break):
            out.append(" ")
    return "".join(out)


def flagged(inlines: list[Inline]) -> FlagKind | None:
    """The kind of mark among inlines (unsupported wins), None when there is none."""
    kinds = {i.kind for i in inlines if isinstance(i, Flag)}
    kinds |= {k for i in inlines if isinstance(i, Styled | Link) if (k := flagged(i.children))}
    return "unsupported" if "unsupported" in kinds else next(iter(kinds), None)


# ---------------------------------------------------------------- the document


@dataclass
class SourceEntry:
    """A listed source and every citation of it in the report."""

    source: Source
    href: str | None
    citations: list[Citation] = field(default_factory=list)


@dataclass
class ReportDocument:
    """The report as blocks, its citations and sources, the run's facts, language, direction."""

    facts: RunFacts
    blocks: list[Block]
    citations: list[Citation]
    sources: list[SourceEntry]
    language: str
    direction: Literal["ltr", "rtl"]
    title: str = ""  # the report's own title, when it is not the question (shown under it)

    @property
    def labels(self) -> Labels:
        """The words the exports add around the report, in its language."""
        return labels_for(self.language)

    def headings(self) -> list[Heading]:
        """The headings of the body, for a table of contents."""
        return [b for b in self.blocks if isinstance(b, Heading)]


def direction_of(text: str) -> Literal["ltr", "rtl"]:
    """rtl when most strongly directional letters of `text` are right-to-left (Arabic, Hebrew)."""
    kinds = [unicodedata.bidirectional(c) for c in text if c.isalpha()]
    rtl = sum(k in ("R", "AL") for k in kinds)
    return "rtl" if rtl > len(kinds) - rtl else "ltr"


def _with_sentinels(body: str) -> tuple[str, list[CitedStatement]]:
    """The body with each marker run replaced by `\\ue000STATEMENT:IDS\\ue001` (STATEMENT: the
    index of the cited statement it closes, -1 for none) and each mark of the citation check by
    `\\ue002MARK\\ue003`: private-use characters that markdown-it leaves alone."""
    statements = cited_statements(body)
    code = code_spans(body)

    def owner(position: int) -> int:
        return next((i for i, s in enumerate(statements) if s.start <= position < s.end), -1)

    parts, last = [], 0
    for run in MARKER_RUN.finditer(body):
        if any(start <= run.start(2) < end for start, end in code):
            continue
        ids = ",".join(str(i) for i in ids_in(run.group(2)))
        parts += [body[last : run.start(2)], f"{_CITE}{owner(run.start(2))}:{ids}{_CITE_END}"]
        last = run.end()
    text = "".join([*parts, body[last:]])
    for index, (mark, _) in enumerate(_MARKS):
        text = text.replace(mark, f"{_FLAG}{index}{_FLAG_END}")
    return text, statements


class _Builder:
    """Turns markdown-it tokens into blocks, numbering citations as they come."""

    def __init__(
        self, statements: list[CitedStatement], sources: list[Source], checks: list[CitationCheck]
    ) -> None:
        self.statements = statements
        self.by_number = {s.number or s.id: s for s in sources}
        self.checks: dict[tuple[str, int], CitationCheck] = {}
        for check in checks:  # a later check of the same pair (a rewrite's) wins
            if check.method != "fallback" or (check.statement, check.source_id) not in self.checks:
                self.checks[(check.statement, check.source_id)] = check
        self.citations: list[Citation] = []
        self.headings = 0

    def _cite(self, statement_index: int, number: int) -> Cite:
        source = self.by_number.get(number)
        statement = self.statements[statement_index].text if statement_index >= 0 else ""
        check = self.checks.get((statement, source.id)) if source and statement else None
        citation = Citation(len(self.citations) + 1, number, source, check, statement)
        self.citations.append(citation)
        return Cite(citation)

    def _text(self, text: str) -> list[Inline]:
        out: list[Inline] = []
        last = 0
        for match in _SENTINELS.finditer(text):
            if match.start() > last:
                out.append(Text(text[last : match.start()]))
            if match.group(3):
                mark, kind = _MARKS[int(match.group(3))]
                out.append(Flag(kind, mark.strip("*").strip()))
            else:
                if out and isinstance(out[-1], Text):  # `xz [1]` reads `xz¹`
                    out[-1] = Text(out[-1].text.rstrip())
                for number in match.group(2).split(","):
                    out.append(self._cite(int(match.group(1)), int(number)))
            last = match.end()
        if last < len(text):
            out.append(Text(_PRIVATE.sub("", text[last:])))
        return out

    def inlines(self, tokens: list[Token]) -> list[Inline]:
        """Inline tokens (a paragraph's children) as inlines, nested by their open/close pairs."""
        stack: list[tuple[str, Any, list[Inline]]] = [("root", None, [])]
        for token in tokens:
            top = stack[-1][2]
            kind = token.type
            if kind == "text":
                top.extend(self._text(token.content))
            elif kind in ("softbreak",):
                top.append(Text(" "))
            elif kind == "hardbreak":
                top.append(Break())
            elif kind == "code_inline":
                top.append(Code(token.content))
            elif kind in ("strong_open", "em_open", "s_open"):
                stack.append((kind[:-5], None, []))
            elif kind == "link_open":
                stack.append(("link", safe_href(str(token.attrGet("href") or "")), []))
            elif kind in ("strong_close", "em_close", "s_close", "link_close"):
                style, href, children = stack.pop()
                node = Link(href, children) if style == "link" else Styled(style, children)
                stack[-1][2].append(node)
            elif kind == "image":  # never fetched at view time: its text, linked
                alt = self.inlines(token.children or []) or [Text("image")]
                stack[-1][2].append(Link(safe_href(str(token.attrGet("src") or "")), alt))
            else:
                top.append(Text(token.content))
        while len(stack) > 1:  # unbalanced: keep what was inside
            _, _, children = stack.pop()
            stack[-1][2].extend(children)
        return stack[0][2]

    def blocks(self, tokens: list[Token], start: int, end: int) -> list[Block]:
        """Block tokens tokens[start:end] as blocks."""
        out: list[Block] = []
        i = start
        while i < end:
            token = tokens[i]
            close = _closing(tokens, i) if token.nesting == 1 else i
            kind = token.type
            if kind == "heading_open":
                self.headings += 1
                children = self.inlines(tokens[i + 1].children or [])
                out.append(Heading(int(token.tag[1:]), children, f"sec-{self.headings}"))
            elif kind == "paragraph_open":
                out.append(Paragraph(self.inlines(tokens[i + 1].children or [])))
            elif kind in ("bullet_list_open", "ordered_list_open"):
                items = []
                j = i + 1
                while j < close:
                    item_close = _closing(tokens, j)
                    items.append(self.blocks(tokens, j + 1, item_close))
                    j = item_close + 1
                first = int(token.attrGet("start") or 1)
                out.append(ListBlock(kind == "ordered_list_open", first, items))
            elif kind == "blockquote_open":
                out.append(Quote(self.blocks(tokens, i + 1, close)))
            elif kind == "table_open":
                out.append(self._table(tokens, i, close))
            elif kind in ("fence", "code_block"):
                out.append(CodeBlock(_PRIVATE.sub("", token.content)))
            elif kind == "hr":
                out.append(Rule())
            elif kind == "inline":  # a tight list item's text
                out.append(Paragraph(self.inlines(token.children or [])))
            i = close + 1
        return out

    def _table(self, tokens: list[Token], start: int, end: int) -> Table:
        head: list[list[Inline]] = []
        rows: list[list[list[Inline]]] = []
        align: list[str] = []
        row: list[list[Inline]] = []
        in_head = False
        for i in range(start, end):
            token = tokens[i]
            if token.type == "thead_open":
                in_head = True
            elif token.type == "thead_close":
                in_head = False
            elif token.type == "tr_open":
                row = []
            elif token.type in ("th_open", "td_open"):
                style = str(token.attrGet("style") or "")
                if in_head:
                    align.append(style.removeprefix("text-align:"))
                row.append(self.inlines(tokens[i + 1].children or []))
            elif token.type == "tr_close":
                (head.extend if in_head else rows.append)(row)
        return Table(head, rows, align)


def _closing(tokens: list[Token], index: int) -> int:
    """The index of the token that closes tokens[index]."""
    depth = 0
    for j in range(index, len(tokens)):
        depth += tokens[j].nesting
        if depth == 0:
            return j
    return len(tokens) - 1


def build_document(
    output: dict[str, Any], facts: RunFacts, *, language: str | None = None
) -> ReportDocument:
    """The structure of a finished run's report (its `ResearchOutput`) with the run's facts."""
    report = _PRIVATE.sub("", output.get("report") or "")
    body = report[: body_end(report)].rstrip()
    text, statements = _with_sentinels(body)
    sources = sorted(output.get("sources") or [], key=lambda s: s.number or s.id)
    builder = _Builder(statements, sources, output.get("citations") or [])
    tokens = _PARSER.parse(text)
    blocks = builder.blocks(tokens, 0, len(tokens))
    blocks, title = _without_title(blocks, facts.question)
    entries = {s.id: SourceEntry(s, safe_href(s.url)) for s in sources}
    for citation in builder.citations:
        if citation.source is not None and citation.source.id in entries:
            entries[citation.source.id].citations.append(citation)
    return ReportDocument(
        facts=facts,
        blocks=blocks,
        citations=builder.citations,
        sources=list(entries.values()),
        language=language or facts.language or detect_language(body[:4000] or facts.question),
        direction=direction_of(body[:4000] or facts.question),
        title=title,
    )


def _without_title(blocks: list[Block], question: str) -> tuple[list[Block], str]:
    """The blocks without the report's own title, and that title ("" when it is the question,
    which the header shows): a leading `#` heading with none other at its level is the title,
    never an empty first section."""
    first = blocks[0] if blocks else None
    if not isinstance(first, Heading):
        return blocks, ""
    title = plain(first.children).strip()
    below = all(b.level > 1 for b in blocks[1:] if isinstance(b, Heading))
    if title != question.strip() and not (first.level == 1 and below):
        return blocks, ""
    return blocks[1:], "" if title == question.strip() else title
