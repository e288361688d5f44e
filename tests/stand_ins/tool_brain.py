"""The chat stand-in's worker that follows the tools it is offered (both protocols).

Given a worker's decide request (the toolbox natively as `tools` with `tool_choice` auto, or
written into the prompt), it reads the evidence listed in the prompt and calls tools the way a
diligent researcher would: run the suggested first searches (nothing is searched for it before
it acts), follow the links found in the pages already read (each page's first, the page read
last first: a trail deeper), read the hits not yet read, and finish when nothing is left.
Given a page to quote (`PageQuotes`), it copies the sentences that carry a number, word for
word.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from itertools import zip_longest

_HIT = re.compile(r"^Hit: .*? — (\S+)$", re.M)
_READ = re.compile(r"^Read: .*? — (\S+)$", re.M)
_LINKS = re.compile(r"^Links on this page[^\n]*:\n((?:  \S+[^\n]*\n?)+)", re.M)
_SUGGESTED = re.compile(r"^Suggested first searches \(.*?\): (\[.*\])$", re.M)
_PROMPT_TOOL = re.compile(r"^- (\w+): ", re.M)
_PAGE = re.compile(r"Page text:\n<data>\n(.*?)\n</data>", re.S)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _links_in_turn(user: str) -> list[str]:
    """The links listed under the pages read, in the order a reader takes them: each page's
    first (the best-placed) before any page's second, the page read last first."""
    pages = [[line.split()[0] for line in block.splitlines()] for block in _LINKS.findall(user)]
    turns = zip_longest(*reversed(pages))
    return [url for turn in turns for url in turn if url is not None]


def offered_tools(body: dict, system: str) -> list[str]:
    """The tool names a worker request offers: native `tools`, or the list in the prompt."""
    if body.get("tools"):
        return [tool["function"]["name"] for tool in body["tools"]]
    if "You can call these tools." in system:
        return _PROMPT_TOOL.findall(system.split("You can call these tools.", 1)[1])
    return []


def is_worker_request(body: dict, system: str) -> bool:
    """True for a worker's decide request (tool choice left to the model), either protocol."""
    native = bool(body.get("tools")) and body.get("tool_choice") == "auto"
    return native or "You can call these tools." in system


@dataclass
class ToolBrain:
    """Knobs: mode (follow | finish | garbage | search), pages_per_round. Every mode but
    garbage runs the suggested first searches; finish then finishes, reading nothing."""

    mode: str = "follow"
    pages_per_round: int = 3
    mcp_calls: int = 1  # calls of each offered MCP tool in the first round that offers it
    decisions: list[list[tuple[str, dict]]] = field(default_factory=list)

    def decide(self, user: str, tools: list[str]) -> list[tuple[str, dict]] | str:
        """The calls to make (name, arguments), or prose when the mode says so."""
        if self.mode == "garbage":
            return "I think the answer is probably somewhere on the internet. <tool_call>{oops"
        calls: list[tuple[str, dict]] = []
        called = {name for made in self.decisions for name, _ in made}
        for tool in tools:
            if tool.startswith("mcp_") and tool not in called and self.mode != "finish":
                calls += [
                    (tool, {"query": f"archive compression {n}"}) for n in range(self.mcp_calls)
                ]
        if "search_documents" in tools and "search_documents" not in called:
            calls.append(("search_documents", {"query": "xz LZMA2 decompression speed"}))
        suggested = _SUGGESTED.search(user)
        if suggested and "web_search" in tools:
            calls.append(("web_search", {"queries": json.loads(suggested.group(1))}))
        elif self.mode == "search" and "web_search" in tools:
            calls.append(("web_search", {"queries": ["more numbers", "more data"]}))
        if self.mode in ("follow", "search") and "read_page" in tools:
            read = set(_READ.findall(user))
            unread = [u for u in _links_in_turn(user) + _HIT.findall(user) if u not in read]
            for url in list(dict.fromkeys(unread))[: self.pages_per_round]:
                calls.append(("read_page", {"url": url}))
        if not calls:
            calls.append(("finish", {"reason": "the evidence answers the subtask"}))
        self.decisions.append(calls)
        return calls

    def quotes(self, user: str) -> dict:
        """A PageQuotes answer: the page's sentences that carry a number, copied exactly."""
        match = _PAGE.search(user)
        text = match.group(1) if match else ""
        sentences = [" ".join(s.split()) for s in _SENTENCE_END.split(text)]
        found = [s for s in sentences if any(c.isdigit() for c in s)]
        return {"quotes": [{"text": s, "claim": f"The page states: {s}"} for s in found[:5]]}
