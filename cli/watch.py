"""`deep-research watch`: research a finished run's question again on a schedule.

    watch ID --every 7d [budgets] [--webhook URL --webhook-secret-env NAME]   start (or change)
    watch ID --stop                                                           stop watching
    watch --list                                                              every watch
    watch ID --changes [--version N] [--json FILE]                            a change list
    watch --run-due                                                           make what is due

Each version is a follow-up of the one before, with a change list against it. `deep-research
worker`s make due versions on their own (the queue's periodic tick); without the queue, a system
timer (cron, a systemd timer) calls `watch --run-due`.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from deep_research.cli.recheck import own_settings_flags
from deep_research.service.bad_input import BadInput

SECRET_VARIABLE = "DEEP_RESEARCH_WEBHOOK_SECRET"


def add_command(commands: Any, store_flag: Any) -> None:
    """The `watch` subcommand and its flags."""
    sub = commands.add_parser(
        "watch",
        help="research a finished run's question again on a schedule, with a change list",
        description="Watch a finished run's question: every period a new version is "
        "researched as a follow-up of the last one (starting from its evidence, re-checked), "
        "with a claim-level change list against it. Workers make due versions on their own; "
        "without the queue, run `deep-research watch --run-due` from a system timer.",
        epilog="exit codes: 0 done; 1 a due version failed (the next --run-due resumes it); "
        "2 bad input or an unusable store",
    )
    sub.add_argument("thread_id", nargs="?", help="the thread id of a finished run")
    mode = sub.add_mutually_exclusive_group()
    mode.add_argument("--every", metavar="PERIOD", help="how often: 7d, 12h, 1d12h, 2w, 30m")
    mode.add_argument("--stop", action="store_true", help="stop watching (versions stay)")
    mode.add_argument("--list", action="store_true", help="list every watch")
    mode.add_argument("--changes", action="store_true", help="print a version's change list")
    mode.add_argument(
        "--run-due", action="store_true", help="make every version due now (for a system timer)"
    )
    sub.add_argument("--version", type=int, metavar="N", help="with --changes: that version")
    sub.add_argument("--json", type=Path, metavar="FILE", help="with --changes: write JSON too")
    sub.add_argument("--version-max-tokens", type=int, metavar="N", help="tokens per version")
    sub.add_argument("--version-max-cost", type=float, metavar="USD", help="dollars per version")
    sub.add_argument("--month-max-tokens", type=int, metavar="N", help="tokens per month")
    sub.add_argument("--month-max-cost", type=float, metavar="USD", help="dollars per month")
    sub.add_argument("--webhook", metavar="URL", help="post each change list here, signed")
    sub.add_argument(
        "--webhook-secret-env",
        default=SECRET_VARIABLE,
        metavar="NAME",
        help=f"the variable holding the signing secret (default {SECRET_VARIABLE})",
    )
    sub.add_argument(
        "--webhook-allow-private",
        action="store_true",
        help="let the webhook be a loopback or private address",
    )
    sub.add_argument(
        "--lease",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="with --run-due: a version whose process died is taken over after this long",
    )
    own_settings_flags(sub)  # with --run-due: what the versions read, fetch and start
    store_flag(sub)


def say(text: str) -> None:
    """One line of `--run-due`'s log on stderr, with the time (as a worker's)."""
    from deep_research.tools.secrets import redact

    print(redact(f"{time.strftime('%H:%M:%S')} {text}"), file=sys.stderr, flush=True)


def _when(moment: float) -> str:
    """A Unix time as `2026-12-01 14:03 UTC`."""
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%d %H:%M UTC")


def _limits(args: argparse.Namespace) -> Any:
    """The budgets the flags give, checked."""
    from deep_research.tools.watches import Limits

    limits = Limits(
        version_max_tokens=args.version_max_tokens,
        version_max_cost_usd=args.version_max_cost,
        month_max_tokens=args.month_max_tokens,
        month_max_cost_usd=args.month_max_cost,
    )
    for name, value in limits.__dict__.items():
        if value is not None and value <= 0:
            raise BadInput(f"--{name.replace('_usd', '').replace('_', '-')} must be above 0")
    return limits


async def _start(target: str, args: argparse.Namespace, every: int) -> Any:
    """Start (or change) a watch."""
    from deep_research.cli.runner import CALLER, reading
    from deep_research.service import keeping

    async with reading(target, args.all_doors) as service:
        return await keeping.watch(
            service,
            CALLER,
            args.thread_id,
            every,
            limits=_limits(args),
            webhook=args.webhook or "",
            secret_env=args.webhook_secret_env if args.webhook else "",
            webhook_private=args.webhook_allow_private,
        )


async def _stop(target: str, watch_id: str, all_doors: bool) -> bool:
    """Stop a watch; False when it was not watched."""
    from deep_research.cli.runner import CALLER, reading
    from deep_research.service import keeping

    async with reading(target, all_doors) as service:
        return await keeping.unwatch(service, CALLER, watch_id)


async def _list(target: str, all_doors: bool) -> list[str]:
    """One line per watch."""
    from deep_research.cli.runner import CALLER, reading
    from deep_research.service import keeping

    async with reading(target, all_doors) as service:
        found = await keeping.watches(service, CALLER)
    if not found:
        return ["no question is watched"]
    lines = []
    for watch in found:
        making = f", making {watch.pending}" if watch.pending else ""
        note = f" ({watch.note})" if watch.note else ""
        lines.append(
            f"{watch.watch_id}: every {watch.every_seconds:,} s, version {watch.version} "
            f"({watch.latest}){making}, next due {_when(watch.next_due)}{note}"
        )
    return lines


async def _changes(target: str, watch_id: str, number: int | None, all_doors: bool) -> Any:
    """A version's change list (the latest when `number` is None)."""
    from deep_research.cli.runner import CALLER, reading
    from deep_research.service import keeping

    async with reading(target, all_doors) as service:
        try:
            return await keeping.change_list(service, CALLER, watch_id, number)
        except keeping.NothingKept as error:
            raise BadInput(str(error)) from None


