"""Progress as plain lines on stderr, one per event (for pipes, CI and logs)."""

from __future__ import annotations

import sys
from contextlib import AbstractContextManager, nullcontext
from typing import Any, TextIO

from cli.summary import RunSummary, counted, rounds_text, score_text, summary_lines
from settings import GUARD_NOTE


def describe(event: dict[str, Any]) -> str | None:
    """One line for one progress event; None for events not worth a line."""
    kind = event.get("event")
    if kind == "plan":
        note = f" (fallback plan: {event['fallback']})" if event.get("fallback") else ""
        note += " (edited)" if event.get("edited") else ""
        note += f" ({event['dropped']})" if event.get("dropped") else ""
        tasks = "; ".join(f"{t['id']}. {t['description']}" for t in event["subtasks"])
        subtasks = counted(len(event["subtasks"]), "subtask")
        return f"plan: {event['query_type']}, {subtasks}{note}: {tasks}"
    if kind == "worker":
        head = f"worker {event['subtask_id']} (round {event['round']})"
        budget = (
            f"queries {event['queries_used']}/{event['max_queries']}, "
            f"cycles {event['cycles_used']}/{event['max_cycles']}"
        )
        if event["phase"] == "done":
            error = f" — {event['error']}" if event.get("error") else ""
            return (
                f"{head} {event['status']}: {counted(event['findings'], 'finding')}, "
                f"{counted(event['sources'], 'source')}, {budget}{error}"
            )
        return f"{head} searching: {budget}"
    if kind == "report":
        return f"round {event['round']}: report written ({event['chars']} characters)"
    if kind == "quality":
        score = score_text(event["score"])
        return f"round {event['round']}: quality {score}"
    if kind == "gaps":
        tasks = "; ".join(event["tasks"]) or "nothing more to research"
        return f"round {event['round']}: gap analysis: {tasks}"
    if kind == "citations":
        return "citations: " + citation_counts(event)
    if kind == "structured_output":
        refused = f" ({event['refused']} refused: {event['why']})" if event.get("refused") else ""
        return f"structured output for {event['model']}: {event['method']}{refused}"
    if kind == "streaming" and (event.get("done") or int(event["seconds"]) % 30 < 2):
        state = "done" if event.get("done") else "streaming"
        return f"{event['role']} call {state}: {event['chunks']} tokens, {event['seconds']:.0f} s"
    if kind == "retry":
        return f"{event['role']} call retried ({event['attempt']}): {event['error']}"
    if kind == "degenerate":
        then = "marked as such" if event.get("final") else "asked again"
        return f"{event['role']} reply unusable ({event['problem']}); {then}"
    if kind == "partial_reply":
        return partial_reply_line(event)
    if kind == "shrunk":
        return f"{event['role']} prompt was too long for the server; sent again shorter"
    if kind == "context_window":
        return (
            f"server context window: {event['tokens']:,} tokens "
            f"(max_context_tokens {event['max_context_tokens']:,})"
        )
    if kind == "guard_lowered":
        return GUARD_NOTE
    if kind == "guard_kept":
        return f"{event['setting']} from the caller ignored: only the server's environment sets it"
    if kind == "source_failed":
        return f"source failed, the run goes on without it: {event['source']}: {event['error']}"
    if kind == "done":
        return f"done after {rounds_text(event['rounds'])}: {event['stop_reason']}"
    return None


def partial_reply_line(event: dict[str, Any]) -> str:
    """A reply kept without the non-essential fields that stayed invalid after a re-ask."""
    dropped = ", ".join(event["dropped"])
    return (
        f"{event['role']} reply kept without {dropped}, still invalid after a re-ask "
        f"({event['problem']}); {dropped} left unset, not clamped"
    )


def _settled(methods: dict[str, int]) -> str:
    """How many pairs each method settled: `3 by close match, 9 by the model`."""
    parts = [
        f"{methods.get('lexical', 0)} by close match",
        f"{methods.get('model', 0)} by the model",
    ]
    if methods.get("fallback"):
        parts.append(f"{methods['fallback']} without a verdict")
    return ", ".join(parts)


def citation_counts(event: dict[str, Any]) -> str:
    """The citation check in one line: what settled the pairs, the verdicts, the repairs."""
    precision = event.get("precision")
    share = "-" if precision is None else f"{precision:.0%}"
    line = (
        f"{event.get('checked', 0)} checked ({_settled(event.get('by_method') or {})}), "
        f"{event.get('supported', 0)} supported ({share}), {event.get('removed', 0)} removed, "
        f"{event.get('rewritten', 0)} rewritten, {event.get('marked', 0)} marked"
    )
    rewrites = event.get("rewrites_by_method") or {}
    if sum(rewrites.values()):
        line += f"; {sum(rewrites.values())} rewrites checked ({_settled(rewrites)})"
    return line


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

    def paused(self) -> AbstractContextManager[None]:
        """Nothing to pause: plain lines never redraw over a question."""
        return nullcontext()

    def __enter__(self) -> PlainProgress:
        return self

    def __exit__(self, *_: object) -> None:
        pass
