"""Chat models: a role's model name resolved to a LangChain chat model, built once and reused.

A plain name (`gpt-4.1-mini`, `qwen2.5:7b`) means the OpenAI-compatible server at
`OPENAI_BASE_URL` (OpenAI itself without one): a `ChatOpenAI` that never uses the Responses API,
streams with usage, times out on silence, and leaves retries to `tools.structured.send`. A
`provider:model` name whose provider LangChain knows (`openai:`, `anthropic:`, `ollama:`,
`google_genai:`, `bedrock_converse:` ...) is built by LangChain's own `init_chat_model`; the
provider's package is an optional extra. The API key and base URL come from the environment at
build time and never enter settings, state or checkpoints.

A chat server is reached over httpx2, the openai SDK's own HTTP stack (`SearchClients.model_http`):
its connection pool checks an idle connection once, when it reuses it, where httpx's checks
every pooled connection whenever a request starts or ends (`docs/architecture.md`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import httpx2
from langchain.chat_models import init_chat_model
from langchain_core.language_models import BaseChatModel
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from deep_research.settings import ROLES, Role, Settings
from deep_research.tools.chat_openai import ChatOpenAIAsBuilt
from deep_research.tools.endpoint_limits import endpoint_id
from deep_research.tools.model_names import (
    Endpoint,
    check_provider_installed,
    environment_endpoint,
    provider_of,
)
from deep_research.tools.process_wide import ProcessWide, current

CONNECT_TIMEOUT = 30.0  # seconds to open a connection
KEPT_WITHOUT_A_CAP = 100  # httpx2's default most connections, kept idle too when nothing caps calls

ModelSource = Callable[[Settings, Role], BaseChatModel]
"""Where a model client gets a role's chat model: by name (`chat_model`), or one given."""


def connection_limits(max_in_flight: int | None) -> httpx2.Limits:
    """A chat server's connection pool: as many idle connections kept as the endpoint lets
    calls be in flight (no cap: httpx2's 100). httpx2 keeps 20: with 32 workers quoting 96 pages
    at once, each level of a fan-out opened again the connections the one before had closed."""
    kept = max_in_flight or KEPT_WITHOUT_A_CAP
    return httpx2.Limits(
        max_connections=max(kept, KEPT_WITHOUT_A_CAP), max_keepalive_connections=kept
    )


def openai_model(
    name: str, endpoint: Endpoint, idle_timeout: float, process: ProcessWide
) -> BaseChatModel:
    """A `ChatOpenAI` for `name` on `endpoint`, on the running loop (its pool is reused)."""
    key = ("openai", name, endpoint, idle_timeout)
    per_loop = process.chat_clients_here()
    if key not in per_loop:
        # Waiting for the first byte is prompt processing, which a cold local model may spend
        # minutes on: every socket wait is bounded by the idle timeout, the whole call by none.
        # A (connect, read, write, pool) tuple, which both the SDK and httpx2 take.
        timeout = (min(idle_timeout, CONNECT_TIMEOUT), idle_timeout, idle_timeout, idle_timeout)
        tls = process.search_clients.tls()  # the process's: no CA bundle loaded again
        gate = process.gates.model(endpoint.base_url)
        blocking = process.search_clients.anywhere(  # the SDK builds a blocking client too
            ("openai-blocking", endpoint.base_url, timeout),
            lambda: httpx2.Client(timeout=timeout, verify=tls),
        )
        per_loop[key] = ChatOpenAIAsBuilt(
            model=name,
            api_key=SecretStr(endpoint.api_key),
            base_url=endpoint.base_url,
            timeout=timeout,
            max_retries=0,  # `tools.structured.send` retries, so that a refusal never is
            use_responses_api=False,
            stream_usage=True,
            stream_chunk_timeout=0,  # silence is timed by `tools.streaming` (one timer a call)
            http_client=blocking,
            # one pool per server on this loop, whatever the model: the endpoint's cap holds
            http_async_client=process.search_clients.model_http(
                ("openai", endpoint.base_url, timeout),
                timeout=timeout,
                event_hooks=gate.http_hooks(),
                limits=connection_limits(gate.limits.max_in_flight),
            ),
        )
    return per_loop[key]


def provider_model(name: str, process: ProcessWide) -> BaseChatModel:
    """Any other provider's chat model, built by `init_chat_model` with its own defaults."""
    check_provider_installed(name)
    key = ("provider", name)
    per_loop = process.chat_clients_here()
    if key not in per_loop:
        per_loop[key] = init_chat_model(name)
    return per_loop[key]


def named_model(
    name: str,
    idle_timeout: float,
    endpoint: Endpoint | None = None,
    process: ProcessWide | None = None,
) -> BaseChatModel:
    """The chat model a name means: OpenAI-compatible (plain or `openai:`), else its provider's;
    built once per process (`process`, else the current one) and event loop."""
    process = process or current()
    provider = provider_of(name)
    if provider is None or provider == "openai":
        model = name.removeprefix("openai:") if provider else name
        return openai_model(model, endpoint or environment_endpoint(), idle_timeout, process)
    return provider_model(name, process)


def chat_model(settings: Settings, role: Role) -> BaseChatModel:
    """The default model source: the role's model name, resolved (see module doc)."""
    return named_model(settings.model_for(role), settings.request_idle_timeout)


class GivenModels:
    """A model source from chat models a Python caller built: one for every role, or one per
    role (a role missing from the mapping uses its model name as usual)."""

    def __init__(self, models: BaseChatModel | Mapping[str, BaseChatModel]) -> None:
        if isinstance(models, BaseChatModel):
            models = dict.fromkeys(ROLES, models)
        unknown = set(models) - set(ROLES)
        if unknown:
            raise ValueError(f"chat models for unknown roles: {sorted(unknown)}")
        self.models = dict(models)

    def __call__(self, settings: Settings, role: Role) -> BaseChatModel:
        return self.models.get(role) or chat_model(settings, role)


def roles_by_name(source: ModelSource) -> tuple[Role, ...]:
    """The roles whose model a source resolves from its name (not handed in by a caller): only
    their servers are asked for a context window."""
    given = source.models if isinstance(source, GivenModels) else {}
    return tuple(role for role in ROLES if role not in given)


def given_models(models: BaseChatModel | Mapping[str, BaseChatModel]) -> ModelSource:
    """A model source from chat models a Python caller built (see `GivenModels`)."""
    return GivenModels(models)


def is_openai_compatible(model: BaseChatModel) -> bool:
    """True for a chat-completions client, which takes `response_format` and `max_tokens`."""
    return isinstance(model, ChatOpenAI)


def base_url_of(model: BaseChatModel) -> str | None:
    """An OpenAI-compatible model's base URL (None: OpenAI's own, or another provider)."""
    return model.openai_api_base if isinstance(model, ChatOpenAI) else None


def endpoint_name(model: BaseChatModel) -> str:
    """What names the server a model talks to, for limits and capability memory: the base URL
    of an OpenAI-compatible server, else the provider's client type and any base URL it has."""
    if isinstance(model, ChatOpenAI):
        return endpoint_id(model.openai_api_base)
    base = getattr(model, "base_url", None) or getattr(model, "anthropic_api_url", None)
    return f"{type(model).__name__}" + (f"@{base}" if base else "")


def model_name(model: BaseChatModel, fallback: str) -> str:
    """The model's own name where its client has one, else `fallback` (the setting)."""
    for attribute in ("model_name", "model"):
        value = getattr(model, attribute, None)
        if isinstance(value, str) and value:
            return value
    return fallback
