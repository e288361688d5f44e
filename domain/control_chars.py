"""Control characters out of outside text: what a page, a title or a tool may send, and no
reader, XML file or terminal should get (NUL, BEL, escape sequences, lone surrogates).

Word's XML refuses them outright (`All strings must be XML compatible`), a terminal acts on an
escape sequence, and a Markdown file keeps them as raw bytes. Line breaks and tabs stay in running
text; an address or a title loses every control character, as a browser drops them from a URL.
"""

from __future__ import annotations

import re

_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
"""C0 and C1 controls but tab, line feed and carriage return; DEL; lone surrogates; U+FFFE/F."""
_ALL_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def without_controls(text: str) -> str:
    """Running text without control characters (tabs and line breaks kept)."""
    return _CONTROLS.sub("", text) if text else text


def without_any_controls(text: str) -> str:
    """An address or a title without any control character, line breaks and tabs included."""
    return _ALL_CONTROLS.sub("", text) if text else text
