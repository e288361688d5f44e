"""What `resume` may change: which model answers and how its server is reached, never what is
researched (question, rounds, budgets, sources stay as the run was started).

A run started with a model name its server refuses could otherwise never finish: the name is
saved with the run. `resume ID --model NAME` (or `--set writer_model=...`, timeouts, retries)
writes the new values into the run's saved settings, so later resumes keep them. The server
itself is `OPENAI_BASE_URL` when the resume starts, as for any run.
"""

from __future__ import annotations

import argparse
from typing import Any

from deep_research.domain.answering_settings import ANSWERING
from deep_research.service.bad_input import BadInput
from deep_research.service.setting_sources import parse_value
from deep_research.settings import SERVER_ONLY

RESUMABLE = ANSWERING  # model and endpoint settings (`domain.answering_settings`)


def add_resume_flags(resume: argparse.ArgumentParser) -> None:
    """`--model` and `--set KEY=VALUE` for the settings a resumed run may change."""
    group = resume.add_argument_group("model and endpoint (they may change; nothing else does)")
    group.add_argument("--model", dest="resume_model", metavar="NAME", help="the model to use")
    group.add_argument(
        "--set",
        dest="resume_overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help=f"one of: {', '.join(RESUMABLE)}; or what this command reads and starts: "
        f"{', '.join(SERVER_ONLY)}",
    )


def add_server_only_set(ask: argparse.ArgumentParser) -> None:
    """`--set KEY=VALUE` for what a follow-up reads and starts (`settings.SERVER_ONLY`)."""
    ask.add_argument(
        "--set",
        dest="resume_overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help=f"what this command reads and starts: one of {', '.join(SERVER_ONLY)}",
    )


def given_on_resume(
    args: argparse.Namespace, allowed: tuple[str, ...] = (*RESUMABLE, *SERVER_ONLY)
) -> dict[str, Any]:
    """The settings `resume` (or `ask`) was given with `--set` and `--model`; BadInput for one
    it may not take. Server-only ones are this command's own (a stored run's are never used);
    the rest change how the run is answered (`resume_update`)."""
    update: dict[str, Any] = {}
    for item in getattr(args, "resume_overrides", None) or []:
        key, equals, text = item.partition("=")
        key = key.strip()
        if not equals or not key:
            raise BadInput(f"--set {item!r}: write it as KEY=VALUE")
        if key not in allowed:
            raise BadInput(
                f"--set {key}: a resumed run keeps what it researches; "
                f"this command may set only {', '.join(allowed)}"
            )
        update[key] = parse_value(key, text)
    if getattr(args, "resume_model", None):
        update["model"] = args.resume_model
    return update


def resume_update(args: argparse.Namespace) -> dict[str, Any]:
    """The settings `resume` was told to change (model and endpoint settings)."""
    return {k: v for k, v in given_on_resume(args).items() if k in RESUMABLE}


def own_on_resume(args: argparse.Namespace) -> dict[str, Any]:
    """The server-only settings `resume` or `ask` was given with `--set` (`ask` takes no
    other: a follow-up is answered as its first run was)."""
    given = given_on_resume(args, SERVER_ONLY) if args.command == "ask" else given_on_resume(args)
    return {k: v for k, v in given.items() if k in SERVER_ONLY}
