"""Many runs in one process: each keeps its own budget, all share the endpoint's limits.

Drives the real graph through `ainvoke` against the stand-ins; the servers count what arrived.
"""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections import Counter

import pytest
from fresh_process import printed

from deep_research.graph import build_graph
from deep_research.state import SubTask, Usage
from deep_research.tools.run_resources import LiveRuns

from checkpoint_probe import saved_writes, wait_until
from stand_ins.loopback import Reply

QUESTION = "Topic {:02d}: how do log archivers compare"


def questions(n: int) -> list[str]:
    return [QUESTION.format(i) for i in range(n)]


def searches_per_question(search_server, asked: list[str]) -> Counter:
    counts: Counter = Counter()
    for query in search_server.queries:
        owner = [q for q in asked if query.startswith(q)]
        assert len(owner) == 1, query
        counts[owner[0]] += 1
    return counts


async def run_all(asked: list[str], settings: dict) -> tuple[list[dict], int]:
    runs = LiveRuns()
    graph = build_graph(runs=runs)
    outputs = await asyncio.gather(
        *(graph.ainvoke({"question": q, "settings": settings}) for q in asked)
    )
    return outputs, len(runs)


def test_12_concurrent_runs_keep_their_search_budgets_and_the_endpoint_limit(
    chat_server, search_server, monkeypatch
):
    monkeypatch.setenv("DEEP_RESEARCH_ENDPOINT_MAX_CONCURRENT_MODEL_CALLS", "8")
    chat_server.brain.subtasks = 4  # 8 first-round queries per run: more than its budget of 6
    chat_server.latency = search_server.latency = 0.01
    asked = questions(12)  # 48 workers wanting the model at once, above its limit of 8
    settings = {"max_search_calls": 6, "max_iterations": 2, "min_iterations": 1}
    outputs, live = asyncio.run(run_all(asked, settings))

    assert all("## Sources" in out["report"] for out in outputs)  # all 12 finish
    counts = searches_per_question(search_server, asked)
    assert set(counts) == set(asked)
    assert max(counts.values()) <= 6  # searches in flight count against the budget too
    for question, output in zip(asked, outputs, strict=True):
        assert output["usage"].search_calls == counts[question]
    assert chat_server.peak_concurrency <= 8
    assert live == 0  # every run released its resources when it ended


def test_more_runs_than_the_old_cache_of_16_share_nothing(chat_server, search_server):
    chat_server.brain.shared_query = True  # "{q} overview": one cache entry per run, not across
    asked = questions(20)
    outputs, _ = asyncio.run(run_all(asked, {"max_iterations": 1, "min_iterations": 1}))
    counts = searches_per_question(search_server, asked)
    # 3 subtasks x 2 own queries + the shared overview once: the cache of each run held
    assert set(counts.values()) == {7}
    assert all(out["usage"].search_cache_hits == 2 for out in outputs)


def test_a_failed_run_and_a_paused_run_release_their_resources(chat_server, search_server):
    chat_server.fault = lambda number, body: Reply(
        400, {"error": {"message": "bad model", "type": "invalid_request_error"}}
    )

    async def scenario():
        runs = LiveRuns()
        graph = build_graph(runs=runs)
        with pytest.raises(Exception, match="bad model"):
            await graph.ainvoke({"question": "q", "settings": {"structured_output": "json_schema"}})
        return len(runs)

    assert asyncio.run(scenario()) == 0


def test_the_ledger_counts_a_resumed_workers_own_spending_once():
    async def scenario():
        dispatched = Usage(search_calls=2)
        worker = {
            "run_id": "r",
            "settings": {"max_search_calls": 5},
            "spent": dispatched,
            "usage": Usage(search_calls=2),  # what its finished steps cost before the crash
            "round": 1,
            "subtask": SubTask(id=1, description="a", search_queries=["a"], complexity="simple"),
        }
        from deep_research.settings import Settings

        worker["settings"] = Settings(max_search_calls=5)
        runs = LiveRuns()
        run = runs.for_worker(worker)
        runs.for_worker(worker)  # a later step of the same worker adds nothing
        runs.for_worker(
            {
                **worker,
                "subtask": SubTask(
                    id=2, description="b", search_queries=["b"], complexity="simple"
                ),
                "usage": Usage(search_calls=1),
            }
        )
        joined = run.spent.search_calls
        parent = runs.for_step({"run_id": "r", "settings": worker["settings"], "usage": Usage()})
        settled = parent.spent.search_calls
        await runs.release("r")
        assert len(runs) == 0
        return joined, settled

    assert asyncio.run(scenario()) == (2 + 2 + 1, 0)


