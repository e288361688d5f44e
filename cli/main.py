"""`deep-research`: the command line. Exit codes are in `cli.exit_codes` (0 2 3 4 1 130).

A run that fails or is interrupted is saved step by step; the message says how to resume it,
and says so only when a checkpoint was written. The graph, the model clients and the live view
are imported only by the commands that use them, so `--help` answers at once.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import shlex
import sys
import time
import uuid
import warnings
from pathlib import Path
from typing import Any

from deep_research.cli import exit_codes
from deep_research.cli.bad_input import BadInput
from deep_research.cli.parser import build_parser, parse_command_line
from deep_research.cli.setting_sources import load_local_dotenv

__all__ = ["build_parser", "entry_point", "main"]  # build_parser: what tests and tools import

CAPABILITIES_FILE = "capabilities.json"  # structured-output methods found per server and model
TOOL_PROTOCOLS_FILE = "tool-protocols.json"  # how each server and model takes a worker's tools


def _resume_hint(thread_id: str, checkpoint_db: str | None) -> str:
    """The command that continues the run; a password in the store URL is masked, never shown."""
    from deep_research.tools.secrets import mask_url_passwords

    if not checkpoint_db:
        return f"deep-research resume {thread_id}"
    shown = mask_url_passwords(checkpoint_db)
    hint = f"deep-research resume {thread_id} --checkpoint-db {shlex.quote(shown)}"
    if shown != checkpoint_db:
        hint += " (with the password in place of ***, or the URL in $DEEP_RESEARCH_CHECKPOINT_DB)"
    return hint


def choose_progress(quiet: bool) -> Any:
    """A live view on a terminal; plain lines on stderr elsewhere; nothing with --quiet."""
    if not quiet and sys.stderr.isatty():
        from deep_research.cli.live import LiveProgress

        return LiveProgress()
    from deep_research.cli.progress import PlainProgress

    return PlainProgress(quiet=quiet)


def run_summary(output: dict, seconds: float, reports: list[Path]) -> Any:
    """The end-of-run figures from the output state."""
    from deep_research.cli.summary import RunSummary

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
        report_path=", ".join(str(p) for p in reports) or None,
        citation_precision=output.get("citation_precision"),
        cost_usd=output.get("cost_usd"),
        structured_output=output.get("structured_output"),
        report_problem=output.get("report_problem") or "",
        report_round=output.get("report_round"),
    )


class RedactingFormatter(logging.Formatter):
    """Log lines with keys and URL passwords masked."""

    def format(self, record: logging.LogRecord) -> str:
        """The formatted record with keys and URL passwords masked."""
        from deep_research.tools.secrets import redact

        return redact(super().format(record))


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


def _error(text: str) -> None:
    """One error line on stderr, secrets masked."""
    from deep_research.tools.secrets import redact

    print(redact(f"error: {text}"), file=sys.stderr)


def _endpoint_note(error: BaseException) -> str:
    """For an error from the model server's client: which server it was (no credentials)."""
    import openai

    if not isinstance(error, openai.APIError):
        return ""
    from deep_research.cli.preflight import model_endpoint

    return f" (model server: {model_endpoint()})"


def _model_refused(error: BaseException) -> bool:
    """True when the model server said it has no such model (a 404 naming the model): a plain
    resume would be refused the same way, so the advice names `--model`."""
    import openai

    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, openai.NotFoundError):
            code = getattr(seen, "code", None) or ""
            return code == "model_not_found" or "model" in str(seen).lower()
        seen = seen.__cause__ or seen.__context__
    return False


def _how_to_go_on(target: str, thread_id: str, checkpoint_db: str | None, lead: str = "") -> str:
    """What to do after a run stopped, read from the store: only a saved run can be resumed.

    `lead` goes before the resume command, and only when there is something to resume.
    """
    import asyncio

    from deep_research.cli.runner import checkpoint_saved

    saved = asyncio.run(checkpoint_saved(target, thread_id))
    command = _resume_hint(thread_id, checkpoint_db)
    if saved is None:
        return f"the checkpoint store cannot be read now; once it can, try: {command}"
    if saved:
        return f"{lead}resume with: {command}"
    return "nothing was saved, so there is nothing to resume"


def report_outputs(args: argparse.Namespace) -> Any:
    """Where `run`, `resume` and `export` write the report; BadInput for a file name whose
    format is unknown, or a format that cannot be written here (before any work)."""
    from deep_research.cli.runner import Outputs
    from deep_research.export.formats import UnknownFormat, check_formats
    from deep_research.export.pdf import PdfRendererMissing

    outputs = Outputs(
        args.output, getattr(args, "json", None), args.evidence, stdout_format=args.format
    )
    try:
        check_formats(outputs.formats())
    except (UnknownFormat, PdfRendererMissing) as error:
        raise BadInput(str(error)) from None
    return outputs


