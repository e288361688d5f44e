"""`deep-research`: the command that launches every door (the terminal's commands, the MCP
server, the web app, the queue worker); it sits above them all and none imports another.

It parses the command line, loads a local `.env`, sets up redacted logging and the shared
limits, and hands the command to its door. The graph, the model clients and the servers are
imported only by the commands that use them, so `--help` answers at once.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import logging
import os
import sys
import time
import warnings
from pathlib import Path

from deep_research.cli import commands, exit_codes
from deep_research.cli.commands import error_line
from deep_research.cli.parser import build_parser, parse_command_line
from deep_research.service.bad_input import BadInput
from deep_research.service.setting_sources import load_local_dotenv

__all__ = ["build_parser", "entry_point", "main"]  # build_parser: what tests and tools import

CAPABILITIES_FILE = "capabilities.json"  # structured-output methods found per server and model
TOOL_PROTOCOLS_FILE = "tool-protocols.json"  # how each server and model takes a worker's tools


LOG_LINE_CHARS = 2_000  # a log line longer than this (a failed job's arguments) is cut


class RedactingFormatter(logging.Formatter):
    """Log lines with keys and URL passwords masked, each at most LOG_LINE_CHARS long."""

    def format(self, record: logging.LogRecord) -> str:
        """The formatted record with keys and URL passwords masked and long lines cut (a
        library that logs what it was handed, such as a failed job's arguments, wrote one line
        of 10 MB)."""
        from deep_research.tools.secrets import redact

        lines = super().format(record).splitlines() or [""]
        return "\n".join(_cut(redact(line)) for line in lines)


def _cut(line: str) -> str:
    """A line of at most LOG_LINE_CHARS characters, saying how much was cut."""
    if len(line) <= LOG_LINE_CHARS:
        return line
    return f"{line[:LOG_LINE_CHARS]}… ({len(line) - LOG_LINE_CHARS:,} characters cut)"


def _log_to_stderr_redacted() -> None:
    """Warnings from any library go to stderr with their secrets masked; a Python warning (an
    old setting name, say) is one line, not a source location."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(RedactingFormatter("%(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    # pypdf's notes while it repairs a malformed PDF ("EOF marker not found") came before, and
    # beside, our own line for the file ("Skipping x.pdf: is not a readable PDF (...)"), which
    # says what matters: only its errors are shown.
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    warnings.formatwarning = lambda message, *_, **__: f"warning: {message}\n"


def _launch(door: str, args: argparse.Namespace, target: str) -> int:
    """Start a server door (`mcp`, `web`) or a queue worker until stopped; 2 when it cannot
    start. Each is imported here only: `--help` stays light."""
    import importlib

    module = {"mcp": "serve_mcp", "web": "serve_web", "worker": "worker"}[door]
    command = importlib.import_module(f"deep_research.cli.{module}").command
    try:
        return command(args, target)
    except BadInput as error:
        error_line(str(error))
        return exit_codes.BAD_INPUT


def main(argv: list[str] | None = None) -> int:
    """Parse the command line, run the command, and turn failures into exit codes."""
    started = time.monotonic()  # the summary's wall time is the whole command's
    argv = sys.argv[1:] if argv is None else argv
    args = parse_command_line(argv)  # --help ends here
    args.started = started
    try:
        args.from_dotenv = load_local_dotenv(Path.cwd(), os.environ)
    except BadInput as error:
        error_line(str(error))
        return exit_codes.BAD_INPUT
    _log_to_stderr_redacted()
    from deep_research.cli.redis_limits import use_redis

    try:
        use_redis(args)  # --redis: limits shared through Redis; unreachable: one line, exit 2
    except BadInput as error:
        error_line(str(error))
        return exit_codes.BAD_INPUT
    if args.command == "eval":
        return commands.evaluate(args)
    from deep_research.tools.checkpoints import default_checkpoint_db

    target = args.checkpoint_db or default_checkpoint_db()
    from deep_research.tools.checkpoints import data_dir
    from deep_research.tools.process_wide import current

    current().capabilities.remember_on_disk(data_dir() / CAPABILITIES_FILE)
    current().tool_protocols.remember_on_disk(data_dir() / TOOL_PROTOCOLS_FILE)
    if args.command in ("run", "resume", "ask"):
        return commands.research(args, target)
    if args.command == "config":
        return commands.config(args, target)
    if args.command == "batch":
        return commands.batch(args, target)
    if args.command == "export":
        return commands.export(args, target)
    if args.command in ("mcp", "web", "worker"):
        return _launch(args.command, args, target)
    if args.command in ("evidence", "recheck", "watch"):
        return commands.keeping(args, target)
    return commands.inspect_store(args, target)


def entry_point() -> None:
    """The console script: the command's exit code, without the interpreter's teardown.

    When the command returns, its work is done and said. What Python would still do is wait
    for threads a Ctrl-C abandoned (a model call held by its server) and collect a large heap:
    on a busy 2-core machine that took 10-25 s, in which the process looked hung. What exit
    would still write is written first (`written_before_exit`), then the process ends.
    """
    code = main()
    written_before_exit()
    os._exit(code)


def written_before_exit() -> None:
    """What Python's own exit writes, without its teardown: traces queued for LangSmith (when
    tracing is on, a background thread would send them once the main thread ends), every
    `atexit` handler (log handlers flushed and closed, finalizers, a library's own), and the
    standard streams; a reader that left (`| head`) is no error here."""
    tracing = sys.modules.get("langchain_core.tracers.langchain")
    if tracing is not None:
        tracing.wait_for_all_tracers()  # nothing to wait for unless a LangSmith client exists
    atexit._run_exitfuncs()  # logging.shutdown is one of them
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BrokenPipeError, ValueError):  # gone, or closed by the command
            stream.flush()
