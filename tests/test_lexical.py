"""The lexical citation check: cited statements of a report, and what the cheap pass may settle."""

from __future__ import annotations

import pytest

from deep_research.domain.lexical import (
    best_quote,
    close_match,
    has_cue,
    lexical_verdict,
    support_score,
)
from deep_research.domain.statements import cited_statements

from citation_pairs import PAIRS, SOURCES


def statements(report):
    return [(s.text, s.source_ids) for s in cited_statements(report)]


@pytest.mark.parametrize(
    ("report", "expected"),
    [
        pytest.param(
            "Solar is cheap [1]. Wind is cheaper [2]! Is coal dead [3]? Nobody knows.",
            [("Solar is cheap.", (1,)), ("Wind is cheaper!", (2,)), ("Is coal dead?", (3,))],
            id="several-sentences",
        ),
        pytest.param(
            "- Prices fell [1]\n- Output rose [2]\n* Plain item\n1. Numbered item [3]",
            [("Prices fell", (1,)), ("Output rose", (2,)), ("Numbered item", (3,))],
            id="bullets",
        ),
        pytest.param(
            "- A long item\n  wrapped onto a second line [4]",
            [("A long item wrapped onto a second line", (4,))],
            id="wrapped-bullet",
        ),
        pytest.param(
            "| Model | Score |\n|---|:---:|\n| GPT | 3.5 [1] |\n| Other | n/a |",
            [("GPT | 3.5", (1,))],
            id="table-rows",
        ),
        pytest.param(
            "The model scored 3.5 points higher in 2024 [2]. It was cheap [3].",
            [("The model scored 3.5 points higher in 2024.", (2,)), ("It was cheap.", (3,))],
            id="decimal-not-split",
        ),
        pytest.param(
            "Tools, e.g. Copilot, help [1]. That is, i.e. Cursor, too [2]. Rust vs. Go [3].",
            [
                ("Tools, e.g. Copilot, help.", (1,)),
                ("That is, i.e. Cursor, too.", (2,)),
                ("Rust vs. Go.", (3,)),
            ],
            id="abbreviations-not-split",
        ),
        pytest.param(
            "Sales doubled. [3] Margins held. [4]\nThe end.",
            [("Sales doubled.", (3,)), ("Margins held.", (4,))],
            id="citations-after-period",
        ),
        pytest.param(
            "Both agree [2][5]. So do these [1, 4]. Repeats count once [1][1].",
            [("Both agree.", (2, 5)), ("So do these.", (1, 4)), ("Repeats count once.", (1,))],
            id="multiple-citations",
        ),
        pytest.param(
            "中国经济增长了5.2%[1]。出口下降[2][3]。没有引用的句子。",
            [("中国经济增长了5.2%。", (1,)), ("出口下降。", (2, 3))],
            id="chinese",
        ),
        pytest.param(
            "# Title [1]\n\nBody text [2].\n\n```\ncode line [3].\n```\n\n## Sources\n\n- [1] A",
            [("Body text.", (2,))],
            id="headings-code-sources-skipped",
        ),
        pytest.param(
            "正文内容[1]。\n\n## 参考来源\n\n- [1] 某网站 — https://x.org",
            [("正文内容。", (1,))],
            id="chinese-sources-skipped",
        ),
        pytest.param("No citations here. None at all.", [], id="uncited"),
    ],
)
def test_cited_statements(report, expected):
    assert statements(report) == expected


def test_offsets_cover_statement_and_markers():
    report = (
        "# Report\n\nIntro line. Prices rose 3.5% [1]. Costs fell. [2][3]\n\n"
        "- Item with **bold** [4]\n\n| A | B [5] |\n\n水价上涨[6]。"
    )
    found = cited_statements(report)
    assert [report[s.start : s.end] for s in found] == [
        "Prices rose 3.5% [1].",
        "Costs fell. [2][3]",
        "Item with **bold** [4]",
        "| A | B [5] |",
        "水价上涨[6]。",
    ]


PASSAGE = (
    "According to the 2024 industry survey, solar panel prices fell 12% as manufacturers "
    "expanded capacity. Wind installations were flat."
)


