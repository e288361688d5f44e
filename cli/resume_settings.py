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
        help=f"one of: {', '.join(RESUMABLE)}",
    )


def resume_update(args: argparse.Namespace) -> dict[str, Any]:
    """The settings `resume` was told to change; BadInput for one it may not change."""
    update: dict[str, Any] = {}
    for item in getattr(args, "resume_overrides", None) or []:
        key, equals, text = item.partition("=")
        key = key.strip()
        if not equals or not key:
            raise BadInput(f"--set {item!r}: write it as KEY=VALUE")
        if key not in RESUMABLE:
            raise BadInput(
                f"--set {key}: a resumed run keeps what it researches; "
                f"resume may change only {', '.join(RESUMABLE)}"
            )
        update[key] = parse_value(key, text)
    if getattr(args, "resume_model", None):
        update["model"] = args.resume_model
    return update
