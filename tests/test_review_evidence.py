"""Review that sees the evidence (issue 29): the reviewer reads the cited sources, and a cheap
citation check each round hands statements without support to gap analysis."""

from __future__ import annotations

import asyncio
import json

from deep_research.domain.weak_support import needing_evidence
from deep_research.graph import graph
from deep_research.nodes.reviewing import analyze_gaps, quality_check
from deep_research.settings import Settings
from deep_research.state import SourceEvidence, TaskPlan, WorkerResult

from fake_chat import Replies

SOURCES = [
    SourceEvidence(
        id=1,
        url="https://a.example/zstd",
        title="zstd",
        excerpt="zstd decompresses at about 1,500 MB/s per core on modern hardware.",
    ),
    SourceEvidence(
        id=2,
        url="https://b.example/xz",
        title="xz",
        excerpt="xz -9 produced archives 8% smaller than zstd -19 on the log corpus.",
    ),
]
SETTINGS = Settings(structured_output="prompt", language="en", model="fake", structured_retries=0)


def test_statements_their_sources_state_are_not_flagged():
    report = (
        "# zstd\n\nzstd decompresses at about 1,500 MB/s per core [1]. "
        "On the log corpus, xz -9 archives were 8% smaller than zstd -19 [2].\n\n"
        "| tool | speed |\n|---|---|\n| zstd | 1,500 MB/s per core [1] |"
    )
    assert needing_evidence(report, SOURCES) == []


def test_a_chinese_statement_over_english_sources_is_left_to_the_final_check():
    assert needing_evidence("# zstd\n\nzstd 每核解压约 1,500 MB/s [1]。", SOURCES) == []


def test_statements_without_support_are_flagged_once_in_order():
    report = (
        "# zstd\n\nzstd won every benchmark in 2019 by 40% [1]. "
        "xz -9 archives were 8% smaller [2]. Brotli beats both [7].\n\n"
        "## Summary\n\nzstd won every benchmark in 2019 by 40% [1]."
    )
    assert needing_evidence(report, SOURCES) == [
        "zstd won every benchmark in 2019 by 40%.",
        "Brotli beats both.",  # cites no registered source
    ]


def state(**extra) -> dict:
    result = WorkerResult(
        subtask_id=1,
        description="speed",
        findings=[{"claim": "zstd is fast", "source_ids": [1, 2]}],
        sources=SOURCES,
    )
    return {
        "question": "How do zstd and xz compare?",
        "settings": SETTINGS,
        "run_id": f"review-{id(extra)}",
        "worker_results": [result],
        "iteration": 1,
        "report": "# zstd\n\nzstd decompresses at 1,500 MB/s [1]. zstd won in 2019 by 40% [1].",
        **extra,
    }


SCORE = {
    "score": 60,
    "dimensions": dict.fromkeys(
        ["completeness", "accuracy", "depth", "structure", "readability", "source_quality"], 60
    ),
    "issues": ["one claim is unsupported"],
    "another_round_worthwhile": True,
}


def test_the_reviewer_reads_the_cited_evidence_and_the_unsupported_statements():
    replies = Replies()
    replies.append(SCORE)
    update = asyncio.run(quality_check(state(), runs=replies.runs))
    sent = replies.sent[0][-1].content
    assert "1,500 MB/s per core on modern hardware" in sent  # the cited source itself
    cited = sent.split("The cited sources (the evidence):")[1]
    assert "8% smaller" not in cited  # an uncited source is not the report's evidence...
    unused = sent.split("Unused evidence")[1].split("The cited sources")[0]
    assert "#1 [2]: xz -9 produced archives 8% smaller" in unused  # ...but shown unused
    assert "- zstd won in 2019 by 40%." in sent
    assert update["claims_needing_evidence"] == ["zstd won in 2019 by 40%."]


def test_gap_analysis_is_handed_the_claims_needing_evidence():
    replies = Replies()
    replies.append({"gaps": [], "supplementary_tasks": []})
    before = state(claims_needing_evidence=["zstd won in 2019 by 40%."], quality=None)
    before["plan"] = TaskPlan.model_construct(query_type="breadth_first", subtasks=[])
    asyncio.run(analyze_gaps(before, runs=replies.runs))
    sent = replies.sent[0][-1].content
    assert "Claims needing evidence" in sent and "- zstd won in 2019 by 40%." in sent


def test_end_to_end_an_unsupported_statement_reaches_gap_analysis(chat_server, search_server):
    brain = chat_server.brain
    brain.subtasks, brain.scores = 1, [50, 90]

    def compose(sources):
        first, _, url = sources[0]
        figure = int(url.rsplit("/", 1)[1]) * 7  # what the stand-in's page says
        return f"The figure is {figure} [{first}]. Quantum zebras prefer xz archives [{first}]."

    brain.composer = compose
    asyncio.run(
        graph.ainvoke(
            {"question": "How fast is zstd?"},
            context={"model_retries": 0, "search_retries": 0, "max_iterations": 2},
        )
    )
    gap_requests = [
        json.dumps(r["body"]["messages"])
        for r in chat_server.chat_requests
        if "GapAnalysis" in json.dumps(r["body"])
    ]
    assert gap_requests and "Quantum zebras prefer xz archives" in gap_requests[0]
    assert (
        "The figure is 7"
        not in gap_requests[0].split("Claims needing evidence")[1].split("Report:")[0]
    )
