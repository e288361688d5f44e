"""The run page as the server renders it (what a browser without script gets, and what each
streamed update swaps in): while the run goes on, each worker with the page it reads and the
sources found so far; once it has finished, the report itself with its sources."""

from __future__ import annotations

from bs4 import BeautifulSoup

from deep_research.export.formats import Rendering
from deep_research.tools.events import (
    EarlierReportKept,
    FoundSource,
    PlanMade,
    WorkerDone,
    WorkerReading,
    WorkerSearched,
)
from deep_research.web.pages import run_page
from deep_research.web.view import RunView, fold_event

from report_sample import HOSTILE_TITLE, sample_facts, sample_output

WORKER = {"description": "zstd levels", "queries_used": 1, "max_queries": 3}
WORKER |= {"cycles_used": 1, "max_cycles": 2, "round": 1}


def live_view() -> RunView:
    view = RunView("web-1", question="Compare zstd and xz", status="running")
    plan = [{"id": 1, "description": "zstd levels", "complexity": "simple"}]
    plan.append({"id": 2, "description": "xz memory", "complexity": "medium"})
    fold_event(view, PlanMade(query_type="breadth_first", subtasks=plan))
    fold_event(view, WorkerSearched(subtask_id=2, **{**WORKER, "description": "xz memory"}))
    fold_event(view, WorkerReading(**WORKER, subtask_id=1, url="https://a.example/z", title="Z"))
    fold_event(view, WorkerReading(**WORKER, subtask_id=1, url="https://a.example/x", title=""))
    found = [FoundSource(url="https://b.example/1", title=HOSTILE_TITLE)]
    found.append(FoundSource(url="javascript:alert(1)", title="a trap"))
    done = WorkerDone(subtask_id=2, **{**WORKER, "description": "xz memory"}, status="ok",
                      findings=2, sources=2, found=found)  # fmt: skip
    fold_event(view, done)
    return view


def soup(text: str) -> BeautifulSoup:
    return BeautifulSoup(text, "html.parser")


def test_a_live_run_leads_with_its_plan_then_what_each_worker_reads_now():
    page = soup(run_page(live_view(), "en", "token"))
    headings = [h.get_text() for h in page.select("#progress h2")]
    assert headings[:3] == ["Plan", "Workers", "Sources found so far (2)"]
    first, second = page.select("ol.workers > li")
    assert "reading a page" in first.get_text()
    link = first.select_one("p.reading a")
    assert link["href"] == "https://a.example/x" and link.get_text() == "https://a.example/x"
    assert "done" in second.get_text() and second.select_one("p.reading") is None
    found = page.select("ol.found li")
    assert found[0].a["href"] == "https://b.example/1" and found[0].get_text() == HOSTILE_TITLE
    assert found[1].a is None and found[1].get_text() == "a trap"  # no javascript: link
    assert page.select("script[src]") and not page.select("main script, img")
    assert page.select_one('noscript meta[http-equiv="refresh"]')  # no script: it reloads


def test_a_live_run_in_chinese():
    page = soup(run_page(live_view(), "zh", "token"))
    assert "正在阅读：" in page.select_one("p.reading").get_text()
    assert page.select("#progress h2")[2].get_text() == "目前找到的来源 (2)"


def finished(kept: EarlierReportKept | None = None) -> RunView:
    view = live_view()
    view.status, view.stop_reason, view.iteration = "done", "max_iterations", 2
    view.kept = kept
    view.rendering = Rendering(sample_output(), sample_facts())
    return view


def test_a_finished_run_shows_its_report_with_sources_and_the_follow_up_box():
    page = soup(run_page(finished(), "en", "token"))
    article = page.select_one("#progress article.report")
    assert article.select_one("h2.report-title")
    assert article.select_one("p.round-line").get_text() == "The report of round 2 of 2."
    assert (
        article.select_one(".stop-reason").get_text() == "the maximum number of rounds was reached"
    )
    cites = article.select("sup.cite a")
    assert cites and all(a["href"].startswith("#ev-") for a in cites)
    evidence = page.select("aside.report-sources ul.evidence li")
    assert {e["id"] for e in evidence} == {a["href"][1:] for a in cites}  # each lands there
    assert any(e.select_one(".verdict") and e.select_one("q") for e in evidence)
    order = [tag.name + "." + ".".join(tag.get("class", [])) for tag in page.select(
        "#progress-inner > *")]  # fmt: skip
    assert order == ["div.reading", "form.follow-up", "details.run-details"]
    assert page.select_one("details.run-details ol.workers")  # how it went, folded away
    downloads = [a["href"] for a in page.select("#controls nav.downloads a")]
    assert downloads[:4] == [f"/runs/web-1/export.{ext}" for ext in ("md", "html", "docx", "pdf")]
    assert not page.select_one('noscript meta[http-equiv="refresh"]')  # nothing left to watch


def test_an_earlier_rounds_report_says_which_round_it_is_with_a_whole_score():
    kept = EarlierReportKept(round=1, score=86.858, last_round=2, last_score=80.2)
    line = soup(run_page(finished(kept), "en", "t")).select_one("p.round-line").get_text()
    assert line.startswith("This is the round 1 report (quality 87/100)")


def test_the_history_search_keeps_rows_with_every_word_the_status_and_the_day():
    from deep_research.web.history_filter import HistoryFilter

    rows = [
        {"question": "Compare zstd and XZ", "status": "done", "created_at": "2026-12-04T10:00"},
        {"question": "压缩日志 zstd", "status": "failed", "created_at": "2026-12-05T01:00"},
    ]
    keeps = lambda query: [r["status"] for r in rows if HistoryFilter.of(query).keeps(r)]  # noqa: E731
    assert keeps({}) == ["done", "failed"]
    assert keeps({"q": "xz  zstd"}) == ["done"] and keeps({"q": "压缩"}) == ["failed"]
    assert keeps({"status": "failed"}) == ["failed"] and keeps({"since": "2026-12-05"}) == [
        "failed"
    ]
    assert keeps({"status": "nonsense", "since": "not a day"}) == ["done", "failed"]  # ignored
