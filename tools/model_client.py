"""The narrow model client: what asking a model for a contract needs, and nothing else.

A chat model per role (from a `ModelSource`: names resolved, or models a caller gave), the
settings that shape each call (reply caps, retries, timeouts, structured-output method), a
place to book what each answered call cost, and the caller's own limit on calls in flight.
Every call also passes its endpoint's process-wide gate. A research run builds one from its
`RunResources` (booking into the run's ledger); the eval judge builds its own.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage

from deep_research.domain.context import MESSAGE_OVERHEAD, estimate_tokens
from deep_research.settings import Role, Settings
from deep_research.state import Usage
from deep_research.tools.call_stats import CallStats
from deep_research.tools.endpoint_limits import Endpoint
from deep_research.tools.models import ModelSource, chat_model, endpoint_name, model_name
from deep_research.tools.process_wide import ProcessWide, current


def _nowhere(usage: Usage) -> None:
    """Book nothing (a caller that adds up the returned usage itself)."""


@dataclass
class ModelClient:
    """Asks a role's model; books each answered call's usage and keeps per-role call figures."""

    settings: Settings
    models: ModelSource = chat_model
    book: Callable[[Usage], None] = _nowhere
    calls_in_flight: asyncio.Semaphore | None = None  # the caller's own cap, if any
    stats: CallStats = field(default_factory=CallStats)
    process: ProcessWide = field(default_factory=current)  # gates, capability memory

    def model(self, role: Role) -> BaseChatModel:
        """The role's chat model."""
        return self.models(self.settings, role)

    def model_name(self, role: Role) -> str:
        """The name the role's model goes by (for capability memory and progress)."""
        return model_name(self.model(role), self.settings.model_for(role))

    def endpoint(self, role: Role) -> str:
        """What names the server the role's model talks to."""
        return endpoint_name(self.model(role))

    def gate(self, role: Role) -> Endpoint:
        """The process-wide gate of the role's server."""
        return self.process.gates.get(self.endpoint(role))

    @contextlib.asynccontextmanager
    async def slot(self, role: Role, messages: list[BaseMessage]) -> AsyncIterator[None]:
        """One request: a slot of the caller's, then one of the endpoint (every run's)."""
        gate = self.gate(role)
        estimate = _estimate(messages) if gate.limits.tokens_per_minute else 0
        async with self.calls_in_flight or contextlib.nullcontext(), gate.call(estimate):
            yield

    def record(self, role: Role, usage: Usage) -> None:
        """Book an answered call, and tell its endpoint what the server reported it used."""
        self.book(usage)
        if usage.total_tokens:
            self.gate(role).reported(usage.total_tokens)


def _estimate(messages: list[BaseMessage]) -> int:
    """Our upper estimate of a prompt's tokens, for the endpoint's tokens-per-minute bucket."""
    return sum(estimate_tokens(m.text) + MESSAGE_OVERHEAD for m in messages)