def test_a_429_with_retry_after_pauses_the_whole_endpoint(
    chat_server, search_server, fresh_process
):
    arrivals: list[float] = []
    loop_time = []

    def first_is_rate_limited(number, body):
        import time

        arrivals.append(time.monotonic())
        if number == 1:
            return Reply(429, {"error": {"message": "slow down"}}, headers={"retry-after": "1"})
        return None

    chat_server.fault = first_is_rate_limited

    async def scenario():
        graph = build_graph()
        await graph.ainvoke(
            {"question": "q", "settings": {"max_iterations": 1, "min_iterations": 1}}
        )
        gates = fresh_process.gates.all()
        loop_time.append(asyncio.get_running_loop().time())
        return {name: gate.rate_limited for name, gate in gates.items()}

    seen = asyncio.run(scenario())
    assert sum(seen.values()) == 1
    assert arrivals[1] - arrivals[0] >= 0.9  # the retry (and everything else) waited it out


def test_tokens_per_minute_are_reserved_on_the_estimate_and_charged_as_reported():
    from deep_research.tools.endpoint_limits import Gates, Limits

    async def scenario():
        gate = Gates().get("test:tpm", Limits(max_in_flight=4, tokens_per_minute=1000))
        async with gate.call(400):
            pass
        async with gate.call(400):
            pass
        full_after_estimates = not gate._tokens.has_capacity(400)
        gate.reported(1200)  # the server counted 400 more than we reserved
        await asyncio.sleep(0)
        return full_after_estimates, gate._reserved

    full, reserved = asyncio.run(scenario())
    assert full and reserved == 1200


START_IN_A_SUBPROCESS = """
import asyncio, json, sys
from deep_research.cli.runner import Research, execute
from deep_research.service.admission import Admitted, Operator
from deep_research.settings import Settings

class Quiet:
    def event(self, event): pass
    def note(self, text): pass

settings = Settings.model_validate(json.loads(sys.argv[2]))
asked = Research("t", admitted=Admitted("Compare zstd and xz", settings))
asyncio.run(execute(target=sys.argv[1], asked=asked, operator=Operator.of(settings, strict=True),
    progress=Quiet(), answer=lambda value: {"action": "approve"}))
"""


def _saved_worker_results(db: str) -> int:
    """How many worker results the parent graph's checkpoint holds as pending writes."""
    import sqlite3

    try:
        with sqlite3.connect(db) as connection:
            query = "SELECT count(*) FROM writes WHERE checkpoint_ns = '' AND channel = ?"
            return connection.execute(query, ("worker_results",)).fetchone()[0]
    except sqlite3.OperationalError:  # the store or its tables do not exist yet
        return 0


class Quiet:
    def event(self, event):
        pass

    def note(self, text):
        pass


def test_a_resumed_fan_out_counts_the_searches_its_finished_workers_made(
    chat_server, search_server, tmp_path
):
    """Killed while one of four workers searches and the others have finished: on resume, the
    finished workers' searches (saved as pending writes, not yet in the run's usage) count."""
    import json
    import os
    import signal
    import subprocess
    import sys
    import threading
    from pathlib import Path

    from deep_research.cli.runner import Research, execute
    from deep_research.service.admission import Operator

    hold, held = threading.Event(), threading.Event()
    chat_server.brain.subtasks = 4

    arrivals: list[str] = []  # appended as each search arrives (list.append is thread-safe)

    def hold_the_fifth_search(number, body):
        arrivals.append(body["query"])
        if len(arrivals) == 5:  # two workers have sent their 2 queries each; a third searches
            held.set()
            hold.wait(30)
        return None

    search_server.fault = hold_the_fifth_search
    db = str(tmp_path / "runs.sqlite")
    settings = {"max_workers": 2, "max_search_calls": 5, "max_iterations": 1, "min_iterations": 1}
    root = Path(__file__).resolve().parents[1]
    process = subprocess.Popen(
        [sys.executable, "-c", START_IN_A_SUBPROCESS, db, json.dumps(settings)], cwd=root
    )
    try:
        assert held.wait(60), "the third worker never searched"
        # Every worker but the held one finishes and is saved: the two that searched, and the
        # fourth, which finds the run's search budget taken (the held search counts) and stops.
        wait_until(
            lambda: saved_writes(db, "worker_results", ["t"], latest_only=True) >= 3,
            "three workers' results saved",
        )
        os.kill(process.pid, signal.SIGKILL)
        process.wait(10)
    finally:
        hold.set()
        if process.poll() is None:
            process.kill()
    before = len(arrivals)  # searches that reached the server, the held one included
    _, output, _ = asyncio.run(
        execute(
            target=db,
            asked=Research("t"),
            operator=Operator(),
            progress=Quiet(),
            answer=lambda value: {"action": "approve"},
        )
    )
    after = len(arrivals) - before
    assert before == 5
    # Which worker was held depends on timing. Its cycle's searches never reached a saved step
    # (the held one, and a sibling query of the same cycle answered meanwhile); every other
    # search did. The resumed run counts the saved ones and sends exactly what the budget has
    # left, which is what was in flight; without that it would send more.
    held_worker = arrivals[4].removesuffix(" data")
    in_flight = sum(query.removesuffix(" data") == held_worker for query in arrivals[:5])
    assert after == in_flight
    assert output["usage"].search_calls == 5


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after-ms": "1500"}, 1.5),
        ({"retry-after": "3"}, 3.0),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),  # a date in the past
        ({"retry-after": "soon"}, 1.0),
        ({}, 1.0),
        ({"retry-after": "100000"}, 120.0),
    ],
)
def test_retry_after_is_read_as_the_openai_sdk_reads_it(headers, seconds):
    import httpx

    from deep_research.tools.endpoint_limits import retry_after_seconds

    assert retry_after_seconds(httpx.Headers(headers)) == pytest.approx(seconds)


