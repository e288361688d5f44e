"""The judge: a model on its own OpenAI-compatible endpoint, asked through the research layers.

Every call goes through `tools.structured.ask` with the judge's own `ModelClient` (structured
output with re-asks on a reply that breaks its contract, retries on server faults, its own limit
on calls in flight, its endpoint's process-wide gate), sent to the judge's endpoint instead of
`OPENAI_BASE_URL` (a `provider:model` judge goes to its provider). A reply that never
validates raises `JudgeFailed`: the task stays unscored (never zero) and a rerun asks again.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from functools import partial
from typing import TypeVar

import openai
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from pydantic import BaseModel

from domain.budgets import cost_usd
from settings import Role, Settings
from state import Usage
from tools.model_client import ModelClient
from tools.models import PLACEHOLDER_KEY, Endpoint, named_model, openai_api_key, openai_base_url
from tools.secrets import redact
from tools.structured import StructuredOutputError, ask

Contract = TypeVar("Contract", bound=BaseModel)

JUDGE_MODEL_VARIABLE = "DEEP_RESEARCH_JUDGE_MODEL"
JUDGE_BASE_URL_VARIABLE = "DEEP_RESEARCH_JUDGE_BASE_URL"
JUDGE_API_KEY_VARIABLE = "DEEP_RESEARCH_JUDGE_API_KEY"
JUDGE_ROLE = "reviewer"  # the judge's calls are counted in its own Usage, under this role
JUDGE_SETTINGS = (  # what the judge takes over from the research settings
    "structured_output",
    "structured_retries",
    "request_timeout",
    "model_retries",
    "max_concurrent_model_calls",
    "max_context_tokens",
    "prices",
)


class JudgeFailed(RuntimeError):
    """The judge gave no valid answer (or its server failed) after every retry."""


def judge_endpoint(base_url: str | None) -> Endpoint:
    """The judge's server: `base_url` (or $DEEP_RESEARCH_JUDGE_BASE_URL) with its own key.

    Without either, the judge shares the research server and its key. A judge on another
    server is never sent `OPENAI_API_KEY`: it gets $DEEP_RESEARCH_JUDGE_API_KEY, or no key.
    """
    url = base_url or os.environ.get(JUDGE_BASE_URL_VARIABLE) or None
    own_key = os.environ.get(JUDGE_API_KEY_VARIABLE, "").strip()
    if url is None:
        return Endpoint(base_url=openai_base_url(), api_key=own_key or openai_api_key())
    return Endpoint(base_url=url, api_key=own_key or PLACEHOLDER_KEY)


def judge_settings(research: Settings, model: str) -> Settings:
    """The judge's settings: its model, and the research run's fault and context limits."""
    return Settings(model=model, **{name: getattr(research, name) for name in JUDGE_SETTINGS})


def _judge_model(endpoint: Endpoint, settings: Settings, role: Role) -> BaseChatModel:
    """The judge's chat model: its name on the judge's endpoint (or its provider's)."""
    return named_model(settings.model_for(role), settings.request_idle_timeout, endpoint)


@dataclass
class Judge:
    """Asks the judge model for contracts; counts what each task's judging cost."""

    settings: Settings
    endpoint: Endpoint
    client: ModelClient = field(init=False)

    def __post_init__(self) -> None:
        self.client = ModelClient(
            self.settings,
            partial(_judge_model, self.endpoint),
            calls_in_flight=asyncio.Semaphore(self.settings.max_concurrent_model_calls),
        )

    @property
    def model(self) -> str:
        """The judge model's name."""
        return self.settings.model

    async def ask(
        self, contract: type[Contract], messages: list[BaseMessage], usage: list[Usage]
    ) -> Contract:
        """A validated `contract` from the judge; its cost is appended to `usage`."""
        try:
            value, spent = await ask(contract, messages, role=JUDGE_ROLE, client=self.client)
        except StructuredOutputError as error:
            usage.append(error.usage)
            raise JudgeFailed(f"the judge gave no valid {contract.__name__}: {error}") from None
        except openai.APIError as error:
            usage.append(getattr(error, "usage", None) or Usage())
            raise JudgeFailed(redact(f"the judge's server failed: {error}")) from None
        usage.append(spent)
        return value

    def cost(self, usage: Usage) -> float | None:
        """What `usage` of the judge cost, from the price table; None without a price."""
        return cost_usd(usage, self.settings)
