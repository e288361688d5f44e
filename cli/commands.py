"""The terminal's commands: run, resume, ask, batch, export, threads, history, config, eval,
evidence, recheck, watch.

The terminal is one door of the run service (`service.runs`): each command parses what the
person typed, says it is the terminal's local user, and renders what the service hands back.
Exit codes are in `cli.exit_codes` (0 2 3 4 1 130). A run that fails or is interrupted is
saved step by step; the message says how to resume it, and says so only when a checkpoint was
written. Heavy modules are imported by the commands that use them.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from deep_research.cli import exit_codes
from deep_research.service.bad_input import BadInput


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
        report_revised_with=output.get("report_revised_with"),
    )


def error_line(text: str) -> None:
    """One error line on stderr, secrets masked."""
    from deep_research.tools.secrets import redact

    print(redact(f"error: {text}"), file=sys.stderr)


def _endpoint_note(error: BaseException) -> str:
    """For an error from the model server's client: which server it was (no credentials)."""
    import openai

    if not isinstance(error, openai.APIError):
        return ""
    from deep_research.service.preflight import model_endpoint

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


def _asked(args: argparse.Namespace, target: str, progress: Any) -> tuple[Any, Any]:
    """The terminal's own checks and the service's admission (the same checks as every
    door's), in the order that costs least: what was asked, and this command's operator."""
    import asyncio
    import functools

    from deep_research.cli.clarify import someone_answers
    from deep_research.cli.resume_settings import own_on_resume, resume_update
    from deep_research.cli.runner import Research, admit
    from deep_research.service import preflight
    from deep_research.service.admission import Operator
    from deep_research.service.setting_sources import resolve_settings
    from deep_research.settings import GUARD_NOTE, Settings

    check_output_paths(args)  # a folder named as the file: said before its missing extension
    report_outputs(args)
    resolved = resolve_settings(args)
    own = resolved.settings
    if args.command in ("resume", "ask"):  # `--set` of what it reads and starts
        own = Settings.model_validate({**own.model_dump(), **own_on_resume(args)})
    operator = Operator.of(own, strict=True)  # what it reads and starts: its own
    thread_id = getattr(args, "thread_id", None)
    if args.command == "resume":
        try:
            preflight.check_store(target, create=False)
        except BadInput as error:
            raise BadInput(f"cannot resume {args.thread_id!r}: {error}") from None
        return Research(thread_id, change=resume_update(args)), operator
    if args.command == "ask":  # a follow-up: the first run's settings and evidence
        preflight.check_store(target, create=False)
        return Research(thread_id, args.question, parent=args.parent), operator
    settings = someone_answers(resolved.settings)  # asked back only on a terminal
    store = functools.partial(preflight.check_store, target)
    admitted = asyncio.run(admit(operator, args.question, settings, progress, store))
    origin = resolved.origins.get("fetch_private_addresses", "")
    if settings.fetch_private_addresses:
        progress.note(f"{GUARD_NOTE} ({origin})" if origin else GUARD_NOTE)
    if settings.local_model:
        from deep_research.tools.local_profile import local_profile_note

        why = resolved.origins.get("local_model", "")
        progress.note(local_profile_note(settings, explicit="loopback" not in why))
    return Research(thread_id or uuid.uuid4().hex, admitted.question, admitted), operator


def _with_model_hint(error: BadInput, args: argparse.Namespace) -> BadInput:
    """A resume refused for a model its server does not have: the advice names `--model`."""
    if args.command != "resume" or "has no model" not in str(error):
        return error
    command = _resume_hint(args.thread_id, args.checkpoint_db)
    return BadInput(f"{error}; resume it with: {command} --model NAME")