def test_a_bad_limit_in_the_environment_names_the_variable(monkeypatch):
    from deep_research.tools.endpoint_limits import BadLimit, Limits

    monkeypatch.setenv("DEEP_RESEARCH_ENDPOINT_MODEL_CALLS_PER_MINUTE", "lots")
    with pytest.raises(BadLimit, match="DEEP_RESEARCH_ENDPOINT_MODEL_CALLS_PER_MINUTE='lots'"):
        Limits.for_models()
    monkeypatch.setenv("DEEP_RESEARCH_ENDPOINT_MODEL_CALLS_PER_MINUTE", "600")
    monkeypatch.setenv("DEEP_RESEARCH_ENDPOINT_MAX_CONCURRENT_MODEL_CALLS", "4")
    assert Limits.for_models() == Limits(4, 600.0, None)


def test_process_wide_limits_have_names_no_setting_can_take_and_old_names_still_work(
    monkeypatch,
):
    """`DEEP_RESEARCH_<SETTING>` sets one run; `DEEP_RESEARCH_ENDPOINT_<LIMIT>` the process."""
    from deep_research.settings import Settings
    from deep_research.tools.endpoint_limits import PREFIX, VARIABLES, Limits

    assert not [name for name in Settings.model_fields if name.startswith("endpoint_")]
    assert all(name.startswith(PREFIX) for name, _ in VARIABLES.values())
    monkeypatch.setenv("DEEP_RESEARCH_MAX_MODEL_CONCURRENCY", "3")
    monkeypatch.setenv("DEEP_RESEARCH_MODEL_TPM", "9000")
    monkeypatch.setenv("DEEP_RESEARCH_SEARCH_RPM", "60")
    with pytest.warns(FutureWarning) as warned:
        assert Limits.for_models() == Limits(3, None, 9000.0)
        assert Limits.for_search() == Limits(32, 60.0)
    assert [str(w.message).split(": set ")[0] for w in warned] == [
        "DEEP_RESEARCH_MAX_MODEL_CONCURRENCY",
        "DEEP_RESEARCH_MODEL_TPM",
        "DEEP_RESEARCH_SEARCH_RPM",
    ]
    assert "set DEEP_RESEARCH_ENDPOINT_MODEL_TOKENS_PER_MINUTE" in str(warned[1].message)
    monkeypatch.delenv("DEEP_RESEARCH_MODEL_TPM")
    monkeypatch.setenv("DEEP_RESEARCH_ENDPOINT_MAX_CONCURRENT_MODEL_CALLS", "5")  # the new wins
    assert Limits.for_models().max_in_flight == 5


def test_a_process_that_imports_the_graph_collects_its_young_objects_less_often():
    """At CPython's 700, a batch of 64 runs walked its old generation whole 44 times; a process
    that asked for more (or for none) keeps what it asked for."""
    probe = (
        "import gc\n"
        "import deep_research.graph\n"
        "from deep_research.tools.process_wide import built_for_good\n"
        "print(gc.get_threshold())\n"
        "for asked in ((50_000, 5, 5), (0, 10, 10)):\n"
        "    gc.set_threshold(*asked)\n"
        "    built_for_good()\n"
        "    print(gc.get_threshold())\n"
    )
    assert printed(probe) == ["(10000, 10, 10)", "(50000, 5, 5)", "(0, 10, 10)"]


def test_a_finished_runs_page_reader_and_what_it_read_go_without_a_collection(
    chat_server, search_server, monkeypatch
):
    from deep_research.tools.search import pages

    readers = []
    built = pages.PageFetcher.__init__

    def keep_a_weak_reference(self, *args, **kwargs):
        built(self, *args, **kwargs)
        readers.append(weakref.ref(self))

    monkeypatch.setattr(pages.PageFetcher, "__init__", keep_a_weak_reference)
    chat_server.latency = search_server.latency = 0.01
    gc.collect()
    gc.disable()  # only reference counts free anything now
    try:
        outputs, live = asyncio.run(run_all(questions(2), {"max_iterations": 1}))
        assert all(out["report"] for out in outputs) and live == 0
        assert len(readers) == 2  # one reader per run
        assert [reader() for reader in readers] == [None, None]  # a cycle would keep them
    finally:
        gc.enable()
