"""Judging through the real client against the stand-in judge: FACT pairs, dedup, re-asks."""

from __future__ import annotations

import asyncio

import pytest
from conftest import SECRET_JUDGE_KEY

from deep_research.evaluation.fact import check_citations
from deep_research.evaluation.judge import Judge, JudgeConfig, JudgeFailed, judge_endpoint
from deep_research.evaluation.race import score_report
from deep_research.evaluation.records import TaskCriteria
from deep_research.evaluation.tasks import EvalTask
from deep_research.settings import Settings
from deep_research.state import Source, SourceEvidence, Usage
from deep_research.tools.model_names import PLACEHOLDER_KEY

REPORT = """# Test

- Alpha rose 5% in 2020 [1].
- alpha rose 5%   in 2020 [1].
- Alpha went up by 5% during 2020 (again) [1].
- Beta is 7 [1][2].
- Gamma is 9 [3].
- Delta is 4 [4].
- Epsilon is 2 [9].

## Sources

- [1] One — https://one.example/a
"""
PAGES = {
    1: "Alpha rose 5% in 2020. Beta is 8.",
    2: "Beta is 7 on this page.",
    3: "404 Not Found",
    4: "",
}


def judge_for(server) -> Judge:
    endpoint = judge_endpoint(f"{server.url}/v1")
    return Judge(JudgeConfig(model="judge-model", structured_output="json_schema"), endpoint)


def sources():
    urls = {n: f"https://{['', 'one', 'two', 'three', 'four'][n]}.example/a" for n in PAGES}
    listed = [Source(id=n, url=url) for n, url in urls.items()]
    evidence = [SourceEvidence(id=n, url=urls[n], excerpt=PAGES[n]) for n in PAGES]
    return listed, evidence


def test_pairs_are_deduplicated_and_judged_against_the_retrieved_pages(judge_server):
    listed, evidence = sources()
    usage: list[Usage] = []

    async def go():
        return await check_citations(REPORT, listed, evidence, judge_for(judge_server), usage)

    fact = asyncio.run(go())
    # 7 pairs: three Alpha lines and Beta cite [1], Beta [2], Gamma [3], Delta [4]; [9] is no source
    assert fact.pairs == 7
    # page 1: the re-spaced copy is merged without a model, the judge drops the "(again)"
    # rewording: Alpha and Beta remain; pages 2, 3, 4 one statement each
    assert fact.unique_pairs == 5
    by_url = {(j.url, j.statement): j.result for j in fact.judged}
    assert by_url == {
        ("https://one.example/a", "Alpha rose 5% in 2020."): "supported",
        ("https://one.example/a", "Beta is 7."): "unsupported",  # page 1 says 8
        ("https://two.example/a", "Beta is 7."): "supported",
        ("https://three.example/a", "Gamma is 9."): "unknown",  # an error page
        ("https://four.example/a", "Delta is 4."): "unknown",  # no text retrieved: no call
    }
    assert (fact.supported, fact.unsupported, fact.unknown) == (2, 1, 2)
    assert fact.citation_accuracy == pytest.approx(2 / 3) and fact.effective_citations == 2
    calls = judge_server.brain.calls
    assert calls == {"DistinctStatements": 1, "FactJudgments": 3}
    dedup = next(c for c in judge_server.brain.seen if c.contract == "DistinctStatements")
    assert dedup.user.count("\n") == 4  # three statements inside the data fence, not four
    total = sum(usage, Usage())
    assert total.llm_calls == 4 and total.by_role.keys() == {"reviewer"}
    for request in judge_server.chat_requests:
        assert request["headers"]["authorization"] == f"Bearer {SECRET_JUDGE_KEY}"
        assert request["body"]["model"] == "judge-model"


def test_a_judge_reply_that_misses_a_criterion_is_asked_again_not_scored_zero(judge_server):
    judge_server.brain.drop_first_scores = True
    criteria = TaskCriteria(
        id=1,
        prompt="q",
        dimension_weight={
            "comprehensiveness": 0.4,
            "insight": 0.3,
            "instruction_following": 0.2,
            "readability": 0.1,
        },
        criterions={
            d: [{"criterion": f"{d} {n}", "weight": w} for n, w in enumerate(ws, 1)]
            for d, ws in {
                "comprehensiveness": (0.75, 0.25),
                "insight": (0.5, 0.5),
                "instruction_following": (1.0,),
                "readability": (0.6, 0.4),
            }.items()
        },
    )
    task = EvalTask(id=1, prompt="q", reference="# Reference\n\nText.")
    usage: list[Usage] = []

    async def go():
        return await score_report(
            task, "# Report\n\nText [1].", criteria, judge_for(judge_server), usage
        )

    race = asyncio.run(go())
    assert judge_server.brain.calls["CriterionScores"] == 2
    second = judge_server.chat_requests[1]["body"]["messages"]
    assert "missing criteria [7]" in second[-1]["content"]
    # criterion n scores n, the reference 8 - n: per dimension 1.25, 3.5, 5, 6.4 against 8 - each
    assert race.target == pytest.approx(
        {"comprehensiveness": 1.25, "insight": 3.5, "instruction_following": 5, "readability": 6.4}
    )
    assert race.overall == pytest.approx(3.19 / 8)
    assert sum(usage, Usage()).llm_calls == 2


