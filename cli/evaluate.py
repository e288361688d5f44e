"""`deep-research eval`: run a task file (or take given articles) and score every report;
`--compare` two such folders.

Exit codes as for `run`: 0 every task scored, 1 some task failed (the same command again
resumes it), 2 bad input (before any model call), 130 Ctrl-C (the same command resumes).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from deep_research.cli.output_paths import check_output_folder
from deep_research.cli.progress import PlainProgress
from deep_research.evaluation.bench import CLEANED, QUERY, BenchDir
from deep_research.evaluation.bench_fact import BenchFact
from deep_research.evaluation.compare import compare, mismatches
from deep_research.evaluation.compare import markdown as compare_markdown
from deep_research.evaluation.judge import (
    Judge,
    JudgeConfig,
    fact_judge,
    fitted_to_server,
    judge_endpoint,
)
from deep_research.evaluation.judge_config import JUDGE_MODEL_VARIABLE
from deep_research.evaluation.layout import EvalDir
from deep_research.evaluation.pipeline import (
    Judging,
    ManifestMismatch,
    Outcome,
    claim_tasks,
    evaluate,
    open_manifest,
    page_reader,
)
from deep_research.evaluation.race import score_report
from deep_research.evaluation.tasks import (
    EvalTask,
    TaskFileError,
    attach_references,
    load_criteria,
    load_tasks,
)
from deep_research.export.formats import Format, UnknownFormat, check_formats, parse_formats
from deep_research.export.pdf import PdfRendererMissing
from deep_research.service.model_list import check_model_names, says_model_not_found
from deep_research.service.preflight import (
    BadInput,
    check_corpus,
    check_credentials,
    check_question,
    check_run_settings,
    check_store,
    settings_or_explain,
)
from deep_research.settings import Settings
from deep_research.tools.model_names import MissingCredentials
from deep_research.tools.secrets import redact


def digest(path: Path) -> dict[str, str]:
    """A file as the manifest records it: its name and what it held (not where it was, so the
    same command from another folder, or a copy of the file, is the same file)."""
    return {"file": path.name, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}


def _articles(path: Path) -> dict[str, str]:
    """The articles of an `--articles` file by task id; every line must carry one."""
    articles = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)  # load_tasks has checked every line is a JSON object
        article = row.get("article")
        if not isinstance(article, str) or not article.strip():
            raise TaskFileError(f"{path} line {number}: no article")
        articles[str(row.get("id"))] = article
    return articles


def _select(tasks: list[EvalTask], args: argparse.Namespace) -> list[EvalTask]:
    """The tasks left after --task-language and --limit, each prompt checked."""
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


def _judge_config(args: argparse.Namespace, model: str, settings: Settings) -> JudgeConfig:
    """The judge's own client settings, from its flags alone (prices: the shared price table)."""
    try:
        return JudgeConfig(
            model=model,
            max_tokens=args.judge_max_tokens,
            context_tokens=args.judge_context_tokens,
            timeout=args.judge_timeout,
            concurrency=args.judge_concurrency,
            retries=args.judge_retries,
            structured_output=args.judge_structured_output,
            prices=settings.prices,
        )
    except ValidationError as error:
        first = error.errors()[0]
        flag = "--judge-" + str(first["loc"][0]).replace("_tokens", "-tokens").replace("_", "-")
        raise BadInput(f"{flag}: {first['msg']}") from None


def _formats(args: argparse.Namespace) -> tuple[Format, ...]:
    """The report formats asked for, checked before any call (BadInput when one cannot be)."""
    try:
        formats = tuple(parse_formats(args.format))
        check_formats(list(formats))
    except (UnknownFormat, PdfRendererMissing) as error:
        raise BadInput(str(error)) from None
    return formats


