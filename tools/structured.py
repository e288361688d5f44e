"""Ask a model for a Pydantic contract (or for prose), portable across OpenAI-compatible servers.

Methods, strongest first: the server's JSON-schema response format, tool calling, and the
schema written into the prompt with the JSON pulled out of the reply. `auto` starts with the
strongest and, when the server refuses a method with HTTP 400, moves down for the rest of the
run without failing the step that found out. A reply that breaks the contract is appended to
the conversation with the error, and the question is asked again, a bounded number of times.
"""

from __future__ import annotations

import functools
import json
from functools import partial
from typing import TypeVar

import openai
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, ValidationError

from nodes import prompts
from settings import Role, Settings
from state import Usage
from tools.durable_calls import durable, fingerprint
from tools.json_reply import ReplyNotJSON, extract_json, strip_reasoning, unwrap_single_key
from tools.models import chat_model
from tools.run_resources import RunResources

Contract = TypeVar("Contract", bound=BaseModel)

METHODS = ("json_schema", "tool_calling", "prompt")


class StructuredOutputError(RuntimeError):
    """No valid reply within the allowed re-asks; carries the usage those attempts cost."""

    def __init__(self, message: str, usage: Usage) -> None:
        super().__init__(message)
        self.usage = usage


def usage_of(reply: AIMessage, role: Role) -> Usage:
    """One answered call of a role, with the tokens the server reported for it."""
    meta = reply.usage_metadata or {}
    return Usage.of_call(role, meta.get("input_tokens", 0), meta.get("output_tokens", 0))


@functools.cache
def json_schema(contract: type[BaseModel]) -> dict:
    """The contract's JSON schema, built once per contract (pydantic takes ms to build one)."""
    return contract.model_json_schema()


def _with_reply_format(messages: list[BaseMessage], contract: type[BaseModel]) -> list:
    """The conversation with the schema instruction added to its (single) system message."""
    instruction = prompts.reply_format(contract)
    if messages and isinstance(messages[0], SystemMessage):
        return [SystemMessage(f"{messages[0].text}\n\n{instruction}"), *messages[1:]]
    return [SystemMessage(instruction), *messages]


async def _request(
    role: Role,
    contract: type[BaseModel],
    messages: list[BaseMessage],
    method: str,
    run: RunResources,
) -> AIMessage:
    """Send one request that asks for `contract` by one method."""
    model = chat_model(run.settings, role)
    name = contract.__name__
    if method == "json_schema":
        schema = {"name": name, "schema": json_schema(contract), "strict": False}
        send = partial(
            model.ainvoke, messages, response_format={"type": "json_schema", "json_schema": schema}
        )
    elif method == "tool_calling":
        send = partial(model.bind_tools([contract], tool_choice=name).ainvoke, messages)
    else:
        send = partial(model.ainvoke, _with_reply_format(messages, contract))
    key = fingerprint(messages, role=role, contract=name, method=method)
    return await durable(key, send, partial(run.model_call, messages))


def _reply_json(reply: AIMessage) -> tuple[object, str]:
    """The JSON value a reply carries (tool call or text) and the text it came from."""
    if reply.tool_calls:
        args = reply.tool_calls[0]["args"]
        return args, json.dumps(args, ensure_ascii=False)
    text = (reply.invalid_tool_calls[0].get("args") or "") if reply.invalid_tool_calls else ""
    text = text or reply.text
    return extract_json(text), text


async def _request_with_fallback(
    role: Role, contract: type[BaseModel], messages: list[BaseMessage], run: RunResources
) -> AIMessage:
    """A request by the strongest method the server accepts; `auto` moves down on HTTP 400."""
    settings = run.settings
    while True:
        method = _first_method(settings, run)
        try:
            return await _request(role, contract, messages, method, run)
        except openai.BadRequestError:
            weaker = _weaker(method) if settings.structured_output == "auto" else None
            if weaker is None:
                raise
            if METHODS.index(weaker) > METHODS.index(run.structured_mode or METHODS[0]):
                run.structured_mode = weaker  # only ever down, whatever order replies come in


def _first_method(settings: Settings, run: RunResources) -> str:
    """The method to try: what `auto` settled on for this run, or what the settings name."""
    if settings.structured_output != "auto":
        return settings.structured_output
    return run.structured_mode or METHODS[0]


def _weaker(method: str) -> str | None:
    """The next more portable method after `method`, if any."""
    index = METHODS.index(method)
    return METHODS[index + 1] if index + 1 < len(METHODS) else None


async def ask(
    contract: type[Contract], messages: list[BaseMessage], *, role: Role, run: RunResources
) -> tuple[Contract, Usage]:
    """A validated `contract` instance from the role's model, and the usage it cost."""
    settings = run.settings
    usage = Usage()
    conversation = list(messages)
    tries = settings.structured_retries + 1
    for _ in range(tries):
        try:
            reply = await _request_with_fallback(role, contract, conversation, run)
        except openai.APIError as error:
            error.usage = usage  # what the answered tries cost is not lost with the failure
            raise
        cost = usage_of(reply, role)
        usage += cost
        run.record(cost)
        text = reply.text
        try:
            value, text = _reply_json(reply)
            fields = set(contract.model_fields)
            return contract.model_validate(unwrap_single_key(value, fields)), usage
        except ReplyNotJSON as error:
            problem = str(error)
        except ValidationError as error:
            problem = _short(error)
        conversation += [AIMessage(text or "(empty)"), HumanMessage(prompts.fix_reply(problem))]
    raise StructuredOutputError(
        f"{contract.__name__}: no valid reply in {tries} tries ({problem})", usage
    )


def _short(error: ValidationError) -> str:
    """A validation error in a few lines the model can act on."""
    return "; ".join(
        f"{'.'.join(str(p) for p in item['loc']) or 'reply'}: {item['msg']}"
        for item in error.errors()[:5]
    )


async def write(messages: list[BaseMessage], *, role: Role, run: RunResources) -> tuple[str, Usage]:
    """Prose from the role's model, without reasoning blocks or copied data fences; its usage."""
    model = chat_model(run.settings, role)
    reply = await durable(
        fingerprint(messages, role=role),
        partial(model.ainvoke, messages),
        partial(run.model_call, messages),
    )
    usage = usage_of(reply, role)
    run.record(usage)
    return prompts.without_fences(strip_reasoning(reply.text)), usage
