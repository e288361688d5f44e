"""Addresses in a report, found by markdown-it's tokens: every one no search returned is removed.

The rule "the report carries no address that no search returned" must hold for every way Markdown
and HTML carry one: inline and reference links of any scheme and case (`javascript:`, `data:`,
`mailto:`, `//host`), autolinks, images, raw HTML, and text that a renderer would linkify
(`HTTP://HOST/x`, `www.host`, `someone@host`), also inside code spans and blocks (a `curl URL | sh`
is an address too). markdown-it-py parses (links accepted whatever their scheme, so that none
hides from us); the inline rules are wrapped to record where each construct starts and ends, so
a foreign link becomes its own text in place, an image or a reference definition goes, raw HTML
is shown as text. linkify-it finds the addresses in text and code. A last pass checks the result
with the same parser and removes any address still left verbatim, so the rule holds even where
an edit could not be placed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache

from linkify_it import LinkifyIt
from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token

from deep_research.domain.sources import normalize_url

_LINKIFY = LinkifyIt(options={"fuzzy_link": False, "fuzzy_email": True, "fuzzy_ip": False})
"""Schemed links and e-mail addresses, what GitHub links in text; not a bare `name.tld`, which
would take `setup.py` and `README.md` for addresses (`.py` and `.md` are country domains)."""
_SCHEMED = re.compile(
    r"(?<![\w.+-])(?:javascript|vbscript|data|file|mailto|blob|tel|sms|ftp|ws|wss|https?):"
    r"[^\s<>\"'`)\]]+|(?<![\w:/])//[\w-]+(?:\.[\w-]+)+[^\s<>\"'`)\]]*"
    r"|(?<![\w.])www\.[\w-]+(?:\.[\w-]+)+[^\s<>\"'`)\]]*|[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}\b",
    re.IGNORECASE,
)
"""Addresses linkify-it leaves alone (it knows only common top-level domains) but a renderer or a
reader may follow: scripts, data, mail, protocol-relative `//host/...`, `www.` and e-mail
addresses under any top-level domain (GitHub links those)."""
Label = Callable[[str], str]
"""What a foreign link's text becomes (the text itself, or nothing when it only said "link")."""
HtmlShown = Callable[[str, Callable[[str], bool]], str]
"""What raw HTML becomes, given the test of allowed addresses."""
_TRACKED = {"link_open", "image", "html_inline", "code_inline"}


def _parser() -> MarkdownIt:
    """markdown-it that accepts every link destination as written, tracking where each one is."""
    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    md.validateLink = lambda url: True  # a javascript: link must be seen, not passed over as text
    md.normalizeLink = lambda url: url
    for name in ("link", "image", "autolink", "html_inline", "backticks"):
        md.inline.ruler.at(name, _tracked(md.inline.ruler.__rules__[_index(md, name)].fn))
    return md


def _index(md: MarkdownIt, name: str) -> int:
    """The position of the inline rule `name`."""
    return [rule.name for rule in md.inline.ruler.__rules__].index(name)


def _tracked(rule: Callable[[StateInline, bool], bool]) -> Callable[[StateInline, bool], bool]:
    """`rule`, noting on its token the span of source it consumed (and a link's label)."""

    def run(state: StateInline, silent: bool) -> bool:
        start, count = state.pos, len(state.tokens)
        if not rule(state, silent):
            return False
        if not silent:
            token = next((t for t in state.tokens[count:] if t.type in _TRACKED), None)
            if token is not None:
                token.meta = {**token.meta, "span": (start, state.pos), "src": state.src}
                if token.type == "link_open" and state.src[start] == "[":
                    end, state.pos = state.pos, start
                    label_end = state.md.helpers.parseLinkLabel(state, start, False)
                    state.pos = end
                    token.meta["label"] = state.src[start + 1 : label_end]
        return True

    return run


_MD = _parser()


@dataclass(frozen=True)
class Edit:
    """Replace `text[start:end]` with `new`."""

    start: int
    end: int
    new: str


