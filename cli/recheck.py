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

from deep_research.cli.bad_input import BadInput


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
    store_flag(sub)


async def recheck(target: str, thread_id: str) -> Any:
    """Re-check one run of the store `target` names; its `Recheck`."""
    from deep_research.graph.keeping import open_kept
    from deep_research.graph.recheck import recheck_thread

    async with open_kept(target) as (graph, evidence):
        return (await recheck_thread(graph, evidence, thread_id)).recheck


def command(args: argparse.Namespace, target: str) -> int:
    """`recheck`: 0 when re-checked, 2 for an unknown or unfinished run."""
    from deep_research.cli.output_paths import check_output_file
    from deep_research.cli.preflight import check_store
    from deep_research.export.formats import write_file
    from deep_research.export.keeping import recheck_markdown
    from deep_research.graph.recheck import NotRecheckable
    from deep_research.tools.checkpoints import StoreMissing

    for path, flag in ((args.output, "--output"), (args.json, "--json")):
        if path is not None:
            check_output_file(path, flag)
    check_store(target, create=False)
    try:
        result = asyncio.run(recheck(target, args.thread_id))
    except (NotRecheckable, StoreMissing) as error:
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
