"""The run's spending, live: its ledger goes out as `RunSpent` events while workers call (the
checkpoint's figures move only per finished step), and the web app's run page shows whichever
has counted more. The real graph against the chat and search stand-ins."""

from __future__ import annotations

import asyncio
import time

from deep_research.service.event_log import Record
from deep_research.state import Usage
from deep_research.tools import run_resources
from deep_research.tools.events import ReportWritten, RunSpent, WorkerDone, WorkerSearched
from deep_research.web.view import add_checkpoint, fold

from graph_stream import streamed_run

QUESTION = "Compare zstd and xz for log archives"
ONE_ROUND = {"max_iterations": 1, "min_iterations": 1, "model_retries": 0, "search_retries": 0}


def test_the_ledger_goes_out_while_workers_call_and_ends_at_the_runs_total(
    chat_server, search_server, monkeypatch
):
    monkeypatch.setattr(run_resources, "SPENT_EVERY", 0.0)  # every answered call: one event
    values, events = asyncio.run(streamed_run(QUESTION, ONE_ROUND))
    kinds = [type(e) for e in events]
    spent = [e for e in events if isinstance(e, RunSpent)]
    first_worker, written = kinds.index(WorkerSearched), kinds.index(ReportWritten)
    during_workers = [e for e in events[first_worker:written] if isinstance(e, RunSpent)]
    assert during_workers and during_workers[-1].tokens > spent[0].tokens  # moved mid-round
    assert [e.tokens for e in spent] == sorted(e.tokens for e in spent)  # never backwards
    usage: Usage = values["usage"]
    last = spent[-1]
    assert (last.tokens, last.llm_calls, last.search_calls) == (
        usage.total_tokens,
        usage.llm_calls,
        usage.search_calls,
    )  # the live ledger and the checkpoint agree at the end, call for call


def test_spending_events_are_spaced_out(chat_server, search_server):
    began = time.monotonic()
    values, events = asyncio.run(streamed_run(QUESTION, ONE_ROUND))
    took = time.monotonic() - began
    spent = [e for e in events if isinstance(e, RunSpent)]
    assert spent and len(spent) <= 1 + took / run_resources.SPENT_EVERY
    assert len(spent) < values["usage"].llm_calls  # not one per call


def test_the_run_page_shows_whichever_has_counted_more():
    live = RunSpent(tokens=5000, llm_calls=7, search_calls=4, cost_usd=0.02)
    view = fold("t", [Record(1, "event", live.model_dump(mode="json"), 0.0)])
    assert view.usage == {"tokens": 5000, "searches": 4, "llm_calls": 7}
    behind = Usage.of_call("researcher", 1000, 200).model_copy(update={"search_calls": 2})
    add_checkpoint(view, {"usage": behind, "cost_usd": None})  # the checkpoint is a step behind
    assert view.usage == {"tokens": 5000, "searches": 4, "llm_calls": 7}
    assert view.cost_usd == 0.02
    ahead = Usage.of_call("writer", 9000, 1000).model_copy(update={"search_calls": 6})
    add_checkpoint(view, {"usage": ahead, "cost_usd": 0.05})  # the step ended: it caught up
    assert view.usage == {"tokens": 10000, "searches": 6, "llm_calls": 7}
    assert view.cost_usd == 0.05


def test_a_worker_whose_done_event_was_lost_shows_as_ended_from_the_checkpoint():
    """The server killed after a worker's result was saved and before its "done" reached the
    log: the resumed run never runs it again, so its row would say "searching" for good."""
    from deep_research.state import Finding, SourceEvidence, WorkerResult

    common = {"round": 1, "description": "aspect", "max_queries": 3, "max_cycles": 1}
    searching = WorkerSearched(subtask_id=1, queries_used=2, cycles_used=1, **common)
    done = WorkerDone(
        subtask_id=2, queries_used=1, cycles_used=1, status="partial", findings=1, sources=1,
        **common,
    )  # fmt: skip
    view = fold("t", [Record(n, "event", e.model_dump(mode="json"), 0.0) for n, e in
                      enumerate([searching, done], 1)])  # fmt: skip
    assert view.workers[(1, 1)].phase == "searched"
    saved = WorkerResult(
        subtask_id=1,
        description="aspect",
        findings=[Finding(claim="c", source_ids=[1])],
        sources=[SourceEvidence(id=1, url="https://a.example", title="A", excerpt="c")],
    )
    other = WorkerResult(subtask_id=2, status="ok", description="aspect")
    add_checkpoint(view, {"worker_results": [saved, other]})
    row = view.workers[(1, 1)]
    assert (row.phase, row.findings, row.sources, row.queries) == ("ok", 1, 1, "2/3")
    assert view.workers[(1, 2)].phase == "partial"  # its own "done" stands
    assert len(view.workers) == 2
