"""`deep-research eval`: run a task file and score every report; `--compare` two such folders.

Exit codes as for `run`: 0 every task scored, 1 some task failed (the same command again
resumes it), 2 bad input (before any model call), 130 Ctrl-C (the same command resumes).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Callable
from pathlib import Path

from cli.preflight import (
    BadInput,
    check_corpus,
    check_credentials,
    check_question,
    settings_or_explain,
)
from cli.progress import PlainProgress
from evaluation.compare import compare
from evaluation.compare import markdown as compare_markdown
from evaluation.judge import JUDGE_MODEL_VARIABLE, Judge, judge_endpoint, judge_settings
from evaluation.layout import EvalDir
from evaluation.pipeline import ManifestMismatch, Outcome, evaluate, open_manifest
from evaluation.tasks import (
    EvalTask,
    TaskFileError,
    attach_references,
    load_criteria,
    load_tasks,
)
from settings import Settings
from tools.models import Endpoint, MissingCredentials
from tools.secrets import redact


def add_command(
    commands: argparse._SubParsersAction, setting_flags: Callable[[argparse.ArgumentParser], None]
) -> None:
    """The `eval` subcommand, with the same setting flags as `run`."""
    sub = commands.add_parser("eval", help="run a task file and score the reports")
    sub.add_argument("tasks", nargs="?", type=Path, help="JSON lines: id, prompt, language")
    sub.add_argument("--out-dir", type=Path, help="where runs, scores and the summary go")
    sub.add_argument(
        "--compare", nargs=2, type=Path, metavar=("DIR_A", "DIR_B"), help="pair two eval folders"
    )
    setting_flags(sub)
    sub.add_argument(
        "--judge-model", help=f"the judge (default: ${JUDGE_MODEL_VARIABLE} or the research model)"
    )
    sub.add_argument(
        "--judge-base-url",
        help="the judge's OpenAI-compatible server (default: $DEEP_RESEARCH_JUDGE_BASE_URL, "
        "else the research server); its key is $DEEP_RESEARCH_JUDGE_API_KEY",
    )
    sub.add_argument(
        "--judge-structured-output",
        choices=["auto", "json_schema", "tool_calling", "prompt"],
        help="how the judge's replies are forced into JSON (default: as for research)",
    )
    sub.add_argument(
        "--judge-concurrency", type=int, help="judge calls in flight at once (a local server: 1)"
    )
    sub.add_argument("--judge-timeout", type=float, help="seconds per judge call")
    sub.add_argument("--criteria", type=Path, help="criteria to use (DeepResearch Bench format)")
    sub.add_argument(
        "--references", type=Path, help="reference reports: JSON lines with id, prompt, article"
    )
    sub.add_argument("--task-language", help="only the tasks in this language (en, zh, ...)")
    sub.add_argument("--limit", type=int, help="only the first N tasks (after --task-language)")
    sub.add_argument("--concurrency", type=int, default=2, help="tasks researched at once")
    sub.add_argument("--checkpoint-db", help="the runs' store (default: DIR/checkpoints.sqlite)")
    sub.add_argument(
        "--refetch",
        action="store_true",
        help="judge citations against the live pages (guarded fetch, at most max_page_fetches "
        "a task), where they can be read, not only the text the run retrieved",
    )
    sub.add_argument("--quiet", action="store_true", help="print nothing but errors")
    sub.set_defaults(approve_plan=False)  # nobody is there to approve a plan


def _tasks(args: argparse.Namespace) -> list[EvalTask]:
    """The tasks to run, with references joined and filters applied, each prompt checked."""
    tasks = load_tasks(args.tasks)
    if args.references:
        tasks = attach_references(tasks, args.references)
    if args.task_language:
        tasks = [t for t in tasks if t.language == args.task_language]
    if args.limit is not None:
        tasks = tasks[: max(0, args.limit)]
    if not tasks:
        raise BadInput("no task is left to run after --task-language/--limit")
    for task in tasks:
        try:
            task.prompt = check_question(task.prompt)
        except BadInput as error:
            raise BadInput(f"task {task.id}: {error}") from None
    return tasks


def _judge_model(args: argparse.Namespace, settings: Settings, note: Callable[[str], None]) -> str:
    """The judge model: the flag, the environment, or (with a warning) the research model."""
    model = args.judge_model or os.environ.get(JUDGE_MODEL_VARIABLE)
    if not model:
        note(f"judge: the research model {settings.model} (a separate --judge-model is fairer)")
    return model or settings.model


def _judge_settings(args: argparse.Namespace, settings: Settings, model: str) -> Settings:
    """The judge's settings; its server may need another method, fewer calls, more time."""
    changes = {
        "structured_output": args.judge_structured_output,
        "max_concurrent_model_calls": args.judge_concurrency,
        "search_timeout": args.judge_timeout,
    }
    given = {name: value for name, value in changes.items() if value is not None}
    return settings_or_explain({**judge_settings(settings, model).model_dump(), **given})