def test_a_judge_that_never_answers_validly_fails_the_task_instead_of_scoring_it(judge_server):
    judge_server.reply_wrapper = lambda text, call: "no JSON here"
    config = JudgeConfig(model="judge-model", structured_output="prompt", reasks=1)
    judge = Judge(config, judge_endpoint(f"{judge_server.url}/v1"))
    usage: list[Usage] = []
    listed, evidence = sources()

    async def go():
        return await check_citations("- Beta is 7 [2].\n", listed, evidence, judge, usage)

    with pytest.raises(JudgeFailed, match="no valid FactJudgments"):
        asyncio.run(go())
    assert len(judge_server.chat_requests) == 2 and sum(usage, Usage()).llm_calls == 2


def test_judge_endpoint_keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-research-key-000000")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("DEEP_RESEARCH_JUDGE_BASE_URL", raising=False)
    monkeypatch.delenv("DEEP_RESEARCH_JUDGE_API_KEY", raising=False)
    # the same server as research: its key
    assert judge_endpoint(None).api_key == "sk-research-key-000000"
    # another server: never the research key; its own, or none
    assert judge_endpoint("http://judge.local/v1").api_key == PLACEHOLDER_KEY
    monkeypatch.setenv("DEEP_RESEARCH_JUDGE_API_KEY", "sk-judge-111111")
    other = judge_endpoint("http://judge.local/v1")
    assert other.api_key == "sk-judge-111111" and "sk-judge" not in repr(other)
    monkeypatch.setenv("DEEP_RESEARCH_JUDGE_BASE_URL", "http://env-judge/v1")
    assert judge_endpoint(None).base_url == "http://env-judge/v1"


def test_fact_reads_whole_pages_once_per_url_and_never_judges_an_unreadable_one(
    judge_server, page_server
):
    """Fact mode pages: the full page (past PAGE_CHARS), read once for every task through the
    guarded reader; a page that cannot be read is unknown, even though the run kept a snippet."""
    from deep_research.evaluation.fact import UNREADABLE
    from deep_research.evaluation.pipeline import page_reader
    from deep_research.tools.search.pages import PAGE_CHARS

    live_url, long_url = f"{page_server.url}/zstd-article", f"{page_server.url}/long"
    report = "- zstd level 19 compresses logs 11.2x [1].\n- Alpha rose 5% in 2020 [2].\n"
    report += "- Omega is 77 [3].\n"
    listed = [
        Source(id=1, url=live_url),
        Source(id=2, url="https://one.example/a"),
        Source(id=3, url=long_url),
    ]
    evidence = [  # what the run kept: nothing for the first page, the right text for the second
        SourceEvidence(id=1, url=live_url, excerpt=""),
        SourceEvidence(id=2, url="https://one.example/a", excerpt=PAGES[1]),
        SourceEvidence(id=3, url=long_url, excerpt=""),
    ]

    def check(allow_private: bool, tasks: int = 1):
        whole_page = page_reader(Settings(fetch_private_addresses=allow_private, page_timeout=5))
        judge = judge_for(judge_server)

        async def go():
            return [
                await check_citations(report, listed, evidence, judge, [], whole_page)
                for _ in range(tasks)
            ]

        return asyncio.run(go())

    first, second = check(allow_private=True, tasks=2)  # the stand-in site is on loopback
    for score in (first, second):
        assert {j.url: j.result for j in score.judged} == {
            live_url: "supported",  # judged from the page read now
            long_url: "supported",  # its fact sits past the old 4,000-character cut
            "https://one.example/a": "unknown",  # unreadable (no network): not the snippet
        }
        unreadable = next(j for j in score.judged if j.url == "https://one.example/a")
        assert unreadable.reason == UNREADABLE
        assert score.mode == "pages" and score.pages_read == 2 and score.pages_unreadable == 1
    assert sorted(page_server.served) == ["/long", "/zstd-article"]  # once, for both tasks
    page = page_server.url + "/long"
    from deep_research.tools.search.pages import PageFetcher

    whole = asyncio.run(PageFetcher(Settings(fetch_private_addresses=True)).whole(page))
    assert len(whole) > PAGE_CHARS and whole.rstrip().endswith("Omega is 77.")
    (refused,) = check(allow_private=False)  # the guard refuses loopback: unread, unknown
    assert {j.result for j in refused.judged} == {"unknown"} and refused.pages_read == 0


def test_snippet_mode_judges_what_the_run_kept(judge_server):
    listed, evidence = sources()
    score = asyncio.run(
        check_citations("- Beta is 7 [2].\n", listed, evidence, judge_for(judge_server), [])
    )
    assert score.mode == "snippets" and [j.result for j in score.judged] == ["supported"]
