"""`batch FILE --queue` and `run --queue`: hand runs to `deep-research worker` processes.

The runs keep the thread ids they have without the queue (a batch line's stable id; `run`'s
`--thread-id`), so submitting again adds nothing: a finished thread is collected, one whose job
waits or runs is left to it, a failed one is queued again. Without `--no-wait` the command waits
and writes what it writes without the queue: the reports and `summary.jsonl`, or `run`'s
report. With `--no-wait` it submits and returns; the same command run again collects.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
import uuid
from typing import Any

from deep_research.service.bad_input import BadInput

POLL_SECONDS = 0.5  # how often a waiting submitter reads the store


def add_queue_flags(sub: argparse.ArgumentParser) -> None:
    """`--queue` and `--no-wait` for `run` and `batch`."""
    sub.add_argument(
        "--queue",
        action="store_true",
        help="hand the run(s) to `deep-research worker` processes through the queue in the "
        "postgresql:// store, wait, and write the same outputs",
    )
    sub.add_argument(
        "--no-wait",
        action="store_true",
        help="with --queue: submit and return at once; the same command again collects",
    )


async def _submitted(service: Any, thread_id: str, question: str, settings: Any) -> Any:
    """The run as the queue has it: a finished one read back, a new one admitted and submitted,
    a failed or stopped one submitted again, one that waits or runs left to it. Its info
    (None for a new one) and whether a job was added."""
    from deep_research.cli.runner import CALLER
    from deep_research.service.runs import RESUMABLE, UnknownRun

    try:
        info = await service.read(CALLER, thread_id)
    except UnknownRun:
        admitted = await service.admission.new_run(question, settings)
        await service.start(CALLER, admitted, run_id=thread_id)
        return None, True
    if info.status in RESUMABLE:
        await service.resume(CALLER, thread_id)
        return info, True
    return info, False


def _gave_up(question: Any, seconds: float) -> dict:
    """The summary row of a question whose job failed on its worker."""
    from deep_research.cli.batch import failed_row

    error = RuntimeError("its job failed on a worker (the worker's log says why)")
    return failed_row(question, error, seconds)


def _queue_service(target: str, settings: Any) -> Any:
    """The run service with the queue in the PostgreSQL store as its executor."""
    from deep_research.service.admission import Operator
    from deep_research.service.runs import open_service

    operator = Operator.of(settings, strict=True, unattended=True)
    return open_service(target, operator, queue=True)


async def collect_batch(plan: Any, progress: Any, wait: bool) -> tuple[list[dict], int]:
    """Collect finished questions, submit the others, and (with `wait`) collect them as they
    finish; the summary rows in file order, and how many questions are still queued."""
    from deep_research.cli.batch import SUMMARY_FILE, _row, read_summary, write_summary
    from deep_research.cli.runner import CALLER
    from deep_research.service.runs import Ended

    plan.out_dir.mkdir(parents=True, exist_ok=True)
    summary = plan.out_dir / SUMMARY_FILE
    rows = read_summary(summary)
    order = [question for question, _ in plan.questions]
    flags = plan.questions[0][1] if plan.questions else None
    async with _queue_service(plan.target, flags) as service:
        pending: dict[str, tuple[Any, float]] = {}
        added = 0
        for question, settings in plan.questions:
            info, new = await _submitted(service, question.thread_id, question.question, settings)
            if info is not None and info.status == "done":
                end = Ended(info.values, ran=False, seconds=0.0)
                rows[question.thread_id] = _row(
                    question, end, plan, progress, rows.get(question.thread_id)
                )
                continue
            added += new
            pending[question.thread_id] = (question, time.monotonic())
        write_summary(summary, order, rows)
        progress.note(f"{added} submitted to the queue; {len(pending) - added} already there")
        running: set[str] = set()
        while wait and pending:
            await asyncio.sleep(POLL_SECONDS)
            for thread_id, (question, began) in list(pending.items()):
                info = await service.read(CALLER, thread_id)
                if info.status == "done":
                    end = Ended(info.values, ran=True, seconds=time.monotonic() - began)
                    rows[thread_id] = _row(question, end, plan, progress, rows.get(thread_id))
                elif info.status == "failed":
                    progress.finish(question.line, "failed", "its job failed on a worker")
                    rows[thread_id] = _gave_up(question, time.monotonic() - began)
                else:
                    if info.status == "running" and thread_id not in running:
                        running.add(thread_id)
                        progress.start(question.line, False)
                    continue
                del pending[thread_id]
                write_summary(summary, order, rows)
    return [rows[q.thread_id] for q in order if q.thread_id in rows], len(pending)


def batch_on_queue(args: argparse.Namespace, target: str, flags: dict) -> int:
    """`batch FILE --queue`: 0 when every question is done (or, with --no-wait, submitted),
    1 when any failed (run it again to queue them again), 2 for bad input."""
    from deep_research.cli.batch import SUMMARY_FILE, batch_view, plan_batch
    from deep_research.cli.batch_file import read_batch, without_repeats
    from deep_research.service.preflight import check_store, queue_store

    questions, repeats = without_repeats(read_batch(args.file))
    conninfo = queue_store(target)
    plan = plan_batch(questions, flags, args.out_dir, conninfo, 1)
    check_store(conninfo)
    progress = batch_view(args, plan, repeats)
    try:
        with progress:
            rows, queued = asyncio.run(collect_batch(plan, progress, wait=not args.no_wait))
    except KeyboardInterrupt:
        print("\nstopped waiting; the runs go on: run the same command to collect", file=sys.stderr)
        return 130
    failed = [row for row in rows if row["status"] != "done"]
    done = len(rows) - len(failed)
    progress.note(f"{done}/{len(plan.questions)} done; summary: {plan.out_dir / SUMMARY_FILE}")
    if queued:
        progress.note(f"{queued} on the queue: run the same command again to collect them")
    if failed:
        progress.note("some questions failed: run the same command again to queue them again")
    return 1 if failed else 0


async def one_on_queue(
    conninfo: str, thread_id: str, question: str, settings: Any, wait: bool, progress: Any
) -> dict | None:
    """Submit one run (unless finished) and, with `wait`, its final state values; its progress
    as the worker's events reach the store."""
    from deep_research.cli.runner import CALLER

    async with _queue_service(conninfo, settings) as service:
        info, _ = await _submitted(service, thread_id, question, settings)
        if info is not None and info.status == "done":
            return info.values
        if not wait:
            return None
        async for records in service.follow(CALLER, thread_id):
            for record in records:
                if record.progress is not None:
                    progress.event(record.progress)
        info = await service.read(CALLER, thread_id)
        if info.status != "done":
            raise RuntimeError(f"the run {thread_id} is {info.status} on the queue (see its log)")
        return info.values