def check_output_paths(args: argparse.Namespace) -> None:
    """Every `--output` and the `--json` file can be written (before anything is paid for)."""
    from deep_research.cli.output_paths import check_output_file

    for path in args.output:
        check_output_file(path, "--output")
    if getattr(args, "json", None):
        check_output_file(args.json, "--json")


def _resumed_settings(args: argparse.Namespace, target: str) -> Any:
    """The settings a resume changes (`--model`, `--set` of model and endpoint settings):
    the saved ones with the change, None when nothing changes. Either way the model names are
    checked against the server's list, so a resume that cannot work is refused before a call."""
    import asyncio

    from deep_research.cli import preflight
    from deep_research.cli.model_list import check_model_names
    from deep_research.cli.resume_settings import resume_update
    from deep_research.cli.runner import saved_settings

    update = resume_update(args)
    saved = asyncio.run(saved_settings(target, args.thread_id))
    if saved is None:  # no such run: `execute` says so
        return None
    settings = preflight.settings_or_explain({**saved.model_dump(), **update})
    if preflight.needs_model_endpoint(settings):
        try:
            check_model_names(settings)
        except BadInput as error:
            command = _resume_hint(args.thread_id, args.checkpoint_db)
            raise BadInput(f"{error}; resume it with: {command} --model NAME") from None
    return settings if update else None


def _preflight(args: argparse.Namespace, target: str, progress: Any) -> tuple[dict | None, Any]:
    """Every check that needs no model call: the new run's input (None for `resume`), and the
    settings a resume changes (None when it changes none)."""
    from deep_research.cli import preflight
    from deep_research.cli.clarify import someone_answers
    from deep_research.cli.model_list import check_model_names
    from deep_research.cli.setting_sources import resolve_settings

    check_output_paths(args)  # a folder named as the file: said before its missing extension
    report_outputs(args)
    if args.command == "resume":
        try:
            preflight.check_store(target, create=False)
        except BadInput as error:
            raise BadInput(f"cannot resume {args.thread_id!r}: {error}") from None
        preflight.check_model_endpoint()
        return None, _resumed_settings(args, target)
    if args.command == "ask":  # a follow-up: the first run's settings and evidence
        import asyncio

        from deep_research.cli.follow_up import follow_up_input

        graph_input = asyncio.run(follow_up_input(target, args.parent, args.question))
        preflight.check_credentials(graph_input["settings"])
        preflight.check_model_endpoint()
        check_model_names(graph_input["settings"])
        return graph_input, None
    resolved = resolve_settings(args)
    settings = someone_answers(resolved.settings)  # asked back only on a terminal
    question = preflight.check_question(args.question)
    preflight.check_credentials(settings)
    if preflight.needs_model_endpoint(settings):
        preflight.check_model_endpoint()
    preflight.check_store(target)
    preflight.check_corpus(settings, progress)
    origin = resolved.origins.get("fetch_private_addresses", "")
    preflight.check_run_settings(settings, progress, origin)
    if settings.local_model:
        from deep_research.tools.local_profile import local_profile_note

        why = resolved.origins.get("local_model", "")
        progress.note(local_profile_note(settings, explicit="loopback" not in why))
    if preflight.needs_model_endpoint(settings):
        check_model_names(settings)  # last: the one check that asks the model server
    return {"question": question, "settings": settings}, None


