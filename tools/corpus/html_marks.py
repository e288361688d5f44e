"""What an HTML page says besides its text: where each link stands, and the dates it states.

A link is kept with its anchor text, the words around it in its block (a paragraph, a list item,
a table cell) and whether it stands in running text: a link whose block says little else (a
list of links, a "related pages" box) or that sits in an aside, header or footer is not in the
text. Dates are the page's metadata (`article:published_time`, `article:modified_time` and
their kin, JSON-LD `datePublished` / `dateModified`) and its `<time datetime>` elements, kept
raw; `domain.dates` reads them. Both are fed by `reading.read_html`'s parser target.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

CONTEXT_CHARS = 100  # words kept on each side of a link, at most
ANCHOR_CHARS = 120  # a link's anchor text, at most
WORDS_AROUND = 4  # words of its block besides its anchor that put a link in running text
SIDE_TAGS = frozenset({"aside", "header", "footer"})
SIDE_ROLES = frozenset({"navigation", "complementary", "contentinfo", "banner", "menu"})
META_DATES = frozenset(
    {
        "article:published_time",
        "article:modified_time",
        "og:updated_time",
        "date",
        "dc.date",
        "dc.date.issued",
        "dcterms.created",
        "dcterms.modified",
        "dcterms.issued",
        "datepublished",
        "datemodified",
        "last-modified",
    }
)
JSON_LD_DATES = ("datePublished", "dateModified")
MAX_JSON_LD_CHARS = 200_000  # JSON-LD read per page, at most
MAX_DATES = 20  # dates kept per page, of each kind


@dataclass(frozen=True)
class Link:
    """A link as the page has it: its target as written, anchor text, the words around it, and
    whether it stands in running text."""

    href: str
    text: str = ""
    context: str = ""
    in_text: bool = False


@dataclass
class _Pending:
    href: str
    side: bool
    start: int  # where its anchor starts in its block's text
    end: int = -1
    parts: list[str] = field(default_factory=list)
    final: Link | None = None


@dataclass
class _Block:
    name: str
    parts: list[str] = field(default_factory=list)
    length: int = 0
    links: list[_Pending] = field(default_factory=list)


def _words(text: str) -> str:
    return " ".join(text.split())


def _clipped(text: str, cut: int) -> str:
    """Words of a context window without the word its edge cut (`cut`: 0 the first, -1 the
    last), when it cut one; whole when the window is shorter than its limit."""
    words = text.split()
    if len(text) >= CONTEXT_CHARS and len(words) > 1 and not text[cut].isspace():
        del words[cut]
    return " ".join(words)


class LinkTracker:
    """Follows the blocks and links of a page as its parser reads them (at most `limit` links)."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._blocks = [_Block("")]  # the page itself is the outermost block
        self._order: list[_Pending] = []
        self._open: _Pending | None = None
        self._opened: list[int] = []  # per open element: 1 a side zone, + 2 a block
        self._side = 0  # side zones open around the current element

    def start(self, name: str, attrib: dict, *, block: bool, visible: bool) -> None:
        """An element opens (every one, `visible` or not): maybe a side zone, a block (only a
        visible one: text deeper than the parser reads holds no link), a link."""
        role = str(attrib.get("role") or "").lower() if attrib else ""  # most have none
        side = name in SIDE_TAGS or role in SIDE_ROLES
        block = block and visible
        self._opened.append(side + 2 * block)  # a small int: nothing allocated per element
        self._side += side
        if block:
            self._blocks.append(_Block(name))
        if name == "a":
            self._end_link()
            href = str(attrib.get("href") or "").strip()
            wanted = href and not href.startswith("#") and len(self._order) < self._limit
            if visible and wanted:
                here = self._blocks[-1]
                self._open = _Pending(href, self._side > 0, here.length)
                here.links.append(self._open)
                self._order.append(self._open)

    def end(self, name: str) -> None:
        """An element closes (every one that opened; the parser's events are balanced, so the
        block an element opened is the innermost one open when it closes)."""
        if name == "a":
            self._end_link()
        if not self._opened:
            return
        opened = self._opened.pop()
        self._side -= opened & 1
        if opened & 2:
            self._end_link()  # an anchor left open inside its block ends with it
            self._settle(self._blocks.pop())

    def text(self, text: str) -> None:
        """Visible text, in the innermost open block (and the open link's anchor)."""
        here = self._blocks[-1]
        here.parts.append(text)
        here.length += len(text)
        if self._open is not None:
            self._open.parts.append(text)

    def links(self) -> tuple[Link, ...]:
        """Every link kept, in page order, its blocks settled."""
        self._end_link()
        while self._blocks:
            self._settle(self._blocks.pop())
        return tuple(p.final for p in self._order if p.final is not None)

    def _end_link(self) -> None:
        if self._open is not None:
            self._open.end = self._blocks[-1].length
            self._open = None

    def _settle(self, block: _Block) -> None:
        """A closed block's links get their anchor text, context and place."""
        text = "".join(block.parts)
        for pending in block.links:
            end = pending.end if pending.end >= 0 else block.length
            anchor = _words("".join(pending.parts))[:ANCHOR_CHARS]
            before = _clipped(text[max(0, pending.start - CONTEXT_CHARS) : pending.start], 0)
            after = _clipped(text[end : end + CONTEXT_CHARS], -1)
            others = len(text.split()) - len(anchor.split())
            pending.final = Link(
                pending.href,
                anchor,
                f"{before} … {after}".strip(" …") if before or after else "",
                in_text=not pending.side and others >= WORDS_AROUND,
            )


