"""A world whose pages change between runs (issue 40): re-checks and watched questions.

Each topic has a page stating two figures in sentences of their own (its Zeta index, its melting
point) after an opening that is all its search snippet shows, so a run reads the page whole to
cite them. The pages behave as a static web server does (nginx, Apache: checked against their
documented behaviour): every answer carries an `ETag` (a hash of the body, quoted) and a
`Last-Modified` date, and a request whose `If-None-Match` names the current ETag (or, without
one, whose `If-Modified-Since` is not older than the page) is answered `304 Not Modified` with no
body. A test edits a figure, removes a sentence, deletes a page (404 or 410), moves it (a 301 to
another address) or takes it down (503), and counts what was asked: `requests` has every request
with its headers, `conditional` those that carried a validator.

The brain is faithful: one subtask per topic, every numbered sentence of its evidence a finding,
every section the numbered sentences of its sources, each cited; the citation check's model
calls say `supported` only for a statement its source text holds word for word (quoting the
source's sentence nearest it); the change list's model pairs two claims about the same thing
(the same words once figures are removed) and reports the figures that differ. The search is an
index that has caught up: a page gone for good (404, 410) is no longer found.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from email.utils import formatdate, parsedate_to_datetime

from stand_ins.chat import _PAIR, Brain, ChatCall
from stand_ins.loopback import Reply, StandIn

_ROOTS = ("Quillon", "Veltrane", "Mortisk", "Zerapine", "Ostrel", "Pandrel", "Corvine", "Talmesh")
_KINDS = ("alloy", "polymer", "ceramic", "resin", "glass")
TOPICS = tuple(f"{_ROOTS[n % 8]} {_KINDS[(n + n // 8) % 5]}" for n in range(40))
"""Forty materials, no two alike, no figure in a name: Quillon alloy, Veltrane polymer, ..."""
_SOURCE = re.compile(r"^\[(\d+)\] .*? — (\S+)\n(.*?)(?=\n\n\[\d+\] |\n</data>|\Z)", re.M | re.S)
_FIGURE = re.compile(r"\d[\d,.]*")
_NUMBERED = re.compile(r"[^.!?\n]*\d[^.!?\n]*[.!?]")
_CLAIM = re.compile(r"^([ON])(\d+): (.*)$", re.M)


def zeta(k: int) -> str:
    """The sentence that states topic k's first figure."""
    return f"The Zeta index of {TOPICS[k]} is {7301 + k}."


def melting(k: int) -> str:
    """The sentence that states topic k's second figure."""
    return f"The melting point of {TOPICS[k]} is {1200 + 10 * k} kelvin."


def opening(k: int) -> str:
    """The page's first paragraph: all a search snippet shows."""
    return f"{TOPICS[k]} is a material studied by several laboratories since 2011."


@dataclass
class Page:
    """One page: its paragraphs, when it last changed, and what it answers instead of itself."""

    paragraphs: list[str]
    modified: float = 1_767_225_600.0  # 2026-01-01
    status: int = 200  # 404, 410, 503: answered instead of the page
    moved_to: str = ""  # a 301 to this address
    validators: bool = True  # False: a dynamic page, sent with neither ETag nor Last-Modified

    def html(self, title: str) -> bytes:
        body = "".join(f"<p>{p}</p>" for p in self.paragraphs)
        head = f"<head><title>{title}</title></head>"
        return f"<html>{head}<body><h1>{title}</h1>{body}</body></html>".encode()


TAIL = "The archive keeps a sealed ledger of amber and slate."
"""The last sentence of a page with filler: past what a hit's evidence keeps of a page."""


def filler(count: int) -> list[str]:
    """Paragraphs that say nothing a writer would cite (no figure, no topic's name)."""
    return [
        f"Part {chr(65 + n // 26)}{chr(65 + n % 26)} of the survey describes how samples were "
        f"prepared, stored and handled by the technicians of team {chr(90 - n % 26)}, in "
        "words that say nothing new."
        for n in range(count)
    ]