@pytest.mark.parametrize(
    ("statement", "passage", "low", "high"),
    [
        pytest.param(PASSAGE, PASSAGE, 0.99, 1.0, id="exact-copy"),
        pytest.param(
            "Prices of solar panels fell 12% in 2024, the industry survey says.",
            PASSAGE,
            0.9,
            1.0,
            id="paraphrase",
        ),
        pytest.param(
            "Dolphins communicate with whistles underwater.", PASSAGE, 0.0, 0.05, id="unrelated"
        ),
        pytest.param(
            "中国经济增长了5.2%。",
            "据统计，2023年中国经济增长了5.2%，高于预期。",
            0.99,
            1.0,
            id="chinese",
        ),
        pytest.param(
            "中国经济增长了5.2%。", "日本的出口大幅下降。", 0.0, 0.05, id="chinese-unrelated"
        ),
        pytest.param("Anything at all.", "", 0.0, 0.0, id="empty-passage"),
    ],
)
def test_support_score(statement, passage, low, high):
    assert low <= support_score(statement, passage) <= high


def test_changed_number_lowers_score_a_lot():
    right = support_score("Solar panel prices fell 12% in 2024.", PASSAGE)
    wrong = support_score("Solar panel prices fell 21% in 2024.", PASSAGE)
    assert right == pytest.approx(1.0)
    assert right - wrong >= 0.25


@pytest.mark.parametrize(
    ("statement", "passage"),
    [
        pytest.param(
            "xz is faster than zstd for log archives.",
            "zstd is faster than xz for log archives.",
            id="comparison-reversed",
        ),
        pytest.param(
            "Compression took 40 minutes, not 6 hours.",
            "Compression took 6 hours, not 40 minutes.",
            id="numbers-swapped-around-a-negation",
        ),
        pytest.param(
            "Use IPv6 only, not IPv4.", "Use IPv4 only, not IPv6.", id="negation-reversed"
        ),
        pytest.param(
            "zstd 的压缩速度比 xz 快得多，尤其在多线程模式下。",
            "Zstandard (zstd) compresses much faster than xz, particularly when multithreading "
            "is enabled.",
            id="translation",
        ),
        pytest.param(
            "zstd compresses logs well.",
            "It is a myth that zstd compresses logs well.",
            id="copied-words-under-a-denial",
        ),
        pytest.param(
            "zstd compresses logs well.",
            "zstd does not compress logs well.",
            id="negation-dropped",
        ),
        pytest.param(
            "The index rose 3.5 points in March.",
            "In March, the index rose 3.5 points.",
            id="reordered",
        ),
        pytest.param("Solar panel prices fell 21% in 2024.", PASSAGE, id="changed-number"),
        pytest.param(
            "Dolphins communicate with whistles underwater.", PASSAGE, id="unrelated-goes-to-model"
        ),
        pytest.param("It is.", PASSAGE, id="nothing-to-measure"),
        pytest.param(
            "zstd compresses logs well.", "Rarely, zstd compresses logs well.", id="leading-adverb"
        ),
        pytest.param(
            "zstd compresses logs well.", "zstd seldom compresses logs well.", id="inserted-adverb"
        ),
        pytest.param(
            "zstd يضغط السجلات جيدا.", "zstd لا يضغط السجلات جيدا.", id="script-without-cue-list"
        ),
        pytest.param(
            "2023年中国经济增长了5.2%。", "据报道，2023年中国经济增长了5.2%。", id="cjk-prefix"
        ),
        pytest.param(
            "2023年中国经济增长了5.2%。",
            "2023年中国经济增长了5.2%，高于预期。",
            id="cjk-comparison",
        ),
    ],
)
def test_anything_that_needs_judgement_goes_to_the_model(statement, passage):
    assert lexical_verdict(statement, passage) is None


