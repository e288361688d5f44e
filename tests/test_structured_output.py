"""Structured output through every method, the `auto` fallback, reasoning blocks and re-asks."""

from __future__ import annotations

import asyncio

import pytest

from deep_research.graph import graph

from stand_ins.loopback import Reply

ONE_ROUND = {"model_retries": 0, "search_retries": 0, "max_iterations": 1, "min_iterations": 1}


def research(question="Compare zstd and xz", **settings):
    return asyncio.run(graph.ainvoke({"question": question}, context={**ONE_ROUND, **settings}))


def methods_seen(server):
    seen = []
    for request in server.chat_requests:
        body = request["body"]
        if body.get("response_format"):
            seen.append(body["response_format"]["type"])
        elif body.get("tools"):
            seen.append("tool_calling")
        elif "Schema name:" in str(body["messages"][0]["content"]):
            seen.append("prompt")
        else:
            seen.append("prose")
    return seen


@pytest.mark.parametrize("method", ["json_schema", "json_object", "tool_calling", "prompt"])
def test_each_method_completes_a_run(chat_server, search_server, method):
    result = research(structured_output=method)
    assert result["sources"] and result["quality"].score == 70
    assert set(methods_seen(chat_server)) == {method, "prose"}


def test_auto_falls_back_when_the_server_refuses_response_format_and_tools(
    chat_server, search_server
):
    chat_server.refuse_response_format = True
    chat_server.refuse_tools = True
    result = research()
    assert result["sources"] and result["quality"].score == 70
    seen = methods_seen(chat_server)
    # found out once, on the plan: each refusal moves down at once, none is retried
    assert seen[:4] == ["json_schema", "json_object", "tool_calling", "prompt"]
    assert set(seen[4:]) == {"prompt", "prose"}
    refused = [r for r in chat_server.chat_requests if r["status"] == 400]
    assert len(refused) == 3


def test_a_named_method_the_server_refuses_fails_clearly(chat_server, search_server):
    chat_server.refuse_tools = True
    with pytest.raises(Exception, match="tools are not supported"):
        research(structured_output="tool_calling")


def test_reasoning_blocks_are_stripped_everywhere(chat_server, search_server):
    chat_server.reply_wrapper = lambda text, call: (
        f"<think>Let me think {{about}} it.</think>\n{text}"
    )
    result = research(structured_output="prompt")
    assert result["sources"] and "<think>" not in result["report"]
    assert "Let me think" not in result["report"]


def test_a_broken_reply_is_sent_back_with_the_error(chat_server, search_server):
    broken = {"count": 0}

    def break_first_plan(text, call):
        if call.contract == "TaskPlan" and broken["count"] == 0:
            broken["count"] += 1
            return '{"query_type": "sideways", "subtasks": [}'
        return text

    chat_server.reply_wrapper = break_first_plan
    result = research(structured_output="prompt")
    assert result["sources"]
    second = chat_server.chat_requests[1]["body"]["messages"]
    assert second[-2]["role"] == "assistant" and "sideways" in second[-2]["content"]
    assert "could not be used" in second[-1]["content"] and "query_type" in second[-1]["content"]
    assert result["usage"].llm_calls == chat_server.answered


def test_a_planner_that_never_answers_validly_falls_back_to_one_subtask(chat_server, search_server):
    chat_server.reply_wrapper = lambda text, call: (
        "I cannot do JSON." if call.contract == "TaskPlan" else text
    )
    result = research("What is zstd?", structured_output="prompt", structured_retries=1)
    plan_calls = [r for r in chat_server.chat_requests if "TaskPlan" in str(r["body"])]
    assert len(plan_calls) == 2  # one ask, one re-ask, then the safe plan
    assert search_server.queries == ["What is zstd?"]
    assert result["sources"]


def test_transient_model_errors_are_retried(chat_server, search_server):
    chat_server.fault = lambda number, body: (
        Reply(503, {"error": {"message": "busy"}}, headers={"Retry-After": "0"})
        if number in (1, 3)
        else None
    )
    result = research(model_retries=2)
    assert result["sources"]
    assert [r["status"] for r in chat_server.chat_requests[:4]].count(503) == 2


def test_a_worker_whose_model_fails_reports_its_evidence_as_partial(chat_server, search_server):
    chat_server.reply_wrapper = lambda text, call: (
        "no JSON here" if call.contract == "WorkerFindings" else text
    )
    result = research(structured_output="prompt", structured_retries=0)
    assert result["sources"]  # the snippets themselves were reported, citing their pages
    assert result["stop_reason"] == "max_iterations"


def test_a_reviewer_that_never_answers_gives_an_unknown_score(chat_server, search_server):
    chat_server.reply_wrapper = lambda text, call: (
        "no JSON here" if call.contract == "QualityAssessment" else text
    )
    result = research(
        structured_output="prompt", structured_retries=0, max_iterations=3, min_iterations=1
    )
    assert result["quality"] is None  # unknown, not zero
    assert result["iteration"] == 3 and result["stop_reason"] == "max_iterations"
