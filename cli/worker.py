"""`deep-research worker`: take research runs from the queue in the PostgreSQL store.

Start any number, on any machines that reach the store (and, for shared endpoint limits, one
Redis): each runs up to `--concurrency` runs at once. A worker that dies has its run taken up
by another within `--stalled-after` seconds (plus a third of it), resumed from its checkpoint.
Model and search keys come from each worker's own environment, never from the queue.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from typing import Any

from deep_research.cli.redis_limits import add_redis_flag


def add_command(commands: Any, store_flag: Any) -> None:
    """The `worker` subcommand and its flags."""
    sub = commands.add_parser(
        "worker",
        help="take research runs from the queue in the PostgreSQL store (batch --queue)",
        description="Run research jobs from the queue until stopped (Ctrl-C or SIGTERM: the "
        "runs in hand finish first). Needs a postgresql:// checkpoint store.",
    )
    sub.add_argument(
        "--concurrency", type=_positive_int, default=2, metavar="N", help="runs at once (2)"
    )
    sub.add_argument(
        "--stalled-after",
        type=_positive_float,
        default=60.0,
        metavar="SECONDS",
        help="a worker silent this long counts as dead; its run is taken up again (60)",
    )
    store_flag(sub)
    add_redis_flag(sub)


def _positive_int(text: str) -> int:
    """An argparse type: a whole number, 1 or more."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number, 1 or more, not {text!r}")
    return int(text)


def _positive_float(text: str) -> float:
    """An argparse type: a number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0, not {text!r}")
    return value


def say(text: str) -> None:
    """One line of the worker's log on stderr, with the time."""
    from deep_research.tools.secrets import redact

    print(redact(f"{time.strftime('%H:%M:%S')} {text}"), file=sys.stderr, flush=True)


def command(args: argparse.Namespace, target: str) -> int:
    """`worker`: check the store, then take runs until stopped; 2 when it cannot start."""
    from deep_research.service.admission import Operator
    from deep_research.service.executors import InProcess
    from deep_research.service.preflight import check_store, queue_store
    from deep_research.service.queue import open_queue
    from deep_research.service.runs import open_service
    from deep_research.service.setting_sources import resolve_settings

    conninfo = queue_store(target)
    check_store(conninfo)  # unreachable: one line, exit 2
    # What this worker reads, fetches and starts is its own (its config file and environment),
    # never what a job row or a stored run says.
    operator = Operator.of(resolve_settings(args).settings, unattended=True)

    async def work() -> None:
        async with (
            open_service(
                conninfo, operator, executor=InProcess(args.concurrency), pooled=True, notes=say
            ) as service,
            open_queue(conninfo, connections=args.concurrency + 3) as queue,
        ):
            say(f"worker ready: {args.concurrency} at once")
            await queue.work(service, args.concurrency, args.stalled_after, say)

    asyncio.run(work())
    say("worker stopped")
    return 0
