"""`deep-research batch FILE`: research many questions in one process, N at a time.

Every question is its own checkpointed thread with a stable id (file, line, question), so the
same command run again after a crash or `kill -9` skips the finished questions and resumes the
interrupted ones from their last saved step: only the calls that were in flight are repeated.
All runs share the process's endpoint limits (`tools.endpoint_limits`); each keeps its own
budget. The output folder gets one Markdown report per question and a `summary.jsonl`.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deep_research.cli.batch_file import BatchQuestion, read_batch, without_repeats
from deep_research.cli.batch_progress import BatchProgress, BatchRow
from deep_research.cli.output_paths import check_output_folder
from deep_research.cli.runner import CALLER
from deep_research.export.facts import facts_of
from deep_research.export.formats import (
    Format,
    Rendering,
    UnknownFormat,
    check_formats,
    format_of,
    parse_formats,
    write_file,
)
from deep_research.export.pdf import PdfRendererMissing
from deep_research.service.admission import Admitted, Operator
from deep_research.service.model_list import ModelList, says_model_not_found
from deep_research.service.preflight import (
    BadInput,
    check_corpus,
    check_credentials,
    check_mcp_config,
    check_store,
    settings_or_explain,
)
from deep_research.service.runs import Ended, open_service
from deep_research.settings import GUARD_NOTE, Settings
from deep_research.state import output_of
from deep_research.tools.search.factory import web_provider
from deep_research.tools.secrets import redact

SUMMARY_FILE = "summary.jsonl"


@dataclass
class BatchPlan:
    """A checked batch: its questions with their settings, and where everything goes."""

    questions: list[tuple[BatchQuestion, Settings]]
    out_dir: Path
    target: str
    concurrency: int
    formats: tuple[Format, ...] = ("md",)  # the report's formats, one file each


def plan_batch(
    questions: list[BatchQuestion], flags: dict, out_dir: Path, target: str, concurrency: int
) -> BatchPlan:
    """Every question's settings (its own over the command's flags), checked before any call."""
    if concurrency < 1:
        raise BadInput(f"--concurrency must be at least 1, not {concurrency}")
    checked = []
    providers_checked: set[str | None] = set()  # one free probe per provider, not per line
    for question in questions:
        try:
            settings = settings_or_explain({**flags, **question.settings})
        except BadInput as error:
            raise BadInput(f"line {question.line}: {error}") from None
        if settings.approve_plan:
            raise BadInput(f"line {question.line}: a batch runs unattended: no approve_plan")
        try:
            check_mcp_config(settings)
        except BadInput as error:
            raise BadInput(f"line {question.line}: {error}") from None
        if web_provider(settings) not in providers_checked:
            check_credentials(settings)
            providers_checked.add(web_provider(settings))
        checked.append((question, settings))
    return BatchPlan(checked, out_dir, target, concurrency)


def summary_row(question: BatchQuestion, output: dict, seconds: float | None, report: Path):
    """One line of summary.jsonl for a question that finished."""
    usage, quality = output["usage"], output.get("quality")
    return {
        "line": question.line,
        "question": question.question,
        "thread_id": question.thread_id,
        "status": "done",
        "stop_reason": output.get("stop_reason"),
        "rounds": output.get("iteration") or 0,
        "score": None if quality is None else quality.score,
        "cost_usd": output.get("cost_usd"),
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "llm_calls": usage.llm_calls,
        "search_calls": usage.search_calls,
        "seconds": None if seconds is None else round(seconds, 2),
        "report": str(report),
    }


def failed_row(question: BatchQuestion, error: BaseException, seconds: float) -> dict:
    """One line of summary.jsonl for a question whose run failed (it resumes on the next try)."""
    return {
        "line": question.line,
        "question": question.question,
        "thread_id": question.thread_id,
        "status": "failed",
        "error": redact(f"{type(error).__name__}: {error}")[:500],
        "seconds": round(seconds, 2),
    }


def read_summary(path: Path) -> dict[str, dict]:
    """The rows a previous attempt wrote, by thread id (unreadable lines are ignored)."""
    rows: dict[str, dict] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
                rows[row["thread_id"]] = row
            except (json.JSONDecodeError, KeyError, TypeError):
                continue
    return rows


def write_summary(path: Path, order: list[BatchQuestion], rows: dict[str, dict]) -> None:
    """summary.jsonl in file order, replaced atomically so a kill never leaves half a file."""
    lines = [
        json.dumps(rows[q.thread_id], ensure_ascii=False) for q in order if q.thread_id in rows
    ]
    partial = path.with_suffix(".jsonl.partial")
    partial.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    os.replace(partial, path)


def report_files(report: Path, formats: tuple[Format, ...]) -> list[Path]:
    """The report's file in each format: NAME.md, NAME.html, ..."""
    return [report.with_suffix(f".{format}") for format in formats]


def _write_reports(
    report: Path, values: dict, formats: tuple[Format, ...], thread_id: str, missing_only=False
) -> None:
    """The finished run's report in every format (with missing_only, those not written yet)."""
    output = output_of(values)
    rendering = Rendering(output, facts_of({**values, **output}, thread_id=thread_id))
    for path in report_files(report, formats):
        if not (missing_only and path.exists()):
            write_file(path, rendering.render(format_of(path)))


