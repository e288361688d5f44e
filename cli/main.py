"""`deep-research`: the command line. Exit codes: 0 done, 1 failed midway, 2 bad input, 130 Ctrl-C.

A run that fails or is interrupted is saved step by step; the message says how to resume it.
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import sys
import time
import uuid
from pathlib import Path

from dotenv import load_dotenv

from cli import evaluate, inspect
from cli.approval import NoAnswer, decide_plan
from cli.live import LiveProgress
from cli.preflight import (
    BadInput,
    check_corpus,
    check_credentials,
    check_question,
    settings_or_explain,
)
from cli.progress import PlainProgress
from cli.runner import Outputs, ThreadInUse, UnknownThread, execute, write_outputs
from cli.summary import RunSummary
from settings import SEARCH_BACKENDS
from tools.checkpoints import default_checkpoint_db
from tools.secrets import redact

SETTING_FLAGS = {
    "min_iterations": int,
    "max_iterations": int,
    "quality_threshold": float,
    "max_workers": int,
    "model": str,
    "fetch_pages": int,
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="deep-research", description="Research a question; cite what was found."
    )
    commands = parser.add_subparsers(dest="command", required=True)

    def outputs(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--output", type=Path, help="write the report here (default: stdout)")
        sub.add_argument("--json", type=Path, help="write the output state here as JSON")
        sub.add_argument("--quiet", action="store_true", help="print nothing but errors")
        sub.add_argument(
            "--evidence",
            action="store_true",
            help="append a table statement → source → quote to the report",
        )

    def store(sub: argparse.ArgumentParser) -> None:
        sub.add_argument(
            "--checkpoint-db",
            default=None,
            help="SQLite file or postgresql:// URL (default: $DEEP_RESEARCH_CHECKPOINT_DB "
            "or a file in your data folder)",
        )

    def setting_flags(sub: argparse.ArgumentParser) -> None:
        for name, kind in SETTING_FLAGS.items():
            sub.add_argument(f"--{name.replace('_', '-')}", type=kind, dest=name)
        sub.add_argument(
            "--search",
            choices=SEARCH_BACKENDS,
            dest="search_backend",
            help="a web provider (default: the one whose key is set, else duckduckgo), "
            "a folder of documents (local), or both (hybrid)",
        )
        sub.add_argument("--corpus", type=Path, help="the folder that local/hybrid search reads")

    run = commands.add_parser("run", help="start a research run")
    run.add_argument("question")
    run.add_argument("--thread-id", help="name the run (default: a new id)")
    setting_flags(run)
    run.add_argument(  # not among the setting flags: eval has a --language of its own
        "--language", dest="report_language", help="the report's language (default: the question's)"
    )
    run.add_argument("--approve-plan", action="store_true", help="review the plan before research")
    outputs(run)
    store(run)

    resume = commands.add_parser("resume", help="continue a run from its last finished step")
    resume.add_argument("thread_id")
    outputs(resume)
    store(resume)

    history = commands.add_parser("history", help="the checkpoints of a run")
    history.add_argument("thread_id")
    store(history)

    threads = commands.add_parser("threads", help="recent runs")
    threads.add_argument("--limit", type=int, default=20)
    store(threads)

    evaluate.add_command(commands, setting_flags)
    return parser


def _resume_hint(thread_id: str, checkpoint_db: str | None) -> str:
    store = f" --checkpoint-db {shlex.quote(checkpoint_db)}" if checkpoint_db else ""
    return f"deep-research resume {thread_id}{store}"


def _settings_values(args: argparse.Namespace) -> dict:
    values = {
        name: getattr(args, name) for name in SETTING_FLAGS if getattr(args, name) is not None
    }
    if args.approve_plan:
        values["approve_plan"] = True
    if getattr(args, "report_language", None):
        values["language"] = args.report_language
    if args.search_backend:
        values["search_backend"] = args.search_backend
    if args.corpus is not None:
        values["corpus_dir"] = str(args.corpus.expanduser().resolve())
    return values


def choose_progress(quiet: bool) -> LiveProgress | PlainProgress:
    """A live view on a terminal; plain lines on stderr elsewhere; nothing with --quiet."""
    if not quiet and sys.stderr.isatty():
        return LiveProgress()
    return PlainProgress(quiet=quiet)


def run_summary(output: dict, seconds: float, report: Path | None) -> RunSummary:
    """The end-of-run figures from the output state."""
    usage, quality = output["usage"], output.get("quality")
    return RunSummary(
        rounds=output.get("iteration") or 0,
        score=None if quality is None else quality.score,
        stop_reason=output.get("stop_reason") or "",
        llm_calls=usage.llm_calls,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        search_calls=usage.search_calls,
        cache_hits=usage.search_cache_hits,
        wall_seconds=seconds,
        report_path=str(report) if report else None,
        citation_precision=output.get("citation_precision"),
        cost_usd=output.get("cost_usd"),
    )


def main(argv: list[str] | None = None) -> int:
    """Parse the command line, run the command, and turn failures into exit codes."""
    load_dotenv(Path.cwd() / ".env", override=False)
    args = _parser().parse_args(argv)
    if args.command == "eval":
        return evaluate.command(args, _settings_values(args))
    target = args.checkpoint_db or default_checkpoint_db()
    progress = choose_progress(getattr(args, "quiet", False))
    thread_id = getattr(args, "thread_id", None) or uuid.uuid4().hex
    try:
        if args.command == "history":
            print("\n".join(asyncio.run(inspect.history(target, args.thread_id))))
            return 0
        if args.command == "threads":
            print("\n".join(asyncio.run(inspect.threads(target, args.limit))))
            return 0
        graph_input = None
        if args.command == "run":
            settings = settings_or_explain(_settings_values(args))
            question = check_question(args.question)
            check_credentials(settings)
            check_corpus(settings, progress)
            graph_input = {"question": question, "settings": settings}
            progress.note(f"thread: {thread_id}")
        else:
            progress.note(f"resuming thread: {thread_id}")
        started = time.monotonic()
        with progress:
            output = asyncio.run(
                execute(
                    target=target,
                    thread_id=thread_id,
                    graph_input=graph_input,
                    progress=progress,
                    decide_plan=decide_plan,
                )
            )
        progress.summary(run_summary(output, time.monotonic() - started, args.output))
        write_outputs(output, Outputs(args.output, args.json, args.evidence), print)
        return 0
    except NoAnswer as error:  # the run is saved at its plan: it can be answered later
        print(f"error: {error}", file=sys.stderr)
        print(f"resume with: {_resume_hint(thread_id, args.checkpoint_db)}", file=sys.stderr)
        return 2
    except (BadInput, UnknownThread, ThreadInUse) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            f"\ninterrupted; resume with: {_resume_hint(thread_id, args.checkpoint_db)}",
            file=sys.stderr,
        )
        return 130
    except Exception as error:  # the CLI's boundary: report, keep the run, exit non-zero
        print(redact(f"error: {type(error).__name__}: {error}"), file=sys.stderr)
        if args.command in ("run", "resume"):
            print(
                f"the run is saved; resume with: {_resume_hint(thread_id, args.checkpoint_db)}",
                file=sys.stderr,
            )
        return 1


def entry_point() -> None:
    """The console script."""
    sys.exit(main())
