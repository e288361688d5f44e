"""Each progress event as one line of plain text: what the terminal's plain progress, a batch's
rows and the MCP server's progress lines say (`describe`), and the small words they share."""

from __future__ import annotations

from deep_research.domain.labels import score_text
from deep_research.settings import GUARD_NOTE
from deep_research.tools.events import (
    CallRetried,
    CitationsChecked,
    ContextWindowFound,
    CostUnknown,
    EarlierReportKept,
    GapsAnalyzed,
    GuardKept,
    GuardLowered,
    MethodSettled,
    PlanMade,
    ProgressEvent,
    PromptShrunk,
    QualityScored,
    ReplyDegenerate,
    ReplyPartlyKept,
    ReportWritten,
    RunDone,
    SourceFailed,
    Streaming,
    ToolProtocolSettled,
    WorkerActed,
    WorkerDone,
    WorkerFellBack,
    WorkerSearched,
)


def revised_text(rounds: list[int]) -> str:
    """ ", revised with round 2's findings" (or rounds'), or "" when it was kept unchanged."""
    if not rounds:
        return ""
    which = ", ".join(map(str, rounds))
    return f", revised with round{'s' if len(rounds) > 1 else ''} {which}'s findings"


def counted(number: int | None, noun: str) -> str:
    """A count with its noun, plural unless the count is one: "1 round", "3 rounds"."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def rounds_text(rounds: int | None) -> str:
    """A number of rounds: "1 round", "3 rounds"."""
    return counted(rounds, "round")


def describe(event: ProgressEvent) -> str | None:
    """One line for one progress event; None for events not worth a line."""
    match event:
        case PlanMade() if event.follow_up:
            tasks = "; ".join(f"{t.id}. {t.description}" for t in event.subtasks)
            subtasks = counted(len(event.subtasks), "subtask")
            return (
                f"follow-up: writing first from the earlier run's evidence ({subtasks} it "
                f"researched: {tasks}); only what the review finds missing is researched"
            )
        case PlanMade():
            note = f" (fallback plan: {event.fallback})" if event.fallback else ""
            note += " (edited)" if event.edited else ""
            note += f" ({event.dropped})" if event.dropped else ""
            tasks = "; ".join(f"{t.id}. {t.description}" for t in event.subtasks)
            subtasks = counted(len(event.subtasks), "subtask")
            return f"plan: {event.query_type}, {subtasks}{note}: {tasks}"
        case WorkerSearched():
            return f"{_worker(event)} searching: {_budget(event)}"
        case WorkerActed():
            calls = ", ".join(f"{name} ×{n}" for name, n in event.calls.items()) or "no calls"
            skipped = f", {event.skipped} skipped" if event.skipped else ""
            return f"{_worker(event)} acted ({event.protocol} tools): {calls}{skipped}"
        case WorkerFellBack():
            return f"{_worker(event)} made no usable tool call ({event.why}); fixed search loop"
        case ToolProtocolSettled():
            why = f" (native tools refused: {event.why})" if event.why else ""
            return f"worker tools for {event.model}: {event.protocol}{why}"
        case WorkerDone():
            error = f" — {event.error}" if event.error else ""
            return (
                f"{_worker(event)} {event.status}: {counted(event.findings, 'finding')}, "
                f"{counted(event.sources, 'source')}, {_budget(event)}{error}"
            )
        case ReportWritten():
            parts = (
                f", {event.written} of {counted(event.sections, 'section')}"
                if event.sections
                else ""
            )
            fallback = (
                "; no usable outline: one section per subtask" if event.outline_fallback else ""
            )
            return (
                f"round {event.round}: report written ({event.chars} characters{parts}){fallback}"
            )
        case QualityScored():
            return f"round {event.round}: quality {score_text(event.score)}"
        case GapsAnalyzed() if event.error:
            return f"round {event.round}: gap analysis failed, no further round: {event.error}"
        case GapsAnalyzed():
            tasks = "; ".join(event.tasks) or "nothing more to research"
            return f"round {event.round}: gap analysis: {tasks}"
        case CitationsChecked():
            return "citations: " + citation_counts(event)
        case MethodSettled():
            refused = f" ({event.refused} refused: {event.why})" if event.refused else ""
            return f"structured output for {event.model}: {event.method}{refused}"
        case Streaming() if event.done or int(event.seconds) % 30 < 2:
            state = "done" if event.done else "streaming"
            return f"{event.role} call {state}: {event.chunks} tokens, {event.seconds:.0f} s"
        case CallRetried():
            return f"{event.role} call retried ({event.attempt}): {event.error}"
        case ReplyDegenerate():
            then = "the step goes on without it" if event.final else "asked again"
            return f"{event.role} reply unusable ({event.problem}); {then}"
        case ReplyPartlyKept():
            return partial_reply_line(event)
        case GuardLowered():
            return GUARD_NOTE
        case GuardKept():
            return f"{event.setting} from the caller ignored: only the server's environment sets it"
        case SourceFailed():
            return f"source failed, the run goes on without it: {event.source}: {event.error}"
        case PromptShrunk():
            return f"{event.role} prompt was too long for the server; sent again shorter"
        case ContextWindowFound():
            return (
                f"server context window: {event.tokens:,} tokens "
                f"(max_context_tokens {event.max_context_tokens:,})"
            )
        case EarlierReportKept():
            last = "got no valid score" if event.last_score is None else "scored"
            last += "" if event.last_score is None else f" {score_text(event.last_score)}"
            return (
                f"handing back the round {event.round} report (quality "
                f"{score_text(event.score)}){revised_text(event.revised_with)}: round "
                f"{event.last_round} {last}"
            )
        case CostUnknown():
            return cost_unknown_line(event)
        case RunDone():
            return f"done after {rounds_text(event.rounds)}: {event.stop_reason}"
    return None


def partial_reply_line(event: ReplyPartlyKept) -> str:
    """A reply kept without the non-essential fields that stayed invalid after a re-ask."""
    dropped = ", ".join(event.dropped)
    return (
        f"{event.role} reply kept without {dropped}, still invalid after a re-ask "
        f"({event.problem}); {dropped} left unset, not clamped"
    )


def cost_unknown_line(event: CostUnknown) -> str:
    """Why the run's cost will show as unknown, and how to give the missing prices."""
    names = ", ".join(event.models)
    return f"cost unknown: no price known for {names} (give one in the prices setting)"


def _worker(event: WorkerSearched | WorkerDone) -> str:
    return f"worker {event.subtask_id} (round {event.round})"


def _budget(event: WorkerSearched | WorkerDone) -> str:
    return (
        f"queries {event.queries_used}/{event.max_queries}, "
        f"cycles {event.cycles_used}/{event.max_cycles}"
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


def citation_counts(event: CitationsChecked) -> str:
    """The citation check in one line: what settled the pairs, the verdicts, the repairs."""
    share = "-" if event.precision is None else f"{event.precision:.0%}"
    line = (
        f"{event.checked} checked ({_settled(event.by_method)}), "
        f"{event.supported} supported ({share}), {event.removed} removed, "
        f"{event.rewritten} rewritten, {event.marked} marked"
    )
    rewrites = sum(event.rewrites_by_method.values())
    if rewrites:
        line += f"; {rewrites} rewrites checked ({_settled(event.rewrites_by_method)})"
    return line
