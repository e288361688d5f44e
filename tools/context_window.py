"""Ask an OpenAI-compatible server for the context window it really has.

Each server tells in its own way (a window we assume and the server lacks truncates prompts
or rejects them):

- llama.cpp's server: `GET /props` → `default_generation_settings.n_ctx` (or `n_ctx`);
- Ollama: `GET /api/ps` → the loaded model's `context_length`; else `POST /api/show` →
  `num_ctx` in `parameters`; else Ollama's default of 4,096 (it truncates silently beyond);
- vLLM: `GET /v1/models` → `max_model_len` of the model;
- LM Studio: `GET /api/v0/models/{model}` → `loaded_context_length` (else `max_context_length`).

llama-cpp-python tells nothing; its window is learnt from its "maximum context length is N"
error instead (`tools.refusals.window_named`). The answers are kept for the process
(`tools.process_wide`). The probes run at once, and once per endpoint and model: runs that ask at
the same moment wait for the same answer, over one client built on the process's TLS context.
"""

from __future__ import annotations

import asyncio
import re
import ssl
from collections.abc import Callable, Iterable
from functools import cache

import httpx
import httpx2

from deep_research.settings import ROLES, Role, Settings
from deep_research.tools.bounded_http import bounded_request
from deep_research.tools.endpoint_limits import Gates, endpoint_id
from deep_research.tools.model_names import openai_api_key, openai_base_url, uses_openai_endpoint

PROBE_TIMEOUT = 3.0  # seconds per probe; a server that does not answer quickly tells nothing
OLLAMA_DEFAULT_CONTEXT = 4_096
MIN_CONTEXT = 1_000  # the smallest `max_context_tokens` the settings accept


def _root(base_url: str) -> str:
    """The server's root: the base URL without its `/v1`."""
    return re.sub(r"/v1/?$", "", base_url.rstrip("/"))


def _positive(value: object) -> int | None:
    """`value` if it is a positive integer (a window), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


async def _get(client: httpx2.AsyncClient, url: str, **kwargs) -> dict | None:
    """The JSON object a probe returns, or None for any failure (the server does not tell)."""
    try:
        method = "POST" if "json" in kwargs else "GET"
        response = await bounded_request(client, method, url, seconds=PROBE_TIMEOUT, **kwargs)
        body = response.json() if response.status_code == 200 else None
    except (httpx2.HTTPError, httpx.HTTPError, ValueError):  # httpx's: `bounded_request`'s caps
        return None
    return body if isinstance(body, dict) else None


async def _llama_cpp(client: httpx2.AsyncClient, root: str, model: str) -> int | None:
    """llama.cpp's server: `GET /props`."""
    body = await _get(client, f"{root}/props")
    if body is None:
        return None
    settings = body.get("default_generation_settings") or {}
    return _positive(settings.get("n_ctx")) or _positive(body.get("n_ctx"))


async def _ollama(client: httpx2.AsyncClient, root: str, model: str) -> int | None:
    """Ollama: the loaded model in `/api/ps`, else `num_ctx` or the default from `/api/show`
    (both asked at once)."""
    running, shown = await asyncio.gather(
        _get(client, f"{root}/api/ps"), _get(client, f"{root}/api/show", json={"model": model})
    )
    for entry in (running or {}).get("models") or []:
        if model in (entry.get("name"), entry.get("model")):
            return _positive(entry.get("context_length"))
    if shown is None:
        return None
    match = re.search(r"^num_ctx\s+(\d+)", shown.get("parameters") or "", re.M)
    if match:
        return int(match.group(1))
    trained = [
        v for k, v in (shown.get("model_info") or {}).items() if k.endswith(".context_length")
    ]
    return min([OLLAMA_DEFAULT_CONTEXT, *[t for t in trained if _positive(t)]])


async def _vllm(client: httpx2.AsyncClient, root: str, model: str) -> int | None:
    """vLLM: `max_model_len` of the model in `GET /v1/models`."""
    body = await _get(client, f"{root}/v1/models")
    for entry in (body or {}).get("data") or []:
        if entry.get("id") == model:
            return _positive(entry.get("max_model_len"))
    return None


