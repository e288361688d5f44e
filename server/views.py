"""What the MCP tools answer: typed views of a run as the run service reads it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from deep_research.service.runs import Listed, RunInfo
from deep_research.state import ClarifyingQuestion, Usage, output_of

REPORT_URI = "research://{run_id}/report"


class RunProgress(BaseModel):
    """Where a run stands."""

    run_id: str
    status: str = Field(
        description="queued, running, done, failed (resume_research continues it), unfinished "
        "(stopped with its server; resume_research continues it) or waiting"
    )
    question: str = ""
    round: int = Field(0, description="Research rounds finished so far.")
    next_steps: list[str] = Field(default_factory=list, description="The graph's next nodes.")
    recent_progress: list[str] = Field(
        default_factory=list, description="The latest progress lines, oldest first."
    )
    error: str | None = None
    usage: dict[str, Any] = Field(default_factory=dict, description="Calls and tokens so far.")
    questions: list[ClarifyingQuestion] = Field(
        default_factory=list,
        description="While waiting: the questions asked back before research, each with "
        "suggested answers; reply with answer_questions.",
    )


class CitedSource(BaseModel):
    """A source the report cites as [number]."""

    number: int
    title: str
    url: str
    published: str = Field("", description="When it was published or updated (ISO), if known.")


class RunResult(BaseModel):
    """A finished run: its report with citations, the sources they resolve to, and its figures."""

    run_id: str
    status: str
    question: str = ""
    report: str = Field("", description="Markdown; every [n] is a source listed in `sources`.")
    report_uri: str = ""
    sources: list[CitedSource] = Field(default_factory=list)
    quality_score: float | None = Field(None, description="The reviewer's last score, 0-100.")
    stop_reason: str | None = None
    rounds: int = 0
    citation_precision: float | None = Field(
        None, description="Checked citations found supported (0-1); None when none were checked."
    )
    usage: dict[str, Any] = Field(default_factory=dict)
    cost_usd: float | None = None
    report_problem: str = ""
    questions: list[ClarifyingQuestion] = Field(
        default_factory=list,
        description="While waiting: the questions asked back; reply with answer_questions.",
    )


class RunRow(BaseModel):
    """One line of the run list."""

    run_id: str
    status: str
    question: str
    rounds: int
    stop_reason: str | None


def _usage(values: dict) -> dict[str, Any]:
    usage = values.get("usage") or Usage()
    return usage.model_dump(exclude={"by_role"})


def progress_view(info: RunInfo, lines: list[str]) -> RunProgress:
    """A run's progress: its checkpoint, and its latest progress lines."""
    return RunProgress(
        run_id=info.run_id,
        status=info.status,
        question=info.question,
        round=info.values.get("iteration") or 0,
        next_steps=sorted(set(info.snapshot.next)),
        recent_progress=lines,
        error=info.error or None,
        usage=_usage(info.values),
        questions=info.waiting_questions,
    )


def result_view(info: RunInfo) -> RunResult:
    """A finished run's output (the same keys the CLI's --json writes, in short)."""
    values = info.values
    output = output_of(values) if info.status == "done" else {}  # a draft's citations: unchecked
    quality = output.get("quality")
    return RunResult(
        run_id=info.run_id,
        status=info.status,
        question=info.question,
        report=output.get("report") or "",
        report_uri=REPORT_URI.format(run_id=info.run_id),
        sources=[
            CitedSource(number=s.number, title=s.title, url=s.url, published=s.published)
            for s in output.get("sources") or []
            if s.number is not None
        ],
        quality_score=None if quality is None else quality.score,
        stop_reason=output.get("stop_reason"),
        rounds=output.get("iteration") or 0,
        citation_precision=output.get("citation_precision"),
        usage=_usage(values),
        cost_usd=output.get("cost_usd"),
        report_problem=output.get("report_problem") or "",
        questions=info.waiting_questions,
    )


def row_view(listed: Listed) -> RunRow:
    """One run of the list, from the index of runs."""
    row = listed.row
    return RunRow(
        run_id=row.run_id,
        status=listed.status,
        question=row.question[:200],
        rounds=row.rounds,
        stop_reason=row.stop_reason or None,
    )
