"""`deep-research web`: launch the web app (`web/`), for people who never open a terminal.

The parser part imports nothing heavy (the CLI's `--help` stays quick); Starlette, uvicorn and
the graph are imported when the command runs. The server's settings come from the same sources
as `run` (flags, config file, environment); a form may narrow them per run (`web.forms`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ipaddress
import socket
import sys
from pathlib import Path
from typing import Any

from deep_research.domain.extras import install_extra
from deep_research.service.bad_input import BadInput

INSTALL_HINT = f"`deep-research web` needs the web extra: {install_extra('web')}"


def add_command(commands: Any, add_setting_flags: Any, store_flag: Any) -> None:
    """The `web` subcommand and its flags."""
    sub = commands.add_parser(
        "web",
        help="serve the web app: ask, watch, steer and read research in a browser",
        description="Serve the web app at http://HOST:PORT/. Runs are checkpointed like `run`'s "
        "and go on in the server whether a page is open or not.",
    )
    sub.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    sub.add_argument("--port", type=int, default=8780, help="port to listen on (default 8780)")
    sub.add_argument(
        "--allow-remote",
        action="store_true",
        help="listen on an address other than loopback (needs --tokens-file or --user-header)",
    )
    sub.add_argument(
        "--tokens-file",
        type=Path,
        metavar="FILE",
        help="users and their bearer tokens, one `user:token` per line",
    )
    sub.add_argument(
        "--user-header",
        metavar="NAME",
        help="trust the user name a reverse proxy puts in this header (e.g. X-Forwarded-User)",
    )
    sub.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name the app is reached by (repeat; loopback names are always allowed)",
    )
    sub.add_argument(
        "--max-runs", type=int, default=2, metavar="N", help="runs researched at once (default 2)"
    )
    sub.add_argument(
        "--all-doors",
        action="store_true",
        help="also show (and let users act on) runs started from the terminal or MCP in this "
        "store; by default each door sees only its own runs",
    )
    add_setting_flags(sub)
    store_flag(sub)


def _loopback(host: str) -> bool:
    """Whether `host` is this machine only (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def guard_of(args: argparse.Namespace) -> Any:
    """The request checks the flags ask for; BadInput when they do not fit together."""
    from deep_research.web.guard import BadTokensFile, Guard, read_tokens

    if args.tokens_file and args.user_header:
        raise BadInput("choose one authentication: --tokens-file or --user-header")
    if not _loopback(args.host):
        if not args.allow_remote:
            raise BadInput(
                f"--host {args.host} is reachable from other machines: add --allow-remote with "
                "--tokens-file or --user-header, or serve on 127.0.0.1"
            )
        if not (args.tokens_file or args.user_header):
            raise BadInput("--allow-remote needs an authentication: --tokens-file or --user-header")
    try:
        tokens = read_tokens(args.tokens_file) if args.tokens_file else {}
    except BadTokensFile as error:
        raise BadInput(str(error)) from None
    hosts = {
        "127.0.0.1",
        "localhost",
        "::1",
        args.host.lower(),
        *(h.lower() for h in args.allowed_host),
    }
    return Guard(sorted(hosts), tokens=tokens, user_header=(args.user_header or "").lower())


def listening_socket(host: str, port: int) -> socket.socket:
    """The app's address, taken before anything is said, opened or resumed: a port another
    server holds is refused here (exit 2), not by uvicorn after the app said it was serving
    (uvicorn then exits 3, which our exit codes read as "no evidence")."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a port left in TIME_WAIT
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        reason = error.strerror or type(error).__name__
        raise BadInput(
            f"cannot serve on {host}:{port}: {reason} (another server holds it?); "
            "choose another with --port"
        ) from None
    return sock


async def serve(
    args: argparse.Namespace,
    target: str,
    defaults: dict[str, Any],
    guard: Any,
    sock: socket.socket,
) -> None:
    """Open the run store (resuming runs a stopped server left going), then serve on `sock`
    until stopped."""
    import uvicorn

    from deep_research.web.app import serving

    async with serving(target, defaults, guard, args.max_runs, args.all_doors) as app:
        config = uvicorn.Config(
            app, host=args.host, port=args.port, log_level="warning", lifespan="off"
        )
        server = uvicorn.Server(config)
        print(
            f"serving the web app at http://{args.host}:{args.port}/", file=sys.stderr, flush=True
        )
        await server.serve(sockets=[sock])


def command(args: argparse.Namespace, target: str) -> int:
    """The `web` subcommand: checks (exit 2 with the cause), then serves until stopped."""
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ModuleNotFoundError:
        raise BadInput(INSTALL_HINT) from None
    from deep_research.service import preflight
    from deep_research.service.setting_sources import resolve_settings

    if args.max_runs < 1:
        raise BadInput(f"--max-runs must be at least 1, not {args.max_runs}")
    guard = guard_of(args)
    settings = resolve_settings(args).settings
    with listening_socket(args.host, args.port) as sock:  # first: a port in use opens nothing
        preflight.check_model_endpoint()
        preflight.check_store(target)
        defaults = settings.model_dump(include=settings.model_fields_set)  # adapted adapt again
        with contextlib.suppress(KeyboardInterrupt):  # unfinished runs stay; the next start resumes
            asyncio.run(serve(args, target, defaults, guard, sock))
    return 0
