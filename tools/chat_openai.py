"""`ChatOpenAI` whose conversation and tools reach the server as LangChain built them, without
the openai SDK walking them again.

The SDK walks every request body against its TypedDict annotations (`openai._utils._transform`)
to rename aliased keys and format dates. A chat completion's messages and tool specs have
neither, so the walk gives back what it was given: 2.4 ms of CPU a call, 14 % of the engine's
under cProfile in a 32-worker fan-out (docs/benchmarks.md; openai/openai-python#3616). Fields
handed to the SDK as `extra_body` are merged into the JSON as they are, over the typed ones
(its documented way to send fields it does not know): the typed `messages` is left empty.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import LanguageModelInput
from langchain_openai import ChatOpenAI

AS_BUILT = ("messages", "tools")  # the large fields; the rest is a few scalars


def sent_as_built(payload: dict) -> dict:
    """The request payload with its conversation and tools moved into `extra_body`."""
    if "messages" not in payload or "response_format" in payload:
        # the Responses API's payload; or a typed response format, for which langchain-openai
        # calls the SDK's parse helpers, which check the tools themselves: left as built
        return payload
    moved = {field: payload.pop(field) for field in AS_BUILT if field in payload}
    payload["extra_body"] = {**moved, **(payload.get("extra_body") or {})}
    payload["messages"] = []  # required by the SDK's signature; replaced by `extra_body`'s
    return payload


class ChatOpenAIAsBuilt(ChatOpenAI):
    """`ChatOpenAI` sending its chat-completion payload's messages and tools untransformed."""

    def _get_request_payload(
        self, input_: LanguageModelInput, *, stop: list[str] | None = None, **kwargs: Any
    ) -> dict:
        return sent_as_built(super()._get_request_payload(input_, stop=stop, **kwargs))
