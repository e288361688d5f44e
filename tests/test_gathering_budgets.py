"""How a worker's share of the run's budgets is set: pure rules, tested with tables."""

from __future__ import annotations

import asyncio

import pytest

from deep_research.domain.budgets import budget_for, fair_share
from deep_research.domain.run_ledger import RunLedger
from deep_research.settings import Settings
from deep_research.state import SubTask, Usage
from deep_research.tools.run_resources import LiveRuns, worker_key


@pytest.mark.parametrize(
    ("left", "unfinished", "share"),
    [
        (30, 4, 8),  # equally, rounded up
        (18, 2, 9),  # two have finished: what they left goes to the other two
        (3, 4, 1),  # fewer than the workers: the first to draw get them
        (3, 1, 3),  # the last worker standing gets what is left
        (0, 3, 0),
    ],
)
def test_a_fair_share_is_an_equal_part_of_what_is_left_and_strands_nothing(left, unfinished, share):
    assert fair_share(left, unfinished) == share


@pytest.mark.parametrize("complexity", ["simple", "medium", "complex"])
def test_rounds_and_pages_come_from_settings_not_the_complexity(complexity):
    budget = budget_for(complexity, Settings(model="m"))
    assert (budget.max_rounds, budget.max_pages) == (6, None)  # pages: drawn from the run
    capped = budget_for(complexity, Settings(model="m", worker_max_rounds=3, max_pages=4))
    assert (capped.max_rounds, capped.max_pages) == (3, 4)


def test_the_ledger_books_a_page_as_it_starts_and_refuses_past_the_budget():
    settings = Settings(model="m", max_page_fetches=2)
    ledger = RunLedger(Usage(page_fetches=1))  # one read before a resume
    assert ledger.pages_left(settings) == 1
    assert ledger.take_page(settings) and not ledger.take_page(settings)
    assert ledger.spent.page_fetches == 2
    ledger.settle(Usage(page_fetches=2))  # the checkpoint says the same once the step is saved
    assert ledger.pages_left(settings) == 0


def worker(subtask: int, siblings=(1, 2, 3, 4)) -> dict:
    return {
        "run_id": "shares",
        "settings": Settings(model="m"),
        "round": 1,
        "subtask": SubTask(id=subtask, description="d", search_queries=["q"], complexity="simple"),
        "siblings": list(siblings),
    }


def test_a_share_is_redrawn_as_siblings_finish_and_a_relay_counts_those_to_come():
    async def scenario():
        runs = LiveRuns()
        run = runs.for_worker(worker(1))
        shares = [run.share(worker(1), 30)]  # 4 unfinished
        run.finished_workers.update({worker_key(worker(2)), worker_key(worker(3))})
        shares.append(run.share(worker(1), 18))  # 2 unfinished
        shares.append(run.share(worker(5, siblings=(5, 6, 7)), 9))  # a relay: 2 still to come
        await runs.release("shares")
        return shares

    assert asyncio.run(scenario()) == [8, 9, 3]
