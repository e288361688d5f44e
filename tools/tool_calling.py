"""Ask a worker's model which tools to call, by the protocol its server takes, remembered.

Two protocols, as the reference article describes them: native tool calling (the toolbox sent
as `tools`, `tool_choice` auto, several calls in one reply) and the prompt protocol (the tool
list written into the prompt, `<tool_call>` blocks read from the reply). Under `auto` a server
that refuses `tools` (HTTP 400, 404, 422, 500, 501 and friends) moves the endpoint and model to
the prompt protocol at once and for good (`ProcessWide.tool_protocols`), the way structured
output settles its method.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import openai
from langchain_core.messages import AIMessage, BaseMessage

from deep_research.settings import Role
from deep_research.state import ToolCall, Usage
from deep_research.tools.events import ToolProtocolSettled, emit
from deep_research.tools.model_client import ModelClient
from deep_research.tools.refusals import too_long
from deep_research.tools.secrets import redact
from deep_research.tools.structured import MethodRefused, send, usage_of
from deep_research.tools.toolbox import Toolbox, checked_call, parse_tool_calls

# A server without tool support answers `tools` with one of these (llama-cpp-python: 500;
# others 400, 404, 405, 422, 501), often without naming the feature.
REFUSAL_STATUSES = frozenset({400, 404, 405, 422, 500, 501})

Protocol = str  # "native" | "prompt"


@dataclass
class ToolChoice:
    """What the model chose: its usable calls (none: it made no usable call), the text it wrote,
    the protocol the reply came by, and what the call cost."""

    calls: list[ToolCall]
    text: str
    protocol: Protocol
    usage: Usage = field(default_factory=Usage)


def protocol_for(role: Role, client: ModelClient) -> Protocol:
    """The protocol to use: what the settings name, else the one settled for this endpoint and
    model, else native."""
    wanted = client.settings.worker_tools
    if wanted in ("native", "prompt"):
        return wanted
    known = client.process.tool_protocols.settled_method(
        client.endpoint(role), client.model_name(role)
    )
    return known or "native"


def refuses_tools(error: BaseException) -> bool:
    """True when a server's error says (or, by its status, suggests) it takes no `tools`."""
    if isinstance(error, MethodRefused):
        return True
    return (
        isinstance(error, openai.APIStatusError)
        and error.status_code in REFUSAL_STATUSES
        and not too_long(error)
    )


def _settle(role: Role, client: ModelClient, protocol: Protocol, why: str = "") -> None:
    """Under `auto`, remember the protocol for this endpoint and model; announce a change."""
    if client.settings.worker_tools != "auto":
        return
    model = client.model_name(role)
    settled, changed = client.process.tool_protocols.settle(client.endpoint(role), model, protocol)
    if changed:
        emit(ToolProtocolSettled(model=model, protocol=settled, why=why))


def _native_calls(reply: AIMessage, box: Toolbox) -> list[ToolCall]:
    """A native reply's usable calls; a model that wrote `<tool_call>` text instead is read
    too (small models do)."""
    calls = [
        checked_call(call.get("id") or f"call_{n}", call["name"], call.get("args"), box)
        for n, call in enumerate(reply.tool_calls, 1)
    ]
    usable = [call for call in calls if call is not None]
    return usable or parse_tool_calls(reply.text, box)


async def choose_tools(
    conversation: Callable[[Protocol], list[BaseMessage]],
    box: Toolbox,
    *,
    role: Role,
    client: ModelClient,
) -> ToolChoice:
    """One decide call: the conversation as the protocol writes it, sent with the toolbox; a
    native refusal under `auto` is resent at once by the prompt protocol."""
    protocol = protocol_for(role, client)
    if protocol == "native":
        try:
            streamed = await send(
                role, conversation("native"), client, method="tools", tools=box.specs()
            )
        except (MethodRefused, openai.APIStatusError) as error:
            if client.settings.worker_tools != "auto" or not refuses_tools(error):
                raise
            cause = error.cause if isinstance(error, MethodRefused) else error
            why = " ".join(redact(f"{type(cause).__name__}: {cause}").split())[:200]
            _settle(role, client, "prompt", why)
            protocol = "prompt"
        else:
            reply = streamed.message
            usage = usage_of(reply, role)
            client.record(role, usage)
            calls = _native_calls(reply, box)
            if calls:
                _settle(role, client, "native")
            return ToolChoice(calls, reply.text, "native", usage)
    streamed = await send(role, conversation("prompt"), client)
    reply = streamed.message
    usage = usage_of(reply, role)
    client.record(role, usage)
    calls = parse_tool_calls(reply.text, box)
    if calls:
        _settle(role, client, "prompt")
    return ToolChoice(calls, reply.text, "prompt", usage)
