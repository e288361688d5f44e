"""One eval: research every task, then judge each report as its run ends, stage by stage.

Each stage's result is written to the task's folder before the next starts, so a rerun after a
crash or a judge failure repeats only what is missing: research resumes from its checkpoint,
criteria, RACE and FACT results already written are read back.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import reduce
from pathlib import Path

from evaluation.criteria import generate_criteria
from evaluation.fact import LivePage, check_citations
from evaluation.judge import Judge
from evaluation.layout import EvalDir, read_record, write_json
from evaluation.race import score_report
from evaluation.records import FactScore, RaceScore, TaskCriteria, TaskResult
from evaluation.running import TaskRun, run_tasks
from evaluation.summary import write_summary
from evaluation.tasks import EvalTask, criteria_for
from export.facts import facts_of
from export.formats import Format, Rendering, write_file
from settings import Settings
from state import Usage
from tools.search.pages import PageFetcher
from tools.secrets import redact


class ManifestMismatch(ValueError):
    """The eval folder was started with other settings or another judge."""


@dataclass
class Outcome:
    """What an eval command did: tasks scored now or before, and failures by task id."""

    scored: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)


SHOWN_DIFFERENCES = 3  # settings named in a mismatch; the rest are counted
SHOWN_VALUE_CHARS = 60


def _shown(value: object) -> str:
    """A recorded value as the user would write it, clipped."""
    text = repr(value)
    return text if len(text) <= SHOWN_VALUE_CHARS else text[: SHOWN_VALUE_CHARS - 1] + "…"


def what_differs(recorded: object, wanted: object) -> str:
    """The settings that differ between a folder's manifest and this command, by name, with
    the value recorded then and the one given now (never the whole settings table)."""
    if not (isinstance(recorded, dict) and isinstance(wanted, dict)):
        return f"{_shown(recorded)} then, {_shown(wanted)} now"
    names = sorted(k for k in recorded.keys() | wanted.keys() if recorded.get(k) != wanted.get(k))
    parts = [
        f"{name} ({_shown(recorded.get(name))} then, {_shown(wanted.get(name))} now)"
        for name in names[:SHOWN_DIFFERENCES]
    ]
    more = len(names) - SHOWN_DIFFERENCES
    return ", ".join(parts) + (f" and {more} more" if more > 0 else "")


def open_manifest(layout: EvalDir, settings: Settings, judge_model: str, tasks_file: Path) -> str:
    """The folder's eval id; a new folder gets one, a used one must match settings and judge."""
    wanted = {"settings": settings.model_dump(mode="json"), "judge_model": judge_model}
    if layout.manifest.exists():
        manifest = json.loads(layout.manifest.read_text(encoding="utf-8"))
        for key, value in wanted.items():
            if manifest.get(key) != value:
                raise ManifestMismatch(
                    f"{layout.root} was started with other {key.replace('_', ' ')}: "
                    f"{what_differs(manifest.get(key), value)}; use another --out-dir, or the "
                    "same flags"
                )
        return manifest["eval_id"]
    eval_id = uuid.uuid4().hex[:12]
    write_json(layout.manifest, {"eval_id": eval_id, "tasks_file": str(tasks_file), **wanted})
    return eval_id


def claim_tasks(layout: EvalDir, tasks: list[EvalTask]) -> None:
    """Record each task in its folder; a folder that holds another task with that id is refused.

    A rerun must find the same task under an id: else it would skip it as scored, or resume
    the other task's research.
    """
    for task in tasks:
        path = layout.task(task.id) / "task.json"
        known = read_record(path, EvalTask)
        if known is None:
            write_json(path, task)
        elif (known.prompt, known.reference) != (task.prompt, task.reference):
            raise ManifestMismatch(
                f"task {task.id} in {layout.root} was another task (its prompt or reference "
                "differs); use another --out-dir"
            )


def _total(usage: list[Usage]) -> Usage:
    """The usage of several calls, added up."""
    return reduce(lambda a, b: a + b, usage, Usage())


def _write_formats(
    run: TaskRun, settings: Settings, folder: Path, formats: tuple[Format, ...]
) -> None:
    """The report in the other formats asked for (report.html, ...) next to report.md."""
    values = {**run.output, "question": run.task.prompt, "settings": settings}
    rendering = Rendering(run.output, facts_of(values, thread_id=run.thread_id))
    for format in formats:
        if format != "md":
            write_file(folder / f"report.{format}", rendering.render(format))


