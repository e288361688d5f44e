"""The report as a Word document (python-docx): real headings, lists and tables, citations as
superscript numbers linked to the numbered sources, the evidence quotes in an appendix.

Word has no API for hyperlinks in python-docx, so links and bookmarks are the few lines of
WordprocessingML below (`w:hyperlink`, `w:bookmarkStart`); everything else is python-docx.
"""

from __future__ import annotations

import io

import docx
from docx.enum.text import WD_COLOR_INDEX
from docx.opc.constants import RELATIONSHIP_TYPE
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from docx.shared import Cm, Pt, RGBColor
from docx.text.paragraph import Paragraph as DocxParagraph

from deep_research.domain.language import is_cjk, words_for
from deep_research.export.document import (
    Block,
    Break,
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
    Styled,
    Table,
    Text,
    direction_of,
    plain,
)
from deep_research.export.html_page import clean

LINK_BLUE = RGBColor(0x0B, 0x5C, 0xAD)
FLAG_RED = RGBColor(0xB3, 0x26, 0x1E)
CJK_FONTS = {"zh-Hans": "Noto Sans CJK SC", "zh-Hant": "Noto Sans CJK TC", "ja": "Noto Sans CJK JP"}
EVIDENCE_COLUMNS = (Cm(1.4), Cm(6.4), Cm(2.6), Cm(6.6))
"""The evidence table's columns (source, statement, verdict, evidence) on an A4/Letter page's
16-17 cm of text: the number and the verdict are short, the statement and the quote are not."""


def _bookmark(paragraph: DocxParagraph, name: str, number: int) -> None:
    """A bookmark at the start of a paragraph, the target of internal links."""
    start, end = OxmlElement("w:bookmarkStart"), OxmlElement("w:bookmarkEnd")
    start.set(qn("w:id"), str(number))
    start.set(qn("w:name"), name)
    end.set(qn("w:id"), str(number))
    paragraph._p.insert(1 if paragraph._p.pPr is not None else 0, start)
    paragraph._p.append(end)


def _hyperlink(paragraph: DocxParagraph, text: str, *, url: str = "", anchor: str = ""):
    """A run of `text` linking to an external URL or an internal bookmark; returns its run."""
    link = OxmlElement("w:hyperlink")
    if url:
        link.set(qn("r:id"), paragraph.part.relate_to(url, RELATIONSHIP_TYPE.HYPERLINK, True))
    else:
        link.set(qn("w:anchor"), anchor)
    run = paragraph.add_run(clean(text))
    run.font.color.rgb = LINK_BLUE
    link.append(run._r)  # moves the run inside the link
    paragraph._p.append(link)
    return run


