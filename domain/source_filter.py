"""The sources a user allows: include and exclude domains and a time range, on every hit and page.

Providers that can filter are asked to (`tools.search`), and this filter is applied to what
comes back all the same: a provider may ignore a parameter, a page may redirect elsewhere, a
link may lead off the allowed domains. A domain covers its subdomains. A hit is outside the time
range only when its date is known; addresses that are not web pages (local documents) are never
filtered by domain. Pure Python, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit

from deep_research.settings import Settings
from deep_research.state import SearchHit

SPANS = {"day": 1, "week": 7, "month": 31, "year": 366}
"""Days each time range reaches back."""


def _within(host: str, domain: str) -> bool:
    """True when `host` is `domain` or one of its subdomains."""
    return host == domain or host.endswith("." + domain)


def published_at(text: str) -> datetime | None:
    """A provider's date (ISO 8601, with or without a zone, or an RFC 2822 date), as UTC;
    None when there is none or it cannot be read."""
    text = (text or "").strip()
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        try:
            moment = parsedate_to_datetime(text)
        except (TypeError, ValueError):
            return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


@dataclass(frozen=True)
class SourceFilter:
    """Which web sources a run may use."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    time_range: str | None = None

    @classmethod
    def of(cls, settings: Settings) -> SourceFilter:
        """The filter a run's settings name."""
        return cls(
            tuple(settings.include_domains), tuple(settings.exclude_domains), settings.time_range
        )

    @property
    def active(self) -> bool:
        """True when the settings restrict anything."""
        return bool(self.include or self.exclude or self.time_range)

    def refusal(self, url: str) -> str | None:
        """Why a web address is not allowed ("not on ...", "on ..."), or None when it is."""
        if not (self.include or self.exclude):  # every link of every page read asks
            return None
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            return None
        # a trailing dot (`blogs.example.com.`) names the same host, fully qualified
        host = (parts.hostname or "").lower().rstrip(".").removeprefix("www.")
        if self.include and not any(_within(host, d) for d in self.include):
            return f"{host} is not on the included domains ({', '.join(self.include)})"
        if any(_within(host, d) for d in self.exclude):
            return f"{host} is on an excluded domain"
        return None

    def recent(self, published: str, now: datetime) -> bool:
        """True unless the date is known and older than the time range."""
        moment = published_at(published)
        if self.time_range is None or moment is None:
            return True
        return moment >= now - timedelta(days=SPANS[self.time_range])

    def kept(self, hits: list[SearchHit], now: datetime) -> list[SearchHit]:
        """The hits this filter allows, in their order."""
        return [h for h in hits if self.refusal(h.url) is None and self.recent(h.published, now)]

    def describe(self) -> str:
        """The filter in a few words for a report's header; "" when nothing is filtered."""
        parts = []
        if self.include:
            parts.append("only " + ", ".join(self.include))
        if self.exclude:
            parts.append("not " + ", ".join(self.exclude))
        if self.time_range:
            parts.append(f"from the last {self.time_range}")
        return "; ".join(parts)