async def _lm_studio(client: httpx2.AsyncClient, root: str, model: str) -> int | None:
    """LM Studio: `GET /api/v0/models/{model}`, the loaded window first."""
    body = await _get(client, f"{root}/api/v0/models/{model}")
    if body is None:
        return None
    return _positive(body.get("loaded_context_length")) or _positive(body.get("max_context_length"))


PROBES = (_llama_cpp, _vllm, _lm_studio, _ollama)


@cache
def _own_tls() -> ssl.SSLContext:
    """A TLS context for probes when no process-wide one is given (built once)."""
    return httpx.create_ssl_context()


class ContextWindows:
    """What each server said its window is, per (endpoint, model); the process holds one
    (`tools.process_wide`), which hands it the process's TLS context."""

    def __init__(self, tls: Callable[[], ssl.SSLContext] = _own_tls) -> None:
        self._known: dict[tuple[str, str], int | None] = {}
        self._asking: dict[tuple[str, str], asyncio.Task] = {}
        self._tls = tls

    async def window(
        self, base_url: str | None, model: str, gates: Gates, api_key: str = ""
    ) -> int | None:
        """The context window (tokens) the server reports for `model`; None if it does not
        tell. Asked once: callers that come while the probes run wait for their answer (a
        caller cancelled meanwhile does not cancel them). Probes count against the server's
        gate."""
        if not base_url:
            return None  # OpenAI itself: its models' windows dwarf what a run sends
        key = (endpoint_id(base_url), model)
        if key in self._known:
            return self._known[key]
        asking = self._asking.get(key)
        if asking is None or asking.get_loop() is not asyncio.get_running_loop():
            asking = asyncio.ensure_future(self._probe(key, base_url, model, gates, api_key))
            self._asking[key] = asking
        return await asyncio.shield(asking)

    async def _probe(
        self, key: tuple[str, str], base_url: str, model: str, gates: Gates, api_key: str
    ) -> int | None:
        """Every server kind's probe at once; the first in `PROBES` order that tells wins."""
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        gate = gates.model(base_url)

        async def asked(probe) -> int | None:
            async with gate.call():
                return await probe(client, _root(base_url), model)

        try:
            async with httpx2.AsyncClient(  # the chat client's stack: same proxies
                timeout=PROBE_TIMEOUT, headers=headers, verify=self._tls()
            ) as client:
                found = await asyncio.gather(*(asked(probe) for probe in PROBES))
            self._known[key] = next((window for window in found if window), None)
            return self._known[key]
        finally:
            if self._asking.get(key) is asyncio.current_task():
                del self._asking[key]

    def learn(self, base_url: str | None, model: str, window: int) -> None:
        """Remember a window the server named in an error (llama-cpp-python tells no other
        way)."""
        if base_url:
            self._known[(endpoint_id(base_url), model)] = window


async def fitted_to_server(
    settings: Settings, windows: ContextWindows, gates: Gates, roles: Iterable[Role] = ROLES
) -> tuple[Settings, int | None]:
    """The settings with `max_context_tokens` lowered to the smallest window the models of
    `roles` (those resolved by name) report (never raised), and that window (None when no
    server tells)."""
    names = {settings.model_for(role) for role in roles}
    asked = sorted(n.removeprefix("openai:") for n in names if uses_openai_endpoint(n))
    base = openai_base_url()
    if not base or not asked:  # OpenAI itself, or only other providers: nothing to ask
        return settings, None
    key = openai_api_key()
    found = await asyncio.gather(*(windows.window(base, name, gates, key) for name in asked))
    known = [w for w in found if w]
    if not known:
        return settings, None
    window = max(MIN_CONTEXT, min(known))
    if window < settings.max_context_tokens:
        settings = settings.model_copy(update={"max_context_tokens": window})
    return settings, min(known)
