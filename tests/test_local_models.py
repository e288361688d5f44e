"""Local and odd servers: refusals in every shape, ignored formats, small windows, slow streams.

The stand-in answers as the real servers were seen to (llama-cpp-python's 500 naming
`response_format.type`, its empty 200 stream for a prompt beyond its window, no usage in a
stream), and as others document (422, 404, 501 naming the feature; OpenAI's and vLLM's
"maximum context length is N tokens").
"""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from deep_research.domain.fences import data_section
from deep_research.graph import graph
from deep_research.settings import Settings
from deep_research.tools.capabilities import CapabilityMemory
from deep_research.tools.context_window import ContextWindows
from deep_research.tools.endpoint_limits import Gates
from deep_research.tools.model_client import ModelClient
from deep_research.tools.structured import ask, write_raw

ONE_ROUND = {"model_retries": 0, "search_retries": 0, "max_iterations": 1, "min_iterations": 1}
LLAMA_CPP_PYTHON_500 = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'),"
    " 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}"
)


def research(**settings):
    context = {**ONE_ROUND, **settings}
    return asyncio.run(graph.ainvoke({"question": "Compare zstd and xz"}, context=context))


def methods_sent(server):
    kinds = []
    for request in server.chat_requests:
        body = request["body"]
        kind = (body.get("response_format") or {}).get("type")
        kinds.append(kind or ("tool_calling" if body.get("tools") else "other"))
    return kinds


def test_llama_cpp_pythons_500_moves_down_at_once_without_retries(chat_server, search_server):
    chat_server.refusals["json_schema"] = (500, LLAMA_CPP_PYTHON_500)
    result = research(model_retries=3)
    assert result["sources"] and result["quality"] is not None
    assert result["structured_output"] == {"stand-in-model": "json_object"}
    refused = [r for r in chat_server.chat_requests if r["status"] == 500]
    assert len(refused) == 1  # found out once, never retried, remembered for the rest
    assert methods_sent(chat_server)[:2] == ["json_schema", "json_object"]
    assert "json_schema" not in methods_sent(chat_server)[1:]


@pytest.mark.parametrize(
    ("status", "feature", "message"),
    [
        (422, "json_schema", "Unprocessable: response_format json_schema is not supported"),
        (404, "json_object", "Not Found: unknown parameter response_format"),
        (501, "tools", "tool_choice is not implemented"),
        (500, "json_object", "upstream error: grammar-constrained output unavailable"),
    ],
)
def test_every_status_that_names_the_feature_is_a_refusal(
    chat_server, search_server, status, feature, message
):
    weaker = ("json_schema", "json_object", "tools")
    for stronger in weaker[: weaker.index(feature)]:  # refused plainly, to reach `feature`
        chat_server.refusals[stronger] = (400, f"response_format {stronger} unsupported")
    chat_server.refusals[feature] = (status, message)
    result = research(model_retries=3)
    assert result["sources"]
    assert sum(r["status"] == status for r in chat_server.chat_requests) == 1
    settled = result["structured_output"]["stand-in-model"]
    assert settled != ("json_object" if feature == "json_object" else feature)


def test_a_500_that_names_no_feature_is_retried_not_a_refusal(chat_server, search_server):
    failures = iter([True])
    chat_server.fault = lambda number, body: (
        __import__("stand_ins.loopback").loopback.Reply(
            500, {"error": {"message": "CUDA out of memory"}}, headers={"retry-after-ms": "10"}
        )
        if next(failures, False)
        else None
    )
    result = research(model_retries=2)
    assert result["structured_output"] == {"stand-in-model": "json_schema"}
    assert result["sources"]


def test_a_server_that_ignores_the_format_moves_down_without_a_reask(chat_server, search_server):
    chat_server.ignore_response_format = True  # answers prose to a JSON-schema request
    result = research()
    assert result["structured_output"] == {"stand-in-model": "tool_calling"}
    assert methods_sent(chat_server)[:3] == ["json_schema", "json_object", "tool_calling"]
    assert result["quality"] is not None


