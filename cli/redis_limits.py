"""`--redis URL` (or `DEEP_RESEARCH_REDIS_URL`): endpoint limits shared through Redis.

The flag sets the variable for the whole process, so every gate built later shares its limits
(`tools.shared_limits`). A Redis that cannot be reached when the command starts is bad input
(exit 2, one line naming it), before any call is paid for.
"""

from __future__ import annotations

import argparse
import os

from deep_research.domain.extras import install_extra
from deep_research.service.bad_input import BadInput

REDIS_URL_VARIABLE = "DEEP_RESEARCH_REDIS_URL"
USES_LIMITS = ("run", "resume", "batch", "eval", "mcp", "worker")  # commands that make calls
PING_TIMEOUT = 3.0


def add_redis_flag(sub: argparse.ArgumentParser) -> None:
    """The `--redis` flag of a command that makes model or search calls."""
    sub.add_argument(
        "--redis",
        default=None,
        metavar="URL",
        help="share endpoint limits with every process using this Redis, e.g. "
        "redis://host:6379/0 (default: $DEEP_RESEARCH_REDIS_URL; unset: per process)",
    )


def use_redis(args: argparse.Namespace) -> str | None:
    """Take `--redis` into the environment and check the Redis answers; its URL, or None when
    limits stay per process. BadInput names a Redis that cannot be used."""
    if args.command not in USES_LIMITS:
        return None
    if getattr(args, "redis", None):
        os.environ[REDIS_URL_VARIABLE] = args.redis
    url = os.environ.get(REDIS_URL_VARIABLE, "").strip()
    if not url:
        return None
    from deep_research.tools.secrets import mask_url_passwords  # here: `--help` stays light

    shown = mask_url_passwords(url)
    try:
        import limits  # noqa: F401  (the shared windows need it too)
        import redis
    except ModuleNotFoundError as error:
        raise BadInput(
            f"shared limits in Redis need the queue extra ({install_extra('queue')}; "
            f"{error.name} is missing)"
        ) from None
    try:
        client = redis.Redis.from_url(
            url, socket_connect_timeout=PING_TIMEOUT, socket_timeout=PING_TIMEOUT
        )
        client.ping()
    except ValueError as error:
        raise BadInput(f"{shown} is not a Redis URL: {error}") from None
    except redis.RedisError as error:
        message = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise BadInput(f"Redis at {shown} (shared limits) is unreachable: {message}") from None
    return url
