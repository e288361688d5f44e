"""Checks that run before any model call, so bad input costs nothing and says what is wrong."""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import urllib.request
from pathlib import Path
from typing import Protocol
from urllib.parse import urlsplit

import httpx
from pydantic import ValidationError

from deep_research.domain.extras import install_extra
from deep_research.nodes.planning import BadQuestion, clean_question
from deep_research.service.bad_input import BadInput
from deep_research.service.event_lines import counted
from deep_research.settings import GUARD_NOTE, ROLES, Settings
from deep_research.tools.checkpoints import (
    StoreMissing,
    is_postgres,
    open_checkpointer,
    store_target,
)
from deep_research.tools.corpus import CorpusError
from deep_research.tools.endpoint_limits import endpoint_id
from deep_research.tools.local_search import open_corpus
from deep_research.tools.mcp_config import McpConfigError, read_mcp_config
from deep_research.tools.model_names import (
    MissingCredentials,
    MissingProvider,
    check_provider_installed,
    openai_api_key,
    openai_base_url,
    uses_openai_endpoint,
)
from deep_research.tools.search import SearchProviderError
from deep_research.tools.search.factory import check_provider, web_provider
from deep_research.tools.secrets import redact

QUEUE_HINT = f"the job queue needs the queue extra: {install_extra('queue')}"
CONNECT_TIMEOUT = 5.0  # seconds to wait for the model server to accept a connection


class Notes(Protocol):
    """Where a check reports what it did."""

    def note(self, text: str) -> None: ...


def settings_or_explain(values: dict) -> Settings:
    """Validated settings, or BadInput naming the field and the rule it breaks."""
    try:
        return Settings.model_validate(values)
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "settings"
        message = first["msg"].removeprefix("Value error, ")
        raise BadInput(f"invalid setting {field}: {message}") from None


def check_question(question: str) -> str:
    """The cleaned question, or BadInput saying why it cannot be researched."""
    try:
        return clean_question(question)
    except BadQuestion as error:
        raise BadInput(str(error)) from None


INSTEAD_OF_DUCKDUCKGO = (
    "search another way: set TAVILY_API_KEY or BOCHA_API_KEY, or SEARXNG_URL to your own "
    "SearXNG, or search your documents with --search local --corpus DIR"
)


def duckduckgo_address() -> str:
    """Where DuckDuckGo searches go: `DUCKDUCKGO_BASE_URL`, else ddgs' own HTML endpoint."""
    from ddgs.engines.duckduckgo import Duckduckgo

    return os.environ.get("DUCKDUCKGO_BASE_URL") or Duckduckgo.search_url


