"""`deep-research mcp`: serve the engine to agents over MCP, on stdio or streamable HTTP.

The server's settings come from the same sources as `run` (flags, config file, environment);
a caller may narrow them per run, never widen them (`service.options`). The MCP SDK is an
optional extra, so without it the command says how to install it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ipaddress
import socket
import sys
from dataclasses import dataclass
from typing import Any

from deep_research.domain.extras import install_extra
from deep_research.service.bad_input import BadInput

INSTALL_HINT = f"`deep-research mcp` needs the MCP extra: {install_extra('mcp')}"


class StderrNotes:
    """Server notes on stderr: stdout belongs to the stdio transport."""

    def note(self, text: str) -> None:
        print(text, file=sys.stderr, flush=True)


def http_address(text: str) -> tuple[str, int]:
    """`HOST:PORT` for `--http` (an argparse type)."""
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT such as 127.0.0.1:8765, not {text!r}")
    return host.strip("[]"), int(port)


def _loopback(host: str) -> bool:
    """Whether `host` is this machine only (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a name other than localhost may resolve anywhere
        return False


def add_command(commands: Any, add_setting_flags: Any, store_flag: Any) -> None:
    """The `mcp` subcommand and its flags."""
    sub = commands.add_parser(
        "mcp",
        help="serve research to agents over MCP (stdio, or --http HOST:PORT)",
        description="Serve research as MCP tools: start_research, research_progress, "
        "research_result, wait_for_research, resume_research, list_research; reports as "
        "resources research://RUN_ID/report. Runs are checkpointed like `run`'s.",
    )
    sub.add_argument(
        "--http",
        type=http_address,
        metavar="HOST:PORT",
        help="serve streamable HTTP at http://HOST:PORT/mcp (default: stdio)",
    )
    sub.add_argument(
        "--allow-remote",
        action="store_true",
        help="serve --http on an address other than loopback (anyone who reaches it may start "
        "paid runs and read every run in the store: put authentication in front)",
    )
    sub.add_argument(
        "--queue",
        action="store_true",
        help="hand runs to `deep-research worker` processes through the job queue in the "
        "postgresql:// store instead of running them in this process",
    )
    sub.add_argument(
        "--max-runs",
        type=int,
        default=2,
        metavar="N",
        help="runs researched at once (default 2; with --queue, the workers decide)",
    )
    sub.add_argument(
        "--max-queued",
        type=int,
        default=20,
        metavar="N",
        help="runs waiting for a slot at most; start_research beyond it is refused (default 20)",
    )
    sub.add_argument(
        "--all-doors",
        action="store_true",
        help="also list (and let callers read and resume) runs started from the terminal or the "
        "web app in this store; by default a server sees only its own door's runs",
    )
    sub.add_argument(
        "--token",
        metavar="TOKEN",
        help="--http callers must send `Authorization: Bearer TOKEN` (other local users can "
        "see a command line: prefer --token-file)",
    )
    sub.add_argument(
        "--token-file", metavar="FILE", help="as --token, the token being this file's first line"
    )
    sub.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME[:PORT]",
        help="a Host header --http also accepts (the name a proxy forwards); repeatable",
    )
    add_setting_flags(sub, unattended=True)  # nobody is there to approve a plan
    store_flag(sub)


def _check_sdk() -> None:
    try:
        import mcp.server.mcpserver  # noqa: F401
    except ModuleNotFoundError:
        raise BadInput(INSTALL_HINT) from None


async def serve(
    args: argparse.Namespace, target: str, defaults: dict[str, Any], http: HttpPlan | None
) -> None:
    """Open the run service (resuming the server's unfinished runs), then serve until stopped."""
    from deep_research.server.app import build_server
    from deep_research.server.http_transport import serve_http
    from deep_research.service.admission import Operator
    from deep_research.service.caller import Visibility
    from deep_research.service.executors import InProcess
    from deep_research.service.runs import open_service

    notes = StderrNotes()
    operator = Operator(defaults, remote=True, unattended=True)
    async with open_service(
        target,
        operator,
        executor=None if args.queue else InProcess(args.max_runs),
        queue=args.queue,
        visibility=Visibility(other_doors=args.all_doors),
        prefix="mcpq-" if args.queue else "mcp-",
        max_queued=args.max_queued,
        pooled=True,  # a server lives long: its PostgreSQL connections are checked before use
        notes=notes.note,
    ) as service:
        if not args.queue:
            for run_id in await service.resume_own("mcp"):
                notes.note(f"resuming run {run_id}")
        if http is None:
            await build_server(service).run_stdio_async()
            return
        server = build_server(service, http.token, http.url)
        app = server.streamable_http_app(transport_security=http.security, host=http.host)
        await serve_http(app, http.listener, server.settings.log_level)


@dataclass
class HttpPlan:
    """What `--http` serves on, checked before anything starts: the bound socket, the accepted
    Host/Origin headers and the token callers must send."""

    host: str
    url: str
    listener: socket.socket
    security: Any
    token: str | None


def plan_http(args: argparse.Namespace) -> HttpPlan | None:
    """The `--http` serving plan (exit 2 naming the cause: a port in use, a bad token)."""
    from deep_research.server.http_transport import (
        listening_socket,
        read_token,
        transport_security,
    )

    if not args.http:
        if args.token or args.token_file:
            raise BadInput(
                "--token and --token-file are for --http (stdio has no callers to check)"
            )
        return None
    if args.token and args.token_file:
        raise BadInput("give --token or --token-file, not both")
    host, port = args.http
    security = transport_security(host, port, args.allowed_host)
    token = read_token(args.token, args.token_file)
    url = f"http://{security.allowed_hosts[0]}/mcp"
    return HttpPlan(host, url, listening_socket(host, port), security, token)


def command(args: argparse.Namespace, target: str) -> int:
    """The `mcp` subcommand: checks (exit 2 with the cause), then serves until stopped."""
    from deep_research.service import preflight
    from deep_research.service.setting_sources import resolve_settings

    _check_sdk()
    if args.max_runs < 1:
        raise BadInput(f"--max-runs must be at least 1, not {args.max_runs}")
    if args.max_queued < 0:
        raise BadInput(f"--max-queued must be 0 or more, not {args.max_queued}")
    if args.http and not _loopback(args.http[0]) and not args.allow_remote:
        raise BadInput(
            f"--http {args.http[0]} is reachable from other machines: serve on 127.0.0.1, or add "
            "--allow-remote (with --token-file) behind a proxy that checks who calls"
        )
    if args.queue:
        from deep_research.service.preflight import queue_store

        target = queue_store(target)  # the queue lives in PostgreSQL: exit 2 otherwise
    settings = resolve_settings(args).settings
    if settings.approve_plan:
        raise BadInput("an MCP server runs unattended: approve_plan cannot be on")
    http = plan_http(args)  # before the probes: a bad flag or a taken port is said at once
    try:
        preflight.check_model_endpoint()
        preflight.check_store(target)
    except BaseException:
        if http is not None:
            http.listener.close()  # the port is not held by a server that never started
        raise
    defaults = settings.model_dump(include=settings.model_fields_set)  # adapted ones adapt again
    with contextlib.suppress(KeyboardInterrupt):  # unfinished runs stay; the next start resumes
        asyncio.run(serve(args, target, defaults, http))
    return 0
