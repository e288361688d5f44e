"""The live terminal view: its model from events, its drawing as text, and the run summary."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from deep_research.cli.live import LiveProgress, ProgressModel, render
from deep_research.cli.summary import RunSummary, render_summary, summary_lines
from deep_research.tools.events import (
    CitationsChecked,
    GapsAnalyzed,
    PlanMade,
    PlannedSubtask,
    QualityScored,
    ReportWritten,
    RunDone,
    WorkerDone,
    WorkerSearched,
    emit,
    parse_event,
)

SUBTASKS = [
    PlannedSubtask(id=1, description="History of solid-state batteries", complexity="simple"),
    PlannedSubtask(
        id=2, description="Current energy density of commercial cells", complexity="medium"
    ),
    PlannedSubtask(id=3, description="Manufacturing cost outlook to 2030", complexity="complex"),
]


def budget(round_: int, subtask: PlannedSubtask, queries: int, cycles: int) -> dict:
    """What every worker event carries: the subtask and its budget use."""
    return {
        "round": round_,
        "subtask_id": subtask.id,
        "description": subtask.description,
        "queries_used": queries,
        "max_queries": 3,
        "cycles_used": cycles,
        "max_cycles": 2,
    }


def searched(round_: int, subtask: PlannedSubtask, queries: int, cycles: int) -> WorkerSearched:
    return WorkerSearched(**budget(round_, subtask, queries, cycles))


def finished(
    round_: int,
    subtask: PlannedSubtask,
    queries: int,
    cycles: int,
    status: str,
    findings: int,
    sources: int,
    error: str = "",
) -> WorkerDone:
    return WorkerDone(
        **budget(round_, subtask, queries, cycles),
        status=status,
        findings=findings,
        sources=sources,
        termination_reason="budget_spent" if status == "ok" else "model_error",
        error=error,
    )


GAP_TASK = PlannedSubtask(
    id=4, description="Safety record of pilot production lines", complexity="simple"
)

EVENTS = [
    PlanMade(query_type="breadth_first", subtasks=SUBTASKS),
    searched(1, SUBTASKS[0], 2, 1),
    searched(1, SUBTASKS[1], 3, 1),
    searched(1, SUBTASKS[2], 1, 1),
    finished(1, SUBTASKS[0], 2, 1, "ok", 4, 5),
    finished(1, SUBTASKS[1], 3, 2, "partial", 2, 3, "search timed out"),
    finished(1, SUBTASKS[2], 1, 1, "failed", 0, 0, "model returned no JSON"),
    ReportWritten(round=1, chars=5234),
    QualityScored(round=1, score=68.0, issues=["thin on costs"]),
    GapsAnalyzed(round=1, gaps=["safety"], tasks=[GAP_TASK.description]),
    searched(2, GAP_TASK, 2, 1),
    finished(2, GAP_TASK, 2, 1, "ok", 3, 4),
    ReportWritten(round=2, chars=6120),
    QualityScored(round=2, score=None, issues=["review failed"]),
    RunDone(stop_reason="max_iterations", sources=9, rounds=2),
]

SUMMARY = RunSummary(
    rounds=2,
    score=81.5,
    stop_reason="quality_reached",
    llm_calls=14,
    input_tokens=52310,
    output_tokens=8204,
    search_calls=9,
    cache_hits=3,
    wall_seconds=73.25,
    report_path="out/report.md",
)


def text_console() -> tuple[Console, io.StringIO]:
    """A console writing plain text to a buffer, as no terminal would."""
    buffer = io.StringIO()
    return Console(file=buffer, width=120, force_terminal=False, color_system=None), buffer


def as_text(renderable) -> str:
    """What a renderable looks like as plain text, 120 columns wide."""
    console, buffer = text_console()
    console.print(renderable)
    return buffer.getvalue()


def model_after(events: list) -> ProgressModel:
    """The model with every event applied in order."""
    model = ProgressModel()
    for event in events:
        model.apply(event)
    return model


def test_model_follows_the_run():
    model = model_after(EVENTS)
    assert model.query_type == "breadth_first"
    assert [n for n, _ in model.subtasks] == [1, 2, 3]
    assert not model.edited and model.fallback == ""
    assert sorted(model.workers) == [(1, 1), (1, 2), (1, 3), (2, 4)]
    failed = model.workers[(1, 3)]
    assert (failed.status, failed.findings, failed.error) == ("failed", 0, "model returned no JSON")
    partial = model.workers[(1, 2)]
    assert (partial.status, partial.cycles_used, partial.max_cycles) == ("partial", 2, 2)
    assert model.workers[(2, 4)].sources == 4
    assert model.rounds[1].score == 68.0 and model.rounds[1].gap_tasks == [GAP_TASK.description]
    assert model.rounds[2].scored and model.rounds[2].score is None
    assert model.rounds[2].gap_tasks is None
    assert (model.stop_reason, model.total_rounds, model.cited_sources) == ("max_iterations", 2, 9)


def test_searching_worker_has_no_counts_until_done():
    model = model_after(EVENTS[:2])
    row = model.workers[(1, 1)]
    assert (row.status, row.queries_used, row.findings, row.sources) == ("searching", 2, None, None)


def test_unknown_events_are_skipped_and_a_broken_known_one_is_an_error():
    for raw in [{"event": "telemetry"}, {"no": "kind"}, {"event": None}, "text", None]:
        assert parse_event(raw) is None
    with pytest.raises(ValueError, match="chars"):
        parse_event({"event": "report", "round": 1})


def test_every_event_travels_as_json_and_comes_back_as_itself():
    """What Studio and SDK clients read on the custom stream is each model's JSON, as is."""
    citations = CitationsChecked(
        checked=2, supported=1, precision=0.5, removed=1, rewritten=0, marked=1
    )
    for event in [*EVENTS, citations]:
        wire = json.loads(json.dumps(event.model_dump(mode="json")))
        assert wire["event"] == event.event and parse_event(wire) == event
    assert EVENTS[4].model_dump(mode="json")["phase"] == "done"


