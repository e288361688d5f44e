"""The stop rules and routes, as pure functions: a table of states, no model involved."""

from __future__ import annotations

import pytest

from deep_research.domain.best_report import best_so_far, handed_back
from deep_research.domain.stop_rules import declined, plateaued, stop_reason
from deep_research.graph.routes import (
    dispatch_research,
    dispatch_supplementary,
    route_after_act,
    route_after_decide,
    route_after_quality,
    route_after_synthesis,
)
from deep_research.settings import Settings
from deep_research.state import (
    GapAnalysis,
    QualityAssessment,
    ScoredReport,
    SubTask,
    TaskPlan,
    Usage,
)


def task(description, **fields):
    """A subtask with what the model must supply filled in where the test does not care."""
    fields.setdefault("search_queries", [description])
    fields.setdefault("complexity", "medium")
    return SubTask(description=description, **fields)


def assessment(score, worthwhile=True):
    """A review whose six dimensions all equal its score."""
    names = ("completeness", "accuracy", "depth", "structure", "readability", "source_quality")
    return QualityAssessment(
        score=score,
        dimensions=dict.fromkeys(names, score),
        issues=[],
        another_round_worthwhile=worthwhile,
    )


def review(history, *, worthwhile=True, rounds=None, usage=None):
    """A state right after a quality check, with `history` the scores so far."""
    latest = history[-1]
    return {
        "iteration": rounds if rounds is not None else len(history),
        "quality_history": history,
        "quality": None if latest is None else assessment(latest, worthwhile),
        "usage": usage or Usage(),
    }


def rules(review_state, settings):
    """The stop rules on the plain values of a state right after a review."""
    return stop_reason(
        review_state["iteration"],
        review_state["quality_history"],
        review_state["quality"],
        review_state["usage"],
        settings,
    )


DEFAULTS = Settings()  # min 2, max 5, threshold 80, plateau 2 rounds below 5 points


@pytest.mark.parametrize(
    ("state", "settings", "expected"),
    [
        # max_iterations first, even when everything else would go on
        (review([10, 20, 40, 60, 70]), DEFAULTS, "max_iterations"),
        (review([95]), Settings(max_iterations=1, min_iterations=1), "max_iterations"),
        # budget next
        (
            review([50], usage=Usage(input_tokens=900, output_tokens=200)),
            Settings(max_total_tokens=1000),
            "budget",
        ),
        (review([50], usage=Usage(search_calls=30)), Settings(max_search_calls=30), "budget"),
        (review([50], usage=Usage(search_calls=29)), Settings(max_search_calls=30), None),
        # never before min_iterations, however good the score
        (review([100]), DEFAULTS, None),
        (review([100, 100]), Settings(min_iterations=3), None),
        # min_iterations reached and threshold met
        (review([60, 80]), DEFAULTS, "quality_threshold"),
        (review([60, 79.9]), DEFAULTS, None),
        (review([0, 0, 100]), Settings(diminishing_returns=False), "quality_threshold"),
        # diminishing returns: plateau of plateau_rounds rounds each below min_improvement
        (review([60, 62, 64]), DEFAULTS, "plateau"),
        (review([60, 62, 70]), DEFAULTS, None),
        (review([60, 62]), DEFAULTS, None),  # one flat round is not a plateau of two
        (review([60, 62]), Settings(plateau_rounds=1), "plateau"),
        # a fall well below the best is no plateau: a decline (the best report is handed back)
        (review([60, 50, 40]), DEFAULTS, "declined"),
        (review([71, 42, 46]), DEFAULTS, "declined"),
        (review([71, 42]), Settings(plateau_rounds=1), "declined"),
        (review([71, 70, 68]), DEFAULTS, "plateau"),  # stalled within min_improvement of 71
        (review([71, 42, 80]), DEFAULTS, "quality_threshold"),
        (review([50, 42, 60]), DEFAULTS, None),  # beat the best by min_improvement: progress
        # ... and the model's verdict
        (review([60, 70], worthwhile=False), DEFAULTS, "not_worthwhile"),
        (review([60], worthwhile=False), DEFAULTS, None),  # not before min_iterations
        # diminishing returns off: only the other rules stop
        (review([60, 62, 64], worthwhile=False), Settings(diminishing_returns=False), None),
        # unknown scores (no valid review) neither meet the threshold nor count for a plateau
        (review([60, 62, None]), DEFAULTS, None),
        (review([60, None, 62, 63]), DEFAULTS, "plateau"),
    ],
)
def test_stop_rules_in_order(state, settings, expected):
    assert rules(state, settings) == expected


def test_threshold_wins_over_plateau_when_both_hold():
    assert rules(review([79, 80, 81]), DEFAULTS) == "quality_threshold"


