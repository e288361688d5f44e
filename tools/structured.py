"""Ask a model for a Pydantic contract (or for prose), portable across OpenAI-compatible servers.

Every model request goes through `send`: it streams (timing out on silence, not on length),
sets `max_tokens` from the role's setting, retries what is transient, never retries a refusal,
and resends a prompt once, shorter, when the server says it is too long.

Methods, strongest first: the server's JSON-schema response format, JSON mode with the schema
(`json_object`: llama-cpp-python constrains it by a grammar built from the schema; elsewhere
plain JSON mode), tool calling, and the schema written into the prompt with the JSON pulled out
of the reply. `auto` starts with the strongest not yet known to fail for this endpoint and
model; an error that names the feature (any 4xx/5xx), or a reply that ignores it, moves down
at once, and the result is remembered (`tools.capabilities`). A reply that breaks the contract,
is cut off or is degenerate is appended to the conversation with the failure named and asked
again, a bounded number of times.
"""

from __future__ import annotations

import asyncio
import functools
import json
from functools import partial
from typing import TypeVar

import openai
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable
from pydantic import BaseModel, ValidationError

from deep_research.domain.context import clip, estimate_tokens
from deep_research.domain.degenerate import field_problem
from deep_research.domain.fences import without_fences
from deep_research.domain.json_reply import (
    ReplyNotJSON,
    extract_json,
    strip_reasoning,
    unwrap_single_key,
)
from deep_research.domain.partial_reply import salvaged
from deep_research.domain.prompt_shrink import shrink
from deep_research.domain.reply_format import fix_reply, reply_format, shorter_reply
from deep_research.domain.system_role import place_system
from deep_research.settings import ROLES, Role, Settings
from deep_research.state import Usage
from deep_research.tools.capabilities import METHODS
from deep_research.tools.durable_calls import durable, fingerprint
from deep_research.tools.events import (
    CallRetried,
    MethodSettled,
    PromptShrunk,
    ReplyDegenerate,
    ReplyPartlyKept,
    emit,
)
from deep_research.tools.model_client import ModelClient
from deep_research.tools.models import base_url_of, is_openai_compatible
from deep_research.tools.refusals import refuses, too_long, window_named
from deep_research.tools.retry_policy import is_transient, retry_delay
from deep_research.tools.secrets import redact, redacted
from deep_research.tools.streaming import EmptyStream, ReplyTooLong, StreamedReply, stream_reply

Contract = TypeVar("Contract", bound=BaseModel)

MIN_REPLY_TOKENS = 256  # never ask for less room than this, whatever the prompt's size
# What a model call raises once its retries are spent (a silent stream is a TimeoutError).
MODEL_CALL_ERRORS = (openai.APIError, TimeoutError, EmptyStream, ReplyTooLong)


class StructuredOutputError(RuntimeError):
    """No valid reply within the allowed re-asks; carries the usage those attempts cost."""

    def __init__(self, message: str, usage: Usage) -> None:
        super().__init__(message)
        self.usage = usage


class MethodRefused(RuntimeError):
    """The server refused (or ignored) the structured-output method a request used."""

    def __init__(self, method: str, cause: BaseException | str) -> None:
        super().__init__(f"{method}: {cause}")
        self.method, self.cause = method, cause


def overlong_cost(error: ReplyTooLong, role: Role, conversation: list[BaseMessage]) -> Usage:
    """What a reply stopped for running past its bound cost: the prompt and what had arrived."""
    return Usage.of_call(role, sum(estimate_tokens(m.text) for m in conversation), error.tokens)


def usage_of(reply: AIMessage, role: Role) -> Usage:
    """One answered call of a role, with the tokens the server reported for it."""
    meta = reply.usage_metadata or {}
    return Usage.of_call(role, meta.get("input_tokens", 0), meta.get("output_tokens", 0))


# ---------------------------------------------------------------- the one way out


