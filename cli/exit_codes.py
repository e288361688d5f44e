"""The exit codes a script can trust, and the one a finished run earns from what it found.

0 a report with evidence; 1 failed midway (resumable); 2 bad input, or an unusable store or
endpoint, found before any paid call; 3 finished without evidence (the report is still
written); 4 stopped by a budget before any evidence was found (the first report could
not stand on any); 130 interrupted.
"""

from __future__ import annotations

from typing import Any

from deep_research.settings import Settings

OK = 0
FAILED = 1
BAD_INPUT = 2
NO_EVIDENCE = 3
BUDGET_BEFORE_REPORT = 4
INTERRUPTED = 130


def finished_code(output: dict[str, Any], settings: Settings | None) -> int:
    """0 when the run gathered evidence; 3 when it found none (`no_evidence`); 4 when a budget
    spent before any evidence caused that.

    A rejected plan is the user's own decision, so it counts as done (0).
    """
    from deep_research.domain.budgets import (
        run_budget_spent,  # imported here: the command starts faster
    )

    if output.get("stop_reason") == "budget" and output.get("sources_found") == 0:
        return BUDGET_BEFORE_REPORT
    if output.get("stop_reason") != "no_evidence":  # evidence was gathered (or a plan rejected),
        return OK  # whether or not one of its citations survived the check
    usage = output.get("usage")
    if settings is not None and usage is not None and run_budget_spent(usage, settings):
        return BUDGET_BEFORE_REPORT
    return NO_EVIDENCE
