"""`deep-research evidence ID [N]`: what a finished run's citations rest on, as it was read.

Without N, one line per cited source: what was kept of it, when it was read, its hash. With N,
citation N's source and the stored text around each quote its citations rest on (`--whole`:
all of it). The stored text is outside text: printed as plain text, its control characters
(a terminal's escape sequences) removed, never followed or rendered.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from deep_research.service.bad_input import BadInput

SHOWN_HASH = 16  # hex digits of a hash in the list (the whole one with N)


def add_command(commands: Any, store_flag: Any) -> None:
    """The `evidence` subcommand and its flags."""
    sub = commands.add_parser(
        "evidence",
        help="what a finished run's citations rest on, as it was read (text, time, hash)",
        description="List the sources a finished run kept evidence of, or show the stored "
        "text around citation N's quotes.",
    )
    sub.add_argument("thread_id", help="the thread id of a finished run")
    sub.add_argument("number", nargs="?", type=int, help="a citation number of its report")
    sub.add_argument(
        "--context",
        type=int,
        default=400,
        metavar="CHARS",
        help="characters shown each side of a quote (400)",
    )
    sub.add_argument("--whole", action="store_true", help="print the whole stored text")
    store_flag(sub)


def plain(text: str) -> str:
    """Outside text fit for a terminal: no control characters, no carriage returns."""
    from deep_research.domain.control_chars import without_controls

    return without_controls(text.replace("\r\n", "\n").replace("\r", "\n"))


def _listing(sources: list[Any], kept: dict[int, Any]) -> list[str]:
    """One line per cited source."""
    lines = [f"{'[n]':>5}  {'kind':<8} {'read at':<20} {'sha256':<16}  {'bytes':>9}  source"]
    for source in sources:
        row = kept.get(source.number)
        number = f"[{source.number}]"
        if row is None:
            lines.append(
                f"{number:>5}  {'-':<8} {'-':<20} {'-':<16}  {'-':>9}  {plain(source.url)}"
            )
            continue
        size = f"{row.stored_bytes:,}" + ("*" if row.cut else "")
        lines.append(
            f"{number:>5}  {row.read.kind:<8} {row.read.fetched or '-':<20} "
            f"{row.sha256[:SHOWN_HASH]:<16}  {size:>9}  {plain(source.url)}"
        )
    if any(row.cut for row in kept.values()):
        lines.append("* cut to the run's evidence limit (evidence_max_bytes): see the text's marks")
    return lines


def _details(view: Any, whole: bool) -> list[str]:
    """Citation N's source, what was kept of it, and its text around each quote."""
    source, row = view.source, view.kept
    lines = [f"[{source.number}] {plain(source.title)}", f"address:  {plain(source.url)}"]
    if row is None:
        return [*lines, "nothing was kept of it (the run finished before evidence was kept)"]
    read = row.read
    lines += [
        f"kind:     {read.kind}",
        f"read at:  {read.fetched or 'unknown (a search snippet)'}",
        f"sha256:   {row.sha256}",
    ]
    if read.final_url and read.final_url != read.url:
        lines.append(f"came from: {plain(read.final_url)}")
    if read.status is not None:
        lines.append(f"status:   HTTP {read.status}")
    if read.etag or read.last_modified:
        etag, modified = plain(read.etag) or "-", plain(read.last_modified) or "-"
        lines.append(f"validators: ETag {etag}, Last-Modified {modified}")
    kept = f"{row.stored_bytes:,} of {row.read_bytes:,} bytes kept"
    lines.append(kept + (" (cut to the run's evidence limit)" if row.cut else ""))
    if whole:
        return [*lines, "", plain(view.text)]
    for quote in view.quotes:
        lines += ["", f"claim: {plain(quote.statement)}"]
        if quote.context is None:
            lines.append(f"quote (not in the stored text): {plain(quote.quote)}")
            continue
        before, words, after = (plain(part) for part in quote.context)
        lines.append(f"…{before}>>>{words}<<<{after}…")
    if not view.quotes:
        lines += ["", "no kept citation of it carries a quote; --whole prints the text"]
    return lines


async def _show(
    target: str, thread_id: str, number: int | None, context: int, whole: bool, all_doors: bool
) -> list[str]:
    """The lines the command prints."""
    from deep_research.cli.runner import CALLER, reading
    from deep_research.service import keeping

    async with reading(target, all_doors) as service:
        if number is not None:
            view = await keeping.evidence(service, CALLER, thread_id, number, context)
            return _details(view, whole)
        return _listing(*await keeping.kept_sources(service, CALLER, thread_id))


def command(args: argparse.Namespace, target: str) -> int:
    """`evidence`: 0 when shown, 2 for an unknown run or citation."""
    from deep_research.graph.keeping import NoSuchCitation
    from deep_research.graph.recheck import NotRecheckable
    from deep_research.service.preflight import check_store
    from deep_research.service.runs import UnknownRun
    from deep_research.tools.checkpoints import StoreMissing

    check_store(target, create=False)
    if args.context < 0:
        raise BadInput("--context must be 0 or more")
    try:
        shown = (args.thread_id, args.number, args.context, args.whole, args.all_doors)
        lines = asyncio.run(_show(target, *shown))
    except (NotRecheckable, NoSuchCitation, UnknownRun, StoreMissing) as error:
        raise BadInput(str(error)) from None
    sys.stdout.write("\n".join(lines) + "\n")
    return 0
