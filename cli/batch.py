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
from functools import partial
from pathlib import Path
from typing import Any

from langgraph.graph.state import CompiledStateGraph

from cli.batch_file import BatchQuestion, read_batch
from cli.batch_progress import BatchProgress, BatchRow
from cli.preflight import BadInput, check_corpus, check_credentials, settings_or_explain
from graph import build_graph
from graph.threads import advance, thread_config
from settings import Settings
from state import output_of
from tools.checkpoints import open_checkpointer
from tools.run_resources import LiveRuns
from tools.search.factory import web_provider
from tools.secrets import redact

SUMMARY_FILE = "summary.jsonl"


@dataclass
class BatchPlan:
    """A checked batch: its questions with their settings, and where everything goes."""

    questions: list[tuple[BatchQuestion, Settings]]
    out_dir: Path
    target: str
    concurrency: int


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


def _write_report(path: Path, output: dict) -> None:
    partial = path.with_suffix(".md.partial")
    partial.write_text(output.get("report") or "", encoding="utf-8")
    os.replace(partial, path)


async def research_one(
    graph: CompiledStateGraph,
    question: BatchQuestion,
    settings: Settings,
    plan: BatchPlan,
    progress: BatchProgress,
    previous: dict | None,
    runs: LiveRuns,
) -> dict:
    """Run, resume or skip one question; returns its summary row."""
    config = thread_config(question.thread_id)
    report = plan.out_dir / question.report_name()
    snapshot = await graph.aget_state(config)
    if snapshot.values and not snapshot.next:  # finished in an earlier attempt
        output = output_of(snapshot.values)
        if not report.exists():
            _write_report(report, output)
        progress.finish(question.line, "skipped", "finished before")
        if previous and previous.get("status") == "done":
            return previous
        return summary_row(question, output, None, report)
    resumed = bool(snapshot.values)
    progress.start(question.line, resumed)
    started = time.monotonic()
    step_input = None if resumed else {"question": question.question, "settings": settings}
    try:
        snapshot = await advance(
            graph,
            question.thread_id,
            step_input,
            partial(progress.event, question.line),
            runs=runs,
        )
    except Exception as error:  # this question failed; the others go on; it resumes next time
        progress.finish(question.line, "failed", redact(str(error))[:80])
        return failed_row(question, error, time.monotonic() - started)
    output = output_of(snapshot.values)
    _write_report(report, output)
    seconds = time.monotonic() - started
    quality = output.get("quality")
    progress.finish(
        question.line, "done", output.get("stop_reason") or "", quality and quality.score
    )
    return summary_row(question, output, seconds, report)


async def run_batch(plan: BatchPlan, progress: BatchProgress) -> list[dict]:
    """Every question of the plan, `concurrency` at a time; the summary is kept current."""
    plan.out_dir.mkdir(parents=True, exist_ok=True)
    summary = plan.out_dir / SUMMARY_FILE
    rows = read_summary(summary)
    order = [question for question, _ in plan.questions]
    for settings in {s.corpus_dir: s for _, s in plan.questions if s.corpus_dir}.values():
        check_corpus(settings, progress)
    slots = asyncio.Semaphore(plan.concurrency)
    async with open_checkpointer(plan.target) as saver:
        runs = LiveRuns()
        graph = build_graph(checkpointer=saver, runs=runs)

        async def one(question: BatchQuestion, settings: Settings) -> None:
            async with slots:
                previous = rows.get(question.thread_id)
                row = await research_one(graph, question, settings, plan, progress, previous, runs)
            rows[question.thread_id] = row
            write_summary(summary, order, rows)

        await asyncio.gather(*(one(question, settings) for question, settings in plan.questions))
    return [rows[question.thread_id] for question in order]


def batch_command(args: Any, target: str, flags: dict) -> int:
    """The `batch` subcommand: 0 when every question is done, 1 when any failed (rerun the same
    command to resume them), 2 for bad input (raised as BadInput), 130 on Ctrl-C."""
    plan = plan_batch(read_batch(args.file), flags, args.out_dir, target, args.concurrency)
    rows_view = [BatchRow(q.line, q.question) for q, _ in plan.questions]
    progress = BatchProgress(rows_view, live=sys.stderr.isatty(), quiet=args.quiet)
    try:
        with progress:
            rows = asyncio.run(run_batch(plan, progress))
    except KeyboardInterrupt:
        print("\ninterrupted; run the same command again to resume", file=sys.stderr)
        return 130
    failed = [row for row in rows if row["status"] != "done"]
    done = len(rows) - len(failed)
    progress.note(f"{done}/{len(rows)} done; summary: {plan.out_dir / SUMMARY_FILE}")
    if failed:
        progress.note("some questions failed: run the same command again to resume them")
    return 1 if failed else 0
