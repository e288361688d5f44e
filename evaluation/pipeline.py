"""One eval: research every task (or take given articles), then judge each report, stage by stage.

Each stage's result is written to the task's folder before the next starts, so a rerun after a
crash or a judge failure repeats only what is missing: research resumes from its checkpoint,
criteria, RACE and FACT results already written are read back.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import reduce
from pathlib import Path
from typing import Any, Protocol

from deep_research.evaluation.criteria import generate_criteria
from deep_research.evaluation.fact import OWN, FactAsker, FactMode, WholePage, check_citations
from deep_research.evaluation.judge import Judge
from deep_research.evaluation.layout import EvalDir, read_record, write_json
from deep_research.evaluation.race import score_report
from deep_research.evaluation.records import FactScore, RaceScore, TaskCriteria, TaskResult
from deep_research.evaluation.running import TaskRun, run_tasks
from deep_research.evaluation.summary import write_summary
from deep_research.evaluation.tasks import EvalTask, criteria_for
from deep_research.export.facts import facts_of
from deep_research.export.formats import Format, Rendering, write_file
from deep_research.settings import Settings
from deep_research.state import Usage
from deep_research.tools.process_wide import current
from deep_research.tools.search.pages import PageFetcher
from deep_research.tools.secrets import redact


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


def open_manifest(layout: EvalDir, wanted: dict[str, Any], tasks_file: Path) -> str:
    """The folder's eval id; a new folder gets one, a used one must match what it records
    (system and settings, judge, criteria, references, scoring mode)."""
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


class RaceScorer(Protocol):
    """How a report is scored on its criteria: our prompts (`race.score_report`) or the
    benchmark's (`bench.BenchScorer`)."""

    async def __call__(
        self, task: EvalTask, report: str, criteria: TaskCriteria, judge: Judge, usage: list[Usage]
    ) -> RaceScore: ...


@dataclass
class Judging:
    """Who judges and how: the RACE judge and scorer, the FACT judge and its page source."""

    judge: Judge
    fact_judge: Judge
    fact_mode: FactMode = "pages"
    scorer: RaceScorer = score_report
    whole_page: WholePage | None = None  # fact mode pages: the shared, cached page reader
    fact_asker: Callable[[EvalTask], FactAsker] = lambda task: OWN  # whose FACT prompts


def article_run(task: EvalTask, article: str) -> TaskRun:
    """A given article as if a run had written it: no research, no sources, no evidence."""
    return TaskRun(task=task, thread_id="", output={"report": article}, evidence=[], seconds=0.0)


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
    run: TaskRun, layout: EvalDir, judging: Judging, given: list[TaskCriteria]
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
    judge = judging.judge
    spent = read_record(folder / "judge_usage.json", Usage) or Usage()
    usage: list[Usage] = [spent]
    try:
        criteria = criteria_for(task, given) or read_record(folder / "criteria.json", TaskCriteria)
        if criteria is None:
            criteria = await generate_criteria(task, judge, usage)
        write_json(folder / "criteria.json", criteria)
        race = read_record(folder / "race.json", RaceScore)
        if race is None:
            race = await judging.scorer(task, output.get("report") or "", criteria, judge, usage)
            write_json(folder / "race.json", race)
        fact = read_record(folder / "fact.json", FactScore)
        if fact is None and judging.fact_mode == "none":
            fact = FactScore(
                pairs=0,
                unique_pairs=0,
                supported=0,
                unsupported=0,
                unknown=0,
                citation_accuracy=None,
                effective_citations=0,
                mode="none",
            )
        if fact is None:
            fact = await check_citations(
                output.get("report") or "",
                output.get("sources") or [],
                run.evidence,
                judging.fact_judge,
                usage,
                judging.whole_page if judging.fact_mode == "pages" else None,
                judging.fact_asker(task),
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
        judge_cost_usd=judge.cost(
            judge_usage, None if judging.fact_judge is judge else judging.fact_judge.model
        ),
    )


async def evaluate(
    tasks: list[EvalTask],
    *,
    settings: Settings,
    judging: Judging,
    layout: EvalDir,
    eval_id: str,
    checkpoint_db: str,
    concurrency: int,
    given_criteria: list[TaskCriteria],
    note: Callable[[str], None],
    articles: dict[str, str] | None = None,
    formats: tuple[Format, ...] = ("md",),
) -> Outcome:
    """Run and score every task not yet done, then write the summary of all that are.

    With `articles` (task id -> report), nothing is researched: the given reports are scored.
    """
    outcome = Outcome()
    claim_tasks(layout, tasks)
    pending = []
    for task in tasks:
        if (layout.task(task.id) / "result.json").exists():
            outcome.skipped.append(str(task.id))
        else:
            pending.append(task)

    async def finished(run: TaskRun) -> None:
        result = await _judge_run(run, layout, judging, given_criteria)
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

    if articles is not None:
        await judge_articles(pending, articles, concurrency, finished, failed)
    else:
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
    scored = [r for r in results if r and str(r.id) in wanted]
    write_summary(layout, scored, len(tasks), judging.fact_mode)
    return outcome


async def judge_articles(
    tasks: list[EvalTask],
    articles: dict[str, str],
    concurrency: int,
    finished: Callable[[TaskRun], Any],
    failed: Callable[[EvalTask, Exception], None],
) -> None:
    """Score given articles, `concurrency` tasks at a time; one failure does not stop the rest."""
    slots = asyncio.Semaphore(concurrency)

    async def one(task: EvalTask) -> None:
        async with slots:
            try:
                await finished(article_run(task, articles[str(task.id)]))
            except Exception as error:  # one task's failure is recorded; the set goes on
                failed(task, error)

    await asyncio.gather(*(one(task) for task in tasks))


def page_reader(settings: Settings) -> WholePage:
    """The guarded page reader FACT uses for a whole eval: each URL read once, for every task."""
    reader = PageFetcher(
        Settings(
            max_page_fetches=1_000,
            page_max_bytes=settings.page_max_bytes,
            page_timeout=settings.page_timeout,
            fetch_private_addresses=settings.fetch_private_addresses,
        ),
        current().search_clients.tls(),  # the process's TLS context, not one per connection
    )
    return reader.whole
