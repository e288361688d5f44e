"""Outside text (titles, snippets, quotes, error messages) written into Markdown as inert text.

A search result's title is data: in the report it must stay one line of text, however it was
written. It loses its line breaks, every address in it (an address no search returned has no
place in the report), and its length beyond a cap; what Markdown or HTML would read as markup is
escaped, so that it shows as the characters it is.
"""

from __future__ import annotations

import re
from urllib.parse import quote, urlsplit

from deep_research.domain.addresses import keep_known_addresses, without_addresses
from deep_research.domain.sources import parses

_MARKUP = re.compile(r"([\\`*_\[\]<>&|~])")
"""Characters Markdown or HTML may read as syntax inside a line (CommonMark escapes them all)."""
_LINK_SCHEMES = {"http", "https", "file"}
_BREAKS_URL = re.compile(r"[\s<>\"`\\|\[\]()]")
"""Characters that would end an address, or start markup, where the report writes it bare."""


def one_line(text: str, limit: int) -> str:
    """`text` as one line of inert Markdown: no addresses, at most `limit` characters, escaped.

    A link becomes its words (markdown-it finds it); what is left of HTML is escaped to show.
    """
    text = " ".join((text or "").split())  # one line first: a title holds no blocks
    text = keep_known_addresses(text, [], html=without_addresses)  # links become their words
    text = " ".join(without_addresses(text).split())
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return _MARKUP.sub(r"\\\1", text)


def link_address(url: str) -> str:
    """A retrieved source's address as written in the report: live only for web and file links
    (one that does not parse is shown as code, never as a link)."""
    if not parses(url) or urlsplit(url.strip()).scheme.lower() not in _LINK_SCHEMES:
        return "`" + url.replace("`", "'")[:200] + "`" if url else ""
    return _BREAKS_URL.sub(lambda m: quote(m.group(0)), url.strip())