@pytest.mark.parametrize(
    ("recorded", "settings", "expected"),
    [
        (None, DEFAULTS, "analyze_gaps"),  # no stop rule held after the review
        ("quality_threshold", DEFAULTS, "verify_citations"),
        ("budget", DEFAULTS, "verify_citations"),
        ("max_iterations", Settings(verify_citations=False), "finalize"),
        ("plateau", Settings(verify_citations=False), "finalize"),
    ],
)
def test_route_after_quality_reads_the_recorded_stop_reason(recorded, settings, expected):
    # The state's other values would stop the run: only the recorded reason decides the way.
    state = {**review([95, 95, 95, 95, 95]), "settings": settings, "stop_reason": recorded}
    assert route_after_quality(state) == expected


@pytest.mark.parametrize(
    ("history", "gain", "rounds", "expected"),
    [
        ([], 5, 2, False),
        ([50, 51, 52], 5, 2, True),
        ([50, 51, 52], 1, 2, False),  # gains of exactly min_improvement are enough
        ([50, 60, 61, 62], 5, 2, True),
        ([50, 51, 60], 5, 2, False),
        ([71, 42, 46], 5, 2, False),  # 25 points below the best is not a plateau
        ([50, 58, 54, 60], 5, 2, True),  # back near the best after a dip is no progress
    ],
)
def test_plateau(history, gain, rounds, expected):
    assert plateaued(history, gain, rounds) is expected


@pytest.mark.parametrize(
    ("history", "gain", "rounds", "expected"),
    [
        ([71, 42, 46], 5, 2, True),
        ([71, 42], 5, 1, True),
        ([71, 67], 5, 1, False),  # within min_improvement of the best: a plateau, if anything
        ([71, 42, 80], 5, 2, False),
        ([71, None, 42], 5, 1, True),
        ([71, 42], 5, 2, False),  # too few rounds to judge
    ],
)
def test_decline(history, gain, rounds, expected):
    assert declined(history, gain, rounds) is expected


def scored(report, round_, score):
    return ScoredReport(report=report, round=round_, quality=assessment(score))


@pytest.mark.parametrize(
    ("reviews", "handed_back_round"),
    [
        ([("a", 71), ("b", 42), ("c", 46)], 1),  # the best-scored report, from round 1
        ([("a", 71), ("b", 42), ("c", 71)], None),  # a later one as good: the current stands
        ([("a", 40), ("b", 60), ("c", 80)], None),
        ([("a", 71), ("b", None)], 1),  # unscored is not known to be as good
        ([("a", None), ("b", None)], None),  # nothing scored: nothing to choose
    ],
)
def test_the_best_scored_report_is_handed_back(reviews, handed_back_round):
    best = None
    for round_, (report, score) in enumerate(reviews, 1):
        quality = None if score is None else assessment(score)
        best = best_so_far(best, report, round_, quality)
    kept = handed_back(best, len(reviews))
    assert (kept.round if kept else None) == handed_back_round
    if kept:
        assert kept.report == reviews[handed_back_round - 1][0]


def _orchestrator_state(tasks, **extra):
    return {
        "question": "q",
        "settings": Settings(max_queries=4),
        "run_id": "r",
        "plan": TaskPlan(
            query_type="breadth_first", subtasks=tasks or [task("q")], recommended_worker_count=1
        ),
        "iteration": 1,
        **extra,
    }


def test_dispatch_sends_one_worker_per_subtask_with_its_budget():
    tasks = [
        task(id=1, description="a", complexity="simple"),
        task(id=2, description="b", complexity="complex"),
    ]
    sends = dispatch_research(_orchestrator_state(tasks))
    assert [s.node for s in sends] == ["research", "research"]
    assert [s.arg["budget"].max_queries for s in sends] == [4, 4]  # the override wins
    assert [s.arg["budget"].max_cycles for s in sends] == [1, 3]  # complexity sets the rest
    assert {s.arg["round"] for s in sends} == {1}


def test_supplementary_round_or_finish():
    tasks = [task(id=4, description="gap")]
    state = _orchestrator_state([], gap_analysis=GapAnalysis(gaps=["g"], supplementary_tasks=tasks))
    sends = dispatch_supplementary(state)
    assert [(s.node, s.arg["round"]) for s in sends] == [("supplementary_research", 2)]
    empty = _orchestrator_state(
        [], gap_analysis=GapAnalysis(gaps=[], supplementary_tasks=[]), stop_reason="no_gaps"
    )
    assert empty["gap_analysis"].supplementary_tasks == []
    assert dispatch_supplementary(empty) == "verify_citations"


def test_worker_and_synthesis_routes():
    assert route_after_decide({"termination_reason": "budget_spent"}) == "report_findings"
    assert route_after_decide({}) == "act"
    assert route_after_act({"termination_reason": "no_new_queries"}) == "report_findings"
    assert route_after_act({"pending_queries": ["x"]}) == "observe"
    assert route_after_synthesis({"stop_reason": "no_evidence"}) == "finalize"
    assert route_after_synthesis({}) == "quality_check"
