"""A source's date: when it says it was published or last updated, as an ISO 8601 date.

Read only from forms that cannot be misread: ISO 8601 (what metadata, JSON-LD and `<time
datetime>` carry, and most providers send), RFC 2822 (HTTP headers, RSS), PDF dates
(`D:20240312...`), and in a heading a full date written with the month's name or in ISO order
("2.4.0 — 2024-03-12", "March 12, 2024", "12 March 2024", "2024年3月12日"). "03/04/2024" is
April or March depending on the writer: no date is guessed from it. Pure Python, no I/O.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from email.utils import parsedate_to_datetime

MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
_ISO_DAY = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")
_ISO_PARTIAL = re.compile(r"^(\d{4})(?:-(\d{2}))?$")
_PDF = re.compile(r"^D:(\d{4})(\d{2})?(\d{2})?")
_NAMED = (
    re.compile(rf"\b({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I),  # M D Y
    re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH})\.?,?\s+(\d{{4}})\b", re.I),  # D M Y
)
_CJK = re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*日")
EARLIEST = 1990  # no web page or PDF says it was written before this; such a year is no date


def _latest_possible() -> date:
    """The latest day a source can be dated today: tomorrow in UTC (a time zone ahead)."""
    return (datetime.now(UTC) + timedelta(days=1)).date()


def _day(year: int, month: int, day: int, today: date | None = None) -> str:
    """The date in ISO form; '' when it does not exist, is implausibly old, or is after
    `today` (default: tomorrow in UTC; a date to come is an event's, not the source's)."""
    try:
        moment = date(year, month, day)
    except ValueError:
        return ""
    if year < EARLIEST or moment > (today or _latest_possible()):
        return ""
    return moment.isoformat()


def iso_date(text: str, today: date | None = None) -> str:
    """A machine-written date (ISO 8601, with or without time and zone; RFC 2822; a PDF date)
    as YYYY-MM-DD, or YYYY-MM / YYYY when that is all it says; '' when it is none of those.
    The day is the one the source wrote, whatever its time zone."""
    text = (text or "").strip()
    if not text:
        return ""
    if partial := _ISO_PARTIAL.match(text):
        year, month = int(partial.group(1)), partial.group(2)
        whole = _day(year, int(month or 1), 1, today)
        return whole[: 7 if month else 4] if whole else ""
    if pdf := _PDF.match(text):
        year, month, day = pdf.group(1), pdf.group(2), pdf.group(3)
        whole = _day(int(year), int(month or 1), int(day or 1), today)
        return whole[: 10 if day else 7 if month else 4] if whole else ""
    if (iso := _ISO_DAY.match(text)) and (len(text) == 10 or text[10] in "T "):
        return _day(int(iso.group(1)), int(iso.group(2)), int(iso.group(3)), today)
    try:
        moment = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return ""
    return _day(moment.year, moment.month, moment.day, today)


def heading_date(heading: str, today: date | None = None) -> str:
    """The full date a heading states unambiguously (ISO order, a month's name, or 年月日),
    as YYYY-MM-DD; '' when it states none or only an ambiguous one."""
    if found := _ISO_DAY.search(heading):
        return _day(int(found.group(1)), int(found.group(2)), int(found.group(3)), today)
    if found := _CJK.search(heading):
        return _day(int(found.group(1)), int(found.group(2)), int(found.group(3)), today)
    month_first, day_first = _NAMED
    if found := month_first.search(heading):
        month = MONTHS[found.group(1).lower()]
        return _day(int(found.group(3)), month, int(found.group(2)), today)
    if found := day_first.search(heading):
        month = MONTHS[found.group(2).lower()]
        return _day(int(found.group(3)), month, int(found.group(1)), today)
    return ""


def _latest(dates: list[str]) -> str:
    """The latest of ISO dates (a fuller one wins a tie: 2024-03-12 over 2024-03)."""
    return max(dates, key=lambda d: (d[:4], d[5:7] or "00", d[8:10] or "00"), default="")


def page_date(
    metadata: list[str],
    times: list[str],
    headings: list[str],
    last_modified: str = "",
    today: date | None = None,
) -> str:
    """A page's date, from the surest sign it gives: its metadata (published and modified
    dates, JSON-LD's among them: the latest, since a modification dates what the page says
    now), else its first `<time datetime>`, else the latest date its headings state (a
    release note's entries), else the server's `Last-Modified` header (a dynamic page sends
    the moment it was served, so it comes last); '' when none gives one."""
    if found := [d for d in (iso_date(m, today) for m in metadata) if d]:
        return _latest(found)
    if found := [d for d in (iso_date(t, today) for t in times) if d]:
        return found[0]
    if found := [d for d in (heading_date(h, today) for h in headings) if d]:
        return _latest(found)
    return iso_date(last_modified, today)


def newer(first: str, second: str) -> str:
    """Of two ISO dates (either may be ''), the later one."""
    return _latest([d for d in (first, second) if d])