def _research(args: argparse.Namespace, target: str) -> int:
    """`run` or `resume`: preflight, then the run to its end; the exit code it earned."""
    import asyncio

    from deep_research.cli.approval import NoAnswer
    from deep_research.cli.clarify import answer
    from deep_research.cli.runner import ThreadInUse, UnknownThread, execute, write_outputs
    from deep_research.export.facts import facts_of

    if getattr(args, "queue", False):  # handed to `deep-research worker` processes
        from deep_research.cli.queue import run_on_queue

        return run_on_queue(args, target)
    progress = choose_progress(args.quiet)
    thread_id = getattr(args, "thread_id", None) or uuid.uuid4().hex
    try:
        graph_input, new_settings = _preflight(args, target, progress)
        progress.note(f"thread: {thread_id}" if graph_input else f"resuming thread: {thread_id}")
        with progress:
            output, values = asyncio.run(
                execute(
                    target=target,
                    thread_id=thread_id,
                    graph_input=graph_input,
                    progress=progress,
                    answer=answer,
                    new_settings=new_settings,
                )
            )
    except NoAnswer as error:  # the run waits at its plan: it can be answered later
        _error(str(error))
        print(_how_to_go_on(target, thread_id, args.checkpoint_db), file=sys.stderr)
        return exit_codes.BAD_INPUT
    except (BadInput, UnknownThread, ThreadInUse) as error:
        _error(str(error))
        return exit_codes.BAD_INPUT
    except KeyboardInterrupt:
        print(
            f"\ninterrupted; {_how_to_go_on(target, thread_id, args.checkpoint_db)}",
            file=sys.stderr,
        )
        return exit_codes.INTERRUPTED
    except Exception as error:  # the CLI's boundary: report, keep the run, exit non-zero
        _error(f"{type(error).__name__}: {error}{_endpoint_note(error)}")
        lead = "the run is saved; "
        how = _how_to_go_on(target, thread_id, args.checkpoint_db, lead)
        if _model_refused(error) and "resume with:" in how:  # the same model would fail again
            how = how.replace("resume with:", "resume with a model it has:") + " --model NAME"
        print(how, file=sys.stderr)
        return exit_codes.FAILED
    facts = facts_of({**values, **output}, thread_id=thread_id)
    problems = write_outputs(output, report_outputs(args), facts, _stdout_bytes)
    progress.summary(run_summary(output, time.monotonic() - args.started, args.output))
    for problem in problems:
        _error(problem)
    code = exit_codes.finished_code(output, values.get("settings"))
    if problems:  # the others are written; the run's report is in the store
        hint = _export_hint(thread_id, args.checkpoint_db)
        print(f"the run is saved as thread {thread_id}; {hint}", file=sys.stderr)
        return exit_codes.FAILED
    if code == exit_codes.NO_EVIDENCE:
        _error("the run found no evidence; the report says what was tried (exit 3)")
    elif code == exit_codes.BUDGET_BEFORE_REPORT:
        _error("a budget was spent before any evidence was found (exit 4)")
    return code


def _stdout_bytes(data: bytes) -> None:
    """A report's bytes to standard output, as they are (Word and PDF too, for a pipe)."""
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def _export_hint(thread_id: str, checkpoint_db: str | None) -> str:
    """The command that writes a finished run's report again, once what was missing is there."""
    command = _resume_hint(thread_id, checkpoint_db).replace("resume", "export", 1)
    return f"once that is fixed, write it with: {command} --output FILE"


def _export(args: argparse.Namespace, target: str) -> int:
    """`export`: a finished run's report from the store, in every format asked for.

    A format that cannot be written here (no PDF renderer) is named with its fix; every other
    file is still written, and the exit code is 2.
    """
    import asyncio

    from deep_research.cli import preflight
    from deep_research.cli.export import UnfinishedRun, finished_run
    from deep_research.cli.runner import Outputs, UnknownThread, write_outputs
    from deep_research.export.formats import UnknownFormat
    from deep_research.tools.checkpoints import StoreMissing

    outputs = Outputs(args.output, None, args.evidence, stdout_format=args.format)
    try:
        outputs.formats()  # a file name with no known format: said before anything is read
        preflight.check_store(target, create=False)  # unreachable: one line, no traceback
        output, facts = asyncio.run(finished_run(target, args.thread_id))
    except (UnknownFormat, UnknownThread, UnfinishedRun, StoreMissing, BadInput) as error:
        _error(str(error))
        return exit_codes.BAD_INPUT
    problems = write_outputs(output, outputs, facts, _stdout_bytes)
    for problem in problems:
        _error(problem)
    written = [str(p) for p in args.output if not any(x.startswith(f"{p}:") for x in problems)]
    if written:
        print(f"written: {', '.join(written)}", file=sys.stderr)
    return exit_codes.BAD_INPUT if problems else exit_codes.OK


def _inspect(args: argparse.Namespace, target: str) -> int:
    """`history` and `threads`: read the store, never create it."""
    import asyncio

    from deep_research.cli import inspect, preflight
    from deep_research.cli.runner import UnknownThread
    from deep_research.tools.checkpoints import StoreMissing

    try:
        preflight.check_store(target, create=False)
        if args.command == "history":
            lines = asyncio.run(inspect.history(target, args.thread_id))
        else:
            lines = asyncio.run(inspect.threads(target, args.limit))
    except (BadInput, UnknownThread, StoreMissing) as error:
        _error(str(error))
        return exit_codes.BAD_INPUT
    print("\n".join(lines))
    return exit_codes.OK


