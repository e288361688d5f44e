"""The source registry and the citation clean-up that `finalize` applies."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from deep_research.domain.citations import clean_citations, renumber, sources_section
from deep_research.domain.sources import SourceRegistry
from deep_research.state import Finding, Quote, Source, SourceEvidence, WorkerResult


def result(subtask_id, urls, round_=1, cites=None):
    sources = [SourceEvidence(id=n, url=u, title=f"T{u[-1]}") for n, u in enumerate(urls, 1)]
    findings = [Finding(claim=f"c{i}", source_ids=[i]) for i in (cites or range(1, len(urls) + 1))]
    return WorkerResult(subtask_id=subtask_id, round=round_, sources=sources, findings=findings)


def test_ids_are_stable_whatever_order_workers_finish_in():
    a = result(1, ["https://x.org/1", "https://x.org/2"])
    b = result(2, ["https://x.org/2/", "https://x.org/3"])  # same page as a's second
    late = result(3, ["https://x.org/4"], round_=2)
    for order in ([a, b, late], [late, b, a]):
        registry = SourceRegistry(order)
        assert [(s.id, s.url) for s in registry.sources] == [
            (1, "https://x.org/1"),
            (2, "https://x.org/2"),
            (3, "https://x.org/3"),
            (4, "https://x.org/4"),
        ]
    by_subtask = {r.subtask_id: r for r in registry.results}
    assert [f.source_ids for f in by_subtask[2].findings] == [[2], [3]]


def test_quotes_get_run_wide_ids_and_a_read_page_leads_with_its_words():
    a = result(1, ["https://x.org/1", "https://x.org/2"])
    read = SourceEvidence(id=1, url="https://x.org/2", excerpt="Zstd level 19 wins.", read=True)
    quotes = [
        Quote(source_id=1, text="Zstd level 19 wins.", claim="zstd wins"),
        Quote(source_id=9, text="from no source"),
    ]
    b = WorkerResult(subtask_id=2, sources=[read], quotes=quotes)
    registry = SourceRegistry([b, a])
    assert registry.quotes() == [Quote(source_id=2, text="Zstd level 19 wins.", claim="zstd wins")]
    assert registry.quotes(1) == []
    page = registry.sources[1]
    assert page.read and page.excerpt.startswith("Zstd level 19 wins.")


def test_a_quote_is_one_object_and_still_checked():
    """A run holds hundreds of quotes: each is a slotted object (a model instance was three: it,
    its field dict, its set of fields given), validated as the model was."""
    quote = Quote(source_id=1, text="Zstd level 19 wins.", claim="zstd wins")
    assert not hasattr(quote, "__dict__") and not hasattr(quote, "__pydantic_fields_set__")
    with pytest.raises(ValidationError):
        Quote(source_id=1, text="")
    with pytest.raises(ValidationError):
        Quote(source_id="one", text="words")
    held = WorkerResult(subtask_id=1, quotes=[quote])
    assert held.model_dump()["quotes"] == [
        {"source_id": 1, "text": "Zstd level 19 wins.", "claim": "zstd wins"}
    ]
    assert WorkerResult.model_validate_json(held.model_dump_json()) == held


def test_findings_lose_ids_the_worker_never_had():
    registry = SourceRegistry([result(1, ["https://x.org/1"], cites=[1, 7])])
    assert [f.source_ids for f in registry.results[0].findings] == [[1], []]


def test_from_round_gives_only_new_sources():
    registry = SourceRegistry(
        [
            result(1, ["https://x.org/1"]),
            result(2, ["https://x.org/1", "https://x.org/9"], round_=2),
        ]
    )
    results, fresh = registry.from_round(2)
    assert [r.subtask_id for r in results] == [2]
    assert [s.id for s in fresh] == [2]


SOURCES = [
    Source(id=1, url="https://a.org/x", title="A"),
    Source(id=2, url="https://b.org", title="B"),
]


def test_unknown_citations_and_unseen_urls_are_removed():
    report = (
        "Fact one [1]. Fact two [2, 7]. Made up [9]. Full width【2】and［1，2］.\n"
        "A [manual](https://a.org/x/) and a [fake manual](https://evil.example/p).\n"
        "Bare https://b.org and bare https://nowhere.example/q.\n"
    )
    text, cited = clean_citations(report, SOURCES)
    assert "[9]" not in text and "[7]" not in text
    assert "evil.example" not in text and "nowhere.example" not in text
    assert "Fact two [2]." in text
    assert "Made up." in text
    assert "Full width[2]and[1][2]." in text
    assert "A manual [1] and a fake manual." in text
    assert "bare." in text  # the sentence keeps its period when its URL goes
    assert "Bare [2]" in text
    assert cited == [1, 2]


def test_the_writers_own_sources_list_is_replaced():
    report = "# R\n\nClaim [1].\n\n## References\n\n1. https://invented.example\n[9] Fake"
    text, cited = clean_citations(report, SOURCES)
    assert "References" not in text and "invented" not in text
    assert cited == [1]


def test_a_section_after_the_writers_sources_list_is_kept():
    report = "Claim [2].\n\n## Sources\n- [2] B\n\n## Conclusion\nDone [1]."
    text, cited = clean_citations(report, SOURCES)
    assert "## Conclusion" in text and "## Sources" not in text
    assert cited == [2, 1]


def test_sources_section_lists_exactly_the_cited_in_the_runs_language():
    english = sources_section([SOURCES[1], SOURCES[0]], "en")
    assert english.splitlines()[0] == "## Sources"
    assert english.index("[1] A") < english.index("[2] B")
    assert sources_section(SOURCES[:1], "zh-Hans").startswith("## 参考来源")
    assert sources_section(SOURCES[:1], "ja").startswith("## 出典")
    assert sources_section(SOURCES[:1], "de").startswith("## Quellen")


def test_a_sources_section_lists_sources_by_their_number_in_the_report():
    numbered = [s.model_copy(update={"number": 2 - i}) for i, s in enumerate(SOURCES)]
    section = sources_section(numbered, "en")
    assert section.index("- [1] B — https://b.org") < section.index("- [2] A — https://a.org/x")


def test_fabricated_links_leave_no_debris():
    report = (
        "zstd is fast ([source](https://fake.example/a)). xz is slow [link](https://fake.example/b)."
        " 实测更快（[来源](https://fake.example/c)）。Real ([source](https://a.org/x))."
    )
    text, cited = clean_citations(report, SOURCES)
    assert text == "zstd is fast. xz is slow. 实测更快。Real [1]."
    assert cited == [1]


def test_renumbering_follows_the_order_of_first_citation():
    text, numbers = renumber("B first [7]. Then A [3][7]. `code [3]` stays. A again [3].", [7, 3])
    assert numbers == {7: 1, 3: 2}
    assert text == "B first [1]. Then A [1][2]. `code [3]` stays. A again [2]."


def test_a_page_two_workers_found_keeps_both_excerpts():
    first = WorkerResult(
        subtask_id=1,
        sources=[
            SourceEvidence(id=1, url="https://x.org/bench", excerpt="zstd -19 compresses 10x")
        ],
    )
    second = WorkerResult(
        subtask_id=2,
        sources=[
            SourceEvidence(
                id=1, url="https://x.org/bench/", excerpt="xz -9 decompresses at 80 MB/s"
            )
        ],
    )
    registry = SourceRegistry([second, first])
    assert len(registry.sources) == 1
    assert "10x" in registry.sources[0].excerpt and "80 MB/s" in registry.sources[0].excerpt
    _, fresh = registry.from_round(1)
    assert "80 MB/s" in fresh[0].excerpt


def test_links_in_every_form_that_no_search_returned_are_removed():
    report = (
        "See (https://evil.example/x) and <https://evil.example/y> and "
        '[docs](https://evil.example/p "title") and www.evil.example/z. '
        'Real [one](https://a.org/x "t").'
    )
    text, cited = clean_citations(report, SOURCES)
    assert "evil" not in text
    assert "Real one [1]." in text and cited == [1]


def test_a_citation_at_the_start_of_a_line_keeps_the_line_break():
    text, _ = clean_citations("## Results\n[7] was wrong.\n[1] is right.", SOURCES)
    assert text.splitlines()[0] == "## Results"  # the heading is not glued to the next line
    assert text.splitlines()[1].strip() == "was wrong."


def test_code_is_left_alone():
    report = "Use `counts[2]` here [1].\n\n```python\nx = counts[0] + counts[2]\n```\n"
    text, cited = clean_citations(report, SOURCES)
    assert "`counts[2]`" in text and "x = counts[0] + counts[2]" in text
    assert cited == [1]
