"""`deep-research recheck ID`: a finished report's citations checked against today's sources.

Every cited source is read again (with the validators its server sent: a 304 costs nothing);
every cited claim is sorted (unchanged; page changed, quote still there; quote gone, checked
again by the model; page gone; unreachable now). The result is kept beside the run; Markdown
goes to stdout (or `--output`), JSON to `--json`.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from deep_research.service.bad_input import BadInput


def add_command(commands: Any, store_flag: Any) -> None:
    """The `recheck` subcommand and its flags."""
    sub = commands.add_parser(
        "recheck",
        help="check a finished report's citations against their sources as they are now",
        description="Read every cited source again (conditional requests: a page that did "
        "not change costs nothing) and sort every cited claim: unchanged, page changed but "
        "quote still there, quote gone (checked again by the model), page gone, unreachable.",
        epilog="exit codes: 0 re-checked; 2 unknown or unfinished run, or an unusable store",
    )
    sub.add_argument("thread_id", help="the thread id of a finished run")
    sub.add_argument("--output", type=Path, metavar="FILE.md", help="write the Markdown here")
    sub.add_argument("--json", type=Path, metavar="FILE", help="write the result as JSON")
    own_settings_flags(sub)
    store_flag(sub)


def own_settings_flags(sub: argparse.ArgumentParser) -> None:
    """The flags (and `--set`) of what this command reads and fetches: its own, never the
    stored run's (`settings.SERVER_ONLY`)."""
    from deep_research.cli.resume_settings import add_server_only_set
    from deep_research.service.setting_sources import add_server_only_flags

    add_server_only_flags(sub)
    add_server_only_set(sub)


def operator_of(args: argparse.Namespace, **how: bool) -> Any:
    """This command's operator: its settings (config file, environment, flags, `--set`)."""
    from deep_research.cli.resume_settings import own_on_resume
    from deep_research.service.admission import Operator
    from deep_research.service.setting_sources import resolve_settings
    from deep_research.settings import Settings

    own = resolve_settings(args).settings
    own = Settings.model_validate({**own.model_dump(), **own_on_resume(args)})
    return Operator.of(own, **how)


async def recheck(target: str, thread_id: str, operator: Any, all_doors: bool = False) -> Any:
    """Re-check one run of the store `target` names, as the terminal; its `Recheck`."""
    from deep_research.cli.runner import CALLER
    from deep_research.service import keeping
    from deep_research.service.caller import Visibility
    from deep_research.service.runs import open_service

    seeing = Visibility(other_doors=all_doors)
    async with open_service(target, operator, visibility=seeing, create=False) as service:
        return await keeping.recheck(service, CALLER, thread_id)


def command(args: argparse.Namespace, target: str) -> int:
    """`recheck`: 0 when re-checked, 2 for an unknown or unfinished run."""
    from deep_research.cli.output_paths import check_output_file
    from deep_research.export.formats import write_file
    from deep_research.export.keeping import recheck_markdown
    from deep_research.graph.recheck import NotRecheckable
    from deep_research.service.preflight import check_store
    from deep_research.service.runs import UnknownRun
    from deep_research.tools.checkpoints import StoreMissing

    for path, flag in ((args.output, "--output"), (args.json, "--json")):
        if path is not None:
            check_output_file(path, flag)
    check_store(target, create=False)
    operator = operator_of(args, strict=True)  # a stored run read otherwise is named
    try:
        result = asyncio.run(recheck(target, args.thread_id, operator, args.all_doors))
    except (NotRecheckable, UnknownRun, StoreMissing) as error:
        raise BadInput(str(error)) from None
    markdown = recheck_markdown(result)
    if args.json:
        write_file(args.json, (result.model_dump_json(indent=2) + "\n").encode("utf-8"))
    if args.output:
        write_file(args.output, markdown.encode("utf-8"))
        print(f"written: {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(markdown)
    return 0