async def _judge_run(
    run: TaskRun,
    layout: EvalDir,
    judge: Judge,
    given: list[TaskCriteria],
    live_page: LivePage | None,
) -> TaskResult:
    """Criteria, RACE and FACT for one finished run; each stage written as it ends."""
    task, folder = run.task, layout.task(run.task.id)
    output = run.output
    (folder / "report.md").parent.mkdir(parents=True, exist_ok=True)
    (folder / "report.md").write_text(output.get("report") or "", encoding="utf-8")
    earlier = folder / "run.json"
    seconds = run.seconds
    if not seconds and earlier.exists():  # read back: the attempt that ran it timed it
        seconds = json.loads(earlier.read_text(encoding="utf-8"))["seconds"]
    write_json(
        folder / "run.json",
        {
            "thread_id": run.thread_id,
            "seconds": seconds,
            "stop_reason": output.get("stop_reason"),
            "rounds": output.get("iteration"),
            "usage": output.get("usage"),
            "cost_usd": output.get("cost_usd"),
        },
    )
    spent = read_record(folder / "judge_usage.json", Usage) or Usage()
    usage: list[Usage] = [spent]
    try:
        criteria = criteria_for(task, given) or read_record(folder / "criteria.json", TaskCriteria)
        if criteria is None:
            criteria = await generate_criteria(task, judge, usage)
        write_json(folder / "criteria.json", criteria)
        race = read_record(folder / "race.json", RaceScore)
        if race is None:
            race = await score_report(task, output.get("report") or "", criteria, judge, usage)
            write_json(folder / "race.json", race)
        fact = read_record(folder / "fact.json", FactScore)
        if fact is None:
            fact = await check_citations(
                output.get("report") or "",
                output.get("sources") or [],
                run.evidence,
                judge,
                usage,
                live_page,
            )
            write_json(folder / "fact.json", fact)
    finally:
        write_json(folder / "judge_usage.json", _total(usage))
    judge_usage = _total(usage)
    return TaskResult(
        id=task.id,
        language=task.language,
        thread_id=run.thread_id,
        race=race,
        fact=fact,
        stop_reason=output.get("stop_reason") or "",
        rounds=output.get("iteration") or 0,
        research_usage=output.get("usage") or Usage(),
        research_cost_usd=output.get("cost_usd"),
        research_seconds=seconds,
        judge_usage=judge_usage,
        judge_cost_usd=judge.cost(judge_usage),
    )


async def evaluate(
    tasks: list[EvalTask],
    *,
    settings: Settings,
    judge: Judge,
    layout: EvalDir,
    eval_id: str,
    checkpoint_db: str,
    concurrency: int,
    given_criteria: list[TaskCriteria],
    note: Callable[[str], None],
    refetch: bool = False,
    formats: tuple[Format, ...] = ("md",),
) -> Outcome:
    """Run and score every task not yet done, then write the summary of all that are."""
    outcome = Outcome()
    claim_tasks(layout, tasks)
    pending = []
    for task in tasks:
        if (layout.task(task.id) / "result.json").exists():
            outcome.skipped.append(str(task.id))
        else:
            pending.append(task)

    async def finished(run: TaskRun) -> None:
        live_page = PageFetcher(settings).text if refetch else None  # guarded, per-task budget
        result = await _judge_run(run, layout, judge, given_criteria, live_page)
        folder = layout.task(run.task.id)
        _write_formats(run, settings, folder, formats)
        write_json(folder / "result.json", result)
        (folder / "error.txt").unlink(missing_ok=True)
        outcome.scored.append(str(run.task.id))
        accuracy = result.fact.citation_accuracy
        note(
            f"task {run.task.id} ({run.task.language}): quality {result.race.overall:.3f} "
            f"({result.race.mode}); citations {result.fact.supported}/"
            f"{result.fact.supported + result.fact.unsupported} supported"
            + (f" ({accuracy:.0%})" if accuracy is not None else "")
        )

    def failed(task: EvalTask, error: Exception) -> None:
        message = redact(f"{type(error).__name__}: {error}")
        outcome.failed[str(task.id)] = message
        folder = layout.task(task.id)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "error.txt").write_text(message + "\n", encoding="utf-8")
        note(f"task {task.id}: failed: {message}")

    await run_tasks(
        pending,
        settings=settings,
        checkpoint_db=checkpoint_db,
        thread_id=lambda task: f"eval-{eval_id}-{task.id}",
        concurrency=concurrency,
        finished=finished,
        failed=failed,
    )
    results = [read_record(path, TaskResult) for path in layout.result_files()]
    wanted = {str(t.id) for t in tasks}
    write_summary(layout, [r for r in results if r and str(r.id) in wanted], len(tasks))
    return outcome
