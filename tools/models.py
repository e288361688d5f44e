"""Chat models: one `ChatOpenAI` per model name and event loop, built once and reused.

Any OpenAI-compatible chat-completions server works (OpenAI, Qwen on DashScope, DeepSeek, vLLM,
Ollama): the Responses API is never used. Calls stream; the SDK's own retries are off because
`tools.structured.send` decides what is worth retrying. The API key and base URL come from the
environment at client-build time and never enter settings, state or checkpoints.
"""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import httpx
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from settings import Role, Settings
from tools.endpoint_limits import model_endpoint

PLACEHOLDER_KEY = "not-needed"  # what a keyless local server (vLLM, Ollama) is sent
CONNECT_TIMEOUT = 30.0  # seconds to open a connection

_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple, ChatOpenAI]] = (
    weakref.WeakKeyDictionary()
)


class MissingCredentials(RuntimeError):
    """The environment lacks a key the chosen services need."""


@dataclass(frozen=True)
class Endpoint:
    """Another OpenAI-compatible server than `OPENAI_BASE_URL` (the eval judge's, for one)."""

    base_url: str | None
    api_key: str

    def __repr__(self) -> str:  # the key never reaches a log or a traceback
        return f"Endpoint(base_url={self.base_url!r})"


_endpoint: ContextVar[Endpoint | None] = ContextVar("chat_endpoint", default=None)


@contextmanager
def using_endpoint(endpoint: Endpoint | None) -> Iterator[None]:
    """Model calls made inside go to `endpoint` (None: the environment's server, as usual)."""
    token = _endpoint.set(endpoint)
    try:
        yield
    finally:
        _endpoint.reset(token)


def openai_base_url() -> str | None:
    """The chat server's base URL, from the variables the OpenAI SDK itself reads."""
    return os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE") or None


def openai_api_key() -> str:
    """The chat server's key; a custom base URL may do without one (local servers)."""
    key = os.environ.get("OPENAI_API_KEY", "").strip()
    if key:
        return key
    if openai_base_url():
        return PLACEHOLDER_KEY
    raise MissingCredentials(
        "OPENAI_API_KEY is not set: set it, or set OPENAI_BASE_URL to a server that needs no key."
    )


def chat_base_url() -> str | None:
    """The base URL model calls made here go to: the endpoint in use, else the environment's."""
    endpoint = _endpoint.get()
    return endpoint.base_url if endpoint else openai_base_url()


def chat_model(settings: Settings, role: Role) -> ChatOpenAI:
    """The client for a role's model on the running event loop (its connection pool is reused)."""
    loop = asyncio.get_running_loop()
    name = settings.model_for(role)
    endpoint = _endpoint.get()
    base_url = chat_base_url()
    idle = settings.request_idle_timeout
    key = (name, base_url, endpoint, idle)
    per_loop = _clients.setdefault(loop, {})
    if key not in per_loop:
        # Waiting for the first byte is prompt processing, which a cold local model may spend
        # minutes on: every socket wait is bounded by the idle timeout, the whole call by none.
        timeout = httpx.Timeout(idle, connect=min(idle, CONNECT_TIMEOUT))
        per_loop[key] = ChatOpenAI(
            model=name,
            api_key=SecretStr(endpoint.api_key if endpoint else openai_api_key()),
            base_url=base_url,
            timeout=timeout,
            max_retries=0,  # `tools.structured.send` retries, so that a refusal never is
            use_responses_api=False,
            stream_usage=True,
            stream_chunk_timeout=idle,
            http_async_client=httpx.AsyncClient(
                timeout=timeout, event_hooks=model_endpoint(base_url).http_hooks()
            ),
        )
    return per_loop[key]