def _compare(args: argparse.Namespace) -> int:
    """Print the paired table of two eval folders; refuse folders judged differently."""
    manifests = []
    for folder in args.compare:
        layout = EvalDir(folder)
        if not layout.result_files():
            raise BadInput(f"{folder} holds no scored tasks (no tasks/*/result.json)")
        manifests.append(json.loads(layout.manifest.read_text(encoding="utf-8")))
    folder_a, folder_b = args.compare
    differ = mismatches(*manifests)
    if differ and not args.allow_mismatch:
        raise BadInput(
            "the folders were not scored alike, so their scores do not compare ("
            + "; ".join(differ)
            + "); --allow-mismatch shows the table anyway"
        )
    for line in differ:
        print(f"warning: not scored alike: {line}")
    name_a, name_b = (
        f"{f} ({m.get('system')})" for f, m in zip(args.compare, manifests, strict=True)
    )
    print(compare_markdown(compare(folder_a, folder_b), name_a, name_b), end="")
    return 0


class Plan:
    """What one eval scores and how, checked before any call; `record` goes into eval.json."""

    def __init__(self, args: argparse.Namespace, settings: Settings, model: str) -> None:
        self.bench = BenchDir(args.bench_dir) if args.bench_dir else None
        if self.bench:
            self.bench.check_prompts()  # a prompt file that cannot be read: said before any call
        source = args.articles or args.tasks or (self.bench.root / QUERY if self.bench else None)
        if self.bench and not (args.articles or args.tasks):
            tasks = self.bench.tasks()
        elif source is None:
            raise BadInput(
                "eval needs a task file, --articles FILE or --bench-dir (or --compare DIR_A DIR_B)"
            )
        else:
            tasks = load_tasks(source)
        self.source = source
        self.articles = _articles(args.articles) if args.articles else None  # lines checked
        if args.references:
            tasks = attach_references(tasks, args.references)
        if self.bench:
            tasks = self.bench.with_references(tasks)
            given = self.bench.criteria()
            strangers = [str(t.id) for t in tasks if t.prompt not in given]
            if strangers:
                raise BadInput(
                    f"tasks {', '.join(strangers[:5])}: not in the benchmark (no criteria in "
                    "--bench-dir for their prompt text)"
                )
            self.criteria = [given[t.prompt].model_copy(update={"id": t.id}) for t in tasks]
        else:
            self.criteria = load_criteria(args.criteria) if args.criteria else []
        self.tasks = _select(tasks, args)
        self.system = args.system or (
            Path(args.articles).stem if args.articles else "deep-research"
        )
        self.record: dict[str, Any] = {
            "system": self.system,
            "settings": None if self.articles is not None else settings.model_dump(mode="json"),
            "articles": digest(args.articles) if args.articles else None,
            "judge": {
                "model": model,
                "fact_model": args.fact_judge_model or model,
                "max_tokens": args.judge_max_tokens,
                "context_tokens": args.judge_context_tokens,
            },
            "criteria": self._criteria_record(args),
            "references": self._references_record(args),
            "mode": {
                "prompts": "DeepResearch Bench" if self.bench else "deep-research",
                "cleaning": bool(self.bench) and not args.skip_cleaning,
                "fact": args.fact_mode,
            },
        }

    def _criteria_record(self, args: argparse.Namespace) -> Any:
        """Where the criteria come from, as eval.json records it."""
        if self.bench:
            return digest(self.bench.root / "data/criteria_data/criteria.jsonl")
        return digest(args.criteria) if args.criteria else "written by the judge per task"

    def _references_record(self, args: argparse.Namespace) -> Any:
        """Where the references come from, as eval.json records it."""
        if self.bench:
            return digest(self.bench.root / "data/test_data/cleaned_data/reference.jsonl")
        return digest(args.references) if args.references else None


def _published(plan: Plan, args: argparse.Namespace, summary: dict[str, Any]) -> str:
    """Calibration: when the articles are the benchmark's own shipped ones for a system, its
    published RACE figures beside ours."""
    if plan.bench is None or args.articles is None:
        return ""
    if Path(args.articles).resolve().parent != (plan.bench.root / CLEANED).resolve():
        return ""
    system = Path(args.articles).stem
    published = plan.bench.published(system)
    if not published:
        return ""
    ours = summary["groups"]["all"]["race"].get("relative", {}).get("overall", {})
    mean = "–" if ours.get("mean") is None else f"{ours['mean']:.4f}"
    shown = ", ".join(f"{name} {value:.4f}" for name, value in published.items())
    return (
        f"\ncalibration for {system}: ours overall {mean} on {ours.get('n', 0)} tasks "
        f"(of {summary['tasks_expected']} asked); published by the benchmark: {shown}\n"
    )