@pytest.mark.parametrize(
    ("statement", "passage"),
    [
        pytest.param("Wind installations were flat.", PASSAGE, id="a-sentence-of-the-source"),
        pytest.param(
            "zstd level 19 compresses logs about 10x.",
            "zstd level 19 compresses logs about 10x in our benchmark of nginx logs.",
            id="leading-part-of-a-sentence",
        ),
        pytest.param(
            "The index rose 3.5 points in March.",
            "The index rose 3.5 points in March, the bureau said.",
            id="trailing-attribution",
        ),
        pytest.param(
            "Solar panel prices fell 12% in 2024.",
            "Solar panel prices fell 12 percent in 2024.",
            id="percent-spelled-out",
        ),
        pytest.param(
            "2023年中国经济增长了5.2%。", "2023年中国经济增长了5.2%，据国家统计局。", id="chinese"
        ),
        pytest.param(
            "Zstandard wurde 2016 von Facebook veröffentlicht.",
            "Zstandard wurde 2016 von Facebook veröffentlicht.",
            id="german",
        ),
    ],
)
def test_a_close_in_order_copy_is_supported_without_the_model(statement, passage):
    assert lexical_verdict(statement, passage) == "supported"
    assert close_match(statement, passage)


@pytest.mark.parametrize("passage", ["", "  \n", "— … —"])
def test_only_a_source_without_text_is_rejected_without_the_model(passage):
    assert lexical_verdict("Solar panel prices fell 12%.", passage) == "unsupported"


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: f"{p.language}-{p.kind}-{p.source}")
def test_the_lexical_pass_never_contradicts_the_truth(pair):
    verdict = lexical_verdict(pair.statement, SOURCES[pair.source])
    if pair.language != "en" or pair.kind not in ("copy", "wrong-source"):
        assert verdict is None or (verdict == "unsupported" and not SOURCES[pair.source])
    assert verdict in (None, "supported" if pair.true else "unsupported")


def test_english_copies_without_cues_are_settled_by_the_words():
    copies = [p for p in PAIRS if p.kind == "copy" and not has_cue(p.statement)]
    assert copies and all(lexical_verdict(p.statement, SOURCES[p.source]) for p in copies)


@pytest.mark.parametrize(
    "text",
    [
        "zstd is not faster.",
        "xz doesn't win.",
        "zstd is faster than xz.",
        "zstd ist nicht schneller.",
        "zstd n'est pas plus rapide.",
        "zstd no es más rápido.",
        "zstd 不比 xz 快。",
        "zstd は xz より速い。",
        "zstd는 xz보다 빠르다.",
        "zstd 的压缩率高于 xz。",
    ],
)
def test_negations_and_comparisons_are_recognised_in_every_language(text):
    assert has_cue(text)


def test_a_plain_statement_has_no_cue():
    assert not has_cue("Brotli was designed by Google for compressing web fonts.")


@pytest.mark.parametrize(
    ("statement", "passage", "quote"),
    [
        pytest.param(
            "Wind installations stayed flat.", PASSAGE, "Wind installations were flat.", id="second"
        ),
        pytest.param(
            "Revenue grew 12 percent.",
            "Hello there.\nIn 2023 revenue grew 12% to $5bn. Costs rose.",
            "In 2023 revenue grew 12% to $5bn.",
            id="line-and-sentence",
        ),
        pytest.param(
            "出口下降。", "经济增长了。出口下降了百分之三。", "出口下降了百分之三。", id="chinese"
        ),
        pytest.param("Dolphins whistle.", PASSAGE, "", id="no-match"),
        pytest.param("Anything.", "", "", id="empty"),
    ],
)
def test_best_quote(statement, passage, quote):
    assert best_quote(statement, passage) == quote


def test_best_quote_windows_long_sentences():
    filler = " ".join(f"word{i}" for i in range(200))
    passage = f"{filler} the reactor output reached 42% capacity in March {filler}."
    quote = best_quote("Reactor output reached 42% capacity.", passage, max_chars=120)
    assert len(quote) <= 120
    assert "reactor output reached 42% capacity" in quote
    assert not quote.startswith("ord")  # windows start on a word boundary


def test_a_citation_before_the_period_ends_the_sentence_even_before_a_lower_case_word() -> None:
    statements = cited_statements("zstd compresses logs 3.1x [1]. xz compresses logs 3.8x [2].")
    assert [(s.text, s.source_ids) for s in statements] == [
        ("zstd compresses logs 3.1x.", (1,)),
        ("xz compresses logs 3.8x.", (2,)),
    ]
