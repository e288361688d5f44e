"""Cost known by default: prices from genai-prices' bundled table, where it lists the model on the
server that serves it; the user's `prices` win; a model it does not list stays unknown, said
once; a dollar budget works with no price table. Offline: the table ships in the package."""

from __future__ import annotations

import asyncio
import socket
import threading

import pytest
from fresh_process import printed
from genai_prices import Usage as TableUsage
from genai_prices import calc_price
from test_chat_models import BrainModel

from deep_research.domain.budgets import cost_usd
from deep_research.graph import build_graph
from deep_research.service.event_lines import describe
from deep_research.settings import ModelPrice, Settings, listed_price
from deep_research.state import Usage
from deep_research.tools.events import CostUnknown, parse_event

from stand_ins.chat import Brain

OPENAI_LOCAL = "http://127.0.0.1:8000/v1"


@pytest.fixture
def openai_itself(monkeypatch):
    """Plain model names go to OpenAI (no base URL set), as on a fresh install."""
    for name in ("OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.delenv(name, raising=False)


def table_rate(model: str, **where) -> tuple[float, float]:
    """Dollars per million input and output tokens, as genai-prices computes them itself."""
    found = calc_price(TableUsage(input_tokens=1_000_000, output_tokens=0), model, **where)
    output = calc_price(TableUsage(input_tokens=0, output_tokens=1_000_000), model, **where)
    return float(found.input_price), float(output.output_price)


def test_a_common_model_on_its_providers_server_is_priced(openai_itself):
    settings = Settings(model="gpt-4.1-mini")
    price = settings.prices["gpt-4.1-mini"]
    assert (price.input_per_million, price.output_per_million) == table_rate(
        "gpt-4.1-mini", provider_id="openai"
    )
    assert 0 < price.input_per_million < price.output_per_million
    usage = Usage.of_call("planner", 1_000_000, 0) + Usage.of_call("writer", 0, 1_000_000)
    assert cost_usd(usage, settings) == pytest.approx(
        price.input_per_million + price.output_per_million
    )
    assert settings.unpriced_models() == []


def test_the_users_price_wins_over_the_table(openai_itself):
    own = ModelPrice(input_per_million=9, output_per_million=99)
    assert Settings(model="gpt-4.1-mini", prices={"gpt-4.1-mini": own}).prices == {
        "gpt-4.1-mini": own
    }


@pytest.mark.parametrize(
    ("model", "base_url", "priced"),
    [
        ("gpt-4.1-mini", None, True),
        ("openai:gpt-4.1-mini", None, True),
        ("gpt-4.1-mini", "https://api.openai.com/v1", True),
        ("deepseek-chat", "https://api.deepseek.com/v1", True),
        ("anthropic:claude-sonnet-4-5", None, True),
        # the same names on a server the table does not know: never priced as their namesake
        ("gpt-4.1-mini", OPENAI_LOCAL, False),
        ("gpt-4.1-mini", "https://llm-proxy.example.com/v1", False),
        ("qwen-plus", "https://dashscope.aliyuncs.com/compatible-mode/v1", False),
        ("qwen2.5:7b", "http://127.0.0.1:11434/v1", False),
        ("ollama:llama3.1", None, False),
        ("a-model-no-table-lists", None, False),
    ],
)
def test_a_price_only_where_the_table_lists_the_model_on_its_server(model, base_url, priced):
    assert (listed_price(model, base_url) is not None) is priced


def test_a_volume_tier_does_not_raise_the_price_of_a_call_under_it():
    price = listed_price("anthropic:claude-sonnet-4-5", None)
    base = calc_price(
        TableUsage(input_tokens=1000, output_tokens=1000),
        "claude-sonnet-4-5",
        provider_id="anthropic",
    ).model_price
    assert price.input_per_million == float(base.input_mtok.base)  # not the >200k-token tier
    assert price.output_per_million == float(base.output_mtok.base)


def test_an_unlisted_model_stays_unknown_and_a_dollar_budget_needs_its_price(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", OPENAI_LOCAL)
    settings = Settings(model="gpt-4.1-mini")
    assert settings.prices == {} and settings.unpriced_models() == ["gpt-4.1-mini"]
    assert cost_usd(Usage.of_call("writer", 10, 10), settings) is None  # unknown, not zero
    with pytest.raises(ValueError, match="needs prices for every model used"):
        Settings(model="gpt-4.1-mini", max_cost_usd=1)
    own = {"gpt-4.1-mini": {"input_per_million": 1, "output_per_million": 2}}
    assert Settings(model="gpt-4.1-mini", max_cost_usd=1, prices=own).max_cost_usd == 1


def test_prices_come_from_the_installed_table_with_no_network(openai_itself, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a connection was opened")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    listed_price.cache_clear()
    assert Settings(model="gpt-4.1").prices["gpt-4.1"].input_per_million > 0
    assert not [t for t in threading.enumerate() if t.name.startswith("genai_prices")]


def corpus(tmp_path) -> dict:
    (tmp_path / "zstd.md").write_text("# Zstandard\n\nzstd level 19 compresses logs 10x.\n")
    (tmp_path / "xz.md").write_text("# xz\n\nxz uses LZMA2 and compresses logs about 12x.\n")
    return {"search_backend": "local", "corpus_dir": str(tmp_path), "language": "en"}


def run(context: dict) -> tuple[dict, list]:
    """A run with an in-process model; its output and its progress events."""
    graph = build_graph(chat_model=BrainModel(brain=Brain(subtasks=2)))

    async def go():
        events, output = [], {}
        async for mode, chunk in graph.astream(
            {"question": "Compare zstd and xz"},
            context=context,
            stream_mode=["custom", "values"],
        ):
            if mode == "custom" and (event := parse_event(chunk)):
                events.append(event)
            elif mode == "values":
                output = chunk
        return output, events

    return asyncio.run(go())


def test_a_dollar_budget_works_with_no_price_table(openai_itself, tmp_path):
    context = {**corpus(tmp_path), "model": "gpt-4.1-mini", "max_cost_usd": 0.000_001}
    output, events = run({**context, "max_iterations": 3, "min_iterations": 1})
    assert output["stop_reason"] == "budget" and output["iteration"] == 1
    price = Settings(model="gpt-4.1-mini").prices["gpt-4.1-mini"]
    usage = output["usage"]
    assert output["cost_usd"] == pytest.approx(
        (
            usage.input_tokens * price.input_per_million
            + usage.output_tokens * price.output_per_million
        )
        / 1e6
    )
    assert not [e for e in events if isinstance(e, CostUnknown)]


def test_an_unknown_price_is_said_once_and_the_cost_stays_unknown(openai_itself, tmp_path):
    output, events = run({**corpus(tmp_path), "model": "in-process", "max_iterations": 2})
    said = [e for e in events if isinstance(e, CostUnknown)]
    assert said == [CostUnknown(models=["in-process"])]
    assert output["cost_usd"] is None and output["iteration"] == 2
    assert describe(said[0]).startswith("cost unknown: no price known for in-process")


def test_config_says_where_a_price_came_from(openai_itself, tmp_path):
    from test_setting_sources import parsed

    from deep_research.service.setting_sources import resolve_settings

    assert resolve_settings(parsed(), {}, tmp_path).origins["prices"] == "genai-prices"
    own = parsed(
        "--set", 'prices={"gpt-4.1-mini": {"input_per_million": 1, "output_per_million": 2}}'
    )
    assert resolve_settings(own, {}, tmp_path).origins["prices"] == "--set prices"


def test_the_price_table_is_loaded_before_the_graphs_freeze_and_stays_out_of_full_collections():
    """A process that imports the graph has the table already, frozen with what it imported: a
    run's price look-up loads nothing the garbage collector walks again."""
    probe = (
        "import gc\n"
        "from genai_prices import types\n"
        "import deep_research.graph\n"
        "from deep_research.settings import listed_price\n"
        "listed_price('gpt-4o-mini', None)\n"
        "gc.collect()\n"
        "print(sum(isinstance(o, types.ModelInfo) for o in gc.get_objects()))\n"
    )
    assert printed(probe) == ["0"]  # 2,344 models (17,500 objects) walked at every full pass