async def _run(
    plan: Plan,
    settings: Settings,
    config: JudgeConfig,
    layout: EvalDir,
    eval_id: str,
    args: argparse.Namespace,
    note: Callable[[str], None],
) -> Outcome:
    """The eval inside one event loop (the judge's limits belong to it)."""
    endpoint = judge_endpoint(args.judge_base_url)
    judge, window = await fitted_to_server(Judge(config, endpoint))
    if window and window < config.context_tokens:
        note(
            f"judge: its server reports a {window}-token context window, below "
            f"--judge-context-tokens {config.context_tokens}: prompts are fitted to it"
        )
    judging = Judging(
        judge=judge,
        fact_judge=fact_judge(judge, args.fact_judge_model),
        fact_mode=args.fact_mode,
        scorer=plan.bench.scorer(clean=not args.skip_cleaning) if plan.bench else score_report,
        whole_page=page_reader(settings) if args.fact_mode == "pages" else None,
    )
    if plan.bench:
        root = plan.bench.root
        judging.fact_asker = lambda task: BenchFact.from_clone(root, task.language)
    return await evaluate(
        plan.tasks,
        settings=settings,
        judging=judging,
        layout=layout,
        eval_id=eval_id,
        checkpoint_db=args.checkpoint_db or str(layout.checkpoints),
        concurrency=max(1, args.concurrency),
        given_criteria=plan.criteria,
        note=note,
        articles=plan.articles,
        formats=_formats(args),
    )


def command(args: argparse.Namespace, settings_values: dict) -> int:
    """Run the eval (or the comparison) and turn failures into exit codes."""
    progress = PlainProgress(quiet=args.quiet)
    try:
        if args.compare:
            return _compare(args)
        if args.out_dir is None:
            raise BadInput(
                "eval needs a task file and --out-dir (or --articles FILE or --bench-dir PATH "
                "for the tasks; or --compare DIR_A DIR_B)"
            )
        check_output_folder(args.out_dir, "--out-dir")
        settings = settings_or_explain(settings_values)
        check_run_settings(settings, progress)  # MCP sources file; a lowered guard said aloud
        _formats(args)
        layout = EvalDir(args.out_dir)
        if args.articles is None:  # research runs go into the store: it must open
            check_store(args.checkpoint_db or str(layout.checkpoints))  # before any task is paid
        model = _judge_model(args, settings, progress.note)
        config = _judge_config(args, model, settings)
        plan = Plan(args, settings, model)
        if plan.articles is None:  # research runs: their server, search and corpus must work
            check_credentials(settings)
            check_corpus(settings, progress)
            check_model_names(settings)
        eval_id = open_manifest(layout, plan.record, plan.source)
        claim_tasks(layout, plan.tasks)  # another task under a known id: refused before any call
        progress.note(
            f"eval {eval_id}: {len(plan.tasks)} tasks of {plan.system}, judge {model}, "
            f"into {layout.root}"
        )
        outcome = asyncio.run(_run(plan, settings, config, layout, eval_id, args, progress.note))
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
    summary = json.loads(layout.summary_json.read_text(encoding="utf-8"))
    print(_published(plan, args, summary), end="")
    progress.note(
        f"{len(outcome.scored)} scored now, {len(outcome.skipped)} scored before, "
        f"{len(outcome.failed)} failed; summary in {layout.summary_json}"
    )
    if outcome.failed:
        how = "run the same command again to resume"
        if any(says_model_not_found(message) for message in outcome.failed.values()):
            how = (  # the folder keeps its model: a rerun there would be refused the same way
                "the model server has no such model: start again with one it has (--model), "
                "in another --out-dir"
            )
        print(redact(f"error: {len(outcome.failed)} tasks failed; {how}"), file=sys.stderr)
        return 1
    return 0
