"""Read a server's error: does it refuse a feature we asked for, or say the prompt is too long?

Servers refuse in many ways: llama-cpp-python answers a `json_schema` response format with HTTP
500 (a validation error naming `response_format.type`), others with 400, 404, 422 or 501, and
proxies wrap it in a 500. What they share is that the error names the feature. A refusal is
never retried; the caller moves to a weaker method instead.
"""

from __future__ import annotations

import re

import openai

# The words an error uses for each structured-output method's feature.
_FEATURE_WORDS = {
    "json_schema": r"response_format|json_schema|structured output|guided|grammar",
    "tool_calling": r"tools?|tool_choice|function(?:s|_call|_calling)?|tool calling",
    "tools": r"tools?|tool_choice|function(?:s|_call|_calling)?|tool calling",
    "json_object": r"response_format|json_object|json mode|grammar|schema",
}
_NOT_REFUSALS = {401, 403, 408, 409, 429}  # auth and rate limits say nothing about features
_CONTEXT = re.compile(
    r"context[ _-]?(?:length|window)|maximum context|too many tokens|prompt is too long|"
    r"exceeds? (?:the )?(?:max(?:imum)? )?(?:context|model)|input is too long|"
    r"reduce the length",
    re.I,
)
_WINDOW = re.compile(
    r"(?:maximum context length is|context window of|context length of|n_ctx[ =:]+)\s*(\d+)", re.I
)


def error_text(error: openai.APIStatusError) -> str:
    """Everything the server said: the SDK's message and the raw body."""
    body = error.body if error.body is not None else ""
    return f"{error.message} {body}"


def refuses(error: BaseException, method: str) -> bool:
    """True when `error` is an HTTP error that names the feature `method` relies on."""
    if not isinstance(error, openai.APIStatusError) or method not in _FEATURE_WORDS:
        return False
    if error.status_code in _NOT_REFUSALS or too_long(error):
        return False
    return re.search(rf"\b(?:{_FEATURE_WORDS[method]})\b", error_text(error), re.I) is not None


def too_long(error: BaseException) -> bool:
    """True when the server rejected the prompt (or prompt plus reply) as beyond its window."""
    return isinstance(error, openai.APIStatusError) and bool(_CONTEXT.search(error_text(error)))


def window_named(error: BaseException) -> int | None:
    """The context window a too-long error states (OpenAI, vLLM, llama.cpp wordings), if any."""
    if not isinstance(error, openai.APIStatusError):
        return None
    match = _WINDOW.search(error_text(error))
    return int(match.group(1)) if match else None
