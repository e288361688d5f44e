"""The exit code a finished run earns: 3 only for a run that found no evidence."""

from __future__ import annotations

from deep_research.cli.exit_codes import BUDGET_BEFORE_REPORT, NO_EVIDENCE, OK, finished_code
from deep_research.settings import Settings
from deep_research.state import Usage


def test_a_run_with_evidence_exits_0_even_when_no_citation_survived():
    # seen on the real model: the writer's citations all failed the check, so none is listed
    assert finished_code({"stop_reason": "max_iterations", "sources": []}, Settings()) == OK


def test_no_evidence_is_3_and_a_budget_that_caused_it_is_4():
    found_nothing = {"stop_reason": "no_evidence", "sources": [], "usage": Usage()}
    assert finished_code(found_nothing, Settings()) == NO_EVIDENCE
    spent = {**found_nothing, "usage": Usage(input_tokens=50)}
    assert finished_code(spent, Settings(max_total_tokens=10)) == BUDGET_BEFORE_REPORT
    assert finished_code({"stop_reason": "plan_rejected", "sources": []}, Settings()) == OK