def _evidence_prompt(chars: int) -> list:
    body = data_section("evidence " * (chars // 9))
    return [SystemMessage("Summarise the evidence."), HumanMessage(f"Evidence:\n{body}")]


@pytest.mark.parametrize("empty_stream", [False, True])
def test_a_prompt_too_long_is_shrunk_and_sent_once_more(chat_server, empty_stream):
    chat_server.context_window = 1_500
    chat_server.empty_stream_when_too_long = empty_stream  # llama-cpp-python, streamed

    async def go():
        run = ModelClient(Settings(model_retries=0))
        text, _usage, _finish = await write_raw(_evidence_prompt(9_000), role="writer", client=run)
        return text, run.stats.of("writer")

    text, stats = asyncio.run(go())
    assert text and stats.shrunk == 1 and stats.retries == 0
    sizes = [len(json.dumps(r["body"]["messages"])) for r in chat_server.chat_requests]
    assert sizes[-1] < 0.7 * sizes[0]
    sent = chat_server.chat_requests[-1]["body"]["messages"][-1]["content"]
    assert sent.endswith("\n</data>")  # cut inside the fence: the structure is intact


def test_a_prompt_still_too_long_after_shrinking_fails_clearly(chat_server):
    chat_server.context_window = 100

    async def go():
        run = ModelClient(Settings(model_retries=0))
        await write_raw(_evidence_prompt(9_000), role="writer", client=run)

    with pytest.raises(Exception, match="maximum context length is 100 tokens"):
        asyncio.run(go())


def test_a_slow_stream_outlives_the_old_total_timeout(chat_server):
    chat_server.stream_parts = [0.3] * 8  # 2.4 s in all, never silent for more than 0.3 s

    async def go():
        run = ModelClient(Settings(request_idle_timeout=1.0, model_retries=0))
        messages = [HumanMessage("Question: zstd?")]
        return await write_raw(messages, role="writer", client=run), run.stats.of("writer")

    (text, usage, finish), stats = asyncio.run(go())
    assert text and finish == "stop" and stats.retries == 0 and stats.seconds > 2.0
    assert usage.output_tokens > 0  # counted even though this stream carried no usage


def test_a_stream_that_goes_silent_is_retried_and_counted(chat_server):
    # a 3 s silence against a 1 s limit: a busy machine may take half a second to send the
    # retried request's first chunk (seen at 0.5 s, in a full suite at load 5)
    stalls = iter([[0.05, 3.0, 0.05], [0.05, 0.05, 0.05]])
    chat_server.stream_parts = None

    def next_stream(number, body):
        chat_server.stream_parts = next(stalls)

    chat_server.fault = next_stream

    async def go():
        run = ModelClient(Settings(request_idle_timeout=1.0, model_retries=1))
        text, _, _ = await write_raw([HumanMessage("Question: zstd?")], role="writer", client=run)
        return text, run.stats.of("writer")

    text, stats = asyncio.run(go())
    assert text and stats.retries == 1 and stats.retries_after_output == 1
    assert len(chat_server.chat_requests) == 2


def test_every_call_sets_max_tokens_from_its_role(chat_server, search_server):
    research(planner_max_tokens=300, writer_max_tokens=900, reviewer_max_tokens=400)
    caps = {}
    for request in chat_server.chat_requests:
        body = request["body"]
        assert "max_tokens" in body and "max_completion_tokens" not in body
        name = (body.get("response_format") or {}).get("json_schema", {}).get("name", "prose")
        caps.setdefault(name, set()).add(body["max_tokens"])
    assert caps["TaskPlan"] == {300} and caps["ReportOutline"] == {900}
    assert max(caps["prose"]) <= 900  # each section's own cap, the writer's setting its ceiling
    assert caps["QualityAssessment"] == {400}


def test_a_model_without_a_system_role_gets_the_instructions_in_the_user_message(
    chat_server, search_server
):
    research(model="gemma-3-270m")
    for request in chat_server.chat_requests:
        roles = [m["role"] for m in request["body"]["messages"]]
        assert "system" not in roles
    first = chat_server.chat_requests[0]["body"]["messages"][0]["content"]
    assert first.startswith("Instructions:\nYou plan research") and "Question:" in first


def test_the_method_is_remembered_on_disk_per_endpoint_and_model(tmp_path):
    store = tmp_path / "capabilities.json"
    memory = CapabilityMemory(store)
    memory.settle("http://127.0.0.1:8011/v1/", "gemma", "json_object")
    memory.settle("http://127.0.0.1:8011/v1", "gemma", "json_schema")  # never back up
    assert json.loads(store.read_text()) == [
        {"base_url": "http://127.0.0.1:8011/v1", "model": "gemma", "method": "json_object"}
    ]
    assert CapabilityMemory().settled_method("http://127.0.0.1:8011/v1", "gemma") is None
    later = CapabilityMemory(store)  # the next process starts from what worked
    assert later.settled_method("http://127.0.0.1:8011/v1", "gemma") == "json_object"
    assert later.settled_method("http://127.0.0.1:8011/v1", "other") is None


def test_a_password_in_the_base_url_never_reaches_the_capability_file(tmp_path):
    store = tmp_path / "capabilities.json"
    memory = CapabilityMemory(store)
    memory.settle("https://user:s3cretpw@proxy.example/v1", "m", "prompt")
    assert "s3cretpw" not in store.read_text()
    assert memory.settled_method("https://user:s3cretpw@proxy.example/v1", "m") == "prompt"


def test_structured_replies_stream_and_count_usage(chat_server):
    from deep_research.state import GapCheck

    async def go():
        run = ModelClient(Settings())
        messages = [SystemMessage("Judge."), HumanMessage("Overall question: zstd?")]
        return await ask(GapCheck, messages, role="researcher", client=run)

    check, usage = asyncio.run(go())
    assert check.gaps == [] and usage.llm_calls == 1 and usage.input_tokens > 0
    assert chat_server.chat_requests[0]["body"]["stream"] is True


@pytest.mark.parametrize(
    ("path", "answer"),
    [
        ("/props", {"default_generation_settings": {"n_ctx": 6_000}}),  # llama.cpp's server
        ("/v1/models", {"data": [{"id": "stand-in-model", "max_model_len": 6_000}]}),  # vLLM
        ("/api/v0/models/stand-in-model", {"loaded_context_length": 6_000}),  # LM Studio
        ("/api/show", {"parameters": "num_ctx 6000\nstop <eos>"}),  # Ollama
    ],
)
def test_the_servers_context_window_bounds_every_prompt(chat_server, search_server, path, answer):
    chat_server.info_paths[path] = answer
    search_server.page_text = lambda query, n: f"{query} page {n}: " + "evidence text " * 2000
    result = research(max_context_tokens=100_000)
    assert result["sources"]
    for request in chat_server.chat_requests:
        sent = json.dumps(request["body"]["messages"], ensure_ascii=False)
        assert len(sent) / 3 < 6_000  # our estimate: 3 characters a token
        assert request["body"]["max_tokens"] <= 6_000


def test_ollama_without_num_ctx_is_taken_at_its_default_window(chat_server, search_server):
    chat_server.info_paths["/api/show"] = {"model_info": {"gemma3.context_length": 32_768}}
    from deep_research.tools.context_window import OLLAMA_DEFAULT_CONTEXT, fitted_to_server

    settings, window = asyncio.run(fitted_to_server(Settings(), ContextWindows(), Gates()))
    assert window == OLLAMA_DEFAULT_CONTEXT == settings.max_context_tokens


def test_a_server_that_tells_nothing_leaves_the_setting_alone(chat_server):
    from deep_research.tools.context_window import fitted_to_server

    asked = fitted_to_server(Settings(max_context_tokens=50_000), ContextWindows(), Gates())
    settings, window = asyncio.run(asked)
    assert window is None and settings.max_context_tokens == 50_000


def test_the_local_profile_fills_only_what_was_not_given():
    from deep_research.tools.local_profile import is_loopback

    profiled = Settings(local_model=True, max_workers=5)
    assert profiled.max_concurrent_model_calls == 1 and profiled.max_workers == 5
    assert profiled.request_idle_timeout == 600 and profiled.writer_max_tokens == 1_500
    assert Settings().max_concurrent_model_calls == 16
    assert [is_loopback(u) for u in ("http://127.0.0.1:8011/v1", "http://localhost:11434/v1")]
    assert not is_loopback("https://api.deepseek.com/v1") and not is_loopback(None)


def _first_replies_are(chat_server, contract: str, replies: list[str]) -> list[str]:
    """The stand-in answers `contract` with `replies` first (then normally); returns the log."""
    given = iter(replies)
    seen: list[str] = []

    def wrap(text, call):
        if call.contract == contract:
            seen.append(text)
            return next(given, text)
        return text

    chat_server.reply_wrapper = wrap
    return seen


@pytest.mark.parametrize("contract", ["TaskPlan", "WorkerFindings", "GapAnalysis"])
def test_an_empty_object_is_a_failed_reply_reasked_never_a_decision(
    chat_server, search_server, contract
):
    seen = _first_replies_are(chat_server, contract, ["{}"])
    result = research(max_iterations=2, min_iterations=2)
    assert len(seen) >= 2  # asked again after the `{}`
    fixes = [
        m["content"]
        for r in chat_server.chat_requests
        for m in r["body"]["messages"]
        if m["role"] == "user" and "could not be used" in str(m["content"])
    ]
    assert fixes and "Field required" in fixes[0]
    assert result["stop_reason"] != "no_gaps" and result["iteration"] == 2
    assert result["sources"] and "researcher cited none" not in json.dumps(
        [w for w in result.get("worker_results", [])]
    )


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        (
            '{"score": 1064, "dimensions": {"completeness": 90, "accuracy": 90, "depth": 90, '
            '"structure": 90, "readability": 90, "source_quality": 90}, "issues": ["2019.5"], '
            '"another_round_worthwhile": true}',
            "less than or equal to 100",
        ),
        (
            '{"score": 100, "dimensions": {"completeness": 0, "accuracy": 0, "depth": 0, '
            '"structure": 0, "readability": 0, "source_quality": 0}, "issues": [], '
            '"another_round_worthwhile": false}',
            "inconsistent with its dimensions",
        ),
    ],
)
def test_a_score_out_of_range_or_at_odds_with_its_dimensions_is_reasked(
    chat_server, search_server, reply, why
):
    _first_replies_are(chat_server, "QualityAssessment", [reply])
    result = research()
    assert result["quality"].score == 85  # the re-asked review (the stand-in's second score)
    sent = json.dumps([r["body"]["messages"] for r in chat_server.chat_requests])
    assert why in sent


