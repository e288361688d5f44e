"""Exports speak the run's language and keep the report's own title out of its sections."""

from __future__ import annotations

import dataclasses
import io

import docx
import pytest
from bs4 import BeautifulSoup
from docx.shared import Cm

from deep_research.export.facts import facts_of
from deep_research.export.formats import Rendering
from deep_research.settings import Settings

from report_sample import QUESTION, sample_facts, sample_output


def rendered(output: dict, language: str) -> tuple[BeautifulSoup, docx.Document, str]:
    """HTML, Word and Markdown (with its evidence table) of a run made in `language`."""
    facts = dataclasses.replace(sample_facts(), language=language)
    rendering = Rendering(output, facts, evidence=True)
    page = BeautifulSoup(rendering.render("html"), "html.parser")
    word = docx.Document(io.BytesIO(rendering.render("docx")))
    return page, word, rendering.render("md").decode()


def header(page: BeautifulSoup) -> dict[str, str]:
    """The facts a page's header lists, by label."""
    labels, values = [d.get_text() for d in page("dt")], [d.get_text() for d in page("dd")]
    return dict(zip(labels, values, strict=True))


def word_text(document: docx.Document) -> str:
    cells = [c.text for t in document.tables for r in t.rows for c in r.cells]
    return "\n".join([p.text for p in document.paragraphs] + cells)


def test_a_german_run_is_exported_in_german():
    page, word, markdown = rendered(sample_output(), "de")
    assert page.html["lang"] == "de"
    assert page.select_one("nav.toc h2").get_text() == "Inhalt"
    assert page.select_one("nav.toc")["aria-label"] == "Inhalt"
    assert page.select_one("#sources h2").get_text() == "Quellen"
    labels = [d.get_text() for d in page.select("dt")]
    assert labels[:3] == ["Datum", "Modell", "Runden"] and "date" not in labels
    verdicts = {v.get_text() for v in page.select("ul.evidence .verdict")}
    assert verdicts <= {"belegt", "teilweise belegt", "nicht belegt", "nicht geprüft"}
    assert "belegt" in verdicts and "Geschrieben von deep-research" in page.footer.get_text()
    assert "supported" not in page.select_one("ul.evidence").get_text()
    text = word_text(word)
    assert "Quellen" in text and "Datum: " in text and "date: " not in text
    verdict_cells = [row.cells[2].text for row in word.tables[-1].rows]
    assert verdict_cells[0] == "Urteil" and "belegt (Modell)" in verdict_cells
    assert not any("supported" in cell for cell in verdict_cells)
    assert "| Aussage | Quelle | Urteil | Methode | Beleg |" in markdown


def test_a_simplified_chinese_run_is_never_labelled_traditional():
    output = sample_output()
    output["report"] = "# 问题\n\n## 壓縮\n\n壓縮日誌時，zstd 更快 [1]。\n"
    page, word, _ = rendered(output, "zh-Hans")
    assert page.html["lang"] == "zh-Hans"
    assert page.select_one("#sources h2").get_text() == "参考来源"
    assert "參考來源" not in str(page) and not page.select('[lang="zh-Hant"]')
    assert page.select_one("nav.toc h2").get_text() == "目录"
    assert "参考来源" in word_text(word) and "日期: " in word_text(word)


def test_the_run_language_comes_from_its_settings():
    values = {"question": "Wie schnell ist zstd?", "settings": Settings(language="zh-Hant")}
    assert facts_of(values).language == "zh-Hant"
    assert facts_of({"question": "Wie schnell ist zstd im Vergleich zu xz?"}).language == ""


def test_a_language_without_labels_falls_back_to_english():
    page, _, _ = rendered(sample_output(), "und")
    assert page.select_one("nav.toc h2").get_text() == "Contents"


@pytest.mark.parametrize("question", [QUESTION, "Another question, asked otherwise"])
def test_the_reports_own_title_is_no_empty_first_section(question):
    output = sample_output()
    output["report"] = output["report"].replace(f"# {QUESTION}", "# The report's own title", 1)
    facts = dataclasses.replace(sample_facts(), question=question)
    rendering = Rendering(output, facts)
    page = BeautifulSoup(rendering.render("html"), "html.parser")
    toc = [a.get_text() for a in page.select("nav.toc a")]
    assert "The report's own title" not in toc and toc[0] == "Summary"
    assert page.select_one("main").find(["h1", "h2"]).get_text() == "Summary"
    assert page.select_one("header .subtitle").get_text() == "The report's own title"
    document = docx.Document(io.BytesIO(rendering.render("docx")))
    headings = [p.text for p in document.paragraphs if p.style.name.startswith("Heading")]
    assert "The report's own title" not in headings and headings[0] == "Summary"
    subtitles = [p.text for p in document.paragraphs if p.style.name == "Subtitle"]
    assert subtitles == ["The report's own title"]


