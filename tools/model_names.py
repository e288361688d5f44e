"""What a model name and the environment say: which provider, which server, which key.

A plain name (`gpt-4.1-mini`, `qwen2.5:7b`) means the OpenAI-compatible server at
`OPENAI_BASE_URL` (OpenAI itself without one); a `provider:model` name whose provider LangChain
knows (`openai:`, `anthropic:`, `ollama:`, `google_genai:`, `bedrock_converse:` ...) means that
provider, whose LangChain package is an optional extra. Keys are read here, at client-build
time, and never enter settings, state or checkpoints.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass

from langchain.chat_models.base import _BUILTIN_PROVIDERS

from deep_research.settings import DEFAULT_MODEL, openai_base_url, provider_of

__all__ = ["openai_base_url", "provider_of"]  # where the price table's look-up needs them too

PLACEHOLDER_KEY = "not-needed"  # what a keyless local server (vLLM, Ollama) is sent


class MissingCredentials(RuntimeError):
    """The environment lacks a key the chosen services need."""


class MissingProvider(ValueError):
    """A `provider:model` name whose LangChain package is not installed."""


@dataclass(frozen=True)
class Endpoint:
    """Another OpenAI-compatible server than `OPENAI_BASE_URL` (the eval judge's, for one)."""

    base_url: str | None
    api_key: str

    def __repr__(self) -> str:  # the key never reaches a log or a traceback
        return f"Endpoint(base_url={self.base_url!r})"


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


def environment_endpoint() -> Endpoint:
    """The server plain model names go to: `OPENAI_BASE_URL` with `OPENAI_API_KEY`."""
    return Endpoint(base_url=openai_base_url(), api_key=openai_api_key())


def uses_openai_endpoint(name: str) -> bool:
    """True when the name goes to the OpenAI-compatible endpoint (plain or `openai:`)."""
    return provider_of(name) in (None, "openai")


def on_the_servers_endpoint(name: str) -> bool:
    """Whether a model name a remote caller gives reaches the server's own model provider (the
    one of its default model, `DEEP_RESEARCH_MODEL` or ours): another `provider:` would make
    the server call a provider, address or key its operator did not choose for callers."""
    own = provider_of(os.environ.get("DEEP_RESEARCH_MODEL") or DEFAULT_MODEL) or "openai"
    return (provider_of(name) or "openai") == own


def check_provider_installed(name: str) -> None:
    """Raise MissingProvider when a `provider:model` name's package is not installed."""
    provider = provider_of(name)
    if provider is None:
        return
    module = _BUILTIN_PROVIDERS[provider][0]
    if importlib.util.find_spec(module.split(".")[0]) is None:
        package = module.split(".")[0].replace("_", "-")
        raise MissingProvider(f"model {name!r} needs the {package} package: pip install {package}")