class DateMarks:
    """The dates a page's markup states: metadata and JSON-LD (raw), and `<time datetime>`."""

    def __init__(self) -> None:
        self.meta: list[str] = []
        self.times: list[str] = []
        self._json_ld: list[str] | None = None
        self._json_ld_chars = 0

    def start(self, name: str, attrib: dict, *, visible: bool) -> None:
        """An element with attributes opens: a dated meta tag, a `<time>` (`visible`: not in a
        nav or script), an element with a date itemprop, or a JSON-LD script."""
        itemprop = str(attrib.get("itemprop") or "").lower()
        if itemprop in ("datepublished", "datemodified"):
            self._keep(self.meta, attrib.get("datetime") or attrib.get("content"))
        elif name == "meta":
            key = str(attrib.get("property") or attrib.get("name") or "").lower()
            if key in META_DATES:
                self._keep(self.meta, attrib.get("content"))
        elif name == "time" and visible:
            self._keep(self.times, attrib.get("datetime"))
        elif name == "script" and str(attrib.get("type") or "").lower() == "application/ld+json":
            self._json_ld = []

    def text(self, text: str) -> bool:
        """Text inside a JSON-LD script (True: taken, it is no visible text)."""
        if self._json_ld is None:
            return False
        if self._json_ld_chars < MAX_JSON_LD_CHARS:
            self._json_ld.append(text)
            self._json_ld_chars += len(text)
        return True

    def end(self, name: str) -> None:
        """A JSON-LD script closes: its dates are read."""
        if name == "script" and self._json_ld is not None:
            for date in _json_ld_dates("".join(self._json_ld)):
                self._keep(self.meta, date)
            self._json_ld = None

    @staticmethod
    def _keep(kept: list[str], value: object) -> None:
        text = str(value or "").strip()
        if text and len(kept) < MAX_DATES:
            kept.append(text[:64])


def _json_ld_dates(text: str) -> list[str]:
    """Every `datePublished` / `dateModified` in a JSON-LD block (nested, `@graph` too)."""
    try:
        data = json.loads(text)
    except ValueError:
        return []
    found: list[str] = []
    stack = [data]
    while stack and len(found) < MAX_DATES:
        item = stack.pop()
        if isinstance(item, dict):
            found += [str(item[k]) for k in JSON_LD_DATES if isinstance(item.get(k), str)]
            stack += [v for v in item.values() if isinstance(v, dict | list)]
        elif isinstance(item, list):
            stack += [v for v in item if isinstance(v, dict | list)]
    return found
