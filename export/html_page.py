"""The report as one self-contained HTML page: styles inline, no script, no network at view time.

Built as an element tree (lxml), so every piece of outside text (the report, titles, quotes,
URLs) goes in as text and is escaped on serialisation; only http(s) URLs become links. A
Content-Security-Policy that allows no script at all is a second wall. Every `[n]` links to the
evidence line of its citation inside its source's entry, and back; hovering or focusing it shows
the verdict and the quote the citation check kept.
"""

from __future__ import annotations

import re
from importlib.resources import files
from typing import Any

from lxml import html as lxml_html
from lxml.builder import ElementMaker
from lxml.html import html_parser

from deep_research.domain.labels import ENGLISH, Labels, labels_for
from deep_research.domain.language import CJK_CHARACTERS, detect_language, is_cjk, words_for
from deep_research.export.document import (
    Block,
    Break,
    Citation,
    Cite,
    Code,
    CodeBlock,
    Flag,
    Heading,
    Inline,
    Link,
    ListBlock,
    Paragraph,
    Quote,
    ReportDocument,
    Rule,
    SourceEntry,
    Styled,
    Table,
    Text,
    flagged,
    plain,
    read_when,
)

_E = ElementMaker(makeelement=html_parser.makeelement)
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")
CJK = re.compile(f"[{CJK_CHARACTERS}]")
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'"


def clean(text: str) -> str:
    """Text an HTML (and XML) tree can hold: control characters and lone surrogates removed."""
    return _CONTROL.sub("", text)


def el(tag: str, attrs: dict[str, str | None] | None = None, *children: Any):
    """An element; string children become escaped text, None attributes are left out."""
    given = {k: clean(v) for k, v in (attrs or {}).items() if v is not None}
    kids = [clean(c) if isinstance(c, str) else c for c in children if c is not None]
    return _E(tag, given, *kids)


def verdict_of(citation: Citation) -> str:
    """supported, partial or unchecked: how the check left a citation (a CSS class too)."""
    return citation.check.verdict if citation.check else "unchecked"


def _tip(citation: Citation, words: Labels):
    check, source = citation.check, citation.source
    label = words.verdict_name(check.verdict if check else None)
    title = (source.title or source.url) if source else f"source {citation.number}"
    parts = [el("span", {"class": "verdict"}, label), " · ", el("bdi", {}, title)]
    if check and check.evidence:
        parts.append(el("q", {"dir": "auto"}, check.evidence))
    return el("span", {"class": "tip", "role": "tooltip", "id": f"tip-{citation.key}"}, *parts)


def _cite(citation: Citation, words: Labels):
    if citation.source is None:  # names no listed source: shown, never linked
        return el("sup", {"class": "cite"}, f"[{citation.number}]")
    link = el(
        "a",
        {
            "id": f"cite-{citation.key}",
            "href": f"#ev-{citation.key}",
            "class": verdict_of(citation),
            "aria-describedby": f"tip-{citation.key}",
        },
        str(citation.number),
    )
    return el("sup", {"class": "cite"}, link, _tip(citation, words))


def inlines(items: list[Inline], words: Labels = ENGLISH) -> list:
    """Inline nodes as HTML children (strings and elements); `words`: the page's labels."""
    out: list = []
    for item in items:
        if isinstance(item, Text):
            out.append(item.text)
        elif isinstance(item, Styled):
            out.append(el(item.style, {}, *inlines(item.children, words)))
        elif isinstance(item, Code):
            out.append(el("code", {}, item.text))
        elif isinstance(item, Link):
            attrs = {"href": item.href, "rel": "noopener noreferrer nofollow"} if item.href else {}
            out.append(el("a" if item.href else "span", attrs, *inlines(item.children, words)))
        elif isinstance(item, Cite):
            out.append(_cite(item.citation, words))
        elif isinstance(item, Flag):
            out.append(el("mark", {"class": f"flag {item.kind}"}, f"⚠ {item.text}"))
        elif isinstance(item, Break):
            out.append(el("br"))
    return out


