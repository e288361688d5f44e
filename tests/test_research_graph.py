"""The real graph, end to end, through the real ChatOpenAI and Tavily clients and the stand-ins."""

from __future__ import annotations

import asyncio
import re

import pytest

from deep_research.graph import build_graph, graph
from deep_research.state import ResearchOutput

FAST = {"model_retries": 0, "search_retries": 0}

OUTPUT = set(ResearchOutput.__annotations__)


def research(question, **settings):
    return asyncio.run(graph.ainvoke({"question": question}, context={**FAST, **settings}))


def cited_ids(report):
    body = (
        report.split("\n## ")[0] if "\n## Sources" not in report else report.split("## Sources")[0]
    )
    return {int(n) for n in re.findall(r"\[(\d+)\]", body)}


def test_a_normal_run_keeps_the_contract(chat_server, search_server):
    result = research("Compare zstd and xz for log archives", max_iterations=3)

    assert set(result) == OUTPUT
    assert {"report", "sources", "quality", "iteration", "usage", "stop_reason"} <= OUTPUT
    assert result["iteration"] == 2 and result["stop_reason"] == "quality_threshold"
    assert 0 <= result["quality"].score <= 100
    report = result["report"]
    assert "## Sources" in report
    numbers = [s.number for s in result["sources"]]
    assert numbers == list(range(1, len(numbers) + 1))  # in order of first citation
    assert len({s.id for s in result["sources"]}) == len(numbers)
    assert cited_ids(report) == set(numbers)  # exactly the cited sources are listed
    returned = {r["url"] for q in search_server.requests for r in q["reply"]["results"]}
    assert {s.url for s in result["sources"]} <= returned  # no URL that no search returned
    for source in result["sources"]:
        assert f"- [{source.number}] {source.title} — {source.url}" in report


def test_usage_is_what_the_servers_answered(chat_server, search_server):
    usage = research("Compare zstd and xz for log archives", max_iterations=3)["usage"]
    assert usage.llm_calls == chat_server.answered == len(chat_server.chat_requests)
    assert usage.input_tokens == chat_server.prompt_tokens
    assert usage.output_tokens == chat_server.completion_tokens
    assert usage.search_calls == len(search_server.requests)
    assert usage.search_cache_hits == 0


def test_no_subtasks_still_researches_the_question(chat_server, search_server):
    chat_server.brain.subtasks = 0
    result = research("What is zstd?", max_iterations=1, min_iterations=1)
    assert chat_server.brain.calls["WorkerFindings"] == 1
    assert search_server.queries == ["What is zstd?"]
    assert result["sources"]


def test_thirty_subtasks_are_capped(chat_server, search_server):
    chat_server.brain.subtasks = 30
    research("Survey compression", max_iterations=1, min_iterations=1, max_subtasks=8)
    assert chat_server.brain.calls["WorkerFindings"] == 8


def test_empty_strings_everywhere_still_give_a_report(chat_server, search_server):
    chat_server.brain.empty_strings = True
    result = research("What is zstd?", max_iterations=1, min_iterations=1)
    assert result["report"].startswith("# What is zstd?")
    assert result["stop_reason"] == "max_iterations"


@pytest.mark.parametrize(
    ("scores", "settings", "iteration", "reason"),
    [
        ([0, 100], {}, 2, "quality_threshold"),
        ([100], {"min_iterations": 1}, 1, "quality_threshold"),
        ([0, 0, 0], {"diminishing_returns": False, "max_iterations": 3}, 3, "max_iterations"),
        ([0, 0, 0], {"max_iterations": 4}, 3, "plateau"),
    ],
)
def test_scores_at_the_edges_drive_the_stop_rules(
    chat_server, search_server, scores, settings, iteration, reason
):
    chat_server.brain.scores = scores
    result = research("Compare zstd and xz", **settings)
    assert (result["iteration"], result["stop_reason"]) == (iteration, reason)
    assert result["quality"].score == scores[iteration - 1]


def test_invented_citations_never_reach_the_report(chat_server, search_server):
    chat_server.brain.invented_citations = True
    result = research("Compare zstd and xz", max_iterations=1, min_iterations=1)
    assert "[999]" not in result["report"] and "[998]" not in result["report"]
    assert "invented.example" not in result["report"]
    assert "## References" not in result["report"]
    assert cited_ids(result["report"]) == {s.number for s in result["sources"]}


def test_a_run_where_every_search_fails_ends_honestly(chat_server, search_server):
    search_server.fail_all = True
    result = research("Compare zstd and xz", max_iterations=3)
    assert result["stop_reason"] == "no_evidence"
    assert result["sources"] == [] and not re.search(r"\[\d+\]", result["report"])
    assert "No evidence could be gathered" in result["report"]
    assert chat_server.brain.calls == {"TaskPlan": 1}  # nothing was written from nothing
    assert result["usage"].search_calls == len(search_server.requests)