def _max_tokens(
    client: ModelClient, role: Role, messages: list[BaseMessage], cap: int | None = None
) -> int:
    """The role's reply cap (or the call's own `cap`, when lower), lowered to what the context
    window leaves after the prompt."""
    settings = client.settings
    prompt = sum(estimate_tokens(m.text) for m in messages)
    room = max(MIN_REPLY_TOKENS, settings.max_context_tokens - prompt)
    return min(settings.max_tokens_for(role), cap or settings.max_tokens_for(role), room)


def _with_reply_cap(request: dict, cap: int, model: BaseChatModel) -> dict:
    """The request with `max_tokens`: under its old name for every compatible server (the one
    they all read; ChatOpenAI would send `max_completion_tokens`), the new one for OpenAI.
    Another provider's model keeps the reply cap it was built with."""
    if not is_openai_compatible(model):
        return request
    if not base_url_of(model):
        return {**request, "max_completion_tokens": cap}
    return {**request, "extra_body": {**request.get("extra_body", {}), "max_tokens": cap}}


async def send(
    role: Role,
    messages: list[BaseMessage],
    client: ModelClient,
    *,
    method: str = "prose",
    contract: type[BaseModel] | None = None,
    tools: list[dict] | None = None,
    cap: int | None = None,
) -> StreamedReply:
    """Send one request (every model request goes through here) and stream its reply (at most
    `cap` tokens when given, never more than the role's setting). Method `tools` offers `tools`
    (OpenAI function specs) for the model to call or not.

    Retries transient failures `model_retries` times; a refusal of `method` raises
    `MethodRefused` at once; a prompt the server finds too long is shrunk and sent once more.
    """
    settings = client.settings
    model, request = _prepared(role, method, contract, client, tools)
    conversation = place_system(
        _formatted(messages, method, contract), settings.system_role, settings.model_for(role)
    )
    stats = client.stats.of(role)
    contract_name = contract.__name__ if contract else None
    attempt, shrunk = 0, False
    while True:
        kwargs = _with_reply_cap(request, _max_tokens(client, role, conversation, cap), model)
        offered = [t["function"]["name"] for t in tools or []]
        key = fingerprint(
            conversation, role=role, contract=contract_name, method=method, tools=offered
        )
        call = partial(_stream_or_explain, model, conversation, role, kwargs, settings)
        try:  # the one place a model request is sent: the run's and the endpoint's slot
            reply = _unpacked(await durable(key, call, partial(client.slot, role, conversation)))
        except Exception as error:
            if method != "prose" and refuses(error, method):
                stats.refusals += 1
                raise MethodRefused(method, error) from error
            if too_long(error) and not shrunk:
                window = window_named(error)
                if window:
                    client.process.context_windows.learn(
                        base_url_of(model), settings.model_for(role), window
                    )
                shrunk = True
                stats.shrunk += 1
                conversation = shrink(conversation)
                emit(PromptShrunk(role=role))
                continue
            if not is_transient(error) or attempt >= settings.model_retries:
                raise
            attempt += 1
            stats.retries += 1
            if getattr(error, "chunks_received", 0):
                stats.retries_after_output += 1
            emit(CallRetried(role=role, attempt=attempt, error=type(error).__name__))
            await asyncio.sleep(retry_delay(error, attempt))
            continue
        stats.calls += 1
        stats.seconds += reply.seconds
        if method not in ("prose", "tools"):  # `tools` is no structured-output method
            stats.methods[method] += 1
        return reply


def _unpacked(message: AIMessage) -> StreamedReply:
    """A reply as `durable` saved it: the message, with how it ended in its metadata."""
    meta = message.response_metadata
    return StreamedReply(
        message,
        meta.get("finish_reason") or "",
        meta.get("stream_seconds", 0.0),
        meta.get("stream_chunks", 0),
        meta.get("usage_estimated", False),
    )


