"""Node contracts in a few lines each: the nodes called directly, with langchain-core's in-process
fake chat model in place of a server (no HTTP, no graph)."""

from __future__ import annotations

import asyncio

import pytest

from deep_research.nodes.reviewing import quality_check
from deep_research.nodes.verifying import verify_citations
from deep_research.nodes.worker_steps import decide, report_findings
from deep_research.settings import Settings
from deep_research.state import Budget, SearchHit, SourceEvidence, SubTask, WorkerResult

from fake_chat import Replies

SETTINGS = Settings(structured_output="prompt", language="en", model="fake")


@pytest.fixture
def replies() -> Replies:
    """A fake chat model for every role, answering from `Replies` (a node is handed its runs)."""
    return Replies()


def worker(**extra) -> dict:
    """A worker's state after one search cycle."""
    hits = [
        SearchHit(url="https://a.example/zstd", title="zstd", content="zstd is fast.", score=0.9),
        SearchHit(url="https://b.example/xz", title="xz", content="xz is small.", score=0.8),
    ]
    return {
        "question": "Compare zstd and xz",
        "subtask": SubTask(
            id=1, description="Speed and size", search_queries=["zstd xz"], complexity="medium"
        ),
        "budget": Budget(max_queries=5, max_cycles=2),
        "round": 1,
        "settings": SETTINGS,
        "run_id": f"nodes-{id(extra)}",
        "sent_queries": ["zstd xz"],
        "cycles_used": 1,
        "hits": hits,
        **extra,
    }


def test_decide_goes_on_with_the_models_gaps_and_queries(replies):
    replies.append({"gaps": ["memory use"], "next_queries": ["zstd memory"]})
    update = asyncio.run(decide(worker(), runs=replies.runs))
    assert update["gaps"] == ["memory use"] and update["pending_queries"] == ["zstd memory"]
    assert "termination_reason" not in update and update["usage"].llm_calls == 1


def test_decide_stops_without_a_call_when_the_budget_is_spent(replies):
    update = asyncio.run(decide(worker(cycles_used=2), runs=replies.runs))
    assert update == {"termination_reason": "budget_spent"} and replies.sent == []


def test_report_findings_cites_only_the_evidence_it_was_shown(replies):
    replies.append(
        {
            "findings": [
                {"claim": "zstd is fast", "source_ids": [1]},
                {"claim": "made up", "source_ids": [7]},  # no such evidence item: dropped
            ],
            "summary": "zstd is fast; xz is small.",
            "gaps": [],
            "confidence": 0.7,
        }
    )
    result = asyncio.run(report_findings(worker(), runs=replies.runs))["worker_results"][0]
    assert result.status == "ok"
    assert [(f.claim, f.source_ids) for f in result.findings] == [("zstd is fast", [1])]
    assert [s.url for s in result.sources] == ["https://a.example/zstd"]  # only what it cites


def test_report_findings_falls_back_to_snippets_when_the_model_never_answers(replies):
    replies.extend(["{}", "{}", "{}"])  # an empty object is a failed reply, re-asked, not findings
    result = asyncio.run(report_findings(worker(), runs=replies.runs))["worker_results"][0]
    assert result.status == "partial" and len(replies.sent) == 3
    assert [f.claim for f in result.findings] == ["zstd is fast.", "xz is small."]


def research_state(report: str) -> dict:
    """An orchestrator's state with one worker's two sources and a report citing them."""
    sources = [
        SourceEvidence(id=1, url="https://a.example/zstd", title="zstd", excerpt="zstd is fast."),
        SourceEvidence(id=2, url="https://b.example/xz", title="xz", excerpt="xz is small."),
    ]
    result = WorkerResult(subtask_id=1, description="Speed and size", sources=sources)
    return {
        "question": "Compare zstd and xz",
        "settings": SETTINGS,
        "run_id": f"nodes-{id(report)}",
        "report": report,
        "worker_results": [result],
        "iteration": 1,
    }


def test_verify_citations_keeps_what_the_model_confirms_and_removes_the_rest(replies):
    replies.append(
        {
            "verdicts": [
                {"pair": 1, "verdict": "supported", "quote": "zstd is fast."},
                {"pair": 2, "verdict": "unsupported", "quote": ""},
            ]
        }
    )
    replies.append({"rewrites": [{"statement": 1, "text": ""}]})  # nothing to say: marked
    state = research_state("# Report\n\nZstd compresses quickly [1]. Xz is the fastest [2].\n")
    update = asyncio.run(verify_citations(state, runs=replies.runs))
    assert [(c.source_id, c.verdict, c.method) for c in update["citations"]] == [
        (1, "supported", "model"),
        (2, "unsupported", "model"),
    ]
    assert "Zstd compresses quickly [1]." in update["report"]
    assert "[2]" not in update["report"] and "not supported by the sources" in update["report"]
    assert update["citation_precision"] == 0.5


def review_reply(score: float, worthwhile: bool = True) -> dict:
    names = ("completeness", "accuracy", "depth", "structure", "readability", "source_quality")
    return {
        "score": score,
        "dimensions": dict.fromkeys(names, score),
        "issues": ["thin on memory use"],
        "another_round_worthwhile": worthwhile,
    }


@pytest.mark.parametrize(
    ("history", "iteration", "reply", "reason"),
    [
        ([60], 2, review_reply(85), "quality_threshold"),  # the threshold met after round 2
        ([], 1, review_reply(85), None),  # before min_iterations: go on
        ([60], 2, review_reply(62, worthwhile=False), "not_worthwhile"),
        ([60, 62], 5, review_reply(63), "max_iterations"),
        ([60], 2, "no JSON at all", None),  # no valid review: an unknown score stops nothing
    ],
)
def test_quality_check_records_the_stop_reason_the_route_reads(
    replies, history, iteration, reply, reason
):
    replies.extend([reply] * (SETTINGS.structured_retries + 1))
    state = {
        **research_state("# Report\n\nZstd compresses quickly [1].\n"),
        "iteration": iteration,
        "quality_history": history,
    }
    update = asyncio.run(quality_check(state, runs=replies.runs))
    assert update["stop_reason"] == reason
    assert update["quality_history"] == [None if isinstance(reply, str) else reply["score"]]