class ChangingPages(StandIn):
    """The topics' pages, served as a static web server serves files; with `filler`, each
    page goes on past its figures with that many paragraphs, then `TAIL`."""

    def __init__(self, topics: int, filler_paragraphs: int = 0) -> None:
        super().__init__()
        self.topics = topics
        tail = [*filler(filler_paragraphs), TAIL] if filler_paragraphs else []
        self.pages = {
            f"/t{k}": Page([opening(k), zeta(k), melting(k), *tail, "Cookie settings."])
            for k in range(topics)
        }
        self.clock = 1_767_225_600.0

    def path(self, k: int) -> str:
        return f"/t{k}"

    def page_url(self, k: int) -> str:
        return f"{self.url}/t{k}"

    def _changed(self, page: Page) -> None:
        self.clock += 86_400  # a day later
        page.modified = self.clock

    def edit(self, k: int, old: str, new: str) -> None:
        """Replace `old` by `new` in topic k's page (a figure edited)."""
        page = self.pages[self.path(k)]
        page.paragraphs = [p.replace(old, new) for p in page.paragraphs]
        self._changed(page)

    def remove(self, k: int, sentence: str) -> None:
        """Take a sentence out of topic k's page (a quote removed)."""
        page = self.pages[self.path(k)]
        page.paragraphs = [p for p in page.paragraphs if p != sentence]
        self._changed(page)

    def delete(self, k: int, status: int = 404) -> None:
        """Topic k's page answers `status` (404, 410: gone; 503: down) from now on."""
        self.pages[self.path(k)].status = status

    def move(self, k: int, to: str) -> None:
        """Topic k's page redirects (301) to `to` from now on."""
        self.pages[self.path(k)].moved_to = to

    @property
    def conditional(self) -> list[dict]:
        return [r for r in self.requests if _validators(r["headers"])]

    def handle(self, path: str, body: dict, headers: dict) -> Reply:
        page = self.pages.get(path.split("?")[0])
        if page is None or page.status in (404, 410):
            return Reply(page.status if page else 404, raw=b"<html><body>Not here</body></html>")
        if page.status != 200:
            return Reply(page.status, raw=b"<html><body>Down for maintenance</body></html>")
        if page.moved_to:
            return Reply(301, raw=b"", headers={"Location": page.moved_to})
        k = int(path[2:].split("?")[0])
        data = page.html(TOPICS[k])
        etag = '"' + hashlib.sha256(data).hexdigest()[:16] + '"'
        modified = formatdate(page.modified, usegmt=True)
        if not page.validators:
            return Reply(200, raw=data)
        validators = {"ETag": etag, "Last-Modified": modified}
        if _not_modified(headers, etag, page.modified):
            return Reply(304, raw=b"", headers=validators)
        return Reply(200, raw=data, headers=validators)


def _validators(headers: dict) -> bool:
    return "if-none-match" in headers or "if-modified-since" in headers


def _not_modified(headers: dict, etag: str, modified: float) -> bool:
    """RFC 9110 §13.1: If-None-Match decides when present; else If-Modified-Since."""
    if "if-none-match" in headers:
        return etag in [t.strip() for t in headers["if-none-match"].split(",")]
    if "if-modified-since" in headers:
        try:
            since = parsedate_to_datetime(headers["if-modified-since"]).timestamp()
        except (TypeError, ValueError):
            return False
        return modified <= since
    return False


class ChangingSearch(StandIn):
    """A Tavily-compatible search: every topic's page (or the one a query names), snippet only."""

    def __init__(self, pages: ChangingPages) -> None:
        super().__init__()
        self.pages = pages
        self.queries: list[str] = []

    def handle(self, path: str, body: dict, headers: dict) -> Reply:
        if path == "/usage":
            return Reply(200, {"account": {"plan_usage": 0, "plan_limit": 1000}})
        query = body.get("query", "")
        self.queries.append(query)
        named = [k for k in range(self.pages.topics) if TOPICS[k].lower() in query.lower()]
        listed = [  # an index that has caught up: a page gone for good is no longer found
            k
            for k in named or range(self.pages.topics)
            if self.pages.pages[self.pages.path(k)].status not in (404, 410)
        ]
        results = [
            {
                "url": self.pages.page_url(k),
                "title": f"{TOPICS[k]} — data sheet",
                "content": opening(k),
                "score": 0.9,
            }
            for k in listed
        ]
        return Reply(200, {"query": query, "results": results, "response_time": 0.01})


