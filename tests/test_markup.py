"""The one home of citation syntax: markers, block spans from markdown-it-py, sources sections."""

from __future__ import annotations

import pytest

from deep_research.domain.markup import (
    blocks,
    body_end,
    code_spans,
    ids_in,
    markers,
    rewrite_markers,
    sources_sections,
    strip_markers,
)

REPORT = (
    "# Title [1]\n\n"
    "Para one [1]. Para two\ncontinues [2].\n\n"
    "- item a [3]\n  wrapped\n- item b\n\n"
    "> quoted [5]\n\n"
    "| a | b |\n|---|---|\n| x [6] | y |\n\n"
    "```\n## Sources\ncode [7]\n```\n\n"
    "## Sources\n\n- [1] A\n"
)


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("a [1] b [2][3]", [1, 2, 3]),
        ("a [1, 4] b [4，2] c [5、6] d [7; 8]", [1, 4, 2, 5, 6, 7, 8]),
        ("repeats [2][2] [2]", [2]),
        ("a link [1](https://x.org) is no citation", []),
        ("[ 3 ] spaced", [3]),
        ("no markers [x] [1a]", []),
    ],
)
def test_ids_in(text, ids):
    assert ids_in(text) == ids


def test_strip_and_write_markers():
    assert strip_markers("Costs fell [2][3]. Prices rose [1, 4].") == "Costs fell. Prices rose."
    assert markers([2, 5]) == "[2][5]"


def test_rewrite_markers_keeps_code_and_drops_empty_runs():
    text = "A [1][2]. B [3]. `x[3]` and\n\n```\ny[1]\n```\n"
    changed = rewrite_markers(text, lambda ids: [i * 10 for i in ids if i != 3])
    assert changed == "A [10][20]. B. `x[3]` and\n\n```\ny[1]\n```\n"


def test_blocks_have_the_spans_markdown_it_reports():
    found = [(b.kind, REPORT[b.start : b.end].strip()) for b in blocks(REPORT)]
    assert found == [
        ("heading", "# Title [1]"),
        ("paragraph", "Para one [1]. Para two\ncontinues [2]."),
        ("paragraph", "- item a [3]\n  wrapped"),
        ("paragraph", "- item b"),
        ("paragraph", "> quoted [5]"),
        ("table_row", "| a | b |"),
        ("table_row", "| x [6] | y |"),
        ("code", "```\n## Sources\ncode [7]\n```"),
        ("heading", "## Sources"),
        ("paragraph", "- [1] A"),
    ]


def test_a_sources_heading_inside_code_is_not_a_sources_section():
    ((start, end),) = sources_sections(REPORT)
    assert REPORT[start:end].startswith("## Sources\n\n- [1] A")
    assert body_end(REPORT) == start


def test_sources_sections_in_other_languages_end_at_the_next_heading():
    text = "正文[1]。\n\n## 参考来源\n\n- [1] x\n\n## 结论\n\n完。\n\n### **출처**\n\n- [2] y\n"
    spans = [text[s:e].split("\n")[0] for s, e in sources_sections(text)]
    assert spans == ["## 参考来源", "### **출처**"]
    assert "## 结论" not in text[slice(*sources_sections(text)[0])]


def test_code_spans_cover_blocks_and_inline_code():
    text = "a `b[1]` c\n\n    indented [2]\n\n~~~\nfenced [3]\n~~~\n"
    assert [text[s:e].strip() for s, e in code_spans(text)] == [
        "`b[1]`",
        "indented [2]",
        "~~~\nfenced [3]\n~~~",
    ]