def _compare(args: argparse.Namespace) -> int:
    """Print the paired table of two eval folders."""
    for folder in args.compare:
        if not EvalDir(folder).result_files():
            raise BadInput(f"{folder} holds no scored tasks (no tasks/*/result.json)")
    folder_a, folder_b = args.compare
    print(compare_markdown(compare(folder_a, folder_b), str(folder_a), str(folder_b)), end="")
    return 0


async def _run(
    tasks: list[EvalTask],
    settings: Settings,
    judge: tuple[Settings, Endpoint],
    layout: EvalDir,
    eval_id: str,
    args: argparse.Namespace,
    note: Callable[[str], None],
) -> Outcome:
    """The eval inside one event loop (the judge's limits belong to it)."""
    given = load_criteria(args.criteria) if args.criteria else []
    return await evaluate(
        tasks,
        settings=settings,
        judge=Judge(*judge),
        layout=layout,
        eval_id=eval_id,
        checkpoint_db=args.checkpoint_db or str(layout.checkpoints),
        concurrency=max(1, args.concurrency),
        given_criteria=given,
        note=note,
        refetch=args.refetch,
    )


def command(args: argparse.Namespace, settings_values: dict) -> int:
    """Run the eval (or the comparison) and turn failures into exit codes."""
    progress = PlainProgress(quiet=args.quiet)
    try:
        if args.compare:
            return _compare(args)
        if args.tasks is None or args.out_dir is None:
            raise BadInput("eval needs a task file and --out-dir (or --compare DIR_A DIR_B)")
        settings = settings_or_explain(settings_values)
        tasks = _tasks(args)
        if args.criteria:
            load_criteria(args.criteria)  # a broken criteria file is bad input, found now
        check_credentials(settings)
        check_corpus(settings, progress)
        model = _judge_model(args, settings, progress.note)
        judge = (_judge_settings(args, settings, model), judge_endpoint(args.judge_base_url))
        layout = EvalDir(args.out_dir)
        eval_id = open_manifest(layout, settings, model, args.tasks)
        progress.note(f"eval {eval_id}: {len(tasks)} tasks, judge {model}, into {layout.root}")
        outcome = asyncio.run(
            _run(
                tasks,
                settings,
                judge,
                layout,
                eval_id,
                args,
                progress.note,
            )
        )
    except (BadInput, TaskFileError, ManifestMismatch, MissingCredentials) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted; run the same command again to resume", file=sys.stderr)
        return 130
    except Exception as error:  # the command's boundary: report; finished work is kept
        print(redact(f"error: {type(error).__name__}: {error}"), file=sys.stderr)
        print("run the same command again to resume", file=sys.stderr)
        return 1
    print(layout.summary_md.read_text(encoding="utf-8"), end="")
    progress.note(
        f"{len(outcome.scored)} scored now, {len(outcome.skipped)} scored before, "
        f"{len(outcome.failed)} failed; summary in {layout.summary_json}"
    )
    if outcome.failed:
        print(
            redact(
                f"error: {len(outcome.failed)} tasks failed; run the same command again to resume"
            ),
            file=sys.stderr,
        )
        return 1
    return 0