async def _stream_or_explain(
    model: Runnable, conversation: list[BaseMessage], role: Role, kwargs: dict, settings: Settings
) -> AIMessage:
    """Stream the call; when the stream ends empty, ask once without streaming to learn why.

    llama-cpp-python answers a prompt beyond its window, when streamed, with HTTP 200 and an
    empty body; the same request unstreamed gets the 400 that names the window.
    """
    cap = settings.model_call_timeout
    try:
        reply = await stream_reply(
            model,
            conversation,
            role=role,
            total_cap=cap,
            idle=settings.request_idle_timeout,
            max_tokens=settings.max_tokens_for(role),
            **kwargs,
        )
    except EmptyStream:
        async with asyncio.timeout(cap):
            message = await model.ainvoke(conversation, **kwargs)
        finish = message.response_metadata.get("finish_reason") or ""
        reply = StreamedReply(message, finish, 0.0, 1, not message.usage_metadata)
    reply.message.response_metadata.update(  # kept with the message if `durable` saves it
        finish_reason=reply.finish_reason,
        stream_seconds=reply.seconds,
        stream_chunks=reply.chunks,
        usage_estimated=reply.usage_estimated,
    )
    return redact_reply(reply.message)  # before `durable` saves it: a server may echo a key


def redact_reply(message: AIMessage) -> AIMessage:
    """A model's reply with every known secret value removed where it enters: its text, its
    tool calls' arguments, and the fields a server added (a proxy or a server that reflects
    the caller's key in a successful answer would otherwise put it in state, checkpoints,
    reports and progress)."""
    return message.model_copy(
        update={
            "content": redacted(message.content),
            "tool_calls": redacted(message.tool_calls),
            "invalid_tool_calls": redacted(message.invalid_tool_calls),
            "additional_kwargs": redacted(message.additional_kwargs),
        }
    )


def _prepared(
    role: Role,
    method: str,
    contract: type[BaseModel] | None,
    client: ModelClient,
    tools: list[dict] | None = None,
):
    """The role's model (tools bound for tool calling) and the request fields for `method`;
    MethodRefused when the model's client cannot send `method` at all."""
    model = client.model(role)
    if method == "tools":  # a worker's toolbox: the model may call any of them, several at once
        try:
            return model.bind_tools(tools or [], tool_choice="auto"), {}
        except NotImplementedError as error:  # a chat model without tool calling
            raise MethodRefused(method, error) from error
    if contract is None or method in ("prose", "prompt"):
        return model, {}
    name, schema = contract.__name__, json_schema(contract)
    if method in ("json_schema", "json_object") and not is_openai_compatible(model):
        why = f"{type(model).__name__} takes no OpenAI response_format"
        raise MethodRefused(method, ValueError(why))
    if method == "json_schema":
        fmt = {
            "type": "json_schema",
            "json_schema": {"name": name, "schema": schema, "strict": False},
        }
        return model, {"extra_body": {"response_format": fmt}}
    if method == "json_object":  # llama-cpp-python reads `schema` and builds a grammar from it
        return model, {"extra_body": {"response_format": {"type": "json_object", "schema": schema}}}
    try:
        return model.bind_tools([contract], tool_choice=name), {}
    except NotImplementedError as error:  # a chat model without tool calling
        raise MethodRefused(method, error) from error


@functools.cache
def json_schema(contract: type[BaseModel]) -> dict:
    """The contract's JSON schema, built once per contract (pydantic takes ms to build one)."""
    return contract.model_json_schema()


def _formatted(
    messages: list[BaseMessage], method: str, contract: type[BaseModel] | None
) -> list[BaseMessage]:
    """The conversation with the schema written into its system message, for the methods that
    need it there (the prompt method, and JSON mode, which enforces JSON but not the schema)."""
    if contract is None or method not in ("prompt", "json_object"):
        return messages
    instruction = reply_format(contract, tagged=method == "prompt")
    if messages and isinstance(messages[0], SystemMessage):
        return [SystemMessage(f"{messages[0].text}\n\n{instruction}"), *messages[1:]]
    return [SystemMessage(instruction), *messages]


# ---------------------------------------------------------------- structured replies


def _method_for(role: Role, client: ModelClient) -> str:
    """The method to try: what the settings name, else the strongest not known to fail here
    (for another provider's model than an OpenAI-compatible one, tool calling at best)."""
    settings = client.settings
    if settings.structured_output != "auto":
        return settings.structured_output
    known = client.process.capabilities.settled_method(
        client.endpoint(role), client.model_name(role)
    )
    if known:
        return known
    return METHODS[0] if is_openai_compatible(client.model(role)) else "tool_calling"


