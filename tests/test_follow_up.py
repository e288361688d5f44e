"""`deep-research ask THREAD "question"`: a follow-up is a new run written from the first run's
evidence first; it searches only for what the review finds missing, never again for what the
first run found (the real CLI, the real clients, the stand-in servers)."""

from __future__ import annotations

import re

from deep_research.cli.main import main
from deep_research.graph.routes import route_after_plan
from deep_research.nodes.follow_up import carried_results, prior_plan
from deep_research.settings import Settings
from deep_research.state import SourceEvidence, WorkerResult

QUESTION = "Compare zstd and xz for log archives"
FOLLOW_UP = "Which of the two decompresses faster?"


def first_run(db: str, tmp_path, rounds: int) -> str:
    """A finished first run (thread `first`); returns its report."""
    report = tmp_path / "first.md"
    flags = ["--max-iterations", str(rounds), "--min-iterations", str(rounds)]
    store = ["--checkpoint-db", db, "--quiet", "--thread-id", "first", "--output", str(report)]
    assert main(["run", QUESTION, *flags, *store]) == 0
    return report.read_text()


def ask(db: str, tmp_path) -> str:
    """The follow-up (thread `second`); returns its report."""
    report = tmp_path / "second.md"
    store = ["--checkpoint-db", db, "--quiet", "--thread-id", "second", "--output", str(report)]
    assert main(["ask", "first", FOLLOW_UP, *store]) == 0
    return report.read_text()


def test_a_follow_up_is_written_from_the_first_runs_evidence_without_a_search(
    chat_server, search_server, tmp_path
):
    db = str(tmp_path / "runs.sqlite")
    first_run(db, tmp_path, rounds=1)
    searched = len(search_server.searches)
    planned = chat_server.brain.calls["TaskPlan"]
    report = ask(db, tmp_path)
    assert len(search_server.searches) == searched  # everything came from the first run
    assert chat_server.brain.calls["TaskPlan"] == planned  # no new plan either
    assert re.search(r"\[\d+\]", report) and "https://example.com/" in report


def test_a_follow_up_researches_only_what_is_missing(chat_server, search_server, tmp_path):
    db = str(tmp_path / "runs.sqlite")
    first_run(db, tmp_path, rounds=2)
    before = set(search_server.queries)
    count = len(search_server.queries)
    ask(db, tmp_path)
    new = search_server.queries[count:]
    assert new, "the follow-up's gap round searched nothing"
    assert not set(new) & before  # nothing the first run searched is searched again
    assert all("gap" in query for query in new)  # only the review's gaps


def test_a_follow_up_of_an_unknown_or_unfinished_run_is_refused(chat_server, tmp_path, capsys):
    db = str(tmp_path / "runs.sqlite")
    assert main(["ask", "nothing-here", FOLLOW_UP, "--checkpoint-db", db]) == 2
    assert "no checkpoint store" in capsys.readouterr().err


def test_a_follow_up_goes_from_its_plan_straight_to_writing():
    evidence = SourceEvidence(id=1, url="https://example.com/a", title="A", excerpt="zstd is fast")
    prior = [
        WorkerResult(subtask_id=1, round=1, description="speed", sources=[evidence]),
        WorkerResult(subtask_id=4, round=2, description="memory", sources=[evidence]),
        WorkerResult(subtask_id=2, round=1, description="failed", status="failed"),
    ]
    carried = carried_results(prior)
    assert [(r.subtask_id, r.round) for r in carried] == [(1, 1), (4, 1)]
    assert [t.description for t in prior_plan(carried).subtasks] == ["speed", "memory"]
    state = {"settings": Settings(approve_plan=True), "worker_results": carried}
    assert route_after_plan(state) == "synthesize"  # no approval, no research first
    assert route_after_plan({**state, "worker_results": []}) == "approve_plan"


def test_a_follow_up_does_not_show_the_first_runs_plan_as_its_own(
    chat_server, search_server, tmp_path, capsys
):
    from deep_research.cli.live import ProgressModel, render_plan
    from deep_research.tools.events import PlanMade, PlannedSubtask

    db = str(tmp_path / "runs.sqlite")
    first_run(db, tmp_path, rounds=1)
    capsys.readouterr()
    store = ["--checkpoint-db", db, "--thread-id", "second", "--output", str(tmp_path / "s.md")]
    assert main(["ask", "first", FOLLOW_UP, *store]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert not [line for line in lines if line.startswith("plan:")]
    said = next(line for line in lines if line.startswith("follow-up:"))
    assert "earlier run's evidence (3 subtasks it researched: 1. Compare zstd" in said
    model = ProgressModel()
    task = PlannedSubtask(id=1, description="speed", complexity="simple")
    model.apply(PlanMade(query_type="breadth_first", subtasks=[task], follow_up=True))
    shown = render_plan(model).renderables[0].plain
    assert shown.startswith("Follow-up: writing first from the earlier run") and "Plan" not in shown