def _without_figures(claim: str) -> str:
    return " ".join(_FIGURE.sub("#", claim.casefold()).split()).rstrip(".")


def numbered_sentences(text: str) -> list[str]:
    """The sentences of `text` that carry a number (where the figures are)."""
    return [" ".join(s.split()) for s in _NUMBERED.findall(text)]


class FaithfulBrain(Brain):
    """A faithful researcher (every numbered sentence of its evidence a finding) and writer
    (every section the numbered sentences of its sources, each cited), a literal citation
    checker, and a change-list reader that pairs claims by their words."""

    def __init__(self, topic_count: int = 3) -> None:
        super().__init__()
        self.topic_count = topic_count
        self.gap_tasks = 1
        self.compared: list[tuple[list[str], list[str]]] = []

    def on_WorkerFindings(self, call: ChatCall) -> dict:
        findings = [
            {"claim": sentence, "source_ids": [int(n)]}
            for n, _, text in _SOURCE.findall(call.user)
            for sentence in numbered_sentences(text)
        ]
        ids = call.evidence_ids()
        if not findings and ids:
            findings = [{"claim": "Nothing measured", "source_ids": [ids[0]]}]
        return {"findings": findings, "summary": "Summary.", "gaps": [], "confidence": 0.8}

    def on_prose(self, call: ChatCall) -> str:
        section = re.search(r"^Section: (.*)$", call.user, re.M)
        if section is None:
            return super().on_prose(call)
        lines = [
            f"{sentence} [{n}]"
            for n, _, text in _SOURCE.findall(call.user.split("\nSources:\n", 1)[-1])
            for sentence in numbered_sentences(text)
        ]
        body = "\n".join(dict.fromkeys(lines)) or "Nothing measured was found."
        return f"## {section.group(1)}\n\n{body}"

    def on_PairVerdicts(self, call: ChatCall) -> dict:
        """Supported only word for word; the quote is the source's sentence nearest the claim."""
        verdicts = []
        for number, statement, source in _PAIR.findall(call.user):
            words = set(statement.casefold().split())
            sentences = re.split(r"(?<=[.!?])\s+", " ".join(source.split()))
            nearest = max(sentences, key=lambda s: len(words & set(s.casefold().split())))
            verdict = "supported" if statement.rstrip(".") in source else "unsupported"
            verdicts.append({"pair": int(number), "verdict": verdict, "quote": nearest})
        return {"verdicts": verdicts}

    def on_TaskPlan(self, call: ChatCall) -> dict:
        return {
            "query_type": "breadth_first",
            "subtasks": [
                {
                    "description": f"What is measured about {name}?",
                    "search_queries": [f"{name} measurements"],
                    "complexity": "simple",
                }
                for name in TOPICS[: self.topic_count]
            ],
            "recommended_worker_count": self.topic_count,
        }

    def on_ClaimMatches(self, call: ChatCall) -> dict:
        olds = {int(n): text for side, n, text in _CLAIM.findall(call.user) if side == "O"}
        news = {int(n): text for side, n, text in _CLAIM.findall(call.user) if side == "N"}
        self.compared.append((list(olds.values()), list(news.values())))
        matches = []
        for n, text in news.items():
            same = [o for o, old in olds.items() if _without_figures(old) == _without_figures(text)]
            if not same:
                matches.append({"new": n, "relation": "new"})
                continue
            old = olds[same[0]]
            old_figures, new_figures = _FIGURE.findall(old), _FIGURE.findall(text)
            changed = [
                (a, b)
                for a, b in zip(old_figures, new_figures, strict=False)
                if a.rstrip(".") != b.rstrip(".")
            ]
            if not changed:
                matches.append({"new": n, "old": same[0], "relation": "same"})
            else:
                a, b = changed[0]
                matches.append(
                    {"new": n, "old": same[0], "relation": "figure_changed",
                     "old_value": a.rstrip("."), "new_value": b.rstrip(".")}
                )  # fmt: skip
        return {"matches": matches}