def _config(args: argparse.Namespace, target: str) -> int:
    """`config`: the effective settings, where each came from, and the environment that matters."""
    from deep_research.cli.config_view import config_json, config_lines
    from deep_research.cli.setting_sources import resolve_settings

    try:
        resolved = resolve_settings(args)
    except BadInput as error:
        _error(str(error))
        return exit_codes.BAD_INPUT
    dotenv = getattr(args, "from_dotenv", frozenset())
    if args.json:
        print(config_json(resolved, target, dotenv))
    else:
        print("\n".join(config_lines(resolved, target, dotenv)))
    return exit_codes.OK


def _evaluate(args: argparse.Namespace) -> int:
    """`eval`: the same settings sources as `run`, then the eval command's own work."""
    from deep_research.cli import evaluate
    from deep_research.cli.setting_sources import resolve_settings

    if args.compare:
        return evaluate.command(args, {})
    try:
        settings = resolve_settings(args).settings
        if settings.approve_plan:
            raise BadInput("eval runs unattended: approve_plan cannot be on (--approve-plan)")
    except BadInput as error:
        _error(str(error))
        return exit_codes.BAD_INPUT
    given = settings.model_dump(include=settings.model_fields_set)  # adapted ones adapt again
    return evaluate.command(args, given)


def _batch(args: argparse.Namespace, target: str) -> int:
    """`batch`: the same settings sources as `run`; each line's own settings win over them."""
    from deep_research.cli.batch import batch_command
    from deep_research.cli.setting_sources import resolve_settings

    try:
        settings = resolve_settings(args).settings
        given = settings.model_dump(include=settings.model_fields_set)  # adapted ones adapt again
        if args.queue:  # handed to `deep-research worker` processes
            from deep_research.cli.queue import batch_on_queue

            return batch_on_queue(args, target, given)
        return batch_command(args, target, given)
    except BadInput as error:
        _error(str(error))
        return exit_codes.BAD_INPUT


def _serve_mcp(args: argparse.Namespace, target: str) -> int:
    """`mcp`: serve research to agents until stopped; 2 when it cannot start."""
    from deep_research.cli import serve_mcp

    try:
        return serve_mcp.command(args, target)
    except BadInput as error:
        _error(str(error))
        return exit_codes.BAD_INPUT


def _worker(args: argparse.Namespace, target: str) -> int:
    """`worker`: take runs from the queue until stopped; 2 when it cannot start."""
    from deep_research.cli import worker

    try:
        return worker.command(args, target)
    except BadInput as error:
        _error(str(error))
        return exit_codes.BAD_INPUT


def _serve_web(args: argparse.Namespace, target: str) -> int:
    """`web`: serve the web app until stopped; 2 when it cannot start."""
    from deep_research.web import command

    try:
        return command.command(args, target)
    except BadInput as error:
        _error(str(error))
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
        _error(str(error))
        return exit_codes.BAD_INPUT
    _log_to_stderr_redacted()
    from deep_research.cli.redis_limits import use_redis

    try:
        use_redis(args)  # --redis: limits shared through Redis; unreachable: one line, exit 2
    except BadInput as error:
        _error(str(error))
        return exit_codes.BAD_INPUT
    if args.command == "eval":
        return _evaluate(args)
    from deep_research.tools.checkpoints import default_checkpoint_db

    target = args.checkpoint_db or default_checkpoint_db()
    from deep_research.tools.checkpoints import data_dir
    from deep_research.tools.process_wide import current

    current().capabilities.remember_on_disk(data_dir() / CAPABILITIES_FILE)
    current().tool_protocols.remember_on_disk(data_dir() / TOOL_PROTOCOLS_FILE)
    if args.command in ("run", "resume", "ask"):
        return _research(args, target)
    if args.command == "config":
        return _config(args, target)
    if args.command == "batch":
        return _batch(args, target)
    if args.command == "export":
        return _export(args, target)
    if args.command == "mcp":
        return _serve_mcp(args, target)
    if args.command == "worker":
        return _worker(args, target)
    if args.command == "web":
        return _serve_web(args, target)
    return _inspect(args, target)


def entry_point() -> None:
    """The console script: the command's exit code, without the interpreter's teardown.

    When the command returns, its work is done and said. What Python would still do is collect
    a large heap (LangChain, LangGraph, pydantic, numpy for language detection): on a busy
    2-core machine that took 10-25 s after Ctrl-C, in which the process looked hung. Logs and
    the standard streams are flushed first; a reader that left (`| head`) is no error here.
    """
    code = main()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BrokenPipeError, ValueError):  # gone, or closed by the command
            stream.flush()
    os._exit(code)