@pytest.mark.parametrize(
    ("report", "sections"),
    [
        ("# Part one\n\nText [1].\n\n# Part two\n\nMore [2].\n", ["Part one", "Part two"]),
        ("## Summary\n\nText [1].\n\n### Detail\n\nMore [2].\n", ["Summary", "Detail"]),
    ],
)
def test_a_report_whose_first_heading_is_a_section_keeps_it(report, sections):
    output = {**sample_output(), "report": report}
    page = BeautifulSoup(Rendering(output, sample_facts()).render("html"), "html.parser")
    assert [a.get_text() for a in page.select("nav.toc a")][:2] == sections
    assert page.select_one("header .subtitle") is None


def test_the_word_evidence_table_gives_statements_and_quotes_the_room():
    document = docx.Document(io.BytesIO(Rendering(sample_output(), sample_facts()).render("docx")))
    table = document.tables[-1]
    assert [c.text for c in table.rows[0].cells] == ["source", "statement", "verdict", "evidence"]
    widths = [table.rows[1].cells[n].width for n in range(4)]
    assert widths[0] < Cm(2) and widths[2] < Cm(3) and min(widths[1], widths[3]) > Cm(6)


def test_a_run_in_german_writes_german_files(chat_server, search_server, tmp_path, monkeypatch):
    """The whole way: `run --language de` to HTML and Word, then `export` of the same thread."""
    from deep_research.cli.main import main

    monkeypatch.setenv("DEEP_RESEARCH_CHECKPOINT_DB", str(tmp_path / "c.sqlite"))
    monkeypatch.chdir(tmp_path)
    args = ["run", "Compare zstd and xz", "--language", "de", "--max-iterations", "1"]
    assert main([*args, "--output", "r.html", "--thread-id", "de"]) == 0
    assert main(["export", "de", "--output", "e.html", "--output", "e.docx"]) == 0
    for name in ("r.html", "e.html"):
        page = BeautifulSoup((tmp_path / name).read_text(), "html.parser")
        assert page.html["lang"] == "de" and page.select_one("nav.toc h2").get_text() == "Inhalt"
        assert page.select_one("#sources h2").get_text() == "Quellen"
    assert "Quellen" in word_text(docx.Document(str(tmp_path / "e.docx")))


def test_the_header_says_why_a_run_stopped_in_words_of_its_language():
    page, word, _ = rendered(sample_output(), "zh-Hans")
    facts = header(page)
    assert facts["结束原因"] == "报告质量已足够" and "quality_threshold" not in str(page)
    assert "结束原因: 报告质量已足够" in word_text(word)


def test_every_stop_reason_has_words_in_every_language():
    from typing import get_args

    from deep_research.domain.labels import LABELS
    from deep_research.state import StopReason

    for language, words in LABELS.items():
        named = {reason: words.stop_reason_name(reason) for reason in get_args(StopReason)}
        assert all(text and text != reason for reason, text in named.items()), language
        assert len(set(named.values())) == len(named), language  # no two reasons read alike


def test_the_answers_given_before_research_are_in_the_header():
    from deep_research.state import Clarified

    values = {
        "question": "Is it worth switching?",
        "clarifications": [
            Clarified(question="Switching what?", answer="our database"),
            Clarified(question="By when?", answer=""),  # left open: not shown
        ],
    }
    facts = dataclasses.replace(sample_facts(), clarifications=facts_of(values).clarifications)
    page = BeautifulSoup(Rendering(sample_output(), facts).render("html"), "html.parser")
    shown = header(page)
    assert shown["clarified"] == "Switching what? our database"
    assert "clarified" not in [d.get_text() for d in rendered(sample_output(), "en")[0]("dt")]


def test_a_score_reads_the_same_in_every_door():
    from deep_research.cli.summary import score_text as summary_score
    from deep_research.domain.labels import score_text

    assert score_text(46.94) == "47/100" and score_text(None) == "unknown"
    assert summary_score is score_text  # the CLI's views, the exports and the web app share it
    facts = dataclasses.replace(sample_facts(), quality=46.94)
    assert ("quality", "47/100") in facts.rows()
