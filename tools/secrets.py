"""Keep secrets out of everything a run writes: errors quoted into state, logs and reports, and
every outside text where it enters (a model's reply, a search hit, a page, a tool's answer: a
server that echoes the caller's key in a successful answer would otherwise spread it).

Two kinds: the values of the key variables, and the password of any URL
(`postgresql://user:secret@host/db` is shown as `postgresql://user:***@host/db`).
"""

from __future__ import annotations

import os
import re
from typing import Any, Protocol, TypeVar

SECRET_VARIABLES = (
    "OPENAI_API_KEY",
    "TAVILY_API_KEY",
    "BOCHA_API_KEY",
    "DEEP_RESEARCH_JUDGE_API_KEY",
)


class _Copyable(Protocol):
    def model_copy(self, *, update: dict) -> Any: ...


SearchHitLike = TypeVar("SearchHitLike", bound=_Copyable)
MIN_SECRET_LENGTH = 8  # shorter values are placeholders, and masking them would garble text
URL_PASSWORD = re.compile(r"(?P<head>\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@]*):\S*@")
"""`user:password@`: the password runs to the last `@` of the address (it may hold `/` or `@`)."""
QUERY_PASSWORD = re.compile(
    r"(?P<head>password\s*=\s*)(?:'(?:[^'\\]|\\.)*'|\"[^\"]*\"|[^\s&'\"]+)", re.IGNORECASE
)
"""`?password=x`, a keyword DSN's `password=x` or `password='x y'`, `PGPASSWORD=x`."""


def mask_url_passwords(text: str) -> str:
    """The text with every password (`user:password@`, `password=`) replaced by `***`."""
    if "@" in text:  # what `URL_PASSWORD` ends with; its scan costs 15 µs a kB of page text
        text = URL_PASSWORD.sub(lambda match: f"{match['head']}:***@", text)
    return QUERY_PASSWORD.sub(lambda match: f"{match['head']}***", text)


def redact(text: str) -> str:
    """The text with every key variable's value and every URL password replaced by `***`."""
    for name in SECRET_VARIABLES:
        value = os.environ.get(name, "").strip()
        if len(value) >= MIN_SECRET_LENGTH:
            text = text.replace(value, "***")
    return mask_url_passwords(text)


def redacted(value: Any) -> Any:
    """`value` with `redact` applied to its text, inside plain dicts, lists and tuples too."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {key: redacted(item) for key, item in value.items()}
    if type(value) in (list, tuple):
        return type(value)(redacted(item) for item in value)
    return value


def _texts(value: Any) -> list[str]:
    """Every string inside plain lists and tuples."""
    if isinstance(value, str):
        return [value]
    if type(value) in (list, tuple):
        return [text for item in value for text in _texts(item)]
    return []


def redacted_at_once(value: Any) -> Any:
    """`redacted(value)`, found needed or not by one pass over all its text (none of our
    patterns spans a line break): a page's 500 links are 1,500 strings, and few hold a secret."""
    joined = "\n".join(_texts(value))
    return value if redact(joined) == joined else redacted(value)


def redact_hit(hit: SearchHitLike) -> SearchHitLike:
    """A search hit (or any model with text fields) with every secret value removed from its
    text: where a search's answer, a page or a tool's answer enters."""
    update = {name: redact(value) for name, value in vars(hit).items() if isinstance(value, str)}
    return hit.model_copy(update=update)


def redact_error(error: BaseException) -> BaseException:
    """`error` with every secret in its message and text attributes replaced by `***`.

    In place, so that its type stays (callers classify errors by type and status) and every
    holder of it sees the change: what LangGraph saves of a failed task (its repr, in the
    checkpoint's `__error__` write) and what reaches logs hold no key a server echoed.
    """
    error.args = tuple(redacted(arg) for arg in error.args)
    for name, value in list(vars(error).items()):
        cleaned = redacted(value)
        if cleaned is not value:
            setattr(error, name, cleaned)
    return error
