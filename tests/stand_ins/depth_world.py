"""An offline world with facts planted where only a worker that reads finds them (issue 29).

Each topic has an article whose search snippet is its opening only; its body, past 3,000
characters of filler, states the topic's **body fact**; the article links to an appendix that no
search returns, which states the **two-hop fact**. The MCP stand-in (`mcp_wiki.py --name
tickets`) knows the **MCP fact**. A research brain plans one subtask per topic, reports every
numbered sentence of its evidence as a finding (a faithful researcher), and writes every section
from the numbered sentences of its sources, citing each (a faithful writer): what reaches the
writer's prompt reaches the report, so the measure is what the workers bring back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from stand_ins.chat import Brain, ChatCall
from stand_ins.loopback import Reply, StandIn
from stand_ins.search import slug

TOPICS = ("Quillon alloy", "Veltrane polymer", "Mortisk ceramic", "Zerapine resin")
MCP_FACT = "OPS-812"  # what only the MCP tool says (mcp_wiki.py --name tickets)
_SOURCE = re.compile(r"^\[(\d+)\] .*? — (\S+)\n(.*?)(?=\n\n\[\d+\] |\n</data>|\Z)", re.M | re.S)
_SENTENCE = re.compile(r"[^.!?\n]*\d[^.!?\n]*[.!?]")


@dataclass(frozen=True)
class Planted:
    """One planted fact: its kind, the token that identifies it, the path of its page."""

    kind: str  # body | two_hop | mcp
    token: str
    path: str


def planted(topics: int) -> list[Planted]:
    """The facts of the first `topics` topics, and the MCP fact."""
    facts = []
    for k in range(topics):
        facts.append(Planted("body", f"{7301 + k}", f"/t{k}/article"))
        facts.append(Planted("two_hop", f"{8401 + k}", f"/t{k}/appendix"))
    facts.append(Planted("mcp", MCP_FACT, "mcp://"))
    return facts


def _topic(text: str, topics: int) -> int | None:
    """The topic a query or path names, if any."""
    for k, name in enumerate(TOPICS[:topics]):
        if name.lower() in text.lower() or f"/t{k}/" in text:
            return k
    return None


def opening(k: int) -> str:
    """The article's first paragraph: all a search snippet shows."""
    return f"{TOPICS[k]} is a material studied by several laboratories since 2011."


class DepthPages(StandIn):
    """The topics' articles (body fact deep inside, a link to the appendix) and appendices."""

    def __init__(self, topics: int) -> None:
        super().__init__()
        self.topics = topics
        self.served: list[str] = []

    def handle(self, path: str, body: dict, headers: dict) -> Reply:
        self.served.append(path)
        k = _topic(path, self.topics)
        if k is None:
            return Reply(404, raw=b"<html><body>Not here</body></html>")
        name = TOPICS[k]
        if path.endswith("/appendix"):
            text = (
                f"<h1>Appendix on {name}</h1><p>Measurements of {name} in the appendix: "
                f"the Kappa factor of {name} is {8401 + k}.</p>"
            )
        else:
            filler = "".join(  # distinct paragraphs, no figures: nothing a writer would cite
                f"<p>Part {chr(65 + n // 26)}{chr(65 + n % 26)} of the survey describes how "
                f"{name} samples were prepared, stored and handled by the technicians of "
                f"team {chr(90 - n % 26)}, in words that say nothing new.</p>"
                for n in range(30)
            )
            text = (
                f"<h1>{name}</h1><p>{opening(k)}</p>{filler}"
                f"<p>Measured in 2025, the Zeta index of {name} is {7301 + k}.</p>"
                f'<p>See the <a href="/t{k}/appendix">appendix on {name}</a>.</p>'
            )
        return Reply(200, raw=f"<html><body>{text}</body></html>".encode())


class DepthSearch(StandIn):
    """A Tavily-compatible search: each topic's article, its snippet the opening only."""

    def __init__(self, pages_url: str, topics: int) -> None:
        super().__init__()
        self.pages_url, self.topics = pages_url, topics
        self.queries: list[str] = []

    def handle(self, path: str, body: dict, headers: dict) -> Reply:
        if path == "/usage":
            return Reply(200, {"account": {"plan_usage": 0, "plan_limit": 1000}})
        query = body.get("query", "")
        self.queries.append(query)
        k = _topic(query, self.topics)
        ks = [k] if k is not None else list(range(self.topics))
        results = [
            {
                "url": f"{self.pages_url}/t{n}/article",
                "title": f"{TOPICS[n]} — survey",
                "content": opening(n),
                "score": 0.9,
            }
            for n in ks
        ]
        results.append(
            {
                "url": f"{self.pages_url}/news/{slug(query)}",
                "title": f"News about {query}",
                "content": f"A news item mentions {query} without any figure.",
                "score": 0.5,
            }
        )
        return Reply(200, {"query": query, "results": results, "response_time": 0.01})


def numbered_sentences(text: str) -> list[str]:
    """The sentences of `text` that carry a number (where the planted facts are)."""
    return [" ".join(s.split()) for s in _SENTENCE.findall(text)]


class DepthBrain(Brain):
    """One subtask per topic; findings and sections faithful to the numbered evidence."""

    def __init__(self, topics: int) -> None:
        super().__init__()
        self.topic_count = topics

    def on_TaskPlan(self, call: ChatCall) -> dict:
        return {
            "query_type": "breadth_first",
            "subtasks": [
                {
                    "description": f"What is measured about {name}?",
                    "search_queries": [f"{name} measurements", f"{name} properties"],
                    "complexity": "medium",  # a second cycle: room for a second hop
                }
                for name in TOPICS[: self.topic_count]
            ],
            "recommended_worker_count": self.topic_count,
        }

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
