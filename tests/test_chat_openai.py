"""`ChatOpenAIAsBuilt`: the server receives the same JSON as from `ChatOpenAI`, while the openai
SDK no longer walks the conversation and tools (`tools/chat_openai.py`)."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_openai import ChatOpenAI
from openai.resources.chat.completions import AsyncCompletions
from pydantic import BaseModel, Field

from deep_research.tools.chat_openai import ChatOpenAIAsBuilt, sent_as_built
from deep_research.tools.models import named_model

from stand_ins.chat import ChatServer


class Lookup(BaseModel):
    """Look a term up, in one language, since a date."""

    term: str = Field(description="what to look up")
    languages: list[str] = Field(default_factory=list)
    since: str | None = Field(None, json_schema_extra={"format": "date-time"})


CONVERSATION = [
    SystemMessage("You research. Quote pages ‹verbatim›."),
    HumanMessage([{"type": "text", "text": "Compare zstd and xz — 压缩率?"}]),
    AIMessage(
        "",
        tool_calls=[{"id": "call_1", "name": "Lookup", "args": {"term": "zstd", "since": None}}],
    ),
    ToolMessage('{"found": ["zstd 1.5.6"]}', tool_call_id="call_1"),
]
REQUEST = {
    "extra_body": {
        "response_format": {"type": "json_schema", "json_schema": {"name": "X", "schema": {}}},
        "max_tokens": 77,
    }
}


async def _bodies_sent(server: ChatServer) -> list[dict]:
    """The request bodies `ChatOpenAI` and `ChatOpenAIAsBuilt` send for the same calls: one
    whole, one streamed with usage (as the engine sends every call)."""
    for model_class in (ChatOpenAI, ChatOpenAIAsBuilt):
        model = model_class(
            model="stand-in", api_key="sk-x", base_url=f"{server.url}/v1", stream_usage=True
        )
        tooled = model.bind_tools([Lookup], tool_choice="auto")
        await tooled.ainvoke(CONVERSATION, **REQUEST)
        async for _ in tooled.astream(CONVERSATION, **REQUEST):
            pass
    return [request["body"] for request in server.chat_requests]


def test_the_server_receives_what_chat_openai_sends():
    server = ChatServer().start()
    try:
        plain, streamed, as_built, as_built_streamed = asyncio.run(_bodies_sent(server))
    finally:
        server.stop()
    assert as_built == plain and as_built_streamed == streamed
    assert streamed["stream"] is True and streamed["stream_options"] == {"include_usage": True}
    assert as_built["messages"][1]["content"][0]["text"].endswith("压缩率?")
    assert as_built["tools"][0]["function"]["name"] == "Lookup"
    assert as_built["response_format"]["type"] == "json_schema"
    assert as_built["max_tokens"] == 77


def test_the_conversation_and_tools_skip_the_sdk_walk():
    payload = {
        "model": "m",
        "stream": True,
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
        "tool_choice": "auto",
        "extra_body": {"max_tokens": 5},
    }
    sent = sent_as_built(payload)
    assert sent["messages"] == []  # what the SDK walks: nothing
    assert "tools" not in sent
    assert sent["extra_body"] == {
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
        "max_tokens": 5,
    }
    assert sent["tool_choice"] == "auto"


def test_a_responses_api_payload_is_left_alone():
    payload = {"model": "m", "input": [{"role": "user", "content": "hi"}], "tools": [{"x": 1}]}
    assert sent_as_built(dict(payload)) == payload


def test_a_typed_response_format_is_left_to_the_sdks_parse_helpers():
    """langchain-openai sends a typed `response_format` through the SDK's parse helpers, which
    check the tools (strict ones only) before sending: they must see them."""
    payload = {
        "model": "m",
        "messages": [{"role": "user"}],
        "tools": [{}],
        "response_format": Lookup,
    }
    assert sent_as_built(dict(payload)) == payload
    model = ChatOpenAIAsBuilt(model="m", api_key="sk-x", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ValueError, match="strict"):
        model.bind_tools([Lookup], strict=False, response_format=Lookup).invoke("hi")


@pytest.mark.parametrize("name", ["stand-in-model", "openai:stand-in-model"])
def test_the_engine_builds_openai_compatible_models_as_built(name, chat_server):
    async def built():
        return named_model(name, idle_timeout=30.0)

    assert isinstance(asyncio.run(built()), ChatOpenAIAsBuilt)


async def _handed_over(model: ChatOpenAIAsBuilt) -> None:
    """One whole call and one streamed, each stopped where the SDK's `create` is reached."""
    tooled = model.bind_tools([Lookup])
    with pytest.raises(RuntimeError, match="stop here"):
        await tooled.ainvoke(CONVERSATION, **REQUEST)
    with pytest.raises(RuntimeError, match="stop here"):
        async for _ in tooled.astream(CONVERSATION, **REQUEST):
            pass


def test_the_sdk_is_handed_an_empty_conversation(monkeypatch):
    """What `ChatOpenAI`'s own paths, whole and streamed, hand the SDK's `create`: if
    langchain-openai ever stops building its payload in `_get_request_payload`, this fails (the
    bodies would still match, with the walk back)."""
    handed: list[dict] = []

    async def create(self, **kwargs):
        handed.append(kwargs)
        raise RuntimeError("stop here")

    monkeypatch.setattr(AsyncCompletions, "create", create)
    model = ChatOpenAIAsBuilt(model="m", api_key="sk-x", base_url="http://127.0.0.1:9/v1")
    asyncio.run(_handed_over(model))
    assert [kwargs.get("stream", False) for kwargs in handed] == [False, True]
    for kwargs in handed:
        assert kwargs["messages"] == [] and "tools" not in kwargs
        assert len(kwargs["extra_body"]["messages"]) == len(CONVERSATION)
        assert kwargs["extra_body"]["tools"][0]["function"]["name"] == "Lookup"
