"""`eval`'s flags, built without importing the evaluation (so `eval --help` answers at once)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

JUDGE_MODEL_VARIABLE = "DEEP_RESEARCH_JUDGE_MODEL"  # evaluation.judge reads the same variable


def add_command(commands: argparse._SubParsersAction, setting_flags: Callable[..., None]) -> None:
    """The `eval` subcommand, with the same setting flags as `run`."""
    sub = commands.add_parser("eval", help="run a task file and score the reports")
    sub.add_argument("tasks", nargs="?", type=Path, help="JSON lines: id, prompt, language")
    sub.add_argument("--out-dir", type=Path, help="where runs, scores and the summary go")
    sub.add_argument(
        "--compare", nargs=2, type=Path, metavar=("DIR_A", "DIR_B"), help="pair two eval folders"
    )
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
    sub.add_argument(
        "--format",
        default="md",
        metavar="FORMATS",
        help="report formats per task, comma-separated: md,html,docx,pdf (default md)",
    )
    sub.set_defaults(approve_plan=False)  # nobody is there to approve a plan