def addresses_in(text: str) -> list[tuple[int, int, str]]:
    """Every address linkify-it or the scheme pattern finds in plain `text`: (start, end, raw)."""
    found = [(m.index, m.last_index, m.raw) for m in _LINKIFY.match(text) or []]
    for m in _SCHEMED.finditer(text):
        raw = m.group(0).rstrip(".,;:!?")  # the sentence's own punctuation
        found.append((m.start(), m.start() + len(raw), raw))
    kept: list[tuple[int, int, str]] = []
    for start, end, raw in sorted(found, key=lambda f: (f[0], -f[1])):
        if not kept or start >= kept[-1][1]:
            kept.append((start, end, raw))
    return kept


def without_addresses(text: str, allowed: Callable[[str], bool] = lambda _: False) -> str:
    """`text` with every address that `allowed` refuses removed."""
    for start, end, raw in reversed(addresses_in(text)):
        if not allowed(raw):
            text = text[:start] + text[end:]
    return text


def as_text(html: str, allowed: Callable[[str], bool]) -> str:
    """Raw HTML shown as text: its foreign addresses gone, its tags no longer tags."""
    return without_addresses(html, allowed).replace("&", "&amp;").replace("<", "&lt;")


class Known:
    """The addresses searches returned, compared as `normalize_url` sees them."""

    def __init__(self, urls: list[str]) -> None:
        self.urls = {normalize_url(u) for u in urls}

    def __call__(self, address: str) -> bool:
        address = address.strip().strip("<>")
        return bool(address) and normalize_url(address) in self.urls


def _line_starts(text: str) -> list[int]:
    """Where each line of `text` starts, and its end."""
    return [0, *(m.end() for m in re.finditer("\n", text)), len(text)]


def _locator(text: str, lines: list[int], inline: Token) -> Callable[[int], int | None]:
    """A map from an offset in an inline token's content to the offset in the document."""
    first = inline.map[0] if inline.map else 0
    content_lines = inline.content.split("\n")
    anchors: list[int | None] = []
    for number, piece in enumerate(content_lines):
        line_no = first + number
        if line_no + 1 >= len(lines):
            anchors.append(None)
            continue
        line = text[lines[line_no] : lines[line_no + 1]]
        where = line.rfind(piece) if piece else -1
        anchors.append(lines[line_no] + where if where >= 0 else None)
    starts = _line_starts(inline.content)

    def locate(offset: int) -> int | None:
        number = max(i for i, s in enumerate(starts[:-1]) if s <= offset) if offset else 0
        anchor = anchors[number] if number < len(anchors) else None
        return None if anchor is None else anchor + offset - starts[number]

    return locate


def _inline_edits(
    text: str,
    lines: list[int],
    inline: Token,
    allowed: Callable[[str], bool],
    label: Label,
    html: HtmlShown,
) -> Iterator[Edit]:
    """Edits for one paragraph, heading or cell: foreign links, images, HTML and addresses."""
    locate = _locator(text, lines, inline)
    src, covered = inline.content, []

    def placed(start: int, end: int, new: str) -> Edit | None:
        while not new and start > 0 and src[start - 1] in " \t":
            start -= 1  # a removed word takes the space before it
        begin, finish = locate(start), locate(end)
        if begin is None or finish is None or text[begin:finish] != src[start:end]:
            return None  # could not be placed: the final check removes what is left
        return Edit(begin, finish, new)

    for token in inline.children or []:
        span = token.meta.get("span")
        if not span or token.meta.get("src") is not src:
            continue
        covered.append(span)
        raw = src[span[0] : span[1]]
        new: str | None = None
        if token.type == "link_open" and not allowed(token.attrs.get("href", "") or ""):
            text_of = token.meta.get("label")
            new = "" if text_of is None else label(without_addresses(text_of, allowed))
        elif token.type == "image" and not allowed(str(token.attrs.get("src", ""))):
            new = ""
        elif token.type == "html_inline":
            new = html(raw, allowed)
        elif token.type == "code_inline":  # the code between the backticks, as written
            new = raw.replace(token.content, without_addresses(token.content, allowed), 1)
        if new is not None and new != raw and (edit := placed(*span, new)):
            yield edit
    for start, end, raw in addresses_in(src):
        inside = any(s <= start < e for s, e in covered)
        if not inside and not allowed(raw) and (edit := placed(start, end, "")):
            yield edit