def research(args: argparse.Namespace, target: str) -> int:
    """`run`, `resume` or `ask`: checks, then the run to its end; the exit code it earned."""
    import asyncio

    from deep_research.cli.approval import NoAnswer
    from deep_research.cli.clarify import answer
    from deep_research.cli.runner import execute, write_outputs
    from deep_research.export.facts import facts_of
    from deep_research.service.runs import NotNow, UnknownRun

    if getattr(args, "queue", False):  # handed to `deep-research worker` processes
        from deep_research.cli.queue import run_on_queue

        return run_on_queue(args, target)
    progress = choose_progress(args.quiet)
    thread_id = getattr(args, "thread_id", None) or ""
    try:
        asked, own = _asked(args, target, progress)
        thread_id = asked.thread_id or thread_id
        with progress:
            thread_id, output, values = asyncio.run(
                execute(
                    target=target,
                    asked=asked,
                    operator=own,
                    progress=progress,
                    answer=answer,
                    all_doors=getattr(args, "all_doors", False),
                )
            )
    except NoAnswer as error:  # the run waits at its plan: it can be answered later
        error_line(str(error))
        print(_how_to_go_on(target, thread_id, args.checkpoint_db), file=sys.stderr)
        return exit_codes.BAD_INPUT
    except BadInput as error:
        error_line(str(_with_model_hint(error, args)))
        return exit_codes.BAD_INPUT
    except (UnknownRun, NotNow) as error:
        error_line(_unknown_here(error, target))
        return exit_codes.BAD_INPUT
    except KeyboardInterrupt:
        how = _how_to_go_on(target, thread_id, args.checkpoint_db) if thread_id else ""
        print(f"\ninterrupted; {how or 'nothing was saved'}", file=sys.stderr)
        return exit_codes.INTERRUPTED
    except Exception as error:  # the CLI's boundary: report, keep the run, exit non-zero
        error_line(f"{type(error).__name__}: {error}{_endpoint_note(error)}")
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
        error_line(problem)
    code = exit_codes.finished_code(output, values.get("settings"))
    if problems:  # the others are written; the run's report is in the store
        hint = _export_hint(thread_id, args.checkpoint_db)
        print(f"the run is saved as thread {thread_id}; {hint}", file=sys.stderr)
        return exit_codes.FAILED
    if code == exit_codes.NO_EVIDENCE:
        error_line("the run found no evidence; the report says what was tried (exit 3)")
    elif code == exit_codes.BUDGET_BEFORE_REPORT:
        error_line("a budget was spent before any evidence was found (exit 4)")
    return code


def _unknown_here(error: Exception, target: str) -> str:
    """An unknown run, or an action that does not fit it, said with the store it was looked
    for in (its password masked)."""
    from deep_research.tools.secrets import mask_url_passwords

    text = str(error).replace("no run with id", "no run with thread id")
    if isinstance(error, LookupError):
        text += f" in {mask_url_passwords(target)}"
    return text


def _stdout_bytes(data: bytes) -> None:
    """A report's bytes to standard output, as they are (Word and PDF too, for a pipe)."""
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def _export_hint(thread_id: str, checkpoint_db: str | None) -> str:
    """The command that writes a finished run's report again, once what was missing is there."""
    command = _resume_hint(thread_id, checkpoint_db).replace("resume", "export", 1)
    return f"once that is fixed, write it with: {command} --output FILE"


def export(args: argparse.Namespace, target: str) -> int:
    """`export`: a finished run's report from the store, in every format asked for.

    A format that cannot be written here (no PDF renderer) is named with its fix; every other
    file is still written, and the exit code is 2.
    """
    import asyncio

    from deep_research.cli.export import UnfinishedRun, finished_run
    from deep_research.cli.runner import Outputs, write_outputs
    from deep_research.export.formats import UnknownFormat
    from deep_research.service import preflight
    from deep_research.service.runs import UnknownRun
    from deep_research.tools.checkpoints import StoreMissing

    outputs = Outputs(args.output, None, args.evidence, stdout_format=args.format)
    try:
        outputs.formats()  # a file name with no known format: said before anything is read
        preflight.check_store(target, create=False)  # unreachable: one line, no traceback
        output, facts = asyncio.run(finished_run(target, args.thread_id, args.all_doors))
    except UnknownRun as error:
        error_line(_unknown_here(error, target))
        return exit_codes.BAD_INPUT
    except (UnknownFormat, UnfinishedRun, StoreMissing, BadInput) as error:
        error_line(str(error))
        return exit_codes.BAD_INPUT
    problems = write_outputs(output, outputs, facts, _stdout_bytes)
    for problem in problems:
        error_line(problem)
    written = [str(p) for p in args.output if not any(x.startswith(f"{p}:") for x in problems)]
    if written:
        print(f"written: {', '.join(written)}", file=sys.stderr)
    return exit_codes.BAD_INPUT if problems else exit_codes.OK