def check_reachable(name: str, url: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """The provider's host resolves and accepts a connection within `timeout` seconds (nothing
    is sent, so nothing is searched), or BadInput naming it; skipped behind a proxy.

    The name lookup is bounded too: a resolver with no route can hang far longer than a socket
    timeout, so the attempt runs in a daemon thread that is left behind if it does not answer.
    """
    parts = urlsplit(url)
    if not parts.hostname or _proxied(parts.scheme, parts.hostname):
        return
    port = parts.port or (443 if parts.scheme == "https" else 80)
    outcome: list[BaseException | None] = []

    def connect() -> None:
        try:
            socket.create_connection((parts.hostname, port), timeout=timeout).close()
            outcome.append(None)
        except OSError as error:
            outcome.append(error)

    attempt = threading.Thread(target=connect, name=f"probe {name}", daemon=True)
    attempt.start()
    attempt.join(timeout)
    shown = redact(f"{parts.scheme}://{parts.netloc}")
    if not outcome:
        raise BadInput(f"{name} at {shown} did not answer within {timeout:g} s")
    error = outcome[0]
    if error is not None:
        reason = getattr(error, "strerror", None) or str(error) or type(error).__name__
        raise BadInput(f"{name} at {shown} cannot be reached: {reason}")


def check_credentials(settings: Settings) -> None:
    """The keys the model server and search provider need are set; checked where that is free.

    DuckDuckGo needs no key: it is checked by connecting to it (no search is sent), so that a
    machine without a route to it stops here, not after the planner was paid for.
    """
    try:
        names = {settings.model_for(role) for role in ROLES}
        for name in sorted(names):
            check_provider_installed(name)
        if needs_model_endpoint(settings):
            openai_api_key()
        check_provider(settings)
    except (MissingCredentials, MissingProvider, SearchProviderError) as error:
        raise BadInput(redact(str(error))) from None
    except httpx.HTTPError as error:
        name = web_provider(settings)
        raise BadInput(
            redact(f"{name} is not reachable ({type(error).__name__}: {error})")
        ) from None
    if web_provider(settings) == "duckduckgo" and not os.environ.get("DDGS_PROXY"):
        try:
            check_reachable("duckduckgo", duckduckgo_address())
        except BadInput as error:
            raise BadInput(f"{error}; {INSTEAD_OF_DUCKDUCKGO}") from None


def check_corpus(settings: Settings, progress: Notes) -> None:
    """For local search: the folder exists and holds readable documents (indexing it now)."""
    if settings.search_backend not in ("local", "hybrid"):
        return
    try:
        stats = open_corpus(settings.corpus_dir).refresh()
    except CorpusError as error:
        raise BadInput(str(error)) from None
    progress.note(
        f"corpus: {counted(stats.passages, 'passage')} from {settings.corpus_dir} "
        f"({stats.files_added} added, {stats.files_updated} updated, "
        f"{stats.files_skipped} skipped, {stats.seconds:.2f} s)"
    )


def check_run_settings(settings: Settings, progress: Notes, origin: str = "") -> None:
    """What every command that researches checks and says before its first call (run, batch,
    eval, the MCP server): the MCP sources file, and a lowered guard said aloud."""
    check_mcp_config(settings)
    if settings.fetch_private_addresses:
        progress.note(f"{GUARD_NOTE} ({origin})" if origin else GUARD_NOTE)


def check_mcp_config(settings: Settings) -> None:
    """The MCP sources file reads as `mcpServers` and the MCP SDK is installed, or BadInput."""
    if not settings.mcp_config:
        return
    try:
        read_mcp_config(settings.mcp_config)
        import mcp.client.client  # noqa: F401
    except McpConfigError as error:
        raise BadInput(str(error)) from None
    except ModuleNotFoundError:
        raise BadInput(f"mcp_config needs the MCP extra: {install_extra('mcp')}") from None


def _one_line(error: BaseException) -> str:
    """An error's type and message on one line."""
    return " ".join(f"{type(error).__name__}: {error}".split())


async def _open_store(target: str, create: bool) -> None:
    """Open the store and close it again: the check that it can be used."""
    async with open_checkpointer(target, create=create):
        pass


def _file_in_the_way(target: str) -> Path | None:
    """The first folder on a store's path that exists as a file (so nothing can go in it)."""
    for folder in reversed(Path(target).expanduser().parents):
        if folder.exists() and not folder.is_dir():
            return folder
    return None


def check_store(target: str, *, create: bool = True) -> None:
    """The checkpoint store opens (its tables made if `create`), or BadInput saying why not."""
    try:
        asyncio.run(_open_store(target, create))
    except StoreMissing as error:
        raise BadInput(str(error)) from None
    except (FileExistsError, NotADirectoryError) as error:
        blocking = _file_in_the_way(target)
        why = f"{blocking} is a file, not a folder" if blocking else _one_line(error)
        raise BadInput(redact(f"cannot open the checkpoint store {target}: {why}")) from None
    except ModuleNotFoundError as error:
        if not is_postgres(target):
            raise
        raise BadInput(
            "a postgresql:// checkpoint store needs the PostgreSQL extra "
            f"({install_extra('postgres')}; {error.name} is missing)"
        ) from None
    except Exception as error:  # any failure to open it makes the store unusable: say which
        raise BadInput(
            redact(f"cannot open the checkpoint store {target}: {_one_line(error)}")
        ) from None


def _proxied(scheme: str, host: str) -> bool:
    """True when the HTTP client would reach the host through a proxy (then we cannot probe)."""
    return scheme in urllib.request.getproxies() and not urllib.request.proxy_bypass(host)


def model_endpoint() -> str:
    """The chat server's base URL as the SDK will use it."""
    return endpoint_id(openai_base_url())


def needs_model_endpoint(settings: Settings) -> bool:
    """True when a role's model goes to the OpenAI-compatible server (not another provider)."""
    return any(uses_openai_endpoint(settings.model_for(role)) for role in ROLES)


def check_model_endpoint(timeout: float = CONNECT_TIMEOUT) -> None:
    """The model server accepts a connection (no request is sent), or BadInput naming it."""
    url = model_endpoint()
    parts = urlsplit(url)
    if not parts.hostname or parts.scheme not in ("http", "https"):
        raise BadInput(redact(f"OPENAI_BASE_URL {url!r} is not an http(s) URL"))
    if _proxied(parts.scheme, parts.hostname):
        return
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        socket.create_connection((parts.hostname, port), timeout=timeout).close()
    except OSError as error:
        reason = error.strerror or str(error) or type(error).__name__
        raise BadInput(redact(f"the model server at {url} cannot be reached: {reason}")) from None


def queue_store(target: str) -> str:
    """The store as a PostgreSQL URL, or BadInput: the queue lives in PostgreSQL."""
    if not is_postgres(target):
        raise BadInput(
            "the job queue lives in PostgreSQL: give a postgresql:// store with "
            "--checkpoint-db or DEEP_RESEARCH_CHECKPOINT_DB"
        )
    try:
        import procrastinate  # noqa: F401
    except ModuleNotFoundError:
        raise BadInput(QUEUE_HINT) from None
    return store_target(target)