def test_the_schema_the_model_sees_bounds_every_score():
    from deep_research.state import QualityAssessment

    schema = QualityAssessment.model_json_schema()
    assert schema["properties"]["score"] == {
        "description": schema["properties"]["score"]["description"],
        "maximum": 100,
        "minimum": 0,
        "title": "Score",
        "type": "number",
    }
    dimensions = schema["$defs"]["QualityDimensions"]
    assert all(p["minimum"] == 0 and p["maximum"] == 100 for p in dimensions["properties"].values())
    assert set(dimensions["required"]) == set(dimensions["properties"])


def test_a_report_that_echoes_the_prompt_is_reasked_then_replaced_by_an_honest_note(
    chat_server, search_server
):
    def echo(text, call):
        return call.user if call.contract is None else text  # the writer hands its prompt back

    chat_server.reply_wrapper = echo
    result = research()
    assert result["report_problem"].startswith("it repeats the prompt's scaffolding")
    assert result["report"].startswith("# Compare zstd and xz\n\n**No report: the writer")
    assert "Research notes:" not in result["report"] and "<data>" not in result["report"]
    by_section: dict[str, list[str]] = {}
    for request in chat_server.chat_requests:
        text = json.dumps(request["body"]["messages"])
        if section := re.search(r"Section: (Part \d+)", text):
            by_section.setdefault(section.group(1), []).append(text)
    assert by_section  # each section asked once more with the failure named, then marked
    assert all(len(calls) == 2 for calls in by_section.values())
    assert all("cannot be used as the report" in calls[1] for calls in by_section.values())