def _row(
    question: BatchQuestion,
    end: Ended,
    plan: BatchPlan,
    progress: BatchProgress,
    previous: dict | None,
) -> dict:
    """A thread at its end: its report written, its progress line closed, its summary row."""
    output = output_of(end.values)
    report = plan.out_dir / question.report_name()
    shown = report_files(report, plan.formats)[0]
    if not end.ran:  # finished in an earlier attempt
        _write_reports(report, end.values, plan.formats, question.thread_id, missing_only=True)
        progress.finish(question.line, "skipped", "finished before")
        if previous and previous.get("status") == "done":
            return previous
        return summary_row(question, output, None, shown)
    _write_reports(report, end.values, plan.formats, question.thread_id)
    quality = output.get("quality")
    progress.finish(
        question.line, "done", output.get("stop_reason") or "", quality and quality.score
    )
    return summary_row(question, output, end.seconds, shown)


async def run_batch(plan: BatchPlan, progress: BatchProgress) -> list[dict]:
    """Every question of the plan, `concurrency` at a time, through the run service: a
    finished one read back, an interrupted one resumed, a new one started; the summary is kept
    current."""
    plan.out_dir.mkdir(parents=True, exist_ok=True)
    summary = plan.out_dir / SUMMARY_FILE
    rows = read_summary(summary)
    order = [question for question, _ in plan.questions]
    for settings in {s.corpus_dir: s for _, s in plan.questions if s.corpus_dir}.values():
        check_corpus(settings, progress)
    slots = asyncio.Semaphore(plan.concurrency)
    async with open_service(plan.target, Operator(), notes=progress.note) as service:

        async def one(question: BatchQuestion, settings: Settings) -> None:
            async with slots:
                began = time.monotonic()
                try:
                    end = await service.to_the_end(
                        CALLER,
                        Admitted(question.question, settings),  # checked by `plan_batch`
                        question.thread_id,
                        on_event=lambda event: progress.event(question.line, event),
                        starting=lambda resumed: progress.start(question.line, resumed),
                    )
                    rows[question.thread_id] = _row(
                        question, end, plan, progress, rows.get(question.thread_id)
                    )
                except Exception as error:  # this question failed; the others go on
                    progress.finish(question.line, "failed", redact(str(error))[:80])
                    rows[question.thread_id] = failed_row(question, error, time.monotonic() - began)
                write_summary(summary, order, rows)

        await asyncio.gather(*(one(question, settings) for question, settings in plan.questions))
    return [rows[question.thread_id] for question in order]


def batch_view(args: Any, plan: BatchPlan, repeats: list[str]) -> BatchProgress:
    """The batch's report formats, checked before any call (a missing PDF renderer: BadInput),
    and its progress view, a row per question, with the notes about repeated lines."""
    try:
        plan.formats = tuple(parse_formats(args.format))
        check_formats(list(plan.formats))
    except (UnknownFormat, PdfRendererMissing) as error:
        raise BadInput(str(error)) from None
    rows = [BatchRow(q.line, q.question) for q, _ in plan.questions]
    progress = BatchProgress(rows, live=sys.stderr.isatty(), quiet=args.quiet)
    for note in repeats:
        progress.note(note)
    return progress


def batch_command(args: Any, target: str, flags: dict) -> int:
    """The `batch` subcommand: 0 when every question is done, 1 when any failed (rerun the same
    command to resume them), 2 for bad input (raised as BadInput), 130 on Ctrl-C."""
    check_output_folder(args.out_dir, "--out-dir")  # before the file is read or any call
    questions, repeats = without_repeats(read_batch(args.file))
    plan = plan_batch(questions, flags, args.out_dir, target, args.concurrency)
    check_store(target)  # an unusable store is bad input, before any question is paid for
    models = ModelList()  # asked once; each line's model names judged against it
    for question, settings in plan.questions:
        try:
            models.check(settings)
        except BadInput as error:
            raise BadInput(f"line {question.line}: {error}") from None
    progress = batch_view(args, plan, repeats)
    if any(settings.fetch_private_addresses for _, settings in plan.questions):
        progress.note(GUARD_NOTE)
    try:
        with progress:
            rows = asyncio.run(run_batch(plan, progress))
    except KeyboardInterrupt:
        print("\ninterrupted; run the same command again to resume", file=sys.stderr)
        return 130
    failed = [row for row in rows if row["status"] != "done"]
    done = len(rows) - len(failed)
    progress.note(f"{done}/{len(rows)} done; summary: {plan.out_dir / SUMMARY_FILE}")
    if any(says_model_not_found(row.get("error", "")) for row in failed):
        progress.note(
            "some questions failed because the model server has no such model: name one it has "
            "(--model, or the line's settings) and run the command again to resume them"
        )
    elif failed:
        progress.note("some questions failed: run the same command again to resume them")
    return 1 if failed else 0
