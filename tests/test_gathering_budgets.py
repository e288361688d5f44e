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
    ("left", "at_start", "sharing", "unfinished", "later", "share"),
    [
        (30, 30, 4, 4, 0, 8),  # the last round: all of it, equally, rounded up
        (30, 30, 4, 4, 3, 5),  # 12 kept for a gap round's 3 workers; 18 among 4
        (18, 30, 4, 4, 3, 2),  # the round has spent 12 of its 18
        (12, 30, 4, 2, 3, 0),  # the round's part is spent: the gap round's stays
        (3, 30, 4, 1, 0, 3),  # the last worker standing gets what is left
        (3, 7, 4, 4, 0, 1),  # fewer than the workers: the first to draw get them
        (0, 30, 4, 1, 0, 0),
        (5, 5, 1, 1, 3, 2),  # one worker, three to come: 3 of the 5 are theirs (15 // 4)
    ],
)
def test_a_fair_share_keeps_the_gap_rounds_part_and_strands_nothing(
    left, at_start, sharing, unfinished, later, share
):
    got = fair_share(left, at_start, sharing=sharing, unfinished=unfinished, later=later)
    assert got == share


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


def worker(subtask: int, round_: int = 1, siblings=(1, 2, 3, 4)) -> dict:
    return {
        "run_id": "shares",
        "settings": Settings(model="m", max_iterations=3, max_supplementary_tasks=3),
        "round": round_,
        "subtask": SubTask(id=subtask, description="d", search_queries=["q"], complexity="simple"),
        "siblings": list(siblings),
    }


def test_a_share_is_redrawn_as_siblings_finish_and_the_last_round_keeps_nothing_back():
    async def scenario():
        runs = LiveRuns()
        run = runs.for_worker(worker(1))
        shares = [run.share(worker(1), 30, 30)]  # 4 unfinished, 3 later: (30 - 12) / 4
        run.finished_workers.update({worker_key(worker(2)), worker_key(worker(3))})
        shares.append(run.share(worker(1), 18, 30))  # (18 - 12) / 2
        last = worker(1, round_=3, siblings=(1,))
        shares.append(run.share(last, 5, 5))  # the last round: everything
        runs.release("shares")
        return shares

    assert asyncio.run(scenario()) == [5, 3, 5]
