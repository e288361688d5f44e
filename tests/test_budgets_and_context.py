"""Cost, run budgets and prompt sizes: correctness, with long pages and many workers."""

from __future__ import annotations

import asyncio
import json

import pytest

from deep_research.domain.budgets import cost_usd, run_budget_spent
from deep_research.domain.context import clip, estimate_tokens, pack, reply_reserve
from deep_research.graph import graph
from deep_research.settings import ModelPrice, Settings
from deep_research.state import Usage

ONE_ROUND = {"model_retries": 0, "search_retries": 0, "max_iterations": 1, "min_iterations": 1}


def research(question="Compare zstd and xz", **settings):
    return asyncio.run(graph.ainvoke({"question": question}, context={**ONE_ROUND, **settings}))


def test_token_estimate_is_conservative_for_latin_and_cjk():
    english = "The quick brown fox jumps over the lazy dog. " * 20  # ~ 200 real tokens
    assert estimate_tokens(english) >= len(english) / 4
    chinese = "中文文本的估计应当保守" * 10
    assert estimate_tokens(chinese) >= len(chinese)  # at least one token per character
    assert estimate_tokens("") == 0


def test_clip_and_pack_stay_within_their_limits():
    text = "word " * 1000
    assert estimate_tokens(clip(text, 100)) <= 100 and clip(text, 100).endswith("…")
    assert clip("short", 100) == "short"
    blocks = [f"block {n} " * 30 for n in range(10)]
    packed = pack(blocks, 300)
    assert estimate_tokens(packed) <= 300 and packed.startswith("block 0")


def test_cost_is_unknown_without_a_price_and_summed_with_one():
    usage = Usage.of_call("planner", 1_000_000, 100_000) + Usage.of_call("writer", 0, 1_000_000)
    assert cost_usd(usage, Settings(model="m")) is None
    priced = Settings(
        model="m", prices={"m": ModelPrice(input_per_million=2, output_per_million=8)}
    )
    assert cost_usd(usage, priced) == pytest.approx(2 + 0.8 + 8)
    assert cost_usd(Usage(), Settings()) == 0.0
    mixed = priced.model_copy(update={"writer_model": "other"})
    assert cost_usd(usage, mixed) is None


@pytest.mark.parametrize(
    ("usage", "settings", "spent"),
    [
        (Usage(input_tokens=60, output_tokens=40), Settings(max_total_tokens=100), True),
        (Usage(input_tokens=60, output_tokens=39), Settings(max_total_tokens=100), False),
        (Usage(search_calls=3), Settings(max_search_calls=3), True),
        (Usage(search_calls=99, input_tokens=10**9), Settings(), False),
        (
            Usage.of_call("writer", 0, 1_000_000),
            Settings(
                model="m",
                max_cost_usd=1,
                prices={"m": ModelPrice(input_per_million=1, output_per_million=1)},
            ),
            True,
        ),
    ],
)
def test_run_budget_spent(usage, settings, spent):
    assert run_budget_spent(usage, settings) is spent


def test_no_prompt_exceeds_max_context_tokens_with_long_pages_and_many_workers(
    chat_server, search_server
):
    chat_server.brain.subtasks = 20
    search_server.page_text = lambda query, n: f"{query} page {n}: " + "long evidence text " * 3000
    limit = 8_000
    result = research(
        max_subtasks=20,
        max_context_tokens=limit,
        max_iterations=2,
        min_iterations=2,
        max_workers=20,
    )
    assert result["sources"] and result["iteration"] == 2
    for request in chat_server.chat_requests:
        body = request["body"]
        sent = "".join(str(m["content"]) for m in body["messages"])
        sent += json.dumps(body.get("response_format") or body.get("tools") or "")
        assert estimate_tokens(sent) <= limit - reply_reserve(limit)


def test_prompt_tokens_per_round_stay_flat(chat_server, search_server):
    chat_server.brain.scores = [10, 20, 30, 40]
    research(max_iterations=4, min_iterations=4, diminishing_returns=False)
    texts = [json.dumps(r["body"]) for r in chat_server.chat_requests]
    sections = [len(text) for text in texts if "Section: " in text]
    first_review = next(n for n, text in enumerate(texts) if "QualityAssessment" in text)
    first = sum("Section: " in text for text in texts[:first_review])
    assert len(sections) == first + 3  # each gap round wrote one section: never all again
    assert max(sections) < 3 * min(sections)  # no section's prompt grows with the rounds


def test_search_budget_stops_new_work_and_the_run(chat_server, search_server):
    chat_server.brain.subtasks = 4
    result = research(max_search_calls=3, max_workers=1, max_iterations=3, min_iterations=1)
    assert result["stop_reason"] == "budget" and result["iteration"] == 1
    assert 3 <= result["usage"].search_calls <= 3 + 2  # overshoot: one worker's queries in flight
    assert result["usage"].search_calls == len(search_server.requests)


def test_token_budget_stops_at_the_first_review(chat_server, search_server):
    result = research(max_total_tokens=500, max_iterations=3, min_iterations=1)
    assert result["stop_reason"] == "budget" and result["iteration"] == 1


def test_dollar_budget_and_cost_in_the_output(chat_server, search_server):
    prices = {"stand-in-model": {"input_per_million": 1000, "output_per_million": 1000}}
    result = research(max_cost_usd=0.5, prices=prices, max_iterations=3, min_iterations=1)
    assert result["stop_reason"] == "budget"
    assert result["cost_usd"] == pytest.approx(result["usage"].total_tokens * 1000 / 1e6)
    assert research(max_iterations=1)["cost_usd"] is None  # no price: unknown, not zero
