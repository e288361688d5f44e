"""Chat completion requests sent as langchain-openai builds them, without the openai SDK's
request transform walking them again.

The SDK's `AsyncCompletions.create` passes every request body through `async_maybe_transform`,
which walks each message against every member of the SDK's parameter unions (six message
types, each content part type) by `typing` introspection, to rename aliased keys and format
dates and files. The chat parameters have neither; langchain-openai hands the SDK plain JSON
(messages, tools and formats as dicts), which the walk returns unchanged. It cost 1.0 ms of CPU a
model call, a tenth of a 32-subtask run's. A body holding anything but plain JSON still goes
through the SDK's own `create`.
"""

from __future__ import annotations

from typing import Any

from openai._base_client import make_request_options
from openai._streaming import AsyncStream
from openai._types import not_given
from openai._utils import is_given
from openai.resources.chat.completions.completions import (
    AsyncCompletions,
    validate_response_format,
)
from openai.types.chat import ChatCompletion, ChatCompletionChunk

PLAIN = (str, int, float, bool, type(None))


def plain_json(value: Any) -> bool:
    """True when `value` is JSON as Python holds it: dicts with string keys, lists, scalars."""
    if isinstance(value, PLAIN):
        return True
    if isinstance(value, dict):
        return all(isinstance(k, str) and plain_json(v) for k, v in value.items())
    if isinstance(value, list):
        return all(plain_json(item) for item in value)
    return False


class PlainCompletions(AsyncCompletions):
    """`AsyncCompletions` whose `create` sends a plain-JSON body as it is (module doc)."""

    async def create(  # type: ignore[override]
        self,
        *,
        extra_headers: Any = None,
        extra_query: Any = None,
        extra_body: Any = None,
        timeout: Any = not_given,
        **parameters: Any,
    ) -> ChatCompletion | AsyncStream[ChatCompletionChunk]:
        body = {key: value for key, value in parameters.items() if is_given(value)}
        if not ("messages" in body and "model" in body and plain_json(body)):
            return await super().create(
                extra_headers=extra_headers,
                extra_query=extra_query,
                extra_body=extra_body,
                timeout=timeout,
                **parameters,
            )
        validate_response_format(parameters.get("response_format", not_given))
        stream = bool(body.get("stream"))
        return await self._post(
            "/chat/completions",
            body=body,
            options=make_request_options(
                extra_headers=extra_headers,
                extra_query=extra_query,
                extra_body=extra_body,
                timeout=timeout,
                security={"bearer_auth": True},
            ),
            cast_to=ChatCompletion,
            stream=stream,
            stream_cls=AsyncStream[ChatCompletionChunk],
        )


def without_request_transform(model: Any) -> Any:
    """`model` (a `ChatOpenAI`) sending its chat completions through `PlainCompletions`."""
    root = getattr(model, "root_async_client", None)
    if root is not None:
        model.async_client = PlainCompletions(root)
    return model