class _Writer:
    """Adds the blocks of one document to a python-docx Document."""

    def __init__(self, document: ReportDocument) -> None:
        self.source = document
        self.doc = docx.Document()
        self.rtl = document.direction == "rtl"
        style = self.doc.styles["Normal"]
        style.font.name = "Noto Sans" if not is_cjk(document.language) else None
        if is_cjk(document.language):
            fonts = style.element.get_or_add_rPr().get_or_add_rFonts()
            fonts.set(qn("w:eastAsia"), CJK_FONTS.get(document.language, "Noto Sans CJK KR"))

    def runs(self, paragraph: DocxParagraph, items: list[Inline], **fmt) -> None:
        for index, item in enumerate(items):
            if isinstance(item, Cite) and index and isinstance(items[index - 1], Cite):
                paragraph.add_run(",").font.superscript = True  # ²,³ rather than ²³
            if isinstance(item, Text):
                self._run(paragraph, item.text, **fmt)
            elif isinstance(item, Styled):
                key = {"strong": "bold", "em": "italic", "s": "strike"}[item.style]
                self.runs(paragraph, item.children, **{**fmt, key: True})
            elif isinstance(item, Code):
                self._run(paragraph, item.text, mono=True, **fmt)
            elif isinstance(item, Link):
                if item.href:
                    _hyperlink(paragraph, plain(item.children), url=item.href).underline = True
                else:
                    self.runs(paragraph, item.children, **fmt)
            elif isinstance(item, Cite):
                citation = item.citation
                if citation.source is None:
                    run = paragraph.add_run(f"[{citation.number}]")
                else:
                    run = _hyperlink(
                        paragraph, str(citation.number), anchor=f"src_{citation.number}"
                    )
                run.font.superscript = True
            elif isinstance(item, Flag):
                run = self._run(paragraph, f"⚠ {item.text}", bold=True)
                run.font.color.rgb = FLAG_RED
                run.font.highlight_color = WD_COLOR_INDEX.YELLOW
            elif isinstance(item, Break):
                paragraph.add_run().add_break()

    def _run(self, paragraph, text: str, *, mono=False, bold=False, italic=False, strike=False):
        run = paragraph.add_run(clean(text))
        run.bold, run.italic = bold or None, italic or None
        run.font.strike = strike or None
        if mono:
            run.font.name = "DejaVu Sans Mono"
        return run

    def paragraph(self, items: list[Inline], style: str | None = None, prefix: str = ""):
        paragraph = self.doc.add_paragraph(style=style)
        if prefix:
            paragraph.add_run(prefix)
        self.runs(paragraph, items)
        if direction_of(plain(items)) == "rtl":  # right-to-left paragraph and runs
            paragraph._p.get_or_add_pPr().append(OxmlElement("w:bidi"))
            for run in paragraph._p.iter(qn("w:r")):
                run.get_or_add_rPr().append(OxmlElement("w:rtl"))
        return paragraph

    def blocks(self, items: list[Block], depth: int = 0) -> None:
        for block in items:
            if isinstance(block, Heading):  # the title is Word's Title: `##` is Heading 1
                heading = self.doc.add_heading(level=max(1, min(block.level - 1, 4)))
                self.runs(heading, block.children)
            elif isinstance(block, Paragraph):
                self.paragraph(block.children)
            elif isinstance(block, ListBlock):
                self._list(block, depth)
            elif isinstance(block, Table):
                self._table(block)
            elif isinstance(block, CodeBlock):
                paragraph = self.doc.add_paragraph()
                for number, line in enumerate(block.text.rstrip("\n").split("\n")):
                    if number:
                        paragraph.add_run().add_break()
                    self._run(paragraph, line, mono=True)
            elif isinstance(block, Quote):
                for inner in block.blocks:
                    if isinstance(inner, Paragraph):
                        self.paragraph(inner.children, style="Quote")
                    else:
                        self.blocks([inner], depth)
            elif isinstance(block, Rule):
                self.doc.add_paragraph("―" * 12)

    def _list(self, block: ListBlock, depth: int) -> None:
        bullet = "List Bullet" if depth == 0 else f"List Bullet {min(depth + 1, 3)}"
        plain_style = "List" if depth == 0 else f"List {min(depth + 1, 3)}"
        for number, item in enumerate(block.items, block.start):
            first = True
            for inner in item:
                if isinstance(inner, Paragraph):
                    if block.ordered:  # numbers as text: Word's numbering runs on across lists
                        prefix = f"{number}. " if first else ""
                        self.paragraph(inner.children, style=plain_style, prefix=prefix)
                    else:
                        self.paragraph(inner.children, style=bullet if first else plain_style)
                    first = False
                else:
                    self.blocks([inner], depth + 1)

    def _table(self, block: Table) -> None:
        columns = max([len(block.head)] + [len(r) for r in block.rows])
        table = self.doc.add_table(rows=1 + len(block.rows), cols=columns)
        table.style = "Table Grid"
        for row_index, row in enumerate([block.head, *block.rows]):
            for column, cell in enumerate(row[:columns]):
                target = table.cell(row_index, column).paragraphs[0]
                self.runs(target, cell, bold=row_index == 0)

    def header(self) -> None:
        facts, words = self.source.facts, self.source.labels
        title = facts.question or self.source.title or words.report
        self.doc.core_properties.title = clean(title)[:255]
        self.doc.core_properties.author = "deep-research"
        self.doc.add_heading(level=0).add_run(clean(title))
        if self.source.title and facts.question:  # the report's own title, under the question
            self.doc.add_paragraph(clean(self.source.title), style="Subtitle")
        line = self.doc.add_paragraph()
        for number, (label, value) in enumerate(facts.rows(words)):
            run = line.add_run(f"{' · ' if number else ''}{label}: {value}")
            run.font.size = Pt(8.5)

    def sources(self) -> None:
        if not self.source.sources:  # as in the Markdown: none cited, no sources section
            return
        words = words_for(self.source.language)
        self.doc.add_heading(words.sources, level=1)
        for entry in self.source.sources:
            number = entry.source.number or entry.source.id
            paragraph = self.doc.add_paragraph(style="List")
            _bookmark(paragraph, f"src_{number}", number)
            paragraph.add_run(f"{number}. ").bold = True
            self._run(paragraph, entry.source.title or entry.source.url)
            paragraph.add_run(" — ")
            if entry.href:
                _hyperlink(paragraph, entry.source.url, url=entry.href).underline = True
            else:
                self._run(paragraph, entry.source.url)
            if entry.source.published:
                self._run(paragraph, f" ({entry.source.published})")

    def appendix(self) -> None:
        citations = [c for e in self.source.sources for c in e.citations]
        words = self.source.labels
        self.doc.add_heading(words_for(self.source.language).evidence, level=1)
        if not citations:
            self.doc.add_paragraph(words.none_checked)
            return
        table = self.doc.add_table(rows=1, cols=4)
        table.style = "Table Grid"
        table.autofit = False
        header = (words.source, words.statement, words.verdict, words.evidence)
        for cell, text in zip(table.rows[0].cells, header, strict=True):
            cell.paragraphs[0].add_run(text).bold = True
        for citation in citations:
            check = citation.check
            verdict = words.verdict_name(check.verdict if check else None)
            values = (
                f"[{citation.number}]",
                citation.statement,
                verdict + (f" ({words.method_name(check.method)})" if check else ""),
                check.evidence if check else "",
            )
            for cell, text in zip(table.add_row().cells, values, strict=True):
                self._run(cell.paragraphs[0], text)
        _widths(table, EVIDENCE_COLUMNS)


def _widths(table, widths) -> None:
    """Column widths Word and LibreOffice both keep: on the grid and on every cell."""
    for column, width in zip(table.columns, widths, strict=True):
        column.width = width
        for cell in column.cells:
            cell.width = width


def render_docx(document: ReportDocument) -> bytes:
    """The .docx file's bytes."""
    writer = _Writer(document)
    writer.header()
    writer.blocks(document.blocks)
    writer.sources()
    writer.appendix()
    buffer = io.BytesIO()
    writer.doc.save(buffer)
    return buffer.getvalue()
