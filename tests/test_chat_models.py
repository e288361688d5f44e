"""Any LangChain chat model: `provider:model` names, and chat models handed in from Python."""

from __future__ import annotations

import asyncio
import json

import httpx
import httpx2
import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from deep_research.cli.main import main
from deep_research.graph import build_graph
from deep_research.tools.model_names import MissingProvider, check_provider_installed, provider_of

from stand_ins.chat import Brain, ChatCall


class BrainModel(BaseChatModel):
    """An in-process chat model answering like the chat stand-in's brain (no HTTP); it has no
    tool calling, so contracts come by the schema written into the prompt."""

    brain: Brain
    seen: list[str] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "brain"

    def _generate(self, messages: list[BaseMessage], stop=None, run_manager=None, **kwargs):
        system = "\n".join(m.text for m in messages if isinstance(m, SystemMessage))
        user = "\n".join(m.text for m in messages if not isinstance(m, SystemMessage))
        contract = next(
            (line.split(": ", 1)[1] for line in system.splitlines() if "Schema name: " in line),
            None,
        )
        call = ChatCall(contract, "prompt" if contract else "prose", system, user, {})
        self.seen.append(call.method)
        answer = self.brain.answer(call)
        text = answer if isinstance(answer, str) else f"<tool_call>{json.dumps(answer)}</tool_call>"
        return ChatResult(generations=[ChatGeneration(message=AIMessage(text))])


