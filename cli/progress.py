"""Progress as plain lines on stderr, one per event (for pipes, CI and logs)."""

from __future__ import annotations

import sys
from typing import Any, TextIO

from cli.summary import RunSummary, summary_lines


def describe(event: dict[str, Any]) -> str | None:
    """One line for one progress event; None for events not worth a line."""
    kind = event.get("event")
    if kind == "plan":
        note = f" (fallback plan: {event['fallback']})" if event.get("fallback") else ""
        tasks = "; ".join(f"{t['id']}. {t['description']}" for t in event["subtasks"])
        return f"plan: {event['query_type']}, {len(event['subtasks'])} subtasks{note}: {tasks}"
    if kind == "worker":
        head = f"worker {event['subtask_id']} (round {event['round']})"
        budget = (
            f"queries {event['queries_used']}/{event['max_queries']}, "
            f"cycles {event['cycles_used']}/{event['max_cycles']}"
        )
        if event["phase"] == "done":
            error = f" — {event['error']}" if event.get("error") else ""
            return (
                f"{head} {event['status']}: {event['findings']} findings, "
                f"{event['sources']} sources, {budget}{error}"
            )
        return f"{head} searching: {budget}"
    if kind == "report":
        return f"round {event['round']}: report written ({event['chars']} characters)"
    if kind == "quality":
        score = "unknown" if event["score"] is None else f"{event['score']:g}/100"
        return f"round {event['round']}: quality {score}"
    if kind == "gaps":
        tasks = "; ".join(event["tasks"]) or "nothing more to research"
        return f"round {event['round']}: gap analysis: {tasks}"
    if kind == "citations":
        return "citations: " + citation_counts(event)
    if kind == "done":
        return f"done after {event['rounds']} rounds: {event['stop_reason']}"
    return None


def citation_counts(event: dict[str, Any]) -> str:
    """The citation check in one line: verdicts, repairs, and what settled how many pairs."""
    precision = event.get("precision")
    share = "-" if precision is None else f"{precision:.0%}"
    methods = event.get("by_method") or {}
    settled = (
        f"{methods.get('lexical', 0)} by close match, {methods.get('model', 0)} by the model"
        + (f", {methods['fallback']} without a verdict" if methods.get("fallback") else "")
    )
    rewrites = event.get("rewrites_checked", 0)
    return (
        f"{event.get('checked', 0)} checked, {event.get('supported', 0)} supported ({share}), "
        f"{event.get('removed', 0)} removed; {event.get('rewritten', 0)} statements rewritten, "
        f"{event.get('marked', 0)} marked; pairs settled {settled}"
        + (f" ({rewrites} of them rewrites)" if rewrites else "")
    )


class PlainProgress:
    """Writes one line per event; quiet prints nothing."""

    def __init__(self, stream: TextIO | None = None, quiet: bool = False) -> None:
        self.stream, self.quiet = stream, quiet

    def event(self, event: dict[str, Any]) -> None:
        line = describe(event)
        if line:
            self.note(line)

    def note(self, text: str) -> None:
        if not self.quiet:
            print(text, file=self.stream or sys.stderr, flush=True)

    def summary(self, summary: RunSummary) -> None:
        for line in summary_lines(summary):
            self.note(line)

    def __enter__(self) -> PlainProgress:
        return self

    def __exit__(self, *_: object) -> None:
        pass
