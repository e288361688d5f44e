"""The history page's search: runs whose question holds every word asked, in one status,
started on or after a day. Read from the page's query string; nothing in it is an error."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

STATUSES = ("queued", "running", "waiting", "done", "stopped", "failed", "unfinished")
MAX_WORDS_CHARS = 200


@dataclass(frozen=True)
class HistoryFilter:
    """What the history is narrowed to; empty fields narrow nothing."""

    words: str = ""
    status: str = ""
    since: str = ""  # an ISO day, YYYY-MM-DD

    @classmethod
    def of(cls, query: Mapping[str, str]) -> HistoryFilter:
        """The filter a query string asks for: an unknown status or a day that is no day is
        left out, not refused."""
        status = query.get("status", "")
        since = query.get("since", "")
        try:
            date.fromisoformat(since)
        except ValueError:
            since = ""
        return cls(
            words=" ".join(query.get("q", "")[:MAX_WORDS_CHARS].split()),
            status=status if status in STATUSES else "",
            since=since,
        )

    @property
    def active(self) -> bool:
        return bool(self.words or self.status or self.since)

    def keeps(self, row: dict[str, Any]) -> bool:
        """Whether a history row (question, status, created_at as ISO time) is shown."""
        question = (row.get("question") or "").casefold()
        if any(word not in question for word in self.words.casefold().split()):
            return False
        if self.status and row.get("status") != self.status:
            return False
        return not self.since or (row.get("created_at") or "")[:10] >= self.since