def test_a_looping_report_is_caught():
    from deep_research.domain.degenerate import prose_problem

    looped = "# zstd\n\n" + "zstd(1): Options — compress the file at level 19.\n" * 30
    assert "repeats one line" in prose_problem(looped, "stop", [HumanMessage("Question: zstd?")])
    assert prose_problem("# Fine\n\nA real answer [1].", "length", []).startswith(
        "the reply was cut"
    )
    assert prose_problem("# zstd\n\nzstd is fast [1]; xz is smaller [2].", "stop", []) is None


def test_the_views_show_the_method_a_long_call_and_its_retries():
    from rich.console import Console

    from deep_research.cli.live import ProgressModel, render
    from deep_research.service.event_lines import describe
    from deep_research.tools.events import parse_event

    wire = [
        {
            "event": "structured_output",
            "model": "gemma",
            "method": "json_object",
            "refused": "json_schema",
            "why": "HTTP 500 response_format.type",
        },
        {"event": "streaming", "role": "writer", "chunks": 812, "seconds": 41.0},
        {"event": "retry", "role": "writer", "attempt": 1, "error": "StreamChunkTimeoutError"},
    ]
    events = [parse_event(raw) for raw in wire]
    model = ProgressModel()
    for event in events:
        model.apply(event)
    console = Console(width=120, record=True)
    console.print(render(model))
    shown = console.export_text()
    assert "Structured output: gemma: json_object" in shown
    assert "writer: 812 tokens, 41 s" in shown and "writer call retried" in shown
    assert describe(events[0]) == (
        "structured output for gemma: json_object (json_schema refused: HTTP 500 "
        "response_format.type)"
    )
    assert describe(events[2]) == "writer call retried (1): StreamChunkTimeoutError"