def run_on_queue(args: argparse.Namespace, target: str) -> int:
    """`run --queue`: submit the question, wait for a worker to finish it, write the outputs
    as `run` does; with --no-wait print the thread id and return."""
    from deep_research.cli import exit_codes
    from deep_research.cli.commands import _stdout_bytes, error_line, report_outputs
    from deep_research.cli.runner import write_outputs
    from deep_research.export.facts import facts_of
    from deep_research.service import preflight
    from deep_research.service.preflight import queue_store
    from deep_research.service.setting_sources import resolve_settings
    from deep_research.state import output_of

    try:
        conninfo = queue_store(target)
        outputs = report_outputs(args)
        settings = resolve_settings(args).settings
        question = preflight.check_question(args.question)
        preflight.check_store(conninfo)
    except BadInput as error:
        error_line(str(error))
        return exit_codes.BAD_INPUT
    thread_id = args.thread_id or uuid.uuid4().hex
    print(f"thread: {thread_id}", file=sys.stderr)
    from deep_research.cli.commands import choose_progress

    progress = choose_progress(args.quiet)
    try:
        with progress:
            values = asyncio.run(
                one_on_queue(conninfo, thread_id, question, settings, not args.no_wait, progress)
            )
    except KeyboardInterrupt:
        print(
            "\nstopped waiting; the run goes on: run the same command to collect", file=sys.stderr
        )
        return exit_codes.INTERRUPTED
    except BadInput as error:
        error_line(str(error))
        return exit_codes.BAD_INPUT
    except RuntimeError as error:
        error_line(str(error))
        return exit_codes.FAILED
    if values is None:
        print("queued: run the same command again (same --thread-id) to collect", file=sys.stderr)
        return exit_codes.OK
    output = output_of(values)
    facts = facts_of({**values, **output}, thread_id=thread_id)
    problems = write_outputs(output, outputs, facts, _stdout_bytes)
    for problem in problems:
        error_line(problem)
    return (
        exit_codes.BAD_INPUT
        if problems
        else exit_codes.finished_code(output, values.get("settings"))
    )