@lru_cache(maxsize=16)
def _parsed(text: str) -> tuple[list[Token], dict]:
    """The document's tokens and markdown-it's environment (its reference definitions), parsed
    once per text: a text with nothing to remove is read three times (edits, references, the
    final check). Callers only read them."""
    env: dict = {}
    return _MD.parse(text, env), env


def _edits(text: str, allowed: Callable[[str], bool], label: Label, html: HtmlShown) -> list[Edit]:
    """Every edit the document's tokens call for, in order, none overlapping."""
    lines, found = _line_starts(text), []
    for token in _parsed(text)[0]:
        if token.type == "inline":
            found += _inline_edits(text, lines, token, allowed, label, html)
        elif token.type in ("fence", "code_block", "html_block") and token.map:
            start, end = lines[token.map[0]], lines[min(token.map[1], len(lines) - 1)]
            block = text[start:end]
            change = html if token.type == "html_block" else without_addresses
            if (new := change(block, allowed)) != block:
                found.append(Edit(start, end, new))
    edits: list[Edit] = []
    for edit in sorted(found, key=lambda e: (e.start, -e.end)):
        if not edits or edit.start >= edits[-1].end:
            edits.append(edit)
    return edits


def _references(text: str, allowed: Callable[[str], bool]) -> str:
    """`text` without the lines of reference definitions (`[1]: url`) to foreign addresses."""
    env = _parsed(text)[1]
    foreign = [r["href"] for r in env.get("references", {}).values() if not allowed(r["href"])]
    for href in foreign:
        definition = re.compile(
            rf"^[ \t>]*\[[^\]\n]+\]:[ \t]*<?{re.escape(href)}>?.*(?:\n|$)", re.MULTILINE
        )
        text = definition.sub("", text)
    return text


def foreign_addresses(text: str, allowed: Callable[[str], bool]) -> list[str]:
    """The addresses a renderer of `text` would reach that `allowed` refuses (the final check)."""
    tokens, env = _parsed(text)
    found: list[str] = []
    for token in tokens:
        parts = [token, *(token.children or [])]
        for part in parts:
            if part.type == "link_open":
                found.append(str(part.attrs.get("href", "")))
            elif part.type == "image":
                found.append(str(part.attrs.get("src", "")))
            if part.type in ("text", "code_inline", "fence", "code_block", "html_inline"):
                found += [raw for _, _, raw in addresses_in(part.content)]
            if part.type == "html_block":
                found += [raw for _, _, raw in addresses_in(part.content)]
    found += [r["href"] for r in env.get("references", {}).values()]
    return [a for a in dict.fromkeys(found) if not allowed(a)]


def keep_known_addresses(
    text: str, urls: list[str], label: Label = lambda text: text, html: HtmlShown | None = None
) -> str:
    """`text` carrying no address but `urls`: foreign links become `label(text)`, the rest goes.

    Raw HTML becomes `html(raw, allowed)`: by default text that shows as written (`as_text`).
    """
    html = html or as_text
    allowed = Known(urls)
    for _ in range(3):  # a removal can make a new construct; settle it
        edits = _edits(text, allowed, label, html)
        if not edits:
            break
        for edit in reversed(edits):
            text = text[: edit.start] + edit.new + text[edit.end :]
    text = _references(text, allowed)
    for address in foreign_addresses(text, allowed):  # whatever could not be placed
        text = text.replace(address, "") if address else text
    return text
