"""The judge: a model on its own OpenAI-compatible endpoint, with its own client settings.

Its reply cap, context window, timeout, concurrency and retries are its own (`JudgeConfig`),
never the research run's. Every call goes through the judge's own narrow `ModelClient` (structured
output with re-asks on a reply that breaks its contract, retries on server faults, its own limit
on calls in flight, its endpoint's process-wide gate), sent to the judge's endpoint instead of
`OPENAI_BASE_URL` (a `provider:model` judge goes to its provider), and bounded as a whole by the
judge's timeout. A reply that never
validates raises `JudgeFailed`: the task stays unscored (never zero) and a rerun asks again.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from functools import partial
from typing import TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from pydantic import BaseModel

from deep_research.domain.budgets import cost_usd
from deep_research.evaluation.judge_config import (
    FACT_ROLE,
    JudgeConfig,
)
from deep_research.settings import Role, Settings
from deep_research.state import Usage
from deep_research.tools.context_window import MIN_CONTEXT
from deep_research.tools.model_client import ModelClient
from deep_research.tools.model_names import (
    PLACEHOLDER_KEY,
    Endpoint,
    openai_api_key,
    openai_base_url,
)
from deep_research.tools.models import named_model
from deep_research.tools.process_wide import current
from deep_research.tools.secrets import redact
from deep_research.tools.structured import MODEL_CALL_ERRORS, StructuredOutputError, ask, write_raw

Contract = TypeVar("Contract", bound=BaseModel)

JUDGE_BASE_URL_VARIABLE = "DEEP_RESEARCH_JUDGE_BASE_URL"
JUDGE_API_KEY_VARIABLE = "DEEP_RESEARCH_JUDGE_API_KEY"


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


def _judge_model(endpoint: Endpoint, settings: Settings, role: Role) -> BaseChatModel:
    """The judge's chat model: its name on the judge's endpoint (or its provider's)."""
    return named_model(settings.model_for(role), settings.request_idle_timeout, endpoint)


async def ask_model(
    contract: type[Contract] | None, messages: list[BaseMessage], client: ModelClient, role: Role
) -> tuple[Contract | str, Usage]:
    """The judge's one way to a model: a validated contract, or prose when `contract` is None."""
    if contract is None:
        text, spent, _finish = await write_raw(messages, role=role, client=client)
        return text, spent
    return await ask(contract, messages, role=role, client=client)


@dataclass
class Judge:
    """Asks the judge model for contracts or prose; counts what each task's judging cost."""

    config: JudgeConfig
    endpoint: Endpoint
    client: ModelClient = field(init=False)

    def __post_init__(self) -> None:
        settings = self.config.settings()
        self.client = ModelClient(
            settings,
            partial(_judge_model, self.endpoint),
            calls_in_flight=asyncio.Semaphore(settings.max_concurrent_model_calls),
        )

    @property
    def model(self) -> str:
        """The judge model's name."""
        return self.config.model

    @property
    def context_tokens(self) -> int:
        """The judge's context window: what a prompt to it must fit in."""
        return self.config.context_tokens

    async def _call(
        self, contract: type[Contract] | None, messages: list[BaseMessage], usage: list[Usage]
    ) -> Contract | str:
        """One judge question, bounded by the judge's timeout; its cost appended to `usage`."""
        what = contract.__name__ if contract else "reply"
        try:
            async with asyncio.timeout(self.config.timeout):
                value, spent = await ask_model(contract, messages, self.client, self.config.role)
        except TimeoutError:
            usage.append(Usage())
            raise JudgeFailed(
                f"the judge gave no {what} within --judge-timeout {self.config.timeout:g} s"
            ) from None
        except StructuredOutputError as error:
            usage.append(error.usage)
            raise JudgeFailed(f"the judge gave no valid {what}: {error}") from None
        except MODEL_CALL_ERRORS as error:
            usage.append(getattr(error, "usage", None) or Usage())
            raise JudgeFailed(redact(f"the judge's server failed: {error}")) from None
        usage.append(spent)
        return value

    async def ask(
        self, contract: type[Contract], messages: list[BaseMessage], usage: list[Usage]
    ) -> Contract:
        """A validated `contract` from the judge; its cost is appended to `usage`."""
        return await self._call(contract, messages, usage)

    async def write(self, messages: list[BaseMessage], usage: list[Usage]) -> str:
        """The judge's reply as text (the benchmark's prompts ask for JSON in prose)."""
        return await self._call(None, messages, usage)

    def cost(self, usage: Usage, fact_model: str | None = None) -> float | None:
        """What `usage` of the judge (and of a FACT judge on `fact_model`) cost, from the price
        table; None when a model has no price."""
        settings = self.client.settings
        if fact_model:
            settings = settings.model_copy(update={f"{FACT_ROLE}_model": fact_model})
        return cost_usd(usage, settings)


async def fitted_to_server(judge: Judge) -> tuple[Judge, int | None]:
    """The judge with its context window lowered to what its server reports for its model
    (llama.cpp, Ollama, vLLM, LM Studio tell; never raised), and that window."""
    endpoint = judge.endpoint
    process = current()
    window = await process.context_windows.window(
        endpoint.base_url, judge.model, process.gates, endpoint.api_key
    )
    if not window or window >= judge.context_tokens:
        return judge, window
    lowered = judge.config.model_copy(update={"context_tokens": max(MIN_CONTEXT, window)})
    return Judge(lowered, endpoint), window


def fact_judge(judge: Judge, model: str | None) -> Judge:
    """The FACT judge: the RACE judge, or the same client settings on another model, its calls
    counted under their own role (priced as that model)."""
    if not model or model == judge.model:
        return judge
    config = judge.config.model_copy(update={"model": model, "role": FACT_ROLE})
    return Judge(config, judge.endpoint)
