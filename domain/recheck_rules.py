"""How a cited source stands when read again, and what that means for each claim resting on it.

A source read again is `unchanged` (a 304, or the same text), `changed`, `moved` (a redirect to
another address), `gone` (404 or 410) or `unreachable` (no answer, a refusal, any other error:
it may be back tomorrow, so it is never called gone). A claim on it is then `unchanged`,
`quote_kept` (the page changed, the quote is still in it), `quote_gone` (the model checks the
claim again against the new text), `page_gone` or `unreachable`; a tool answer, which has no
address to read again, is `not_rechecked`.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from deep_research.domain.verbatim import locate
from deep_research.state import ClaimState, SourceState

GONE = frozenset({404, 410})
NOT_MODIFIED = 304


def same_place(old: str, new: str) -> bool:
    """True when two addresses name the same page: scheme, a leading `www.`, the host's case,
    a default port and a trailing slash aside."""

    def place(url: str) -> tuple[str, str, str]:
        parts = urlsplit(url.strip())
        host = (parts.hostname or "").lower().removeprefix("www.")
        port = "" if parts.port in (None, 80, 443) else str(parts.port)
        return f"{host}:{port}", parts.path.rstrip("/"), parts.query

    return place(old) == place(new)


def source_state(
    status: int | None, old_url: str, new_url: str, old_hash: str, new_hash: str
) -> SourceState:
    """Where a source read again stands: `status` None means no answer came."""
    if status is None:
        return "unreachable"
    if status == NOT_MODIFIED:
        return "unchanged"
    if status in GONE:
        return "gone"
    if status != 200:  # 401, 403, 429, 5xx: blocked or down now, not gone
        return "unreachable"
    if not same_place(old_url, new_url):
        return "moved"
    return "unchanged" if new_hash == old_hash else "changed"


def holds(text: str, quote: str) -> bool:
    """True when the text holds the quote (whitespace, case and quotation marks aside)."""
    return bool(quote.strip()) and locate(quote, text) is not None


def claim_state(source: SourceState, quote: str, new_text: str) -> ClaimState:
    """What a source's state means for one claim that rests on it, by its quote."""
    if source in ("unchanged", "unreachable", "not_rechecked"):
        return source
    if source == "gone":
        return "page_gone"
    if holds(new_text, quote):
        return "quote_kept"
    return "page_gone" if source == "moved" else "quote_gone"


_SPAN = re.compile(r"(\d+)\s*([smhdw])", re.IGNORECASE)
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_every(text: str) -> int:
    """Seconds in a period written `7d`, `12h`, `1d12h`, `2w`, `30m` or `45s`; ValueError
    naming the accepted forms otherwise."""
    compact = "".join(text.split())
    parts = _SPAN.findall(compact)
    if not parts or "".join(n + u for n, u in parts).lower() != compact.lower():
        raise ValueError(f"{text!r} is not a period: write it like 7d, 12h, 1d12h, 2w or 30m")
    seconds = sum(int(n) * _UNIT[u.lower()] for n, u in parts)
    if seconds <= 0:
        raise ValueError(f"{text!r} is no time at all: a period must be above zero")
    return seconds
