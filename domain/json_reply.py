"""Turn a chat model's raw text reply into a JSON value, for models without structured output.

The schema goes into the prompt and the answer comes back as text: wrapped in reasoning blocks,
tool-call tags, code fences or prose, and now and then slightly broken. Valid JSON is taken as is;
anything else is mended by `json_repair` (trailing commas, single quotes, Python literals,
unquoted keys, comments, a cut-off tail).
"""

from __future__ import annotations

import json
import re
from typing import Any

import json_repair

_TAGS = "think|thinking|reasoning|reflection"
_CLOSED_BLOCK = re.compile(rf"<({_TAGS})\b[^>]*>.*?</\1\s*>", re.I | re.S)
_CLOSING_TAG = re.compile(rf"</(?:{_TAGS})\s*>", re.I)
_UNCLOSED_LEAD = re.compile(
    rf"\A\s*<(?:{_TAGS})\b[^>]*>.*?(?=^[ \t]*(?:[{{\[]|```|<tool_call>)|\Z)", re.I | re.S | re.M
)
_TOOL_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.I | re.S)
_FENCE = re.compile(r"^[ \t]*```[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:^[ \t]*```|\Z)", re.M | re.S)
_JSON_LANGS = {"", "json", "json5", "jsonc"}
# A `[` opens JSON only before `{`, `[`, a quote or `]`: "[1]" and "[the docs]" in prose do not.
_OPENING = re.compile(r"\{|\[(?=\s*[\[{\"'\]])")
_ENVELOPE_KEYS = ("arguments", "args", "parameters")
_PREVIEW_CHARS = 100


class ReplyNotJSON(ValueError):
    """No JSON object or array could be recovered from a model's reply."""


def _not_json(cause: str, reply: str) -> ReplyNotJSON:
    """The error for `reply`, naming the cause and quoting at most the reply's first 100 chars."""
    preview = " ".join(reply.split())[:_PREVIEW_CHARS]
    return ReplyNotJSON(f"{cause}; the reply begins {preview!r}" if preview else f"{cause}.")


def strip_reasoning(text: str) -> str:
    """Drop reasoning blocks, so that neither the JSON parser nor a report sees the model think.

    Closed `<think>`/`<thinking>`/`<reasoning>`/`<reflection>` blocks go; a closing tag left
    without its opening one (DeepSeek-R1 on vLLM) takes everything before it along; an unclosed
    block at the start is dropped up to the first line starting with `{`, `[`, a code fence or
    `<tool_call>`, or to the end if there is no such line.
    """
    text = _CLOSED_BLOCK.sub("", text)
    closings = list(_CLOSING_TAG.finditer(text))
    if closings:
        text = text[closings[-1].end() :]
    return _UNCLOSED_LEAD.sub("", text, count=1).strip()


def _balanced(text: str, start: int) -> str:
    """`text` from the bracket at `start` to the one that closes it, or to the end if none does."""
    depth, in_string, escaped = 0, False, False
    for i in range(start, len(text)):
        char = text[i]
        if escaped:
            escaped = False
        elif in_string:
            escaped, in_string = char == "\\", char != '"'
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
    return text[start:]


def _parse(span: str) -> dict | list | None:
    """`span` as JSON, repaired if need be; None if repair yields nothing or the wrong shape."""
    try:
        return json.loads(span)
    except (json.JSONDecodeError, RecursionError):
        pass  # invalid as it stands, or too deep for json.loads: json_repair has a go
    try:
        value = json_repair.loads(span, skip_json_loads=True)
    except ValueError as error:  # json_repair gives up on nesting deeper than it can recurse
        raise _not_json("the JSON in the reply is nested too deeply", span) from error
    wanted = dict if span.startswith("{") else list
    if wanted is dict and isinstance(value, list) and value and isinstance(value[0], dict):
        value = value[0]  # trailing text after a cut-off object came back as more list items
    return value if isinstance(value, wanted) and value else None


def _first_json(text: str) -> dict | list | None:
    """The first object or array in `text` that parses or can be repaired."""
    for match in _OPENING.finditer(text):
        value = _parse(_balanced(text, match.start()))
        if value is not None:
            return value
    return None


def _candidates(body: str) -> list[str]:
    """Where to look, best first: tool calls, JSON code fences, other fences, the whole text."""
    fences = sorted(_FENCE.findall(body), key=lambda fence: fence[0].lower() not in _JSON_LANGS)
    return [*_TOOL_CALL.findall(body), *(content for _, content in fences), body]


def _unwrap_tool_call(value: Any) -> Any:
    """A tool-call envelope `{"name": ..., "arguments": {...}}` gives way to its arguments."""
    if not isinstance(value, dict) or "name" not in value:
        return value
    for key in _ENVELOPE_KEYS:
        inner = value.get(key)
        if isinstance(inner, str):
            inner = _first_json(inner)
            if not isinstance(inner, dict):
                raise _not_json("the tool call's arguments are not a JSON object", value[key])
        if isinstance(inner, dict):
            return inner
    return value


def extract_json(text: str) -> Any:
    """The JSON object or array in a model's reply; raises `ReplyNotJSON` if there is none."""
    body = strip_reasoning(text)
    if not body:
        cause = "the reply holds only reasoning" if text.strip() else "the reply is empty"
        raise _not_json(cause, text)
    for candidate in _candidates(body):
        value = _first_json(candidate)
        if value is not None:
            return _unwrap_tool_call(value)
    if _OPENING.search(body):
        raise _not_json("the JSON in the reply is malformed or cut off beyond repair", body)
    raise _not_json("the reply holds no JSON object", body)


def unwrap_single_key(value: Any, expected_keys: set[str]) -> Any:
    """`{"TaskPlan": {...}}` or `{"properties": {...}}` gives way to the dict the schema wants."""
    if isinstance(value, dict) and len(value) == 1:
        ((key, inner),) = value.items()
        if key not in expected_keys and isinstance(inner, dict) and expected_keys & inner.keys():
            return inner
    return value