def test_a_chinese_question_gets_a_chinese_report(chat_server, search_server):
    result = research("比较 zstd 和 xz 在日志归档中的表现", max_iterations=1, min_iterations=1)
    assert "## 参考来源" in result["report"]
    assert "来源 1 支持这一点 [1]" in result["report"]


def test_workers_run_concurrently(chat_server, search_server):
    chat_server.brain.subtasks = 5
    search_server.latency = 0.3
    research("Survey compression", max_iterations=1, min_iterations=1, max_concurrent_searches=16)
    assert search_server.peak_concurrency == 10  # 5 workers x 2 queries, all at once


def test_max_workers_bounds_concurrency(chat_server, search_server):
    chat_server.brain.subtasks = 5
    search_server.latency = chat_server.latency = 0.1
    research("Survey compression", max_iterations=1, min_iterations=1, max_workers=2, max_queries=1)
    assert search_server.peak_concurrency == 2
    assert chat_server.peak_concurrency <= 2


def test_graph_invoke_works_too(chat_server, search_server):
    fresh = build_graph()
    result = fresh.invoke(
        {"question": "What is zstd?"}, context={**FAST, "max_iterations": 1, "min_iterations": 1}
    )
    assert result["sources"] and result["stop_reason"] == "max_iterations"


def test_bad_settings_are_refused_before_any_call(chat_server, search_server):
    with pytest.raises(ValueError, match="min_iterations"):
        research("q", min_iterations=4, max_iterations=3)
    with pytest.raises(ValueError, match="quality_threshold"):
        research("q", quality_threshold=101)
    assert chat_server.requests == [] and search_server.requests == []


def test_a_report_that_got_worse_is_not_handed_back(chat_server, search_server):
    """Scores 71, 42, 46: a decline, not a plateau; the round-1 report comes back, revised with
    what rounds 2 and 3 found, and named."""
    drafts = []

    def draft(evidence):
        drafts.append(len(drafts) + 1)
        return "\n".join(
            f"Draft {len(drafts)} says source {n} holds [{n}]." for n, _, _ in evidence
        )

    chat_server.brain.scores = [71, 42, 46]
    chat_server.brain.composer = draft
    result = research("Compare zstd and xz", max_iterations=5)
    assert result["stop_reason"] == "declined" and result["iteration"] == 3
    assert len(drafts) >= 3  # each round wrote (a round writes its sections one call each)
    report = result["report"]
    assert "Draft 1 says" in report  # round 1's sections, as round 1 wrote them...
    assert report.startswith(
        "# Compare zstd and xz\n\n*This is the round 1 report (rated 71/100), revised with "
        "what round 2, 3 found"
    )
    later = {s.url for s in result["sources"] if "gap" in s.url}  # ...with rounds 2 and 3's
    assert any("gap-1" in url for url in later) and any("gap-2" in url for url in later)
    assert result["report_round"] == 1 and result["report_revised_with"] == [2, 3]
    assert result["quality"].score == 71


def test_a_later_report_as_good_as_the_best_stands(chat_server, search_server):
    chat_server.brain.scores = [71, 42, 71]
    result = research("Compare zstd and xz", max_iterations=3)
    assert result["report_round"] == 3 and result["quality"].score == 71


def test_the_best_report_survives_the_checkpoint_store(
    chat_server, search_server, tmp_path, monkeypatch, capsys
):
    """Through the CLI and its SQLite store: the round-1 report is the one exported again."""
    from deep_research.cli.main import main

    monkeypatch.setenv("DEEP_RESEARCH_CHECKPOINT_DB", str(tmp_path / "c.sqlite"))
    monkeypatch.chdir(tmp_path)
    drafts = []

    def draft(evidence):
        drafts.append(len(drafts) + 1)
        return "\n".join(
            f"Draft {len(drafts)} says source {n} holds [{n}]." for n, _, _ in evidence
        )

    chat_server.brain.scores = [71, 42, 46]
    chat_server.brain.composer = draft
    assert main(["run", "Compare zstd and xz", "--thread-id", "best", "--json", "o.json"]) == 0
    err = capsys.readouterr().err
    assert (
        "handing back the round 1 report (quality 71/100), revised with rounds 2, 3's findings: "
        "round 3 scored 46/100" in err
    )
    assert "quality: 71/100 (the report of round 1, revised with rounds 2, 3's findings)" in err
    assert main(["export", "best", "--format", "md"]) == 0
    exported = capsys.readouterr().out
    assert "Draft 1 says" in exported and "*This is the round 1 report (rated 71/100)" in exported


def test_a_failed_revision_leaves_the_earlier_rounds_report_named(chat_server, search_server):
    reviewed = []  # once round 1 is reviewed, every prose reply (the revision's) is empty

    def fail_the_revision(text, call):
        reviewed.extend([1] if call.contract == "QualityAssessment" else [])
        return "" if reviewed and call.method == "prose" else text

    chat_server.reply_wrapper = fail_the_revision
    result = research("Compare zstd and xz", max_iterations=2)
    assert result["iteration"] == 2 and result["report_problem"].startswith("revision 2:")
    assert result["report_round"] == 1  # the report handed back was written in round 1
