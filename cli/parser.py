"""The `deep-research` parser: every command and flag, built without importing anything heavy."""

from __future__ import annotations

import argparse
from pathlib import Path

from deep_research.cli import eval_parser, serve_mcp, serve_web, worker
from deep_research.cli.queue import add_queue_flags
from deep_research.cli.redis_limits import add_redis_flag
from deep_research.cli.resume_settings import add_resume_flags, add_server_only_set
from deep_research.service.setting_sources import add_server_only_flags, add_setting_flags

FORMAT_CHOICES = ("md", "html", "docx", "pdf")


def _report_flags(sub: argparse.ArgumentParser) -> None:
    """Where the report goes: files by extension, stdout in one format, the evidence table."""
    sub.add_argument(
        "--output",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="write the report here, in the format of its extension: .md .html .docx .pdf "
        "(repeat for several; default: Markdown on stdout)",
    )
    sub.add_argument(
        "--format", choices=FORMAT_CHOICES, help="also write the report to stdout in this format"
    )
    sub.add_argument(
        "--evidence",
        action="store_true",
        help="Markdown: append a table statement → source → quote (HTML, Word, PDF always "
        "show the evidence)",
    )


def _outputs_flags(sub: argparse.ArgumentParser) -> None:
    """Where a run's results go: report, JSON, evidence table, quiet."""
    _report_flags(sub)
    sub.add_argument("--json", type=Path, metavar="FILE", help="write the output state as JSON")
    sub.add_argument("--quiet", action="store_true", help="print nothing but errors")


def _store_flag(sub: argparse.ArgumentParser) -> None:
    """Which checkpoint store a command uses."""
    sub.add_argument(
        "--checkpoint-db",
        default=None,
        metavar="PATH_OR_URL",
        help="SQLite file or postgresql:// URL (default: $DEEP_RESEARCH_CHECKPOINT_DB "
        "or a file in your data folder)",
    )


EXIT_CODES_HELP = (
    "exit codes: 0 a report with evidence; 1 failed midway (resumable); 2 bad input or an "
    "unusable store or endpoint, before any paid call; 3 finished without evidence (report "
    "written); 4 stopped by a budget before any evidence was found; 130 interrupted"
)


def _all_doors_flag(sub: argparse.ArgumentParser) -> None:
    """`--all-doors`: this command also reaches runs started through MCP or the web app."""
    sub.add_argument(
        "--all-doors",
        action="store_true",
        help="also reach runs started through the MCP server or the web app (by default the "
        "terminal sees its own runs)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command; cheap to build (it imports nothing heavy)."""
    parser = argparse.ArgumentParser(
        prog="deep-research",
        description="Research a question; cite what was found.",
        epilog=EXIT_CODES_HELP,
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser("run", help="start a research run", epilog=EXIT_CODES_HELP)
    run.add_argument("question", help="what to research (at most 4,000 characters)")
    run.add_argument("--thread-id", help="name the run (default: a new id)")
    add_setting_flags(run)
    _outputs_flags(run)
    _store_flag(run)
    add_redis_flag(run)
    add_queue_flags(run)

    resume = commands.add_parser(
        "resume", help="continue a run from its last finished step", epilog=EXIT_CODES_HELP
    )
    resume.add_argument("thread_id", help="the thread id that `run` printed")
    add_resume_flags(resume)
    add_server_only_flags(resume)
    _outputs_flags(resume)
    _store_flag(resume)
    _all_doors_flag(resume)
    add_redis_flag(resume)

    ask = commands.add_parser(
        "ask",
        help="a follow-up question on a finished run, answered from its evidence first",
        epilog=EXIT_CODES_HELP,
    )
    ask.add_argument("parent", metavar="THREAD", help="the thread id of the finished run")
    ask.add_argument("question", help="the follow-up question")
    ask.add_argument("--thread-id", help="name the new run (default: a new id)")
    add_server_only_flags(ask)
    add_server_only_set(ask)
    _outputs_flags(ask)
    _store_flag(ask)
    _all_doors_flag(ask)

    batch = commands.add_parser(
        "batch",
        help="research every question of a file (one per line, or JSONL), N at a time",
        epilog="run the same command again after a crash: finished questions are skipped, "
        "interrupted ones resume from their checkpoint",
    )
    batch.add_argument("file", type=Path, help="questions, one per line, or JSON lines")
    batch.add_argument(
        "--out-dir", type=Path, default=Path("reports"), metavar="DIR", help="reports go here"
    )
    batch.add_argument(
        "--concurrency", type=int, default=3, metavar="N", help="questions researched at once"
    )
    batch.add_argument("--quiet", action="store_true", help="print nothing but errors")
    batch.add_argument(
        "--format",
        default="md",
        metavar="FORMATS",
        help="report formats per question, comma-separated: md,html,docx,pdf (default md)",
    )
    add_setting_flags(batch, unattended=True)
    _store_flag(batch)
    add_redis_flag(batch)
    add_queue_flags(batch)

    config = commands.add_parser(
        "config", help="show the effective settings and where each came from"
    )
    config.add_argument("--json", action="store_true", help="print them as JSON")
    add_setting_flags(config)
    _store_flag(config)

    export = commands.add_parser(
        "export",
        help="write a finished run's report from the store (no model or search call)",
        epilog="exit codes: 0 written; 2 unknown or unfinished thread, bad file name, or a "
        "format that cannot be written here (the others are still written)",
    )
    export.add_argument("thread_id", help="the thread id of a finished run")
    _report_flags(export)
    _store_flag(export)
    _all_doors_flag(export)

    history = commands.add_parser("history", help="the checkpoints of a run")
    history.add_argument("thread_id", help="the thread id of the run")
    _store_flag(history)
    _all_doors_flag(history)

    threads = commands.add_parser("threads", help="recent runs")
    threads.add_argument(
        "--limit",
        type=_non_negative,
        default=20,
        metavar="N",
        help="list at most N runs, newest first (0: all; default 20)",
    )
    _store_flag(threads)
    _all_doors_flag(threads)
    eval_parser.add_command(commands, add_setting_flags)
    serve_mcp.add_command(commands, add_setting_flags, _store_flag)
    worker.add_command(commands, _store_flag)
    serve_web.add_command(commands, add_setting_flags, _store_flag)
    return parser


def _non_negative(text: str) -> int:
    """An argparse type: a whole number, 0 or more (the error says so, not the type's name)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be a whole number, 0 or more, not {text!r}"
        ) from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


def parse_command_line(argv: list[str]) -> argparse.Namespace:
    """The parsed command line; an unknown flag is named with the usage of its own command."""
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        commands.choices[args.command].error(f"unrecognized arguments: {' '.join(unknown)}")
    return args
