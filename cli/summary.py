"""The end-of-run summary: the figures a finished run is judged by, as a table or plain lines."""

from __future__ import annotations

from dataclasses import dataclass

from rich.table import Table

from deep_research.service.event_lines import revised_text, score_text


@dataclass
class RunSummary:
    """The numbers a finished run is judged by; None for what was not measured."""

    rounds: int
    score: float | None
    stop_reason: str
    llm_calls: int
    input_tokens: int
    output_tokens: int
    search_calls: int
    cache_hits: int
    wall_seconds: float
    report_path: str | None  # None: the report went to stdout
    citation_precision: float | None = None  # a fraction, 0 to 1
    cost_usd: float | None = None
    structured_output: dict[str, str] | None = None  # model -> method it settled on
    report_problem: str = ""  # why the writer's reply could not be the report, if it could not
    report_round: int | None = None  # the round whose report was handed back (the best-scored)
    report_revised_with: list[int] | None = None  # later rounds whose findings revised it


def summary_rows(summary: RunSummary) -> list[tuple[str, str]]:
    """(label, value) pairs shared by the table and the plain lines, so both say the same."""
    precision = summary.citation_precision
    return [
        ("rounds", str(summary.rounds)),
        ("quality", score_text(summary.score) + _from_round(summary)),
        ("stop reason", summary.stop_reason),
        ("LLM calls", f"{summary.llm_calls:,}"),
        ("tokens", f"{summary.input_tokens:,} in / {summary.output_tokens:,} out"),
        ("searches", f"{summary.search_calls:,} ({summary.cache_hits:,} cache hits)"),
        ("citation precision", "unknown" if precision is None else f"{precision:.0%}"),
        ("cost", "unknown" if summary.cost_usd is None else f"${summary.cost_usd:.4f}"),
        ("structured output", _methods(summary.structured_output)),
        ("wall time", f"{summary.wall_seconds:.1f}s"),
        ("report", summary.report_path or "stdout"),
    ] + ([("report problem", summary.report_problem)] if summary.report_problem else [])


def _from_round(summary: RunSummary) -> str:
    """Which round's report the score is of, when not the last round's."""
    kept = summary.report_round
    if not kept or kept == summary.rounds:
        return ""
    return f" (the report of round {kept}{revised_text(summary.report_revised_with or [])})"


def _methods(methods: dict[str, str] | None) -> str:
    """The method per model, or "-" when no structured reply was asked for."""
    if not methods:
        return "-"
    if len(set(methods.values())) == 1:
        return next(iter(methods.values()))
    return ", ".join(f"{model}: {method}" for model, method in methods.items())


def render_summary(summary: RunSummary) -> Table:
    """The end-of-run summary as a two-column table."""
    table = Table(title="Run summary", title_justify="left", show_header=False)
    table.add_column(style="bold")
    table.add_column()
    for label, value in summary_rows(summary):
        table.add_row(label, value)
    return table


def summary_lines(summary: RunSummary) -> list[str]:
    """The end-of-run summary as plain lines, for the plain progress printer."""
    return [f"{label}: {value}" for label, value in summary_rows(summary)]