async def run_due(target: str, lease: float, operator: Any) -> tuple[list[Any], list[str]]:
    """Make every version due now in this process, as runs of its run service (what they
    read, fetch and start is this command's, never a stored run's)."""
    from deep_research.service.runs import open_service
    from deep_research.service.watch import run_due as make_due

    async with open_service(target, operator, notes=say) as service:
        return await make_due(service, say, lease)


def command(args: argparse.Namespace, target: str) -> int:
    """`watch`: 0 when done; 1 when a due version failed; 2 for bad input."""
    from deep_research.cli.recheck import operator_of
    from deep_research.service.preflight import check_store
    from deep_research.service.runs import UnknownRun

    needs_id = args.every or args.stop or args.changes
    if needs_id and not args.thread_id:
        raise BadInput("name the run: deep-research watch ID --every 7d (or --stop, --changes)")
    if not (needs_id or args.list or args.run_due):
        raise BadInput("say what to do: --every PERIOD, --stop, --list, --changes or --run-due")
    check_store(target, create=bool(args.run_due))
    if args.run_due:
        if args.lease <= 0:
            raise BadInput("--lease must be a number of seconds above 0")
        operator = operator_of(args, unattended=True)  # nobody answers a version's plan
        made, failed = asyncio.run(run_due(target, args.lease, operator))
        print(f"{len(made)} versions made, {len(failed)} failed", file=sys.stderr)
        return 1 if failed else 0
    if args.list:
        print("\n".join(asyncio.run(_list(target, args.all_doors))))
        return 0
    try:
        return _on_a_run(args, target)
    except UnknownRun as error:
        raise BadInput(str(error)) from None


def _on_a_run(args: argparse.Namespace, target: str) -> int:
    """`watch ID --stop`, `--changes` or `--every`."""
    from deep_research.domain.recheck_rules import parse_every
    from deep_research.export.formats import write_file
    from deep_research.export.keeping import change_list_markdown
    from deep_research.service.watch import NotWatchable

    if args.stop:
        if not asyncio.run(_stop(target, args.thread_id, args.all_doors)):
            raise BadInput(f"{args.thread_id!r} is not watched")
        print(f"stopped watching {args.thread_id}; its versions stay", file=sys.stderr)
        return 0
    if args.changes:
        changes = asyncio.run(_changes(target, args.thread_id, args.version, args.all_doors))
        if args.json:
            write_file(args.json, (changes.model_dump_json(indent=2) + "\n").encode("utf-8"))
        sys.stdout.write(change_list_markdown(changes))
        return 0
    try:
        every = parse_every(args.every)
    except ValueError as error:
        raise BadInput(f"--every: {error}") from None
    if args.webhook:
        from deep_research.tools.webhook import check_address

        try:
            check_address(args.webhook)
        except ValueError as error:
            raise BadInput(f"--webhook: {error}") from None
    try:
        watch = asyncio.run(_start(target, args, every))
    except NotWatchable as error:
        raise BadInput(str(error)) from None
    print(
        f"watching {watch.watch_id}: version {watch.version + 1} due {_when(watch.next_due)}, "
        f"then every {args.every}",
        file=sys.stderr,
    )
    if time.time() < watch.next_due:
        print(
            "workers make it on their own; without the queue, run "
            "`deep-research watch --run-due` from a system timer",
            file=sys.stderr,
        )
    return 0
