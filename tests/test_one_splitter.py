"""One splitter for a report's statements: the citation check, its rewrites and the exports read
the same statements, so every citation the check kept shows its evidence quote in the export,
also where a paragraph holds several lines without a full stop."""

from __future__ import annotations

import asyncio

import pytest
from bench_scripts import bench_script

from deep_research.domain.statements import cited_statements, closed_like


def statements(report: str) -> list[tuple[str, tuple[int, ...]]]:
    return [(s.text, s.source_ids) for s in cited_statements(f"# T\n\n{report}\n")]


@pytest.mark.parametrize(
    ("report", "expected"),
    [
        (  # several lines, each citing its own source, no full stop: one statement a line
            "zstd decompresses at 1 GB/s [1]\nxz compresses smaller [2]\nboth are packaged [1][2]",
            [
                ("zstd decompresses at 1 GB/s", (1,)),
                ("xz compresses smaller", (2,)),
                ("both are packaged", (1, 2)),
            ],
        ),
        (  # a line break inside a sentence, with no citation before it, breaks nothing
            "zstd decompresses at 1 GB/s\nand xz compresses smaller [1].",
            [("zstd decompresses at 1 GB/s and xz compresses smaller.", (1,))],
        ),
        (  # a mark of the check closes its statement: the next one starts after it
            "xz needs no memory. *(not supported by the sources found)* xz -9 needs 674 MiB [4].",
            [("xz -9 needs 674 MiB.", (4,))],
        ),
        (
            "xz 不需要内存。（未经来源证实）xz -9 需要 674 MiB [4]。",
            [("xz -9 需要 674 MiB。", (4,))],
        ),
        (
            "a claim *(citation could not be checked)*\nzstd is fast [1]",
            [("zstd is fast", (1,))],
        ),
        (  # what held before: abbreviations, a period after a citation, CJK
            "Compare e.g. zstd vs. xz [1]. It is fast [2]. 更快 [3]。更小 [4]。",
            [
                ("Compare e.g. zstd vs. xz.", (1,)),
                ("It is fast.", (2,)),
                ("更快。", (3,)),
                ("更小。", (4,)),
            ],
        ),
    ],
    ids=["lines", "soft-break", "mark", "mark-cjk", "mark-then-line", "as-before"],
)
def test_the_statements_of_a_paragraph(report, expected):
    assert statements(report) == expected


@pytest.mark.parametrize(
    ("original", "rewrite", "placed"),
    [
        (
            "Both are installed everywhere [3].",
            "Debian packages both [3]",
            "Debian packages both [3].",
        ),
        ("xz 不需要内存 [4]。", "xz -9 需要 674 MiB [4]", "xz -9 需要 674 MiB [4]。"),
        ("A line of a list [1]", "A rewritten line [1]", "A rewritten line [1]"),
        ("A line of a list [1]", "A [1]. Then uncited words", "A [1]. Then uncited words."),
        ("Already closed [1]!", "Closed too [1].", "Closed too [1]."),
    ],
)
def test_a_rewrite_ends_a_statement_where_the_original_did(original, rewrite, placed):
    assert closed_like(original, rewrite) == placed


def test_every_citation_the_check_kept_shows_its_quote_in_the_export():
    """The benchmark's report: lines without a full stop, a rewrite of several sentences, one
    without its full stop in mid-paragraph, statements marked in mid-paragraph, Chinese."""
    cited, shown, rewrites = asyncio.run(bench_script("bench_quotes_shown").measure())
    assert rewrites >= 3 and cited >= 15
    assert shown == cited