def _flag_class(items: list[Inline]) -> str | None:
    kind = flagged(items)
    return f"flagged {kind}" if kind else None


def own_language(items: list[Inline], page: str) -> str | None:
    """A paragraph's language when it is Chinese, Japanese or Korean and the page's is not
    (so the browser picks the right glyphs), else None."""
    text = plain(items)
    if not CJK.search(text):
        return None
    language = detect_language(text)
    if page.startswith("zh") and language.startswith("zh"):  # the run's script decides
        return None
    return language if is_cjk(language) and language != page else None


def blocks(items: list[Block], page: str = "") -> list:
    """Blocks as HTML elements (`page`: the page's language, whose labels they use)."""
    words = labels_for(page)
    out = []
    for block in items:
        if isinstance(block, Heading):
            tag = f"h{min(block.level + 1, 6)}" if block.level == 1 else f"h{block.level}"
            out.append(
                el(tag, {"id": block.anchor, "dir": "auto"}, *inlines(block.children, words))
            )
        elif isinstance(block, Paragraph):
            attrs = {
                "dir": "auto",
                "class": _flag_class(block.children),
                "lang": own_language(block.children, page),
            }
            out.append(el("p", attrs, *inlines(block.children, words)))
        elif isinstance(block, ListBlock):
            start = str(block.start) if block.ordered and block.start != 1 else None
            lis = []
            for item in block.items:
                kind = next((flagged(b.children) for b in item if isinstance(b, Paragraph)), None)
                attrs = {"dir": "auto", "class": f"flagged {kind}" if kind else None}
                lis.append(el("li", attrs, *blocks(item, page)))
            out.append(el("ol" if block.ordered else "ul", {"start": start}, *lis))
        elif isinstance(block, Table):
            out.append(_table(block, words))
        elif isinstance(block, CodeBlock):
            out.append(el("pre", {"dir": "ltr"}, el("code", {}, block.text)))
        elif isinstance(block, Quote):
            out.append(el("blockquote", {}, *blocks(block.blocks, page)))
        elif isinstance(block, Rule):
            out.append(el("hr"))
    return out


def _table(table: Table, words: Labels):
    def align(column: int) -> str | None:
        value = table.align[column] if column < len(table.align) else ""
        return f"text-align:{value}" if value in ("left", "center", "right") else None

    head = el(
        "thead",
        {},
        el(
            "tr",
            {},
            *(
                el("th", {"dir": "auto", "style": align(n)}, *inlines(c, words))
                for n, c in enumerate(table.head)
            ),
        ),
    )
    rows = []
    for row in table.rows:
        kind = next((k for cell in row if (k := flagged(cell))), None)
        cells = (
            el("td", {"dir": "auto", "style": align(n)}, *inlines(c, words))
            for n, c in enumerate(row)
        )
        rows.append(el("tr", {"class": f"flagged {kind}" if kind else None}, *cells))
    return el("div", {"class": "table"}, el("table", {}, head, el("tbody", {}, *rows)))


def facts_list(document: ReportDocument):
    """The run's facts (date, model, rounds, why it stopped, ...) as a definition list."""
    rows = [
        el("div", {}, el("dt", {}, label), el("dd", {"dir": "auto"}, value))
        for label, value in document.facts.rows(document.labels)
    ]
    return el("dl", {"class": "facts"}, *rows)


def sources_section(document: ReportDocument):
    """The numbered sources, each with the evidence lines its citations link to."""
    return el(
        "section",
        {"class": "sources", "id": "sources", "aria-labelledby": "sources-heading"},
        el("h2", {"id": "sources-heading"}, words_for(document.language).sources),
        el("ol", {}, *(_source(e, document.labels) for e in document.sources)),
    )


