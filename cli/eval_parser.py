"""`eval`'s flags, built without importing the evaluation's models and clients (so `eval --help`
answers at once); the judge flags' defaults and meanings are `JudgeConfig`'s own."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from deep_research.evaluation.judge_config import JUDGE_MODEL_VARIABLE, JudgeConfig

JUDGE_FLAGS = {  # flag: the JudgeConfig field it sets
    "--judge-max-tokens": "max_tokens",
    "--judge-context-tokens": "context_tokens",
    "--judge-timeout": "timeout",
    "--judge-concurrency": "concurrency",
    "--judge-retries": "retries",
}


def add_command(commands: argparse._SubParsersAction, setting_flags: Callable[..., None]) -> None:
    """The `eval` subcommand, with the same setting flags as `run`."""
    sub = commands.add_parser("eval", help="run a task file (or take articles) and score them")
    sub.add_argument("tasks", nargs="?", type=Path, help="JSON lines: id, prompt, language")
    sub.add_argument("--out-dir", type=Path, help="where runs, scores and the summary go")
    sub.add_argument(
        "--compare", nargs=2, type=Path, metavar=("DIR_A", "DIR_B"), help="pair two eval folders"
    )
    sub.add_argument(
        "--allow-mismatch",
        action="store_true",
        help="--compare even when the folders' judge, criteria, references or mode differ "
        "(each difference is printed above the table)",
    )
    sub.add_argument(
        "--articles",
        type=Path,
        help="score these reports instead of researching: JSON lines with id, prompt, article "
        "(the shape DeepResearch Bench ships for other systems); no research call is made",
    )
    sub.add_argument("--system", help="the name of the system scored (default: from the file)")
    setting_flags(sub, unattended=True)  # nobody is there to approve a plan
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
        choices=["auto", "json_schema", "json_object", "tool_calling", "prompt"],
        default="auto",
        help="how the judge's replies are forced into JSON (default: auto)",
    )
    for flag, name in JUDGE_FLAGS.items():
        field = JudgeConfig.model_fields[name]
        sub.add_argument(
            flag,
            type=field.annotation,  # int or float
            default=field.default,
            help=f"{field.description} (default: %(default)s)",
        )
    sub.add_argument(
        "--fact-judge-model", help="the model that checks citations (default: the judge model)"
    )
    sub.add_argument(
        "--fact-mode",
        choices=["pages", "snippets", "none"],
        default="pages",
        help="pages: judge citations against the full pages, read again (guarded, cached per "
        "URL); snippets: the cheap mode, against the text the run kept; none: skip FACT",
    )
    sub.add_argument("--criteria", type=Path, help="criteria to use (DeepResearch Bench format)")
    sub.add_argument(
        "--references", type=Path, help="reference reports: JSON lines with id, prompt, article"
    )
    sub.add_argument(
        "--bench-dir",
        type=Path,
        help="a local clone of DeepResearch Bench: its tasks, criteria, references and its own "
        "prompts are read from there, and reports are scored as its code does",
    )
    sub.add_argument(
        "--skip-cleaning",
        action="store_true",
        help="with --bench-dir: the articles are cleaned already (the benchmark's cleaned_data)",
    )
    sub.add_argument("--task-language", help="only the tasks in this language (en, zh, ...)")
    sub.add_argument("--limit", type=int, help="only the first N tasks (after --task-language)")
    sub.add_argument("--concurrency", type=int, default=2, help="tasks researched at once")
    sub.add_argument("--checkpoint-db", help="the runs' store (default: DIR/checkpoints.sqlite)")
    sub.add_argument("--quiet", action="store_true", help="print nothing but errors")
    sub.add_argument(
        "--format",
        default="md",
        metavar="FORMATS",
        help="report formats per task, comma-separated: md,html,docx,pdf (default md)",
    )
    sub.set_defaults(approve_plan=False)  # nobody is there to approve a plan