def _move_down(role: Role, client: ModelClient, method: str, why: str) -> bool:
    """Under `auto`, settle on the next weaker method for this endpoint; False if none is left."""
    settings = client.settings
    index = METHODS.index(method)
    if settings.structured_output != "auto" or index + 1 >= len(METHODS):
        return False
    model = client.model_name(role)
    settled, _ = client.process.capabilities.settle(
        client.endpoint(role), model, METHODS[index + 1]
    )
    why = " ".join(redact(why).split())[:200]
    emit(MethodSettled(model=model, method=settled, refused=method, why=why))
    return True


def _settle_on_success(role: Role, client: ModelClient, method: str) -> None:
    """Remember the method a valid reply came by (under `auto`), and announce it once."""
    if client.settings.structured_output != "auto":
        return
    model = client.model_name(role)
    settled, changed = client.process.capabilities.settle(client.endpoint(role), model, method)
    if changed:
        emit(MethodSettled(model=model, method=settled))


def settled_methods(client: ModelClient) -> dict[str, str]:
    """Per model of the run: the structured-output method its replies come by, where known."""
    settings = client.settings
    used: dict[str, str] = {}
    for role in ROLES:
        model = client.model_name(role)
        calls = client.stats.roles.get(role)
        seen = calls.methods.most_common(1)[0][0] if calls and calls.methods else None
        if settings.structured_output == "auto":
            seen = client.process.capabilities.settled_method(client.endpoint(role), model) or seen
        if seen:
            used[model] = seen
    return used


def _reply_json(reply: AIMessage) -> tuple[object, str]:
    """The JSON value a reply carries (tool call or text) and the text it came from."""
    if reply.tool_calls:
        args = reply.tool_calls[0]["args"]
        return args, json.dumps(args, ensure_ascii=False)
    text = (reply.invalid_tool_calls[0].get("args") or "") if reply.invalid_tool_calls else ""
    text = text or reply.text
    return extract_json(text), text


def _ignored(reply: AIMessage, method: str) -> bool:
    """The server accepted the method but the reply shows no sign of it (no JSON, no tool call)."""
    if method == "prompt" or reply.tool_calls or reply.invalid_tool_calls:
        return False
    return "{" not in strip_reasoning(reply.text)


async def _structured_request(
    role: Role, contract: type[BaseModel], messages: list[BaseMessage], client: ModelClient
) -> tuple[StreamedReply, str]:
    """A reply by the strongest method the server accepts, and that method."""
    while True:
        method = _method_for(role, client)
        try:
            return await send(role, messages, client, method=method, contract=contract), method
        except MethodRefused as refusal:
            if not _move_down(role, client, method, str(refusal.cause)):
                raise refusal.cause from None