def _contents(document: ReportDocument):
    entries = [
        el(
            "li",
            {"class": f"level-{min(h.level, 3)}", "dir": "auto"},
            el("a", {"href": f"#{h.anchor}"}, plain(h.children)),
        )
        for h in document.headings()
        if h.level <= 3
    ]
    if document.sources:  # as in the Markdown: no sources cited, no sources section
        sources = words_for(document.language).sources
        entries.append(el("li", {"class": "level-2"}, el("a", {"href": "#sources"}, sources)))
    contents = document.labels.contents
    return el(
        "nav",
        {"class": "toc", "aria-label": contents},
        el("h2", {}, contents),
        el("ul", {}, *entries),
    )


def _evidence_line(citation: Citation, words: Labels):
    check = citation.check
    label = words.verdict_name(check.verdict if check else None)
    back = {"class": "back", "href": f"#cite-{citation.key}", "aria-label": words.back}
    parts = [el("a", back, "↩"), el("span", {"class": "verdict"}, label)]
    if check:
        rewrite = f", {words.rewrite}" if check.rewrite else ""
        parts.append(f" ({words.method_name(check.method)}{rewrite})")
    if check and check.evidence:
        parts += [" ", el("q", {"dir": "auto"}, check.evidence)]
    parts += _read(citation, words)
    if citation.statement:
        parts += [" — ", el("span", {"class": "statement", "dir": "auto"}, citation.statement)]
    attrs = {"id": f"ev-{citation.key}", "class": verdict_of(citation)}
    return el("li", attrs, *parts)


def _read(citation: Citation, words: Labels) -> list:
    """When the source's text was read and its hash, as the run kept it (none when unknown)."""
    source, parts = citation.source, []
    if when := read_when(source):
        parts.append(el("span", {"class": "read"}, f" · {words.read_at} {when}"))
    if source and source.sha256:
        parts += [
            el("span", {"class": "read"}, " · SHA-256 "),
            el("code", {"class": "sha256"}, source.sha256),
        ]
    return parts


def _source(entry: SourceEntry, words: Labels):
    source = entry.source
    number = source.number or source.id
    title = el("bdi", {"class": "title"}, source.title or source.url)
    url = (
        el(
            "a",
            {"class": "url", "href": entry.href, "rel": "noopener noreferrer nofollow"},
            source.url,
        )
        if entry.href
        else el("span", {"class": "url"}, source.url)
    )
    dated = (
        el("span", {"class": "published"}, f" ({source.published})") if source.published else None
    )
    lines = (_evidence_line(c, words) for c in entry.citations)
    evidence = el("ul", {"class": "evidence"}, *lines)
    attrs = {"id": f"src-{number}", "value": str(number), "class": "source"}
    return el("li", attrs, title, el("br"), url, dated, evidence if entry.citations else None)


def render_html(document: ReportDocument, css: str | None = None) -> str:
    """The whole page as a string (UTF-8 when written)."""
    style = css if css is not None else stylesheet()
    facts, words = document.facts, document.labels
    title = facts.question or document.title or words.report
    head = el(
        "head",
        {},
        el("meta", {"charset": "utf-8"}),
        el("meta", {"name": "viewport", "content": "width=device-width, initial-scale=1"}),
        el("meta", {"http-equiv": "Content-Security-Policy", "content": CSP}),
        el("meta", {"name": "generator", "content": "deep-research"}),
        el("title", {}, title),
        el("style", {}, style),
    )
    header = el(
        "header",
        {"class": "run"},
        el("h1", {"dir": "auto"}, title),
        el("p", {"class": "subtitle", "dir": "auto"}, document.title)
        if document.title and facts.question
        else None,
        facts_list(document),
    )
    footer = el("footer", {}, words.footer)
    body = el(
        "body",
        {},
        header,
        _contents(document),
        el("main", {}, *blocks(document.blocks, document.language)),
        footer,
    )
    if document.sources:  # as in the Markdown: no sources cited, no sources section
        footer.addprevious(sources_section(document))
    page = el("html", {"lang": document.language, "dir": document.direction}, head, body)
    return lxml_html.tostring(page, doctype="<!DOCTYPE html>", encoding="unicode", method="html")


def stylesheet() -> str:
    """The page's CSS, shipped with the package."""
    return files(__package__).joinpath("report.css").read_text(encoding="utf-8")