@pytest.fixture
def no_http(monkeypatch):
    """Every HTTP request fails the test: the run must need none."""

    def refuse(*args, **kwargs):
        raise AssertionError("an HTTP request was sent")

    for module in (httpx, httpx2):  # httpx2: the chat servers' clients
        monkeypatch.setattr(module.AsyncClient, "send", refuse)
        monkeypatch.setattr(module.Client, "send", refuse)
    for name in ("OPENAI_BASE_URL", "OPENAI_API_BASE", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_a_run_from_python_with_a_chat_model_handed_in_sends_no_http(no_http, tmp_path):
    (tmp_path / "zstd.md").write_text("# Zstandard\n\nzstd level 19 compresses logs 10x.\n")
    (tmp_path / "xz.md").write_text("# xz\n\nxz uses LZMA2 and compresses logs about 12x.\n")
    model = BrainModel(brain=Brain(subtasks=2))
    graph = build_graph(chat_model=model)
    context = {
        "search_backend": "local",
        "corpus_dir": str(tmp_path),
        "max_iterations": 1,
        "min_iterations": 1,
        "language": "en",
        "model": "in-process",
        "model_retries": 0,
    }
    result = asyncio.run(graph.ainvoke({"question": "Compare zstd and xz"}, context=context))
    assert result["stop_reason"] == "max_iterations"
    assert result["report"].startswith("# ") and result["usage"].llm_calls >= 4
    assert model.brain.calls["TaskPlan"] == 1 and model.brain.calls["WorkerFindings"] >= 1
    assert result["structured_output"] == {"in-process": "prompt"}  # no tools: it moved down
    assert set(model.seen) == {"prompt", "prose"}


def test_a_model_handed_in_is_not_asked_of_the_environments_server(no_http, tmp_path, monkeypatch):
    """With OPENAI_BASE_URL set (a local server configured for other work), a run whose every
    role has a model handed in sends that server nothing: no context-window probe either."""
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    (tmp_path / "zstd.md").write_text("# Zstandard\n\nzstd level 19 compresses logs 10x.\n")
    graph = build_graph(chat_model=BrainModel(brain=Brain(subtasks=1)))
    context = {"search_backend": "local", "corpus_dir": str(tmp_path), "max_iterations": 1}
    result = asyncio.run(graph.ainvoke({"question": "What is zstd?"}, context=context))
    assert result["stop_reason"] == "max_iterations"


def test_a_chat_model_per_role_leaves_the_others_to_their_names(no_http, tmp_path):
    (tmp_path / "zstd.md").write_text("# Zstandard\n\nzstd level 19 compresses logs 10x.\n")
    planner, others = BrainModel(brain=Brain(subtasks=1)), BrainModel(brain=Brain())
    graph = build_graph(
        chat_model={"planner": planner, "researcher": others, "writer": others, "reviewer": others}
    )
    context = {"search_backend": "local", "corpus_dir": str(tmp_path), "max_iterations": 1}
    asyncio.run(graph.ainvoke({"question": "What is zstd?"}, context={**context, "language": "en"}))
    assert dict(planner.brain.calls) == {"TaskPlan": 1}
    assert "TaskPlan" not in others.brain.calls and others.brain.calls["WorkerFindings"] == 1


def test_chat_models_for_unknown_roles_are_refused():
    with pytest.raises(ValueError, match="unknown roles: \\['judge'\\]"):
        build_graph(chat_model={"judge": BrainModel(brain=Brain())})


def test_openai_prefixed_names_reach_the_openai_compatible_server(
    chat_server, search_server, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("DEEP_RESEARCH_CHECKPOINT_DB", str(tmp_path / "c.sqlite"))
    monkeypatch.chdir(tmp_path)
    code = main(
        ["run", "Compare zstd and xz", "--model", "openai:stand-in-model", "--max-iterations", "1"]
    )
    assert code == 0, capsys.readouterr().err
    models = {request["body"]["model"] for request in chat_server.chat_requests}
    assert models == {"stand-in-model"}  # the provider prefix is LangChain's, not the server's


@pytest.mark.parametrize(
    ("name", "provider"),
    [
        ("gpt-4.1-mini", None),
        ("qwen2.5:7b", None),  # Ollama's tag through its OpenAI-compatible API: a plain name
        ("openai:gpt-4.1", "openai"),
        ("anthropic:claude-sonnet-4-5", "anthropic"),
        ("ollama:qwen2.5:7b", "ollama"),
        ("nosuchprovider:model", None),
    ],
)
def test_which_names_name_a_provider(name, provider):
    assert provider_of(name) == provider


def test_a_provider_without_its_package_is_named_with_the_fix(monkeypatch):
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)
    with pytest.raises(MissingProvider, match="langchain-anthropic package: pip install"):
        check_provider_installed("anthropic:claude-sonnet-4-5")


def test_the_cli_names_a_missing_provider_package_before_any_call(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DEEP_RESEARCH_CHECKPOINT_DB", str(tmp_path / "c.sqlite"))
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)
    for name in ("OPENAI_BASE_URL", "OPENAI_API_BASE", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)  # not needed by an anthropic-only run
    assert main(["run", "What is zstd?", "--model", "anthropic:claude-sonnet-4-5"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].endswith(
        "model 'anthropic:claude-sonnet-4-5' needs the langchain-anthropic package: "
        "pip install langchain-anthropic"
    )


def test_ollamas_own_api_through_langchain_ollama(search_server, tmp_path, monkeypatch):
    """`ollama:NAME` goes through `init_chat_model` to LangChain's `ChatOllama`, which speaks
    Ollama's own API (not the OpenAI-compatible one): a stand-in of it answers."""
    pytest.importorskip("langchain_ollama")
    from stand_ins.ollama import OllamaServer

    server = OllamaServer().start()
    monkeypatch.setenv("OLLAMA_HOST", server.url)
    for name in ("OPENAI_BASE_URL", "OPENAI_API_BASE", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DEEP_RESEARCH_CHECKPOINT_DB", str(tmp_path / "c.sqlite"))
    try:
        graph = build_graph()
        context = {"model": "ollama:stand-in", "max_iterations": 1, "language": "en"}
        result = asyncio.run(graph.ainvoke({"question": "Compare zstd and xz"}, context=context))
    finally:
        server.stop()
    assert result["stop_reason"] == "max_iterations" and "## Sources" in result["report"]
    assert {r["body"]["model"] for r in server.requests} == {"stand-in"}
    assert result["structured_output"] == {"stand-in": "tool_calling"}  # tools, natively
    assert result["usage"].input_tokens > 0 and result["usage"].output_tokens > 0


def test_the_run_service_drives_runs_with_the_live_runs_it_is_handed(no_http, tmp_path):
    """`open_service(runs=...)` drives every run with the caller's live runs (its chat models
    here), never a fresh set in their place (an empty LiveRuns is falsy)."""
    from deep_research.service.admission import Admitted, Operator
    from deep_research.service.caller import Caller
    from deep_research.service.runs import open_service
    from deep_research.settings import Settings
    from deep_research.tools.models import given_models
    from deep_research.tools.run_resources import LiveRuns

    (tmp_path / "zstd.md").write_text("# Zstandard\n\nzstd level 19 compresses logs 10x.\n")
    model = BrainModel(brain=Brain(subtasks=1))
    runs = LiveRuns(given_models(model))
    settings = Settings(
        search_backend="local", corpus_dir=str(tmp_path), max_iterations=1, min_iterations=1,
        language="en", model="in-process", model_retries=0,
    )  # fmt: skip

    async def scenario() -> str:
        store = str(tmp_path / "runs.sqlite")
        async with open_service(store, Operator.of(settings), runs=runs) as service:
            admitted = Admitted("What is zstd?", settings)
            end = await service.to_the_end(Caller("cli"), admitted, "handed-runs")
            return end.values["stop_reason"]

    assert asyncio.run(scenario()) == "max_iterations"
    assert model.brain.calls["TaskPlan"] == 1 and runs.last_released is not None


def test_the_openai_client_gets_timeouts_every_httpx_takes():
    """The openai SDK's stack, httpx2, refuses an httpx.Timeout (httpx2 2.17.0: "Invalid
    timeout ... got <class 'httpx.Timeout'>"): plain seconds, which both take."""
    from deep_research.tools.model_names import Endpoint
    from deep_research.tools.models import openai_model
    from deep_research.tools.process_wide import ProcessWide

    async def build():
        endpoint = Endpoint(base_url="http://127.0.0.1:9/v1", api_key="k")
        return openai_model("m", endpoint, 600.0, ProcessWide())

    model = asyncio.run(build())
    assert model.request_timeout == (30.0, 600.0, 600.0, 600.0)  # connect, read, write, pool
    assert model.http_async_client.timeout == httpx2.Timeout(600.0, connect=30.0)


def test_a_burst_of_calls_reuses_the_connections_of_the_one_before(chat_server, monkeypatch):
    """The chat client keeps as many idle connections as the endpoint lets calls be in flight
    (httpx2 keeps 20): a fan-out's next level of 40 calls opens none of the 40 again."""
    from langchain_core.messages import HumanMessage

    from deep_research.tools.model_names import Endpoint
    from deep_research.tools.models import openai_model
    from deep_research.tools.process_wide import ProcessWide

    monkeypatch.setenv("DEEP_RESEARCH_ENDPOINT_MAX_CONCURRENT_MODEL_CALLS", "48")
    chat_server.latency = 0.2  # long enough for 40 calls to be in flight at once

    async def two_bursts() -> tuple[set[int], set[int]]:
        endpoint = Endpoint(base_url=f"{chat_server.url}/v1", api_key="k")
        model = openai_model("stand-in-model", endpoint, 60.0, ProcessWide())
        pool = model.http_async_client._transport._pool
        bursts = []
        for _ in range(2):
            await asyncio.gather(*(model.ainvoke([HumanMessage("hi")]) for _ in range(40)))
            bursts.append({id(connection) for connection in pool.connections})
        return bursts[0], bursts[1]

    first, second = asyncio.run(two_bursts())
    assert len(first) == 40 and second == first


def test_models_on_one_server_share_its_connections():
    """Two models on one server (a planner and a writer, say) send over one pool, so the
    endpoint's cap bounds the connections kept open to it; another server gets its own."""
    from deep_research.tools.model_names import Endpoint
    from deep_research.tools.models import openai_model
    from deep_research.tools.process_wide import ProcessWide

    async def clients():
        process = ProcessWide()
        here = Endpoint(base_url="http://127.0.0.1:9/v1", api_key="k")
        there = Endpoint(base_url="http://127.0.0.1:10/v1", api_key="k")
        models = [openai_model(name, here, 60.0, process) for name in ("planner-m", "writer-m")]
        return [m.http_async_client for m in (*models, openai_model("m", there, 60.0, process))]

    planner, writer, elsewhere = asyncio.run(clients())
    assert planner is writer and elsewhere is not planner