async def ask(
    contract: type[Contract], messages: list[BaseMessage], *, role: Role, client: ModelClient
) -> tuple[Contract, Usage]:
    """A validated `contract` instance from the role's model, and the usage it cost."""
    settings = client.settings
    usage = Usage()
    conversation = list(messages)
    tries = settings.structured_retries + 1
    stats = client.stats.of(role)
    attempt, overlong = 0, False
    partial: tuple[Contract, list[str], str] | None = None  # valid but for non-essential fields
    while attempt < tries:
        try:
            streamed, method = await _structured_request(role, contract, conversation, client)
        except ReplyTooLong as error:  # an unusable reply: re-asked once, the bound restated
            cost = overlong_cost(error, role, conversation)
            usage += cost
            client.record(role, cost)
            attempt, problem = attempt + 1, str(error)
            final = overlong or attempt >= tries
            emit(ReplyDegenerate(role=role, problem=problem, final=final))
            if final:
                break
            overlong = True
            stats.reasks += 1
            conversation = _with_note(messages, shorter_reply(error.max_tokens))
            continue
        except MODEL_CALL_ERRORS as error:
            error.usage = usage  # what the answered tries cost is not lost with the failure
            raise
        reply = streamed.message
        cost = usage_of(reply, role)
        usage += cost
        client.record(role, cost)
        if _ignored(reply, method) and _move_down(
            role, client, method, "the reply ignored it (no JSON, no tool call)"
        ):
            stats.refusals += 1
            continue  # the server's fault, not the model's: no re-ask is spent
        attempt += 1
        valid, problem, text, kept = _checked(contract, reply, streamed.finish_reason, messages)
        if valid is not None:
            _settle_on_success(role, client, method)
            return valid, usage
        if kept is not None:  # asked again for the rest; what was valid is not lost meanwhile
            partial = (*kept, problem)
        if attempt < tries:  # the last failure is not asked again
            stats.reasks += 1
        # Only the last failed reply goes back, clipped: a re-ask never outgrows the window.
        shown = clip(text, max(100, settings.max_context_tokens // 16)) or "(empty)"
        conversation = [*messages, AIMessage(shown), HumanMessage(fix_reply(problem))]
    if partial is not None:
        kept, dropped, why = partial
        _settle_on_success(role, client, method)
        emit(ReplyPartlyKept(role=role, contract=contract.__name__, dropped=dropped, problem=why))
        return kept, usage
    raise StructuredOutputError(
        f"{contract.__name__}: no valid reply in {attempt} tries ({problem})", usage
    )


def _with_note(messages: list[BaseMessage], note: str) -> list[BaseMessage]:
    """The conversation with `note` added to its last user message (a chat template that wants
    user and assistant turns to alternate takes no second user turn in a row)."""
    if messages and isinstance(messages[-1], HumanMessage):
        return [*messages[:-1], HumanMessage(f"{messages[-1].text}\n\n{note}")]
    return [*messages, HumanMessage(note)]


def _checked(
    contract: type[Contract], reply: AIMessage, finish: str, prompt: list[BaseMessage]
) -> tuple[Contract | None, str, str, tuple[Contract, list[str]] | None]:
    """The reply as a valid contract, or None and what is wrong; the text it came as; and,
    when only non-essential fields broke it, the reply without them and their names."""
    text = reply.text
    if finish == "length":
        cut = "the reply was cut off at the token limit; answer with a shorter JSON object"
        return None, cut, text, None
    schema = json.dumps(json_schema(contract), ensure_ascii=False)
    value: object = None
    try:
        value, text = _reply_json(reply)
        value = unwrap_single_key(value, set(contract.model_fields))
        valid = contract.model_validate(value)
    except ReplyNotJSON as error:
        return None, str(error), text, None
    except ValidationError as error:
        kept = salvaged(contract, value, error)
        if kept is not None and field_problem(kept[0], prompt, schema):
            kept = None
        return None, _short(error), text, kept
    degenerate = field_problem(valid, prompt, schema)
    return (None, degenerate, text, None) if degenerate else (valid, "", text, None)


def _short(error: ValidationError) -> str:
    """A validation error in a few lines the model can act on."""
    return "; ".join(
        f"{'.'.join(str(p) for p in item['loc']) or 'reply'}: {item['msg']}"
        for item in error.errors()[:5]
    )


# ---------------------------------------------------------------- prose


async def write(
    messages: list[BaseMessage], *, role: Role, client: ModelClient
) -> tuple[str, Usage]:
    """Prose from the role's model, without reasoning blocks or copied data fences; its usage."""
    text, usage, _finish = await write_raw(messages, role=role, client=client)
    return without_fences(strip_reasoning(text)), usage


async def write_raw(
    messages: list[BaseMessage], *, role: Role, client: ModelClient, cap: int | None = None
) -> tuple[str, Usage, str]:
    """Prose as the model wrote it (at most `cap` tokens), its usage, and why it ended (`stop`,
    `length`, ...)."""
    streamed = await send(role, messages, client, cap=cap)
    usage = usage_of(streamed.message, role)
    client.record(role, usage)
    return streamed.message.text, usage, streamed.finish_reason