def test_emit_outside_a_graph_run_goes_nowhere():
    emit(ReportWritten(round=1, chars=3))  # a step called directly has no stream: no error


def test_edited_and_fallback_plans_are_marked():
    plan = {"query_type": "straightforward", "subtasks": SUBTASKS[:1]}
    text = as_text(render(model_after([PlanMade(**plan, fallback="planner returned no JSON")])))
    assert "fallback plan: planner returned no JSON" in text and "(edited)" not in text
    text = as_text(render(model_after([PlanMade(**plan, edited=True)])))
    assert "(edited)" in text and "fallback" not in text


def test_render_shows_plan_workers_rounds_and_stop_reason():
    text = as_text(render(model_after(EVENTS)))
    for description in [t.description for t in SUBTASKS] + [GAP_TASK.description]:
        assert description in text
    assert "breadth_first" in text
    assert "2/3" in text and "1/2" in text and "2/2" in text
    assert "failed" in text and "partial" in text and "model returned no JSON" in text
    assert "quality 68/100" in text and "quality unknown" in text
    assert f"gap analysis: {GAP_TASK.description}" in text
    assert "max_iterations" in text and "9 sources cited" in text


def test_gap_analysis_with_nothing_to_add():
    events = [GapsAnalyzed(round=1, gaps=[], tasks=[], error="bad JSON")]
    text = as_text(render(model_after(events)))
    assert "nothing more to research" in text and "gap analysis failed: bad JSON" in text


def test_long_descriptions_and_errors_are_truncated():
    long = PlannedSubtask(id=1, description="word " * 40, complexity="simple")
    event = finished(1, long, 1, 1, "failed", 0, 0, "trace " * 40)
    text = as_text(render(model_after([event])))
    assert "…" in text and "word " * 20 not in text


def test_live_progress_leaves_the_final_frame():
    console, buffer = text_console()
    with LiveProgress(console=console) as progress:
        progress.note("resuming thread abc")
        for event in EVENTS:
            progress.event(event)
        progress.note("[bold]as is[/bold]")
    progress.summary(SUMMARY)
    text = buffer.getvalue()
    assert text.startswith("resuming thread abc") and "[bold]as is[/bold]" in text
    assert "Done after 2 rounds: max_iterations (9 sources cited)\n" in text
    assert "model returned no JSON" in text and "quality 68/100" in text
    assert text.index("Done after") < text.index("Run summary")


def test_summary_shows_unknown_for_what_was_not_measured():
    text = as_text(render_summary(SUMMARY))
    assert "cost" in text and "unknown" in text
    lines = summary_lines(SUMMARY)
    assert "cost: unknown" in lines and "citation precision: unknown" in lines
    assert "quality: 82/100" in lines and "report: out/report.md" in lines
    assert "tokens: 52,310 in / 8,204 out" in lines
    assert "searches: 9 (3 cache hits)" in lines and "wall time: 73.2s" in lines


def test_summary_shows_measured_numbers():
    measured = RunSummary(
        **{**SUMMARY.__dict__, "citation_precision": 0.92, "cost_usd": 0.0412},
    )
    measured.score, measured.report_path = None, None
    lines = summary_lines(measured)
    assert "cost: $0.0412" in lines and "citation precision: 92%" in lines
    assert "quality: unknown" in lines and "report: stdout" in lines
    text = as_text(render_summary(measured))
    assert "$0.0412" in text and "92%" in text and "stdout" in text


def test_the_citation_check_gets_its_line() -> None:
    model = ProgressModel()
    model.apply(
        CitationsChecked(checked=12, supported=9, precision=0.75, removed=2, rewritten=1, marked=0)
    )
    assert "12 checked (0 by close match, 0 by the model), 9 supported (75%), 2 removed" in (
        model.citations
    )


def test_the_citation_line_says_what_settled_how_many_pairs() -> None:
    from deep_research.service.event_lines import describe

    event = parse_event(
        {
            "event": "citations",
            "checked": 12,
            "supported": 9,
            "precision": 0.75,
            "removed": 2,
            "rewritten": 1,
            "marked": 1,
            "by_method": {"lexical": 3, "model": 8, "fallback": 1},
            "rewrites_by_method": {"model": 1},
        }
    )
    line = describe(event)
    assert line == (
        "citations: 12 checked (3 by close match, 8 by the model, 1 without a verdict), "
        "9 supported (75%), 2 removed, 1 rewritten, 1 marked; "
        "1 rewrites checked (0 by close match, 1 by the model)"
    )
    model = ProgressModel()
    model.apply(event)
    assert model.citations == "Citations: " + line.removeprefix("citations: ")


def test_an_earlier_report_handed_back_is_said_in_progress_and_summary():
    from deep_research.service.event_lines import describe
    from deep_research.tools.events import EarlierReportKept

    line = describe(EarlierReportKept(round=1, score=71, last_round=3, last_score=46))
    assert line == "handing back the round 1 report (quality 71/100): round 3 scored 46/100"
    summary = RunSummary(
        rounds=3, score=71, stop_reason="declined", llm_calls=1, input_tokens=1,
        output_tokens=1, search_calls=1, cache_hits=0, wall_seconds=1.0, report_path=None,
        report_round=1,
    )  # fmt: skip
    assert "quality: 71/100 (the report of round 1)" in summary_lines(summary)
