"""Planning rules: the question taken in, the plan shaped by its route, budgets, worker queries."""

from __future__ import annotations

import pytest

from deep_research.domain.budgets import budget_for, budget_spent, queries_left
from deep_research.nodes.planning import BadQuestion, clean_question, shape_plan
from deep_research.nodes.reviewing import shape_supplementary
from deep_research.nodes.worker_steps import fresh_queries, rank_hits
from deep_research.settings import Settings
from deep_research.state import SearchHit, SubTask, TaskPlan


def task(description, **fields):
    """A subtask with what the model must supply filled in where the test does not care."""
    fields.setdefault("search_queries", [description])
    fields.setdefault("complexity", "medium")
    return SubTask(description=description, **fields)


def plan(n, query_type="breadth_first", **fields):
    subtasks = [task(f"task {i}", search_queries=[f"q{i}"], **fields) for i in range(n)]
    return TaskPlan(query_type=query_type, subtasks=subtasks, recommended_worker_count=n)


def test_plan_is_capped_and_renumbered():
    shaped = shape_plan(plan(30), "question", Settings(max_subtasks=8))
    assert [t.id for t in shaped.subtasks] == list(range(1, 9))
    assert shaped.recommended_worker_count == 8


def test_empty_plan_still_researches_the_question():
    blank = TaskPlan(query_type="breadth_first", subtasks=[task(" ")], recommended_worker_count=1)
    shaped = shape_plan(blank, "Why is the sky blue?", Settings())
    assert len(shaped.subtasks) == 1
    assert shaped.subtasks[0].description == "Why is the sky blue?"
    assert shaped.subtasks[0].search_queries == ["Why is the sky blue?"]


def test_blank_and_duplicate_subtasks_are_dropped_and_queries_cleaned():
    tasks = [
        task("  ", search_queries=["x"]),
        task("Same  thing", search_queries=["", "  ", "a", "A"]),
        task("same thing", search_queries=["b"]),
    ]
    shaped = shape_plan(
        TaskPlan(query_type="breadth_first", subtasks=tasks, recommended_worker_count=1),
        "q",
        Settings(),
    )
    assert [t.description for t in shaped.subtasks] == ["Same thing"]
    assert shaped.subtasks[0].search_queries == ["a"]


def test_straightforward_gets_one_small_worker():
    shaped = shape_plan(plan(4, "straightforward", complexity="complex"), "q", Settings())
    assert len(shaped.subtasks) == 1
    assert shaped.subtasks[0].complexity == "simple"
    assert budget_for("simple", Settings()).max_queries == 3


def test_depth_first_keeps_its_perspectives():
    tasks = [task(f"core question, {p} view", perspective=p) for p in ("cost", "risk")]
    shaped = shape_plan(
        TaskPlan(query_type="depth_first", subtasks=tasks, recommended_worker_count=1),
        "q",
        Settings(),
    )
    assert [t.perspective for t in shaped.subtasks] == ["cost", "risk"]


@pytest.mark.parametrize(
    ("complexity", "settings", "expected"),
    [
        ("simple", Settings(), (3, 1)),
        ("medium", Settings(), (5, 2)),
        ("complex", Settings(), (8, 3)),
        ("complex", Settings(max_queries=2), (2, 3)),
        ("simple", Settings(max_cycles=4), (3, 4)),
    ],
)
def test_budget_by_complexity_and_overrides(complexity, settings, expected):
    budget = budget_for(complexity, settings)
    assert (budget.max_queries, budget.max_cycles) == expected


def test_budget_spent():
    budget = budget_for("medium", Settings())
    assert not budget_spent(budget, sent=2, cycles=1)
    assert budget_spent(budget, sent=5, cycles=1)
    assert budget_spent(budget, sent=1, cycles=2)
    assert queries_left(budget, 7) == 0


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("  What is\tzstd?\x00\x07 ", "What is zstd?"),
        ("什么是\u200bzstd？", "什么是 zstd？"),
        ("line one\nline two", "line one\nline two"),
    ],
)
def test_clean_question(question, expected):
    assert clean_question(question) == expected


@pytest.mark.parametrize(
    ("question", "message"),
    [("", "empty"), ("  \n\t ", "empty"), ("x" * 5000, "limit is 4000"), (42, "must be text")],
)
def test_bad_questions_are_refused_with_the_cause(question, message):
    with pytest.raises(BadQuestion, match=message):
        clean_question(question)


def test_fresh_queries_never_empty_or_repeated_and_within_budget():
    sent = ["zstd speed"]
    candidates = ["", "  ", "ZSTD  speed", "xz ratio", "xz ratio", "brotli", "lz4"]
    assert fresh_queries(candidates, sent, limit=2) == ["xz ratio", "brotli"]
    assert fresh_queries(candidates, sent, limit=0) == []


def test_rank_hits_dedupes_by_url_and_ranks():
    hits = [
        SearchHit(url="https://a.org/x/", content="a", score=0.2),
        SearchHit(url="https://A.org/x", content="a better", score=0.9),
        SearchHit(url="https://b.org", content="", score=1.0),
        SearchHit(url="https://c.org", content="c", score=0.5),
    ]
    ranked = rank_hits(hits)
    assert [h.url for h in ranked] == ["https://A.org/x", "https://c.org", "https://b.org"]


def test_supplementary_tasks_are_new_capped_and_numbered_after_the_plan():
    researched = [task(id=1, description="a"), task(id=2, description="b")]
    proposed = [
        task(id=1, description="A"),
        task("c", search_queries=[""]),
        task("d"),
        task("e"),
    ]
    fresh = shape_supplementary(proposed, researched, limit=2)
    assert [(t.id, t.description, t.search_queries) for t in fresh] == [
        (3, "c", ["c"]),
        (4, "d", ["d"]),
    ]


def test_the_search_cache_sends_a_query_once_even_when_asked_at_the_same_moment():
    import asyncio

    from deep_research.tools.search_cache import SearchCache, SharedSearchFailure

    class SlowBackend:
        def __init__(self):
            self.calls = []

        async def search(self, query, max_results):
            self.calls.append(query)
            await asyncio.sleep(0.05)
            if query == "boom":
                raise OSError("down")
            return [SearchHit(url=f"https://x.org/{query}")]

    async def scenario():
        backend = SlowBackend()
        cache = SearchCache(backend)
        together = await asyncio.gather(
            cache.search("zstd  Speed", 5), cache.search("ZSTD speed", 5), cache.search("xz", 5)
        )
        owner, waiter = await asyncio.gather(
            cache.search("boom", 5), cache.search("boom", 5), return_exceptions=True
        )
        assert isinstance(owner, OSError) and isinstance(waiter, SharedSearchFailure)
        with pytest.raises(OSError, match="down"):  # a failure is not cached: asked again
            await cache.search("boom", 5)
        return backend.calls, together

    calls, together = asyncio.run(scenario())
    assert calls == ["zstd  Speed", "xz", "boom", "boom"]
    assert [cached for _, cached in together] == [False, True, False]
    assert together[0][0] == together[1][0]
