"""A report a reader can stop reading early (issue 36, item 7): one title from the question, a
summary whose every sentence is cited, no section the citation check emptied, headings that nest
in every export format."""

from __future__ import annotations

import io
import itertools
import re

import pytest

from deep_research.domain.language import words_for
from deep_research.domain.report_frame import (
    cited_only,
    nested_headings,
    report_title,
    without_empty_sections,
)
from deep_research.export.document import build_document
from deep_research.export.facts import RunFacts
from deep_research.export.html_page import render_html
from deep_research.state import Source

MARKS = (words_for("en").unsupported, words_for("en").unchecked)


def test_the_title_is_the_question_on_one_line_cut_at_a_word():
    assert report_title("  Compare zstd\nand xz  ") == "Compare zstd and xz"
    long = "word " * 80
    title = report_title(long)
    assert len(title) <= 200 and title.endswith("word…")
    assert report_title("如何比较 zstd 和 xz？") == "如何比较 zstd 和 xz？"


def test_the_summary_keeps_only_its_cited_sentences():
    summary = (
        "## Summary\n\nThe zstd tool decompresses faster [1]. Both are widely used. "
        "The xz tool compresses smaller [2].\n\nIn short, it depends."
    )
    assert cited_only(summary) == (
        "## Summary\n\nThe zstd tool decompresses faster [1]. The xz tool compresses smaller [2]."
    )
    assert cited_only("## Summary\n\nNothing cited here.") == ""
    chinese = "## 摘要\n\nzstd 解压更快 [1]。两者都常用。"
    assert cited_only(chinese) == "## 摘要\n\nzstd 解压更快 [1]。"


def test_a_section_left_with_only_marked_statements_is_removed():
    report = (
        "# Q\n\n## Summary\n\nzstd is fast [1].\n\n"
        f"## Licences\n\nBoth are free software.{MARKS[0]} xz is public domain.{MARKS[0]}\n\n"
        "## Speed\n\nzstd decompresses at 1,500 MB/s [1].\n\n"
        "## Empty\n\n"
        "## Conclusion\n\nChoose by what matters.\n"
    )
    framed = without_empty_sections(report, MARKS)
    assert "## Licences" not in framed and "## Empty" not in framed
    assert "## Speed" in framed and "## Conclusion\n\nChoose by what matters." in framed
    assert framed.startswith("# Q\n\n## Summary")


def test_a_parent_whose_subsections_all_emptied_goes_too_and_code_counts_as_content():
    report = (
        f"# Q\n\n## Parent\n\n### Child\n\nOnly this.{MARKS[1]}\n\n"
        "## Code\n\n```\nzstd -19\n```\n\n"
        f"## Mixed\n\n### Gone\n\nNo.{MARKS[1]}\n\n### Kept\n\nxz is slow [2].\n"
    )
    framed = without_empty_sections(report, MARKS)
    assert "## Parent" not in framed and "### Child" not in framed
    assert "## Code" in framed and "### Gone" not in framed and "### Kept" in framed
    assert "## Mixed" in framed


def test_a_section_of_a_table_html_or_a_rule_is_not_empty():
    """Seen in real Markdown (Node's API docs): a section whose one block is an HTML table."""
    report = (
        "# Q\n\n## Constants\n\n<table>\n<tr><td>E2BIG</td></tr>\n</table>\n\n"
        "## Rates\n\n| tool | MB/s |\n|---|---|\n| zstd | 1500 [1] |\n\n## Rule\n\n---\n\n"
        "## Alias\n\n## Empty list\n\n- \n"
    )
    framed = without_empty_sections(report, MARKS)
    assert "## Constants" in framed and "## Rates" in framed and "## Rule" in framed
    assert "## Alias" not in framed and "## Empty list" not in framed


@pytest.mark.parametrize(
    ("report", "levels"),
    [
        ("# T\n\n## A\n\n# B\n\n## C\n", [1, 2, 2, 2]),  # a second title becomes a section
        ("# T\n\n## A\n\n#### deep\n\n## B\n", [1, 2, 3, 2]),  # no level skipped
        ("# T\n\nB\n-\n\ntext\n", [1, 2]),  # a setext heading becomes an ATX one
        ("# T\n\n### A\n", [1, 2]),
    ],
)
def test_headings_nest_under_one_title(report, levels):
    nested = nested_headings(report)
    found = [len(m.group(1)) for m in re.finditer(r"^(#+) ", nested, re.M)]
    assert found == levels


def test_a_heading_in_code_is_left_alone():
    report = "# T\n\n```\n# not a heading\n```\n\n#### A\n"
    assert nested_headings(report) == "# T\n\n```\n# not a heading\n```\n\n## A\n"


REPORT = (
    "# Compare zstd and xz\n\n## Summary\n\nzstd is fast [1].\n\n## Speed\n\n"
    "zstd decompresses at 1,500 MB/s [1].\n\n### Threads\n\nxz is single-threaded [2].\n\n"
    "## Sources\n\n- [1] A\n- [2] B\n"
)
SOURCES = [
    Source(id=1, number=1, url="https://a.example/z", title="zstd manual", published="2024-05-02"),
    Source(id=2, number=2, url="https://b.example/x", title="xz manual"),
]


def _document():
    facts = RunFacts("Compare zstd and xz", None, "m", 1, "no_gaps", None, 80, 1.0)
    return build_document({"report": REPORT, "sources": SOURCES, "citations": []}, facts)


def test_html_headings_nest_and_sources_carry_their_dates():
    page = render_html(_document())
    levels = [int(n) for n in re.findall(r"<h([1-6])", page)]
    assert levels[0] == 1 and all(b - a <= 1 for a, b in itertools.pairwise(levels))
    assert "(2024-05-02)" in page


def test_word_headings_nest_under_the_title_and_sources_carry_their_dates():
    docx = pytest.importorskip("docx")
    from deep_research.export.word import render_docx

    document = docx.Document(io.BytesIO(render_docx(_document())))
    styles = [p.style.name for p in document.paragraphs if p.style.name.startswith(("Head", "Ti"))]
    assert styles[0] == "Title"
    levels = [int(s.split()[-1]) for s in styles[1:]]
    assert levels[0] == 1 and all(b - a <= 1 for a, b in itertools.pairwise(levels))
    assert any("(2024-05-02)" in p.text for p in document.paragraphs)