def inspect_store(args: argparse.Namespace, target: str) -> int:
    """`history` and `threads`: read the store, never create it."""
    import asyncio

    from deep_research.cli import inspect
    from deep_research.service import preflight
    from deep_research.service.runs import UnknownRun
    from deep_research.tools.checkpoints import StoreMissing

    try:
        preflight.check_store(target, create=False)
        if args.command == "history":
            lines = asyncio.run(inspect.history(target, args.thread_id, args.all_doors))
        else:
            lines = asyncio.run(inspect.threads(target, args.limit, args.all_doors))
    except UnknownRun as error:
        error_line(_unknown_here(error, target))
        return exit_codes.BAD_INPUT
    except (BadInput, StoreMissing) as error:
        error_line(str(error))
        return exit_codes.BAD_INPUT
    print("\n".join(lines))
    return exit_codes.OK


def keeping(args: argparse.Namespace, target: str) -> int:
    """`evidence`, `recheck` and `watch`: what a finished run rests on, checked and watched."""
    from deep_research.cli import evidence, recheck, watch

    commands = {"evidence": evidence, "recheck": recheck, "watch": watch}
    try:
        return commands[args.command].command(args, target)
    except BadInput as error:
        error_line(str(error))
        return exit_codes.BAD_INPUT


def config(args: argparse.Namespace, target: str) -> int:
    """`config`: the effective settings, where each came from, and the environment that matters."""
    from deep_research.cli.config_view import config_json, config_lines
    from deep_research.service.setting_sources import resolve_settings

    try:
        resolved = resolve_settings(args)
    except BadInput as error:
        error_line(str(error))
        return exit_codes.BAD_INPUT
    dotenv = getattr(args, "from_dotenv", frozenset())
    if args.json:
        print(config_json(resolved, target, dotenv))
    else:
        print("\n".join(config_lines(resolved, target, dotenv)))
    return exit_codes.OK


def evaluate(args: argparse.Namespace) -> int:
    """`eval`: the same settings sources as `run`, then the eval command's own work."""
    from deep_research.cli import evaluate
    from deep_research.service.setting_sources import resolve_settings

    if args.compare:
        return evaluate.command(args, {})
    try:
        settings = resolve_settings(args).settings
        if settings.approve_plan:
            raise BadInput("eval runs unattended: approve_plan cannot be on (--approve-plan)")
    except BadInput as error:
        error_line(str(error))
        return exit_codes.BAD_INPUT
    given = settings.model_dump(include=settings.model_fields_set)  # adapted ones adapt again
    return evaluate.command(args, given)


def batch(args: argparse.Namespace, target: str) -> int:
    """`batch`: the same settings sources as `run`; each line's own settings win over them."""
    from deep_research.cli.batch import batch_command
    from deep_research.service.setting_sources import resolve_settings

    try:
        settings = resolve_settings(args).settings
        given = settings.model_dump(include=settings.model_fields_set)  # adapted ones adapt again
        if args.queue:  # handed to `deep-research worker` processes
            from deep_research.cli.queue import batch_on_queue

            return batch_on_queue(args, target, given)
        return batch_command(args, target, given)
    except BadInput as error:
        error_line(str(error))
        return exit_codes.BAD_INPUT
